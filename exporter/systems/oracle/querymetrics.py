"""Metrics declared as data: SQL plus metric descriptions in a YAML file (``queries.yaml`` here and in HPOM),
so that a site can add or replace queries without code.  Each query runs on a pooled session of its own with its
own timeout and interval; a failing query reports ``..._query_success{query} 0`` and none of its own metrics
without affecting the others.  The file format is described in this folder's README.md.
"""

from __future__ import annotations

import math
import re
import time
import weakref
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import Field, ValidationError, field_validator, model_validator

from ...core.configfiles import NESTED_TOO_DEEPLY, check_shape, read_file
from ...core.metrics import LABEL_NAME_RE, MetricBatch, MetricSpec
from ...core.settings import Duration, StrictModel
from .client import BROKEN_SESSION_ERRORS, DatabaseUnavailable, OracleClient, error_code, error_text

# The label of per-instance metrics (RAC): the instance number, as GV$ views name it (INST_ID) and as Oracle's own
# exporter (oracle-db-appdev-monitoring) labels its per-instance metrics.  Not `instance`: Prometheus uses that for
# the scrape target.
INSTANCE_LABEL = "inst_id"
# The instance the session runs on: SYS_CONTEXT needs no grant, and USERENV's INSTANCE is the number V$INSTANCE
# calls INSTANCE_NUMBER (1 on a single-instance database).
INSTANCE_SQL = "SELECT SYS_CONTEXT('USERENV', 'INSTANCE') AS inst_id FROM dual"
# The server's version, read once per session (min_version / max_version) where the driver does not say it
# (python-oracledb and cx_Oracle give connection.version without a round trip).
VERSION_SQL = "SELECT version FROM v$instance"
# Where the session is (cdb: true / false queries; 12.1+): 0 a non-CDB, 1 the root of a CDB, >1 a PDB.
CON_ID_SQL = "SELECT SYS_CONTEXT('USERENV', 'CON_ID') AS con_id FROM dual"
# Whether the database keeps files in ASM (asm: true queries), read once per session: its data, control and online
# redo files named '+DISKGROUP/...'.  Asking V$ASM_* views of a database without ASM writes a trace file per query
# (oracledb_exporter issue 151); these three views are plain control-file views, readable in MOUNT too.
ASM_SQL = """SELECT (SELECT COUNT(*) FROM v$datafile WHERE name LIKE '+%')
       + (SELECT COUNT(*) FROM v$controlfile WHERE name LIKE '+%')
       + (SELECT COUNT(*) FROM v$logfile WHERE member LIKE '+%') AS asm_files
  FROM dual"""
VERSION_RE = re.compile(r"^\d+(\.\d+)*$")


def version_tuple(text: str) -> tuple[int, ...]:
    """"11.2.0.4.0" -> (11, 2, 0, 4, 0); compared element-wise, so "12.1" <= "12.1.0.2"."""
    return tuple(int(part) for part in re.findall(r"\d+", str(text))[:5])


@dataclass(frozen=True)
class ServerFacts:
    """What a session's server is: its version (text as the server gives it), 12.1+ its container id, and whether
    the database keeps files in ASM (None: not asked, or the answer could not be had; ``asm_error`` says why)."""
    version: str
    con_id: int | None = None
    asm: bool | None = None
    asm_error: str | None = None

    @property
    def where(self) -> str:
        return {None: "a non-CDB", 0: "a non-CDB", 1: "the CDB root"}.get(self.con_id, "a PDB")


class MetricColumn(StrictModel):
    name: str
    type: Literal["gauge", "counter", "info"] = "gauge"
    help: str = Field(..., min_length=1)
    value: str | None = None  # not used by info metrics: all their labels come from columns
    labels: list[str] = Field(default_factory=list)
    # "interval": the value column is Oracle's interval text '+DD HH:MI:SS[.FF]' (V$DATAGUARD_STATS.VALUE), read
    # as seconds
    parse: Literal["number", "interval"] = "number"

    @field_validator("value")
    @classmethod
    def _lower_value(cls, value: str | None) -> str | None:
        return None if value is None else value.lower()

    @model_validator(mode="after")
    def _value_needed(self) -> "MetricColumn":
        if self.type != "info" and self.value is None:
            raise ValueError(f"{self.name}: a {self.type} needs a value column")
        if self.type == "info" and not self.labels:
            raise ValueError(f"{self.name}: an info metric needs label columns")
        return self

    @field_validator("labels")
    @classmethod
    def _lower_labels(cls, labels: list[str]) -> list[str]:
        for label in labels:
            if not LABEL_NAME_RE.match(label):
                raise ValueError(f"{label!r} cannot be a label name")
        return [label.lower() for label in labels]


