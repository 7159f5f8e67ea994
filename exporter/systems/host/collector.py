"""Host collector: the figures vmstat, iostat and sar show, as raw counters in base units.

Reads /proc/stat, /proc/meminfo, /proc/vmstat, /proc/diskstats, /proc/net/dev, /proc/loadavg, a few /proc/sys
limits and the sysfs CPU topology, once per run.  Rates, percentages and iostat's derived columns are PromQL over
these counters (the README maps each column), so nothing here depends on the time between two runs.  Where /proc
is not Linux's (AIX, Solaris, Windows, macOS, FreeBSD) the same metrics come from psutil (``psutil_backend.py``,
which also holds the table of what each platform gives).  ``backend: text`` runs sar, vmstat and iostat instead,
locally or through ssh, and exports their interval figures as gauges of their own (``textbackend.py``).
"""

from __future__ import annotations

import glob
import os
import re
import sys
import time

from ...core.collector import Collector, Context
from ...core.metrics import NAMESPACE, ConfiguredLabels, MetricBatch, MetricSpec
from ...machine.procfs import PAGE_SIZE, choose_backend, read_text
from .parse import (
    SECTOR_BYTES,
    parse_diskstats,
    parse_int,
    parse_key_values,
    parse_loadavg,
    parse_meminfo,
    parse_net_dev,
    parse_stat,
)
from .settings import DEFAULT_DISK_EXCLUDE, DESCRIPTION, HostSettings  # noqa: F401 (moved; re-exported)
from .textbackend import SPECS as TEXT_SPECS
from .textbackend import TextHost

P = f"{NAMESPACE}_host"

def _c(name: str, help_: str, labels: tuple[str, ...] = (), note: str = "") -> MetricSpec:
    return MetricSpec(f"{P}_{name}", "counter", help_, labels, note)


def _g(name: str, help_: str, labels: tuple[str, ...] = (), note: str = "") -> MetricSpec:
    return MetricSpec(f"{P}_{name}", "gauge", help_, labels, note)


DEV = ("device",)

CPUS = _g("cpus", "Online logical CPUs (cpuN lines of /proc/stat).", note="vmstat/sar CPU count")
CPU_CORES = _g("cpu_cores", "Physical CPU cores (distinct package/core pairs in sysfs topology).")
CPU_SECONDS = _c("cpu_seconds_total",
                 "CPU time by CPU and mode (user, nice, system, idle, iowait, irq, softirq, steal).",
                 ("cpu", "mode"), "vmstat us/sy/id/wa/st: 100 * rate() by mode / cpus")
CPU_GUEST_SECONDS = _c("cpu_guest_seconds_total", "CPU time spent running guests, also counted in user/nice.",
                       ("cpu", "mode"))
PROCS_RUNNING = _g("procs_running", "Runnable processes (vmstat r).", note="vmstat r")
PROCS_BLOCKED = _g("procs_blocked", "Processes blocked waiting for I/O (vmstat b).", note="vmstat b")
CONTEXT_SWITCHES = _c("context_switches_total", "Context switches.", note="vmstat cs: rate()")
INTERRUPTS = _c("interrupts_total", "Interrupts serviced.", note="vmstat in: rate()")
FORKS = _c("forks_total", "Processes and threads created.")
BOOT_TIME = _g("boot_time_seconds", "Unix time the host booted.")
LOAD1 = _g("load1", "1-minute load average.")
LOAD5 = _g("load5", "5-minute load average.")
LOAD15 = _g("load15", "15-minute load average.")
MEMORY_TOTAL = _g("memory_total_bytes", "Physical memory (MemTotal).")
MEMORY_AVAILABLE = _g("memory_available_bytes", "Memory available for new work without swapping (MemAvailable).")
MEMORY_FREE = _g("memory_free_bytes", "Unused memory (MemFree; vmstat free).")
MEMORY_BUFFERS = _g("memory_buffers_bytes", "Block-device buffers (Buffers; vmstat buff).")
MEMORY_CACHED = _g("memory_cached_bytes", "Page cache plus reclaimable slab (Cached + SReclaimable; vmstat cache).")
MEMORY_USED = _g("memory_used_bytes", "Memory in use: MemTotal - MemAvailable (as free(1) of procps 4 shows it).")
MEMORY_SHARED = _g("memory_shared_bytes", "Shared memory and tmpfs (Shmem).")
SWAP_TOTAL = _g("swap_total_bytes", "Swap space configured (SwapTotal).")
SWAP_USED = _g("swap_used_bytes", "Swap space in use (SwapTotal - SwapFree; vmstat swpd).")
SWAP_IN = _c("swap_in_bytes_total", "Bytes swapped in from disk (pswpin x page size).",
             note="vmstat si (KiB/s): rate()/1024")
