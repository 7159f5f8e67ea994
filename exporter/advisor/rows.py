"""The guides' advice rows as data: for each, what it recommends, what the guide measured, where it says so, the
standard remedy (the guide's own command where it gives one) and a judge that reads the snapshot.

A judge reads only the collectors' last samples (``model.Snapshot``): the ``*_follows_guide`` series the collectors
already compute where they exist, the raw figures otherwise (process groups, host memory, kernel parameters).
Remedies are filled in with the live values (group numbers, sizes, the mount's own source and options); where the
exporter cannot know a value (a redo log path) the command keeps a ``<placeholder>``. Rows the guides state as
live limits (HPOM-ACK, -QUEUE, MQ-CPU, MQ-DEPTH, DOM-*) are alerts, not advice: docs/advisor.md. HPOM-CMA and
HPOM-ACTIVE are both: an alert on the live count, and advice because the cure is configuration (policies, correlation).
"""

from __future__ import annotations

import math
import shlex
from collections import Counter, defaultdict
from typing import Callable

from ..systems.vhi.parse import parse_cpu_list as parse_cpus
from .model import NOT_APPLICABLE, NOT_CONFIGURED, NOT_READABLE, Finding, Row, Snapshot, deviates, follows, unknown

MIB = 1024 * 1024

HPOM_GUIDE = "HP Operations Manager for UNIX 8.21/8.30 Performance Guide"
ORACLE_NFS = "Oracle 10g on HP-UX and IBM System Storage N series"
VHI_NOTE = "Verastream Host Integrator Server Performance (Technical Note 10087)"
MQSI_REPORT = "MQSeries Integrator for Sun Solaris v1.1: Maximizing persistent message throughput"

HPOM_SERVER = "management server"
HOST = "local host"
SESSION_SERVER = "session server"

OVCONFCHG = "ovconfchg -ovrg server -ns opc -set {variable} {value}"  # the guide's own command (Table 1 and Table 28)
HPOM_RESTART = ("server variables are read when the HPOM server processes start: restart them (opcsv -stop; "
                "opcsv -start) in a change window")
REMOUNT_NOTE = "remounting stops the database's I/O on that mount: change window, database shut down first"
SPFILE_RESTART = "a static parameter: SCOPE=SPFILE, effective after an instance restart (change window)"

# The guides' figures that are not a collector setting (the collectors' own settings hold the rest).
SWAP_BASE_MB, SWAP_PER_MOTIF_MB, SWAP_PER_JAVA_MB = 512, 12, 64  # HPOM-MEM, Appendix B, Table 31
RAM_BASE_MB, RAM_PER_MOTIF_MB, RAM_PER_JAVA_MB = 512, 35, 128
MSI_PROGRAMS = 5  # HPOM-MSI: "more than five" (the summary's reading; docs/sources.md)
SERVICE_TREE_DEPTH = 5  # HPOM-SLOD
CMA_LIMIT = 10  # HPOM-CMA: "10 or fewer" (the query's cma_limit, shown by middleware_hpom_cma_limit)
ACTIVE_MESSAGES = 50_000  # HPOM-ACTIVE: start-up "slows significantly" from 50,000 (mixin thresholds)
WITHOUT_KEY_SHARE = 0.5  # HPOM-AUTOKEYS: the project's default, as the alert's (mixin thresholds)
KGL_THRESHOLD_BYTES = 50 * MIB  # ORA-KGL: 50 MB from 10.2.0.2
VHI_MAX_CORES = 4  # VHI-CPU
NFS_OPTIONS = "rw,bg,hard,nointr,proto=tcp,vers=3,rsize=32768,wsize=32768,timeo=600"  # ORA-NFS without forcedirectio
NFS_KEYS = {"hard", "soft", "proto", "vers", "nfsvers", "rsize", "wsize", "timeo", "forcedirectio"}  # shown


# ---- formatting ----------------------------------------------------------------------------------------------------
def size(value: float | None) -> str:
    """Bytes for people: 64 KiB, 20 MiB, 15.6 GiB."""
    if value is None:
        return "-"
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(value) >= scale:
            figure = value / scale
            return f"{figure:.0f} {unit}" if figure == int(figure) or figure >= 100 else f"{figure:.1f} {unit}"
    return f"{value:.0f} B"


def sizes(value: float, limit: float | None) -> tuple[str, str]:
    """Two sizes compared with each other, with as many digits as it takes for the texts to differ when the values
    do: "1.2 GiB against 1.2 GiB" must not hide the borderline that decides the status."""
    if limit is None or value == limit or size(value) != size(limit):
        return size(value), size(limit)
    for digits in (2, 3):
        for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
            if max(abs(value), abs(limit)) >= scale:
                a, b = f"{value / scale:.{digits}f} {unit}", f"{limit / scale:.{digits}f} {unit}"
                if a != b:
                    return a, b
                break
    return f"{value:,.0f} bytes", f"{limit:,.0f} bytes"


def percent(share: float, *edges: float) -> str:
    """A share as a percentage, with a decimal where the whole number would land on an edge that decides."""
    text = f"{share:.0%}"
    if share not in edges and any(text == f"{edge:.0%}" for edge in edges):
        text = f"{share:.1%}" if f"{share:.1%}" not in {f"{e:.1%}" for e in edges} else f"{share:.3%}"
    return text


def count(value: float) -> str:
    return f"{value:,.0f}" if value == int(value) else f"{value:,.2f}"


def duration(seconds: float) -> str:
    """A window for people: 45 s, 12 min, 6 h, 2.5 d."""
    for unit, scale in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= scale:
            figure = seconds / scale
            return f"{figure:.0f} {unit}" if figure == int(figure) or figure >= 10 else f"{figure:.1f} {unit}"
    return f"{seconds:.0f} s" if seconds >= 1 else "second"


def mb_up(value: float) -> int:
    """Bytes rounded up to whole MiB."""
    return int(math.ceil(value / MIB))


# ---- HPOM ----------------------------------------------------------------------------------------------------------
def _hpom_source(snap: Snapshot, source: str, what: str) -> str | None:
    """The unknown reason when the HPOM collector or one of its sources gives nothing; None when it was read."""
    problem = snap.collector_problem("hpom")
    if problem:
        return problem
    if snap.value("middleware_hpom_source_present", source=source) == 0:
        return f"{NOT_CONFIGURED}: {what} is not configured here"
    success = snap.value("middleware_hpom_source_success", source=source)
    if success is None:
        return f"{NOT_CONFIGURED}: the hpom collector does not read {what}"
    if success == 0:
        return f"{NOT_READABLE}: {what} failed in the last run (see /api/v1/collectors)"
    return None


