"""IBM MQ queue managers: queue depths and maximum depths, queue-manager and channel status, each queue manager
read through its own back-end (mqweb REST, PCF via ``ibmmq``, or ``runmqsc`` text), and put/get counts from the
queue manager's resource-statistics publications where the back-end can read them (PCF subscriptions, amqsrua).

Metric names and labels are those of IBM's mq_prometheus, so dashboards built for it keep working.  Queue managers
are read at once through the core fan-out, each under its own deadline: one that fails, hangs or returns garbage
costs only its own samples (``middleware_ibmmq_backend_success`` 0, the error in /api/v1/collectors).
"""

from __future__ import annotations

import fnmatch
import re
from typing import Literal

from pydantic import Field, model_validator

from ...core.collector import Collector, Context
from ...core.fanout import Target, fan_out
from ...core.metrics import MetricBatch, MetricSpec
from ...core.secrets import PasswordSettings, SecretUnavailable
from ...core.settings import CollectorSettings, Duration
from .model import (
    CHANNEL_STATUS_CODES,
    Backend,
    BackendError,
    QmgrSnapshot,
    Throughput,
    channel_status_squash,
)
from .states import ROLES, qmgr_state


class QueueManagerEntry(PasswordSettings):
    name: str = Field(..., pattern=r"^[A-Za-z0-9._%/]{1,48}$", description="Queue manager name (the `qmgr` label).")
    backend: Literal["rest", "pcf", "runmqsc"] = Field("rest", description="How to read it.")
    timeout: Duration = Field(10.0, description="Timeout of each request or command, seconds.")
    include: list[str] = Field(default_factory=lambda: ["*"], description="Queue name patterns to report (glob).")
    exclude: list[str] = Field(default_factory=lambda: ["SYSTEM.*", "AMQ.*"],
                               description="Queue name patterns to leave out (glob; applied after include).")
    # rest
    url: str | None = Field(None, description="rest: mqweb base URL, e.g. https://mqhost:9443.")
    api_version: Literal["v1", "v2", "v3"] = Field("v2", description="rest: REST API version (v2/v3 use MQSC JSON).")
    username: str | None = Field(None, description="rest/pcf: user.")
    client_cert: str | None = Field(None, description="rest: client certificate (PEM) instead of a password.")
    client_key: str | None = Field(None, description="rest: key of the client certificate.")
    ca_file: str | None = Field(None, description="rest: CA bundle for mqweb's certificate.")
    verify_tls: bool = Field(True, description="rest: verify mqweb's certificate (leave on).")
    # pcf
    channel: str | None = Field(None, description="pcf: SVRCONN channel, e.g. MONITOR.SVRCONN.")
    conn_name: str | None = Field(None, description="pcf: CONNAME, e.g. mqhost(1414).")
    # runmqsc
    runmqsc: str = Field("/opt/mqm/bin/runmqsc", description="runmqsc: the runmqsc binary.")
    dspmq: str = Field("/opt/mqm/bin/dspmq", description="runmqsc: the dspmq binary.")
    command_prefix: list[str] = Field(
        default_factory=list,
        description="runmqsc: put in front of dspmq, runmqsc and amqsrua, e.g. [ssh, -o, BatchMode=yes, mqhost1], "
                    "to read a queue manager on another host (its `qmgr` label identifies it; docs/deploy-server.md).")
    # put/get counts
    statistics: Literal["publications", "reset_qstats", "off"] = Field(
        "publications",
        description="pcf/runmqsc: where put/get counts come from. publications: the queue manager's resource-"
                    "statistics topics (STATMQI, STATQ; MQ 9.0+), through the back-end's own non-durable "
                    "subscriptions (pcf) or amqsrua (runmqsc); other readers lose nothing. reset_qstats (pcf only): "
                    "RESET QSTATS per queue, DESTRUCTIVE: it clears the counters for every other tool reading them. "
                    "rest: mqweb offers neither, the counters are absent.")
    statistics_max_queues: int = Field(
        50, ge=0, le=1000, description="pcf/runmqsc: at most this many queues (after include/exclude, by name) get "
                                       "per-queue counts: two STATQ subscriptions (two object handles, mind MAXHANDS) "
                                       "each; amqsrua takes 49 at most.")
    monitor_interval: Duration = Field(
        10.0, description="pcf/runmqsc: the queue manager's MONINT, seconds between its statistics publications "
                          "(10 by default; ALTER QMGR MONINT).")
    amqsrua: str = Field("/opt/mqm/samp/bin/amqsrua",
                         description="runmqsc: IBM's amqsrua sample (put/get counts); not installed here: no counts.")
    # MQ-IO: where the queue manager keeps its queue files and its log, when it runs on this host
    data_path: str | None = Field(None, description="The queue manager's data directory on this host (qm.ini "
                                                    "DataPath, e.g. /var/mqm/qmgrs/QM1): with log_path, the disks "
                                                    "holding them (MQ-IO advice); leave unset for a remote one.")
    log_path: str | None = Field(None, description="The queue manager's log directory on this host (qm.ini Log "
                                                   "stanza LogPath, e.g. /var/mqm/log/QM1).")

    @model_validator(mode="after")
    def _backend_settings(self) -> QueueManagerEntry:
        if self.backend == "rest" and not self.url:
            raise ValueError(f"queue manager {self.name}: the rest back-end needs url")
        if self.backend == "pcf" and not (self.channel and self.conn_name):
            raise ValueError(f"queue manager {self.name}: the pcf back-end needs channel and conn_name")
        if self.statistics == "reset_qstats" and self.backend != "pcf":
            raise ValueError(f"queue manager {self.name}: statistics reset_qstats needs the pcf back-end (RESET "
                             "QSTATS is a PCF command on distributed platforms)")
        return self


