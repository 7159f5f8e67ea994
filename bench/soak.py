#!/usr/bin/env python3
"""Soak: the real exporter scraped N times in a row while its collectors keep running; is anything growing?

The exporter runs every collector that can run here against stand-ins (host and process on this machine's /proc,
HPOM on a queue directory and `cat`-style commands, Domino on a captured `show stat`, IBM MQ through the fake
mqweb with 500 queues), all on a 1 s interval so that thousands of collections happen during the soak.  The
script scrapes /metrics the way Prometheus does (OpenMetrics, gzip, one keep-alive connection) and samples the
exporter's RSS, threads and open descriptors every `--sample-every` scrapes.

The reference is the exporter itself after warm-up (the first `--warmup-share` of the run): the figures are the
growth from that point to the end, and the slope of a least-squares line through the samples after warm-up, per
1,000 scrapes.  It prints the figures and exits 1 when a scrape failed, when RSS grew by more than `--rss-bound-mb`
(default 5 MB) or `--rss-bound-share` (default 10 %) of the warm figure, whichever is larger, or when threads or
descriptors are higher at the end than their warm maximum.

    python bench/soak.py                      # the long form: 10,000 scrapes (docs/reliability.md)
    python bench/soak.py --scrapes 600        # the short form the test suite runs
"""

from __future__ import annotations

import argparse
import gzip
import http.client
import os
import shutil
import socket
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
HEADERS = {"Accept": ACCEPT, "Accept-Encoding": "gzip", "User-Agent": "soak/1"}
HPOM_FIXTURES = REPO / "tests" / "systems" / "hpom" / "fixtures" / "server"
DOMINO_FIXTURE = REPO / "tests" / "systems" / "domino" / "fixtures" / "show_stat.txt"


def proc_figures(pid: int) -> tuple[float, int, int]:
    """(RSS in MB, threads, open descriptors) of a process, from /proc."""
    rss = threads = 0
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
            elif line.startswith("Threads:"):
                threads = int(line.split()[1])
    return rss / 1024, threads, len(os.listdir(f"/proc/{pid}/fd"))


def script(path: Path, body: str) -> str:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def write_config(work: Path, mq_url: str) -> Path:
    queues = work / "mgmt_sv"
    queues.mkdir()
    for name, size in {"msgmgrq": 4096, "actreqq": 512, "dispq0": 1024}.items():
        (queues / name).write_bytes(b"\0" * size)
    bindir = work / "bin"
    bindir.mkdir()
    opcsv = script(bindir / "opcsv", f'cat "{HPOM_FIXTURES / "opcsv_status.txt"}"\n')
    ovc = script(bindir / "ovc", f'cat "{HPOM_FIXTURES / "ovc_status.txt"}"\n')
    ovconfget = script(bindir / "ovconfget", f'cat "{HPOM_FIXTURES / "ovconfget_server_opc.txt"}"\n')
    config = f"""
collectors:
  host: {{interval: 1s, timeout: 1s}}
  process: {{interval: 1s, timeout: 1s}}
  hpom:
    enabled: true
    interval: 1s
    timeout: 1s
    queue_dir: {queues}
    opcsv: {opcsv}
    ovc: {ovc}
    ovconfget: {ovconfget}
    command_timeout: 0.9s
  domino:
    enabled: true
    interval: 1s
    timeout: 1s
    command: [cat, {DOMINO_FIXTURE}]
    command_timeout: 0.9s
  ibmmq:
    enabled: true
    interval: 1s
    timeout: 1s
    queue_managers:
      - name: QM1
        backend: rest
        url: {mq_url}
        username: app
        password_env: SOAK_MQ_PASSWORD
"""
    path = work / "config.yaml"
    path.write_text(config)
    return path


def scrape(conn: http.client.HTTPConnection) -> int:
    conn.request("GET", "/metrics", headers=HEADERS)
    response = conn.getresponse()
    body = response.read()
    if response.status != 200:
        raise RuntimeError(f"status {response.status}")
    if response.getheader("Content-Encoding") == "gzip":
        body = gzip.decompress(body)
    return body.count(b"\n")


