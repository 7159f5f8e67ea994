"""The collector interface every source system implements.

A collector is a class in ``exporter/systems/<system>/collector.py``: ``name`` and ``description``, a
``Settings`` model derived from :class:`~exporter.core.settings.CollectorSettings`, ``specs()`` (the metrics it
may emit) and ``collect(batch)`` (read the source once and add samples).  ``collect`` runs in a worker thread
owned by the scheduler, never on the HTTP request path; it may raise, and only that collector fails.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Iterable, Mapping

from ..machine.procfs import ProcessTable
from .metrics import ConfiguredLabels, MetricBatch, MetricSpec, label_collisions
from .settings import CollectorSettings


@dataclass(frozen=True)
class Context:
    """What the collectors of one exporter share: where the host's file systems are mounted, and one process
    table (one walk over /proc per interval for all the collectors that read processes)."""

    procfs: str = "/proc"
    sysfs: str = "/sys"
    rootfs: str = "/"  # the host's / (paths.rootfs): the filesystem collector's statvfs boundary
    processes: ProcessTable = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "processes", ProcessTable(self.procfs))


class Collector:
    name: ClassVar[str]
    description: ClassVar[str]
    Settings: ClassVar[type[CollectorSettings]] = CollectorSettings
    # The label whose value is the name of the target a series belongs to (``database``, ``qmgr``): a target's
    # configured labels go on those series.  None: the collector has one target or none, and its configured labels
    # go on all its series (core.metrics.static_labels_for).
    target_label: ClassVar[str | None] = None

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

    def static_labels(self) -> list[ConfiguredLabels]:
        """The ``labels:`` the configuration gives this collector's targets (docs/configuration.md)."""
        return []

    def close(self) -> None:
        """Release connections or other resources (called at shutdown)."""


def static_label_problems(exporter_labels: Mapping[str, str], collectors: Iterable[Collector]) -> list[str]:
    """``key: reason`` for each configured label that a series already has: the exporter-wide ``labels`` against
    the exporter's own series and every enabled collector's, a target's against its collector's (declared metrics,
    custom queries included: known only once the collectors are built)."""
    from . import buildinfo, selfmetrics

    own = [*selfmetrics.SPECS, MetricSpec("middleware_exporter_build_info", "info", "-",
                                          tuple(sorted(buildinfo.labels())))]
    found: dict[str, str] = {}
    for key, reason in label_collisions("labels", exporter_labels, own):
        found.setdefault(key, reason)
    for collector in collectors:
        specs = collector.specs()
        for key, reason in label_collisions("labels", exporter_labels, specs):
            found.setdefault(key, f"{reason} (collector {collector.name})")
        for entry in collector.static_labels():
            for key, reason in label_collisions(entry.key, entry.labels, specs):
                found.setdefault(key, reason)
    return [f"{key}: {reason}" for key, reason in found.items()]
