"""IBM MQ through ``runmqsc`` text, for hosts where the exporter runs beside the queue manager.

One snapshot is two commands, never through a shell: ``dspmq -n -m QMGR`` for the queue manager's status and,
only when that says ``Running``, one ``runmqsc -e QMGR`` with three DISPLAY commands on its stdin.

Format facts this parser relies on (facts only; sources in brackets):

* A runmqsc report is: a banner (``5724-H72 (C) Copyright IBM Corp. 1994, 2024.`` and ``Starting MQSC for queue
  manager QM1.``), then per command an optional numbered echo of the command (``     1 : DISPLAY ...``; ``-e``
  suppresses it), the replies, and at the end a summary (``3 MQSC commands read.``, ``No commands have a syntax
  error.``, ``All valid MQSC commands were processed.`` / ``One valid MQSC command could not be processed.``).
  [IBM Docs, "Running MQSC commands from text files", ibm.com/docs/SSFKSJ_9.0.0/com.ibm.mq.adm.doc/q020670_.html;
  runmqsc reference, ibm.com/docs/SSFKSJ_9.4.0/refadmin/q083460_.html; sample sessions in
  github.com/instana/serviceability agent/ibm-mq/README.md and github.com/cgomeznt/MQ-MFT guia/estatuscanales.rst]
* runmqsc exit status: 0 all commands processed, 10 some failed (their replies are still printed), 20 error (not
  run at all). [runmqsc reference above]
* Every object of a DISPLAY reply starts with a message line, ``AMQ8450I: Display queue status details.``
  (QSTATUS), ``AMQ8409I: Display Queue details.`` (QLOCAL/QUEUE), ``AMQ8417I: Display Channel Status details.``
  (CHSTATUS); older releases print the id without the severity letter (``AMQ8417: ...``).  The message text is
  translated, the id is not.  [the sample sessions above; checkmk's ibm_mq check comments, github.com/Checkmk/checkmk]
* Attributes follow as ``NAME(value)``, indented three blanks, two per line in columns of 40 (the second starts
  at column 44).  An attribute too long for a column (a 48-character queue name, an SSLPEER) takes a whole line
  and the rest move down.  Attributes come in alphabetical order after the object name (and TYPE / CHLTYPE).
  Values may contain blanks (``MCASTAT(NOT RUNNING)``) and parentheses (``CONNAME(10.0.0.5(1414))``); keywords
  without a value appear bare (``CURRENT`` in CHSTATUS).  Lines may carry trailing blanks.  [same samples;
  DISPLAY CHSTATUS ALL sample in a public Splunk MQ modular-input repository]
* Blank values are one blank: ``MSGAGE( )``, ``LGETDATE( )``, ``QTIME( , )``; MSGAGE is blank when queue
  monitoring (MONQ) is off for the queue, numeric (0 for an empty queue) when on.  [IBM Docs DISPLAY QSTATUS,
  ibm.com/support/knowledgecenter/SSFKSJ_7.5.0/com.ibm.mq.ref.adm.doc/q086260_.htm; runmqsc parsing notes
  tested on MQ 9.3.0.25 in a public repository]
* Errors are message lines between (or instead of) objects: ``AMQ8147E: IBM MQ object X not found.``,
  ``AMQ8420I: Channel Status not found.`` (no channel running: runmqsc exits 10), ``AMQ8405I: Syntax error
  detected at or near end of command segment below:-`` followed by the segment, ``AMQ8135E: Not authorized.``;
  for the whole session: ``AMQ8118E: IBM MQ queue manager does not exist.``, ``AMQ8146E: IBM MQ queue manager not
  available.``  [IBM Docs, "Resolving problems with MQSC commands", ibm.com/docs/en/ibm-mq/10.0.x?topic=problems-
  resolving-mqsc-commands; public test fixtures quoting these lines]
* ``dspmq`` prints ``QMNAME(QM1)`` padded to column 59 and then ``STATUS(Running)``; statuses include
  ``Starting``, ``Running``, ``Running as standby``, ``Running elsewhere``, ``Quiescing``, ``Ending immediately``,
  ``Ended normally``, ``Ended immediately``, ``Ended unexpectedly``, ``Status not available``; ``-x`` adds indented
  ``INSTANCE(host) MODE(Active)`` lines; ``-n`` suppresses translation of these strings; an unknown name gives
  ``AMQ7048E: The queue manager name is either not valid or not known.``  [IBM Docs dspmq,
  ibm.com/docs/en/ibm-mq/9.4?topic=reference-dspmq-display-queue-managers; public MQ container
  test suites and dspmq samples in the instana repository above]

Not found in any source: runmqsc on Multiplatforms does not appear to hard-wrap long values (an 85-character
SSLPEER is printed on one line), so a value continued on the next line is handled defensively (an unclosed value
whose line has no plausible closing parenthesis is joined with the next line) rather than from a documented rule.
"""

