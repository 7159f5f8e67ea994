"""The HPOM collector against a fixture HPOM server: a real queue directory, recorded command output served by
small scripts standing in for opcsv/ovc/ovconfget, and database rows served through the fake oracledb module
(tests/fakes/oracledb) at the DB-API boundary.  No HPOM can run on these machines."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from exporter.core.collector import Context
from exporter.systems.hpom.collector import HpomCollector
from exporter.systems.hpom.settings import HpomSettings

from ...support import REPO, collect, install_fake_oracledb, require_binary, wait_for_comm
from ...support import shell_script as _script

FIXTURES = Path(__file__).parent / "fixtures"

SERVER = FIXTURES / "server"
FAKES = REPO / "tests" / "fakes"
MTIME = 1_763_000_000  # fixed modification time for the queue files (golden output)
QUEUES = {"msgmgrq": 123_456, "actreqq": 0, "actrespq": 2_048, "ctrlq": 512, "forwmgrq": 64, "ttnsq": 0,
          "mpicmmq": 1_024, "dispq0": 4_096, "dispq1": 4_096, "dispq2": 8_192}



@pytest.fixture
def fake_oracledb(monkeypatch, tmp_path):
    """Route `import oracledb` to the fake driver, answering from a copy of the fixture rows."""
    fixture = tmp_path / "db.yaml"
    shutil.copy(SERVER / "db.yaml", fixture)
    monkeypatch.setenv("HPOM_DB_PASSWORD", "Sup3r-S3cret-pw")
    install_fake_oracledb(monkeypatch, fixture, tmp_path / "db.log")
    yield fixture
    sys.modules.pop("oracledb", None)


@pytest.fixture
def hpom_server(tmp_path):
    """A queue directory and command stand-ins; returns the settings dict for the collector."""
    queues = tmp_path / "mgmt_sv"
    queues.mkdir()
    for name, size in QUEUES.items():
        path = queues / name
        path.write_bytes(b"\0" * size)
        os.utime(path, (MTIME, MTIME))
    (queues / "opcmsgm.pid").write_text("3741\n")  # not a queue
    (queues / "tmpdir_q").mkdir()  # a directory that matches the pattern is not a queue
    bindir = tmp_path / "bin"
    bindir.mkdir()
    settings = {
        "enabled": True,
        "queue_dir": str(queues),
        "opcsv": _script(bindir / "opcsv", f'cat "{SERVER / "opcsv_status.txt"}"\n'),
        "ovc": _script(bindir / "ovc", f'cat "{SERVER / "ovc_status.txt"}"\n'),
        "ovconfget": _script(bindir / "ovconfget",
                             f'[ "$*" = "-ovrg server opc" ] || exit 3\ncat "{SERVER / "ovconfget_server_opc.txt"}"\n'),
        "queue_count_command": [_script(bindir / "qcount", 'echo "queue $2: $(( $(wc -c < "$1") / 512 )) entries"\n'),
                                "{path}", "{queue}"],
        "queue_count_pattern": r": (?P<count>\d+) entries",
        "command_timeout": "2s",
        "database": {"dsn": "hpomdb.example:1521/openview", "user": "opc_monitor", "password_env": "HPOM_DB_PASSWORD"},
    }
    return settings


_collect = collect


def _value(samples: dict, name: str, /, **labels: str) -> float:
    return samples[(name, tuple(sorted(labels.items())))]


def _collector(settings: dict) -> HpomCollector:
    return HpomCollector(HpomSettings.model_validate(settings), Context())


def test_every_figure_from_a_fixture_hpom(hpom_server, fake_oracledb):
    samples, batch = _collect(_collector(hpom_server))
    assert batch.errors == {}
    v = lambda name, **labels: _value(samples, f"middleware_hpom_{name}", **labels)  # noqa: E731
    for source in ("queues", "queue_count", "opcsv", "ovc", "ovconfget", "database"):
        assert v("source_present", source=source) == 1
        assert v("source_success", source=source) == 1, source
    assert v("source_present", source="msi") == 0
    # queues: sizes, times, entries (the counting command divides the size by 512), GUI display queues
    for name, size in QUEUES.items():
        assert v("queue_size_bytes", queue=name) == size
        assert v("queue_modified_timestamp_seconds", queue=name) == MTIME
        assert v("queue_entries", queue=name) == size // 512
    assert ("middleware_hpom_queue_size_bytes", (("queue", "opcmsgm.pid"),)) not in samples
    assert ("middleware_hpom_queue_size_bytes", (("queue", "tmpdir_q"),)) not in samples
    assert v("gui_display_queues") == 3
    # server processes
    assert v("server_process_up", source="opcsv", process="opcmsgm") == 1
    assert v("server_process_up", source="opcsv", process="opcsvcm") == 0
    assert v("server_process_up", source="opcsv", process="ovcd") == 1
    assert v("server_process_up", source="ovc", process="opcmona") == 0
    assert v("server_process_up", source="ovc", process="ovoareqsdr") == 1
    # variables: set, default, numeric, and against Table 1
    assert v("server_variable_follows_guide", variable="OPCMSGM_USE_GUI_THREAD") == 1
    assert v("server_variable_follows_guide", variable="OPC_DIRECT_ACKN_LIMIT") == 0
    assert v("server_variable_value", variable="OPC_DIRECT_ACKN_LIMIT") == 50
    assert v("server_variable_follows_guide", variable="OPC_UPDWN_COMMIT_COUNT") == 1
    assert v("server_variable_follows_guide", variable="OPC_CREATE_AUTO_KEYS") == 1  # default TRUE
    assert v("server_variable_follows_guide", variable="OPCUIWWW_BULK_MODE") == 0  # default FALSE
    info = [labels for (name, labels), _ in samples.items() if name == "middleware_hpom_server_variable_info"]
    info = {dict(labels)["variable"]: dict(labels) for labels in info}
    assert info["OPC_CREATE_AUTO_KEYS"]["origin"] == "default"
    assert info["OPC_ACK_MOVE_INTERVAL"]["value"] == "0" and info["OPC_ACK_MOVE_INTERVAL"]["origin"] == "set"
    # 8.22 variables (footnote 4): off while unset; NEW_MSG_NO_DB also needs OPCMSGM_USE_GUI_THREAD=NO_RPC
    assert info["OPCUIWWW_NEW_MSG_NO_DB"]["origin"] == "default" and info["OPCUIWWW_NEW_MSG_NO_DB"]["value"] == "FALSE"
    assert v("server_variable_follows_guide", variable="OPCUIWWW_NEW_MSG_NO_DB") == 0
    # database figures (HPOM-ACTIVE, HPOM-ACK, HPOM-CMA, HPOM-AUTOKEYS, HPOM-THROUGHPUT, HPOM-HISTDL)
    assert v("database_up") == 1 and v("database_backoff_seconds") == 0
    assert v("active_messages", severity="major") == 30000
    assert v("active_messages", severity="minor") == 0  # zero-filled
    assert sum(samples[k] for k in samples if k[0] == "middleware_hpom_active_messages") == 52712
    assert v("acknowledged_active_messages", severity="major") == 5000
    assert v("active_messages_without_key", severity="warning") == 15000
    assert v("window_acknowledged_messages") == 6000
    assert v("window_received_messages") / v("window_seconds") == 225
    assert v("cma_max_per_message") == 14
    assert v("messages_over_cma_limit") == 37 and v("cma_limit") == 10
    assert v("history_messages") == 2345678
    # HPOM-MOM: per target management server
    assert v("forwarded_active_messages", target="mom-central.example.com") == 1500
    assert v("forwarded_window_acknowledged_messages", target="mom-central.example.com") == 2500
    assert v("forwarded_window_acknowledged_messages", target="mom-backup.example.com") == 0
    for query in ("active_messages", "recent_activity", "custom_message_attributes", "history_messages",
                  "forwarded_messages"):
        assert v("query_success", query=query) == 1
    # HPOM-SLOD: the service tree query has placeholder names and does not run until service_table is set;
    # Service Load on Demand is unknown unless the site says
    assert ("middleware_hpom_query_success", (("query", "service_tree"),)) not in samples
    assert not any(name.startswith("middleware_hpom_service_") for name, _ in samples)


def test_query_params_come_from_config(hpom_server, fake_oracledb):
    hpom_server["query_params"] = {"window_seconds": 300, "cma_limit": 5}
    samples, _ = _collect(_collector(hpom_server))
    assert _value(samples, "middleware_hpom_window_seconds") == 300
    assert _value(samples, "middleware_hpom_cma_limit") == 5


def test_msi_programs_are_counted_from_real_processes(hpom_server, fake_oracledb, spawn):
    hpom_server["msi_programs"] = ["msi_ticket", "msi_pager", "msi_absent"]
    for name in ("msi_ticket", "msi_ticket", "msi_pager"):
        wait_for_comm(spawn(name), name)
    samples, _ = _collect(_collector(hpom_server))
    assert _value(samples, "middleware_hpom_msi_program_processes", program="msi_ticket") == 2
    assert _value(samples, "middleware_hpom_msi_program_processes", program="msi_absent") == 0
    assert _value(samples, "middleware_hpom_msi_programs_running") == 2


def test_missing_installation_is_quiet(tmp_path):
    settings = {"enabled": True, "queue_dir": str(tmp_path / "nope"), "opcsv": str(tmp_path / "opcsv"),
                "ovc": None, "ovconfget": "/nonexistent/ovconfget"}
    samples, batch = _collect(_collector(settings))
    assert batch.errors == {}
    for source in ("queues", "opcsv", "ovc", "ovconfget", "database", "msi", "queue_count"):
        assert _value(samples, "middleware_hpom_source_present", source=source) == 0
    assert not any(name == "middleware_hpom_source_success" for name, _ in samples)


@pytest.mark.integration  # waits out hanging commands or a silent listener
def test_garbage_hanging_and_failing_commands_leave_the_rest(hpom_server, fake_oracledb, tmp_path):
    bindir = tmp_path / "bin"
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(bytes(range(256)) * 8 + b"\xff\xfe(12) is running\n")
    hpom_server["opcsv"] = _script(bindir / "opcsv", f'cat "{garbage}"\n')
    hpom_server["ovc"] = _script(bindir / "ovc", "sleep 30\n")
    hpom_server["ovconfget"] = _script(bindir / "ovconfget", "echo 'ERROR: cannot contact ovconfd' >&2; exit 1\n")
    hpom_server["queue_count_command"] = [_script(bindir / "qcount", "echo no number here\n"), "{path}"]
    started = time.monotonic()
    samples, batch = _collect(_collector(hpom_server))
    assert time.monotonic() - started < 25  # the timeouts are seconds; the hang is 30 s (margin for a loaded machine)
    assert _value(samples, "middleware_hpom_source_success", source="opcsv") == 0
    assert "no process lines" in batch.errors["opcsv"]
    assert _value(samples, "middleware_hpom_source_success", source="ovc") == 0
    assert "timed out after 2s" in batch.errors["ovc"]
    assert _value(samples, "middleware_hpom_source_success", source="ovconfget") == 0
    assert "exit status 1: ERROR: cannot contact ovconfd" in batch.errors["ovconfget"]
    assert _value(samples, "middleware_hpom_source_success", source="queue_count") == 0
    assert "no count in the output" in batch.errors["queue_count"]
    assert not any(name == "middleware_hpom_server_process_up" for name, _ in samples)
    # everything else is intact
    assert _value(samples, "middleware_hpom_queue_size_bytes", queue="msgmgrq") == 123_456
    assert _value(samples, "middleware_hpom_active_messages", severity="major") == 30000


def test_rejected_login_backs_off_and_does_not_lock_the_account(hpom_server, fake_oracledb, tmp_path):
    fixture = yaml.safe_load(fake_oracledb.read_text())
    fixture["login_error"] = "ORA-01017: invalid username/password; logon denied"
    fake_oracledb.write_text(yaml.safe_dump(fixture))
    collector = _collector(hpom_server)
    for _ in range(3):
        samples, batch = _collect(collector)
    attempts = (tmp_path / "db.log").read_text().splitlines()
    assert attempts == ["acquire opc_monitor hpomdb.example:1521/openview"], "login retried while backing off"
    assert _value(samples, "middleware_hpom_database_up") == 0
    assert 290 < _value(samples, "middleware_hpom_database_backoff_seconds") <= 300
    assert _value(samples, "middleware_hpom_query_success", query="active_messages") == 0
    assert "ORA-01017" in batch.errors["database"] and "not to lock the account" in batch.errors["database"]
    assert "Sup3r-S3cret-pw" not in repr(batch.errors)
    assert _value(samples, "middleware_hpom_queue_size_bytes", queue="msgmgrq") == 123_456
    # the password is fixed; once the back-off has passed the collector logs in again
    fake_oracledb.write_text((SERVER / "db.yaml").read_text())
    collector.client.retry_at = 0
    samples, batch = _collect(collector)
    assert _value(samples, "middleware_hpom_database_up") == 1
    assert _value(samples, "middleware_hpom_active_messages", severity="major") == 30000
    # a second rejection (on a new session: the pooled one is closed first) doubles the wait
    fake_oracledb.write_text(yaml.safe_dump(fixture))
    collector.client.close()
    collector.client.failures = 1
    collector.client.retry_at = 0
    samples, _ = _collect(collector)
    assert _value(samples, "middleware_hpom_database_backoff_seconds") > 590


@pytest.mark.integration  # waits out a hang or a timeout
def test_a_failing_or_slow_query_marks_only_its_own_metrics(hpom_server, fake_oracledb):
    fixture = yaml.safe_load(fake_oracledb.read_text())
    fixture["queries"][2] = {"match": "opc_act_cust_attrib", "error": "ORA-03113: end-of-file on communication channel"}
    fixture["queries"][4] = {"match": "opc_hist_messages", "sleep": 5}
    fake_oracledb.write_text(yaml.safe_dump(fixture))
    hpom_server["database"]["query_timeout"] = "1s"
    collector = _collector(hpom_server)
    collector.queries.queries[3] = collector.queries.queries[3].model_copy(update={"timeout": 1.0})
    samples, batch = _collect(collector)
    assert _value(samples, "middleware_hpom_query_success", query="custom_message_attributes") == 0
    assert _value(samples, "middleware_hpom_query_success", query="history_messages") == 0
    assert "timed out after 1s" in batch.errors["database:history_messages"]
    assert "ORA-03113" in batch.errors["database:custom_message_attributes"]
    assert ("middleware_hpom_cma_max_per_message", ()) not in samples
    assert ("middleware_hpom_history_messages", ()) not in samples
    assert _value(samples, "middleware_hpom_query_success", query="active_messages") == 1
    assert _value(samples, "middleware_hpom_window_acknowledged_messages") == 6000
    assert _value(samples, "middleware_hpom_database_up") == 1
    # both broken sessions were dropped, not returned to the pool
    assert collector.client.dropped == 2


def test_query_interval_serves_cached_rows_between_runs(hpom_server, fake_oracledb, tmp_path):
    collector = _collector(hpom_server)
    _collect(collector)
    fixture = yaml.safe_load(fake_oracledb.read_text())
    fixture["queries"][4]["rows"] = [[1]]
    fixture["queries"][2]["rows"] = [[99, 0, ":cma_limit"]]
    fake_oracledb.write_text(yaml.safe_dump(fixture))
    samples, _ = _collect(collector)
    assert _value(samples, "middleware_hpom_cma_max_per_message") == 99  # runs every time
    assert _value(samples, "middleware_hpom_history_messages") == 2345678  # interval 300s: cached


def test_real_oracledb_driver_connection_refused(hpom_server):
    """The real python-oracledb thin driver against a port where nothing listens."""
    pytest.importorskip("oracledb")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    hpom_server["database"] = {"dsn": f"127.0.0.1:{port}/openview", "user": "opc_monitor",
                               "password": "Sup3r-S3cret-pw", "connect_timeout": "2s"}
    samples, batch = _collect(_collector(hpom_server))
    assert _value(samples, "middleware_hpom_database_up") == 0
    assert "DPY-6005" in batch.errors["database"]
    assert "Sup3r-S3cret-pw" not in repr(batch.errors)
    assert _value(samples, "middleware_hpom_queue_size_bytes", queue="msgmgrq") == 123_456


@pytest.mark.integration  # waits out hanging commands or a silent listener
def test_real_oracledb_driver_against_a_silent_listener(hpom_server):
    """A listener that accepts and never answers (a hung database host): bounded by connect_timeout."""
    pytest.importorskip("oracledb")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    accepted = []
    stop = threading.Event()

    def accept():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(server.accept()[0])
            except OSError:
                pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        hpom_server["database"] = {"dsn": f"127.0.0.1:{server.getsockname()[1]}/openview", "user": "opc_monitor",
                                   "password": "pw", "connect_timeout": "2s"}
        started = time.monotonic()
        samples, batch = _collect(_collector(hpom_server))
        elapsed = time.monotonic() - started
    finally:
        stop.set()
        thread.join()
        for conn in accepted:
            conn.close()
        server.close()
    assert elapsed < 60, f"collection took {elapsed:.1f}s against a silent listener"  # connect_timeout 2 s; wide margin
    assert _value(samples, "middleware_hpom_database_up") == 0
    assert batch.errors["database"]


def test_invalid_configuration_is_named(tmp_path):
    from exporter.core.config import ConfigError
    from exporter.registry import load as load_config

    path = tmp_path / "c.yaml"
    path.write_text("collectors:\n  hpom:\n    enabled: true\n    database:\n      dsn: 'opc/secret@db:1521/ov'\n"
                    "      user: opc\n      password: x\n")
    with pytest.raises(ConfigError) as err:
        load_config(path, environ={})
    assert "collectors.hpom.database.dsn" in str(err.value) and "secret" not in str(err.value)
    path.write_text("collectors:\n  hpom:\n    database:\n      dsn: db/ov\n      user: opc\n")
    with pytest.raises(ConfigError, match="exactly one of password, password_file, password_env"):
        load_config(path, environ={})
    path.write_text("collectors:\n  hpom:\n    queue_count_pattern: '\\d+'\n")
    with pytest.raises(ConfigError, match="named group `count`"):
        load_config(path, environ={})


# ---- guide checks: Table 1 variables, and the query metrics each database guide row needs --------------------
SHIPPED_QUERIES = REPO / "exporter" / "systems" / "hpom" / "queries.yaml"
DATABASE = {"dsn": "hpomdb.example:1521/openview", "user": "opc_monitor", "password": "x"}


def _queries_file(path: Path, drop: str) -> str:
    data = yaml.safe_load(SHIPPED_QUERIES.read_text())
    data["queries"] = [q for q in data["queries"] if q["name"] != drop]
    path.write_text(yaml.safe_dump(data))
    return str(path)


def test_table1_variables_are_judged_set_default_or_unset():
    from exporter.systems.hpom.checks import evaluate, watched

    variables = watched(["OPC_EXTRA", "OPC_DIRECT_ACKN_LIMIT"])  # a Table 1 name is not watched twice
    assert [v.name for v in variables].count("OPC_DIRECT_ACKN_LIMIT") == 1 and variables[-1].name == "OPC_EXTRA"
    readings = {r.variable.name: r for r in evaluate(variables, {"OPC_DIRECT_ACKN_LIMIT": " 0 ",
                                                                 "OPC_UPDWN_COMMIT_COUNT": "500", "OPC_EXTRA": "on"})}
    ack = readings["OPC_DIRECT_ACKN_LIMIT"]
    assert (ack.origin, ack.number, ack.follows_guide) == ("set", 0, True)
    assert readings["OPC_UPDWN_COMMIT_COUNT"].follows_guide is False
    thread = readings["OPCMSGM_USE_GUI_THREAD"]
    assert (thread.value, thread.origin, thread.number, thread.follows_guide) == ("FALSE", "default", None, False)
    moved = readings["OPC_ACK_MOVE_INTERVAL"]  # no default, no recommendation
    assert (moved.value, moved.origin, moved.follows_guide) == ("", "unset", None)
    extra = readings["OPC_EXTRA"]
    assert (extra.value, extra.origin, extra.follows_guide, extra.variable.guide) == ("on", "set", None, "")


def test_shipped_queries_serve_every_database_guide_row():
    from exporter.systems.hpom.checks import QUERY_CHECKS, require_queries
    from exporter.systems.oracle.querymetrics import load_queries

    require_queries(load_queries(SHIPPED_QUERIES), "queries.yaml")
    rows = {check.split()[0] for check in QUERY_CHECKS}
    assert rows >= {"HPOM-ACK", "HPOM-CMA", "HPOM-ACTIVE", "HPOM-AUTOKEYS", "HPOM-THROUGHPUT", "HPOM-HISTDL"}


@pytest.mark.parametrize("drop,check", [
    ("recent_activity", "HPOM-ACK (alert MiddlewareHpomAcknowledgementBulkTooLarge)"),
    ("custom_message_attributes", "HPOM-CMA"),
    ("active_messages", "HPOM-ACK (alert MiddlewareHpomAcknowledgedBacklog)"),
    ("history_messages", "HPOM-HISTDL"),
])
def test_a_queries_file_that_drops_a_guide_rows_query_is_refused(tmp_path, drop, check):
    settings = {"enabled": True, "database": DATABASE, "queries_file": _queries_file(tmp_path / "q.yaml", drop)}
    with pytest.raises(ValueError, match="no query produces what these guide checks read") as err:
        _collector(settings)
    assert check in str(err.value) and str(tmp_path / "q.yaml") in str(err.value)


def test_a_queries_file_may_add_queries(tmp_path):
    data = yaml.safe_load(SHIPPED_QUERIES.read_text())
    metric = {"name": "middleware_hpom_site_extra", "help": "A site's own.", "value": "one"}
    data["queries"].append({"name": "site_extra", "sql": "SELECT 1 AS one FROM dual", "metrics": [metric]})
    (tmp_path / "q.yaml").write_text(yaml.safe_dump(data))
    collector = _collector({"enabled": True, "database": DATABASE, "queries_file": str(tmp_path / "q.yaml")})
    assert "middleware_hpom_site_extra" in {spec.name for spec in collector.specs()}


def test_check_config_names_the_guide_row_a_queries_file_drops(tmp_path):
    config = tmp_path / "config.yaml"
    _write_config(config, {"enabled": True, "database": DATABASE,
                           "queries_file": _queries_file(tmp_path / "q.yaml", "custom_message_attributes")})
    result = subprocess.run([sys.executable, "-m", "exporter", "check-config", "--config", str(config)],
                            capture_output=True, text=True, timeout=60, cwd=REPO)
    assert result.returncode == 2, result.stderr
    assert "collectors.hpom: cannot start" in result.stderr
    assert "HPOM-CMA (alert MiddlewareHpomCustomAttributesOverLimit)" in result.stderr
    assert "middleware_hpom_cma_max_per_message" in result.stderr


# ---- golden exposition and the real exporter process ------------------------------------------------------
GOLDEN = FIXTURES / "server.prom"
VOLATILE = re.compile(r"^(middleware_hpom_(?:source|query)_duration_seconds\{[^}]*\}) .*$", re.M)


def _write_config(path: Path, settings: dict) -> None:
    path.write_text(yaml.safe_dump({"collectors": {"host": {"enabled": False}, "process": {"enabled": False},
                                                   "filesystem": {"enabled": False},
                                                   "mountstats": {"enabled": False},  # this machine's NFS mounts
                                                   "hpom": settings}}))


def test_golden_exposition(hpom_server, fake_oracledb, tmp_path, capsysbinary):
    from exporter.cli import main

    config = tmp_path / "config.yaml"
    _write_config(config, hpom_server)
    assert main(["collect-once", "--config", str(config), "--no-self-metrics"]) == 0
    text = VOLATILE.sub(r"\1 <duration>", capsysbinary.readouterr().out.decode())
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.write_text(text)
    assert text == GOLDEN.read_text(), "exposition changed; if intended, regenerate with UPDATE_GOLDEN=1"


@pytest.mark.integration
def test_exporter_process_serves_hpom_metrics(hpom_server, start_exporter, tmp_path):
    config = tmp_path / "config.yaml"
    _write_config(config, hpom_server)
    fixture = tmp_path / "db-e2e.yaml"
    shutil.copy(SERVER / "db.yaml", fixture)
    env = {"PYTHONPATH": str(FAKES), "FAKE_ORACLEDB_FIXTURE": str(fixture), "HPOM_DB_PASSWORD": "Sup3r-S3cret-pw"}
    exporter = start_exporter("--config", str(config), env=env)
    status, _, body = exporter.get("/metrics")
    assert status == 200
    text = body.decode()
    assert 'middleware_scrape_collector_success{collector="hpom"} 1.0' in text
    assert 'middleware_hpom_active_messages{severity="major"} 30000.0' in text
    assert 'middleware_hpom_gui_display_queues 3.0' in text
    promtool = require_binary("promtool")
    result = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True, timeout=60)
    assert result.returncode == 0 and not result.stdout.strip(), result.stdout.decode() + result.stderr.decode()
    assert "Sup3r-S3cret-pw" not in exporter.log()
    names = {f.name for f in text_string_to_metric_families(text)}
    assert "middleware_hpom_cma_max_per_message" in names


@pytest.mark.skipif(not os.environ.get("MWE_TEST_HPOM_DSN"),
                    reason="set MWE_TEST_HPOM_DSN, MWE_TEST_HPOM_USER and MWE_TEST_HPOM_PASSWORD to run "
                           "against a real HPOM database (and MWE_TEST_HPOM_QUEUE_DIR on the server itself)")
def test_real_hpom_server():
    settings = {"enabled": True,
                "queue_dir": os.environ.get("MWE_TEST_HPOM_QUEUE_DIR", "/var/opt/OV/share/tmp/OpC/mgmt_sv"),
                "database": {"dsn": os.environ["MWE_TEST_HPOM_DSN"], "user": os.environ["MWE_TEST_HPOM_USER"],
                             "password_env": "MWE_TEST_HPOM_PASSWORD"}}
    samples, batch = _collect(_collector(settings))
    assert batch.errors.get("database") is None, batch.errors
    for query in ("active_messages", "recent_activity", "custom_message_attributes", "history_messages",
                  "forwarded_messages"):
        assert _value(samples, "middleware_hpom_query_success", query=query) == 1, batch.errors


# ---- issue 13: ovconfget errors with exit status 0, configurable names, NULL or blank message keys -------------
def _variable_samples(samples: dict) -> list:
    return [key for key in samples if key[0].startswith("middleware_hpom_server_variable_")]


@pytest.mark.parametrize("body, expected", [
    # an error on stdout, exit status 0: before, every variable became its "default" with success 1
    ("echo 'ERROR:   (conf-42) Resource group server does not exist.'\n",
     "ovconfget printed an error (exit status 0), so no variable can be reported as set or default: "
     "ERROR:   (conf-42) Resource group server does not exist."),
    # values, then an error line: the values cannot be trusted either
    ("echo OPC_DIRECT_ACKN_LIMIT=0; echo 'Cannot read /var/opt/OV/conf/xpl/config/settings.ini'\n",
     "printed an error (exit status 0), so no variable can be reported as set or default: "
     "Cannot read /var/opt/OV/conf/xpl/config/settings.ini"),
    # nothing on stdout, the error on stderr
    ("echo '(xpl-0) Cannot open the configuration' >&2\n",
     "printed an error (exit status 0), so no variable can be reported as set or default: "
     "(xpl-0) Cannot open the configuration"),
    # values on stdout, an error on stderr
    ("echo OPCMSGM_USE_GUI_THREAD=TRUE; echo 'ERROR: (conf-7) partial read' >&2\n",
     "printed an error (exit status 0), so no variable can be reported as set or default: "
     "ERROR: (conf-7) partial read"),
    # nothing at all: set and default cannot be told apart
    ("exit 0\n", "ovconfget printed no NAME=value line (exit status 0), so no variable can be reported"),
    ("echo 'no such namespace' >&2\n", "printed no NAME=value line (exit status 0), so no variable can be "
                                       "reported as set or default: no such namespace"),
])
def test_ovconfget_error_with_exit_status_0_fails_the_source(hpom_server, tmp_path, body, expected):
    del hpom_server["database"]
    hpom_server["ovconfget"] = _script(tmp_path / "bin" / "ovconfget", body)
    samples, batch = _collect(_collector(hpom_server))
    assert _value(samples, "middleware_hpom_source_success", source="ovconfget") == 0
    assert expected in batch.errors["ovconfget"]
    assert _variable_samples(samples) == []
    assert _value(samples, "middleware_hpom_source_success", source="opcsv") == 1  # the others are intact


def test_ovconfget_error_text_hides_secrets_and_is_bounded(hpom_server, tmp_path):
    del hpom_server["database"]
    lines = ["ERROR: bad line DB_PASSWORD=Sup3r-S3cret-pw", "ERROR: token: abc123secret", "x" * 400,
             "fourth", "fifth"]
    hpom_server["ovconfget"] = _script(tmp_path / "bin" / "ovconfget",
                                       "".join(f"echo '{line}'\n" for line in lines))
    _, batch = _collect(_collector(hpom_server))
    error = batch.errors["ovconfget"]
    assert "Sup3r-S3cret-pw" not in error and "abc123secret" not in error
    assert "DB_PASSWORD=***" in error and "token: ***" in error
    assert "x" * 161 not in error and "(+2 more lines)" in error


def test_ovconfget_warning_on_stderr_keeps_the_values(hpom_server, tmp_path):
    del hpom_server["database"]
    hpom_server["ovconfget"] = _script(tmp_path / "bin" / "ovconfget",
                                       "echo OPC_DIRECT_ACKN_LIMIT=0; echo 'WARNING: locale C' >&2\n")
    samples, batch = _collect(_collector(hpom_server))
    assert batch.errors == {}
    assert _value(samples, "middleware_hpom_server_variable_follows_guide", variable="OPC_DIRECT_ACKN_LIMIT") == 1


def test_transitional_expected_stopped_and_ignored_processes(hpom_server, tmp_path):
    del hpom_server["database"]
    status = tmp_path / "ovc.txt"
    status.write_text("ovcd      OV Control               CORE      (1)  Running\n"
                      "ovbbccb   OV Communication Broker  CORE           Starting\n"
                      "opcmsgi   OVO Message Interceptor  AGENT,EA       Stopping\n"
                      "opcmona   OVO Monitor Agent        AGENT,EA       Stopped\n"
                      "perfd     real time server                        Stopped\n"
                      "coda      OV Performance Core      COREXT         Aborted\n")
    hpom_server["ovc"] = _script(tmp_path / "bin" / "ovc", f'cat "{status}"\n')
    hpom_server["ignore_processes"] = ["coda"]
    samples, _ = _collect(_collector(hpom_server))
    up = {dict(labels)["process"]: value for (name, labels), value in samples.items()
          if name == "middleware_hpom_server_process_up" and dict(labels)["source"] == "ovc"}
    assert up == {"ovcd": 1, "ovbbccb": 2, "opcmsgi": 2, "opcmona": 0, "perfd": 3}


def test_process_name_settings_are_checked():
    with pytest.raises(ValueError, match="process names must be non-empty"):
        HpomSettings.model_validate({"expected_stopped": ["perfd", " "]})
    with pytest.raises(ValueError, match="process names must be non-empty"):
        HpomSettings.model_validate({"ignore_processes": [" coda"]})
    assert HpomSettings().expected_stopped == ["ttd", "perfalarm", "perfd"] and HpomSettings().ignore_processes == []


def test_custom_attribute_table_and_column_are_settings(hpom_server, fake_oracledb):
    fixture = yaml.safe_load(fake_oracledb.read_text())
    fixture["queries"][2]["match"] = "site_op.site_cust_attrib"
    fake_oracledb.write_text(yaml.safe_dump(fixture))
    samples, batch = _collect(_collector(hpom_server))  # the default names: the fake has no such table
    assert _value(samples, "middleware_hpom_query_success", query="custom_message_attributes") == 0
    assert "ORA-00942" in batch.errors["database:custom_message_attributes"]
    hpom_server.update(cma_table="site_op.site_cust_attrib", cma_message_column="msg_id")
    collector = _collector(hpom_server)
    sql = {q.name: " ".join(q.sql.split()) for q in collector.queries.queries}
    assert "SELECT msg_id, COUNT(*) AS cmas FROM site_op.site_cust_attrib GROUP BY msg_id" in sql[
        "custom_message_attributes"]
    assert "opc_act_cust_attrib" not in " ".join(sql.values())
    assert "message_number" not in sql["custom_message_attributes"]
    assert "m.message_number = f.message_number" in sql["forwarded_messages"]  # another table's column: kept
    samples, batch = _collect(collector)
    assert batch.errors == {}
    assert _value(samples, "middleware_hpom_cma_max_per_message") == 14


def test_cma_names_touch_only_the_queries_that_read_the_table():
    from exporter.systems.hpom.collector import cma_names
    from exporter.systems.oracle.querymetrics import load_queries

    queries = load_queries(SHIPPED_QUERIES)
    assert cma_names(queries, "opc_op.opc_act_cust_attrib", "message_number") is queries
    renamed = cma_names(queries, "OPC_CUST_ATTRIB", "message_number")
    changed = [q.name for q, r in zip(queries, renamed, strict=True) if q.sql != r.sql]
    assert changed == ["custom_message_attributes"] and "FROM OPC_CUST_ATTRIB" in renamed[2].sql


@pytest.mark.parametrize("key, value", [
    ("cma_table", "opc_op.opc_act_cust_attrib; DROP TABLE x"), ("cma_table", "a.b.c"), ("cma_table", ""),
    ("cma_message_column", "message_number)"), ("cma_message_column", "1col"),
])
def test_custom_attribute_names_must_be_identifiers(key, value):
    with pytest.raises(ValueError, match="must be a"):
        HpomSettings.model_validate({key: value})


def _without_key_counts(blank_key_is_missing: int) -> dict[str, int]:
    """Run the shipped active_messages query, translated to SQLite, on rows with NULL, blank and real keys."""
    import sqlite3

    sqlglot = pytest.importorskip("sqlglot")
    from exporter.systems.oracle.querymetrics import load_queries

    query = next(q for q in load_queries(SHIPPED_QUERIES) if q.name == "active_messages")
    assert query.params == {"blank_key_is_missing": 1}
    sql = sqlglot.transpile(query.sql, read="oracle", write="sqlite")[0]
    db = sqlite3.connect(":memory:")
    db.execute("ATTACH DATABASE ':memory:' AS opc_op")
    db.execute("CREATE TABLE opc_op.opc_act_messages (severity INTEGER, ackn_flag INTEGER, msg_key TEXT)")
    # Oracle stores '' as NULL, so the blank keys a real database can hold are blanks, tabs and line ends.
    rows = [(8, 0, None), (8, 0, "   "), (8, 0, "\t \r\n"), (8, 0, "node:disk:/var"), (8, 0, " key "),
            (8, 1, None), (32, 0, "k"), (2, 0, None)]
    db.executemany("INSERT INTO opc_op.opc_act_messages VALUES (?, ?, ?)", rows)
    result = db.execute(sql, {"blank_key_is_missing": blank_key_is_missing}).fetchall()
    return {severity: without_key for severity, _, _, without_key in result}


def test_without_key_counts_null_and_blank_keys_as_missing():
    assert _without_key_counts(1) == {"critical": 3, "major": 0, "normal": 1}


def test_without_key_counts_only_null_keys_when_configured():
    assert _without_key_counts(0) == {"critical": 1, "major": 0, "normal": 1}


def test_blank_key_is_missing_is_a_query_param(hpom_server, fake_oracledb):
    fixture = yaml.safe_load(fake_oracledb.read_text())
    fixture["queries"][0]["rows"] = [["critical", 10, 0, ":blank_key_is_missing"]]  # echoes the bound value
    fake_oracledb.write_text(yaml.safe_dump(fixture))
    samples, _ = _collect(_collector(hpom_server))
    assert _value(samples, "middleware_hpom_active_messages_without_key", severity="critical") == 1
    hpom_server["query_params"] = {"blank_key_is_missing": 0}
    samples, _ = _collect(_collector(hpom_server))
    assert _value(samples, "middleware_hpom_active_messages_without_key", severity="critical") == 0



# ---- issue 15: MoM forwarding (HPOM-MOM), service trees (HPOM-SLOD), the 8.22 variables -----------------------
def test_forwmgrq_is_one_of_the_queue_files_read(hpom_server):
    """The forward manager's queue (ITO Administrator's Reference, Table 9-1: data waiting to be forwarded to
    other management servers) matches the default queue_pattern: its size and entries are the sync backlog."""
    del hpom_server["database"]
    assert re.search(HpomSettings().queue_pattern, "forwmgrq")
    samples, _ = _collect(_collector(hpom_server))
    assert _value(samples, "middleware_hpom_queue_size_bytes", queue="forwmgrq") == QUEUES["forwmgrq"]
    assert _value(samples, "middleware_hpom_queue_entries", queue="forwmgrq") == QUEUES["forwmgrq"] // 512


def _forwarded_counts(now: int, rows_act: list, rows_hist: list, rows_fwd: list, nodes: list) -> dict:
    """Run the shipped forwarded_messages query, translated to SQLite, on the given rows; `now` replaces the
    current epoch second Oracle computes."""
    import sqlite3

    sqlglot = pytest.importorskip("sqlglot")
    from exporter.systems.oracle.querymetrics import load_queries

    query = next(q for q in load_queries(SHIPPED_QUERIES) if q.name == "forwarded_messages")
    now_sql = "(CAST(SYS_EXTRACT_UTC(SYSTIMESTAMP) AS DATE) - DATE '1970-01-01') * 86400"
    assert query.sql.count(now_sql) == 2
    sql = sqlglot.transpile(query.sql.replace(now_sql, ":now"), read="oracle", write="sqlite")[0]
    db = sqlite3.connect(":memory:")
    db.execute("ATTACH DATABASE ':memory:' AS opc_op")
    db.execute("CREATE TABLE opc_op.opc_act_messages (message_number TEXT, ackn_flag INTEGER, ackn_time INTEGER)")
    db.execute("CREATE TABLE opc_op.opc_hist_messages (message_number TEXT, ackn_time INTEGER)")
    db.execute("CREATE TABLE opc_op.opc_forward_msgs (message_number TEXT, target_manager_id TEXT)")
    db.execute("CREATE TABLE opc_op.opc_node_names (node_id TEXT, node_name TEXT)")
    db.executemany("INSERT INTO opc_op.opc_act_messages VALUES (?, ?, ?)", rows_act)
    db.executemany("INSERT INTO opc_op.opc_hist_messages VALUES (?, ?)", rows_hist)
    db.executemany("INSERT INTO opc_op.opc_forward_msgs VALUES (?, ?)", rows_fwd)
    db.executemany("INSERT INTO opc_op.opc_node_names VALUES (?, ?)", nodes)
    result = db.execute(sql, {"now": now, "window_seconds": 60}).fetchall()
    return {target: (active, acked) for target, active, acked in result}


def test_forwarded_messages_count_active_and_recent_acknowledgements_per_target():
    now = 1_763_000_000
    act = [("m1", 0, None), ("m2", 1, now - 10), ("m3", 1, now - 600), ("m4", 0, None), ("m9", 0, None)]
    hist = [("m5", now - 30), ("m6", now - 3600)]  # acknowledged and moved to history: recent / old
    fwd = [("m1", "id-central"), ("m2", "id-central"), ("m3", "id-central"), ("m5", "id-central"),
           ("m6", "id-central"), ("m4", "id-backup"), ("m2", "id-backup"), ("m7", "id-unknown")]
    nodes = [("id-central", "central.example.com"), ("id-backup", "backup.example.com")]
    counts = _forwarded_counts(now, act, hist, fwd, nodes)
    assert counts == {
        "central.example.com": (1, 2),  # m1 active; m2 (active, marked) and m5 (history) acknowledged in 60 s
        "backup.example.com": (1, 1),   # m4 active; m2 forwarded to both targets counts for each
        "id-unknown": (0, 0),           # a target not in opc_node_names keeps its id; m7 is in neither table
    }
    assert "m9" not in str(counts)  # not forwarded: not counted


@pytest.fixture
def sqltypes():
    """The fake driver's type checker, loaded by path (``oracledb`` stays whatever the test installed)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("fake_sqltypes", REPO / "tests/fakes/oracledb/sqltypes.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_fake_database_knows_the_forwarding_and_node_tables(sqltypes):
    """Their columns are declared (tests/fakes/oracledb/schema.yaml), so a forwarding query that compares the
    epoch-second ackn_time of a forwarded history message with a DATE fails as on a real database."""
    assert sqltypes.schema()["opc_forward_msgs"] == {"message_number": "CHAR", "target_manager_id": "CHAR"}
    assert sqltypes.schema()["opc_node_names"] == {"node_id": "CHAR", "node_name": "CHAR"}
    with pytest.raises(sqltypes.TypeMismatch, match="ORA-00932"):
        sqltypes.check("SELECT COUNT(*) FROM opc_op.opc_forward_msgs f JOIN opc_op.opc_hist_messages h "
                       "ON h.message_number = f.message_number WHERE h.ackn_time >= SYSDATE - 1 / 1440")
    from exporter.systems.oracle.querymetrics import load_queries

    for query in load_queries(SHIPPED_QUERIES):
        sqltypes.check(query.sql, dict(query.params))


