"""The alert log, per database: ORA-KGL library-cache heap warnings ("Heap size 2190K exceeds notification threshold
(2048K)") and the ORA- errors counted by code (issue 29; alertlog.py counts them), from one of two sources, each with
its own success and duration (one reader and one read position for both figures):

- ``alert_log_view``: the XML alert log through SQL (V$DIAG_ALERT_EXT, 11g and later), read incrementally: the
  last timestamp seen is remembered and every run reads only the newer rows, time filter first, at most
  ``max_rows`` under the query's own timeout;
- ``alert_log_file``: the text alert log on this host (10g, or no SQL access), read from a remembered offset, at
  most ``max_bytes`` a run, with rotation (a new inode) and truncation (a shorter file) detected.  Nothing tails the
  file in the background: each collection reads what was appended since the last one, bounded by its own deadline
  (a hung NFS mount costs this source, not the database's queries).

The first run also reads the history that exists: the heap warnings of the last ``history`` (default a day) by
the log's own timestamps, kept apart from the counters (``..._kgl_heap_warnings_history``), so that a one-shot
``advise`` judges ORA-KGL on a day of the log (issue 39) and a restart is still no burst for ``increase()``.
The view is asked from the database's clock back; of the file's tail (at most ``max_bytes``), the messages from
``history`` ago to now by their timestamp lines are read.  What that covered is exported: the window's start and
length, whether the history was cut short (``max_bytes``, ``max_rows``), and the file's newest entry, which tells
a log the instance still writes from a stale one.  ``history: 0`` reads no history.  The reasons are in README.md
("ORA-KGL", "Alert log").
"""

from __future__ import annotations

import os
import time
from calendar import timegm
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...core.metrics import MetricBatch
from ...machine.deadline import BoundedCall
from .alertlog import ErrorCounts, entries_since, last_entry, message_codes, row_codes
from .client import error_code, error_text
from .metrics import (
    ALERT_ERRORS,
    HEAP_WARNINGS,
    HISTORY_CAPPED,
    HISTORY_WARNINGS,
    LAST_ENTRY,
    LOGGED_THRESHOLD,
    MAX_HEAP,
    OBJECT,
    SOURCE_DURATION,
    SOURCE_SUCCESS,
    UNREAD,
    WINDOW,
    WINDOW_START,
)
from .parse import KGL_PHRASE, HeapWarning, alert_log_heap_warnings, heap_warnings
from .settings import HeapWarningSettings

if TYPE_CHECKING:
    from .client import OracleClient

MIB = 1024 * 1024
VIEW, FILE = "alert_log_view", "alert_log_file"


# Oracle Database Reference 12c Release 2 (12.2) and 19c, "V$DIAG_ALERT_EXT": ORIGINATING_TIMESTAMP is TIMESTAMP(9)
# WITH TIME ZONE, CON_ID NUMBER (0 in 12.1 and in non-CDBs), MESSAGE_TEXT the message.  The view shows the XML alert
# log of the ADR home; on a large ADR home it is slow, so the time predicate comes first and is written on the bare
# column (no function around it) so that it can limit what is read.  Timestamps travel as text in UTC with nine
# fractional digits: python-oracledb returns TIMESTAMP WITH TIME ZONE as a naive datetime (offset lost) and
# microseconds only, so a datetime could neither be compared exactly nor bound back without re-reading a row.
# No FETCH FIRST (12c+): ROWNUM over an ordered inline view works on 11g too.  The rows are the heap warnings and
# the messages with an ORA- code (issue 29); KGL says which matched the warning's phrase, so that an ORA- message
# is never taken for a warning whose text was cut short.
TS_FORMAT = 'YYYY-MM-DD"T"HH24:MI:SS.FF9'
START_SQL = (f"SELECT TO_CHAR(SYS_EXTRACT_UTC(SYSTIMESTAMP - NUMTODSINTERVAL(:history_seconds, 'SECOND')), "
             f"'{TS_FORMAT}') AS start_utc FROM dual")
