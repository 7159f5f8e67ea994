"""The process table through psutil, for hosts whose /proc is not Linux's (AIX, Solaris, Windows, macOS, FreeBSD).

:class:`~exporter.machine.procfs.ProcessTable` walks with :func:`walk_psutil` when its back-end is ``psutil``; the
entries answer like the /proc ones (``pid``, ``comm``, ``stat()``, ``cmdline()``), so the process collector and
HPOM's MSI count need no second code path.  ``stat()`` expresses psutil's seconds and bytes in the /proc units
(clock ticks, pages) and the callers convert them back, so nothing is rounded on the way.  The start time counts
from the Unix epoch (``STARTTIME_ORIGIN``) rather than from boot: psutil's boot time moves by up to a second on
Windows, and a start time that moves would make a process look restarted.
psutil's process-wide ``PROCFS_PATH`` is never set, and only per-process calls are used here (no caches that
adjust counters).  A process psutil may not read (``AccessDenied``: other users' processes on macOS without
root) is left out like one that has exited; a zombie has the state ``Z``, which every caller skips.
"""

from __future__ import annotations

from dataclasses import dataclass

import psutil

from .proctypes import PAGE_SIZE, USER_HZ, ProcStat

STARTTIME_ORIGIN = 0.0  # ProcStat.starttime of these entries: ticks since this Unix time
NAME_MAX = 15  # Linux's comm length: the same configured `names` match on every platform

# psutil's status strings as the state letters of /proc/<pid>/stat (only "Z" changes what the collectors do).
_STATES = {psutil.STATUS_RUNNING: "R", psutil.STATUS_SLEEPING: "S", psutil.STATUS_DISK_SLEEP: "D",
           psutil.STATUS_STOPPED: "T", psutil.STATUS_TRACING_STOP: "t", psutil.STATUS_ZOMBIE: "Z",
           psutil.STATUS_DEAD: "X", psutil.STATUS_IDLE: "I"}


@dataclass(frozen=True)
class ExtraRow:
    """One per-process reading of the process groups beyond count/CPU/memory/threads: the psutil call, the
    platforms where it gives the figure, and why it is absent elsewhere.  ``docs/platforms.md`` is generated from
    :data:`EXTRA_ROWS`, and :func:`extras_for` gives the collector the same answer."""

    extra: str  # the ProcessEntry reader family: io, fds, limits, status, page_faults, thread_states
    series: str  # the middleware_process_group_* series it feeds
    source: str
    platforms: frozenset[str]
    note: str = ""


EXTRA_PLATFORMS = ("linux", "aix", "sunos", "windows", "macos", "freebsd")
EXTRA_ROWS = (
    ExtraRow("io", "read_bytes_total, written_bytes_total", "io_counters().read_bytes/write_bytes",
             frozenset({"linux", "aix", "windows"}),
             "FreeBSD's psutil returns -1 (it has operation counts only); Solaris and macOS have no io_counters; on "
             "Windows the bytes are all I/O of the process (files, network, devices), not the storage layer alone"),
    ExtraRow("fds", "open_fds", "num_fds()", frozenset({"linux", "aix", "sunos", "macos", "freebsd"}),
             "Windows has handles, not file descriptors (num_handles() counts every kind of object)"),
    ExtraRow("limits", "worst_fd_ratio", "num_fds() / rlimit(RLIMIT_NOFILE)[0]", frozenset({"linux", "freebsd"}),
             "psutil's rlimit() exists on Linux and FreeBSD only"),
    ExtraRow("status", "context_switches_total", "num_ctx_switches()",
             frozenset({"linux", "aix", "sunos", "freebsd"}),
             "Windows and macOS give one total as 'voluntary' and 0 as involuntary: left out rather than mislabelled"),
    ExtraRow("page_faults", "major_page_faults_total, minor_page_faults_total", "-", frozenset(),
             "psutil 7.2 has no per-process page-fault call on most platforms"),
    ExtraRow("thread_states", "threads_by_state", "-", frozenset(),
             "psutil has no per-thread state"),
)


def extras_for(platform: str) -> frozenset[str]:
    """The reader families the psutil back-end offers on ``platform`` (a psutil-style name, e.g. ``linux``)."""
    return frozenset(row.extra for row in EXTRA_ROWS if platform in row.platforms)


def _platform() -> str:
    for name, flag in (("linux", psutil.LINUX), ("aix", psutil.AIX), ("sunos", psutil.SUNOS),
                       ("windows", psutil.WINDOWS), ("macos", psutil.MACOS), ("freebsd", psutil.FREEBSD)):
        if flag:
            return name
    return "other"


EXTRAS = extras_for(_platform())


class NoProcDirectory(RuntimeError):
    """A collector asked for /proc/<pid> of a process the psutil back-end found."""