def _hpom_remote(snap: Snapshot) -> str | None:
    """The ``target`` label of an HPOM collector reading another host through its command prefix (or, without a
    label, the host the prefix names), else None."""
    for labels, _ in snap.all("middleware_hpom_source_success"):
        if labels.get("target"):
            return labels["target"]
    prefix = snap.setting("collectors", "hpom", "command_prefix") if "hpom" in snap.enabled else None
    if prefix and isinstance(prefix, (list, tuple)):
        return str(prefix[-1])  # ssh ... <host>: the last word names the host
    return None


def _hpom_server(snap: Snapshot) -> str:
    """The HPOM rows' target: the collector's ``target`` label, else "management server"."""
    for labels, _ in snap.all("middleware_hpom_source_success"):
        if labels.get("target"):
            return labels["target"]
    return HPOM_SERVER


def _variable(snap: Snapshot, name: str) -> tuple[str | None, str | None, float | None]:
    """(value, origin, follows) of a server variable from middleware_hpom_server_variable_*."""
    info = snap.all("middleware_hpom_server_variable_info", variable=name)
    value = info[0][0].get("value") if info else None
    origin = info[0][0].get("origin") if info else None
    return value, origin, snap.value("middleware_hpom_server_variable_follows_guide", variable=name)


def _server_version(snap: Snapshot) -> str | None:
    """The HPOM version the site states for the server (collectors.hpom.server_version), when known."""
    version = snap.setting("collectors", "hpom", "server_version")
    return str(version) if version else None


def _shown(name: str, value: str | None, origin: str | None) -> str | None:
    if value is None:
        return None
    return f"{name}={value or '(empty)'}" + (" (default)" if origin == "default" else
                                             " (not set)" if origin == "unset" else "")


def _variable_judge(name: str, wanted: str) -> Callable[[Snapshot], list[Finding]]:
    def judge(snap: Snapshot) -> list[Finding]:
        server = _hpom_server(snap)
        reason = _hpom_source(snap, "ovconfget", "ovconfget (the server variables)")
        if reason:
            return [unknown(server, reason)]
        value, origin, verdict = _variable(snap, name)
        observed = _shown(name, value, origin)
        number = snap.value("middleware_hpom_server_variable_value", variable=name)
        version = _server_version(snap)
        if verdict is None:
            return [unknown(server, f"{NOT_APPLICABLE}: the exporter does not judge {name} on this server "
                            + (f"(server_version {version} is older than the variable)" if version and origin != "set"
                               else "(a server version older than the variable, or the variable unset without a "
                               "default)"), observed, number)]
        if verdict == 1:
            return [follows(server, observed, number)]
        older = [(v, since) for v, since in _newer_values(name) if observed and value is not None
                 and value.strip().upper() == v]
        if older and version:  # checks.evaluate: the value is newer than the stated version
            observed += (f": no such value before {older[0][1]} (server_version {version}; Test: Varying the Number "
                         "of Active Java GUIs, footnote 4)")
        return [deviates(server, observed, number, OVCONFCHG.format(variable=name, value=wanted))]
    return judge


def _newer_values(name: str) -> tuple[tuple[str, str], ...]:
    from ..systems.hpom.checks import VARIABLES

    return next((v.values_since for v in VARIABLES if v.name == name), ())


POLICY_NOTE = "changed policies take effect once distributed to the managed nodes"


def _hpom_autokeys(snap: Snapshot) -> list[Finding]:
    server = _hpom_server(snap)
    parts, problems, remedies, notes = [], [], [], []
    judged = 0
    reason = _hpom_source(snap, "ovconfget", "ovconfget (the server variables)")
    if reason:
        problems.append(reason)
    else:
        value, origin, verdict = _variable(snap, "OPC_CREATE_AUTO_KEYS")
        version = _server_version(snap)
        if verdict is not None:
            judged += 1
            parts.append(_shown("OPC_CREATE_AUTO_KEYS", value, origin)
                         or f"OPC_CREATE_AUTO_KEYS {'on' if verdict else 'off'}")
            if verdict == 0:
                remedies.append(OVCONFCHG.format(variable="OPC_CREATE_AUTO_KEYS", value="TRUE"))
                notes.append(HPOM_RESTART)
        elif version:
            # the auto key feature came with the 8.31 server patch: before it, keys come only from the policies
            parts.append(f"OPC_CREATE_AUTO_KEYS: no automatic keys before 8.31 (server_version {version})")
    share = None
    reason = _hpom_source(snap, "database", "the HPOM database")
    if reason:
        problems.append(reason)
    elif snap.value("middleware_hpom_query_success", query="active_messages") != 1:
        problems.append(f"{NOT_READABLE}: the active_messages query failed or did not run")
    else:
        judged += 1
        without = snap.total("middleware_hpom_active_messages_without_key") or 0.0
        active = snap.total("middleware_hpom_active_messages") or 0.0
        share = without / active if active else 0.0
        parts.append(f"{count(without)} of {count(active)} active messages without a key "
                     f"({percent(share, WITHOUT_KEY_SHARE)})")
        if share > WITHOUT_KEY_SHARE:
            remedies.append("set a message key (and a key relation) in the policies and templates that send the "
                            "keyless messages; opcmsg/opcmon: -option msgkey=<key>")
            notes.append(POLICY_NOTE)
    observed = "; ".join(parts) or None
    if remedies:
        # each part of the remedy with its own note: a policy change needs no restart of the server processes
        return [deviates(server, observed, share, "\n".join(remedies), remedy_note="; ".join(notes))]
    if problems and judged < 2:
        return [unknown(server, problems[0], observed, share)]
    return [follows(server, observed, share)]


def _hpom_query(snap: Snapshot, query: str, what: str) -> str | None:
    """The unknown reason when the HPOM database or one of its queries gave nothing; None when it was read."""
    reason = _hpom_source(snap, "database", "the HPOM database")
    if reason:
        return reason
    success = snap.value("middleware_hpom_query_success", query=query)
    if success is None:
        return f"{NOT_CONFIGURED}: the {query} query ({what}) is not run"
    if success != 1:
        return f"{NOT_READABLE}: the {query} query ({what}) failed in the last run"
    return None