def test_service_tree_depth_from_the_site_table(hpom_server, fake_oracledb):
    fixture = yaml.safe_load(fake_oracledb.read_text())
    fixture["queries"][-1]["match"] = "site_op.svc_links"
    fake_oracledb.write_text(yaml.safe_dump(fixture))
    hpom_server.update(service_table="site_op.svc_links", service_parent_column="up_id",
                       service_child_column="down_id")
    collector = _collector(hpom_server)
    sql = " ".join(next(q for q in collector.queries.queries if q.name == "service_tree").sql.split())
    assert "FROM site_op.svc_links WHERE up_id IS NOT NULL AND down_id IS NOT NULL" in sql
    assert "hpom_service_relations" not in sql and "parent_service" not in sql
    samples, batch = _collect(collector)
    assert batch.errors == {}
    assert _value(samples, "middleware_hpom_service_tree_depth") == 7
    assert _value(samples, "middleware_hpom_service_tree_relations") == 3279
    assert _value(samples, "middleware_hpom_query_success", query="service_tree") == 1


def test_a_sites_queries_file_runs_its_own_service_tree_query(hpom_server, fake_oracledb, tmp_path):
    path = tmp_path / "site-queries.yaml"
    path.write_text(SHIPPED_QUERIES.read_text())
    hpom_server["queries_file"] = str(path)
    samples, batch = _collect(_collector(hpom_server))
    assert batch.errors == {}
    assert _value(samples, "middleware_hpom_service_tree_depth") == 7