class IbmmqSettings(CollectorSettings):
    enabled: bool = Field(False, description="Run this collector.")
    interval: Duration = Field(30.0, description="Seconds between collections.")
    timeout: Duration = Field(25.0, description="Seconds before a collection counts as failed.")
    max_series: int = Field(200000, ge=1, description="A collection producing more series than this is refused "
                                                      "(10,000 queues give about 60,000).")
    queue_managers: list[QueueManagerEntry] = Field(default_factory=list, description="The queue managers to read.")

    @model_validator(mode="after")
    def _unique(self) -> IbmmqSettings:
        names = [q.name for q in self.queue_managers]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"queue manager names must be unique: {dupes}")
        if self.enabled and not self.queue_managers:
            raise ValueError("enabled, but no queue_managers are configured")
        return self


Q = ("qmgr", "queue")
CH = ("qmgr", "channel", "type", "connname")
BK = ("qmgr", "backend")

QMGR_STATUS = MetricSpec(
    "ibmmq_qmgr_status", "gauge", "Queue manager status (MQQMSTA: 1 starting, 2 running, 3 quiescing, "
    "4 standby; 0 ended or unreachable).", ("qmgr",),
    "4 also for healthy standbys: running as standby, running elsewhere, Native HA replica")
QMGR_HA_ROLE = MetricSpec(
    "middleware_ibmmq_qmgr_ha_role", "gauge", "High-availability role of the queue manager's instance as this "
    "exporter sees it: 1 for the current role (active, standby, replica, none, unknown), 0 for the others.",
    ("qmgr", "role"), 'no active instance of a pair: sum by (qmgr) (...{role="active"}) == 0')
QUEUE_DEPTH = MetricSpec(
    "ibmmq_queue_depth", "gauge", "Messages on the queue (CURDEPTH).", Q,
    "MQ-DEPTH: the report held the input queue at 100; deriv() > 0 is growth")
QUEUE_MAX_DEPTH = MetricSpec("ibmmq_queue_attribute_max_depth", "gauge", "Maximum depth of the queue (MAXDEPTH).", Q)
QUEUE_DEPTH_RATIO = MetricSpec(
    "ibmmq_queue_depth_ratio", "gauge", "Depth as a share of the maximum depth (0-1).", Q,
    "MQ-DEPTH: alert over e.g. 0.8")
QUEUE_OLDEST_MESSAGE_AGE = MetricSpec(
    "ibmmq_queue_oldest_message_age", "gauge", "Age of the oldest message in seconds (MSGAGE; needs queue "
    "monitoring, MONQ).", Q)
