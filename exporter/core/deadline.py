"""Calls that may hang (a database that accepts a connection and never answers, a hung NFS read) bounded by a
deadline.

Python cannot kill a thread, so the call runs in a daemon thread and the caller stops waiting after ``timeout``.
One call at a time: while an abandoned call is still running, the next one is refused at once (so a source that
hangs for good costs one thread, not one per interval).  A late result is discarded by the caller.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable


class Overdue(Exception):
    """The call did not finish within its deadline, or an earlier call is still running."""


class _Run:
    __slots__ = ("done", "result", "error", "started")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None
        self.started = time.monotonic()


class BoundedCall:
    def __init__(self, name: str, on_late: Callable[[float], None] | None = None) -> None:
        self.name = name
        self._on_late = on_late
        self._current: _Run | None = None
        self._lock = threading.Lock()

    @property
    def busy(self) -> bool:
        current = self._current
        return current is not None and not current.done.is_set()

    def __call__(self, fn: Callable[[], Any], timeout: float) -> Any:
        with self._lock:
            current = self._current
            if current is not None and not current.done.is_set():
                raise Overdue(f"previous run still running after {time.monotonic() - current.started:.1f}s (hung); "
                              "not started again")
            run = self._current = _Run()
        threading.Thread(target=self._execute, args=(fn, run, timeout), daemon=True, name=f"call-{self.name}").start()
        if not run.done.wait(timeout):
            raise Overdue(f"timed out after {timeout:g}s")
        if run.error is not None:
            raise run.error
        return run.result

    def _execute(self, fn: Callable[[], Any], run: _Run, timeout: float) -> None:
        try:
            run.result = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            run.error = exc
        finally:
            elapsed = time.monotonic() - run.started
            run.done.set()
            if elapsed > timeout and self._on_late is not None:
                self._on_late(elapsed)
