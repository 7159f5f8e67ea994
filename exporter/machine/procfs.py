"""Reading /proc: files as text, and one shared walk over the process table per interval.

The root is configurable (``paths.procfs``) so that a container can read the host's /proc mounted elsewhere and
golden tests can point the collectors at a recorded tree.  :class:`ProcessTable` walks the process table once per
interval for every collector that reads processes (process groups, VHI, HPOM MSI) instead of once each; where
/proc is not Linux's it walks through psutil (``psutil_procs.py``, :func:`choose_backend`).  The host-wide files
are parsed in ``exporter/systems/host/parse.py``.  The mount table (:func:`read_mount_table`: PID 1's, else the
exporter's own) is read here for every system that needs it (the file-system collector, Oracle's NFS checks).
"""

from __future__ import annotations

import os
import re
import sys
import threading
import time
from dataclasses import dataclass
from typing import Callable, NamedTuple

from .numbers import MAX_DIGITS, integer
from .proctypes import ProcStat
from .textlines import iter_lines

PROC_READ_BYTES = 4096  # one read returns all of /proc/<pid>/stat (52 numbers, a 64-byte name) or comm


def parse_int(token: str) -> int:
    """A /proc field the kernel writes as a (64-bit) decimal integer, with an optional minus; ValueError for
    anything else: more than :data:`MAX_DIGITS` digits (it would overflow a float later: in a division or at the
    exposition), non-ASCII digits (``int('٣')`` is 3), ``1_0``, ``+1``, blanks."""
    value = integer(token, "-", MAX_DIGITS)  # the strict reader's rules (machine/numbers.py)
    if value is None:
        raise ValueError(f"not a kernel integer: {token[:40]!r}")
    return value


def read_text(path: str) -> str:
    with open(path, "rb") as handle:
        return handle.read().decode("utf-8", "replace")


# ---- the mount table (the file-system collector and Oracle's NFS checks) ------------------------------------------
# The kernel writes space, tab, newline and backslash in a mount table as three-digit octal escapes ("\040").
_OCTAL_ESCAPE = re.compile(r"\\([0-7]{3})")


class Mount(NamedTuple):
    source: str  # the device field
    mountpoint: str
    fstype: str
    options: str


def _unescape(field: str) -> str:
    # Hand-written: no library parses a mount table from a given text (psutil reads only the live one).
    return _OCTAL_ESCAPE.sub(lambda m: chr(int(m.group(1), 8)), field)


def parse_mounts(text: str) -> list[Mount]:
    """The mounts of a /proc/<pid>/mounts text, in file order, octal escapes decoded; short lines are skipped."""
    mounts = []
    for line in iter_lines(text):
        parts = line.split()
        if len(parts) >= 4:
            mounts.append(Mount(_unescape(parts[0]), _unescape(parts[1]), parts[2], parts[3]))
    return mounts


class MountTable(NamedTuple):
    mounts: list[Mount]
    host: bool  # PID 1's table (the host's mount namespace); False: the exporter's own
    path: str  # the file read
    problem: str | None  # why PID 1's table was not read (None when it was)


def read_mount_table(procfs: str) -> MountTable:
    """The host's mount table: PID 1's (``<procfs>/1/mounts``), else the exporter's own one.

    ``<procfs>/mounts`` is a link to ``self/mounts``, the mount namespace of the process reading it: in a container
    with the host's /proc mounted (the chart's /host/proc) that is the container's, and under systemd's
    ProtectSystem a private copy.  PID 1's table is the host's; it is world-readable and needs no capability (only
    a /proc mounted with hidepid hides it).  The own table (``mounts``, then ``self/mounts``: a recorded tree may
    hold either) comes with ``problem`` saying why.  Neither readable: the OSError of PID 1's table."""
    host = os.path.join(procfs, "1", "mounts")
    try:
        return MountTable(parse_mounts(read_text(host)), True, host, None)
    except OSError as exc:
        error = exc
    problem = f"cannot read the host's mount table {host}: {error.strerror or error}"
    for own in (os.path.join(procfs, "mounts"), os.path.join(procfs, "self", "mounts")):
        try:
            text = read_text(own)
        except OSError:
            continue
        return MountTable(parse_mounts(text), False, own, problem)
    raise error