QUEUE_INPUT_HANDLES = MetricSpec(
    "ibmmq_queue_input_handles", "gauge", "Handles open for input (IPPROCS): the consumers.", Q)
QUEUE_OUTPUT_HANDLES = MetricSpec(
    "ibmmq_queue_output_handles", "gauge", "Handles open for output (OPPROCS): the producers.", Q)
# Put/get counts: mq_prometheus's names for the same publication elements, as a Prometheus server stores its
# counters (OpenMetrics adds _total).
QMGR_PUTS = MetricSpec(
    "ibmmq_qmgr_interval_mqput_mqput1_total_count_total", "counter", "Messages put (MQPUT and MQPUT1) on the queue "
    "manager: STATMQI PUT 'Interval total MQPUT/MQPUT1 count' of its statistics publications, summed since the "
    "exporter started reading them (pcf, runmqsc).", ("qmgr",), "MQ-CPU producers: rate()")
QMGR_GETS = MetricSpec(
    "ibmmq_qmgr_interval_destructive_get_total_count_total", "counter", "Messages got (destructive MQGET) on the "
    "queue manager: STATMQI GET 'Interval total destructive get- count', summed (pcf, runmqsc).", ("qmgr",),
    "MQ-CPU throughput per queue manager (the report's msgs/s): rate()")
QUEUE_PUTS = MetricSpec(
    "ibmmq_queue_mqput_mqput1_count_total", "counter", "Messages put to the queue: STATQ PUT 'MQPUT/MQPUT1 count' "
    "(or RESET QSTATS MsgEnqCount where opted in), summed (pcf, runmqsc).", Q, "MQ-DEPTH enqueue rate: rate()")
QUEUE_GETS = MetricSpec(
    "ibmmq_queue_mqget_count_total", "counter", "Messages got from the queue: STATQ GET 'MQGET count' (or RESET "
    "QSTATS MsgDeqCount), summed (pcf, runmqsc).", Q, "MQ-DEPTH dequeue rate: rate()")
SQ = ("qmgr", "source")
STATS_SUCCESS = MetricSpec(
    "middleware_ibmmq_statistics_success", "gauge", "1 if the queue manager's put/get statistics source "
    "(publications, amqsrua, reset_qstats) was read in the last run; absent where the back-end has none.", SQ)
STATS_DURATION = MetricSpec(
    "middleware_ibmmq_statistics_duration_seconds", "gauge", "Time reading the statistics source took in the "
    "last run.", SQ)
STATS_PUBLICATIONS = MetricSpec(
    "middleware_ibmmq_statistics_publications_total", "counter", "Statistics publications (or RESET QSTATS "
    "answers) counted.", SQ)
STATS_DROPPED = MetricSpec(
    "middleware_ibmmq_statistics_publications_dropped_total", "counter", "Statistics publications left out: "
    "garbage, or an interval too long to be one MONINT.", SQ)
STATS_SUBSCRIPTIONS = MetricSpec(
    "middleware_ibmmq_statistics_subscriptions", "gauge", "Statistics subscriptions held (queues reset, for "
    "reset_qstats).", SQ)
STATS_NOT_SUBSCRIBED = MetricSpec(
    "middleware_ibmmq_statistics_queues_not_subscribed", "gauge", "Reported queues without per-queue counts "
    "(over statistics_max_queues).", SQ)
CHANNEL_STATUS = MetricSpec(
    "ibmmq_channel_status", "gauge", "Channel status (MQCHS: 0 inactive, 1 binding, 2 starting, 3 running, "
    "4 stopping, 5 retrying, 6 stopped, 7 requesting, 8 paused, 9 disconnected, 13 initializing, 14 switching).",
    CH)
CHANNEL_STATUS_SQUASH = MetricSpec(
    "ibmmq_channel_status_squash", "gauge", "Channel status squashed: 0 stopped, 1 transitioning, 2 running.", CH,
    "channel not running: == 0")
BACKEND_SUCCESS = MetricSpec(
    "middleware_ibmmq_backend_success", "gauge", "1 if the queue manager's back-end answered in the last run.",
    BK)
