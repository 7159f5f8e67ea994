"""Issue 39, items 8-11: Data Guard staleness and apply state, RMAN incremental levels, TEMP and UNDO "used", one
row per Data Guard source, and ASM queries only where ASM exists, through the collector and the DB-API stand-in
(tests/fakes/oracledb).

Where a genuine capture is public it feeds the stand-in (fixtures/real/SOURCE.md): sqlplus output of
V$DATAGUARD_STATS and V$MANAGED_STANDBY, and Checkmk's mk_oracle agent rows.  The stand-in plays the database: what
the shipped SQL computes on the server (the datum's age from SYSDATE, the job's level from V$BACKUP_SET_DETAILS) is
worked out here from the captured columns, with SYSDATE the capture's own TIME_COMPUTED.  Rows marked invented
are invented.
"""

from __future__ import annotations

import ast
import re
import sys
from datetime import datetime
from pathlib import Path

import pytest
import yaml

from exporter.core.collector import Context
from exporter.systems.oracle.collector import OracleCollector
from exporter.systems.oracle.settings import OracleCollectorSettings

from ...support import FIXTURES, collect
from . import test_oracle_health
from .test_oracle_health import DSN, RAC_CDB, _run, _series, _settings, _variant

fake = test_oracle_health.fake  # the stand-in driver, answering from a fixture the test writes

REAL = Path(__file__).parent / "fixtures" / "real"
DATUM_RE = re.compile(r"^\d{2}/\d{2}/\d{4} \d{2}:\d{2}:\d{2}$")  # the shipped SQL's REGEXP_LIKE guard
DG_COLUMNS = ["NAME", "VALUE", "SOURCE_DB_UNIQUE_NAME", "DATUM_AGE_SECONDS"]
APPLY_COLUMNS = ["APPLY_RUNNING", "MRP_STATUS", "HAS_MRP"]
DATABASE_COLUMNS = ["NAME", "DB_UNIQUE_NAME", "DATABASE_ROLE", "OPEN_MODE", "LOG_MODE", "IS_OPEN", "PROTECTION_MODE",
                    "PROTECTION_LEVEL", "SWITCHOVER_STATUS"]


def sqlplus_table(path: Path) -> list[dict[str, str]]:
    """The last column-formatted table of a sqlplus capture: column spans from the dashes line, blanks as ""."""
    lines = path.read_text().splitlines()
    dashes = max(i for i, line in enumerate(lines) if line.strip().startswith("---"))
    spans = [(m.start(), m.end()) for m in re.finditer(r"-+", lines[dashes])]
    names = [lines[dashes - 1][a:b + 40].split()[0] for a, b in spans]
    rows = []
    for line in lines[dashes + 1:]:
        if not line.strip():
            break
        cells = [line[a:spans[i + 1][0]] if i + 1 < len(spans) else line[a:] for i, (a, _) in enumerate(spans)]
        rows.append({n: c.strip() for n, c in zip(names, cells, strict=False)})
    return rows


def dataguard_rows(stats: list[dict[str, str]], sysdate: str, source: str | None = None) -> list[list]:
    """What the shipped dataguard_lag statement returns for those V$DATAGUARD_STATS rows on a standby whose clock
    reads ``sysdate``: lag rows only, the name lower-case with underscores, the datum's age in seconds (NULL where
    DATUM_TIME is NULL or of another shape)."""
    now = datetime.strptime(sysdate, "%m/%d/%Y %H:%M:%S")
    rows = []
    for row in stats:
        if row["NAME"].upper() not in ("TRANSPORT LAG", "APPLY LAG"):
            continue
        datum = row.get("DATUM_TIME") or ""
        age = (now - datetime.strptime(datum, "%m/%d/%Y %H:%M:%S")).total_seconds() if DATUM_RE.match(datum) else None
        rows.append([row["NAME"].lower().replace(" ", "_"), row["VALUE"] or None, source, age])
    return rows