@pytest.mark.parametrize("answer, error", [
    ({"error": "ORA-00942: table or view does not exist"}, "ORA-00942"),
    ({"sleep": 5}, "timed out after 1s"),
    ({"columns": ["DEPTH", "RELATIONS"], "rows": [["deep", 3]]}, "is not a number"),
    ({"columns": ["LEVELS"], "rows": [[7]]}, "not in the result"),
])
@pytest.mark.integration  # waits out a hang or a timeout
def test_a_failing_hanging_or_garbled_service_tree_query_marks_only_itself(hpom_server, fake_oracledb, answer,
                                                                           error):
    fixture = yaml.safe_load(fake_oracledb.read_text())
    fixture["queries"][-1] = {"match": "site_op.svc_links", **answer}
    fake_oracledb.write_text(yaml.safe_dump(fixture))
    hpom_server.update(service_table="site_op.svc_links")
    hpom_server["database"]["query_timeout"] = "1s"
    collector = _collector(hpom_server)
    collector.queries.queries[-1] = collector.queries.queries[-1].model_copy(update={"timeout": 1.0})
    samples, batch = _collect(collector)
    assert _value(samples, "middleware_hpom_query_success", query="service_tree") == 0
    assert error in batch.errors["database:service_tree"]
    assert ("middleware_hpom_service_tree_depth", ()) not in samples
    assert _value(samples, "middleware_hpom_source_success", source="database") == 1
    assert _value(samples, "middleware_hpom_query_success", query="forwarded_messages") == 1
    assert _value(samples, "middleware_hpom_active_messages", severity="major") == 30000
    assert "Sup3r-S3cret-pw" not in repr(batch.errors)


