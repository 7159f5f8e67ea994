"""Pure functions for the file-system checks: the mount a path lives on and mount options (the mount table is parsed
by ``machine.procfs.parse_mounts``, shared with the file-system collector), and for the heap warnings of the alert
log.  No I/O here, so the checks can be tested on any text."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, NamedTuple, Sequence

if TYPE_CHECKING:
    from ...machine.procfs import Mount


def mount_of(path: str, mounts: Sequence[Mount]) -> Mount | None:
    """The mount a path lives on: the longest mountpoint that is a prefix of it (the last such mount wins)."""
    best = None
    path = os.path.normpath(path)
    for mount in mounts:
        point = mount.mountpoint
        if path == point or path.startswith(point.rstrip("/") + "/") or point == "/":
            if best is None or len(point) >= len(best.mountpoint):
                best = mount
    return best


def parse_options(text: str) -> dict[str, str]:
    """Mount options ``rw,vers=3,hard`` as ``{"rw": "", "vers": "3", "hard": ""}``."""
    result = {}
    for item in text.split(","):
        key, _, value = item.partition("=")
        result[key] = value
    return result


def int_option(options: dict[str, str], key: str) -> int:
    """A numeric option; 0 when absent or not a number (so a ``>=`` check fails)."""
    try:
        return int(options.get(key, "0"))
    except ValueError:
        return 0


# ---- ORA-KGL: "Heap size 2190K exceeds notification threshold (2048K)" -------------------------------------------
# Hand-written scanning instead of a regular expression: every step is a fixed-size look around one str.find() hit,
# so a line of any length (or one of only digits) costs linear time; the alert log and MESSAGE_TEXT are untrusted
# sizes.
KGL_PHRASE = "exceeds notification threshold"
_HEAP = "Heap size "
_UNITS = {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}
_MAX_DIGITS = 18  # larger numbers are not sizes Oracle prints; also keeps int() cheap


class HeapWarning(NamedTuple):
    """One library-cache heap warning: the heap size and the notification threshold it exceeded, in bytes (None
    where the text does not say, e.g. a message cut short), and the object loaded (the "KGL object name :" that
    follows the warning; None where none does)."""

    heap_bytes: int | None
    threshold_bytes: int | None
    object_name: str | None = None


# "KGL object name :XDB.XDbD/PLZ01TcHgNAgAIIegtw==" follows the warning: on the next line (10.2), or as the next
# message, a few lines on, after "Details in trace file" and a timestamp (12.2+, with the container prefix).
KGL_OBJECT = "KGL object name :"
_OBJECT_LOOKAHEAD = 4  # lines after the warning's
MAX_OBJECT_CHARS = 120  # an object name can be a whole statement: the start names it


def object_name(line: str) -> str | None:
    """The object of a "KGL object name :" line, cut to MAX_OBJECT_CHARS and before any IDENTIFIED BY (a statement
    that sets a password must not carry it into a label), control characters replaced."""
    at = line.find(KGL_OBJECT)
    if at == -1:
        return None
    name = line[at + len(KGL_OBJECT):].strip()
    secret = name.upper().find("IDENTIFIED")
    if secret != -1:
        name = name[:secret].rstrip() + " ..."
    name = "".join(c if c.isprintable() else " " for c in name[:MAX_OBJECT_CHARS])
    return name or None


def _is_digit(char: str) -> bool:
    return "0" <= char <= "9"  # ASCII only: str.isdigit() accepts other scripts' digits, which int() may refuse


def _size_before(text: str, end: int) -> int | None:
    """The size written just before ``end`` in "Heap size <digits><unit> ", or None."""
    i = end - 1
    if i < 0 or text[i] != " ":
        return None
    i -= 1
    multiplier = 1
    if i >= 0 and text[i] in _UNITS:
        multiplier = _UNITS[text[i]]
        i -= 1
    stop = i
    while i >= 0 and stop - i < _MAX_DIGITS and _is_digit(text[i]):
        i -= 1
    if i == stop or (i >= 0 and _is_digit(text[i])):
        return None
    if text[max(0, i + 1 - len(_HEAP)):i + 1] != _HEAP:
        return None
    return int(text[i + 1:stop + 1]) * multiplier


def _size_after(text: str, start: int) -> int | None:
    """The size in " (<digits><unit>)" at ``start``, or None."""
    if text[start:start + 2] != " (":
        return None
    i = begin = start + 2
    while i < len(text) and i - begin < _MAX_DIGITS and _is_digit(text[i]):
        i += 1
    if i == begin or (i < len(text) and _is_digit(text[i])):
        return None
    digits = text[begin:i]
    multiplier = _UNITS.get(text[i:i + 1], 1)
    if multiplier != 1:
        i += 1
    if text[i:i + 1] != ")":
        return None
    return int(digits) * multiplier


def heap_warnings(text: str) -> list[HeapWarning]:
    """Every "exceeds notification threshold" phrase in ``text`` (an alert-log line or a V$DIAG_ALERT_EXT
    MESSAGE_TEXT) is one warning; its sizes are read where the whole "Heap size N exceeds notification threshold
    (T)" form is there."""
    found = []
    pos = text.find(KGL_PHRASE)
    while pos != -1:
        end = pos + len(KGL_PHRASE)
        found.append(HeapWarning(_size_before(text, pos), _size_after(text, end)))
        pos = text.find(KGL_PHRASE, end)
    if found and KGL_OBJECT in text:  # a view row holding the whole 10.2-style message: the object comes after
        at = text.find(KGL_OBJECT, text.rfind(KGL_PHRASE))
        if at != -1:
            found[-1] = found[-1]._replace(object_name=object_name(text[at:].split("\n", 1)[0]))
    return found


def alert_log_heap_warnings(lines: Sequence[str]) -> list[HeapWarning]:
    """The warnings in complete alert-log lines (a line without the phrase costs one substring search), each with
    the object named in the lines that follow it, up to the next warning."""
    found = []
    for number, line in enumerate(lines):
        if KGL_PHRASE not in line:
            continue
        warnings = heap_warnings(line)
        if warnings and warnings[-1].object_name is None:
            for after in lines[number + 1:number + 1 + _OBJECT_LOOKAHEAD]:
                if KGL_PHRASE in after:
                    break
                if KGL_OBJECT in after:
                    warnings[-1] = warnings[-1]._replace(object_name=object_name(after))
                    break
        found += warnings
    return found
