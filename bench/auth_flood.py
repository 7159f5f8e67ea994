#!/usr/bin/env python3
"""Basic auth under a password-guessing flood: do the right credentials keep getting their scrapes, and how much CPU
do the guesses cost?

Starts the exporter on loopback with a web config holding one bcrypt user (cost 8 by default: a quarter of what
``htpasswd -nBC 10`` costs, so that the flood gets through many guesses in a short run), then:

0. start: one check of a wrong password alone (the reference: ``--reference`` of them, spaced, the median), then
   ``--guessers`` threads guess while Prometheus's credentials, never accepted yet (as after a restart), are asked
   for once: the time to their 200, which must come within ``--interval`` (one scrape interval); the flood stops;
1. baseline: ``--seconds`` of scrapes with the right credentials, one every ``--every`` seconds;
2. flood: ``--guessers`` threads send wrong passwords (each a new one) back to back over keep-alive connections;
   once ``--refusals`` guesses were refused (more than the exporter's credential cache holds, at most
   ``--max-warmup`` seconds), the same scrapes as in the baseline are made for the same time, the flood going on.

It prints the time to 200 after the start and its ratio to the one check alone; for runs 1 and 2, the share of
the right-credential scrapes that got 200 and their median and p95 time, the ratios flood / baseline (measured in
the same run), what the guesses got (401 refused, 503 turned away) and the exporter's CPU in cores during each run
(from /proc/<pid>/stat). It exits 1 when a figure falls short: the right credentials did not get 200 within
``--interval`` under the start's flood, a scrape with the right credentials did not get 200, its p95 under the
flood exceeds ``--max-p95-ratio`` times the baseline's (and ``--min-p95-ms``), or the exporter used more than
``--max-cores`` during the flood. Loopback only; every run is
bounded by ``--seconds``. ``--short`` is the small form.

    python bench/auth_flood.py                 # 16 guessers, 2 x 10 s
    python bench/auth_flood.py --cost 10       # as htpasswd -nBC 10 makes them (issue 38: 503 after a start)
    python bench/auth_flood.py --short
"""

from __future__ import annotations

import argparse
import http.client
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import bcrypt
from _common import cpu_seconds, free_port, stop_process

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "tests"))
from fakes.guessers import basic, flood  # noqa: E402

PASSWORD = "bench-scrape-password"


def get(port: int, authorization: str, timeout: float = 30.0) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", "/metrics", headers={"Authorization": authorization})
        response = conn.getresponse()
        response.read()
        return response.status
    except (OSError, http.client.HTTPException):
        return 0
    finally:
        conn.close()