from __future__ import annotations

import os
import re
import time

from exporter.mq.model import Backend, BackendError, BackendNotAvailable, ChannelState, QmgrSnapshot, QueueStatus
from exporter.runner import CommandError, CommandNotFound, CommandResult, CommandTimeout, run_command

__all__ = ["MQSC_COMMANDS", "RunmqscBackend", "normalise_qmgr_status", "parse_dspmq", "parse_mqsc"]

# What one snapshot asks runmqsc for.  DESCR is not used by the snapshot but costs nothing and makes the
# output easier to read when an operator looks at it.
MQSC_COMMANDS: tuple[str, ...] = (
    "DISPLAY QSTATUS(*) TYPE(QUEUE) CURDEPTH IPPROCS OPPROCS MSGAGE",
    "DISPLAY QLOCAL(*) MAXDEPTH DESCR",
    "DISPLAY CHSTATUS(*) ALL",
)

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

# Messages meaning the session as a whole failed (no DISPLAY could have run).
_FATAL_IDS = {
    "AMQ8118": "queue manager does not exist",
    "AMQ8146": "queue manager not available",
    "AMQ8135": "not authorized",
    "AMQ8145": "connection broken",
    "AMQ8156": "queue manager quiescing",
}

_AMQ_LINE = re.compile(r"^\s*(AMQ\d{4})([A-Z])?\s*:\s?(.*)$")
_HEADER_TEXT = re.compile(r"\bdisplay\b.*\bdetails\b", re.IGNORECASE)
_BANNER = re.compile(r"^\s*(?:\d{4}-[A-Z0-9]{3}\b.*\(C\)|Starting (?:local )?MQSC for\b)", re.IGNORECASE)
_ECHO = re.compile(r"^\s*\d+\s*:(?:\s|$)")
_SUMMARY = re.compile(r"^\s*(?:One|No|All|\d+)\s+(?:valid\s+)?(?:MQSC\s+)?commands?\b", re.IGNORECASE)
_NAME = re.compile(r"[A-Z][A-Z0-9]{0,19}")
_VALUED_TOKEN = re.compile(r"(?:^|\s)[A-Z][A-Z0-9]{0,19}\(")
_PLAUSIBLE_AFTER_CLOSE = re.compile(r"\)(?=\s*$|\s+[A-Z][A-Z0-9]{0,19}(?:\(|\s|$))")
_DSPMQ_NAME = re.compile(r"\bQMNAME\(([^()]*)\)")
_DSPMQ_STATUS = re.compile(r"\bSTATUS\(([^()]*)\)")
_MAX_CONTINUATION_LINES = 8

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
    if not isinstance(text, str):
        text = str(text)
    raw_lines = text.splitlines(keepends=True)
    lines = [line.rstrip("\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029") for line in raw_lines]
    cut_short = bool(raw_lines) and lines[-1] == raw_lines[-1]  # last line has no line break
    kinds = [_classify(line) for line in lines]
    blocks: list[dict[str, str]] = []
    errors: list[str] = []
    current: dict[str, str] | None = None
    i = 0
    while i < len(lines):
        kind = kinds[i]
        if kind == _ATTRS and current is not None:
            i += _parse_attribute_line(lines, kinds, i, cut_short, current)
            continue
        if kind in (_SKIP, _AMQ):
            if current:
                blocks.append(current)
            current = None
            if kind == _AMQ:
                match = _AMQ_LINE.match(lines[i])
                if match is not None and (match.group(1) in _DISPLAY_IDS or (
                        (match.group(2) or "I") == "I" and _HEADER_TEXT.search(match.group(3)))):
                    current = {}  # an object's attributes follow (errors are never headers, whatever their text)
                else:
                    errors.append(lines[i].strip())
        i += 1
    if current:
        blocks.append(current)
    return blocks, errors


def _classify(line: str) -> int:
    if not line.strip():
        return _BLANK
    if _AMQ_LINE.match(line):
        return _AMQ
    if _ECHO.match(line) or _BANNER.match(line) or (_SUMMARY.match(line) and "(" not in line):
        return _SKIP
    return _ATTRS