def _slod(samples: dict) -> float | None:
    return samples.get(("middleware_hpom_service_load_on_demand", ()))


def test_service_load_on_demand_declared_by_the_site(hpom_server):
    del hpom_server["database"]
    assert _slod(_collect(_collector(hpom_server))[0]) is None  # unknown
    for declared, expected in ((True, 1), (False, 0)):
        hpom_server["service_load_on_demand"] = declared
        assert _slod(_collect(_collector(hpom_server))[0]) == expected


@pytest.mark.parametrize("line, declared, expected", [
    ("OPC_SITE_SLOD=TRUE", None, 1),
    ("OPC_SITE_SLOD=yes", False, 1),   # the variable wins over the declaration
    ("OPC_SITE_SLOD=FALSE", True, 0),
    ("OPC_OTHER=1", True, 1),          # the variable unset: the declaration
    ("OPC_OTHER=1", None, None),       # neither: unknown
])
def test_service_load_on_demand_from_a_server_variable(hpom_server, tmp_path, line, declared, expected):
    del hpom_server["database"]
    hpom_server["ovconfget"] = _script(tmp_path / "bin" / "ovconfget",
                                       f"echo OPCMSGM_USE_GUI_THREAD=TRUE\necho {line}\n")
    hpom_server.update(service_load_on_demand_variable="OPC_SITE_SLOD", service_load_on_demand=declared)
    samples, batch = _collect(_collector(hpom_server))
    assert batch.errors == {}
    assert _slod(samples) == expected
    info = {dict(labels)["variable"] for (name, labels), _ in samples.items()
            if name == "middleware_hpom_server_variable_info"}
    assert "OPC_SITE_SLOD" in info  # exposed like the site's other extra variables


