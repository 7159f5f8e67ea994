"""Process groups: count, CPU, memory and threads of the middleware's own processes.

One pass over /proc per run reads only ``/proc/<pid>/stat`` (name, state, CPU ticks, threads, start time,
RSS); the command line is read only for processes a group wants to check it for.  A process is counted by
itself, never with its children, and counts in every group it matches.  Zombies are not counted.

A group matches processes by

* ``names``: exact process names (``comm``, which the kernel truncates to 15 characters); each name becomes a
  ``process`` label value and is reported with a count of 0 when no such process runs, so ``== 0`` alerts work;
* ``comm``: a regular expression on the name, for families such as ``ora_dbw0_ORCL``, ``ora_dbw1_ORCL``;
* ``cmdline``: a regular expression that the command line must contain (a filter);
* ``labels_from_cmdline``: a regular expression whose named groups become labels when it matches (``qmgr``
  from ``-m QM1``); it does not filter.

Named groups in ``comm``/``cmdline``/``labels_from_cmdline`` become labels; the group named ``process`` fills
the ``process`` label.  Every metric carries the union of these label names; a process without a value has
the label empty, which PromQL treats as absent.

CPU seconds per group are kept monotonic across process exits and restarts (a plain sum over the processes
alive now would drop when one exits, and ``rate()`` would read that as a counter reset).
"""

from __future__ import annotations

import os
import re
from typing import Callable

from pydantic import Field, field_validator, model_validator

from ..collector import Collector, CollectorSettings, Context, Duration, StrictModel, check_regex
from ..metrics import LABEL_NAME_RE, NAMESPACE, MetricBatch, MetricSpec
from ..procfs import PAGE_SIZE, USER_HZ, ProcStat, iter_processes, read_text

P = f"{NAMESPACE}_process"
RESERVED_LABELS = ("group", "process", "mode")
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
    groups: list[ProcessGroup] = Field(
        default_factory=lambda: [g.model_copy() for g in DEFAULT_GROUPS],
        description="Process groups; replaces the built-in list (HPOM, MQ, MQSI, Oracle, VHI, Domino).")
    extra_groups: list[ProcessGroup] = Field(default_factory=list,
                                             description="Groups added to `groups` (keeps the built-in list).")

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


class _Matcher:
    """A compiled group; returns the label values for a process, or None."""

    def __init__(self, group: ProcessGroup, extra_labels: list[str]) -> None:
        self.group = group
        self.names = frozenset(group.names)
        self.comm = re.compile(group.comm) if group.comm else None
        self.cmdline = re.compile(group.cmdline) if group.cmdline else None
        self.labels_from_cmdline = re.compile(group.labels_from_cmdline) if group.labels_from_cmdline else None
        self.extra_labels = extra_labels

    def match(self, proc: ProcStat, cmdline: Callable[[], str]) -> tuple[str, ...] | None:
        captured: dict[str, str] = {}
        if self.names:
            if proc.comm not in self.names:
                return None
            captured["process"] = proc.comm
        elif self.comm is not None:
            m = self.comm.search(proc.comm)
            if m is None:
                return None
            captured.update({k: v for k, v in m.groupdict().items() if v is not None})
        if self.cmdline is not None:
            m = self.cmdline.search(cmdline())
            if m is None:
                return None
            captured.update({k: v for k, v in m.groupdict().items() if v is not None})
        if self.labels_from_cmdline is not None:
            m = self.labels_from_cmdline.search(cmdline())
            if m is not None:
                captured.update({k: v for k, v in m.groupdict().items() if v is not None})
        return self.key(captured.get("process", ""), captured)

    def key(self, process: str, captured: dict[str, str]) -> tuple[str, ...]:
        return (self.group.name, process) + tuple(captured.get(label, "") for label in self.extra_labels)

    def zero_keys(self, present: set[tuple[str, str]]) -> list[tuple[str, ...]]:
        """Keys reported as 0: configured names (or the whole group) with no process at all."""
        if self.names:
            return [self.key(name, {}) for name in self.group.names if (self.group.name, name) not in present]
        if any(group == self.group.name for group, _ in present):
            return []
        return [self.key("", {})]


class _Totals:
    __slots__ = ("processes", "rss", "threads", "oldest")

    def __init__(self) -> None:
        self.processes = 0
        self.rss = 0
        self.threads = 0
        self.oldest: float | None = None


