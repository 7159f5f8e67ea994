"""Lines of a command's output without a list of all of them.

A flooding command leaves up to ``max_output`` (4 MiB) of text; ``text.splitlines()`` turns that into some 70,000
small strings alive at once, which fill Python's small-object arenas, and objects other threads allocate meanwhile
pin those arenas, so resident memory crept up run after run (docs/reliability.md). ``iter_lines`` yields the same
lines as ``str.splitlines`` a chunk at a time instead.
"""

from __future__ import annotations

from collections.abc import Iterator

CHUNK = 64 * 1024


def iter_lines(text: str, keepends: bool = False, chunk: int = CHUNK) -> Iterator[str]:
    """Exactly ``text.splitlines(keepends)``, lazily: each chunk ends just after a ``\\n`` (or at the end of the
    text), so it always ends a line and ``\\r\\n`` is never cut in two; splitting chunk by chunk gives the same
    lines as splitting the whole."""
    size = len(text)
    if size <= chunk:
        yield from text.splitlines(keepends)
        return
    start = 0
    while start < size:
        cut = text.find("\n", start + chunk)
        end = size if cut < 0 else cut + 1
        yield from text[start:end].splitlines(keepends)
        start = end


def first_line(text: str, limit: int = 200) -> str:
    """The first line with something on it, stripped and cut to ``limit`` characters ('' if none), without
    splitting the rest of the text."""
    for line in iter_lines(text):
        stripped = line.strip()
        if stripped:
            return stripped[:limit]
    return ""
