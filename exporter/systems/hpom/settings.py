"""The HPOM collector's configuration, apart from the collector so that validating a configuration does not import
it (exporter.registry imports this module at start; the collector only when it is enabled).  The parsers and the
guide checks that two validators need are imported inside them."""

from __future__ import annotations

import re

from pydantic import Field, field_validator, model_validator

from ...core.config import StaticLabelMap, labels_field
from ...core.settings import CollectorSettings, Duration, check_regex
from ...core.sources import check_command_timeout
from ...machine.remote import RemoteCommands, check_remote_arguments
from ..oracle.client import OracleSettings

DEFAULT_QUEUE_DIR = "/var/opt/OV/share/tmp/OpC/mgmt_sv"
DEFAULT_COUNT_PATTERN = r"(?P<count>\d+)"
# Agent components that sites stop on purpose where they are not used (the performance components of the
# Operations Agent: a published production `opcagt -status` shows exactly these Stopped, and the site's own check
# ignores them "per the Monitoring team recommendations (the modules aren't currently in use)").
DEFAULT_EXPECTED_STOPPED = ("ttd", "perfalarm", "perfd")
# The custom message attribute table and its message column as public tools that read OMU 9.x show them
# (tests/systems/hpom/fixtures/real/SOURCE.md); no DDL confirms them, hence the settings cma_table / cma_message_column.
DEFAULT_CMA_TABLE = "opc_op.opc_act_cust_attrib"
DEFAULT_CMA_COLUMN = "message_number"
# No public source shows where HPOM keeps its service relations (HPOM-SLOD): the service_tree query of
# queries.yaml reads these placeholder names, and runs only when service_table names the real table.
SERVICE_TREE_QUERY = "service_tree"
PLACEHOLDER_SERVICE_TABLE = "opc_op.hpom_service_relations"
PLACEHOLDER_SERVICE_PARENT = "parent_service"
PLACEHOLDER_SERVICE_CHILD = "child_service"
_TRUE_WORDS = frozenset({"TRUE", "YES", "ON", "1", "ENABLED"})
_IDENTIFIER = r"[A-Za-z][A-Za-z0-9_$#]*"
_TABLE_NAME = re.compile(rf"(?:{_IDENTIFIER}\.)?{_IDENTIFIER}", re.ASCII)
_COLUMN_NAME = re.compile(_IDENTIFIER, re.ASCII)


