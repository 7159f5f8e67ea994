"""scripts/demo: the newcomer's demo runs without a terminal, shows a page arrive, and leaves no process behind, at
the end of its run and on Ctrl-C.  Fast: 60x compression (one scenario minute a second), about 45 s in all.
The rule rewriting it relies on is checked without any process."""

from __future__ import annotations

import importlib.util
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ..support import REPO, require_binary

DEMO = REPO / "scripts" / "demo.py"


def _demo_module():
    spec = importlib.util.spec_from_file_location("demo_script", DEMO)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _processes_in(workdir: str) -> list[str]:
    """Command lines of the running processes that mention ``workdir`` (every process the demo starts does)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if workdir in cmdline:
            found.append(f"{entry.name}: {cmdline}")
    return found


def _workdir(output: str) -> str:
    match = re.search(r"^working directory \(configurations, logs\): (\S+)$", output, re.M)
    assert match, output
    return match.group(1)


def _start(*args: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MIDDLEWARE_EXPORTER_")}
    return subprocess.Popen([sys.executable, str(DEMO), *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env, cwd=REPO)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait(10)


@pytest.fixture
def stack_binaries():
    require_binary("prometheus")
    require_binary("prometheus-alertmanager", "alertmanager", package="prometheus-alertmanager")


@pytest.mark.integration
def test_demo_pages_and_cleans_up(stack_binaries):
    proc = _start("--speed", "60", "--minutes", "24")
    try:
        output, _ = proc.communicate(timeout=90)
    finally:
        _stop(proc)
    workdir = _workdir(output)
    assert proc.returncode == 0, output
    assert re.search(r"^minute +\d+(\.\d)?: >>> PAGE: MiddlewareHpomMessageQueueNotDraining \(critical\)", output,
                     re.M), output
    assert re.search(r"^minute +\d+: msgmgrq .*pending .*MiddlewareHpomMessageQueueNotDraining", output, re.M), output
    assert "OK: the expected page arrived" in output
    assert "http://127.0.0.1:" in output and "/alerts" in output
    assert not _processes_in(workdir)
    assert not Path(workdir).exists()


@pytest.mark.integration
def test_demo_stops_everything_on_ctrl_c(stack_binaries):
    proc = _start("--speed", "60")
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 45
        while time.monotonic() < deadline and not any(line.startswith("minute    2:") for line in lines):
            assert proc.poll() is None, "".join(lines)
            time.sleep(0.2)
        assert any(line.startswith("minute    2:") for line in lines), "".join(lines)
        workdir = _workdir("".join(lines))
        assert _processes_in(workdir), "the demo's processes should be running"
        proc.send_signal(signal.SIGINT)
        proc.wait(30)
        reader.join(5)
    finally:
        _stop(proc)
    output = "".join(lines)
    assert proc.returncode == 130, output
    assert "interrupted" in output and "stopped exporter" in output
    assert not _processes_in(workdir), output
    assert not Path(workdir).exists()


def test_rules_are_compressed():
    demo = _demo_module()
    assert demo.compressed("10m", 10) == "60000ms"
    assert demo.compress_expr("deriv(x[5m]) > 0 and sum_over_time((y >= bool 0)[10m:1m]) offset 1h", 10) == (
        "deriv(x[30000ms]) > 0 and sum_over_time((y >= bool 0)[60000ms:6000ms]) offset 360000ms")
    assert demo.compress_expr('rate(x{le=~"[0-9]"}[1h30m]) + z[2m:]', 60) == (
        'rate(x{le=~"[0-9]"}[90000ms]) + z[2000ms:]')
    rules = {"groups": [{"name": "g", "interval": "30s", "rules": [
        {"record": "middleware:threshold:hpom_queue_recovery_seconds", "expr": "vector(412)"},
        {"record": "middleware:threshold:hpom_ack_bulk", "expr": "vector(5000)"},
        {"alert": "A", "expr": "deriv(q[10m]) > 0", "for": "15m"}]}]}
    out = demo.compress_rules(rules, 10, {"hpom_ack_bulk": "4000"})
    group = out["groups"][0]
    assert group["interval"] == "3000ms"
    assert [r["expr"] for r in group["rules"]] == ["(vector(412)) / 10", "vector(4000)", "deriv(q[60000ms]) > 0"]
    assert group["rules"][2]["for"] == "90000ms"
    assert rules["groups"][0]["rules"][2]["for"] == "15m", "the input is not changed"


def test_alertmanager_config_is_compressed_and_local():
    import yaml

    demo = _demo_module()
    config = yaml.safe_load((REPO / "alerts" / "alertmanager.yml").read_text())
    out = demo.compress_alertmanager(config, "http://127.0.0.1:9", 10)
    assert {r["name"] for r in out["receivers"]} == {r["name"] for r in config["receivers"]}
    for receiver in out["receivers"]:
        assert receiver == {"name": receiver["name"], "webhook_configs": [
            {"url": f"http://127.0.0.1:9/{receiver['name']}", "send_resolved": True}]}
    pager = next(r for r in out["route"]["routes"] if r["receiver"] == "pager")
    assert pager["group_wait"] == "1000ms" and pager["repeat_interval"] == "360000ms"
    assert out["inhibit_rules"] == config["inhibit_rules"]


def test_demo_wrapper_is_executable():
    wrapper = REPO / "scripts" / "demo"
    assert os.access(wrapper, os.X_OK) and os.access(DEMO, os.R_OK)
    subprocess.run(["bash", "-n", str(wrapper)], check=True)
