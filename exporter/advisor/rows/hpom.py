"""The advice rows of the HPOM guide for the management server: server variables, message keys, custom message
attributes, active messages, service trees, Java GUIs, MSI programs, and its memory, swap and kernel limits."""

from __future__ import annotations

from typing import Callable

from ..model import NOT_APPLICABLE, NOT_CONFIGURED, NOT_READABLE, Finding, Row, Snapshot, deviates, follows, unknown
from .common import HPOM_GUIDE, MIB, count, mb_up, percent, sizes

HPOM_SERVER = "management server"
HOST = "local host"
OVCONFCHG = "ovconfchg -ovrg server -ns opc -set {variable} {value}"  # the guide's own command (Table 1 and Table 28)
HPOM_RESTART = ("server variables are read when the HPOM server processes start: restart them (opcsv -stop; "
                "opcsv -start) in a change window")
# The guides' figures that are not a collector setting (the collectors' own settings hold the rest).
SWAP_BASE_MB, SWAP_PER_MOTIF_MB, SWAP_PER_JAVA_MB = 512, 12, 64  # HPOM-MEM, Appendix B, Table 31
RAM_BASE_MB, RAM_PER_MOTIF_MB, RAM_PER_JAVA_MB = 512, 35, 128
MSI_PROGRAMS = 5  # HPOM-MSI: "more than five" (the summary's reading; docs/sources.md)
SERVICE_TREE_DEPTH = 5  # HPOM-SLOD
CMA_LIMIT = 10  # HPOM-CMA: "10 or fewer" (the query's cma_limit, shown by middleware_hpom_cma_limit)
ACTIVE_MESSAGES = 50_000  # HPOM-ACTIVE: start-up "slows significantly" from 50,000 (mixin thresholds)
WITHOUT_KEY_SHARE = 0.5  # HPOM-AUTOKEYS: the project's default, as the alert's (mixin thresholds)


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
    from ...systems.hpom.checks import VARIABLES

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
)
