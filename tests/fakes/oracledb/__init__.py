"""A stand-in for python-oracledb at the DB-API boundary, for tests (no Oracle server can run here).

It implements the part of python-oracledb the exporter uses (connect(), Connection with
call_timeout and cursor(), Cursor.execute/description/fetchmany, errors carrying ``full_code``) and answers from a
YAML fixture named by $FAKE_ORACLEDB_FIXTURE, read on every call so that a test can change it between runs:

    login_error: "ORA-01017: invalid username/password; logon denied"   # optional: every acquire fails so
    connect_error: "DPY-6005: cannot connect to database"               # optional
    queries:
      - match: opc_act_cust_attrib          # case-insensitive substring of the SQL
        columns: [MAX_CMAS, OVER_LIMIT, CMA_LIMIT]
        rows: [[12, 3, ":cma_limit"]]        # ":name" is replaced by the bound value
      - match: opc_hist_messages
        error: "ORA-00942: table or view does not exist"
      - match: something_slow
        sleep: 30                            # honours call_timeout like the real driver (DPY-4024)
      - match: v$session
        error: "ORA-03113: end-of-file on communication channel"
        drop: true                           # the session is gone: every later call on it fails (DPY-1001)
      - match: v$system_event
        instance: 2                          # optional: answers only sessions on that instance (below)
        columns: [EVENT, TOTAL_WAITS, SECONDS_WAITED]
        rows: [["log file switch completion", 3, 1]]
    instance: 2                              # optional (default 1): the RAC instance a new session lands on
    version: "11.2.0.4.0"                    # optional (default 19.3.0.0.0): connection.version, as python-oracledb
                                             # gives it from the login (no round trip)
    con_id: 1                                # optional (default 0): SYS_CONTEXT('USERENV', 'CON_ID') (12.1+; 0
                                             # non-CDB, 1 CDB root, >1 a PDB); on a version before 12.1: ORA-02003
    databases:                               # optional: per-dsn sections with the keys above
      "dbhost:1521/orcl": {queries: [...]}

Like every Oracle database, the stand-in answers SYS_CONTEXT('USERENV', 'INSTANCE') (no grant needed) before any
fixture entry: with the instance number the session was opened on, which stays with the session as on a real
instance; a fixture that changes `instance` moves only the sessions opened after the change (a reconnect through a
SCAN address landing elsewhere).

A row value "@hostname" is replaced by this machine's host name.  Before any fixture is consulted, every statement
is type-checked against the column types in schema.yaml (sqltypes.py): comparing a NUMBER column with a DATE fails
with ORA-00932 as it does on a real database.

Every statement passed to Cursor.execute is appended to EXECUTED (whitespace collapsed), so that a test can show
that a statement was never sent (e.g. no V$ASM_* query on a database without ASM).

Each connect attempt is appended to $FAKE_ORACLEDB_LOG (one line: "acquire <user>"), so tests can count login
attempts.  Selected from a test by putting tests/fakes first on PYTHONPATH, or by patching sys.modules.
"""

from __future__ import annotations

import decimal
import os
import re
import socket
import time

import yaml

from . import sqltypes

__version__ = "0.0-fake"


class _Err:
    def __init__(self, text: str) -> None:
        self.message = text
        self.full_code = text.split(":", 1)[0].strip()
        prefix, _, number = self.full_code.partition("-")
        self.code = int(number) if prefix == "ORA" and number.isdigit() else 0

    def __str__(self) -> str:
        return self.message


class Error(Exception):
    def __init__(self, text: str) -> None:
        super().__init__(_Err(text))

    def __str__(self) -> str:
        return str(self.args[0])


class DatabaseError(Error):
    pass


class OperationalError(DatabaseError):
    pass


def _fixture(dsn: str | None = None) -> dict:
    path = os.environ.get("FAKE_ORACLEDB_FIXTURE")
    if not path:
        return {"queries": []}
    with open(path, encoding="utf-8") as handle:
        data = yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}  # C parser: fast
    if dsn is not None and dsn in data.get("databases", {}):
        return data["databases"][dsn]
    return data


def _log(line: str) -> None:
    path = os.environ.get("FAKE_ORACLEDB_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")


_INSTANCE_LOOKUP = "SYS_CONTEXT('USERENV', 'INSTANCE')"
_CON_ID_LOOKUP = "SYS_CONTEXT('USERENV', 'CON_ID')"