def _hpom_cma(snap: Snapshot) -> list[Finding]:
    server = _hpom_server(snap)
    reason = _hpom_query(snap, "custom_message_attributes", "CMAs per active message")
    if reason:
        return [unknown(server, reason)]
    most = snap.value("middleware_hpom_cma_max_per_message")
    over = snap.value("middleware_hpom_messages_over_cma_limit") or 0.0
    limit = snap.value("middleware_hpom_cma_limit") or CMA_LIMIT
    if most is None:
        return [unknown(server, f"{NOT_READABLE}: no middleware_hpom_cma_max_per_message")]
    observed = f"at most {count(most)} CMAs on one active message; {count(over)} messages over {count(limit)}"
    if most <= limit:
        return [follows(server, observed, most)]
    table = snap.setting("collectors", "hpom", "cma_table") or "opc_op.opc_act_cust_attrib"
    column = snap.setting("collectors", "hpom", "cma_message_column") or "message_number"
    return [deviates(server, observed, most,
                     f"find the policies that set more than {count(limit)} CMAs (SELECT {column}, COUNT(*) FROM "
                     f"{table} GROUP BY {column} HAVING COUNT(*) > {int(limit)}; the messages' policy names) and "
                     "move the extra attributes into the message text or a single CMA")]


def _hpom_active(snap: Snapshot) -> list[Finding]:
    server = _hpom_server(snap)
    reason = _hpom_query(snap, "active_messages", "active messages")
    if reason:
        return [unknown(server, reason)]
    active = snap.total("middleware_hpom_active_messages")
    if active is None:
        return [unknown(server, f"{NOT_READABLE}: no middleware_hpom_active_messages")]
    observed = f"{count(active)} active messages"
    if active < ACTIVE_MESSAGES:
        return [follows(server, observed, active)]
    return [deviates(server, observed, active,
                     "acknowledge what is dealt with, in bulks of at most 5,000 (HPOM-ACK); switch on duplicate "
                     "suppression with message keys (HPOM-AUTOKEYS) and message correlation in the policies that "
                     "send the most messages (opc_op.opc_act_messages grouped by application and object)")]


def _hpom_slod(snap: Snapshot) -> list[Finding]:
    server = _hpom_server(snap)
    problem = snap.collector_problem("hpom")
    if problem:
        return [unknown(server, problem)]
    depth = snap.value("middleware_hpom_service_tree_depth")
    slod = snap.value("middleware_hpom_service_load_on_demand")
    if depth is None:
        if snap.value("middleware_hpom_query_success", query="service_tree") == 0:
            return [unknown(server, f"{NOT_READABLE}: the service_tree query failed")]
        return [unknown(server, f"{NOT_CONFIGURED}: the service tree depth needs the hpom collector's "
                        "service_table (HPOM's service tables are not public)")]
    observed = f"service tree {count(depth)} levels; Service Load on Demand " + (
        "on" if slod == 1 else "off" if slod == 0 else "unknown")
    if depth <= SERVICE_TREE_DEPTH or slod == 1:
        return [follows(server, observed, depth)]
    if slod is None:
        return [unknown(server, f"{NOT_CONFIGURED}: whether Service Load on Demand is on (the hpom collector's "
                        "service_load_on_demand or service_load_on_demand_variable)", observed, depth)]
    return [deviates(server, observed, depth)]


def _hpom_here(snap: Snapshot) -> str | None:
    """The unknown reason when this host is not known to be an HPOM management server (host-level HPOM rows)."""
    remote = _hpom_remote(snap)
    if remote:
        return (f"{NOT_APPLICABLE}: the HPOM server {remote} is read remotely; the host figures here are this host's "
                "(judge it with an exporter on that server)")
    if "hpom" in snap.enabled:
        return None
    running = snap.total("middleware_process_group_processes", group="hpom_server")
    if running:
        return None
    return f"{NOT_APPLICABLE}: no HPOM management server here (hpom collector disabled, no hpom_server process)"


def _gui_counts(snap: Snapshot) -> tuple[float | None, float | None]:
    return (snap.total("middleware_process_group_processes", group="hpom_java_gui"),
            snap.total("middleware_process_group_processes", group="hpom_motif_gui"))


def _hpom_gui(snap: Snapshot) -> list[Finding]:
    reason = _hpom_here(snap) or snap.collector_problem("process") or snap.collector_problem("host")
    if reason:
        return [unknown(HPOM_SERVER, reason)]
    java, _ = _gui_counts(snap)
    cpus = snap.value("middleware_host_cpus")
    if java is None or not cpus:
        return [unknown(HPOM_SERVER, f"{NOT_READABLE}: no hpom_java_gui process group or no CPU count")]
    observed = f"{count(java)} Java GUI sessions (opcuiwww) on {count(cpus)} CPUs"
    if java <= cpus:
        return [follows(HPOM_SERVER, observed, java)]
    return [deviates(HPOM_SERVER, observed, java)]


def _hpom_msi(snap: Snapshot) -> list[Finding]:
    server = _hpom_server(snap)
    remote = _hpom_remote(snap)
    if remote:  # the MSI programs are counted in the process table of the exporter's host, not the server's
        return [unknown(server, f"{NOT_APPLICABLE}: the HPOM server {remote} is read remotely; MSI programs are "
                        "counted in this host's process table (judge it with an exporter on that server)")]
    reason = _hpom_source(snap, "msi", "the MSI programs (msi_programs)")
    if reason:
        return [unknown(server, reason)]
    running = snap.value("middleware_hpom_msi_programs_running")
    if running is None:
        return [unknown(server, f"{NOT_READABLE}: no middleware_hpom_msi_programs_running")]
    observed = f"{count(running)} MSI programs running"
    if running <= MSI_PROGRAMS:
        return [follows(server, observed, running)]
    return [deviates(server, observed, running)]