class QuerySpec(StrictModel):
    name: str = Field(..., pattern=r"^[a-z][a-z0-9_]*$")
    help: str = ""
    sql: str = Field(..., min_length=1)
    timeout: Duration | None = None
    interval: Duration | None = None
    params: dict[str, int | float | str] = Field(default_factory=dict)
    zero_fill: dict[str, list[str]] = Field(default_factory=dict)
    # The rows describe the instance the session is on (V$SYSTEM_EVENT, V$SESSION, V$PARAMETER, ...), not the
    # database: every metric gets the instance number as `inst_id`, looked up on the same session.
    per_instance: bool = False
    # Versions (README.md, "Query files"): run only on servers of min_version or later / before max_version;
    # several queries of one name with disjoint ranges are alternatives (the one that fits runs).
    min_version: str | None = None
    max_version: str | None = None
    # Multitenant (12.1+): true = only on a session in the root of a CDB (CDB_* views, CON_ID); false = only on a
    # non-CDB or inside a PDB (DBA_* views); unset = anywhere.
    cdb: bool | None = None
    # ASM: true = only where the database keeps files in ASM (ASM_SQL, once per session); false = only where not.
    asm: bool | None = None
    metrics: list[MetricColumn] = Field(..., min_length=1)

    @field_validator("min_version", "max_version", mode="before")
    @classmethod
    def _version(cls, value: Any) -> str | None:
        if value is None:
            return None
        if not VERSION_RE.match(str(value)):
            raise ValueError(f"{value!r} is not a version like 12.1 or 11.2.0.4")
        return str(value)

    @property
    def conditional(self) -> bool:
        return (self.min_version is not None or self.max_version is not None or self.cdb is not None
                or self.asm is not None)

    def skip_reason(self, facts: ServerFacts) -> str | None:
        """Why this query does not run on that server, or None if it does."""
        version = version_tuple(facts.version)
        if self.min_version and version < version_tuple(self.min_version):
            return f"needs Oracle {self.min_version}; this database is {facts.version}"
        if self.max_version and version >= version_tuple(self.max_version):
            return f"for Oracle before {self.max_version}; this database is {facts.version}"
        if self.cdb is True and facts.con_id != 1:
            return f"needs a session in the root of a CDB; this session is in {facts.where}"
        if self.cdb is False and facts.con_id == 1:
            return "not for the root of a CDB (the CDB variant runs there)"
        if self.asm is not None and facts.asm is None:
            return f"cannot tell whether the database uses ASM: {facts.asm_error or 'not asked'}"
        if self.asm is True and not facts.asm:
            return "the database keeps no files in ASM (no data, control or redo file named +DISKGROUP/...)"
        if self.asm is False and facts.asm:
            return "the database keeps files in ASM (the ASM variant runs)"
        return None

    def overlaps(self, other: "QuerySpec") -> bool:
        low = max(version_tuple(self.min_version or "0"), version_tuple(other.min_version or "0"))
        high = min(version_tuple(self.max_version or "999"), version_tuple(other.max_version or "999"))
        return (low < high and (self.cdb is None or other.cdb is None or self.cdb == other.cdb)
                and (self.asm is None or other.asm is None or self.asm == other.asm))

    @model_validator(mode="after")
    def _instance_label_free(self) -> "QuerySpec":
        if self.per_instance:
            for metric in self.metrics:
                if INSTANCE_LABEL in metric.labels:
                    raise ValueError(f"query {self.name}: {metric.name} cannot have a column label "
                                     f"{INSTANCE_LABEL!r}; per_instance adds it")
        return self

    @model_validator(mode="after")
    def _zero_fill_labels(self) -> "QuerySpec":
        for label in self.zero_fill:
            for metric in self.metrics:
                if metric.labels != [label.lower()]:
                    raise ValueError(f"query {self.name}: zero_fill needs {metric.name} to have exactly the label "
                                     f"{label!r}")
        if len(self.zero_fill) > 1:
            raise ValueError(f"query {self.name}: zero_fill supports one label")
        return self


