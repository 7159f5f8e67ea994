"""Parsers for the memory, paging-space and LPAR commands of the text back-end: HP-UX ``swapinfo``, AIX ``lsps -s``,
``svmon -G`` and ``lparstat``, Solaris ``swap -s``: pure functions from text to :class:`textparse.Reading` (bytes,
cores, shares 0-1).  The memory columns of ``vmstat`` and ``sar -r`` / ``sar -S`` are read with those tools in
``textparse.py``.

Units, as each tool prints them: ``swapinfo`` in the unit its first header line names (``Kb``, ``Mb`` with ``-m``,
``Gb`` with ``-g``; KiB, MiB, GiB); ``lsps -s`` a size with its unit (``45568MB``: MiB) and a whole percentage;
``svmon -G`` 4 KiB frames, or the unit of its ``Unit:`` line (``-O unit=KB|MB|GB``); ``swap -s`` KiB (``k``);
``lparstat`` cores (``ent``, ``physc``), percentages and ``mem=`` in MiB.  The same rules as ``textparse.py``:
figures found by their names, never by position alone; the strict number reader; bounded input; a line that fits
nothing is skipped; no input makes these functions raise; a figure the output does not give stays absent.
"""

from __future__ import annotations

from .textparse import Reading, _lines, _tokens, number

KIB = 1024
PAGE_4K = 4096  # AIX svmon / vmstat and HP-UX vmstat count 4 KiB pages (frames)
_SIZE_UNITS = {"KB": KIB, "MB": KIB ** 2, "GB": KIB ** 3, "TB": KIB ** 4}  # AIX prints binary units as "MB"
_SWAPINFO_UNITS = {"Kb": KIB, "Mb": KIB ** 2, "Gb": KIB ** 3}
PAGING_AREAS = frozenset({"dev", "fs", "localfs", "network"})  # swapinfo rows of paging space on disk


def _size(token: str) -> float | None:
    """``45568MB``, ``4GB``: a number of binary units (lsps, lparstat mem=)."""
    scale = _SIZE_UNITS.get(token[-2:].upper()) if len(token) > 2 else None
    value = number(token[:-2]) if scale else None
    return None if value is None or value < 0 else value * scale  # type: ignore[operator]


def _done(reading: Reading, section: str) -> Reading:
    if reading.memory or reading.swap or reading.virtual_swap or reading.lpar or reading.lpar_info:
        reading.sections.append(section)
        reading.samples = 1
    return reading


# ---- HP-UX swapinfo -------------------------------------------------------------------------------------------
def parse_swapinfo(text: object, platform: str | None = None) -> Reading:
    """HP-UX ``swapinfo -tam`` (or ``-t``, ``-m``): the paging areas on disk (``dev``, ``fs``, ``localfs``,
    ``network`` rows) give the swap space (``swap``: total, used); all rows, pseudo-swap (``memory``) and the
    reservations (``reserve``) with them, give the virtual swap that a process's reservation draws on
    (``virtual_swap``: total, available), taken from the ``total`` row where ``-t`` printed one."""
    reading = Reading(platform=platform or "hpux")
    scale: float | None = None
    header: list[str] | None = None
    areas = [0.0, 0.0]  # AVAIL, USED of the paging areas
    rows = [0.0, 0.0]  # AVAIL, USED of every row (what the total row says)
    total: tuple[float, float] | None = None
    seen_area = False
    for line in _lines(text).lines:
        toks = _tokens(line)
        if not toks:
            continue
        if all(t in _SWAPINFO_UNITS or t in ("PCT", "START/") for t in toks) and toks[0] in _SWAPINFO_UNITS:
            scale, header = _SWAPINFO_UNITS[toks[0]], None
            continue
        if toks[:4] == ["TYPE", "AVAIL", "USED", "FREE"]:
            header = toks
            continue
        if scale is None or header is None or len(toks) < 4:
            continue
        kind = toks[0]
        avail = 0.0 if toks[1] == "-" and kind == "reserve" else number(toks[1])
        used = number(toks[2])
        if avail is None or used is None or avail < 0 or used < 0:
            continue
        if kind == "total":
            total = (avail * scale, used * scale)
        elif kind in PAGING_AREAS or kind in ("reserve", "memory"):
            rows[0] += avail * scale
            rows[1] += used * scale
            if kind in PAGING_AREAS:
                seen_area = True
                areas[0] += avail * scale
                areas[1] += used * scale
    if scale is None or header is None or not (seen_area or total is not None or rows[0]):
        return reading
    if seen_area:
        reading.swap = {"total": areas[0], "used": areas[1]}
    avail, used = total if total is not None else (rows[0], rows[1])
    reading.virtual_swap = {"total": avail, "available": max(avail - used, 0.0)}
    return _done(reading, "swap")


# ---- AIX lsps -s -----------------------------------------------------------------------------------------------
def parse_lsps(text: object, platform: str | None = None) -> Reading:
    """AIX ``lsps -s``: ``Total Paging Space`` (``45568MB``) and ``Percent Used`` (a whole percentage, so the
    used space is known to 1 % of the total)."""
    reading = Reading(platform=platform or "aix")
    after_header = False
    for line in _lines(text).lines:
        toks = _tokens(line)
        if not toks:
            continue
        if toks[:3] == ["Total", "Paging", "Space"]:
            after_header = True
            continue
        if not after_header or len(toks) != 2 or not toks[1].endswith("%"):
            continue
        total, percent = _size(toks[0]), number(toks[1][:-1])
        if total is None or percent is None or not 0 <= percent <= 100:
            continue
        reading.swap = {"total": total, "used": total * percent / 100}
    return _done(reading, "swap")


