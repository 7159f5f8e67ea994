"""The advisor (exporter/advisor/model.py, rows/, report.py): every advice row of the guides judged on a fixture
estate of every system, the golden advice JSON, the CLI's exit statuses and GET /api/v1/advice through the real
exporter.

The fixture estate is tests/estate.py's (every system; `.venv/bin/python -m tests.estate` runs `advise` on it).

Regenerate the golden advice deliberately, and explain the diff in the commit:
    UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/advisor/test_advisor.py -k golden
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import re
import shutil
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml
from prometheus_client.core import GaugeMetricFamily

from exporter.advisor.model import REASONS, STATUSES, Snapshot
from exporter.advisor.report import build_report, deviating, recommendations, report_to_text
from exporter.advisor.rows import ADVICE_ROWS, ROWS
from exporter.cli import build_collectors, main
from exporter.core.scheduler import Scheduler
from exporter.registry import load

from ..estate import DB_PASSWORD, environment, estate
from ..support import FIXTURES, REPO, install_fake_oracledb, real_oracle_fixture, shell_script, system_fixtures

GOLDEN = REPO / "tests" / "golden" / "advice.json"
TOPOLOGIES = Path(__file__).parent / "fixtures" / "cpu_topology"  # invented and recorded sysfs CPU layouts
GUIDE_TABLE = REPO.parent / "shared" / "guide-thresholds.md"  # the developers' copy; absent elsewhere

# The guide rows whose recommendation is advice (or advice and alert), and the alert rows with a static advice side
# (HPOM-CMA, HPOM-ACTIVE, HPOM-MEM, HPOM-MSI, VHI-SESS, VHI-MEM): each must reach the report with a status.
EXPECTED_ROWS = {
    "HPOM-VAR-GUITHREAD", "HPOM-VAR-ACKLIMIT", "HPOM-VAR-COMMIT", "HPOM-AUTOKEYS", "HPOM-CMA", "HPOM-ACTIVE",
    "HPOM-SLOD", "HPOM-GUI", "HPOM-MSI", "HPOM-MEM", "HPOM-KERNEL", "HPOM-ORA",
    "ORA-REDO", "ORA-DBWR", "ORA-SGA", "ORA-NFS", "ORA-KGL", "MQ-IO", "VHI-SESS", "VHI-MEM", "VHI-CPU",
}


@pytest.fixture
def fake_oracle(tmp_path, monkeypatch):
    install_fake_oracledb(monkeypatch, tmp_path / "db.yaml", tmp_path / "oracledb.log")
    monkeypatch.setenv("DB_PASSWORD", DB_PASSWORD)


def _run(config_path: Path) -> tuple[Scheduler, object]:
    config = load(str(config_path))
    scheduler = Scheduler(build_collectors(config))
    scheduler.run_once()
    return scheduler, config


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> dict:
    """The estate's report, built once for the tests that only read it."""
    tmp_path = tmp_path_factory.mktemp("estate")
    with pytest.MonkeyPatch.context() as patch:
        install_fake_oracledb(patch, tmp_path / "db.yaml", tmp_path / "oracledb.log")
        patch.setenv("DB_PASSWORD", DB_PASSWORD)
        scheduler, config = _run(estate(tmp_path))
        return build_report(scheduler, config)


def _by(report: dict) -> dict[tuple[str, str], dict]:
    return {(r["row"], r["target"]): r for r in report["recommendations"]}


# ---- the model on the fixture estate ---------------------------------------------------------------------------
def test_every_advice_row_is_declared_and_reported_with_a_status(report):
    assert set(ADVICE_ROWS) == EXPECTED_ROWS
    assert len(ADVICE_ROWS) == len(set(ADVICE_ROWS))
    reported = {r["row"] for r in report["recommendations"]}
    assert reported == EXPECTED_ROWS
    for rec in report["recommendations"]:
        assert rec["status"] in STATUSES, rec
        if rec["status"] == "unknown":
            assert rec["reason"] and rec["reason"].startswith(REASONS), rec
        else:
            assert rec["reason"] is None, rec
    keys = [(r["row"], r["target"]) for r in report["recommendations"]]
    assert len(keys) == len(set(keys)), "one recommendation per row and target"


@pytest.mark.skipif(not GUIDE_TABLE.exists(), reason="the developers' guide table is not beside the repository")
def test_every_advice_row_of_the_guide_table_is_declared():
    rows = set()
    for line in GUIDE_TABLE.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 5 and re.fullmatch(r"[A-Z]+-[A-Z-]+", cells[0]) and "advice" in cells[-1].lower():
            rows.add(cells[0])
    assert rows, "no advice rows parsed"
    assert rows <= set(ADVICE_ROWS), sorted(rows - set(ADVICE_ROWS))


def test_every_deviation_has_a_remedy_and_a_citation(report):
    deviations = [r for r in report["recommendations"] if r["status"] == "deviates"]
    assert deviations
    for rec in deviations:
        assert rec["remedy"] and rec["citation"]["document"] and rec["citation"]["section"], rec
        assert f"({rec['row']})" in rec["citation"]["section"], rec
        assert rec["observed"] and rec["recommended"] and rec["effect"], rec


def test_the_report_shape_and_order(report):
    assert set(report) == {"generated_at", "generation", "summary", "recommendations", "forecasts"}
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", report["generated_at"])
    assert isinstance(report["generation"], int) and report["generation"] > 0
    recs = report["recommendations"]
    assert report["summary"] == {s: sum(r["status"] == s for r in recs) for s in ("follows", "deviates", "unknown")}
    keys = [(STATUSES.index(r["status"]), r["system"], r["row"], r["target"]) for r in recs]
    assert keys == sorted(keys)
    fields = {"row", "system", "target_kind", "target", "title", "status", "reason", "observed", "observed_value",
              "recommended", "effect", "citation", "remedy", "remedy_note"}
    for rec in recs:
        assert set(rec) == fields
        assert rec["system"] in ("hpom", "oracle", "ibmmq", "vhi", "domino", "host")
        assert rec["target_kind"] in ("host", "hpom_server", "database", "queue_manager", "session_server", "mount")
        assert rec["observed_value"] is None or isinstance(rec["observed_value"], (int, float))
    assert isinstance(report["forecasts"], list)
    json.dumps(report, allow_nan=False)  # strict JSON: no NaN or infinity