class QueryFile(StrictModel):
    queries: list[QuerySpec]

    @model_validator(mode="after")
    def _unique(self) -> "QueryFile":
        groups: dict[str, list[QuerySpec]] = {}
        for query in self.queries:
            groups.setdefault(query.name, []).append(query)
        for name, variants in groups.items():
            # alternatives: the same name and metrics, for disjoint versions (or CDB root / not)
            shape = [(m.name, m.type, m.labels) for m in variants[0].metrics]
            for index, query in enumerate(variants):
                if any(query.overlaps(other) for other in variants[:index]):
                    raise ValueError(f"query names defined twice: ['{name}'] (alternatives of one query need "
                                     f"disjoint min_version/max_version or cdb)")
                if [(m.name, m.type, m.labels) for m in query.metrics] != shape or \
                        query.per_instance != variants[0].per_instance:
                    raise ValueError(f"query {name}: its alternatives must declare the same metrics and labels")
        metrics = [m.name for variants in groups.values() for m in variants[0].metrics]
        dupes = {n for n in metrics if metrics.count(n) > 1}
        if dupes:
            raise ValueError(f"metric names defined twice: {sorted(dupes)}")
        return self


def load_queries(path: str | Path, what: str = "query file") -> list[QuerySpec]:
    """Read and validate a query file; errors name the file (``what``: the setting that names it) and the offending
    key.  Read by core.configfiles: a FIFO or a file on a hung mount fails instead of hanging the start; a file
    nesting too deeply or multiplying through YAML aliases is refused."""
    try:
        data = yaml.safe_load(read_file(path, what).decode("utf-8"))
        check_shape(data, f"query file {path}")
    except UnicodeDecodeError:
        raise ValueError(f"query file {path} is not UTF-8") from None
    except yaml.YAMLError as exc:
        raise ValueError(f"query file {path} is not valid YAML: {exc}") from None
    except RecursionError:
        raise ValueError(f"query file {path} is not valid YAML: {NESTED_TOO_DEEPLY}") from None
    try:
        return QueryFile.model_validate(data).queries
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        raise ValueError(f"query file {path}: {problems}") from None


INTERVAL_RE = re.compile(r"^([+-])?(\d+) (\d{1,2}):(\d{2}):(\d{2}(?:\.\d*)?)$")


def interval_seconds(value: Any) -> float | None:
    """'+00 00:01:05' (days hours:minutes:seconds, as V$DATAGUARD_STATS shows a lag) -> 65.0; NULL or "" -> None."""
    if value is None or str(value).strip() == "":
        return None
    match = INTERVAL_RE.match(str(value).strip())
    if not match:
        raise ValueError(f"value {str(value)[:40]!r} is not an interval like +DD HH:MI:SS")
    sign, days, hours, minutes, seconds = match.groups()
    total = int(days) * 86400 + int(hours) * 3600 + int(minutes) * 60 + float(seconds)
    return -total if sign == "-" else total


