"""Oracle databases: many per exporter, each with its own ``database`` label.  The metrics come from the queries
in ``queries.yaml`` (data, not code); each database is read in its own thread under a deadline (core.fanout),
so one that hangs, refuses logins or drops its session shows only in its own ``middleware_oracle_up`` and
``..._query_success`` series.  The guide checks (checks.py) are computed from the query results and, for the
files on this host, from the mount table.  Heap warnings in the alert log (ORA-KGL) are a source of their own per
database (heapwarnings.py).  What it reads, the permissions and the guide rows: README.md.
"""

from __future__ import annotations

import os
import socket
import time
from importlib import resources
from typing import TYPE_CHECKING, Callable

from ...core.collector import Collector, Context
from ...core.fanout import Target, fan_out
from ...core.metrics import ConfiguredLabels, MetricBatch, MetricSpec
from ...machine.procfs import Mount, read_mount_table
from . import DESCRIPTION, NAME, checks
from .client import OracleClient, error_text
from .heapwarnings import HeapWarningSource
from .metrics import BACKOFF, COLLECT_DURATION, COLLECT_SUCCESS, COMPAT_UP, MOUNT_TABLE_SUCCESS, SPECS, UP, P
from .settings import DatabaseEntry, OracleCollectorSettings

if TYPE_CHECKING:
    from .querymetrics import QuerySpec
    from .tomlmetrics import TomlRunner

# Directories of every data, temp, redo and control file; ASM names (+DATA/...) have no leading '/' and are left
# out.  Run rarely (the layout seldom changes).
FILE_DIRECTORIES_SQL = """
SELECT DISTINCT SUBSTR(name, 1, INSTR(name, '/', -1) - 1) AS directory FROM v$datafile WHERE name LIKE '/%'
UNION SELECT DISTINCT SUBSTR(name, 1, INSTR(name, '/', -1) - 1) FROM v$tempfile WHERE name LIKE '/%'
UNION SELECT DISTINCT SUBSTR(member, 1, INSTR(member, '/', -1) - 1) FROM v$logfile WHERE member LIKE '/%'
UNION SELECT DISTINCT SUBSTR(name, 1, INSTR(name, '/', -1) - 1) FROM v$controlfile WHERE name LIKE '/%'
"""
HOST_NAME_SQL = "SELECT host_name FROM v$instance"
FILES_REFRESH_SECONDS = 600.0


def _same_host(db_host: str) -> bool:
    mine = {socket.gethostname().lower(), socket.getfqdn().lower()}
    mine |= {name.split(".")[0] for name in mine}
    return db_host.lower() in mine or db_host.lower().split(".")[0] in mine


class _Database(Target):
    """One database: its client and queries, and where its files are (for the mount checks)."""

    def __init__(self, entry: DatabaseEntry, queries: list[QuerySpec], collector_timeout: float,
                 toml: Callable[[str], TomlRunner | None] = lambda name: None) -> None:
        from .querymetrics import QueryRunner

        # a per_instance query is two calls, each with the query's timeout: the instance lookup, then the query
        # alternatives of one query (min_version / max_version / cdb) run once; a conditional one may first read the
        # session's version and container (up to two calls, once per session)
        first = list({q.name: q for q in reversed(queries)}.values())
        conditional = {q.name for q in queries if q.conditional}
        query_time = sum((q.timeout or entry.query_timeout) * ((2 if q.per_instance else 1) +
                                                               (2 if q.name in conditional else 0)) for q in first)
        self.heap = HeapWarningSource(entry.name, entry.heap_warnings, entry.query_timeout)
        heap_time = 2 * self.heap.timeout if self.heap.enabled else 0.0  # the view's start and rows, or the file
        self.toml = toml(entry.name)  # the custom-metrics TOML queries of this database (tomlmetrics.py), if any
        query_time += sum(q.timeout or entry.query_timeout for q in self.toml.queries) if self.toml else 0.0
        budget = entry.connect_timeout + query_time + 2 * entry.query_timeout + heap_time  # 2: file locations
        super().__init__("oracle", entry.name, budget, collector_timeout)
        self.entry = entry
        self.client = OracleClient(entry.name, entry)
        self.runner = QueryRunner(queries, prefix=f"{P}_query", const_labels={"database": entry.name},
                                  allowed_prefix=f"{P}_")
        self.directories: list[str] | None = list(entry.data_paths) if entry.data_paths else None
        # When the file locations were last looked up; None: never, so the first run looks them up whatever the
        # clock reads (time.monotonic() counts from boot: a host, container or CI machine up for less than
        # FILES_REFRESH_SECONDS would otherwise skip the NFS checks until then).
        self.files_checked: float | None = None
        self.clock = time.monotonic
        self.local: bool | None = {"yes": True, "no": False}.get(entry.local_files)

    def read(self) -> str | None:
        """Everything that talks to the database (in a worker thread under the deadline); returns a problem with
        the optional file-location lookup, which does not fail the database."""
        if self.heap.kind == "alert_log":
            self.heap.read(self.client)  # the file first: it does not need the database
        self.runner.run(self.client)
        if self.toml:
            self.toml.run(self.client)
        if self.heap.kind == "view":
            self.heap.read(self.client)
        now = self.clock()
        if not self.client.up or self.entry.data_paths or (
                self.files_checked is not None and now - self.files_checked < FILES_REFRESH_SECONDS):
            return None
        try:
            with self.client.session() as conn:
                if self.local is None or self.entry.local_files == "auto":
                    host = self.client.query(conn, HOST_NAME_SQL).rows
                    self.local = bool(host) and _same_host(str(host[0][0]))
                if self.local:
                    rows = self.client.query(conn, FILE_DIRECTORIES_SQL).rows
                    self.directories = sorted({str(r[0]) for r in rows if r[0]})
            self.files_checked = now
        except Exception as exc:  # noqa: BLE001 - the file check is optional
            return f"file locations: {error_text(exc)}"
        return None