def test_statuses_a_reader_of_the_guides_would_give(report):
    """Each expectation read off the fixtures, not off the advisor."""
    by = _by(report)

    def status(row: str, target: str) -> str:
        return by[(row, target)]["status"]

    # HPOM: ovconfget sets OPC_DIRECT_ACKN_LIMIT=50 (Table 1 wants 0), OPC_UPDWN_COMMIT_COUNT=1000, GUI thread TRUE
    assert status("HPOM-VAR-ACKLIMIT", "management server") == "deviates"
    assert by[("HPOM-VAR-ACKLIMIT", "management server")]["remedy"] == \
        "ovconfchg -ovrg server -ns opc -set OPC_DIRECT_ACKN_LIMIT 0"
    assert status("HPOM-VAR-COMMIT", "management server") == "follows"
    assert status("HPOM-VAR-GUITHREAD", "management server") == "follows"
    # 15,200 of 52,712 active messages lack a key (29 %), automatic keys on by default
    assert status("HPOM-AUTOKEYS", "management server") == "follows"
    # the CMA query answers 14 CMAs on one message (37 messages over 10); 52,712 active messages (from 50,000)
    cma = by[("HPOM-CMA", "management server")]
    assert cma["status"] == "deviates" and cma["observed_value"] == 14 and "HAVING COUNT(*) > 10" in cma["remedy"]
    assert status("HPOM-ACTIVE", "management server") == "deviates"
    # no service_table configured: the tree depth cannot be read
    slod = by[("HPOM-SLOD", "management server")]
    assert slod["status"] == "unknown" and slod["reason"].startswith("source not configured")
    # two Java GUIs (opcuiwww) on 4 CPUs; one MSI program
    assert status("HPOM-GUI", "management server") == "follows"
    assert status("HPOM-MSI", "management server") == "follows"
    # Table 31: swap must be RAM + 512 + 64 x 2 MB; the host has 8 GiB of swap and 15.6 GiB of RAM
    mem = by[("HPOM-MEM", "local host")]
    assert mem["status"] == "deviates" and "swapon" in mem["remedy"]
    assert status("HPOM-KERNEL", "local host") == "follows"
    # Oracle: opcdb has 3 x 20 MB redo groups, log_buffer 64 KB, sga_target 256 MB, processes 150, mbrc 16
    hpom_ora = by[("HPOM-ORA", "opcdb")]
    assert hpom_ora["status"] == "deviates"
    for fix in ("sga_target=350M", "log_buffer=1572864", "processes=200", "db_file_multiblock_read_count=32",
                "ADD LOGFILE GROUP 4", "SIZE 100M", "DROP LOGFILE GROUP 1"):
        assert fix in hpom_ora["remedy"], fix
    assert status("ORA-REDO", "opcdb") == "deviates" and status("ORA-REDO", "erp") == "follows"
    # db_writer_processes 1 on 2 cores, 4 on 8 cores
    assert by[("ORA-DBWR", "opcdb")]["remedy"] == "ALTER SYSTEM SET db_writer_processes=2 SCOPE=SPFILE;"
    assert by[("ORA-DBWR", "erp")]["remedy"] == "ALTER SYSTEM SET db_writer_processes=8 SCOPE=SPFILE;"
    assert "restart" in by[("ORA-DBWR", "erp")]["remedy_note"]
    # erp: 20 GiB SGA on 32 GiB (62 %); opcdb is not on a dedicated host
    assert status("ORA-SGA", "erp") == "follows"
    assert by[("ORA-SGA", "opcdb")]["reason"].startswith("not applicable")
    # opcdb's datafiles on an NFSv3 hard mount without direct I/O; its redo on a soft NFSv4.1 mount with timeo=60
    oradata, redo = by[("ORA-NFS", "opcdb:/u01/oradata")], by[("ORA-NFS", "opcdb:/u02/redo")]
    assert oradata["status"] == redo["status"] == "deviates" and oradata["target_kind"] == "mount"
    assert "filesystemio_options=directio" in oradata["remedy"] and "/etc/fstab" not in oradata["remedy"]
    assert "filer1:/vol/redo /u02/redo nfs rw,bg,hard,nointr,proto=tcp,vers=3,rsize=32768,wsize=32768,timeo=600" \
        in redo["remedy"]
    assert by[("ORA-NFS", "erp")]["reason"].startswith("not applicable")
    # the alert-log view has one heap warning for erp, none for opcdb, in the day before the database's clock
    # (2018-11-13 10:00 UTC, the stand-in's): one run reads that day (heap_warnings.history, issue 39)
    assert status("ORA-KGL", "erp") == "deviates" and status("ORA-KGL", "opcdb") == "follows"
    assert by[("ORA-KGL", "opcdb")]["observed"] == \
        "0 heap warnings from 2018-11-12 10:00 UTC to 2018-11-13 10:00 UTC (V$DIAG_ALERT_EXT)"
    assert '"_kgl_large_heap_warning_threshold"=' in by[("ORA-KGL", "erp")]["remedy"]
    # MQ: QM1 without data/log paths, QM2's do not exist
    assert by[("MQ-IO", "QM1")]["reason"].startswith("source not configured")
    assert by[("MQ-IO", "QM2")]["reason"].startswith("not readable")
    # VHI: one session server process pinned to CPUs 0-1, no sessions; host1 numbers a core's threads n and n+2
    # (core_id 0, 1, 0, 1), so CPUs 0 and 1 are two physical cores (CPUs / threads per core said one)
    assert status("VHI-SESS", "session server") == "follows"
    assert status("VHI-MEM", "session server") == "follows"
    assert status("VHI-CPU", "session server") == "follows"
    assert by[("VHI-CPU", "session server")]["observed_value"] == 2


def test_golden_advice(report):
    """The whole advice for the fixture estate; the time, generation and forecasts (tested in test_forecasts.py)
    are left out."""
    normalised = {k: v for k, v in report.items() if k not in ("generated_at", "generation", "forecasts")}
    text = json.dumps(normalised, indent=2, ensure_ascii=False, sort_keys=True) + "\n"
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(text)
    assert text == GOLDEN.read_text(), "advice changed; if intended, regenerate with UPDATE_GOLDEN=1 (docstring)"
    summary = report["summary"]
    assert (f"It gives {summary['deviates']} deviations, {summary['unknown']} unknowns and {summary['follows']} rows "
            "that follow") in " ".join((REPO / "docs" / "advisor.md").read_text().split()), "docs/advisor.md's figures"


def test_the_report_holds_no_configuration_value_but_target_names(report):
    text = json.dumps(report)
    for secret in (DB_PASSWORD, "opcdb.example", "erp.example", "hpomdb.example", "1521", "monitor"):
        assert secret not in text, secret


def test_advice_reads_the_snapshot_and_never_collects(tmp_path, fake_oracle):
    scheduler, config = _run(estate(tmp_path))
    runs = {name: state.runs for name, state in scheduler.states.items()}
    first = build_report(scheduler, config)
    second = build_report(scheduler, config)
    assert {name: state.runs for name, state in scheduler.states.items()} == runs
    assert first["recommendations"] == second["recommendations"]
    assert first["generation"] == second["generation"] == scheduler.generation
    assert first["generated_at"] == second["generated_at"], "one snapshot, one time"


