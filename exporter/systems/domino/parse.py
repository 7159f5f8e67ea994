"""Parsing the text of the HCL (formerly IBM/Lotus) Domino console command ``show stat``: ``Name = value`` lines to
a dict, numbers read in the server's locale.  Pure functions, no I/O, tested on recorded and invented text
(``tests/systems/domino/fixtures/``).

Hand-written: the console text has no published grammar, and no library reading it was found.
What is known of the format, and from where, is in ``docs/notes/domino.md``.

Numbers are the hard part.  The console prints them with the server's digit grouping and decimal mark
(``1,073,741,824``, ``1.073.741.824``, ``1 073 741 824``, ``5'075'542'016``; ``98.7`` or ``98,7``), so ``2.978``
is 2978 on a German server and 2.978 on an English one.  :func:`read_show_stat` therefore reads every value as a
set of possible readings (:func:`number_readings`) and picks one with, in order: the statistic's known kind
(:data:`COUNT_STATISTICS` are whole numbers, :data:`PERCENT_STATISTICS` are at most 100), the configured
convention (:class:`NumberFormat`, from a locale or explicit separators), and the convention the output itself
shows (``1.234.567`` proves a dot groups digits, ``98,7`` that the comma is the decimal mark).  A value that
still has two readings is kept as text and reported in :attr:`ShowStat.unresolved`, never guessed.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from fnmatch import translate

from ...machine.textlines import iter_lines
from .locales import AUTO, NumberFormat, Reading

__all__ = ["COUNT_STATISTICS", "MAX_NAME_LENGTH", "PERCENT_STATISTICS", "ShowStat", "decode_output",
           "number_readings", "parse_number", "parse_show_stat", "read_show_stat", "statistic_kind"]

# Longer names are skipped: no statistic is this long, and a label value should not be either.
MAX_NAME_LENGTH = 200

# --- decoding ------------------------------------------------------------------------------------------------------


def decode_output(data: bytes | bytearray) -> str:
    """Console output as text: UTF-8 where a line is valid UTF-8, else that line as Windows-1252 (a superset of
    Latin-1's printable characters: byte 0xA0 is a no-break space, 0xFF is ``ÿ``, which :func:`number_readings`
    accepts as a digit-group separator, since it is the no-break space of the DOS code pages 437/850).  The five
    bytes Windows-1252 leaves undefined become U+FFFD.  No line is dropped because of its bytes."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    return "".join(_decode_line(line) for line in iter_lines(data, keepends=True))


def _decode_line(line: bytes) -> str:
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError:
        return line.decode("cp1252", "replace")


# --- numbers -------------------------------------------------------------------------------------------------------

# Characters grouping digits, by class.  Spaces: blank, no-break space, narrow no-break space, thin space, "ÿ"
# (byte 0xFF read as Windows-1252: the no-break space of code pages 437/850) and U+FFFD (a byte that could not be
# decoded, e.g. a Latin-1 no-break space in output decoded as UTF-8 with replacement).  Apostrophes: ASCII and
# U+2019 (Swiss locales).  The class names (" ", "'", ",", ".") are what NumberFormat.grouping holds.
_SPACES = " \u00a0\u202f\u2009\u00ff\ufffd"
_APOSTROPHES = "'\u2019"
_SEPARATORS = _SPACES + _APOSTROPHES + ",."

_NUMBER = re.compile(
    r"(?P<sign>[-+])?"
    r"(?P<body>[0-9](?:[0-9" + re.escape(_SEPARATORS) + r"]*[0-9])?)"
    r"(?P<exp>[eE][-+]?[0-9]+)?"
    r"(?:[ \t]*(?P<suffix>%|[A-Za-z]+(?:/[A-Za-z]+)?))?"
)


def _separator_class(char: str) -> str:
    if char in _SPACES:
        return " "
    if char in _APOSTROPHES:
        return "'"
    return char


def _well_grouped(groups: list[str]) -> bool:
    """1 to 3 digits not starting with 0, then groups of exactly 3."""
    return 1 <= len(groups[0]) <= 3 and not groups[0].startswith("0") and all(len(g) == 3 for g in groups[1:])


