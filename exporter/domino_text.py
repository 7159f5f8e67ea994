"""Parsing the text output of the HCL (formerly IBM/Lotus) Domino server console command ``show stat``.

A pure function, no I/O: the Domino collector runs the command and hands its decoded output here, so the parser is
tested on recorded text (``tests/fixtures/domino/``).  It is defensive: anything that is not a statistic line is
skipped, and a line holding a NUL, another control character or U+FFFD (bytes decoded with ``errors="replace"``)
is skipped whole.

Format facts (from public material, consulted through a search index; no code or prose copied):

* ``show stat`` with no argument lists every statistic; ``show stat <name>`` shows one and ``show stat <group>``
  or ``show stat Disk.C.*`` a subset (``*`` as wildcard).  Source: HCL Domino administration help, "Show Stat"
  (help.hcl-software.com/domino/.../admin/admn_showstat_r.html, 11.0.1 and 14.0.0 pages).
* One statistic per line, ``<Facility>.<Name...> = <value>``: dotted names such as ``Server.Users``,
  ``Server.Trans.PerMinute``, ``Mail.Waiting``, ``Database.DbCache.Hits``, ``Platform.Memory.RAM.TotalMBytes``,
  ``Server.Version.Notes``; on the console the lines are indented and follow the echoed command after the
  ``> `` prompt (``> show stat object``), while ordinary log lines around them start with a date and time
  (``dd.mm.yy hh:mm:ss`` there, a Russian-locale server).  Source: a console transcript of ``show stat object``
  on saw.forekc.ru (a Lotus Notes 4.1x / Domino 4.5 administration book, page on shared-mail statistics).
  Public scripts on GitHub take the digits after "<name> =" with optional blanks around the "=" (a PowerShell
  collector running ``nserver -c "show stat Server.Sessions.Dropped >file"``), or split "name = value" lines at
  the first "=" and remove "," from ``Mem.Free``, ``Mem.PhysicalRAM`` and ``Disk.*.Free``/``Size`` before
  converting them (a Java Domino monitor reading the same "name = value" strings from Domino's SNMP agent), i.e.
  large numbers carry thousands separators.  Public code names the RAM statistics
  ``Platform.Memory.RAM.TotalMBytes``/``AvailMBytes``/``PctUtil`` (the brief's ``TotalMB`` was not found).
* A name may occur more than once: ``Server.Task = <task>:<status>...`` is printed once per running task
  (VitalSigns documentation quoting ``show stat server.task`` output, GitHub).  Values can be text (task status
  strings, ``Server.Version.Notes``, ``Server.Name``, ``TRUE`` for ``*.Server.Running`` in the SNMP-fed
  monitor), numbers, or a date and time.
* Facility names are not printed in one consistent case: HCL's "Show Stat Mail" page lists both
  ``Mail.MessageCache.Memory.Peak`` and ``MAIL.MessageCache.Memory.Current``, and a Java monitor matches
  ``MAIL.Dead``/``MAIL.Waiting`` next to ``Mail.AverageDeliverTime`` (help.hcl-software.com/domino/12.0.2/admin/
  admn_showstatmail_r.html).  Names are therefore returned as printed; callers match them case-insensitively.
* Statistic names can embed a path (``Object.mail\\shared.nsf.SharedBy.01`` on Windows in the transcript above;
  ``Disk./local.Free`` for a Linux mount point comes from the project's brief, not from a recorded server).
  Names holding a backslash (or any character outside ``A-Z a-z 0-9 . _ - / $``) are skipped.
* ``server -c "<command>"`` (Linux/UNIX) hands a command to the running server from the shell; it must be run
  from the data directory (the Domino container entrypoint and Nash!Com start script do ``cd $DOMINO_DATA_PATH``
  first, HCL-TECH-SOFTWARE/domino-container).  Whether the command's output comes back on that process's stdout
  could not be confirmed from public text: the start script's ``cmd`` action issues the command and then shows
  the last lines of the server's console log after waiting 5 seconds (rc_domino_readme.txt, same repository), and
  the PowerShell collector above redirects inside the console command (``show stat X >file``) and polls for the
  file.  The parser therefore also accepts console-log shaped text: prompt/echo lines, banners, timestamped log
  lines and ``[pid:tid-tid]`` prefixes are tolerated (the last two as a precaution, not from a recorded server).

Numbers: a value is a number when, after an optional sign and before an optional ``%`` or one trailing unit word
(``MB``, ``sec``, ``KB/s``), the whole value is digits with separators, or plain digits with an optional ``.``
decimal point and an exponent (``1.5E+03``).  The separator rule (documented here because locales differ, and
``,``, ``.`` and spaces are all used):

* Space-like separators (space, no-break space U+00A0, narrow no-break space U+202F, thin space U+2009) only ever
  group thousands.
* When the last ``,`` or ``.`` occurs exactly once and some other separator precedes it, it is the decimal mark
  (``1,234,567.8``, ``1.234.567,8``, ``1 234,5``).
* A lone ``.`` is always a decimal point (``98.7`` is 98.7, ``1.234`` is 1.234); a ``.`` that occurs twice or more
  groups thousands (``1.234.567`` is 1234567).
* A lone ``,`` followed by exactly three digits groups thousands when the part before it is 1 to 3 digits and not
  zero (``1,234`` is 1234); otherwise it is a decimal comma (``98,7`` is 98.7, ``0,125`` is 0.125).
* Grouped digits must be well formed: 1 to 3 digits, then groups of exactly 3, one grouping character throughout,
  different from the decimal mark.  Anything else (``1,23,456``, ``12.0.2``) is kept as text.

The value is kept as printed otherwise: no unit conversion (``16,384 MB`` gives 16384, ``62.5%`` gives 62.5).
"""

