"""ORA-KGL: library-cache heap warnings ("Heap size ... exceeds notification threshold") from V$DIAG_ALERT_EXT
(through the DB-API stand-in, tests/fakes/oracledb, which type-checks every statement against the view's documented
column types) and from the text alert log (read incrementally from a file in tmp_path).

Genuine input: the alert-log excerpts in tests/systems/oracle/fixtures/real (SOURCE.md there).  Every other alert-log
text below (rotation, truncation, a half-written line, an over-long line, non-UTF-8 bytes) is invented for the case and
says so."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from exporter.core.collector import Context
from exporter.systems.oracle import heapwarnings
from exporter.systems.oracle.collector import OracleCollector
from exporter.systems.oracle.heapwarnings import START_SQL, HeapWarningSource, view_sql
from exporter.systems.oracle.parse import HeapWarning, alert_log_heap_warnings, heap_warnings
from exporter.systems.oracle.settings import HeapWarningSettings, OracleCollectorSettings

from ...support import REPO, collect, install_fake_oracledb

FIXTURES = Path(__file__).parent / "fixtures"

REAL = FIXTURES / "real"
DSN = "kgl.example:1521/orcl"
PASSWORD = "Tiger-Tiger-42"
K = 1024

_spec = importlib.util.spec_from_file_location("fake_oracledb_sqltypes_kgl", REPO / "tests/fakes/oracledb/sqltypes.py")
sqltypes = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sqltypes)


# ---- the parser --------------------------------------------------------------------------------------------------
def _lines(name: str) -> list[str]:
    return (REAL / name).read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize("name,expected", [
    # the object: the "KGL object name :" after the warning (the next line in 10.2; the next message in 18c, with
    # the container prefix); in the 18c CDB excerpt the name before the warning belongs to the entry before it
    ("alert_log_kgl_heap_warning_10.2.0.1_with_ora600.txt",
     [HeapWarning(2190 * K, 2048 * K, "XDB.XDbD/PLZ01TcHgNAgAIIegtw==")]),
    ("alert_log_kgl_heap_warning_18c_cdb.txt", [HeapWarning(52749 * K, 51200 * K)]),
    ("alert_log_kgl_heap_warning_18c_pdbseed_prefix.txt",
     [HeapWarning(52562 * K, 51200 * K, 'ALTER VIEW "KU$_M_ZONEMAP_PIOT_VIEW" COMPILE')]),
])
def test_genuine_alert_logs(name, expected):
    assert alert_log_heap_warnings(_lines(name)) == expected


def test_the_18c_default_threshold_is_50_mb():
    # 51200K is _kgl_large_heap_warning_threshold's default since 10.2.0.2 (52428800 bytes, the NFS report's 50 MB)
    assert alert_log_heap_warnings(_lines("alert_log_kgl_heap_warning_18c_cdb.txt"))[0].threshold_bytes == 52428800


@pytest.mark.parametrize("text,expected", [  # invented
    ("Heap size 2294K exceeds notification threshold (2048K)", [HeapWarning(2294 * K, 2048 * K)]),
    ("Heap size 3M exceeds notification threshold (2M)", [HeapWarning(3 * K * K, 2 * K * K)]),
    ("Heap size 2294 exceeds notification threshold (2048)", [HeapWarning(2294, 2048)]),  # no unit: bytes
    # a view row with the whole message: one warning per phrase
    ("Memory Notification: Library Cache Object loaded into SGA\nHeap size 2294K exceeds notification threshold "
     "(2048K)\nKGL object name :XDB.x", [HeapWarning(2294 * K, 2048 * K, "XDB.x")]),
    # cut short (MESSAGE_TEXT truncated): still a warning, sizes unknown
    ("Heap size 2294K exceeds notification threshold (20", [HeapWarning(2294 * K, None)]),
    ("exceeds notification threshold", [HeapWarning(None, None)]),
    ("Heap size K exceeds notification threshold (K)", [HeapWarning(None, None)]),
    ("Heap size \u0663K exceeds notification threshold (2048K)", [HeapWarning(None, 2048 * K)]),  # Arabic-Indic 3
    ("Heap size " + "9" * 40 + "K exceeds notification threshold (2048K)", [HeapWarning(None, 2048 * K)]),
    ("Heap size 2294K exceeded notification threshold (2048K)", []),
    ("Thread 1 advanced to log sequence 16540", []),
])
def test_warning_forms(text, expected):
    assert heap_warnings(text) == expected


def test_pathological_lines_are_parsed_whole():  # invented: no backtracking, nothing thrown, every phrase counted
    phrases = " exceeds notification threshold (" * 20000
    assert len(heap_warnings(phrases)) == 20000
    assert heap_warnings("Heap size " + "1" * 200000 + " exceeds notification threshold (" + "2" * 200000) == \
        [HeapWarning(None, None)]


# ---- the alert-log file --------------------------------------------------------------------------------------------
GENUINE_10G = (REAL / "alert_log_kgl_heap_warning_10.2.0.1_with_ora600.txt").read_bytes()
WARNING = b"Heap size 2294K exceeds notification threshold (2048K)\n"  # invented line in the report's words


def _file_source(path, **settings) -> HeapWarningSource:
    return HeapWarningSource("db10g", HeapWarningSettings(alert_log=str(path), **settings), 5.0)


def _append(path, data: bytes) -> None:
    with open(path, "ab") as handle:
        handle.write(data)


def _run(source: HeapWarningSource) -> dict:
    source.read(client=None)
    assert source.success, source.error
    return {"warnings": source.totals.warnings, "max": source.totals.max_heap, "threshold": source.totals.threshold,
            "unread": source.unread}


def test_file_first_run_starts_at_the_end_then_counts_what_is_appended(tmp_path):
    log = tmp_path / "alert_mantas.log"
    log.write_bytes(GENUINE_10G)  # history: not counted (the counter starts at 0 with the exporter)
    source = _file_source(log)
    assert _run(source) == {"warnings": 0, "max": None, "threshold": None, "unread": 0}
    _append(log, GENUINE_10G)
    assert _run(source) == {"warnings": 1, "max": 2190 * K, "threshold": 2048 * K, "unread": 0}
    assert _run(source)["warnings"] == 1  # nothing new: nothing counted again
    _append(log, (REAL / "alert_log_kgl_heap_warning_18c_cdb.txt").read_bytes())
    assert _run(source) == {"warnings": 2, "max": 52749 * K, "threshold": 51200 * K, "unread": 0}


def test_file_half_written_line_is_read_whole_next_time(tmp_path):  # invented
    log = tmp_path / "alert.log"
    log.write_bytes(b"")
    source = _file_source(log)
    _run(source)
    _append(log, b"Memory Notification: Library Cache Object loaded into SGA\nHeap size 2294K exceeds notif")
    assert _run(source)["warnings"] == 0
    _append(log, b"ication threshold (2048K)\n")
    assert _run(source) == {"warnings": 1, "max": 2294 * K, "threshold": 2048 * K, "unread": 0}


def test_file_first_run_skips_a_partial_last_line(tmp_path):  # invented
    log = tmp_path / "alert.log"
    log.write_bytes(b"Heap size 9999K exceeds notification threshold (2048K)\nHeap size 8888K exceeds noti")
    source = _file_source(log)
    _run(source)
    _append(log, b"fication threshold (2048K)\n" + WARNING)
    assert _run(source)["warnings"] == 1  # the line written before the start is not counted; the next one is
    assert source.totals.max_heap == 2294 * K


def test_file_rotation_reads_the_new_file_from_its_start(tmp_path):  # invented
    log = tmp_path / "alert.log"
    log.write_bytes(b"Starting ORACLE instance (normal)\n" * 50)
    source = _file_source(log)
    _run(source)
    os.rename(log, tmp_path / "alert.log.1")  # the DBA's rotation; Oracle creates the file again at its next write
    log.write_bytes(WARNING)
    assert _run(source)["warnings"] == 1
    _append(log, WARNING)
    assert _run(source)["warnings"] == 2


def test_file_truncation_starts_again_at_0(tmp_path):  # invented: copy-and-truncate rotation
    log = tmp_path / "alert.log"
    log.write_bytes(b"Thread 1 advanced to log sequence 16540\n" * 50)
    source = _file_source(log)
    _run(source)
    with open(log, "r+b") as handle:
        handle.truncate(0)
    _append(log, WARNING)
    assert _run(source)["warnings"] == 1


def test_file_reads_are_bounded_and_catch_up(tmp_path):  # invented
    log = tmp_path / "alert.log"
    log.write_bytes(b"")
    source = _file_source(log, max_bytes=4096)
    _run(source)
    _append(log, WARNING * 200)  # 55-byte lines, 11,000 bytes: three runs of at most 4,096
    first = _run(source)
    assert first["warnings"] == 74 and first["unread"] == (200 - 74) * 55  # whole lines only, the rest is waiting
    _run(source)
    assert _run(source) == {"warnings": 200, "max": 2294 * K, "threshold": 2048 * K, "unread": 0}


def test_file_line_longer_than_a_read_is_dropped(tmp_path):  # invented
    log = tmp_path / "alert.log"
    log.write_bytes(b"")
    source = _file_source(log, max_bytes=4096)
    _run(source)
    # a 10,000-byte line that contains the phrase is dropped whole, not counted from a fragment
    _append(log, b"x" * 5000 + WARNING[:-1] + b"y" * 5000 + b"\n" + WARNING)
    runs = [_run(source)["warnings"] for _ in range(4)]
    assert runs[-1] == 1 and source.unread == 0


def test_file_non_utf8_bytes(tmp_path):  # invented: a Latin-1 / binary-garbage line next to a warning
    log = tmp_path / "alert.log"
    log.write_bytes(b"")
    source = _file_source(log)
    _run(source)
    _append(log, b"\xff\xfe\x00 Fehler in Datei \xe4\xf6\xfc\n\xc3\x28 " + WARNING + b"\x80\x81\n")
    assert _run(source)["warnings"] == 1


def test_missing_file_fails_only_this_source(tmp_path):
    source = _file_source(tmp_path / "nowhere" / "alert.log")
    source.read(client=None)
    assert source.success is False and "No such file" in source.error
    assert source.totals is None  # no counter: absent, never a made-up 0


# ---- the collector: V$DIAG_ALERT_EXT through the stand-in driver --------------------------------------------------
def _row(logged: str, text: str, con_id: int = 0) -> list:
    return [logged, con_id, text]


MSG = "Memory Notification: Library Cache Object loaded into SGA\nHeap size {}K exceeds notification threshold (51200K)"


@pytest.fixture
def kgl_db(monkeypatch, tmp_path):
    fixture = tmp_path / "db.yaml"
    base = yaml.safe_load((FIXTURES / "db.yaml").read_text())["databases"]["erp.example:1521/erp"]
    queries = [q for q in base["queries"] if q["match"] not in ("AS start_utc", "FROM v$diag_alert_ext")]
    fixture.write_text(yaml.safe_dump({"databases": {DSN: {"queries": queries}}}))
    monkeypatch.setenv("ORA_MONITOR_PW", PASSWORD)
    install_fake_oracledb(monkeypatch, fixture, tmp_path / "connects.log")
    yield fixture
    sys.modules.pop("oracledb", None)


def _serve(fixture, start: str = "2024-03-01T08:00:00.000000000", rows: list | None = None, **view) -> None:
    data = yaml.safe_load(fixture.read_text())
    queries = [q for q in data["databases"][DSN]["queries"]
               if q["match"] not in ("AS start_utc", "FROM v$diag_alert_ext")]
    queries.append({"match": "AS start_utc", "columns": ["START_UTC"], "rows": [[start]]})
    queries.append({"match": "FROM v$diag_alert_ext", "columns": ["LOGGED_UTC", "CON_ID", "MESSAGE_TEXT"],
                    "rows": rows or [], **view})
    data["databases"][DSN]["queries"] = queries
    fixture.write_text(yaml.safe_dump(data))


def _collector(**heap) -> OracleCollector:
    settings = {"enabled": True, "databases": [{"name": "kgl", "dsn": DSN, "user": "monitor",
                                                "password_env": "ORA_MONITOR_PW", "local_files": "no",
                                                "heap_warnings": heap}]}
    return OracleCollector(OracleCollectorSettings.model_validate(settings), Context(procfs=str(FIXTURES)))


def _get(samples: dict, name: str, **labels):
    return samples.get((f"middleware_oracle_{name}", tuple(sorted({"database": "kgl", **labels}.items()))))


def test_view_counts_only_new_rows_once(kgl_db):
    collector = _collector(history=0)  # the counting after the start (the history: issue 39's tests)
    # first run: the database's clock marks the start; a warning before it is history, one after it is new
    _serve(kgl_db, rows=[_row("2024-03-01T07:59:59.999999999", MSG.format(60000)),
                         _row("2024-03-01T08:00:05.123456789", MSG.format(52749), con_id=3)])
    samples, batch = collect(collector)
    assert batch.errors == {}
    assert _get(samples, "source_success", source="alert_log_view") == 1
    assert _get(samples, "kgl_heap_warnings_total") == 1
    assert _get(samples, "kgl_heap_warning_max_heap_bytes") == 52749 * K
    assert _get(samples, "kgl_heap_warning_logged_threshold_bytes") == 51200 * K
    # the same rows again (">=" re-reads the newest second): nothing new
    samples, _ = collect(collector)
    assert _get(samples, "kgl_heap_warnings_total") == 1
    # another container logs at the very same nanosecond, then a later warning: both counted, once
    _serve(kgl_db, rows=[_row("2024-03-01T08:00:05.123456789", MSG.format(52749), con_id=3),
                         _row("2024-03-01T08:00:05.123456789", MSG.format(51300), con_id=4),
                         _row("2024-03-01T09:14:00.000000000", MSG.format(2294) + "\n" + MSG.format(70000))])
    samples, _ = collect(collector)
    assert _get(samples, "kgl_heap_warnings_total") == 4
    assert _get(samples, "kgl_heap_warning_max_heap_bytes") == 70000 * K
    samples, _ = collect(collector)
    assert _get(samples, "kgl_heap_warnings_total") == 4


def test_view_starts_at_zero_and_binds_the_mark(kgl_db, monkeypatch):
    from exporter.systems.oracle.client import OracleClient

    calls = []
    query = OracleClient.query

    def spy(self, conn, sql, params=None, timeout=None):
        calls.append((sql, dict(params or {})))
        return query(self, conn, sql, params, timeout)

    monkeypatch.setattr(OracleClient, "query", spy)
    _serve(kgl_db, rows=[])
    collector = _collector(history="2h", max_rows=50)
    samples, _ = collect(collector)
    assert _get(samples, "kgl_heap_warnings_total") == 0  # the series exists from the first run: increase() sees 0 -> 1
    assert _get(samples, "kgl_heap_warning_max_heap_bytes") is None  # no warning yet: absent, not 0
    heap = [(sql, params) for sql, params in calls if "start_utc" in sql or "v$diag_alert_ext" in sql]
    assert heap[0] == (START_SQL, {"history_seconds": 7200})
    assert heap[1][1] == {"since_utc": "2024-03-01T08:00:00.000000000", "max_rows": 50}
    calls.clear()
    _serve(kgl_db, rows=[_row("2024-03-01T08:30:00.000000000", MSG.format(52749))])
    collect(collector)
    collect(collector)
    marks = [params["since_utc"] for sql, params in calls if "v$diag_alert_ext" in sql]
    assert marks == ["2024-03-01T08:00:00.000000000", "2024-03-01T08:30:00.000000000"]  # the start is read once


def test_view_without_privilege_fails_alone(kgl_db):
    _serve(kgl_db, error="ORA-00942: table or view does not exist")
    samples, batch = collect(_collector())
    assert _get(samples, "source_success", source="alert_log_view") == 0
    assert _get(samples, "kgl_heap_warnings_total") is None
    assert "grant SELECT" in batch.errors["kgl:alert_log_view"]
    assert _get(samples, "query_success", query="parameters") == 1
    assert _get(samples, "collect_success") == 1 and _get(samples, "up") == 1


def test_slow_view_times_out_alone(kgl_db):
    _serve(kgl_db, sleep=5)
    samples, batch = collect(_collector(timeout="0.3s"))
    assert _get(samples, "source_success", source="alert_log_view") == 0
    assert "timed out after 0.3s" in batch.errors["kgl:alert_log_view"]
    assert _get(samples, "query_success", query="parameters") == 1


def test_garbage_rows_fail_the_source_without_moving_the_mark(kgl_db):
    collector = _collector(history=0)  # the counting after the start (the history: issue 39's tests)
    _serve(kgl_db, rows=[_row("2024-03-01T08:10:00.000000000", MSG.format(52749))])
    samples, _ = collect(collector)
    assert _get(samples, "kgl_heap_warnings_total") == 1
    _serve(kgl_db, rows=[_row("2024-03-01T08:10:00.000000000", MSG.format(52749)),
                         _row("01-MAR-24 09.00.00", MSG.format(99999)),
                         _row("2024-03-01T09:30:00.000000000", MSG.format(53000))])
    samples, batch = collect(collector)
    assert _get(samples, "source_success", source="alert_log_view") == 0
    assert "row 2: timestamp '01-MAR-24 09.00.00' is not a timestamp" in batch.errors["kgl:alert_log_view"]
    assert _get(samples, "kgl_heap_warnings_total") is None
    _serve(kgl_db, rows=[_row("2024-03-01T08:10:00.000000000", MSG.format(52749)),
                         _row("2024-03-01T09:30:00.000000000", MSG.format(53000))])
    samples, _ = collect(collector)
    assert _get(samples, "kgl_heap_warnings_total") == 2  # nothing lost, nothing counted twice
    _serve(kgl_db, rows=[_row("2024-03-01T09:30:00.000000000", MSG.format(53000)), [None, None, None]])
    samples, batch = collect(collector)
    assert "row 2: timestamp 'None'" in batch.errors["kgl:alert_log_view"]


def test_view_text_that_is_not_a_string_or_null(kgl_db):
    collector = _collector(history=0)  # the counting after the start (the history: issue 39's tests)
    _serve(kgl_db, rows=[_row("2024-03-01T08:10:00.000000000", None), ["2024-03-01T08:11:00.000000000", None, 42]])
    samples, batch = collect(collector)
    assert batch.errors == {}
    assert _get(samples, "kgl_heap_warnings_total") == 2  # the view matched the phrase: a warning, size unknown
    assert _get(samples, "kgl_heap_warning_max_heap_bytes") is None


def test_wrong_types_in_the_statement_fail_like_oracle(kgl_db, monkeypatch):
    # the shipped statements pass the stand-in's type check against V$DIAG_ALERT_EXT's documented types ...
    sqltypes.check(view_sql(HeapWarningSettings()), {"since_utc": "2024-03-01T08:00:00.000000000", "max_rows": 5})
    sqltypes.check(START_SQL, {"history_seconds": 0})
    # ... and one that compares the TIMESTAMP WITH TIME ZONE column with a number fails with ORA-00932
    wrong = heapwarnings.VIEW_SQL.replace("originating_timestamp >= FROM_TZ(TO_TIMESTAMP(:since_utc, '{fmt}'), "
                                          "'+00:00')", "originating_timestamp >= :max_rows AND message_text <> "
                                                       ":since_utc")
    assert wrong != heapwarnings.VIEW_SQL
    monkeypatch.setattr(heapwarnings, "VIEW_SQL", wrong)
    _serve(kgl_db, rows=[])
    samples, batch = collect(_collector())
    assert _get(samples, "source_success", source="alert_log_view") == 0
    assert "ORA-00932: inconsistent datatypes" in batch.errors["kgl:alert_log_view"]


def test_errors_carry_no_password(kgl_db):
    _serve(kgl_db, error=f"ORA-00604: error occurred at recursive SQL level 1 (user monitor/{PASSWORD})")
    samples, batch = collect(_collector())
    assert _get(samples, "source_success", source="alert_log_view") == 0
    assert PASSWORD not in repr(batch.errors) and "ORA-00604" in batch.errors["kgl:alert_log_view"]


def test_file_source_in_the_collector_needs_no_database(kgl_db, tmp_path):
    data = yaml.safe_load(kgl_db.read_text())
    data["databases"][DSN]["connect_error"] = "DPY-6005: cannot connect to database"
    kgl_db.write_text(yaml.safe_dump(data))
    log = tmp_path / "alert_db10g.log"
    shutil.copy(REAL / "alert_log_kgl_heap_warning_10.2.0.1_with_ora600.txt", log)
    collector = _collector(alert_log=str(log))
    samples, batch = collect(collector)
    _append(log, GENUINE_10G)
    samples, batch = collect(collector)
    assert _get(samples, "up") == 0  # the database is unreachable ...
    assert _get(samples, "source_success", source="alert_log_file") == 1  # ... its alert log is read all the same
    assert _get(samples, "kgl_heap_warnings_total") == 1
    assert _get(samples, "alert_log_unread_bytes") == 0
    assert _get(samples, "source_success", source="alert_log_view") is None


def test_off_and_settings():
    assert HeapWarningSettings().resolved == "view"
    assert HeapWarningSettings(alert_log="/u01/alert.log").resolved == "alert_log"
    assert HeapWarningSettings(source="off", alert_log="/u01/alert.log").resolved == "off"
    with pytest.raises(ValidationError, match="needs the alert_log path"):
        HeapWarningSettings(source="alert_log")
    with pytest.raises(ValidationError):
        HeapWarningSettings(view="v$diag_alert_ext; DROP TABLE x")
    assert "0 AS con_id" in view_sql(HeapWarningSettings(con_id_column=False))
    assert "FROM sys.x$dbgalertext" in view_sql(HeapWarningSettings(view="sys.x$dbgalertext"))


def test_off_emits_nothing(kgl_db):
    samples, _ = collect(_collector(source="off"))
    assert not [key for key in samples if key[0].startswith(("middleware_oracle_source_", "middleware_oracle_kgl"))]
