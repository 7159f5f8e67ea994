"""Pure functions from what the IBM MQ back-ends read to the common model (:mod:`.model`): runmqsc and dspmq
text, and mqweb's JSON answers.  No I/O, so the tests feed them recorded text and fake answers.

Hand-written: no library parses runmqsc reports, and the only Python mqweb wrapper found (pymqrest, first
released 2026) needs Python 3.12 and covers runCommandJSON only (no API v1).  The format facts it relies on, with
their sources, are in ``docs/notes/ibmmq.md``.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left, bisect_right
from collections import deque
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from ...machine.textlines import iter_lines
from . import mqscmap
from .model import ChannelDefinition, ChannelState, QmgrHealth, QueueStatus
from .mqscmap import to_age, to_int  # noqa: F401 - part of this module's interface (rest.py, tests)
from .states import UNKNOWN, QmgrState, qmgr_state, role_from_native_ha

# ---- runmqsc and dspmq text ----------------------------------------------------------------------------------

# Message ids whose message starts an object's attributes (text is translated, ids are not).
_DISPLAY_IDS = frozenset({
    "AMQ8276",  # Display Connection details.
    "AMQ8408",  # Display Queue Manager details.
    "AMQ8409",  # Display Queue details.
    "AMQ8414",  # Display Channel details.
    "AMQ8417",  # Display Channel Status details.
    "AMQ8450",  # Display queue status details.
    "AMQ8630",  # Display listener information details.
    "AMQ8705",  # Display Queue Manager Status Details.
    "AMQ8878",  # Display channel authentication record details.
})

_AMQ_LINE = re.compile(r"^\s*(AMQ\d{4})([A-Z])?\s*:\s?(.*)$")
_DISPLAY_WORD = re.compile(r"\bdisplay\b", re.IGNORECASE)
_DETAILS_WORD = re.compile(r"\bdetails\b", re.IGNORECASE)
_BANNER = re.compile(r"^\s*(?:\d{4}-[A-Z0-9]{3}\b.*\(C\)|Starting (?:local )?MQSC for\b)", re.IGNORECASE)
_ECHO = re.compile(r"^\s*\d+\s*:(?:\s|$)")
_COMMAND = re.compile(r"^\s*(?:DIS|DISPLAY|END)\b", re.IGNORECASE)  # a command echoed (typed, or after an error)
_SUMMARY = re.compile(r"^\s*(?:One|No|All|\d+)\s+(?:valid\s+)?(?:MQSC\s+)?commands?\b", re.IGNORECASE)
_NAME = re.compile(r"[A-Z][A-Z0-9]{0,19}")
_VALUED_TOKEN = re.compile(r"(?:^|\s)[A-Z][A-Z0-9]{0,19}\(")
_PLAUSIBLE_AFTER_CLOSE = re.compile(r"\)(?=\s*$|\s+[A-Z][A-Z0-9]{0,19}(?:\(|\s|$))")
_DSPMQ_NAME = re.compile(r"\bQMNAME\(([^()]*)\)")
_DSPMQ_FIELD = re.compile(r"\b([A-Z][A-Z0-9]{0,19})\(([^()]*)\)")
_DSPMQ_INSTANCE = re.compile(r"^\s+INSTANCE\(([^()]*)\)\s+MODE\(([^()]*)\)")
_MAX_CONTINUATION_LINES = 8
_PARENS = re.compile(r"[()]")
_QUOTES = re.compile(r"'")
_BLANKS = re.compile(r" *")

# Line kinds.
_BLANK, _SKIP, _AMQ, _ATTRS = range(4)


def parse_mqsc(text: str) -> tuple[list[dict[str, str]], list[str]]:
    """Parse a runmqsc report into attribute blocks (one dict per displayed object) and AMQ message lines.

    Keys are upper-case attribute names, values are stripped strings (``""`` for blank values such as
    ``MSGAGE( )`` and for bare keywords such as ``CURRENT``; surrounding quotes removed).  The second list
    holds every AMQ message line that does not start an object (``AMQ8147E: ...``, ``AMQ8420I: ...``).
    Banner, command echo and summary lines are skipped.  If the text ends without a newline (output cut off),
    an attribute cut in half on the last line is dropped and everything parsed before it kept.  Never raises.
    """
    report = read_mqsc(text)
    return report.blocks, report.messages


@dataclass
class MqscObject:
    """One object header of a runmqsc report: its message id (``AMQ8417``, the severity letter dropped), its
    attributes (the same dict as in :attr:`MqscReport.blocks`; empty when nothing readable followed the header)
    and the first line after the header (cut to 120 characters), to name a block that cannot be read."""

    msg_id: str
    fields: dict[str, str]
    first_line: str = ""


@dataclass
class MqscReport:
    """A runmqsc report as :func:`parse_mqsc` reads it, and what an answer's reader needs to tell a readable
    answer from an unreadable one: the headers of the objects asked for (``objects``, in order, empty ones
    included) and the first lines that are neither messages, attributes, banner, echoed commands nor summary
    (``stray``: "MQSC command not recognised", garbage; at most :data:`STRAY_LINES`, each cut to 120 characters)."""

    blocks: list[dict[str, str]] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    objects: list[MqscObject] = field(default_factory=list)
    stray: list[str] = field(default_factory=list)


STRAY_LINES = 3
_SHOWN = 120  # characters of a line quoted in an error


def read_mqsc(text: str, track: Collection[str] = ()) -> MqscReport:
    """:func:`parse_mqsc` with the stray lines and the headers of the objects whose message id is in ``track``
    (``{"AMQ8417"}``: the channel status blocks) kept (see :class:`MqscReport`); only those, so that 10,000 queue
    blocks cost no header objects."""
    if not isinstance(text, str):
        text = str(text)
    lines = _Lines(text)
    report = MqscReport()
    blocks, errors = report.blocks, report.messages
    current: dict[str, str] | None = None
    header: MqscObject | None = None  # the object whose first line is still to be seen
    i = 0
    while not lines.at_end(i):
        lines.release(i)
        kind = lines.kind(i)
        if kind == _ATTRS and header is not None:
            header.first_line = lines.line(i).strip()[:_SHOWN]
            header = None
        if kind == _ATTRS and current is not None:
            i += _parse_attribute_line(lines, i, current)
            continue
        if kind == _ATTRS and len(report.stray) < STRAY_LINES and not _COMMAND.match(lines.line(i)):
            report.stray.append(lines.line(i).strip()[:_SHOWN])  # outside any object: not an answer MQ gives
        if kind in (_SKIP, _AMQ):
            if current:
                blocks.append(current)
            current = header = None
            if kind == _AMQ:
                match = _AMQ_LINE.match(lines.line(i))
                if match is not None and (match.group(1) in _DISPLAY_IDS or (
                        (match.group(2) or "I") == "I" and _is_header_text(match.group(3)))):
                    current = {}  # an object's attributes follow (errors are never headers, whatever their text)
                    if match.group(1) in track:
                        header = MqscObject(match.group(1), current)
                        report.objects.append(header)
                else:
                    errors.append(lines.line(i).strip())
        i += 1
    if current:
        blocks.append(current)
    return report


def _is_header_text(text: str) -> bool:
    """"display" and, after it, "details" (a translated header): the first "display" and one search after it,
    linear (the one regex ``display.*details`` backtracked to the end of the line from every "display").
    """
    display = _DISPLAY_WORD.search(text)
    return display is not None and _DETAILS_WORD.search(text, display.end()) is not None


def _classify(line: str) -> int:
    if not line.strip():
        return _BLANK
    if _AMQ_LINE.match(line):
        return _AMQ
    if _ECHO.match(line) or _BANNER.match(line) or (_SUMMARY.match(line) and "(" not in line):
        return _SKIP
    return _ATTRS


class _Lines:
    """The report's lines (line breaks removed) and their kinds, read lazily with a window of the few lines the
    parser can still look at: a flooding runmqsc leaves 4 MiB, and a list of all its lines kept memory growing
    run after run (docs/reliability.md)."""

    def __init__(self, text: str) -> None:
        self._source = iter_lines(text, keepends=True)
        self._window: deque[tuple[str, int]] = deque()
        self._base = 0  # index of the window's first line
        self._done = False
        self._last_unterminated = False  # the text ends without a line break (output cut off)

    def _fill(self, j: int) -> None:
        while not self._done and self._base + len(self._window) <= j:
            raw = next(self._source, None)
            if raw is None:
                self._done = True
                break
            line = raw.rstrip("\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
            self._last_unterminated = line == raw
            self._window.append((line, _classify(line)))

    def at_end(self, j: int) -> bool:
        self._fill(j)
        return j >= self._base + len(self._window)

    def cut_at(self, j: int) -> bool:
        """True when line ``j`` is one past the last line and that last line has no line break."""
        return self.at_end(j) and self._last_unterminated and j == self._base + len(self._window)

    def line(self, j: int) -> str:
        self._fill(j)
        return self._window[j - self._base][0]

    def kind(self, j: int) -> int:
        self._fill(j)
        return self._window[j - self._base][1]

    def release(self, j: int) -> None:
        """Forget the lines before ``j`` (the parser never goes back)."""
        while self._base < j and self._window:
            self._window.popleft()
            self._base += 1


def _parse_attribute_line(lines: _Lines, i: int, block: dict[str, str]) -> int:
    """Add the attributes of line ``i`` (and any continuation lines) to ``block``; return lines consumed."""
    s = lines.line(i)
    consumed = 1
    # A line of prose (not indented, no NAME(value) on it) must not contribute bare keywords.
    allow_bare = s[:1].isspace() or bool(_VALUED_TOKEN.search(s))
    closer: _Closer | None = None
    pos = 0
    while pos < len(s):
        while pos < len(s) and s[pos].isspace():
            pos += 1
        if pos >= len(s):
            break
        match = _NAME.match(s, pos)
        after = match.end() if match else pos
        if match is None or (after < len(s) and s[after] != "(" and not s[after].isspace()):
            pos = _next_space(s, pos)  # not an attribute: skip the word
            continue
        name = match.group()
        if after >= len(s) or s[after].isspace():  # bare keyword
            at_cut = after >= len(s) and lines.cut_at(i + consumed)
            if allow_bare and not at_cut:
                block.setdefault(name, "")
            pos = after
            continue
        start = after + 1
        while True:
            if closer is None or closer.s is not s:
                closer = _Closer(s)  # once per line (and per continuation line added to it)
            close = closer.find(start)
            if close < 0 and not lines.cut_at(i + consumed):
                close = _plausible_close(s, start)
            if close >= 0:
                break
            nxt = i + consumed
            if consumed > _MAX_CONTINUATION_LINES or lines.at_end(nxt) or lines.kind(nxt) != _ATTRS:
                return consumed  # half an attribute (cut off): drop it and the rest of the line
            s = s + lines.line(nxt).lstrip()  # a value continued on the next line
            consumed += 1
        block.setdefault(name, _clean_value(s[start:close]))
        pos = close + 1
    return consumed


def _next_space(s: str, pos: int) -> int:
    while pos < len(s) and not s[pos].isspace():
        pos += 1
    return pos


class _Closer:
    """Where each value of one line ends: the index of the parenthesis closing a value that starts at ``start``, or
    -1 when it is not on this line.

    Nested parentheses are counted; a closing parenthesis directly followed by something other than a blank or the
    end of the line is taken as part of the value (``DESCR(Smile :))``).  A value starting with a quote runs to
    the matching quote (``''`` is an escaped quote), so parentheses inside quotes do not count; a quoted value not
    followed by its ``)`` falls back to counting parentheses.

    Linear in the line for all its values together.  Scanning from each value's start to its close, as before,
    read an unbalanced line to its end once per value (``LPEER(ER( ) LPEER(ER( ) ...``: 6 s for 48 KB, quadratic).
    A well-formed line is still scanned value by value (each scan stops at its close, where the next value starts),
    but only while the scans together may read at most twice the line; past that, the answers for every
    parenthesis and quote are computed once, right to left, and each value looks its own up.
    """

    def __init__(self, s: str) -> None:
        self.s = s
        self._budget = 2 * len(s) + 64  # characters the scans may still read
        self.parens: list[int] = []
        self.quotes: list[int] = []
        self._close: list[int] | None = None
        self._quote_end: list[int] = []

    def find(self, start: int) -> int:
        if self._close is None:
            if 2 * (len(self.s) - start) <= self._budget:  # a scan reads at most that much
                close, read = _scan_close(self.s, start)
                self._budget -= read
                return close
            self._tables()
        return self._lookup(start)

    def _tables(self) -> None:
        s = self.s
        self.parens = parens = [m.start() for m in _PARENS.finditer(s)]
        self.quotes = quotes = [m.start() for m in _QUOTES.finditer(s)]
        match = [-1] * len(parens)  # the index (in parens) of the ")" closing each "("
        stack: list[int] = []
        for k, at in enumerate(parens):
            if s[at] == "(":
                stack.append(k)
            elif stack:
                match[stack.pop()] = k
        # close[k]: the answer of a count starting at parens[k] at depth 1 (close[len]: at the end of the line)
        close = [-1] * (len(parens) + 1)
        for k in range(len(parens) - 1, -1, -1):
            at = parens[k]
            if s[at] == "(":  # depth 2 until its own ")", back to depth 1 after it
                close[k] = close[match[k] + 1] if match[k] >= 0 else -1
            elif at + 1 >= len(s) or s[at + 1].isspace():
                close[k] = at  # a ")" at depth 1 before a blank or the end: the close
            else:
                close[k] = close[k + 1]  # part of the value (DESCR(Smile :)))
        # quote_end[k]: the index (in quotes) of the quote ending a quoted text that starts after quotes[k - 1]
        quote_end = [-1] * (len(quotes) + 2)
        for k in range(len(quotes) - 1, -1, -1):
            paired = k + 1 < len(quotes) and quotes[k + 1] == quotes[k] + 1
            quote_end[k] = quote_end[k + 2] if paired else k  # '' is an escaped quote
        self._close, self._quote_end = close, quote_end

    def _lookup(self, start: int) -> int:
        s = self.s
        assert self._close is not None
        j = _BLANKS.match(s, start).end()
        if j < len(s) and s[j] == "'":
            end = self._quote_end[bisect_right(self.quotes, j)]  # from the first quote after the opening one
            if end >= 0:
                after = _BLANKS.match(s, self.quotes[end] + 1).end()
                if after < len(s) and s[after] == ")" and (after + 1 >= len(s) or s[after + 1].isspace()):
                    return after
        return self._close[bisect_left(self.parens, start)]


def _scan_close(s: str, start: int) -> tuple[int, int]:
    """The close of one value read from its start (see :class:`_Closer`), and how many characters that read."""
    j = start
    while j < len(s) and s[j] == " ":
        j += 1
    read = 0
    if j < len(s) and s[j] == "'":
        j += 1
        while j < len(s):
            if s[j] == "'":
                if j + 1 < len(s) and s[j + 1] == "'":
                    j += 2
                    continue
                j += 1
                while j < len(s) and s[j] == " ":
                    j += 1
                if j < len(s) and s[j] == ")" and (j + 1 >= len(s) or s[j + 1].isspace()):
                    return j, j - start
                break  # not a well-formed quoted value: fall back to counting parentheses
            j += 1
        read = j - start
    depth = 1
    for j in range(start, len(s)):
        c = s[j]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                if j + 1 >= len(s) or s[j + 1].isspace():
                    return j, read + j - start
                depth = 1
    return -1, read + len(s) - start


def _plausible_close(s: str, start: int) -> int:
    """For a value with unbalanced parentheses: the first ``)`` followed by the end of the line or another
    attribute, or -1 (then the value is taken to continue on the next line)."""
    match = _PLAUSIBLE_AFTER_CLOSE.search(s, start)
    return match.start() if match else -1


def _clean_value(raw: str) -> str:
    value = raw.strip()
    if len(value) >= 2 and value[0] == "'" and value[-1] == "'":
        value = value[1:-1].replace("''", "'")
    return value


@dataclass
class DspmqRecord:
    """One queue manager of ``dspmq`` output: the fields of its ``QMNAME(...)`` line (``STATUS``, ``STANDBY``,
    ``HA``, 9.4's ``ROLE``/``GRPROLE``, ...; keys upper case, values stripped) and, with ``-x``, its instances
    as (host, mode) from the indented ``INSTANCE(host) MODE(Active|Standby)`` lines that follow it."""

    qmgr: str
    fields: dict[str, str] = field(default_factory=dict)
    instances: list[tuple[str, str]] = field(default_factory=list)

    @property
    def status(self) -> str | None:
        """The ``STATUS(...)`` text as printed, or None (``dspmq -o standby`` and ``-o nativeha`` print none)."""
        return self.fields.get("STATUS")

    @property
    def state(self) -> QmgrState:
        """The state of the shared table; UNKNOWN when the line has no STATUS."""
        return qmgr_state(self.status) if self.status is not None else UNKNOWN

    @property
    def role(self) -> str:
        """The HA role: the state's, or, for a line without STATUS, the Native HA ``ROLE(...)`` field's."""
        if self.status is None:
            return role_from_native_ha(self.fields.get("ROLE")) or "unknown"
        return self.state.role


def parse_dspmq_records(text: str) -> list[DspmqRecord]:
    """Every ``QMNAME(...)`` line of ``dspmq`` output (any ``-o``/``-x``/``-n`` form), in order; lines before the
    first one, AMQ messages and lines with a blank QMNAME are ignored.  Never raises."""
    if not isinstance(text, str):
        text = str(text)
    records: list[DspmqRecord] = []
    current: DspmqRecord | None = None
    for line in iter_lines(text):
        name = _DSPMQ_NAME.search(line)
        if name is not None:
            current = None
            if name.group(1).strip():
                fields = {key: value.strip() for key, value in _DSPMQ_FIELD.findall(line[name.end():])}
                current = DspmqRecord(name.group(1).strip(), fields)
                records.append(current)
            continue
        instance = _DSPMQ_INSTANCE.search(line)
        if current is not None and instance is not None and instance.group(1).strip():
            current.instances.append((instance.group(1).strip(), instance.group(2).strip()))
    return records


def parse_dspmq(text: str) -> dict[str, str]:
    """``dspmq`` output to ``{queue manager: state name}`` (see :mod:`.states`; UNKNOWN without a STATUS);
    lines without QMNAME are ignored, and of two lines for one queue manager the last counts."""
    return {record.qmgr: record.state.name for record in parse_dspmq_records(text)}


def normalise_qmgr_status(status: str) -> str:
    """A dspmq status string as the name of its state in :mod:`.states` (``Running elsewhere`` ->
    ``RUNNING ELSEWHERE``, ``ENDED PRE-EMPTIVELY`` -> ``ENDED PREEMPTIVELY``), UNKNOWN if not recognised."""
    return qmgr_state(status).name


def queues_from_mqsc(blocks: list[dict[str, str]]) -> list[QueueStatus]:
    """Queues merged by name: status from QSTATUS blocks (TYPE(QUEUE)), MAXDEPTH/USAGE/DESCR from QLOCAL blocks
    (the keyword mapping is :mod:`.mqscmap`'s, shared with the REST back-end)."""
    return mqscmap.queues(blocks)


def channels_from_mqsc(blocks: list[dict[str, str]]) -> list[ChannelState]:
    """One entry per channel instance (a SVRCONN has one per connection); blocks without STATUS are skipped."""
    return mqscmap.channels(blocks)


CHSTATUS_ID = "AMQ8417"  # Display Channel Status details.
CHSTATUS_NONE_ID = "AMQ8420"  # Channel Status not found.
_ANSWER_IDS = ("AMQ8147", CHSTATUS_NONE_ID)  # nothing matched a DISPLAY: answers, not failures


@dataclass
class ChannelStatusAnswer:
    """The channel instances of one DISPLAY CHSTATUS answer, and why the answer cannot be read (``error``, None
    when it can).  With an error, ``channels`` holds the instances that could be read: not all of them."""

    channels: list[ChannelState] = field(default_factory=list)
    error: str | None = None


def channel_status_from_mqsc(report: MqscReport) -> ChannelStatusAnswer:
    """The DISPLAY CHSTATUS answer in a runmqsc report read with ``track`` holding :data:`CHSTATUS_ID`.

    Readable as an MQ administrator reads it: ``AMQ8417I`` blocks, each naming its CHANNEL and STATUS (DISPLAY
    CHSTATUS always shows both), or ``AMQ8420I: Channel Status not found.`` (no channel has a status: an empty
    answer, the channels are legitimately absent).  Anything else is unreadable and must not pass for "no channel
    running": no answer at all (garbage, output cut off before it, ``AMQ8405E`` syntax error, ``AMQ8146E``, "MQSC
    command not recognised"), or a block without its CHANNEL or STATUS (cut off, garbled).  The error names what
    was seen, one line cut to 120 characters.
    """
    channels = mqscmap.channels(report.blocks)
    unreadable = [o for o in report.objects if o.msg_id == CHSTATUS_ID and not _readable_status(o.fields)]
    if unreadable:
        total = sum(1 for o in report.objects if o.msg_id == CHSTATUS_ID)
        first = unreadable[0]
        seen = f"starts {first.first_line!r}" if first.first_line else "nothing after its header"
        return ChannelStatusAnswer(channels, f"DISPLAY CHSTATUS: {len(unreadable)} of {total} channel status "
                                             f"blocks unreadable (no CHANNEL or STATUS); the first {seen}")
    answered = (channels or any(o.msg_id == CHSTATUS_ID for o in report.objects)
                or any(m.startswith(CHSTATUS_NONE_ID) for m in report.messages))
    if answered:
        return ChannelStatusAnswer(channels)
    seen = next((m for m in report.messages if not m.startswith(_ANSWER_IDS)), None)
    seen = seen if seen is not None else next(iter(report.stray), None)
    what = f"saw {seen[:_SHOWN]!r}" if seen else "nothing else in the output"
    return ChannelStatusAnswer(channels, f"DISPLAY CHSTATUS: no readable answer (no {CHSTATUS_ID}I channel status "
                                         f"block, no {CHSTATUS_NONE_ID}I Channel Status not found); {what}")


def _readable_status(fields: dict[str, str]) -> bool:
    return bool(mqscmap.text(fields.get("CHANNEL")) and mqscmap.text(fields.get("STATUS")))


def channel_definitions_from_mqsc(blocks: list[dict[str, str]]) -> list[ChannelDefinition]:
    """The DISPLAY CHANNEL blocks (channel blocks with no status attribute)."""
    return mqscmap.channel_definitions(blocks)


def health_from_mqsc(blocks: list[dict[str, str]]) -> QmgrHealth | None:
    """QmgrHealth from the DISPLAY QMSTATUS and DISPLAY QMGR blocks; None when there is neither."""
    return mqscmap.health(blocks)


# ---- mqweb JSON ----------------------------------------------------------------------------------------------

MQCC_FAILED = 2


class AnswerShapeError(ValueError):
    """An mqweb answer that is not shaped as IBM documents it; the message says which part."""


def map_qmgr_state(state: Any) -> str:
    """mqweb's queue manager ``state`` (``runningElsewhere``, ``endingImmediately``, ...) as the name of its state
    in :mod:`.states` (``RUNNING ELSEWHERE``, ``ENDING IMMEDIATELY``); UNKNOWN when not recognised."""
    return qmgr_state(state).name


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def qmgr_state_from_answer(data: Any, qmgr: str) -> str:
    """The state of ``qmgr`` in the answer to ``GET .../admin/qmgr/{qmgr}`` (a ``qmgr`` array of objects)."""
    entries = data.get("qmgr") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise AnswerShapeError("unexpected answer shape for the queue manager (no 'qmgr' array)")
    entry = next((e for e in entries if e.get("name") == qmgr), entries[0] if len(entries) == 1 else None)
    if entry is None:
        raise AnswerShapeError("queue manager not in mqweb's answer")
    state = entry.get("state")
    if state is None and isinstance(entry.get("status"), dict):
        state = entry["status"].get("state")
    return map_qmgr_state(state)


@dataclass
class MqscAnswer:
    """One runCommandJSON DISPLAY answer: the ``parameters`` of its usable items, its failed items, and why the
    whole command failed (``error``, None when it did not)."""

    usable: list[dict[str, Any]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    error: str | None = None
    # Items that did not fail but carry no ``parameters`` object (as :func:`_shown` quotes them): nothing to
    # report for most DISPLAYs, an unreadable answer for DISPLAY CHSTATUS (channel_status_from_mqsc_json).
    unreadable: list[str] = field(default_factory=list)
    benign: int = 0  # items that failed with a benign reason (nothing matched the DISPLAY)


def mqsc_answer(data: Any, what: str, benign: tuple[int, ...]) -> MqscAnswer:
    """Split a runCommandJSON answer into usable items and failures; items failing with a ``benign`` reason
    (nothing matched the DISPLAY) are neither."""
    if not isinstance(data, dict) or not isinstance(data.get("commandResponse"), list):
        raise AnswerShapeError(f"unexpected answer shape for {what} (no 'commandResponse' array)")
    items = data["commandResponse"]
    answer = MqscAnswer()
    benign_only = True
    for item in items:
        if not isinstance(item, dict):
            raise AnswerShapeError(f"unexpected answer shape for {what} (an item is not an object)")
        code = to_int(item.get("completionCode")) or 0
        params = item.get("parameters")
        if code < MQCC_FAILED:  # OK or warning; an item without parameters carries nothing to report
            if isinstance(params, dict):
                answer.usable.append(params)
            else:
                answer.unreadable.append(_shown(item))
            continue
        reason = to_int(item.get("reasonCode"))
        if reason in benign:
            answer.benign += 1
            continue
        benign_only = False
        messages = item.get("message")
        text = "; ".join(m.strip() for m in messages if isinstance(m, str)) if isinstance(messages, list) else ""
        answer.failures.append(f"{what}: completion code {code}, reason {reason}" + (f" ({text})" if text else ""))
    if not answer.usable and answer.failures:
        answer.error = f"{what} failed: {answer.failures[0]}"
    elif (not answer.usable and to_int(data.get("overallCompletionCode")) == MQCC_FAILED
          and not (items and benign_only)):
        reason = to_int(data.get("overallReasonCode"))
        answer.error = f"{what} failed: overall completion code 2, reason {reason}"
    return answer


def queues_from_mqsc_json(status: list[dict[str, Any]], definitions: list[dict[str, Any]]) -> list[QueueStatus]:
    """Queues by name from the parameters of DISPLAY QSTATUS and DISPLAY QLOCAL (keys upper-cased, then the
    shared keyword mapping of :mod:`.mqscmap`)."""
    queues = mqscmap.queues(mqscmap.upper_keys(p) for p in [*status, *definitions] if _text(p.get("queue")))
    return sorted(queues, key=lambda q: q.name)


def queues_from_v1(data: Any) -> list[QueueStatus]:
    """Queues from the REST API v1 answer to ``GET .../qmgr/{qmgr}/queue?status=...&attributes=...``."""
    entries = data.get("queue", []) if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise AnswerShapeError("unexpected answer shape for the queues (no 'queue' array)")
    queues: list[QueueStatus] = []
    for entry in entries:
        if not isinstance(entry, dict) or not _text(entry.get("name")):
            raise AnswerShapeError("unexpected answer shape for the queues (an entry without a name)")
        status = entry.get("status") if isinstance(entry.get("status"), dict) else {}
        storage = entry.get("storage") if isinstance(entry.get("storage"), dict) else {}
        queues.append(QueueStatus(
            name=_text(entry["name"]), depth=to_int(status.get("currentDepth")),
            max_depth=to_int(storage.get("maximumDepth")),
            oldest_message_age=to_age(status.get("oldestMessageAge")),
            open_input=to_int(status.get("openInputCount")), open_output=to_int(status.get("openOutputCount"))))
    return sorted(queues, key=lambda q: q.name)


def channels_from_mqsc_json(chstatus: list[dict[str, Any]]) -> list[ChannelState]:
    """Channel instances from the parameters of DISPLAY CHSTATUS, sorted by name and connection."""
    channels = [mqscmap.channel_state(mqscmap.upper_keys(params)) for params in chstatus]
    return sorted((c for c in channels if c is not None), key=lambda c: (c.name, c.connection))


def channel_status_from_mqsc_json(answer: MqscAnswer) -> ChannelStatusAnswer:
    """The DISPLAY CHSTATUS runCommandJSON answer: the channel instances, and an error when an item cannot be
    read (parameters that are not an object, or without ``channel`` or ``status``, which every CHSTATUS item
    carries), as :func:`channel_status_from_mqsc` reads the runmqsc text.  Items that failed are not unreadable
    (MQ said why: :func:`mqsc_answer`'s ``failures``)."""
    readable = [p for p in answer.usable if _text(p.get("channel")) and _text(p.get("status"))]
    unreadable = [*answer.unreadable, *(_shown(p) for p in answer.usable if not (
        _text(p.get("channel")) and _text(p.get("status"))))]
    channels = channels_from_mqsc_json(readable)
    if not unreadable and not (answer.usable or answer.benign or answer.failures):
        return ChannelStatusAnswer(channels, "DISPLAY CHSTATUS: no readable answer (no channel status item, no "
                                             "'Channel Status not found' item: an empty commandResponse)")
    if not unreadable:
        return ChannelStatusAnswer(channels)
    total = len(answer.usable) + len(answer.unreadable)
    return ChannelStatusAnswer(channels, f"DISPLAY CHSTATUS: {len(unreadable)} of {total} channel status items "
                                         f"unreadable (no channel or status); the first is {unreadable[0]}")


def _shown(value: Any) -> str:
    """An answer's item as an error quotes it: its JSON, cut to 120 characters."""
    try:
        text = json.dumps(value, default=repr)
    except (TypeError, ValueError, RecursionError):
        text = repr(type(value))
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "..."


def channel_definitions_from_mqsc_json(definitions: list[dict[str, Any]]) -> list[ChannelDefinition]:
    """Defined channels from the parameters of DISPLAY CHANNEL, sorted by name."""
    found = [mqscmap.channel_definition(mqscmap.upper_keys(params)) for params in definitions]
    return sorted((d for d in found if d is not None), key=lambda d: d.name)


def health_from_mqsc_json(*answers: list[dict[str, Any]]) -> QmgrHealth | None:
    """QmgrHealth from the parameters of DISPLAY QMSTATUS and DISPLAY QMGR; None when both are empty."""
    health: QmgrHealth | None = None
    for params in (p for answer in answers for p in answer):
        health = mqscmap.update_health(health if health is not None else QmgrHealth(), mqscmap.upper_keys(params))
    return health


def describe_mqwb_error(body: bytes) -> tuple[str, str]:
    """(msgId, "msgId: message (reason N)") of the first error of an mqweb error body ``{"error": [{...}]}``;
    empty strings when the body is not one."""
    try:
        data = json.loads(body.decode("utf-8", "replace"))
    except (ValueError, RecursionError):  # RecursionError: "[[[[..." nested deeper than the interpreter's stack
        return "", ""
    errors = data.get("error") if isinstance(data, dict) else None
    first = next((e for e in errors if isinstance(e, dict)), None) if isinstance(errors, list) else None
    if first is None:
        return "", ""
    msg_id = _text(first.get("msgId")) or _text(first.get("messageId"))  # documented as messageId, sent as msgId
    message = _text(first.get("message"))
    if msg_id and message.startswith(msg_id):
        message = message[len(msg_id):].lstrip(": ").strip()
    text = ": ".join(part for part in (msg_id, message) if part)
    reason = to_int(first.get("reasonCode"))
    if reason:
        text += f" (reason {reason})"
    return msg_id, text


def mqwb_error_reason(body: bytes) -> int | None:
    """The MQ ``reasonCode`` of the first error of an mqweb error body, or None (no such body, no reason)."""
    try:
        data = json.loads(body.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return None
    errors = data.get("error") if isinstance(data, dict) else None
    first = next((e for e in errors if isinstance(e, dict)), None) if isinstance(errors, list) else None
    return to_int(first.get("reasonCode")) if first is not None else None


# ---- amqsrua text (resource-statistics publications as IBM's sample prints them) ------------------------------

# The elements read, by (class, type), as amqsrua prints their descriptions (the metadata's own text).
AMQSRUA_ELEMENTS = {
    "Interval total MQPUT/MQPUT1 count": ("STATMQI", "PUT", "puts"),
    "Interval total destructive get- count": ("STATMQI", "GET", "gets"),
    "MQPUT/MQPUT1 count": ("STATQ", "PUT", "puts"),
    "MQGET count": ("STATQ", "GET", "gets"),
}
_AMQSRUA_HEADER = re.compile(r"^Publication received PutDate:(\S{0,8}) PutTime:(\S{0,8})(?: Interval:(.*))?$")
_AMQSRUA_INTERVAL = re.compile(
    r"^\s*(?:(\d{1,9}) days,)?(?:(\d{1,9}) hours,)?(?:(\d{1,9}) minutes,)?(\d{1,9})\.(\d{3}) seconds\s*$")
# A value as amqsruaa.c prints it by the element's datatype: ``%d`` (unit, delta: then `` N/sec`` or nothing),
# ``%.2f%%`` (percent), ``%.2f`` (hundredths), ``%dKB``/``%dMB``/``%dGB``, ``%d uSec`` (microseconds).  Before
# issue 39 only ``%d`` was read, so ``150.82%`` and ``280 uSec`` lines were dropped.
_AMQSRUA_VALUE = re.compile(r"^(?P<desc>.+?) (?P<value>-?\d{1,19}(?:\.\d{1,6})?)(?P<unit>%|KB|MB|GB| uSec)?"
                            r"(?: (?P<rate>-?\d{1,19})/sec)?\s*$")
_AMQSRUA_REASON = re.compile(r"\b(MQ[A-Z]+) ended with reason code (\d{1,5})\b")
AMQSRUA_OBJECT_WIDTH = 48  # amqsrua prints the object name as %-48.*s, directly followed by the description


@dataclass
class AmqsruaPublication:
    """One publication as amqsrua printed it: the interval (seconds, None if not printed) and, per wanted
    element, (class, type, object or None) -> {"puts"/"gets": count}."""

    put_date: str
    put_time: str
    interval: float | None
    counts: dict[tuple[str, str, str | None], dict[str, int]] = field(default_factory=dict)
    # DISK/Log elements (AMQSRUA_LOG_ELEMENTS) as printed description -> value in base units (issue 39)
    log: dict[str, float] = field(default_factory=dict)


@dataclass
class AmqsruaOutput:
    publications: list[AmqsruaPublication] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # "MQSUB ended with reason code 2035" and the like
    garbage: list[str] = field(default_factory=list)  # wanted elements whose value is not a count


def amqsrua_interval(text: str | None) -> float | None:
    match = _AMQSRUA_INTERVAL.match(text or "")
    if not match:
        return None
    days, hours, minutes, seconds, millis = (int(g) if g else 0 for g in match.groups())
    return ((days * 24 + hours) * 60 + minutes) * 60 + seconds + millis / 1000


def parse_amqsrua(text: str, objects: tuple[str, ...] | list[str] = ()) -> AmqsruaOutput:
    """The publications in amqsrua's output (``Publication received PutDate:... PutTime:... Interval:...``
    followed by one ``<description> <value> [<rate>/sec]`` line per element, the line prefixed with the object
    name padded to 48 characters for STATQ).  Only the four elements of AMQSRUA_ELEMENTS are kept; ``objects``
    are the queue names asked for with ``-o``.  Lines of other elements, debug output and "not recognised"
    parameters are skipped; ``... ended with reason code N`` lines are errors.  Never raises."""
    if not isinstance(text, str):
        text = str(text)
    out = AmqsruaOutput()
    wanted_objects = {o for o in objects if o}
    current: AmqsruaPublication | None = None
    for raw in iter_lines(text):
        line = raw.rstrip("\r\n")
        header = _AMQSRUA_HEADER.match(line)
        if header:
            current = AmqsruaPublication(header[1], header[2], amqsrua_interval(header[3]))
            out.publications.append(current)
            continue
        reason = _AMQSRUA_REASON.search(line)
        if reason:
            out.errors.append(f"{reason[1]} ended with reason code {reason[2]}")
            continue
        if current is None:
            continue
        obj: str | None = None
        body = line
        if len(line) > AMQSRUA_OBJECT_WIDTH and line[:AMQSRUA_OBJECT_WIDTH].rstrip() in wanted_objects:
            obj, body = line[:AMQSRUA_OBJECT_WIDTH].rstrip(), line[AMQSRUA_OBJECT_WIDTH:]
        match = _AMQSRUA_VALUE.match(body)
        if not match:
            continue
        if obj is None and match["desc"] in AMQSRUA_LOG_ELEMENTS:
            log_value = amqsrua_value(match["value"], match["unit"])
            if log_value is None:
                out.garbage.append(f"{match['desc']} = {match['value']}{match['unit'] or ''}")
            else:
                current.log[match["desc"]] = log_value
            continue
        element = AMQSRUA_ELEMENTS.get(match["desc"])
        if element is None or (element[0] == "STATQ") != (obj is not None):
            continue
        if match["unit"] or "." in match["value"]:  # a count is printed %d: anything else is not one
            out.garbage.append(f"{match['desc']} = {match['value']}{match['unit'] or ''}")
            continue
        value = int(match["value"])
        if value < 0:
            out.garbage.append(f"{match['desc']} = {value}")
            continue
        klass, kind, name = element
        bucket = current.counts.setdefault((klass, kind, obj), {})
        bucket[name] = bucket.get(name, 0) + value
    return out


# ---- amqsrua: the recovery log (DISK/Log; issue 39) ---------------------------------------------------------------

# The DISK/Log elements read, as amqsrua prints their descriptions (9.0 to 9.4.1 metadata; "Slowest write since
# restart" is spelled with a capital S in 9.4.1's metadata and in lower case in mq-golang's list).  Only lines
# without an object name: NHAREPLICA repeats some of these descriptions after the instance name.
AMQSRUA_LOG_ELEMENTS = frozenset({
    "Log - bytes in use", "Log - bytes max", "Log file system - bytes in use", "Log file system - bytes max",
    "Log - physical bytes written", "Log - logical bytes written", "Log - write latency",
    "Log - current primary space in use", "Log - workload primary space utilization",
    "Log - bytes required for media recovery", "Log - bytes occupied by reusable extents",
    "Log - bytes occupied by extents waiting to be archived", "Log - write size", "Log file system - free space",
    "Log - Slowest write since restart", "Log - slowest write since restart",
})
# Delta elements (MQIAMO_MONITOR_DELTA): bytes in the interval, summed into counters; the others are gauges.
AMQSRUA_LOG_DELTAS = frozenset({"Log - physical bytes written", "Log - logical bytes written"})
# Units to base units, as mqmetric's Normalise does by datatype: MB and GB to bytes, microseconds to seconds;
# percentages stay percent (amqsrua already divides the hundredths by 100).  KB (no log element uses it) as bytes.
_AMQSRUA_UNITS = {None: 1.0, "%": 1.0, "KB": 1024.0, "MB": 1048576.0, "GB": 1073741824.0}


def amqsrua_value(value: str, unit: str | None) -> float | None:
    """A printed element value in base units; negative (amqsrua prints what it got) -> None."""
    number = float(value) / 1e6 if unit == " uSec" else float(value) * _AMQSRUA_UNITS[unit]
    return number if number >= 0 else None
