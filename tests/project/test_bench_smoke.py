"""The benchmarks still run (small sizes; no timing is asserted: the figures are for people to read)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ..support import REPO, require_binary

pytestmark = pytest.mark.integration


def _run(*args: str) -> str:
    result = subprocess.run([sys.executable, *args], cwd=REPO, capture_output=True, text=True, timeout=300,
                            stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_mq_bench_runs():
    out = _run("bench/mq_bench.py", "--queues", "500", "--scrapes", "10", "--interval", "2", "--pause", "0.05")
    assert "scrape latency: median" in out and "series" in out


def test_scrape_bench_runs():
    require_binary("prometheus-node-exporter", "node_exporter")
    out = _run("bench/scrape_bench.py", "--scrapes", "20", "--warmup", "2", "--idle-seconds", "1")
    assert "ratio ours/node" in out
    # the process, VHI and HPOM collectors read one walk of /proc per interval
    assert "shared process pass" in out and "walks per interval: 1 " in out


def test_soak_short_form():
    """600 scrapes with every collector that can run here on a 1 s interval: no failure, RSS, threads and
    descriptors within the script's bounds (it exits 1 otherwise)."""
    out = _run("bench/soak.py", "--scrapes", "600", "--sample-every", "50")
    assert "0 failed" in out and "result: ok" in out


def test_fuzz_short_form():
    """Every parser fuzzed (atheris, seeded from the fixtures), 2,000 inputs each, and the pathological inputs
    timed: no exception, no result lost to a bad line, nothing over the script's budget (it exits 1 otherwise)."""
    # a generous budget here: the suite shares the machine (no timing assertions in tests); the long form keeps 100 ms
    out = _run("bench/fuzz.py", "--runs", "2000", "--budget-ms", "2000")
    assert "result: ok" in out


def test_faults_short_form():
    """Every command source misbehaving at once (hang, garble, fail, flood, escape), 200 scrapes: none fails, RSS,
    threads and descriptors flat after warm-up; then SIGTERM while every source hangs ends the exporter with status
    0 and nothing it started left running (the script exits 1 otherwise)."""
    out = _run("bench/faults.py", "--short")
    assert "failed: clean 0, faults 0" in out and "0 processes left" in out and "result: ok" in out


def test_load_short_form():
    """10 clients scraping back to back and 100 idle or half-sent connections under ulimit -n 1024: every measured
    scrape answers, descriptors stay under the limit, the log stays short (the script exits 1 otherwise)."""
    out = _run("bench/load.py", "--short")
    assert "failed 0" in out and "ratio load/baseline" in out and "result: ok" in out


def test_cpu_hour_bench_runs():
    """CPU per hour at a scrape interval against node_exporter (issue 30): the script runs and prints its ratio;
    its exit status is the figure's verdict (1 when ours is over node_exporter's), not asserted here."""
    require_binary("prometheus-node-exporter", "node_exporter")
    result = subprocess.run([sys.executable, "bench/cpu_hour_bench.py", "--scrape-interval", "1", "--duration", "3",
                             "--idle-seconds", "1", "--settle-seconds", "1"], cwd=REPO, capture_output=True,
                            text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert result.returncode in (0, 1), result.stdout + result.stderr
    assert "ratio ours/node_exporter: CPU per hour" in result.stdout, result.stdout + result.stderr


def test_memory_bench_runs():
    """Resident memory against node_exporter (issue 30): the script runs through (its probe of the modules a
    default start loads once failed on an import the code no longer had) and prints its table; its exit status
    is the figure's verdict, not asserted here."""
    require_binary("prometheus-node-exporter", "node_exporter")
    result = subprocess.run([sys.executable, "bench/memory_bench.py", "--scrapes", "1", "--settle", "0.5"], cwd=REPO,
                            capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert result.returncode in (0, 1), result.stdout + result.stderr
    assert "loaded by building the default app" in result.stdout and "\ndefault " in result.stdout, result.stdout


def test_fleet_bench_runs():
    """The fleet benchmark (issue 37): a small fleet, short phases, every part runs; 1 is a goal missed, the
    figures' verdict, not asserted here."""
    require_binary("victoria-metrics", package="victoria-metrics")
    result = subprocess.run([sys.executable, "bench/fleet.py", "--hosts", "8", "--minutes", "0.2", "--reference",
                             "2", "--warm-up", "5"], cwd=REPO, capture_output=True, text=True, timeout=600,
                            stdin=subprocess.DEVNULL)
    assert result.returncode in (0, 1), result.stdout + result.stderr
    assert "(ii) reference, one exporter per host" in result.stdout, result.stdout + result.stderr
    assert "(iii) hang -> page through vmalert" in result.stdout, result.stdout + result.stderr
    assert "(i) two shards, healthy" in result.stdout, result.stdout


def test_fakehost_cost_bench_runs():
    """The fleet's forced commands' CPU per command (sh against Python, through the real sshd): the script runs
    and prints its ratios; 1 is the figure's verdict (sh not 3x cheaper), not asserted here."""
    result = subprocess.run([sys.executable, "bench/fakehost_cost.py", "--commands", "6", "--rounds", "2"], cwd=REPO,
                            capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert result.returncode in (0, 1), result.stdout + result.stderr
    assert "ratio python/sh: healthy_sshd" in result.stdout, result.stdout + result.stderr
