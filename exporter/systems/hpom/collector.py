"""HPOM (HP Operations Manager for UNIX 8.x) management server: server queue files, server processes
(``opcsv``/``ovc -status``), the Table 1 configuration variables (``ovconfget``), MSI programs, and the figures in
its Oracle database (``opc_op`` schema, queries in ``queries.yaml``).

Each part is a *source* with its own success and duration metrics: a part not installed here reports
``middleware_hpom_source_present 0`` and is skipped quietly, and a failing part never hides the others.  The
sources are read at once, each under a deadline inside the collector's timeout (``core.sources``): when the
control daemons hang and opcsv, ovc and ovconfget hang with them, the queue sizes (a stat of files, no command)
and the database figures are still published, and each hung command reports its own timeout.
What each source reads, the permissions it needs and the guide rows it serves: README.md in this folder.
"""

from __future__ import annotations

import os
import re
from importlib import resources
from typing import TYPE_CHECKING, Callable

from ...core.collector import Collector, Context
from ...core.metrics import ConfiguredLabels, MetricBatch, MetricSpec
from ...core.sources import Source, SourceSet
from ...core.targets import local_target
from ...machine.deadline import BoundedCall, Overdue
from ...machine.remote import prefixed, program_available, target_labels
from ...machine.runner import CommandError, CommandResult, run_command
from ...machine.textlines import first_line
from ..oracle.client import OracleClient, OracleSettings
from . import DESCRIPTION, NAME
from .checks import evaluate, require_queries, watched
from .metrics import (
    DATABASE_BACKOFF,
    DATABASE_UP,
    GUI_DISPLAY_QUEUES,
    QUEUE_ENTRIES,
    QUEUE_MODIFIED,
    QUEUE_SIZE,
    SERVER_PROCESS_UP,
    SERVICE_LOAD_ON_DEMAND,
    SOURCE_METRICS,
    SPECS,
    VARIABLE_FOLLOWS_GUIDE,
    VARIABLE_INFO,
    VARIABLE_VALUE,
    P,
)
from .settings import (
    _TRUE_WORDS,
    DEFAULT_CMA_COLUMN,
    DEFAULT_CMA_TABLE,
    PLACEHOLDER_SERVICE_CHILD,
    PLACEHOLDER_SERVICE_PARENT,
    PLACEHOLDER_SERVICE_TABLE,
    SERVICE_TREE_QUERY,
    HpomSettings,
)

if TYPE_CHECKING:
    from ..oracle.querymetrics import QueryRunner as QueryRunnerType
    from ..oracle.querymetrics import QuerySpec
    from .parse import ProcessStatus

# A queue file's name as it may reach queue_count_command's {queue} and {path}: HPOM's own (msgagtq, opcmsgm,
# dispq3, ...) and any site-tool file name, never one that starts like an option or carries shell syntax.
_COMMAND_SAFE_NAME = re.compile(r"^[A-Za-z0-9_.+@%,:=][A-Za-z0-9_.+@%,:=-]*$")