class HpomSettings(CollectorSettings, RemoteCommands):
    enabled: bool = Field(False, description="Run this collector (on an HPOM management server).")
    interval: Duration = Field(30.0, description="Seconds between collections.")
    timeout: Duration = Field(25.0, description="Seconds before a collection counts as failed.")
    queue_dir: str = Field(DEFAULT_QUEUE_DIR, description="The server queue directory.")
    queue_pattern: str = Field(r"^[a-z]+q\d*$", description="Regex of the queue file names in queue_dir.")
    queue_count_command: list[str] | None = Field(
        None, description="Command printing a queue's entry count; {path} and {queue} are replaced. No shell.")
    queue_count_pattern: str = Field(DEFAULT_COUNT_PATTERN,
                                     description="Regex with a group `count` applied to that command's output.")
    opcsv: str | None = Field("/opt/OV/bin/OpC/opcsv", description="opcsv binary (null: do not run it).")
    ovc: str | None = Field("/opt/OV/bin/ovc", description="ovc binary (null: do not run it).")
    ovconfget: str | None = Field("/opt/OV/bin/ovconfget", description="ovconfget binary (null: do not run it).")
    labels: StaticLabelMap = labels_field("Labels added to every series of this collector (the one HPOM server "
                                          "it reads), e.g. env: prod (docs/configuration.md).")
    command_timeout: Duration = Field(10.0, description="Timeout of each command, seconds.")
    variables: list[str] = Field(default_factory=list,
                                 description="More `ovconfget -ovrg server opc` variables to expose.")
    expected_stopped: list[str] = Field(
        default_factory=lambda: list(DEFAULT_EXPECTED_STOPPED),
        description="opcsv/ovc components stopped on purpose where unused: while not running they report "
                    "server_process_up 3 (stopped as expected), not 0 (down).")
    ignore_processes: list[str] = Field(default_factory=list,
                                        description="opcsv/ovc components not reported at all.")
    msi_programs: list[str] = Field(default_factory=list,
                                    description="Process names of the site's MSI programs (HPOM-MSI), counted in this "
                                                "host's process table: not read with a command_prefix.")
    database: OracleSettings | None = Field(None, description="The HPOM database (read-only account).")
    queries_file: str | None = Field(
        None, description="Query file replacing the built-in queries.yaml; it must keep what the guide rows read.")
    query_params: dict[str, int | float | str] = Field(
        default_factory=dict, description="Bind values overriding the query file's params (window_seconds, cma_limit, "
                                          "blank_key_is_missing).")
    cma_table: str = Field(DEFAULT_CMA_TABLE,
                           description="Custom message attribute table ([schema.]table; public tools show this "
                                       "name on OMU 9.x, no DDL confirms it); replaces it in the queries.")
    cma_message_column: str = Field(DEFAULT_CMA_COLUMN,
                                    description="That table's message id column; replaces it in the queries that "
                                                "read the table.")
    service_table: str | None = Field(
        None, description="Table or view of service parent-child relations ([schema.]table) for the service tree "
                          "depth (HPOM-SLOD); not public, so no default: null skips the built-in service_tree query.")
    service_parent_column: str = Field(PLACEHOLDER_SERVICE_PARENT,
                                       description="The parent service column of service_table.")
    service_child_column: str = Field(PLACEHOLDER_SERVICE_CHILD,
                                      description="The child service column of service_table.")
    service_load_on_demand: bool | None = Field(
        None, description="Whether Service Load on Demand is on (HPOM-SLOD), as the site knows it; null: unknown.")
    service_load_on_demand_variable: str | None = Field(
        None, description="An `ovconfget -ovrg server opc` variable whose value TRUE/YES/ON/1 means Service Load on "
                          "Demand is on (the switch is not public); read instead of service_load_on_demand.")
    server_version: str | None = Field(
        None, description="HPOM version of this server (e.g. 8.30): variables introduced later (the 8.22 ones, "
                          "OPC_CREATE_AUTO_KEYS from 8.31) are not judged and have no default, and a newer value "
                          "(NO_RPC before 8.22) does not follow the guide; null: judged.")

    @field_validator("cma_table")
    @classmethod
    def _cma_table(cls, value: str) -> str:
        if not _TABLE_NAME.fullmatch(value):
            raise ValueError("must be a table name, [schema.]table, e.g. opc_op.opc_act_cust_attrib")
        return value

    @field_validator("cma_message_column")
    @classmethod
    def _cma_column(cls, value: str) -> str:
        if not _COLUMN_NAME.fullmatch(value):
            raise ValueError("must be a column name, e.g. message_number")
        return value

    @field_validator("service_table")
    @classmethod
    def _service_table(cls, value: str | None) -> str | None:
        if value is not None and not _TABLE_NAME.fullmatch(value):
            raise ValueError("must be a table name, [schema.]table, e.g. opc_op.site_service_links")
        return value

    @field_validator("service_parent_column", "service_child_column")
    @classmethod
    def _service_column(cls, value: str) -> str:
        if not _COLUMN_NAME.fullmatch(value):
            raise ValueError("must be a column name, e.g. parent_service")
        return value

    @field_validator("service_load_on_demand_variable")
    @classmethod
    def _slod_variable(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value):
            raise ValueError("must be a variable name, e.g. OPC_SITE_SLOD")
        return value

    @field_validator("server_version")
    @classmethod
    def _server_version(cls, value: str | None) -> str | None:
        if value is not None:
            from .checks import version_tuple  # only where the setting is given (registry: light at start)

            if version_tuple(value) is None:
                raise ValueError("must be a dotted version, e.g. 8.30")
        return value

    @field_validator("expected_stopped", "ignore_processes")
    @classmethod
    def _process_names(cls, value: list[str]) -> list[str]:
        if any(not name.strip() or name != name.strip() for name in value):
            raise ValueError("process names must be non-empty and without surrounding blanks, e.g. perfd")
        return value

    @field_validator("queue_pattern")
    @classmethod
    def _pattern(cls, value: str) -> str:
        return check_regex(value)

    @field_validator("queue_count_pattern")
    @classmethod
    def _count_pattern(cls, value: str) -> str:
        # the built-in one is valid (tests/systems/hpom/test_hpom.py); the parsers load only
        if value != DEFAULT_COUNT_PATTERN:
            from .parse import compile_count_pattern  # where this setting is given

            compile_count_pattern(value)
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
        check_remote_arguments(self.command_prefix, {"opcsv": self.opcsv, "ovc": self.ovc,
                                                     "ovconfget": self.ovconfget,
                                                     "queue_count_command": self.queue_count_command})
        return self
