#!/usr/bin/env python3
"""CPU per command of the fleet's simulated hosts (tests/fleet.py): the forced command tests/fakehost.sh (dash,
then ``exec cat`` of the capture) against tests/fakehost.py (a Python start per command, the reference measured
in the same run), both through the real loopback sshd and ssh, as bench/fleet.py's exporters reach them.

Three fleets of one healthy HP-UX host: ``sh`` (the fleet as it is), ``python`` (``Fleet(entry="python")``, the
same but fakehost.py for every command) and ``python+rc`` (the fleet as it was: fakehost.py, and the account's
bash reading its ~/.bashrc for every command, ``account_rc=True``).  Each is reached through a kept master
connection (``ssh -M``, as the /probe shards keep theirs) so no handshake is measured; then ``--commands``
commands to each, in ``--rounds`` batches in turn so that the machine's other load weighs on all alike:
``sar -d 5 1`` (a healthy call, the capture printed) and ``sarx -d`` (a word no host has, refused with 127).  CPU
is read from /proc: the sshd side is the session process under the fleet's sshd with its waited-for children (the
login shell, the forced command, cat: what the simulator costs), the client side the ssh clients (waited for by
this script) and the master.  It prints CPU milliseconds per command and the ratios python / sh and python+rc /
sh of the sshd side, and exits 1 when a healthy command through fakehost.sh is not at least ``--min-ratio`` (3)
times cheaper there than through fakehost.py with the same login shell.

    python bench/fakehost_cost.py [--commands 200] [--rounds 10] [--min-ratio 3] [--json F]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO))
from _common import cpu_seconds, stop_process  # noqa: E402

from tests.fleet import Fleet, capture, plan  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")
KINDS = {"healthy": ["sar", "-d", "5", "1"], "refused": ["sarx", "-d"]}
SIDES = {"sh": ("sh", False), "python": ("python", False), "python+rc": ("python", True)}  # entry, account_rc


def tree_cpu(root: int) -> float:
    """utime+stime+cutime+cstime (s) of ``root`` and every live process under it: the children they waited for
    are in their cutime/cstime, the live ones counted once."""
    parents, times = {}, {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(pid)] = int(fields[1])
        times[int(pid)] = sum(int(value) for value in fields[11:15])
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += times.get(pid, 0)
        todo += [child for child, parent in parents.items() if parent == pid]
    return total / CLK_TCK


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class Side:
    """One fleet (one forced command), its host and the kept master connection to it."""

    def __init__(self, work: Path, name: str, key_cache: Path) -> None:
        self.name = name
        entry, account_rc = SIDES[name]
        self.fleet = Fleet(work, plan(1), key_cache=key_cache, entry=entry, account_rc=account_rc).start()
        self.host = next(iter(self.fleet.hosts))
        self.socket = work / "master"
        self.ssh = ["ssh", "-F", str(self.fleet.ssh_config), "-o", f"ControlPath={self.socket}"]
        self.master = subprocess.Popen([*self.ssh, "-o", "ControlMaster=yes", "-o", "ControlPersist=no", "-N",
                                        self.host], stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 30  # a bound on the handshake, not a measurement
        while subprocess.run([*self.ssh, "-O", "check", self.host], capture_output=True).returncode != 0:
            if self.master.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"{name}: the master connection to {self.host} did not come up")
            time.sleep(0.1)
        self.cpu = {kind: {"sshd": 0.0, "client": 0.0, "master": 0.0, "commands": 0} for kind in KINDS}

    def batch(self, kind: str, count: int) -> None:
        expected = capture(self.fleet.hosts[self.host].platform, "sar") if kind == "healthy" else ""
        sshd, client, master = tree_cpu(self.fleet.sshd.proc.pid), children_cpu(), cpu_seconds(self.master.pid)
        for _ in range(count):
            result = subprocess.run([*self.ssh, "-o", "ControlMaster=no", self.host, *KINDS[kind]],
                                    capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
            status = 0 if kind == "healthy" else 127
            if result.returncode != status or result.stdout != expected:
                raise SystemExit(f"{self.name} {kind}: exit {result.returncode}, {len(result.stdout)} characters "
                                 f"(expected {status}, {len(expected)}): {result.stderr[-500:]}")
        time.sleep(0.2)  # the session processes reap the last forced command
        figures = self.cpu[kind]
        figures["sshd"] += tree_cpu(self.fleet.sshd.proc.pid) - sshd
        figures["client"] += children_cpu() - client
        figures["master"] += cpu_seconds(self.master.pid) - master
        figures["commands"] += count

    def per_command_ms(self, kind: str) -> dict[str, float]:
        figures = self.cpu[kind]
        parts = {part: 1000 * figures[part] / figures["commands"] for part in ("sshd", "client", "master")}
        return {**parts, "total": sum(parts.values())}

    def stop(self) -> None:
        stop_process(self.master)
        self.fleet.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commands", type=int, default=200, help="commands of each kind to each forced command")
    parser.add_argument("--rounds", type=int, default=10, help="alternating batches the commands are split in")
    parser.add_argument("--min-ratio", type=float, default=3.0,
                        help="the sshd-side CPU of a healthy command: python / sh at least this")
    parser.add_argument("--json", metavar="FILE", help="write the figures here too")
    args = parser.parse_args()
    per_round = max(1, args.commands // args.rounds)
    with tempfile.TemporaryDirectory(prefix="fakehost-cost-") as tmp:
        sides = {}
        try:
            for index, name in enumerate(SIDES):
                sides[name] = Side(Path(tmp) / f"fleet{index}", name, Path(tmp) / "keys")
            names = list(SIDES)
            for round_number in range(args.rounds):
                order = names[round_number % len(names):] + names[:round_number % len(names)]
                for kind in KINDS:
                    for name in order:
                        sides[name].batch(kind, per_round)
        finally:
            for side in sides.values():
                side.stop()
    figures = {name: {kind: side.per_command_ms(kind) for kind in KINDS} for name, side in sides.items()}
    print(f"CPU per command, ms ({per_round * args.rounds} commands of each kind to each; sshd: the session "
          "processes, login shell, forced command and cat; client: the ssh mux clients; master: the kept "
          "connection)")
    print(f"{'forced command':<16} {'kind':<8} {'sshd':>7} {'client':>7} {'master':>7} {'total':>7}")
    for name in SIDES:
        for kind in KINDS:
            row = figures[name][kind]
            print(f"{name:<16} {kind:<8} {row['sshd']:7.2f} {row['client']:7.2f} {row['master']:7.2f} "
                  f"{row['total']:7.2f}")
    ratios: dict[str, dict[str, float]] = {}
    for reference in ("python", "python+rc"):
        ratios[reference] = {}
        for kind in KINDS:
            for part in ("sshd", "total"):
                new = figures["sh"][kind][part]
                ratios[reference][f"{kind}_{part}"] = figures[reference][kind][part] / new if new > 0 else float("inf")
        print(f"ratio {reference}/sh: " + ", ".join(f"{name} {value:.1f}x"
                                                    for name, value in ratios[reference].items()))
    if args.json:
        Path(args.json).write_text(json.dumps({"per_command_ms": figures, "ratios_over_sh": ratios,
                                               "commands": per_round * args.rounds}, indent=2))
    if ratios["python"]["healthy_sshd"] < args.min_ratio:
        print(f"result: FAILED: a healthy command through fakehost.sh costs the sshd side only "
              f"{ratios['python']['healthy_sshd']:.1f}x less than through fakehost.py (goal {args.min_ratio:g}x)")
        return 1
    print("result: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
