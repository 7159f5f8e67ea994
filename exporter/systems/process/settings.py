"""The process collector's configuration, apart from the collector so that validating a configuration does not
import it (exporter.registry imports this module at start; the collector only when it is enabled)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from ...core.metrics import LABEL_NAME_RE
from ...core.settings import CollectorSettings, Duration, StrictModel, check_regex

RESERVED_LABELS = ("group", "process", "mode", "user", "type", "state", "file")
COMM_MAX = 15


class ProcessGroup(StrictModel):
    name: str = Field(..., min_length=1, description="Group name (the `group` label).")
    names: list[str] = Field(default_factory=list, description="Exact process names (comm, at most 15 characters).")
    comm: str | None = Field(None, description="Regex on the process name; named groups become labels.")
    cmdline: str | None = Field(None, description="Regex the command line must contain; named groups become labels.")
    labels_from_cmdline: str | None = Field(
        None, description="Regex on the command line whose named groups become labels; does not filter.")

    @field_validator("names")
    @classmethod
    def _names_fit_comm(cls, names: list[str]) -> list[str]:
        for name in names:
            if len(name) > COMM_MAX:
                raise ValueError(f"{name!r} is longer than {COMM_MAX} characters, the kernel's limit for a "
                                 f"process name; match it with `comm` (prefix) or `cmdline` instead")
        return names

    @field_validator("comm", "cmdline", "labels_from_cmdline")
    @classmethod
    def _regex(cls, value: str | None) -> str | None:
        return None if value is None else check_regex(value)

    @model_validator(mode="after")
    def _something_to_match(self) -> "ProcessGroup":
        if not (self.names or self.comm or self.cmdline):
            raise ValueError(f"group {self.name!r} needs names, comm or cmdline")
        if self.names and self.comm:
            raise ValueError(f"group {self.name!r}: give names or comm, not both")
        for label in self.capture_labels():
            if label != "process" and (label in RESERVED_LABELS or not LABEL_NAME_RE.match(label)):
                raise ValueError(f"group {self.name!r}: capture group name {label!r} cannot be a label")
        return self

    def capture_labels(self) -> list[str]:
        labels: list[str] = []
        for pattern in (self.comm, self.cmdline, self.labels_from_cmdline):
            if pattern:
                labels.extend(n for n in re.compile(pattern).groupindex if n not in labels)
        return labels


def _g(name: str, *names: str, comm: str | None = None, cmdline: str | None = None,
       labels_from_cmdline: str | None = None) -> ProcessGroup:
    return ProcessGroup(name=name, names=list(names), comm=comm, cmdline=cmdline,
                        labels_from_cmdline=labels_from_cmdline)


# Built-in groups for the seed systems (see README "Process groups").  `-m QM1` and `-mQM1` both occur in MQ
# command lines.
DEFAULT_GROUPS: list[ProcessGroup] = [
    _g("hpom_server", "opcctlm", "opcmsgm", "opcmsgr", "opcmsgrb", "opcactm", "opcdispm", "opcdistm",
       "opcttnsm", "opcforwm", "opcecm", "opcecaas", "opcsvcm", "opcbbcdist", "opccmm", "ovoareqsdr", "opctss"),
    _g("hpom_java_gui", "opcuiwww"),
    _g("hpom_motif_gui", "opcuiadm", "opcuiop", "opcuiopadm"),
    _g("hpom_agent", "ovcd", "ovbbccb", "ovconfd", "opcmsga", "opcmsgi", "opcacta", "opcle", "opcmona",
       "opctrapi", "opceca", "coda"),
    _g("ibmmq", "amqzxma0", "amqzlaa0", "amqzmuc0", "amqzmur0", "amqzmuf0", "amqzfuma", "amqrmppa", "runmqchl",
       "runmqlsr", "amqpcsea", "amqfqpub", "amqfcxba", "amqzdmaa", "amqrrmfa", "amqzmgr0", "amqhasmx",
       labels_from_cmdline=r"-m\s*(?P<qmgr>[^\s-]\S*)"),
    _g("mqsi_engine", "mqsiruleng", "DataFlowEngine", "bipbroker", "bipservice"),
    _g("oracle", comm=r"^ora_(?P<process>pmon|smon|lgwr|ckpt|dbw[0-9a-z]|bw[0-9a-z]{2}|arc[0-9a-z]|"
                      r"lg[0-9a-z]{2}|reco|mmon|mmnl|lreg|psp0)_",
       labels_from_cmdline=r"^ora_[0-9a-z]+_(?P<sid>\S+)"),
    _g("oracle_listener", "tnslsnr"),
    _g("vhi_session_server", "sesssrvr"),
    _g("domino", "server", "update", "router", "replica", "amgr", "adminp", "sched", "calconn", "event",
       "http", cmdline=r"(?i)(lotus|domino|notes)"),
]


class ProcessSettings(CollectorSettings):
    interval: Duration = Field(15.0, description="Seconds between passes over the process table.")
    timeout: Duration = Field(10.0, description="Seconds before a pass counts as failed.")
    backend: Literal["auto", "procfs", "psutil"] = Field(
        "auto", description="Where processes are read: `procfs` (Linux's /proc), `psutil` (other platforms), or "
                            "`auto` (procfs on Linux and for a Linux-shaped paths.procfs, psutil elsewhere); "
                            "see docs/platforms.md.")
    groups: list[ProcessGroup] = Field(
        default_factory=lambda: [g.model_copy() for g in DEFAULT_GROUPS],
        description="Process groups; replaces the built-in list (HPOM, MQ, MQSI, Oracle, VHI, Domino).")
    extra_groups: list[ProcessGroup] = Field(default_factory=list,
                                             description="Groups added to `groups` (keeps the built-in list).")
    group_by_user: bool = Field(
        False, description="Split every group by the processes' effective user (a `user` label with the name, or "
                           "the number when the name is unknown).")
    thread_states: bool = Field(
        False, description="Report `middleware_process_group_threads_by_state` (one read of "
                           "/proc/<pid>/task/<tid>/stat per thread of the groups' processes; Linux only).")

    @model_validator(mode="after")
    def _unique(self) -> "ProcessSettings":
        seen: set[str] = set()
        for group in self.all_groups():
            if group.name in seen:
                raise ValueError(f"process group {group.name!r} is defined twice")
            seen.add(group.name)
        return self

    def all_groups(self) -> list[ProcessGroup]:
        return list(self.groups) + list(self.extra_groups)
