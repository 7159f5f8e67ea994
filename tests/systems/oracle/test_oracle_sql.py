"""Every SQL statement the exporter ships is parsed as Oracle SQL (sqlglot, dialect oracle) and each column it
uses is checked against the documented columns of the view or table it reads.  No Oracle server can run here,
so this is what stands between a typo and a query that fails on every customer's database."""

from __future__ import annotations

from pathlib import Path

import pytest

sqlglot = pytest.importorskip("sqlglot")
from sqlglot import exp  # noqa: E402

from exporter.systems.oracle.collector import FILE_DIRECTORIES_SQL, HOST_NAME_SQL  # noqa: E402
from exporter.systems.oracle.heapwarnings import START_SQL, view_sql  # noqa: E402
from exporter.systems.oracle.querymetrics import ASM_SQL, CON_ID_SQL, INSTANCE_SQL, VERSION_SQL, load_queries  # noqa: E402
from exporter.systems.oracle.settings import HeapWarningSettings  # noqa: E402

SYSTEMS = Path(__file__).resolve().parents[3] / "exporter" / "systems"

# Columns of the dynamic performance views as the Oracle Database Reference documents them for 10gR2 (the oldest
# release the queries target); later releases only add columns (CON_ID, ...), which the queries avoid.
V_VIEWS = {
    "v$thread": {"thread#", "status", "enabled", "groups", "instance", "open_time", "current_group#", "sequence#",
                 "checkpoint_change#", "checkpoint_time", "enable_change#", "enable_time", "disable_change#",
                 "disable_time", "last_redo_sequence#", "last_redo_block", "last_redo_change#", "last_redo_time"},
    "v$log": {"group#", "thread#", "sequence#", "bytes", "members", "archived", "status", "first_change#",
              "first_time"},
    "v$log_history": {"recid", "stamp", "thread#", "sequence#", "first_change#", "first_time", "next_change#",
                      "resetlogs_change#", "resetlogs_time"},
    "v$system_event": {"event", "total_waits", "total_timeouts", "time_waited", "average_wait", "time_waited_micro",
                       "event_id", "wait_class_id", "wait_class#", "wait_class"},
    "v$session": {"saddr", "sid", "serial#", "audsid", "paddr", "user#", "username", "command", "status", "server",
                  "schemaname", "osuser", "process", "machine", "terminal", "program", "type", "sql_id", "module",
                  "action", "logon_time", "event#", "event", "wait_class", "wait_time", "seconds_in_wait", "state",
                  "blocking_session"},
    "v$parameter": {"num", "name", "type", "value", "display_value", "isdefault", "isses_modifiable",
                    "issys_modifiable", "isinstance_modifiable", "ismodified", "isadjusted", "isdeprecated",
                    "description", "update_comment", "hash"},
    "v$resource_limit": {"resource_name", "current_utilization", "max_utilization", "initial_allocation",
                         "limit_value"},
    "v$osstat": {"stat_name", "value", "osstat_id"},
    "v$datafile": {"file#", "creation_change#", "creation_time", "ts#", "rfile#", "status", "enabled", "bytes",
                   "blocks", "create_bytes", "block_size", "name"},
    "v$tempfile": {"file#", "creation_change#", "creation_time", "ts#", "rfile#", "status", "enabled", "bytes",
                   "blocks", "create_bytes", "block_size", "name"},
    "v$logfile": {"group#", "status", "type", "member", "is_recovery_dest_file"},
    "v$controlfile": {"status", "name", "is_recovery_dest_file", "block_size", "file_size_blks"},
    "v$instance": {"instance_number", "instance_name", "host_name", "version", "startup_time", "status", "parallel",
                   "thread#", "archiver", "log_switch_wait", "logins", "shutdown_pending", "database_status",
                   "instance_role", "active_state", "blocked"},
}
# ORA-KGL: V$DIAG_ALERT_EXT (11g and later; documented from 12.2) as Oracle Database Reference 12c Release 2 and 19c
# list its columns (tests/systems/oracle/fixtures/real/SOURCE.md); MESSAGE_TEXT is further down the same table than the
# stored excerpts reach and is the column every published query of the view reads.  DUAL for the start time.
DIAG_VIEWS = {
    "v$diag_alert_ext": {"addr", "indx", "inst_id", "con_id", "adr_path_idx", "adr_home", "originating_timestamp",
                         "normalized_timestamp", "organization_id", "component_id", "host_id", "host_address",
                         "message_type", "message_level", "message_id", "message_group", "client_id", "module_id",
                         "process_id", "thread_id", "user_id", "instance_id", "detailed_location", "message_text"},
    "dual": {"dummy"},
}
# The HPOM opc_op tables as the project issue names their columns (not verified against a real HPOM schema;
# the README says so).
OPC_TABLES = {
    "opc_op.opc_act_messages": {"message_number", "severity", "ackn_flag", "ackn_time", "receiving_time", "msg_key",
                                "node_id", "message_group", "application", "object"},
    "opc_op.opc_act_cust_attrib": {"message_number", "name", "value"},
    "opc_op.opc_hist_messages": {"message_number", "severity", "receiving_time", "ackn_time"},
    "opc_op.opc_forward_msgs": {"message_number", "target_manager_id"},
    "opc_op.opc_node_names": {"node_id", "node_name"},
    "opc_op.hpom_service_relations": {"parent_service", "child_service"},  # placeholder names (HPOM-SLOD)
}
# Issue 29 (health, recovery, availability): the views and columns of docs/notes/oracle-health-design.md section 4
# (the Reference pages cited per view in tests/fakes/oracledb/schema.yaml; the unverified ones marked there).  A
# GV$ view is its V$ view plus INST_ID; CDB_* (12.1) is its DBA_* view plus CON_ID.
_TABLESPACES = {"tablespace_name", "block_size", "initial_extent", "next_extent", "status", "contents", "logging",
                "extent_management", "allocation_type", "bigfile"}