def _hpom_mem(snap: Snapshot) -> list[Finding]:
    reason = _hpom_here(snap) or snap.collector_problem("host") or snap.collector_problem("process")
    if reason:
        return [unknown(HOST, reason)]
    ram, swap = snap.value("middleware_host_memory_total_bytes"), snap.value("middleware_host_swap_total_bytes")
    java, motif = _gui_counts(snap)
    if ram is None or swap is None:
        return [unknown(HOST, f"{NOT_READABLE}: host memory or swap size missing")]
    java, motif = java or 0.0, motif or 0.0
    ram_need = (RAM_BASE_MB + RAM_PER_MOTIF_MB * motif + RAM_PER_JAVA_MB * java) * MIB
    swap_need = ram + (SWAP_BASE_MB + SWAP_PER_MOTIF_MB * motif + SWAP_PER_JAVA_MB * java) * MIB
    ram_text, ram_need_text = sizes(ram, ram_need)
    swap_text, swap_need_text = sizes(swap, swap_need)
    observed = (f"RAM {ram_text} (formula {ram_need_text}), swap {swap_text} (formula {swap_need_text}) "
                f"for {count(java)} Java and {count(motif)} Motif GUIs")
    recommended = f"RAM ≥ {ram_need_text}, swap ≥ {swap_need_text}"
    if ram >= ram_need and swap >= swap_need:
        return [follows(HOST, observed, ram, recommended=recommended)]
    remedies = []
    if ram < ram_need:
        remedies.append(f"add memory: at least {mb_up(ram_need - ram)} MiB more RAM")
    if swap < swap_need:
        more = mb_up(swap_need - swap)
        remedies.append(f"fallocate -l {more}M /swapfile.hpom && chmod 600 /swapfile.hpom && mkswap /swapfile.hpom "
                        "&& swapon /swapfile.hpom\n"
                        "echo '/swapfile.hpom none swap defaults 0 0' >> /etc/fstab")
    return [deviates(HOST, observed, ram if ram < ram_need else swap, "\n".join(remedies), recommended=recommended)]


def _hpom_kernel(snap: Snapshot) -> list[Finding]:
    reason = _hpom_here(snap) or snap.collector_problem("host")
    if reason:
        return [unknown(HOST, reason)]
    shmmax = snap.value("middleware_host_kernel_parameter", parameter="kernel.shmmax")
    ram = snap.value("middleware_host_memory_total_bytes")
    if ram is None:
        return [unknown(HOST, f"{NOT_READABLE}: the host's memory size was not read")]
    if shmmax is None:  # a Linux /proc/sys the exporter cannot read, or a platform it reads no kernel limit of
        return [unknown(HOST, f"{NOT_READABLE}: kernel.shmmax was not read here (/proc/sys/kernel/shmmax; the "
                        "HP-UX formulas of Tables 29-30 have no other counterpart the exporter reads)")]
    shm_text, ram_text = sizes(shmmax, ram)
    observed = f"kernel.shmmax {shm_text}, RAM {ram_text}"
    if shmmax >= ram:
        return [follows(HOST, observed, shmmax)]
    return [deviates(HOST, observed, shmmax, f"sysctl -w kernel.shmmax={int(ram)}\n"
                     f"echo 'kernel.shmmax = {int(ram)}' > /etc/sysctl.d/90-hpom.conf")]


# ---- Oracle --------------------------------------------------------------------------------------------------------
def _databases(snap: Snapshot, which: Callable[[object], bool] = lambda _: True) -> list[str]:
    """The configured databases (settings; else the ones the snapshot names) that ``which`` selects."""
    entries = snap.setting("collectors", "oracle", "databases")
    if entries is not None:
        return [e.name for e in entries if which(e)]
    names = {labels["database"] for labels, _ in snap.all("middleware_oracle_up")}
    return sorted(names)


def _hpom_databases(snap: Snapshot) -> list[str]:
    if snap.setting("collectors", "oracle", "databases") is not None:
        return _databases(snap, lambda e: bool(getattr(e, "hpom", False)))
    return sorted({labels["database"] for labels, _ in snap.all("middleware_oracle_follows_guide")
                   if labels.get("check", "").startswith("hpom_")})


def _database_problem(snap: Snapshot, db: str, query: str | None = "parameters") -> str | None:
    problem = snap.collector_problem("oracle")
    if problem:
        return problem
    if snap.value("middleware_oracle_up", database=db) == 0 or \
            snap.value("middleware_oracle_collect_success", database=db) == 0:
        return f"{NOT_READABLE}: no session to {db} in the last run"
    if query and snap.value("middleware_oracle_query_success", database=db, query=query) == 0:
        return f"{NOT_READABLE}: the {query} query failed on {db}"
    return None


def _no_database(snap: Snapshot, what: str = "no Oracle database in the configuration") -> list[Finding]:
    """No database to judge: the oracle collector's problem, else ``what`` (none is configured)."""
    return [unknown("(none)", snap.collector_problem("oracle") or f"{NOT_CONFIGURED}: {what}",
                    target_kind="database")]


def _check(snap: Snapshot, db: str, check: str) -> tuple[float | None, float | None, float | None]:
    return (snap.value("middleware_oracle_follows_guide", database=db, check=check),
            snap.value("middleware_oracle_guide_observed", database=db, check=check),
            snap.value("middleware_oracle_guide_threshold", database=db, check=check))


def _param(snap: Snapshot, db: str, name: str) -> float | None:
    return snap.value("middleware_oracle_parameter_value", database=db, name=name)


def _redo(snap: Snapshot, db: str, min_groups: int, min_bytes: float) -> tuple[str | None, list[str], bool]:
    """(observed, remedy lines, deviates) for the redo groups of a database, per thread."""
    groups = snap.all("middleware_oracle_redo_group_size_bytes", database=db)
    if not groups:
        return None, [], False
    per_thread: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for labels, value in groups:
        per_thread[labels.get("thread", "1")].append((int(labels.get("log_group", "0") or 0), value))
    next_group = max(g for items in per_thread.values() for g, _ in items) + 1
    parts, remedy, bad = [], [], False
    threads = sorted(per_thread, key=lambda t: int(t) if t.isdigit() else 0)
    for thread in threads:
        items = per_thread[thread]
        # a group just under the minimum is shown with the digits that tell it from the minimum
        shown = Counter(sizes(v, min_bytes)[0] for _, v in items)
        parts.append(("" if len(threads) == 1 else f"thread {thread}: ")
                     + ", ".join(f"{n} x {s}" for s, n in shown.items()))
        small = [g for g, v in items if v < min_bytes]
        add = max(min_groups - (len(items) - len(small)), 0)
        if add:
            bad = True
            clause = f"THREAD {thread} " if len(threads) > 1 else ""
            for _ in range(add):
                remedy.append(f"ALTER DATABASE ADD LOGFILE {clause}GROUP {next_group} ('<path>/redo{next_group:02d}"
                              f".log') SIZE {mb_up(min_bytes)}M;")
                next_group += 1
        if small:
            bad = True
            remedy.append("ALTER SYSTEM SWITCH LOGFILE; ALTER SYSTEM CHECKPOINT;  -- until v$log shows these INACTIVE")
            remedy += [f"ALTER DATABASE DROP LOGFILE GROUP {g};" for g in sorted(small)]
    return "redo " + "; ".join(parts), remedy, bad


