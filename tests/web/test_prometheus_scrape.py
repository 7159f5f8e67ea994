"""Debian's real Prometheus scrapes the real exporter (OpenMetrics + gzip, as it negotiates by default)."""

from __future__ import annotations

import json
import subprocess
import time
import urllib.parse

import pytest

from ..support import free_port, http_get, require_binary, stop_process

pytestmark = pytest.mark.integration


@pytest.fixture
def prometheus(tmp_path):
    binary = require_binary("prometheus")
    procs = []

    def start(target: str) -> str:
        port = free_port()
        config = tmp_path / "prometheus.yml"
        config.write_text(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
            "scrape_configs:\n  - job_name: middleware\n    static_configs:\n"
            f"      - targets: ['{target}']\n")
        log = open(tmp_path / "prometheus.log", "wb")
        proc = subprocess.Popen([binary, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'data'}",
                                 f"--web.listen-address=127.0.0.1:{port}"],
                                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        procs.append(proc)
        return f"http://127.0.0.1:{port}"

    yield start
    for proc in procs:
        stop_process(proc)


def _api(base: str, path: str) -> dict:
    status, _, body = http_get(base + path)
    assert status == 200, body
    return json.loads(body)["data"]


def _query(base: str, expr: str) -> list:
    return _api(base, "/api/v1/query?query=" + urllib.parse.quote(expr))["result"]


def test_prometheus_ingests_every_series_without_errors(start_exporter, prometheus):
    exporter = start_exporter()
    base = prometheus(f"127.0.0.1:{exporter.port}")
    deadline = time.monotonic() + 60
    target = None
    while time.monotonic() < deadline:
        try:
            targets = _api(base, "/api/v1/targets")["activeTargets"]
            if targets and targets[0]["health"] == "up" and _query(base, "middleware_host_cpus"):
                target = targets[0]
                break
        except OSError:
            pass
        time.sleep(0.5)
    assert target is not None, "Prometheus never scraped the exporter successfully"
    assert target["lastError"] == ""
    _, _, body = exporter.get("/metrics")
    exposed = sum(1 for line in body.decode().splitlines() if line and not line.startswith("#"))
    scraped = _query(base, "scrape_samples_scraped")
    assert scraped and int(float(scraped[0]["value"][1])) == exposed
    cpus = _query(base, "middleware_host_cpus")
    assert float(cpus[0]["value"][1]) >= 1
    # counters arrive as counters: rate() works on them once two samples exist (polled: a loaded machine scrapes late)
    deadline = time.monotonic() + 60
    while not _query(base, 'rate(middleware_host_cpu_seconds_total{mode="idle"}[5s])'):
        assert time.monotonic() < deadline, "rate() over the exporter's counter stayed empty for 60 s"
        time.sleep(0.5)
    assert _query(base, 'middleware_scrape_collector_success{collector="process"} == 1')
