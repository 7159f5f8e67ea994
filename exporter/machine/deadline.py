"""Calls that may hang (a database that accepts a connection and never answers, a hung NFS read, a command that
never exits) bounded by a deadline.

Python cannot kill a thread, so the call runs in a daemon thread and the caller stops waiting after ``timeout``.
One call at a time: while an abandoned call is still running, the next one is refused at once (so a source that
hangs for good costs one thread, not one per interval).  A late result is discarded by the caller.

What *can* be stopped is stopped: every call runs inside a :class:`Scope` that carries its deadline.  Commands
started in the call (``machine.runner``) never run past that deadline, and when the caller gives up the scope is
cancelled: the commands still running in it are killed with their process groups and the abandoned thread cannot
start new ones, so a run stuck in a hung command ends at the deadline instead of lingering.  A call made inside
another bounded call gets a scope nested in the outer one (cancelling the outer cancels it, and its deadline is
never later); a thread started by hand (``threading.Thread``) starts without a scope.
"""

from __future__ import annotations

import threading
import time
import traceback
from typing import Any, Callable


class Overdue(Exception):
    """The call did not finish within its deadline, or an earlier call is still running."""


class Scope:
    """The deadline of one bounded call and what to stop when the caller gives up on it."""

    def __init__(self, timeout: float | None, parent: "Scope | None" = None) -> None:
        self.deadline = None if timeout is None else time.monotonic() + timeout
        if parent is not None and parent.deadline is not None:
            self.deadline = parent.deadline if self.deadline is None else min(self.deadline, parent.deadline)
        self._parent = parent
        self._lock = threading.Lock()
        self._cancelled = False
        self._callbacks: dict[int, Callable[[], None]] = {}
        self._next = 0
        self._link = parent.on_cancel(self.cancel) if parent is not None else None

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def remaining(self) -> float | None:
        """Seconds left before the deadline (None: no deadline); never below 0."""
        return None if self.deadline is None else max(self.deadline - time.monotonic(), 0.0)

    def on_cancel(self, callback: Callable[[], None]) -> int | None:
        """Call ``callback`` when the scope is cancelled (at once if it already is); returns a handle for
        :meth:`forget`, or None when it was called at once."""
        with self._lock:
            if not self._cancelled:
                self._next += 1
                self._callbacks[self._next] = callback
                return self._next
        callback()
        return None

    def forget(self, handle: int | None) -> None:
        if handle is not None:
            with self._lock:
                self._callbacks.pop(handle, None)

    def cancel(self) -> None:
        with self._lock:
            if self._cancelled:
                return
            self._cancelled = True
            callbacks, self._callbacks = list(self._callbacks.values()), {}
        for callback in callbacks:
            try:
                callback()
            except Exception:  # noqa: BLE001, S110 - every other callback still runs
                pass

    def close(self) -> None:
        """The call is over: the parent no longer needs to cancel this scope."""
        if self._parent is not None:
            self._parent.forget(self._link)


_local = threading.local()


def current_scope() -> Scope | None:
    """The scope of the bounded call this thread is running, if any."""
    return getattr(_local, "scope", None)


class _Run:
    __slots__ = ("done", "result", "error", "started", "scope")

    def __init__(self, scope: Scope) -> None:
        self.done = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None
        self.started = time.monotonic()
        self.scope = scope


class _Worker:
    """A thread kept for the calls of one :class:`BoundedCall` (``keep_thread``): it waits, without waking up,
    until it is handed a call; one abandoned to a call that overran ends when (if ever) that call returns."""

    __slots__ = ("cond", "job", "abandoned")

    def __init__(self) -> None:
        self.cond = threading.Condition(threading.Lock())
        self.job: tuple[Callable[[], Any], _Run, float] | None = None
        self.abandoned = False