def scrape_run(port: int, seconds: float, every: float) -> tuple[list[int], list[float]]:
    """Right-credential scrapes, each on a new connection as Prometheus makes them after an idle interval."""
    statuses, times = [], []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        started = time.monotonic()
        statuses.append(get(port, basic("prometheus", PASSWORD)))
        times.append(time.monotonic() - started)
        time.sleep(max(0.0, every - (time.monotonic() - started)))
    return statuses, times


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--guessers", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each run")
    parser.add_argument("--every", type=float, default=0.25, help="seconds between right-credential scrapes")
    parser.add_argument("--cost", type=int, default=8, help="bcrypt cost of the user's hash")
    parser.add_argument("--refusals", type=int, default=300, help="refused guesses before the measured scrapes")
    parser.add_argument("--max-warmup", type=float, default=60.0, help="seconds to wait for --refusals at most")
    parser.add_argument("--max-p95-ratio", type=float, default=10.0)
    parser.add_argument("--min-p95-ms", type=float, default=250.0,
                        help="a flood p95 under this passes whatever the ratio (loopback baselines are ~ms)")
    parser.add_argument("--max-cores", type=float, default=1.2)
    parser.add_argument("--interval", type=float, default=15.0,
                        help="scrape interval: the right credentials must get 200 within it after the start")
    parser.add_argument("--reference", type=int, default=5, help="wrong-password checks alone, for the reference")
    parser.add_argument("--short", action="store_true", help="2 x 3 s, 8 guessers, cost 6, 150 refusals")
    args = parser.parse_args()
    if args.short:
        args.seconds, args.guessers, args.cost, args.refusals = 3.0, 8, 6, 150

    port = free_port()
    folder = Path(tempfile.mkdtemp(prefix="auth-flood-"))
    hashed = bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(args.cost)).decode()
    (folder / "web.yml").write_text(f"basic_auth_users:\n  prometheus: {hashed}\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MIDDLEWARE_EXPORTER_")}
    log = open(folder / "exporter.log", "wb")  # noqa: SIM115 - closed at the end
    proc = subprocess.Popen([sys.executable, "-m", "exporter", "run", "--web.listen-address", f"127.0.0.1:{port}",
                             "--web.config.file", str(folder / "web.yml"), "--no-collector.process"],
                            cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    start_status, start_took, start_outcomes = 0, 0.0, {}
    try:
        deadline = time.monotonic() + 30
        while get(port, "Basic") != 401:  # answering (no credentials: refused without bcrypt)
            if proc.poll() is not None or time.monotonic() > deadline:
                print((folder / "exporter.log").read_text(errors="replace"), file=sys.stderr)
                return 1
            time.sleep(0.2)
        reference = []
        for i in range(args.reference):
            started = time.monotonic()
            get(port, basic("prometheus", f"reference-{i}"))
            reference.append(time.monotonic() - started)
            time.sleep(reference[-1] * 1.2)  # the exporter rests as long after a refusal
        one_check = statistics.median(reference)

        stop = threading.Event()
        threads = flood(port, args.guessers, stop, start_outcomes)
        try:
            warmup_end = time.monotonic() + args.max_warmup
            while sum(start_outcomes.values()) < 2 * args.guessers and time.monotonic() < warmup_end:
                time.sleep(0.05)
            started = time.monotonic()
            start_status = get(port, basic("prometheus", PASSWORD), timeout=args.interval)
            start_took = time.monotonic() - started
        finally:
            stop.set()
            for thread in threads:
                thread.join(60)
        time.sleep(1)
        deadline = time.monotonic() + 30
        while get(port, basic("prometheus", PASSWORD), timeout=5) != 200:  # accepted once before the runs
            if proc.poll() is not None or time.monotonic() > deadline:
                print((folder / "exporter.log").read_text(errors="replace"), file=sys.stderr)
                return 1
            time.sleep(0.2)

        cpu0, wall0 = cpu_seconds(proc.pid), time.monotonic()
        base_status, base_times = scrape_run(port, args.seconds, args.every)
        base_cores = (cpu_seconds(proc.pid) - cpu0) / (time.monotonic() - wall0)

        outcomes: dict[int, int] = {}
        stop = threading.Event()
        cpu0, wall0 = cpu_seconds(proc.pid), time.monotonic()
        threads = flood(port, args.guessers, stop, outcomes)
        try:
            warmup_end = time.monotonic() + args.max_warmup
            while outcomes.get(401, 0) < args.refusals and time.monotonic() < warmup_end:
                time.sleep(0.1)
            flood_status, flood_times = scrape_run(port, args.seconds, args.every)
        finally:
            stop.set()
            for thread in threads:
                thread.join(60)
        flood_cores = (cpu_seconds(proc.pid) - cpu0) / (time.monotonic() - wall0)
    finally:
        stop_process(proc, 20)
        log.close()

    def ok_share(statuses: list[int]) -> float:
        return sum(s == 200 for s in statuses) / len(statuses)

    base_p95, flood_p95 = p95(base_times) * 1000, p95(flood_times) * 1000
    print(f"start: never-accepted credentials under the flood got {start_status} after {start_took:.2f} s, "
          f"{start_took / one_check:.1f} x one check alone ({one_check * 1000:.0f} ms); guesses meanwhile: "
          f"{dict(sorted(start_outcomes.items()))}")
    print(f"{'run':<9} {'scrapes':>7} {'200 share':>9} {'median ms':>9} {'p95 ms':>8} {'cores':>6}")
    print(f"{'baseline':<9} {len(base_status):>7} {ok_share(base_status):>9.3f} "
          f"{statistics.median(base_times) * 1000:>9.1f} {base_p95:>8.1f} {base_cores:>6.2f}")
    print(f"{'flood':<9} {len(flood_status):>7} {ok_share(flood_status):>9.3f} "
          f"{statistics.median(flood_times) * 1000:>9.1f} {flood_p95:>8.1f} {flood_cores:>6.2f}")
    ratio = flood_p95 / base_p95 if base_p95 else float("inf")
    print(f"success ratio flood/baseline {ok_share(flood_status) / max(ok_share(base_status), 1e-9):.3f}; "
          f"p95 ratio flood/baseline {ratio:.2f}")
    print(f"guesses: {sum(outcomes.values())} ({outcomes.get(401, 0)} refused 401, {outcomes.get(503, 0)} turned "
          f"away 503, {outcomes.get(200, 0)} accepted, {outcomes.get(0, 0)} failed) by {args.guessers} threads, "
          f"bcrypt cost {args.cost}")
    failures = []
    if start_status != 200 or start_took > args.interval:
        failures.append(f"after the start the right credentials got {start_status or 'no answer'} after "
                        f"{start_took:.1f} s under the flood (must be 200 within --interval {args.interval:g} s)")
    if outcomes.get(401, 0) < args.refusals:
        failures.append(f"only {outcomes.get(401, 0)} guesses refused within {args.max_warmup:g} s "
                        f"(--refusals {args.refusals}): the flood did not reach the exporter's checks")
    if ok_share(flood_status) < 1.0 or ok_share(base_status) < 1.0:
        failures.append(f"right-credential scrapes failed: baseline {sorted(set(base_status))}, "
                        f"flood {sorted(set(flood_status))}")
    if ratio > args.max_p95_ratio and flood_p95 > args.min_p95_ms:
        failures.append(f"p95 under the flood {flood_p95:.0f} ms is {ratio:.1f} x the baseline's")
    if flood_cores > args.max_cores:
        failures.append(f"the exporter used {flood_cores:.2f} cores during the flood (limit {args.max_cores})")
    if outcomes.get(200, 0):
        failures.append("a guess was accepted")
    for failure in failures:
        print(f"FAIL: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