def test_the_terminal_table_fits_120_columns(report):
    text = report_to_text(report)
    lines = text.splitlines()
    assert all(len(line) <= 120 for line in lines), max(lines, key=len)
    for rec in report["recommendations"]:
        assert any(rec["row"] in line and rec["target"][:20] in line for line in lines), rec["row"]
    assert "ovconfchg -ovrg server -ns opc -set OPC_DIRECT_ACKN_LIMIT 0" in text
    starts = [line.split()[0] for line in lines[4:] if line[:1].isalpha()]
    assert starts.index("DEVIATES") < starts.index("unknown") < starts.index("follows")
    assert starts == sorted(starts, key=["DEVIATES", "unknown", "follows"].index)


# ---- judges on constructed snapshots: the branches the fixture estate does not reach -----------------------------
class _State:
    def __init__(self, success: bool | None, families: list) -> None:
        self.success = success
        self.families = families
        self.runs = 1


class _Scheduler:
    """A scheduler's read side (states, families_of, generation) over hand-made samples."""

    def __init__(self, collectors: dict[str, tuple[bool | None, list[tuple[str, dict, float]]]]) -> None:
        self.states = {}
        for name, (success, samples) in collectors.items():
            families = []
            for metric, labels, value in samples:
                family = GaugeMetricFamily(metric, "test", labels=list(labels))
                family.add_metric(list(labels.values()), value)
                families.append(family)
            self.states[name] = _State(success, families)
        self.generation = 3

    def families_of(self, name: str):
        return 1, self.states[name].families


def _judge(row_id: str, collectors: dict) -> list[dict]:
    row = next(r for r in ROWS if r.id == row_id)
    return recommendations(Snapshot.of(_Scheduler(collectors)), [row])


VHI_RUNNING = [("middleware_vhi_session_server_processes", {}, 2)]
HOST_8 = [("middleware_host_cpus", {}, 8), ("middleware_host_cpu_cores", {}, 8),
          ("middleware_host_memory_total_bytes", {}, 2 * 1024**3), ("middleware_host_swap_total_bytes", {}, 0)]


def test_vhi_deviations_and_unknowns():
    sessions = VHI_RUNNING + [("middleware_vhi_sessions", {}, 1500), ("middleware_vhi_session_server_cpus", {}, 4),
                              ("middleware_vhi_sessions_per_cpu", {}, 375),
                              ("middleware_vhi_sessions_per_cpu_limit", {}, 250)]
    [sess] = _judge("VHI-SESS", {"vhi": (True, sessions)})
    assert sess["status"] == "deviates" and "session servers" in sess["remedy"] and sess["observed_value"] == 375
    [cpu] = _judge("VHI-CPU", {"vhi": (True, VHI_RUNNING + [("middleware_vhi_session_server_cpus", {}, 8),
                                                            ("middleware_vhi_session_server_cores", {}, 8),
                                                            ("middleware_vhi_session_server_guide_cpus_info",
                                                             {"cpus": "0-3"}, 1)]),
                               "host": (True, HOST_8)})
    assert cpu["status"] == "deviates" and "taskset -a -cp 0-3 " in cpu["remedy"]
    mem = VHI_RUNNING + [("middleware_vhi_memory_required_bytes", {"level": "recommended"}, 3 * 1024**3),
                         ("middleware_vhi_memory_required_bytes", {"level": "minimum"}, 1.5 * 1024**3)]
    [low] = _judge("VHI-MEM", {"vhi": (True, mem), "host": (True, HOST_8)})
    assert low["status"] == "deviates" and "1024 MiB" in low["remedy"]
    [off] = _judge("VHI-SESS", {"host": (True, HOST_8)})
    assert off["status"] == "unknown" and off["reason"] == "source not configured: the vhi collector is disabled"
    [stopped] = _judge("VHI-SESS", {"vhi": (True, [("middleware_vhi_session_server_processes", {}, 0)])})
    assert stopped["reason"] == "not readable: no session server process is running"
    [failed] = _judge("VHI-CPU", {"vhi": (False, []), "host": (True, HOST_8)})
    assert failed["reason"].startswith("not readable: the vhi collector's last run failed")


def _hpom(*samples, ovconfget: float = 1) -> list:
    return [("middleware_hpom_source_success", {"source": "ovconfget"}, ovconfget), *samples]


def test_hpom_variables_deviate_follow_and_not_applicable():
    info = "middleware_hpom_server_variable_info"
    commit = _hpom((info, {"variable": "OPC_UPDWN_COMMIT_COUNT", "value": "100", "origin": "default"}, 1),
                   ("middleware_hpom_server_variable_value", {"variable": "OPC_UPDWN_COMMIT_COUNT"}, 100),
                   ("middleware_hpom_server_variable_follows_guide", {"variable": "OPC_UPDWN_COMMIT_COUNT"}, 0))
    [rec] = _judge("HPOM-VAR-COMMIT", {"hpom": (True, commit)})
    assert rec["status"] == "deviates" and rec["observed"] == "OPC_UPDWN_COMMIT_COUNT=100 (default)"
    assert rec["remedy"] == "ovconfchg -ovrg server -ns opc -set OPC_UPDWN_COMMIT_COUNT 1000"
    assert rec["observed_value"] == 100 and "367 → 518 msg/s" in rec["effect"] and "restart" in rec["remedy_note"]
    # the exporter did not judge it (a server older than the variable): not applicable
    unjudged = _hpom((info, {"variable": "OPCMSGM_USE_GUI_THREAD", "value": "FALSE", "origin": "default"}, 1))
    [rec] = _judge("HPOM-VAR-GUITHREAD", {"hpom": (True, unjudged)})
    assert rec["status"] == "unknown" and rec["reason"].startswith("not applicable")
    [rec] = _judge("HPOM-VAR-ACKLIMIT", {"hpom": (True, _hpom(ovconfget=0))})
    assert rec["reason"].startswith("not readable: ovconfget")
    auto = _hpom((info, {"variable": "OPC_CREATE_AUTO_KEYS", "value": "FALSE", "origin": "set"}, 1),
                 ("middleware_hpom_server_variable_follows_guide", {"variable": "OPC_CREATE_AUTO_KEYS"}, 0))
    [rec] = _judge("HPOM-AUTOKEYS", {"hpom": (True, auto)})
    assert rec["status"] == "deviates"
    assert rec["remedy"] == "ovconfchg -ovrg server -ns opc -set OPC_CREATE_AUTO_KEYS TRUE"


def test_a_remote_hpom_server_is_named_and_this_hosts_figures_are_not_used_for_it():
    remote = [("middleware_hpom_source_success", {"source": "ovconfget", "target": "omu01"}, 1),
              ("middleware_hpom_server_variable_follows_guide",
               {"variable": "OPC_DIRECT_ACKN_LIMIT", "target": "omu01"}, 1)]
    [rec] = _judge("HPOM-VAR-ACKLIMIT", {"hpom": (True, remote)})
    assert rec["target"] == "omu01" and rec["status"] == "follows"
    [rec] = _judge("HPOM-MEM", {"hpom": (True, remote), "host": (True, HOST_8), "process": (True, [])})
    assert rec["status"] == "unknown" and rec["reason"].startswith("not applicable: the HPOM server omu01")


