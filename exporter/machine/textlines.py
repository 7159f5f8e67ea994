"""Lines of a command's output without a list of all of them.

A flooding command leaves up to ``max_output`` (4 MiB) of text; ``text.splitlines()`` turns that into some 70,000
small strings alive at once, which fill Python's small-object arenas, and objects other threads allocate meanwhile
pin those arenas, so resident memory crept up run after run (docs/reliability.md). ``iter_lines`` yields the same
lines as ``str.splitlines`` a chunk at a time instead, and of bytes (raw output a parser decodes line by line, such
as Domino's ``show stat``) the lines of ``bytes.splitlines``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import AnyStr

CHUNK = 64 * 1024


def iter_lines(text: AnyStr, keepends: bool = False, chunk: int = CHUNK) -> Iterator[AnyStr]:
    """Exactly ``text.splitlines(keepends)``, lazily, for ``str`` and ``bytes`` alike: each chunk ends just after a
    newline (or at the end of the text), so it always ends a line and ``\\r\\n`` is never cut in two; splitting
    chunk by chunk gives the same lines as splitting the whole."""
    if isinstance(text, (bytes, bytearray)):
        newline = b"\n"
    elif isinstance(text, str):
        newline = "\n"
    else:
        raise TypeError(f"iter_lines takes str or bytes, not {type(text).__name__}")
    size = len(text)
    if size <= chunk:
        yield from text.splitlines(keepends)
        return
    start = 0
    while start < size:
        cut = text.find(newline, start + chunk)
        end = size if cut < 0 else cut + 1
        yield from text[start:end].splitlines(keepends)
        start = end


# Characters no text holds: control characters (but tab, line and page breaks, and ESC, which colours terminal
# output), U+FFFD (a byte that was not UTF-8).
_UNPRINTABLE = re.compile(r"[\x00-\x08\x0e-\x1a\x7f-\x84\x86-\x9f\ufffd]")
BINARY = "(binary output)"


def is_binary(text: str, window: int = 512) -> bool:
    """Whether the start of a command's decoded output is binary rather than text: at least 3 unprintable characters
    and 5% of the first ``window`` characters (a text with one odd byte, a Latin-1 letter read as UTF-8, is text)."""
    head = text[:window]
    count = len(_UNPRINTABLE.findall(head))
    return count >= 3 and count * 20 >= len(head)


def first_line(text: str, limit: int = 200) -> str:
    """The first line with something on it, stripped and cut to ``limit`` characters ('' if none), without
    splitting the rest of the text.  Output that is binary (:func:`is_binary`) gives ``(binary output)``: its
    "first line" would be random characters, different on every run, in every error text and log line."""
    if is_binary(text):
        return BINARY
    for line in iter_lines(text):
        stripped = line.strip()
        if stripped:
            return stripped[:limit]
    return ""