class HpomCollector(Collector):
    name = NAME
    description = DESCRIPTION
    Settings = HpomSettings

    def __init__(self, settings: HpomSettings, context: Context) -> None:
        super().__init__(settings, context)
        self.settings: HpomSettings = settings
        self._queue_re = re.compile(settings.queue_pattern)
        slod_variable = settings.service_load_on_demand_variable
        self.variables = watched(settings.variables + ([slod_variable] if slod_variable else []))
        self._expected_stopped = frozenset(settings.expected_stopped)
        self._ignored = frozenset(settings.ignore_processes)
        self.client: OracleClient | None = None
        self.queries: QueryRunnerType | None = None
        self.sources = SourceSet("hpom", SOURCE_METRICS, settings.timeout)
        if settings.database is not None:
            from ..oracle.querymetrics import QueryRunner, load_queries  # only with a database: keeps idle RSS down

            if settings.queries_file:
                queries = load_queries(settings.queries_file)
                require_queries(queries, f"queries_file {settings.queries_file}")
            else:
                with resources.as_file(resources.files(__package__) / "queries.yaml") as path:
                    queries = load_queries(path)
                if settings.service_table is None:  # placeholder names: run only where the site names the table
                    queries = [q for q in queries if q.name != SERVICE_TREE_QUERY]
            queries = cma_names(queries, settings.cma_table, settings.cma_message_column)
            if settings.service_table is not None:
                queries = rename_table(queries, PLACEHOLDER_SERVICE_TABLE, settings.service_table,
                                       {PLACEHOLDER_SERVICE_PARENT: settings.service_parent_column,
                                        PLACEHOLDER_SERVICE_CHILD: settings.service_child_column})
            self.queries = QueryRunner(queries, prefix=f"{P}_query", params=settings.query_params,
                                       allowed_prefix=f"{P}_")
            self.client = OracleClient("hpom", settings.database)
            db = settings.database
            budget = db.connect_timeout + sum(q.timeout or db.query_timeout for q in queries)
            # inside the source's own deadline (core.sources), so that a silent database still reports
            # database_up 0 and its queries' errors rather than only "timed out"
            self._db_deadline = min(budget, self.sources.limit * 0.9)
            self._db_call = BoundedCall("hpom-database")

    @classmethod
    def reference_settings(cls) -> HpomSettings:
        return HpomSettings(database=OracleSettings(dsn="db:1521/openview", user="opc_monitor", password="-"))

    def specs(self) -> list[MetricSpec]:
        specs = list(SPECS)
        if self.queries is not None:
            specs += self.queries.specs()
        return specs

    # ---- helpers -----------------------------------------------------------------------------------------
    def _executable(self, path: str | None) -> bool:
        return program_available(self.settings.command_prefix, path)

    def const_labels(self) -> dict[str, str]:
        return target_labels(self.settings)

    def targets(self) -> list[str]:
        return [local_target(self.settings.target)]  # the management server: up when one of its sources is read

    def static_labels(self) -> list[ConfiguredLabels]:
        return [ConfiguredLabels(self.targets()[0], "collectors.hpom.labels", self.settings.labels)]

    def _command(self, argv: list[str]) -> CommandResult:
        result = run_command(prefixed(self.settings.command_prefix, argv), timeout=self.settings.command_timeout,
                             env=_command_env())
        if result.returncode != 0 and not result.stdout.strip():
            first = first_line(result.stderr)
            raise CommandError(f"{os.path.basename(argv[0])}: exit status {result.returncode}: {first}")
        return result

    def _run(self, argv: list[str]) -> str:
        return self._command(argv).stdout

    # ---- collection --------------------------------------------------------------------------------------
    def collect(self, batch: MetricBatch) -> None:
        s = self.settings
        from . import parse  # imported on first use: the parsers' regexes cost memory on hosts without HPOM

        # Read at once, each under its own deadline inside the timeout (core.sources): the queue files (a stat,
        # no command) never wait on a command, and commands that hang together cost only their own figures.
        queues_here = os.path.isdir(s.queue_dir)
        self.sources.run(batch, [
            Source("queues", queues_here, lambda: self._queues(batch)),
            Source("queue_count", bool(s.queue_count_command) and queues_here, lambda: self._queue_counts(batch)),
            Source("opcsv", self._executable(s.opcsv),
                   lambda: self._status(batch, "opcsv", [s.opcsv, "-status"], parse.parse_opcsv_status)),
            Source("ovc", self._executable(s.ovc),
                   lambda: self._status(batch, "ovc", [s.ovc, "-status"], parse.parse_ovc_status)),
            Source("ovconfget", self._executable(s.ovconfget), lambda: self._variables(batch)),
            # the process table read is this host's: behind a command prefix it is not the server's (HPOM-MSI)
            Source("msi", bool(s.msi_programs) and not s.command_prefix, lambda: self._msi(batch)),
            Source("database", self.client is not None, lambda: self._database(batch)),
        ], target=self.targets()[0])
        if s.service_load_on_demand_variable is None and s.service_load_on_demand is not None:
            SERVICE_LOAD_ON_DEMAND.add(batch, 1 if s.service_load_on_demand else 0)

    def _queue_files(self) -> list[tuple[str, str, int, float]]:
        """The queue files (name, path, size, modification time), by name."""
        found = []
        with os.scandir(self.settings.queue_dir) as entries:
            for entry in entries:
                if not self._queue_re.search(entry.name):
                    continue
                try:
                    if not entry.is_file():
                        continue
                    st = entry.stat()
                except OSError:
                    continue  # removed while listing
                found.append((entry.name, entry.path, st.st_size, st.st_mtime))
        found.sort()
        return found

    def _queues(self, batch: MetricBatch) -> Callable[[], None]:
        from .parse import display_queues

        found = self._queue_files()
        displays = display_queues([name for name, *_ in found])

        def emit() -> None:
            for name, _, size, mtime in found:
                QUEUE_SIZE.add(batch, size, queue=name)
                QUEUE_MODIFIED.add(batch, mtime, queue=name)
            GUI_DISPLAY_QUEUES.add(batch, displays)
        return emit

    def _queue_counts(self, batch: MetricBatch) -> Callable[[], None]:
        from .parse import parse_count

        counts, problems = [], []
        template = self.settings.queue_count_command or []
        # its own listing: the queues source is read at the same time and must not wait for these commands
        for name, path, _, _ in self._queue_files():
            if not _COMMAND_SAFE_NAME.match(name):
                # its size and age are still read (the queues source); only the count command is not run for it
                problems.append(f"{name[:60]!r}: not a queue file name (letters, digits and . _ + @ % , : = -, "
                                "not starting with -); not passed to queue_count_command")
                continue
            argv = [arg.replace("{path}", path).replace("{queue}", name) for arg in template]
            try:
                count = parse_count(self._run(argv), self.settings.queue_count_pattern)
            except CommandError as exc:
                problems.append(f"{name}: {exc}")
                continue
            if count is None:
                problems.append(f"{name}: no count in the output")
                continue
            counts.append((name, count))

        def emit() -> None:
            for name, count in counts:
                QUEUE_ENTRIES.add(batch, count, queue=name)
            if problems:
                more = f" (+{len(problems) - 5} more)" if len(problems) > 5 else ""
                raise ValueError("; ".join(problems[:5]) + more)
        return emit

    def _status(self, batch: MetricBatch, source: str, argv: list[str],
                parser: Callable[[str], list[ProcessStatus]]) -> Callable[[], None]:
        from .parse import process_states

        output = self._run(argv)
        entries = parser(output)
        if not entries:
            raise ValueError(f"no process lines in the output of {os.path.basename(argv[0])} -status "
                             f"({len(output)} characters)")
        states = process_states(entries, self._expected_stopped, self._ignored)

        def emit() -> None:
            for process, value in states.items():
                SERVER_PROCESS_UP.add(batch, value, source=source, process=process)
        return emit

    def _variables(self, batch: MetricBatch) -> Callable[[], None]:
        from .parse import error_lines, ovconfget_problems, parse_ovconfget

        result = self._command([self.settings.ovconfget, "-ovrg", "server", "opc"])
        values = parse_ovconfget(result.stdout)
        # An error printed with exit status 0 would otherwise leave no variable set, and every one would be
        # reported as its documented default.
        problems = ovconfget_problems(result.stdout) + error_lines(result.stderr)
        if problems or not values:
            raise CommandError(_ovconfget_failure(result, problems))
        readings = evaluate(self.variables, values, self.settings.server_version)
        slod = self._load_on_demand(values)

        def emit() -> None:
            if slod is not None:
                SERVICE_LOAD_ON_DEMAND.add(batch, slod)
            for r in readings:
                name = r.variable.name
                VARIABLE_INFO.add_info(batch, {"value": r.value, "origin": r.origin, "guide": r.variable.guide},
                                       variable=name)
                if r.number is not None:
                    VARIABLE_VALUE.add(batch, r.number, variable=name)
                if r.follows_guide is not None:
                    VARIABLE_FOLLOWS_GUIDE.add(batch, 1 if r.follows_guide else 0, variable=name)
        return emit

    def _load_on_demand(self, values: dict[str, str]) -> int | None:
        """Service Load on Demand from the site's variable (set: TRUE/YES/ON/1/ENABLED is on), else the declared
        setting; None when neither says (or no variable is configured: collect() emits the setting then)."""
        name = self.settings.service_load_on_demand_variable
        if name is None:
            return None
        if name in values:
            return 1 if values[name].strip().upper() in _TRUE_WORDS else 0
        declared = self.settings.service_load_on_demand
        return None if declared is None else int(declared)

    def _msi(self, batch: MetricBatch) -> Callable[[], None]:
        wanted = set(self.settings.msi_programs)
        counts = dict.fromkeys(sorted(wanted), 0)
        for entry in self.context.processes.snapshot(self):
            if entry.comm in wanted:
                stat = entry.stat()
                if stat is not None and stat.state != "Z":
                    counts[entry.comm] += 1

        def emit() -> None:
            for program, count in counts.items():
                batch.add(f"{P}_msi_program_processes", count, program=program)
            batch.add(f"{P}_msi_programs_running", sum(1 for c in counts.values() if c > 0))
        return emit

    def _database(self, batch: MetricBatch) -> Callable[[], None]:
        assert self.client is not None and self.queries is not None
        client, queries = self.client, self.queries
        try:
            # A database host that accepts the connection and never answers would hang the driver; the
            # deadline keeps the other sources (queues, processes) coming.
            self._db_call(lambda: queries.run(client), self._db_deadline)
        except Overdue as exc:
            queries.fail_due(f"database: {exc}")
            client.up = False
            client.last_error = f"no answer from the database: {exc}"
        errors = queries.errors()
        up, last_error, backoff = client.up, client.last_error, client.backoff_remaining()

        def emit() -> None:  # in the collector's thread (core.sources): the batch is not shared between threads
            for query, error in errors.items():
                batch.note_error(f"database:{query}", error)
            queries.emit(batch)
            DATABASE_UP.add(batch, 1 if up else 0)
            DATABASE_BACKOFF.add(batch, backoff)
            if not up:
                raise ConnectionError(last_error or "no session")
        return emit

    def close(self) -> None:
        if self.client is not None:
            self.client.close()