def test_hpom_cma_and_active_messages():
    def db(query: str, ok: int, *samples):
        return [("middleware_hpom_source_present", {"source": "database"}, 1),
                ("middleware_hpom_source_success", {"source": "database"}, 1),
                ("middleware_hpom_query_success", {"query": query}, ok), *samples]

    cma = db("custom_message_attributes", 1, ("middleware_hpom_cma_max_per_message", {}, 10),
             ("middleware_hpom_messages_over_cma_limit", {}, 0), ("middleware_hpom_cma_limit", {}, 10))
    [rec] = _judge("HPOM-CMA", {"hpom": (True, cma)})
    assert rec["status"] == "follows", "exactly 10: the guide's '10 or fewer'"
    [rec] = _judge("HPOM-CMA", {"hpom": (True, cma[:3] + [("middleware_hpom_cma_max_per_message", {}, 11)])})
    assert rec["status"] == "deviates" and "112.4 msg/s" in rec["effect"] and "Table" in rec["citation"]["section"]
    [rec] = _judge("HPOM-CMA", {"hpom": (True, db("custom_message_attributes", 0))})
    assert rec["reason"].startswith("not readable: the custom_message_attributes query")
    [rec] = _judge("HPOM-CMA", {"hpom": (True, db("active_messages", 1))})
    assert rec["reason"].startswith("source not configured: the custom_message_attributes query")
    below = db("active_messages", 1, ("middleware_hpom_active_messages", {"severity": "major"}, 20_000),
               ("middleware_hpom_active_messages", {"severity": "normal"}, 29_999))
    [rec] = _judge("HPOM-ACTIVE", {"hpom": (True, below)})
    assert rec["status"] == "follows" and rec["observed_value"] == 49_999
    [rec] = _judge("HPOM-ACTIVE", {"hpom": (True, below + [("middleware_hpom_active_messages",
                                                             {"severity": "minor"}, 1)])})
    assert rec["status"] == "deviates" and "5,000" in rec["remedy"], "from 50,000, as the alert"
    [rec] = _judge("HPOM-ACTIVE", {"hpom": (False, [])})
    assert rec["status"] == "unknown"


def test_hpom_slod_memory_and_msi_deviations():
    tree = [("middleware_hpom_service_tree_depth", {}, 8), ("middleware_hpom_service_load_on_demand", {}, 0)]
    [rec] = _judge("HPOM-SLOD", {"hpom": (True, tree)})
    assert rec["status"] == "deviates" and rec["remedy"]
    [rec] = _judge("HPOM-SLOD", {"hpom": (True, tree[:1] + [("middleware_hpom_service_load_on_demand", {}, 1)])})
    assert rec["status"] == "follows"
    guis = [("middleware_process_group_processes", {"group": "hpom_java_gui", "process": "opcuiwww"}, 12),
            ("middleware_process_group_processes", {"group": "hpom_motif_gui", "process": "opcuiop"}, 4)]
    [rec] = _judge("HPOM-MEM", {"hpom": (True, []), "host": (True, HOST_8), "process": (True, guis)})
    # RAM formula 512 + 35 x 4 + 128 x 12 = 2,188 MB > 2,048 MB; swap 0 < RAM + 512 + 48 + 768 MB
    assert rec["status"] == "deviates" and "add memory: at least 140 MiB" in rec["remedy"] and "swapon" in rec["remedy"]
    [rec] = _judge("HPOM-GUI", {"hpom": (True, []), "host": (True, HOST_8), "process": (True, guis)})
    assert rec["status"] == "deviates" and rec["observed_value"] == 12
    msi = [("middleware_hpom_source_success", {"source": "msi"}, 1), ("middleware_hpom_msi_programs_running", {}, 6)]
    [rec] = _judge("HPOM-MSI", {"hpom": (True, msi)})
    assert rec["status"] == "deviates"
    [rec] = _judge("HPOM-MSI", {"hpom": (True, msi[:1] + [("middleware_hpom_msi_programs_running", {}, 5)])})
    assert rec["status"] == "follows", "exactly five: the summary's reading (more than five) is kept"
    [rec] = _judge("HPOM-MSI", {"hpom": (True, [("middleware_hpom_source_present", {"source": "msi"}, 0)])})
    assert rec["reason"].startswith("source not configured")
    [rec] = _judge("HPOM-KERNEL", {"host": (True, HOST_8)})
    assert rec["reason"].startswith("not applicable: no HPOM management server here")


def test_oracle_unknowns_without_a_database_or_a_session():
    [rec] = _judge("ORA-DBWR", {})
    assert rec["reason"] == "source not configured: the oracle collector is disabled"
    down = [("middleware_oracle_up", {"database": "db1"}, 0), ("middleware_oracle_collect_success",
                                                                {"database": "db1"}, 0)]
    [rec] = _judge("ORA-REDO", {"oracle": (True, down)})
    assert rec["target"] == "db1" and rec["reason"] == "not readable: no session to db1 in the last run"
    sga = [("middleware_oracle_up", {"database": "db1"}, 1),
           ("middleware_oracle_follows_guide", {"database": "db1", "check": "sga_share_of_memory"}, 0),
           ("middleware_oracle_guide_observed", {"database": "db1", "check": "sga_share_of_memory"}, 0.25),
           ("middleware_oracle_host_memory_bytes", {"database": "db1"}, 8 * 1024**3),
           ("middleware_oracle_parameter_value", {"database": "db1", "name": "sga_target"}, 2 * 1024**3)]
    [rec] = _judge("ORA-SGA", {"oracle": (True, sga)})
    assert rec["status"] == "deviates" and "sga_target=4916M SCOPE=SPFILE" in rec["remedy"]


def test_mq_io_same_disk_deviates_separate_disks_follow(tmp_path):
    from exporter.core.collector import Context
    from exporter.systems.ibmmq.collector import IbmmqCollector
    from exporter.systems.ibmmq.settings import IbmmqSettings

    from ..support import collect

    data, log = tmp_path / "qmgrs", tmp_path / "log"
    data.mkdir()
    log.mkdir()
    other = Path("/dev/shm")
    settings = IbmmqSettings(enabled=True, queue_managers=[
        {"name": "QMA", "backend": "runmqsc", "runmqsc": "/nonexistent/runmqsc", "dspmq": "/nonexistent/dspmq",
         "statistics": "off", "data_path": str(data), "log_path": str(log)},
        {"name": "QMB", "backend": "runmqsc", "runmqsc": "/nonexistent/runmqsc", "dspmq": "/nonexistent/dspmq",
         "statistics": "off", "data_path": str(data), "log_path": str(other if other.is_dir() else "/proc")}])
    _, batch = collect(IbmmqCollector(settings, Context()))
    samples = [(s.labels, s.value) for f in batch.families() for s in f.samples]
    devices = {(labels["qmgr"], labels["use"]): labels["device"] for labels, _ in samples if "use" in labels}
    assert devices[("QMA", "data")] == devices[("QMA", "log")] != devices[("QMB", "log")]
    families = [(s.name, dict(s.labels), s.value) for f in batch.families() for s in f.samples]
    by = {r["target"]: r for r in recommendations(Snapshot.of(_Scheduler({"ibmmq": (True, families)})),
                                                  [r for r in ROWS if r.id == "MQ-IO"])}
    assert by["QMA"]["status"] == "deviates" and "LogPath" in by["QMA"]["remedy"]
    assert by["QMB"]["status"] == "follows"


