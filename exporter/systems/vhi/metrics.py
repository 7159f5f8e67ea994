"""The VHI collector's metrics: the session server's host sessions, CPUs and cores, and the guide's figures (rows
VHI-SESS, VHI-MEM, VHI-CPU).  Declarations only (``collector.py`` adds the samples)."""

from __future__ import annotations

from ...core.metrics import NAMESPACE, MetricSpec

P = f"{NAMESPACE}_vhi"
SESSION_SERVER_PROCESSES = MetricSpec(f"{P}_session_server_processes", "gauge", "Session server processes running.",
                                      ())
SESSIONS = MetricSpec(f"{P}_sessions", "gauge", "Concurrent host sessions: established TCP connections of the session "
                      "server processes to the host ports.", (), "VHI-SESS")
SESSIONS_BY_PORT = MetricSpec(f"{P}_sessions_by_port", "gauge", "Concurrent host sessions by remote port.", ("port",))
SESSION_SERVER_CPUS = MetricSpec(f"{P}_session_server_cpus", "gauge",
                                 "CPUs the session server may run on (its CPU affinity).", ())
SESSION_SERVER_CORES = MetricSpec(f"{P}_session_server_cores", "gauge",
                                  "Physical cores the session server may run on: the distinct cores (sysfs CPU "
                                  "topology, thread_siblings_list) of the online CPUs in its affinity; absent when "
                                  "the topology is not readable.", (), "VHI-CPU: more than 4 cores are not recommended")
GUIDE_CPUS = MetricSpec(f"{P}_session_server_guide_cpus_info", "info",
                        "The CPUs of at most 4 physical cores (every hardware thread of each, the session server's own "
                        "cores first): the taskset list that keeps it within the guide's 4 cores.", (), "VHI-CPU")
SESSIONS_PER_CPU = MetricSpec(f"{P}_sessions_per_cpu", "gauge",
                              "Concurrent host sessions per CPU the session server may use.", (),
                              "VHI-SESS: over 250 is beyond the guide")
SESSIONS_PER_CPU_LIMIT = MetricSpec(f"{P}_sessions_per_cpu_limit", "gauge",
                                    "The guide's limit of sessions per CPU (250).", ())
MEMORY_REQUIRED = MetricSpec(f"{P}_memory_required_bytes", "gauge", "Memory the guide's formula asks for at the "
                             "current sessions: 512 MB (1 GB recommended) up to 100 sessions plus 64 MB (128 MB) per "
                             "further 100.", ("level",), "VHI-MEM: compare with middleware_host_memory_total_bytes")
SESSION_SERVER_RESIDENT_MEMORY = MetricSpec(f"{P}_session_server_resident_memory_bytes", "gauge",
                                            "Resident memory of the session server processes (the guide measured "
                                            "about 35-73 MB per 100 sessions).", ())

SPECS = [SESSION_SERVER_PROCESSES, SESSIONS, SESSIONS_BY_PORT, SESSION_SERVER_CPUS, SESSION_SERVER_CORES, GUIDE_CPUS,
         SESSIONS_PER_CPU, SESSIONS_PER_CPU_LIMIT, MEMORY_REQUIRED, SESSION_SERVER_RESIDENT_MEMORY]
