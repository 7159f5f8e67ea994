#!/usr/bin/env python3
"""Load benchmark for the web limits: does a normal scrape still answer in its usual time while many clients
hammer the exporter and hundreds of idle connections and half-sent requests are held open?

Starts the exporter (with ``ulimit -n 1024`` applied to it, the common default), then:

1. baseline: ``--scrapes`` scrapes the way Prometheus does (its Accept header, gzip, a new connection each);
2. load: ``--clients`` threads scraping /metrics back to back over keep-alive connections, plus ``--idle``
   connections opened and left idle (half of them send half a request and stop), while the same scrapes as in
   the baseline are measured again.

It prints the median and p95 of both runs, their ratio (load / baseline, measured in the same run), the load
clients' throughput, the exporter's descriptors, and the log lines written. It exits 1 when a figure falls short:
a measured scrape failed, its p95 under load exceeds ``--max-p95-ms``, the descriptors passed the open-file
limit, or the log grew by more than ``--max-log-lines``. ``--tls`` runs the same over TLS (a self-signed
certificate made with openssl). ``--short`` is the small form the test suite runs.

    python bench/load.py                       # 50 clients, 500 idle connections, 200 measured scrapes
    python bench/load.py --tls
    python bench/load.py --short
"""

from __future__ import annotations

import argparse
import http.client
import os
import resource
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
ACCEPT = ("application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
          "text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
HEADERS = {"Accept": ACCEPT, "Accept-Encoding": "gzip", "User-Agent": "load-bench/1"}
NOFILE = 1024


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def make_tls(folder: Path) -> tuple[Path, ssl.SSLContext]:
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", "server.key", "-out", "server.crt", "-days", "1", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"], cwd=folder, check=True,
                   capture_output=True)
    config = folder / "web.yml"
    config.write_text(f"tls_server_config:\n  cert_file: {folder / 'server.crt'}\n"
                      f"  key_file: {folder / 'server.key'}\n")
    return config, ssl.create_default_context(cafile=str(folder / "server.crt"))


def connect(port: int, ctx: ssl.SSLContext | None) -> http.client.HTTPConnection:
    if ctx is None:
        return http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    return http.client.HTTPSConnection("127.0.0.1", port, timeout=10, context=ctx)


def scrape(port: int, ctx: ssl.SSLContext | None) -> float | None:
    """Seconds for one scrape on a new connection, None when it failed."""
    start = time.perf_counter()
    conn = connect(port, ctx)
    try:
        conn.request("GET", "/metrics", headers=HEADERS)
        response = conn.getresponse()
        body = response.read()
        if response.status != 200 or not body:
            return None
    except OSError:
        return None
    finally:
        conn.close()
    return time.perf_counter() - start


def measure(port: int, ctx: ssl.SSLContext | None, count: int, pause: float) -> tuple[list[float], int]:
    times, failed = [], 0
    for _ in range(count):
        took = scrape(port, ctx)
        if took is None:
            failed += 1
        else:
            times.append(took)
        time.sleep(pause)
    return times, failed


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))] if ordered else float("inf")


class Hammer(threading.Thread):
    """One load client: scrapes back to back over a keep-alive connection, reconnecting when it is closed."""

    def __init__(self, port: int, ctx: ssl.SSLContext | None, stop: threading.Event) -> None:
        super().__init__(daemon=True)
        self.port, self.ctx, self.stop = port, ctx, stop
        self.done = self.errors = 0

    def run(self) -> None:
        conn = connect(self.port, self.ctx)
        while not self.stop.is_set():
            try:
                conn.request("GET", "/metrics", headers=HEADERS)
                response = conn.getresponse()
                response.read()
                self.done += response.status == 200
                self.errors += response.status != 200
            except (OSError, http.client.HTTPException):
                self.errors += 1
                conn.close()
                conn = connect(self.port, self.ctx)
        conn.close()


