"""Honest status: failures logged once per cause, collect-once's exit status, /readyz while nothing is read, and
configuration files that are not UTF-8 or repeat a key."""

from __future__ import annotations

import json
import logging
import socket
import subprocess
import sys
import time

import pytest
import yaml
from fastapi.testclient import TestClient

from exporter.cli import main
from exporter.core.collector import Collector, Context
from exporter.core.config import ConfigError
from exporter.core.metrics import MetricBatch, MetricSpec
from exporter.core.scheduler import Scheduler, cause_key
from exporter.core.settings import CollectorSettings
from exporter.registry import load as load_config
from exporter.web.server import create_app

from ..support import REPO

# ---- the cause of a failure ----------------------------------------------------------------------------------


def test_cause_key_ignores_what_varies_between_attempts():
    first = ("cannot connect (DPY-6005: cannot connect to database (CONNECTION_ID=UbMkgC9yE0kQu1Osgl9tuw==).); "
             "next attempt in 15s")
    later = ("cannot connect (DPY-6005: cannot connect to database (CONNECTION_ID=V/tR2tre+JaOR7H2/aV3Yw==).); "
             "next attempt in 60s (42s left)")
    assert cause_key(first) == cause_key(later)
    assert cause_key("queue manager QM1 via https://10.0.0.7:9443: timed out after 10 s (GET /x)") == \
        cause_key("queue manager QM1 via https://10.0.0.7:9443: timed out after 9.5 s (GET /x)")
    assert cause_key("previous run still running after 31.2s (hung)") == \
        cause_key("previous run still running after 121.9s (hung)")
    assert cause_key("session 0x7f3a2b1c dropped, request id 3fa85f64-5717-4562-b3fc-2c963f66afa6") == \
        cause_key("session 0x0000beef dropped, request id 0b7e1a6c-1111-4562-b3fc-2c963f66afa6")


def test_cause_key_keeps_error_codes_apart():
    refused = "cannot connect (DPY-6005: cannot connect to database). [Errno 111] Connection refused"
    rejected = "login rejected (ORA-01017: invalid username/password; logon denied); next attempt in 300s"
    assert cause_key(refused) != cause_key(rejected)
    assert cause_key("ORA-12541: TNS:no listener") != cause_key("ORA-12514: TNS:listener does not know of service")
    assert cause_key("authentication failed (HTTP 401)") != cause_key("authentication failed (HTTP 403)")
    assert cause_key("[Errno 111] Connection refused") != cause_key("[Errno 113] Connection refused")
    assert cause_key("dspmq exited 72") != cause_key("dspmq exited 71")


# ---- logged once per cause ------------------------------------------------------------------------------------


def _closed_port() -> int:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


def _real_oracledb(monkeypatch) -> None:
    """python-oracledb itself (imported here, in the main thread), not the stand-in a test may have left."""
    if getattr(sys.modules.get("oracledb"), "__version__", "") == "0.0-fake":
        monkeypatch.delitem(sys.modules, "oracledb")
    assert pytest.importorskip("oracledb").__version__ != "0.0-fake"


def _warnings(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno >= logging.WARNING and r.name.startswith("middleware_exporter")]


def test_unreachable_database_over_ten_runs_logs_one_line(caplog, monkeypatch):
    """python-oracledb (thin) against a closed port: a new CONNECTION_ID and a longer back-off on every attempt, a
    countdown in between; all of it is one cause."""
    _real_oracledb(monkeypatch)
    from exporter.systems.oracle.collector import OracleCollector
    from exporter.systems.oracle.settings import OracleCollectorSettings

    settings = OracleCollectorSettings.model_validate({"enabled": True, "interval": 60, "timeout": 20, "databases": [
        {"name": "db1", "dsn": f"127.0.0.1:{_closed_port()}/orcl", "user": "monitor", "password": "not-used-pw",
         "connect_timeout": 2}]})
    collector = OracleCollector(settings, Context())
    scheduler = Scheduler([collector])
    caplog.set_level(logging.DEBUG)
    errors = []
    for run in range(10):
        if run % 2 == 0:
            collector.databases[0].client.retry_at = 0.0  # the back-off has run out: connect again
        scheduler.run_collector("oracle")
        errors.append(scheduler.states["oracle"].source_errors["db1"])
    assert len({e for e in errors}) > 2, "the error texts did not vary; the test proves nothing"
    assert "DPY-6005" in errors[0]
    lines = _warnings(caplog)
    assert len(lines) == 1, [r.getMessage() for r in lines]
    assert "target down" in lines[0].getMessage() and "target=db1" in lines[0].getMessage()
    assert scheduler.status()[0]["source_errors"]["db1"] == errors[-1]  # the API still has the latest text
    assert scheduler.status()[0]["targets"][0]["last_error"] == errors[-1]
    collector.close()


