"""Parsers for what the VHI collector reads under /proc: a CPU affinity list and the kernel's TCP socket tables.

Pure functions from the files' text to plain data, tested on recorded text.  Hand-written: psutil reads the
socket tables of the exporter's own network namespace (/proc/net), and its procfs root is one process-wide setting.
"""

from __future__ import annotations

from itertools import accumulate, compress

from ...machine.procfs import parse_int

# The kernel's CPU numbers stay under NR_CPUS (8,192 at most on today's kernels); a larger number is not a CPU.
MAX_CPU = 8192
# The kernel prints at most MAX_CPU / 2 parts (every other CPU: "0,2,4,..."); a list with more parts than CPUs is
# not the kernel's, and the parts after the first MAX_CPU are not read.
MAX_PARTS = MAX_CPU


def parse_cpu_list(text: str) -> set[int]:
    """``Cpus_allowed_list`` of /proc/<pid>/status: ``0-3,6,8-9`` -> {0, 1, 2, 3, 6, 8, 9}.

    A part that is not a number or a range, or that reaches MAX_CPU, is skipped; the others still count.  The work
    is linear and bounded whatever the text: each of at most MAX_PARTS parts marks where its range starts and ends
    (two additions, however wide the range and however often it repeats), then one pass up to the highest CPU
    turns the marks into the set; a list of 100,000 copies of ``0-8191`` no longer adds 8,192 CPUs 100,000 times."""
    starts = [0] * (MAX_CPU + 1)  # +1 where a range starts, -1 just after it ends (a difference array)
    top = -1
    for part in text.strip().split(",", MAX_PARTS)[:MAX_PARTS]:
        first, _, last = part.strip().partition("-")
        last = last or first
        if not (first.isascii() and first.isdigit() and last.isascii() and last.isdigit()):
            continue
        if len(first) > 5 or len(last) > 5:
            continue
        start, end = int(first), int(last)
        if end >= MAX_CPU or start > end:
            continue
        starts[start] += 1
        starts[end + 1] -= 1
        top = max(top, end)
    # a CPU is in the set where the running sum of the marks (the ranges covering it) is not 0
    return set(compress(range(top + 1), accumulate(starts[:top + 1])))


def format_cpu_list(cpus: set[int] | list[int]) -> str:
    """The kernel's list format back from a set: {0, 1, 2, 3, 8, 9, 10, 11} -> ``0-3,8-11`` (taskset takes it)."""
    parts: list[str] = []
    ordered = sorted(set(cpus))
    start = prev = None
    for cpu in [*ordered, None]:
        if cpu is not None and prev is not None and cpu == prev + 1:
            prev = cpu
            continue
        if start is not None:
            parts.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = cpu
    return ",".join(parts)


def physical_cores(topology: dict[int, tuple[str, str, set[int] | None]]) -> dict[int, frozenset[int]]:
    """CPU -> the physical core it belongs to, as the set of that core's CPUs (its hardware threads).

    ``topology`` is what sysfs says of each online CPU: (physical_package_id, core_id, thread_siblings_list).  The
    siblings list is the core itself, whatever the numbering (an 8-core SMT host lists cpu0 and cpu8 together:
    "0,8"); without it, CPUs with the same package and core id are one core.  Only the CPUs in ``topology`` (those
    the host has online) appear in the cores."""
    by_id: dict[tuple[str, str], set[int]] = {}
    for cpu, (package, core, _) in topology.items():
        by_id.setdefault((package, core), set()).add(cpu)
    result = {}
    for cpu, (package, core, siblings) in topology.items():
        members = (siblings | {cpu}) if siblings else by_id[(package, core)]
        result[cpu] = frozenset(c for c in members if c in topology)
    return result


def socket_inode(link: str) -> int | None:
    """The inode of a /proc/<pid>/fd link to a socket (``socket:[12345]``); None for any other link."""
    if not (link.startswith("socket:[") and link.endswith("]")):
        return None
    try:
        return parse_int(link[8:-1])
    except ValueError:
        return None


_HEX = frozenset("0123456789abcdefABCDEF")


def parse_tcp(text: str) -> dict[int, tuple[int, str]]:
    """/proc/<pid>/net/tcp or tcp6: socket inode -> (remote port, state as the kernel's hex code); a line whose
    remote address has no hexadecimal port (the kernel prints ``%04X``) or whose inode is not a 64-bit decimal is
    skipped."""
    result = {}
    for line in text.splitlines()[1:]:
        parts = line.split()
        if len(parts) < 10:
            continue
        _, colon, port = parts[2].rpartition(":")
        if not colon or not 1 <= len(port) <= 4 or not all(c in _HEX for c in port):  # the kernel prints %04X
            continue
        try:
            inode = parse_int(parts[9])
        except ValueError:
            continue
        remote_port = int(port, 16)
        if inode:
            result[inode] = (remote_port, parts[3])
    return result
