#!/usr/bin/env python3
"""CPU per hour at a Prometheus scrape interval: middleware-exporter against node_exporter, in one run.

Starts both exporters (default configuration unless --config) on free loopback ports, optionally with N extra
idle processes (the issue's figure: 2,000), lets them settle, then scrapes each one every --scrape-interval seconds
the way Prometheus does (its Accept header, gzip) for --duration seconds.  The figure is everything each server
process spent over that window, background collection and scrapes alike: utime+stime+cutime+cstime from
/proc/<pid>/stat (children included: commands a collector starts count), scaled to one hour.

Before that window, an idle window (--idle-seconds, no scrapes at all, starting --settle-seconds after the first
scrape) gives the CPU spent when nobody reads: node_exporter collects only on scrape, so its figure is ~0.

Prints both figures per exporter, the ratio ours / node_exporter's, and exits 1 when ours is over
node_exporter's CPU per hour (or over --idle-max-ms-per-s at rest).

    python bench/cpu_hour_bench.py --scrape-interval 15 --duration 120 --extra-processes 2000
"""

from __future__ import annotations

import argparse
import http.client
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import node_exporter_binary  # noqa: E402
from scrape_bench import CLK_TCK, Target, free_port, process_count  # noqa: E402


def cpu_seconds_with_children(pid: int) -> float:
    """utime + stime + cutime + cstime of a process (all its threads, and its waited-for children), seconds."""
    with open(f"/proc/{pid}/stat", "rb") as handle:
        text = handle.read().decode("ascii", "replace")
    fields = text[text.rindex(")") + 2:].split()  # fields[0] is field 3 (state); utime is field 14
    return sum(int(value) for value in fields[11:15]) / CLK_TCK


RUNS_RE = re.compile(rb'^middleware_scrape_collector_runs_total\{collector="([^"]+)"\} ([0-9.e+]+)$', re.M)


def collector_runs(target: Target) -> dict[str, int]:
    """Runs started per collector, from one plain scrape of our exporter (taken outside the measured window)."""
    response, body = target.get("/metrics")
    if response.status != 200:
        raise RuntimeError(f"{target.name}: /metrics answered {response.status}")
    return {name.decode(): int(float(value)) for name, value in RUNS_RE.findall(body)}


CGROUP_ROOTS = ("/sys/fs/cgroup/cpuacct", "/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup")


