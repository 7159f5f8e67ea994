"""The host collector's psutil back-end, for hosts whose /proc is not Linux's (AIX, Solaris, Windows, macOS,
FreeBSD), with the same metric names and labels as the /proc back-end.

``ROWS`` is the platform table: for each series, the psutil call and field it comes from and the platforms on
which psutil gives a genuine value.  A series is emitted only through :meth:`PsutilHost._add`, which looks the
row up, so the table is what the code does: a platform that is not listed, or a psutil tuple without the field,
means the series is absent, never 0.  Platforms are left out where psutil's figure is a constant 0 or means
something else there (read from psutil 7.2.2's platform modules; each such row says why).  ``docs/platforms.md``
is generated from the same rows (``python -m tools.docs``).

psutil is used without its process-wide state: ``PROCFS_PATH`` is never set, and the disk and network counters
are read with ``nowrap=False`` so psutil's cache does not adjust them (a counter that goes down is a reset, which
``rate()`` handles).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import psutil

from ...core.metrics import MetricBatch, MetricSpec
from ...machine.proctypes import PAGE_SIZE
from . import metrics as m

LINUX, AIX, SUNOS, WINDOWS, MACOS, FREEBSD = "linux", "aix", "sunos", "windows", "macos", "freebsd"
PLATFORMS = (LINUX, AIX, SUNOS, WINDOWS, MACOS, FREEBSD)
PLATFORM_TITLES = {LINUX: "Linux", AIX: "AIX", SUNOS: "Solaris", WINDOWS: "Windows", MACOS: "macOS",
                   FREEBSD: "FreeBSD"}
ALL = frozenset(PLATFORMS)
UNIX = frozenset({LINUX, AIX, SUNOS, MACOS, FREEBSD})
NONE: frozenset[str] = frozenset()


def _on(*platforms: str) -> frozenset[str]:
    return frozenset(platforms)


@dataclass(frozen=True)
class Row:
    """One series of the psutil back-end: where it comes from and where psutil gives it."""

    spec: MetricSpec
    source: str  # the psutil call and field, or "-" when psutil has nothing
    platforms: frozenset[str]
    note: str = ""  # why it is absent where it is, or what differs from /proc
    labels: tuple[tuple[str, str], ...] = ()  # fixed labels selecting the series (the CPU mode)

    @property
    def key(self) -> str:
        short = self.spec.name[len(m.P) + 1:]
        return short + ("{" + ",".join(f'{k}="{v}"' for k, v in self.labels) + "}" if self.labels else "")


def _mode(spec: MetricSpec, mode: str, field: str, platforms: frozenset[str], note: str = "") -> Row:
    return Row(spec, f"cpu_times(percpu=True).{field}", platforms, note, (("mode", mode),))


_NO_PAGING = "psutil has no paging-activity counters"
_NO_QUEUE = "psutil has no in-flight, queue-weighted, discard or flush figures"
_ALWAYS_0 = "psutil always reports 0 there"

ROWS: list[Row] = [
    Row(m.CPUS, "cpu_count()", ALL),
    Row(m.CPU_CORES, "cpu_count(logical=False)", ALL,
        "absent when psutil cannot tell; AIX runs `lsdev -Cc processor` for it"),
    _mode(m.CPU_SECONDS, "user", "user", ALL),
    _mode(m.CPU_SECONDS, "nice", "nice", _on(LINUX, MACOS, FREEBSD), "AIX, Solaris, Windows: not reported"),
    _mode(m.CPU_SECONDS, "system", "system", ALL,
          "Windows: includes interrupt and DPC time (those modes are absent there)"),
    _mode(m.CPU_SECONDS, "idle", "idle", ALL),
    _mode(m.CPU_SECONDS, "iowait", "iowait", _on(LINUX, AIX),
          "Solaris 10 and later no longer measure wait I/O (always 0); others: not reported"),
    _mode(m.CPU_SECONDS, "irq", "irq", _on(LINUX, FREEBSD),
          "Windows: psutil's `interrupt` is also inside `system`, left out rather than counted twice"),
    _mode(m.CPU_SECONDS, "softirq", "softirq", _on(LINUX), "Windows: `dpc`, also inside `system`, left out"),
    _mode(m.CPU_SECONDS, "steal", "steal", _on(LINUX), "a Linux field; other platforms do not report it"),
    Row(m.CPU_GUEST_SECONDS, "cpu_times(percpu=True).guest", _on(LINUX), "a Linux field", (("mode", "user"),)),
    Row(m.CPU_GUEST_SECONDS, "cpu_times(percpu=True).guest_nice", _on(LINUX), "a Linux field",
        (("mode", "nice"),)),
    Row(m.PROCS_RUNNING, "-", NONE, "psutil has no run-queue figure"),
    Row(m.PROCS_BLOCKED, "-", NONE, "psutil has no blocked-process figure"),
    Row(m.CONTEXT_SWITCHES, "cpu_stats().ctx_switches", ALL, "Solaris: a 32-bit counter (wraps; rate() copes)"),
    Row(m.INTERRUPTS, "cpu_stats().interrupts", ALL, "Solaris: a 32-bit counter"),
    Row(m.FORKS, "-", NONE, "psutil has no fork counter"),
    Row(m.BOOT_TIME, "boot_time()", ALL),
    Row(m.LOAD1, "getloadavg()[0]", UNIX,
        "Windows: psutil emulates it from the processor queue and returns 0 for its first 5 s"),
    Row(m.LOAD5, "getloadavg()[1]", UNIX, "Windows: emulated, see load1"),
    Row(m.LOAD15, "getloadavg()[2]", UNIX, "Windows: emulated, see load1"),
    Row(m.MEMORY_TOTAL, "virtual_memory().total", ALL),
    Row(m.MEMORY_AVAILABLE, "virtual_memory().available", ALL,
        "Solaris: free pages (SC_AVPHYS_PAGES), ZFS ARC not counted; macOS: free + inactive"),
    Row(m.MEMORY_FREE, "virtual_memory().free", UNIX, "Windows: psutil's `free` is the available memory"),
    Row(m.MEMORY_BUFFERS, "virtual_memory().buffers", _on(LINUX, FREEBSD), "FreeBSD: vfs.bufspace"),
    Row(m.MEMORY_CACHED, "virtual_memory().cached", _on(LINUX),
        "FreeBSD: v_cache_count, always 0 since FreeBSD 12"),
    Row(m.MEMORY_USED, "virtual_memory().total - .available", ALL, "the same definition as on Linux"),
    Row(m.MEMORY_SHARED, "virtual_memory().shared", _on(LINUX),
        "FreeBSD: shared virtual + real memory of vmtotal, another quantity"),
    Row(m.SWAP_TOTAL, "swap_memory().total", ALL, "Windows: the page files"),
    Row(m.SWAP_USED, "swap_memory().used", ALL, "Windows: page-file use"),
    Row(m.SWAP_IN, "swap_memory().sin", _on(LINUX, SUNOS),
        "AIX, macOS: psutil's `sin` counts every page-in (exported as page_in_bytes_total); FreeBSD: swap-ins "
        "and swap-outs added together; Windows: always 0; Solaris: a 32-bit page counter"),
    Row(m.SWAP_OUT, "swap_memory().sout", _on(LINUX, SUNOS), "as swap_in_bytes_total"),
    Row(m.PAGE_IN, "swap_memory().sin", _on(AIX, MACOS),
        "AIX pgins, macOS pageins (pages of every kind read in); Linux: psutil has no pgpgin"),
    Row(m.PAGE_OUT, "swap_memory().sout", _on(AIX, MACOS), "AIX pgouts, macOS pageouts"),
    Row(m.PAGE_FAULTS, "-", NONE, _NO_PAGING),
    Row(m.MAJOR_PAGE_FAULTS, "-", NONE, _NO_PAGING),
    Row(m.PAGE_SCANS, "-", NONE, _NO_PAGING + " (sar -g `pgscan/s` on Solaris, vmstat `sr` on AIX)"),
    Row(m.PAGE_SCANS_BY_RECLAIMER, "-", NONE, _NO_PAGING),
    Row(m.PAGE_STEALS, "-", NONE, _NO_PAGING),
    Row(m.OOM_KILLS, "-", NONE, "Linux only"),
    Row(m.DISK_READS_COMPLETED, "disk_io_counters(perdisk=True).read_count", ALL,
        "Windows: may need `diskperf -y` once"),
    Row(m.DISK_READS_MERGED, "disk_io_counters(perdisk=True).read_merged_count", _on(LINUX), "a Linux field"),
    Row(m.DISK_READ_BYTES, "disk_io_counters(perdisk=True).read_bytes", ALL),
    Row(m.DISK_READ_TIME, "disk_io_counters(perdisk=True).read_time", _on(LINUX, AIX, MACOS, FREEBSD),
        "Windows: psutil 7.2.2 gives whole seconds, not milliseconds (psutil issue 3002); Solaris: psutil's "
        "`read_time` is the device's busy time (kstat rtime), exported as disk_io_time_seconds_total"),
    Row(m.DISK_WRITES_COMPLETED, "disk_io_counters(perdisk=True).write_count", ALL),
    Row(m.DISK_WRITES_MERGED, "disk_io_counters(perdisk=True).write_merged_count", _on(LINUX), "a Linux field"),
    Row(m.DISK_WRITTEN_BYTES, "disk_io_counters(perdisk=True).write_bytes", ALL),
    Row(m.DISK_WRITE_TIME, "disk_io_counters(perdisk=True).write_time", _on(LINUX, AIX, MACOS, FREEBSD),
        "Windows: whole seconds (as read time); Solaris: psutil's `write_time` is the wait-queue time (kstat wtime)"),
    Row(m.DISK_IO_NOW, "-", NONE, _NO_QUEUE),
    Row(m.DISK_IO_TIME, "disk_io_counters(perdisk=True).busy_time", _on(LINUX, FREEBSD, SUNOS),
        "Solaris: the `read_time` field (kstat rtime, the time the device was busy); AIX, Windows, macOS: psutil "
        "has no busy time"),
    Row(m.DISK_IO_TIME_WEIGHTED, "-", NONE, _NO_QUEUE),
    Row(m.DISK_DISCARDS_COMPLETED, "-", NONE, _NO_QUEUE),
    Row(m.DISK_DISCARDED_BYTES, "-", NONE, _NO_QUEUE),
    Row(m.DISK_DISCARD_TIME, "-", NONE, _NO_QUEUE),
    Row(m.DISK_FLUSH_REQUESTS, "-", NONE, _NO_QUEUE),
    Row(m.DISK_FLUSH_REQUESTS_TIME, "-", NONE, _NO_QUEUE),
    Row(m.KERNEL_PARAMETER, "-", NONE, "read from Linux's /proc/sys"),
    Row(m.FILE_HANDLES_ALLOCATED, "-", NONE, "read from Linux's /proc/sys"),
    Row(m.NETWORK_RECEIVE_BYTES, "net_io_counters(pernic=True).bytes_recv", ALL,
        "AIX: only where psutil was built with perfstat's network-interface statistics"),
    Row(m.NETWORK_TRANSMIT_BYTES, "net_io_counters(pernic=True).bytes_sent", ALL),
    Row(m.NETWORK_RECEIVE_PACKETS, "net_io_counters(pernic=True).packets_recv", ALL),
    Row(m.NETWORK_TRANSMIT_PACKETS, "net_io_counters(pernic=True).packets_sent", ALL),
    Row(m.NETWORK_RECEIVE_ERRORS, "net_io_counters(pernic=True).errin", ALL),
    Row(m.NETWORK_TRANSMIT_ERRORS, "net_io_counters(pernic=True).errout", ALL),
    Row(m.NETWORK_RECEIVE_DROP, "net_io_counters(pernic=True).dropin", _on(LINUX, AIX, WINDOWS, MACOS, FREEBSD),
        "Solaris: " + _ALWAYS_0),
    Row(m.NETWORK_TRANSMIT_DROP, "net_io_counters(pernic=True).dropout", _on(LINUX, AIX, WINDOWS),
        "Solaris, macOS, FreeBSD: " + _ALWAYS_0),
]
TABLE: dict[str, Row] = {row.key: row for row in ROWS}


@dataclass(frozen=True)
class Tolerance:
    name: str
    value: float
    rule: str


# How closely the psutil back-end must agree with the /proc back-end on the same Linux host, read in the order
# /proc, psutil, /proc (tests/systems/host/test_psutil_backend.py uses these numbers; docs/platforms.md shows them).
TOLERANCES = [
    Tolerance("counter_relative_slack", 1e-9,
              "counters (CPU, context switches, interrupts, swap, disks, network): /proc before <= psutil <= /proc "
              "after, relative slack for float rounding only"),
    Tolerance("memory_fraction", 0.01,
              "moving memory gauges (available, free, cached, used): within this fraction of memory_total_bytes "
              "of the range of the two /proc readings"),
    Tolerance("load_absolute", 0.01, "load1/5/15: within this of the range of the two /proc readings"),
    Tolerance("process_rss_batch_pages", 32,
              "a stable process group's resident memory: within 3 x max(this, 2 x CPUs) x CPUs pages per process. "
              "/proc/<pid>/stat's rss is the kernel's per-CPU-batched approximation of three counters (file, anon, "
              "shmem; Linux 6.2 and later), psutil reads statm, the exact sum from Linux 6.16 on"),
    Tolerance("process_start_seconds", 0.02,
              "a process group's oldest start time: within this many seconds (two clock ticks)"),
    Tolerance("scanned_processes_fraction", 0.2,
              "processes scanned: within this fraction (processes start and exit between the walks)"),
]
TOLERANCE = {t.name: t.value for t in TOLERANCES}


def current_platform() -> str:
    """The platform psutil runs on, as the table names it ("other" for one the table does not list)."""
    for name, flag in ((LINUX, psutil.LINUX), (AIX, psutil.AIX), (SUNOS, psutil.SUNOS), (WINDOWS, psutil.WINDOWS),
                       (MACOS, psutil.MACOS), (FREEBSD, psutil.FREEBSD)):
        if flag:
            return name
    return "other"


def _seconds(ms: float | None) -> float | None:
    return None if ms is None else ms / 1000


def _field(record: Any, name: str) -> float | None:
    """A field of a psutil tuple; None when this platform's tuple has no such field."""
    value = getattr(record, name, None)
    return None if value is None else float(value)