def _read_mounts(procfs: str) -> tuple[list[Mount], bool, str | None]:
    """The host's mount table (machine.procfs.read_mount_table: PID 1's, else the exporter's own): (mounts, whether
    they are the host's, the problem if not).  The own table's problem is said (source error and
    ``middleware_oracle_mount_table_success 0``); without either table, no mounts (the file-system checks are
    skipped, not the rest)."""
    try:
        table = read_mount_table(procfs)
    except OSError as exc:
        problem = f"cannot read the host's mount table {os.path.join(procfs, '1', 'mounts')}: {exc.strerror or exc}"
        return [], False, f"cannot read the mount table ({problem}, nor the exporter's own): file-system checks skipped"
    if table.host:
        return table.mounts, True, None
    return table.mounts, False, (f"{table.problem}; the file-system checks read the exporter's own mount table "
                                 f"{table.path} instead, which in a container is not the host's")


class OracleCollector(Collector):
    name = NAME
    description = DESCRIPTION
    Settings = OracleCollectorSettings

    def __init__(self, settings: OracleCollectorSettings, context: Context) -> None:
        super().__init__(settings, context)
        self.settings: OracleCollectorSettings = settings
        from .querymetrics import QueryRunner, load_queries  # imported when the collector runs, not at start

        if settings.queries_file:
            queries = load_queries(settings.queries_file, "queries_file")
        else:
            with resources.as_file(resources.files(__package__) / "queries.yaml") as path:
                queries = load_queries(path)
        source = f"queries_file {settings.queries_file}" if settings.queries_file else "the built-in queries.yaml"
        if settings.extra_queries_file:
            extra = load_queries(settings.extra_queries_file, "extra_queries_file")
            clash = {q.name for q in extra} & {q.name for q in queries}
            if clash:
                raise ValueError(f"extra_queries_file redefines queries {sorted(clash)}")
            queries = queries + extra
            source += f" with extra_queries_file {settings.extra_queries_file}"
        checks.require_inputs(queries, settings.databases, source)
        toml = self._toml_runners(settings, {q.name for q in queries})
        self.databases = [_Database(entry, queries, settings.timeout, toml) for entry in settings.databases]
        # the specs of the declared queries, once (every database runs the same queries)
        self._query_specs = QueryRunner(queries, prefix=f"{P}_query", const_labels={"database": "-"},
                                        allowed_prefix=f"{P}_").specs()

    def _toml_runners(self, settings: OracleCollectorSettings, taken: set[str]) -> Callable[[str], TomlRunner | None]:
        """The runner factory of the custom-metrics TOML queries (custom_metrics, compatibility_names); every
        database's runner shares one name registry, since they fill one batch."""
        self._toml_registry = None
        if not settings.custom_metrics and not settings.compatibility_names:
            return lambda name: None
        from . import tomlmetrics  # only when configured

        toml = tomlmetrics.load_metric_files(settings.custom_metrics, settings.compatibility_names or "oracle",
                                             defaults=settings.compatibility_names is not None)
        clash = {q.name for q in toml} & taken
        if clash:
            raise ValueError(f"custom_metrics: query names {sorted(clash)} are already used by the query files")
        reserved = {s.name for s in SPECS} | {COMPAT_UP.name}
        registry = tomlmetrics.NameRegistry(("database",), reserved)
        self._toml_registry = registry

        def runner(database: str) -> TomlRunner | None:
            mine = tomlmetrics.for_database(toml, database)
            return tomlmetrics.TomlRunner(mine, f"{P}_query", {"database": database}, registry,
                                          max_series=settings.max_series) if mine else None
        return runner

    @classmethod
    def reference_settings(cls) -> OracleCollectorSettings:
        return OracleCollectorSettings(databases=[DatabaseEntry(name="db", dsn="db:1521/orcl", user="u", password="-")])

    def specs(self) -> list[MetricSpec]:
        specs = SPECS + self._query_specs
        if self._toml_registry is not None:  # the TOML series seen so far; new fieldtoappend names are declared
            specs = specs + self._toml_registry.specs()  # as they come (TomlRunner.emit)
        if self.settings.compatibility_names:
            specs = specs + [COMPAT_UP]
        return specs

    def targets(self) -> list[str]:
        return [db.entry.name for db in self.databases]

    target_label = "database"

    def static_labels(self) -> list[ConfiguredLabels]:
        return [ConfiguredLabels(entry.name, f"collectors.oracle.databases.{index}.labels", entry.labels)
                for index, entry in enumerate(self.settings.databases)]

    def collect(self, batch: MetricBatch) -> None:
        fan_out(self.databases, _Database.read)
        mounts: list[Mount] | None = None
        for db in self.databases:
            if db.local and db.directories and mounts is None:
                mounts, host_table, problem = _read_mounts(self.context.procfs)
                MOUNT_TABLE_SUCCESS.add(batch, 1 if host_table else 0)
                if problem:
                    batch.note_error("mounts", problem)
            self._emit(db, batch, mounts or [])
        for db in self.databases:  # after every database's built-in series: a custom metric that does not fit in
            if db.toml:            # max_series is refused alone (TomlRunner.fit), not the whole run
                self._emit_toml(db, batch)

    def _emit(self, db: _Database, batch: MetricBatch, mounts: list[Mount]) -> None:
        name, client, outcome = db.entry.name, db.client, db.outcome
        if outcome.overdue:
            db.runner.fail_due(f"database: {outcome.error}")
            if db.toml:
                db.toml.fail_due(f"database: {outcome.error}")
            db.heap.fail_due(f"database: {outcome.error}")
            client.up = False
            failure: str | None = f"no answer within the deadline: {outcome.error}"
        else:
            failure = error_text(outcome.error) if outcome.error is not None else None
        problem = failure or outcome.value  # the value: a failed file-location lookup, which is not a failure
        UP.add(batch, 1 if client.up else 0, database=name)
        if self.settings.compatibility_names:
            batch.add("oracledb_up", 1 if client.up else 0, database=name)
        BACKOFF.add(batch, client.backoff_remaining(), database=name)
        COLLECT_SUCCESS.add(batch, 1 if client.up and failure is None else 0, database=name)
        COLLECT_DURATION.add(batch, outcome.duration, database=name)
        if problem or (not client.up and client.last_error):
            batch.note_error(name, problem or client.last_error or "")
        # the database is the target, its queries, heap-warning source and file lookup its sources (core/targets.py)
        batch.report_target(name, client.up and failure is None, failure or client.last_error)
        for query, (ok, error, skipped) in db.runner.results().items():
            batch.report_source(name, query, ok, error, note=f"skipped: {skipped}" if skipped else None)
        if db.heap.enabled and db.heap.success is not None:
            batch.report_source(name, db.heap.name, bool(db.heap.success), db.heap.error)
        if outcome.value and failure is None:
            batch.report_source(name, "file_locations", False, outcome.value)
        for query, error in db.runner.errors().items():
            batch.note_error(f"{name}:{query}", error)
        if db.heap.error:
            batch.note_error(f"{name}:{db.heap.name}", db.heap.error)
        db.runner.emit(batch)
        db.heap.emit(batch)
        inputs = checks.Inputs.read(db.runner)
        checks.add_checks(batch, db.entry, self.settings.guide, inputs)
        if db.local and db.directories:
            checks.add_file_systems(batch, name, db.directories, mounts, inputs, self.settings.guide)

    @staticmethod
    def _emit_toml(db: _Database, batch: MetricBatch) -> None:
        """The database's custom-metrics TOML queries: sources of the database like its built-in queries."""
        assert db.toml is not None
        db.toml.fit(batch)
        name = db.entry.name
        for query, (ok, error, _) in db.toml.results().items():
            batch.report_source(name, query, ok, error)
        for query, error in db.toml.errors().items():
            batch.note_error(f"{name}:{query}", error)
        db.toml.emit(batch)

    def close(self) -> None:
        for db in self.databases:
            db.client.close()
