"""Parsers for the host-wide /proc files: /proc/stat, /proc/meminfo, /proc/vmstat, /proc/diskstats,
/proc/net/dev and /proc/loadavg.

Each takes the file's text and returns plain data, tested on recorded text from several kernel generations.
Hand-written rather than psutil: psutil's procfs root is process-wide and it adjusts counters that go down.
Numbers are read by :func:`parse_int` and :func:`parse_decimal`: the kernel writes plain decimal digits, at most
a 64-bit value, so a field of hundreds of digits, ``nan``, ``inf``, ``1e400`` or ``1_0`` makes that line not count
(a number that would overflow a float later, in a division or at the exposition, never gets that far).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...machine.numbers import MAX_DIGITS, decimal
from ...machine.procfs import parse_int
from ...machine.proctypes import USER_HZ

SECTOR_BYTES = 512  # /proc/diskstats always counts 512-byte sectors, whatever the device's sector size

CPU_MODES = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
def parse_decimal(token: str) -> float:
    """A field written as a plain decimal (``0.53``, ``12``, ``.5``): ValueError for ``nan``, ``inf``, ``1e400``,
    ``0x1`` and numbers of more than 2 x :data:`MAX_DIGITS` digits, so the value is always finite (the strict
    reader, machine/numbers.py)."""
    value = decimal(token, "-", bare_point=True, max_length=2 * MAX_DIGITS + 2)
    if value is None:
        raise ValueError(f"not a kernel decimal: {token[:40]!r}")
    return value


@dataclass
class Stat:
    """/proc/stat: CPU times (seconds) per CPU and mode, and the vmstat system counters."""

    cpus: dict[str, dict[str, float]] = field(default_factory=dict)  # "0" -> mode -> seconds
    guest: dict[str, dict[str, float]] = field(default_factory=dict)  # "0" -> {"user", "nice"} -> seconds
    context_switches: float | None = None
    interrupts: float | None = None
    forks: float | None = None
    procs_running: float | None = None
    procs_blocked: float | None = None
    boot_time: float | None = None


def parse_stat(text: str, user_hz: int = USER_HZ) -> Stat:
    """/proc/stat; a line that is not what the kernel writes (a field that is not a 64-bit integer included) is
    skipped, the others still count."""
    stat = Stat()
    for line in text.splitlines():
        try:
            _stat_line(stat, line.split(), user_hz)
        except (ValueError, IndexError):
            continue
    return stat


def _stat_line(stat: Stat, parts: list[str], user_hz: int) -> None:
    if not parts:
        return
    key = parts[0]
    if key.startswith("cpu") and key != "cpu":
        values = [parse_int(v) for v in parts[1:11]]
        values += [0] * (10 - len(values))
        stat.cpus[key[3:]] = {mode: values[i] / user_hz for i, mode in enumerate(CPU_MODES)}
        stat.guest[key[3:]] = {"user": values[8] / user_hz, "nice": values[9] / user_hz}
    elif key in _STAT_COUNTERS:
        setattr(stat, _STAT_COUNTERS[key], float(parse_int(parts[1])))


_STAT_COUNTERS = {"ctxt": "context_switches", "intr": "interrupts", "processes": "forks",
                  "procs_running": "procs_running", "procs_blocked": "procs_blocked", "btime": "boot_time"}


def parse_key_values(text: str, prefixes: tuple[str, ...] | None = None) -> dict[str, int]:
    """/proc/vmstat (``name value`` lines); with ``prefixes``, only the names that start with one of them (the
    collector reads about 20 of the 170-300 lines on every pass)."""
    result = {}
    for line in text.splitlines():
        if prefixes is not None and not line.startswith(prefixes):
            continue
        parts = line.split()
        if len(parts) == 2:
            try:
                result[parts[0]] = parse_int(parts[1])
            except ValueError:
                continue
    return result


def parse_meminfo(text: str) -> dict[str, int]:
    """/proc/meminfo in bytes (``MemTotal:  16305516 kB``)."""
    result = {}
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        parts = rest.split()
        if not parts:
            continue
        try:
            value = parse_int(parts[0])
        except ValueError:
            continue
        if len(parts) > 1 and parts[1] == "kB":
            value *= 1024
        result[name.strip()] = value
    return result


@dataclass
class DiskStats:
    device: str
    reads_completed: int
    reads_merged: int
    sectors_read: int
    read_ms: int
    writes_completed: int
    writes_merged: int
    sectors_written: int
    write_ms: int
    io_now: int
    io_ms: int
    io_weighted_ms: int
    discards_completed: int | None = None
    discards_merged: int | None = None
    sectors_discarded: int | None = None
    discard_ms: int | None = None
    flushes_completed: int | None = None
    flush_ms: int | None = None


def parse_diskstats(text: str) -> list[DiskStats]:
    """/proc/diskstats: 14 fields up to 4.18, 18 from 4.18 (discards), 20 from 5.5 (flushes)."""
    disks = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 14:
            continue
        try:
            nums = [parse_int(v) for v in parts[3:]]
        except ValueError:
            continue
        disk = DiskStats(parts[2], *nums[:11])
        if len(nums) >= 15:
            disk.discards_completed, disk.discards_merged, disk.sectors_discarded, disk.discard_ms = nums[11:15]
        if len(nums) >= 17:
            disk.flushes_completed, disk.flush_ms = nums[15:17]
        disks.append(disk)
    return disks


@dataclass
class NetDev:
    device: str
    receive_bytes: int
    receive_packets: int
    receive_errors: int
    receive_drop: int
    transmit_bytes: int
    transmit_packets: int
    transmit_errors: int
    transmit_drop: int


def parse_net_dev(text: str) -> list[NetDev]:
    """/proc/net/dev: two header lines, then ``iface: 8 receive fields 8 transmit fields``."""
    result = []
    for line in text.splitlines():
        name, sep, rest = line.partition(":")
        if not sep or "|" in line:
            continue
        parts = rest.split()
        if len(parts) < 16:
            continue
        try:
            v = [parse_int(x) for x in parts[:16]]
        except ValueError:
            continue
        result.append(NetDev(name.strip(), v[0], v[1], v[2], v[3], v[8], v[9], v[10], v[11]))
    return result


def parse_loadavg(text: str) -> tuple[float, float, float]:
    """/proc/loadavg's three averages; ValueError when the text is not that (fewer than three fields, or one that
    is not a plain decimal such as ``nan``: the host collector reports it)."""
    parts = text.split()
    if len(parts) < 3:
        raise ValueError("not /proc/loadavg: fewer than three fields")
    try:
        return parse_decimal(parts[0]), parse_decimal(parts[1]), parse_decimal(parts[2])
    except ValueError as exc:
        raise ValueError(f"not /proc/loadavg: {exc}") from None