def _oracle_settings(snap: Snapshot) -> object:
    guide = snap.setting("collectors", "oracle", "guide")
    if guide is None:
        from ..systems.oracle.settings import GuideThresholds

        guide = GuideThresholds()
    return guide


def _ora_redo(snap: Snapshot) -> list[Finding]:
    g = _oracle_settings(snap)
    dbs = _databases(snap)
    if not dbs:
        return _no_database(snap)
    result = []
    for db in dbs:
        reason = _database_problem(snap, db, "redo_groups")
        observed, remedy, bad = (None, [], False) if reason else _redo(snap, db, g.min_redo_groups,
                                                                        g.min_redo_group_bytes)
        if reason or observed is None:
            result.append(unknown(db, reason or f"{NOT_READABLE}: no redo groups read from {db}"))
        elif bad:
            smallest = min(v for _, v in snap.all("middleware_oracle_redo_group_size_bytes", database=db))
            result.append(deviates(db, observed, smallest, "\n".join(remedy)))
        else:
            result.append(follows(db, observed, None))
    return result


def _ora_dbwr(snap: Snapshot) -> list[Finding]:
    dbs = _databases(snap)
    if not dbs:
        return _no_database(snap)
    result = []
    for db in dbs:
        reason = _database_problem(snap, db)
        verdict, observed, threshold = _check(snap, db, "db_writer_processes")
        if reason or verdict is None:
            result.append(unknown(db, reason or f"{NOT_READABLE}: db_writer_processes or the host's cores not read"))
            continue
        text = f"db_writer_processes {count(observed)}, {count(threshold)} cores"
        if verdict == 1:
            result.append(follows(db, text, observed))
        else:
            result.append(deviates(db, text, observed, f"ALTER SYSTEM SET db_writer_processes={int(threshold)} "
                                   "SCOPE=SPFILE;", recommended=f"db_writer_processes ≥ {count(threshold)} (cores)"))
    return result


def _ora_sga(snap: Snapshot) -> list[Finding]:
    g = _oracle_settings(snap)
    entries = snap.setting("collectors", "oracle", "databases")
    dbs = _databases(snap)
    if not dbs:
        return _no_database(snap)
    dedicated = ({e.name for e in entries if getattr(e, "dedicated_host", False)} if entries is not None else
                 {labels["database"] for labels, _ in snap.all("middleware_oracle_follows_guide",
                                                               check="sga_share_of_memory")})
    result = []
    for db in dbs:
        if db not in dedicated:
            result.append(unknown(db, f"{NOT_APPLICABLE}: {db} is not marked dedicated_host (the 50-70 % band is for "
                                  "a host that runs only Oracle)"))
            continue
        reason = _database_problem(snap, db) or _database_problem(snap, db, "host")
        verdict, share, _ = _check(snap, db, "sga_share_of_memory")
        if reason or verdict is None:
            result.append(unknown(db, reason or f"{NOT_READABLE}: sga_target/sga_max_size or host memory not read"))
            continue
        memory = snap.value("middleware_oracle_host_memory_bytes", database=db) or 0.0
        sga = _param(snap, db, "sga_max_size") or _param(snap, db, "sga_target") or 0.0
        text = f"SGA {size(sga)} = {percent(share, g.sga_share_min, g.sga_share_max)} of {size(memory)}"
        if verdict == 1:
            result.append(follows(db, text, share))
            continue
        target = mb_up(memory * (g.sga_share_min + g.sga_share_max) / 2)
        result.append(deviates(db, text, share, f"ALTER SYSTEM SET sga_max_size={target}M SCOPE=SPFILE;\n"
                                                f"ALTER SYSTEM SET sga_target={target}M SCOPE=SPFILE;"))
    return result


def _ora_nfs(snap: Snapshot) -> list[Finding]:
    dbs = _databases(snap)
    if not dbs:
        return _no_database(snap)
    entries = {e.name: e for e in (snap.setting("collectors", "oracle", "databases") or [])}
    result = []
    for db in dbs:
        entry = entries.get(db)
        if entry is not None and getattr(entry, "local_files", "auto") == "no":
            result.append(unknown(db, f"{NOT_APPLICABLE}: {db}'s files are not on this host (local_files: no)",
                                  target_kind="database"))
            continue
        reason = _database_problem(snap, db)
        if reason:
            result.append(unknown(db, reason, target_kind="database"))
            continue
        systems = snap.all("middleware_oracle_file_system_info", database=db)
        nfs = [labels for labels, _ in systems if labels.get("fstype", "").startswith("nfs")]
        if not systems and snap.value("middleware_oracle_mount_table_success") == 0:
            result.append(unknown(db, f"{NOT_READABLE}: the host's mount table could not be read (see "
                                  "/api/v1/collectors, source error 'mounts')", target_kind="database"))
            continue
        if not systems:
            result.append(unknown(db, f"{NOT_APPLICABLE}: {db}'s files are not on this host (no file system found)",
                                  target_kind="database"))
            continue
        if not nfs:
            result.append(unknown(db, f"{NOT_APPLICABLE}: no NFS mount holds {db}'s files", target_kind="database"))
            continue
        direct = (snap.all("middleware_oracle_parameter_info", database=db, name="filesystemio_options") or
                  [({}, 0)])[0][0].get("value", "")
        for labels in nfs:
            mountpoint = labels.get("mountpoint", "")
            checks = {o["option"]: v for o, v in snap.all("middleware_oracle_nfs_mount_follows_guide", database=db,
                                                          mountpoint=mountpoint)}
            target = f"{db}:{mountpoint}"
            observed = f"{labels.get('fstype')} " + ",".join(
                o for o in labels.get("options", "").split(",") if o.split("=")[0] in NFS_KEYS) + (
                f"; filesystemio_options={direct}" if direct else "")
            if not checks:
                result.append(unknown(target, f"{NOT_READABLE}: no option checks for the mount", observed))
                continue
            missing = sorted(option for option, value in checks.items() if value != 1)
            if not missing:
                result.append(follows(target, observed, 0))
                continue
            remedy = []
            if set(missing) - {"direct_io"}:
                fstab_point = mountpoint.replace(" ", "\\040")
                remedy.append(f"/etc/fstab: {labels.get('source', '<server>:<export>')} {fstab_point} nfs "
                              f"{NFS_OPTIONS} 0 0\numount {shlex.quote(mountpoint)} && mount {shlex.quote(mountpoint)}")
            if "direct_io" in missing:
                remedy.append("ALTER SYSTEM SET filesystemio_options=directio SCOPE=SPFILE;  -- direct I/O from "
                              "Oracle: Linux has no forcedirectio mount option")
            notes = []
            if set(missing) - {"direct_io"}:
                notes.append(REMOUNT_NOTE)
            if "direct_io" in missing:
                notes.append("filesystemio_options is " + SPFILE_RESTART)
            result.append(deviates(target, f"{observed} (missing: {', '.join(missing)})", len(missing),
                                   "\n".join(remedy), remedy_note="; ".join(notes)))
    return result


