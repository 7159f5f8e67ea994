"""Oracle's type check of comparisons, for the fake driver: a statement that compares a NUMBER column with a DATE
(``receiving_time >= SYSDATE - 1``, where ``receiving_time`` holds epoch seconds) fails with ORA-00932 the way
Oracle fails it, instead of being answered from a fixture that matched it by substring.

Column types come from ``schema.yaml`` beside this file (the HPOM tables as public tools that read them show
them, see tests/systems/hpom/fixtures/real/SOURCE.md; the V$ views as Oracle's reference documents them).  Types are
inferred bottom-up over sqlglot's tree; an expression whose type is not known is never an error.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import sqlglot
import yaml
from sqlglot import exp

NUMBER, DATE, CHAR = "NUMBER", "DATE", "CHAR"
SCHEMA_FILE = Path(__file__).with_name("schema.yaml")


def _kind(declared: str) -> str:
    """An Oracle datatype as declared (TIMESTAMP(9) WITH TIME ZONE, VARCHAR2(67), NUMBER) reduced to the class
    that decides comparisons: every datetime type is DATE, every character type CHAR."""
    name = declared.upper().strip()
    if name.startswith(("TIMESTAMP", "DATE")):
        return DATE
    if name.startswith(("VARCHAR", "NVARCHAR", "CHAR", "NCHAR", "CLOB", "NCLOB", "RAW")):
        return CHAR
    return NUMBER if name.startswith(("NUMBER", "INTEGER", "FLOAT", "BINARY_")) else name


@lru_cache(maxsize=1)
def schema() -> dict[str, dict[str, str]]:
    """table (lower case, without schema) -> column -> NUMBER, DATE or CHAR."""
    data = yaml.safe_load(SCHEMA_FILE.read_text())
    return {table.lower(): {col.lower(): _kind(kind) for col, kind in cols.items()} for table, cols in data.items()}


class TypeMismatch(Exception):
    def __init__(self, expected: str, got: str) -> None:
        super().__init__(f"ORA-00932: inconsistent datatypes: expected {expected} got {got}")


def _tables(tree: exp.Expression) -> dict[str, str]:
    """alias or name -> table name, for every table the statement reads."""
    result = {}
    for table in tree.find_all(exp.Table):
        name = table.name.lower()
        result[name] = name
        if table.alias:
            result[table.alias.lower()] = name
    return result


def _column_type(column: exp.Column, tables: dict[str, str]) -> str | None:
    known = schema()
    name = column.name.lower()
    if column.table:
        return known.get(tables.get(column.table.lower(), ""), {}).get(name)
    kinds = {known[t][name] for t in set(tables.values()) if t in known and name in known[t]}
    return kinds.pop() if len(kinds) == 1 else None


def _bind_type(value: Any) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return NUMBER
    if isinstance(value, str):
        return CHAR
    return None


def infer(node: exp.Expression, tables: dict[str, str], params: dict[str, Any]) -> str | None:
    if isinstance(node, exp.Paren):
        return infer(node.this, tables, params)
    if isinstance(node, exp.Column):
        return _column_type(node, tables)
    if isinstance(node, exp.Literal):
        return CHAR if node.is_string else NUMBER
    if isinstance(node, exp.Placeholder):
        return _bind_type(params.get(str(node.this)))
    if isinstance(node, (exp.CurrentTimestamp, exp.CurrentDate, exp.Systimestamp, exp.StrToDate,
                         exp.DateStrToDate, exp.TsOrDsToDate)):
        return DATE
    if isinstance(node, exp.Cast):
        target = node.to.this
        if target in (exp.DataType.Type.DATE, exp.DataType.Type.TIMESTAMP, exp.DataType.Type.DATETIME):
            return DATE
        if node.to.is_type(*exp.DataType.NUMERIC_TYPES):
            return NUMBER
        return None
    if isinstance(node, (exp.Add, exp.Sub)):
        left, right = infer(node.this, tables, params), infer(node.expression, tables, params)
        if left == DATE and right == DATE:
            return NUMBER if isinstance(node, exp.Sub) else _mismatch(DATE, DATE)
        if DATE in (left, right) and NUMBER in (left, right):
            if isinstance(node, exp.Sub) and right == DATE:
                raise TypeMismatch(DATE, NUMBER)  # NUMBER - DATE
            return DATE
        if left == NUMBER and right == NUMBER:
            return NUMBER
        return None
    if isinstance(node, (exp.Mul, exp.Div)):
        left, right = infer(node.this, tables, params), infer(node.expression, tables, params)
        if DATE in (left, right):
            raise TypeMismatch(NUMBER, DATE)
        return NUMBER if left == right == NUMBER else None
    if isinstance(node, exp.Anonymous) and node.name.upper() in ("SYS_EXTRACT_UTC", "FROM_TZ"):
        return DATE
    if isinstance(node, exp.StrToTime):  # TO_TIMESTAMP(text, format)
        return DATE
    return None


def _mismatch(expected: str, got: str) -> None:
    raise TypeMismatch(expected, got)


_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)


def _compatible(left: str | None, right: str | None) -> None:
    if left is None or right is None or left == right:
        return
    if {left, right} == {NUMBER, DATE}:
        raise TypeMismatch(left, right)


def check(sql: str, params: dict[str, Any] | None = None) -> None:
    """Raise TypeMismatch (carrying Oracle's ORA-00932 text) for a comparison of a NUMBER with a DATE."""
    params = params or {}
    try:
        tree = sqlglot.parse_one(sql, read="oracle")
    except sqlglot.errors.ParseError:
        return  # not the fake's business: the SQL tests parse every shipped statement
    tables = _tables(tree)
    for node in tree.walk():
        if isinstance(node, _COMPARISONS):
            _compatible(infer(node.this, tables, params), infer(node.expression, tables, params))
        elif isinstance(node, exp.Between):
            kind = infer(node.this, tables, params)
            _compatible(kind, infer(node.args["low"], tables, params))
            _compatible(kind, infer(node.args["high"], tables, params))
        elif isinstance(node, (exp.Add, exp.Sub, exp.Mul, exp.Div)) and node.parent is not None:
            infer(node, tables, params)  # arithmetic on the wrong types fails even outside a comparison