class CpuMeter:
    """The CPU a server spends, in seconds: from a cgroup of its own where one can be made (root; cgroup v1
    ``cpuacct.usage`` or v2 ``cpu.stat`` ``usage_usec``: every thread, ended ones and children included, to the
    nanosecond or microsecond), else from /proc/<pid>/stat in clock ticks (10 ms: a 120 s window of 8 scrapes
    then moves by 1.25 ms per scrape for one tick either way)."""

    def __init__(self, name: str, pid: int) -> None:
        self.pid = pid
        self.group: str | None = None
        for root in CGROUP_ROOTS:
            v1 = os.path.exists(os.path.join(root, "cpuacct.usage"))
            if not v1 and not os.path.exists(os.path.join(root, "cgroup.controllers")):
                continue
            group = os.path.join(root, f"cpu-hour-bench-{os.getpid()}-{name}")
            try:
                os.makedirs(group, exist_ok=True)
                with open(os.path.join(group, "cgroup.procs"), "w") as handle:
                    handle.write(str(pid))
            except OSError:
                self._remove(group)
                continue
            self.group, self.v1 = group, v1
            break
        self.method = "cgroup" if self.group else "clock ticks"

    def seconds(self) -> float:
        if self.group is None:
            return cpu_seconds_with_children(self.pid)
        if self.v1:
            with open(os.path.join(self.group, "cpuacct.usage")) as handle:
                return int(handle.read()) / 1e9
        with open(os.path.join(self.group, "cpu.stat")) as handle:
            for line in handle:
                if line.startswith("usage_usec "):
                    return int(line.split()[1]) / 1e6
        raise RuntimeError(f"{self.group}/cpu.stat has no usage_usec")

    def close(self) -> None:
        """After the server has stopped: the cgroup goes (it is empty then)."""
        if self.group is not None:
            self._remove(self.group)

    @staticmethod
    def _remove(group: str) -> None:
        for _ in range(50):
            try:
                os.rmdir(group)
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.1)  # the last task is still leaving


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scrape-interval", type=float, default=15.0, help="seconds between scrapes (default 15)")
    parser.add_argument("--duration", type=float, default=120.0,
                        help="seconds of the scraped window (default 120; an hour is extrapolated from it)")
    parser.add_argument("--idle-seconds", type=float, default=30.0,
                        help="seconds of the quiet window before it, no scrapes (default 30; 0: skip)")
    parser.add_argument("--settle-seconds", type=float, default=20.0,
                        help="seconds after start-up and the first scrape before anything is measured; longer than "
                             "the collectors' interval (15 s), so that the collection owed to that scrape is not "
                             "counted as CPU at rest (default 20)")
    parser.add_argument("--extra-processes", type=int, default=0, metavar="N",
                        help="start N idle processes first (the issue's figure uses 2,000)")
    parser.add_argument("--idle-max-ms-per-s", type=float, default=0.5, metavar="MS",
                        help="exit 1 when our CPU at rest is over this many ms per second (default 0.5)")
    parser.add_argument("--node-exporter", metavar="PATH",
                        help="node_exporter binary (default: prometheus-node-exporter or node_exporter on PATH)")
    parser.add_argument("--config", metavar="FILE", help="configuration file passed to our exporter")
    args = parser.parse_args(argv)
    if args.scrape_interval <= 0 or args.duration < args.scrape_interval or args.idle_seconds < 0:
        parser.error("--scrape-interval must be > 0, --duration >= --scrape-interval, --idle-seconds >= 0")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    node_binary = node_exporter_binary(args.node_exporter)
    if not node_binary:
        print("node_exporter not found; install it (apt-get install prometheus-node-exporter) or pass "
              "--node-exporter PATH", file=sys.stderr)
        return 2
    logdir = tempfile.mkdtemp(prefix="cpu-hour-bench-")
    our_port = free_port()
    node_port = free_port()
    while node_port == our_port:
        node_port = free_port()
    our_argv = [sys.executable, "-m", "exporter", "run", "--web.listen-address", f"127.0.0.1:{our_port}"]
    if args.config:
        our_argv += ["--config", os.path.abspath(args.config)]
    targets = [
        Target("middleware-exporter", our_argv, our_port, os.path.join(logdir, "middleware-exporter.log")),
        Target("node_exporter", [node_binary, f"--web.listen-address=127.0.0.1:{node_port}"], node_port,
               os.path.join(logdir, "node_exporter.log")),
    ]

    def on_sigterm(signum, frame):  # SIGTERM/SIGHUP become an exception so that `finally` cleans up
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, on_sigterm)
    signal.signal(signal.SIGHUP, on_sigterm)
    sleepers: list[subprocess.Popen] = []
    meters: dict[str, CpuMeter] = {}
    try:
        for _ in range(args.extra_processes):
            sleepers.append(subprocess.Popen(["sleep", "3600"], stdin=subprocess.DEVNULL,
                                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        for target in targets:
            target.start()
            meters[target.name] = CpuMeter(target.name.replace("_", "-"), target.pid)
        for target in targets:
            target.wait_until_ready(None)
            target.scrape()  # both served one scrape: our first collection is in place
        time.sleep(args.settle_seconds)
        idle: dict[str, float] = {}
        if args.idle_seconds:
            before = {t.name: meters[t.name].seconds() for t in targets}
            started = time.monotonic()
            time.sleep(args.idle_seconds)
            elapsed = time.monotonic() - started
            idle = {t.name: 1000 * (meters[t.name].seconds() - before[t.name]) / elapsed for t in targets}
        runs_before = collector_runs(targets[0])
        before = {t.name: meters[t.name].seconds() for t in targets}
        started = time.monotonic()
        scrapes = 0
        next_due = started
        while True:
            for target in targets:
                target.scrape()
            scrapes += 1
            next_due += args.scrape_interval
            if next_due >= started + args.duration:
                break
            time.sleep(max(0.0, next_due - time.monotonic()))
        time.sleep(max(0.0, started + args.duration - time.monotonic()))
        elapsed = time.monotonic() - started
        spent = {t.name: meters[t.name].seconds() - before[t.name] for t in targets}
        runs_after = collector_runs(targets[0])
        processes = process_count()
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (RuntimeError, OSError, http.client.HTTPException) as exc:
        print(f"cpu_hour_bench: {exc}", file=sys.stderr)
        return 1
    finally:
        for target in targets:
            target.stop()
        for meter in meters.values():
            meter.close()
        for sleeper in sleepers:
            sleeper.kill()
        for sleeper in sleepers:
            sleeper.wait()
        shutil.rmtree(logdir, ignore_errors=True)

    per_hour = {name: seconds * 3600 / elapsed for name, seconds in spent.items()}
    ours, node = per_hour["middleware-exporter"], per_hour["node_exporter"]
    print(f"cpu_hour_bench: {processes} processes, {os.cpu_count()} CPUs, scrape every {args.scrape_interval:g}s, "
          f"{scrapes} scrapes each over {elapsed:.1f}s" + (f", idle window {args.idle_seconds:g}s" if idle else "")
          + f"; CPU read from {', '.join(sorted({m.method for m in meters.values()}))}")
    print(f"{'exporter':<22}{'CPU s/hour':>12}{'ms/s':>9}{'ms/scrape':>11}{'idle ms/s':>11}")
    for target in targets:
        seconds = spent[target.name]
        print(f"{target.name:<22}{per_hour[target.name]:>12.2f}{1000 * seconds / elapsed:>9.3f}"
              f"{1000 * seconds / scrapes:>11.2f}" + (f"{idle[target.name]:>11.3f}" if idle else ""))
    # what our exporter did in the window, so that two runs of one tree can be compared (a run with more
    # collections than scrapes spent CPU on snapshots nobody read)
    runs = {name: runs_after.get(name, 0) - count for name, count in sorted(runs_before.items())}
    print("collections in the scraped window: " + ", ".join(f"{name} {count}" for name, count in runs.items()))
    ratio = ours / node if node else float("inf")
    print(f"ratio ours/node_exporter: CPU per hour {ratio:.2f}x"
          + (f", idle {idle['middleware-exporter']:.3f} vs {idle['node_exporter']:.3f} ms/s" if idle else ""))
    failed = False
    if ours > node:
        print(f"cpu_hour_bench: CPU per hour {ours:.2f}s is over node_exporter's {node:.2f}s", file=sys.stderr)
        failed = True
    if idle and idle["middleware-exporter"] > args.idle_max_ms_per_s:
        print(f"cpu_hour_bench: {idle['middleware-exporter']:.3f} ms/s of CPU at rest, over "
              f"{args.idle_max_ms_per_s:g}", file=sys.stderr)
        failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