def _number(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError(f"value {value!r} is not a number")
    if isinstance(value, (int, float, Decimal)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            pass
    raise ValueError(f"value {str(value)[:40]!r} is not a number")


@dataclass
class _QueryState:
    samples: list[tuple[str, float, dict[str, str]]] = field(default_factory=list)
    success: bool | None = None
    duration: float = 0.0
    last_run: float | None = None
    error: str | None = None
    pending: bool = False  # due in the current run and not finished yet
    skipped: str | None = None  # why no variant of the query fits this server (not a failure)


class QueryRunner:
    """Runs a list of declared queries against one database and adds their samples to a batch."""

    def __init__(self, queries: list[QuerySpec], prefix: str, const_labels: dict[str, str] | None = None,
                 params: dict[str, Any] | None = None, allowed_prefix: str | None = None,
                 clock=time.monotonic) -> None:
        self.queries = queries
        self.prefix = prefix
        self.const_labels = dict(const_labels or {})
        self.params = dict(params or {})
        self._clock = clock
        self._state = {q.name: _QueryState() for q in queries}
        # one entry per name: its alternatives (min_version / max_version / cdb), first-declared first
        self._variants: dict[str, list[QuerySpec]] = {}
        for query in queries:
            self._variants.setdefault(query.name, []).append(query)
        self.queries = [variants[0] for variants in self._variants.values()]
        self._conditional = any(q.conditional for q in queries)
        # the server's facts per session, read once per session (a new session may be another server after a
        # failover); weak keys: a dropped session's entry goes with it
        self._facts: weakref.WeakKeyDictionary[Any, ServerFacts] = weakref.WeakKeyDictionary()
        self._info = {m.name for q in queries for m in q.metrics if m.type == "info"}
        allowed = allowed_prefix or prefix.rsplit("_", 1)[0] + "_"
        for query in queries:
            for metric in query.metrics:
                if not metric.name.startswith(allowed):
                    raise ValueError(f"query {query.name}: metric {metric.name} must start with {allowed}")
                overlap = set(metric.labels) & set(self.const_labels)
                if overlap:
                    raise ValueError(f"query {query.name}: labels {sorted(overlap)} are reserved")

    def specs(self) -> list[MetricSpec]:
        const = tuple(self.const_labels)
        specs = [
            MetricSpec(f"{self.prefix}_success", "gauge", "1 if the query's last run succeeded.", const + ("query",)),
            MetricSpec(f"{self.prefix}_duration_seconds", "gauge", "Duration of the query's last run.",
                       const + ("query",)),
        ]
        if self._conditional:  # only where a query can be skipped (not HPOM's file)
            specs.append(MetricSpec(f"{self.prefix}_skipped", "gauge", "1 if the query did not run because the "
                                    "server lacks what it needs (min_version, max_version, cdb, asm), with the reason; "
                                    "its success is then 1.", const + ("query", "reason")))
        for query in self.queries:
            instance = (INSTANCE_LABEL,) if query.per_instance else ()
            for metric in query.metrics:
                labels = const + instance + (() if metric.type == "info" else tuple(metric.labels))
                specs.append(MetricSpec(metric.name, metric.type, metric.help, labels, f"query `{query.name}`"))
        return specs

    def _bind(self, query: QuerySpec) -> dict[str, Any]:
        binds = dict(query.params)
        for key in binds:
            if key in self.params:
                binds[key] = self.params[key]
        return binds

    def _convert(self, query: QuerySpec, columns: list[str], rows: list[tuple],
                 instance: dict[str, str] | None = None) -> list[tuple[str, float, dict]]:
        """The samples of a result; ``instance`` ({"inst_id": "2"}, per_instance queries) joins every sample's labels,
        so that a sample and its instance are kept (and replaced) together."""
        instance = instance or {}
        index = {name: i for i, name in enumerate(columns)}
        samples: list[tuple[str, float, dict[str, str]]] = []
        for metric in query.metrics:
            wanted = [metric.value] if metric.value else []
            missing = [c for c in [*wanted, *metric.labels] if c not in index]
            if missing:
                raise ValueError(f"columns {missing} not in the result ({', '.join(columns)})")
            seen: set[tuple[str, ...]] = set()
            for row in rows:
                if not metric.value:
                    value: float | None = 1.0
                elif metric.parse == "interval":
                    value = interval_seconds(row[index[metric.value]])
                else:
                    value = _number(row[index[metric.value]])
                labels = {label: "" if row[index[label]] is None else str(row[index[label]]).strip()
                          for label in metric.labels}
                key = tuple(labels[label] for label in metric.labels)
                if key in seen:
                    raise ValueError(f"{metric.name}: two rows with labels {labels}")
                seen.add(key)
                if value is None:
                    continue
                if metric.type == "counter" and (value < 0 or math.isnan(value)):
                    raise ValueError(f"{metric.name}: counter value {value} is negative")
                samples.append((metric.name, value, {**labels, **instance}))
            for label, values in query.zero_fill.items():
                label = label.lower()
                for wanted in values:
                    if (wanted,) not in seen:
                        samples.append((metric.name, 0.0, {label: wanted, **instance}))
        return samples

    def due(self, query: QuerySpec) -> bool:
        state = self._state[query.name]
        if state.last_run is None or query.interval is None:
            return True
        return self._clock() - state.last_run >= query.interval - 0.5  # tolerate scheduling jitter

    def run(self, client: OracleClient) -> None:
        """Run the due queries, each on a pooled session of its own, and keep their rows for emit().

        A query that times out or breaks its session does not take the next query down with it: the broken
        session is dropped and the next query gets another one.  Nothing here touches a batch, so a caller may
        run this under a deadline in another thread and abandon it."""
        due = [q for q in self.queries if self.due(q)]
        for query in due:
            self._state[query.name].pending = True
        for position, query in enumerate(due):
            state = self._state[query.name]
            started = time.monotonic()
            state.last_run = self._clock()
            try:
                with client.session() as conn:
                    chosen, skipped = self._choose(client, conn, query)
                    if chosen is not None:
                        query = chosen
                        # on the query's own session: through a RAC SCAN address, the next session may be elsewhere
                        instance = self._instance(client, conn, query) if query.per_instance else {}
                        result = client.query(conn, query.sql, self._bind(query), query.timeout)
                if chosen is None:
                    state.samples, state.skipped = [], skipped
                else:
                    state.samples = self._convert(query, result.columns, result.rows, instance)
                    state.skipped = None
                state.success, state.error = True, None
            except DatabaseUnavailable as exc:
                for pending in due[position:]:
                    self._mark_failed(pending, str(exc))
                break
            except Exception as exc:  # noqa: BLE001 - one query's failure must not affect the others
                state.samples, state.success, state.skipped = [], False, None
                state.error = error_text(exc)
                if "timeout" in state.error.lower() or "DPY-4024" in state.error:
                    state.error = f"timed out after {query.timeout or client.settings.query_timeout:g}s: " \
                                  f"{state.error}"
            state.duration = time.monotonic() - started
            state.pending = False

    def _choose(self, client: OracleClient, conn: Any, query: QuerySpec) -> tuple[QuerySpec | None, str | None]:
        """The alternative of the query that fits the session's server, or None and why none does."""
        variants = self._variants[query.name]
        if len(variants) == 1 and not query.conditional:
            return query, None  # the query as self.queries holds it now
        facts = self.facts(client, conn, need_con_id=any(v.cdb is not None for v in variants),
                           need_asm=any(v.asm is not None for v in variants))
        reasons = []
        for variant in variants:
            reason = variant.skip_reason(facts)
            if reason is None:
                return variant, None
            reasons.append(reason)
        too_old = [v for v in variants if v.min_version and version_tuple(facts.version) < version_tuple(v.min_version)]
        if len(too_old) == len(variants):  # older than every variant: the lowest release that would do
            return None, min(too_old, key=lambda v: version_tuple(v.min_version or "0")).skip_reason(facts)
        return None, reasons[0] if len(set(reasons)) == 1 else "; ".join(dict.fromkeys(reasons))

    def facts(self, client: OracleClient, conn: Any, need_con_id: bool = False,
              need_asm: bool = False) -> ServerFacts:
        """The session's server version (connection.version, else V$INSTANCE.VERSION), 12.1+ and when a query needs
        it its container id, and when a query needs it whether the database uses ASM: each read once per session
        (a new session, after a reconnect or a failover, asks again)."""
        try:
            known = self._facts.get(conn)
        except TypeError:  # a connection type without weak references: read every time
            known = None
        con_id_known = known is not None and (known.con_id is not None or version_tuple(known.version) < (12, 1))
        asm_known = known is not None and (known.asm is not None or known.asm_error is not None)
        if known is not None and (con_id_known or not need_con_id) and (asm_known or not need_asm):
            return known
        version = known.version if known else getattr(conn, "version", None)
        if not version:
            rows = client.query(conn, VERSION_SQL).rows
            version = str(rows[0][0]).strip() if rows and rows[0][0] is not None else ""
            if not version:
                raise ValueError("the server's version (V$INSTANCE.VERSION) is empty")
        con_id = known.con_id if known else None
        if need_con_id and con_id is None and version_tuple(version) >= (12, 1):
            rows = client.query(conn, CON_ID_SQL).rows
            con_id = int(str(rows[0][0]).strip()) if rows and rows[0][0] is not None else 0
        asm, asm_error = (known.asm, known.asm_error) if known else (None, None)
        if need_asm and asm is None and asm_error is None:
            asm, asm_error = self._uses_asm(client, conn)
        facts = ServerFacts(str(version), con_id, asm, asm_error)
        try:
            self._facts[conn] = facts
        except TypeError:
            pass
        return facts

    @staticmethod
    def _uses_asm(client: OracleClient, conn: Any) -> tuple[bool | None, str | None]:
        """Whether the database keeps files in ASM; (None, why) when that cannot be read (no grant on the file
        views): the ASM queries are then skipped with the reason, never run blind."""
        try:
            rows = client.query(conn, ASM_SQL).rows
            return bool(rows) and _number(rows[0][0]) not in (None, 0.0), None
        except DatabaseUnavailable:
            raise
        except Exception as exc:  # noqa: BLE001 - a missing grant on v$datafile must not fail the other queries
            if error_code(exc) in BROKEN_SESSION_ERRORS:
                raise
            return None, error_text(exc)

    @staticmethod
    def _instance(client: OracleClient, conn: Any, query: QuerySpec) -> dict[str, str]:
        rows = client.query(conn, INSTANCE_SQL, timeout=query.timeout).rows
        number = str(rows[0][0]).strip() if rows and rows[0] and rows[0][0] is not None else ""
        if not number:
            raise ValueError("the session's instance number (SYS_CONTEXT('USERENV', 'INSTANCE')) is empty")
        return {INSTANCE_LABEL: number}

    def fail_due(self, error: str) -> None:
        """Mark the queries of an abandoned run that had not finished as failed."""
        for query in self.queries:
            state = self._state[query.name]
            if state.pending or state.success is None:
                self._mark_failed(query, error)

    def _mark_failed(self, query: QuerySpec, error: str) -> None:
        state = self._state[query.name]
        state.samples, state.success, state.error, state.duration = [], False, error, 0.0
        state.skipped = None
        state.last_run = self._clock()
        state.pending = False

    def emit(self, batch: MetricBatch) -> None:
        for query in self.queries:
            state = self._state[query.name]
            if state.success is None:
                continue
            batch.add(f"{self.prefix}_success", 1 if state.success else 0, query=query.name, **self.const_labels)
            batch.add(f"{self.prefix}_duration_seconds", state.duration, query=query.name, **self.const_labels)
            if state.skipped:
                batch.add(f"{self.prefix}_skipped", 1, query=query.name, reason=state.skipped, **self.const_labels)
            for name, value, labels in state.samples:
                if name in self._info:  # the declared labels apart, every label is the info's
                    declared = {INSTANCE_LABEL: labels[INSTANCE_LABEL]} if query.per_instance else {}
                    info = {k: v for k, v in labels.items() if k not in declared}
                    batch.add_info(name, info, **self.const_labels, **declared)
                else:
                    batch.add(name, value, **labels, **self.const_labels)
        for query in self.queries:
            for metric in query.metrics:
                batch.declare_empty(metric.name)
        if self._conditional:
            batch.declare_empty(f"{self.prefix}_skipped")

    def samples(self, metric: str) -> list[tuple[float, dict[str, str]]]:
        """The last successful samples of one metric (for checks computed from query results)."""
        return [(value, labels) for state in self._state.values() if state.success
                for name, value, labels in state.samples if name == metric]

    def errors(self) -> dict[str, str]:
        return {name: s.error for name, s in self._state.items() if s.error}

    def results(self) -> dict[str, tuple[bool, str | None, str | None]]:
        """Each query that has run: whether its last run succeeded, its error, and why it was skipped (a query the
        server's version lacks: success, with that note; core/targets.py sources)."""
        return {name: (bool(s.success), s.error, s.skipped) for name, s in self._state.items()
                if s.success is not None}