from __future__ import annotations

import math
import re

__all__ = ["MAX_NAME_LENGTH", "parse_number", "parse_show_stat"]

# Longer names are skipped: no statistic is this long, and a label value should not be either.
MAX_NAME_LENGTH = 200

# A line holding a control character (other than tab) or U+FFFD is garbage, not output.
_GARBAGE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\ufffd]")

# Optional prefixes of console-log lines: a "[pid:tid-tid]" marker and a date and time (with AM/PM).
_PREFIX = re.compile(
    r"^(?:\[[0-9A-Fa-f]+:[0-9A-Fa-f]+(?:-[0-9A-Fa-f]+)?\][ \t]*)?"
    r"(?:[0-9]{1,4}[./-][0-9]{1,2}[./-][0-9]{1,4}[ \t]+[0-9]{1,2}:[0-9]{2}(?::[0-9]{2})?(?:[.,][0-9]+)?"
    r"(?:[ \t]*[AaPp][Mm])?[ \t]+)?"
)

# "<name> = <value>": whitespace before the "=", whitespace or the end of the line after it.
_LINE = re.compile(r"(?P<name>[A-Za-z][A-Za-z0-9._\-/$]*)[ \t]+=(?:[ \t]+(?P<value>.*))?", re.ASCII)

_SPACES = " \u00a0\u202f\u2009"
_NUMBER = re.compile(
    r"(?P<sign>[-+])?"
    r"(?P<body>[0-9](?:[0-9.," + _SPACES + r"]*[0-9])?)"
    r"(?P<exp>[eE][-+]?[0-9]+)?"
    r"(?:[ \t]*(?P<suffix>%|[A-Za-z]+(?:/[A-Za-z]+)?))?"
)


def _plain_digits(body: str) -> str | None:
    """``body`` (digits and separators) as plain digits with an optional ``.`` decimal point, or None."""
    parts = re.split(r"([^0-9])", body)
    groups, seps = parts[0::2], parts[1::2]
    if not seps:
        return body
    if any(not group for group in groups):
        return None  # two separators in a row
    kinds = ["space" if sep in _SPACES else sep for sep in seps]
    last = kinds[-1]
    decimal = False
    if last in (",", ".") and kinds.count(last) == 1:
        if len(kinds) > 1 or last == ".":
            decimal = True
        else:  # a lone comma
            thousands = len(groups[1]) == 3 and len(groups[0]) <= 3 and groups[0].strip("0") != ""
            decimal = not thousands
    int_groups, group_kinds = (groups[:-1], kinds[:-1]) if decimal else (groups, kinds)
    if group_kinds:
        if len(set(group_kinds)) != 1 or (decimal and group_kinds[0] == last):
            return None
        if not 1 <= len(int_groups[0]) <= 3 or any(len(g) != 3 for g in int_groups[1:]):
            return None
    digits = "".join(int_groups)
    return f"{digits}.{groups[-1]}" if decimal else digits


def parse_number(value: str) -> float | None:
    """The number a ``show stat`` value holds (see the module docstring for the rule), or None for text."""
    match = _NUMBER.fullmatch(value.strip())
    if match is None:
        return None
    body, exp = match.group("body"), match.group("exp") or ""
    if exp and not re.fullmatch(r"[0-9]+(?:\.[0-9]+)?", body):
        return None  # an exponent only after plain digits with an optional decimal point
    digits = _plain_digits(body)
    if digits is None:
        return None
    number = float((match.group("sign") or "") + digits + exp)
    return number if math.isfinite(number) else None


def parse_show_stat(text: str) -> dict[str, float | str]:
    """Parse ``show stat`` output into a dict of statistic name to value, in output order.

    Handled line shape (leading and trailing blanks, tabs and CRLF endings tolerated)::

        [[pid:tid-tid]] [<date> <time> [AM|PM]]  <Name> = <value>

    e.g. ``  Server.Users = 42``, ``Mem.Allocated = 1,073,741,824``, ``Server.Version.Notes = Release 12.0.2``.
    The name must start with an ASCII letter, hold only ASCII letters, digits and ``. _ - / $``, contain at least
    one ``.`` (statistics are ``Facility.Name``) and be at most :data:`MAX_NAME_LENGTH` characters; it is returned
    as printed (case kept).  The value is everything after the first ``" = "``, stripped; it becomes a float when
    :func:`parse_number` reads it as a number, else it is kept as text (an empty value gives ``""``).  Banners,
    prompts and echoed commands (``> show stat``), blank lines, lines without ``" = "`` (``Name=value`` too),
    log lines and garbage lines (control characters, U+FFFD) are skipped.  When a name occurs more than once the
    last value wins.
    """
    stats: dict[str, float | str] = {}
    for raw in text.splitlines():
        if _GARBAGE.search(raw):
            continue
        line = _PREFIX.sub("", raw.strip().lstrip("\ufeff"), count=1).strip()
        match = _LINE.fullmatch(line)
        if match is None:
            continue
        name = match.group("name")
        if "." not in name or len(name) > MAX_NAME_LENGTH:
            continue
        value = (match.group("value") or "").strip()
        number = parse_number(value)
        stats[name] = number if number is not None else value
    return stats
