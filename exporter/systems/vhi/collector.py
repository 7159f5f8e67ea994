"""Verastream Host Integrator (VHI) session server: concurrent host sessions, sessions per CPU, and the memory the
guide's formula asks for (guide rows VHI-SESS, VHI-MEM, VHI-CPU).

Each host session holds one TCP connection from the session server to the host, so the collector counts the
ESTABLISHED connections of the session server processes (found in the shared process table) to ``host_ports``:
sockets in /proc/<pid>/fd matched by inode against that process's /proc/<pid>/net/tcp and tcp6.  The CPUs are the
processes' affinity (Cpus_allowed_list).  Method, permissions and sources: README.md.
"""

from __future__ import annotations

import glob
import math
import os

from ...core.collector import Collector, Context
from ...core.metrics import ConfiguredLabels, MetricBatch, MetricSpec
from ...machine.procfs import read_text
from ...machine.proctypes import PAGE_SIZE
from . import DESCRIPTION, NAME
from .metrics import (
    GUIDE_CPUS,
    MEMORY_REQUIRED,
    SESSION_SERVER_CORES,
    SESSION_SERVER_CPUS,
    SESSION_SERVER_PROCESSES,
    SESSION_SERVER_RESIDENT_MEMORY,
    SESSIONS,
    SESSIONS_BY_PORT,
    SESSIONS_PER_CPU,
    SESSIONS_PER_CPU_LIMIT,
    SPECS,
)
from .parse import format_cpu_list, parse_cpu_list, parse_tcp, physical_cores, socket_inode
from .settings import VhiSettings

MB = 1024 * 1024
VHI_MAX_CORES = 4  # VHI-CPU: "more than 4 physical cores" not recommended (Processors and Performance)
TCP_ESTABLISHED = "01"


class VhiCollector(Collector):
    name = NAME
    description = DESCRIPTION
    Settings = VhiSettings

    def __init__(self, settings: VhiSettings, context: Context) -> None:
        super().__init__(settings, context)
        self.settings: VhiSettings = settings
        self._names = frozenset(settings.process_names)
        self._ports = frozenset(settings.host_ports)

    def specs(self) -> list[MetricSpec]:
        return SPECS

    def static_labels(self) -> list[ConfiguredLabels]:
        return [ConfiguredLabels("", "collectors.vhi.labels", self.settings.labels)]  # no target: the local server

    def collect(self, batch: MetricBatch) -> None:
        s = self.settings
        pids, rss, cpus = [], 0, set()
        for entry in self.context.processes.snapshot(self):
            if entry.comm in self._names:
                proc = entry.stat()
                if proc is None or proc.state == "Z":
                    continue  # exited meanwhile, or a zombie
                base = entry.path
                try:
                    status = read_text(base + "/status")
                except OSError:
                    continue  # exited meanwhile
                pids.append((proc.pid, base))
                rss += proc.rss_pages * PAGE_SIZE
                for line in status.splitlines():
                    if line.startswith("Cpus_allowed_list:"):
                        cpus |= parse_cpu_list(line.split(":", 1)[1])
        by_port = dict.fromkeys(sorted(self._ports), 0)
        tables: dict[str, dict[int, tuple[int, str]]] = {}
        for pid, base in pids:
            try:
                links = []
                for fd in os.listdir(base + "/fd"):
                    try:
                        links.append(os.readlink(os.path.join(base, "fd", fd)))
                    except PermissionError:
                        raise
                    except OSError:  # closed meanwhile, or not a link
                        continue
            except PermissionError:
                raise PermissionError(f"cannot read {base}/fd (pid {pid}): permission denied; run the exporter as "
                                      "the session server's user or as root to count its connections") from None
            except FileNotFoundError:
                continue  # exited
            inodes = {inode for inode in map(socket_inode, links) if inode is not None}
            if not inodes:
                continue
            # the socket tables of the process's own network namespace
            key = os.path.realpath(base + "/ns/net") if os.path.exists(base + "/ns/net") else base
            if key not in tables:
                table: dict[int, tuple[int, str]] = {}
                for name in ("tcp", "tcp6"):
                    try:
                        table.update(parse_tcp(read_text(f"{base}/net/{name}")))
                    except OSError:
                        pass
                tables[key] = table
            for inode in inodes:
                entry = tables[key].get(inode)
                if entry and entry[1] == TCP_ESTABLISHED and entry[0] in self._ports:
                    by_port[entry[0]] += 1
        sessions = sum(by_port.values())
        SESSION_SERVER_PROCESSES.add(batch, len(pids))
        SESSIONS.add(batch, sessions)
        for port, count in by_port.items():
            SESSIONS_BY_PORT.add(batch, count, port=str(port))
        SESSIONS_PER_CPU_LIMIT.add(batch, s.sessions_per_cpu_limit)
        if cpus:
            SESSION_SERVER_CPUS.add(batch, len(cpus))
            SESSIONS_PER_CPU.add(batch, sessions / len(cpus))
            cores = self._cores()
            mine = {cores[cpu] for cpu in cpus if cpu in cores}
            if mine:
                SESSION_SERVER_CORES.add(batch, len(mine))
                # the session server's own cores first (lowest CPU first), then the host's others: at most 4
                ordered = sorted(set(cores.values()), key=lambda core: (core not in mine, min(core)))
                chosen = set().union(*ordered[:VHI_MAX_CORES])
                GUIDE_CPUS.add_info(batch, {"cpus": format_cpu_list(chosen)})
        extra = math.ceil(max(0, sessions - s.base_sessions) / 100)
        MEMORY_REQUIRED.add(batch, (s.memory_base_mb + extra * s.memory_per_100_mb) * MB, level="minimum")
        MEMORY_REQUIRED.add(batch, (s.memory_recommended_base_mb + extra * s.memory_recommended_per_100_mb) * MB,
                            level="recommended")
        if pids:
            SESSION_SERVER_RESIDENT_MEMORY.add(batch, rss)

    def _cores(self) -> dict[int, frozenset[int]]:
        """CPU -> its physical core, from the sysfs topology of the online CPUs (a CPU without a topology directory
        is offline or absent: the host does not have it to give)."""
        topology: dict[int, tuple[str, str, set[int] | None]] = {}
        for topo in glob.glob(os.path.join(self.context.sysfs, "devices/system/cpu/cpu[0-9]*/topology")):
            name = os.path.basename(os.path.dirname(topo))[3:]
            if not (name.isascii() and name.isdigit() and len(name) <= 5):
                continue
            try:
                package = read_text(os.path.join(topo, "physical_package_id")).strip()
                core = read_text(os.path.join(topo, "core_id")).strip()
            except OSError:
                continue
            try:
                siblings: set[int] | None = parse_cpu_list(read_text(os.path.join(topo, "thread_siblings_list")))
            except OSError:
                siblings = None
            topology[int(name)] = (package, core, siblings or None)
        return physical_cores(topology)