class BoundedCall:
    """``call(fn, timeout)``: ``fn()`` in another thread, its result or error, or :class:`Overdue` after ``timeout``.

    ``keep_thread``: the calls run in one thread kept between them (a new thread per call cost the scheduler's
    four collections about 0.7 ms of CPU per interval, issue 30) until a call overruns; that thread is then left to
    the hung call and the next call gets a new one.  Otherwise each call starts a thread that ends with it."""

    def __init__(self, name: str, on_late: Callable[[float], None] | None = None, keep_thread: bool = False) -> None:
        self.name = name
        self._on_late = on_late
        self._current: _Run | None = None
        self._lock = threading.Lock()
        self._keep = keep_thread
        self._worker: _Worker | None = None

    @property
    def busy(self) -> bool:
        current = self._current
        return current is not None and not current.done.is_set()

    def __call__(self, fn: Callable[[], Any], timeout: float) -> Any:
        # Nothing of an earlier run may stay reachable from this frame or from the run kept in ``_current``: the
        # error raised below carries this frame in its traceback, so a local holding the previous run (and its
        # error, whose traceback holds the frame before, ...) chained every failure since the last success, with
        # the failed runs' locals, into memory (docs/reliability.md, "Failing collections: nothing piles up").
        with self._lock:
            previous = self._current
            if previous is not None and not previous.done.is_set():
                raise Overdue(f"previous run still running after {time.monotonic() - previous.started:.1f}s "
                              "(hung); not started again")
            if previous is not None:  # a late run that finished after its caller gave up: drop its outcome
                previous.error = previous.result = None
            previous = None
            run = self._current = _Run(Scope(timeout, current_scope()))
        if self._keep:
            self._hand_over(fn, run, timeout)
        else:
            threading.Thread(target=self._execute, args=(fn, run, timeout), daemon=True,
                             name=f"call-{self.name}").start()
        if not run.done.wait(timeout):
            run.scope.cancel()  # kill what can be killed (its commands); the thread itself is abandoned
            worker, self._worker = self._worker, None
            if worker is not None:  # it ends after the hung call, if that ever returns (or now, if it just did)
                with worker.cond:
                    worker.abandoned = True
                    worker.cond.notify()
            raise Overdue(f"timed out after {timeout:g}s")
        error, result = run.error, run.result
        run.error = run.result = None  # the finished run stays in _current; its outcome is the caller's alone
        if error is None:
            return result
        # The caller gets the error, its type, message and line numbers; not the locals of the frames that failed
        # (a command's output, a driver's buffers), which nothing reads and which would stay alive as long as the
        # caller keeps the error (fanout keeps each target's last one until its next run).
        chained: BaseException | None = error
        for _ in range(8):  # and of the errors it was raised from (a bounded walk: a chain may loop)
            if chained is None:
                break
            traceback.clear_frames(chained.__traceback__)
            chained = chained.__cause__ or chained.__context__
        try:
            raise error
        finally:
            del error, run  # the traceback of the raised error holds this frame: no cycle through its locals

    def _hand_over(self, fn: Callable[[], Any], run: _Run, timeout: float) -> None:
        worker = self._worker
        if worker is None:
            worker = self._worker = _Worker()
            threading.Thread(target=self._serve, args=(worker,), daemon=True, name=f"call-{self.name}").start()
        with worker.cond:
            worker.job = (fn, run, timeout)
            worker.cond.notify()

    def _serve(self, worker: _Worker) -> None:
        while True:
            with worker.cond:
                while worker.job is None:
                    if worker.abandoned:
                        return
                    worker.cond.wait()  # no timeout: an idle exporter's kept threads never wake up
                fn, run, timeout = worker.job
                worker.job = None
            self._execute(fn, run, timeout)
            del fn, run  # nothing of a finished call stays reachable from the waiting thread
            if worker.abandoned:
                return

    def _execute(self, fn: Callable[[], Any], run: _Run, timeout: float) -> None:
        _local.scope = run.scope
        try:
            run.result = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            run.error = exc
        finally:
            _local.scope = None
            run.scope.close()
            elapsed = time.monotonic() - run.started
            run.done.set()
            if elapsed > timeout and self._on_late is not None:
                self._on_late(elapsed)
