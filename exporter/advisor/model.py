"""The advisor's model: what an advice row is (:class:`Row`, declared per system in ``rows/``), what its judge says
about a target (:class:`Finding`) and what it reads (:class:`Snapshot`: the collectors' last samples, taken from
the scheduler with ``families_of`` and nothing else).  ``report.build_report`` judges every row on it: it never runs
a collector, opens a connection or reads a file, so ``GET /api/v1/advice``, the page and ``advise`` cost no more
than a scrape and always agree with ``/metrics``. One recommendation per guide row and target (host, HPOM server,
database, queue manager, session server, mount), each follows / deviates / unknown; an unknown one says why,
starting with one of ``REASONS``. The report's shape is documented in docs/advisor.md; the page (``page.py``) and
the forecasts (``forecasts.py``) code against it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

STATUSES = ("deviates", "unknown", "follows")  # the report's order
# How every unknown reason starts: the source is switched off or absent from the configuration; it was configured
# but failed (or gave nothing) in its last run; the row does not apply to this target (version, platform, role).
NOT_CONFIGURED = "source not configured"
NOT_READABLE = "not readable"
NOT_APPLICABLE = "not applicable"
REASONS = (NOT_CONFIGURED, NOT_READABLE, NOT_APPLICABLE)
SYSTEMS = ("hpom", "oracle", "ibmmq", "vhi", "domino", "host")
TARGET_KINDS = ("host", "hpom_server", "database", "queue_manager", "session_server", "mount")


@dataclass(frozen=True)
class Finding:
    """What a row's judge says about one target; the row supplies the rest of the recommendation."""

    target: str
    status: str
    reason: str | None = None
    observed: str | None = None
    observed_value: float | None = None
    remedy: str | None = None  # filled in with the live values; None keeps the row's own remedy for a deviation
    target_kind: str | None = None  # None: the row's kind
    recommended: str | None = None  # None: the row's text
    remedy_note: str | None = None  # None: the row's note; for a remedy whose parts need other notes than the row's

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status {self.status!r}")
        if self.status == "unknown" and not (self.reason and self.reason.startswith(REASONS)):
            raise ValueError(f"an unknown finding needs a reason starting with one of {REASONS}: {self.reason!r}")


def follows(target: str, observed: str | None = None, value: float | None = None, **kw: Any) -> Finding:
    return Finding(target, "follows", observed=observed, observed_value=value, **kw)


def deviates(target: str, observed: str | None, value: float | None, remedy: str | None = None,
             **kw: Any) -> Finding:
    return Finding(target, "deviates", observed=observed, observed_value=value, remedy=remedy, **kw)


def unknown(target: str, reason: str, observed: str | None = None, value: float | None = None,
            **kw: Any) -> Finding:
    return Finding(target, "unknown", reason=reason, observed=observed, observed_value=value, **kw)


@dataclass
class Snapshot:
    """The collectors' last samples as the scrape serves them, indexed by sample name, with each enabled collector's
    last outcome and the errors of its failed sources (as /api/v1/collectors shows them, redacted). ``settings``
    (the loaded configuration, optional) only tells which targets are configured and where they are read."""

    enabled: set[str] = field(default_factory=set)
    succeeded: dict[str, bool | None] = field(default_factory=dict)
    samples: dict[str, list[tuple[dict[str, str], float]]] = field(default_factory=dict)
    settings: Any = None
    errors: dict[str, dict[str, str]] = field(default_factory=dict)

    @classmethod
    def of(cls, scheduler: Any, settings: Any = None) -> "Snapshot":
        snap = cls(settings=settings)
        for name, state in list(getattr(scheduler, "states", {}).items()):
            snap.enabled.add(name)
            snap.succeeded[name] = state.success
            snap.errors[name] = dict(getattr(state, "source_errors", None) or {})
            _, families = scheduler.families_of(name)
            for family in families:
                for sample in family.samples:
                    snap.samples.setdefault(sample.name, []).append((dict(sample.labels), float(sample.value)))
        return snap

    # ---- reading ------------------------------------------------------------------------------------------------
    def all(self, metric: str, /, **match: str) -> list[tuple[dict[str, str], float]]:
        return [(labels, value) for labels, value in self.samples.get(metric, [])
                if all(labels.get(k) == v for k, v in match.items())]

    def value(self, metric: str, /, **match: str) -> float | None:
        found = self.all(metric, **match)
        return found[0][1] if found else None

    def total(self, metric: str, /, **match: str) -> float | None:
        found = self.all(metric, **match)
        return sum(value for _, value in found) if found else None

    def setting(self, *path: str, default: Any = None) -> Any:
        node = self.settings
        for part in path:
            if node is None:
                return default
            node = getattr(node, part, None)
        return default if node is None else node

    def source_error(self, collector: str, source: str) -> str | None:
        """The error of a collector's source in its last run (``<target>:<source>``), or None."""
        return self.errors.get(collector, {}).get(source)

    # ---- why something cannot be judged ---------------------------------------------------------------------------
    def collector_problem(self, collector: str) -> str | None:
        """The unknown reason when a collector gives nothing to judge: disabled, or its last run failed."""
        if collector not in self.enabled:
            return f"{NOT_CONFIGURED}: the {collector} collector is disabled"
        if self.succeeded.get(collector) is None:
            return f"{NOT_READABLE}: the {collector} collector has not finished a run yet"
        if not self.succeeded.get(collector):
            return f"{NOT_READABLE}: the {collector} collector's last run failed (see /api/v1/collectors)"
        return None


@dataclass(frozen=True)
class Row:
    """An advice row of a guide, declared as data (``rows/``): what it recommends, what the guide measured, where
    it says so, the standard remedy and whether applying it needs a restart or a change window; ``judge`` reads the
    snapshot and returns one finding per target."""

    id: str
    system: str
    target_kind: str
    title: str
    recommended: str
    effect: str
    document: str
    section: str
    remedy: str | None
    remedy_note: str | None
    judge: Any  # Callable[[Snapshot], list[Finding]]

    def __post_init__(self) -> None:
        if self.system not in SYSTEMS or self.target_kind not in TARGET_KINDS:
            raise ValueError(f"{self.id}: system {self.system!r} or target kind {self.target_kind!r}")
