"""Collectors watching another host through a command prefix (``ssh -o BatchMode=yes host``): the prefix is put in
front of every command, the program paths are the remote host's (not checked locally), the `target` label marks
every series, and a hanging remote command fails only its source within the command timeout.

The "ssh" here is a stand-in script that records its arguments and prints captured output for the remote
command it was given; real ssh is not involved (no second host here)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from pathlib import Path

import pytest

from exporter.core.collector import Context
from exporter.systems.domino.collector import DominoCollector
from exporter.systems.domino.settings import DominoSettings
from exporter.systems.hpom.collector import HpomCollector
from exporter.systems.hpom.settings import HpomSettings
from exporter.systems.ibmmq.runmqsc import RunmqscBackend

from ..support import collect, system_fixtures

HPOM_SERVER = system_fixtures("hpom") / "server"
DOMINO = system_fixtures("domino")


def _ssh(tmp_path: Path, body: str) -> tuple[str, Path]:
    log = tmp_path / "ssh.log"
    path = tmp_path / "ssh"
    path.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\n{body}')
    path.chmod(0o755)
    return str(path), log


def _labels(samples: dict) -> list[dict]:
    return [dict(labels) for (_, labels) in samples]


def test_hpom_commands_run_through_the_prefix_with_a_target_label(tmp_path):
    ssh, log = _ssh(tmp_path, f'''case "$*" in
  *ovconfget*) cat "{HPOM_SERVER / "ovconfget_server_opc.txt"}" ;;
  *opcsv*) cat "{HPOM_SERVER / "opcsv_status.txt"}" ;;
  *ovc*) cat "{HPOM_SERVER / "ovc_status.txt"}" ;;
  *) exit 127 ;;
esac
''')
    settings = HpomSettings(enabled=True, queue_dir=str(tmp_path / "not-here"), command_prefix=[ssh, "-o",
                            "BatchMode=yes", "hpom1"], target="hpom1", command_timeout=5)
    samples, batch = collect(HpomCollector(settings, Context()))
    assert batch.errors == {}
    calls = log.read_text().splitlines()
    assert "-o BatchMode=yes hpom1 /opt/OV/bin/OpC/opcsv -status" in calls
    assert "-o BatchMode=yes hpom1 /opt/OV/bin/ovc -status" in calls
    assert "-o BatchMode=yes hpom1 /opt/OV/bin/ovconfget -ovrg server opc" in calls
    assert all(labels.get("target") == "hpom1" for labels in _labels(samples))
    up = {dict(labels)["process"]: value for (name, labels), value in samples.items()
          if name == "middleware_hpom_server_process_up" and dict(labels).get("source") == "opcsv"}
    assert up["opcmsgm"] == 1
    success = {dict(labels)["source"]: value for (name, labels), value in samples.items()
               if name == "middleware_hpom_source_success"}
    assert success["opcsv"] == success["ovc"] == success["ovconfget"] == 1
    # the queue directory is read locally: absent here, so that source is not present (and not failed)
    present = {dict(labels)["source"]: value for (name, labels), value in samples.items()
               if name == "middleware_hpom_source_present"}
    assert present["queues"] == 0


def test_without_a_target_there_is_no_target_label(tmp_path):
    ssh, _ = _ssh(tmp_path, f'cat "{DOMINO / "show_stat.txt"}"\n')
    settings = DominoSettings(enabled=True, command=["/opt/hcl/domino/bin/server", "-c", "show stat"],
                              command_prefix=[ssh, "dom1"])
    samples, _ = collect(DominoCollector(settings, Context()))
    assert samples and all("target" not in labels for labels in _labels(samples))


def test_domino_show_stat_through_the_prefix(tmp_path):
    ssh, log = _ssh(tmp_path, f'cat "{DOMINO / "show_stat.txt"}"\n')
    settings = DominoSettings(enabled=True, command=["/opt/hcl/domino/bin/server", "-c", "show stat"],
                              command_prefix=[ssh, "-o", "BatchMode=yes", "dom1"], target="dom1")
    samples, batch = collect(DominoCollector(settings, Context()))
    assert batch.errors == {}
    # quoted for the remote shell: one argument `show stat` on the remote side (tests/machine/test_remote_shell.py)
    assert log.read_text().splitlines() == ["-o BatchMode=yes dom1 /opt/hcl/domino/bin/server -c 'show stat'"]
    assert len(samples) > 10 and all(labels.get("target") == "dom1" for labels in _labels(samples))


@pytest.mark.integration  # waits out a hang or a timeout
def test_a_hanging_remote_command_fails_its_source_only_and_leaves_nothing(tmp_path):
    sleeper = tmp_path / "remote-sleep"  # a copy of sleep, so that its command line names this test's directory
    shutil.copy(shutil.which("sleep"), sleeper)
    ssh, _ = _ssh(tmp_path, f'''case "$*" in
  *opcsv*) "{sleeper}" 300 ;;
  *ovconfget*) cat "{HPOM_SERVER / "ovconfget_server_opc.txt"}" ;;
  *) cat "{HPOM_SERVER / "ovc_status.txt"}" ;;
esac
''')
    settings = HpomSettings(enabled=True, queue_dir=str(tmp_path / "not-here"), command_prefix=[ssh, "hpom1"],
                            target="hpom1", command_timeout=1, timeout=20)
    samples, batch = collect(HpomCollector(settings, Context()))
    success = {dict(labels)["source"]: value for (name, labels), value in samples.items()
               if name == "middleware_hpom_source_success"}
    assert success["opcsv"] == 0 and success["ovc"] == 1 and success["ovconfget"] == 1
    assert "opcsv" in batch.errors
    time.sleep(0.5)
    leftovers = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if str(tmp_path).encode() in cmdline:
            leftovers.append(pid)
    assert leftovers == []


def test_runmqsc_back_end_through_the_prefix(tmp_path):
    mq = system_fixtures("ibmmq") / "runmqsc"
    ssh, log = _ssh(tmp_path, f'''case "$*" in
  *dspmq*) cat "{mq / "qm1_dspmq.txt"}" ;;
  *runmqsc*) cat > /dev/null; cat "{mq / "qm1_display.txt"}" ;;
esac
''')
    backend = RunmqscBackend("QM1", timeout=5, command_prefix=[ssh, "mqhost1"])
    snapshot = backend.snapshot()
    assert snapshot.status == "RUNNING" and snapshot.queues
    calls = log.read_text().splitlines()
    assert calls[0].startswith("mqhost1 /opt/mqm/bin/dspmq") and any(
        c.startswith("mqhost1 /opt/mqm/bin/runmqsc") for c in calls)


# --- ssh connection sharing (ControlMaster/ControlPersist) (issue 25, item 10) -------------------------------------
PERSISTENT_SSH = r"""#!/bin/sh
# INVENTED stand-in for OpenSSH with ControlMaster=auto and ControlPersist in the operator's ssh configuration: the
# first command to the host makes a handshake and leaves a master process in its own session (ssh's daemon(): fork,
# setsid, the parent gone, so the master is re-parented to the exporter, the child subreaper); later commands go
# through the master while it lives, without a handshake.  Every command prints the show stat fixture.
W='{work}'
if [ "$1" = "__master" ]; then
    echo $$ > "$W/master.pid"
    while :; do sleep 1; done  # ControlPersist longer than the test: ends when killed