# ---- AIX svmon -G ----------------------------------------------------------------------------------------------
def parse_svmon(text: object, platform: str | None = None) -> Reading:
    """AIX ``svmon -G``: the ``memory`` row (``size``, ``free``, and ``available`` where AIX 6.1 and later print
    it) and the ``pg space`` row (``size``, ``inuse``), in 4 KiB frames unless a ``Unit:`` line says otherwise."""
    reading = Reading(platform=platform or "aix")
    scale = float(PAGE_4K)
    header: list[str] | None = None
    for line in _lines(text).lines:
        toks = _tokens(line)
        if not toks:
            continue
        if toks[0] == "Unit:" and len(toks) == 2:
            unit = _SIZE_UNITS.get(toks[1].upper() + ("B" if len(toks[1]) == 1 else ""))
            if unit is None:
                return reading  # a unit not known here (pages of another size): nothing rather than a guess
            scale = float(unit)
            continue
        if toks[0] == "size" and "inuse" in toks:
            header = toks
            continue
        if header is None:
            continue
        if toks[0] == "memory":
            values = _named(header, toks[1:])
            if "size" in values:
                reading.memory["total"] = values["size"] * scale
            if "free" in values:
                reading.memory["free"] = values["free"] * scale
            if "available" in values:
                reading.memory["available"] = values["available"] * scale
        elif toks[:2] == ["pg", "space"]:
            values = _named(header, toks[2:])
            if "size" in values and "inuse" in values and values["inuse"] <= values["size"]:
                reading.swap = {"total": values["size"] * scale, "used": values["inuse"] * scale}
            header = None  # the tables below (work/pers/clnt, PageSize) have other columns
    return _done(reading, "memory")


def _named(header: list[str], values: list[str]) -> dict[str, float]:
    """The fields of a row under its header's names (svmon leaves trailing columns empty, and ``mmode`` is a
    word); a row with anything else than a number under another name is not read at all."""
    out: dict[str, float] = {}
    for name, token in zip(header, values, strict=False):
        if name == "mmode":
            continue
        value = number(token)
        if value is None or value < 0:
            return {}
        out[name] = value
    return out


# ---- Solaris swap -s -------------------------------------------------------------------------------------------
def parse_swap(text: object, platform: str | None = None) -> Reading:
    """Solaris ``swap -s``: ``total: 800296k bytes allocated + 181784k reserved = 982080k used, 6014528k
    available`` (KiB): the virtual swap (disk swap and the memory that backs it), used (allocated + reserved) and
    available; its total is their sum."""
    reading = Reading(platform=platform or "solaris")
    for line in _lines(text).lines:
        toks = _tokens(line)
        if not toks or toks[0] != "total:":
            continue
        named: dict[str, float] = {}
        for value, word in zip(toks, toks[1:], strict=False):
            word = word.rstrip(",")
            if word in ("used", "available") and value.endswith("k"):
                amount = number(value[:-1])
                if amount is not None and amount >= 0:
                    named[word] = amount * KIB
        if len(named) == 2:
            reading.virtual_swap = {"total": named["used"] + named["available"], "available": named["available"]}
    return _done(reading, "swap")


# ---- AIX lparstat ----------------------------------------------------------------------------------------------
LPAR_INFO = ("type", "mode", "smt")  # the configuration words exported as labels of lpar_info


def parse_lparstat(text: object, platform: str | None = None) -> Reading:
    """AIX ``lparstat <interval> <count>``: the ``System configuration:`` line (``type``, ``mode``, ``smt``,
    ``ent`` in cores, ``mem`` in MiB) and the last row under ``%user ... physc %entc ...``: the physical cores
    consumed and the share of the entitlement consumed (above 1 on an uncapped LPAR that borrows from the
    pool).  Without an interval lparstat prints the average since boot; give one (``lparstat 5 1``)."""
    reading = Reading(platform=platform or "aix")
    header: list[str] | None = None
    last: dict[str, float] | None = None
    for line in _lines(text).lines:
        toks = _tokens(line)
        if not toks:
            continue
        if toks[:2] == ["System", "configuration:"]:
            _lpar_configuration(reading, toks[2:])
            header = None
            continue
        if "%user" in toks and "%idle" in toks:
            header = toks
            continue
        if header is None or len(toks) != len(header):
            continue
        values = [number(t) for t in toks]
        if any(v is None or v < 0 for v in values):
            continue
        last = dict(zip(header, values, strict=True))  # type: ignore[arg-type]
    if last is not None:
        if "physc" in last:
            reading.lpar["physical_cores"] = last["physc"]
        if "%entc" in last:
            reading.lpar["entitlement_consumed"] = last["%entc"] / 100
    return _done(reading, "lpar")


def _lpar_configuration(reading: Reading, pairs: list[str]) -> None:
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not value:
            continue
        if key in LPAR_INFO and value.isascii() and value.replace("-", "").replace("_", "").isalnum():
            reading.lpar_info[key] = value
        elif key == "ent":
            cores = number(value)
            if cores is not None and cores >= 0:
                reading.lpar["entitled_cores"] = cores
        elif key == "mem":
            size = _size(value)  # "mem=24576MB"; a bare number names no unit and is left out
            if size is not None:
                reading.memory["total"] = size
