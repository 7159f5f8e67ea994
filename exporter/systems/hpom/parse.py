"""Parsers for the text output of HPOM 8.x server commands (``opcsv -status``, ``ovc -status``, ``ovconfget``)
and of a site's queue-counting command: pure functions from text to plain data, tested on recorded text.

Hand-written: no library reads these formats.  Every parser is defensive: headers, separators, diagnostics,
garbage lines (control characters, U+FFFD) and anything unrecognised are skipped.  Where the format facts come
from: docs/notes/hpom.md.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from ...machine.numbers import integer
from ...machine.textlines import iter_lines

__all__ = [
    "DEFAULT_COUNT_PATTERN",
    "PROCESS_DOWN",
    "PROCESS_RUNNING",
    "PROCESS_STOPPED_AS_EXPECTED",
    "PROCESS_TRANSITIONAL",
    "ProcessStatus",
    "compile_count_pattern",
    "display_queues",
    "error_lines",
    "ovconfget_problems",
    "parse_count",
    "parse_opcsv_status",
    "parse_ovc_status",
    "parse_ovconfget",
    "process_states",
    "processes_up",
]

# The values of middleware_hpom_server_process_up (process_states).  Running and down keep the meaning they have
# always had; a component in transition and one that is stopped on purpose are neither.
PROCESS_DOWN = 0  # stopped, aborted, not running, or a state word not known to be healthy
PROCESS_RUNNING = 1
PROCESS_TRANSITIONAL = 2  # Starting, Stopping, Restarting, Aborting, Initializing
PROCESS_STOPPED_AS_EXPECTED = 3  # not running, and listed as a component that is stopped on purpose
# Those values in words, as the dashboards show them (dashboards/build.py reads this table).
PROCESS_STATE_WORDS = {PROCESS_DOWN: "down", PROCESS_RUNNING: "running", PROCESS_TRANSITIONAL: "starting / stopping",
                       PROCESS_STOPPED_AS_EXPECTED: "stopped on purpose"}


@dataclass(frozen=True)
class ProcessStatus:
    """One process line of ``opcsv -status`` or ``ovc -status``."""

    name: str  # process name, e.g. "opcmsgm", "ovcd"
    description: str  # e.g. "Message Manager", "OV Control" ("" if none)
    category: str  # ovc category such as "CORE", "SERVER", "AGENT,EA"; "" for opcsv and when ovc shows none
    pid: int | None  # None when not shown
    state: str  # the state text as printed, whitespace-normalised: "is running", "Running", "Stopped", ...
    running: bool  # opcsv: state == "is running"; ovc: state == "Running" (both case-insensitive)

    @property
    def condition(self) -> str:
        """"running", "transitional" (a state on the way up or down: Starting, Stopping, Aborting, ...) or "down"
        (stopped, aborted, not running, negated or unknown states)."""
        if self.running:
            return "running"
        words = self.state.lower().split()
        if len(words) <= 2 and words[-1:] and words[-1] in _TRANSITIONAL_WORDS and not _NEGATION & set(words):
            return "transitional"
        return "down"


# A process name: starts with a lower-case ASCII letter, then ASCII letters, digits or underscores.  Upper case is
# allowed after the first letter because real output has "ovtomcatB"; a capitalised word ("Manager", "OV") is
# never taken for a name, which is what keeps descriptions and headers from turning into processes.
_NAME = r"[a-z][A-Za-z0-9_]*"
# Real OMU 9 output also registers components whose name starts upper case ("HPSIMIntAck", the HP SIM event
# clearing integration).  Such a name is accepted only when it is mixed case with a second capital ("HPSIMIntAck";
# not a capitalised word such as "Manager" or "Ovcd", not an acronym such as "HPOM" or "OV"), and only with a pid
# or standing in a column of its own (column gaps of a tab or two blanks around it).
_ANY_NAME = r"[A-Za-z][A-Za-z0-9_]*"


def _mixed_case(name: str) -> bool:
    """A name starting upper case that has a lower-case letter and a second capital ("HPSIMIntAck")."""
    return any(c.islower() for c in name) and any(c.isupper() for c in name[1:])


def _is_gap(text: str) -> bool:
    return "\t" in text or "  " in text


def _ovc_columns(line: str, match: re.Match[str]) -> bool:
    """Whether an ovc line has its name and its pid/state in columns of their own (column gaps around them)."""
    middle = match.group("middle") or ""
    after_name = middle[:len(middle) - len(middle.lstrip())]  # the blanks between the name and the description
    start = match.end("middle") if middle else match.end("name")
    end = line.rindex("(", 0, match.start("pid")) if match.group("pid") else match.start("state")
    return (not middle or _is_gap(after_name)) and _is_gap(line[start:end])


def _gap_before(line: str, index: int) -> bool:
    """Whether the text before ``index`` ends in a column gap (a tab or two blanks), or ``index`` starts the line."""
    before = line[:index]
    return not before.strip() or before.endswith("\t") or before.endswith("  ")


# The state words a status line may end with.  Anything else at the end of a line means "not a process line".
_STATE_WORDS = (
    "running",
    "stopped",
    "aborted",
    "starting",
    "stopping",
    "restarting",
    "started",
    "unknown",
    "failed",
    "killed",
    "crashed",
    "terminated",
    "dead",
    "hung",
    "disabled",
    "waiting",
    "initializing",
    "initialising",
    "aborting",
)
# States on the way up or down: neither running nor down (ovc shows "Starting" for a component whose start has
# not finished, e.g. ovbbccb in a published Operations Agent 12 capture).
_TRANSITIONAL_WORDS = frozenset({"starting", "stopping", "restarting", "aborting", "initializing", "initialising"})
_NEGATION = frozenset({"not", "isn't"})
_STATE_WORD = r"(?:" + "|".join(_STATE_WORDS) + r")"

# opcsv: "<head> <name> [(<pid>)] <state phrase>", the phrase being "is running", "is not running", "isn't
# running", "not running", "is stopped", ..., or one bare lower-case word ("aborted").  A bare capitalised word
# ("Running") is the ovc/opcagt column format and is left to parse_ovc_status.
_OPCSV_LINE = re.compile(
    r"^(?:(?P<head>.*?)\s+)??"
    r"(?P<name>" + _ANY_NAME + r")\s+"
    r"(?:\(\s*(?P<pid>[0-9]+)\s*\)\s*)?"
    r"(?P<state>(?:(?P<qualifier>(?i:is\s+not|isn't|is|not))\s+)?(?P<word>(?i:" + _STATE_WORD + r")))"
    r"\s*[;.]?$",
    re.ASCII,
)

# ovc: "<name> [<description>] [<category>] [(<pid>)] <State>", the state one word, optionally negated
# ("Not Running", "Isn't Running").  "is running" is opcsv phrasing and is rejected below.
_OVC_LINE = re.compile(
    r"^(?P<name>" + _ANY_NAME + r")"
    r"(?P<middle>\s+.*?)??"
    r"\s+(?:\(\s*(?P<pid>[0-9]+)\s*\)\s+)?"
    r"(?P<state>(?:(?i:not|isn't)\s+)?(?i:" + _STATE_WORD + r"))"
    r"\s*[;.]?$",
    re.ASCII,
)

# An ovc category: comma-separated upper-case words ("CORE", "COREXT", "AGENT,EA", "SERVER,OVO").
_CATEGORY = re.compile(r"[A-Z][A-Z0-9_]*(?:,[A-Z][A-Z0-9_]*)*", re.ASCII)
_KNOWN_CATEGORY_WORDS = frozenset({"CORE", "COREXT", "SERVER", "AGENT", "OVO", "HPOM", "EA", "OA", "PA"})

# Lines that are diagnostics, not status: "ERROR: ...", "WARNING ...", "AMQ8146: ...", "... (OpC30-913)".
_DIAGNOSTIC = re.compile(
    r"^\s*(?:(?:ERROR|ERR|WARNING|WARN|INFO|FATAL|NOTE|USAGE)\b|(?i:error|warning|usage)\s*:"
    r"|AMQ[0-9]{4}|[A-Za-z]+[0-9]+-[0-9]+\b)"
    r"|\((?:OpC|XPL|BBC|CTRL|CONF|SEC)[A-Za-z.]*[0-9]+-[0-9]+\)",
    re.ASCII,
)

# A line holding a control character (other than tab) or U+FFFD is garbage, not output.
_GARBAGE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\ufffd]")

# Separator lines: only dashes, equals signs, underscores, asterisks and blanks.
_SEPARATOR = re.compile(r"^[\s\-=_*+|]*$")

# Leading product column that opcsv prints before the description on some versions ("HPOM  Action Manager").
_PRODUCT_COLUMN = "HPOM"

_COLUMN_GAP = re.compile(r"\t|\s{2,}")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*", re.ASCII)


def _normalise(text: str) -> str:
    """Collapse runs of whitespace (tabs included) to one space and strip the ends."""
    return " ".join(text.split())


# Status lines are short (the widest published ones are under 120 characters).  Longer lines are not status lines,
# and the line expressions backtrack over runs of blanks, so both are bounded before any expression runs: lines
# over MAX_LINE characters are skipped, runs of more than MAX_BLANKS blanks are cut to MAX_BLANKS (still a
# column gap); lines that do not end with a state word are skipped first, and at most MAX_LINES are read.
# That keeps every line's parse in bounded time whatever the command prints.
MAX_LINE = 256
MAX_BLANKS = 8
MAX_LINES = 500  # status outputs list a few dozen processes
_LONG_BLANKS = re.compile(r"[ \t]{%d,}" % (MAX_BLANKS + 1))


def _pid(text: str | None) -> int | None:
    """A process id as printed (at most 10 digits: pids are 32-bit); anything longer is not a pid."""
    return int(text) if text is not None and len(text) <= 10 else None


def _candidate_lines(text: str) -> list[str]:
    """The lines of ``text`` that may be status lines: not blank, not separators, not garbage or diagnostics,
    not longer than MAX_LINE; runs of blanks cut to MAX_BLANKS."""
    lines = []
    for raw in iter_lines(text):
        if len(raw) > MAX_LINE * 4:
            continue
        line = _LONG_BLANKS.sub(" " * MAX_BLANKS, raw.strip())
        if not line or len(line) > MAX_LINE:
            continue
        if _GARBAGE.search(line) or _SEPARATOR.match(line) or _DIAGNOSTIC.search(line):
            continue
        last = line.rstrip(";. \t").rsplit(None, 1)
        if not last or last[-1].lower() not in _STATE_WORDS:
            continue  # every status line ends with a state word: checked before the backtracking expressions
        lines.append(line)
        if len(lines) >= MAX_LINES:
            break
    return lines


def parse_opcsv_status(text: str) -> list[ProcessStatus]:
    """Parse ``opcsv -status`` output into one ProcessStatus per process line, in output order.

    Handled line shapes (columns separated by any whitespace, tabs included)::

        [HPOM]  <description>  <name>  [(<pid>)]  is running | is not running | isn't running | is stopped | aborted

    e.g. ``HPOM  Message Manager  opcmsgm  (2643) is running``, ``Control Manager  opcctlm  (3722)  is running``,
    ``OV Control  ovcd  (1926) is running``, ``opcmsgm  is not running``, and on OMU 9 the HP SIM integration
    ``HP SIM SPI event clearing  HPSIMIntAck  (3080) is running;``: a name starts lower case, or is mixed case
    with a second capital ("HPSIMIntAck") and has a pid or a column of its own; a capitalised word ("Manager",
    "Ovcd") or an acronym ("HPOM") is never a name.  The product column "HPOM" is dropped
    from the description; a trailing ";" or "." after the state is ignored.  Section headers ("... status:"),
    dash separators, blank lines, diagnostics and the ovc-style agent lines that ``opcsv -status`` may append
    ("opcle  OVO Logfile Encapsulator  AGENT,EA  (4110)  Running": use ``parse_ovc_status`` for those) are
    skipped.  ``category`` is always "".  ``running`` is True only for the state "is running"
    (case-insensitive); anything else, including an unusual phrase, is not running.  A process listed twice
    yields two entries.
    """
    processes: list[ProcessStatus] = []
    for line in _candidate_lines(text):
        match = _OPCSV_LINE.match(line)
        if match is None:
            continue
        name = match.group("name")
        if name in ("is", "not"):
            continue  # never take a word of the state phrase for the name
        if name[0].isupper() and not (_mixed_case(name)
                                      and (match.group("pid") or _gap_before(line, match.start("name")))):
            continue  # "OV Control  Ovcd  ...", "Service Engine is not running": a description word, not a name
        word = match.group("word")
        if match.group("qualifier") is None and word != word.lower():
            continue  # "... (4110)  Running": the ovc/opcagt column format, not opcsv's
        head = (match.group("head") or "").split()
        if len(head) > 1 and head[0] == _PRODUCT_COLUMN:
            head = head[1:]
        state = _normalise(match.group("state"))
        pid = match.group("pid")
        processes.append(
            ProcessStatus(
                name=match.group("name"),
                description=" ".join(head),
                category="",
                pid=_pid(pid),
                state=state,
                running=state.lower() == "is running",
            )
        )
    return processes


def _split_ovc_middle(middle: str, columns: bool) -> tuple[str, str]:
    """Split the text between name and pid/state of an ovc line into (description, category).

    ``columns`` tells whether the line is laid out in columns (has a tab or a run of two or more blanks), in
    which case the category, when present, is a separate column; otherwise the category is recognised as an
    upper-case, comma-separated last word.
    """
    middle = middle.strip()
    if not middle:
        return "", ""
    fields = [field for field in _COLUMN_GAP.split(middle) if field]
    if len(fields) >= 2:
        if _CATEGORY.fullmatch(fields[-1]):
            return _normalise(" ".join(fields[:-1])), fields[-1]
        return _normalise(middle), ""
    words = middle.split()
    if len(words) == 1:
        word = words[0]
        if _CATEGORY.fullmatch(word) and ("," in word or word in _KNOWN_CATEGORY_WORDS):
            return "", word
        return word, ""
    if not columns and _CATEGORY.fullmatch(words[-1]):
        return " ".join(words[:-1]), words[-1]
    return _normalise(middle), ""


def parse_ovc_status(text: str) -> list[ProcessStatus]:
    """Parse ``ovc -status`` (or ``opcagt -status``) output into one ProcessStatus per component line.

    Handled line shape, usually in fixed-width columns::

        <name>  <description>  [<CATEGORY>]  [(<pid>)]  <State>

    e.g. ``ovcd  OV Control  CORE  (2998)  Running``, ``opcmona  OVO Monitor Agent  AGENT,EA  Stopped`` (no pid
    while stopped), ``midaemon  Measurement Interface daemon  (18623)  Running`` (no category).  Names follow
    the rule of ``parse_opcsv_status`` (a mixed-case name such as "HPSIMIntAck" needs a pid, or column gaps
    after it and before its state).  The state is
    one word (Running, Stopped, Aborted, Starting, Stopping, ...), possibly negated ("Not Running"); its case is
    free when a pid precedes it, but without a pid it must be capitalised as ovc prints it, so that prose such
    as "all components stopped" is not read as a component.  Free-text lines ("Agent Health Status: Critical,
    ...", "Message Agent is not buffering."), headers, separators, diagnostics and opcsv-style lines
    ("Control Manager  opcctlm  (3722) is running") are skipped.
    ``running`` is True only for the state "Running" (case-insensitive); ``condition`` tells a transitional state
    (Starting, Stopping, ...) from a down one.  A component listed twice yields two entries.
    """
    processes: list[ProcessStatus] = []
    for line in _candidate_lines(text):
        match = _OVC_LINE.match(line)
        if match is None:
            continue
        middle = match.group("middle") or ""
        pid = match.group("pid")
        name = match.group("name")
        if name in ("is", "not"):
            continue
        if name[0].isupper() and not (_mixed_case(name) and (pid or _ovc_columns(line, match))):
            continue  # prose ("Agent Health Status: ...") never has its first word in a column of its own
        if pid is None and not match.group("state")[0].isupper():
            continue  # ovc capitalises its states; "all components stopped" is prose
        if re.search(r"\(\s*[0-9]+\s*\)", middle):
            continue  # a pid that is not right before the state: not this format
        if middle.split()[-1:] and middle.split()[-1].lower() == "is":
            continue  # "<name> ... is running": opcsv phrasing
        description, category = _split_ovc_middle(middle, columns=bool(_COLUMN_GAP.search(line)))
        state = _normalise(match.group("state"))
        processes.append(
            ProcessStatus(
                name=match.group("name"),
                description=description,
                category=category,
                pid=_pid(pid),
                state=state,
                running=state.lower() == "running",
            )
        )
    return processes


def processes_up(entries: list[ProcessStatus]) -> dict[str, bool]:
    """Process name to running, sorted by name; a name listed more than once is up only if every entry runs."""
    up: dict[str, bool] = {}
    for entry in entries:
        up[entry.name] = up.get(entry.name, True) and entry.running
    return dict(sorted(up.items()))


def process_states(entries: list[ProcessStatus], expected_stopped: frozenset[str] | set[str] = frozenset(),
                   ignore: frozenset[str] | set[str] = frozenset()) -> dict[str, int]:
    """Process name to the value of ``server_process_up``, sorted by name.

    ``PROCESS_RUNNING`` (1) for a running process, ``PROCESS_TRANSITIONAL`` (2) for one in a state on the way up
    or down (Starting, Stopping, Restarting, Aborting, Initializing), and ``PROCESS_DOWN`` (0) for any other
    state, except for a name in ``expected_stopped`` (components a site stops on purpose, such as ``ttd``,
    ``perfalarm``, ``perfd`` where unused), which is ``PROCESS_STOPPED_AS_EXPECTED`` (3) when it is not running.
    Names in ``ignore`` are left out.  A name listed more than once takes its worst entry: down, then
    transitional, then stopped as expected, then running.
    """
    rank = {PROCESS_DOWN: 0, PROCESS_TRANSITIONAL: 1, PROCESS_STOPPED_AS_EXPECTED: 2, PROCESS_RUNNING: 3}
    states: dict[str, int] = {}
    for entry in entries:
        if entry.name in ignore:
            continue
        condition = entry.condition
        if condition == "running":
            value = PROCESS_RUNNING
        elif condition == "transitional":
            value = PROCESS_TRANSITIONAL
        elif entry.name in expected_stopped:
            value = PROCESS_STOPPED_AS_EXPECTED
        else:
            value = PROCESS_DOWN
        if entry.name not in states or rank[value] < rank[states[entry.name]]:
            states[entry.name] = value
    return dict(sorted(states.items()))


_DISPLAY_QUEUE = re.compile(r"^dispq\d+$")


def display_queues(names: list[str]) -> int:
    """How many of the queue file names are display queues (``dispq<N>``: one per running GUI session)."""
    return sum(1 for name in names if _DISPLAY_QUEUE.match(name))


def parse_ovconfget(text: str) -> dict[str, str]:
    """Parse ``ovconfget`` output (e.g. ``ovconfget -ovrg server opc``) into a dict of key to value.

    Handled: ``KEY=VALUE`` lines, split at the first "=" (so values may contain "=" and spaces), keys and values
    stripped, empty values kept as "".  ``[namespace]`` header lines, blank lines, lines without "=" and lines
    whose key is not identifier-like (letters, digits, underscores, not starting with a digit) are ignored.
    When a key occurs more than once (e.g. in two namespaces) the last occurrence wins.
    """
    values: dict[str, str] = {}
    for raw in iter_lines(text):
        line = raw.strip()
        if not line or line.startswith(("[", "#")):
            continue
        key, sep, value = line.partition("=")
        if not sep:
            continue
        key = key.strip()
        if not _KEY.fullmatch(key):
            continue
        values[key] = value.strip()
    return values


def ovconfget_problems(text: str) -> list[str]:
    """The lines of ``ovconfget`` output that are not configuration: what an error printed to stdout looks like.

    ``ovconfget`` prints only ``NAME=value`` lines (and ``[namespace]`` headers); anything else -- "ERROR: ...",
    a usage text, a message with an HP message code such as "(conf-42)", a line holding garbage -- means the
    values cannot be trusted, whatever the exit status was.  Blank lines, ``#`` comments, ``[namespace]`` headers
    and ``NAME=value`` lines with an identifier-like name are not problems.  The lines are returned stripped, in
    output order.
    """
    problems = []
    for raw in iter_lines(text):
        line = raw.strip()
        if not line or line.startswith("#") or (line.startswith("[") and line.endswith("]")):
            continue
        key, sep, _ = line.partition("=")
        if sep and _KEY.fullmatch(key.strip()) and not _GARBAGE.search(line):
            continue
        problems.append(line)
    return problems


# An error line of an HP Software command: "ERROR: ...", "Error: ...", "FATAL ...", or an HP message code in
# parentheses ("(conf-42)", "(xpl-0)", "(OpC30-913)", "(ctrl-21)", "(bbc-...)", "(sec.core-...)").
_ERROR_LINE = re.compile(
    r"^\s*(?:ERROR|ERR|FATAL|CRITICAL)\b|^\s*(?i:error|fatal)\s*:"
    r"|\((?i:conf|xpl|ctrl|bbc|sec|opc|cfg)[A-Za-z.]*[0-9]*-[0-9]+\)",
    re.ASCII,
)


def error_lines(text: str) -> list[str]:
    """The lines of ``text`` (e.g. a command's stderr) that are error messages, stripped, in output order."""
    return [line.strip() for line in iter_lines(text) if _ERROR_LINE.search(line)]


DEFAULT_COUNT_PATTERN = r"(?P<count>\d+)"


@functools.lru_cache(maxsize=64)
def compile_count_pattern(pattern: str) -> re.Pattern[str]:
    """Compile a count pattern; ValueError when it is not a valid regex or has no named group ``count``."""
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"invalid count pattern {pattern!r}: {exc}") from exc
    if "count" not in regex.groupindex:
        raise ValueError(f"count pattern {pattern!r} needs a named group `count`, e.g. (?P<count>\\d+)")
    return regex


def parse_count(text: str, pattern: str = DEFAULT_COUNT_PATTERN) -> int | None:
    """The value of the named group ``count`` in the first match of ``pattern`` in ``text``, as an int.

    Used for a site-configured command that counts queue entries, e.g. output ``"42\\n"`` or
    ``"queue msgmgrq: 1234 entries"`` with the default pattern (the first run of digits).  Returns None when
    there is no match, the group did not take part in the match, or its text (stripped) is not a non-negative
    decimal integer of at most 18 ASCII digits ("-5", "+5", "1,234" are not).  Only the first match counts: a
    later match is not tried.  With the default pattern a leading minus sign is simply not part of the match, so
    ``"-5"`` gives 5.  Raises ValueError when ``pattern`` is invalid or has no ``count`` group.
    """
    regex = compile_count_pattern(pattern)
    match = regex.search(text)
    if match is None:
        return None
    value = match.group("count")
    if value is None:
        return None
    return integer(value.strip(), "", 18)  # None: not a count, or beyond any queue's size
