"""Issue 25, defect 5: HPOM's control daemons hang and opcsv, ovc and ovconfget hang with them.  The sources are
read at once, each under its own deadline inside the collector's timeout (core/sources.py), so the run is
published: the queue sizes and every source that answered keep their figures, each hung source reports success 0
and its own error, its commands are killed, and a source still stuck is not started again.

The stand-ins are the fixture HPOM server of test_hpom.py (a real queue directory, scripts for the commands, the
fake oracledb driver); the hung commands are scripts that note their pid and sleep."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import threading
import time
from html import escape
from pathlib import Path

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from exporter.core.collector import Context
from exporter.core.scheduler import Scheduler
from exporter.machine.deadline import BoundedCall, Overdue
from exporter.systems.hpom.collector import HpomCollector
from exporter.systems.hpom.settings import HpomSettings

from ...support import collect, running_under, shell_script
from . import test_hpom
from .test_hpom import FAKES, MTIME, QUEUES, SERVER

# test_hpom's fixtures: the fixture HPOM server (its settings dict) and the fake oracledb driver
hpom_server = test_hpom.hpom_server
fake_oracledb = test_hpom.fake_oracledb

HUNG = ("opcsv", "ovc", "ovconfget")


@pytest.fixture(autouse=True)
def _kill_leftovers(tmp_path):
    """A failing test (the defect back) must not leave its stand-ins sleeping for ten minutes."""
    yield
    for line in running_under(tmp_path / "hung"):
        with contextlib.suppress(OSError):
            os.killpg(int(line.split(":", 1)[0]), signal.SIGKILL)


def _hang(settings: dict, tmp_path: Path, names=HUNG) -> Path:
    """Replace the named commands by scripts that note their pid in starts-<name> and sleep (a child in their
    process group, as a real command waiting on a hung daemon would); returns the stand-ins' folder."""
    bindir = tmp_path / "hung"
    bindir.mkdir(exist_ok=True)
    for name in names:
        script = shell_script(bindir / name, f'echo $$ >> "{tmp_path}/starts-{name}"\nsleep 600\necho late\n')
        if name == "qcount":
            settings["queue_count_command"] = [script, "{path}", "{queue}"]
            settings["queue_count_pattern"] = r"(?P<count>\d+)"
        else:
            settings[name] = script
    return bindir


def _starts(tmp_path: Path, name: str) -> list[int]:
    path = tmp_path / f"starts-{name}"
    return [int(line) for line in path.read_text().split()] if path.exists() else []



def _no_leftovers(bindir: Path) -> None:
    # the commands are killed and reaped before the run returns; the wait only absorbs a slow /proc on a busy
    # machine (a leftover sleeps 600 s)
    for _ in range(50):
        if not running_under(bindir):
            return
        time.sleep(0.1)
    raise AssertionError(f"stand-ins still running: {running_under(bindir)}")


def _samples(families) -> dict:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value for f in families for s in f.samples}


def _v(samples: dict, name: str, **labels: str) -> float:
    return samples[(f"middleware_hpom_{name}", tuple(sorted(labels.items())))]


def _assert_answering_sources_kept(samples: dict) -> None:
    for name, size in QUEUES.items():
        assert _v(samples, "queue_size_bytes", queue=name) == size
        assert _v(samples, "queue_modified_timestamp_seconds", queue=name) == MTIME
    assert _v(samples, "gui_display_queues") == 3
    assert _v(samples, "source_success", source="queues") == 1
    assert _v(samples, "source_success", source="database") == 1
    assert _v(samples, "database_up") == 1
    assert _v(samples, "active_messages", severity="major") == 30000


@pytest.mark.integration  # waits out hanging commands
def test_commands_hanging_together_keep_the_queues_and_the_database(hpom_server, fake_oracledb, tmp_path):
    """Through the scheduler, as the exporter runs it: three commands that each take the whole command_timeout
    overran the collector's timeout one after another, and the whole batch was discarded (queue sizes too)."""
    bindir = _hang(hpom_server, tmp_path, HUNG + ("qcount",))
    hpom_server.update(command_timeout="2s", timeout="6s")  # sequential: 10 queue counts x 2 s alone overran it
    scheduler = Scheduler([HpomCollector(HpomSettings.model_validate(hpom_server), Context())])
    state = scheduler.states["hpom"]
    for run in (1, 2):
        scheduler.run_collector("hpom")
        assert state.success, state.last_error
        samples = _samples(state.families)
        _assert_answering_sources_kept(samples)
        for name in HUNG:
            assert _v(samples, "source_success", source=name) == 0
            assert state.source_errors[name] == f"{name}: timed out after 2s"
        # a queue count command per queue file, each hung: that source runs out of its own deadline, the queue
        # sizes beside it do not wait for it
        assert _v(samples, "source_success", source="queue_count") == 0
        assert "queue_count" in state.source_errors
        assert not any(name == "middleware_hpom_queue_entries" for name, _ in samples)
        # every hung command was killed with its child, and the next run started exactly one new copy of each
        _no_leftovers(bindir)
        for name in HUNG:
            assert len(_starts(tmp_path, name)) == run