@pytest.mark.integration  # waits out hanging commands or a silent listener
def test_service_load_on_demand_is_unknown_while_ovconfget_fails(hpom_server, tmp_path):
    del hpom_server["database"]
    hpom_server["ovconfget"] = _script(tmp_path / "bin" / "ovconfget", "sleep 30\n")
    hpom_server.update(service_load_on_demand_variable="OPC_SITE_SLOD", service_load_on_demand=True)
    samples, batch = _collect(_collector(hpom_server))
    assert "timed out" in batch.errors["ovconfget"]
    assert _slod(samples) is None  # not the declaration: the variable is what the site said to read


@pytest.mark.parametrize("version, values, judged", [
    # the 8.22 variables (footnote 4) are not judged on an older server...
    ("8.21", {"OPCMSGM_USE_GUI_THREAD": "TRUE"}, {"OPCUIWWW_BULK_MODE": None, "OPCUIWWW_NEW_MSG_NO_DB": None}),
    # ...and judged from 8.22 on, or when the version is not known
    ("8.22", {"OPCMSGM_USE_GUI_THREAD": "TRUE"}, {"OPCUIWWW_BULK_MODE": False, "OPCUIWWW_NEW_MSG_NO_DB": False}),
    (None, {"OPCUIWWW_BULK_MODE": "TRUE"}, {"OPCUIWWW_BULK_MODE": True, "OPCUIWWW_NEW_MSG_NO_DB": False}),
    # NEW_MSG_NO_DB=TRUE needs OPCMSGM_USE_GUI_THREAD=NO_RPC
    ("8.30", {"OPCMSGM_USE_GUI_THREAD": "TRUE", "OPCUIWWW_NEW_MSG_NO_DB": "TRUE"},
     {"OPCUIWWW_NEW_MSG_NO_DB": False, "OPCMSGM_USE_GUI_THREAD": True}),
    ("08.30.040", {"OPCMSGM_USE_GUI_THREAD": "no_rpc", "OPCUIWWW_NEW_MSG_NO_DB": "true"},
     {"OPCUIWWW_NEW_MSG_NO_DB": True, "OPCMSGM_USE_GUI_THREAD": True}),
    ("8.30", {"OPCMSGM_USE_GUI_THREAD": "NO_RPC", "OPCUIWWW_NEW_MSG_NO_DB": "FALSE"},
     {"OPCUIWWW_NEW_MSG_NO_DB": False}),
    # the older variables are judged whatever the version
    ("8.10", {}, {"OPCMSGM_USE_GUI_THREAD": False, "OPC_DIRECT_ACKN_LIMIT": False}),
])
def test_the_822_variables_follow_footnote_4(version, values, judged):
    from exporter.systems.hpom.checks import VARIABLES, evaluate

    readings = {r.variable.name: r.follows_guide for r in evaluate(VARIABLES, values, version)}
    for name, expected in judged.items():
        assert readings[name] is expected, (name, readings[name])


