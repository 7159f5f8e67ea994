"""Host collector: the figures vmstat, iostat and sar show, as raw counters.

Sources (read once per run): /proc/stat (CPU times, cs, in, r, b), /proc/meminfo, /proc/vmstat (paging,
swapping, page scans), /proc/diskstats (per-disk I/O), /proc/net/dev, /proc/loadavg and sysfs CPU topology.

psutil is deliberately not used here: its procfs root is one process-wide setting (``psutil.PROCFS_PATH``) and its
network counters keep a process-wide "nowrap" cache that adds old values back when a counter goes down (an
interface re-created under the same name), leaving the exported counter permanently above /proc/net/dev.  Both
conflict with a configurable procfs root and with raw counters; the files are simple enough to read directly.

Everything that counts is exported as a counter in base units; rates, percentages and iostat's derived
columns (r/s, await, %util, aqu-sz) are PromQL over these, listed in the README.  Nothing here computes a
rate between its own runs, so two Prometheus replicas or a cached snapshot cannot skew the figures.
"""

from __future__ import annotations

import glob
import os
import re

from pydantic import Field, field_validator

from ..collector import Collector, CollectorSettings, Context, Duration, check_regex
from ..metrics import NAMESPACE, MetricBatch, MetricSpec
from ..procfs import (
    PAGE_SIZE,
    SECTOR_BYTES,
    parse_diskstats,
    parse_key_values,
    parse_loadavg,
    parse_meminfo,
    parse_net_dev,
    parse_stat,
    read_text,
)

P = f"{NAMESPACE}_host"

# node_exporter's default: whole disks only, no partitions, loop, ram or floppy devices.
DEFAULT_DISK_EXCLUDE = r"^(ram|loop|fd|(h|s|v|xv)d[a-z]|nvme\d+n\d+p)\d+$"


class HostSettings(CollectorSettings):
    interval: Duration = Field(15.0, description="Seconds between collections.")
    timeout: Duration = Field(10.0, description="Seconds before a collection counts as failed.")
    disk_exclude: str = Field(DEFAULT_DISK_EXCLUDE, description="Regex of block devices to skip (partitions by default).")
    netdev_exclude: str = Field("", description="Regex of network interfaces to skip (none by default).")

    @field_validator("disk_exclude", "netdev_exclude")
    @classmethod
    def _check_regex(cls, value: str) -> str:
        return check_regex(value)


def _c(name: str, help_: str, labels: tuple[str, ...] = (), note: str = "") -> MetricSpec:
    return MetricSpec(f"{P}_{name}", "counter", help_, labels, note)


def _g(name: str, help_: str, labels: tuple[str, ...] = (), note: str = "") -> MetricSpec:
    return MetricSpec(f"{P}_{name}", "gauge", help_, labels, note)