def _standby(version: str, stats_rows: list[list], apply_rows: list[list], **more) -> dict:
    """RAC_CDB turned into a physical standby of ``version`` (non-CDB) with those Data Guard rows."""
    apply_view = "FROM gv$dataguard_process" if version >= "12.2" else "FROM gv$managed_standby"
    return _variant(RAC_CDB, version, None, {
        "FROM dba_temp_free_space": {"columns": ["CONTAINER", "TABLESPACE", "CONTENTS", "USED_BYTES", "SIZE_BYTES",
                                                 "MAX_BYTES", "AUTOEXTENSIBLE"], "rows": []},
        "FROM v$containers": {"columns": ["CON_ID", "CONTAINER", "OPEN_MODE", "RESTRICTED"], "rows": []},
        "FROM v$dataguard_stats": {"columns": DG_COLUMNS, "rows": stats_rows},
        apply_view: {"columns": APPLY_COLUMNS, "rows": apply_rows},
        "FROM v$database": {"columns": DATABASE_COLUMNS, "rows": [
            ["TUX12C", "TUXSTDB", "PHYSICAL STANDBY", "MOUNTED", "ARCHIVELOG", 0, "MAXIMUM PERFORMANCE",
             "MAXIMUM PERFORMANCE", "NOT ALLOWED"]]},
        **more})


def _executed() -> list[str]:
    return sys.modules["oracledb"].EXECUTED


# ---- item 8: the datum's age, the apply state, protection mode and switchover status -------------------------------

def test_datum_age_grows_while_the_lag_stays_frozen_genuine_capture(fake):
    """The 2019 capture (MRP0 APPLYING_LOG, apply lag +02 10:51:00, datum 1 s before TIME_COMPUTED), read at the
    capture's time and again an hour later with nothing new received: the lag figures are the same, the datum's
    age says the standby stopped receiving.  Before issue 39 no age was exported."""
    stats = sqlplus_table(REAL / "dataguard_stats_mrp0_applying_log_2019.txt")
    assert [r["NAME"] for r in stats] == ["transport lag", "apply lag", "apply finish time", "estimated startup time"]
    mrp = [[1, "APPLYING_LOG", 1]]  # the capture's V$MANAGED_STANDBY row: MRP0 APPLYING_LOG
    samples, batch = _run(_standby("12.1.0.2.0", dataguard_rows(stats, "12/19/2019 20:39:46"), mrp), fake)
    assert not batch.errors
    key = (("name", "apply_lag"), ("source_db_unique_name", ""))
    assert _series(samples, "dataguard_lag_seconds")[key] == 2 * 86400 + 10 * 3600 + 51 * 60
    assert _series(samples, "dataguard_datum_age_seconds") == {
        (("name", "transport_lag"), ("source_db_unique_name", "")): 1,
        (("name", "apply_lag"), ("source_db_unique_name", "")): 1}
    assert _series(samples, "dataguard_apply_running") == {(): 1}
    assert _series(samples, "dataguard_apply_status") == {(("mrp_status", "APPLYING_LOG"),): 1}
    # an hour later, nothing received: same lag, the age is an hour
    samples, _ = _run(_standby("12.1.0.2.0", dataguard_rows(stats, "12/19/2019 21:39:46"), mrp), fake)
    assert _series(samples, "dataguard_lag_seconds")[key] == 2 * 86400 + 10 * 3600 + 51 * 60
    assert _series(samples, "dataguard_datum_age_seconds")[key] == 3601
    # before 12.2 the apply state comes from GV$MANAGED_STANDBY, the datum's age from the text DATUM_TIME guarded
    # against other shapes, and SOURCE_DB_UNIQUE_NAME (18c) is never named
    lag_sql = [s for s in _executed() if "FROM v$dataguard_stats" in s][-1]
    assert "TO_DATE(datum_time, 'MM/DD/YYYY HH24:MI:SS')" in lag_sql and "REGEXP_LIKE(datum_time" in lag_sql
    assert "CAST(NULL AS VARCHAR2(32)) AS source_db_unique_name" in lag_sql
    assert any("FROM gv$managed_standby" in s for s in _executed())
    assert not any("gv$dataguard_process" in s for s in _executed())