class _Flaky(Collector):
    """Notes a source error (or raises) with whatever text the test sets; ``ok`` samples 1 on its _success."""

    name = "flaky"
    description = "test collector"

    def __init__(self) -> None:
        super().__init__(CollectorSettings(interval=60, timeout=5), Context())
        self.source_error: str | None = None
        self.raise_error: str | None = None

    def specs(self):
        return [MetricSpec("test_flaky_source_success", "gauge", "1 if read.", ("source",))]

    def collect(self, batch: MetricBatch) -> None:
        if self.raise_error:
            raise RuntimeError(self.raise_error)
        batch.add("test_flaky_source_success", 0 if self.source_error else 1, source="db")
        if self.source_error:
            batch.note_error("db", self.source_error)


def test_logged_again_when_the_cause_changes_and_on_recovery(caplog):
    flaky = _Flaky()
    scheduler = Scheduler([flaky])
    caplog.set_level(logging.INFO)

    def run(source_error=None, raise_error=None) -> list[str]:
        caplog.clear()
        flaky.source_error, flaky.raise_error = source_error, raise_error
        scheduler.run_collector("flaky")
        return [r.getMessage() for r in caplog.records if r.name.startswith("middleware_exporter")]

    assert any("source failed" in m for m in run("connection refused (id=a1b2c3d4e5f6a7b8, port 40001)"))
    for port in range(40002, 40010):
        assert run(f"connection refused (id={port:x}ffee{port}, port {port})") == []
    changed = run("login rejected (ORA-01017)")
    assert len(changed) == 1 and "ORA-01017" in changed[0]
    recovered = run()
    assert len(recovered) == 1 and "source recovered" in recovered[0]
    assert run() == []
    # the whole collection failing: once per cause too, then recovery
    assert len(run(raise_error="timed out after 5s")) == 1
    assert run(raise_error="timed out after 7s") == []
    assert len(run(raise_error="no such file /x")) == 1
    assert any("collection recovered" in m for m in run())


# ---- /readyz ----------------------------------------------------------------------------------------------------


class _Good(Collector):
    name = "good"
    description = "test collector"

    def __init__(self) -> None:
        super().__init__(CollectorSettings(interval=60, timeout=5), Context())

    def specs(self):
        return [MetricSpec("test_good_value", "gauge", "A value.", ())]

    def collect(self, batch):
        batch.add("test_good_value", 1)


class _Watching(_Flaky):
    """A collector with one target, ``db``, down while ``source_error`` is set."""

    def targets(self):
        return ["db"]

    def collect(self, batch: MetricBatch) -> None:
        super().collect(batch)
        batch.report_target("db", self.source_error is None, self.source_error)


def test_readyz_is_not_ready_while_every_run_fails_and_ready_while_a_target_is_down():
    flaky = _Watching()
    flaky.raise_error = "exploded"
    scheduler = Scheduler([flaky])
    client = TestClient(create_app(scheduler))
    assert client.get("/readyz").json()["status"] == "starting"
    scheduler.run_collector("flaky")
    response = client.get("/readyz")
    assert response.status_code == 503  # the exporter itself is broken
    assert response.json() == {"status": "failing", "pending_collectors": [], "failing_collectors": ["flaky"],
                               "targets_down": ["flaky/db"]}
    # the run works, its only target is down: the pod stays in its Service to report it (issue 26)
    flaky.raise_error, flaky.source_error = None, "connection refused"
    scheduler.run_collector("flaky")
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "degraded", "pending_collectors": [], "failing_collectors": ["flaky"],
                               "targets_down": ["flaky/db"]}
    flaky.source_error = None
    scheduler.run_collector("flaky")
    assert client.get("/readyz").json() == {"status": "ready", "pending_collectors": [], "failing_collectors": [],
                                            "targets_down": []}


def test_readyz_is_ready_while_one_collector_reads():
    flaky, good = _Flaky(), _Good()
    flaky.raise_error = "exploded"
    scheduler = Scheduler([flaky, good])
    scheduler.run_once()
    response = TestClient(create_app(scheduler)).get("/readyz")
    assert response.status_code == 200
    assert response.json()["status"] == "degraded"
    assert response.json()["failing_collectors"] == ["flaky"]


