#!/usr/bin/env python3
"""IBM MQ scale benchmark: a queue manager with 10,000 queues behind a fake mqweb (tests/fakes/mqweb.py), read by
the real exporter process through the REST back-end, scraped the way Prometheus scrapes (OpenMetrics, gzip).

Prints: the collection time of the ibmmq collector, scrape latency median/p99 over the run (which spans several
collections, so scrapes that land right after a new snapshot are included), response size, series and RSS, and
whether the issue's target (scrape p99 under 250 ms) was met.  No assertions.

    python bench/mq_bench.py [--queues 10000] [--scrapes 200] [--interval 5]
"""

from __future__ import annotations

import argparse
import gzip
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
from _common import free_port, stop_process  # noqa: E402
from fakes.mqweb import FakeChannel, FakeMqweb, FakeQmgr, generate_queues  # noqa: E402

ACCEPT = ("application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
          "text/plain;version=0.0.4;q=0.5,*/*;q=0.1")


def get(port: int, path: str, headers: dict[str, str] | None = None) -> tuple[int, bytes, float]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    started = time.perf_counter()
    conn.request("GET", path, headers=headers or {})
    response = conn.getresponse()
    body = response.read()
    elapsed = time.perf_counter() - started
    conn.close()
    return response.status, body, elapsed


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queues", type=int, default=10000)
    parser.add_argument("--scrapes", type=int, default=200)
    parser.add_argument("--interval", type=float, default=5.0, help="ibmmq collection interval (seconds)")
    parser.add_argument("--pause", type=float, default=0.1, help="seconds between scrapes")
    args = parser.parse_args()

    qmgr = FakeQmgr("QMBENCH", queues=generate_queues(args.queues, "APP.Q."),
                    channels=[FakeChannel(f"CH.{i}", "RUNNING", "SDR", f"host{i}(1414)") for i in range(50)])
    fake = FakeMqweb(qmgr).start()
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="mq-bench-")
    config = Path(workdir) / "config.yaml"
    config.write_text(json.dumps({"collectors": {"ibmmq": {
        "enabled": True, "interval": args.interval, "timeout": max(args.interval - 1, 1),
        "queue_managers": [{"name": "QMBENCH", "backend": "rest", "url": fake.base_url, "api_version": "v2",
                            "timeout": max(args.interval - 1, 1)}]}}}))
    log = open(Path(workdir) / "exporter.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "exporter", "run", "--config", str(config),
                             "--web.listen-address", f"127.0.0.1:{port}"], cwd=REPO, stdout=log,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if get(port, "/readyz")[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.2)
        else:
            print("exporter not ready; log in", log.name, file=sys.stderr)
            return 1
        headers = {"Accept": ACCEPT, "Accept-Encoding": "gzip"}
        for _ in range(5):
            get(port, "/metrics", headers)
        latencies, sizes = [], []
        body = b""
        for _ in range(args.scrapes):
            status, body, elapsed = get(port, "/metrics", headers)
            if status != 200:
                print(f"scrape answered {status}", file=sys.stderr)
                return 1
            latencies.append(elapsed * 1000)
            sizes.append(len(body))
            time.sleep(args.pause)
        text = gzip.decompress(body).decode()
        series = sum(1 for line in text.splitlines() if line and not line.startswith("#"))
        status = {c["name"]: c for c in json.loads(get(port, "/api/v1/collectors")[1])}["ibmmq"]
        latencies.sort()
        p50 = statistics.median(latencies)
        p99 = latencies[min(len(latencies) - 1, int(round(0.99 * (len(latencies) - 1))))]
        print(f"queues {args.queues}, scrapes {args.scrapes} over {args.scrapes * args.pause:.0f}s, "
              f"collection interval {args.interval:g}s ({status['runs']} collections, "
              f"last {1000 * (status['last_duration_seconds'] or 0):.0f} ms, success {status['last_success']})")
        print(f"scrape latency: median {p50:.1f} ms, p99 {p99:.1f} ms, max {latencies[-1]:.1f} ms")
        print(f"response: {statistics.median(sizes) / 1024:.0f} KiB gzip, {len(text) / 1024:.0f} KiB plain, "
              f"{series} series; exporter RSS {rss_mb(proc.pid):.1f} MB")
        print(f"target scrape p99 < 250 ms: {'met' if p99 < 250 else 'NOT met'}")
        return 0
    finally:
        stop_process(proc)
        fake.stop()


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