def test_a_null_apply_lag_is_not_silent_genuine_checkmk_rows(fake):
    """Checkmk's agent rows for standby KNULF: transport lag +00 00:00:00, apply lag empty (NULL: apply stopped),
    no MRP0 status.  The lag gives no apply_lag series (as before), but the apply state says 0 on a PHYSICAL
    STANDBY, with the protection mode and switchover status.  Before issue 39 nothing said so."""
    text = (REAL / "checkmk_oracle_dataguard_stats_agent_output.py.txt").read_text()
    agent = ast.literal_eval(text.split("=", 1)[1])
    knulf = [{"NAME": r[3], "VALUE": r[4], "DATUM_TIME": ""} for r in agent if r[0] == "KNULF"]
    database = _standby("19.3.0.0.0", dataguard_rows(knulf, "01/01/2024 00:00:00", "TUX12C"), [[0, None, None]])
    samples, batch = _run(database, fake)
    assert not batch.errors
    assert _series(samples, "dataguard_lag_seconds") == {
        (("name", "transport_lag"), ("source_db_unique_name", "TUX12C")): 0}  # apply lag NULL: no sample
    assert _series(samples, "dataguard_datum_age_seconds") == {}  # DATUM_TIME not in the agent's rows
    assert _series(samples, "dataguard_apply_running") == {(): 0}
    assert _series(samples, "dataguard_apply_status") == {}
    assert _series(samples, "dataguard_info") == {
        (("database_role", "PHYSICAL STANDBY"), ("protection_level", "MAXIMUM PERFORMANCE"),
         ("protection_mode", "MAXIMUM PERFORMANCE"), ("switchover_status", "NOT ALLOWED")): 1}
    # 12.2 and later: V$DATAGUARD_PROCESS (GV$, whichever instance runs MRP0), not the deprecated view
    assert any("FROM gv$dataguard_process WHERE name LIKE 'MRP%'" in s for s in _executed())
    assert not any("gv$managed_standby" in s for s in _executed())


def test_datum_time_null_or_of_another_shape_gives_no_age(fake):
    """Genuine 2022 capture (SOURCE_DBID 0: 18c+): both lags 0, the datum equal to TIME_COMPUTED; plus (invented)
    a DATUM_TIME the database could not convert, which the SQL's guard turns into NULL rather than ORA-01843."""
    stats = sqlplus_table(REAL / "dataguard_stats_source_dbid_2022.txt")
    rows = dataguard_rows(stats, "07/12/2022 01:55:37", "ORAADG")
    assert [r[3] for r in rows] == [0, 0]
    bad = dataguard_rows([{"NAME": "apply lag", "VALUE": "+00 00:00:00", "DATUM_TIME": "2022-07-12 01:55:37"}],
                         "07/12/2022 01:55:37", "OTHER")  # invented shape
    samples, batch = _run(_standby("19.3.0.0.0", rows + bad, [[1, "APPLYING_LOG", 1]]), fake)
    assert not batch.errors
    assert _series(samples, "dataguard_datum_age_seconds") == {
        (("name", "transport_lag"), ("source_db_unique_name", "ORAADG")): 0,
        (("name", "apply_lag"), ("source_db_unique_name", "ORAADG")): 0}


# ---- item 11: one series per Data Guard source (18c+) ------------------------------------------------------------