@pytest.mark.integration
def test_exporter_whose_only_database_is_down_stays_ready(start_exporter):
    config = yaml.safe_dump({"collectors": {"host": {"enabled": False}, "process": {"enabled": False},
                                            "oracle": {"enabled": True, "interval": "2s", "timeout": "1500ms",
                                                       "databases": [{"name": "db1", "user": "u",
                                                                      "password": "unused-pw",
                                                                      "dsn": f"127.0.0.1:{_closed_port()}/x"}]}}})
    exporter = start_exporter(config=config, wait_ready=False)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        status, _, body = exporter.get("/readyz")
        if json.loads(body)["status"] != "starting":
            break
        time.sleep(0.2)
    # ready (200), "degraded": Kubernetes keeps the pod in its Service, so the outage is still reported (issue 26)
    assert status == 200, body
    assert json.loads(body) == {"status": "degraded", "pending_collectors": [], "failing_collectors": ["oracle"],
                                "targets_down": ["oracle/db1"]}
    assert exporter.get("/healthz")[0] == 200
    assert exporter.get("/metrics")[0] == 200


# ---- collect-once ------------------------------------------------------------------------------------------------


def _collect_once(tmp_path, capsysbinary, config: dict, *flags: str) -> tuple[int, str]:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    code = main(["collect-once", "--config", str(path), "--no-self-metrics", *flags])
    return code, capsysbinary.readouterr().err.decode()


def test_collect_once_fails_when_a_configured_target_fails(tmp_path, capsysbinary, monkeypatch):
    _real_oracledb(monkeypatch)
    config = {"collectors": {"host": {"enabled": False}, "process": {"enabled": False},
                             "oracle": {"enabled": True, "databases": [
                                 {"name": "db1", "dsn": f"127.0.0.1:{_closed_port()}/orcl", "user": "u",
                                  "password": "unused-pw", "connect_timeout": 2}]}}}
    code, err = _collect_once(tmp_path, capsysbinary, config)
    assert code == 1
    assert "collector oracle: db1" in err and "DPY-6005" in err


def test_collect_once_exit_status_and_strict(tmp_path, capsysbinary):
    # HPOM enabled on a host without HPOM: every source absent, nothing failed
    # (the file-system collectors read this machine's mounts: left out so that no mount of it decides the status)
    config = {"collectors": {"host": {"enabled": False}, "process": {"enabled": False}, "hpom": {"enabled": True},
                             "filesystem": {"enabled": False}, "mountstats": {"enabled": False}}}
    code, err = _collect_once(tmp_path, capsysbinary, config)
    assert code == 0, err
    code, err = _collect_once(tmp_path, capsysbinary, config, "--strict")
    assert code == 1
    assert "collector hpom: source opcsv is not present here" in err
    # a failing collector: 1 with or without --strict
    broken = tmp_path / "proc"
    broken.mkdir()
    code, err = _collect_once(tmp_path, capsysbinary, {"collectors": {"process": {"enabled": False}}},
                              "--path.procfs", str(broken))
    assert code == 1 and "collector host failed" in err


def test_collect_once_help_documents_the_exit_status():
    result = subprocess.run([sys.executable, "-m", "exporter", "collect-once", "--help"], cwd=REPO,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0
    assert "exit status:" in result.stdout and "--strict" in result.stdout
    assert "configured target" in result.stdout


# ---- configuration files that are not UTF-8 or repeat a key ------------------------------------------------------


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "exporter", *args], cwd=REPO, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=60, env={"PATH": "/usr/bin:/bin", **(env or {})})


def test_config_file_not_utf8_fails_with_exit_2_naming_file_and_key(tmp_path):
    path = tmp_path / "latin1.yaml"
    path.write_bytes("collectors:\n  host:\n    interval: 5 # température\n".encode("latin-1"))
    result = _cli("check-config", "--config", str(path))
    assert result.returncode == 2, result.stderr
    assert str(path) in result.stderr and "not UTF-8" in result.stderr
    assert "line 3" in result.stderr and "key interval" in result.stderr
    assert "Traceback" not in result.stderr


def test_config_file_with_a_repeated_key_fails_with_exit_2(tmp_path):
    path = tmp_path / "dup.yaml"
    path.write_text("collectors:\n  host:\n    enabled: true\n    interval: 30\n    enabled: false\n")
    result = _cli("check-config", "--config", str(path))
    assert result.returncode == 2
    assert str(path) in result.stderr and "'enabled' is given twice (line 3 and line 5)" in result.stderr
    with pytest.raises(ConfigError, match="environment variable MIDDLEWARE_EXPORTER_COLLECTORS__PROCESS__GROUPS"):
        load_config(None, environ={"MIDDLEWARE_EXPORTER_COLLECTORS__PROCESS__GROUPS": "[{name: a, name: b}]"})


def test_merge_keys_and_byte_order_mark_are_still_accepted(tmp_path):
    path = tmp_path / "merge.yaml"
    path.write_bytes(b"\xef\xbb\xbfcollectors:\n  host: &c {interval: 30, timeout: 5}\n"
                     b"  process:\n    <<: *c\n    interval: 20\n")
    config = load_config(path, environ={})
    assert config.collectors.host.interval == 30 and config.collectors.process.interval == 20
    assert config.collectors.process.timeout == 5
