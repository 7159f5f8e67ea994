"""The collector interface every source system implements.

A collector is a class in ``exporter/systems/<system>/collector.py``: ``name`` and ``description``, a
``Settings`` model derived from :class:`~exporter.core.settings.CollectorSettings`, ``specs()`` (the metrics it
may emit) and ``collect(batch)`` (read the source once and add samples).  ``collect`` runs in a worker thread
owned by the scheduler, never on the HTTP request path; it may raise, and only that collector fails.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from .metrics import MetricBatch, MetricSpec
from .procfs import ProcessTable
from .settings import CollectorSettings


@dataclass(frozen=True)
class Context:
    """What the collectors of one exporter share: where the host's file systems are mounted, and one process
    table (one walk over /proc per interval for all the collectors that read processes)."""

    procfs: str = "/proc"
    sysfs: str = "/sys"
    processes: ProcessTable = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "processes", ProcessTable(self.procfs))


class Collector:
    name: ClassVar[str]
    description: ClassVar[str]
    Settings: ClassVar[type[CollectorSettings]] = CollectorSettings

    def __init__(self, settings: CollectorSettings, context: Context) -> None:
        self.settings = settings
        self.context = context

    @classmethod
    def reference_settings(cls) -> CollectorSettings:
        """Settings under which specs() lists every metric the collector can emit (for the README)."""
        return cls.Settings()

    def specs(self) -> list[MetricSpec]:  # pragma: no cover - abstract
        raise NotImplementedError

    def collect(self, batch: MetricBatch) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def targets(self) -> list[str]:
        """The targets this collector watches (core/targets.py), known before its first run; none for a collector
        that reads only the exporter's own host (host through /proc, process, vhi)."""
        return []

    def const_labels(self) -> dict[str, str]:
        """Labels added to every series of this collector (``target`` of a collector watching another host)."""
        return {}

    def close(self) -> None:
        """Release connections or other resources (called at shutdown)."""
