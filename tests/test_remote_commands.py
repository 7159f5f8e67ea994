"""Collectors watching another host through a command prefix (``ssh -o BatchMode=yes host``): the prefix is put in
front of every command, the program paths are the remote host's (not checked locally), the `target` label marks
every series, and a hanging remote command fails only its source within the command timeout.

The "ssh" here is a stand-in script that records its arguments and prints captured output for the remote
command it was given; real ssh is not involved (no second host here)."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from exporter.core.collector import Context
from exporter.systems.domino.collector import DominoCollector, DominoSettings
from exporter.systems.hpom.collector import HpomCollector, HpomSettings
from exporter.systems.ibmmq.runmqsc import RunmqscBackend

from .conftest import REPO, collect

FIX = REPO / "tests" / "fixtures"


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
  *ovconfget*) cat "{FIX / "hpom_server" / "ovconfget_server_opc.txt"}" ;;
  *opcsv*) cat "{FIX / "hpom_server" / "opcsv_status.txt"}" ;;
  *ovc*) cat "{FIX / "hpom_server" / "ovc_status.txt"}" ;;
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
    ssh, _ = _ssh(tmp_path, f'cat "{FIX / "domino" / "show_stat.txt"}"\n')
    settings = DominoSettings(enabled=True, command=["/opt/hcl/domino/bin/server", "-c", "show stat"],
                              command_prefix=[ssh, "dom1"])
    samples, _ = collect(DominoCollector(settings, Context()))
    assert samples and all("target" not in labels for labels in _labels(samples))


def test_domino_show_stat_through_the_prefix(tmp_path):
    ssh, log = _ssh(tmp_path, f'cat "{FIX / "domino" / "show_stat.txt"}"\n')
    settings = DominoSettings(enabled=True, command=["/opt/hcl/domino/bin/server", "-c", "show stat"],
                              command_prefix=[ssh, "-o", "BatchMode=yes", "dom1"], target="dom1")
    samples, batch = collect(DominoCollector(settings, Context()))
    assert batch.errors == {}
    assert log.read_text().splitlines() == ["-o BatchMode=yes dom1 /opt/hcl/domino/bin/server -c show stat"]
    assert len(samples) > 10 and all(labels.get("target") == "dom1" for labels in _labels(samples))


def test_a_hanging_remote_command_fails_its_source_only_and_leaves_nothing(tmp_path):
    sleeper = tmp_path / "remote-sleep"  # a copy of sleep, so that its command line names this test's directory
    shutil.copy(shutil.which("sleep"), sleeper)
    ssh, _ = _ssh(tmp_path, f'''case "$*" in
  *opcsv*) "{sleeper}" 300 ;;
  *ovconfget*) cat "{FIX / "hpom_server" / "ovconfget_server_opc.txt"}" ;;
  *) cat "{FIX / "hpom_server" / "ovc_status.txt"}" ;;
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
    mq = FIX / "mq" / "runmqsc"
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