def _parse_attribute_line(lines: list[str], kinds: list[int], i: int, cut_short: bool,
                          block: dict[str, str]) -> int:
    """Add the attributes of line ``i`` (and any continuation lines) to ``block``; return lines consumed."""
    s = lines[i]
    consumed = 1
    # A line of prose (not indented, no NAME(value) on it) must not contribute bare keywords.
    allow_bare = s[:1].isspace() or bool(_VALUED_TOKEN.search(s))
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
            at_cut = cut_short and after >= len(s) and i + consumed == len(lines)
            if allow_bare and not at_cut:
                block.setdefault(name, "")
            pos = after
            continue
        start = after + 1
        while True:
            close = _find_close(s, start)
            if close < 0 and not (cut_short and i + consumed == len(lines)):
                close = _plausible_close(s, start)
            if close >= 0:
                break
            nxt = i + consumed
            if nxt >= len(lines) or kinds[nxt] != _ATTRS or consumed > _MAX_CONTINUATION_LINES:
                return consumed  # half an attribute (cut off): drop it and the rest of the line
            s = s + lines[nxt].lstrip()  # a value continued on the next line
            consumed += 1
        block.setdefault(name, _clean_value(s[start:close]))
        pos = close + 1
    return consumed


def _next_space(s: str, pos: int) -> int:
    while pos < len(s) and not s[pos].isspace():
        pos += 1
    return pos


def _find_close(s: str, start: int) -> int:
    """Index of the parenthesis closing a value that starts at ``start``, or -1 when it is not on this line.

    Nested parentheses are counted; a closing parenthesis directly followed by something other than a blank
    or the end of the line is taken as part of the value (``DESCR(Smile :))``).  A value starting with a quote
    runs to the matching quote (``''`` is an escaped quote), so parentheses inside quotes do not count.
    """
    j = start
    while j < len(s) and s[j] == " ":
        j += 1
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
                    return j
                break  # not a well-formed quoted value: fall back to counting parentheses
            j += 1
    depth = 1
    for j in range(start, len(s)):
        c = s[j]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                if j + 1 >= len(s) or s[j + 1].isspace():
                    return j
                depth = 1
    return -1


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


def parse_dspmq(text: str) -> dict[str, str]:
    """``dspmq`` output to ``{queue manager: normalised status}``; lines without QMNAME are ignored."""
    result: dict[str, str] = {}
    if not isinstance(text, str):
        text = str(text)
    for line in text.splitlines():
        name = _DSPMQ_NAME.search(line)
        if name is None or not name.group(1).strip():
            continue
        status = _DSPMQ_STATUS.search(line, name.end())
        result[name.group(1).strip()] = normalise_qmgr_status(status.group(1) if status else "")
    return result


def normalise_qmgr_status(status: str) -> str:
    """A dspmq status string as RUNNING, STARTING, QUIESCING, STANDBY, ELSEWHERE, ENDED or UNKNOWN."""
    words = " ".join(status.lower().replace("_", " ").split())
    if words == "running":
        return "RUNNING"
    if words == "running as standby":
        return "STANDBY"
    if words == "running elsewhere":
        return "ELSEWHERE"
    if words.startswith("starting"):
        return "STARTING"
    if words.startswith("quiescing"):
        return "QUIESCING"
    if words.startswith(("ended", "ending")):
        return "ENDED"
    return "UNKNOWN"


_INTEGER = re.compile(r"[+-]?\d{1,18}")
_DECIMAL = re.compile(r"[+-]?\d{1,18}(?:\.\d{1,9})?")


def _int(value: str | None) -> int | None:
    """An MQ integer attribute, or None when it is blank or not a number."""
    value = (value or "").strip()
    return int(value) if _INTEGER.fullmatch(value) else None


def _float(value: str | None) -> float | None:
    """A number of seconds, or None when it is blank (e.g. MSGAGE with monitoring off) or not a number."""
    value = (value or "").strip()
    return float(value) if _DECIMAL.fullmatch(value) else None


def _first_line(text: str, limit: int = 200) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:limit]
    return ""