class ProcessCollector(Collector):
    name = "process"
    description = "Process groups of HPOM, IBM MQ, MQSI, Oracle, VHI and Domino: count, CPU, memory, threads."
    Settings = ProcessSettings

    def __init__(self, settings: ProcessSettings, context: Context) -> None:
        super().__init__(settings, context)
        groups = settings.all_groups()
        labels: list[str] = []
        for group in groups:
            labels.extend(label for label in group.capture_labels() if label != "process" and label not in labels)
        self.extra_labels = labels
        self.matchers = [_Matcher(group, labels) for group in groups]
        self.label_names = ("group", "process", *labels)
        # Monotonic CPU: ticks already counted per series, and per live process what we counted last time.
        self._cpu_ticks: dict[tuple[str, ...], list[int]] = {}
        self._seen: dict[tuple[int, int, int], tuple[int, int]] = {}

    def specs(self) -> list[MetricSpec]:
        labels = self.label_names
        return [
            MetricSpec(f"{P}_group_processes", "gauge",
                       "Processes in the group (0 for a configured name that is not running).", labels,
                       "HPOM-GUI: group=\"hpom_java_gui\" is the number of Java GUI sessions"),
            MetricSpec(f"{P}_group_cpu_seconds_total", "counter",
                       "CPU time of the group's processes by mode (user, system); monotonic across restarts.",
                       labels + ("mode",), "CPU share: rate() summed over mode"),
            MetricSpec(f"{P}_group_resident_memory_bytes", "gauge", "Resident memory of the group's processes.",
                       labels),
            MetricSpec(f"{P}_group_threads", "gauge", "Threads of the group's processes.", labels),
            MetricSpec(f"{P}_group_oldest_start_time_seconds", "gauge",
                       "Unix start time of the group's oldest process (changes when it restarts).", labels),
            MetricSpec(f"{P}_scanned_processes", "gauge", "Processes read from /proc in the last pass.", ()),
        ]

    def _boot_time(self) -> float:
        for line in read_text(os.path.join(self.context.procfs, "stat")).splitlines():
            if line.startswith("btime "):
                return float(line.split()[1])
        raise ValueError("no btime line in /proc/stat")

    def collect(self, batch: MetricBatch) -> None:
        root = self.context.procfs
        boot_time = self._boot_time()
        totals: dict[tuple[str, ...], _Totals] = {}
        seen: dict[tuple[int, int, int], tuple[int, int]] = {}
        scanned = 0
        for proc, base in iter_processes(root):
            scanned += 1
            if proc.state == "Z":
                continue
            cmdline_cache: list[str] = []

            def cmdline(base: str = base, cache: list[str] = cmdline_cache) -> str:
                if not cache:
                    try:
                        cache.append(read_text(base + "/cmdline").replace("\0", " ").strip())
                    except OSError:
                        cache.append("")
                return cache[0]

            for index, matcher in enumerate(self.matchers):
                key = matcher.match(proc, cmdline)
                if key is None:
                    continue
                t = totals.get(key)
                if t is None:
                    t = totals[key] = _Totals()
                t.processes += 1
                t.rss += proc.rss_pages * PAGE_SIZE
                t.threads += proc.threads
                started = boot_time + proc.starttime / USER_HZ
                t.oldest = started if t.oldest is None else min(t.oldest, started)
                ident = (proc.pid, proc.starttime, index)
                prev_user, prev_system = self._seen.get(ident, (0, 0))
                ticks = self._cpu_ticks.setdefault(key, [0, 0])
                ticks[0] += max(proc.utime - prev_user, 0)
                ticks[1] += max(proc.stime - prev_system, 0)
                seen[ident] = (proc.utime, proc.stime)
        self._seen = seen
        labels = self.label_names
        present = {(key[0], key[1]) for key in totals}
        for matcher in self.matchers:
            for key in matcher.zero_keys(present):
                totals.setdefault(key, _Totals())
        for key in sorted(totals):
            t = totals[key]
            lv = dict(zip(labels, key))
            batch.add(f"{P}_group_processes", t.processes, **lv)
            if t.processes == 0:
                continue
            user, system = self._cpu_ticks[key]
            batch.add(f"{P}_group_cpu_seconds_total", user / USER_HZ, mode="user", **lv)
            batch.add(f"{P}_group_cpu_seconds_total", system / USER_HZ, mode="system", **lv)
            batch.add(f"{P}_group_resident_memory_bytes", t.rss, **lv)
            batch.add(f"{P}_group_threads", t.threads, **lv)
            batch.add(f"{P}_group_oldest_start_time_seconds", t.oldest, **lv)
        batch.add(f"{P}_scanned_processes", scanned)
