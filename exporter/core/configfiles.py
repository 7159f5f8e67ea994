"""The files the configuration names (the configuration file itself, password files, custom-metrics TOML files,
query files, the web configuration and its TLS files), read so that none can hang or exhaust the exporter, and
what is parsed from them bounded in depth and size.

:func:`read_file` refuses what is not a regular file without blocking on it: a FIFO given as ``password_file``
made ``check-config`` wait for ever for a writer, and a FIFO as a ``custom_metrics`` file kept ``run`` from ever
listening (issue 38).  The path is checked with ``stat`` before it is opened (opening a device can act on it: a
tape rewinds, a terminal becomes the controlling one) and again with ``fstat`` on the descriptor, opened with
``O_NONBLOCK`` (so that a FIFO swapped in between the two opens at once instead of waiting for a writer, and is
refused by the second check).

The stat, open and read run in a daemon thread the caller stops waiting for after ``timeout``: a file on a hung
NFS or FUSE mount blocks its reader in the kernel, where not even SIGKILL reaches it until the server answers, so
that read must never be the main thread's (nor a collection's beyond the deadline).  The error names the setting
and the path; while an abandoned read of a path has not returned, that path is refused at once instead of being
read again, so a hung file costs one thread, not one per attempt.

:func:`check_shape` bounds what a parser built: YAML aliases (``&a``/``*a``) let a few lines stand for a
billion values ("billion laughs") or for a value that contains itself, and a deeply nested file otherwise
fails deep in a recursive walk with "maximum recursion depth exceeded" and no file name.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from typing import Any

from ..machine.deadline import current_scope

FILE_TIMEOUT = 5.0  # seconds; a local file answers in microseconds, a healthy NFS mount in milliseconds
MAX_FILE_BYTES = 16 * 1024 * 1024  # far above any configuration file this exporter reads
MAX_DEPTH = 64  # nesting levels of a parsed file (the deepest configuration key is under 10)
MAX_VALUES = 1_000_000  # values of a parsed file, counting each use of a YAML alias again
# What a parser's RecursionError means, for the messages that name the file.
NESTED_TOO_DEEPLY = "nested too deeply for the parser (hundreds of levels of brackets or indentation)"

_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a directory"))


class UnreadableFile(ValueError):
    """A configured file that cannot be read; the message names the setting and the path, never the content."""

    def __init__(self, what: str, path: str | os.PathLike[str], problem: str, refused: bool = False,
                 hung: bool = False) -> None:
        super().__init__(f"cannot read {what} {os.fspath(path)}: {problem}")
        self.what, self.path, self.problem = what, os.fspath(path), problem
        # refused: not a regular file, or too large: wrong whenever it is read (unlike a file missing for now);
        # hung: no answer within the deadline, or an earlier read still waits for one
        self.refused, self.hung = refused, hung


def _kind(mode: int) -> str | None:
    """Why a file of this mode is refused, or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    for test, name in _KINDS:
        if test(mode):
            return f"{name}, not a regular file"
    return "not a regular file"


def _read(path: str, max_bytes: int) -> bytes | str:
    """The file's bytes, or the reason it is refused (a str)."""
    kind = _kind(os.stat(path).st_mode)
    if kind:
        return kind
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        kind = _kind(os.fstat(fd).st_mode)
        if kind:  # replaced between the stat and the open
            return kind
        os.set_blocking(fd, True)
        chunks, size = [], 0
        while size <= max_bytes:
            chunk = os.read(fd, min(1024 * 1024, max_bytes + 1 - size))
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            size += len(chunk)
        return f"larger than {max_bytes} bytes"
    finally:
        os.close(fd)


class _Read:
    __slots__ = ("done", "value", "error", "started", "abandoned")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: bytes | str | None = None
        self.error: Exception | None = None
        self.started = time.monotonic()
        self.abandoned = False


_lock = threading.Lock()
_hung: dict[str, _Read] = {}  # path -> a read its caller gave up on and which has not returned yet


def _run(path: str, max_bytes: int, read: _Read) -> None:
    try:
        read.value = _read(path, max_bytes)
    except (OSError, ValueError) as exc:  # ValueError: a path with a NUL byte
        read.error = exc
    finally:
        with _lock:
            read.done.set()
            if _hung.get(path) is read:
                del _hung[path]


def read_file(path: str | os.PathLike[str], what: str, timeout: float = FILE_TIMEOUT,
              max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of the configured file ``path``, read in a daemon thread under ``timeout``; :class:`UnreadableFile`
    naming ``what`` (the setting: ``password_file``, ``custom_metrics file``, ...) and the path when it is missing,
    not a regular file, larger than ``max_bytes``, does not answer in time, or an earlier read of it still hangs."""
    name = os.fspath(path)
    scope = current_scope()
    left = scope.remaining() if scope is not None else None
    if left is not None:  # inside a bounded call (a collection): never past its deadline
        timeout = min(timeout, left)
    with _lock:
        earlier = _hung.get(name)
        if earlier is not None:
            raise UnreadableFile(what, name, f"an earlier read has not returned for "
                                             f"{time.monotonic() - earlier.started:.0f}s (a hung mount?); not read "
                                             "again until it does", hung=True)
        read = _Read()
    threading.Thread(target=_run, args=(name, max_bytes, read), daemon=True, name="read-config-file").start()
    if not read.done.wait(timeout):
        with _lock:
            if not read.done.is_set():
                read.abandoned = True
                _hung[name] = read
        if read.abandoned:
            raise UnreadableFile(what, name, f"no answer within {timeout:g}s (a hung mount?)", hung=True)
    if read.error is not None:
        raise UnreadableFile(what, name, getattr(read.error, "strerror", None) or str(read.error)
                             or type(read.error).__name__)
    if isinstance(read.value, str):
        raise UnreadableFile(what, name, read.value, refused=True)
    assert read.value is not None
    return read.value


def check_regular_file(path: str | os.PathLike[str], what: str, timeout: float = FILE_TIMEOUT) -> None:
    """For a file a library opens by name (a TLS certificate and key): refuse it as :func:`read_file` would, without
    keeping its bytes."""
    read_file(path, what, timeout)


def check_shape(data: Any, where: str, max_depth: int = MAX_DEPTH, max_values: int = MAX_VALUES) -> None:
    """ValueError naming ``where`` (the file) when ``data`` (parsed from it) nests deeper than ``max_depth`` or holds
    more than ``max_values`` values, counting every use of a YAML alias again.  Walked without recursion, and
    stopped at the first bound crossed, so that the check itself is bounded."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    values = 0
    while stack:
        node, depth = stack.pop()
        values += 1
        if values > max_values:
            raise ValueError(f"{where}: more than {max_values} values (YAML aliases repeating a part over and "
                             "over?); refused")
        if isinstance(node, dict):
            children = list(node.values())
        elif isinstance(node, (list, tuple)):
            children = list(node)
        else:
            continue
        if children and depth >= max_depth:
            raise ValueError(f"{where}: nested more than {max_depth} levels deep (or a YAML alias that contains "
                             "itself); refused")
        stack.extend((child, depth + 1) for child in children)
