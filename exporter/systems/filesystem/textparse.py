"""Parsers for ``df`` and ``mount`` text as Solaris, HP-UX, AIX and Linux print it: pure functions from text to
rows in bytes, for the filesystem collector's text back-end (``text.py``).

Dialects are told apart by the header line alone (no banner is printed):

* ``Filesystem kbytes used avail %used|capacity Mounted on`` (HP-UX ``bdf``, Solaris ``df -k``), the POSIX
  ``1024-blocks Used Available Capacity`` (``df -kP``, OpenIndiana and AIX ``df -kP``) and GNU's ``1K-blocks Used
  Available Use%``: size, used and available.  Free (with root's reserve) is size - used, as these tools compute
  used from the free blocks; absent when the row says more is used than there is (ZFS datasets show size 0).
* The same followed by ``iused ifree %iuse`` (HP-UX ``bdf -i``) or ``iused ifree %iused`` (BSD and macOS
  ``df -k -i``): file nodes as well, files = iused + ifree and files_free = ifree.
* AIX's own ``Filesystem 512-blocks|1024-blocks|MB blocks|GB blocks Free %Used Iused %Iused Mounted on``
  (``df``, ``df -k``, ``df -m``, ``df -g``): size and free, no used column.  JFS/JFS2 keep no root reserve, so
  available is the same figure as free.  ``df -m``/``-g`` print MB/GB with two decimals: exported as printed
  times 2^20/2^30, so a ``-g`` figure can be off by up to 5 MiB (0.005 GiB; use ``df -k`` for exact bytes).
  File nodes: AIX prints the inodes used and the *whole* percentage used, which does not give the total exactly
  (13 % is anything from 12.5 to 13.5 %, a spread of some 8 % of the total), so files and files_free are absent.

A long device name makes HP-UX ``bdf``, Solaris and GNU ``df`` print the figures on the next, indented line;
the two lines are read as one.  A column printed as ``-`` (AIX's ``/proc``) is absent, never 0.  The mount point is
the rest of the line after the figures, so it keeps inner spaces.

Robustness as in ``host/textparse.py``: no regular expressions, at most :data:`MAX_LINES` lines of at most
:data:`MAX_LINE` characters; a line that fits nothing is skipped and counted; nothing raises.  Hand-written
because no maintained library reads these dialects (jc parses GNU df only).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import islice

from ...machine.numbers import decimal
from ...machine.textlines import first_line, iter_lines

MAX_LINES = 50_000  # df lines read; a longer output is refused rather than cut (mounts would vanish silently)
MAX_LINE = 4_096  # PATH_MAX: a device and a mount point fit; a longer line is skipped
MAX_MOUNT_LINES = 50_000
MAX_NUMBER = 32  # characters of one figure

KIB, MIB, GIB = 1024, 1 << 20, 1 << 30
# The size column's name (two tokens joined with a space for AIX's "MB blocks") -> bytes per unit.
SIZE_UNITS = {"kbytes": KIB, "1K-blocks": KIB, "1024-blocks": KIB, "512-blocks": 512, "MB blocks": MIB,
              "GB blocks": GIB}
USED = frozenset({"used", "Used"})
AVAIL = frozenset({"avail", "Available", "Avail"})
PERCENT = frozenset({"%used", "capacity", "Capacity", "Use%", "%Used"})
# The inode columns HP-UX ``bdf -i`` and BSD/macOS ``df -k -i`` print after the percentage.
INODES = (frozenset({"iused"}), frozenset({"ifree"}), frozenset({"%iuse", "%iused"}))
MONTHS = frozenset({"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"})


@dataclass(frozen=True)
class DfRow:
    """One mount as df printed it, in bytes; None where the column is ``-`` or the figure is not printed."""

    device: str
    mountpoint: str
    size: int | None
    free: int | None
    avail: int | None
    files: int | None = None  # iused + ifree where df prints both (HP-UX bdf -i, BSD/macOS df -i)
    files_free: int | None = None  # ifree


@dataclass
class DfReading:
    dialect: str | None = None  # "used-avail" (bdf, Solaris, POSIX, GNU), "used-avail-inodes" (bdf -i, BSD df -i)
    # or "aix" (AIX's own)
    unit: int | None = None  # bytes per unit of the figures
    rows: list[DfRow] = field(default_factory=list)
    skipped: int = 0  # lines after the header that fit nothing
    problem: str | None = None  # why nothing can be trusted (unknown header, output too long)


@dataclass(frozen=True)
class MountInfo:
    fstype: str
    options: str | None  # as printed (None: the format gives none); "ro"/"read only" make the mount read-only


def number(token: str) -> float | None:
    """A plain decimal number as df prints it (``12``, ``1.64``, ``-3``); None for anything else (``nan``, ``1e5``,
    ``1_0``, ``-``, ``.5``, ``5.``, non-ASCII digits): the strict reader (machine/numbers.py)."""
    return decimal(token, "-", max_length=MAX_NUMBER)


def _bytes(token: str, unit: int) -> int | None:
    value = number(token)
    if value is None or value < 0:
        return None
    if token.isdigit():
        return int(token) * unit  # exact past 2^53 bytes (8 PiB), where a float would round
    return int(round(value * unit))


def _header(toks: list[str]) -> tuple[str, int, int] | None:
    """(dialect, unit, number of fields before the mount point) from a header line, or None."""
    if len(toks) < 5 or toks[0] != "Filesystem" or toks[-2:] != ["Mounted", "on"]:
        return None
    cols = toks[1:-2]
    if len(cols) >= 2 and f"{cols[0]} {cols[1]}" in SIZE_UNITS:  # "MB blocks", "GB blocks"
        cols = [f"{cols[0]} {cols[1]}", *cols[2:]]
    unit = SIZE_UNITS.get(cols[0]) if cols else None
    if unit is None:
        return None
    rest = cols[1:]
    if len(rest) >= 3 and rest[0] in USED and rest[1] in AVAIL and rest[2] in PERCENT:
        if len(rest) == 3:
            return "used-avail", unit, 5
        if len(rest) == 6 and all(tok.lower() in names for tok, names in zip(rest[3:], INODES, strict=True)):
            return "used-avail-inodes", unit, 8
    if rest == ["Free", "%Used", "Iused", "%Iused"]:
        return "aix", unit, 6
    return None


def _figures_ok(fields: list[str], dialect: str) -> bool:
    """Whether the fields between the device and the mount point are figures (or ``-``)."""
    for i, tok in enumerate(fields):
        if tok == "-":
            continue
        percent = (dialect.startswith("used-avail") and i in (3, 6)) or (dialect == "aix" and i in (2, 4))
        if percent:
            if not tok.endswith("%") or number(tok[:-1]) is None:
                return False
        elif number(tok) is None:
            return False
    return True


def _row(line: str, dialect: str, unit: int, nfields: int) -> DfRow | None:
    parts = line.split(None, nfields)
    if len(parts) != nfields + 1:
        return None
    device, figures, mountpoint = parts[0], parts[1:nfields], parts[nfields].strip()
    if not mountpoint or not _figures_ok(figures, dialect):
        return None
    size = _bytes(figures[0], unit)
    if dialect == "aix":
        free = _bytes(figures[1], unit)
        return DfRow(device, mountpoint, size, free, free)
    used, avail = _bytes(figures[1], unit), _bytes(figures[2], unit)
    free = size - used if size is not None and used is not None and used <= size else None
    files = files_free = None
    if dialect == "used-avail-inodes":
        iused, ifree = _bytes(figures[4], 1), _bytes(figures[5], 1)
        if iused is not None and ifree is not None:
            files, files_free = iused + ifree, ifree
    return DfRow(device, mountpoint, size, free, avail, files, files_free)


def parse_df(text: object) -> DfReading:
    """The rows of a ``df``/``bdf`` output; ``problem`` set when the header is unknown or the output too long."""
    reading = DfReading()
    if not isinstance(text, str):
        reading.problem = "df: no output"
        return reading
    lines = list(islice(iter_lines(text), MAX_LINES + 1))
    if len(lines) > MAX_LINES:
        reading.problem = f"df: the output has more than {MAX_LINES:,} lines; not read (mounts would be missing)"
        return reading
    nfields = 0
    pending: str | None = None  # a device name alone on its line, its figures on the next
    for line in lines:
        if len(line) > MAX_LINE:
            reading.skipped += reading.dialect is not None
            pending = None
            continue
        toks = line.split()
        if not toks:
            continue
        if reading.dialect is None:
            found = _header(toks)
            if found is not None:
                reading.dialect, reading.unit, nfields = found
            continue
        if pending is not None:
            row = _row(f"{pending} {line.strip()}", reading.dialect, reading.unit, nfields)  # type: ignore[arg-type]
            pending = None
            if row is not None:
                reading.rows.append(row)
                continue
            reading.skipped += 1  # the lone name, whose figures did not follow
        if len(toks) == 1 and number(toks[0]) is None:
            pending = toks[0]
            continue
        row = _row(line, reading.dialect, reading.unit, nfields)  # type: ignore[arg-type]
        if row is None:
            reading.skipped += 1
        else:
            reading.rows.append(row)
    if pending is not None:
        reading.skipped += 1
    if reading.dialect is None:
        reading.problem = (f"df: no known header (first line: {first_line(text, 120)!r}); expected one of bdf, "
                           "bdf -i, df -k, df -kP, or AIX df -k/-m/-g")
    return reading


# ---- mount tables (file-system types and options) -----------------------------------------------------------
def _on_type(line: str) -> tuple[str, MountInfo] | None:
    """``dev on /mnt type fstype (opts)`` (Linux) or ``dev on /mnt type fstype opts on date`` (Solaris mount -v)."""
    on = line.find(" on ")
    typ = line.find(" type ", on + 1) if on >= 0 else -1
    if on < 0 or typ < 0:
        return None
    mountpoint = line[on + 4:typ].strip()
    rest = line[typ + 6:].split()
    if not mountpoint or not rest:
        return None
    options = rest[1].strip("()") if len(rest) > 1 else None
    return mountpoint, MountInfo(rest[0], options)


def _aix(toks: list[str]) -> tuple[str, MountInfo] | None:
    """AIX ``mount``: [node] mounted "mounted over" vfs Mon DD HH:MM [options]; the month finds the columns."""
    for i in range(2, min(len(toks), 6)):
        if toks[i] in MONTHS and i + 2 < len(toks):
            options = toks[i + 3] if i + 3 < len(toks) else None
            return toks[i - 2], MountInfo(toks[i - 1], options)
    return None


def _mount_p(toks: list[str]) -> tuple[str, MountInfo] | None:
    """``mount -p``: Solaris prints vfstab lines (special fsckdev mountp fstype pass automnt opts), HP-UX fstab
    lines (special mountp fstype opts freq pass)."""
    if len(toks) == 7 and toks[1] == "-" and toks[2].startswith("/"):
        return toks[2], MountInfo(toks[3], toks[6])
    if len(toks) == 6 and toks[1].startswith("/") and toks[4].isdigit() and toks[5].isdigit():
        return toks[1], MountInfo(toks[2], toks[3])
    return None


def parse_mount(text: object) -> dict[str, MountInfo]:
    """Mount point -> type and options from ``mount`` (Linux, AIX), ``mount -v`` (Solaris) or ``mount -p``
    (Solaris, HP-UX).  Lines that fit none of these (AIX's header, its dashes) are skipped."""
    table: dict[str, MountInfo] = {}
    if not isinstance(text, str):
        return table
    for line in islice(iter_lines(text), MAX_MOUNT_LINES):
        if len(line) > MAX_LINE:
            continue
        toks = line.split()
        if len(toks) < 3:
            continue
        found = _on_type(line) or _mount_p(toks) or _aix(toks)
        if found is not None:
            table[found[0]] = found[1]
    return table


def is_readonly(info: MountInfo) -> bool | None:
    """Read-only from the printed options; None when the format gave none."""
    if info.options is None:
        return None
    opts = info.options.replace("/", ",").split(",")
    return "ro" in opts or "read only" in info.options
