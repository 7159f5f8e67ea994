"""Metric declarations and the batch that collectors fill.

Every collector declares its metrics up front as :class:`MetricSpec` objects (name, type, help, label names);
a declaration is also the handle that adds samples (``SPEC.add(batch, value, **labels)``), so each name is
written once.  The :class:`MetricBatch` checks each sample against the declaration: an undeclared name, a wrong
label set, a non-numeric value or a duplicate series raises :class:`InvalidSample`.  The framework turns that
into a failed collection for that collector only, so one collector producing garbage can never make the whole
exposition invalid (Prometheus rejects a scrape that contains a duplicate series).  The declarations also
generate the metrics reference (``docs/metrics.md``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    InfoMetricFamily,
    Metric,
)

from .targets import TargetReports

METRIC_NAME_RE = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
LABEL_NAME_RE = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")

NAMESPACE = "middleware"

_TYPES = ("gauge", "counter", "info")


class InvalidSample(ValueError):
    """A collector produced a sample that does not match its declaration."""


@dataclass(frozen=True)
class MetricSpec:
    """One metric a collector may emit.

    ``name`` is the full exposition name. Counters end in ``_total`` (the suffix is part of the name here,
    prometheus_client adds it back when rendering).  Info metrics end in ``_info``.
    """

    name: str
    type: str
    help: str
    labels: tuple[str, ...] = ()
    unit_note: str = ""  # free text for the reference, e.g. "PromQL: rate() gives vmstat cs"

    def __post_init__(self) -> None:
        if self.type not in _TYPES:
            raise ValueError(f"metric {self.name}: type must be one of {_TYPES}, not {self.type!r}")
        if not METRIC_NAME_RE.match(self.name):
            raise ValueError(f"metric name {self.name!r} is not a valid Prometheus name")
        if self.type == "counter" and not self.name.endswith("_total"):
            raise ValueError(f"counter {self.name} must end in _total")
        if self.type == "info" and not self.name.endswith("_info"):
            raise ValueError(f"info metric {self.name} must end in _info")
        for label in self.labels:
            if not LABEL_NAME_RE.match(label) or label.startswith("__"):
                raise ValueError(f"metric {self.name}: invalid label name {label!r}")
        if len(set(self.labels)) != len(self.labels):
            raise ValueError(f"metric {self.name}: duplicate label names")
        if not self.help.strip():
            raise ValueError(f"metric {self.name}: help text is required")

    # A declaration is also the handle that adds its samples, so a metric's name is written once:
    # ``QUEUE_DEPTH.add(batch, 12, qmgr="QM1", queue="APP.IN")``.
    def add(self, batch: "MetricBatch", value: object, /, **labels: object) -> None:
        batch.add(self.name, value, **labels)

    def add_info(self, batch: "MetricBatch", info: dict[str, object], /, **labels: object) -> None:
        batch.add_info(self.name, info, **labels)

    def declare_empty(self, batch: "MetricBatch") -> None:
        batch.declare_empty(self.name)

    @property
    def family_name(self) -> str:
        """Name prometheus_client wants for the family (counters and infos without their suffix)."""
        if self.type == "counter":
            return self.name[: -len("_total")]
        if self.type == "info":
            return self.name[: -len("_info")]
        return self.name


def _as_float(spec: MetricSpec, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidSample(f"{spec.name}: value {value!r} is not a number")
    result = float(value)
    if spec.type == "counter" and (math.isnan(result) or result < 0):
        raise InvalidSample(f"{spec.name}: counter value {result!r} is negative or NaN")
    return result


@dataclass
class _Family:
    spec: MetricSpec
    metric: Metric
    seen: set[tuple[str, ...]] = field(default_factory=set)


class MetricBatch:
    """Samples from one collection of one collector, checked against its declarations."""

    def __init__(self, specs: Iterable[MetricSpec], max_series: int = 0,
                 const_labels: dict[str, str] | None = None) -> None:
        self._specs = {spec.name: spec for spec in specs}
        # Labels added to every series of the batch (a collector's `target`), unless a metric declares its own.
        self._const = {k: v for k, v in (const_labels or {}).items() if v}
        for name in self._const:
            if not LABEL_NAME_RE.match(name):
                raise InvalidSample(f"invalid constant label name {name!r}")
        self._families: dict[str, _Family] = {}
        self._max_series = max_series
        self._count = 0
        # Problems with one part of a source that did not stop the collection (a failing query, a command that
        # timed out); shown in /api/v1/collectors as `source_errors`.
        self.errors: dict[str, str] = {}
        # The targets the collector watches and their sources' results (core/targets.py).
        self.reports = TargetReports()

    def _family(self, name: str) -> _Family:
        fam = self._families.get(name)
        if fam is not None:
            return fam
        spec = self._specs.get(name)
        if spec is None:
            raise InvalidSample(f"metric {name!r} is not declared by this collector")
        labels = list(spec.labels) + [k for k in self._const if k not in spec.labels]
        if spec.type == "counter":
            metric: Metric = CounterMetricFamily(spec.family_name, spec.help, labels=labels)
        elif spec.type == "info":
            metric = InfoMetricFamily(spec.family_name, spec.help, labels=labels)
        else:
            metric = GaugeMetricFamily(spec.family_name, spec.help, labels=labels)
        fam = _Family(spec, metric)
        self._families[name] = fam
        return fam

    def _label_values(self, spec: MetricSpec, labels: dict[str, object]) -> tuple[str, ...]:
        if set(labels) != set(spec.labels):
            raise InvalidSample(
                f"{spec.name}: labels {sorted(labels)} do not match the declared {sorted(spec.labels)}"
            )
        values = []
        for name in spec.labels:
            value = labels[name]
            if value is None:
                value = ""
            if not isinstance(value, (str, int)) or isinstance(value, bool):
                raise InvalidSample(f"{spec.name}: label {name}={value!r} is not a string")
            values.append(str(value))
        return tuple(values)

    def _count_series(self, fam: _Family, key: tuple[str, ...]) -> None:
        if key in fam.seen:
            raise InvalidSample(f"{fam.spec.name}: duplicate series {dict(zip(fam.spec.labels, key, strict=True))}")
        fam.seen.add(key)
        self._count += 1
        if self._max_series and self._count > self._max_series:
            raise InvalidSample(f"more than {self._max_series} series (max_series); refusing the batch")

    def note_error(self, source: str, message: str) -> None:
        self.errors[source] = message

    def report_target(self, target: str, up: bool, error: str | None = None) -> None:
        """Whether a target was reachable in this run, and why not (core/targets.py)."""
        self.reports.report_target(target, up, error)

    def report_source(self, target: str, source: str, ok: bool, error: str | None = None) -> None:
        """Whether one source of a target was read in this run, and why not."""
        self.reports.report_source(target, source, ok, error)

    def declare_empty(self, name: str) -> None:
        """Emit the family's HELP/TYPE even when it has no samples this time."""
        self._family(name)

    def add(self, name: str, value: object, /, **labels: object) -> None:
        fam = self._family(name)
        if fam.spec.type == "info":
            raise InvalidSample(f"{name}: use add_info() for info metrics")
        key = self._label_values(fam.spec, labels)
        number = _as_float(fam.spec, value)
        self._count_series(fam, key)
        fam.metric.add_metric(list(key) + self._const_values(fam.spec), number)

    def add_info(self, name: str, info: dict[str, object], /, **labels: object) -> None:
        fam = self._family(name)
        if fam.spec.type != "info":
            raise InvalidSample(f"{name}: add_info() is only for info metrics")
        key = self._label_values(fam.spec, labels)
        clean = {}
        for k, v in info.items():
            if not LABEL_NAME_RE.match(k) or k in fam.spec.labels:
                raise InvalidSample(f"{name}: invalid info label {k!r}")
            clean[k] = "" if v is None else str(v)
        self._count_series(fam, key + tuple(sorted(clean.items())))  # type: ignore[arg-type]
        fam.metric.add_metric(list(key) + self._const_values(fam.spec), clean)

    def _const_values(self, spec: MetricSpec) -> list[str]:
        return [v for k, v in self._const.items() if k not in spec.labels]

    @property
    def series(self) -> int:
        return self._count

    def families(self) -> list[Metric]:
        return [fam.metric for fam in self._families.values()]

    def __iter__(self) -> Iterator[Metric]:
        return iter(self.families())