@pytest.mark.integration  # waits out hanging commands
def test_a_source_stuck_outside_a_command_is_not_started_again(hpom_server, fake_oracledb, monkeypatch):
    """A queue directory that hangs (a dead NFS server): the queues source times out on its own, the others keep
    their figures, and while the listing is still stuck the next run does not start another one."""
    del hpom_server["queue_count_command"]
    hpom_server.update(command_timeout="1s", timeout="4s")
    release, listings = threading.Event(), []
    real_scandir, queue_dir = os.scandir, hpom_server["queue_dir"]

    def scandir(path=".", *args):
        if os.fspath(path) == queue_dir:
            listings.append(path)
            release.wait(60)
        return real_scandir(path, *args)

    monkeypatch.setattr(os, "scandir", scandir)
    scheduler = Scheduler([HpomCollector(HpomSettings.model_validate(hpom_server), Context())])
    state = scheduler.states["hpom"]
    try:
        scheduler.run_collector("hpom")
        assert state.success, state.last_error
        samples = _samples(state.families)
        assert _v(samples, "source_success", source="queues") == 0
        assert state.source_errors["queues"] == "timed out after 3.2s"  # the collector's 4 s less its margin
        for name in ("opcsv", "ovc", "ovconfget", "database"):
            assert _v(samples, "source_success", source=name) == 1, state.source_errors
        scheduler.run_collector("hpom")
        assert state.success, state.last_error
        assert state.source_errors["queues"].startswith("previous run still running after ")
        assert state.source_errors["queues"].endswith("(hung); not started again")
        assert len(listings) == 1
    finally:
        release.set()


@pytest.mark.integration  # waits out hanging commands
def test_the_sources_commands_never_outlive_the_callers_deadline(hpom_server, tmp_path):
    """The sources run in threads of their own, tied to the bounded call the collection runs in: with less time
    left there than command_timeout, the hung commands are killed at the caller's deadline instead of running on
    unowned for command_timeout."""
    bindir = _hang(hpom_server, tmp_path)
    hpom_server.update(command_timeout="20s", timeout="25s", database=None, queue_count_command=None)
    collector = HpomCollector(HpomSettings.model_validate(hpom_server), Context())
    try:
        samples, _ = BoundedCall("caller")(lambda: collect(collector), 1.5)
    except Overdue:
        pass  # the sources end at the caller's deadline: the caller may give up just before collect() returns
    else:
        assert all(_v(samples, "source_success", source=name) == 0 for name in HUNG)
    _no_leftovers(bindir)
    assert all(len(_starts(tmp_path, name)) <= 1 for name in HUNG)


@pytest.mark.integration
def test_exporter_publishes_what_answered_while_the_commands_hang(hpom_server, start_exporter, tmp_path):
    """A real exporter process over HTTP: /metrics, /api/v1/collectors and the log agree."""
    bindir = _hang(hpom_server, tmp_path)
    hpom_server.update(command_timeout="3s", timeout="7s", interval="10m")  # sequential: 3 + 3 + 1 (cut) s
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"collectors": {"host": {"enabled": False}, "process": {"enabled": False},
                                                     "hpom": hpom_server}}))
    fixture = tmp_path / "db-e2e.yaml"
    shutil.copy(SERVER / "db.yaml", fixture)
    env = {"PYTHONPATH": str(FAKES), "FAKE_ORACLEDB_FIXTURE": str(fixture), "HPOM_DB_PASSWORD": "Sup3r-S3cret-pw"}
    exporter = start_exporter("--config", str(config), env=env, wait_ready=False)
    give_up = time.monotonic() + 60
    while True:
        status, _, body = exporter.get("/api/v1/collectors")
        hpom = next(c for c in yaml.safe_load(body) if c["name"] == "hpom")
        if hpom["runs"] and hpom["last_success"] is not None:
            break
        assert time.monotonic() < give_up, hpom
        time.sleep(0.2)
    # the run is published with what answered, and degraded (issue 38): its success is 0 and it says which
    # sources failed and why
    assert hpom["samples_served"] is True and hpom["state"] == "degraded", hpom
    assert hpom["last_success"] is False and hpom["runs"] == 1 and hpom["failures"] == 1
    assert hpom["last_error"] == "3 sources failed: " + "; ".join(f"{name}: timed out after 3s" for name in HUNG)
    errors = hpom["source_errors"]
    assert {name: errors.get(name) for name in HUNG} == {name: f"{name}: timed out after 3s" for name in HUNG}
    assert set(errors) == set(HUNG)

    status, _, body = exporter.get("/metrics")
    assert status == 200
    families = list(text_string_to_metric_families(body.decode()))
    samples = _samples(families)
    assert samples[("middleware_scrape_collector_success", (("collector", "hpom"),))] == 0
    _assert_answering_sources_kept(samples)
    assert _v(samples, "source_success", source="queue_count") == 1
    assert _v(samples, "queue_entries", queue="msgmgrq") == QUEUES["msgmgrq"] // 512
    for name in HUNG:
        assert _v(samples, "source_success", source=name) == 0
        assert len(_starts(tmp_path, name)) == 1
    assert not any(name == "middleware_hpom_server_process_up" for name, _ in samples)
    assert exporter.get("/readyz")[0] == 200
    _no_leftovers(bindir)
    log = exporter.log()
    for name in HUNG:
        assert f"sources={name} " in log and f"{name}: timed out after 3s" in log, log
    assert "collection failed" not in log and "msg='source failed; collector degraded'" in log, log