def _body_readings(body: str) -> list[tuple[str, str | None, str | None]]:
    """The readings of digits with separators, as (plain digits with an optional ``.``, grouping, decimal)."""
    parts = re.split(r"([^0-9])", body)
    groups, seps = parts[0::2], [_separator_class(s) for s in parts[1::2]]
    if not seps:
        return [(body, None, None)]
    if any(not group for group in groups):
        return []  # two separators in a row
    readings: list[tuple[str, str | None, str | None]] = []
    if len(set(seps)) == 1 and _well_grouped(groups):  # every separator groups digits
        readings.append(("".join(groups), seps[0], None))
    last = seps[-1]
    if last in ",." and last not in seps[:-1]:  # the last separator is the decimal mark
        int_groups, int_seps = groups[:-1], seps[:-1]
        fraction = f"{''.join(int_groups)}.{groups[-1]}"
        if not int_seps:
            readings.append((fraction, None, last))
        elif len(set(int_seps)) == 1 and _well_grouped(int_groups):
            readings.append((fraction, int_seps[0], last))
    return readings


def number_readings(value: str) -> list[Reading]:
    """Every way ``value`` can be read as a number: empty for text, one reading for most numbers, two for a
    number whose only separator is a ``,`` or ``.`` followed by exactly three digits (``2.978``: 2978 or 2.978).

    A number is, after an optional sign and before an optional ``%`` or one unit word (``MB``, ``sec``,
    ``KB/s``), digits with separators, or plain digits with an optional ``.`` decimal point and an exponent
    (``1.5E+03``).  Separators: spaces (blank, U+00A0, U+202F, U+2009, ``ÿ``, U+FFFD) and apostrophes (``'``,
    U+2019) only group digits; ``,`` and ``.`` group digits or mark the decimals.  Digit groups must be well
    formed (1 to 3 digits not starting with 0, then groups of 3, one grouping character throughout, other than
    the decimal mark, which occurs at most once and last): ``1,234,567.8``, ``1.234.567,8``, ``1 234,5``,
    ``5'075'542'016`` have one reading; ``1,23,456``, ``12.0.2``, ``1,,2`` are text.  No unit conversion:
    ``16,384 MB`` reads as 16384, ``62.5%`` as 62.5.
    """
    match = _NUMBER.fullmatch(value.strip())
    if match is None:
        return []
    sign, body, exp = match.group("sign") or "", match.group("body"), match.group("exp") or ""
    if exp:  # an exponent only after plain digits with an optional decimal point
        candidates = [(body, None, "." if "." in body else None)] if re.fullmatch(r"[0-9]+(?:\.[0-9]+)?", body) \
            else []
    else:
        candidates = _body_readings(body)
    readings = []
    for digits, grouping, decimal in candidates:
        number = float(sign + digits + exp)
        if math.isfinite(number):
            readings.append(Reading(number, grouping, decimal))
    return readings


# --- what Domino documents about statistics' kinds ----------------------------------------------------------------

# Statistics that are whole numbers (counts of users, messages, transactions, databases, documents, times; sizes in
# bytes, KB or MB).  A value of one of these whose separator is ambiguous (2.978) is read as grouped digits (2978):
# a count cannot be 2.978.  From the statistic descriptions in HCL's administration help ("Number of users with
# sessions open", "Number of transactions", "Number of databases", "Number of bytes", "Free disk space in bytes",
# "Total times ...", "The number of notes"; the R5 release notes for Platform.Memory.KBFree, "kilobytes").  Globs,
# case-insensitive (Domino prints MAIL.Dead and Mail.Dead).
COUNT_STATISTICS = (
    "Server.Users", "Server.Users.Peak", "Server.Users.Active", "Server.Sessions.Dropped", "Server.Tasks",
    "Server.Trans.Total", "Server.Trans.PerMinute", "Server.Trans.PerMinute.Peak",
    "Server.Cluster.OpenRedirects.*", "Server.Cluster.OpenRequest.*",
    "Mail.Waiting", "Mail.Dead", "Mail.Hold", "Mail.Delivered", "Mail.TotalRouted", "Mail.TotalPending",
    "Mail.TotalFailures", "Mail.WaitingRecipients", "Mail.Transferred", "Mail.TransferFailures",
    "Mail.MessageCache.Memory.*", "Mail.MessageCache.Messages.*",
    "Mem.Allocated", "Mem.Allocated.*", "Mem.Free", "Mem.PhysicalRAM",
    "Disk.*.Free", "Disk.*.Size",
    "Database.DbCache.CurrentEntries", "Database.DbCache.HighWaterMark", "Database.DbCache.Hits",
    "Database.DbCache.InitialDbOpens", "Database.DbCache.Lookups", "Database.DbCache.MaxEntries",
    "Database.DbCache.OvercrowdingRejections", "Database.BufferPool.Reads", "Database.BufferPool.Writes",
    "Database.*Pool.Used", "Database.*Pool.Peak",
    "Replica.Successful", "Replica.Failed", "Replica.Docs.*",
    "NET.*.BytesReceived", "NET.*.BytesSent",
    "*.Count", "*MBytes", "*.Megabytes", "*.KBFree",
)

