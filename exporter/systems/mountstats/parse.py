"""Pure functions of the mountstats collector: NFS client statistics of ``/proc/<pid>/mountstats`` and the server
address of each mount from ``/proc/<pid>/mountinfo``.  No I/O here.

Format (kernel ``fs/nfs`` and ``net/sunrpc`` output, as procfs ``mountstats.go`` reads it; facts in
docs/notes/host-health-design.md §2): one ``device D mounted on M with fstype T`` line per mount; an NFS one ends
with ``statvers=1.x`` and is followed by tab-indented lines (``opts:``, ``age:``, ``events:``, ``bytes:``,
``xprt:``, ``per-op statistics`` and one line per operation) up to a blank line.  A line that does not fit is
skipped and counted in :attr:`Parsed.notes`, never raised: a kernel that adds a field or a line must not cost the
other mounts' figures.  Hand-written: no Python library parses mountstats (nfs-utils' ``mountstats`` is a script).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple

from ...machine.numbers import integer
from ...machine.textlines import iter_lines

__all__ = ["BYTES_FIELDS", "EVENT_FIELDS", "Operation", "Transport", "NfsMount", "Parsed", "parse_mountstats",
           "MountInfo", "parse_mountinfo", "mount_address", "NFS_TYPES"]

MAX_LINE = 16 * 1024  # an opts line is a few hundred characters; a mount point at most PATH_MAX (4096) escaped
MAX_OPERATIONS = 256  # per mount; NFSv4.2 has about 70
MAX_TRANSPORTS = 64  # per mount; nconnect allows 16
MAX_COUNTER = 2**64 - 1  # the kernel prints unsigned 64-bit counters
NFS_TYPES = ("nfs", "nfs4")

BYTES_FIELDS = ("read", "write", "direct_read", "direct_write", "total_read", "total_write", "read_pages",
                "write_pages")
# The 27 counters of the events: line in kernel order (procfs NFSEventsStats).  congestion_wait is not exported
# (node_exporter does not either; the kernel no longer counts it).
EVENT_FIELDS = ("inode_revalidate", "dnode_revalidate", "data_invalidate", "attribute_invalidate", "vfs_open",
                "vfs_lookup", "vfs_access", "vfs_update_page", "vfs_read_page", "vfs_read_pages", "vfs_write_page",
                "vfs_write_pages", "vfs_getdents", "vfs_setattr", "vfs_flush", "vfs_fsync", "vfs_lock",
                "vfs_file_release", "congestion_wait", "truncation", "write_extension", "silly_rename",
                "short_read", "short_write", "jukebox_delay", "pnfs_read", "pnfs_write")

# The numbers of an xprt: line after the protocol, per protocol (kernel xs_tcp_print_stats, xs_udp_print_stats,
# xs_local_print_stats, xprt_rdma_print_stats); the last three exist from statvers 1.1 on (tcp, udp, local).
# connect_time is jiffies on older kernels and seconds on newer ones; like node_exporter, it is not exported.
_TCP = ("port", "bind", "connect", "connect_time", "idle_time", "sends", "receives", "bad_xids", "active_requests",
        "backlog", "max_slots", "sending_queue", "pending_queue")
_LAYOUTS: dict[str, tuple[tuple[str, ...], int]] = {  # protocol -> (field names, minimum count)
    "tcp": (_TCP, 10),
    "udp": (("port", "bind", "sends", "receives", "bad_xids", "active_requests", "backlog", "max_slots",
             "sending_queue", "pending_queue"), 7),
    "local": (_TCP[1:], 9),
    "rdma": (_TCP[:10], 10),  # then RDMA's own counters, not exported (node_exporter neither)
}
# Lines of an NFS entry that carry nothing exported here.
_IGNORED_KEYS = {"impl_id:", "caps:", "nfsv4:", "sec:", "fsc:", "RPC"}

_OCTAL_ESCAPE = re.compile(r"\\([0-7]{3})")


def _unescape(text: str) -> str:
    # The kernel writes space, tab, newline and backslash in mount points and devices as "\040" and the like.
    return _OCTAL_ESCAPE.sub(lambda m: chr(int(m.group(1), 8)), text) if "\\" in text else text


def _numbers(tokens: list[str]) -> list[int] | None:
    """Unsigned 64-bit decimal counters, or None if any token is not one (ASCII digits only: str.isdigit
    accepts other scripts' digits)."""
    values = []
    for token in tokens:
        value = integer(token, "", 20)  # the strict reader (machine/numbers.py)
        if value is None or value > MAX_COUNTER:
            return None
        values.append(value)
    return values


@dataclass(frozen=True)
class Operation:
    name: str
    requests: int
    transmissions: int
    major_timeouts: int
    sent_bytes: int
    received_bytes: int
    queue_ms: int
    response_ms: int  # RTT
    request_ms: int  # execute: from queueing to the end of the reply
    errors: int | None  # 9th field; None on kernels that print 8


@dataclass(frozen=True)
class Transport:
    protocol: str
    fields: dict[str, int]  # only the fields this line carries (see _LAYOUTS)


@dataclass
class NfsMount:
    index: int  # the entry's position among all mounts of the file (mountinfo lists them in the same order)
    device: str  # the export, server:/path
    mountpoint: str
    fstype: str
    statvers: str
    line: int
    options: dict[str, str] = field(default_factory=dict)
    age: int | None = None
    bytes: dict[str, int] | None = None
    events: dict[str, int] | None = None
    transports: list[Transport] = field(default_factory=list)
    operations: list[Operation] = field(default_factory=list)

    @property
    def protocol(self) -> str:
        """The transport protocol: the first xprt: line's (node_exporter's label), else the proto= option."""
        return self.transports[0].protocol if self.transports else self.options.get("proto", "")


@dataclass
class Parsed:
    mounts: list[NfsMount]  # NFS entries with statistics, in file order
    entries: int  # device lines in all
    notes: dict[str, list[int]] = field(default_factory=dict)  # why a line was skipped -> [count, first line]

    def note(self, reason: str, line: int) -> None:
        entry = self.notes.get(reason)
        if entry is None:
            self.notes[reason] = [1, line]
        else:
            entry[0] += 1

    @property
    def skipped(self) -> int:
        return sum(count for count, _ in self.notes.values())

    def summary(self, limit: int = 4) -> str:
        """The skipped lines in one text: how many, and each reason with its count and first line number."""
        if not self.notes:
            return ""
        parts = [f"{count} × {reason} (first at line {first})"
                 for reason, (count, first) in list(self.notes.items())[:limit]]
        more = len(self.notes) - limit
        if more > 0:
            parts.append(f"{more} more reasons")
        return f"skipped {self.skipped} lines: " + "; ".join(parts)


def _device_line(tokens: list[str]) -> tuple[str, str, str, str] | None:
    """(device, mount point, fstype, statvers) of ``device D mounted on M with fstype T [statvers=V]``."""
    if len(tokens) < 8 or tokens[2:4] != ["mounted", "on"] or tokens[5:7] != ["with", "fstype"]:
        return None
    statvers = tokens[8].partition("statvers=")[2] if len(tokens) > 8 else ""
    return _unescape(tokens[1]), _unescape(tokens[4]), tokens[7], statvers


def _operation(tokens: list[str]) -> Operation | str:
    if len(tokens) < 9 or not tokens[0].endswith(":") or len(tokens[0]) < 2:
        return "operation: expected NAME: and at least 8 numbers"
    numbers = _numbers(tokens[1:])
    if numbers is None:
        return "operation: not a counter"
    return Operation(tokens[0][:-1], *numbers[:8], errors=numbers[8] if len(numbers) > 8 else None)


def _transport(tokens: list[str]) -> Transport | str:
    layout = _LAYOUTS.get(tokens[1]) if len(tokens) > 1 else None
    if layout is None:
        return "xprt: unknown protocol"
    names, minimum = layout
    numbers = _numbers(tokens[2:])
    if numbers is None or len(numbers) < minimum:
        return f"xprt {tokens[1]}: expected at least {minimum} numbers"
    return Transport(tokens[1], dict(zip(names, numbers, strict=False)))


def _named(tokens: list[str], names: tuple[str, ...]) -> dict[str, int] | str:
    numbers = _numbers(tokens[1:])
    if numbers is None or len(numbers) < len(names):
        return f"{tokens[0]} expected {len(names)} numbers"
    return dict(zip(names, numbers, strict=False))


def _stat_line(mount: NfsMount, tokens: list[str]) -> str | None:
    """Read one line of an NFS entry (before the per-op lines) into ``mount``; a reason if it was skipped."""
    key = tokens[0]
    if key == "opts:":
        if len(tokens) > 1:
            for option in tokens[1].split(","):
                name, _, value = option.partition("=")
                mount.options[name] = value
        return None
    if key == "age:":
        numbers = _numbers(tokens[1:2])
        if not numbers:
            return "age: not a number"
        mount.age = numbers[0]
        return None
    if key in ("bytes:", "events:"):
        result = _named(tokens, BYTES_FIELDS if key == "bytes:" else EVENT_FIELDS)
        if isinstance(result, str):
            return result
        if key == "bytes:":
            mount.bytes = result
        else:
            mount.events = result
        return None
    if key == "xprt:":
        if len(mount.transports) >= MAX_TRANSPORTS:
            return f"xprt: more than {MAX_TRANSPORTS} per mount"
        transport = _transport(tokens)
        if isinstance(transport, str):
            return transport
        mount.transports.append(transport)
        return None
    if key in _IGNORED_KEYS:
        return None
    return "unknown line in an NFS entry"


def parse_mountstats(text: str) -> Parsed:
    """The NFS entries of a mountstats text with their statistics; other mounts only count in ``entries``."""
    parsed = Parsed([], 0)
    mount: NfsMount | None = None
    in_ops = False
    for number, line in enumerate(iter_lines(text), 1):
        if len(line) > MAX_LINE:
            parsed.note(f"line longer than {MAX_LINE} characters", number)
            continue
        tokens = line.split()
        if not tokens:
            mount, in_ops = None, False  # a blank line ends an entry
            continue
        if tokens[0] == "device" and not line[0].isspace():
            in_ops = False
            index = parsed.entries
            parsed.entries += 1
            device = _device_line(tokens)
            if device is None:
                mount = None
                parsed.note("malformed device line", number)
            elif device[2] in NFS_TYPES and device[3]:
                mount = NfsMount(index, device[0], device[1], device[2], device[3], number)
                parsed.mounts.append(mount)
            else:
                mount = None  # not NFS, or NFS without statistics
            continue
        if mount is None:
            if not line[0].isspace():
                parsed.note("line outside a mount entry", number)
            continue  # an indented line after a mount without statistics: nothing to read
        if in_ops:
            if len(mount.operations) >= MAX_OPERATIONS:
                parsed.note(f"more than {MAX_OPERATIONS} operations per mount", number)
                continue
            operation = _operation(tokens)
            if isinstance(operation, str):
                parsed.note(operation, number)
            elif any(op.name == operation.name for op in mount.operations):
                parsed.note("operation listed twice in one entry", number)  # would be a duplicate series
            else:
                mount.operations.append(operation)
            continue
        if tokens[0] == "per-op":
            in_ops = True
            continue
        reason = _stat_line(mount, tokens)
        if reason is not None:
            parsed.note(reason, number)
    return parsed


class MountInfo(NamedTuple):
    mountpoint: str
    fstype: str
    source: str
    super_options: dict[str, str]


def parse_mountinfo(text: str) -> list[MountInfo]:
    """The entries of a /proc/<pid>/mountinfo text in file order (one per mount, a malformed line gives an empty
    entry so that positions still match mountstats's)."""
    entries = []
    for line in iter_lines(text):
        tokens = line.split()
        if not tokens:
            continue
        try:
            dash = tokens.index("-", 6)
            fstype, source, options = tokens[dash + 1:dash + 4]
        except ValueError:
            entries.append(MountInfo("", "", "", {}))
            continue
        super_options = {}
        for option in options.split(","):
            name, _, value = option.partition("=")
            super_options[name] = value
        entries.append(MountInfo(_unescape(tokens[4]), fstype, _unescape(source), super_options))
    return entries


def mount_address(mount: NfsMount, infos: list[MountInfo]) -> str:
    """The server address (``addr=`` super option) of ``mount``: from the mountinfo entry at the same position, as
    node_exporter takes it, when that entry is the same mount point; else (a mount came or went between the two
    reads) from the last entry with the same mount point and export; '' if none."""
    if mount.index < len(infos) and infos[mount.index].mountpoint == mount.mountpoint:
        return infos[mount.index].super_options.get("addr", "")
    for info in reversed(infos):
        if info.mountpoint == mount.mountpoint and info.source == mount.device:
            return info.super_options.get("addr", "")
    return ""
