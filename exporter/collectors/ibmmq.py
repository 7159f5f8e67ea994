"""IBM MQ queue managers: queue depths, max depths, queue-manager and channel status, through one of three
back-ends per queue manager (mqweb REST, PCF via ``ibmmq``, or ``runmqsc`` text).

Requirements: ``../shared/guide-thresholds.md`` rows MQ-CPU, MQ-DEPTH, MQ-IO, MQ-ENGINE and the MQSeries
Integrator report (``003_98fb2d85265f3a93.txt``): the input queue was held at depth 100 so the rules engines
never idled; CPU idle falling toward 0 as queue managers and engines were added was the saturation sign.

Metric names follow IBM's mq_prometheus (``ibmmq_queue_depth``, ``ibmmq_queue_attribute_max_depth``,
``ibmmq_qmgr_status``, ``ibmmq_channel_status``, ``ibmmq_channel_status_squash``; labels ``qmgr``, ``queue``,
``channel``) so that dashboards built for it keep working.  CPU per queue manager comes from the process groups
(``middleware_process_group_cpu_seconds_total{group="ibmmq",qmgr=...}``), joined in PromQL.

Each queue manager is read in its own thread under a deadline; a back-end that fails, hangs or returns garbage
shows in ``middleware_ibmmq_backend_success{qmgr,backend}`` and the error in /api/v1/collectors, and the other
queue managers and collectors carry on.
"""

from __future__ import annotations

import fnmatch
import re
import threading
import time
from typing import Literal

from pydantic import Field, model_validator

from ..collector import Collector, CollectorSettings, Context, Duration
from ..deadline import BoundedCall, Overdue
from ..metrics import NAMESPACE, MetricBatch, MetricSpec
from ..secrets import PasswordSettings, SecretUnavailable
from ..mq.model import (
    CHANNEL_STATUS_CODES,
    QMGR_STATUS_CODES,
    Backend,
    BackendError,
    QmgrSnapshot,
    channel_status_squash,
)

SELF = f"{NAMESPACE}_ibmmq"


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

    @model_validator(mode="after")
    def _backend_settings(self) -> "QueueManagerEntry":
        if self.backend == "rest" and not self.url:
            raise ValueError(f"queue manager {self.name}: the rest back-end needs url")
        if self.backend == "pcf" and not (self.channel and self.conn_name):
            raise ValueError(f"queue manager {self.name}: the pcf back-end needs channel and conn_name")
        return self


class IbmmqSettings(CollectorSettings):
    enabled: bool = Field(False, description="Run this collector.")
    interval: Duration = Field(30.0, description="Seconds between collections.")
    timeout: Duration = Field(25.0, description="Seconds before a collection counts as failed.")
    max_series: int = Field(200000, ge=1, description="A collection producing more series than this is refused "
                                                      "(10,000 queues give about 60,000).")
    queue_managers: list[QueueManagerEntry] = Field(default_factory=list, description="The queue managers to read.")

    @model_validator(mode="after")
    def _unique(self) -> "IbmmqSettings":
        names = [q.name for q in self.queue_managers]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"queue manager names must be unique: {dupes}")
        if self.enabled and not self.queue_managers:
            raise ValueError("enabled, but no queue_managers are configured")
        return self