VIEW_SQL = """SELECT logged_utc, con_id, message_text, kgl FROM (
  SELECT TO_CHAR(SYS_EXTRACT_UTC(originating_timestamp), '{fmt}') AS logged_utc, {con_id} AS con_id, message_text,
         CASE WHEN message_text LIKE '%exceeds notification threshold%' THEN 1 ELSE 0 END AS kgl
    FROM {view}
   WHERE originating_timestamp >= FROM_TZ(TO_TIMESTAMP(:since_utc, '{fmt}'), '+00:00')
     AND (message_text LIKE '%exceeds notification threshold%' OR message_text LIKE '%ORA-%')
   ORDER BY originating_timestamp
) WHERE ROWNUM <= :max_rows"""

def view_sql(settings: HeapWarningSettings) -> str:
    return VIEW_SQL.format(fmt=TS_FORMAT, con_id="con_id" if settings.con_id_column else "0", view=settings.view)


def _valid_mark(text: str) -> bool:
    """A timestamp as TO_CHAR(..., TS_FORMAT) prints it: 2018-11-12T10:20:24.515554000 (text order = time order)."""
    template = "dddd-dd-ddTdd:dd:dd.ddddddddd"
    return len(text) == len(template) and all(
        ("0" <= c <= "9") if t == "d" else c == t for c, t in zip(text, template, strict=True))


def _mark_epoch(mark: str) -> float:
    """A valid mark (UTC text) in seconds since the epoch."""
    seconds = timegm(time.strptime(mark[:19], "%Y-%m-%dT%H:%M:%S"))
    return seconds + int(mark[20:]) / 1e9


@dataclass
class _Totals:
    """What the source has counted so far (replaced whole after a successful read, so a reader never sees half)."""

    warnings: int = 0
    max_heap: int | None = None
    threshold: int | None = None
    errors: ErrorCounts = field(default_factory=ErrorCounts)
    max_object: str | None = None  # the object named with the largest heap (None: not named)

    def add(self, found: list[HeapWarning], codes: Counter[str], max_codes: int) -> "_Totals":
        max_heap, max_object = self.max_heap, self.max_object
        for warning in found:
            if warning.heap_bytes is not None and (max_heap is None or warning.heap_bytes > max_heap):
                max_heap, max_object = warning.heap_bytes, warning.object_name
        thresholds = [w.threshold_bytes for w in found if w.threshold_bytes is not None]
        return _Totals(self.warnings + len(found), max_heap, thresholds[-1] if thresholds else self.threshold,
                       self.errors.add(codes, max_codes), max_object)


@dataclass
class _FilePosition:
    device: int
    inode: int
    offset: int  # bytes consumed: up to the end of the last complete line read
    skipping: bool = False  # inside a line longer than max_bytes: drop bytes up to its end
    open_codes: frozenset[str] = frozenset()  # codes already counted in the message the last read ended in