@pytest.mark.integration
def test_failing_sources_make_the_run_degraded_everywhere(hpom_server, start_exporter, tmp_path):
    """Issue 38, item 5: opcsv hung, ovc printing garbage and ovconfget failing read as collector state "ok",
    success 1 and no last error, the failures only under source_errors.  Now the metric, the API, the status page,
    /readyz and the log agree that the run is degraded, and name each failed source with its error; the per-source
    series stay as they were and the figures that were read are served."""
    _hang(hpom_server, tmp_path, ("opcsv",))
    bindir = tmp_path / "bin"
    hpom_server["ovc"] = shell_script(bindir / "ovc-garbage", "head -c 300 /dev/urandom\n")
    hpom_server["ovconfget"] = shell_script(bindir / "ovconfget-failing",
                                            'echo "ovconfget: cannot open the configuration: Permission denied" >&2\n'
                                            "exit 3\n")
    hpom_server.update(command_timeout="2s", timeout="6s", interval="10m")
    fixture = tmp_path / "db-e2e.yaml"
    shutil.copy(SERVER / "db.yaml", fixture)
    env = {"PYTHONPATH": str(FAKES), "FAKE_ORACLEDB_FIXTURE": str(fixture), "HPOM_DB_PASSWORD": "Sup3r-S3cret-pw"}
    config = yaml.safe_dump({"collectors": {"host": {"enabled": False}, "process": {"enabled": False},
                                            "hpom": hpom_server}})
    exporter = start_exporter(config=config, env=env)  # ready: the first run has finished
    hpom = next(c for c in yaml.safe_load(exporter.get("/api/v1/collectors")[2]) if c["name"] == "hpom")
    failed = ("opcsv", "ovc", "ovconfget")
    errors = hpom["source_errors"]
    assert set(errors) == set(failed), errors
    assert errors["opcsv"] == "opcsv: timed out after 2s"
    assert "ovconfget" in errors["ovconfget"] and "exit status 3" in errors["ovconfget"]
    # the API: degraded, success false, the samples served, the last error naming every failed source and why
    assert hpom["state"] == "degraded" and hpom["last_success"] is False and hpom["samples_served"] is True, hpom
    assert hpom["last_error"].startswith("3 sources failed: "), hpom["last_error"]
    for name in failed:
        assert errors[name].removeprefix(f"{name}: ") in hpom["last_error"]
        assert f"{name}: " in hpom["last_error"]
    [target] = hpom["targets"]
    assert target["state"] == "up"  # the server answered (queues, database): the target stays up
    assert {s["name"] for s in target["sources"] if not s["success"]} == set(failed)

    # the metric: success 0, the per-source series as before, the figures that were read served
    samples = _samples(text_string_to_metric_families(exporter.get("/metrics")[2].decode()))
    assert samples[("middleware_scrape_collector_success", (("collector", "hpom"),))] == 0
    assert samples[("middleware_scrape_collector_failures_total", (("collector", "hpom"),))] == 1
    assert samples[("middleware_target_up", (("collector", "hpom"), ("target", target["name"])))] == 1
    for name in failed:
        assert _v(samples, "source_success", source=name) == 0
    _assert_answering_sources_kept(samples)

    # the status page: the collector's section degraded, with the same last error
    page = exporter.get("/")[2].decode()
    section = page[page.index('id="collector-hpom"') - 40:]
    section = section[:section.index("</section>")]
    assert 'class="collector degraded"' in section and 'class="badge degraded"' in section, section
    assert escape(hpom["last_error"]) in section
    assert "a source failed" in section  # the state's meaning says why it is degraded

    # /readyz: ready, "degraded", the collector listed
    status, _, body = exporter.get("/readyz")
    assert status == 200 and json.loads(body)["status"] == "degraded"
    assert json.loads(body)["failing_collectors"] == ["hpom"]

    # the log: each failed source once, saying the collector is degraded; no "collection failed"
    log = exporter.log()
    lines = [line for line in log.splitlines() if "collector=hpom sources=" in line]
    assert {re.search(r"sources=(\S+)", line).group(1) for line in lines} == set(failed), log
    assert all("collector degraded" in line for line in lines), lines
    assert "collection failed" not in log