_USAGE = {"tablespace_name", "used_space", "tablespace_size", "used_percent"}
_FILES = {"file_name", "file_id", "tablespace_name", "bytes", "blocks", "status", "relative_fno", "autoextensible",
          "maxbytes", "maxblocks", "increment_by", "user_bytes", "user_blocks"}
_TEMP_FREE = {"tablespace_name", "tablespace_size", "allocated_space", "free_space"}
_INSTANCE = V_VIEWS["v$instance"]
_UNDO = {"owner", "segment_name", "tablespace_name", "extent_id", "file_id", "block_id", "bytes", "blocks",
         "relative_fno", "commit_jtime", "commit_wtime", "status"}
HEALTH_VIEWS = {
    "gv$session": V_VIEWS["v$session"] | {"inst_id"},
    "dba_tablespaces": _TABLESPACES,
    "dba_tablespace_usage_metrics": _USAGE,
    "dba_data_files": _FILES,
    "dba_temp_files": _FILES,
    "dba_temp_free_space": _TEMP_FREE,
    "v$temp_space_header": {"tablespace_name", "file_id", "bytes_used", "blocks_used", "bytes_free", "blocks_free",
                            "relative_fno"},
    "cdb_tablespaces": _TABLESPACES | {"con_id"},
    "cdb_tablespace_usage_metrics": _USAGE | {"con_id"},
    "cdb_data_files": _FILES | {"con_id"},
    "cdb_temp_files": _FILES | {"con_id"},
    "cdb_temp_free_space": _TEMP_FREE | {"con_id"},
    "v$containers": {"con_id", "dbid", "con_uid", "guid", "name", "open_mode", "restricted", "open_time",
                     "create_scn", "total_size"},
    "gv$system_wait_class": {"inst_id", "wait_class_id", "wait_class#", "wait_class", "total_waits",
                             "time_waited"},
    "gv$sysstat": {"inst_id", "statistic#", "name", "class", "value", "stat_id"},
    "gv$instance": _INSTANCE | {"inst_id"},
    "v$database": {"dbid", "name", "created", "log_mode", "open_mode", "protection_mode", "database_role",
                   "switchover_status", "db_unique_name", "platform_name", "force_logging", "flashback_on",
                   "protection_level", "dataguard_broker"},
    "v$recovery_file_dest": {"name", "space_limit", "space_used", "space_reclaimable", "number_of_files"},
    "v$recovery_area_usage": {"file_type", "percent_space_used", "percent_space_reclaimable", "number_of_files"},
    "v$flash_recovery_area_usage": {"file_type", "percent_space_used", "percent_space_reclaimable",
                                    "number_of_files"},
    "gv$archive_dest": {"inst_id", "dest_id", "dest_name", "status", "binding", "name_space", "target",
                        "archiver", "schedule", "destination", "log_sequence", "fail_date", "fail_sequence",
                        "error"},
    "v$rman_backup_job_details": {"session_key", "session_recid", "session_stamp", "command_id", "start_time",
                                  "end_time", "input_bytes", "output_bytes", "status", "input_type",
                                  "output_device_type", "elapsed_seconds"},
    # 18c added SOURCE_DBID, SOURCE_DB_UNIQUE_NAME (and CON_ID): Oracle Database Reference 18c "V$DATAGUARD_STATS"
    # (the 18+ variant reads them; the older one must not)
    "v$dataguard_stats": {"name", "value", "unit", "time_computed", "datum_time", "source_dbid",
                          "source_db_unique_name", "con_id"},
    # issue 39. "V$SORT_SEGMENT", 9.2, 10.1, 11.2, 12.1 (GV$: plus INST_ID).
    "gv$sort_segment": {"inst_id", "tablespace_name", "segment_file", "segment_block", "extent_size",
                        "current_users", "total_extents", "total_blocks", "used_extents", "used_blocks",
                        "free_extents", "free_blocks", "added_extents", "extent_hits", "freed_extents",
                        "free_requests", "max_size", "max_blocks", "max_used_size", "max_used_blocks",
                        "max_sort_size", "max_sort_blocks", "relative_fno"},
    # "V$BACKUP_SET_DETAILS", 10.2, 11.1, 11.2 (SESSION_KEY joins V$RMAN_BACKUP_JOB_DETAILS).
    "v$backup_set_details": {"session_key", "session_recid", "session_stamp", "bs_key", "recid", "stamp",
                             "set_stamp", "set_count", "backup_type", "controlfile_included",
                             "incremental_level", "pieces", "start_time", "completion_time", "elapsed_seconds",
                             "block_size", "keep", "keep_until", "keep_options", "device_type", "compressed",
                             "num_copies", "output_bytes", "original_input_bytes", "compression_ratio",
                             "status", "original_inprate_bytes", "output_rate_bytes"},
    # "V$MANAGED_STANDBY", 9.2, 11.1, 23ai (GV$: plus INST_ID); "V$DATAGUARD_PROCESS", 12.2, 19c, 21c.
    "gv$managed_standby": {"inst_id", "process", "pid", "status", "client_process", "client_pid", "client_dbid",
                           "group#", "resetlog_id", "thread#", "sequence#", "block#", "blocks", "delay_mins",
                           "known_agents", "active_agents"},
    "gv$dataguard_process": {"inst_id", "name", "pid", "type", "role", "proc_time", "task_time", "task_done",
                             "action", "client_pid", "client_role", "group#", "resetlog_id", "thread#",
                             "sequence#", "block#", "block_count", "delay_mins", "dest_id", "dest_mask",
                             "con_id"},
    # "DBA_UNDO_EXTENTS", 9.2, 10.1, 10.2, 11.2, 12.2; CDB_UNDO_EXTENTS: plus CON_ID.
    "dba_undo_extents": _UNDO,
    "cdb_undo_extents": _UNDO | {"con_id"},
    "v$asm_diskgroup_stat": {"group_number", "name", "sector_size", "block_size", "allocation_unit_size", "state",
                             "type", "total_mb", "free_mb", "required_mirror_free_mb", "usable_file_mb",
                             "offline_disks"},
}
PSEUDO_COLUMNS = {"level", "rownum"}  # Oracle pseudocolumns (hierarchical queries, row numbers)
KNOWN = {**V_VIEWS, **DIAG_VIEWS, **OPC_TABLES, **HEALTH_VIEWS}


