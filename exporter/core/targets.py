"""What a collector watches, and whether each part of it worked: one truth for the metric, the status page, the
status API and the log.

A *target* is one thing a collector reads: an Oracle database, a queue manager, an HPOM management server, a
Domino server's console, a host read by the text back-end.  A *source* is one read below a target: a query, a
command, a back-end request.  A collector says what it read on the batch (``MetricBatch.report_target`` and
``report_source``); the scheduler keeps it (``CollectorState.targets``) and publishes it as
``middleware_target_up{collector,target}``, ``middleware_target_source_success{collector,target,source}`` and
``middleware_target_last_success_timestamp_seconds`` (core/selfmetrics.py), the ``targets`` of
/api/v1/collectors, the rows of the status page and the ``target down`` / ``target recovered`` log lines.

A target is **up** when the collector could talk to it in the last run (a session to the database, an answer of
the queue manager's back-end, at least one of the server's commands read).  A collector's own success
(``middleware_scrape_collector_success``) is 1 when its run finished in time with valid samples **and** every
target it watches is up; a failing source of a target that is up (one query, one command of several) is that
source's failure, shown by its success metric and error, and does not fail the collector.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class SourceResult:
    ok: bool
    error: str | None = None
    note: str | None = None  # a source that is fine but read nothing on purpose says why (ok only)


@dataclass
class TargetResult:
    """A target in one run: ``up`` (None: decided from the sources, up when one of them was read), its error, and
    its sources' results."""

    up: bool | None = None
    error: str | None = None
    sources: dict[str, SourceResult] = field(default_factory=dict)

    def settle(self) -> None:
        """Decide ``up`` and ``error`` from the sources when the collector did not say."""
        failed = [(name, s.error) for name, s in self.sources.items() if not s.ok]
        if self.up is None:
            self.up = any(s.ok for s in self.sources.values()) if self.sources else True
        if not self.up and not self.error:
            self.error = "; ".join(f"{name}: {error or 'failed'}" for name, error in failed) or "not read"


class TargetReports:
    """The targets a batch reports (``MetricBatch.targets``)."""

    def __init__(self) -> None:
        self.targets: dict[str, TargetResult] = {}

    def target(self, name: str) -> TargetResult:
        return self.targets.setdefault(name, TargetResult())

    def report_target(self, name: str, up: bool, error: str | None = None) -> None:
        result = self.target(name)
        result.up = up
        result.error = None if up else (error or result.error or "not reachable")

    def report_source(self, name: str, source: str, ok: bool, error: str | None = None,
                      note: str | None = None) -> None:
        self.target(name).sources[source] = SourceResult(ok, None if ok else (error or "failed"),
                                                         note if ok else None)


def local_target(target: str) -> str:
    """The name of a collector's single target: its ``target`` setting (the host its commands run on), else
    ``local``."""
    return target or "local"
