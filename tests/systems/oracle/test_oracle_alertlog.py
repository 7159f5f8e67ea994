"""Issue 29: the alert log's ORA- errors counted by code (middleware_oracle_alert_errors_total{database,code}), read
by the same source as the ORA-KGL heap warnings (heapwarnings.py: one reader, one read position) and counted by
alertlog.py: each code once per message, at most max_error_codes distinct codes by name (the rest under "other"),
bounded reads, rotation, and no re-count of the history after a restart.

Genuine input: the alert-log excerpts in tests/systems/oracle/fixtures/real (SOURCE.md there: 10.2.0.1 with three
ORA-00600, 11g ORA-07445 and ORA-04030 incidents, a 19c ORA-07445, two ORA-01555 lines).  Every other alert-log text
below is
invented for the case and says so; the 200 MB log is generated in tmp_path (invented)."""

from __future__ import annotations

import importlib.util
import os
import sys
import tracemalloc
from collections import Counter
from pathlib import Path

import pytest
import yaml

from exporter.core.collector import Context
from exporter.systems.oracle.alertlog import OTHER, ErrorCounts, message_codes
from exporter.systems.oracle.collector import OracleCollector
from exporter.systems.oracle.heapwarnings import HeapWarningSource, view_sql
from exporter.systems.oracle.settings import HeapWarningSettings, OracleCollectorSettings

from ...support import REPO, collect, install_fake_oracledb

FIXTURES = Path(__file__).parent / "fixtures"

REAL = FIXTURES / "real"
GENUINE_10G = (REAL / "alert_log_kgl_heap_warning_10.2.0.1_with_ora600.txt").read_bytes()
MIB = 1024 * 1024
DSN = "alert.example:1521/orcl"

_spec = importlib.util.spec_from_file_location("fake_oracledb_sqltypes_alert",
                                               REPO / "tests/fakes/oracledb/sqltypes.py")
sqltypes = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sqltypes)


# ---- the parser: genuine captures, exact counts -------------------------------------------------------------------
@pytest.mark.parametrize("name,expected", [
    ("alert_log_kgl_heap_warning_10.2.0.1_with_ora600.txt", {"ORA-00600": 3}),
    ("alert_log_kgl_heap_warning_18c_cdb.txt", {}),
    ("alert_log_kgl_heap_warning_18c_pdbseed_prefix.txt", {}),
    ("alert_log_ora07445_11g_incident.txt", {"ORA-07445": 1}),
    ("alert_log_ora07445_19c_incident.txt", {"ORA-07445": 1}),
    # four "Errors in file" messages, three of them with ORA-04030 twice: once per message
    ("alert_log_ora04030_11g_repeated.txt", {"ORA-04030": 4}),
    ("alert_log_ora01555_10.2.txt", {"ORA-01555": 1}),
    ("alert_log_ora01555_sql_elided.txt", {"ORA-01555": 1}),
])
def test_genuine_alert_logs_exact_counts(name, expected):
    assert message_codes((REAL / name).read_text(encoding="latin-1"))[0] == Counter(expected)


@pytest.mark.parametrize("text,expected", [  # invented, in the forms of the genuine excerpts
    # ORA-00600 with its ORA-06512 lines: one message, each code once
    ("Sat Jun  5 14:58:37 2010\nErrors in file /u/t.trc:\nORA-00600: internal error code, arguments: [15570]\n"
     "ORA-06512: at \"SYS.P\", line 3\nORA-06512: at line 1\n", {"ORA-00600": 1, "ORA-06512": 1}),
    # two timestamps: two messages
    ("Sat Jun  5 14:58:37 2010\nORA-00600: a\nSat Jun  5 14:58:38 2010\nORA-00600: b\n", {"ORA-00600": 2}),
    # two "Errors in file" under one timestamp: two messages; a container prefix does not hide the start
    ("2024-03-01T08:00:00.1+01:00\nPDB1(3):Errors in file a.trc:\nPDB1(3):ORA-04031: x\nPDB1(3):Errors in file "
     "b.trc:\nPDB1(3):ORA-04031: y\n", {"ORA-04031": 2}),
    # CRLF line ends, ISO timestamps without fraction or zone
    ("2024-03-01T08:00:00\r\nORA-01555 caused by SQL statement below\r\n2024-03-01T08:00:01Z\r\nORA-01555 x\r\n",
     {"ORA-01555": 2}),
    # not codes: six digits, four digits, lower case; no timestamp line: one message
    ("ORA-006000 ORA-0060 ora-00600 TNS-12535\nORA-12170: TNS:Connect timeout occurred\nORA-12170 again\n",
     {"ORA-12170": 1}),
    # a timestamp inside a line is not a message start
    ("x Sat Jun  5 14:58:37 2010\nORA-00600\nORA-00600\n", {"ORA-00600": 1}),
])
def test_message_forms(text, expected):
    assert message_codes(text)[0] == Counter(expected)


