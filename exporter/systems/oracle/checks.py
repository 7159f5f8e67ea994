"""The guide checks: each compares what the queries returned (parameters, redo groups, the host) or the mounts
holding the database files with the guides' advice, and says which query metrics it reads, so that a site's
``queries_file`` that drops one fails at start (``check-config``) naming the check instead of losing it silently.
The guides and rows are listed in this folder's README.md.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, NamedTuple, Sequence

from ...core.metrics import MetricBatch
from ...machine.procfs import Mount
from .metrics import FILE_SYSTEM_INFO, FOLLOWS_GUIDE, GUIDE_OBSERVED, GUIDE_THRESHOLD, NFS_MOUNT_FOLLOWS_GUIDE, P
from .parse import int_option, mount_of, parse_options
from .settings import GuideThresholds

if TYPE_CHECKING:
    from .querymetrics import QueryRunner, QuerySpec
    from .settings import DatabaseEntry

MIB = 1024 * 1024
NFS_TYPES = ("nfs", "nfs4")


@dataclass(frozen=True)
class QueryMetric:
    """A metric of the query file that a check reads back, with the labels it reads."""

    name: str
    labels: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.name}{{{','.join(self.labels)}}}" if self.labels else self.name

    def samples(self, runner: QueryRunner) -> list[tuple[float, dict[str, str]]]:
        return runner.samples(self.name)

    def produced_by(self, queries: Sequence[QuerySpec]) -> bool:
        return any(m.name == self.name and set(self.labels) <= set(m.labels) for q in queries for m in q.metrics)


PARAMETER_VALUE = QueryMetric(f"{P}_parameter_value", ("name",))
PARAMETER_INFO = QueryMetric(f"{P}_parameter_info", ("name", "value"))
REDO_GROUP_SIZE = QueryMetric(f"{P}_redo_group_size_bytes", ("thread",))
HOST_CPUS = QueryMetric(f"{P}_host_cpus")
HOST_CPU_CORES = QueryMetric(f"{P}_host_cpu_cores")
HOST_MEMORY = QueryMetric(f"{P}_host_memory_bytes")


@dataclass
class Inputs:
    """What the checks read from one database's last query results."""

    params: dict[str, float]  # numeric parameters by name
    texts: dict[str, str]  # parameters as text by name
    redo_sizes: list[tuple[float, dict[str, str]]]
    cpus: float | None
    cpu_cores: float | None
    memory: float | None

    @classmethod
    def read(cls, runner: QueryRunner) -> "Inputs":
        def last(metric: QueryMetric) -> float | None:
            samples = metric.samples(runner)
            return samples[-1][0] if samples else None

        return cls(params={labels["name"]: value for value, labels in PARAMETER_VALUE.samples(runner)},
                   texts={labels["name"]: labels.get("value", "") for _, labels in PARAMETER_INFO.samples(runner)},
                   redo_sizes=REDO_GROUP_SIZE.samples(runner), cpus=last(HOST_CPUS), cpu_cores=last(HOST_CPU_CORES),
                   memory=last(HOST_MEMORY))


class Finding(NamedTuple):
    observed: float
    threshold: float
    follows: bool


Evaluate = Callable[[Inputs, GuideThresholds], Finding | None]


def _redo_groups_per_thread(i: Inputs, g: GuideThresholds) -> Finding | None:
    if not i.redo_sizes:
        return None
    fewest = min(Counter(labels["thread"] for _, labels in i.redo_sizes).values())
    return Finding(fewest, g.min_redo_groups, fewest >= g.min_redo_groups)


def _redo_group_size(i: Inputs, g: GuideThresholds) -> Finding | None:
    if not i.redo_sizes:
        return None
    smallest = min(value for value, _ in i.redo_sizes)
    return Finding(smallest, g.min_redo_group_bytes, smallest >= g.min_redo_group_bytes)


def _parameter_at_least(parameter: str, threshold: Callable[[GuideThresholds], float]) -> Evaluate:
    def evaluate(i: Inputs, g: GuideThresholds) -> Finding | None:
        if parameter not in i.params:
            return None
        return Finding(i.params[parameter], threshold(g), i.params[parameter] >= threshold(g))
    return evaluate


def _db_writer_processes(i: Inputs, _: GuideThresholds) -> Finding | None:
    cores = i.cpu_cores or i.cpus
    if "db_writer_processes" not in i.params or not cores:
        return None
    return Finding(i.params["db_writer_processes"], cores, i.params["db_writer_processes"] >= cores)


def _sga_share_of_memory(i: Inputs, g: GuideThresholds) -> Finding | None:
    sga = i.params.get("sga_max_size") or i.params.get("sga_target")
    if not sga or not i.memory:
        return None
    share = sga / i.memory
    return Finding(share, g.sga_share_min, g.sga_share_min <= share <= g.sga_share_max)


def _hpom_sga_target(i: Inputs, g: GuideThresholds) -> Finding | None:
    target = i.params.get("sga_target") or i.params.get("memory_target")  # memory_target when sga_target is 0
    if target is None:
        return None
    return Finding(target, g.min_sga_target_bytes, target >= g.min_sga_target_bytes)