BACKENDS = ("auto", "procfs", "psutil", "text")  # text: the host collector's sar/vmstat/iostat back-end


def is_linux_procfs(root: str) -> bool:
    """Whether ``root`` holds Linux's /proc: a ``stat`` file with per-CPU lines and a ``btime`` line (Solaris and
    AIX have a /proc without it, BSDs usually none, Windows none; a recorded Linux tree has it anywhere)."""
    try:
        text = read_text(os.path.join(root, "stat"))
    except OSError:
        return False
    lines = text.splitlines()
    return any(line.startswith("cpu") for line in lines) and any(line.startswith("btime ") for line in lines)


def choose_backend(setting: str, root: str, platform: str | None = None) -> str:
    """``procfs``, ``psutil`` or ``text`` for a collector's ``backend`` setting.  ``auto`` keeps /proc on Linux (a
    wrong ``paths.procfs`` must fail there, not quietly read the exporter's own /proc through psutil) and wherever
    ``root`` holds a Linux-shaped /proc (a recorded tree); psutil otherwise.  ``text`` (the host collector's
    sar/vmstat/iostat commands) is only ever chosen explicitly."""
    if setting not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, not {setting!r}")
    if setting != "auto":
        return setting
    platform = sys.platform if platform is None else platform
    return "procfs" if platform.startswith("linux") or is_linux_procfs(root) else "psutil"


def parse_pid_stat(text: str) -> ProcStat:
    # comm is in parentheses and may itself contain spaces and parentheses: split at the last ')'.
    open_paren = text.index("(")
    close_paren = text.rindex(")")
    pid = parse_int(text[:open_paren].strip())
    comm = text[open_paren + 1:close_paren]
    rest = text[close_paren + 2:].split()
    # rest[0] is field 3 (state); field N is rest[N - 3]
    return ProcStat(
        pid=pid,
        comm=comm,
        state=rest[0],
        utime=parse_int(rest[11]),
        stime=parse_int(rest[12]),
        threads=parse_int(rest[17]),
        starttime=parse_int(rest[19]),
        rss_pages=parse_int(rest[21]),
        minflt=parse_int(rest[7]),
        majflt=parse_int(rest[9]),
        vsize=parse_int(rest[20]),
    )


def boot_time(procfs: str) -> float:
    """Unix time the host booted: the ``btime`` line of <procfs>/stat, a kernel integer (never inf or nan from a
    garbled line); ValueError without one, OSError when the file cannot be read."""
    for line in read_text(os.path.join(procfs, "stat")).splitlines():
        if line.startswith("btime "):
            return float(parse_int(line.split()[1]))
    raise ValueError("no btime line in /proc/stat")


def parse_pid_io(text: str) -> tuple[int, int]:
    """``read_bytes`` and ``write_bytes`` of /proc/<pid>/io: bytes the process caused to be fetched from and sent
    to the storage layer (process-exporter's read/write bytes; ``rchar``/``wchar`` also count page-cache hits)."""
    values: dict[str, int] = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key in ("read_bytes", "write_bytes"):
            values[key] = parse_int(value.strip())
    return values["read_bytes"], values["write_bytes"]


def parse_nofile_limit(text: str) -> float:
    """The soft ``Max open files`` of /proc/<pid>/limits (``inf`` for unlimited)."""
    for line in text.splitlines():
        if line.startswith("Max open files"):
            soft = line[len("Max open files"):].split()[0]
            return float("inf") if soft == "unlimited" else float(parse_int(soft))
    raise ValueError("no 'Max open files' line")


@dataclass
class ProcStatus:
    """The fields of /proc/<pid>/status the process collector uses."""

    uid: int  # effective user id (the owner of /proc/<pid> for a dumpable process)
    voluntary_ctxt_switches: int
    nonvoluntary_ctxt_switches: int


def parse_pid_status(text: str) -> ProcStatus:
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key in ("Uid", "voluntary_ctxt_switches", "nonvoluntary_ctxt_switches"):
            fields[key] = value.strip()
    return ProcStatus(uid=parse_int(fields["Uid"].split()[1]),
                      voluntary_ctxt_switches=parse_int(fields["voluntary_ctxt_switches"]),
                      nonvoluntary_ctxt_switches=parse_int(fields["nonvoluntary_ctxt_switches"]))


