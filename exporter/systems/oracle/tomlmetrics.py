"""The custom-metrics TOML files of Oracle's exporter (oracle-db-appdev-monitoring) and of iamseth's oracledb_exporter,
read as they are (``[[metric]]`` tables) and turned into this package's query declarations (querymetrics.QuerySpec),
so that the same runner executes them: each ``[[metric]]`` is a query with its own session, timeout, interval and
``middleware_oracle_query_success{query="toml_<context>..."}``.  The series keep those exporters' names
(``oracledb_<context>_<column>``); the rules, and where this reader departs from them, are in README.md
("Migrating from Oracle's exporter / oracledb_exporter") and docs/notes/oracle-health-design.md, section 1.
"""

from __future__ import annotations

import logging
import math
import re
import threading
import tomllib
from decimal import Decimal
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from ...core.configfiles import NESTED_TOO_DEEPLY, read_file
from ...core.metrics import LABEL_NAME_RE, METRIC_NAME_RE, MetricBatch, MetricSpec
from ...core.settings import StrictModel
from .metrics import COMPAT_NAMESPACE
from .querymetrics import MetricColumn, QueryRunner, QuerySpec, _number

log = logging.getLogger("middleware_exporter.oracle")

NAMESPACE = COMPAT_NAMESPACE
Flavour = Literal["oracle", "oracledb_exporter"]
# The published default metrics file of each exporter, shipped as data (compat/SOURCE.md: origin and MIT licence).
DEFAULT_FILES = {"oracle": "oracle-db-appdev-monitoring_default-metrics.toml",
                 "oracledb_exporter": "iamseth-oracledb_exporter_default-metrics.toml"}
KNOWN_KEYS = {"context", "labels", "metricsdesc", "metricstype", "metricsbuckets", "fieldtoappend", "request",
              "ignorezeroresult", "querytimeout", "scrapeinterval", "databases"}

# Go's time.ParseDuration syntax ("10s", "1h30m", "0.5h", "300ms"): hand-written, no library here parses it.
_GO_DURATION_RE = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_GO_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_go_duration(text: str) -> float:
    """Seconds of a Go duration string; ValueError for anything else (Go refuses a bare number but "0")."""
    if not isinstance(text, str):
        raise ValueError(f"{text!r} is not a duration string such as \"10s\"")
    body = text.strip()
    if body == "0":
        return 0.0
    parts = _GO_DURATION_RE.findall(body)
    if not parts or "".join(n + u for n, u in parts) != body:
        raise ValueError(f"{text!r} is not a Go duration such as \"10s\", \"300ms\" or \"1h30m\"")
    return sum(float(number) * _GO_UNITS[unit] for number, unit in parts)


def clean_name(value: str, flavour: Flavour) -> str:
    """The name part made from a fieldtoappend value: the exporters' cleanName (spaces to '_', '(', ')', '/', '*'
    removed, lower case; oracledb_exporter also '-' to '_'), then, unlike them, anything still not valid in a
    metric name to '_' (they would emit an invalid name, which client_golang refuses)."""
    text = value.replace(" ", "_")
    for char in "()/*":
        text = text.replace(char, "")
    if flavour == "oracledb_exporter":
        text = text.replace("-", "_")
    return re.sub(r"[^a-z0-9_]", "_", text.lower())


def metric_name(context: str, suffix: str) -> str:
    """prometheus.BuildFQName("oracledb", context, suffix): the non-empty parts joined with '_'."""
    return "_".join(part for part in (NAMESPACE, context, suffix) if part)