Q = ("qmgr", "queue")
CH = ("qmgr", "channel", "type", "connname")
SPECS = [
    MetricSpec("ibmmq_qmgr_status", "gauge", "Queue manager status (MQQMSTA: 1 starting, 2 running, 3 quiescing, "
               "4 standby; 0 ended or unreachable).", ("qmgr",)),
    MetricSpec("ibmmq_queue_depth", "gauge", "Messages on the queue (CURDEPTH).", Q,
               "MQ-DEPTH: the report held the input queue at 100; deriv() > 0 is growth"),
    MetricSpec("ibmmq_queue_attribute_max_depth", "gauge", "Maximum depth of the queue (MAXDEPTH).", Q),
    MetricSpec("ibmmq_queue_depth_ratio", "gauge", "Depth as a share of the maximum depth (0-1).", Q,
               "MQ-DEPTH: alert over e.g. 0.8"),
    MetricSpec("ibmmq_queue_oldest_message_age", "gauge", "Age of the oldest message in seconds (MSGAGE; needs "
               "queue monitoring, MONQ).", Q),
    MetricSpec("ibmmq_queue_input_handles", "gauge", "Handles open for input (IPPROCS): the consumers.", Q),
    MetricSpec("ibmmq_queue_output_handles", "gauge", "Handles open for output (OPPROCS): the producers.", Q),
    MetricSpec("ibmmq_queue_enqueued_messages_total", "counter", "Messages put to the queue, where the back-end "
               "has queue statistics.", Q, "MQ-DEPTH enqueue rate: rate()"),
    MetricSpec("ibmmq_queue_dequeued_messages_total", "counter", "Messages got from the queue, where the back-end "
               "has queue statistics.", Q, "MQ-CPU throughput per queue manager: rate()"),
    MetricSpec("ibmmq_channel_status", "gauge", "Channel status (MQCHS: 0 inactive, 1 binding, 2 starting, "
               "3 running, 4 stopping, 5 retrying, 6 stopped, 7 requesting, 8 paused, 9 disconnected, "
               "13 initializing, 14 switching).", CH),
    MetricSpec("ibmmq_channel_status_squash", "gauge", "Channel status squashed: 0 stopped, 1 transitioning, "
               "2 running.", CH, "channel not running: == 0"),
    MetricSpec(f"{SELF}_backend_success", "gauge", "1 if the queue manager's back-end answered in the last run.",
               ("qmgr", "backend")),
    MetricSpec(f"{SELF}_backend_duration_seconds", "gauge", "Time the back-end took in the last run.",
               ("qmgr", "backend")),
    MetricSpec(f"{SELF}_queues", "gauge", "Queues reported (after include/exclude).", ("qmgr",)),
    MetricSpec(f"{SELF}_queues_excluded", "gauge", "Queues left out by include/exclude.", ("qmgr",)),
]


def _patterns(patterns: list[str]) -> re.Pattern[str]:
    return re.compile("|".join(fnmatch.translate(p) for p in patterns) or r"(?!)")


def make_backend(entry: QueueManagerEntry) -> Backend:
    """The back-end object for one queue manager (imported lazily: REST needs no MQ client)."""
    try:
        password = entry.read_password()
    except SecretUnavailable as exc:
        raise BackendError(str(exc)) from None
    if entry.backend == "rest":
        from ..mq.rest import RestBackend

        return RestBackend(entry.name, entry.url or "", username=entry.username, password=password,
                           client_cert=entry.client_cert, client_key=entry.client_key, ca_file=entry.ca_file,
                           verify_tls=entry.verify_tls, timeout=entry.timeout, api_version=entry.api_version)
    if entry.backend == "pcf":
        from ..mq.pcf import PcfBackend

        return PcfBackend(entry.name, entry.channel or "", entry.conn_name or "", user=entry.username,
                          password=password, timeout=entry.timeout)
    from ..mq.runmqsc import RunmqscBackend

    return RunmqscBackend(entry.name, runmqsc=entry.runmqsc, dspmq=entry.dspmq, timeout=entry.timeout)


class _QueueManager:
    def __init__(self, entry: QueueManagerEntry, limit: float) -> None:
        self.entry = entry
        self.include = _patterns(entry.include)
        self.exclude = _patterns(entry.exclude)
        self.call = BoundedCall(f"ibmmq-{entry.name}")
        # dspmq + runmqsc, or a handful of REST calls, each bounded by the entry's timeout
        self.deadline = min(limit, entry.timeout * 4)
        self.backend: Backend | None = None
        self.snapshot: QmgrSnapshot | None = None
        self.error: str | None = None
        self.duration = 0.0

    def read(self) -> QmgrSnapshot:
        if self.backend is None:
            self.backend = make_backend(self.entry)
        return self.backend.snapshot()