@dataclass
class HeapWarningSource:
    """One database's heap-warning source; ``read`` runs in the database's worker, ``emit`` in the collection."""

    database: str
    settings: HeapWarningSettings
    default_timeout: float
    totals: _Totals | None = None  # None until the first successful run
    success: bool | None = None
    duration: float = 0.0
    error: str | None = None
    pending: bool = False
    unread: int | None = None
    _mark: str | None = None  # view: the newest timestamp seen (UTC text)
    _seen_at_mark: set[tuple[Any, ...]] = field(default_factory=set)
    _position: _FilePosition | None = None
    _first_read: float | None = None  # monotonic start of the first successful read: where the window opens
    _last_read: float | None = None  # monotonic start of the latest successful read: where it ends
    last_read_bytes: int = 0  # file: bytes read from the file by the latest run (at most max_bytes)
    # The stretch of the log the first run counted (issue 39), in the log's clock: where it starts (seconds since
    # the epoch) and how long it is; capped: cut short by max_bytes (file) or still behind by max_rows (view).
    _window_start: float | None = None
    _history_seconds: float = 0.0
    capped: bool = False
    last_entry: float | None = None  # file: the newest timestamp line read
    history_warnings: int = 0  # heap warnings in the history the first run read (not in the counter)

    def __post_init__(self) -> None:
        self.kind = self.settings.resolved
        self.name = FILE if self.kind == "alert_log" else VIEW
        self._file_call = BoundedCall(f"oracle-{self.database}-alert-log")

    @property
    def enabled(self) -> bool:
        return self.kind != "off"

    @property
    def timeout(self) -> float:
        return self.settings.timeout or self.default_timeout

    # ---- running ------------------------------------------------------------------------------------------
    def read(self, client: OracleClient) -> None:
        """Read what is new; never raises (the outcome is kept for emit)."""
        if not self.enabled:
            return
        self.pending = True
        started = time.monotonic()
        try:
            if self.kind == "alert_log":
                self._file_call(self._read_file, self.timeout)
            else:
                self._read_view(client)
            self.success, self.error = True, None
            if self._first_read is None:
                self._first_read = started
            self._last_read = started
        except Exception as exc:  # noqa: BLE001 - one source's failure must not affect the others
            self.success, self.error = False, self._describe(exc)
        self.duration = time.monotonic() - started
        self.pending = False

    def fail_due(self, error: str) -> None:
        """The database's run was abandoned before this source finished."""
        if self.enabled and (self.pending or self.success is None):
            self.success, self.error, self.duration, self.pending = False, error, 0.0, False

    def _describe(self, exc: Exception) -> str:
        text = error_text(exc)
        if error_code(exc) == "ORA-00942":
            return (f"{self.settings.view} is not readable ({text}): grant SELECT on it to the monitoring user, "
                    "or read the alert-log file (heap_warnings.alert_log) on 10g")
        if "timeout" in text.lower() or "DPY-4024" in text or type(exc).__name__ == "Overdue":
            return f"timed out after {self.timeout:g}s: {text}"
        return text

    # ---- the view (11g and later) -----------------------------------------------------------------------------
    def _read_view(self, client: OracleClient) -> None:
        with client.session() as conn:
            mark = self._mark
            if mark is None:
                rows = client.query(conn, START_SQL, {"history_seconds": int(self.settings.history)},
                                    self.timeout).rows
                mark = str(rows[0][0]) if rows and rows[0] else ""
                if not _valid_mark(mark):
                    raise ValueError(f"start time {mark[:40]!r} is not a timestamp")
            result = client.query(conn, view_sql(self.settings),
                                  {"since_utc": mark, "max_rows": self.settings.max_rows}, self.timeout)
        start = _mark_epoch(mark) if self._mark is None else None
        index = {name: i for i, name in enumerate(result.columns)}
        missing = {"logged_utc", "message_text"} - set(index)
        if missing:
            raise ValueError(f"columns {sorted(missing)} not in the result ({', '.join(result.columns)})")
        seen = set(self._seen_at_mark) if mark == self._mark else set()
        found: list[HeapWarning] = []
        codes: Counter[str] = Counter()
        for number, row in enumerate(result.rows, 1):
            logged = row[index["logged_utc"]]
            if not isinstance(logged, str) or not _valid_mark(logged):
                raise ValueError(f"row {number}: timestamp {str(logged)[:40]!r} is not a timestamp")
            if logged < mark:
                continue  # the time predicate already excludes these; a view that ignores it must not recount
            text = row[index["message_text"]]
            if text is not None and hasattr(text, "read"):
                text = text.read()  # a CLOB
            text = "" if text is None else str(text)
            con = row[index["con_id"]] if "con_id" in index else None
            key = (logged, str(con), text)
            if logged > mark:
                mark, seen = logged, set()
            elif key in seen:
                continue  # the same second as the last run's newest row, read again by ">="
            seen.add(key)
            codes.update(row_codes(text))
            # KGL: the view matched the phrase, so the row is at least one warning even when its text was cut short
            # (a result without the column, from an older statement or view: a row without an ORA- code did)
            kgl = row[index["kgl"]] if "kgl" in index else (not row_codes(text) or KGL_PHRASE in text)
            if kgl:
                found.extend(heap_warnings(text) or [HeapWarning(None, None)])
        self._mark, self._seen_at_mark = mark, seen
        self._count(found, codes, history=start is not None and self.settings.history > 0)
        if start is not None:  # the first run: the view's history from the database's clock back
            self._window_start, self._history_seconds = start, float(self.settings.history)
        # max_rows rows: the rest follows in the next runs, so the count covers the log up to the newest row only
        self.capped = len(result.rows) >= self.settings.max_rows

    # ---- the text file (10g, or no SQL access) ----------------------------------------------------------------
    def _read_file(self) -> None:
        path = self.settings.alert_log or ""
        history: tuple[list[HeapWarning], Counter[str], frozenset[str]] | None = None
        with open(path, "rb") as handle:
            stat = os.fstat(handle.fileno())
            position = self._position
            if position is None:  # first run: start at the end (a partial last line is skipped to its end)
                skipping = False
                if stat.st_size:
                    handle.seek(stat.st_size - 1)
                    skipping = handle.read(1) != b"\n"
                position = _FilePosition(stat.st_dev, stat.st_ino, stat.st_size, skipping)
                if self.settings.history > 0:  # ... after counting the history its tail holds
                    history = self._history(handle, stat.st_size, skipping)
            elif (position.device, position.inode) != (stat.st_dev, stat.st_ino) or stat.st_size < position.offset:
                position = _FilePosition(stat.st_dev, stat.st_ino, 0)  # rotated (a new file) or truncated
            else:
                position = _FilePosition(position.device, position.inode, position.offset, position.skipping,
                                         position.open_codes)
            handle.seek(position.offset)
            data = handle.read(self.settings.max_bytes)
        self.last_read_bytes = len(data) + (self.last_read_bytes if history is not None else 0)
        found: list[HeapWarning] = []
        codes: Counter[str] = Counter()
        if history is not None:
            position.open_codes = history[2]
        elif self._position is None:
            self._window_start, self._history_seconds = time.time(), 0.0
        if position.skipping:
            newline = data.find(b"\n")
            if newline == -1:
                position.offset += len(data)
                data = b""
            else:
                position.offset += newline + 1
                position.skipping = False
                data = data[newline + 1:]
        if data:
            last = data.rfind(b"\n")
            if last == -1:
                if len(data) >= self.settings.max_bytes:  # one line longer than a whole read: drop it
                    position.offset += len(data)
                    position.skipping = True
                # else: a line still being written; read again, whole, next time
            else:
                position.offset += last + 1
                # Latin-1 maps every byte to one character: the phrase and the codes are ASCII, whatever the database
                # character set.  Decoded from a view of the buffer: one copy of the chunk, not two.
                text = str(memoryview(data)[:last + 1], "latin-1")
                del data
                if KGL_PHRASE in text:
                    found += alert_log_heap_warnings(text.splitlines())
                more, position.open_codes = message_codes(text, position.open_codes)
                codes.update(more)
                self.last_entry = last_entry(text) or self.last_entry
        self._position = position
        self.unread = max(0, stat.st_size - position.offset)
        if history is not None:
            self._count(history[0], Counter(), history=True)
        self._count(found, codes, history=False)

    def _history(self, handle: Any, size: int, skipping: bool) -> tuple[list[HeapWarning], Counter[str],
                                                                         frozenset[str]]:
        """The first run's history: the messages of the file's tail (its last ``max_bytes``) logged in the last
        ``history`` by their timestamp lines.  Sets where the window starts: ``history`` ago, or later where the
        tail's (or the file's) first message is later; now when no line of the tail tells a time (nothing of the
        log can be placed, nothing is counted)."""
        now = time.time()
        since = now - self.settings.history
        begin = max(0, size - self.settings.max_bytes)
        handle.seek(begin)
        tail = handle.read(size - begin)
        self.last_read_bytes = len(tail)
        # a tail that starts inside a line starts at the next one; a partial last line is read neither now nor later
        start = (tail.find(b"\n") + 1 or len(tail)) if begin else 0
        end = tail.rfind(b"\n") + 1 if skipping else len(tail)
        text = str(memoryview(tail)[start:max(start, end)], "latin-1")  # one copy of the chunk, as the runs after
        del tail
        entries = entries_since(text, since)
        self.last_entry = entries.last
        if entries.first is None:
            self._window_start, self._history_seconds, self.capped = now, 0.0, False
            return [], Counter(), frozenset()
        self._window_start = max(since, entries.first)
        self._history_seconds = max(0.0, now - self._window_start)
        self.capped = begin > 0 and entries.first > since
        if entries.cut is None:
            return [], Counter(), frozenset()
        text = text[entries.cut:]  # the older part freed here: at most two copies at once
        found = alert_log_heap_warnings(text.splitlines()) if KGL_PHRASE in text else []
        codes, open_codes = message_codes(text)
        return found, codes, open_codes

    def _count(self, found: list[HeapWarning], codes: Counter[str], *, history: bool) -> None:
        """Add what a read found.  The history read at the start (issue 39) is kept apart: its warnings in
        ``history_warnings`` (a gauge), its ORA- codes not at all, so that the counters still start at 0 and an
        exporter restart is no burst of old warnings and errors for increase() (the 1d heap-warning and the 15m
        internal-error alerts); the largest heap, its object and the logged threshold take it in."""
        totals = self.totals or _Totals()
        if history:
            self.history_warnings = len(found)
            added = totals.add(found, Counter(), self.settings.max_error_codes)
            self.totals = _Totals(totals.warnings, added.max_heap, added.threshold, added.errors, added.max_object)
        else:
            self.totals = totals.add(found, codes, self.settings.max_error_codes)

    # ---- samples ------------------------------------------------------------------------------------------------
    def window_seconds(self) -> float:
        """The stretch of the alert log the counter covers: the history counted at the first run (the view's from
        the database's clock, the file's by its timestamp lines), plus the time between the first and the latest
        successful read; for a view still behind by max_rows, up to the newest row read."""
        if self.kind == "view" and self.capped and self._mark and self._window_start is not None:
            return max(0.0, _mark_epoch(self._mark) - self._window_start)
        history = self._history_seconds
        if self._first_read is None or self._last_read is None:
            return history
        return history + max(0.0, self._last_read - self._first_read)

    def emit(self, batch: MetricBatch) -> None:
        if not self.enabled or self.success is None:
            return
        SOURCE_SUCCESS.add(batch, 1 if self.success else 0, database=self.database, source=self.name)
        SOURCE_DURATION.add(batch, self.duration, database=self.database, source=self.name)
        totals = self.totals
        if not self.success or totals is None:
            return
        HEAP_WARNINGS.add(batch, totals.warnings, database=self.database)
        HISTORY_WARNINGS.add(batch, self.history_warnings, database=self.database)
        WINDOW.add(batch, self.window_seconds(), database=self.database)
        if self._window_start is not None:
            WINDOW_START.add(batch, self._window_start, database=self.database)
        HISTORY_CAPPED.add(batch, 1 if self.capped else 0, database=self.database)
        if self.last_entry is not None:
            LAST_ENTRY.add(batch, self.last_entry, database=self.database)
        if totals.max_heap is not None:
            MAX_HEAP.add(batch, totals.max_heap, database=self.database)
        if totals.max_object is not None:
            OBJECT.add_info(batch, {"object": totals.max_object}, database=self.database)
        if totals.threshold is not None:
            LOGGED_THRESHOLD.add(batch, totals.threshold, database=self.database)
        if self.kind == "alert_log" and self.unread is not None:
            UNREAD.add(batch, self.unread, database=self.database)
        for code, value in totals.errors.samples():
            ALERT_ERRORS.add(batch, value, database=self.database, code=code)