def test_two_sources_never_collide(fake):
    """A 19c standby fed by two sources (a far sync and the primary; rows invented in the shape of the genuine 2022
    capture): one transport_lag row each.  Before issue 39 both had the labels {name="transport_lag"}: the query
    failed ("two rows with labels") and every lag series vanished."""
    rows = [["transport_lag", "+00 00:00:02", "FSYNC", 2], ["transport_lag", "+00 00:05:00", "PRIM", 2],
            ["apply_lag", "+00 00:00:03", "PRIM", 2]]
    samples, batch = _run(_standby("19.3.0.0.0", rows, [[1, "APPLYING_LOG", 1]]), fake)
    assert not batch.errors
    assert _series(samples, "dataguard_lag_seconds") == {
        (("name", "transport_lag"), ("source_db_unique_name", "FSYNC")): 2,
        (("name", "transport_lag"), ("source_db_unique_name", "PRIM")): 300,
        (("name", "apply_lag"), ("source_db_unique_name", "PRIM")): 3}
    lag_sql = [s for s in _executed() if "FROM v$dataguard_stats" in s][-1]
    assert "value, source_db_unique_name," in lag_sql  # the 18c+ statement reads the column


# ---- item 11: ASM queries only where ASM exists -----------------------------------------------------------------

def test_no_asm_query_on_a_database_without_asm_rechecked_on_reconnect(fake):
    """oracledb_exporter issue 151: every V$ASM_* query of a database without ASM writes a trace file.  The
    database's files are not in ASM: V$ASM_DISKGROUP_STAT is never asked, run after run; the check is made once
    per session; after a reconnect to a database that now keeps files in +DATA it is asked again and the disk
    groups appear.  Before issue 39 the ASM query ran on every scrape everywhere."""
    path = fake(_variant(RAC_CDB, "19.3.0.0.0", 1, {"AS asm_files": {"columns": ["ASM_FILES"], "rows": [[0]]}}))
    collector = OracleCollector(OracleCollectorSettings.model_validate(_settings()),
                                Context(procfs=str(FIXTURES / "oracle" / "proc")))
    executed = _executed()
    executed.clear()
    for _ in range(3):
        samples, batch = collect(collector)
        assert not batch.errors
    assert not [s for s in executed if "v$asm" in s.lower()]
    assert sum("AS asm_files" in s for s in executed) == 1  # one pooled session, asked once
    reason = "the database keeps no files in ASM (no data, control or redo file named +DISKGROUP/...)"
    assert _series(samples, "query_skipped") == {(("query", "asm_diskgroups"), ("reason", reason)): 1}
    assert _series(samples, "query_success")[(("query", "asm_diskgroups"),)] == 1
    assert _series(samples, "asm_diskgroup_total_bytes") == {}
    # a reconnect (the pooled session dropped) to a database with files in ASM: asked again, the query runs
    data = yaml.safe_load(path.read_text())
    entry = [q for q in data["databases"][DSN]["queries"] if q["match"] == "AS asm_files"][0]
    entry["rows"] = [[4]]
    path.write_text(yaml.safe_dump(data))
    collector.databases[0].client.close()
    samples, batch = collect(collector)
    assert not batch.errors
    assert sum("AS asm_files" in s for s in executed) == 2
    assert any("FROM v$asm_diskgroup_stat" in s for s in executed)
    assert _series(samples, "asm_diskgroup_total_bytes") == {
        (("diskgroup", "DATA"), ("state", "MOUNTED"), ("type", "NORMAL")): 4096}
    assert _series(samples, "query_skipped") == {}


def test_asm_check_without_grant_skips_the_asm_query_saying_why(fake):
    database = _variant(RAC_CDB, "19.3.0.0.0", 1, {"AS asm_files": {"error": "ORA-00942: table or view does not "
                                                                             "exist"}})
    samples, batch = _run(database, fake)
    assert not batch.errors  # the other queries are not affected, and a skip is not a failure
    reason = "cannot tell whether the database uses ASM: ORA-00942: table or view does not exist"
    assert _series(samples, "query_skipped") == {(("query", "asm_diskgroups"), ("reason", reason)): 1}
    assert not [s for s in _executed() if "v$asm" in s.lower()]