# ---- the CLI and the API ---------------------------------------------------------------------------------------
def _main(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.mark.integration  # the advise command collecting a whole estate (about 1-3 s)
def test_advise_exit_statuses(tmp_path, fake_oracle):
    code, out, _ = _main("advise", "--config", str(estate(tmp_path)), "--format", "json")
    report = json.loads(out)
    assert code == 1 and deviating(report)
    assert {r["row"] for r in report["recommendations"]} == EXPECTED_ROWS
    # nothing enabled: nothing deviates, everything is unknown
    empty = tmp_path / "empty.yaml"
    empty.write_text(yaml.safe_dump({"collectors": {"host": {"enabled": False}, "process": {"enabled": False}}}))
    code, out, _ = _main("advise", "--config", str(empty))
    assert code == 0 and "0 deviate" in out and "DEVIATES" not in out
    bad = tmp_path / "bad.yaml"
    bad.write_text("collectors:\n  oracle:\n    enabled: true\n    no_such_setting: 1\n")
    code, _, err = _main("advise", "--config", str(bad))
    assert code == 2 and "no_such_setting" in err


@pytest.mark.integration
def test_api_advice_through_the_real_exporter_and_advise_url(tmp_path, start_exporter):
    import bcrypt

    config = estate(tmp_path)
    password = "s3cret-advice-pw"
    web = tmp_path / "web.yml"
    web.write_text(f"basic_auth_users:\n  ops: {bcrypt.hashpw(password.encode(), bcrypt.gensalt(4)).decode()}\n")
    exporter = start_exporter("--config", str(config), "--web.config.file", str(web),
                              "--web.auth-exempt-path", "/readyz",
                              env=environment(tmp_path))
    assert exporter.get("/api/v1/advice")[0] == 401, "the advice is behind the same basic auth as /metrics"
    token = base64.b64encode(f"ops:{password}".encode()).decode()
    status, headers, body = exporter.get("/api/v1/advice", {"Authorization": f"Basic {token}"})
    assert status == 200 and headers["content-type"].startswith("application/json")
    served = json.loads(body)
    assert {r["row"] for r in served["recommendations"]} == EXPECTED_ROWS
    golden = json.loads(GOLDEN.read_text())
    assert [(r["row"], r["target"], r["status"]) for r in served["recommendations"]] == \
        [(r["row"], r["target"], r["status"]) for r in golden["recommendations"]]
    assert DB_PASSWORD not in body.decode()

    secret = tmp_path / "password"
    secret.write_text(password + "\n")
    code, out, _ = _main("advise", "--url", exporter.base, "--url.username", "ops", "--url.password-file",
                         str(secret), "--format", "json")
    assert code == 1 and json.loads(out)["recommendations"] == served["recommendations"]
    code, _, err = _main("advise", "--url", exporter.base)
    assert code == 2 and "HTTP 401" in err


# ---- issue 26: misjudgements a held-out estate found, each through the real collectors and `advise` ----------------
def _advise(config: Path) -> dict[tuple[str, str], dict]:
    code, out, err = _main("advise", "--config", str(config), "--format", "json")
    assert code in (0, 1), err
    return _by(json.loads(out))


# ---- issue 39: ORA-KGL judged on the history the alert log holds, without a configured window -------------------
_OLD_STAMP = re.compile(r"^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} +\d{1,2} \d\d:\d\d:\d\d \d{4}$")
_ISO_STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+[+-]\d\d:\d\d$")


def _stamp_time(line: str) -> datetime | None:
    if _OLD_STAMP.match(line):  # 10g: the host's local time, no zone written
        return datetime.strptime(" ".join(line.split()), "%a %b %d %H:%M:%S %Y").astimezone()
    if _ISO_STAMP.match(line):
        return datetime.fromisoformat(line)
    return None


def _shifted(name: str, first: datetime) -> str:
    """A genuine alert-log capture with its timestamp lines moved so that its first one is at ``first``, the others
    as far after it as in the capture, each written in its own format (old format in local time, ISO with the
    capture's offset): only the times change, every other byte is the capture's."""
    lines = real_oracle_fixture(name).read_text(encoding="utf-8").splitlines()
    times = [_stamp_time(line) for line in lines]
    origin = next(t for t in times if t is not None)
    out = []
    for line, moment in zip(lines, times, strict=True):
        if moment is None:
            out.append(line)
            continue
        moved = first + (moment - origin)
        if _OLD_STAMP.match(line):
            local = moved.astimezone()
            out.append(f"{local:%a %b} {local.day:2d} {local:%H:%M:%S %Y}")
        else:
            out.append(moved.astimezone(moment.tzinfo).isoformat(timespec="microseconds"))
    return "\n".join(out) + "\n"


KGL_10G = "alert_log_kgl_heap_warning_10.2.0.1_with_ora600.txt"
KGL_18C = "alert_log_kgl_heap_warning_18c_pdbseed_prefix.txt"


def _kgl_file_estate(tmp_path: Path, text: str, **heap) -> Path:
    alert = tmp_path / "alert_opcdb.log"
    alert.write_text(text, encoding="utf-8")
    oracle = yaml.safe_load(estate(tmp_path).read_text())["collectors"]["oracle"]
    oracle["databases"][0]["heap_warnings"] = {"alert_log": str(alert), **heap}
    return estate(tmp_path, oracle=oracle)


@pytest.mark.integration  # the advise command collecting a whole estate (about 1-3 s)
def test_kgl_heap_warnings_of_the_last_day_in_the_alert_log_file_deviate(tmp_path, fake_oracle):
    """A one-shot advise on an alert log holding heap warnings in the last day: the genuine 10.2 and 18c captures,
    three days old and then 5 and 2 hours old.  Before issue 39 this was "unknown" (the file read from its end)."""
    now = datetime.now(timezone.utc)
    text = (_shifted(KGL_10G, now - timedelta(days=3)) + _shifted(KGL_18C, now - timedelta(days=3, hours=-1))
            + _shifted(KGL_10G, now - timedelta(hours=5)) + _shifted(KGL_18C, now - timedelta(hours=2)))
    config = _kgl_file_estate(tmp_path, text)
    kgl = _advise(config)[("ORA-KGL", "opcdb")]
    assert kgl["status"] == "deviates", kgl
    assert kgl["observed_value"] == 2  # the two of the last day, not the two of three days ago
    observed = kgl["observed"]
    assert observed.startswith(f"2 heap warnings from {(now - timedelta(days=1)):%Y-%m-%d} "), observed
    assert f"UTC to {now:%Y-%m-%d} " in observed and f"(alert-log file {tmp_path / 'alert_opcdb.log'}; " in observed
    # the largest heap (the 18c one, 52562K) and its object, the threshold the log printed last
    assert '; largest heap 51.3 MiB (ALTER VIEW "KU$_M_ZONEMAP_PIOT_VIEW" COMPILE)' in observed, observed
    assert "capped" not in observed
    assert kgl["remedy"] == 'ALTER SYSTEM SET "_kgl_large_heap_warning_threshold"=54525952 SCOPE=SPFILE;'


@pytest.mark.integration  # the advise command collecting a whole estate (about 1-3 s)
def test_kgl_a_clean_day_in_the_alert_log_file_follows(tmp_path, fake_oracle):
    """Heap warnings three days ago, then a day of ordinary messages (the captures' log switch and ORA-00600s):
    follows, and says over which window.  Before issue 39: "unknown"."""
    now = datetime.now(timezone.utc)
    day = _shifted(KGL_10G, now - timedelta(hours=20)).split("\n", 4)[4]  # from its log switch on: no warning
    text = _shifted(KGL_10G, now - timedelta(days=3)) + day
    kgl = _advise(_kgl_file_estate(tmp_path, text))[("ORA-KGL", "opcdb")]
    assert kgl["status"] == "follows", kgl
    assert kgl["observed"].startswith("0 heap warnings from "), kgl
    newest = now - timedelta(hours=20) + timedelta(hours=3, minutes=25, seconds=22)  # the capture's last entry
    assert f"(alert-log file {tmp_path / 'alert_opcdb.log'}; newest entry {newest:%Y-%m-%d %H:%M} UTC)" \
        in kgl["observed"], kgl


@pytest.mark.integration  # the advise command collecting a whole estate (about 1-3 s)
def test_kgl_an_alert_log_not_written_in_the_last_day_covers_none_of_it(tmp_path, fake_oracle):
    """A log whose newest entry is a week old (the instance writes elsewhere, or was down): no warning in the day
    is no evidence, so unknown, naming the file and its newest entry; its old warnings are not counted."""
    now = datetime.now(timezone.utc)
    kgl = _advise(_kgl_file_estate(tmp_path, _shifted(KGL_18C, now - timedelta(days=7))))[("ORA-KGL", "opcdb")]
    assert kgl["status"] == "unknown", kgl
    assert kgl["reason"].startswith(f"not readable: alert-log file {tmp_path / 'alert_opcdb.log'} has no entry "
                                    "from "), kgl
    assert f"(its newest: {(now - timedelta(days=7)):%Y-%m-%d}" in kgl["reason"]


@pytest.mark.integration  # the advise command collecting a whole estate (about 1-3 s)
@pytest.mark.parametrize("kind", ["missing", "directory"])
def test_kgl_an_unreadable_alert_log_is_unknown_with_the_reason(tmp_path, fake_oracle, kind):
    config = _kgl_file_estate(tmp_path, "")
    path = tmp_path / "alert_opcdb.log"
    path.unlink()
    if kind == "directory":
        path.mkdir()
    kgl = _advise(config)[("ORA-KGL", "opcdb")]
    assert kgl["status"] == "unknown", kgl
    error = "No such file or directory" if kind == "missing" else "Is a directory"
    assert kgl["reason"].startswith(f"not readable: the alert log of opcdb could not be read (alert-log file {path}: ")
    assert error in kgl["reason"], kgl


@pytest.mark.integration  # the advise command collecting a whole estate (about 1-3 s)
def test_kgl_a_capped_tail_says_what_window_it_covered(tmp_path, fake_oracle):
    """A busy day: more than max_bytes of log since the day began.  The tail read covers from its first entry on,
    and the row says so."""
    now = datetime.now(timezone.utc)
    busy = "".join(_shifted(KGL_10G, now - timedelta(hours=23) + timedelta(minutes=m)).split("\n", 4)[4]
                   for m in range(0, 22 * 60, 10))  # log switches and ORA-00600s every 10 minutes, ~180 KB
    text = busy + _shifted(KGL_18C, now - timedelta(minutes=30))
    kgl = _advise(_kgl_file_estate(tmp_path, text, max_bytes=16384))[("ORA-KGL", "opcdb")]
    assert kgl["status"] == "deviates" and kgl["observed_value"] == 1, kgl
    assert "capped at heap_warnings.max_bytes" in kgl["observed"]
    start = re.search(r"from (\d{4}-\d\d-\d\d \d\d:\d\d) UTC", kgl["observed"]).group(1)
    covered = now - datetime.strptime(start, "%Y-%m-%d %H:%M").replace(tzinfo=timezone.utc)
    assert timedelta(minutes=30) < covered < timedelta(hours=20), kgl["observed"]  # the tail's, not the day's


@pytest.mark.integration  # the advise command collecting a whole estate (about 1-3 s)
def test_kgl_a_configured_window_still_wins(tmp_path, fake_oracle):
    now = datetime.now(timezone.utc)
    text = _shifted(KGL_18C, now - timedelta(hours=10)) + _shifted(KGL_10G, now - timedelta(hours=1)).split(
        "\n", 4)[4]
    by_window = {history: _advise(_kgl_file_estate(tmp_path, text, history=history))[("ORA-KGL", "opcdb")]
                 for history in ("6h", "0")}
    assert by_window["6h"]["status"] == "follows", by_window  # the warning 10 h ago is outside the 6 h asked for
    assert by_window["0"]["status"] == "unknown"  # history 0: the count starts at the first run, as before
    assert "heap_warnings.history is 0" in by_window["0"]["reason"]


@pytest.mark.integration  # the advise command collecting a whole estate (about 1-3 s)
def test_kgl_view_without_privilege_is_unknown_with_the_reason(tmp_path, fake_oracle):
    config = estate(tmp_path)
    fixture = yaml.safe_load((tmp_path / "db.yaml").read_text())
    for entry in fixture["databases"].values():
        for query in entry["queries"]:
            if query["match"] == "FROM v$diag_alert_ext":
                query.clear()
                query.update({"match": "FROM v$diag_alert_ext", "error": "ORA-00942: table or view does not exist"})
    (tmp_path / "db.yaml").write_text(yaml.safe_dump(fixture))
    by = _advise(config)
    for db in ("opcdb", "erp"):
        assert by[("ORA-KGL", db)]["status"] == "unknown"
        assert by[("ORA-KGL", db)]["reason"].startswith(
            f"not readable: the alert log of {db} could not be read (V$DIAG_ALERT_EXT: ")
        assert "grant SELECT on it to the monitoring user" in by[("ORA-KGL", db)]["reason"]


@pytest.mark.integration  # a real exporter process and `advise --url`
def test_kgl_judged_by_a_running_exporter_and_advise_url(tmp_path, fake_oracle, start_exporter):
    """The estate's remote mode: `advise --url` asks a running exporter, whose first run read the last day."""
    now = datetime.now(timezone.utc)
    config = _kgl_file_estate(tmp_path, _shifted(KGL_10G, now - timedelta(hours=3)))
    exporter = start_exporter("--config", str(config), env=environment(tmp_path))
    deadline = time.monotonic() + 60
    while True:
        code, out, err = _main("advise", "--url", exporter.base, "--format", "json")
        kgl = _by(json.loads(out))[("ORA-KGL", "opcdb")] if out else None
        if kgl and kgl["status"] != "unknown" or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert code == 1 and kgl["status"] == "deviates", (kgl, err)
    assert kgl["observed"].startswith("1 heap warning from ") and "XDB.XDbD/PLZ01TcHgNAgAIIegtw==" in kgl["observed"]


@pytest.mark.integration  # several collections in a row
def test_kgl_window_grows_with_the_runs_and_history_gives_one_at_the_start(tmp_path, fake_oracle):
    alert = tmp_path / "alert_opcdb.log"
    alert.write_text("Heap size 52749K exceeds notification threshold (51200K)\n")
    oracle = yaml.safe_load(estate(tmp_path).read_text())["collectors"]["oracle"]
    oracle["databases"][0]["heap_warnings"] = {"alert_log": str(alert)}
    scheduler, config = _run(estate(tmp_path, oracle=oracle))
    assert _by(build_report(scheduler, config))[("ORA-KGL", "opcdb")]["status"] == "unknown"
    scheduler.run_once()  # a second run: the window from the first read to this one has been read, no warning in it
    kgl = _by(build_report(scheduler, config))[("ORA-KGL", "opcdb")]
    assert kgl["status"] == "follows" and kgl["observed"].startswith("0 heap warnings from "), kgl
    with alert.open("a") as handle:
        handle.write("Heap size 2190K exceeds notification threshold (2048K)\n")
    scheduler.run_once()
    kgl = _by(build_report(scheduler, config))[("ORA-KGL", "opcdb")]
    assert kgl["status"] == "deviates" and kgl["observed"].startswith("1 heap warning from "), kgl
    # the view source with history: the first run already covers 6 h of the log
    oracle["databases"][0]["heap_warnings"] = {"history": "6h"}
    kgl = _advise(estate(tmp_path, oracle=oracle))[("ORA-KGL", "opcdb")]
    # (the stand-in answers START_UTC 2018-11-12 10:00 whatever is asked: the window is 6 h from there)
    assert kgl["status"] == "follows" and kgl["observed"] == \
        "0 heap warnings from 2018-11-12 10:00 UTC to 2018-11-12 16:00 UTC (V$DIAG_ALERT_EXT)", kgl


def _hpom_estate(tmp_path: Path, ovconfget: str, **settings) -> Path:
    hpom = yaml.safe_load(estate(tmp_path).read_text())["collectors"]["hpom"]
    answer = tmp_path / "ovconfget.txt"
    answer.write_text(ovconfget)
    hpom["ovconfget"] = shell_script(tmp_path / "bin" / "ovconfget-site", f'cat "{answer}"\n')
    hpom.update(settings)
    return estate(tmp_path, hpom=hpom)


@pytest.mark.integration  # the advise command collecting a whole estate (about 1-3 s)
def test_no_rpc_and_automatic_keys_are_judged_against_the_stated_server_version(tmp_path, fake_oracle):
    """Test: Varying the Number of Active Java GUIs, footnote 4: NO_RPC exists from 8.22; Test: Suppressing Message
    Duplicates, Conclusions: OPC_CREATE_AUTO_KEYS (on by default) came with the 8.31 server patch."""
    text = "OPCMSGM_USE_GUI_THREAD=NO_RPC\nOPC_DIRECT_ACKN_LIMIT=0\nOPC_UPDWN_COMMIT_COUNT=1000\n"
    by = _advise(_hpom_estate(tmp_path, text, server_version="8.21"))
    gui = by[("HPOM-VAR-GUITHREAD", "management server")]
    assert gui["status"] == "deviates", gui
    assert "no such value before 8.22 (server_version 8.21" in gui["observed"]
    assert gui["remedy"] == "ovconfchg -ovrg server -ns opc -set OPCMSGM_USE_GUI_THREAD TRUE"
    keys = by[("HPOM-AUTOKEYS", "management server")]
    assert "(default)" not in keys["observed"] and "no automatic keys before 8.31" in keys["observed"], keys
    # from 8.22 NO_RPC follows; from 8.31 the automatic keys are on by default
    by = _advise(_hpom_estate(tmp_path, text, server_version="8.31"))
    assert by[("HPOM-VAR-GUITHREAD", "management server")]["status"] == "follows"
    assert by[("HPOM-AUTOKEYS", "management server")]["observed"].startswith("OPC_CREATE_AUTO_KEYS=TRUE (default)")


@pytest.mark.integration  # the advise command collecting a whole estate (about 1-3 s)
def test_msi_is_not_judged_from_this_hosts_process_table_for_a_remote_server(tmp_path, fake_oracle):
    """host1's process table runs opcmsgm (the estate's MSI program); a server read through a command prefix must
    not be judged on it."""
    text = (system_fixtures("hpom") / "server" / "ovconfget_server_opc.txt").read_text()
    by = _advise(_hpom_estate(tmp_path, text, command_prefix=["env"], target="omu01"))
    msi = by[("HPOM-MSI", "omu01")]
    assert msi["status"] == "unknown" and msi["reason"].startswith("not applicable: the HPOM server omu01"), msi
    for row in ("HPOM-MEM", "HPOM-KERNEL"):
        assert by[(row, "local host")]["reason"].startswith("not applicable: the HPOM server omu01")
    config = load(str(_hpom_estate(tmp_path, text, command_prefix=["env"], target="omu01")))
    scheduler = Scheduler(build_collectors(config))
    scheduler.run_once()
    samples = Snapshot.of(scheduler).samples
    assert ("middleware_hpom_msi_programs_running" not in samples), "no local count under the remote target"
    assert [v for labels, v in samples["middleware_hpom_source_present"] if labels["source"] == "msi"] == [0]


def _vhi_host(tmp_path: Path, affinity: str, topology: str | None) -> Path:
    """host1's recorded /proc with its session server (pid 8001) on ``affinity``, and a /sys whose CPU topology is
    the fixture ``topology`` (None: none)."""
    proc, sys_root = tmp_path / "proc", tmp_path / "sys"
    shutil.copytree(FIXTURES / "host1" / "proc", proc, symlinks=True)
    status = proc / "8001" / "status"
    status.write_text(re.sub(r"Cpus_allowed_list:\t.*", f"Cpus_allowed_list:\t{affinity}", status.read_text()))
    cpu = sys_root / "devices" / "system" / "cpu"
    if topology:
        shutil.copytree(TOPOLOGIES / topology / "devices" / "system" / "cpu", cpu)
    else:
        cpu.mkdir(parents=True)
    config = tmp_path / "vhi.yaml"
    config.write_text(yaml.safe_dump({"paths": {"procfs": str(proc), "sysfs": str(sys_root),
                                                "rootfs": str(FIXTURES / "host1" / "root")}, "collectors": {
        "host": {"interval": 60, "timeout": 5}, "process": {"enabled": False},
        "vhi": {"enabled": True, "interval": 60, "timeout": 5}}}))
    return config


@pytest.mark.parametrize(("topology", "affinity", "status", "cores", "cpus"), [
    ("smt_n_n8", "0-7", "deviates", 8, "0-3,8-11"),   # eight cores (siblings n/n+8), not 8 CPUs / 2 = 4
    ("smt_n_n8", "0-3,8-11", "follows", 4, None),     # the guide's 4 cores with both threads each
    ("smt_n_n8", "0-31", "deviates", 8, "0-3,8-11"),  # an affinity wider than the host: only CPUs it has
    ("recorded_2cpu", "0-1", "follows", 2, None),
])
@pytest.mark.integration  # the advise command collecting a whole estate (about 1-3 s)
def test_vhi_cores_are_read_from_the_cpu_topology(tmp_path, topology, affinity, status, cores, cpus):
    rec = _advise(_vhi_host(tmp_path, affinity, topology))[("VHI-CPU", "session server")]
    assert rec["status"] == status and rec["observed_value"] == cores, rec
    if cpus:
        assert f"taskset -a -cp {cpus} " in rec["remedy"], rec["remedy"]


@pytest.mark.integration  # the advise command collecting a whole estate (about 1-3 s)
def test_vhi_cores_without_a_topology_are_not_guessed(tmp_path):
    rec = _advise(_vhi_host(tmp_path, "0-7", None))[("VHI-CPU", "session server")]
    assert rec["status"] == "unknown" and rec["reason"].startswith("not readable: the session server's CPU"), rec


def test_vhi_sess_offers_only_cpus_the_host_has():
    over = VHI_RUNNING + [("middleware_vhi_sessions", {}, 600), ("middleware_vhi_session_server_cpus", {}, 2),
                          ("middleware_vhi_sessions_per_cpu", {}, 300),
                          ("middleware_vhi_sessions_per_cpu_limit", {}, 250)]
    # a 2-CPU host whose session server has both: no taskset to CPUs 2-3 it does not have
    [rec] = _judge("VHI-SESS", {"vhi": (True, over + [("middleware_vhi_session_server_guide_cpus_info",
                                                       {"cpus": "0-1"}, 1)])})
    assert rec["status"] == "deviates" and "taskset" not in rec["remedy"] and "session servers" in rec["remedy"]
    [rec] = _judge("VHI-SESS", {"vhi": (True, over + [("middleware_vhi_session_server_guide_cpus_info",
                                                       {"cpus": "0-3,8-11"}, 1)])})
    assert "taskset -a -cp 0-3,8-11 " in rec["remedy"]


def test_notes_fit_the_remedy_and_known_values_are_filled_in(report):
    by = _by(report)
    # a parameter-only change (direct I/O through filesystemio_options) needs an instance restart, not a remount
    oradata = by[("ORA-NFS", "opcdb:/u01/oradata")]
    assert "remount" not in oradata["remedy_note"] and "instance restart" in oradata["remedy_note"]
    redo = by[("ORA-NFS", "opcdb:/u02/redo")]
    assert "remount" in redo["remedy_note"] and "instance restart" in redo["remedy_note"]
    # a policy change is distributed, not a restart of the HPOM server processes
    keyless = _hpom(("middleware_hpom_source_present", {"source": "database"}, 1),
                    ("middleware_hpom_source_success", {"source": "database"}, 1),
                    ("middleware_hpom_query_success", {"query": "active_messages"}, 1),
                    ("middleware_hpom_active_messages", {}, 1000),
                    ("middleware_hpom_active_messages_without_key", {}, 600),
                    ("middleware_hpom_server_variable_follows_guide", {"variable": "OPC_CREATE_AUTO_KEYS"}, 1))
    [rec] = _judge("HPOM-AUTOKEYS", {"hpom": (True, keyless)})
    assert rec["status"] == "deviates" and "msgkey" in rec["remedy"], rec
    assert "opcsv" not in rec["remedy_note"] and "distributed" in rec["remedy_note"], rec


def test_mq_io_remedy_names_the_queue_manager_and_its_paths():
    info = "middleware_ibmmq_file_system_info"
    same = [("middleware_ibmmq_backend_success", {"qmgr": "QMA"}, 1),
            (info, {"qmgr": "QMA", "use": "data", "device": "sda"}, 1),
            (info, {"qmgr": "QMA", "use": "log", "device": "sda"}, 1)]
    [rec] = _judge("MQ-IO", {"ibmmq": (True, same)})
    assert rec["status"] == "deviates" and "endmqm -w QMA" in rec["remedy"] and "strmqm QMA" in rec["remedy"]
    assert "<qmgr>" not in rec["remedy"], rec["remedy"]


def test_a_borderline_size_is_shown_with_the_digits_that_decide():
    mem = VHI_RUNNING + [("middleware_vhi_memory_required_bytes", {"level": "recommended"}, 1280 * 1024**2),
                         ("middleware_vhi_memory_required_bytes", {"level": "minimum"}, 640 * 1024**2)]
    host = [("middleware_host_memory_total_bytes", {}, 1270 * 1024**2)]  # 1.24 GiB against 1.25 GiB
    [rec] = _judge("VHI-MEM", {"vhi": (True, mem), "host": (True, host)})
    assert rec["status"] == "deviates"
    memory, recommended = re.fullmatch(r"host memory (.+); formula .+ minimum, (.+) recommended",
                                       rec["observed"]).groups()
    assert memory != recommended, rec["observed"]


def test_unreadable_inputs_are_not_called_not_applicable():
    [rec] = _judge("HPOM-KERNEL", {"hpom": (True, []), "host": (True, HOST_8)})  # host read, no kernel.shmmax
    assert rec["reason"].startswith("not readable: kernel.shmmax"), rec
    oracle = [("middleware_oracle_up", {"database": "db1"}, 1), ("middleware_oracle_mount_table_success", {}, 0)]
    [rec] = _judge("ORA-NFS", {"oracle": (True, oracle)})
    assert rec["reason"].startswith("not readable: the host's mount table"), rec
