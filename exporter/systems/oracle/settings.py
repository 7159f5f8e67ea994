"""The Oracle collector's configuration, apart from the collector so that validating a configuration imports neither
the collector nor its parsers and checks (exporter.registry imports this module at start; the collector only when it
is enabled).  The connection settings stay in client.py (HPOM's database section uses them too)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, field_validator, model_validator

from ...core.config import StaticLabelMap, labels_field
from ...core.settings import CollectorSettings, Duration, StrictModel, parse_duration
from .client import MAX_ROWS, OracleSettings

MIB = 1024 * 1024


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


NonNegativeDuration = Annotated[float, BeforeValidator(parse_duration), Field(ge=0)]


class HeapWarningSettings(StrictModel):
    source: Literal["auto", "view", "alert_log", "off"] = Field(
        "auto", description="Where heap warnings (ORA-KGL) are read: view (V$DIAG_ALERT_EXT, 11g+), alert_log (the "
                            "text file at alert_log, 10g or no SQL access), off; auto: alert_log when a path is "
                            "given, else view.")
    alert_log: str | None = Field(None, description="Path of the text alert log on this host (alert_<SID>.log).")
    view: str = Field("v$diag_alert_ext", pattern=r"^[A-Za-z][A-Za-z0-9_$#]*(\.[A-Za-z][A-Za-z0-9_$#]*)?$",
                      description="The view read by the view source (e.g. sys.x$dbgalertext for a SYS connection "
                                  "on 11.1).")
    con_id_column: bool = Field(True, description="The view has CON_ID (12c+); false on 11g.")
    history: NonNegativeDuration = Field(86400.0, description=(
        "On the exporter's first run, count the alert log's warnings and errors this far back by the log's own "
        "timestamps (the view from the database's clock; the file's tail, at most max_bytes, from the host's), so "
        "that a one-shot advise judges ORA-KGL on that window; 0: start counting at 0 from now."))
    max_rows: int = Field(1000, ge=1, le=MAX_ROWS, description="Rows read from the view per run at most; the "
                                                               "rest follows in the next runs.")
    max_bytes: int = Field(4 * MIB, ge=4096, le=256 * MIB, description="Bytes read from the alert-log file per run "
                                                                       "at most; the rest follows in the next runs.")
    max_error_codes: int = Field(200, ge=1, le=10000, description="Distinct ORA- codes counted by name in "
                                                                   "middleware_oracle_alert_errors_total; later new "
                                                                   "codes are counted under code=\"other\".")
    timeout: Duration | None = Field(None, description="Limit for one read of the source (default: the database's "
                                                       "query_timeout).")

    @model_validator(mode="after")
    def _path_for_file(self) -> "HeapWarningSettings":
        if self.source == "alert_log" and not self.alert_log:
            raise ValueError("source alert_log needs the alert_log path")
        return self

    @property
    def resolved(self) -> str:
        if self.source == "auto":
            return "alert_log" if self.alert_log else "view"
        return self.source


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
    heap_warnings: HeapWarningSettings = Field(default_factory=HeapWarningSettings,
                                               description="The alert log: library-cache heap warnings (ORA-KGL) "
                                                           "and ORA- errors by code.")
    labels: StaticLabelMap = labels_field("Labels added to every series of this database (those with its "
                                          "`database` label), e.g. env: prod, app: erp (docs/configuration.md).")


class OracleCollectorSettings(CollectorSettings):
    enabled: bool = Field(False, description="Run this collector.")
    interval: Duration = Field(60.0, description="Seconds between collections.")
    timeout: Duration = Field(50.0, description="Seconds before a collection counts as failed.")
    databases: list[DatabaseEntry] = Field(default_factory=list, description="The databases to read.")
    queries_file: str | None = Field(None, description="Query file replacing the built-in queries.yaml; it must "
                                                       "still produce what the guide checks read.")
    extra_queries_file: str | None = Field(None, description="Query file whose queries are added to the built-in ones.")
    custom_metrics: list[str] = Field(default_factory=list, description=(
        "Custom-metrics TOML files of Oracle's exporter or oracledb_exporter ([[metric]] tables), read as they are; "
        "their series keep the oracledb_<context>_<column> names (README.md, Migrating)."))
    compatibility_names: Literal["oracle", "oracledb_exporter"] | None = Field(None, description=(
        "Also run that exporter's published default metrics and oracledb_up, so its dashboards and alerts keep "
        "working; custom_metrics then follow its rules (default: Oracle's)."))
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
