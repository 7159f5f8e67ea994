"""The real exporter process, started with no configuration, over real HTTP on loopback."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import time

import pytest
from prometheus_client.parser import text_string_to_metric_families

from ..support import http_get, require_binary

pytestmark = pytest.mark.integration

PROMETHEUS_ACCEPT = ("application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
                     "text/plain;version=0.0.4;q=0.5,*/*;q=0.1")


@pytest.fixture
def exporter(start_exporter):
    return start_exporter()


def test_default_run_serves_host_and_process_metrics(exporter):
    status, headers, body = exporter.get("/metrics")
    assert status == 200
    assert headers["content-type"].startswith("text/plain; version=0.0.4")
    names = {f.name for f in text_string_to_metric_families(body.decode())}
    assert {"middleware_host_cpu_seconds", "middleware_host_memory_total_bytes", "middleware_host_disk_io_time_seconds",
            "middleware_process_group_processes", "middleware_scrape_collector_success",
            "middleware_exporter_build_info", "process_resident_memory_bytes"} <= names
    text = body.decode()
    assert 'middleware_scrape_collector_success{collector="host"} 1.0' in text
    assert 'middleware_scrape_collector_success{collector="process"} 1.0' in text


def test_gzip_and_openmetrics_negotiation(exporter):
    status, headers, body = exporter.get("/metrics", {"Accept": PROMETHEUS_ACCEPT, "Accept-Encoding": "gzip"})
    assert status == 200
    assert headers["content-encoding"] == "gzip"
    assert headers["content-type"].startswith("application/openmetrics-text; version=1.0.0")
    text = gzip.decompress(body).decode()
    assert text.endswith("# EOF\n")
    assert "# TYPE middleware_host_cpu_seconds counter" in text
    # text format when OpenMetrics is refused with q=0
    status, headers, body = exporter.get("/metrics", {"Accept": "application/openmetrics-text;q=0,text/plain"})
    assert headers["content-type"].startswith("text/plain")
    assert "content-encoding" not in {k.lower() for k in headers}


def test_promtool_check_metrics_passes(exporter):
    promtool = require_binary("promtool")
    _, _, body = exporter.get("/metrics")
    result = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True, timeout=60)
    assert result.returncode == 0, result.stdout.decode() + result.stderr.decode()
    assert not result.stdout.strip() and not result.stderr.strip(), "promtool reported lint problems"


def test_health_ready_landing_and_collectors_api(exporter):
    status, _, body = exporter.get("/healthz")
    assert status == 200 and json.loads(body)["status"] == "ok"
    status, _, body = exporter.get("/readyz")
    assert status == 200 and json.loads(body)["pending_collectors"] == []
    status, headers, body = exporter.get("/")
    assert status == 200 and headers["content-type"].startswith("text/html")
    for link in ("/metrics", "/healthz", "/readyz", "/api/v1/collectors"):
        assert f"href='{link}'" in body.decode()
    status, _, body = exporter.get("/api/v1/collectors")
    collectors = {c["name"]: c for c in json.loads(body)}
    assert collectors["host"]["enabled"] is True
    assert collectors["host"]["last_success"] is True
    assert collectors["host"]["last_duration_seconds"] > 0
    assert collectors["host"]["last_error"] is None
    assert collectors["process"]["interval_seconds"] == 15


def test_disabled_collector_is_listed_but_not_run(start_exporter):
    exporter = start_exporter("--no-collector.process")
    _, _, body = exporter.get("/api/v1/collectors")
    collectors = {c["name"]: c for c in json.loads(body)}
    assert collectors["process"] == {"name": "process", "description": collectors["process"]["description"],
                                     "enabled": False}
    _, _, body = exporter.get("/metrics")
    assert b"middleware_process_group_processes" not in body
    assert b'collector="process"' not in body


def test_broken_procfs_fails_only_that_collector(start_exporter, tmp_path):
    """Garbage from the source: a procfs whose files hold nonsense."""
    fake = tmp_path / "proc"
    fake.mkdir()
    for name in ("stat", "meminfo", "vmstat", "diskstats", "loadavg"):
        (fake / name).write_text("\x00\xff garbage (((\n")
    # mountstats finds no <procfs>/self/mountstats: nothing to read, which counts neither way for readiness
    exporter = start_exporter(env={"MIDDLEWARE_EXPORTER_PATHS__PROCFS": str(fake)}, wait_ready=False)
    deadline = time.monotonic() + 30
    while json.loads(exporter.get("/readyz")[2])["status"] == "starting" and time.monotonic() < deadline:
        time.sleep(0.1)
    assert exporter.get("/readyz")[0] == 503, "every collector fails: not ready"
    status, _, body = exporter.get("/metrics")
    assert status == 200
    text = body.decode()
    assert 'middleware_scrape_collector_success{collector="host"} 0.0' in text
    assert "middleware_host_cpu_seconds_total" not in text
    _, _, api = exporter.get("/api/v1/collectors")
    host = {c["name"]: c for c in json.loads(api)}["host"]
    assert "no per-CPU lines" in host["last_error"]
    # the exporter's own metrics are still there
    assert "middleware_exporter_build_info" in text


def test_hung_source_times_out_without_stalling_scrapes(start_exporter, tmp_path):
    """A read that never returns (a FIFO standing in for a hung NFS or /proc read) in the host collector."""
    fake = tmp_path / "proc"
    fake.mkdir()
    (fake / "stat").write_text("cpu0 1 2 3 4 5 6 7 8 0 0\nbtime 1700000000\n")
    (fake / "loadavg").write_text("0.1 0.2 0.3 1/2 3\n")
    (fake / "meminfo").write_text("MemTotal: 1000 kB\nMemFree: 10 kB\nMemAvailable: 100 kB\n")
    os.mkfifo(fake / "vmstat")  # opening it for reading blocks until a writer appears: never
    config = ("collectors:\n  host:\n    interval: 1s\n    timeout: 0.5s\n"
              "  process:\n    interval: 1s\n    timeout: 1s\n")
    exporter = start_exporter(config=config, env={"MIDDLEWARE_EXPORTER_PATHS__PROCFS": str(fake)})
    deadline = time.monotonic() + 120  # a backstop: several intervals pass while the first host run stays hung
    while {c["name"]: c for c in json.loads(exporter.get("/api/v1/collectors")[2])}["host"]["failures"] < 3:
        assert time.monotonic() < deadline, "the hung host collector was not reported as failing"
        time.sleep(0.1)
    started = time.monotonic()
    status, _, body = http_get(exporter.base + "/metrics", timeout=60)  # the hung read never ends
    assert time.monotonic() - started < 30, "a scrape waited for the hung collector"  # ms here; wide margin
    assert status == 200
    text = body.decode()
    assert 'middleware_scrape_collector_success{collector="host"} 0.0' in text
    assert 'middleware_scrape_collector_success{collector="process"} 1.0' in text
    assert 'middleware_process_group_processes{group="hpom_java_gui"' in text
    assert "middleware_host_cpus" not in text
    _, _, api = exporter.get("/api/v1/collectors")
    host = {c["name"]: c for c in json.loads(api)}["host"]
    assert "still running" in host["last_error"] or "timed out" in host["last_error"]
    assert host["failures"] >= 3
    # no thread pile-up: one hung worker, not one per interval.  The steady set: the main thread, per collector
    # (host, process, filesystem, mountstats) its scheduling loop and its kept worker, the file systems' statfs
    # walker; the hung host worker takes the place of host's kept one, whose successor waits for the next run.
    collectors = len([c for c in json.loads(exporter.get("/api/v1/collectors")[2]) if c.get("enabled", True)])
    threads = len(os.listdir(f"/proc/{exporter.proc.pid}/task"))
    assert threads <= 1 + 2 * collectors + 3, f"{threads} threads: hung runs are being restarted"
    time.sleep(3.5)  # three more intervals, each with a host run refused while the hung one lasts
    later = len(os.listdir(f"/proc/{exporter.proc.pid}/task"))
    # (+1: a file-system run's short statfs walker may be alive at one count and not the other)
    assert later <= threads + 1, f"{threads} then {later} threads: hung runs are being restarted"
