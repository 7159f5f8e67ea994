"""Process groups: count, CPU, memory, threads, start time, fds, I/O, page faults and context switches.

Reads the shared process table (one walk over /proc/<pid>/stat per interval, see ``machine/procfs.py``; through
psutil where /proc is not Linux's, ``machine/psutil_procs.py``) and a process's command line only when a group asks
for it.  /proc/<pid>/io, fd, limits and status are read only for processes a group has matched, once each per
pass; a file that cannot be read (another user's process without root) leaves the figure out, never 0, and
counts in ``..._unreadable_processes``.  A process counts by itself, never with its children, in every group it
matches; zombies are not counted.  CPU seconds and the other counters per group stay monotonic across process
exits and restarts, so ``rate()`` never sees a false counter reset.  Matching rules and the built-in groups: README.md.
"""

from __future__ import annotations

import os
import re
import sys

from ...core.collector import Collector, Context
from ...core.metrics import MetricBatch, MetricSpec
from ...machine.procfs import ProcessEntry, ProcessTable, boot_time, choose_backend
from ...machine.proctypes import PAGE_SIZE, USER_HZ
from . import DESCRIPTION, NAME
from .metrics import EVENTS_CONNECTED, SCANNED_PROCESSES, GroupMetrics
from .settings import ProcessGroup, ProcessSettings


class _Matcher:
    """A compiled group; returns the label values for a process, or None."""

    def __init__(self, group: ProcessGroup, extra_labels: list[str]) -> None:
        self.group = group
        self.names = frozenset(group.names)
        self.comm = re.compile(group.comm) if group.comm else None
        self.cmdline = re.compile(group.cmdline) if group.cmdline else None
        self.labels_from_cmdline = re.compile(group.labels_from_cmdline) if group.labels_from_cmdline else None
        self.extra_labels = extra_labels

    def match(self, proc: ProcessEntry) -> tuple[str, ...] | None:
        captured: dict[str, str] = {}
        if self.names:
            if proc.comm not in self.names:
                return None
            captured["process"] = proc.comm
        elif self.comm is not None:
            m = self.comm.search(proc.comm)
            if m is None:
                return None
            captured.update({k: v for k, v in m.groupdict().items() if v is not None})
        if self.cmdline is not None:
            m = self.cmdline.search(proc.cmdline())
            if m is None:
                return None
            captured.update({k: v for k, v in m.groupdict().items() if v is not None})
        if self.labels_from_cmdline is not None:
            m = self.labels_from_cmdline.search(proc.cmdline())
            if m is not None:
                captured.update({k: v for k, v in m.groupdict().items() if v is not None})
        return self.key(captured.get("process", ""), captured)

    def key(self, process: str, captured: dict[str, str]) -> tuple[str, ...]:
        return (self.group.name, process) + tuple(captured.get(label, "") for label in self.extra_labels)

    def zero_keys(self, present: set[tuple[str, str]]) -> list[tuple[str, ...]]:
        """Keys reported as 0: configured names (or the whole group) with no process at all."""
        if self.names:
            return [self.key(name, {}) for name in self.group.names if (self.group.name, name) not in present]
        if any(group == self.group.name for group, _ in present):
            return []
        return [self.key("", {})]


MAX_CACHED_NAMES = 4096  # distinct process names remembered with their candidate groups (then forgotten at once)

# The per-process counters kept monotonic per series, in this order, and the reader family each needs (the files
# of UNREADABLE_FILES; "stat" is always read).
COUNTERS = ("utime", "stime", "read_bytes", "write_bytes", "minflt", "majflt", "voluntary", "involuntary")
COUNTER_FAMILY = ("stat", "stat", "io", "io", "page_faults", "page_faults", "status", "status")
# /proc/<pid>/... files that other users' processes may deny without root or CAP_SYS_PTRACE (io, fd, and
# limits on hardened kernels); status is readable by everyone but a process may exit between two reads.
UNREADABLE_FILES = ("io", "fds", "limits", "status")
# /proc/<pid>/task/<tid>/stat state letters (proc(5)) as label values.
THREAD_STATES = {"R": "running", "S": "sleeping", "D": "disk_sleep", "T": "stopped", "t": "tracing_stop",
                 "Z": "zombie", "X": "dead", "I": "idle"}


class _Totals:
    __slots__ = ("processes", "rss", "threads", "oldest", "fds", "worst_fd_ratio", "read", "unreadable",
                 "thread_states", "families")

    def __init__(self) -> None:
        self.processes = 0
        self.rss = 0
        self.threads = 0
        self.oldest: float | None = None
        self.fds: int | None = None  # None: no process's fd directory could be read
        self.worst_fd_ratio: float | None = None
        self.read: set[str] = set()  # reader families at least one process answered this pass
        self.unreadable = dict.fromkeys(UNREADABLE_FILES, 0)
        self.thread_states: dict[str, int] | None = None
        self.families: frozenset[str] = frozenset()  # what the back-end can read for these processes