_UNSET: object = object()


class ProcessEntry:
    """One process of a walk: its name at once; its stat numbers and command line read on first use.

    Most processes only have their name compared, so /proc/<pid>/stat (twice the kernel's work of /proc/<pid>/comm)
    is read for the few that match.  Entries are shared between collector threads; two threads asking at once may
    both read the file, and either reading is a valid one.
    """

    __slots__ = ("pid", "comm", "path", "_raw", "_stat", "_cmdline", "_status")

    # What the per-process readers below can give on this back-end (the psutil entries list fewer).
    extras = frozenset({"io", "fds", "limits", "status", "page_faults", "thread_states"})

    def __init__(self, pid: int, comm: str, path: str, raw: bytes | None = None) -> None:
        self.pid = pid
        self.comm = comm
        self.path = path  # the /proc/<pid> directory
        self._raw = raw  # the stat line, when the walk had to read it for the name
        self._stat: object = _UNSET
        self._cmdline: object = _UNSET
        self._status: object = _UNSET

    def stat(self) -> ProcStat | None:
        """The parsed stat line; None if the process has exited since the walk or the line is garbled."""
        if self._stat is _UNSET:
            try:
                raw = self._raw if self._raw is not None else _read_bytes(self.path + "/stat")
                self._stat = parse_pid_stat(raw.decode("utf-8", "replace"))
            except (OSError, ValueError, IndexError):
                self._stat = None
        return self._stat  # type: ignore[return-value]

    def cmdline(self) -> str:
        """The command line, arguments joined by spaces ("" for kernel threads and processes gone since)."""
        if self._cmdline is _UNSET:
            try:
                self._cmdline = read_text(self.path + "/cmdline").replace("\0", " ").strip()
            except OSError:
                self._cmdline = ""
        return self._cmdline  # type: ignore[return-value]

    # The readers below cost a file (or a directory) each: the process collector calls them only for processes a
    # group has matched, never for the whole table.  None: the file could not be read (another user's process
    # without root or CAP_SYS_PTRACE, the process exited meanwhile, or a garbled file).

    def io(self) -> tuple[int, int] | None:
        """(read_bytes, write_bytes) of /proc/<pid>/io."""
        try:
            return parse_pid_io(read_text(self.path + "/io"))
        except (OSError, ValueError, KeyError):
            return None

    def open_fds(self) -> int | None:
        """Entries of /proc/<pid>/fd (numeric names only: a recorded tree may hold a placeholder file)."""
        try:
            return sum(1 for name in os.listdir(self.path + "/fd") if name.isdigit())
        except OSError:
            return None

    def fd_limit(self) -> float | None:
        """The soft limit on open files (``inf`` for unlimited)."""
        try:
            return parse_nofile_limit(read_text(self.path + "/limits"))
        except (OSError, ValueError, IndexError):
            return None

    def status(self) -> ProcStatus | None:
        """Owner and context switches from /proc/<pid>/status (read once per walk)."""
        if self._status is _UNSET:
            try:
                self._status = parse_pid_status(read_text(self.path + "/status"))
            except (OSError, ValueError, KeyError, IndexError):
                self._status = None
        return self._status  # type: ignore[return-value]

    def uid(self) -> int | None:
        status = self.status()
        return None if status is None else status.uid

    def ctx_switches(self) -> tuple[int, int] | None:
        """(voluntary, involuntary) context switches."""
        status = self.status()
        return None if status is None else (status.voluntary_ctxt_switches, status.nonvoluntary_ctxt_switches)

    def thread_states(self) -> dict[str, int] | None:
        """Threads per state letter of /proc/<pid>/task/<tid>/stat (one read per thread)."""
        try:
            tids = os.listdir(self.path + "/task")
        except OSError:
            return None
        states: dict[str, int] = {}
        for tid in tids:
            try:
                raw = _read_bytes(f"{self.path}/task/{tid}/stat")
            except OSError:
                continue  # the thread ended since the listing
            close_paren = raw.rfind(b")")
            state = raw[close_paren + 2:close_paren + 3].decode("ascii", "replace") if close_paren >= 0 else ""
            if state:
                states[state] = states.get(state, 0) + 1
        return states


