"""GET /probe (issue 37, docs/estate.md) on a real exporter reading hosts through a real sshd on loopback.

The hosts are names in an ssh client configuration that all lead to one sshd (tests/sshd.py); each Host block sets
``FLEET_HOST`` (ssh's SetEnv, accepted by the sshd), and the key's forced command prints that host's genuine
``uptime`` capture, hangs, or refuses.  The exporter's module names that configuration as the operator's
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

from ..sshd import LoopbackSshd
from ..support import REPO, naming, system_fixtures

pytestmark = pytest.mark.integration


def _capture(name: str) -> Path:
    return system_fixtures("host") / "real" / name


# host -> its genuine uptime capture (SOURCE.md beside the captures) and the load averages a person reads there
HOSTS = {"linux01": ("linux_procps_uptime.txt", (0.94, 0.98, 1.65)),
         "gnu02": ("coreutils_uptime.txt", (1.39, 1.15, 1.04)),
         "riscos03": ("riscos_uptime.txt", (1.03, 0.50, 0.00))}
FORCED = r"""#!/bin/sh
# the fleet's forced command: a host's canned output for the one command it knows; nothing it is sent is run
case "$FLEET_HOST" in
  hung*) exec sleep 600;;
  refusing*) echo "Permission denied (publickey)." >&2; exit 255;;
esac
case "$SSH_ORIGINAL_COMMAND" in
  uptime) exec cat "$FLEET_DIR/$FLEET_HOST.uptime";;
  *) echo "not allowed: $SSH_ORIGINAL_COMMAND" >&2; exit 1;;
esac
"""


@pytest.fixture
def fleet(tmp_path):
    work = tmp_path / "fleet"
    sshd = LoopbackSshd(work / "sshd", environment={"FLEET_DIR": str(work)})
    for host, (capture, _) in HOSTS.items():
        (work / f"{host}.uptime").write_bytes(_capture(capture).read_bytes())
    forced = work / "forced.sh"
    forced.write_text(FORCED)
    forced.chmod(0o755)
    key = (work / "sshd" / "client_key.pub").read_text()
    (work / "sshd" / "authorized_keys").write_text(f'command="{forced}",no-pty {key}')
    config = work / "sshd" / "sshd_config"
    config.write_text(config.read_text() + "AcceptEnv FLEET_HOST\nMaxStartups 100\n")
    sshd.start()
    client = work / "ssh_config"
    client.write_text("".join(
        f"Host {host}\n  HostName 127.0.0.1\n  Port {sshd.port}\n  User {sshd.user}\n"
        f"  IdentityFile {work / 'sshd' / 'client_key'}\n  IdentitiesOnly yes\n"
        f"  UserKnownHostsFile {work / 'sshd' / 'known_hosts'}\n  StrictHostKeyChecking yes\n"
        f"  SetEnv FLEET_HOST={host}\n"
        for host in [*HOSTS, "hung01", "refusing01"]))
    yield work, client
    sshd.stop()


def _config(client: Path, inventory: Path, allow: str = "", timeout: float = 10) -> str:
    # timeouts generous enough for a loaded machine: a handshake under load takes seconds
    return f"""
inventory: {{file: {inventory}}}
collectors: {{host: {{enabled: false}}, filesystem: {{enabled: false}}, mountstats: {{enabled: false}},
              process: {{enabled: false}}}}
modules:
  unix:
    ssh: {{config_file: {client}}}
    timeout: {timeout}
    freshness: 0
    allow: '{allow}'
    collectors:
      host: {{text: {{sar: [], vmstat: [], uptime: [uptime]}}}}