# Statistics that are percentages of at most 100 (system-wide utilisation averaged over the CPUs, a ratio, the
# availability index "from 0 to 100").  A value of one of these whose separator is ambiguous (2,978) is read as
# a decimal (2.978): 2978 is not a possible value.  Per-process and per-disk percentages are not listed: on some
# platforms they exceed 100 (several CPUs; Windows' "% Disk Time").
PERCENT_STATISTICS = (
    "Server.AvailabilityIndex", "Platform.System.Pct*", "Platform.System.Total*Util", "Platform.Memory.RAM.PctUtil",
    "*.PerCent*",
)

_COUNT = re.compile("|".join(translate(p) for p in COUNT_STATISTICS), re.IGNORECASE)
_PERCENT = re.compile("|".join(translate(p) for p in PERCENT_STATISTICS), re.IGNORECASE)


def statistic_kind(name: str) -> str | None:
    """``"count"``, ``"percent"`` or None (nothing known) for a statistic name."""
    if _COUNT.fullmatch(name):
        return "count"
    if _PERCENT.fullmatch(name):
        return "percent"
    return None


def _kind_admits(kind: str | None, reading: Reading) -> bool:
    if kind == "count":
        return reading.decimal is None
    if kind == "percent":
        return abs(reading.value) <= 100
    return True


def parse_number(value: str, number_format: NumberFormat = AUTO, kind: str | None = None) -> float | None:
    """The number ``value`` holds, or None for text or when the reading is undecided: the one reading of
    :func:`number_readings` that fits ``kind`` (see :func:`statistic_kind`) and ``number_format``."""
    readings = number_readings(value)
    if len(readings) > 1:
        readings = [r for r in readings if _kind_admits(kind, r)] or readings
    readings = [r for r in readings if number_format.admits(r)]
    return readings[0].value if len(readings) == 1 else None


# --- lines ---------------------------------------------------------------------------------------------------------

# A line holding a control character (other than tab) is garbage, not output: NUL, escape sequences, C1 controls.
_GARBAGE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")

# Optional prefixes of console-log lines: a "[pid:tid-tid]" marker and a date and time (with AM/PM).
_PREFIX = re.compile(
    r"^(?:\[[0-9A-Fa-f]+:[0-9A-Fa-f]+(?:-[0-9A-Fa-f]+)?\][ \t]*)?"
    r"(?:[0-9]{1,4}[./-][0-9]{1,2}[./-][0-9]{1,4}[ \t]+[0-9]{1,2}:[0-9]{2}(?::[0-9]{2})?(?:[.,][0-9]+)?"
    r"(?:[ \t]*[AaPp][Mm])?[ \t]+)?"
)

# "<name> = <value>", with or without blanks around the "=" (Server.Task=Router: Idle).
_LINE = re.compile(r"(?P<name>[A-Za-z][A-Za-z0-9._\-/$]*)[ \t]*=(?P<value>.*)", re.ASCII)


@dataclass
class ShowStat:
    """What :func:`read_show_stat` read: ``values`` (name to number or text, in output order), ``unresolved``
    (names of values that look like numbers but were kept as text, with why: ``"ambiguous"``, two readings
    remain; ``"separators"``, no reading fits the configured convention) and ``number_format``, the convention
    used (configured, completed from the output)."""

    values: dict[str, float | str] = field(default_factory=dict)
    unresolved: dict[str, str] = field(default_factory=dict)
    number_format: NumberFormat = AUTO


def _lines(text: str) -> dict[str, str]:
    raw_values: dict[str, str] = {}
    for raw in iter_lines(text):
        if _GARBAGE.search(raw):
            continue
        line = _PREFIX.sub("", raw.strip().lstrip("\ufeff"), count=1).strip()
        match = _LINE.fullmatch(line)
        if match is None:
            continue
        name = match.group("name")
        if "." not in name or len(name) > MAX_NAME_LENGTH:
            continue
        raw_values[name] = match.group("value").strip()
    return raw_values