class Cursor:
    def __init__(self, conn: "Connection") -> None:
        self._conn = conn
        self.description = None
        self._rows: list[tuple] = []

    def execute(self, sql: str, params: dict | None = None) -> None:
        params = params or {}
        EXECUTED.append(" ".join(sql.split()))
        for bind in params:
            if f":{bind}" not in sql:
                raise DatabaseError(f"DPY-4008: no bind placeholder named \":{bind}\" was found in the SQL text")
        try:
            sqltypes.check(sql, params)  # Oracle refuses a NUMBER compared with a DATE before it reads any row
        except sqltypes.TypeMismatch as exc:
            raise DatabaseError(str(exc)) from None
        if _INSTANCE_LOOKUP in " ".join(sql.upper().split()):
            self.description = [("INST_ID", None, None, None, None, None, True)]
            self._rows = [(str(self._conn.instance),)]  # VARCHAR2, as SYS_CONTEXT returns it
            return
        if _CON_ID_LOOKUP in " ".join(sql.upper().split()):
            if tuple(int(p) for p in self._conn.version.split(".")[:2]) < (12, 1):
                raise DatabaseError("ORA-02003: invalid USERENV parameter")
            alias = re.search(r"SYS_CONTEXT\('USERENV', 'CON_ID'\)\s+AS\s+(\w+)", " ".join(sql.upper().split()))
            self.description = [(alias.group(1) if alias else "CON_ID", None, None, None, None, None, True)]
            self._rows = [(str(self._conn.con_id),)]
            return
        for entry in _fixture(self._conn.dsn).get("queries", []):
            if "instance" in entry and int(entry["instance"]) != self._conn.instance:
                continue  # the rows of another RAC instance's V$ view
            if entry["match"].lower() in sql.lower():
                break
        else:
            raise DatabaseError("ORA-00942: table or view does not exist")
        if "sleep" in entry:
            limit = self._conn.call_timeout / 1000 if self._conn.call_timeout else None
            if limit is not None and limit < entry["sleep"]:
                time.sleep(limit)
                self._conn.broken = True
                raise DatabaseError(f"DPY-4024: call timeout of {self._conn.call_timeout} ms exceeded")
            time.sleep(entry["sleep"])
        if "error" in entry:
            if entry.get("drop"):
                self._conn.broken = True
            raise DatabaseError(entry["error"])
        self.description = [(name, None, None, None, None, None, True) for name in entry["columns"]]
        rows = []
        for row in entry.get("rows", []):
            values = []
            for value in row:
                if isinstance(value, str) and value.startswith(":") and value[1:] in params:
                    value = params[value[1:]]
                elif value == "@hostname":
                    value = socket.gethostname()
                elif isinstance(value, str) and value.startswith("decimal:"):
                    value = decimal.Decimal(value[8:])
                values.append(value)
            rows.append(tuple(values))
        self._rows = rows

    def fetchmany(self, size: int = 100) -> list[tuple]:
        chunk, self._rows = self._rows[:size], self._rows[size:]
        return chunk

    def close(self) -> None:
        pass


class Connection:
    def __init__(self, dsn: str = "", instance: int = 1, version: str = "19.3.0.0.0", con_id: int = 0) -> None:
        self.dsn = dsn
        self.instance = instance
        self.version = version
        self.con_id = con_id
        self.call_timeout = 0
        self.broken = False

    def cursor(self) -> Cursor:
        if self.broken:
            raise DatabaseError("DPY-1001: not connected to database")
        return Cursor(self)

    def close(self) -> None:
        pass


# Every statement executed in this process (whitespace collapsed), for tests that a statement is never issued.
EXECUTED: list[str] = []

# The keyword arguments of every connect() call in this process (dsn plus thin-mode ones such as wallet_location),
# for tests at the driver boundary; the password is left out.
CONNECTS: list[dict] = []


def connect(user: str, password: str, dsn: str, **kwargs) -> Connection:
    _log(f"acquire {user} {dsn}")
    CONNECTS.append({"user": user, "dsn": dsn, **kwargs})
    if not password:
        raise DatabaseError("ORA-01005: null password given; logon denied")
    fixture = _fixture(dsn)
    if fixture.get("hang_connect"):
        time.sleep(float(fixture["hang_connect"]))
    if fixture.get("login_error"):
        raise DatabaseError(fixture["login_error"])
    if fixture.get("connect_error"):
        raise OperationalError(fixture["connect_error"])
    return Connection(dsn, int(fixture.get("instance", 1)), str(fixture.get("version", "19.3.0.0.0")),
                      int(fixture.get("con_id", 0)))


class ConnectParams:  # marks the module as python-oracledb (thin-mode keyword arguments accepted)
    pass


def init_oracle_client(lib_dir: str | None = None) -> None:
    raise DatabaseError("DPI-1047: Cannot locate a 64-bit Oracle Client library (fake driver)")
