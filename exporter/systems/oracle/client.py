"""The Oracle connection layer shared by the Oracle collector and HPOM's ``opc_op`` database source:
python-oracledb (thin mode by default) or cx_Oracle, a small pool of sessions opened in the calling thread (so a
caller's deadline bounds them; python-oracledb's own pool joins a background thread that a silent host would
hang), per-query timeouts, and back-off after failures, longer after a rejected login so that retries cannot lock
the monitoring account.  Passwords never reach a log, a metric or an error text.  Details: README.md.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import re
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Literal

from pydantic import Field, field_validator, model_validator

from ...core.secrets import PasswordSettings, SecretUnavailable, read_secret_file, remember, scrub
from ...core.settings import Duration
from ...machine.deadline import BoundedCall

log = logging.getLogger("middleware_exporter.oracle")

LOGIN_ERRORS = {"ORA-01017", "ORA-28000", "ORA-28001", "ORA-01045", "ORA-01005", "ORA-01004"}
ERROR_CODE_RE = re.compile(r"\b((?:ORA|DPY|DPI|TNS)-\d{4,5})\b")
# DPY-4024 call timeout, DPY-4011 connection closed, ORA-03113/03114/03135 connection lost, DPY-1001 not connected
BROKEN_SESSION_ERRORS = {"DPY-4024", "DPY-4011", "DPY-1001", "ORA-03113", "ORA-03114", "ORA-03135"}
OTHER_BACKOFF_START = 15.0
OTHER_BACKOFF_MAX = 300.0
MAX_ROWS = 10000
WALLET_SETTINGS = ("config_dir", "wallet_location", "wallet_password_file")


class OracleSettings(PasswordSettings):
    password_required = True

    dsn: str = Field(..., min_length=1,
                     description="Easy Connect string (host:1521/service) or TNS alias/descriptor; no credentials.")
    user: str = Field(..., min_length=1, description="A read-only monitoring account.")
    driver: Literal["auto", "oracledb", "cx_Oracle"] = Field(
        "auto", description="auto: python-oracledb, else cx_Oracle.")
    thick_mode: bool = Field(False, description="Use Oracle Client libraries (needed for 11.2 and older servers).")
    lib_dir: str | None = Field(None, description="Instant Client directory for thick mode.")
    pool_max: int = Field(2, ge=1, le=8, description="Idle sessions kept open for reuse.")
    connect_timeout: Duration = Field(10.0, description="Limit for opening a session (TCP connect and login), "
                                                        "seconds.")
    query_timeout: Duration = Field(5.0, description="Default per-query timeout, seconds.")
    login_backoff: Duration = Field(300.0, description="Wait after a rejected login before trying again; doubles.")
    max_backoff: Duration = Field(3600.0, description="Longest wait between login attempts.")
    # Thin mode takes these per connection, so databases behind different wallets share one process (README.md,
    # "Wallets"); thick mode has one Oracle Client configuration per process and cannot.
    config_dir: str | None = Field(None, description="Directory of this database's tnsnames.ora/sqlnet.ora (thin "
                                                     "mode only; per connection).")
    wallet_location: str | None = Field(None, description="Directory of this database's wallet (ewallet.pem) for "
                                                          "TLS/mTLS (thin mode only; per connection).")
    wallet_password_file: str | None = Field(None, description="File holding the password of an encrypted "
                                                               "ewallet.pem (read at each connect; thin mode only).")

    @model_validator(mode="after")
    def _wallets_need_thin_mode(self) -> "OracleSettings":
        given = [n for n in WALLET_SETTINGS if getattr(self, n)]
        if given and self.thick_mode:
            raise ValueError(f"{', '.join(given)}: per-connection wallet settings need thin mode; with thick_mode: "
                             "true the Oracle Client reads one configuration per process (TNS_ADMIN), so remove "
                             "them or thick_mode (README.md, Wallets)")
        return self

    def read_wallet_password(self) -> str | None:
        """The wallet password from wallet_password_file, remembered for scrubbing like the login password."""
        if not self.wallet_password_file:
            return None
        value = read_secret_file(self.wallet_password_file, "wallet_password_file")
        remember(value)
        return value

    @field_validator("dsn")
    @classmethod
    def _no_credentials_in_dsn(cls, value: str) -> str:
        # No connect string, descriptor or alias has an '@' of its own: one means user/password@ (whatever the
        # password holds, '(' included), which the driver would quote back in its errors.
        if "@" in value or re.search(r"(?i)password\s*=", value):
            raise ValueError("the dsn must not carry credentials (user/password@); use user and password_file or "
                             "password_env")
        return value


class DatabaseUnavailable(Exception):
    """No session could be had: the reason, and for how long no attempt will be made."""


def error_code(exc: BaseException) -> str:
    """``ORA-01017``, ``DPY-6005``, ... from a driver exception, or ""."""
    first = exc.args[0] if exc.args else None
    code = getattr(first, "full_code", None)
    if isinstance(code, str) and code:
        return code
    match = ERROR_CODE_RE.search(str(exc))
    return match.group(1) if match else ""


def error_text(exc: BaseException) -> str:
    """The first line of the driver's message (drivers put connection ids and help URLs after it), scrubbed of
    secrets before it is cut, so that no part of one survives."""
    text = scrub(str(exc)).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:300]


@dataclass
class QueryResult:
    columns: list[str]  # lower-case
    rows: list[tuple]


_THICK_LOCK = threading.Lock()
_thick_initialised = False


def load_driver(settings: OracleSettings) -> Any:
    """The DB-API module to use (imported lazily: nothing Oracle is loaded unless a database is configured)."""
    names = {"auto": ["oracledb", "cx_Oracle"], "oracledb": ["oracledb"], "cx_Oracle": ["cx_Oracle"]}[settings.driver]
    last: Exception | None = None
    for name in names:
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            last = exc
            continue
        if name == "oracledb" and settings.thick_mode:
            global _thick_initialised
            with _THICK_LOCK:
                if not _thick_initialised:
                    module.init_oracle_client(lib_dir=settings.lib_dir)
                    _thick_initialised = True
        return module
    raise DatabaseUnavailable(f"no Oracle driver: install python-oracledb ({last})")


class OracleClient:
    """One database: a lazily created pool, back-off state and query execution."""

    def __init__(self, name: str, settings: OracleSettings, driver: Any = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.name = name
        self.settings = settings
        self._driver = driver
        self._clock = clock
        self._idle: list[Any] = []
        self._lock = threading.Lock()
        self._connect_call = BoundedCall(f"{name}-connect")
        self.dropped = 0
        self.failures = 0
        self.retry_at = 0.0
        self.last_error: str | None = None
        self.up = False

    # ---- sessions ----------------------------------------------------------------------------------------
    def _module(self) -> Any:
        if self._driver is None:
            self._driver = load_driver(self.settings)
        return self._driver

    def _connect(self) -> Any:
        module = self._module()
        s = self.settings
        try:
            password = s.read_password()
        except SecretUnavailable as exc:
            raise DatabaseUnavailable(str(exc)) from None
        kwargs: dict[str, Any] = dict(user=s.user, password=password, dsn=s.dsn)
        thin = hasattr(module, "ConnectParams") and not s.thick_mode  # python-oracledb thin mode
        if thin:
            kwargs["tcp_connect_timeout"] = s.connect_timeout
            try:
                wallet_password = s.read_wallet_password()
            except SecretUnavailable as exc:
                raise DatabaseUnavailable(str(exc)) from None
            for key, value in (("config_dir", s.config_dir), ("wallet_location", s.wallet_location),
                               ("wallet_password", wallet_password)):
                if value:
                    kwargs[key] = value
        elif any(getattr(s, n) for n in WALLET_SETTINGS):
            raise DatabaseUnavailable(f"{', '.join(n for n in WALLET_SETTINGS if getattr(s, n))} need "
                                      "python-oracledb in thin mode; the driver loaded is not")
        return module.connect(**kwargs)

    def _drop_idle(self) -> None:
        idle, self._idle = self._idle, []
        for conn in idle:
            with contextlib.suppress(Exception):
                conn.close()

    def backoff_remaining(self) -> float:
        return max(0.0, self.retry_at - self._clock())

    def _fail(self, exc: BaseException) -> DatabaseUnavailable:
        code = error_code(exc)
        self.failures += 1
        self.up = False
        if code in LOGIN_ERRORS:
            wait = min(self.settings.login_backoff * 2 ** (self.failures - 1), self.settings.max_backoff)
            why = f"login rejected ({error_text(exc)}); next attempt in {wait:.0f}s so as not to lock the account"
        else:
            wait = min(OTHER_BACKOFF_START * 2 ** (self.failures - 1), OTHER_BACKOFF_MAX)
            why = f"cannot connect ({error_text(exc)}); next attempt in {wait:.0f}s"
        self.retry_at = self._clock() + wait
        self.last_error = why
        # debug only: the collector notes it as the database's source error, which the scheduler logs once per cause
        log.debug("database=%s msg=%r", self.name, why)
        return DatabaseUnavailable(why)

    @contextlib.contextmanager
    def session(self) -> Iterator[Any]:
        """A pooled session; raises DatabaseUnavailable while backing off or when none can be had."""
        with self._lock:
            remaining = self.backoff_remaining()
            if remaining > 0:
                raise DatabaseUnavailable(f"{self.last_error} ({remaining:.0f}s left)")
            try:
                # A host that accepts TCP and never answers the handshake would block connect() for good:
                # bound it (a late session is abandoned) and back off like any other connection failure.
                conn = self._idle.pop() if self._idle else self._connect_call(self._connect,
                                                                             self.settings.connect_timeout + 1)
            except DatabaseUnavailable as exc:
                self.failures += 1
                self.up = False
                self.last_error = str(exc)
                self.retry_at = self._clock() + OTHER_BACKOFF_START
                raise
            except Exception as exc:  # noqa: BLE001 - any driver error means no session
                raise self._fail(exc) from None
            if self.failures:
                log.debug("database=%s msg=%r", self.name, "connected again")
            self.failures = 0
            self.retry_at = 0.0
            self.last_error = None
            self.up = True
        broken = False
        try:
            yield conn
        except Exception as exc:
            # A timed-out or broken call leaves the session unusable; drop it rather than return it to the pool.
            broken = error_code(exc) in BROKEN_SESSION_ERRORS or "timeout" in str(exc).lower()
            raise
        finally:
            self._release(conn, broken)

    def _release(self, conn: Any, broken: bool) -> None:
        if broken:
            # Closing a broken session may itself wait on the network; let it go instead.
            self.dropped += 1
            return
        with self._lock:
            if len(self._idle) < self.settings.pool_max:
                self._idle.append(conn)
                return
        with contextlib.suppress(Exception):
            conn.close()

    # ---- queries -----------------------------------------------------------------------------------------
    def query(self, conn: Any, sql: str, params: dict[str, Any] | None = None,
              timeout: float | None = None) -> QueryResult:
        timeout_ms = int((timeout or self.settings.query_timeout) * 1000)
        if hasattr(conn, "call_timeout"):
            conn.call_timeout = timeout_ms
        elif hasattr(conn, "callTimeout"):
            conn.callTimeout = timeout_ms
        cursor = conn.cursor()
        try:
            cursor.execute(sql, params or {})
            columns = [d[0].lower() for d in (cursor.description or [])]
            rows: list[tuple] = []
            while True:
                chunk = cursor.fetchmany(500)
                if not chunk:
                    break
                rows.extend(chunk)
                if len(rows) > MAX_ROWS:
                    raise ValueError(f"query returned more than {MAX_ROWS} rows")
        finally:
            with contextlib.suppress(Exception):
                cursor.close()
        return QueryResult(columns, rows)

    def close(self) -> None:
        with self._lock:
            self._drop_idle()