def _table_name(table: exp.Table) -> str:
    return f"{table.db}.{table.name}".lower() if table.db else table.name.lower()


def problems(sql: str) -> list[str]:
    """What is wrong with one statement, as Oracle would see it (an empty list when nothing is)."""
    found = []
    if sql.rstrip().endswith(";"):
        found.append("trailing semicolon (ORA-00911 through a driver)")
    try:
        statements = sqlglot.parse(sql, read="oracle")
    except sqlglot.errors.ParseError as exc:
        return found + [f"does not parse as Oracle SQL: {exc}"]
    if len([s for s in statements if s is not None]) != 1:
        found.append("more than one statement")
    tree = statements[0]
    if not isinstance(tree, (exp.Select, exp.Union)):
        found.append(f"not a query: {type(tree).__name__}")
    for node in tree.find_all(exp.Limit, exp.Fetch):
        found.append(f"{type(node).__name__.upper()} is not for these servers (10g/11g have neither)")
    for select in tree.find_all(exp.Select):
        tables = {}
        for table in select.find_all(exp.Table):
            if table.find_ancestor(exp.Select) is not select:
                continue
            name = _table_name(table)
            if name not in KNOWN:
                found.append(f"unknown view or table {name}")
                continue
            tables[(table.alias or table.name).lower()] = KNOWN[name]
        for number, sub in enumerate(select.find_all(exp.Subquery)):
            if sub.find_ancestor(exp.Select) is select:  # an inline view: its output columns are readable
                tables[(sub.alias or f"(inline view {number})").lower()] = {n.lower() for n in sub.this.named_selects}
        aliases = {a.alias.lower() for a in select.expressions if isinstance(a, exp.Alias)}
        for column in select.find_all(exp.Column):
            if column.find_ancestor(exp.Select) is not select:
                continue
            cname = column.name.lower()
            if column.table:
                cols = tables.get(column.table.lower())
                if cols is None:
                    found.append(f"column {column.sql()} refers to an unknown alias")
                elif cname not in cols:
                    found.append(f"{cname} is not a documented column of {column.table}")
            elif not any(cname in cols for cols in tables.values()) and cname not in aliases | PSEUDO_COLUMNS:
                found.append(f"{cname} is not a documented column of {sorted(tables)}")
    return found


