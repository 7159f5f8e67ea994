"""Running external commands (``opcsv -status``, ``runmqsc``, ``show stat`` wrappers, ...) safely.

* never through a shell: the command is an argument list;
* a timeout that kills the command's whole process group, so a hung child cannot outlive it;
* stdin closed, output capped (a runaway command cannot eat the exporter's memory);
* a clear :class:`CommandError` for a missing binary, a timeout or a non-zero exit.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import Mapping, Sequence

DEFAULT_MAX_OUTPUT = 4 * 1024 * 1024


class CommandError(Exception):
    """The command could not be run, timed out, or failed."""


class CommandNotFound(CommandError):
    pass


class CommandTimeout(CommandError):
    pass


@dataclass(frozen=True)
class CommandResult:
    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    duration: float
    truncated: bool
    stdout_bytes: bytes = b""  # as the command wrote it, for parsers that decode other code pages themselves


def run_command(
    argv: Sequence[str],
    timeout: float,
    *,
    env: Mapping[str, str] | None = None,
    input_text: str | None = None,
    max_output: int = DEFAULT_MAX_OUTPUT,
    check: bool = False,
) -> CommandResult:
    """Run ``argv`` without a shell and return its output, decoded as UTF-8 with replacement."""
    if isinstance(argv, (str, bytes)) or not argv:
        raise TypeError("argv must be a non-empty list of arguments (no shell is used)")
    argv = tuple(str(a) for a in argv)
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE if input_text is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env) if env is not None else None,
            start_new_session=True,  # own process group: the timeout kills children too
            close_fds=True,
        )
    except FileNotFoundError:
        raise CommandNotFound(f"{argv[0]}: command not found") from None
    except PermissionError:
        raise CommandError(f"{argv[0]}: permission denied") from None
    readers = [_CappedReader(proc.stdout, max_output), _CappedReader(proc.stderr, max_output)]
    try:
        if input_text is not None and proc.stdin is not None:
            try:
                proc.stdin.write(input_text.encode())
                proc.stdin.close()
            except BrokenPipeError:
                pass
        proc.wait(timeout=timeout)
        for reader in readers:
            reader.join(max(timeout - (time.monotonic() - started), 0.5))
        if any(reader.alive for reader in readers):  # a background child still holds the pipes
            _kill_group(proc)
            for reader in readers:
                reader.join(1.0)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        proc.wait()
        raise CommandTimeout(f"{os.path.basename(argv[0])}: timed out after {timeout:g}s") from None
    except BaseException:
        _kill_group(proc)
        proc.wait()
        raise
    out, err = readers[0].data(), readers[1].data()
    truncated = readers[0].truncated or readers[1].truncated
    result = CommandResult(
        argv=argv,
        returncode=proc.returncode,
        stdout=out.decode("utf-8", "replace"),
        stdout_bytes=out,
        stderr=err.decode("utf-8", "replace"),
        duration=time.monotonic() - started,
        truncated=truncated,
    )
    if check and result.returncode != 0:
        first = (result.stderr or result.stdout).strip().splitlines()
        hint = f": {first[0][:200]}" if first else ""
        raise CommandError(f"{os.path.basename(argv[0])}: exit status {result.returncode}{hint}")
    return result


class _CappedReader:
    """Reads a pipe in a thread, keeps the first ``limit`` bytes and discards the rest."""

    def __init__(self, pipe, limit: int) -> None:
        self._pipe = pipe
        self._limit = limit
        self._chunks: list[bytes] = []
        self._kept = 0
        self.truncated = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            while True:
                chunk = self._pipe.read1(65536) if hasattr(self._pipe, "read1") else self._pipe.read(65536)
                if not chunk:
                    break
                room = self._limit - self._kept
                if room > 0:
                    self._chunks.append(chunk[:room])
                    self._kept += min(len(chunk), room)
                if len(chunk) > room:
                    self.truncated = True
        except (OSError, ValueError):
            pass

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def data(self) -> bytes:
        return b"".join(self._chunks)


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:
            proc.kill()
        except ProcessLookupError:
            pass
