#!/usr/bin/env python3
"""Scrape benchmark: middleware-exporter against node_exporter on this machine.

Starts both exporters on free loopback ports, warms them up, then scrapes each one N times the way Prometheus
does (its Accept header, gzip) over one keep-alive connection per target, alternating between the targets in
blocks so that both see the same machine conditions.  Reports per target:

* latency of a scrape (request sent to body read): median and p99, in ms;
* CPU per scrape: the server process's utime+stime (/proc/<pid>/stat) summed over its own scrape blocks / N;
* CPU over the whole window / N: everything the process used while the benchmark ran (its own scrapes, the
  other target's blocks, and background work: our exporter collects on timers, node_exporter only on scrape);
* idle CPU: ms of CPU per second over a quiet window with no scrapes at all (background cost alone);
* response size (gzip as sent, and decompressed), series (non-comment lines), RSS (VmRSS) after the run.

It prints a table and a ratios line (ours / node_exporter), optionally writes JSON.

First, in this process and before the servers start, it times the shared process pass: one walk over /proc plus
the process, VHI and HPOM (MSI) collectors reading it, as the exporter runs them, with the walks per interval and,
as a reference measured in the same run, a bare read of every /proc/<pid>/stat.  It exits 1 when the pass misses
its target (--pass-target-ms, 50 ms on a 2-CPU machine with 2,000 extra processes).

    python bench/scrape_bench.py --scrapes 200 [--warmup 10] [--node-exporter PATH] [--config FILE] [--json FILE]
    python bench/scrape_bench.py --extra-processes 2000     # the process pass at a busy process table
"""

from __future__ import annotations

import argparse
import gzip
import http.client
import json
import math
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from _common import node_exporter_binary

REPO_ROOT = Path(__file__).resolve().parent.parent
ACCEPT = ("application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
          "text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
HEADERS = {"Accept": ACCEPT, "Accept-Encoding": "gzip", "User-Agent": "scrape-bench/1"}
CLK_TCK = os.sysconf("SC_CLK_TCK")
STARTUP_SECONDS = 30.0


# ---- processes ------------------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    """utime + stime of the whole process (all threads, including exited ones), in seconds."""
    with open(f"/proc/{pid}/stat", "rb") as handle:
        text = handle.read().decode("ascii", "replace")
    fields = text[text.rindex(")") + 2:].split()  # fields[0] is field 3 (state); utime is field 14
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def process_count() -> int:
    return sum(1 for name in os.listdir("/proc") if name.isdigit())


@dataclass
class Target:
    name: str
    argv: list[str]
    port: int
    log_path: str
    process: subprocess.Popen | None = None
    conn: http.client.HTTPConnection | None = None
    reconnects: int = 0

    def start(self) -> None:
        with open(self.log_path, "wb") as log:
            # Own session: a Ctrl-C at the terminal reaches only this script, which then stops the servers.
            try:
                self.process = subprocess.Popen(self.argv, cwd=REPO_ROOT, stdin=subprocess.DEVNULL, stdout=log,
                                                stderr=subprocess.STDOUT, start_new_session=True)
            except OSError as exc:
                raise RuntimeError(f"cannot start {self.name} ({self.argv[0]}): {exc}") from None

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(Path(self.log_path).read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None
        proc = self.process
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)

    # -- HTTP --
    def get(self, path: str, headers: dict[str, str] | None = None, timeout: float = 10.0):
        """One GET on the keep-alive connection (reopened once if the server closed it while idle)."""
        for attempt in (1, 2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
            try:
                self.conn.request("GET", path, headers=headers or {})
                response = self.conn.getresponse()
                body = response.read()
                return response, body
            except (http.client.RemoteDisconnected, ConnectionError, http.client.BadStatusLine):
                self.conn.close()
                self.conn = None
                if attempt == 2:
                    raise
                self.reconnects += 1
        raise AssertionError("unreachable")

    def wait_until_ready(self, ready_path: str | None) -> None:
        deadline = time.monotonic() + STARTUP_SECONDS
        paths = ["/metrics"] + ([ready_path] if ready_path else [])
        while True:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited with status {self.process.returncode}:\n{self.log_tail()}")
            try:
                if all(self.get(p, timeout=2.0)[0].status == 200 for p in paths):
                    return
            except (OSError, http.client.HTTPException):
                if self.conn is not None:
                    self.conn.close()
                    self.conn = None
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name} did not answer {', '.join(paths)} with 200 within "
                                   f"{STARTUP_SECONDS:g}s:\n{self.log_tail()}")
            time.sleep(0.1)

    def scrape(self) -> tuple[float, int, bytes, str]:
        """(seconds, bytes on the wire, decompressed body, content type) of one Prometheus-style scrape."""
        start = time.perf_counter()
        response, body = self.get("/metrics", HEADERS)
        elapsed = time.perf_counter() - start
        if response.status != 200:
            raise RuntimeError(f"{self.name}: /metrics answered {response.status}: {body[:200]!r}")
        wire = len(body)
        if (response.getheader("Content-Encoding") or "").lower() == "gzip":
            body = gzip.decompress(body)
        return elapsed, wire, body, response.getheader("Content-Type") or ""


