"""The host collector's procfs back-end: Linux's /proc and /sys, read once per run.

Reads /proc/stat, /proc/meminfo, /proc/vmstat, /proc/diskstats, /proc/net/dev, /proc/loadavg, a few /proc/sys
limits and the sysfs CPU topology, and exports them as raw counters in base units (the parsers are ``parse.py``).
Hand-written rather than psutil: psutil's procfs root is process-wide (``paths.procfs`` could not be honoured) and
it adjusts counters that go down.
"""

from __future__ import annotations

import glob
import os
import re
from typing import Callable

from ...core.metrics import MetricBatch
from ...machine.procfs import read_text
from ...machine.proctypes import PAGE_SIZE
from .metrics import (
    BOOT_TIME,
    CONTEXT_SWITCHES,
    CPU_CORES,
    CPU_GUEST_SECONDS,
    CPU_SECONDS,
    CPUS,
    DISK_DISCARD_TIME,
    DISK_DISCARDED_BYTES,
    DISK_DISCARDS_COMPLETED,
    DISK_FLUSH_REQUESTS,
    DISK_FLUSH_REQUESTS_TIME,
    DISK_IO_NOW,
    DISK_IO_TIME,
    DISK_IO_TIME_WEIGHTED,
    DISK_READ_BYTES,
    DISK_READ_TIME,
    DISK_READS_COMPLETED,
    DISK_READS_MERGED,
    DISK_WRITE_TIME,
    DISK_WRITES_COMPLETED,
    DISK_WRITES_MERGED,
    DISK_WRITTEN_BYTES,
    FILE_HANDLES_ALLOCATED,
    FORKS,
    INTERRUPTS,
    KERNEL_PARAMETER,
    LOAD1,
    LOAD5,
    LOAD15,
    MAJOR_PAGE_FAULTS,
    MEMORY_AVAILABLE,
    MEMORY_BUFFERS,
    MEMORY_CACHED,
    MEMORY_FREE,
    MEMORY_SHARED,
    MEMORY_TOTAL,
    MEMORY_USED,
    NETWORK_RECEIVE_BYTES,
    NETWORK_RECEIVE_DROP,
    NETWORK_RECEIVE_ERRORS,
    NETWORK_RECEIVE_PACKETS,
    NETWORK_TRANSMIT_BYTES,
    NETWORK_TRANSMIT_DROP,
    NETWORK_TRANSMIT_ERRORS,
    NETWORK_TRANSMIT_PACKETS,
    OOM_KILLS,
    PAGE_FAULTS,
    PAGE_IN,
    PAGE_OUT,
    PAGE_SCANS,
    PAGE_SCANS_BY_RECLAIMER,
    PAGE_STEALS,
    PROCS_BLOCKED,
    PROCS_RUNNING,
    SWAP_IN,
    SWAP_OUT,
    SWAP_TOTAL,
    SWAP_USED,
)
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


class ProcfsHost:
    """One host read through /proc and /sys, kept from run to run (the CPU topology and the kernel parameters are
    read again only when they may have changed)."""

    def __init__(self, procfs: str, sysfs: str, disk_exclude: re.Pattern[str] | None,
                 net_exclude: re.Pattern[str] | None, clock: Callable[[], float]) -> None:
        self.procfs = procfs
        self.sysfs = sysfs
        self._disk_exclude = disk_exclude
        self._net_exclude = net_exclude
        self.clock = clock  # when the kernel parameters were read (the collector's: tests set their own)
        self._cores: tuple[int, int] | None = None  # (CPUs in /proc/stat, physical cores) of the last count
        self._parameters: tuple[float, list[tuple[str, int]]] | None = None  # (when read, the kernel parameters)

    def _path(self, *parts: str) -> str:
        return os.path.join(self.procfs, *parts)

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
        for topo in glob.glob(os.path.join(self.sysfs, "devices/system/cpu/cpu[0-9]*/topology")):
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