SWAP_OUT = _c("swap_out_bytes_total", "Bytes swapped out to disk (pswpout x page size).",
              note="vmstat so (KiB/s): rate()/1024")
PAGE_IN = _c("page_in_bytes_total", "Bytes paged in from block devices (pgpgin).", note="vmstat bi: rate()/1024")
PAGE_OUT = _c("page_out_bytes_total", "Bytes paged out to block devices (pgpgout).", note="vmstat bo: rate()/1024")
PAGE_FAULTS = _c("page_faults_total", "Page faults, minor and major (pgfault).")
MAJOR_PAGE_FAULTS = _c("major_page_faults_total", "Major page faults needing I/O (pgmajfault).")
PAGE_SCANS = _c("page_scans_total",
                "Pages scanned by memory reclaim, including cgroup-limited reclaim (pgscan_anon + pgscan_file; "
                "pgscan_kswapd + pgscan_direct on kernels without them).", note="vmstat/sar scan rate: rate()")
PAGE_SCANS_BY_RECLAIMER = _c("page_scans_by_reclaimer_total",
                             "Pages scanned by global reclaim, by reclaimer (kswapd, direct, khugepaged, proactive).",
                             ("reclaimer",))
PAGE_STEALS = _c("page_steals_total", "Pages reclaimed (pgsteal_anon + pgsteal_file, or kswapd + direct).")
OOM_KILLS = _c("oom_kills_total", "Processes killed by the out-of-memory killer.")
DISK_READS_COMPLETED = _c("disk_reads_completed_total", "Reads completed.", DEV, "iostat r/s: rate()")
DISK_READS_MERGED = _c("disk_reads_merged_total", "Adjacent reads merged.", DEV, "iostat rrqm/s: rate()")
DISK_READ_BYTES = _c("disk_read_bytes_total", "Bytes read.", DEV, "iostat rkB/s: rate()/1024")
DISK_READ_TIME = _c("disk_read_time_seconds_total", "Time spent on reads (sum over all reads).", DEV,
                    "iostat r_await: rate(read_time)/rate(reads_completed)")
DISK_WRITES_COMPLETED = _c("disk_writes_completed_total", "Writes completed.", DEV, "iostat w/s: rate()")
DISK_WRITES_MERGED = _c("disk_writes_merged_total", "Adjacent writes merged.", DEV, "iostat wrqm/s: rate()")
DISK_WRITTEN_BYTES = _c("disk_written_bytes_total", "Bytes written.", DEV, "iostat wkB/s: rate()/1024")
DISK_WRITE_TIME = _c("disk_write_time_seconds_total", "Time spent on writes (sum over all writes).", DEV,
                     "iostat w_await")
DISK_IO_NOW = _g("disk_io_now", "I/O requests in flight.", DEV)
DISK_IO_TIME = _c("disk_io_time_seconds_total", "Time the device had I/O in flight.", DEV,
                  "iostat %util: 100 * rate()")
DISK_IO_TIME_WEIGHTED = _c("disk_io_time_weighted_seconds_total", "I/O time weighted by requests in flight.", DEV,
                           "iostat aqu-sz: rate()")
DISK_DISCARDS_COMPLETED = _c("disk_discards_completed_total", "Discards completed.", DEV)
DISK_DISCARDED_BYTES = _c("disk_discarded_bytes_total", "Bytes discarded.", DEV)
DISK_DISCARD_TIME = _c("disk_discard_time_seconds_total", "Time spent on discards.", DEV)
DISK_FLUSH_REQUESTS = _c("disk_flush_requests_total", "Flush requests completed.", DEV)
DISK_FLUSH_REQUESTS_TIME = _c("disk_flush_requests_time_seconds_total", "Time spent on flush requests.", DEV)
KERNEL_PARAMETER = _g("kernel_parameter",
                      "A kernel limit from /proc/sys (kernel.shmmax, kernel.shmall, kernel.sem.semmni, ..., "
                      "fs.file-max, kernel.pid_max, kernel.threads-max; shmall in pages, the rest in their own "
                      "units): the Linux counterparts of the HP-UX tunables in the HPOM guide's Appendix B "
                      "(Tables 29-30).", ("parameter",), "HPOM-KERNEL advice, e.g. shmmax against memory")