# NAME=value pairs; a match starts only at the start of a name and nothing backtracks (possessive), so each search
# is linear; the secret-looking names are picked by _SECRET_NAME afterwards.
_SECRET = re.compile(r"(?<![\w.-])([\w.-]++)(\s*+[=:]\s*+)(\S++)")
_SECRET_NAME = re.compile(r"(?i)pass|pwd|secret|token|credential")


def _mask_secrets(line: str) -> str:
    """``DB_PASSWORD=x`` -> ``DB_PASSWORD=***``; after a pair that is not a secret the search goes on from its value
    (``ERROR: token: x``: the value of ``ERROR`` is the name ``token``)."""
    parts: list[str] = []
    kept = start = 0
    while (match := _SECRET.search(line, start)) is not None:
        if _SECRET_NAME.search(match.group(1)):
            parts += [line[kept:match.start(3)], "***"]
            kept = start = match.end()
        else:
            start = match.start(3)
    parts.append(line[kept:])
    return "".join(parts)


def _ovconfget_failure(result: CommandResult, problems: list[str]) -> str:
    """The error text for an ovconfget run whose values cannot be trusted: its own words, secrets masked."""
    status = f"exit status {result.returncode}"
    if not problems:
        stderr = first_line(result.stderr, limit=len(result.stderr))
        problems = [stderr] if stderr else []
        what = "printed no NAME=value line"
    else:
        what = "printed an error"
    # cut first: the mask is quadratic in a run of word characters (26 s for 20,000 of them); a cut never
    # shows part of a secret the whole line would have masked (the value follows its name)
    text = " | ".join(_mask_secrets(line[:160]) for line in problems[:3])
    more = f" (+{len(problems) - 3} more lines)" if len(problems) > 3 else ""
    detail = f": {text}{more}" if text else ""
    return f"ovconfget {what} ({status}), so no variable can be reported as set or default{detail}"


