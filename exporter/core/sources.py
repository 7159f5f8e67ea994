"""Collectors made of several *sources* (the HPOM server's queues, commands and database; Domino's console):
each source reports whether it is present here, whether it was read, and how long that took, and a source
failing half-way adds none of its samples."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from .metrics import MetricBatch, MetricSpec
from .runner import CommandError


@dataclass(frozen=True)
class SourceMetrics:
    """The three per-source metrics of one collector (``<prefix>_source_present``, ``_success``,
    ``_duration_seconds``, label ``source``)."""

    present: MetricSpec
    success: MetricSpec
    duration: MetricSpec

    @classmethod
    def declare(cls, prefix: str, present_help: str) -> "SourceMetrics":
        return cls(
            MetricSpec(f"{prefix}_source_present", "gauge", present_help, ("source",)),
            MetricSpec(f"{prefix}_source_success", "gauge", "1 if the source was read successfully in the last run.",
                       ("source",)),
            MetricSpec(f"{prefix}_source_duration_seconds", "gauge", "Time spent reading the source in the last run.",
                       ("source",)),
        )

    def specs(self) -> list[MetricSpec]:
        return [self.present, self.success, self.duration]


def run_source(batch: MetricBatch, metrics: SourceMetrics, source: str, present: bool,
               read: Callable[[], Callable[[], None]]) -> bool:
    """Run one source: ``read`` gathers everything and returns a function that adds the samples.  Returns
    whether it succeeded; a failure is noted on the batch (``source_errors`` in /api/v1/collectors)."""
    metrics.present.add(batch, 1 if present else 0, source=source)
    if not present:
        return False
    started = time.monotonic()
    try:
        read()()
        ok = True
    except Exception as exc:  # noqa: BLE001 - one source must not stop the others
        ok = False
        batch.note_error(source, str(exc) if isinstance(exc, CommandError) else f"{type(exc).__name__}: {exc}")
    metrics.success.add(batch, 1 if ok else 0, source=source)
    metrics.duration.add(batch, time.monotonic() - started, source=source)
    return ok


def check_command_timeout(command_timeout: float, timeout: float) -> None:
    """A command must finish before the collection's own timeout gives up on it."""
    if command_timeout >= timeout:
        raise ValueError(f"command_timeout ({command_timeout:g}s) must be shorter than timeout ({timeout:g}s)")
