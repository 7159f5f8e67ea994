"""The HPOM parsers and collector on genuine published output (tests/systems/hpom/fixtures/real/, SOURCE.md there says
where each file comes from and what a human reads in it): one test per sample, asserting what a human reads.

- ``opcagt_status_oa12_stopped_starting.txt``: ``opcagt -status`` of a production Operations Agent 12 (same
  component columns as ``ovc -status``), with ``ttd``/``perfalarm``/``perfd`` stopped on purpose and the
  communication broker ``ovbbccb`` in the transitional state ``Starting``.
- ``opcsv_status_omu9_hpsimintack.txt``: ``opcsv -status`` of an OMU 9 management server, everything running,
  including the upper-case ``HPSIMIntAck`` component whose line ends in ``is running;``.
- ``opc_act_messages_columns.csv``: the ``opc_op`` column facts public tools show (no DDL): which time columns
  are epoch-second NUMBERs and which DATEs, the severity codes, the custom message attribute table.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from exporter.core.collector import Context
from exporter.systems.hpom.collector import HpomCollector
from exporter.systems.hpom.parse import (
    PROCESS_RUNNING,
    PROCESS_STOPPED_AS_EXPECTED,
    PROCESS_TRANSITIONAL,
    parse_opcsv_status,
    parse_ovc_status,
    process_states,
)
from exporter.systems.hpom.settings import (
    DEFAULT_CMA_COLUMN,
    DEFAULT_CMA_TABLE,
    DEFAULT_EXPECTED_STOPPED,
    HpomSettings,
)
from exporter.systems.oracle.querymetrics import load_queries

from ...support import REPO, collect
from ...support import shell_script as _script

FIXTURES = Path(__file__).parent / "fixtures"

REAL = FIXTURES / "real"
OPCAGT = REAL / "opcagt_status_oa12_stopped_starting.txt"
OPCSV = REAL / "opcsv_status_omu9_hpsimintack.txt"
COLUMNS = REAL / "opc_act_messages_columns.csv"
QUERIES = REPO / "exporter" / "systems" / "hpom" / "queries.yaml"


def _text(path: Path) -> str:
    return path.read_bytes().decode("utf-8", "replace")



def _collect_status(tmp_path: Path, source: str, capture: Path, **settings) -> tuple[dict[str, float], object]:
    """Run the collector with ``source`` (opcsv or ovc) printing ``capture``; process -> server_process_up."""
    binary = _script(tmp_path / source, f'[ "$1" = "-status" ] || exit 3\ncat "{capture}"\n')
    config = {"enabled": True, "queue_dir": str(tmp_path / "none"), "opcsv": None, "ovc": None, "ovconfget": None,
              source: binary, **settings}
    samples, batch = collect(HpomCollector(HpomSettings.model_validate(config), Context()))
    assert samples[("middleware_hpom_source_success", (("source", source),))] == 1, batch.errors
    return {dict(labels)["process"]: value for (name, labels), value in samples.items()
            if name == "middleware_hpom_server_process_up" and dict(labels)["source"] == source}, batch


# --- opcagt -status, Operations Agent 12 (Intrado) ----------------------------------------------------------------

def test_opcagt_oa12_capture_reads_as_a_human_reads_it():
    rows = [(p.name, p.description, p.category, p.pid, p.state) for p in parse_ovc_status(_text(OPCAGT))]
    assert rows == [
        ("midaemon", "Measurement Interface daemon", "", 18623, "Running"),
        ("ttd", "ARM registration daemon", "", None, "Stopped"),
        ("perfalarm", "Alarm generator", "", None, "Stopped"),
        ("perfd", "real time server", "", None, "Stopped"),
        ("hpsensor", "HP Compute Sensor", "AGENT,OA", 18619, "Running"),
        ("oacore", "Operations Agent Core", "AGENT,OA", 18467, "Running"),
        ("opcacta", "OVO Action Agent", "AGENT,EA", 18392, "Running"),
        ("opcle", "OVO Logfile Encapsulator", "AGENT,EA", 18405, "Running"),
        ("opcmona", "OVO Monitor Agent", "AGENT,EA", 18660, "Running"),
        ("opcmsga", "OVO Message Agent", "AGENT,EA", 18517, "Running"),
        ("opcmsgi", "OVO Message Interceptor", "AGENT,EA", 18674, "Running"),
        ("ovbbccb", "OV Communication Broker", "CORE", None, "Starting"),
        ("ovcd", "OV Control", "CORE", 16203, "Running"),
        ("ovconfd", "OV Config and Deploy", "COREXT", 16410, "Running"),
    ]
    # the summary lines ("Agent Health Status: Critical, ...", "Message Agent is not buffering.") are not components
    conditions = {p.name: p.condition for p in parse_ovc_status(_text(OPCAGT))}
    assert conditions["ovbbccb"] == "transitional"
    assert {name for name, c in conditions.items() if c == "down"} == {"ttd", "perfalarm", "perfd"}
    assert not parse_opcsv_status(_text(OPCAGT))  # not opcsv's format


def test_opcagt_oa12_capture_nothing_pages(tmp_path):
    """ttd/perfalarm/perfd are stopped on purpose (the defaults), ovbbccb is starting: nothing reads as down."""
    assert set(DEFAULT_EXPECTED_STOPPED) == {"ttd", "perfalarm", "perfd"}
    up, _ = _collect_status(tmp_path, "ovc", OPCAGT)
    assert up == {
        "hpsensor": 1, "midaemon": 1, "oacore": 1, "opcacta": 1, "opcle": 1, "opcmona": 1, "opcmsga": 1,
        "opcmsgi": 1, "ovcd": 1, "ovconfd": 1,
        "ovbbccb": PROCESS_TRANSITIONAL,
        "perfalarm": PROCESS_STOPPED_AS_EXPECTED, "perfd": PROCESS_STOPPED_AS_EXPECTED,
        "ttd": PROCESS_STOPPED_AS_EXPECTED,
    }
    assert [name for name, value in up.items() if value == 0] == []  # MiddlewareHpomServerProcessDown: == 0


def test_opcagt_oa12_capture_with_the_site_settings(tmp_path):
    """A site that runs the performance components: a stopped perfd is down; ignored components are left out."""
    up, _ = _collect_status(tmp_path, "ovc", OPCAGT, expected_stopped=["ttd"], ignore_processes=["perfalarm"])
    assert up["perfd"] == 0 and up["ttd"] == PROCESS_STOPPED_AS_EXPECTED and "perfalarm" not in up
    assert up["ovbbccb"] == PROCESS_TRANSITIONAL and up["ovcd"] == PROCESS_RUNNING


# --- opcsv -status, OMU 9 (softpanorama) ---------------------------------------------------------------------

def test_opcsv_omu9_capture_reads_as_a_human_reads_it():
    rows = [(p.name, p.description, p.pid, p.state, p.running) for p in parse_opcsv_status(_text(OPCSV))]
    assert rows == [
        ("opcactm", "Action Manager", 2629, "is running", True),
        ("opcbbcdist", "BBC Config Adapter", 2699, "is running", True),
        ("opccsad", "Cert. Server Adapter", 2685, "is running", True),
        ("opcdispm", "Display Manager", 2587, "is running", True),
        ("opcforwm", "Forward Manager", 2671, "is running", True),
        ("opcmsgm", "Message Manager", 2643, "is running", True),
        ("opcmsgrb", "Message Receiver (HTTPS)", 2615, "is running", True),
        ("opcsvcm", "Service Engine", 2713, "is running", True),
        ("opcttnsm", "TT & Notify Manager", 2657, "is running", True),
        ("ovoareqsdr", "Request Sender", 2601, "is running", True),
        ("opcuihttps", "HTTPS Communication Proxy", 2757, "is running", True),
        ("opcsvcam", "Svc. Nav. Action Manager", 2771, "is running", True),
        ("opcsvcdisc", "Service Discovery Server", 2788, "is running", True),
        ("adminui", "Administration UI Server", 2825, "is running", True),
        ("ovcd", "OV Control", 1926, "is running", True),
        ("ovbbccb", "OV Communication Broker", 1927, "is running", True),
        ("ovcs", "OV Certificate Server", 2571, "is running", True),
        ("ovtomcatB", "OV Tomcat(B) Servlet Container", 3058, "is running", True),
        ("HPSIMIntAck", "HP SIM SPI event clearing", 3080, "is running", True),  # upper case, ends in "is running;"
    ]
    assert not parse_ovc_status(_text(OPCSV))  # not ovc's format


def test_opcsv_omu9_capture_every_process_up(tmp_path):
    up, _ = _collect_status(tmp_path, "opcsv", OPCSV)
    assert len(up) == 19 and set(up.values()) == {1}
    assert up["HPSIMIntAck"] == 1 and up["opcmsgm"] == 1 and up["ovtomcatB"] == 1
    assert process_states(parse_opcsv_status(_text(OPCSV))) == up


# --- opc_op column facts from public tools -------------------------------------------------------------------

def _facts() -> dict[tuple[str, str], tuple[str, str]]:
    """(table, column) -> (type as evidenced, meaning), one entry per column of a "a; b; c" cell."""
    facts = {}
    with COLUMNS.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            for column in row["column"].split(";"):
                facts[(row["table"].strip(), column.strip())] = (row["oracle_type_as_evidenced"], row["meaning"])
    return facts


def _sql(name: str) -> str:
    return next(q.sql for q in load_queries(QUERIES) if q.name == name)


def test_schema_facts_the_window_query_compares_epoch_numbers_with_numbers():
    facts = _facts()
    for column in ("receiving_time", "ackn_time"):
        assert facts[("opc_act_messages", column)][0].startswith("NUMBER (epoch seconds")
        assert facts[("opc_act_messages", f"local_{column}")][0] == "DATE"
    sql = _sql("recent_activity")
    for column in ("ackn_time", "receiving_time"):
        compared = re.search(rf"\b{column}\s*>=\s*(.*?)- :window_seconds", sql, re.S)
        assert compared, column
        assert "SYSDATE" not in compared.group(1).upper()  # an epoch-seconds expression, never a DATE
        assert "* 86400" in compared.group(1)
    assert "local_" not in sql


def test_schema_facts_severity_codes_match_the_queries():
    meaning = _facts()[("opc_act_messages", "severity")][1]
    codes = {name: int(code) for code, name in re.findall(r"(\d+) (\w+)", meaning)}
    assert codes == {"unknown": 1, "normal": 2, "warning": 4, "critical": 8, "minor": 16, "major": 32}
    decode = re.search(r"DECODE\(severity,(.*?)'other'\)", _sql("active_messages"), re.S).group(1)
    assert {name: int(code) for code, name in re.findall(r"(\d+), '(\w+)'", decode)} == codes


def test_schema_facts_custom_attribute_table_is_the_default_and_configurable():
    facts = _facts()
    schema, table = DEFAULT_CMA_TABLE.split(".")
    assert schema == "opc_op" and (table, DEFAULT_CMA_COLUMN) in facts
    assert {("opc_act_cust_attrib", c) for c in ("message_number", "cma_name", "cma_value")} <= set(facts)
    assert "OMU 9.x" in facts[(table, DEFAULT_CMA_COLUMN)][1]
    assert DEFAULT_CMA_TABLE in _sql("custom_message_attributes")


def test_schema_facts_a_missing_key_may_be_null_or_blank():
    """The facts leave open whether a message without a key has msg_key NULL or blank: the query counts both."""
    assert "not established" in _facts()[("opc_act_messages", "msg_key")][1]
    sql = _sql("active_messages")
    assert "msg_key IS NULL" in sql and ":blank_key_is_missing = 1" in sql and "LTRIM(msg_key" in sql


@pytest.mark.parametrize("path", [OPCAGT, OPCSV, COLUMNS])
def test_every_sample_is_described_in_source_md(path: Path):
    assert f"`{path.name}`" in (REAL / "SOURCE.md").read_text()