class ProcessCollector(Collector):
    name = NAME
    description = DESCRIPTION
    Settings = ProcessSettings

    def __init__(self, settings: ProcessSettings, context: Context) -> None:
        super().__init__(settings, context)
        groups = settings.all_groups()
        labels: list[str] = []
        for group in groups:
            labels.extend(label for label in group.capture_labels() if label != "process" and label not in labels)
        self.matchers = [_Matcher(group, labels) for group in groups]
        # Most groups list exact names: look those up by name; only the others are tried on every process.
        self._by_name: dict[str, list[tuple[int, _Matcher]]] = {}
        self._by_pattern: list[tuple[int, _Matcher]] = []
        for index, matcher in enumerate(self.matchers):
            if matcher.names:
                for name in matcher.names:
                    self._by_name.setdefault(name, []).append((index, matcher))
            else:
                self._by_pattern.append((index, matcher))
        # The groups worth trying for a process name (exact names first, then the patterns whose comm regex the
        # name passes): a pure function of the name, kept so that a pass over 2,000 unwatched processes is one
        # dict lookup each, not a regex search each (issue 30).
        self._candidates: dict[str, tuple[tuple[int, _Matcher], ...]] = {}
        self.label_names = ("group", "process", *labels) + (("user",) if settings.group_by_user else ())
        # Monotonic counters (COUNTERS): what was already counted per series, and per live process the readings
        # counted last time (None where its file could not be read).
        self._counted: dict[tuple[str, ...], list[int]] = {}
        self._seen: dict[tuple[int, int, int], tuple[int | None, ...]] = {}
        self._user_names: dict[int, str] = {}
        self._own_table: ProcessTable | None = None
        self._events_table: ProcessTable | None = None  # the table whose events listener this collector started
        self._events_tried = False
        # The label names are known only now (capture groups of the configured regexes): the handles live here.
        self.metrics = GroupMetrics.declare(self.label_names)

    def specs(self) -> list[MetricSpec]:
        return [*self.metrics.specs(), SCANNED_PROCESSES, EVENTS_CONNECTED]

    def _user(self, uid: int | None) -> str:
        if uid is None:
            return ""
        name = self._user_names.get(uid)
        if name is None:
            try:
                import pwd  # POSIX only

                name = pwd.getpwuid(uid).pw_name
            except (ImportError, KeyError):
                name = str(uid)
            self._user_names[uid] = name
        return name

    def _boot_time(self, backend: str) -> float:
        if backend == "psutil":
            from ...machine.psutil_procs import STARTTIME_ORIGIN

            return STARTTIME_ORIGIN  # psutil entries count their start from the epoch, not from boot
        return boot_time(self.context.procfs)

    def _table(self) -> ProcessTable:
        """The shared table, unless `backend` forces another one than it walks with: then a table of our own."""
        if self._own_table is not None:
            return self._own_table
        shared = self.context.processes
        wanted = choose_backend(self.settings.backend, self.context.procfs)
        if wanted == "psutil" and sys.platform.startswith("linux") and os.path.realpath(self.context.procfs) != "/proc":
            raise ValueError(f"the psutil back-end reads /proc, not paths.procfs={self.context.procfs}; "
                             "use backend: procfs")
        if wanted == shared.resolve_backend():
            return shared
        self._own_table = ProcessTable(self.context.procfs, backend=wanted)
        return self._own_table

    def close(self) -> None:
        table, self._events_table = self._events_table, None
        if table is not None:
            table.stop_events()

    def collect(self, batch: MetricBatch) -> None:
        table = self._table()
        if not self._events_tried:  # once: the live /proc on Linux only; stopped by close()
            self._events_tried = True
            if table.events is None and table.listen_to_events():
                self._events_table = table
        boot_time = self._boot_time(table.resolve_backend())
        entries = table.snapshot(self)
        totals: dict[tuple[str, ...], _Totals] = {}
        seen: dict[tuple[int, int, int], tuple[int, int]] = {}
        cache = self._candidates
        if len(cache) > MAX_CACHED_NAMES:
            cache.clear()
        by_user = self.settings.group_by_user
        thread_states = self.settings.thread_states
        for entry in entries:
            candidates = cache.get(entry.comm)
            if candidates is None:
                candidates = cache[entry.comm] = self._candidates_for(entry.comm)
            if not candidates:
                continue
            readings: tuple[int | None, ...] | None = None  # read once per process, whatever groups it is in
            for index, matcher in candidates:
                key = matcher.match(entry)
                if key is None:
                    continue
                proc = entry.stat()
                if proc is None or proc.state == "Z":  # exited since the walk, or a zombie: not counted
                    break
                if by_user:
                    key = key + (self._user(entry.uid()),)
                t = totals.get(key)
                if t is None:
                    t = totals[key] = _Totals()
                if readings is None:
                    readings, fds, limit, states = self._read_extras(entry, proc, thread_states)
                t.processes += 1
                t.rss += proc.rss_pages * PAGE_SIZE
                t.threads += proc.threads
                started = boot_time + proc.starttime / USER_HZ
                t.oldest = started if t.oldest is None else min(t.oldest, started)
                self._add_extras(t, entry.extras, readings, fds, limit, states)
                ident = (proc.pid, proc.starttime, index)
                prev = self._seen.get(ident)
                counted = self._counted.setdefault(key, [0] * len(COUNTERS))
                for i, value in enumerate(readings):
                    if value is not None:
                        before = prev[i] if prev is not None else None
                        counted[i] += max(value - (before or 0), 0)
                seen[ident] = readings
        self._seen = seen
        labels = self.label_names
        present = {(key[0], key[1]) for key in totals}
        for matcher in self.matchers:
            for key in matcher.zero_keys(present):
                if by_user:
                    key = key + ("",)
                totals.setdefault(key, _Totals())
        for key in sorted(totals):
            t = totals[key]
            lv = dict(zip(labels, key, strict=True))
            self.metrics.processes.add(batch, t.processes, **lv)
            if t.processes == 0:
                continue
            self._emit(batch, t, self._counted[key], lv)
        SCANNED_PROCESSES.add(batch, len(entries))
        EVENTS_CONNECTED.add(batch, 1 if table.events is not None and table.events.connected else 0)

    def _candidates_for(self, comm: str) -> tuple[tuple[int, _Matcher], ...]:
        named = self._by_name.get(comm, [])
        patterns = [(index, m) for index, m in self._by_pattern if m.comm is None or m.comm.search(comm)]
        return tuple(named) + tuple(patterns)

    @staticmethod
    def _read_extras(entry: ProcessEntry, proc, thread_states: bool) -> tuple[
            tuple[int | None, ...], int | None, float | None, dict[str, int] | None]:
        """The per-process readings beyond stat, for a process a group matched (never for the whole table)."""
        extras = entry.extras
        io = entry.io() if "io" in extras else None
        ctx = entry.ctx_switches() if "status" in extras else None
        faults = "page_faults" in extras
        readings = (proc.utime, proc.stime,
                    io[0] if io else None, io[1] if io else None,
                    proc.minflt if faults else None, proc.majflt if faults else None,
                    ctx[0] if ctx else None, ctx[1] if ctx else None)
        fds = entry.open_fds() if "fds" in extras else None
        limit = entry.fd_limit() if "limits" in extras and fds is not None else None
        states = entry.thread_states() if thread_states and "thread_states" in extras else None
        return readings, fds, limit, states

    @staticmethod
    def _add_extras(t: _Totals, extras: frozenset[str], readings: tuple[int | None, ...], fds: int | None,
                    limit: float | None, states: dict[str, int] | None) -> None:
        t.families = extras
        for family, first in (("io", 2), ("page_faults", 4), ("status", 6)):
            if family not in extras:
                continue
            if readings[first] is None:
                t.unreadable[family] = t.unreadable.get(family, 0) + 1  # page_faults: never (stat was read)
            else:
                t.read.add(family)
        if "fds" in extras:
            if fds is None:
                t.unreadable["fds"] += 1
            else:
                t.fds = (t.fds or 0) + fds
                if "limits" in extras:
                    if limit is None:
                        t.unreadable["limits"] += 1
                    elif limit > 0:
                        ratio = fds / limit
                        t.worst_fd_ratio = ratio if t.worst_fd_ratio is None else max(t.worst_fd_ratio, ratio)
        if states is not None:
            if t.thread_states is None:
                t.thread_states = {}
            for letter, count in states.items():
                state = THREAD_STATES.get(letter, "other")
                t.thread_states[state] = t.thread_states.get(state, 0) + count

    def _emit(self, batch: MetricBatch, t: _Totals, counted: list[int], lv: dict[str, str]) -> None:
        self.metrics.cpu_seconds.add(batch, counted[0] / USER_HZ, mode="user", **lv)
        self.metrics.cpu_seconds.add(batch, counted[1] / USER_HZ, mode="system", **lv)
        self.metrics.resident_memory.add(batch, t.rss, **lv)
        self.metrics.threads.add(batch, t.threads, **lv)
        self.metrics.oldest_start_time.add(batch, t.oldest, **lv)
        if t.fds is not None:
            self.metrics.open_fds.add(batch, t.fds, **lv)
        if t.worst_fd_ratio is not None:
            self.metrics.worst_fd_ratio.add(batch, t.worst_fd_ratio, **lv)
        if "io" in t.read:
            self.metrics.read_bytes.add(batch, counted[2], **lv)
            self.metrics.written_bytes.add(batch, counted[3], **lv)
        if "page_faults" in t.read:
            self.metrics.minor_page_faults.add(batch, counted[4], **lv)
            self.metrics.major_page_faults.add(batch, counted[5], **lv)
        if "status" in t.read:
            self.metrics.context_switches.add(batch, counted[6], type="voluntary", **lv)
            self.metrics.context_switches.add(batch, counted[7], type="involuntary", **lv)
        if t.thread_states is not None:
            for state in sorted(t.thread_states):
                self.metrics.threads_by_state.add(batch, t.thread_states[state], state=state, **lv)
        for file in UNREADABLE_FILES:
            if file in t.families:
                self.metrics.unreadable_processes.add(batch, t.unreadable.get(file, 0), file=file, **lv)