class RunmqscBackend(Backend):
    """One local queue manager through ``dspmq`` and ``runmqsc`` (no MQ client library needed).

    ``timeout`` bounds the whole snapshot (both commands); ``env`` holds extra environment variables for the
    commands, added to the exporter's own environment (e.g. ``{"LANG": "C"}``).
    """

    name = "runmqsc"

    def __init__(self, qmgr: str, runmqsc: str = "/opt/mqm/bin/runmqsc", dspmq: str = "/opt/mqm/bin/dspmq",
                 timeout: float = 10.0, env: dict[str, str] | None = None) -> None:
        self.qmgr = qmgr
        self.runmqsc = runmqsc
        self.dspmq = dspmq
        self.timeout = timeout
        self.env = env
        self.last_messages: list[str] = []  # AMQ messages of the last runmqsc session, for diagnostics

    def snapshot(self) -> QmgrSnapshot:
        """The queue manager's status and, when it is running, its queues and channel instances."""
        deadline = time.monotonic() + self.timeout
        status = self.qmgr_status(deadline)
        if status != "RUNNING":
            self.last_messages = []
            return QmgrSnapshot(qmgr=self.qmgr, status=status)
        blocks = self._display(deadline)
        return QmgrSnapshot(qmgr=self.qmgr, status=status, queues=_queues(blocks), channels=_channels(blocks))

    def qmgr_status(self, deadline: float | None = None) -> str:
        """The normalised status of the queue manager as ``dspmq`` sees it from this host."""
        result = self._run(self.dspmq, ["-n", "-m", self.qmgr], deadline)
        statuses = parse_dspmq(result.stdout)
        if self.qmgr in statuses:
            return statuses[self.qmgr]
        hint = _first_line(result.stdout) or _first_line(result.stderr) or "no output"
        if "AMQ7048" in result.stdout + result.stderr:
            raise BackendError(f"dspmq: queue manager {self.qmgr} is not known on this host ({hint})")
        raise BackendError(f"dspmq -m {self.qmgr}: no status for the queue manager "
                           f"(exit status {result.returncode}: {hint})")

    def _display(self, deadline: float) -> list[dict[str, str]]:
        stdin = "".join(command + "\n" for command in MQSC_COMMANDS)
        result = self._run(self.runmqsc, ["-e", self.qmgr], deadline, input_text=stdin)
        blocks, messages = parse_mqsc(result.stdout)
        self.last_messages = messages
        fatal = [m for m in messages if m[:7] in _FATAL_IDS]
        if fatal:
            reason = _FATAL_IDS[fatal[0][:7]]
            raise BackendError(f"runmqsc {self.qmgr}: {reason} ({fatal[0]})")
        if blocks:
            return blocks
        hint = (messages[0] if messages else "") or _first_line(result.stderr) or _first_line(result.stdout)
        if result.returncode != 0:
            raise BackendError(f"runmqsc {self.qmgr}: exit status {result.returncode} and no usable output"
                               + (f" ({hint!r})" if hint else ""))
        raise BackendError(f"runmqsc {self.qmgr}: no recognisable MQSC output"
                           + (f" (starts {hint[:80]!r})" if hint else " (empty)"))

    def _run(self, binary: str, args: list[str], deadline: float | None,
             input_text: str | None = None) -> CommandResult:
        tool = os.path.basename(binary) or binary
        remaining = self.timeout if deadline is None else deadline - time.monotonic()
        if remaining <= 0:
            raise BackendError(f"{tool}: no time left of the {self.timeout:g}s timeout")
        env = {**os.environ, **self.env} if self.env is not None else None
        try:
            return run_command([binary, *args], timeout=remaining, env=env, input_text=input_text)
        except CommandNotFound:
            raise BackendNotAvailable(f"{tool} not found at {binary} (IBM MQ is not installed on this host, "
                                      "or the path is wrong)") from None
        except CommandTimeout:
            raise BackendError(f"{tool} {' '.join(args)}: timed out after {remaining:.3g}s") from None
        except CommandError as exc:
            raise BackendError(f"{tool}: {exc}") from None
        except OSError as exc:  # e.g. exec format error on a broken binary
            raise BackendError(f"{tool} at {binary} could not be run: {exc}") from None


def _is_channel(block: dict[str, str]) -> bool:
    return "CHANNEL" in block and "QUEUE" not in block


def _queues(blocks: list[dict[str, str]]) -> list[QueueStatus]:
    """Queues merged by name: status from QSTATUS blocks (TYPE(QUEUE)), MAXDEPTH from QLOCAL blocks."""
    queues: dict[str, QueueStatus] = {}
    for block in blocks:
        name = block.get("QUEUE", "")
        if not name or _is_channel(block):
            continue
        queue = queues.setdefault(name, QueueStatus(name=name))
        if "CURDEPTH" in block:
            queue.depth = _int(block["CURDEPTH"])
        if "IPPROCS" in block:
            queue.open_input = _int(block["IPPROCS"])
        if "OPPROCS" in block:
            queue.open_output = _int(block["OPPROCS"])
        if "MSGAGE" in block:
            queue.oldest_message_age = _float(block["MSGAGE"])
        if "MAXDEPTH" in block:
            queue.max_depth = _int(block["MAXDEPTH"])
    return list(queues.values())


def _channels(blocks: list[dict[str, str]]) -> list[ChannelState]:
    """One entry per channel instance (a SVRCONN has one per connection); blocks without STATUS are skipped."""
    channels = []
    for block in blocks:
        if not _is_channel(block) or not block["CHANNEL"] or not block.get("STATUS"):
            continue
        channels.append(ChannelState(name=block["CHANNEL"], status=block["STATUS"].upper(),
                                     type=block.get("CHLTYPE", ""), connection=block.get("CONNAME", "")))
    return channels
