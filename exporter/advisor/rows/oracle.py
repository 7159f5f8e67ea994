"""The advice rows for Oracle databases: the HPOM database's parameters (the HPOM guide), redo logs, database writers,
the SGA, the NFS mount options of the database files and library-cache heap warnings."""

from __future__ import annotations

import shlex
from collections import Counter, defaultdict
from datetime import datetime, timezone
from typing import Callable

from ..model import NOT_APPLICABLE, NOT_CONFIGURED, NOT_READABLE, Finding, Row, Snapshot, deviates, follows, unknown
from .common import HPOM_GUIDE, MIB, count, duration, mb_up, percent, size, sizes

ORACLE_NFS = "Oracle 10g on HP-UX and IBM System Storage N series"
REMOUNT_NOTE = "remounting stops the database's I/O on that mount: change window, database shut down first"
SPFILE_RESTART = "a static parameter: SCOPE=SPFILE, effective after an instance restart (change window)"
KGL_THRESHOLD_BYTES = 50 * MIB  # ORA-KGL: 50 MB from 10.2.0.2
NFS_OPTIONS = "rw,bg,hard,nointr,proto=tcp,vers=3,rsize=32768,wsize=32768,timeo=600"  # ORA-NFS without forcedirectio
NFS_KEYS = {"hard", "soft", "proto", "vers", "nfsvers", "rsize", "wsize", "timeo", "forcedirectio"}  # shown


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
        from ...systems.oracle.settings import GuideThresholds

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


def _moment(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _kgl_source(snap: Snapshot, db: str, source: str | None) -> str:
    """Where the heap warnings of ``db`` were read, for people: the file's path or the view's name."""
    entry = next((e for e in snap.setting("collectors", "oracle", "databases", default=[]) if e.name == db), None)
    heap = getattr(entry, "heap_warnings", None)
    if source == "alert_log_file":
        return f"alert-log file {heap.alert_log}" if heap is not None and heap.alert_log else "the alert-log file"
    return (getattr(heap, "view", None) or "v$diag_alert_ext").upper()


def _ora_kgl(snap: Snapshot) -> list[Finding]:
    """Heap warnings over the window the alert log's reader covers (issue 39): the first run counts the last day
    (heap_warnings.history) by the log's own timestamps, so one run is enough.  The window is measured back from
    the time of reading, not from the log's newest entry: the row is about the last day, and a file with no entry
    in it (a log the instance no longer writes: another diagnostic_dest, a stopped instance) covers none of it."""
    dbs = _databases(snap)
    if not dbs:
        return _no_database(snap)
    result = []
    for db in dbs:
        sources = {labels.get("source"): value for labels, value in snap.all("middleware_oracle_source_success",
                                                                              database=db)}
        source = next(iter(sources), None)
        warnings = snap.value("middleware_oracle_kgl_heap_warnings_total", database=db)
        if warnings is not None:  # the history the first read found, kept out of the counter
            warnings += snap.value("middleware_oracle_kgl_heap_warnings_history", database=db) or 0.0
        # the file is read without the database: its history is judged even while the database is unreachable
        reason = snap.collector_problem("oracle") or (
            None if source == "alert_log_file" and warnings is not None else _database_problem(snap, db, None))
        if reason:
            result.append(unknown(db, reason))
            continue
        where = _kgl_source(snap, db, source)
        if warnings is None:
            error = snap.source_error("oracle", f"{db}:{source}") if source else None
            why = (f"{NOT_READABLE}: the alert log of {db} could not be read ({where}"
                   + (f": {error})" if error else ")") if sources and not any(sources.values())
                   else f"{NOT_CONFIGURED}: the alert log of {db} is not read (heap_warnings)")
            result.append(unknown(db, why))
            continue
        threshold = _param(snap, db, "_kgl_large_heap_warning_threshold")
        logged = snap.value("middleware_oracle_kgl_heap_warning_logged_threshold_bytes", database=db)
        window = snap.value("middleware_oracle_kgl_heap_warnings_window_seconds", database=db) or 0.0
        start = snap.value("middleware_oracle_kgl_heap_warnings_window_start_timestamp_seconds", database=db)
        capped = snap.value("middleware_oracle_alert_log_history_capped", database=db) == 1
        newest = snap.value("middleware_oracle_alert_log_last_entry_timestamp_seconds", database=db)
        shown = threshold if threshold is not None else logged
        plural = "" if warnings == 1 else "s"
        if window > 0 and start is not None:
            span = f"from {_moment(start)} to {_moment(start + window)} ({where}"
            if capped:
                span += ("; the file's tail read at the start was capped at heap_warnings.max_bytes, the window "
                         "starts at its first entry" if source == "alert_log_file" else
                         "; read up to the newest row so far: heap_warnings.max_rows, the rest follows")
            span += (f"; newest entry {_moment(newest)})" if newest is not None else ")")
        else:
            span = (f"in the last {duration(window)} of the alert log" if window > 0 else
                    "in the alert log read so far") + f" ({where})"
        text = f"{count(warnings)} heap warning{plural} {span}"
        biggest = snap.value("middleware_oracle_kgl_heap_warning_max_heap_bytes", database=db)
        if warnings > 0 and biggest is not None:
            found = snap.all("middleware_oracle_kgl_heap_warning_object_info", database=db)
            text += f"; largest heap {size(biggest)}" + (f" ({found[0][0]['object']})" if found else "")
        if shown is not None:
            text += f"; threshold {size(shown)}"
        if warnings > 0:
            new = max(KGL_THRESHOLD_BYTES, mb_up(biggest or 0.0) * MIB)
            result.append(deviates(db, text, warnings, f'ALTER SYSTEM SET "_kgl_large_heap_warning_threshold"={new} '
                                   "SCOPE=SPFILE;"))
            continue
        if window <= 0:
            # Nothing of the log could be placed in time: heap_warnings.history 0 (the count starts at the first
            # run), or a file whose tail has no timestamp line.  No warning yet is no evidence of none.
            history = snap.setting("collectors", "oracle", "databases", default=[])
            history = next((e.heap_warnings.history for e in history if e.name == db), None)
            why = ("heap_warnings.history is 0: the count starts at the exporter's first run" if history == 0 else
                   f"no timestamp line in what was read of {where}" if source == "alert_log_file" else
                   "the count starts at the exporter's first run")
            result.append(unknown(db, f"{NOT_READABLE}: none of {db}'s alert log has been read yet ({why}): "
                                  "0 warnings says nothing", text, warnings))
            continue
        if source == "alert_log_file" and newest is not None and start is not None and newest < start:
            result.append(unknown(db, f"{NOT_READABLE}: {where} has no entry from {_moment(start)} to "
                                  f"{_moment(start + window)} (its newest: {_moment(newest)}): a log the instance "
                                  "does not write to covers none of the window (another diagnostic_dest, or the "
                                  "instance down?)", text, warnings))
            continue
        result.append(follows(db, text, warnings))
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


ROWS: tuple[Row, ...] = (
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
)