def _shipped() -> list[tuple[str, str]]:
    statements = [("oracle/collector.py:FILE_DIRECTORIES_SQL", FILE_DIRECTORIES_SQL),
                  ("oracle/collector.py:HOST_NAME_SQL", HOST_NAME_SQL),
                  ("oracle/querymetrics.py:INSTANCE_SQL", INSTANCE_SQL),
                  ("oracle/querymetrics.py:VERSION_SQL", VERSION_SQL),
                  ("oracle/querymetrics.py:CON_ID_SQL", CON_ID_SQL),
                  ("oracle/querymetrics.py:ASM_SQL", ASM_SQL),
                  ("oracle/heapwarnings.py:START_SQL", START_SQL),
                  ("oracle/heapwarnings.py:view_sql", view_sql(HeapWarningSettings())),
                  ("oracle/heapwarnings.py:view_sql(11g)", view_sql(HeapWarningSettings(con_id_column=False)))]
    for path in sorted(SYSTEMS.glob("*/queries.yaml")):
        queries = load_queries(path)
        # alternatives of one query (min_version / max_version / cdb) are told apart by their number
        statements += [(f"{path.parent.name}/{path.name}:{q.name}"
                        + (f"#{i}" if sum(o.name == q.name for o in queries) > 1 else ""), q.sql)
                       for i, q in enumerate(queries)]
    return statements


@pytest.mark.parametrize("where,sql", _shipped(), ids=[w for w, _ in _shipped()])
def test_shipped_sql_is_valid_oracle(where, sql):
    assert problems(sql) == []


def test_every_shipped_file_has_queries():
    names = {w.split(":")[0] for w, _ in _shipped()}
    assert {"oracle/queries.yaml", "hpom/queries.yaml"} <= names


@pytest.mark.parametrize("sql,expected", [
    ("SELECT thread#, sequence# FROM v$thread;", "trailing semicolon"),
    ("SELECT bytes FROM v$log LIMIT 5", "LIMIT"),
    ("SELECT sequence FROM v$thread", "sequence is not a documented column"),
    ("SELECT h.sequence# FROM v$thread t JOIN v$log_history h ON h.thread# = t.thread# WHERE t.groupz = 1",
     "groupz is not a documented column of t"),
    ("SELECT name FROM v$parameters", "unknown view or table v$parameters"),
    ("SELECT thread# FROM v$thread WHERE (", "does not parse"),
    ("DELETE FROM v$log", "not a query"),
    ("SELECT inst_id, wait_class, time_waited_micro FROM gv$system_wait_class", "time_waited_micro is not"),
    ("SELECT c.name FROM cdb_tablespaces t JOIN v$containers c ON c.con_id = t.con_id WHERE t.contents_x = 1",
     "contents_x is not a documented column of t"),
])
def test_the_checker_catches_mistakes(sql, expected):
    assert any(expected in problem for problem in problems(sql)), problems(sql)
