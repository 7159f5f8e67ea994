"""HPOM (HP Operations Manager for UNIX 8.x) management server: queues, server processes, configuration
variables, MSI programs and the figures in its Oracle database (``opc_op`` schema).

Requirements: ``../shared/guide-thresholds.md`` rows HPOM-* and the HPOM 8.21/8.30 Performance Guide
(``000_cb9c6d184be713ef.txt``).  Each part is a *source* with its own ``middleware_hpom_source_success`` and
duration; a part that is not installed (no queue directory, no ``opcsv`` binary, no database configured) reports
``middleware_hpom_source_present 0`` and is skipped quietly.  A failing part never hides the others: the
collector itself only fails on a bug.

Sources:

* ``queues``: every file in the server queue directory (``msgmgrq``, ``actreqq``, ... and one ``dispq<N>`` per
  running GUI): size, modification time, and entries when the site configures a counting command.
* ``opcsv``, ``ovc``: ``opcsv -status`` and ``ovc -status`` as an up/down metric per process.
* ``ovconfget``: ``ovconfget -ovrg server opc``: the Table 1 variables, their values and whether they follow the
  guide (unset means the documented default).
* ``msi``: processes of the configured MSI programs (more than five slow message processing down).
* ``database``: the queries in ``exporter/queries/hpom.yaml`` (or ``queries_file``), each with its own timeout,
  interval and success metric.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any, Callable

from pydantic import Field, field_validator, model_validator

from ..collector import Collector, CollectorSettings, Context, Duration, check_regex
from ..deadline import BoundedCall, Overdue
from ..metrics import NAMESPACE, MetricBatch, MetricSpec
from ..oracle import OracleClient, OracleSettings
from ..procfs import iter_processes
from ..runner import CommandError, run_command
from ..sources import check_command_timeout, run_source, source_specs

if TYPE_CHECKING:
    from ..sqlmetrics import QueryRunner as QueryRunnerType

P = f"{NAMESPACE}_hpom"
DEFAULT_QUEUE_DIR = "/var/opt/OV/share/tmp/OpC/mgmt_sv"
SOURCES = ("queues", "queue_count", "opcsv", "ovc", "ovconfget", "msi", "database")


def _int(value: str) -> int | None:
    try:
        return int(value.strip())
    except (ValueError, AttributeError):
        return None


@dataclass(frozen=True)
class Variable:
    """A server configuration variable and what the guide says of it."""

    name: str
    default: str | None  # the documented default when unset; None when the guide gives none
    follows_guide: Callable[[str], bool] | None
    guide: str


# Table 1 "Key Configuration Variables for the Management Server" and the notes around it.  Table 1 spells two
# names differently from the rest of the guide (OPCMMSGM_USE_GUI_THREAD, OPC_UPDOWN_COMMIT_COUNT); the variables
# HPOM reads are OPCMSGM_USE_GUI_THREAD and OPC_UPDWN_COMMIT_COUNT.
VARIABLES = [
    Variable("OPCMSGM_USE_GUI_THREAD", "FALSE", lambda v: v.upper() in ("TRUE", "NO_RPC"),
             "TRUE (Table 1: 310 -> 410 msg/s), or NO_RPC from 8.22 (footnote 4)"),
    Variable("OPC_DIRECT_ACKN_LIMIT", "50", lambda v: _int(v) == 0,
             "0: mark acknowledged messages only, move them to history later (Table 1; Message Acknowledgment)"),
    Variable("OPC_UPDWN_COMMIT_COUNT", "100", lambda v: (_int(v) or 0) >= 1000,
             "1000 or more: history download 367 -> 518 msg/s (Table 1; Table 27)"),
    Variable("OPC_CREATE_AUTO_KEYS", "TRUE", lambda v: v.upper() in ("TRUE", "YES", "1"),
             "on (the default from 8.31): duplicate suppression without keys falls to 28-137 msg/s (Tables 12-13)"),
    Variable("OPCUIWWW_BULK_MODE", "FALSE", lambda v: v.upper() == "TRUE",
             "TRUE from 8.22 (footnote 4; the guide expects a gain but did not test it)"),
    Variable("OPC_ACK_MOVE_INTERVAL", None, None, "no recommendation; the acknowledgement tests set 0"),
    Variable("OPCUIWWW_NEW_MSG_NO_DB", None, None, "TRUE needs OPCMSGM_USE_GUI_THREAD=NO_RPC (footnote 4)"),
]


class HpomSettings(CollectorSettings):
    enabled: bool = Field(False, description="Run this collector (on an HPOM management server).")
    interval: Duration = Field(30.0, description="Seconds between collections.")
    timeout: Duration = Field(25.0, description="Seconds before a collection counts as failed.")
    queue_dir: str = Field(DEFAULT_QUEUE_DIR, description="The server queue directory.")
    queue_pattern: str = Field(r"^[a-z]+q\d*$", description="Regex of the queue file names in queue_dir.")
    queue_count_command: list[str] | None = Field(
        None, description="Command printing a queue's entry count; {path} and {queue} are replaced. No shell.")
    queue_count_pattern: str = Field(r"(?P<count>\d+)",
                                     description="Regex with a group `count` applied to that command's output.")
    opcsv: str | None = Field("/opt/OV/bin/OpC/opcsv", description="opcsv binary (null: do not run it).")
    ovc: str | None = Field("/opt/OV/bin/ovc", description="ovc binary (null: do not run it).")
    ovconfget: str | None = Field("/opt/OV/bin/ovconfget", description="ovconfget binary (null: do not run it).")
    command_timeout: Duration = Field(10.0, description="Timeout of each command, seconds.")
    variables: list[str] = Field(default_factory=list,
                                 description="More `ovconfget -ovrg server opc` variables to expose.")
    msi_programs: list[str] = Field(default_factory=list,
                                    description="Process names of the site's MSI programs (HPOM-MSI).")
    database: OracleSettings | None = Field(None, description="The HPOM database (read-only account).")
    queries_file: str | None = Field(None, description="Query file replacing the built-in hpom.yaml.")
    query_params: dict[str, int | float | str] = Field(
        default_factory=dict, description="Bind values overriding the query file's params (window_seconds, cma_limit).")

    @field_validator("queue_pattern")
    @classmethod
    def _pattern(cls, value: str) -> str:
        return check_regex(value)

    @field_validator("queue_count_pattern")
    @classmethod
    def _count_pattern(cls, value: str) -> str:
        check_regex(value)
        if "count" not in re.compile(value).groupindex:
            raise ValueError("needs a named group `count`, e.g. (?P<count>\\d+)")
        return value

    @field_validator("queue_count_command")
    @classmethod
    def _argv(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and (not value or not value[0]):
            raise ValueError("must be a non-empty argument list, e.g. [/opt/site/bin/qcount, '{path}']")
        return value

    @model_validator(mode="after")
    def _command_timeout_fits(self) -> "HpomSettings":
        check_command_timeout(self.command_timeout, self.timeout)
        return self


def _spec(name: str, type_: str, help_: str, labels: tuple[str, ...] = (), note: str = "") -> MetricSpec:
    return MetricSpec(f"{P}_{name}", type_, help_, labels, note)


BASE_SPECS = [
    *source_specs(P, "1 if the source is installed/configured here (queue directory, binary, database), 0 if it "
                     "is skipped."),
    _spec("queue_size_bytes", "gauge", "Size of a server queue file (msgmgrq, actreqq, dispq<N>, ...).", ("queue",),
          "HPOM-QUEUE: deriv()/predict_linear() for growth and drain time"),
    _spec("queue_modified_timestamp_seconds", "gauge", "Last modification of a server queue file (Unix time).",
          ("queue",), "age: time() - this"),
    _spec("queue_entries", "gauge", "Entries in a queue file, from the site's queue_count_command.", ("queue",),
          "HPOM-QUEUE (the guide's storm figures are in entries)"),
    _spec("gui_display_queues", "gauge", "dispq<N> files: one per running GUI session.", (),
          "HPOM-GUI, HPOM-MEM"),
    _spec("server_process_up", "gauge", "1 if opcsv/ovc report the process running, 0 for any other state "
          "(all entries must run when a name is listed twice).", ("source", "process"),
          "opcmsgm or another server process down"),
    _spec("server_variable_info", "info", "A server configuration variable: its value, whether it is set or "
          "the documented default, and what the guide recommends.", ("variable",)),
    _spec("server_variable_value", "gauge", "Numeric value of a server configuration variable (set or default).",
          ("variable",), "HPOM-VAR-*"),
    _spec("server_variable_follows_guide", "gauge", "1 if the variable's value (set or default) follows the "
          "guide's Table 1 recommendation, 0 if not.", ("variable",), "HPOM-VAR-* advice"),
    _spec("msi_program_processes", "gauge", "Processes of a configured MSI program.", ("program",)),
    _spec("msi_programs_running", "gauge", "Configured MSI programs with at least one process.", (),
          "HPOM-MSI: more than 5 slow processing"),
    _spec("database_up", "gauge", "1 if a session to the HPOM database could be had in the last attempt.", ()),
    _spec("database_backoff_seconds", "gauge", "Seconds until the next connection attempt after a failure "
          "(a rejected login waits longer so as not to lock the account).", ()),
]


class HpomCollector(Collector):
    name = "hpom"
    description = "HPOM management server: queues, server processes, variables, MSI programs, opc_op database."
    Settings = HpomSettings

    def __init__(self, settings: HpomSettings, context: Context) -> None:
        super().__init__(settings, context)
        self.settings: HpomSettings = settings
        self._queue_re = re.compile(settings.queue_pattern)
        watched = {v.name for v in VARIABLES}
        self.variables = VARIABLES + [Variable(n, None, None, "") for n in settings.variables if n not in watched]
        self.client: OracleClient | None = None
        self.queries: QueryRunnerType | None = None
        if settings.database is not None:
            from ..sqlmetrics import QueryRunner, load_queries  # only with a database: keeps idle RSS down

            if settings.queries_file:
                queries = load_queries(settings.queries_file)
            else:
                with resources.as_file(resources.files("exporter") / "queries" / "hpom.yaml") as path:
                    queries = load_queries(path)
            self.queries = QueryRunner(queries, prefix=f"{P}_query", params=settings.query_params,
                                       allowed_prefix=f"{P}_")
            self.client = OracleClient("hpom", settings.database)
            db = settings.database
            budget = db.connect_timeout + sum(q.timeout or db.query_timeout for q in queries)
            self._db_deadline = min(budget, max(settings.timeout - settings.command_timeout, 1.0))
            self._db_call = BoundedCall("hpom-database")

    @classmethod
    def reference_settings(cls) -> HpomSettings:
        return HpomSettings(database=OracleSettings(dsn="db:1521/openview", user="opc_monitor", password="-"))

    def specs(self) -> list[MetricSpec]:
        specs = list(BASE_SPECS)
        if self.queries is not None:
            specs += self.queries.specs()
        return specs

    # ---- helpers -----------------------------------------------------------------------------------------
    @staticmethod
    def _executable(path: str | None) -> bool:
        return bool(path) and os.path.isfile(path) and os.access(path, os.X_OK)

    def _run(self, argv: list[str]) -> str:
        result = run_command(argv, timeout=self.settings.command_timeout, env=_command_env())
        if result.returncode != 0 and not result.stdout.strip():
            first = (result.stderr.strip().splitlines() or [""])[0][:200]
            raise CommandError(f"{os.path.basename(argv[0])}: exit status {result.returncode}: {first}")
        return result.stdout

    # ---- collection --------------------------------------------------------------------------------------
    def collect(self, batch: MetricBatch) -> None:
        s = self.settings
        queue_files: list[tuple[str, str]] = []
        run_source(batch, P, "queues", os.path.isdir(s.queue_dir), lambda: self._queues(batch, queue_files))
        run_source(batch, P, "queue_count", bool(s.queue_count_command) and bool(queue_files),
                     lambda: self._queue_counts(batch, queue_files))
        from .. import hpom_text  # imported on first use: the parsers' regexes cost memory on hosts without HPOM

        run_source(batch, P, "opcsv", self._executable(s.opcsv),
                     lambda: self._status(batch, "opcsv", [s.opcsv, "-status"], hpom_text.parse_opcsv_status))
        run_source(batch, P, "ovc", self._executable(s.ovc),
                     lambda: self._status(batch, "ovc", [s.ovc, "-status"], hpom_text.parse_ovc_status))
        run_source(batch, P, "ovconfget", self._executable(s.ovconfget), lambda: self._variables(batch))
        run_source(batch, P, "msi", bool(s.msi_programs), lambda: self._msi(batch))
        run_source(batch, P, "database", self.client is not None, lambda: self._database(batch))

    def _queues(self, batch: MetricBatch, queue_files: list[tuple[str, str]]) -> Callable[[], None]:
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
        queue_files.extend((name, path) for name, path, _, _ in found)
        displays = sum(1 for name, *_ in found if re.match(r"^dispq\d+$", name))

        def emit() -> None:
            for name, _, size, mtime in found:
                batch.add(f"{P}_queue_size_bytes", size, queue=name)
                batch.add(f"{P}_queue_modified_timestamp_seconds", mtime, queue=name)
            batch.add(f"{P}_gui_display_queues", displays)
        return emit

    def _queue_counts(self, batch: MetricBatch, queue_files: list[tuple[str, str]]) -> Callable[[], None]:
        from .. import hpom_text

        counts, problems = [], []
        template = self.settings.queue_count_command or []
        for name, path in queue_files:
            argv = [arg.replace("{path}", path).replace("{queue}", name) for arg in template]
            try:
                count = hpom_text.parse_count(self._run(argv), self.settings.queue_count_pattern)
            except CommandError as exc:
                problems.append(f"{name}: {exc}")
                continue
            if count is None:
                problems.append(f"{name}: no count in the output")
                continue
            counts.append((name, count))

        def emit() -> None:
            for name, count in counts:
                batch.add(f"{P}_queue_entries", count, queue=name)
            if problems:
                raise ValueError("; ".join(problems[:5]) + (f" (+{len(problems) - 5} more)" if len(problems) > 5 else ""))
        return emit

    def _status(self, batch: MetricBatch, source: str, argv: list[str],
                parse: Callable[[str], list[Any]]) -> Callable[[], None]:
        output = self._run(argv)
        entries = parse(output)
        if not entries:
            raise ValueError(f"no process lines in the output of {os.path.basename(argv[0])} -status "
                             f"({len(output)} characters)")
        up: dict[str, bool] = {}
        for entry in entries:
            up[entry.name] = up.get(entry.name, True) and entry.running

        def emit() -> None:
            for process in sorted(up):
                batch.add(f"{P}_server_process_up", 1 if up[process] else 0, source=source, process=process)
        return emit

    def _variables(self, batch: MetricBatch) -> Callable[[], None]:
        from .. import hpom_text

        values = hpom_text.parse_ovconfget(self._run([self.settings.ovconfget, "-ovrg", "server", "opc"]))

        def emit() -> None:
            for var in self.variables:
                if var.name in values:
                    value, origin = values[var.name], "set"
                elif var.default is not None:
                    value, origin = var.default, "default"
                else:
                    value, origin = "", "unset"
                batch.add_info(f"{P}_server_variable_info", {"value": value, "origin": origin,
                                                              "guide": var.guide}, variable=var.name)
                number = _number(value)
                if number is not None:
                    batch.add(f"{P}_server_variable_value", number, variable=var.name)
                if var.follows_guide is not None and origin != "unset":
                    batch.add(f"{P}_server_variable_follows_guide", 1 if var.follows_guide(value) else 0,
                              variable=var.name)
        return emit

    def _msi(self, batch: MetricBatch) -> Callable[[], None]:
        wanted = set(self.settings.msi_programs)
        counts = dict.fromkeys(sorted(wanted), 0)
        for proc, _ in iter_processes(self.context.procfs):
            if proc.comm in wanted and proc.state != "Z":
                counts[proc.comm] += 1

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
        for query, error in queries.errors().items():
            batch.note_error(f"database:{query}", error)
        queries.emit(batch)
        batch.add(f"{P}_database_up", 1 if client.up else 0)
        batch.add(f"{P}_database_backoff_seconds", client.backoff_remaining())
        if not client.up:
            raise ConnectionError(client.last_error or "no session")
        return lambda: None

    def close(self) -> None:
        if self.client is not None:
            self.client.close()


def _number(value: str) -> float | None:
    try:
        return float(value.strip())
    except (ValueError, AttributeError):
        return None


def _command_env() -> dict[str, str]:
    """A small, predictable environment for HPOM commands (C locale so that their output is parseable)."""
    env = {"PATH": "/usr/bin:/bin:/usr/sbin:/sbin:/opt/OV/bin:/opt/OV/bin/OpC", "LANG": "C", "LC_ALL": "C"}
    for key in ("OV_CONF_DIR", "OV_DATA_DIR", "OV_INSTALL_DIR", "TZ"):
        if key in os.environ:
            env[key] = os.environ[key]
    return env
