"""Oracle databases: redo log switches and layout, log-switch waits, parameters, resource limits, the file
systems that hold the database files, and checks against the guides.  Many databases per exporter, each with
its own ``database`` label.

Requirements: ``../shared/guide-thresholds.md`` rows ORA-REDO, ORA-DBWR, ORA-SGA, ORA-NFS and HPOM-ORA
(``000_cb9c6d184be713ef.txt`` Table 6 and the history download conclusions; ``001_8bc6ee30d2915b38.txt``
"Oracle tuning" and "HP-UX NFS configuration").

The metrics come from the queries in ``exporter/queries/oracle.yaml`` (data, not code; ``queries_file`` replaces
it, ``extra_queries_file`` adds to it).  Each database is read in its own thread under a deadline, so a database
that hangs, refuses logins or drops its connection shows in its own ``middleware_oracle_up`` and
``..._query_success`` series while the other databases and collectors carry on.  The guide checks are computed
from the query results (``middleware_oracle_follows_guide{database,check}`` with the observed value and the
threshold next to it).
"""

from __future__ import annotations

import os
import re
import socket
import threading
import time
from importlib import resources
from typing import TYPE_CHECKING, Literal

from pydantic import Field, field_validator, model_validator

from ..collector import Collector, CollectorSettings, Context, Duration, StrictModel
from ..deadline import BoundedCall, Overdue
from ..metrics import NAMESPACE, MetricBatch, MetricSpec
from ..oracle import OracleClient, OracleSettings, error_text
from ..procfs import read_text

if TYPE_CHECKING:
    from ..sqlmetrics import QuerySpec

P = f"{NAMESPACE}_oracle"
MIB = 1024 * 1024

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
NFS_TYPES = ("nfs", "nfs4")


class DatabaseEntry(OracleSettings):
    name: str = Field(..., pattern=r"^[A-Za-z0-9_.:-]+$", description="The `database` label value.")
    hpom: bool = Field(False, description="The HPOM database: also check the HPOM guide's Table 6 values.")
    dedicated_host: bool = Field(False, description="The host runs only this database: check SGA = 50-70 % of "
                                                    "memory (ORA-SGA).")
    local_files: Literal["auto", "yes", "no"] = Field(
        "auto", description="Whether the database files are on this host's file systems (NFS checks): auto "
                            "compares v$instance.host_name with this host's name.")
    data_paths: list[str] | None = Field(None, description="Directories holding the database files; default: "
                                                           "those of v$datafile, v$tempfile, v$logfile, v$controlfile.")


class GuideThresholds(StrictModel):
    min_redo_groups: int = Field(5, ge=1, description="Redo groups per thread (HPOM-ORA, ORA-REDO).")
    min_redo_group_bytes: int = Field(100 * MIB, ge=1, description="Redo group size (HPOM-ORA: 100 MB).")
    min_log_buffer_bytes: int = Field(int(1.5 * MIB), ge=1, description="log_buffer (HPOM-ORA: 1.5-2 MB).")
    min_sga_target_bytes: int = Field(350 * MIB, ge=1, description="sga_target of an HPOM database (Table 6).")
    min_processes: int = Field(200, ge=1, description="processes of an HPOM database (Table 6: 200-500).")
    min_multiblock_read_count: int = Field(32, ge=1, description="db_file_multiblock_read_count (Table 6).")
    sga_share_min: float = Field(0.5, gt=0, lt=1, description="SGA share of memory on a dedicated host (ORA-SGA).")
    sga_share_max: float = Field(0.7, gt=0, le=1, description="Upper end of that band.")
    nfs_versions: list[str] = Field(default_factory=lambda: ["3"], description="NFS versions the report used.")
    nfs_min_rsize: int = Field(32768, description="rsize (ORA-NFS).")
    nfs_min_wsize: int = Field(32768, description="wsize (ORA-NFS).")
    nfs_min_timeo: int = Field(600, description="timeo in tenths of a second (ORA-NFS).")

    @model_validator(mode="after")
    def _band(self) -> "GuideThresholds":
        if self.sga_share_min >= self.sga_share_max:
            raise ValueError("sga_share_min must be below sga_share_max")
        return self