def slope_per_1000(points: list[tuple[int, float]]) -> float:
    if len(points) < 2:
        return 0.0
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    var = sum((x - mx) ** 2 for x in xs)
    return 0.0 if var == 0 else 1000 * sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / var


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scrapes", type=int, default=10_000)
    parser.add_argument("--sample-every", type=int, default=100)
    parser.add_argument("--warmup-share", type=float, default=0.2)
    parser.add_argument("--pause", type=float, default=0.01, help="seconds between scrapes")
    parser.add_argument("--rss-bound-mb", type=float, default=5.0)
    parser.add_argument("--rss-bound-share", type=float, default=0.10)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="mwe-soak-"))
    mq = FakeMqweb(FakeQmgr("QM1", queues=generate_queues(500), channels=[FakeChannel("APP.SVRCONN", "RUNNING")]),
                   username="app", password="pw").start()
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MIDDLEWARE_EXPORTER_")}
    env["SOAK_MQ_PASSWORD"] = "pw"
    log = open(work / "exporter.log", "wb")  # noqa: SIM115 - closed in finally
    proc = subprocess.Popen([sys.executable, "-m", "exporter", "run", "--config", str(write_config(work, mq.base_url)),
                             "--web.listen-address", f"127.0.0.1:{port}"], cwd=REPO, env=env, stdout=log,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    failures = 0
    samples: list[tuple[int, float, int, int]] = []
    latencies: list[float] = []
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    print("exporter did not start:\n" + (work / "exporter.log").read_text(errors="replace"))
                    return 1
                time.sleep(0.1)
        time.sleep(3)  # every collector has run at least twice
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        started = time.monotonic()
        series = 0
        for i in range(1, args.scrapes + 1):
            t0 = time.perf_counter()
            try:
                series = scrape(conn)
            except (OSError, RuntimeError, http.client.HTTPException):
                failures += 1
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            latencies.append(time.perf_counter() - t0)
            if i % args.sample_every == 0 or i == 1:
                samples.append((i, *proc_figures(proc.pid)))
            if args.pause:
                time.sleep(args.pause)
        elapsed = time.monotonic() - started
        conn.close()
    finally:
        stop_process(proc)
        log.close()
        mq.stop()
    shutil.rmtree(work, ignore_errors=True)

    warm_at = int(args.scrapes * args.warmup_share)
    warm = [s for s in samples if s[0] >= warm_at] or samples[-1:]
    rss_warm, rss_end = warm[0][1], samples[-1][1]
    rss_peak = max(s[1] for s in warm)
    growth = rss_end - rss_warm
    bound = max(args.rss_bound_mb, args.rss_bound_share * rss_warm)
    threads_warm_max = max(s[2] for s in samples if s[0] <= max(warm_at, 1)) if warm_at else samples[0][2]
    fds_warm_max = max(s[3] for s in samples if s[0] <= max(warm_at, 1)) if warm_at else samples[0][3]
    ordered = sorted(latencies)
    p50, p99 = ordered[len(ordered) // 2] * 1000, ordered[int(len(ordered) * 0.99) - 1] * 1000
    first = sorted(latencies[: max(1, warm_at)])
    last = sorted(latencies[-max(1, warm_at):])
    print(f"soak: {args.scrapes} scrapes in {elapsed:.1f} s, {failures} failed, {series} series per scrape, "
          f"collectors on a 1 s interval (about {elapsed:.0f} collections each)")
    print(f"scrape latency: median {p50:.2f} ms, p99 {p99:.2f} ms; median of the last {len(last)} / of the first "
          f"{len(first)}: ratio {last[len(last) // 2] / first[len(first) // 2]:.2f}")
    print(f"RSS: {samples[0][1]:.1f} MB at start, {rss_warm:.1f} MB after warm-up (scrape {warm[0][0]}), "
          f"peak {rss_peak:.1f} MB, {rss_end:.1f} MB at the end; growth {growth:+.1f} MB "
          f"(ratio end/warm {rss_end / rss_warm:.3f}, bound {bound:.1f} MB); "
          f"slope after warm-up {slope_per_1000([(s[0], s[1]) for s in warm]):+.3f} MB per 1,000 scrapes")
    print(f"threads: warm max {threads_warm_max}, end {samples[-1][2]}; descriptors: warm max {fds_warm_max}, "
          f"end {samples[-1][3]}")
    problems = []
    if failures:
        problems.append(f"{failures} scrapes failed")
    if growth > bound:
        problems.append(f"RSS grew {growth:.1f} MB after warm-up (bound {bound:.1f} MB)")
    if samples[-1][2] > threads_warm_max:
        problems.append("more threads at the end than during warm-up")
    if samples[-1][3] > fds_warm_max:
        problems.append("more descriptors at the end than during warm-up")
    print("result: " + ("FAIL: " + "; ".join(problems) if problems else "ok"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