@dataclass(frozen=True)
class Check:
    """A guide check: its name (the ``check`` label), the query metrics it reads (a tuple inside ``needs``: any
    one of them), how it judges (None for the NFS mount check) and which databases it applies to."""

    name: str
    needs: tuple[QueryMetric | tuple[QueryMetric, ...], ...]
    evaluate: Evaluate | None = None
    applies: Callable[[DatabaseEntry], bool] = lambda _: True

    def missing(self, queries: Sequence[QuerySpec]) -> list[str]:
        """The inputs no query produces, each as "a or b" for alternatives."""
        result = []
        for need in self.needs:
            options = need if isinstance(need, tuple) else (need,)
            if not any(metric.produced_by(queries) for metric in options):
                result.append(" or ".join(str(metric) for metric in options))
        return result


# In the exposition's order; the guide rows are in the README.
CHECKS = (
    Check("redo_groups_per_thread", (REDO_GROUP_SIZE,), _redo_groups_per_thread),  # ORA-REDO, HPOM-ORA
    Check("redo_group_size", (REDO_GROUP_SIZE,), _redo_group_size),  # ORA-REDO, HPOM-ORA
    Check("log_buffer", (PARAMETER_VALUE,),  # HPOM-ORA
          _parameter_at_least("log_buffer", lambda g: g.min_log_buffer_bytes)),
    Check("db_writer_processes", (PARAMETER_VALUE, (HOST_CPU_CORES, HOST_CPUS)), _db_writer_processes),  # ORA-DBWR
    Check("sga_share_of_memory", (PARAMETER_VALUE, HOST_MEMORY), _sga_share_of_memory,  # ORA-SGA
          lambda entry: entry.dedicated_host),
    Check("hpom_sga_target", (PARAMETER_VALUE,), _hpom_sga_target, lambda entry: entry.hpom),  # HPOM-ORA
    Check("hpom_processes", (PARAMETER_VALUE,),  # HPOM-ORA
          _parameter_at_least("processes", lambda g: g.min_processes), lambda entry: entry.hpom),
    Check("hpom_multiblock_read_count", (PARAMETER_VALUE,),  # HPOM-ORA
          _parameter_at_least("db_file_multiblock_read_count", lambda g: g.min_multiblock_read_count),
          lambda entry: entry.hpom),
)
# ORA-NFS: the options of the NFS mounts holding the database files; filesystemio_options counts as direct I/O.
NFS_MOUNTS = Check("nfs_mounts", (PARAMETER_INFO,), applies=lambda entry: entry.local_files != "no")


def require_inputs(queries: Sequence[QuerySpec], databases: Sequence[DatabaseEntry], source: str) -> None:
    """Refuse a query list lacking a metric that a check of a configured database reads."""
    problems = []
    for check in (*CHECKS, NFS_MOUNTS):
        if not any(check.applies(db) for db in databases):
            continue  # e.g. no dedicated host: the query list may leave out host memory
        missing = check.missing(queries)
        if missing:
            problems.append(f"{check.name} reads {', '.join(missing)}")
    if problems:
        raise ValueError(f"{source}: no query produces what these guide checks read: {'; '.join(problems)} "
                         "(keep those queries from the built-in queries.yaml, or add them with extra_queries_file)")


def add_checks(batch: MetricBatch, entry: DatabaseEntry, guide: GuideThresholds, inputs: Inputs) -> None:
    """Add ``follows_guide`` with the observed value and threshold for every check that applies and has inputs."""
    for check in CHECKS:
        finding = check.evaluate(inputs, guide) if check.evaluate and check.applies(entry) else None
        if finding is None:
            continue
        labels = {"database": entry.name, "check": check.name}
        FOLLOWS_GUIDE.add(batch, 1 if finding.follows else 0, **labels)
        GUIDE_OBSERVED.add(batch, finding.observed, **labels)
        GUIDE_THRESHOLD.add(batch, finding.threshold, **labels)


def nfs_findings(options: str, direct_io_parameter: bool, guide: GuideThresholds) -> dict[str, bool]:
    """Whether an NFS mount's options follow the report, option by option (ORA-NFS)."""
    opts = parse_options(options)
    return {
        "hard": "soft" not in opts,
        "proto_tcp": opts.get("proto", "tcp").startswith("tcp"),
        "vers": opts.get("vers", opts.get("nfsvers", "")).split(".")[0] in guide.nfs_versions
        or opts.get("vers", "") in guide.nfs_versions,
        "rsize": int_option(opts, "rsize") >= guide.nfs_min_rsize,
        "wsize": int_option(opts, "wsize") >= guide.nfs_min_wsize,
        "timeo": int_option(opts, "timeo") >= guide.nfs_min_timeo,
        "direct_io": "forcedirectio" in opts or direct_io_parameter,
    }


def add_file_systems(batch: MetricBatch, database: str, directories: Sequence[str], mounts: Sequence[Mount],
                     inputs: Inputs, guide: GuideThresholds) -> None:
    """Add the file systems holding ``directories`` and, for NFS ones, the ORA-NFS option checks."""
    direct_io_parameter = inputs.texts.get("filesystemio_options", "").lower() in ("directio", "setall")
    seen: dict[str, Mount] = {}
    for directory in directories:
        mount = mount_of(directory, mounts)
        if mount is not None:
            seen[mount.mountpoint] = mount
    for point, mount in sorted(seen.items()):
        FILE_SYSTEM_INFO.add_info(batch, {"fstype": mount.fstype, "source": mount.source, "options": mount.options},
                                  database=database, mountpoint=point)
        if mount.fstype not in NFS_TYPES:
            continue
        for option, follows in nfs_findings(mount.options, direct_io_parameter, guide).items():
            NFS_MOUNT_FOLLOWS_GUIDE.add(batch, 1 if follows else 0, database=database, mountpoint=point,
                                        option=option)
