#!/usr/bin/env python3
"""Basic auth timing: does a wrong password cost the same whether the user exists or not?

Starts the exporter on loopback with a web config holding bcrypt users (by default ``prometheus`` at cost 10, as
``htpasswd -nBC 10`` makes, and ``grafana`` at cost 11: hashes made by different tools or at different times
differ in cost, the shape that made an unknown user cost 180 ms against 95 ms for a known one) and sends wrong
passwords, each a new one (a repeated one is answered from the refusals' cache), in rounds: one per known user and
one for an unknown user per round, in a shuffled order, each after a pause as long as the previous answer took (the
exporter rests that long after a refusal; the pause keeps that rest out of the figures).

It prints the median answer time per user and, for each known user, the ratio unknown / known: the median of the
ratios within a round (measured against each other, moments apart, so that the machine's other load weighs on both
alike). It exits 1 when a ratio is off 1 by more than ``--tolerance`` (15 %) or an answer was not 401.
``--cost`` and ``--second-cost`` set the hashes' costs (``--second-cost 0``: one user only); ``--short`` is the
small form.

    python bench/auth_timing.py                  # 20 rounds, costs 10 and 11
    python bench/auth_timing.py --short          # 8 rounds, costs 8 and 9
"""

from __future__ import annotations

import argparse
import http.client
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bcrypt
from _common import free_port, stop_process

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "tests"))
from fakes.guessers import basic  # noqa: E402

UNKNOWN = "nobody"


def timed_get(port: int, authorization: str | None) -> tuple[int, float]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    started = time.perf_counter()
    try:
        conn.request("GET", "/metrics", headers={"Authorization": authorization} if authorization else {})
        response = conn.getresponse()
        response.read()
        status = response.status
    except (OSError, http.client.HTTPException):
        status = 0
    finally:
        conn.close()
    return status, time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--cost", type=int, default=10, help="bcrypt cost of the user prometheus")
    parser.add_argument("--second-cost", type=int, default=11, help="bcrypt cost of the user grafana (0: none)")
    parser.add_argument("--tolerance", type=float, default=0.15, help="largest |unknown / known - 1|")
    parser.add_argument("--short", action="store_true", help="8 rounds, costs 8 and 9")
    args = parser.parse_args()
    if args.short:
        args.rounds, args.cost, args.second_cost = 8, 8, 9

    users = {"prometheus": args.cost}
    if args.second_cost:
        users["grafana"] = args.second_cost
    folder = Path(tempfile.mkdtemp(prefix="auth-timing-"))
    lines = [f"  {name}: {bcrypt.hashpw(b'right', bcrypt.gensalt(cost)).decode()}" for name, cost in users.items()]
    (folder / "web.yml").write_text("basic_auth_users:\n" + "\n".join(lines) + "\n")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MIDDLEWARE_EXPORTER_")}
    log = open(folder / "exporter.log", "wb")  # noqa: SIM115 - closed at the end
    proc = subprocess.Popen([sys.executable, "-m", "exporter", "run", "--web.listen-address", f"127.0.0.1:{port}",
                             "--web.config.file", str(folder / "web.yml"), "--no-collector.process"],
                            cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    times: dict[str, list[float]] = {name: [] for name in [*users, UNKNOWN]}
    statuses: set[int] = set()
    try:
        deadline = time.monotonic() + 30
        while timed_get(port, None)[0] != 401:  # no credentials: refused without bcrypt
            if proc.poll() is not None or time.monotonic() > deadline:
                print((folder / "exporter.log").read_text(errors="replace"), file=sys.stderr)
                return 1
            time.sleep(0.2)
        names = list(times)
        for round_ in range(-1, args.rounds):  # round -1 warms up (imports, the dummy hashes), not counted
            random.shuffle(names)
            for name in names:
                status, took = timed_get(port, basic(name, f"wrong-{round_}-{random.random()}"))
                statuses.add(status)
                if round_ >= 0:
                    times[name].append(took)
                time.sleep(took * 1.2)  # the exporter rests as long after a refusal
    finally:
        stop_process(proc, 20)
        log.close()

    medians = {name: statistics.median(values) for name, values in times.items()}
    print(f"{'user':<12} {'cost':>4} {'median ms':>9} {'min ms':>8} {'max ms':>8}")
    for name, values in times.items():
        cost = users.get(name, "-")
        print(f"{name:<12} {cost:>4} {medians[name] * 1000:>9.1f} {min(values) * 1000:>8.1f} "
              f"{max(values) * 1000:>8.1f}")
    failures = []
    for name in users:
        ratio = statistics.median(u / k for u, k in zip(times[UNKNOWN], times[name], strict=True))
        print(f"ratio unknown / {name} {ratio:.3f}")
        if abs(ratio - 1) > args.tolerance:
            failures.append(f"an unknown user costs {ratio:.2f} x what a wrong password for {name} costs "
                            f"(tolerance {args.tolerance:.0%}): timing tells which users exist")
    if statuses != {401}:
        failures.append(f"answers other than 401: {sorted(statuses)}")
    for failure in failures:
        print(f"FAIL: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
