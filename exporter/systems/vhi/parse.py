"""Parsers for what the VHI collector reads under /proc: a CPU affinity list and the kernel's TCP socket tables.

Pure functions from the files' text to plain data, tested on recorded text.  Hand-written: psutil reads the
socket tables of the exporter's own network namespace (/proc/net), and its procfs root is one process-wide setting.
"""

from __future__ import annotations

# The kernel's CPU numbers stay under NR_CPUS (8,192 at most on today's kernels); a larger number is not a CPU.
MAX_CPU = 8192


def parse_cpu_list(text: str) -> set[int]:
    """``Cpus_allowed_list`` of /proc/<pid>/status: ``0-3,6,8-9`` -> {0, 1, 2, 3, 6, 8, 9}.

    A part that is not a number or a range, or that reaches MAX_CPU, is skipped; the others still count."""
    cpus: set[int] = set()
    for part in text.strip().split(","):
        start, _, end = part.strip().partition("-")
        end = end or start
        if not (start.isascii() and start.isdigit() and end.isascii() and end.isdigit()):
            continue
        if len(start) > 5 or len(end) > 5 or int(end) >= MAX_CPU or int(start) > int(end):
            continue
        cpus.update(range(int(start), int(end) + 1))
    return cpus


def parse_tcp(text: str) -> dict[int, tuple[int, str]]:
    """/proc/<pid>/net/tcp or tcp6: socket inode -> (remote port, state as the kernel's hex code)."""
    result = {}
    for line in text.splitlines()[1:]:
        parts = line.split()
        if len(parts) < 10:
            continue
        try:
            remote_port = int(parts[2].rsplit(":", 1)[1], 16)
            inode = int(parts[9])
        except (ValueError, IndexError):
            continue
        if inode:
            result[inode] = (remote_port, parts[3])
    return result