def label_text(value: Any) -> str:
    """A label value as the Go exporters print a row value (integers without '.0'); NULL is "" here (they print
    "<nil>")."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, Decimal) and value == value.to_integral_value():
        return str(int(value))
    return str(value).strip()


def _le_text(value: float) -> str:
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


class TomlColumn(StrictModel):
    column: str  # lower case
    help: str
    kind: Literal["gauge", "counter", "histogram"] = "gauge"
    buckets: list[tuple[str, str]] = Field(default_factory=list)  # histogram: (bucket column, le text)


class TomlQuery(QuerySpec):
    """One ``[[metric]]``: a QuerySpec (name, sql, timeout, interval) plus what the TOML rules need."""

    context: str
    origin: str  # "<file>: [[metric]] #3 (context 'x')", for messages
    flavour: Flavour
    columns: list[TomlColumn]
    label_columns: list[str]
    name_from: str | None = None  # fieldtoappend
    require_rows: bool = True  # not ignorezeroresult
    databases: list[str] | None = None  # None: every database

    @property
    def identity(self) -> tuple[str, tuple[str, ...]]:
        """Oracle's exporter: a later file's metric with the same context and metricsdesc keys replaces it."""
        return self.context, tuple(sorted(c.column for c in self.columns))

    def labels_of_series(self) -> list[str]:
        """The label columns the series carry: without the fieldtoappend column (Oracle's) or none at all on the
        fieldtoappend path (oracledb_exporter's)."""
        if self.name_from is None:
            return list(self.label_columns)
        if self.flavour == "oracledb_exporter":
            return []
        return [label for label in self.label_columns if label != self.name_from]

    def static_names(self) -> dict[str, tuple[str, tuple[str, ...], str]]:
        """name -> (kind, labels, help) of the series whose names do not depend on the rows."""
        if self.name_from is not None:
            return {}
        labels = tuple(self.labels_of_series())
        names: dict[str, tuple[str, tuple[str, ...], str]] = {}
        for column in self.columns:
            name = metric_name(self.context, column.column)
            if column.kind == "histogram":
                names[f"{name}_bucket"] = ("gauge", (*labels, "le"), column.help)
                names[f"{name}_sum"] = ("gauge", labels, column.help)
                names[f"{name}_count"] = ("gauge", labels, column.help)
            else:
                names[name] = (column.kind, labels, column.help)
        return names


def _fail(origin: str, reason: str) -> ValueError:
    return ValueError(f"{origin}: {reason}")


def _metric(path: str, index: int, raw: Any, flavour: Flavour) -> TomlQuery:
    where = f"custom metrics file {path}: [[metric]] #{index}"
    if not isinstance(raw, dict):
        raise _fail(where, "is not a table")
    table = {str(k).lower(): v for k, v in raw.items()}  # the Go decoder matches keys case-insensitively
    context = table.get("context")
    if not isinstance(context, str):
        raise _fail(where, "context is missing or not a string (it may be \"\")")
    origin = f"{where} (context {context!r})"
    unknown = sorted(set(table) - KNOWN_KEYS)
    if unknown:  # both exporters ignore unknown keys silently; say so once, at start
        log.warning("msg=%r", f"{origin}: keys {unknown} are not part of the format and are ignored")
    if not re.fullmatch(r"[a-zA-Z0-9_]*", context):
        raise _fail(origin, "context must consist of letters, digits and '_' (it becomes part of the name)")
    request = table.get("request")
    if not isinstance(request, str) or not request.strip():
        raise _fail(origin, "request (the SQL) is missing or empty")
    desc = table.get("metricsdesc")
    if not isinstance(desc, dict) or not desc or not all(isinstance(v, str) for v in desc.values()):
        raise _fail(origin, "metricsdesc must be a non-empty table of column = \"help text\"")
    lower = flavour == "oracle"  # Oracle's lowercases the keys; iamseth's uses them as they are
    desc = {(k.lower() if lower else k): v for k, v in desc.items()}
    types = table.get("metricstype", {})
    buckets = table.get("metricsbuckets", {})
    if not isinstance(types, dict) or not isinstance(buckets, dict):
        raise _fail(origin, "metricstype and metricsbuckets must be tables")
    types = {str(k).lower(): v for k, v in types.items()}
    buckets = {str(k).lower(): v for k, v in buckets.items()}
    columns = []
    for column, help_text in desc.items():
        kind = str(types.get(column.lower(), "gauge")).lower()
        if kind not in ("gauge", "counter", "histogram"):
            if flavour == "oracledb_exporter":  # it panics on an unknown type
                raise _fail(origin, f"metricstype {kind!r} of {column} is not gauge, counter or histogram")
            log.warning("msg=%r", f"{origin}: metricstype {kind!r} of {column} is unknown; a gauge, as Oracle's "
                                  "exporter does")
            kind = "gauge"
        pairs: list[tuple[str, str]] = []
        if kind == "histogram":
            spec = buckets.get(column.lower())
            if not isinstance(spec, dict) or not spec:
                raise _fail(origin, f"histogram {column} needs metricsbuckets.{column} (bucket column = \"le\")")
            for bucket, le in spec.items():
                try:
                    bound = float(str(le))
                except ValueError:
                    raise _fail(origin, f"metricsbuckets.{column}.{bucket}: {le!r} is not a number") from None
                pairs.append((str(bucket).lower(), _le_text(bound)))
        columns.append(TomlColumn(column=column.lower(), help=help_text.strip() or f"{column} ({context})",
                                  kind=kind, buckets=pairs))
    labels = table.get("labels", [])
    if not isinstance(labels, list) or not all(isinstance(v, str) for v in labels):
        raise _fail(origin, "labels must be an array of column names")
    labels = [v.lower() for v in labels]
    for label in labels:
        if not LABEL_NAME_RE.match(label) or label.startswith("__"):
            raise _fail(origin, f"label column {label!r} cannot be a label name")
    if len(set(labels)) != len(labels):
        raise _fail(origin, "a label column is listed twice")
    name_from = table.get("fieldtoappend")
    if name_from is not None and (not isinstance(name_from, str) or not name_from):
        raise _fail(origin, "fieldtoappend must be a column name")
    if name_from and any(c.kind == "histogram" for c in columns):
        raise _fail(origin, "fieldtoappend with a histogram is not supported")
    if name_from and len(columns) > 1:
        raise _fail(origin, "fieldtoappend with several metricsdesc columns gives every column the same name "
                            "(duplicate series); use one column per [[metric]]")
    if any(c.kind == "histogram" for c in columns) and "le" in labels:
        raise _fail(origin, "a histogram cannot have a label column named le")
    ignore = table.get("ignorezeroresult", False)
    if not isinstance(ignore, bool):
        raise _fail(origin, "ignorezeroresult must be true or false")
    timing: dict[str, float | None] = {}
    for key in ("querytimeout", "scrapeinterval"):
        value = table.get(key)
        try:
            seconds = None if value is None else parse_go_duration(value)
        except ValueError as exc:
            raise _fail(origin, f"{key}: {exc}") from None
        timing[key] = seconds or None  # "0": the default
    databases = table.get("databases")
    if databases is not None and (not isinstance(databases, list) or not all(isinstance(d, str) for d in databases)):
        raise _fail(origin, "databases must be an array of database names")
    query = TomlQuery(
        name="toml", sql=request.strip().rstrip(";"), timeout=timing["querytimeout"],
        interval=timing["scrapeinterval"], context=context, origin=origin, flavour=flavour, columns=columns,
        label_columns=labels, name_from=name_from.lower() if name_from else None, require_rows=not ignore,
        databases=databases,
        metrics=[MetricColumn(name=metric_name(context, c.column if not name_from else f"by_{name_from.lower()}"),
                              help=c.help, value=c.column) for c in columns])
    for name in query.static_names():
        if not METRIC_NAME_RE.match(name):
            raise _fail(origin, f"{name!r} is not a valid metric name")
    return query


def load_toml(path: str | Path, flavour: Flavour = "oracle") -> list[TomlQuery]:
    """The ``[[metric]]`` tables of one file; errors name the file, the metric's position and context.  Read by
    core.configfiles (a FIFO or a file on a hung mount fails naming custom_metrics instead of hanging the start)."""
    try:
        data = tomllib.loads(read_file(path, "custom_metrics file").decode("utf-8"))
    except UnicodeDecodeError:
        raise ValueError(f"custom metrics file {path} is not UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"custom metrics file {path} is not valid TOML: {exc}") from None
    except RecursionError:  # tomllib parses nested arrays and inline tables recursively
        raise ValueError(f"custom metrics file {path} is not valid TOML: {NESTED_TOO_DEEPLY}") from None
    metrics = {str(k).lower(): v for k, v in data.items()}.get("metric")
    if not isinstance(metrics, list) or not metrics:
        raise ValueError(f"custom metrics file {path}: no [[metric]] tables")
    return [_metric(str(path), index, raw, flavour) for index, raw in enumerate(metrics, start=1)]


def default_file(flavour: Flavour) -> Path:
    with resources.as_file(resources.files(__package__) / "compat" / DEFAULT_FILES[flavour]) as path:
        return Path(path)


def load_metric_files(paths: list[str], flavour: Flavour, defaults: bool) -> list[TomlQuery]:
    """The exporter's default file (``defaults``) and then each file in order; a metric with the same context and
    metricsdesc keys as an earlier one replaces it (Oracle's documented override).  Query names are
    ``toml_<context>`` (plus the columns when a context repeats); two metrics giving one series name are refused."""
    merged: dict[tuple[str, tuple[str, ...]], TomlQuery] = {}
    sources = ([default_file(flavour)] if defaults else []) + [Path(p) for p in paths]
    for path in sources:
        for query in load_toml(path, flavour):
            merged.pop(query.identity, None)  # the replacement takes the place of the last definition
            merged[query.identity] = query
    queries = list(merged.values())
    contexts = [q.context for q in queries]
    taken: set[str] = set()
    owners: dict[str, TomlQuery] = {}
    for query in queries:
        base = "toml_" + (query.context.lower() or "_".join(query.identity[1]))
        if query.context and contexts.count(query.context) > 1:
            base += "_" + "_".join(query.identity[1])
        name, n = base, 1
        while name in taken:
            n += 1
            name = f"{base}_{n}"
        taken.add(name)
        query.name = name
        for series in query.static_names():
            other = owners.get(series)
            if other is not None:
                raise ValueError(f"{query.origin}: series {series} is also produced by {other.origin}")
            owners[series] = query
    return queries


def for_database(queries: list[TomlQuery], database: str) -> list[TomlQuery]:
    """The metrics a database runs: ``databases`` absent is every database, ``[]`` none (Oracle's code)."""
    return [q for q in queries if q.databases is None or database in q.databases]


class NameRegistry:
    """The declarations of the TOML series, shared by every database's runner of one collector (the batch is
    shared): a name has one type and one label set, and belongs to one [[metric]]."""

    def __init__(self, const_labels: tuple[str, ...], reserved: set[str]) -> None:
        self.const = const_labels
        self.reserved = set(reserved)
        self._specs: dict[str, MetricSpec] = {}
        self._owner: dict[str, str] = {}
        self._lock = threading.Lock()

    def claim(self, name: str, kind: str, help_text: str, labels: tuple[str, ...], query: TomlQuery) -> MetricSpec:
        with self._lock:
            spec = self._specs.get(name)
            if spec is None:
                if name in self.reserved:
                    raise ValueError(f"series {name} would clash with the exporter's own")
                if not METRIC_NAME_RE.match(name):
                    raise ValueError(f"{name!r} is not a valid metric name")
                overlap = set(labels) & set(self.const)
                if overlap:
                    raise ValueError(f"label columns {sorted(overlap)} are reserved (constant labels)")
                # A counter keeps its name only if it ends in _total (the exposition adds _total to counters):
                # others are exposed as gauges under the exporters' exact name (README.md).
                real = "counter" if kind == "counter" and name.endswith("_total") else "gauge"
                spec = MetricSpec(name, real, help_text, self.const + labels, f"custom metrics `{query.context}`")
                self._specs[name] = spec
                self._owner[name] = query.name
                return spec
            if self._owner[name] != query.name:
                raise ValueError(f"series {name} is already produced by query {self._owner[name]}")
            if spec.labels != self.const + labels:
                raise ValueError(f"series {name} already has the labels {list(spec.labels)}")
            return spec

    def spec(self, name: str) -> MetricSpec:
        with self._lock:
            return self._specs[name]

    def specs(self) -> list[MetricSpec]:
        with self._lock:
            return list(self._specs.values())


def _value(raw: Any, flavour: Flavour) -> float | None:
    """NULL: 0 with Oracle's exporter (it prints "<nil>" and reads it as 0), skipped with oracledb_exporter's."""
    if raw is None:
        return 0.0 if flavour == "oracle" else None
    value = _number(raw)
    if value is None or math.isnan(value):
        return None
    return value


class TomlRunner(QueryRunner):
    """QueryRunner for TOML metrics: the same sessions, timeouts, intervals and success series; the rows become
    series by the TOML rules.

    ``max_series`` (the collector's): a metric whose rows give more series, or more than the room the rest of the run
    leaves (:meth:`emit`), is refused alone, its query failed with the reason and the metric's file, position and
    context; it no longer fails the whole collection, the built-in series included (issue 38)."""

    def __init__(self, queries: list[TomlQuery], prefix: str, const_labels: dict[str, str],
                 registry: NameRegistry, max_series: int = 0) -> None:
        super().__init__(list(queries), prefix=prefix, const_labels=const_labels, allowed_prefix=f"{NAMESPACE}_")
        self.registry = registry
        self.max_series = max_series
        for query in queries:
            for name, (kind, labels, help_text) in query.static_names().items():
                try:
                    registry.claim(name, kind, help_text, labels, query)
                except ValueError as exc:
                    raise ValueError(f"{query.origin}: {exc}") from None

    def specs(self) -> list[MetricSpec]:
        own = [spec for spec in super().specs() if spec.name.startswith(f"{self.prefix}_")]  # success, duration
        return own + self.registry.specs()

    def _convert(self, query: QuerySpec, columns: list[str], rows: list[tuple],
                 instance: dict[str, str] | None = None) -> list[tuple[str, float, dict]]:
        assert isinstance(query, TomlQuery)
        index = {name: i for i, name in enumerate(columns)}
        labels_of = query.labels_of_series()
        samples: list[tuple[str, float, dict[str, str]]] = []
        seen: set[tuple[str, tuple[str, ...]]] = set()
        problems: list[str] = []

        def add(name: str, kind: str, help_text: str, value: float, labels: dict[str, str]) -> None:
            if self.max_series and len(samples) >= self.max_series:  # stop here: no more names claimed, no rows kept
                raise ValueError(f"more than max_series ({self.max_series}) series; this custom metric alone is "
                                 f"refused ({query.origin})")
            spec = self.registry.claim(name, kind, help_text, tuple(labels), query)
            if spec.type == "counter" and value < 0:
                raise ValueError(f"{name}: counter value {value} is negative")
            key = (name, tuple(labels.values()))
            if key in seen:
                raise ValueError(f"{name}: two rows with labels {labels}")
            seen.add(key)
            samples.append((name, value, labels))

        for row in rows:
            labels = {label: label_text(row[index[label]]) if label in index else "" for label in labels_of}
            base = None
            if query.name_from is not None:
                raw = row[index[query.name_from]] if query.name_from in index else None
                if raw is None or not label_text(raw):
                    problems.append(f"fieldtoappend column {query.name_from} is missing or NULL")
                    continue
                base = metric_name(query.context, clean_name(label_text(raw), query.flavour))
            for column in query.columns:
                if column.column not in index:
                    problems.append(f"column {column.column} not in the result ({', '.join(columns)})")
                    continue
                try:
                    value = _value(row[index[column.column]], query.flavour)
                except ValueError as exc:
                    problems.append(f"{column.column}: {exc}")
                    continue
                if value is None:
                    continue
                name = base or metric_name(query.context, column.column)
                if column.kind != "histogram":
                    add(name, column.kind, column.help, value, labels)
                    continue
                if "count" not in index:
                    raise ValueError(f"histogram {name} needs a column named count in the result")
                count = _value(row[index["count"]], query.flavour)
                if count is None:
                    problems.append(f"histogram {name}: count is NULL")
                    continue
                bounds = []
                for bucket, le in column.buckets:
                    if bucket not in index:
                        raise ValueError(f"histogram {name}: bucket column {bucket} not in the result")
                    bounds.append((le, _value(row[index[bucket]], query.flavour)))
                if any(v is None for _, v in bounds):
                    problems.append(f"histogram {name}: a bucket is NULL")
                    continue
                for le, v in [*bounds, ("+Inf", count)]:
                    add(f"{name}_bucket", "gauge", column.help, float(v or 0.0), {**labels, "le": le})
                add(f"{name}_sum", "gauge", column.help, value, labels)
                add(f"{name}_count", "gauge", column.help, count, labels)
        if not samples and query.require_rows:
            why = f": {problems[0]}" if problems else ""
            raise ValueError(f"zero result (no rows or no usable values{why}); ignorezeroresult = true accepts it")
        if problems and samples:
            log.debug("query=%s msg=%r", query.name, f"{len(problems)} value(s) skipped: {problems[0]}")
        return samples

    def fit(self, batch: MetricBatch) -> None:
        """Refuse, one metric at a time and in order, the metrics whose series do not fit in ``max_series`` beside
        what ``batch`` holds already (the built-in series, emitted first): each is failed with the reason, the
        others and the batch are kept."""
        if not self.max_series:
            return
        ran = [self._state[q.name] for q in self.queries if self._state[q.name].success is not None]
        room = self.max_series - batch.series - 2 * len(ran)  # each query's success and duration series
        for query in self.queries:
            state = self._state[query.name]
            if not state.samples:
                continue
            if len(state.samples) > room:
                state.error = (f"its {len(state.samples)} series do not fit in max_series ({self.max_series}) beside "
                               f"the run's other {batch.series} series; this custom metric alone is refused "
                               f"({query.origin})")
                state.samples, state.success = [], False
                continue
            room -= len(state.samples)

    def emit(self, batch: MetricBatch) -> None:
        for query in self.queries:
            state = self._state[query.name]
            if state.success is None:
                continue
            batch.add(f"{self.prefix}_success", 1 if state.success else 0, query=query.name, **self.const_labels)
            batch.add(f"{self.prefix}_duration_seconds", state.duration, query=query.name, **self.const_labels)
            for name, value, labels in state.samples:
                batch.declare(self.registry.spec(name))  # a fieldtoappend name is known only from the rows
                batch.add(name, value, **labels, **self.const_labels)