def test_a_message_split_between_chunks_counts_once():  # invented
    first, still_open = message_codes("Errors in file a.trc:\nORA-00600: x\n")
    assert first == Counter({"ORA-00600": 1}) and still_open == {"ORA-00600"}
    second, still_open = message_codes("ORA-00600: again\nORA-06512: at line 1\n", still_open)
    assert second == Counter({"ORA-06512": 1})  # the ORA-00600 of the same message was counted in the first chunk
    third, _ = message_codes("Sat Jun  5 14:58:37 2010\nORA-00600: a new message\n", still_open)
    assert third == Counter({"ORA-00600": 1})


def test_distinct_codes_are_capped_and_new_series_start_at_zero():
    counts = ErrorCounts().add(Counter({"ORA-00600": 2, "ORA-07445": 1}), max_codes=3)
    assert counts.samples() == [("ORA-00600", 0), ("ORA-07445", 0)]  # first sample 0: increase() sees the errors
    counts = counts.add(Counter(), 3)
    assert counts.samples() == [("ORA-00600", 2), ("ORA-07445", 1)]
    counts = counts.add(Counter({"ORA-01555": 1, "ORA-04031": 5, "ORA-00060": 2, "ORA-00600": 1}), 3)
    assert counts.codes == {"ORA-00600": 3, "ORA-07445": 1, "ORA-01555": 1, OTHER: 7}
    assert counts.fresh == {"ORA-01555", OTHER}
    counts = counts.add(Counter({"ORA-07445": 1, "ORA-12345": 1}), 3)
    assert counts.samples() == [("ORA-00600", 3), ("ORA-01555", 1), ("ORA-07445", 2), (OTHER, 8)]


def test_pathological_text_is_linear():  # invented: no backtracking whatever the line holds
    text = "ORA-0000" * 200_000 + "\n" + "Sat Jun  5 14:58:37 201" * 50_000 + "\n" + "PDB(" * 100_000
    assert message_codes(text)[0] == Counter()
    assert message_codes("ORA-00001" * 100_000)[0] == Counter({"ORA-00001": 1})


# ---- the file source: one reader for heap warnings and errors ------------------------------------------------------
def _source(path, **settings) -> HeapWarningSource:
    return HeapWarningSource("db", HeapWarningSettings(alert_log=str(path), **settings), 30.0)


def _append(path, data: bytes) -> None:
    with open(path, "ab") as handle:
        handle.write(data)


def _run(source: HeapWarningSource) -> dict[str, int]:
    source.read(client=None)
    assert source.success, source.error
    return dict(source.totals.errors.codes)


def test_file_counts_appended_genuine_errors_with_the_heap_warnings(tmp_path):
    log = tmp_path / "alert_mantas.log"
    log.write_bytes(GENUINE_10G)
    source = _source(log)
    assert _run(source) == {}  # the history is not counted: the first run starts at the end
    _append(log, GENUINE_10G)
    assert _run(source) == {"ORA-00600": 3}
    assert source.totals.warnings == 1  # the heap warning of the same chunk, as before
    assert source.totals.errors.samples() == [("ORA-00600", 0)]  # first seen: 0 this run ...
    assert _run(source) == {"ORA-00600": 3}
    assert source.totals.errors.samples() == [("ORA-00600", 3)]  # ... its count from the next
    for name in ("alert_log_ora07445_11g_incident.txt", "alert_log_ora04030_11g_repeated.txt",
                 "alert_log_ora01555_10.2.txt"):
        _append(log, (REAL / name).read_bytes())
    assert _run(source) == {"ORA-00600": 3, "ORA-07445": 1, "ORA-04030": 4, "ORA-01555": 1}