BACKEND_DURATION = MetricSpec(
    "middleware_ibmmq_backend_duration_seconds", "gauge", "Time the back-end took in the last run.", BK)
QUEUES = MetricSpec("middleware_ibmmq_queues", "gauge", "Queues reported (after include/exclude).", ("qmgr",))
QUEUES_EXCLUDED = MetricSpec(
    "middleware_ibmmq_queues_excluded", "gauge", "Queues left out by include/exclude.", ("qmgr",))
FILE_SYSTEM_INFO = MetricSpec(
    "middleware_ibmmq_file_system_info", "info", "The disk holding the queue manager's queue files (use=data) or "
    "log (use=log), from data_path/log_path: the whole disk of a partition, else the device (major:minor without a "
    "block device, e.g. NFS) in the device label.", ("qmgr", "use"), "MQ-IO: data and log on the same device")

SPECS = [QMGR_STATUS, QMGR_HA_ROLE, QUEUE_DEPTH, QUEUE_MAX_DEPTH, QUEUE_DEPTH_RATIO, QUEUE_OLDEST_MESSAGE_AGE,
         QUEUE_INPUT_HANDLES, QUEUE_OUTPUT_HANDLES, QMGR_PUTS, QMGR_GETS, QUEUE_PUTS, QUEUE_GETS, CHANNEL_STATUS,
         CHANNEL_STATUS_SQUASH, BACKEND_SUCCESS, BACKEND_DURATION, QUEUES, QUEUES_EXCLUDED, STATS_SUCCESS,
         STATS_DURATION, STATS_PUBLICATIONS, STATS_DROPPED, STATS_SUBSCRIPTIONS, STATS_NOT_SUBSCRIBED,
         FILE_SYSTEM_INFO]


def disk_of(path: str, sysfs: str = "/sys") -> str:
    """The disk a directory lives on: its device through sysfs (/sys/dev/block/MAJ:MIN), the parent disk of a
    partition; ``MAJ:MIN`` when no block device backs it (NFS, tmpfs). Raises OSError when the path is absent."""
    import os

    dev = os.stat(path).st_dev
    number = f"{os.major(dev)}:{os.minor(dev)}"
    link = os.path.join(sysfs, "dev", "block", number)
    if not os.path.exists(link):
        return number
    real = os.path.realpath(link)
    if os.path.exists(os.path.join(real, "partition")):
        real = os.path.dirname(real)
    return os.path.basename(real)


def _patterns(patterns: list[str]) -> re.Pattern[str]:
    return re.compile("|".join(fnmatch.translate(p) for p in patterns) or r"(?!)")


def make_backend(entry: QueueManagerEntry) -> Backend:
    """The back-end object for one queue manager (imported lazily: REST needs no MQ client)."""
    try:
        password = entry.read_password()
    except SecretUnavailable as exc:
        raise BackendError(str(exc)) from None
    if entry.backend == "rest":
        from .rest import RestBackend

        return RestBackend(entry.name, entry.url or "", username=entry.username, password=password,
                           client_cert=entry.client_cert, client_key=entry.client_key, ca_file=entry.ca_file,
                           verify_tls=entry.verify_tls, timeout=entry.timeout, api_version=entry.api_version)
    if entry.backend == "pcf":
        from .pcf import PcfBackend

        return PcfBackend(entry.name, entry.channel or "", entry.conn_name or "", user=entry.username,
                          password=password, timeout=entry.timeout, statistics=entry.statistics,
                          statistics_max_queues=entry.statistics_max_queues, monitor_interval=entry.monitor_interval)
    from .runmqsc import RunmqscBackend

    return RunmqscBackend(entry.name, runmqsc=entry.runmqsc, dspmq=entry.dspmq, timeout=entry.timeout,
                          command_prefix=entry.command_prefix,
                          amqsrua=entry.amqsrua if entry.statistics == "publications" else None,
                          monitor_interval=entry.monitor_interval,
                          statistics_max_queues=entry.statistics_max_queues)


