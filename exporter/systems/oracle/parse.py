"""Pure functions for the file-system checks: the mount table as plain data, the mount a path lives on, and
mount options.  No I/O here, so the checks can be tested on any text."""

from __future__ import annotations

import os
import re
from typing import NamedTuple, Sequence

# The kernel writes space, tab, newline and backslash in /proc/mounts as three-digit octal escapes ("\040").
_OCTAL_ESCAPE = re.compile(r"\\([0-7]{3})")


class Mount(NamedTuple):
    source: str
    mountpoint: str
    fstype: str
    options: str


def _unescape(field: str) -> str:
    """Decode the kernel's octal escapes (hand-written: no library parses /proc/mounts from a given text)."""
    return _OCTAL_ESCAPE.sub(lambda m: chr(int(m.group(1), 8)), field)


def parse_mounts(text: str) -> list[Mount]:
    """The mounts of a /proc/mounts text, in file order; short lines are skipped."""
    mounts = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 4:
            mounts.append(Mount(_unescape(parts[0]), _unescape(parts[1]), parts[2], parts[3]))
    return mounts


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