def test_file_message_split_by_the_read_cap_counts_once(tmp_path):  # invented
    log = tmp_path / "alert.log"
    log.write_bytes(b"")
    source = _source(log, max_bytes=4096)
    _run(source)
    filler = b"ORA-06512: at \"APP.PKG\", line 12\n" * 200  # 6,800 bytes of one message's stack
    _append(log, b"Errors in file /u/t.trc  (incident=1):\nORA-00600: internal error code\n" + filler +
            b"ORA-00600: internal error code\n" + b"Sat Jun  5 14:58:37 2010\nORA-00600: next\n")
    runs = 0
    while runs == 0 or source.unread:
        _run(source)
        runs += 1
        assert source.last_read_bytes <= 4096
    assert runs == 2
    assert source.totals.errors.codes == {"ORA-00600": 2, "ORA-06512": 1}


def test_file_rotation_and_truncation_do_not_double_count(tmp_path):  # invented log lines, genuine error block
    log = tmp_path / "alert.log"
    log.write_bytes(b"Starting ORACLE instance (normal)\n" * 20)
    source = _source(log)
    _run(source)
    _append(log, GENUINE_10G)
    assert _run(source) == {"ORA-00600": 3}
    os.rename(log, tmp_path / "alert.log.1")  # rotated by the DBA: a new inode, read from its start
    log.write_bytes((REAL / "alert_log_ora07445_19c_incident.txt").read_bytes())
    assert _run(source) == {"ORA-00600": 3, "ORA-07445": 1}
    assert _run(source) == {"ORA-00600": 3, "ORA-07445": 1}  # read once
    with open(log, "r+b") as handle:  # copy-and-truncate: shorter than the offset, read from 0
        handle.truncate(0)
    _append(log, b"Errors in file x.trc:\nORA-07445: exception encountered\n")
    assert _run(source) == {"ORA-00600": 3, "ORA-07445": 2}
    assert source.unread == 0


def test_restart_does_not_recount_the_history(tmp_path):
    log = tmp_path / "alert.log"
    log.write_bytes(GENUINE_10G * 100)
    first = _source(log)
    _run(first)
    _append(log, GENUINE_10G)
    assert _run(first) == {"ORA-00600": 3}
    # a new exporter process: its counters start at 0 at the end of the log, after counting the last day of it
    # (heap_warnings.history), in which these 2010 messages are not; history 0 reads none of the log at the start
    restarted, without_history = _source(log), _source(log, history=0)
    assert _run(restarted) == {} and restarted.last_read_bytes == log.stat().st_size
    assert _run(without_history) == {} and without_history.last_read_bytes == 0
    _append(log, GENUINE_10G)
    assert _run(restarted) == {"ORA-00600": 3} and _run(without_history) == {"ORA-00600": 3}


def test_distinct_codes_capped_in_the_file_source(tmp_path):  # invented codes
    log = tmp_path / "alert.log"
    log.write_bytes(b"")
    source = _source(log, max_error_codes=2)
    _run(source)
    _append(log, b"".join(b"Errors in file t.trc:\nORA-%05d: x\n" % n for n in range(1, 1001)))
    assert _run(source) == {"ORA-00001": 1, "ORA-00002": 1, OTHER: 998}


