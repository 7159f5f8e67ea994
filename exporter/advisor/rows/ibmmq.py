"""The advice row for IBM MQ queue managers: queue files and recovery log on separate disks (the MQSI report)."""

from __future__ import annotations

import shlex

from ..model import NOT_CONFIGURED, NOT_READABLE, Finding, Row, Snapshot, deviates, follows, unknown

MQSI_REPORT = "MQSeries Integrator for Sun Solaris v1.1: Maximizing persistent message throughput"


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


ROWS: tuple[Row, ...] = (
    Row("MQ-IO", "ibmmq", "queue_manager", "Queue files and log on separate disks",
        "queue data and the recovery log of each queue manager on separate disks",
        "M hub 255 → 375 msg/s with one disk per queue manager and log", MQSI_REPORT,
        "Initial Hub Disk Architecture; Test Case 3, Figure 7; Test Case 4, Figure 9 (MQ-IO)",
        "move the log to its own disk: stop the queue manager (endmqm -w <qmgr>), copy the log directory to a file "
        "system on another disk, set LogPath in the Log stanza of qm.ini, strmqm <qmgr>",
        "the queue manager is stopped while the log moves: change window", _mq_io),
)
