"""The advice rows for the Verastream Host Integrator session server: sessions per CPU, memory, CPU cores (VHI
technical note 10087)."""

from __future__ import annotations

import math

from ...systems.vhi.parse import parse_cpu_list as parse_cpus
from ..model import NOT_READABLE, Finding, Row, Snapshot, deviates, follows, unknown
from .common import count, mb_up, sizes

VHI_NOTE = "Verastream Host Integrator Server Performance (Technical Note 10087)"
SESSION_SERVER = "session server"
VHI_MAX_CORES = 4  # VHI-CPU


def _vhi_problem(snap: Snapshot) -> str | None:
    problem = snap.collector_problem("vhi")
    if problem:
        return problem
    if not snap.value("middleware_vhi_session_server_processes"):
        return f"{NOT_READABLE}: no session server process is running"
    return None


def _guide_cpus(snap: Snapshot) -> str | None:
    """The CPUs of at most 4 physical cores of this host (the vhi collector's taskset list), when the topology was
    read."""
    found = snap.all("middleware_vhi_session_server_guide_cpus_info")
    return found[0][0].get("cpus") or None if found else None


TASKSET = "for p in $(pgrep sesssrvr); do taskset -a -cp {cpus} \"$p\"; done"


def _vhi_sess(snap: Snapshot) -> list[Finding]:
    reason = _vhi_problem(snap)
    if reason:
        return [unknown(SESSION_SERVER, reason)]
    per_cpu = snap.value("middleware_vhi_sessions_per_cpu")
    sessions = snap.value("middleware_vhi_sessions")
    cpus = snap.value("middleware_vhi_session_server_cpus")
    limit = snap.value("middleware_vhi_sessions_per_cpu_limit") or 250
    if per_cpu is None or sessions is None:
        return [unknown(SESSION_SERVER, f"{NOT_READABLE}: sessions or the session server's CPUs not read")]
    observed = f"{count(sessions)} sessions on {count(cpus or 0)} CPUs = {count(per_cpu)} per CPU"
    if per_cpu <= limit:
        return [follows(SESSION_SERVER, observed, per_cpu)]
    servers = max(2, math.ceil(sessions / (limit * max(cpus or 1, 1))))
    remedy = (f"spread the sessions over {servers} session servers (a session server per {count(limit)} sessions "
              "per CPU)")
    guide = _guide_cpus(snap)
    if guide is not None and len(parse_cpus(guide)) > (cpus or 0):
        # more CPUs only where the host has them, and only up to the guide's 4 cores (VHI-CPU)
        remedy += (", or let this one use the CPUs of up to 4 cores (VHI-CPU): " + TASKSET.format(cpus=guide))
    return [deviates(SESSION_SERVER, observed, per_cpu, remedy)]


def _vhi_mem(snap: Snapshot) -> list[Finding]:
    reason = _vhi_problem(snap) or snap.collector_problem("host")
    if reason:
        return [unknown(SESSION_SERVER, reason)]
    recommended = snap.value("middleware_vhi_memory_required_bytes", level="recommended")
    minimum = snap.value("middleware_vhi_memory_required_bytes", level="minimum")
    memory = snap.value("middleware_host_memory_total_bytes")
    if recommended is None or memory is None:
        return [unknown(SESSION_SERVER, f"{NOT_READABLE}: host memory or the sessions not read")]
    memory_text, recommended_text = sizes(memory, recommended)
    _, minimum_text = sizes(memory, minimum)
    observed = f"host memory {memory_text}; formula {minimum_text} minimum, {recommended_text} recommended"
    text = f"host memory ≥ {recommended_text} (recommended; {minimum_text} minimum)"
    if memory >= recommended:
        return [follows(SESSION_SERVER, observed, memory, recommended=text)]
    return [deviates(SESSION_SERVER, observed, memory, f"add at least {mb_up(recommended - memory)} MiB of memory, "
                     "or move sessions to another session server", recommended=text)]


def _vhi_cpu(snap: Snapshot) -> list[Finding]:
    reason = _vhi_problem(snap) or snap.collector_problem("host")
    if reason:
        return [unknown(SESSION_SERVER, reason)]
    cpus = snap.value("middleware_vhi_session_server_cpus")
    cores = snap.value("middleware_vhi_session_server_cores")
    host_cores = snap.value("middleware_host_cpu_cores")
    if cpus is None or cores is None:
        # the cores are the sysfs topology's (thread_siblings_list): CPUs / threads per core miscounts a host that
        # numbers a core's threads n and n+8, so without the topology the row is not judged
        return [unknown(SESSION_SERVER, f"{NOT_READABLE}: the session server's CPU affinity or the CPU topology "
                        "(/sys/devices/system/cpu/cpu*/topology) was not read")]
    observed = (f"{count(cpus)} CPUs on {count(cores)} physical cores usable by the session server"
                + (f"; host {count(host_cores)} cores" if host_cores else ""))
    if cores <= VHI_MAX_CORES:
        return [follows(SESSION_SERVER, observed, cores)]
    guide = _guide_cpus(snap)
    remedy = (TASKSET.format(cpus=guide) + f"\n(CPUs {guide}: every thread of {VHI_MAX_CORES} physical cores)\n"
              if guide else "") + "or run more session servers, each on at most 4 cores"
    return [deviates(SESSION_SERVER, observed, cores, remedy)]


ROWS: tuple[Row, ...] = (
    Row("VHI-SESS", "vhi", "session_server", "Concurrent sessions per CPU",
        "at most 250 concurrent host sessions per CPU of a session server (250 per single-CPU server)",
        "a single-CPU session server carries 250 concurrent host sessions; more demand needs more session servers",
        VHI_NOTE, "Concurrent Sessions (VHI-SESS)", None,
        "a new session server takes sessions as clients connect; no restart of this one", _vhi_sess),
    Row("VHI-MEM", "vhi", "session_server", "Memory for the session server",
        "512 MB (1 GB recommended) up to 100 sessions, plus 64 MB (128 MB recommended) per further 100",
        "about 35 MB per 100 sessions (13-entity model) to 73 MB (100 entities); VHI uses at most 4 GB",
        VHI_NOTE, "Memory; Test 1: Session Server Memory Usage (VHI-MEM)", None, "adding memory needs a change window",
        _vhi_mem),
    Row("VHI-CPU", "vhi", "session_server", "CPU cores of the session server",
        "at most 4 physical cores per session server; security and full logging cost extra CPU",
        "gain per CPU doubling 75 %, 38 %, 14 %; security adds 35-55 % overhead, full logging a significant one",
        VHI_NOTE, "Processors and Performance; Other Performance Variables; Test 2: Effect of Number of CPUs on "
        "Performance (VHI-CPU)", None, "taskset applies at once to the running processes", _vhi_cpu),
)
