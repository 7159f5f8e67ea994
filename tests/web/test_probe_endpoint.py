"""GET /probe (issue 37, docs/estate.md) on a real exporter reading hosts through a real sshd on loopback.

The hosts are the simulated fleet's (tests/fleet.py, the project's one simulated estate): one sshd, a key and a
forced command per host printing that host's platform's genuine captures (HP-UX, AIX, Solaris, Linux), a hung host
that never answers and a refusing one whose key the sshd does not trust.  The exporter's modules are the shards'
(``shard_config``: one per platform) and name the fleet's ssh configuration as the operator's
(``ssh.config_file``), so the host keys are checked, BatchMode is on, and a connection master per host is kept in
the exporter's private directory."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from ..fleet import COMMANDS, EXPECTED, PLATFORMS, Fleet, Host, inventory, plan, shard_config
from ..support import REPO, naming

pytestmark = pytest.mark.integration

HPUX, LINUX = "hpux000", "linux003"  # two of plan()'s hosts, one of each platform: hpux000 aix001 sol002 linux003
HUNG, REFUSING = "hung01", "refusing01"  # Linux hosts: every command of theirs hangs, or ssh is refused


@pytest.fixture
def fleet(tmp_path):
    """The fleet; tests ask for it before ``start_exporter``, so their exporter (and its connection masters) stops
    first and the fleet finds nothing of its own left."""
    hosts = [*plan(len(PLATFORMS)), Host(HUNG, "linux", "hung"), Host(REFUSING, "linux", "refusing")]
    with Fleet(tmp_path / "fleet", hosts) as running:
        assert running.hosts[HPUX].platform == "hpux" and running.hosts[LINUX].platform == "linux"
        yield running
    assert not running.leftovers()


def _config(fleet: Fleet, tmp_path: Path, names: list[str] | None = None, allow: str = "") -> str:
    """The shards' configuration with an inventory of ``names`` (all the fleet's hosts by default); timeouts
    generous enough for a loaded machine (a handshake under load takes seconds), every probe collecting."""
    targets = tmp_path / "targets.json"
    targets.write_text(json.dumps(inventory(fleet, names)))
    return yaml.safe_dump(shard_config(fleet, targets, timeout=10, freshness=0, allow=allow))


def _samples(body: bytes) -> dict[str, float]:
    return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
            for line in body.decode().splitlines() if line and not line.startswith("#")}


def _figures(body: bytes, name: str, labels: dict[str, str]) -> list[float]:
    """The values of the samples of ``name`` with ``labels`` among theirs (a file system's device and type too)."""
    return [sample.value for family in text_string_to_metric_families(body.decode()) for sample in family.samples
            if sample.name == name and labels.items() <= sample.labels.items()]


def _collectors(platform: str) -> list[str]:
    return ["host", "filesystem"] if "df" in COMMANDS[platform] else ["host"]


def test_each_host_is_read_through_ssh_with_its_own_captures(fleet, start_exporter, tmp_path):
    healthy = fleet.by_behaviour("healthy")
    assert sorted(fleet.hosts[name].platform for name in healthy) == sorted(PLATFORMS)
    exporter = start_exporter(config=_config(fleet, tmp_path, healthy))
    for name in healthy:
        platform = fleet.hosts[name].platform
        status, headers, body = exporter.get(f"/probe?target={name}&module={platform}")
        assert status == 200, body
        assert headers["content-type"].startswith("text/plain; version=0.0.4")
        samples = _samples(body)
        assert samples["middleware_probe_success"] == 1
        for collector in _collectors(platform):
            assert samples[f'middleware_target_up{{collector="{collector}",target="{name}"}}'] == 1
        # the figures a person reads off the platform's captures (tests/fleet.py EXPECTED), each exactly once
        for metric, labels, value in EXPECTED[platform]:
            assert _figures(body, metric, {"target": name, **labels}) == [pytest.approx(value)], (name, metric)
    status, _, body = exporter.get(f"/probe?target={LINUX}")  # the inventory names the module
    assert status == 200 and _samples(body)["middleware_probe_success"] == 1


def test_refused_requests_name_the_problem_and_run_nothing(fleet, start_exporter, tmp_path):
    canary = tmp_path / "PWNED"
    exporter = start_exporter(config=_config(fleet, tmp_path, [LINUX], allow=".*"))
    hostile = [f"-oProxyCommand=touch {canary}", f"{LINUX};touch {canary}", f"$(touch {canary})",
               f"`touch {canary}`", f"{LINUX} touch {canary}", f"{LINUX}\ntouch {canary}", "x" * 300,
               f"{LINUX}|touch {canary}", f"{LINUX}&&touch {canary}"]
    from urllib.parse import quote

    for target in hostile:
        status, _, body = exporter.get(f"/probe?target={quote(target, safe='')}&module=linux")
        assert status == 400 and b"refused" in body, (target, body)
    assert exporter.get(f"/probe?target={LINUX}&module=nosuch")[0] == 404
    assert exporter.get("/probe?module=linux")[0] == 400
    assert exporter.get(f"/probe?target={LINUX}&target={HPUX}&module=linux")[0] == 400
    assert not canary.exists()
    _, _, metrics = exporter.get("/metrics")
    assert _samples(metrics)['middleware_probe_requests_total{code="400",module="linux"}'] == len(hostile) + 2
    assert "middleware_probe_collections_total" not in metrics.decode().split("# TYPE middleware_probe_collections"
                                                                             "_total counter\n", 1)[-1][:40]


def test_an_unlisted_target_is_refused_without_an_allow_pattern(fleet, start_exporter, tmp_path):
    exporter = start_exporter(config=_config(fleet, tmp_path, [HPUX]))
    status, _, body = exporter.get(f"/probe?target={LINUX}&module=linux")  # a host of the fleet, not listed
    assert status == 403 and LINUX.encode() in body


def test_a_hung_or_refusing_host_is_reported_and_backs_off_while_others_are_read(fleet, start_exporter, tmp_path):
    exporter = start_exporter(config=_config(fleet, tmp_path))
    status, _, body = exporter.get(f"/probe?target={REFUSING}&module=linux")
    samples = _samples(body)
    assert status == 200 and samples["middleware_probe_success"] == 0
    assert samples[f'middleware_target_up{{collector="host",target="{REFUSING}"}}'] == 0
    assert samples["middleware_probe_backoff_seconds"] > 0
    # answered at the deadline Prometheus gives (its scrape timeout less half a second), the collection going on
    status, _, body = exporter.get(f"/probe?target={HUNG}&module=linux",
                                   headers={"X-Prometheus-Scrape-Timeout-Seconds": "2"})
    assert status == 200 and _samples(body)["middleware_probe_success"] == 0
    status, _, body = exporter.get(f"/probe?target={LINUX}&module=linux")  # not held up by the hung host
    assert _samples(body)["middleware_probe_success"] == 1
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # the hung collection ends at the collector's timeout: down, backing off
        samples = _samples(exporter.get(f"/probe?target={HUNG}&module=linux",
                                        headers={"X-Prometheus-Scrape-Timeout-Seconds": "2"})[2])
        if samples.get(f'middleware_target_up{{collector="host",target="{HUNG}"}}') == 0:
            break
        time.sleep(0.2)
    assert samples[f'middleware_target_up{{collector="host",target="{HUNG}"}}'] == 0
    assert samples["middleware_probe_backoff_seconds"] > 0
    probes = {item["target"]: item for item in json.loads(exporter.get("/api/v1/probes")[2])}
    error = probes[HUNG]["collectors"][0]["targets"][0]["last_error"]
    # every command of the hung host timed out ("sar: timed out after 7.2s; iostat: ...")
    assert all(f"{tool}: " in error for tool in COMMANDS["linux"]), error
    assert error.count("timed out") + error.count("killed at the deadline") == len(COMMANDS["linux"]), error
    assert "Permission denied" in probes[REFUSING]["collectors"][0]["targets"][0]["last_error"]
    page = exporter.get("/")[2].decode()  # the status page says the same
    estate = page.split("<h2>Estate</h2>", 1)[1].split("<h2>", 1)[0]
    assert "3 targets probed recently, 2 failing, 2 backing off" in estate
    assert REFUSING in estate and "Permission denied" in estate and HUNG in estate
    assert LINUX not in estate and f"{len(fleet.hosts)} targets in {len(PLATFORMS)} groups" in estate


def test_connection_masters_are_reused_and_nothing_is_left_at_exit(fleet, start_exporter, tmp_path):
    healthy = fleet.by_behaviour("healthy")
    # this exporter's control directory under a TMPDIR of its own (short: a socket's path is at most 107 bytes),
    # so that another exporter's masters on the machine are not counted
    parent = Path(tempfile.mkdtemp(prefix="mwx-t", dir="/tmp"))

    def with_control_dir(pid: int) -> list[str]:
        """Command lines naming this exporter's ssh control directory, the exporter's own aside."""
        return [line.split(": ", 1)[1] for line in naming(f"{parent}/mwx-ssh-") if not line.startswith(f"{pid}: ")]

    exporter = start_exporter(config=_config(fleet, tmp_path, healthy), env={"TMPDIR": str(parent)})
    for _ in range(3):
        for name in healthy:
            body = exporter.get(f"/probe?target={name}&module={fleet.hosts[name].platform}")[2]
            assert _samples(body)["middleware_probe_success"] == 1
    masters = [line for line in with_control_dir(exporter.proc.pid) if "[mux]" in line]
    # one master per host, shared by its later commands and by its host and filesystem collectors
    assert len(masters) == len(healthy), masters
    directory = masters[0].split("ssh: ", 1)[1].rsplit("/", 1)[0]
    assert (os.stat(directory).st_mode & 0o777) == 0o700
    exporter.proc.send_signal(signal.SIGTERM)
    exporter.proc.wait(15)
    deadline = time.monotonic() + 5
    while with_control_dir(exporter.proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert with_control_dir(exporter.proc.pid) == []
    assert not os.path.exists(directory) and directory.startswith(f"{parent}/")
    parent.rmdir()


def test_a_module_that_cannot_read_a_target_is_a_configuration_error(tmp_path):
    cases = {
        "collectors: {process: {}}": "not a collector that reads a target",
        "collectors: {host: {backend: procfs}}": "text back-end only",
        "ssh: {options: ['ProxyCommand=nc %h %p']}\n    collectors: {host: {}}": "ProxyCommand",
        "ssh: {}\n    collectors: {host: {text: {command_prefix: [ssh, h]}}}": "not both",
        "collectors: {oracle: {nosuch: 1}}": "modules.unix.collectors.oracle",
    }
    for module, words in cases.items():
        path = tmp_path / "config.yml"
        path.write_text(f"modules:\n  unix:\n    {module}\n")
        result = subprocess.run([sys.executable, "-m", "exporter", "check-config", "--config",
                                 str(path)], cwd=REPO, capture_output=True, text=True, timeout=60,
                                env={**os.environ, "PYTHONPATH": str(REPO)})
        assert result.returncode == 2, (module, result.stderr)
        assert words in result.stderr, (module, result.stderr)
