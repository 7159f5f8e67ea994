"""What the advice rows of every system share: the guide titles cited by more than one system and the formatting
of figures for people (sizes, shares, counts, durations)."""

from __future__ import annotations

import math

MIB = 1024 * 1024
HPOM_GUIDE = "HP Operations Manager for UNIX 8.21/8.30 Performance Guide"


def size(value: float | None) -> str:
    """Bytes for people: 64 KiB, 20 MiB, 15.6 GiB."""
    if value is None:
        return "-"
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(value) >= scale:
            figure = value / scale
            return f"{figure:.0f} {unit}" if figure == int(figure) or figure >= 100 else f"{figure:.1f} {unit}"
    return f"{value:.0f} B"


def sizes(value: float, limit: float | None) -> tuple[str, str]:
    """Two sizes compared with each other, with as many digits as it takes for the texts to differ when the values
    do: "1.2 GiB against 1.2 GiB" must not hide the borderline that decides the status."""
    if limit is None or value == limit or size(value) != size(limit):
        return size(value), size(limit)
    for digits in (2, 3):
        for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
            if max(abs(value), abs(limit)) >= scale:
                a, b = f"{value / scale:.{digits}f} {unit}", f"{limit / scale:.{digits}f} {unit}"
                if a != b:
                    return a, b
                break
    return f"{value:,.0f} bytes", f"{limit:,.0f} bytes"


def percent(share: float, *edges: float) -> str:
    """A share as a percentage, with a decimal where the whole number would land on an edge that decides."""
    text = f"{share:.0%}"
    if share not in edges and any(text == f"{edge:.0%}" for edge in edges):
        text = f"{share:.1%}" if f"{share:.1%}" not in {f"{e:.1%}" for e in edges} else f"{share:.3%}"
    return text


def count(value: float) -> str:
    return f"{value:,.0f}" if value == int(value) else f"{value:,.2f}"


def duration(seconds: float) -> str:
    """A window for people: 45 s, 12 min, 6 h, 2.5 d."""
    for unit, scale in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= scale:
            figure = seconds / scale
            return f"{figure:.0f} {unit}" if figure == int(figure) or figure >= 10 else f"{figure:.1f} {unit}"
    return f"{seconds:.0f} s" if seconds >= 1 else "second"


def mb_up(value: float) -> int:
    """Bytes rounded up to whole MiB."""
    return int(math.ceil(value / MIB))