def _read_bytes(path: str) -> bytes:
    """One read of a small /proc file: os.open/os.read skip the io objects of open(), a third of the cost here."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.read(fd, PROC_READ_BYTES)
    finally:
        os.close(fd)


def _entry_from_stat(pid: int, path: str) -> ProcessEntry | None:
    """Kernels before 2.6.33 (and recorded trees) have no /proc/<pid>/comm: the name comes from stat."""
    try:
        raw = _read_bytes(path + "/stat")
    except OSError:
        return None
    open_paren = raw.find(b"(")
    close_paren = raw.rfind(b")")
    if open_paren < 0 or close_paren < open_paren:
        return None
    return ProcessEntry(pid, raw[open_paren + 1:close_paren].decode("utf-8", "replace"), path, raw)


def _comm_text(raw: bytes) -> str:
    """/proc/<pid>/comm's bytes as the name (the kernel ends it with a newline; not UTF-8 is replaced)."""
    return (raw[:-1] if raw.endswith(b"\n") else raw).decode("utf-8", "replace")


def walk_processes(root: str, names: dict[int, str] | None = None,
                   counts: list[int] | None = None) -> list[ProcessEntry]:
    """Every process under ``root`` with its name (/proc/<pid>/comm), every name read again: an exec keeps the pid
    and the start time and changes only the name, so a process that execs into a watched name is counted by the
    next collection.  Processes that exit while being listed are left out, as are stat files without a ``(name)``
    where the name has to come from stat.  ``names`` is refilled with this walk's names (what
    :func:`update_processes` brings up to date between full walks); ``counts[0]`` grows by the names read."""
    prefix = os.path.join(root, "")
    entries = []
    current: dict[int, str] = {}
    reads = 0
    for name in os.listdir(root):
        if not (name.isascii() and name.isdigit()):
            continue
        pid = int(name)
        path = prefix + name
        reads += 1
        try:
            comm = _read_bytes(path + "/comm")
        except FileNotFoundError:
            entry = _entry_from_stat(pid, path)
            if entry is not None:
                entries.append(entry)
                current[pid] = entry.comm
            continue
        except OSError:
            continue
        comm_text = _comm_text(comm)
        current[pid] = comm_text
        entries.append(ProcessEntry(pid, comm_text, path))
    if names is not None:
        names.clear()
        names.update(current)
    if counts is not None:
        counts[0] += reads
    return entries


def update_processes(root: str, names: dict[int, str], changed: set[int], exited: set[int],
                     kept: dict[int, ProcessEntry], counts: list[int] | None = None) -> list[ProcessEntry]:
    """The last walk's processes (``names``, refilled) brought up to date from the process events alone, without
    listing ``root``: a process one of whose threads ended is kept only while its /proc/<pid> is still there (its
    main thread may have ended before the others), and the name of every pid that forked, exec'd or renamed is read
    (a pid gone meanwhile is left out).  Listing /proc is the kernel walking every task: about 3 ms at 2,000
    processes, most of a pass (issue 30).  ``counts[0]`` grows by the names read.

    ``kept``, the last pass's entries by pid (refilled), lets an entry nothing has read from (most processes: no
    group watches them) serve again instead of a new object per process and pass; an entry whose stat, command
    line or status was read, or whose process changed, is made anew."""
    prefix = os.path.join(root, "")
    for pid in exited:
        if pid in names and pid not in changed and not os.path.exists(prefix + str(pid)):
            del names[pid]
    for pid in changed:
        try:
            comm = _read_bytes(f"{prefix}{pid}/comm")
        except OSError:
            names.pop(pid, None)  # gone since the event (the connector needs a kernel that has comm)
            continue
        names[pid] = _comm_text(comm)
    if counts is not None:
        counts[0] += len(changed)
    entries = []
    unset = _UNSET
    for pid in sorted(names):
        entry = kept.get(pid)
        if (entry is None or pid in changed or entry._stat is not unset or entry._cmdline is not unset
                or entry._status is not unset):
            entry = kept[pid] = ProcessEntry(pid, names[pid], f"{prefix}{pid}")
        entries.append(entry)
    if len(kept) > len(entries):
        for pid in [pid for pid in kept if pid not in names]:
            del kept[pid]
    return entries