SPECS = [
    _g("cpus", "Online logical CPUs (cpuN lines of /proc/stat).", note="vmstat/sar CPU count"),
    _g("cpu_cores", "Physical CPU cores (distinct package/core pairs in sysfs topology)."),
    _c("cpu_seconds_total", "CPU time by CPU and mode (user, nice, system, idle, iowait, irq, softirq, steal).",
       ("cpu", "mode"), "vmstat us/sy/id/wa/st: 100 * rate() by mode / cpus"),
    _c("cpu_guest_seconds_total", "CPU time spent running guests, also counted in user/nice.", ("cpu", "mode")),
    _g("procs_running", "Runnable processes (vmstat r).", note="vmstat r"),
    _g("procs_blocked", "Processes blocked waiting for I/O (vmstat b).", note="vmstat b"),
    _c("context_switches_total", "Context switches.", note="vmstat cs: rate()"),
    _c("interrupts_total", "Interrupts serviced.", note="vmstat in: rate()"),
    _c("forks_total", "Processes and threads created."),
    _g("boot_time_seconds", "Unix time the host booted."),
    _g("load1", "1-minute load average."),
    _g("load5", "5-minute load average."),
    _g("load15", "15-minute load average."),
    _g("memory_total_bytes", "Physical memory (MemTotal)."),
    _g("memory_available_bytes", "Memory available for new work without swapping (MemAvailable)."),
    _g("memory_free_bytes", "Unused memory (MemFree; vmstat free)."),
    _g("memory_buffers_bytes", "Block-device buffers (Buffers; vmstat buff)."),
    _g("memory_cached_bytes", "Page cache plus reclaimable slab (Cached + SReclaimable; vmstat cache)."),
    _g("memory_used_bytes", "Memory in use: MemTotal - MemAvailable (as free(1) of procps 4 shows it)."),
    _g("memory_shared_bytes", "Shared memory and tmpfs (Shmem)."),
    _g("swap_total_bytes", "Swap space configured (SwapTotal)."),
    _g("swap_used_bytes", "Swap space in use (SwapTotal - SwapFree; vmstat swpd)."),
    _c("swap_in_bytes_total", "Bytes swapped in from disk (pswpin x page size).", note="vmstat si (KiB/s): rate()/1024"),
    _c("swap_out_bytes_total", "Bytes swapped out to disk (pswpout x page size).", note="vmstat so (KiB/s): rate()/1024"),
    _c("page_in_bytes_total", "Bytes paged in from block devices (pgpgin).", note="vmstat bi: rate()/1024"),
    _c("page_out_bytes_total", "Bytes paged out to block devices (pgpgout).", note="vmstat bo: rate()/1024"),
    _c("page_faults_total", "Page faults, minor and major (pgfault)."),
    _c("major_page_faults_total", "Major page faults needing I/O (pgmajfault)."),
    _c("page_scans_total",
       "Pages scanned by memory reclaim, including cgroup-limited reclaim (pgscan_anon + pgscan_file; "
       "pgscan_kswapd + pgscan_direct on kernels without them).", note="vmstat/sar scan rate: rate()"),
    _c("page_scans_by_reclaimer_total", "Pages scanned by global reclaim, by reclaimer (kswapd, direct, khugepaged, proactive).",
       ("reclaimer",)),
    _c("page_steals_total", "Pages reclaimed (pgsteal_anon + pgsteal_file, or kswapd + direct)."),
    _c("oom_kills_total", "Processes killed by the out-of-memory killer."),
    _c("disk_reads_completed_total", "Reads completed.", ("device",), "iostat r/s: rate()"),
    _c("disk_reads_merged_total", "Adjacent reads merged.", ("device",), "iostat rrqm/s: rate()"),
    _c("disk_read_bytes_total", "Bytes read.", ("device",), "iostat rkB/s: rate()/1024"),
    _c("disk_read_time_seconds_total", "Time spent on reads (sum over all reads).", ("device",),
       "iostat r_await: rate(read_time)/rate(reads_completed)"),
    _c("disk_writes_completed_total", "Writes completed.", ("device",), "iostat w/s: rate()"),
    _c("disk_writes_merged_total", "Adjacent writes merged.", ("device",), "iostat wrqm/s: rate()"),
    _c("disk_written_bytes_total", "Bytes written.", ("device",), "iostat wkB/s: rate()/1024"),
    _c("disk_write_time_seconds_total", "Time spent on writes (sum over all writes).", ("device",),
       "iostat w_await"),
    _g("disk_io_now", "I/O requests in flight.", ("device",)),
    _c("disk_io_time_seconds_total", "Time the device had I/O in flight.", ("device",), "iostat %util: 100 * rate()"),
    _c("disk_io_time_weighted_seconds_total", "I/O time weighted by requests in flight.", ("device",),
       "iostat aqu-sz: rate()"),
    _c("disk_discards_completed_total", "Discards completed.", ("device",)),
    _c("disk_discarded_bytes_total", "Bytes discarded.", ("device",)),
    _c("disk_discard_time_seconds_total", "Time spent on discards.", ("device",)),
    _c("disk_flush_requests_total", "Flush requests completed.", ("device",)),
    _c("disk_flush_requests_time_seconds_total", "Time spent on flush requests.", ("device",)),
    _g("kernel_parameter", "A kernel limit from /proc/sys (kernel.shmmax, kernel.shmall, kernel.sem.semmni, ..., "
       "fs.file-max, kernel.pid_max, kernel.threads-max; shmall in pages, the rest in their own units): the Linux counterparts of the HP-UX tunables in the HPOM "
       "guide's Appendix B (Tables 29-30).", ("parameter",), "HPOM-KERNEL advice, e.g. shmmax against memory"),
    _g("file_handles_allocated", "File handles allocated system-wide (first field of fs.file-nr).", (),
       "against kernel_parameter{parameter=\"fs.file-max\"}"),
    _c("network_receive_bytes_total", "Bytes received.", ("device",), "sar -n DEV rxkB/s: rate()/1024"),
    _c("network_transmit_bytes_total", "Bytes sent.", ("device",), "sar -n DEV txkB/s: rate()/1024"),
    _c("network_receive_packets_total", "Packets received.", ("device",), "sar -n DEV rxpck/s"),
    _c("network_transmit_packets_total", "Packets sent.", ("device",), "sar -n DEV txpck/s"),
    _c("network_receive_errors_total", "Receive errors.", ("device",)),
    _c("network_transmit_errors_total", "Transmit errors.", ("device",)),
    _c("network_receive_drop_total", "Received packets dropped.", ("device",)),
    _c("network_transmit_drop_total", "Outgoing packets dropped.", ("device",)),
]


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


