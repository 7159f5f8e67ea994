"""Capped exponential back-off for the helper processes the exporter starts again by itself.

A helper that exits at once (its server ended or failed over, no authority, ssh refused) must not be started again
straight away: restarted in a loop it was spawned hundreds of times a second, which through ssh trips sshd's
MaxStartups and fail2ban.  After each failed attempt the wait doubles from ``first`` up to ``cap``; an attempt that
did its work starts the count again.  Each wait is shortened by up to ``jitter`` (a share of it, at random), so that
the helpers of several targets that failed together (one host down) do not retry in step.  Knows no source system.

Hand-written: the retry libraries (tenacity, backoff) wrap a function call and sleep themselves, while the callers
here wait on their own stop event and need only the next delay.
"""

from __future__ import annotations

import random
from typing import Callable


class Backoff:
    """The waits between the attempts of one restarted helper: ``first``, ``first * factor``, ... at most ``cap``
    seconds (each shortened by up to ``jitter`` of itself)."""

    def __init__(self, first: float, cap: float, factor: float = 2.0, jitter: float = 0.1,
                 rng: Callable[[], float] = random.random) -> None:
        if not (first > 0 and cap >= first and factor >= 1 and 0 <= jitter < 1):
            raise ValueError(f"back-off needs 0 < first <= cap, factor >= 1, 0 <= jitter < 1 "
                             f"(first={first}, cap={cap}, factor={factor}, jitter={jitter})")
        self.first = first
        self.cap = cap
        self.factor = factor
        self.jitter = jitter
        self.rng = rng
        self.failures = 0  # failed attempts in a row

    def peek(self) -> float:
        """The wait the next failure brings, before jitter."""
        return min(self.cap, self.first * self.factor ** min(self.failures, 64))

    def failed(self) -> float:
        """Count a failed attempt and return the seconds to wait before the next one."""
        delay = self.peek() * (1.0 - self.jitter * self.rng())
        self.failures += 1
        return delay

    def succeeded(self) -> None:
        """The attempt did its work: the next failure waits ``first`` again."""
        self.failures = 0
