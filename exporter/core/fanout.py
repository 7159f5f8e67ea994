"""Reading several targets of one collector at once (Oracle databases, MQ queue managers), each in its own thread
under its own deadline, so that one target that hangs or fails costs only its own samples.

A target's deadline is its own budget (connect plus queries, or a few requests) but never more than the
collector's timeout less a margin, so the collector still reports every target's outcome before the scheduler
gives up on the whole run.  A target still hung from an earlier run is not started again (see ``deadline``).
The targets' calls belong to the caller's bounded call (the collection): its deadline cuts theirs, and when it is
abandoned their commands are killed too.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence, TypeVar

from ..machine.deadline import BoundedCall, Overdue, current_scope


def target_limit(collector_timeout: float) -> float:
    """The longest a single target may take inside a collection that times out after ``collector_timeout``."""
    return max(collector_timeout - 2.0, collector_timeout * 0.8)


@dataclass
class Outcome:
    """What reading one target gave: its value, or the exception it raised (``Overdue`` past the deadline)."""

    value: Any = None
    error: BaseException | None = None
    duration: float = 0.0

    @property
    def overdue(self) -> bool:
        return isinstance(self.error, Overdue)


class Target:
    """One target: a name, a bounded call and the outcome of its last read."""

    def __init__(self, kind: str, name: str, budget: float, collector_timeout: float) -> None:
        self.name = name
        self.call = BoundedCall(f"{kind}-{name}")
        self.deadline = min(budget, target_limit(collector_timeout))
        self.outcome = Outcome()


T = TypeVar("T", bound=Target)


def fan_out(targets: Sequence[T], read: Callable[[T], Any]) -> None:
    """Run ``read(target)`` for every target concurrently, each under its deadline; set each ``outcome``."""
    # The threads below start without a scope (deadline), so each call is tied to the caller's by hand: it gets
    # no more than the caller has left, and cancelling the caller's scope cancels it.
    parent = current_scope()

    def linked(target: T) -> Any:
        own = current_scope()
        handle = parent.on_cancel(own.cancel) if parent is not None and own is not None else None
        try:
            return read(target)
        finally:
            if parent is not None:
                parent.forget(handle)

    def one(target: T) -> None:
        started = time.monotonic()
        deadline = target.deadline
        left = parent.remaining() if parent is not None else None
        if left is not None:
            deadline = min(deadline, left)
        try:
            value = target.call(lambda: linked(target), deadline)
            target.outcome = Outcome(value, None, time.monotonic() - started)
        except Exception as exc:  # noqa: BLE001 - one target must not stop the others
            target.outcome = Outcome(None, exc, time.monotonic() - started)

    threads = [threading.Thread(target=one, args=(t,), daemon=True, name=f"read-{t.call.name}") for t in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
