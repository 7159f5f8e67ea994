"""Alert-log errors (issue 29): the ORA- codes of the alert log counted per code, each code once per message, with a
cap on the number of distinct codes kept.  Pure functions and plain data, no I/O: heapwarnings.py reads the alert log
(the view or the file, one reader for both figures) and hands the text here.

A *message* of the text alert log is what follows a timestamp line (``Sat Jun  5 14:58:37 2010`` up to 12.1,
``2019-09-29T22:04:52.957867+03:00`` from 12.2) or an ``Errors in file ...`` line (several of those can follow one
timestamp, each its own error); a V$DIAG_ALERT_EXT row is one message too.  An ORA-00600 followed by ORA-06512
lines counts one ORA-00600 and one ORA-06512; the same code twice in one message (ORA-04030 below ORA-04030) counts
once.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable

OTHER = "other"

_DAYS = "Mon|Tue|Wed|Thu|Fri|Sat|Sun"
_MONTHS = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec"
# Where a message starts: a line that is a timestamp, or "Errors in file", optionally after a 12.2+ container
# prefix ("PDB$SEED(2):").  One regular expression over the whole chunk (scanned in C, no per-line Python loop);
# it has no nested or overlapping repetition, so its time is linear in the text whatever the text holds.
_START = (rf"^(?:[A-Za-z0-9_$#]{{1,128}}\(\d{{1,10}}\):)?(?:"
          rf"(?:{_DAYS}) (?:{_MONTHS}) {{1,2}}\d{{1,2}} \d\d:\d\d:\d\d \d{{4}}[ \t\r]*$"
          rf"|\d{{4}}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{{1,9}})?(?:[+-]\d\d:\d\d|Z)?[ \t\r]*$"
          rf"|Errors in file )")
_SCAN = re.compile(rf"(?P<start>{_START})|ORA-(?P<code>\d{{5}})(?!\d)", re.MULTILINE)


def message_codes(text: str, open_codes: Iterable[str] = ()) -> tuple[Counter[str], frozenset[str]]:
    """The ORA- codes in ``text``, each counted once per message: (count per code, the codes already counted in
    the message still open at the end of ``text``).  ``open_codes`` carries that set from the previous chunk of the
    same file, so a message split between two reads is still counted once per code."""
    counts: Counter[str] = Counter()
    current = set(open_codes)
    for match in _SCAN.finditer(text):
        number = match.group("code")
        if number is None:
            current = set()
            continue
        code = "ORA-" + number
        if code not in current:
            current.add(code)
            counts[code] += 1
    return counts, frozenset(current)


def row_codes(text: str) -> Counter[str]:
    """The codes of one V$DIAG_ALERT_EXT row (a message of its own)."""
    return message_codes(text)[0]


@dataclass(frozen=True)
class ErrorCounts:
    """Counts per code since the source started: the first ``max_codes`` distinct codes by name, every later one
    under ``other``.  ``fresh`` holds the codes (and ``other``) first counted by the latest read: they are shown at
    0 in that run and at their count from the next one on, so that a series' first sample is 0 and ``increase()``
    sees its first errors.  Replaced whole by ``add`` (a reader never sees half an update)."""

    codes: dict[str, int] = field(default_factory=dict)
    fresh: frozenset[str] = frozenset()

    def add(self, found: Counter[str], max_codes: int) -> "ErrorCounts":
        codes = dict(self.codes)
        named = sum(1 for code in codes if code != OTHER)
        fresh = set()
        for code, number in found.items():
            if code not in codes and named >= max_codes:
                code = OTHER
            if code not in codes:
                fresh.add(code)
                named += code != OTHER
            codes[code] = codes.get(code, 0) + number
        return ErrorCounts(codes, frozenset(fresh))

    def samples(self) -> list[tuple[str, int]]:
        """(code, value to export) in a stable order."""
        return [(code, 0 if code in self.fresh else number) for code, number in sorted(self.codes.items())]


# ---- when: the timestamp lines that open the text alert log's messages (issue 39, the history window) -----------
# The same two forms as _START: "Tue Mar 14 10:22:31 2006" (up to 12.1; the host's local time, no zone written) and
# "2018-07-06T09:12:44.123456+02:00" (12.2 and later; the offset written, local time when it is not).  Anchored on a
# whole line, optionally after a 12.2+ container prefix, so a message that quotes a date is not taken for one.
_TIMESTAMP = re.compile(
    rf"^(?:[A-Za-z0-9_$#]{{1,128}}\(\d{{1,10}}\):)?(?:"
    rf"(?P<old>(?:{_DAYS}) (?:{_MONTHS}) {{1,2}}\d{{1,2}} \d\d:\d\d:\d\d \d{{4}})"
    rf"|(?P<iso>\d{{4}}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{{1,9}})?(?:[+-]\d\d:\d\d|Z)?))[ \t\r]*$", re.MULTILINE)


def _epoch(match: re.Match[str]) -> float | None:
    """A timestamp line's time in seconds since the epoch; None for an impossible date (30 Feb)."""
    from datetime import datetime

    try:
        if match.group("old"):
            moment = datetime.strptime(" ".join(match.group("old").split()), "%a %b %d %H:%M:%S %Y")
        else:
            text = match.group("iso").replace("Z", "+00:00")
            head, dot, rest = text.partition(".")
            if dot:  # Python reads at most six fractional digits: keep them, and the offset
                digits = "".join(c for c in rest if c.isdigit())
                text = f"{head}.{digits[:6].ljust(6, '0')}{rest[len(digits):]}"
            moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment.timestamp()  # naive (no zone written): the host's local time, as the instance wrote it


@dataclass(frozen=True)
class Entries:
    """Where the messages of a stretch of text alert log stand in time: ``cut``, the offset of the first timestamp
    line at or after ``since`` (None: no message that late); ``first`` and ``last``, the times of the first and the
    last timestamp line of the text (None: the text has none)."""

    cut: int | None
    first: float | None
    last: float | None


def entries_since(text: str, since: float) -> Entries:
    """The offset where the messages logged at ``since`` or later begin, and the first and last times in ``text``.
    The alert log is written in time order, so everything after the first late enough timestamp line is as late."""
    cut = first = last = None
    for match in _TIMESTAMP.finditer(text):
        moment = _epoch(match)
        if moment is None:
            continue
        if first is None:
            first = moment
        last = moment
        if cut is None and moment >= since:
            cut = match.start()
    return Entries(cut, first, last)


def last_entry(text: str) -> float | None:
    """The time of the last timestamp line in ``text`` (None: it has none)."""
    return entries_since(text, float("inf")).last