FILE_HANDLES_ALLOCATED = _g("file_handles_allocated",
                            "File handles allocated system-wide (first field of fs.file-nr).", (),
                            "against kernel_parameter{parameter=\"fs.file-max\"}")
NETWORK_RECEIVE_BYTES = _c("network_receive_bytes_total", "Bytes received.", DEV, "sar -n DEV rxkB/s: rate()/1024")
NETWORK_TRANSMIT_BYTES = _c("network_transmit_bytes_total", "Bytes sent.", DEV, "sar -n DEV txkB/s: rate()/1024")
NETWORK_RECEIVE_PACKETS = _c("network_receive_packets_total", "Packets received.", DEV, "sar -n DEV rxpck/s")
NETWORK_TRANSMIT_PACKETS = _c("network_transmit_packets_total", "Packets sent.", DEV, "sar -n DEV txpck/s")
NETWORK_RECEIVE_ERRORS = _c("network_receive_errors_total", "Receive errors.", DEV)
NETWORK_TRANSMIT_ERRORS = _c("network_transmit_errors_total", "Transmit errors.", DEV)
NETWORK_RECEIVE_DROP = _c("network_receive_drop_total", "Received packets dropped.", DEV)
NETWORK_TRANSMIT_DROP = _c("network_transmit_drop_total", "Outgoing packets dropped.", DEV)

SPECS = [
    CPUS, CPU_CORES, CPU_SECONDS, CPU_GUEST_SECONDS, PROCS_RUNNING, PROCS_BLOCKED, CONTEXT_SWITCHES, INTERRUPTS,
    FORKS, BOOT_TIME, LOAD1, LOAD5, LOAD15,
    MEMORY_TOTAL, MEMORY_AVAILABLE, MEMORY_FREE, MEMORY_BUFFERS, MEMORY_CACHED, MEMORY_USED, MEMORY_SHARED,
    SWAP_TOTAL, SWAP_USED, SWAP_IN, SWAP_OUT, PAGE_IN, PAGE_OUT, PAGE_FAULTS, MAJOR_PAGE_FAULTS, PAGE_SCANS,
    PAGE_SCANS_BY_RECLAIMER, PAGE_STEALS, OOM_KILLS,
    DISK_READS_COMPLETED, DISK_READS_MERGED, DISK_READ_BYTES, DISK_READ_TIME, DISK_WRITES_COMPLETED,
    DISK_WRITES_MERGED, DISK_WRITTEN_BYTES, DISK_WRITE_TIME, DISK_IO_NOW, DISK_IO_TIME, DISK_IO_TIME_WEIGHTED,
    DISK_DISCARDS_COMPLETED, DISK_DISCARDED_BYTES, DISK_DISCARD_TIME, DISK_FLUSH_REQUESTS, DISK_FLUSH_REQUESTS_TIME,
    KERNEL_PARAMETER, FILE_HANDLES_ALLOCATED,
    NETWORK_RECEIVE_BYTES, NETWORK_TRANSMIT_BYTES, NETWORK_RECEIVE_PACKETS, NETWORK_TRANSMIT_PACKETS,
    NETWORK_RECEIVE_ERRORS, NETWORK_TRANSMIT_ERRORS, NETWORK_RECEIVE_DROP, NETWORK_TRANSMIT_DROP,
]


# Tunables, not figures: read again at most this often (ten sysctl reads were the largest part of a pass; a change
# made with sysctl shows within five minutes).  fs.file-nr, a live count, is read on every pass.
KERNEL_PARAMETERS_SECONDS = 300.0
KERNEL_PARAMETERS = [
    ("kernel.shmmax", ("kernel", "shmmax")),
    ("kernel.shmall", ("kernel", "shmall")),
    ("kernel.shmmni", ("kernel", "shmmni")),
    ("kernel.msgmni", ("kernel", "msgmni")),
    ("kernel.pid_max", ("kernel", "pid_max")),
    ("kernel.threads-max", ("kernel", "threads-max")),
    ("fs.file-max", ("fs", "file-max")),
    ("fs.aio-max-nr", ("fs", "aio-max-nr")),
]