def valid_text(text: str) -> str:
    """``text`` with what psutil kept of undecodable bytes (lone surrogates, from its ``surrogateescape``) turned
    into U+FFFD, as the /proc back-end decodes: a surrogate in a label value makes the exposition's UTF-8
    encoding raise, and the whole scrape with it."""
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate surrogateescape did not make (U+D800-U+DC7F, U+DD00-U+DFFF)
        raw = text.encode("utf-8", "surrogatepass")
    return raw.decode("utf-8", "replace")


def process_name(name: str, windows: bool = psutil.WINDOWS) -> str:
    """The name as the groups match it: Windows' ``.exe`` dropped, cut to Linux's 15 characters (psutil returns
    the full name where the kernel cut it), undecodable bytes as U+FFFD (:func:`valid_text`)."""
    if windows and name.lower().endswith(".exe"):
        name = name[:-4]
    return valid_text(name[:NAME_MAX])


class PsutilProcessEntry:
    """One process of a psutil walk: the name at once, the numbers and the command line on first use."""

    __slots__ = ("pid", "comm", "_proc", "_stat", "_cmdline", "_read")

    extras = EXTRAS

    def __init__(self, proc: psutil.Process, comm: str) -> None:
        self.pid = proc.pid
        self.comm = comm
        self._proc = proc
        self._read = False
        self._stat: ProcStat | None = None
        self._cmdline: str | None = None

    @property
    def path(self) -> str:
        raise NoProcDirectory(f"pid {self.pid}: the psutil back-end has no /proc/<pid> directory; this collector "
                              "reads Linux's /proc and works on Linux only")

    def stat(self) -> ProcStat | None:
        """psutil's figures in the units of /proc/<pid>/stat; None if the process has gone or may not be read."""
        if not self._read:
            self._read = True
            self._stat = self._read_stat()
        return self._stat

    def _read_stat(self) -> ProcStat | None:
        proc = self._proc
        try:
            with proc.oneshot():
                state = _STATES.get(proc.status(), "S")
                if state == "Z":
                    return ProcStat(self.pid, self.comm, "Z", 0, 0, 0, 0, 0)
                cpu = proc.cpu_times()
                rss = proc.memory_info().rss
                threads = proc.num_threads()
                started = proc.create_time()
        except psutil.ZombieProcess:
            return ProcStat(self.pid, self.comm, "Z", 0, 0, 0, 0, 0)
        except (psutil.NoSuchProcess, psutil.AccessDenied, OSError):
            return None
        # Floats in tick and page units: the callers divide by USER_HZ and multiply by PAGE_SIZE again.
        return ProcStat(pid=self.pid, comm=self.comm, state=state, utime=cpu.user * USER_HZ,  # type: ignore[arg-type]
                        stime=cpu.system * USER_HZ, threads=threads,  # type: ignore[arg-type]
                        starttime=(started - STARTTIME_ORIGIN) * USER_HZ,  # type: ignore[arg-type]
                        rss_pages=rss / PAGE_SIZE)  # type: ignore[arg-type]

    def cmdline(self) -> str:
        """The command line, arguments joined by spaces ("" when it cannot be read)."""
        if self._cmdline is None:
            try:
                self._cmdline = valid_text(" ".join(self._proc.cmdline()).strip())
            except (psutil.Error, OSError):
                self._cmdline = ""
        return self._cmdline


    # The readers of ProcessEntry (procfs.py) through psutil; None when psutil may not read it (AccessDenied),
    # the process has gone, or the platform lacks it (the collector asks only for what `extras` lists).

    def io(self) -> tuple[int, int] | None:
        try:
            counters = self._proc.io_counters()
        except (psutil.Error, OSError, AttributeError):
            return None
        if counters.read_bytes < 0 or counters.write_bytes < 0:
            return None
        return counters.read_bytes, counters.write_bytes

    def open_fds(self) -> int | None:
        try:
            return self._proc.num_fds()
        except (psutil.Error, OSError, AttributeError):
            return None

    def fd_limit(self) -> float | None:
        try:
            soft = self._proc.rlimit(psutil.RLIMIT_NOFILE)[0]  # type: ignore[attr-defined]
        except (psutil.Error, OSError, AttributeError):
            return None
        return float("inf") if soft == psutil.RLIM_INFINITY else float(soft)  # type: ignore[attr-defined]

    def uid(self) -> int | None:
        try:
            return self._proc.uids().effective
        except (psutil.Error, OSError, AttributeError):
            return None

    def ctx_switches(self) -> tuple[int, int] | None:
        try:
            switches = self._proc.num_ctx_switches()
        except (psutil.Error, OSError):
            return None
        return switches.voluntary, switches.involuntary

    def thread_states(self) -> dict[str, int] | None:
        return None


def walk_psutil() -> list[PsutilProcessEntry]:
    """Every process psutil lists, with its name; processes that exit meanwhile are left out."""
    entries = []
    for proc in psutil.process_iter():
        try:
            name = proc.name()
        except (psutil.Error, OSError):
            continue  # gone, a zombie without a name, or not readable
        entries.append(PsutilProcessEntry(proc, process_name(name)))
    return entries