class IbmmqCollector(Collector):
    name = "ibmmq"
    description = "IBM MQ queue managers (REST, PCF or runmqsc): queue depths, qmgr and channel status."
    Settings = IbmmqSettings

    def __init__(self, settings: IbmmqSettings, context: Context) -> None:
        super().__init__(settings, context)
        self.settings: IbmmqSettings = settings
        limit = max(settings.timeout - 2.0, settings.timeout * 0.8)
        self.qmgrs = [_QueueManager(entry, limit) for entry in settings.queue_managers]

    @classmethod
    def reference_settings(cls) -> IbmmqSettings:
        return IbmmqSettings()

    def specs(self) -> list[MetricSpec]:
        return SPECS

    def collect(self, batch: MetricBatch) -> None:
        threads = [threading.Thread(target=self._read, args=(qm,), daemon=True, name=f"ibmmq-{qm.entry.name}")
                   for qm in self.qmgrs]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for qm in self.qmgrs:
            self._emit(qm, batch)

    def _read(self, qm: _QueueManager) -> None:
        started = time.monotonic()
        qm.snapshot, qm.error = None, None
        try:
            snapshot = qm.call(qm.read, qm.deadline)
            if not isinstance(snapshot, QmgrSnapshot):
                raise BackendError(f"back-end returned {type(snapshot).__name__}, not a snapshot")
            qm.snapshot = snapshot
        except Overdue as exc:
            qm.error = f"{qm.entry.backend}: {exc}"
        except BackendError as exc:
            qm.error = f"{qm.entry.backend}: {exc}"
        except Exception as exc:  # noqa: BLE001 - a back-end bug must not stop the other queue managers
            qm.error = f"{qm.entry.backend}: {type(exc).__name__}: {exc}"
        qm.duration = time.monotonic() - started

    def _emit(self, qm: _QueueManager, batch: MetricBatch) -> None:
        name, backend = qm.entry.name, qm.entry.backend
        batch.add(f"{SELF}_backend_success", 1 if qm.snapshot else 0, qmgr=name, backend=backend)
        batch.add(f"{SELF}_backend_duration_seconds", qm.duration, qmgr=name, backend=backend)
        if qm.error:
            batch.note_error(name, qm.error)
        snap = qm.snapshot
        if snap is None:
            batch.add("ibmmq_qmgr_status", 0, qmgr=name)
            return
        batch.add("ibmmq_qmgr_status", QMGR_STATUS_CODES.get(snap.status.upper(), 0), qmgr=name)
        reported = excluded = 0
        seen: set[str] = set()
        for queue in snap.queues:
            if queue.name in seen:
                continue
            seen.add(queue.name)
            if not self._wanted(qm, queue.name):
                excluded += 1
                continue
            reported += 1
            labels = {"qmgr": name, "queue": queue.name}
            if queue.depth is not None:
                batch.add("ibmmq_queue_depth", queue.depth, **labels)
            if queue.max_depth is not None:
                batch.add("ibmmq_queue_attribute_max_depth", queue.max_depth, **labels)
                if queue.depth is not None and queue.max_depth > 0:
                    batch.add("ibmmq_queue_depth_ratio", queue.depth / queue.max_depth, **labels)
            if queue.oldest_message_age is not None:
                batch.add("ibmmq_queue_oldest_message_age", queue.oldest_message_age, **labels)
            if queue.open_input is not None:
                batch.add("ibmmq_queue_input_handles", queue.open_input, **labels)
            if queue.open_output is not None:
                batch.add("ibmmq_queue_output_handles", queue.open_output, **labels)
            if queue.enqueued is not None:
                batch.add("ibmmq_queue_enqueued_messages_total", queue.enqueued, **labels)
            if queue.dequeued is not None:
                batch.add("ibmmq_queue_dequeued_messages_total", queue.dequeued, **labels)
        batch.add(f"{SELF}_queues", reported, qmgr=name)
        batch.add(f"{SELF}_queues_excluded", excluded, qmgr=name)
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
                batch.add("ibmmq_channel_status", code, **labels)
            batch.add("ibmmq_channel_status_squash", channel_status_squash(status), **labels)

    @staticmethod
    def _wanted(qm: _QueueManager, queue: str) -> bool:
        return bool(qm.include.match(queue)) and not qm.exclude.match(queue)

    def close(self) -> None:
        for qm in self.qmgrs:
            if qm.backend is not None:
                try:
                    qm.backend.close()
                except Exception:  # noqa: BLE001
                    pass