"""


def _samples(body: bytes) -> dict[str, float]:
    return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
            for line in body.decode().splitlines() if line and not line.startswith("#")}


def _inventory(tmp_path: Path, targets: list[str]) -> Path:
    path = tmp_path / "targets.json"
    path.write_text(json.dumps([{"targets": targets, "labels": {"__param_module": "unix"}}]))
    return path


def test_each_host_is_read_through_ssh_with_its_own_capture(start_exporter, fleet, tmp_path):
    work, client = fleet
    exporter = start_exporter(config=_config(client, _inventory(tmp_path, list(HOSTS))))
    for host, (_, loads) in HOSTS.items():
        status, headers, body = exporter.get(f"/probe?target={host}&module=unix")
        assert status == 200, body
        assert headers["content-type"].startswith("text/plain; version=0.0.4")
        samples = _samples(body)
        assert samples["middleware_probe_success"] == 1
        assert samples[f'middleware_target_up{{collector="host",target="{host}"}}'] == 1
        got = tuple(samples[f'middleware_host_load{n}{{target="{host}"}}'] for n in (1, 5, 15))
        assert got == loads, host
    status, _, body = exporter.get("/probe?target=linux01")  # the inventory names the module
    assert status == 200 and _samples(body)["middleware_probe_success"] == 1


def test_refused_requests_name_the_problem_and_run_nothing(start_exporter, fleet, tmp_path):
    work, client = fleet
    canary = tmp_path / "PWNED"
    exporter = start_exporter(config=_config(client, _inventory(tmp_path, ["linux01"]), allow=".*"))
    hostile = [f"-oProxyCommand=touch {canary}", f"linux01;touch {canary}", f"$(touch {canary})",
               f"`touch {canary}`", f"linux01 touch {canary}", f"linux01\ntouch {canary}", "x" * 300,
               f"linux01|touch {canary}", f"linux01&&touch {canary}"]
    from urllib.parse import quote

    for target in hostile:
        status, _, body = exporter.get(f"/probe?target={quote(target, safe='')}&module=unix")
        assert status == 400 and b"refused" in body, (target, body)
    assert exporter.get("/probe?target=linux01&module=nosuch")[0] == 404
    assert exporter.get("/probe?module=unix")[0] == 400
    assert exporter.get("/probe?target=linux01&target=gnu02&module=unix")[0] == 400
    assert not canary.exists()
    _, _, metrics = exporter.get("/metrics")
    assert _samples(metrics)['middleware_probe_requests_total{code="400",module="unix"}'] == len(hostile) + 2
    assert "middleware_probe_collections_total" not in metrics.decode().split("# TYPE middleware_probe_collections"
                                                                             "_total counter\n", 1)[-1][:40]


def test_an_unlisted_target_is_refused_without_an_allow_pattern(start_exporter, fleet, tmp_path):
    work, client = fleet
    exporter = start_exporter(config=_config(client, _inventory(tmp_path, ["linux01"])))
    status, _, body = exporter.get("/probe?target=gnu02&module=unix")
    assert status == 403 and b"gnu02" in body


def test_a_hung_or_refusing_host_is_reported_and_backs_off_while_others_are_read(start_exporter, fleet, tmp_path):
    work, client = fleet
    exporter = start_exporter(config=_config(client, _inventory(tmp_path, [*HOSTS, "hung01", "refusing01"])))
    status, _, body = exporter.get("/probe?target=refusing01&module=unix")
    samples = _samples(body)
    assert status == 200 and samples["middleware_probe_success"] == 0
    assert samples['middleware_target_up{collector="host",target="refusing01"}'] == 0
    assert samples["middleware_probe_backoff_seconds"] > 0
    # answered at the deadline Prometheus gives (its scrape timeout less half a second), the collection going on
    status, _, body = exporter.get("/probe?target=hung01&module=unix",
                                   headers={"X-Prometheus-Scrape-Timeout-Seconds": "2"})
    assert status == 200 and _samples(body)["middleware_probe_success"] == 0
    status, _, body = exporter.get("/probe?target=linux01&module=unix")  # not held up by the hung host
    assert _samples(body)["middleware_probe_success"] == 1
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # the hung collection ends at the collector's timeout: down, backing off
        samples = _samples(exporter.get("/probe?target=hung01&module=unix",
                                        headers={"X-Prometheus-Scrape-Timeout-Seconds": "2"})[2])
        if samples.get('middleware_target_up{collector="host",target="hung01"}') == 0:
            break
        time.sleep(0.2)
    assert samples['middleware_target_up{collector="host",target="hung01"}'] == 0
    assert samples["middleware_probe_backoff_seconds"] > 0
    probes = {item["target"]: item for item in json.loads(exporter.get("/api/v1/probes")[2])}
    error = probes["hung01"]["collectors"][0]["targets"][0]["last_error"]
    assert error.startswith("uptime: ") and ("timed out" in error or "killed at the deadline" in error)
    assert "Permission denied" in probes["refusing01"]["collectors"][0]["targets"][0]["last_error"]
    page = exporter.get("/")[2].decode()  # the status page says the same
    estate = page.split("<h2>Estate</h2>", 1)[1].split("<h2>", 1)[0]
    assert "3 targets probed recently, 2 failing, 2 backing off" in estate
    assert "refusing01" in estate and "Permission denied" in estate and "hung01" in estate
    assert "linux01" not in estate and "5 targets in 1 groups" in estate


def test_connection_masters_are_reused_and_nothing_is_left_at_exit(start_exporter, fleet, tmp_path):
    work, client = fleet
    # this exporter's control directory under a TMPDIR of its own (short: a socket's path is at most 107 bytes),
    # so that another exporter's masters on the machine are not counted
    parent = Path(tempfile.mkdtemp(prefix="mwx-t", dir="/tmp"))

    def with_control_dir(pid: int) -> list[str]:
        """Command lines naming this exporter's ssh control directory, the exporter's own aside."""
        return [line.split(": ", 1)[1] for line in naming(f"{parent}/mwx-ssh-") if not line.startswith(f"{pid}: ")]

    exporter = start_exporter(config=_config(client, _inventory(tmp_path, list(HOSTS))), env={"TMPDIR": str(parent)})
    for _ in range(3):
        for host in HOSTS:
            assert _samples(exporter.get(f"/probe?target={host}&module=unix")[2])["middleware_probe_success"] == 1
    masters = [line for line in with_control_dir(exporter.proc.pid) if "[mux]" in line]
    assert len(masters) == len(HOSTS)  # one master per host, shared by its later commands
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