def test_server_version_reaches_the_variable_check(hpom_server, tmp_path):
    del hpom_server["database"]
    hpom_server["server_version"] = "8.21"
    samples, _ = _collect(_collector(hpom_server))
    follows = {dict(labels)["variable"] for (name, labels), _ in samples.items()
               if name == "middleware_hpom_server_variable_follows_guide"}
    assert "OPCUIWWW_BULK_MODE" not in follows and "OPCUIWWW_NEW_MSG_NO_DB" not in follows
    assert "OPCMSGM_USE_GUI_THREAD" in follows


@pytest.mark.parametrize("key, value", [
    ("service_table", "svc links"), ("service_table", "a.b.c"), ("service_parent_column", "up-id"),
    ("service_child_column", ""), ("service_load_on_demand_variable", "OPC SLOD"), ("server_version", "8.2x"),
])
def test_service_and_version_settings_are_checked(key, value):
    with pytest.raises(ValueError, match=key):
        HpomSettings.model_validate({key: value})


def test_odd_version_and_setting_texts_are_not_numbers():
    """Fuzzing found `int('²')` raising through version_tuple ("8.²".isdigit() is true) and float() taking "nan",
    "inf" and 1e400 as a setting's value; each is now "not readable" instead."""
    from exporter.systems.hpom.checks import _number, version_tuple

    assert version_tuple("8.²") is None and version_tuple("٨.22") is None
    assert version_tuple("08.30.040") == (8, 30, 40)
    for text in ("nan", "inf", "-inf", "1e400", " NaN "):
        assert _number(text) is None, text
    assert _number(" 5000 ") == 5000.0