def _infer(all_readings: list[list[Reading]], base: NumberFormat) -> NumberFormat:
    """``base`` completed with what the output's unambiguous numbers show; ``base`` when they disagree."""
    groupings: set[str] = set()
    decimals: set[str] = set()
    for readings in all_readings:
        fitting = [r for r in readings if base.admits(r)]
        if len(fitting) == 1:
            if fitting[0].grouping is not None:
                groupings.add(fitting[0].grouping)
            if fitting[0].decimal is not None:
                decimals.add(fitting[0].decimal)
    if len(groupings) > 1 or len(decimals) > 1 or groupings & decimals:
        return base
    grouping = base.grouping if base.grouping is not None else next(iter(groupings), None)
    decimal = base.decimal if base.decimal is not None else next(iter(decimals), None)
    if grouping is not None and grouping == decimal:
        return base
    return NumberFormat(grouping, decimal)


def _contradicts(configured: NumberFormat, shown: NumberFormat) -> bool:
    """Whether the output's own numbers show a convention other than the configured one."""
    pairs = ((configured.grouping, shown.grouping), (configured.decimal, shown.decimal))
    return any(a is not None and b is not None and a != b for a, b in pairs) or \
        (configured.grouping is not None and configured.grouping == shown.decimal) or \
        (configured.decimal is not None and configured.decimal == shown.grouping)


def read_show_stat(output: str | bytes | bytearray, number_format: NumberFormat = AUTO) -> ShowStat:
    """Parse ``show stat`` output (text, or bytes decoded by :func:`decode_output`).

    Handled line shape (leading and trailing blanks, tabs and CRLF endings tolerated)::

        [[pid:tid-tid]] [<date> <time> [AM|PM]]  <Name> = <value>

    with any blanks (or none) around the ``=``: ``  Server.Users = 42``, ``Server.Task=Router: Idle``,
    ``Mem.Allocated =1,073,741,824``.  The name must start with an ASCII letter, hold only ASCII letters, digits
    and ``. _ - / $``, contain at least one ``.`` (statistics are ``Facility.Name``) and be at most
    :data:`MAX_NAME_LENGTH` characters; it is returned as printed (case kept).  The value is everything after the
    first ``=``, stripped.  Banners, prompts and echoed commands (``> show stat``), blank lines, lines without
    ``=``, log lines and garbage lines (control characters) are skipped; a line with an undecodable byte
    (U+FFFD) is kept.  When a name occurs more than once the last value wins.

    A value becomes a float when exactly one of its :func:`number_readings` remains after, in order: the
    statistic's kind (:func:`statistic_kind`; only when it has two readings), ``number_format`` (the configured
    convention), and the convention the output's own unambiguous numbers show (used only when they agree).
    When those numbers contradict the configured convention (``1.073.741.824`` with locale ``en``), the
    configuration is not trusted to decide a value with two readings either.  Otherwise it stays text; when it
    had readings it is listed in ``unresolved``.
    """
    text = decode_output(output) if isinstance(output, (bytes, bytearray)) else output
    raw_values = _lines(text)
    readings = {name: number_readings(value) for name, value in raw_values.items()}
    contradicted = _contradicts(number_format, _infer(list(readings.values()), AUTO))
    inferred = _infer(list(readings.values()), number_format)
    result = ShowStat(number_format=inferred)
    for name, value in raw_values.items():
        candidates = readings[name]
        if len(candidates) > 1:
            kind = statistic_kind(name)
            candidates = [r for r in candidates if _kind_admits(kind, r)] or candidates
        fitting = [r for r in candidates if number_format.admits(r)]
        if len(candidates) > 1 and contradicted:
            fitting = []
        chosen = [r for r in fitting if inferred.admits(r)] if len(fitting) > 1 else fitting
        if len(chosen) == 1:
            result.values[name] = chosen[0].value
            continue
        result.values[name] = value
        if candidates:
            result.unresolved[name] = "ambiguous" if fitting else "separators"
    return result


def parse_show_stat(output: str | bytes | bytearray, number_format: NumberFormat = AUTO) -> dict[str, float | str]:
    """The values of :func:`read_show_stat`: statistic name to number or text, in output order."""
    return read_show_stat(output, number_format).values