def _ora_kgl(snap: Snapshot) -> list[Finding]:
    dbs = _databases(snap)
    if not dbs:
        return _no_database(snap)
    result = []
    for db in dbs:
        reason = _database_problem(snap, db, None)
        sources = {labels.get("source"): value for labels, value in snap.all("middleware_oracle_source_success",
                                                                              database=db)}
        warnings = snap.value("middleware_oracle_kgl_heap_warnings_total", database=db)
        threshold = _param(snap, db, "_kgl_large_heap_warning_threshold")
        if reason:
            result.append(unknown(db, reason))
            continue
        if warnings is None:
            why = (f"{NOT_READABLE}: the alert log of {db} could not be read" if sources and not any(sources.values())
                   else f"{NOT_CONFIGURED}: the alert log of {db} is not read (heap_warnings)")
            result.append(unknown(db, why))
            continue
        logged = snap.value("middleware_oracle_kgl_heap_warning_logged_threshold_bytes", database=db)
        window = snap.value("middleware_oracle_kgl_heap_warnings_window_seconds", database=db) or 0.0
        shown = threshold if threshold is not None else logged
        span = f"in the last {duration(window)} of the alert log" if window > 0 else "in the alert log read so far"
        text = f"{count(warnings)} heap warning{'' if warnings == 1 else 's'} {span}" + (
            f"; threshold {size(shown)}" if shown is not None else "")
        if warnings == 0 and window <= 0:
            # The counter starts where the first run found the log's end: no warning yet is no evidence of none
            # (a one-shot advise, or an exporter that has just started).
            history = ("heap_warnings.history reads an earlier stretch of the view at the start" if
                       "alert_log_view" in sources else "the alert-log file is read from its end at the start")
            result.append(unknown(db, f"{NOT_READABLE}: none of {db}'s alert log has been read yet (the count starts "
                                  f"at the exporter's first run; {history}): 0 warnings says nothing", text, warnings))
            continue
        if warnings == 0:
            result.append(follows(db, text, warnings))
            continue
        biggest = snap.value("middleware_oracle_kgl_heap_warning_max_heap_bytes", database=db) or 0.0
        new = max(KGL_THRESHOLD_BYTES, mb_up(biggest) * MIB)
        result.append(deviates(db, text, warnings, f'ALTER SYSTEM SET "_kgl_large_heap_warning_threshold"={new} '
                               "SCOPE=SPFILE;"))
    return result


def _hpom_ora(snap: Snapshot) -> list[Finding]:
    g = _oracle_settings(snap)
    dbs = _hpom_databases(snap)
    if not dbs:
        return _no_database(snap, "no Oracle database is marked hpom: true")
    result = []
    for db in dbs:
        reason = _database_problem(snap, db)
        if reason:
            result.append(unknown(db, reason))
            continue
        parts, remedy, bad, missing = [], [], [], []
        for check, parameter, unit, sql in (
                ("hpom_sga_target", "sga_target", size, lambda t: f"ALTER SYSTEM SET sga_target={mb_up(t)}M "
                                                                   "SCOPE=SPFILE;  -- sga_max_size at least as big"),
                ("log_buffer", "log_buffer", size, lambda t: f"ALTER SYSTEM SET log_buffer={int(t)} SCOPE=SPFILE;"),
                ("hpom_processes", "processes", count, lambda t: f"ALTER SYSTEM SET processes={int(t)} SCOPE=SPFILE;"),
                ("hpom_multiblock_read_count", "db_file_multiblock_read_count", count,
                 lambda t: f"ALTER SYSTEM SET db_file_multiblock_read_count={int(t)} SCOPE=BOTH;")):
            verdict, observed, threshold = _check(snap, db, check)
            if verdict is None:
                missing.append(parameter)
                continue
            parts.append(f"{parameter} {unit(observed)}")
            if verdict == 0:
                bad.append(parameter)
                remedy.append(sql(threshold))
        observed_redo, redo_remedy, redo_bad = _redo(snap, db, g.min_redo_groups, g.min_redo_group_bytes)
        if observed_redo is None:
            missing.append("redo groups")
        else:
            parts.append(observed_redo)
            if redo_bad:
                bad.append("redo groups")
                remedy += redo_remedy
        observed = "; ".join(parts) or None
        if bad:
            result.append(deviates(db, f"{observed} (below: {', '.join(bad)})", len(bad), "\n".join(remedy)))
        elif missing:
            result.append(unknown(db, f"{NOT_READABLE}: not read: {', '.join(missing)}", observed))
        else:
            result.append(follows(db, observed, 0))
    return result


# ---- IBM MQ --------------------------------------------------------------------------------------------------------
def _queue_managers(snap: Snapshot) -> list[str]:
    entries = snap.setting("collectors", "ibmmq", "queue_managers")
    if entries is not None:
        return [e.name for e in entries]
    return sorted({labels["qmgr"] for labels, _ in snap.all("middleware_ibmmq_backend_success")})


