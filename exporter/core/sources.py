"""Collectors made of several *sources* (the HPOM server's queues, commands and database; Domino's console):
each source reports whether it is present here, whether it was read, and how long that took, and a source
failing half-way adds none of its samples.

:class:`SourceSet` reads a collector's sources at once, each in its own bounded call (``fanout``) whose deadline
fits inside the collector's timeout: sources that hang together cost only their own figures, never the run (the
scheduler drops the whole batch of a run that overruns its timeout).  A hung source reports success 0 and
"timed out after N s", its commands are killed at that deadline, and while it is still stuck the next run does
not start it again ("previous run still running ...").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from ..machine.deadline import Overdue
from ..machine.runner import CommandError
from .fanout import Target, fan_out, target_limit
from .metrics import MetricBatch, MetricSpec


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


def _message(exc: BaseException) -> str:
    """A source's error text: a command's or a deadline's own words, else the exception's type and text."""
    return str(exc) if isinstance(exc, (CommandError, Overdue)) else f"{type(exc).__name__}: {exc}"


@dataclass(frozen=True)
class Source:
    """One source of a :class:`SourceSet` run: ``read`` runs in a worker thread and must not touch the batch; it
    returns the function that adds the samples (run in the collector's thread, in the listed order).  ``budget``:
    the longest it may take (None: as long as the collector's timeout allows)."""

    name: str
    present: bool
    read: Callable[[], Callable[[], None]]
    budget: float | None = None


class SourceSet:
    """The sources of one collector, read concurrently, each under its own deadline inside the collector's
    timeout (kept from run to run: a source still hung from an earlier run is not started again)."""

    def __init__(self, kind: str, metrics: SourceMetrics, collector_timeout: float) -> None:
        self.kind = kind
        self.metrics = metrics
        self.timeout = collector_timeout
        self.limit = target_limit(collector_timeout)
        self._targets: dict[str, Target] = {}

    def _target(self, source: Source) -> Target:
        budget = self.timeout if source.budget is None else source.budget
        target = self._targets.get(source.name)
        if target is None:
            target = self._targets[source.name] = Target(self.kind, source.name, budget, self.timeout)
        target.deadline = min(budget, self.limit)
        return target

    def run(self, batch: MetricBatch, sources: Sequence[Source], target: str | None = None) -> dict[str, bool]:
        """Read every present source at once; then, in the listed order, add each one's present, samples,
        success and duration.  Returns each source's success.  With a ``target``, each present source is reported
        as that target's (core/targets.py: the target is up when one of them was read)."""
        reads = {s.name: s.read for s in sources if s.present}
        targets = {s.name: self._target(s) for s in sources if s.present}
        fan_out(list(targets.values()), lambda target: reads[target.name]())
        results: dict[str, bool] = {}
        for source in sources:
            self.metrics.present.add(batch, 1 if source.present else 0, source=source.name)
            results[source.name] = False
            if not source.present:
                continue
            outcome = targets[source.name].outcome
            error = outcome.error
            if error is None:
                try:
                    outcome.value()
                except Exception as exc:  # noqa: BLE001 - one source must not stop the others
                    error = exc
            if error is not None:
                batch.note_error(source.name, _message(error))
            if target is not None:
                batch.report_source(target, source.name, error is None, None if error is None else _message(error))
            results[source.name] = error is None
            self.metrics.success.add(batch, 1 if error is None else 0, source=source.name)
            self.metrics.duration.add(batch, outcome.duration, source=source.name)
        return results


def check_command_timeout(command_timeout: float, timeout: float) -> None:
    """A command must finish before the collection's own timeout gives up on it."""
    if command_timeout >= timeout:
        raise ValueError(f"command_timeout ({command_timeout:g}s) must be shorter than timeout ({timeout:g}s)")