class _QueueManager(Target):
    """One queue manager: its settings, its back-end (made on first read) and its queue filter."""

    def __init__(self, entry: QueueManagerEntry, collector_timeout: float, interval: float = 30.0) -> None:
        # dspmq + runmqsc, or a handful of REST calls, each bounded by the entry's timeout
        super().__init__("ibmmq", entry.name, entry.timeout * 4, collector_timeout)
        self.entry = entry
        self.include = _patterns(entry.include)
        self.exclude = _patterns(entry.exclude)
        self.backend: Backend | None = None
        self.interval = interval

    def wanted(self, queue: str) -> bool:
        return bool(self.include.match(queue)) and not self.exclude.match(queue)

    def read(self) -> QmgrSnapshot:
        if self.backend is None:
            self.backend = make_backend(self.entry)
            self.backend.wanted = self.wanted  # type: ignore[method-assign] - the statistics follow the filter
            stats = getattr(self.backend, "stats", None)
            if hasattr(stats, "ticks"):  # amqsrua: about one collection's worth of publications per command
                stats.ticks = max(1, round(self.interval / self.entry.monitor_interval))  # type: ignore[union-attr]
        snapshot = self.backend.snapshot()
        if not isinstance(snapshot, QmgrSnapshot):
            raise BackendError(f"back-end returned {type(snapshot).__name__}, not a snapshot")
        return snapshot

    def error(self) -> str | None:
        """The last read's error as ``<backend>: <error>``, or None."""
        exc = self.outcome.error
        if exc is None:
            return None
        if isinstance(exc, BackendError) or self.outcome.overdue:
            return f"{self.entry.backend}: {exc}"
        return f"{self.entry.backend}: {type(exc).__name__}: {exc}"  # a back-end bug