@pytest.mark.integration  # writes and reads a 200 MB log
def test_200_mb_log_is_read_in_bounded_chunks_with_bounded_memory(tmp_path):  # invented, generated here
    log = tmp_path / "alert.log"
    log.write_bytes(b"")
    max_bytes = 4 * MIB
    source = _source(log, max_bytes=max_bytes)
    _run(source)
    block = (b"Sat Jun  5 14:58:37 2010\nErrors in file /u01/admin/udump/db_ora_10803.trc:\n"
             b"ORA-00600: internal error code, arguments: [15570], [], [], [], [], [], [], []\n"
             b"ORA-06512: at \"APP.PKG\", line 12\nORA-06512: at line 1\n"
             b"Thread 1 advanced to log sequence 16540\n  Current log# 3 seq# 16540 mem# 0: /ora/redo03.log\n")
    blocks_per_write = (1 * MIB) // len(block)
    writes = 200
    with open(log, "ab") as handle:
        for _ in range(writes):
            handle.write(block * blocks_per_write)
    size = log.stat().st_size
    assert size >= 190 * MIB
    tracemalloc.start()
    try:
        for _ in range(3):
            tracemalloc.reset_peak()
            _run(source)
            assert tracemalloc.get_traced_memory()[1] < 2.5 * max_bytes  # the chunk and its text, nothing else
            assert source.last_read_bytes == max_bytes
    finally:
        tracemalloc.stop()
    runs = 3
    while source.unread:
        _run(source)
        runs += 1
        assert source.last_read_bytes <= max_bytes
    assert runs == -(-size // max_bytes)  # every run read a full chunk but the last (whole lines only)
    messages = writes * blocks_per_write
    assert source.totals.errors.codes == {"ORA-00600": messages, "ORA-06512": messages}
    # a second exporter started on the 200 MB log reads its tail for the last day's history (max_bytes of it: these
    # 2010 messages are not in the day) with the same bounded memory, and none of it with history 0
    fresh = _source(log, max_bytes=max_bytes)
    tracemalloc.start()
    try:
        assert _run(fresh) == {} and fresh.last_read_bytes == max_bytes
        assert tracemalloc.get_traced_memory()[1] < 2.5 * max_bytes
    finally:
        tracemalloc.stop()
    fresh = _source(log, max_bytes=max_bytes, history=0)
    assert _run(fresh) == {} and fresh.last_read_bytes == 0


# ---- the view source through the stand-in driver ------------------------------------------------------------------
@pytest.fixture
def alert_db(monkeypatch, tmp_path):
    fixture = tmp_path / "db.yaml"
    base = yaml.safe_load((FIXTURES / "db.yaml").read_text())["databases"]["erp.example:1521/erp"]
    queries = [q for q in base["queries"] if q["match"] not in ("AS start_utc", "FROM v$diag_alert_ext")]
    fixture.write_text(yaml.safe_dump({"databases": {DSN: {"queries": queries}}}))
    monkeypatch.setenv("ORA_ALERT_PW", "Tiger-Tiger-42")
    install_fake_oracledb(monkeypatch, fixture, tmp_path / "connects.log")
    yield fixture
    sys.modules.pop("oracledb", None)


def _serve(fixture, rows: list, **view) -> None:
    data = yaml.safe_load(fixture.read_text())
    entry = data["databases"][DSN]
    entry["queries"] = [q for q in entry["queries"] if q["match"] not in ("AS start_utc", "FROM v$diag_alert_ext")]
    entry["queries"].append({"match": "AS start_utc", "columns": ["START_UTC"],
                             "rows": [["2024-03-01T08:00:00.000000000"]]})
    entry["queries"].append({"match": "FROM v$diag_alert_ext", "columns": ["LOGGED_UTC", "CON_ID", "MESSAGE_TEXT",
                                                                           "KGL"], "rows": rows, **view})
    fixture.write_text(yaml.safe_dump(data))


def _collector(**heap) -> OracleCollector:
    settings = {"enabled": True, "databases": [{"name": "erp", "dsn": DSN, "user": "monitor",
                                                "password_env": "ORA_ALERT_PW", "local_files": "no",
                                                "heap_warnings": heap}]}
    return OracleCollector(OracleCollectorSettings.model_validate(settings), Context(procfs=str(FIXTURES)))


def _errors(samples: dict) -> dict[str, float]:
    return {dict(labels)["code"]: value for (name, labels), value in samples.items()
            if name == "middleware_oracle_alert_errors_total"}


def _value(samples: dict, name: str, **labels):
    return samples.get((f"middleware_oracle_{name}", tuple(sorted({"database": "erp", **labels}.items()))))


ORA600 = ("Errors in file /u01/app/oracle/diag/rdbms/erp/ERP/trace/ERP_ora_4711.trc  (incident=8421):\n"
          "ORA-00600: internal error code, arguments: [kclchkblk_3], [], [], [], [], [], [], []\n"
          "ORA-06512: at \"SYS.DBMS_STATS\", line 4\nORA-06512: at line 1")  # invented, in the genuine form
KGL = ("Memory Notification: Library Cache Object loaded into SGA\n"
       "Heap size 52749K exceeds notification threshold (51200K)")


def test_view_counts_errors_per_row_and_keeps_them_across_reconnects(alert_db):
    collector = _collector(history=0)  # the counting after the start (the history: issue 39's tests)
    _serve(alert_db, rows=[["2024-03-01T08:00:01.000000000", 0, ORA600, 0],
                           ["2024-03-01T08:00:02.000000000", 0, KGL, 1],
                           ["2024-03-01T08:00:03.000000000", 0, "ORA-04031: unable to allocate 4096 bytes", 0]])
    samples, batch = collect(collector)
    assert "erp:alert_log_view" not in batch.errors
    assert _value(samples, "source_success", source="alert_log_view") == 1
    assert _errors(samples) == {"ORA-00600": 0, "ORA-06512": 0, "ORA-04031": 0}  # first seen: 0
    assert _value(samples, "kgl_heap_warnings_total") == 1  # the ORA- rows (KGL 0) are not heap warnings
    samples, _ = collect(collector)  # the same rows again (">=" on the mark): nothing counted twice
    assert _errors(samples) == {"ORA-00600": 1, "ORA-06512": 1, "ORA-04031": 1}
    connects = alert_db.parent / "connects.log"
    logins = len(connects.read_text().splitlines())
    _serve(alert_db, rows=[], error="ORA-03113: end-of-file on communication channel", drop=True)
    samples, _ = collect(collector)
    assert _value(samples, "source_success", source="alert_log_view") == 0
    assert _errors(samples) == {}  # absent while the source fails, never 0
    _serve(alert_db, rows=[["2024-03-01T08:00:03.000000000", 0, "ORA-04031: unable to allocate 4096 bytes", 0],
                           ["2024-03-01T09:00:00.000000000", 0, ORA600, 0]])
    samples, _ = collect(collector)
    assert len(connects.read_text().splitlines()) > logins  # a new session ...
    assert _errors(samples) == {"ORA-00600": 2, "ORA-06512": 2, "ORA-04031": 1}  # ... the counts kept


def test_view_statement_passes_the_type_check_and_reads_ora_rows():
    sql = view_sql(HeapWarningSettings())
    sqltypes.check(sql, {"since_utc": "2024-03-01T08:00:00.000000000", "max_rows": 5})
    assert "message_text LIKE '%ORA-%'" in sql and "AS kgl" in sql
    assert sql.index("originating_timestamp >=") < sql.index("LIKE '%ORA-%'")  # time predicate first


def test_view_without_the_kgl_column_still_tells_warnings_from_errors(alert_db):
    data = yaml.safe_load(alert_db.read_text())
    data["databases"][DSN]["queries"] += [
        {"match": "AS start_utc", "columns": ["START_UTC"], "rows": [["2024-03-01T08:00:00.000000000"]]},
        {"match": "FROM v$diag_alert_ext", "columns": ["LOGGED_UTC", "CON_ID", "MESSAGE_TEXT"],
         "rows": [["2024-03-01T08:00:01.000000000", 0, ORA600], ["2024-03-01T08:00:02.000000000", 0, KGL]]}]
    alert_db.write_text(yaml.safe_dump(data))
    collector = _collector(history=0)  # the counting after the start (the history: issue 39's tests)
    collect(collector)
    samples, _ = collect(collector)
    assert _value(samples, "kgl_heap_warnings_total") == 1
    assert _errors(samples) == {"ORA-00600": 1, "ORA-06512": 1}