FULL_PASS_SECONDS = 600.0  # with the events connector, every name is read again at least this often anyway


class ProcessTable:
    """The process table of one walk, shared by the collectors that read processes in the same collection.

    ``snapshot(reader)`` returns the last walk's entries unless they are older than ``max_age`` seconds or this
    reader has had them already; then it walks again.  So collectors ticking at the same moment share one walk,
    and a collector never sees the same walk twice.  One walk at a time: the others wait for it.

    With :meth:`listen_to_events` (the process collector calls it for the live /proc on Linux) a walk does not
    list /proc: it keeps the walk before's processes, reads the names of those that forked, exec'd or renamed since,
    and drops those that ended (:func:`update_processes`); /proc is listed and every name read again when the
    events cannot be trusted and at least every :data:`FULL_PASS_SECONDS`.
    """

    def __init__(self, root: str, max_age: float = 5.0, clock: Callable[[], float] = time.monotonic,
                 backend: str = "auto") -> None:
        self.root = root
        self.backend = backend  # "auto" is resolved at the first walk (choose_backend), not at construction
        self.max_age = max_age
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: tuple[ProcessEntry, ...] = ()
        self._taken: float | None = None
        self._readers: set[int] = set()
        self.walks = 0  # walks so far, for the benchmark and the tests
        self.full_walks = 0  # walks that listed /proc and read every name
        self.name_reads = [0]  # names (/proc/<pid>/comm) read so far
        self.events = None  # a procevents.ProcEvents once listen_to_events() has started one
        self.events_error: str | None = None  # why it could not be started
        self._names: dict[int, str] = {}
        self._kept: dict[int, ProcessEntry] = {}  # the entries update_processes may hand out again
        self._full_at: float | None = None

    def listen_to_events(self) -> bool:
        """Start the process events listener for this table, where it can serve (Linux, the live /proc, the
        procfs back-end); True when started (it is trusted only once verified: ``events.connected``)."""
        if self.events is not None:
            return True
        from . import procevents  # only where the process collector is enabled

        if self.resolve_backend() != "procfs" or not procevents.available(self.root):
            return False
        events = procevents.ProcEvents()
        if not events.start():
            self.events_error = events.error
            return False
        self.events = events
        return True

    def stop_events(self) -> None:
        events, self.events = self.events, None
        if events is not None:
            events.stop()

    def snapshot(self, reader: object) -> tuple[ProcessEntry, ...]:
        with self._lock:
            now = self._clock()
            if self._taken is None or id(reader) in self._readers or now - self._taken > self.max_age:
                self._entries = tuple(self._walk())
                self._taken = now
                self._readers = set()
                self.walks += 1
            self._readers.add(id(reader))
            return self._entries

    def resolve_backend(self) -> str:
        """``procfs`` or ``psutil``: the back-end this table walks with."""
        if self.backend == "auto":
            self.backend = choose_backend("auto", self.root)
        return self.backend

    def _walk(self) -> list[ProcessEntry]:
        if self.resolve_backend() == "psutil":
            from .psutil_procs import walk_psutil  # psutil is imported only where it is the back-end

            return walk_psutil()
        events = self.events
        if events is None:
            self.full_walks += 1
            entries = walk_processes(self.root)
            self.name_reads[0] += len(entries)  # one name per process listed (and one per process gone meanwhile)
            return entries
        now = self._clock()
        if self._full_at is not None and now - self._full_at >= FULL_PASS_SECONDS:
            events.force_full()  # the safety net: every name again now and then
        changes = events.take_changes()  # before the pass: an event after this is seen by the next one
        if changes is None:
            self.full_walks += 1
            self._full_at = now
            self._kept.clear()
            return walk_processes(self.root, self._names, self.name_reads)
        return update_processes(self.root, self._names, *changes, self._kept, self.name_reads)