class OracleCollectorSettings(CollectorSettings):
    enabled: bool = Field(False, description="Run this collector.")
    interval: Duration = Field(60.0, description="Seconds between collections.")
    timeout: Duration = Field(50.0, description="Seconds before a collection counts as failed.")
    databases: list[DatabaseEntry] = Field(default_factory=list, description="The databases to read.")
    queries_file: str | None = Field(None, description="Query file replacing the built-in oracle.yaml.")
    extra_queries_file: str | None = Field(None, description="Query file whose queries are added to the built-in ones.")
    guide: GuideThresholds = Field(default_factory=GuideThresholds, description="Thresholds of the guide checks.")

    @field_validator("databases")
    @classmethod
    def _unique(cls, databases: list[DatabaseEntry]) -> list[DatabaseEntry]:
        names = [d.name for d in databases]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"database names must be unique: {dupes}")
        return databases

    @model_validator(mode="after")
    def _needs_databases(self) -> "OracleCollectorSettings":
        if self.enabled and not self.databases:
            raise ValueError("enabled, but no databases are configured")
        return self


def _spec(name: str, type_: str, help_: str, labels: tuple[str, ...] = (), note: str = "") -> MetricSpec:
    return MetricSpec(f"{P}_{name}", type_, help_, ("database", *labels), note)


BASE_SPECS = [
    _spec("up", "gauge", "1 if a session to the database could be had in the last attempt."),
    _spec("backoff_seconds", "gauge", "Seconds until the next connection attempt after a failure (a rejected "
          "login waits longer so as not to lock the account)."),
    _spec("collect_success", "gauge", "1 if the database answered within the deadline and a session could be had "
          "(query failures are in middleware_oracle_query_success)."),
    _spec("collect_duration_seconds", "gauge", "Time spent reading the database in the last run."),
    _spec("follows_guide", "gauge", "1 if the database follows the guide on this point, 0 if not; absent when the "
          "inputs are missing.", ("check",), "ORA-*, HPOM-ORA advice"),
    _spec("guide_observed", "gauge", "The value a guide check looked at (bytes, counts, ratios).", ("check",)),
    _spec("guide_threshold", "gauge", "The threshold a guide check compared it with (the lower end for a band).",
          ("check",)),
    _spec("file_system_info", "info", "A file system holding database files (when they are on this host).",
          ("mountpoint",)),
    _spec("nfs_mount_follows_guide", "gauge", "1 if an NFS mount holding database files has the option the "
          "report recommends (hard, proto_tcp, vers, rsize, wsize, timeo, direct_io), 0 if not.",
          ("mountpoint", "option"), "ORA-NFS advice"),
]


def _mounts(procfs: str) -> list[tuple[str, str, str, str]]:
    """(source, mountpoint, fstype, options) from /proc/mounts, octal escapes decoded."""
    result = []
    try:
        text = read_text(os.path.join(procfs, "mounts"))
    except OSError:
        text = read_text(os.path.join(procfs, "self", "mounts"))
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 4:
            decode = lambda s: re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), s)  # noqa: E731
            result.append((decode(parts[0]), decode(parts[1]), parts[2], parts[3]))
    return result


def mount_of(path: str, mounts: list[tuple[str, str, str, str]]) -> tuple[str, str, str, str] | None:
    """The mount a path lives on: the longest mountpoint that is a prefix of it (the last such mount wins)."""
    best = None
    path = os.path.normpath(path)
    for mount in mounts:
        point = mount[1]
        if path == point or path.startswith(point.rstrip("/") + "/") or point == "/":
            if best is None or len(point) >= len(best[1]):
                best = mount
    return best


def _options(text: str) -> dict[str, str]:
    result = {}
    for item in text.split(","):
        key, _, value = item.partition("=")
        result[key] = value
    return result


class _Database:
    def __init__(self, entry: DatabaseEntry, queries: list[QuerySpec], limit: float) -> None:
        from ..sqlmetrics import QueryRunner

        self.entry = entry
        self.client = OracleClient(entry.name, entry)
        self.runner = QueryRunner(queries, prefix=f"{P}_query", const_labels={"database": entry.name},
                                  allowed_prefix=f"{P}_")
        self.call = BoundedCall(f"oracle-{entry.name}")
        budget = entry.connect_timeout + sum(q.timeout or entry.query_timeout for q in queries) + 2 * entry.query_timeout
        self.deadline = min(budget, limit)
        self.directories: list[str] | None = list(entry.data_paths) if entry.data_paths else None
        self.files_checked = 0.0
        self.local: bool | None = {"yes": True, "no": False}.get(entry.local_files)
        self.error: str | None = None
        self.duration = 0.0

    def work(self) -> None:
        """Everything that talks to the database (runs in a worker thread under a deadline)."""
        self.runner.run(self.client)
        if not self.client.up:
            return
        now = time.monotonic()
        if self.entry.data_paths or now - self.files_checked < FILES_REFRESH_SECONDS:
            return
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
            self.error = f"file locations: {error_text(exc)}"


