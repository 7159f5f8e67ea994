"""Issue 29: the everyday health and recovery figures of exporter/systems/oracle/queries.yaml through the DB-API
stand-in (tests/fakes/oracledb): a two-instance RAC read through GV$, a CDB root with two PDBs (CDB_* views, the
container's name as a label), a Data Guard standby with lag rows and a primary without, an 11.2 server that skips
the 12.1 queries (the reason in the query's source and metric) and a 10.2 server that gets the fallback statements.
Every fixture row here is invented (the column names and types are those of the Oracle Database Reference, see
tests/fakes/oracledb/schema.yaml); the statements are type-checked by the stand-in before it answers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from exporter.core.collector import Context
from exporter.systems.oracle.collector import OracleCollector
from exporter.systems.oracle.querymetrics import QueryFile, interval_seconds, load_queries
from exporter.systems.oracle.settings import OracleCollectorSettings

from ...support import REPO, collect, install_fake_oracledb, require_binary

FIXTURES = Path(__file__).parent / "fixtures"

FAKES = REPO / "tests" / "fakes"
DSN = "db.example:1521/svc"
DATAGUARD_COLUMNS = ["NAME", "VALUE", "SOURCE_DB_UNIQUE_NAME", "DATUM_AGE_SECONDS"]
TABLESPACE_COLUMNS = ["CONTAINER", "TABLESPACE", "CONTENTS", "USED_BYTES", "SIZE_BYTES", "MAX_BYTES", "AUTOEXTENSIBLE"]

# A 19c two-instance RAC, its session in the root of a CDB with two PDBs (invented rows).
RAC_CDB = {"version": "19.3.0.0.0", "con_id": 1, "queries": [
    {"match": "FROM gv$session", "columns": ["INST_ID", "STATUS", "TYPE", "SESSIONS"],
     "rows": [[1, "ACTIVE", "USER", 12], [2, "ACTIVE", "USER", 9], [2, "INACTIVE", "BACKGROUND", 40]]},
    {"match": "FROM cdb_tablespaces", "columns": TABLESPACE_COLUMNS,
     "rows": [["CDB$ROOT", "SYSTEM", "PERMANENT", 900, 1000, 4000, 1],
              ["SALES", "USERS", "PERMANENT", "decimal:5368709120", 6442450944, 6442450944, 0],
              ["HR", "USERS", "PERMANENT", 100, 200, 800, 1],
              ["HR", "UNDOTBS1", "UNDO", 190, 200, 200, 0],
              ["SALES", "TEMP", "TEMPORARY", 0, 1000, 2000, 1]]},
    {"match": "FROM gv$system_wait_class", "columns": ["INST_ID", "WAIT_CLASS", "TOTAL_WAITS", "SECONDS_WAITED"],
     "rows": [[1, "User I/O", 100, "decimal:12.34"], [2, "User I/O", 50, "decimal:5.5"]]},
    {"match": "FROM gv$sysstat", "columns": ["INST_ID", "EXECUTIONS", "PARSES", "USER_COMMITS", "USER_ROLLBACKS"],
     "rows": [[1, 1000, 300, 40, 2], [2, 900, 200, 30, None]]},
    {"match": "FROM gv$instance", "columns": ["INST_ID", "INSTANCE_NAME", "HOST_NAME", "VERSION", "STATUS",
                                               "DATABASE_STATUS", "INSTANCE_ROLE", "ARCHIVER", "UPTIME_SECONDS",
                                               "ARCHIVER_FAILED"],
     "rows": [[1, "orcl1", "node1", "19.0.0.0.0", "OPEN", "ACTIVE", "PRIMARY_INSTANCE", "STARTED", 7200, 0],
              [2, "orcl2", "node2", "19.0.0.0.0", "OPEN", "ACTIVE", "PRIMARY_INSTANCE", "FAILED", 60, 1]]},
    {"match": "FROM v$database", "columns": ["NAME", "DB_UNIQUE_NAME", "DATABASE_ROLE", "OPEN_MODE", "LOG_MODE",
                                              "IS_OPEN", "PROTECTION_MODE", "PROTECTION_LEVEL", "SWITCHOVER_STATUS"],
     "rows": [["ORCL", "orcl_a", "PRIMARY", "READ WRITE", "ARCHIVELOG", 1, "MAXIMUM PERFORMANCE",
               "MAXIMUM PERFORMANCE", "TO STANDBY"]]},
    {"match": "FROM v$recovery_file_dest", "columns": ["NAME", "SPACE_LIMIT", "SPACE_USED", "SPACE_RECLAIMABLE",
                                                        "NUMBER_OF_FILES"], "rows": [["+FRA", 1000, 800, 100, 7]]},
    {"match": "FROM v$recovery_area_usage", "columns": ["FILE_TYPE", "USED_RATIO", "RECLAIMABLE_RATIO"],
     "rows": [["ARCHIVED LOG", "decimal:0.7", "decimal:0.1"]]},
    {"match": "FROM gv$archive_dest", "columns": ["INST_ID", "DEST_NAME", "STATUS", "BINDING", "TARGET", "ERROR",
                                                   "CONFIGURED", "HAS_ERROR"],
     "rows": [[1, "LOG_ARCHIVE_DEST_1", "VALID", "MANDATORY", "PRIMARY", None, 1, None],
              [2, "LOG_ARCHIVE_DEST_2", "ERROR", "OPTIONAL", "STANDBY", "ORA-12541: TNS:no listener", 1, 1]]},
    {"match": "AS age_seconds", "columns": ["INPUT_TYPE", "AGE_SECONDS"],
     "rows": [["DB INCR", "decimal:3600.5"], ["ARCHIVELOG", 600]]},
    {"match": "ROW_NUMBER()", "columns": ["INPUT_TYPE", "STATUS", "NEWEST"],
     "rows": [["DB INCR", "COMPLETED WITH WARNINGS", 1], ["ARCHIVELOG", "FAILED", 1]]},
    {"match": "FROM v$dataguard_stats", "columns": DATAGUARD_COLUMNS, "rows": []},  # a primary: no rows
    {"match": "AS asm_files", "columns": ["ASM_FILES"], "rows": [[4]]},  # files in +DATA: the ASM query runs
    {"match": "FROM v$asm_diskgroup_stat", "columns": ["DISKGROUP", "TYPE", "STATE", "TOTAL_BYTES", "FREE_BYTES",
                                                        "REQUIRED_MIRROR_FREE_BYTES", "USABLE_FILE_BYTES",
                                                        "OFFLINE_DISKS"],
     "rows": [["DATA", "NORMAL", "MOUNTED", 4096, 1024, 512, 256, 1]]},
    {"match": "FROM v$containers", "columns": ["CON_ID", "CONTAINER", "OPEN_MODE", "RESTRICTED"],
     "rows": [[1, "CDB$ROOT", "READ WRITE", "NO"], [2, "PDB$SEED", "READ ONLY", "NO"],
              [3, "SALES", "READ WRITE", "NO"], [4, "HR", "MOUNTED", None]]},
]}


def _variant(base: dict, version: str, con_id: int | None, replace: dict[str, dict]) -> dict:
    """base with another version and some entries replaced (match -> the new entry) or added."""
    queries = [dict(q) for q in base["queries"]]
    for match, entry in replace.items():
        found = [i for i, q in enumerate(queries) if q["match"] == match]
        if found:
            queries[found[0]] = {"match": match, **entry}
        else:
            queries.insert(0, {"match": match, **entry})
    data = {"version": version, "queries": queries}
    if con_id is not None:
        data["con_id"] = con_id
    return data


NON_CDB_TABLESPACES = {"columns": TABLESPACE_COLUMNS,
                       "rows": [[None, "SYSTEM", "PERMANENT", 900, 1000, 4000, 1],
                                [None, "TEMP", "TEMPORARY", 10, 1000, 1000, 0]]}
# An 11.2 single-instance physical standby (non-CDB): lag rows, no V$CONTAINERS.
STANDBY_11G = _variant(RAC_CDB, "11.2.0.4.0", None, {
    "FROM dba_temp_free_space": NON_CDB_TABLESPACES,
    "FROM v$dataguard_stats": {"columns": DATAGUARD_COLUMNS,
                               "rows": [["transport_lag", "+00 00:00:05", None, 3],
                                        ["apply_lag", "+01 02:03:04.5", None, 3]]},
    "FROM gv$managed_standby": {"columns": ["APPLY_RUNNING", "MRP_STATUS", "HAS_MRP"],
                                "rows": [[1, "APPLYING_LOG", 1]]},
    "FROM v$containers": {"error": "ORA-00942: table or view does not exist"},  # 11g has no such view
})
# A 10.2 server: the temp fallback (GV$SORT_SEGMENT) and V$FLASH_RECOVERY_AREA_USAGE.
OLD_10G = _variant(RAC_CDB, "10.2.0.5.0", None, {
    "FROM gv$sort_segment": NON_CDB_TABLESPACES,
    "FROM gv$managed_standby": {"columns": ["APPLY_RUNNING", "MRP_STATUS", "HAS_MRP"], "rows": [[0, None, None]]},
    "FROM v$flash_recovery_area_usage": {"columns": ["FILE_TYPE", "USED_RATIO", "RECLAIMABLE_RATIO"],
                                         "rows": [["FLASHBACKLOG", "decimal:0.25", 0]]},
})


def _with_guide_rows(database: dict) -> dict:
    """The database plus the rows of the guide queries (redo, parameters, ...) of the two-database fixture's ERP
    database, so that only the figures under test differ."""
    erp = yaml.safe_load((FIXTURES / "db.yaml").read_text())["databases"]["erp.example:1521/erp"]
    mine = {q["match"] for q in database["queries"]}
    guide = [q for q in erp["queries"] if q["match"] not in mine and q["match"] not in
             {h["match"] for h in RAC_CDB["queries"]}]
    return {**database, "queries": database["queries"] + guide}


@pytest.fixture
def fake(monkeypatch, tmp_path):
    path = tmp_path / "db.yaml"
    monkeypatch.setenv("ORA_MONITOR_PW", "Tiger-Tiger-42")
    install_fake_oracledb(monkeypatch, path, tmp_path / "connects.log")

    def use(database: dict):
        path.write_text(yaml.safe_dump({"databases": {DSN: _with_guide_rows(database)}}))
        return path
    yield use
    sys.modules.pop("oracledb", None)


def _settings() -> dict:
    return {"enabled": True, "databases": [{"name": "db", "dsn": DSN, "user": "monitor",
                                            "password_env": "ORA_MONITOR_PW", "local_files": "no"}]}


def _run(database: dict, fake) -> tuple[dict, object]:
    fake(database)
    collector = OracleCollector(OracleCollectorSettings.model_validate(_settings()),
                                Context(procfs=str(FIXTURES / "proc")))
    return collect(collector)


def _series(samples: dict, metric: str) -> dict[tuple, float]:
    """metric -> {label items without database: value}."""
    return {tuple((k, v) for k, v in labels if k != "database"): value
            for (name, labels), value in samples.items() if name == f"middleware_oracle_{metric}"}


def test_rac_cdb_every_figure_with_exact_labels(fake):
    samples, batch = _run(RAC_CDB, fake)
    assert not batch.errors
    assert _series(samples, "sessions") == {
        (("inst_id", "1"), ("status", "ACTIVE"), ("type", "USER")): 12,
        (("inst_id", "2"), ("status", "ACTIVE"), ("type", "USER")): 9,
        (("inst_id", "2"), ("status", "INACTIVE"), ("type", "BACKGROUND")): 40}
    # per container, by name; UNDO and TEMP flagged by contents
    assert _series(samples, "tablespace_used_bytes") == {
        (("container", "CDB$ROOT"), ("contents", "PERMANENT"), ("tablespace", "SYSTEM")): 900,
        (("container", "SALES"), ("contents", "PERMANENT"), ("tablespace", "USERS")): 5368709120,
        (("container", "HR"), ("contents", "PERMANENT"), ("tablespace", "USERS")): 100,
        (("container", "HR"), ("contents", "UNDO"), ("tablespace", "UNDOTBS1")): 190,
        (("container", "SALES"), ("contents", "TEMPORARY"), ("tablespace", "TEMP")): 0}
    assert _series(samples, "tablespace_max_bytes")[
        (("container", "HR"), ("contents", "PERMANENT"), ("tablespace", "USERS"))] == 800
    assert _series(samples, "tablespace_autoextensible")[
        (("container", "SALES"), ("contents", "PERMANENT"), ("tablespace", "USERS"))] == 0
    assert _series(samples, "tablespace_size_bytes")[
        (("container", "SALES"), ("contents", "TEMPORARY"), ("tablespace", "TEMP"))] == 1000
    # counters per instance (GV$: both instances through one connection)
    assert _series(samples, "wait_class_seconds_total") == {
        (("inst_id", "1"), ("wait_class", "User I/O")): 12.34, (("inst_id", "2"), ("wait_class", "User I/O")): 5.5}
    assert _series(samples, "wait_class_waits_total") == {
        (("inst_id", "1"), ("wait_class", "User I/O")): 100, (("inst_id", "2"), ("wait_class", "User I/O")): 50}
    assert _series(samples, "executions_total") == {(("inst_id", "1"),): 1000, (("inst_id", "2"),): 900}
    assert _series(samples, "parses_total") == {(("inst_id", "1"),): 300, (("inst_id", "2"),): 200}
    assert _series(samples, "user_commits_total") == {(("inst_id", "1"),): 40, (("inst_id", "2"),): 30}
    assert _series(samples, "user_rollbacks_total") == {(("inst_id", "1"),): 2}  # NULL: no sample
    assert _series(samples, "instance_uptime_seconds") == {(("inst_id", "1"),): 7200, (("inst_id", "2"),): 60}
    assert _series(samples, "archiver_failed") == {(("inst_id", "1"),): 0, (("inst_id", "2"),): 1}
    assert _series(samples, "instance_info") == {
        (("archiver", "STARTED"), ("database_status", "ACTIVE"), ("host_name", "node1"), ("inst_id", "1"),
         ("instance_name", "orcl1"), ("instance_role", "PRIMARY_INSTANCE"), ("status", "OPEN"),
         ("version", "19.0.0.0.0")): 1,
        (("archiver", "FAILED"), ("database_status", "ACTIVE"), ("host_name", "node2"), ("inst_id", "2"),
         ("instance_name", "orcl2"), ("instance_role", "PRIMARY_INSTANCE"), ("status", "OPEN"),
         ("version", "19.0.0.0.0")): 1}
    # database-wide: no inst_id
    assert _series(samples, "database_info") == {
        (("database_role", "PRIMARY"), ("db_unique_name", "orcl_a"), ("log_mode", "ARCHIVELOG"), ("name", "ORCL"),
         ("open_mode", "READ WRITE")): 1}
    assert _series(samples, "database_open") == {(): 1}
    assert _series(samples, "fra_limit_bytes") == {(("name", "+FRA"),): 1000}
    assert _series(samples, "fra_used_bytes") == {(("name", "+FRA"),): 800}
    assert _series(samples, "fra_reclaimable_bytes") == {(("name", "+FRA"),): 100}
    assert _series(samples, "fra_files") == {(("name", "+FRA"),): 7}
    assert _series(samples, "fra_usage_ratio") == {(("file_type", "ARCHIVED LOG"),): 0.7}
    assert _series(samples, "fra_reclaimable_ratio") == {(("file_type", "ARCHIVED LOG"),): 0.1}
    assert _series(samples, "archive_dest_status") == {
        (("binding", "MANDATORY"), ("dest_name", "LOG_ARCHIVE_DEST_1"), ("inst_id", "1"), ("status", "VALID"),
         ("target", "PRIMARY")): 1,
        (("binding", "OPTIONAL"), ("dest_name", "LOG_ARCHIVE_DEST_2"), ("inst_id", "2"), ("status", "ERROR"),
         ("target", "STANDBY")): 1}
    assert _series(samples, "archive_dest_error") == {
        (("dest_name", "LOG_ARCHIVE_DEST_2"), ("error", "ORA-12541: TNS:no listener"), ("inst_id", "2")): 1}
    assert _series(samples, "backup_last_success_age_seconds") == {
        (("input_type", "DB INCR"),): 3600.5, (("input_type", "ARCHIVELOG"),): 600}
    assert _series(samples, "backup_last_status") == {
        (("input_type", "DB INCR"), ("status", "COMPLETED WITH WARNINGS")): 1,
        (("input_type", "ARCHIVELOG"), ("status", "FAILED")): 1}
    assert _series(samples, "asm_diskgroup_total_bytes") == {
        (("diskgroup", "DATA"), ("state", "MOUNTED"), ("type", "NORMAL")): 4096}
    assert _series(samples, "asm_diskgroup_offline_disks") == {
        (("diskgroup", "DATA"), ("state", "MOUNTED"), ("type", "NORMAL")): 1}
    assert _series(samples, "container_info") == {
        (("con_id", "1"), ("container", "CDB$ROOT"), ("open_mode", "READ WRITE"), ("restricted", "NO")): 1,
        (("con_id", "2"), ("container", "PDB$SEED"), ("open_mode", "READ ONLY"), ("restricted", "NO")): 1,
        (("con_id", "3"), ("container", "SALES"), ("open_mode", "READ WRITE"), ("restricted", "NO")): 1,
        (("con_id", "4"), ("container", "HR"), ("open_mode", "MOUNTED"), ("restricted", "")): 1}
    # a primary: V$DATAGUARD_STATS has no rows, so no lag series, and that is no failure
    assert _series(samples, "dataguard_lag_seconds") == {}
    assert _series(samples, "query_success")[(("query", "dataguard_lag"),)] == 1
    assert set(_series(samples, "query_success").values()) == {1}
    assert _series(samples, "query_skipped") == {}


def test_standby_lag_in_seconds_and_11g_skips_the_12c_queries(fake):
    samples, batch = _run(STANDBY_11G, fake)
    assert not batch.errors  # a skipped query is not an error
    assert _series(samples, "dataguard_lag_seconds") == {
        (("name", "transport_lag"), ("source_db_unique_name", "")): 5,
        (("name", "apply_lag"), ("source_db_unique_name", "")): 86400 + 2 * 3600 + 3 * 60 + 4.5}
    # the DBA_* statement (no container), not the CDB_* one
    assert _series(samples, "tablespace_used_bytes") == {
        (("container", ""), ("contents", "PERMANENT"), ("tablespace", "SYSTEM")): 900,
        (("container", ""), ("contents", "TEMPORARY"), ("tablespace", "TEMP")): 10}
    # V$CONTAINERS (12.1) is not even asked for (the fixture would answer ORA-00942): skipped, with the reason
    reason = "needs Oracle 12.1; this database is 11.2.0.4.0"
    assert _series(samples, "query_skipped") == {(("query", "containers"), ("reason", reason)): 1}
    assert _series(samples, "query_success")[(("query", "containers"),)] == 1
    assert _series(samples, "container_info") == {}
    source = batch.reports.targets["db"].sources["containers"]
    assert (source.ok, source.error, source.note) == (True, None, f"skipped: {reason}")
    assert batch.reports.targets["db"].sources["dataguard_lag"].note is None


def test_10g_gets_the_fallback_statements(fake):
    samples, batch = _run(OLD_10G, fake)
    assert not batch.errors
    assert _series(samples, "tablespace_used_bytes") == {  # from GV$SORT_SEGMENT's statement
        (("container", ""), ("contents", "PERMANENT"), ("tablespace", "SYSTEM")): 900,
        (("container", ""), ("contents", "TEMPORARY"), ("tablespace", "TEMP")): 10}
    assert _series(samples, "fra_usage_ratio") == {(("file_type", "FLASHBACKLOG"),): 0.25}
    assert _series(samples, "query_skipped") == {
        (("query", "containers"), ("reason", "needs Oracle 12.1; this database is 10.2.0.5.0")): 1,
        (("query", "dataguard_lag"), ("reason", "needs Oracle 11.1; this database is 10.2.0.5.0")): 1}


def test_a_pdb_session_gets_the_dba_statement(fake):
    pdb = _variant(RAC_CDB, "19.3.0.0.0", 3, {"FROM dba_temp_free_space": NON_CDB_TABLESPACES,
                                             "FROM cdb_tablespaces": {"error": "ORA-00942: not for a PDB here"}})
    samples, batch = _run(pdb, fake)
    assert not batch.errors
    assert set(_series(samples, "tablespace_used_bytes")) == {
        (("container", ""), ("contents", "PERMANENT"), ("tablespace", "SYSTEM")),
        (("container", ""), ("contents", "TEMPORARY"), ("tablespace", "TEMP"))}


def test_the_version_comes_from_v_instance_when_the_driver_gives_none(fake):
    database = _variant(RAC_CDB, "", None, {
        "SELECT version FROM v$instance": {"columns": ["VERSION"], "rows": [["11.2.0.3.0"]]},
        "FROM dba_temp_free_space": NON_CDB_TABLESPACES})
    samples, _ = _run(database, fake)
    assert _series(samples, "query_skipped") == {
        (("query", "containers"), ("reason", "needs Oracle 12.1; this database is 11.2.0.3.0")): 1}


@pytest.mark.parametrize("text,seconds", [("+00 00:00:05", 5), ("+00 00:01:05.250", 65.25),
                                          ("+02 00:00:00", 172800), ("", None), (None, None)])
def test_interval_text_to_seconds(text, seconds):
    assert interval_seconds(text) == seconds


def test_interval_garbage_fails_the_query_not_the_exporter():
    with pytest.raises(ValueError, match="not an interval"):
        interval_seconds("5 minutes")


def _file(*queries: dict) -> dict:
    base = {"sql": "SELECT 1 AS n FROM dual", "metrics": [{"name": "middleware_oracle_n", "help": "N.", "value": "n"}]}
    return {"queries": [{**base, **q} for q in queries]}


def test_alternatives_need_disjoint_versions():
    QueryFile.model_validate(_file({"name": "q", "max_version": "11.1"}, {"name": "q", "min_version": "11.1"}))
    QueryFile.model_validate(_file({"name": "q", "cdb": True, "min_version": "12.1"}, {"name": "q", "cdb": False}))
    with pytest.raises(ValueError, match="query names defined twice"):
        QueryFile.model_validate(_file({"name": "q", "min_version": "11.1"}, {"name": "q", "min_version": "12.1"}))
    with pytest.raises(ValueError, match="same metrics"):
        QueryFile.model_validate(_file({"name": "q", "max_version": "11.1"}, {
            "name": "q", "min_version": "11.1",
            "metrics": [{"name": "middleware_oracle_n", "help": "N.", "value": "n", "labels": ["x"]}]}))
    with pytest.raises(ValueError, match="is not a version"):
        QueryFile.model_validate(_file({"name": "q", "min_version": "12c"}))


def test_every_shipped_query_states_its_lowest_release():
    text = (REPO / "exporter/systems/oracle/queries.yaml").read_text()
    block = text.split("# ---- Everyday health")[1]
    names = [q.name for q in load_queries(REPO / "exporter/systems/oracle/queries.yaml")]
    for name in dict.fromkeys(names[names.index("sessions"):]):
        before = block.split(f"- name: {name}\n")[0].rsplit("\n\n", 1)[-1]
        assert "Lowest release" in before, name


@pytest.mark.integration
def test_exporter_process_reports_skipped_queries(start_exporter, tmp_path):
    fixture = tmp_path / "db.yaml"
    fixture.write_text(yaml.safe_dump({"databases": {DSN: _with_guide_rows(STANDBY_11G)}}))
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"collectors": {"host": {"enabled": False}, "process": {"enabled": False},
                                                     "filesystem": {"enabled": False}, "oracle": _settings()}}))
    env = {"PYTHONPATH": str(FAKES), "FAKE_ORACLEDB_FIXTURE": str(fixture), "ORA_MONITOR_PW": "Tiger-Tiger-42"}
    exporter = start_exporter("--config", str(config), env=env)
    status, _, body = exporter.get("/metrics")
    assert status == 200
    text = body.decode()
    reason = "needs Oracle 12.1; this database is 11.2.0.4.0"
    assert f'middleware_oracle_query_skipped{{database="db",query="containers",reason="{reason}"}} 1.0' in text
    assert 'middleware_oracle_query_success{database="db",query="containers"} 1.0' in text
    assert ('middleware_target_source_success{collector="oracle",source="containers",target="db"} 1.0' in text)
    assert ('middleware_oracle_dataguard_lag_seconds{database="db",name="transport_lag",source_db_unique_name=""} '
            '5.0') in text
    assert 'middleware_oracle_sessions{database="db",inst_id="2",status="INACTIVE",type="BACKGROUND"} 40.0' in text
    status, _, body = exporter.get("/api/v1/collectors")
    oracle = [c for c in json.loads(body) if c["name"] == "oracle"][0]
    sources = {s["name"]: s for s in oracle["targets"][0]["sources"]}
    assert sources["containers"] == {"name": "containers", "success": True, "last_error": None,
                                     "note": f"skipped: {reason}"}
    assert sources["tablespaces"] == {"name": "tablespaces", "success": True, "last_error": None}
    result = subprocess.run([require_binary("promtool"), "check", "metrics"], input=text.encode(),
                            capture_output=True, timeout=60)
    assert result.returncode == 0 and not result.stdout.strip(), result.stdout.decode() + result.stderr.decode()
    assert "skipped" not in exporter.log()  # not an error, not logged every run