# ---- measurement ----------------------------------------------------------------------------------------
@dataclass
class Result:
    name: str
    pid: int
    content_type: str = ""
    latencies_ms: list[float] = field(default_factory=list, repr=False)
    median_ms: float = 0.0
    p99_ms: float = 0.0
    cpu_per_scrape_ms: float = 0.0  # CPU during its own scrape blocks / N
    cpu_window_per_scrape_ms: float = 0.0  # CPU over the whole measurement window / N
    idle_cpu_ms_per_s: float = 0.0  # CPU per second over the quiet window
    cpu_per_scrape_net_ms: float = 0.0  # cpu_per_scrape minus the idle rate over the same blocks
    gzip_bytes: int = 0
    plain_bytes: int = 0
    series: int = 0
    rss_mb: float = 0.0
    reconnects: int = 0


def percentile(values: list[float], pct: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[rank - 1]


def count_series(body: bytes) -> int:
    return sum(1 for line in body.decode("utf-8", "replace").splitlines() if line and not line.startswith("#"))


def run(args: argparse.Namespace, targets: list[Target]) -> list[Result]:
    ours, node = targets
    for target in targets:
        target.start()
    ours.wait_until_ready("/readyz")
    node.wait_until_ready(None)
    results = {t.name: Result(t.name, t.pid) for t in targets}

    for target in targets:
        for _ in range(args.warmup):
            target.scrape()

    # Quiet window: no scrapes, both processes left alone; what they burn here is background cost.
    idle_start = {t.name: cpu_seconds(t.pid) for t in targets}
    t0 = time.monotonic()
    time.sleep(args.idle_seconds)
    idle_elapsed = time.monotonic() - t0
    for target in targets:
        used = cpu_seconds(target.pid) - idle_start[target.name]
        results[target.name].idle_cpu_ms_per_s = used * 1000 / idle_elapsed

    # Measured phase: blocks of --block scrapes, alternating targets, until each has had N.  Both start on a
    # fresh connection (uvicorn drops keep-alive connections idle for 5 s, as the quiet window's would be).
    for target in targets:
        if target.conn is not None:
            target.conn.close()
            target.conn = None
        target.reconnects = 0
    own_cpu = {t.name: 0.0 for t in targets}
    own_time = {t.name: 0.0 for t in targets}
    done = {t.name: 0 for t in targets}
    window_start = {t.name: cpu_seconds(t.pid) for t in targets}
    last = {}
    while any(done[t.name] < args.scrapes for t in targets):
        for target in targets:
            n = min(args.block, args.scrapes - done[target.name])
            if n <= 0:
                continue
            c0, w0 = cpu_seconds(target.pid), time.monotonic()
            for _ in range(n):
                elapsed, wire, body, ctype = target.scrape()
                results[target.name].latencies_ms.append(elapsed * 1000)
                last[target.name] = (wire, body, ctype)
            own_time[target.name] += time.monotonic() - w0
            own_cpu[target.name] += cpu_seconds(target.pid) - c0
            done[target.name] += n
    for target in targets:
        r = results[target.name]
        n = args.scrapes
        r.cpu_window_per_scrape_ms = (cpu_seconds(target.pid) - window_start[target.name]) * 1000 / n
        r.cpu_per_scrape_ms = own_cpu[target.name] * 1000 / n
        r.cpu_per_scrape_net_ms = (own_cpu[target.name] * 1000 - r.idle_cpu_ms_per_s * own_time[target.name]) / n
        r.median_ms = statistics.median(r.latencies_ms)
        r.p99_ms = percentile(r.latencies_ms, 99)
        wire, body, ctype = last[target.name]
        r.gzip_bytes, r.plain_bytes, r.series = wire, len(body), count_series(body)
        r.content_type = ctype.split(";")[0]
        r.rss_mb = rss_mb(target.pid)
        r.reconnects = target.reconnects
    return [results[t.name] for t in targets]


# ---- the shared process pass (in this process) --------------------------------------------------------------
PASS_READERS = ("process", "vhi", "hpom")  # the collectors that read the process table
PASS_CONFIG = """\
collectors:
  host: {enabled: false}
  vhi: {enabled: true}
  hpom: {enabled: true, msi_programs: [opcmsgm], queue_dir: /nonexistent, opcsv: null, ovc: null, ovconfget: null}
"""


@dataclass
class ProcessPass:
    processes: int
    intervals: int
    target_ms: float
    pass_ms: float  # median: one walk, then the process, VHI and HPOM (MSI) collections on it
    pass_p90_ms: float
    walk_ms: float  # median: the walk alone
    unshared_ms: float  # median: the same collections, each with a table of its own (one walk each)
    reference_ms: float  # median: a bare read of every /proc/<pid>/stat, no parsing (same run, interleaved)
    walks_per_pass: float  # in the timed passes
    walks_per_interval: float  # with the collectors ticking together in the scheduler's threads

    @property
    def met(self) -> bool:
        return self.pass_ms <= self.target_ms


def bare_read_of_every_stat() -> None:
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            fd = os.open(f"/proc/{name}/stat", os.O_RDONLY)
        except OSError:
            continue
        try:
            os.read(fd, 4096)
        except OSError:
            pass
        finally:
            os.close(fd)


def measure_process_pass(intervals: int, target_ms: float) -> ProcessPass:
    sys.path.insert(0, str(REPO_ROOT))
    from exporter.cli import build_collectors
    from exporter.core.collector import Context
    from exporter.core.metrics import MetricBatch
    from exporter.core.scheduler import Scheduler
    from exporter.machine.procfs import walk_processes
    from exporter.registry import load

    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as handle:
        handle.write(PASS_CONFIG)
        handle.flush()
        collectors = build_collectors(load(handle.name, environ={}))  # one Context, as `run` builds them
    readers = [c for c in collectors if c.name in PASS_READERS]
    unshared = [type(c)(c.settings, Context()) for c in readers]
    table = readers[0].context.processes

    def collect(group) -> Callable[[], None]:
        def run() -> None:
            for collector in group:
                collector.collect(MetricBatch(collector.specs()))
        return run

    timed: dict[str, list[float]] = {"reference": [], "walk": [], "pass": [], "unshared": []}
    steps = {"reference": bare_read_of_every_stat, "walk": lambda: walk_processes("/proc"),
             "pass": collect(readers), "unshared": collect(unshared)}
    collect(readers)()  # warm-up: imports, regex caches
    walks = table.walks
    for _ in range(intervals):
        for name, step in steps.items():
            start = time.perf_counter()
            step()
            timed[name].append((time.perf_counter() - start) * 1000)
    walks_per_pass = (table.walks - walks) / intervals
    scheduler = Scheduler(collectors)
    walks = table.walks
    for _ in range(3):
        scheduler.run_once()  # every collector at once, each in its own thread, as at a shared tick
    return ProcessPass(
        processes=process_count(), intervals=intervals, target_ms=target_ms,
        pass_ms=statistics.median(timed["pass"]), pass_p90_ms=percentile(timed["pass"], 90),
        walk_ms=statistics.median(timed["walk"]), unshared_ms=statistics.median(timed["unshared"]),
        reference_ms=statistics.median(timed["reference"]), walks_per_pass=walks_per_pass,
        walks_per_interval=(table.walks - walks) / 3)


def print_process_pass(pp: ProcessPass) -> None:
    print(f"shared process pass: {pp.processes} processes; collectors {', '.join(PASS_READERS)} on one table; "
          f"median of {pp.intervals} intervals")
    print(f"  pass {pp.pass_ms:.1f} ms (p90 {pp.pass_p90_ms:.1f}; the walk {pp.walk_ms:.1f} ms, then the three "
          f"collections on it); target <= {pp.target_ms:g} ms: {'met' if pp.met else 'MISSED'}")
    print(f"  walks per interval: {pp.walks_per_interval:g} (collectors ticking together; {pp.walks_per_pass:g} in "
          f"the timed passes); a table each instead: {len(PASS_READERS)} walks, {pp.unshared_ms:.1f} ms "
          f"({ratio(pp.unshared_ms, pp.pass_ms)})")
    print(f"  reference, same run: a bare read of every /proc/<pid>/stat {pp.reference_ms:.1f} ms; "
          f"pass / reference {ratio(pp.pass_ms, pp.reference_ms)}")
    print()


# ---- output ---------------------------------------------------------------------------------------------
COLUMNS = [  # (heading, attribute, format)
    ("p50 ms", "median_ms", "{:.2f}"),
    ("p99 ms", "p99_ms", "{:.2f}"),
    ("cpu/scrape ms", "cpu_per_scrape_ms", "{:.2f}"),
    ("net of idle ms", "cpu_per_scrape_net_ms", "{:.2f}"),
    ("window cpu/N ms", "cpu_window_per_scrape_ms", "{:.2f}"),
    ("idle cpu ms/s", "idle_cpu_ms_per_s", "{:.2f}"),
    ("gzip B", "gzip_bytes", "{:d}"),
    ("plain B", "plain_bytes", "{:d}"),
    ("series", "series", "{:d}"),
    ("RSS MB", "rss_mb", "{:.1f}"),
]


def ratio(a: float, b: float) -> str:
    if b == 0:
        return "n/a" if a == 0 else "inf"
    return f"{a / b:.2f}x"


def print_table(results: list[Result], args: argparse.Namespace, extra: dict) -> None:
    ours, node = results
    label_width = max(len(r.name) for r in results + [Result("ratio ours/node", 0)])
    widths = [max(len(h), 10) for h, _, _ in COLUMNS]
    columns = list(zip(COLUMNS, widths, strict=True))
    header = " ".join([f"{'target':<{label_width}}"] + [f"{h:>{w}}" for (h, _, _), w in columns])
    print(header)
    print("-" * len(header))
    for r in results:
        cells = [f"{fmt.format(getattr(r, attr)):>{w}}" for (_, attr, fmt), w in columns]
        print(" ".join([f"{r.name:<{label_width}}"] + cells))
    cells = [f"{ratio(getattr(ours, attr), getattr(node, attr)):>{w}}" for (_, attr, _), w in columns]
    print(" ".join([f"{'ratio ours/node':<{label_width}}"] + cells))
    print()
    print(f"scrapes per target: {args.scrapes} (warm-up {args.warmup}, blocks of {args.block}, alternating); "
          f"quiet window {args.idle_seconds:g}s; machine: {os.cpu_count()} CPUs, {extra['processes']} processes")
    for r in results:
        print(f"  {r.name}: pid {r.pid}, format served {r.content_type}, keep-alive reconnects during measurement "
              f"{r.reconnects}")
    print("cpu/scrape = server CPU during its own scrape blocks / N; net of idle = that minus the quiet-window "
          "rate over the same time;\nwindow cpu/N = server CPU over the whole measured window (both targets' "
          "blocks, incl. background collection) / N;\nidle cpu = CPU per second with no scrapes (background "
          "collection only). CPU is read from /proc/<pid>/stat in 1/" f"{CLK_TCK} s ticks.")


# ---- main -----------------------------------------------------------------------------------------------
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scrapes", type=int, default=200, help="measured scrapes per target (default 200)")
    parser.add_argument("--warmup", type=int, default=10, help="unmeasured scrapes per target first (default 10)")
    parser.add_argument("--block", type=int, default=20,
                        help="scrapes in a row before switching to the other target (default 20)")
    parser.add_argument("--idle-seconds", type=float, default=16.0,
                        help="length of the quiet window for the idle CPU figure; at least one process-collector "
                             "interval (default 16)")
    parser.add_argument("--node-exporter", metavar="PATH",
                        help="node_exporter binary (default: prometheus-node-exporter or node_exporter on PATH)")
    parser.add_argument("--config", metavar="FILE", help="configuration file passed to our exporter")
    parser.add_argument("--extra-processes", type=int, default=0, metavar="N",
                        help="start N idle processes first, to measure a busy process table (the performance "
                             "anchors used 2,075 processes); they are stopped at the end")
    parser.add_argument("--pass-intervals", type=int, default=15, metavar="N",
                        help="intervals timed for the shared process pass (default 15)")
    parser.add_argument("--pass-target-ms", type=float, default=50.0, metavar="MS",
                        help="exit 1 when the median shared process pass takes longer (default 50)")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON to FILE")
    args = parser.parse_args(argv)
    if args.scrapes < 1 or args.warmup < 0 or args.block < 1 or args.idle_seconds <= 0 or args.pass_intervals < 1:
        parser.error("--scrapes, --block and --pass-intervals must be >= 1, --warmup >= 0, --idle-seconds > 0")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    node_binary = node_exporter_binary(args.node_exporter)
    if not node_binary:
        print("node_exporter not found; install it (apt-get install prometheus-node-exporter) or pass "
              "--node-exporter PATH", file=sys.stderr)
        return 2
    logdir = tempfile.mkdtemp(prefix="scrape-bench-")
    our_port, node_port = free_port(), free_port()
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

    def on_sigterm(signum, frame):  # turn SIGTERM/SIGHUP into an exception so that `finally` cleans up
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, on_sigterm)
    signal.signal(signal.SIGHUP, on_sigterm)
    sleepers: list[subprocess.Popen] = []
    try:
        for _ in range(args.extra_processes):
            sleepers.append(subprocess.Popen(["sleep", "3600"], stdin=subprocess.DEVNULL,
                                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        process_pass = measure_process_pass(args.pass_intervals, args.pass_target_ms)
        print_process_pass(process_pass)
        results = run(args, targets)
        extra = {"processes": process_count()}
        try:
            conn = http.client.HTTPConnection("127.0.0.1", our_port, timeout=5)
            conn.request("GET", "/api/v1/collectors")
            status = json.loads(conn.getresponse().read())
            conn.close()
            extra["collector_durations_ms"] = {c["name"]: round(1000 * (c.get("last_duration_seconds") or 0), 1)
                                               for c in status if c.get("enabled")}
            print("background collection, last run: " + ", ".join(
                f"{name} {ms} ms" for name, ms in extra["collector_durations_ms"].items()))
        except (OSError, ValueError) as exc:
            print(f"could not read /api/v1/collectors: {exc}", file=sys.stderr)
        print_table(results, args, extra)
        if args.json:
            payload = {
                "args": {k: v for k, v in vars(args).items() if k != "json"},
                "cpus": os.cpu_count(),
                "processes": extra["processes"],
                "targets": [asdict(r) for r in results],
                "process_pass": asdict(process_pass),
                "ratios_ours_over_node": {
                    attr: (getattr(results[0], attr) / getattr(results[1], attr)
                           if getattr(results[1], attr) else None)
                    for _, attr, _ in COLUMNS
                },
            }
            with open(args.json, "w") as handle:
                json.dump(payload, handle, indent=2)
            print(f"results written to {args.json}")
        if not process_pass.met:
            print(f"scrape_bench: the shared process pass took {process_pass.pass_ms:.1f} ms, over its target of "
                  f"{process_pass.target_ms:g} ms", file=sys.stderr)
            return 1
        return 0
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except RuntimeError as exc:
        print(f"scrape_bench: {exc}", file=sys.stderr)
        return 1
    finally:
        for target in targets:
            target.stop()
        for sleeper in sleepers:
            sleeper.kill()
        for sleeper in sleepers:
            sleeper.wait()
        shutil.rmtree(logdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