def _sum_present(values: dict[str, int], names: list[str]) -> int | None:
    present = [values[n] for n in names if n in values]
    return sum(present) if present else None


class HostCollector(Collector):
    name = "host"
    description = "Host CPU, memory, paging, page scans, disks and network (vmstat, iostat, sar figures)."
    Settings = HostSettings

    def __init__(self, settings: HostSettings, context: Context) -> None:
        super().__init__(settings, context)
        self._disk_exclude = re.compile(settings.disk_exclude) if settings.disk_exclude else None
        self._net_exclude = re.compile(settings.netdev_exclude) if settings.netdev_exclude else None

    def specs(self) -> list[MetricSpec]:
        return SPECS

    def _path(self, *parts: str) -> str:
        return os.path.join(self.context.procfs, *parts)

    def collect(self, batch: MetricBatch) -> None:
        self._cpu_and_system(batch)
        self._memory(batch)
        self._vmstat(batch)
        self._disks(batch)
        self._network(batch)
        self._kernel_parameters(batch)

    def _kernel_parameters(self, batch: MetricBatch) -> None:
        def read(*parts: str) -> list[int] | None:
            try:
                return [int(v) for v in read_text(self._path("sys", *parts)).split()]
            except (OSError, ValueError):
                return None  # not there (another platform, a restricted container): not guessed

        for parameter, parts in KERNEL_PARAMETERS:
            values = read(*parts)
            if values and len(values) == 1:
                batch.add(f"{P}_kernel_parameter", values[0], parameter=parameter)
        sem = read("kernel", "sem")
        if sem and len(sem) == 4:
            for name, value in zip(("semmsl", "semmns", "semopm", "semmni"), sem):
                batch.add(f"{P}_kernel_parameter", value, parameter=f"kernel.sem.{name}")
        file_nr = read("fs", "file-nr")
        if file_nr:
            batch.add(f"{P}_file_handles_allocated", file_nr[0])

    def _cpu_and_system(self, batch: MetricBatch) -> None:
        stat = parse_stat(read_text(self._path("stat")))
        if not stat.cpus:
            raise ValueError(f"{self._path('stat')}: no per-CPU lines")
        batch.add(f"{P}_cpus", len(stat.cpus))
        cores = self._physical_cores()
        if cores:
            batch.add(f"{P}_cpu_cores", cores)
        for cpu, modes in stat.cpus.items():
            for mode, seconds in modes.items():
                batch.add(f"{P}_cpu_seconds_total", seconds, cpu=cpu, mode=mode)
            for mode, seconds in stat.guest[cpu].items():
                batch.add(f"{P}_cpu_guest_seconds_total", seconds, cpu=cpu, mode=mode)
        for attr, metric in (("procs_running", "procs_running"), ("procs_blocked", "procs_blocked"),
                             ("context_switches", "context_switches_total"), ("interrupts", "interrupts_total"),
                             ("forks", "forks_total"), ("boot_time", "boot_time_seconds")):
            value = getattr(stat, attr)
            if value is not None:
                batch.add(f"{P}_{metric}", value)
        load1, load5, load15 = parse_loadavg(read_text(self._path("loadavg")))
        batch.add(f"{P}_load1", load1)
        batch.add(f"{P}_load5", load5)
        batch.add(f"{P}_load15", load15)

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
        batch.add(f"{P}_memory_total_bytes", total)
        batch.add(f"{P}_memory_available_bytes", available)
        batch.add(f"{P}_memory_free_bytes", free)
        batch.add(f"{P}_memory_buffers_bytes", mem.get("Buffers", 0))
        batch.add(f"{P}_memory_cached_bytes", cached)
        batch.add(f"{P}_memory_used_bytes", max(total - available, 0))
        batch.add(f"{P}_memory_shared_bytes", mem.get("Shmem", 0))
        if "SwapTotal" in mem:
            batch.add(f"{P}_swap_total_bytes", mem["SwapTotal"])
            batch.add(f"{P}_swap_used_bytes", mem["SwapTotal"] - mem.get("SwapFree", 0))

    def _vmstat(self, batch: MetricBatch) -> None:
        vm = parse_key_values(read_text(self._path("vmstat")))
        for key, metric, scale in (("pswpin", "swap_in_bytes_total", PAGE_SIZE),
                                   ("pswpout", "swap_out_bytes_total", PAGE_SIZE),
                                   ("pgpgin", "page_in_bytes_total", 1024),
                                   ("pgpgout", "page_out_bytes_total", 1024),
                                   ("pgfault", "page_faults_total", 1),
                                   ("pgmajfault", "major_page_faults_total", 1),
                                   ("oom_kill", "oom_kills_total", 1)):
            if key in vm:
                batch.add(f"{P}_{metric}", vm[key] * scale)
        # Per-reclaimer counters (pre-4.x kernels split them by zone: pgscan_kswapd_normal, ...).
        by_reclaimer: dict[str, int] = {}
        for key, value in vm.items():
            for reclaimer in ("kswapd", "direct", "khugepaged", "proactive"):
                if key == f"pgscan_{reclaimer}" or key.startswith(f"pgscan_{reclaimer}_"):
                    if key.startswith("pgscan_direct_throttle"):
                        continue
                    by_reclaimer[reclaimer] = by_reclaimer.get(reclaimer, 0) + value
        for reclaimer, value in sorted(by_reclaimer.items()):
            batch.add(f"{P}_page_scans_by_reclaimer_total", value, reclaimer=reclaimer)
        # pgscan_anon/pgscan_file (5.8+) also count reclaim inside a cgroup's memory limit, which the
        # per-reclaimer counters leave out; prefer them.
        scans = _sum_present(vm, ["pgscan_anon", "pgscan_file"])
        if scans is None and by_reclaimer:
            scans = sum(by_reclaimer.values())
        if scans is not None:
            batch.add(f"{P}_page_scans_total", scans)
        steals = _sum_present(vm, ["pgsteal_anon", "pgsteal_file"])
        if steals is None:
            steals = _sum_present(vm, [k for k in vm if k.startswith(("pgsteal_kswapd", "pgsteal_direct"))])
        if steals is not None:
            batch.add(f"{P}_page_steals_total", steals)

    def _disks(self, batch: MetricBatch) -> None:
        for disk in parse_diskstats(read_text(self._path("diskstats"))):
            if self._disk_exclude and self._disk_exclude.search(disk.device):
                continue
            d = disk.device
            batch.add(f"{P}_disk_reads_completed_total", disk.reads_completed, device=d)
            batch.add(f"{P}_disk_reads_merged_total", disk.reads_merged, device=d)
            batch.add(f"{P}_disk_read_bytes_total", disk.sectors_read * SECTOR_BYTES, device=d)
            batch.add(f"{P}_disk_read_time_seconds_total", disk.read_ms / 1000, device=d)
            batch.add(f"{P}_disk_writes_completed_total", disk.writes_completed, device=d)
            batch.add(f"{P}_disk_writes_merged_total", disk.writes_merged, device=d)
            batch.add(f"{P}_disk_written_bytes_total", disk.sectors_written * SECTOR_BYTES, device=d)
            batch.add(f"{P}_disk_write_time_seconds_total", disk.write_ms / 1000, device=d)
            batch.add(f"{P}_disk_io_now", disk.io_now, device=d)
            batch.add(f"{P}_disk_io_time_seconds_total", disk.io_ms / 1000, device=d)
            batch.add(f"{P}_disk_io_time_weighted_seconds_total", disk.io_weighted_ms / 1000, device=d)
            if disk.discards_completed is not None:
                batch.add(f"{P}_disk_discards_completed_total", disk.discards_completed, device=d)
                batch.add(f"{P}_disk_discarded_bytes_total", disk.sectors_discarded * SECTOR_BYTES, device=d)
                batch.add(f"{P}_disk_discard_time_seconds_total", disk.discard_ms / 1000, device=d)
            if disk.flushes_completed is not None:
                batch.add(f"{P}_disk_flush_requests_total", disk.flushes_completed, device=d)
                batch.add(f"{P}_disk_flush_requests_time_seconds_total", disk.flush_ms / 1000, device=d)

    def _network(self, batch: MetricBatch) -> None:
        for net in parse_net_dev(read_text(self._path("net", "dev"))):
            if self._net_exclude and self._net_exclude.search(net.device):
                continue
            d = net.device
            batch.add(f"{P}_network_receive_bytes_total", net.receive_bytes, device=d)
            batch.add(f"{P}_network_transmit_bytes_total", net.transmit_bytes, device=d)
            batch.add(f"{P}_network_receive_packets_total", net.receive_packets, device=d)
            batch.add(f"{P}_network_transmit_packets_total", net.transmit_packets, device=d)
            batch.add(f"{P}_network_receive_errors_total", net.receive_errors, device=d)
            batch.add(f"{P}_network_transmit_errors_total", net.transmit_errors, device=d)
            batch.add(f"{P}_network_receive_drop_total", net.receive_drop, device=d)
            batch.add(f"{P}_network_transmit_drop_total", net.transmit_drop, device=d)
