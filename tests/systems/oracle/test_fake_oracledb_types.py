"""The fake Oracle driver is strict where the real database is: comparing an epoch-seconds NUMBER column with a
DATE fails with ORA-00932 (the HPOM window queries once did that and a substring-matching fake never noticed)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from exporter.systems.oracle.querymetrics import load_queries

from ...support import REPO, install_fake_oracledb

# The fake's type checker, loaded by path so that `oracledb` stays the real driver for the other tests.
_spec = importlib.util.spec_from_file_location("fake_oracledb_sqltypes", REPO / "tests/fakes/oracledb/sqltypes.py")
sqltypes = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sqltypes)

SYSTEMS = Path(__file__).resolve().parents[3] / "exporter" / "systems"

OLD_WINDOW = ("SELECT SUM(CASE WHEN ackn_flag <> 0 AND ackn_time >= SYSDATE - :window_seconds / 86400"
              " THEN 1 ELSE 0 END)"
              " FROM opc_op.opc_act_messages")


@pytest.mark.parametrize("sql", [
    OLD_WINDOW,
    "SELECT 1 FROM opc_op.opc_act_messages m WHERE m.receiving_time > SYSDATE",
    "SELECT 1 FROM opc_op.opc_hist_messages WHERE receiving_time BETWEEN SYSDATE - 1 AND SYSDATE",
    "SELECT 1 FROM opc_op.opc_act_messages WHERE local_receiving_time >= 1700000000",
    "SELECT 1 FROM v$log_history WHERE first_time >= 1700000000",
])
def test_number_compared_with_date_fails_like_oracle(sql):
    with pytest.raises(sqltypes.TypeMismatch, match="ORA-00932: inconsistent datatypes"):
        sqltypes.check(sql, {"window_seconds": 60})


@pytest.mark.parametrize("sql", [
    "SELECT 1 FROM opc_op.opc_act_messages WHERE local_receiving_time >= SYSDATE - :window_seconds / 86400",
    "SELECT 1 FROM opc_op.opc_act_messages WHERE receiving_time >= "
    "(CAST(SYS_EXTRACT_UTC(SYSTIMESTAMP) AS DATE) - DATE '1970-01-01') * 86400 - :window_seconds",
    "SELECT 1 FROM v$log_history h WHERE h.first_time >= SYSDATE - 1 / 24",
    "SELECT 1 FROM some_unknown_table WHERE whatever > SYSDATE",  # unknown types are never an error
])
def test_matching_types_pass(sql):
    sqltypes.check(sql, {"window_seconds": 60})


def shipped_statements():
    return [pytest.param(q.sql, q.params, id=f"{path.parent.name}:{q.name}")
            for path in sorted(SYSTEMS.glob("*/queries.yaml")) for q in load_queries(path)]


@pytest.mark.parametrize("sql,params", shipped_statements())
def test_every_shipped_statement_has_consistent_types(sql, params):
    sqltypes.check(sql, dict(params or {}))


def test_the_driver_raises_the_oracle_error(monkeypatch, tmp_path):
    fixture = tmp_path / "db.yaml"
    fixture.write_text("queries: [{match: opc_act_messages, columns: [N], rows: [[1]]}]\n")
    install_fake_oracledb(monkeypatch, fixture, tmp_path / "log")
    try:
        import oracledb

        cursor = oracledb.connect(user="u", password="p", dsn="db").cursor()
        with pytest.raises(oracledb.DatabaseError, match="ORA-00932"):
            cursor.execute(OLD_WINDOW, {"window_seconds": 60})
    finally:
        sys.modules.pop("oracledb", None)  # later tests use the real driver