# ---- item 9: RMAN levels, failures, the last job's duration and size --------------------------------------------

def _rman_rows() -> dict[str, list]:
    text = (REAL / "checkmk_oracle_rman_agent_rows.py.txt").read_text()
    tables = dict(re.findall(r"^(\w+) = (\[.*?^            \])", text, re.M | re.S))
    return {name: ast.literal_eval(body) for name, body in tables.items()}


def test_level_0_and_level_1_told_apart_genuine_checkmk_rows(fake):
    """Checkmk's mk_oracle rows: AFIS2 DB_INCR level 0, 460 minutes old; MYDB DB_INCR level 1, the newest 12
    minutes old (of two).  V$RMAN_BACKUP_JOB_DETAILS calls both 'DB INCR'; the level comes from the job's backup
    sets (V$BACKUP_SET_DETAILS by SESSION_KEY), so "no level 0 for N days" can be alerted.  Before issue 39 only
    middleware_oracle_backup_last_success_age_seconds{input_type="DB INCR"} existed, whatever the level."""
    agent = _rman_rows()
    level0 = [r for r in agent["NORMAL_CASE"] if r[0] == "AFIS2"][0]
    level1 = min(agent["LATEST_OF_TWO_LEVEL_1"], key=lambda r: int(r[6]))
    assert (level0[4], level0[5], level1[4], level1[5]) == ("DB_INCR", "0", "DB_INCR", "1")
    database = _variant(RAC_CDB, "19.3.0.0.0", 1, {
        "AS level_age_seconds": {"columns": ["LEVEL", "LEVEL_AGE_SECONDS"],
                                 "rows": [[level0[5], int(level0[6]) * 60], [level1[5], int(level1[6]) * 60]]},
        # invented: the jobs' durations and sizes (the agent rows have none)
        "AS job_rank": {"columns": ["INPUT_TYPE", "LEVEL", "ELAPSED_SECONDS", "INPUT_BYTES", "OUTPUT_BYTES"],
                        "rows": [["DB INCR", "0", 5400, "decimal:858993459200", "decimal:214748364800"],
                                 ["DB INCR", "1", 610, "decimal:858993459200", 3221225472],
                                 ["ARCHIVELOG", None, 35, 524288000, 510656512]]},
        "AS failed_jobs": {"columns": ["INPUT_TYPE", "FAILED_JOBS"], "rows": [["DB INCR", 2]]}})
    samples, batch = _run(database, fake)
    assert not batch.errors
    assert _series(samples, "backup_incremental_last_success_age_seconds") == {
        (("level", "0"),): 460 * 60, (("level", "1"),): 12 * 60}
    assert _series(samples, "backup_last_duration_seconds") == {
        (("input_type", "DB INCR"), ("level", "0")): 5400, (("input_type", "DB INCR"), ("level", "1")): 610,
        (("input_type", "ARCHIVELOG"), ("level", "")): 35}
    assert _series(samples, "backup_last_output_bytes")[(("input_type", "DB INCR"), ("level", "0"))] == 214748364800
    assert _series(samples, "backup_failed_jobs") == {
        (("input_type", "DB INCR"),): 2, (("input_type", "DB FULL"),): 0, (("input_type", "ARCHIVELOG"),): 0}
    level_sql = [s for s in _executed() if "AS level_age_seconds" in s][-1]
    assert "FROM v$backup_set_details" in level_sql and "s.session_key = j.session_key" in level_sql
    assert "j.input_type = 'DB INCR'" in level_sql


# ---- item 10: TEMP and UNDO, each with its own "used" -------------------------------------------------------------