_VMSTAT_COUNTERS = (("pswpin", SWAP_IN, PAGE_SIZE), ("pswpout", SWAP_OUT, PAGE_SIZE), ("pgpgin", PAGE_IN, 1024),
                    ("pgpgout", PAGE_OUT, 1024), ("pgfault", PAGE_FAULTS, 1), ("pgmajfault", MAJOR_PAGE_FAULTS, 1),
                    ("oom_kill", OOM_KILLS, 1))
_RECLAIMERS = ("kswapd", "direct", "khugepaged", "proactive")
# the /proc/vmstat lines _vmstat reads: the counters above, page scans and steals
_VMSTAT_PREFIXES = tuple(key for key, _, _ in _VMSTAT_COUNTERS) + ("pgscan_", "pgsteal_")


def _sum_present(values: dict[str, int], names: list[str]) -> int | None:
    present = [values[n] for n in names if n in values]
    return sum(present) if present else None


class HostCollector(Collector):
    name = "host"
    description = DESCRIPTION
    Settings = HostSettings
    clock = staticmethod(time.monotonic)  # when the kernel parameters were read (tests set their own)

    def __init__(self, settings: HostSettings, context: Context) -> None:
        super().__init__(settings, context)
        self._disk_exclude = re.compile(settings.disk_exclude) if settings.disk_exclude else None
        self._net_exclude = re.compile(settings.netdev_exclude) if settings.netdev_exclude else None
        self._psutil = None  # the psutil back-end, once chosen
        self._text = TextHost(settings.text, self._disk_exclude) if settings.backend == "text" else None
        self._cores: tuple[int, int] | None = None  # (CPUs in /proc/stat, physical cores) of the last count
        self._parameters: tuple[float, list[tuple[str, int]]] | None = None  # (when read, the kernel parameters)

    @property
    def backend(self) -> str:
        """``procfs``, ``psutil`` or ``text``: the back-end this collector reads with."""
        return choose_backend(self.settings.backend, self.context.procfs)

    def specs(self) -> list[MetricSpec]:
        return SPECS + TEXT_SPECS

    def targets(self) -> list[str]:
        return [self._text.target] if self._text is not None else []

    def static_labels(self) -> list[ConfiguredLabels]:
        """The text back-end's host: its labels on every series (the other back-ends read this host: the
        exporter's labels are its)."""
        if self._text is None:
            return []
        return [ConfiguredLabels(self._text.target, "collectors.host.text.labels", self.settings.text.labels)]

    def _path(self, *parts: str) -> str:
        return os.path.join(self.context.procfs, *parts)

    def collect(self, batch: MetricBatch) -> None:
        if self._text is not None:
            self._text.collect(batch)
            return
        if self._psutil is None and self.backend == "psutil":
            if sys.platform.startswith("linux") and os.path.realpath(self.context.procfs) != "/proc":
                raise ValueError(f"the psutil back-end reads /proc, not paths.procfs={self.context.procfs}; "
                                 "use backend: procfs")
            from .psutil_backend import PsutilHost  # psutil is imported only where it is the back-end

            self._psutil = PsutilHost(self._disk_exclude, self._net_exclude)
        if self._psutil is not None:
            self._psutil.collect(batch)
            return
        self._cpu_and_system(batch)
        self._memory(batch)
        self._vmstat(batch)
        self._disks(batch)
        self._network(batch)
        self._kernel_parameters(batch)

    def _kernel_parameters(self, batch: MetricBatch) -> None:
        def read(*parts: str) -> list[int] | None:
            try:
                return [parse_int(v) for v in read_text(self._path("sys", *parts)).split()]
            except (OSError, ValueError):
                return None  # not there (another platform, a restricted container): not guessed

        now = self.clock()
        if self._parameters is None or now - self._parameters[0] >= KERNEL_PARAMETERS_SECONDS:
            found: list[tuple[str, int]] = []
            for parameter, parts in KERNEL_PARAMETERS:
                values = read(*parts)
                if values and len(values) == 1:
                    found.append((parameter, values[0]))
            sem = read("kernel", "sem")
            if sem and len(sem) == 4:
                found += [(f"kernel.sem.{name}", value)
                          for name, value in zip(("semmsl", "semmns", "semopm", "semmni"), sem, strict=True)]
            self._parameters = (now, found)
        for parameter, value in self._parameters[1]:
            KERNEL_PARAMETER.add(batch, value, parameter=parameter)
        file_nr = read("fs", "file-nr")  # a live figure: read on every pass
        if file_nr:
            FILE_HANDLES_ALLOCATED.add(batch, file_nr[0])

    def _cpu_and_system(self, batch: MetricBatch) -> None:
        stat = parse_stat(read_text(self._path("stat")))
        if not stat.cpus:
            raise ValueError(f"{self._path('stat')}: no per-CPU lines")
        CPUS.add(batch, len(stat.cpus))
        # The topology is read again only when the number of CPUs changes (hotplug): a glob and two sysfs reads
        # per CPU on every pass cost more than the rest of /proc/stat (issue 30).
        if self._cores is None or self._cores[0] != len(stat.cpus):
            self._cores = (len(stat.cpus), self._physical_cores())
        cores = self._cores[1]
        if cores:
            CPU_CORES.add(batch, cores)
        for cpu, modes in stat.cpus.items():
            for mode, seconds in modes.items():
                CPU_SECONDS.add(batch, seconds, cpu=cpu, mode=mode)
            for mode, seconds in stat.guest[cpu].items():
                CPU_GUEST_SECONDS.add(batch, seconds, cpu=cpu, mode=mode)
        for value, spec in ((stat.procs_running, PROCS_RUNNING), (stat.procs_blocked, PROCS_BLOCKED),
                            (stat.context_switches, CONTEXT_SWITCHES), (stat.interrupts, INTERRUPTS),
                            (stat.forks, FORKS), (stat.boot_time, BOOT_TIME)):
            if value is not None:
                spec.add(batch, value)
        load1, load5, load15 = parse_loadavg(read_text(self._path("loadavg")))
        LOAD1.add(batch, load1)
        LOAD5.add(batch, load5)
        LOAD15.add(batch, load15)

    def _physical_cores(self) -> int:
        pairs = set()
        for topo in glob.glob(os.path.join(self.context.sysfs, "devices/system/cpu/cpu[0-9]*/topology")):
            try:
                package = read_text(os.path.join(topo, "physical_package_id")).strip()
                core = read_text(os.path.join(topo, "core_id")).strip()
            except OSError:
                continue
            pairs.add((package, core))
        return len(pairs)

    def _memory(self, batch: MetricBatch) -> None:
        mem = parse_meminfo(read_text(self._path("meminfo")))
        if "MemTotal" not in mem:
            raise ValueError(f"{self._path('meminfo')}: no MemTotal")
        total, free = mem["MemTotal"], mem.get("MemFree", 0)
        cached = mem.get("Cached", 0) + mem.get("SReclaimable", 0)
        # MemAvailable exists from 3.14 (and RHEL 6.6+); older kernels: the estimate free(1) used before it.
        available = mem.get("MemAvailable", free + mem.get("Buffers", 0) + cached)
        MEMORY_TOTAL.add(batch, total)
        MEMORY_AVAILABLE.add(batch, available)
        MEMORY_FREE.add(batch, free)
        MEMORY_BUFFERS.add(batch, mem.get("Buffers", 0))
        MEMORY_CACHED.add(batch, cached)
        MEMORY_USED.add(batch, max(total - available, 0))
        MEMORY_SHARED.add(batch, mem.get("Shmem", 0))
        if "SwapTotal" in mem:
            SWAP_TOTAL.add(batch, mem["SwapTotal"])
            SWAP_USED.add(batch, mem["SwapTotal"] - mem.get("SwapFree", 0))

    def _vmstat(self, batch: MetricBatch) -> None:
        vm = parse_key_values(read_text(self._path("vmstat")), _VMSTAT_PREFIXES)
        for key, spec, scale in _VMSTAT_COUNTERS:
            if key in vm:
                spec.add(batch, vm[key] * scale)
        # Per-reclaimer counters (pre-4.x kernels split them by zone: pgscan_kswapd_normal, ...).
        by_reclaimer: dict[str, int] = {}
        for key, value in vm.items():
            if not key.startswith("pgscan_") or key.startswith("pgscan_direct_throttle"):
                continue
            reclaimer = key[len("pgscan_"):]
            for known in _RECLAIMERS:
                if reclaimer == known or reclaimer.startswith(known + "_"):
                    by_reclaimer[known] = by_reclaimer.get(known, 0) + value
        for reclaimer, value in sorted(by_reclaimer.items()):
            PAGE_SCANS_BY_RECLAIMER.add(batch, value, reclaimer=reclaimer)
        # pgscan_anon/pgscan_file (5.8+) also count reclaim inside a cgroup's memory limit, which the
        # per-reclaimer counters leave out; prefer them.
        scans = _sum_present(vm, ["pgscan_anon", "pgscan_file"])
        if scans is None and by_reclaimer:
            scans = sum(by_reclaimer.values())
        if scans is not None:
            PAGE_SCANS.add(batch, scans)
        steals = _sum_present(vm, ["pgsteal_anon", "pgsteal_file"])
        if steals is None:
            steals = _sum_present(vm, [k for k in vm if k.startswith(("pgsteal_kswapd", "pgsteal_direct"))])
        if steals is not None:
            PAGE_STEALS.add(batch, steals)

    def _disks(self, batch: MetricBatch) -> None:
        for disk in parse_diskstats(read_text(self._path("diskstats"))):
            if self._disk_exclude and self._disk_exclude.search(disk.device):
                continue
            d = disk.device
            DISK_READS_COMPLETED.add(batch, disk.reads_completed, device=d)
            DISK_READS_MERGED.add(batch, disk.reads_merged, device=d)
            DISK_READ_BYTES.add(batch, disk.sectors_read * SECTOR_BYTES, device=d)
            DISK_READ_TIME.add(batch, disk.read_ms / 1000, device=d)
            DISK_WRITES_COMPLETED.add(batch, disk.writes_completed, device=d)
            DISK_WRITES_MERGED.add(batch, disk.writes_merged, device=d)
            DISK_WRITTEN_BYTES.add(batch, disk.sectors_written * SECTOR_BYTES, device=d)
            DISK_WRITE_TIME.add(batch, disk.write_ms / 1000, device=d)
            DISK_IO_NOW.add(batch, disk.io_now, device=d)
            DISK_IO_TIME.add(batch, disk.io_ms / 1000, device=d)
            DISK_IO_TIME_WEIGHTED.add(batch, disk.io_weighted_ms / 1000, device=d)
            if disk.discards_completed is not None:
                DISK_DISCARDS_COMPLETED.add(batch, disk.discards_completed, device=d)
                DISK_DISCARDED_BYTES.add(batch, disk.sectors_discarded * SECTOR_BYTES, device=d)
                DISK_DISCARD_TIME.add(batch, disk.discard_ms / 1000, device=d)
            if disk.flushes_completed is not None:
                DISK_FLUSH_REQUESTS.add(batch, disk.flushes_completed, device=d)
                DISK_FLUSH_REQUESTS_TIME.add(batch, disk.flush_ms / 1000, device=d)

    def _network(self, batch: MetricBatch) -> None:
        for net in parse_net_dev(read_text(self._path("net", "dev"))):
            if self._net_exclude and self._net_exclude.search(net.device):
                continue
            d = net.device
            NETWORK_RECEIVE_BYTES.add(batch, net.receive_bytes, device=d)
            NETWORK_TRANSMIT_BYTES.add(batch, net.transmit_bytes, device=d)
            NETWORK_RECEIVE_PACKETS.add(batch, net.receive_packets, device=d)
            NETWORK_TRANSMIT_PACKETS.add(batch, net.transmit_packets, device=d)
            NETWORK_RECEIVE_ERRORS.add(batch, net.receive_errors, device=d)
            NETWORK_TRANSMIT_ERRORS.add(batch, net.transmit_errors, device=d)
            NETWORK_RECEIVE_DROP.add(batch, net.receive_drop, device=d)
            NETWORK_TRANSMIT_DROP.add(batch, net.transmit_drop, device=d)