def _mq_io(snap: Snapshot) -> list[Finding]:
    problem = snap.collector_problem("ibmmq")
    qmgrs = _queue_managers(snap)
    if not qmgrs:
        return [unknown("(none)", problem or f"{NOT_CONFIGURED}: no queue manager in the configuration",
                        target_kind="queue_manager")]
    entries = {e.name: e for e in (snap.setting("collectors", "ibmmq", "queue_managers") or [])}
    result = []
    for qmgr in qmgrs:
        if problem:
            result.append(unknown(qmgr, problem))
            continue
        files = {labels.get("use"): labels for labels, _ in snap.all("middleware_ibmmq_file_system_info", qmgr=qmgr)}
        if "data" not in files or "log" not in files:
            entry = entries.get(qmgr)
            configured = files or (entry is not None and entry.data_path and entry.log_path)
            reason = (f"{NOT_READABLE}: the data_path or log_path of {qmgr} could not be read here" if configured
                      else f"{NOT_CONFIGURED}: where {qmgr} keeps its queue files and its log (data_path and "
                      "log_path, for a queue manager on this host)")
            result.append(unknown(qmgr, reason))
            continue
        data, logs = files["data"].get("device"), files["log"].get("device")
        observed = f"queue files on {data}, log on {logs}"
        if data != logs:
            result.append(follows(qmgr, observed))
            continue
        entry = entries.get(qmgr)
        log_path = getattr(entry, "log_path", None) or "the log directory"
        data_path = getattr(entry, "data_path", None)
        ini = f"{data_path.rstrip('/')}/qm.ini" if data_path else "qm.ini"
        q = shlex.quote(qmgr)
        result.append(deviates(qmgr, observed, None,
                               f"move the log to its own disk: stop the queue manager (endmqm -w {q}), copy "
                               f"{log_path} to a file system on another disk than {data}, set LogPath in the Log "
                               f"stanza of {ini} to the new directory, strmqm {q}"))
    return result


# ---- VHI -----------------------------------------------------------------------------------------------------------
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


