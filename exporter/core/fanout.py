"""Reading several targets of one collector at once (Oracle databases, MQ queue managers), each in its own thread
under its own deadline, so that one target that hangs or fails costs only its own samples.

A target's deadline is its own budget (connect plus queries, or a few requests) but never more than the
collector's timeout less a margin, so the collector still reports every target's outcome before the scheduler
gives up on the whole run.  A target still hung from an earlier run is not started again (see ``deadline``).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence, TypeVar

from .deadline import BoundedCall, Overdue


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

    def one(target: T) -> None:
        started = time.monotonic()
        try:
            value = target.call(lambda: read(target), target.deadline)
            target.outcome = Outcome(value, None, time.monotonic() - started)
        except Exception as exc:  # noqa: BLE001 - one target must not stop the others
            target.outcome = Outcome(None, exc, time.monotonic() - started)

    threads = [threading.Thread(target=one, args=(t,), daemon=True, name=f"read-{t.call.name}") for t in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