def hold_idle(port: int, count: int) -> list[socket.socket]:
    held = []
    for i in range(count):
        sock = socket.socket()
        sock.settimeout(10)
        try:
            sock.connect(("127.0.0.1", port))
            if i % 2:
                sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        except OSError:
            sock.close()
            continue
        held.append(sock)
    return held


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--idle", type=int, default=500)
    parser.add_argument("--scrapes", type=int, default=200)
    parser.add_argument("--pause", type=float, default=0.02, help="seconds between measured scrapes")
    parser.add_argument("--max-p95-ms", type=float, default=1000.0,
                        help="p95 of a measured scrape under load must stay below this (Prometheus's default "
                             "scrape_timeout is 10 s)")
    parser.add_argument("--max-log-lines", type=int, default=10)
    parser.add_argument("--tls", action="store_true")
    parser.add_argument("--short", action="store_true", help="10 clients, 100 idle connections, 30 scrapes")
    args = parser.parse_args()
    if args.short:
        args.clients, args.idle, args.scrapes = 10, 100, 30
    if resource.getrlimit(resource.RLIMIT_NOFILE)[0] < args.idle + args.clients + 100:
        print("this process needs more open files than --idle + --clients", file=sys.stderr)
        return 2

    tmp = Path(tempfile.mkdtemp(prefix="load-bench-"))
    ctx = None
    extra: list[str] = []
    if args.tls:
        config, ctx = make_tls(tmp)
        extra = ["--web.config.file", str(config)]
    port = free_port()
    log_path = tmp / "exporter.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MIDDLEWARE_EXPORTER_")}
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "exporter", "run", "--web.listen-address",
                                 f"127.0.0.1:{port}", *extra], cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=env,
                                preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (NOFILE, NOFILE)))
    try:
        deadline = time.monotonic() + 30
        while scrape(port, ctx) is None:
            if time.monotonic() > deadline or proc.poll() is not None:
                print(log_path.read_text(), file=sys.stderr)
                return 1
            time.sleep(0.2)
        measure(port, ctx, 5, 0)  # warm-up
        log_lines_before = len(log_path.read_text().splitlines())

        base, base_failed = measure(port, ctx, args.scrapes, args.pause)

        held = hold_idle(port, args.idle)
        stop = threading.Event()
        hammers = [Hammer(port, ctx, stop) for _ in range(args.clients)]
        for hammer in hammers:
            hammer.start()
        time.sleep(0.5)
        started = time.monotonic()
        loaded, loaded_failed = measure(port, ctx, args.scrapes, args.pause)
        elapsed = time.monotonic() - started
        descriptors = len(os.listdir(f"/proc/{proc.pid}/fd"))
        stop.set()
        for hammer in hammers:
            hammer.join(15)
        for sock in held:
            sock.close()
        log_lines = len(log_path.read_text().splitlines()) - log_lines_before
    finally:
        proc.terminate()
        proc.wait(10)

    served = sum(h.done for h in hammers)
    med_base, med_load = statistics.median(base or [0]), statistics.median(loaded or [0])
    print(f"exporter: ulimit -n {NOFILE}, {'TLS' if args.tls else 'plain HTTP'}; {args.clients} load clients, "
          f"{len(held)} idle connections held (of {args.idle}), {args.scrapes} measured scrapes each run")
    print(f"baseline scrape: median {med_base * 1000:.1f} ms, p95 {p95(base) * 1000:.1f} ms, failed {base_failed}")
    print(f"under load:      median {med_load * 1000:.1f} ms, p95 {p95(loaded) * 1000:.1f} ms, "
          f"failed {loaded_failed}")
    print(f"ratio load/baseline: median {med_load / med_base:.1f}, p95 {p95(loaded) / p95(base):.1f}")
    print(f"load clients: {served} scrapes served in {elapsed:.1f} s ({served / elapsed:.0f}/s), "
          f"{sum(h.errors for h in hammers)} errors")
    print(f"exporter descriptors under load: {descriptors} (limit {NOFILE}); log lines written: {log_lines}")
    problems = []
    if base_failed or loaded_failed:
        problems.append(f"{base_failed + loaded_failed} measured scrapes failed")
    if p95(loaded) * 1000 > args.max_p95_ms:
        problems.append(f"p95 under load {p95(loaded) * 1000:.0f} ms > {args.max_p95_ms:.0f} ms")
    if descriptors >= NOFILE:
        problems.append("descriptors reached the open-file limit")
    if log_lines > args.max_log_lines:
        problems.append(f"{log_lines} log lines > {args.max_log_lines}")
    print("result: " + ("ok" if not problems else "FAIL: " + "; ".join(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