def test_undo_extents_by_status(fake):
    """UNDO's used is ACTIVE + UNEXPIRED; EXPIRED extents are reusable (invented rows, DBA_UNDO_EXTENTS' columns).
    Before issue 39 the only UNDO figure was DBA_TABLESPACE_USAGE_METRICS', which counts EXPIRED as used."""
    pdb = _variant(RAC_CDB, "19.3.0.0.0", 3, {
        "FROM dba_temp_free_space": {"columns": ["CONTAINER", "TABLESPACE", "CONTENTS", "USED_BYTES", "SIZE_BYTES",
                                                 "MAX_BYTES", "AUTOEXTENSIBLE"], "rows": []},
        "FROM dba_undo_extents": {"columns": ["CONTAINER", "TABLESPACE", "STATUS", "EXTENT_BYTES"],
                                  "rows": [[None, "UNDOTBS1", "ACTIVE", 8388608],
                                           [None, "UNDOTBS1", "UNEXPIRED", "decimal:734003200"],
                                           [None, "UNDOTBS1", "EXPIRED", 1879048192]]}})
    samples, batch = _run(pdb, fake)
    assert not batch.errors
    assert _series(samples, "undo_extent_bytes") == {
        (("container", ""), ("status", "ACTIVE"), ("tablespace", "UNDOTBS1")): 8388608,
        (("container", ""), ("status", "UNEXPIRED"), ("tablespace", "UNDOTBS1")): 734003200,
        (("container", ""), ("status", "EXPIRED"), ("tablespace", "UNDOTBS1")): 1879048192}
    # in the CDB root, every container's undo from CDB_UNDO_EXTENTS, named
    samples, batch = _run(_variant(RAC_CDB, "19.3.0.0.0", 1, {
        "FROM cdb_undo_extents": {"columns": ["CONTAINER", "TABLESPACE", "STATUS", "EXTENT_BYTES"],
                                  "rows": [["SALES", "UNDOTBS1", "ACTIVE", 1048576]]}}), fake)
    assert _series(samples, "undo_extent_bytes") == {
        (("container", "SALES"), ("status", "ACTIVE"), ("tablespace", "UNDOTBS1")): 1048576}


def test_10g_temp_used_is_what_sorts_hold_not_the_extents_allocated(fake):
    """10.2 has no DBA_TEMP_FREE_SPACE.  V$TEMP_SPACE_HEADER.BYTES_USED is every extent allocated since startup
    (near 100 % after the first big sort, reused without being freed); GV$SORT_SEGMENT's used blocks are what
    sessions hold now (invented rows).  Before issue 39 the 10g statement read V$TEMP_SPACE_HEADER: 950 of 1000."""
    columns = ["CONTAINER", "TABLESPACE", "CONTENTS", "USED_BYTES", "SIZE_BYTES", "MAX_BYTES", "AUTOEXTENSIBLE"]
    old = _variant(RAC_CDB, "10.2.0.5.0", None, {
        "FROM v$temp_space_header": {"columns": columns, "rows": [[None, "TEMP", "TEMPORARY", 950, 1000, 1000, 0]]},
        "FROM gv$sort_segment": {"columns": columns, "rows": [[None, "TEMP", "TEMPORARY", 40, 1000, 1000, 0]]},
        "FROM gv$managed_standby": {"columns": APPLY_COLUMNS, "rows": [[0, None, None]]},
        "FROM v$flash_recovery_area_usage": {"columns": ["FILE_TYPE", "USED_RATIO", "RECLAIMABLE_RATIO"],
                                             "rows": []}})
    samples, batch = _run(old, fake)
    assert not batch.errors
    assert _series(samples, "tablespace_used_bytes") == {
        (("container", ""), ("contents", "TEMPORARY"), ("tablespace", "TEMP")): 40}


@pytest.mark.parametrize("capture", sorted(p.name for p in REAL.glob("dataguard_stats_*.txt")))
def test_the_sqlplus_captures_parse(capture):
    rows = sqlplus_table(REAL / capture)
    assert {"NAME", "VALUE", "TIME_COMPUTED", "DATUM_TIME"} <= set(rows[0])
    assert rows[-1]["DATUM_TIME"] == ""  # estimated startup time has no datum