# ---- the rows ------------------------------------------------------------------------------------------------------
ROWS: tuple[Row, ...] = (
    Row("HPOM-VAR-GUITHREAD", "hpom", "hpom_server", "Message manager GUI thread (OPCMSGM_USE_GUI_THREAD)",
        "OPCMSGM_USE_GUI_THREAD=TRUE (or NO_RPC from 8.22)", "message processing 310 → 410 msg/s with TRUE",
        HPOM_GUIDE, "Management Server Configuration Variables, Table 1; Test: Detailed Inspection of Message "
        "Processing (HPOM-VAR-GUITHREAD)",
        OVCONFCHG.format(variable="OPCMSGM_USE_GUI_THREAD", value="TRUE"), HPOM_RESTART,
        _variable_judge("OPCMSGM_USE_GUI_THREAD", "TRUE")),
    Row("HPOM-VAR-ACKLIMIT", "hpom", "hpom_server", "Mark acknowledged messages only (OPC_DIRECT_ACKN_LIMIT)",
        "OPC_DIRECT_ACKN_LIMIT=0 (default 50)",
        "marking is faster than moving: 10,000 acknowledgements with 1 GUI 33.9 s marked against 64.25 s moved; "
        "moving 10,000 with 5 GUIs drove the disk to 97 %",
        HPOM_GUIDE, "Management Server Configuration Variables, Table 1; Test: Message Acknowledgment, Tables 21-22 "
        "and Conclusions (HPOM-VAR-ACKLIMIT)",
        OVCONFCHG.format(variable="OPC_DIRECT_ACKN_LIMIT", value="0"), HPOM_RESTART,
        _variable_judge("OPC_DIRECT_ACKN_LIMIT", "0")),
    Row("HPOM-VAR-COMMIT", "hpom", "hpom_server", "History download commit count (OPC_UPDWN_COMMIT_COUNT)",
        "OPC_UPDWN_COMMIT_COUNT ≥ 1000 (default 100)",
        "history download 367 → 518 msg/s with OPC_UPDWN_COMMIT_COUNT=1000",
        HPOM_GUIDE, "Management Server Configuration Variables, Table 1; Test: Downloading 100,000 History Messages, "
        "Table 27 (HPOM-VAR-COMMIT)",
        OVCONFCHG.format(variable="OPC_UPDWN_COMMIT_COUNT", value="1000"), HPOM_RESTART,
        _variable_judge("OPC_UPDWN_COMMIT_COUNT", "1000")),
    Row("HPOM-AUTOKEYS", "hpom", "hpom_server", "Message keys for duplicate suppression",
        f"OPC_CREATE_AUTO_KEYS on, and at most {WITHOUT_KEY_SHARE:.0%} of active messages without a message key",
        "duplicate suppression without message keys: 28 msg/s (8.21) and 137 msg/s (8.30), against 476 and 226 "
        "with it off",
        HPOM_GUIDE, "Test: Suppressing Message Duplicates, Tables 12-13 and Conclusions; Summary of Performance "
        "Findings (HPOM-AUTOKEYS)",
        OVCONFCHG.format(variable="OPC_CREATE_AUTO_KEYS", value="TRUE"), HPOM_RESTART, _hpom_autokeys),
    Row("HPOM-CMA", "hpom", "hpom_server", "Custom message attributes per message",
        f"at most {CMA_LIMIT} custom message attributes (CMAs) per message",
        "message throughput 212.8 → 192.3 → 112.4 msg/s and Java GUI start-up 13.5 → 20.3 → 51.0 s with 1, 10 and "
        "50 CMAs per message",
        HPOM_GUIDE, "Summary of Performance Findings (Java GUI); Test: Varying the Number of CMAs, Tables 18-20 "
        "(HPOM-CMA)", None, "changed policies take effect once distributed to the managed nodes",
        _hpom_cma),
    Row("HPOM-ACTIVE", "hpom", "hpom_server", "Active messages in the browser",
        f"fewer than {ACTIVE_MESSAGES:,} active messages; keep them as low as possible",
        "Java GUI start-up slows significantly from 50,000 active messages",
        HPOM_GUIDE, "Summary of Performance Findings; Test: Varying the Number of Managed Nodes and Messages, "
        "Tables 16-17 (HPOM-ACTIVE)", None, None, _hpom_active),
    Row("HPOM-SLOD", "hpom", "hpom_server", "Service Load on Demand for deep service trees",
        f"Service Load on Demand on when the service tree is deeper than {SERVICE_TREE_DEPTH} levels",
        "first Java GUI start-up 6 s at depth 5 against 272 s at depth 10 (breadth 3) without it",
        HPOM_GUIDE, "Test: Varying the Shape and Size of the Service Tree, Tables 24-25 and Conclusions (HPOM-SLOD)",
        "switch on Service Load on Demand for the Service Navigator (the HPOM Server Configuration Variables "
        "manual names the switch for your version)", "Java GUIs pick it up at their next log-on",
        _hpom_slod),
    Row("HPOM-GUI", "hpom", "hpom_server", "Java GUI sessions against CPUs",
        "no more Java GUI sessions (opcuiwww) than CPUs; start only the GUIs needed",
        "throughput falls linearly with each GUI while CPUs are free, faster once none are",
        HPOM_GUIDE, "Test: Varying the Number of Active Java GUIs, Interpretation and Conclusions; Summary of "
        "Performance Findings (HPOM-GUI)",
        "close unused Java GUI sessions (ps -o pid,etime,args -C opcuiwww shows them), or add CPUs", None,
        _hpom_gui),
    Row("HPOM-MSI", "hpom", "hpom_server", "Simultaneous MSI programs",
        f"at most {MSI_PROGRAMS} simultaneous MSI programs", "more than five MSI programs decrease throughput",
        HPOM_GUIDE, "Summary of Performance Findings; Test: Sending Messages to MSI Programs, Interpretation "
        "(HPOM-MSI)",
        "combine MSI programs, or let fewer run at a time (opcmsi registrations)", None, _hpom_msi),
    Row("HPOM-MEM", "hpom", "host", "Memory and swap of the management server",
        f"RAM ≥ {RAM_BASE_MB} + {RAM_PER_MOTIF_MB} × Motif + {RAM_PER_JAVA_MB} × Java GUIs MB; swap ≥ RAM + "
        f"{SWAP_BASE_MB} + {SWAP_PER_MOTIF_MB} × Motif + {SWAP_PER_JAVA_MB} × Java MB",
        "the guide's sizing formula for the operators that work at once", HPOM_GUIDE,
        "Appendix B: Memory and Kernel Parameter Formulas, Table 31 (HPOM-MEM)",
        None, "swap can be added online; more RAM needs a change window", _hpom_mem),
    Row("HPOM-KERNEL", "hpom", "host", "Shared memory limit of the management server",
        "kernel.shmmax at least the RAM size (the Linux counterpart of Appendix B's shmmax formula)",
        "Appendix B sizes shmmax to the RAM", HPOM_GUIDE,
        "Appendix B: Memory and Kernel Parameter Formulas, Tables 29-30 (HPOM-KERNEL)",
        None, "sysctl -w applies at once; the file keeps it across reboots", _hpom_kernel),
    Row("HPOM-ORA", "oracle", "database", "Oracle parameters of the HPOM database",
        "sga_target ≥ 350 MB, log_buffer ≥ 1.5 MB, 5 redo groups × 100 MB, processes ≥ 200, "
        "db_file_multiblock_read_count 32",
        "history download 37.5 msg/s with 3 × 20 MB redo groups against 405 msg/s with 100 MB groups and commit "
        "count 1000",
        HPOM_GUIDE, "Test Environment, RDBMS Installation, Table 6; Test: Downloading 100,000 History Messages, "
        "Table 26 and Conclusions (HPOM-ORA)",
        None, SPFILE_RESTART + "; redo groups are added online", _hpom_ora),
    Row("ORA-REDO", "oracle", "database", "Redo log groups and sizes",
        "at least 5 redo groups of at least 100 MB per thread",
        "more and bigger redo logs raise download speed dramatically: 37.5 → 405 msg/s (3 × 20 MB → 100 MB groups)",
        HPOM_GUIDE, "Test: Message Storm, Interpretation; Test: Downloading 100,000 History Messages, Tables 26-27 "
        "and Conclusions (ORA-REDO)",
        None, "online: add the new groups first, drop a small group only once v$log shows it INACTIVE", _ora_redo),
    Row("ORA-DBWR", "oracle", "database", "Database writer processes",
        "db_writer_processes at least the number of processor cores", "the report's best result used 8 writers "
        "on 2 CPUs", ORACLE_NFS, "Oracle tuning (ORA-DBWR)", None, SPFILE_RESTART, _ora_dbwr),
    Row("ORA-SGA", "oracle", "database", "SGA share of memory on a dedicated host",
        "total SGA 50-70 % of the host's memory when it runs only Oracle",
        "the report's tuning for an Oracle-only host", ORACLE_NFS, "Oracle tuning (ORA-SGA)",
        None, SPFILE_RESTART, _ora_sga),
    Row("ORA-NFS", "oracle", "mount", "NFS mount options of the database files",
        f"mount options {NFS_OPTIONS} and direct I/O (forcedirectio, or filesystemio_options=directio)",
        "direct I/O alone +482 %; all tuning +640 % (1,423 → 10,531 OETs/min)",
        ORACLE_NFS, "HP-UX NFS configuration, The forcedirectio mount option; Oracle tuning; Oracle performance "
        "over NFS (ORA-NFS)",
        None, REMOUNT_NOTE, _ora_nfs),
    Row("ORA-KGL", "oracle", "database", "Library-cache heap warnings",
        "no \"Heap size ... exceeds notification threshold\" warnings: raise _kgl_large_heap_warning_threshold "
        "(50 MB from 10.2.0.2)",
        "the warnings fill the alert log; 10.2.0.2 raised the default to 50 MB", ORACLE_NFS,
        "Oracle tuning (ORA-KGL)", None, SPFILE_RESTART, _ora_kgl),
    Row("MQ-IO", "ibmmq", "queue_manager", "Queue files and log on separate disks",
        "queue data and the recovery log of each queue manager on separate disks",
        "M hub 255 → 375 msg/s with one disk per queue manager and log", MQSI_REPORT,
        "Initial Hub Disk Architecture; Test Case 3, Figure 7; Test Case 4, Figure 9 (MQ-IO)",
        "move the log to its own disk: stop the queue manager (endmqm -w <qmgr>), copy the log directory to a file "
        "system on another disk, set LogPath in the Log stanza of qm.ini, strmqm <qmgr>",
        "the queue manager is stopped while the log moves: change window", _mq_io),
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

# The advice rows of the guides; tests/advisor/test_advisor.py checks that each appears with a status.
ADVICE_ROWS = tuple(row.id for row in ROWS)