def _same_host(db_host: str) -> bool:
    mine = {socket.gethostname().lower(), socket.getfqdn().lower()}
    mine |= {name.split(".")[0] for name in mine}
    return db_host.lower() in mine or db_host.lower().split(".")[0] in mine


class OracleCollector(Collector):
    name = "oracle"
    description = "Oracle databases: redo switches and layout, log-switch waits, parameters, limits, NFS, guide checks."
    Settings = OracleCollectorSettings

    def __init__(self, settings: OracleCollectorSettings, context: Context) -> None:
        super().__init__(settings, context)
        self.settings: OracleCollectorSettings = settings
        from ..sqlmetrics import QueryRunner, load_queries  # imported when the collector runs, not at start

        if settings.queries_file:
            queries = load_queries(settings.queries_file)
        else:
            with resources.as_file(resources.files("exporter") / "queries" / "oracle.yaml") as path:
                queries = load_queries(path)
        if settings.extra_queries_file:
            extra = load_queries(settings.extra_queries_file)
            clash = {q.name for q in extra} & {q.name for q in queries}
            if clash:
                raise ValueError(f"extra_queries_file redefines queries {sorted(clash)}")
            queries = queries + extra
        self.queries = queries
        limit = max(settings.timeout - 2.0, settings.timeout * 0.8)
        self.databases = [_Database(entry, queries, limit) for entry in settings.databases]
        # the specs of the declared queries, once (every database runs the same queries)
        self._query_specs = QueryRunner(queries, prefix=f"{P}_query", const_labels={"database": "-"},
                                        allowed_prefix=f"{P}_").specs()

    @classmethod
    def reference_settings(cls) -> OracleCollectorSettings:
        return OracleCollectorSettings(databases=[DatabaseEntry(name="db", dsn="db:1521/orcl", user="u", password="-")])

    def specs(self) -> list[MetricSpec]:
        return BASE_SPECS + self._query_specs

    def collect(self, batch: MetricBatch) -> None:
        threads = [threading.Thread(target=self._read, args=(db,), daemon=True, name=f"oracle-{db.entry.name}")
                   for db in self.databases]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        mounts: list[tuple[str, str, str, str]] | None = None
        for db in self.databases:
            if db.local and db.directories and mounts is None:
                try:
                    mounts = _mounts(self.context.procfs)
                except OSError as exc:  # no mount table here: the file-system checks are skipped, not the rest
                    mounts = []
                    batch.note_error("mounts", f"cannot read the mount table: {exc.strerror or exc}")
            self._emit(db, batch, mounts or [])

    def _read(self, db: _Database) -> None:
        started = time.monotonic()
        db.error = None
        try:
            db.call(db.work, db.deadline)
        except Overdue as exc:
            db.runner.fail_due(f"database: {exc}")
            db.client.up = False
            db.error = f"no answer within the deadline: {exc}"
        except Exception as exc:  # noqa: BLE001 - one database must not stop the others
            db.error = error_text(exc)
        db.duration = time.monotonic() - started

    def _emit(self, db: _Database, batch: MetricBatch, mounts: list[tuple[str, str, str, str]]) -> None:
        name = db.entry.name
        client = db.client
        ok = client.up and (db.error is None or db.error.startswith("file locations"))
        batch.add(f"{P}_up", 1 if client.up else 0, database=name)
        batch.add(f"{P}_backoff_seconds", client.backoff_remaining(), database=name)
        batch.add(f"{P}_collect_success", 1 if ok else 0, database=name)
        batch.add(f"{P}_collect_duration_seconds", db.duration, database=name)
        if db.error or (not client.up and client.last_error):
            batch.note_error(name, db.error or client.last_error or "")
        for query, error in db.runner.errors().items():
            batch.note_error(f"{name}:{query}", error)
        db.runner.emit(batch)
        texts = self._checks(db, batch)
        if db.local and db.directories:
            self._file_systems(db, batch, mounts, texts)

    # ---- checks against the guides ---------------------------------------------------------------------------
    def _checks(self, db: _Database, batch: MetricBatch) -> dict[str, str]:
        """Add the guide checks; return the text parameters (for the NFS direct I/O check)."""
        g = self.settings.guide
        runner = db.runner
        name = db.entry.name

        def check(check_name: str, observed: float, threshold: float, ok: bool) -> None:
            batch.add(f"{P}_follows_guide", 1 if ok else 0, database=name, check=check_name)
            batch.add(f"{P}_guide_observed", observed, database=name, check=check_name)
            batch.add(f"{P}_guide_threshold", threshold, database=name, check=check_name)

        params = {labels["name"]: value for value, labels in runner.samples(f"{P}_parameter_value")}
        texts = {labels["name"]: labels.get("value", "") for _, labels in runner.samples(f"{P}_parameter_info")}
        host = {metric: value for metric in ("host_cpus", "host_cpu_cores", "host_memory_bytes")
                for value, _ in runner.samples(f"{P}_{metric}")}
        sizes = runner.samples(f"{P}_redo_group_size_bytes")
        if sizes:
            per_thread: dict[str, int] = {}
            for _, labels in sizes:
                per_thread[labels["thread"]] = per_thread.get(labels["thread"], 0) + 1
            fewest = min(per_thread.values())
            check("redo_groups_per_thread", fewest, g.min_redo_groups, fewest >= g.min_redo_groups)
            smallest = min(value for value, _ in sizes)
            check("redo_group_size", smallest, g.min_redo_group_bytes, smallest >= g.min_redo_group_bytes)
        if "log_buffer" in params:
            check("log_buffer", params["log_buffer"], g.min_log_buffer_bytes,
                  params["log_buffer"] >= g.min_log_buffer_bytes)
        cores = host.get("host_cpu_cores") or host.get("host_cpus")
        if "db_writer_processes" in params and cores:
            check("db_writer_processes", params["db_writer_processes"], cores, params["db_writer_processes"] >= cores)
        sga = params.get("sga_max_size") or params.get("sga_target")
        memory = host.get("host_memory_bytes")
        if db.entry.dedicated_host and sga and memory:
            share = sga / memory
            check("sga_share_of_memory", share, g.sga_share_min, g.sga_share_min <= share <= g.sga_share_max)
        if db.entry.hpom:
            target = params.get("sga_target") or params.get("memory_target")
            if target is not None:
                check("hpom_sga_target", target, g.min_sga_target_bytes, target >= g.min_sga_target_bytes)
            if "processes" in params:
                check("hpom_processes", params["processes"], g.min_processes, params["processes"] >= g.min_processes)
            if "db_file_multiblock_read_count" in params:
                value = params["db_file_multiblock_read_count"]
                check("hpom_multiblock_read_count", value, g.min_multiblock_read_count,
                      value >= g.min_multiblock_read_count)
        return texts

    def _file_systems(self, db: _Database, batch: MetricBatch, mounts: list[tuple[str, str, str, str]],
                      texts: dict[str, str]) -> None:
        g = self.settings.guide
        name = db.entry.name
        direct_param = texts.get("filesystemio_options", "").lower() in ("directio", "setall")
        seen: dict[str, tuple[str, str, str, str]] = {}
        for directory in db.directories or []:
            mount = mount_of(directory, mounts)
            if mount is not None:
                seen[mount[1]] = mount
        for point, (source, _, fstype, options) in sorted(seen.items()):
            batch.add_info(f"{P}_file_system_info", {"fstype": fstype, "source": source, "options": options},
                           database=name, mountpoint=point)
            if fstype not in NFS_TYPES:
                continue
            opts = _options(options)

            def number(key: str) -> int:
                try:
                    return int(opts.get(key, "0"))
                except ValueError:
                    return 0

            results = {
                "hard": "soft" not in opts,
                "proto_tcp": opts.get("proto", "tcp").startswith("tcp"),
                "vers": opts.get("vers", opts.get("nfsvers", "")).split(".")[0] in g.nfs_versions
                or opts.get("vers", "") in g.nfs_versions,
                "rsize": number("rsize") >= g.nfs_min_rsize,
                "wsize": number("wsize") >= g.nfs_min_wsize,
                "timeo": number("timeo") >= g.nfs_min_timeo,
                "direct_io": "forcedirectio" in opts or direct_param,
            }
            for option, ok in results.items():
                batch.add(f"{P}_nfs_mount_follows_guide", 1 if ok else 0, database=name, mountpoint=point,
                          option=option)

    def close(self) -> None:
        for db in self.databases:
            db.client.close()