class PsutilHost:
    """One run of the host collector through psutil."""

    def __init__(self, disk_exclude: re.Pattern[str] | None, net_exclude: re.Pattern[str] | None,
                 platform: str | None = None) -> None:
        self.platform = platform or current_platform()
        self._disk_exclude = disk_exclude
        self._net_exclude = net_exclude

    def _add(self, batch: MetricBatch, key: str, value: float | None, **labels: str) -> None:
        row = TABLE[key]
        if value is None or self.platform not in row.platforms:
            return  # absent, never 0
        row.spec.add(batch, value, **dict(row.labels), **labels)

    def collect(self, batch: MetricBatch) -> None:
        self._cpu(batch)
        self._memory(batch)
        self._disks(batch)
        self._network(batch)

    def _cpu(self, batch: MetricBatch) -> None:
        self._add(batch, "cpus", psutil.cpu_count())
        self._add(batch, "cpu_cores", psutil.cpu_count(logical=False))
        # The CPU rows name their field: cpu_times(percpu=True).<field>.  The cpu label is the position in
        # psutil's list (on Linux, the N of cpuN only while every CPU is online).
        fields = [(row.key, row.source.rsplit(".", 1)[1]) for row in ROWS
                  if row.spec is m.CPU_SECONDS or row.spec is m.CPU_GUEST_SECONDS]
        for cpu, times in enumerate(psutil.cpu_times(percpu=True)):
            for key, field in fields:
                self._add(batch, key, _field(times, field), cpu=str(cpu))
        stats = psutil.cpu_stats()
        self._add(batch, "context_switches_total", _field(stats, "ctx_switches"))
        self._add(batch, "interrupts_total", _field(stats, "interrupts"))
        self._add(batch, "boot_time_seconds", psutil.boot_time())
        if self.platform in TABLE["load1"].platforms:  # Windows starts a sampling thread on the first call
            for key, value in zip(("load1", "load5", "load15"), psutil.getloadavg(), strict=True):
                self._add(batch, key, value)

    def _memory(self, batch: MetricBatch) -> None:
        mem = psutil.virtual_memory()
        total, available = _field(mem, "total"), _field(mem, "available")
        self._add(batch, "memory_total_bytes", total)
        self._add(batch, "memory_available_bytes", available)
        self._add(batch, "memory_free_bytes", _field(mem, "free"))
        self._add(batch, "memory_buffers_bytes", _field(mem, "buffers"))
        self._add(batch, "memory_cached_bytes", _field(mem, "cached"))
        if total is not None and available is not None:
            self._add(batch, "memory_used_bytes", max(total - available, 0.0))
        self._add(batch, "memory_shared_bytes", _field(mem, "shared"))
        swap = psutil.swap_memory()
        self._add(batch, "swap_total_bytes", _field(swap, "total"))
        self._add(batch, "swap_used_bytes", _field(swap, "used"))
        sin, sout = _field(swap, "sin"), _field(swap, "sout")
        if self.platform == LINUX and sin is not None and sout is not None:
            # psutil multiplies pswpin/pswpout by 4 KiB whatever the page size (64 KiB on some arm64, ppc64le)
            sin, sout = sin / 4096 * PAGE_SIZE, sout / 4096 * PAGE_SIZE
        self._add(batch, "swap_in_bytes_total", sin)
        self._add(batch, "swap_out_bytes_total", sout)
        self._add(batch, "page_in_bytes_total", sin)
        self._add(batch, "page_out_bytes_total", sout)

    def _disks(self, batch: MetricBatch) -> None:
        for device, io in sorted((psutil.disk_io_counters(perdisk=True, nowrap=False) or {}).items()):
            if self._disk_exclude and self._disk_exclude.search(device):
                continue
            d = {"device": device}
            self._add(batch, "disk_reads_completed_total", _field(io, "read_count"), **d)
            self._add(batch, "disk_reads_merged_total", _field(io, "read_merged_count"), **d)
            self._add(batch, "disk_read_bytes_total", _field(io, "read_bytes"), **d)
            self._add(batch, "disk_read_time_seconds_total", _seconds(_field(io, "read_time")), **d)
            self._add(batch, "disk_writes_completed_total", _field(io, "write_count"), **d)
            self._add(batch, "disk_writes_merged_total", _field(io, "write_merged_count"), **d)
            self._add(batch, "disk_written_bytes_total", _field(io, "write_bytes"), **d)
            self._add(batch, "disk_write_time_seconds_total", _seconds(_field(io, "write_time")), **d)
            busy = _field(io, "read_time") if self.platform == SUNOS else _field(io, "busy_time")
            self._add(batch, "disk_io_time_seconds_total", _seconds(busy), **d)

    def _network(self, batch: MetricBatch) -> None:
        try:
            nics = psutil.net_io_counters(pernic=True, nowrap=False) or {}
        except AttributeError:  # AIX without perfstat's network-interface statistics
            return
        for device, net in sorted(nics.items()):
            if self._net_exclude and self._net_exclude.search(device):
                continue
            d = {"device": device}
            self._add(batch, "network_receive_bytes_total", _field(net, "bytes_recv"), **d)
            self._add(batch, "network_transmit_bytes_total", _field(net, "bytes_sent"), **d)
            self._add(batch, "network_receive_packets_total", _field(net, "packets_recv"), **d)
            self._add(batch, "network_transmit_packets_total", _field(net, "packets_sent"), **d)
            self._add(batch, "network_receive_errors_total", _field(net, "errin"), **d)
            self._add(batch, "network_transmit_errors_total", _field(net, "errout"), **d)
            self._add(batch, "network_receive_drop_total", _field(net, "dropin"), **d)
            self._add(batch, "network_transmit_drop_total", _field(net, "dropout"), **d)