class IbmmqCollector(Collector):
    name = "ibmmq"
    description = ("IBM MQ queue managers (REST, PCF or runmqsc): queue depths, qmgr and channel status, put/get "
                   "counts from the resource-statistics publications (PCF, amqsrua).")
    Settings = IbmmqSettings

    def __init__(self, settings: IbmmqSettings, context: Context) -> None:
        super().__init__(settings, context)
        self.settings: IbmmqSettings = settings
        self.qmgrs = [_QueueManager(entry, settings.timeout, settings.interval) for entry in settings.queue_managers]

    @classmethod
    def reference_settings(cls) -> IbmmqSettings:
        return IbmmqSettings()

    def specs(self) -> list[MetricSpec]:
        return SPECS

    def targets(self) -> list[str]:
        return [qm.entry.name for qm in self.qmgrs]

    def collect(self, batch: MetricBatch) -> None:
        fan_out(self.qmgrs, _QueueManager.read)
        for qm in self.qmgrs:
            self._emit(qm, batch)
            self._emit_disks(qm.entry, batch)

    def _emit_disks(self, entry: QueueManagerEntry, batch: MetricBatch) -> None:
        """MQ-IO: the disks of the queue files and the log (only when both paths are set)."""
        if not (entry.data_path and entry.log_path):
            return
        for use, path in (("data", entry.data_path), ("log", entry.log_path)):
            try:
                FILE_SYSTEM_INFO.add_info(batch, {"device": disk_of(path, self.context.sysfs)}, qmgr=entry.name,
                                          use=use)
            except OSError as exc:
                batch.note_error(f"{entry.name}/{use}_path", f"{use}_path: {exc.strerror or exc}")
                batch.report_source(entry.name, f"{use}_path", False, f"{use}_path: {exc.strerror or exc}")

    def _emit(self, qm: _QueueManager, batch: MetricBatch) -> None:
        name, backend = qm.entry.name, qm.entry.backend
        snap: QmgrSnapshot | None = qm.outcome.value
        BACKEND_SUCCESS.add(batch, 1 if snap else 0, qmgr=name, backend=backend)
        BACKEND_DURATION.add(batch, qm.outcome.duration, qmgr=name, backend=backend)
        error = qm.error()
        if error:
            batch.note_error(name, error)
        # the queue manager is the target, up when its back-end answered (core/targets.py)
        batch.report_target(name, snap is not None, error)
        batch.report_source(name, f"backend:{backend}", snap is not None, error)
        state = qmgr_state(snap.status if snap is not None else None)  # no snapshot: UNKNOWN (0, unknown)
        QMGR_STATUS.add(batch, state.status, qmgr=name)
        for role in ROLES:
            QMGR_HA_ROLE.add(batch, 1 if role == state.role else 0, qmgr=name, role=role)
        if snap is None:
            return
        reported = excluded = 0
        seen: set[str] = set()
        for queue in snap.queues:
            if queue.name in seen:
                continue
            seen.add(queue.name)
            if not qm.wanted(queue.name):
                excluded += 1
                continue
            reported += 1
            labels = {"qmgr": name, "queue": queue.name}
            if queue.depth is not None:
                QUEUE_DEPTH.add(batch, queue.depth, **labels)
            if queue.max_depth is not None:
                QUEUE_MAX_DEPTH.add(batch, queue.max_depth, **labels)
                if queue.depth is not None and queue.max_depth > 0:
                    QUEUE_DEPTH_RATIO.add(batch, queue.depth / queue.max_depth, **labels)
            if queue.oldest_message_age is not None:
                QUEUE_OLDEST_MESSAGE_AGE.add(batch, queue.oldest_message_age, **labels)
            if queue.open_input is not None:
                QUEUE_INPUT_HANDLES.add(batch, queue.open_input, **labels)
            if queue.open_output is not None:
                QUEUE_OUTPUT_HANDLES.add(batch, queue.open_output, **labels)
        QUEUES.add(batch, reported, qmgr=name)
        QUEUES_EXCLUDED.add(batch, excluded, qmgr=name)
        if snap.throughput is not None:
            self._emit_throughput(qm, snap.throughput, seen, batch)
        channels: dict[tuple[str, str, str], str] = {}
        for channel in snap.channels:
            key = (channel.name, channel.type, channel.connection)
            current = channels.get(key)
            # several instances with the same labels: report the most alive one
            if current is None or channel_status_squash(channel.status) > channel_status_squash(current):
                channels[key] = channel.status
        for (channel, ctype, connname), status in sorted(channels.items()):
            labels = {"qmgr": name, "channel": channel, "type": ctype, "connname": connname}
            code = CHANNEL_STATUS_CODES.get(status.upper())
            if code is not None:
                CHANNEL_STATUS.add(batch, code, **labels)
            CHANNEL_STATUS_SQUASH.add(batch, channel_status_squash(status), **labels)

    def _emit_throughput(self, qm: _QueueManager, tp: Throughput, queues: set[str], batch: MetricBatch) -> None:
        """The statistics source's own success and, when it succeeded, its counters (a failed source adds none:
        a half-read batch of publications must not look like a fall in throughput)."""
        name = qm.entry.name
        labels = {"qmgr": name, "source": tp.source}
        STATS_SUCCESS.add(batch, 0 if tp.error else 1, **labels)
        STATS_DURATION.add(batch, tp.duration, **labels)
        STATS_PUBLICATIONS.add(batch, tp.publications, **labels)
        STATS_DROPPED.add(batch, tp.dropped, **labels)
        STATS_SUBSCRIPTIONS.add(batch, tp.subscriptions, **labels)
        STATS_NOT_SUBSCRIBED.add(batch, tp.not_subscribed, **labels)
        batch.report_source(name, f"statistics:{tp.source}", not tp.error, f"{tp.source}: {tp.error}")
        if tp.error:
            batch.note_error(f"{name}/statistics", f"{tp.source}: {tp.error}")
            return
        if tp.qmgr_puts is not None:
            QMGR_PUTS.add(batch, tp.qmgr_puts, qmgr=name)
        if tp.qmgr_gets is not None:
            QMGR_GETS.add(batch, tp.qmgr_gets, qmgr=name)
        for queue, value in sorted(tp.queue_puts.items()):
            if queue in queues and qm.wanted(queue):
                QUEUE_PUTS.add(batch, value, qmgr=name, queue=queue)
        for queue, value in sorted(tp.queue_gets.items()):
            if queue in queues and qm.wanted(queue):
                QUEUE_GETS.add(batch, value, qmgr=name, queue=queue)

    def close(self) -> None:
        for qm in self.qmgrs:
            if qm.backend is not None:
                try:
                    qm.backend.close()
                except Exception:  # noqa: BLE001 - closing must not stop the other queue managers
                    pass