fi
pid=$(cat "$W/master.pid" 2>/dev/null)
state=$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' "/proc/$pid/status" 2>/dev/null)
case "$state" in
  ""|Z|X)
    echo handshake >> "$W/handshakes"
    rm -f "$W/master.pid"
    ( setsid "$0" __master </dev/null >/dev/null 2>&1 &
      while [ ! -s "$W/master.pid" ]; do sleep 0.01; done ) ;;
esac
echo "$*" >> "$W/commands"
cat '{fixture}'
"""


def _persistent_ssh_exporter(tmp_path: Path, start_exporter, runs: int):
    """A real exporter whose Domino commands go through the stand-in ssh; returned once ``runs`` ran."""
    ssh = tmp_path / "ssh"
    ssh.write_text(PERSISTENT_SSH.format(work=tmp_path, fixture=DOMINO / "show_stat.txt"))
    ssh.chmod(0o755)
    exporter = start_exporter(config=f"""
collectors:
  host: {{enabled: false}}
  process: {{enabled: false}}
  domino:
    enabled: true
    interval: 0.3s
    timeout: 0.3s
    command_timeout: 0.25s
    command: [/opt/hcl/domino/bin/server, -c, show stat]
    command_prefix: [{ssh}, -o, ControlMaster=auto, -o, ControlPersist=10m, dom1]
""")
    give_up = time.monotonic() + 120  # a backstop: 10 runs take 3 s
    while len((tmp_path / "commands").read_text().splitlines() if (tmp_path / "commands").exists() else []) < runs:
        assert time.monotonic() < give_up, exporter.log()
        exporter.get("/metrics")  # collections happen for readers (docs/architecture.md, "When collections happen")
        time.sleep(0.1)
    return exporter


def _ours(tmp_path: Path) -> list[int]:
    """Live processes (not zombies) whose command line names the test's directory."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][0]
        except (OSError, IndexError):
            continue
        if str(tmp_path).encode() in cmdline and state not in "ZX":
            found.append(int(pid))
    return found


def _gone(pids: list[int], tmp_path: Path, wait: float = 10.0) -> bool:
    give_up = time.monotonic() + wait  # a bound on the kernel delivering SIGKILL, not a timing assertion
    while set(pids) & set(_ours(tmp_path)):
        if time.monotonic() > give_up:
            return False
        time.sleep(0.05)
    return True


def test_an_ssh_connection_master_is_kept_between_commands_and_ended_at_exit(tmp_path, start_exporter):
    """The exporter used to kill the master ssh leaves (it is re-parented to the exporter) after every command, so
    every remote command paid a full handshake.  Now 10 commands make one handshake; SIGTERM ends the master too."""
    exporter = _persistent_ssh_exporter(tmp_path, start_exporter, runs=10)
    commands = len((tmp_path / "commands").read_text().splitlines())
    assert (tmp_path / "handshakes").read_text().splitlines() == ["handshake"], f"{commands} commands"
    master = int((tmp_path / "master.pid").read_text())
    assert master in _ours(tmp_path)
    status = json.loads(exporter.get("/api/v1/collectors")[2])
    domino = next(c for c in status if c["name"] == "domino")
    assert domino["source_errors"] == {} and domino["last_success"] is True
    exporter.proc.send_signal(signal.SIGTERM)
    assert exporter.proc.wait(30) == 0
    assert _gone([master], tmp_path) and _ours(tmp_path) == []


def test_an_ssh_connection_master_is_ended_when_the_exporter_is_killed(tmp_path, start_exporter):
    """SIGKILL cannot be caught: the exporter's watchdog ends the kept master."""
    exporter = _persistent_ssh_exporter(tmp_path, start_exporter, runs=3)
    master = int((tmp_path / "master.pid").read_text())
    exporter.proc.kill()
    exporter.proc.wait(30)
    assert _gone([master], tmp_path) and _ours(tmp_path) == []