def cma_names(queries: list[QuerySpec], table: str, column: str) -> list[QuerySpec]:
    """The queries with the custom message attribute table and its message column renamed.

    Neither name is confirmed by DDL (public tools that read OMU 9.x use ``opc_op.opc_act_cust_attrib`` and
    ``message_number``).  Every query that names the default table gets ``table`` instead, and in those queries
    the default column becomes ``column``; other queries are returned unchanged.
    """
    if (table, column) == (DEFAULT_CMA_TABLE, DEFAULT_CMA_COLUMN):
        return queries
    return rename_table(queries, DEFAULT_CMA_TABLE, table, {DEFAULT_CMA_COLUMN: column})


def rename_table(queries: list[QuerySpec], default: str, table: str, columns: dict[str, str]) -> list[QuerySpec]:
    """The queries that name the table ``default`` with it renamed to ``table`` and, in those queries only, each
    column in ``columns`` renamed (whole identifiers only); other queries are returned unchanged."""
    table_re = re.compile(r"(?<![\w$#.])" + re.escape(default) + r"(?![\w$#])", re.IGNORECASE)
    lookup = {old.lower(): new for old, new in columns.items()}
    # one pass for all columns, so that renaming a to b and b to a swaps them
    column_re = re.compile(r"(?<![\w$#])(?:" + "|".join(map(re.escape, columns)) + r")(?![\w$#])", re.IGNORECASE)
    renamed = []
    for query in queries:
        if table_re.search(query.sql):
            sql = table_re.sub(table, query.sql)
            if columns:
                sql = column_re.sub(lambda m: lookup[m.group(0).lower()], sql)
            query = query.model_copy(update={"sql": sql})
        renamed.append(query)
    return renamed


def _command_env() -> dict[str, str]:
    """A small, predictable environment for HPOM commands (C locale so that their output is parseable)."""
    env = {"PATH": "/usr/bin:/bin:/usr/sbin:/sbin:/opt/OV/bin:/opt/OV/bin/OpC", "LANG": "C", "LC_ALL": "C"}
    for key in ("OV_CONF_DIR", "OV_DATA_DIR", "OV_INSTALL_DIR", "TZ"):
        if key in os.environ:
            env[key] = os.environ[key]
    return env
