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
import time
from collections import Counter
from datetime import datetime

from ...core.collector import Collector, Context
from ...core.fanout import Target, fan_out
from ...core.metrics import ConfiguredLabels, MetricBatch, MetricSpec
from ...core.secrets import SecretUnavailable
from . import DESCRIPTION, NAME
from .metrics import (  # issue 39
    BACKEND_DURATION,
    BACKEND_SUCCESS,
    CH,
    CHANNEL_COUNTER_FIELDS,
    CHANNEL_COUNTERS,
    CHANNEL_CUR_INST,
    CHANNEL_INDOUBT,
    CHANNEL_INSTANCE_TYPE,
    CHANNEL_MAX_INST,
    CHANNEL_MAX_INSTC,
    CHANNEL_MONITORING,
    CHANNEL_PAIRS,
    CHANNEL_RETRIES,
    CHANNEL_SECURITY_PROTOCOL,
    CHANNEL_SHARING,
    CHANNEL_START_EPOCH,
    CHANNEL_STATUS,
    CHANNEL_STATUS_SQUASH,
    CHANNEL_SUBSTATE,
    CHANNEL_TIME_SINCE_MSG,
    CHANNEL_TYPE,
    CHANNELS_EXCLUDED,
    FILE_SYSTEM_INFO,
    NHA_BACKLOG,
    NHA_CONNECTED,
    NHA_IN_SYNC,
    NHA_ROLE,
    NHA_STATUS,
    QMGR_CHINIT,
    QMGR_CMDSERV,
    QMGR_CONNECTIONS,
    QMGR_FS_SIZES,
    QMGR_GETS,
    QMGR_HA_ROLE,
    QMGR_INFO,
    QMGR_LOG_EXTENTS,
    QMGR_LOG_PUBLISHED,
    QMGR_LOG_SIZES,
    QMGR_LOG_START,
    QMGR_MAX_HANDLES,
    QMGR_PERCENTS,
    QMGR_PUTS,
    QMGR_START,
    QMGR_STATUS,
    QMGR_UPTIME,
    QUEUE_DEPTH,
    QUEUE_DEPTH_RATIO,
    QUEUE_FILE_MAX_SIZE,
    QUEUE_FILE_SIZE,
    QUEUE_GETS,
    QUEUE_INPUT_HANDLES,
    QUEUE_MAX_DEPTH,
    QUEUE_MONITORING,
    QUEUE_OLDEST_MESSAGE_AGE,
    QUEUE_OUTPUT_HANDLES,
    QUEUE_PUTS,
    QUEUE_QTIME_LONG,
    QUEUE_QTIME_SHORT,
    QUEUE_TIME_SINCE_GET,
    QUEUE_TIME_SINCE_PUT,
    QUEUE_UNCOMMITTED,
    QUEUE_USAGE,
    QUEUES,
    QUEUES_EXCLUDED,
    SPECS,
    STATS_DROPPED,
    STATS_DURATION,
    STATS_HANDLES_CAP,
    STATS_NOT_SUBSCRIBED,
    STATS_PUBLICATIONS,
    STATS_SUBSCRIPTIONS,
    STATS_SUCCESS,
)
from .model import (
    CHANNEL_INSTANCE_TYPE_CODES,
    CHANNEL_SECURITY_PROTOCOL_CODES,
    CHANNEL_STATUS_CODES,
    CHANNEL_SUBSTATE_CODES,
    CHANNEL_TYPE_CODES,
    NHA_ROLE_CODES,
    SERVICE_STATUS_CODES,
    Backend,
    BackendError,
    ChannelDefinition,
    ChannelState,
    NativeHaInstance,
    QmgrHealth,
    QmgrSnapshot,
    QueueStatus,
    Throughput,
    channel_status_squash,
    channel_type_word,
    nha_status_code,
)
from .settings import IbmmqSettings, QueueManagerEntry
from .states import ROLES, qmgr_state


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


class Selection:
    """Names to report: ``include`` globs, where a ``!`` in front excludes (mq_prometheus's monitoredQueues: only
    ``!`` entries means everything but those), and ``exclude`` globs; an exclusion always wins."""

    def __init__(self, include: list[str], exclude: list[str]) -> None:
        positive = [p for p in include if not p.startswith("!")]
        negative = [p[1:] for p in include if p.startswith("!")] + list(exclude)
        # only "!" entries: everything but those (an empty include list still reports nothing)
        self.include = _patterns(positive if positive or not include else ["*"])
        self.exclude = _patterns(negative)

    def __call__(self, name: str) -> bool:
        return bool(self.include.match(name)) and not self.exclude.match(name)


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
        from .pcf import PcfBackend, tls_settings

        try:  # checked at start; again here for the file:// form and files removed since
            tls = tls_settings(entry.ccdt, entry.key_repository, entry.cipher_spec, entry.certificate_label,
                               entry.channel, entry.conn_name)
        except ValueError as exc:
            raise BackendError(str(exc)) from None
        return PcfBackend(entry.name, entry.channel or "", entry.conn_name or "", user=entry.username,
                          password=password, timeout=entry.timeout, statistics=entry.statistics,
                          statistics_max_queues=entry.statistics_max_queues, monitor_interval=entry.monitor_interval,
                          tls=tls)
    from .runmqsc import RunmqscBackend

    return RunmqscBackend(entry.name, runmqsc=entry.runmqsc, dspmq=entry.dspmq, timeout=entry.timeout,
                          command_prefix=entry.command_prefix,
                          amqsrua=entry.amqsrua if entry.statistics == "publications" else None,
                          monitor_interval=entry.monitor_interval,
                          statistics_max_queues=entry.statistics_max_queues)


class ChannelCounters:
    """mq_prometheus's channel counters: what the channels counted since the exporter started.

    MQ's MSGS, BYTSSENT, ... count from the start of each channel instance.  Per instance the exporter keeps the
    last raw value and adds the difference to its series' total; a fall (the instance restarted) adds the new raw
    value; an instance seen on the queue manager's first read adds 0 (its counts predate the exporter), one that
    appears later adds its whole count (it started since).  Instances and totals of series gone from a read are
    forgotten (bounded memory; a series that returns starts again from 0, which rate() takes as a reset), except
    after a ``partial`` read (a channel-status answer that could not be read whole): what it lacks is kept, so a
    channel that was only unreadable goes on counting from where it was."""

    def __init__(self) -> None:
        self.raw: dict[tuple, list[int | None]] = {}
        self.totals: dict[tuple, list[float]] = {}
        self.primed = False

    def update(self, series: dict[tuple, list[ChannelState]], partial: bool = False) -> dict[tuple, list[float | None]]:
        raw: dict[tuple, list[int | None]] = {}
        owner: dict[tuple, tuple] = {}
        for key, instances in series.items():
            for ch in instances:
                ident = (key, ch.job_name, ch.started)
                values = [getattr(ch, name) for name in CHANNEL_COUNTER_FIELDS]
                if ident in raw:  # two records alike in every way: their counts add up
                    values = [None if a is None and b is None else (a or 0) + (b or 0)
                              for a, b in zip(raw[ident], values, strict=True)]
                raw[ident] = values
                owner[ident] = key
        totals = {key: self.totals.get(key, [0.0] * len(CHANNEL_COUNTER_FIELDS)) for key in series}
        seen: dict[tuple, list[bool]] = {key: [False] * len(CHANNEL_COUNTER_FIELDS) for key in series}
        for ident, values in raw.items():
            key = owner[ident]
            before = self.raw.get(ident)
            for i, value in enumerate(values):
                if value is None:
                    continue
                seen[key][i] = True
                last = before[i] if before is not None else None
                if last is not None:
                    totals[key][i] += value - last if value >= last else value
                elif self.primed and before is None:
                    totals[key][i] += value
        result = {key: [total if seen[key][i] else None for i, total in enumerate(totals[key])] for key in series}
        if partial:
            raw = {**{i: v for i, v in self.raw.items() if i not in raw}, **raw}
            totals = {**{k: v for k, v in self.totals.items() if k not in totals}, **totals}
        self.raw, self.totals, self.primed = raw, totals, True
        return result


class _QueueManager(Target):
    """One queue manager: its settings, its back-end (made on first read) and its queue filter."""

    def __init__(self, entry: QueueManagerEntry, collector_timeout: float, interval: float = 30.0) -> None:
        # dspmq + runmqsc, or a handful of REST calls, each bounded by the entry's timeout
        super().__init__("ibmmq", entry.name, entry.timeout * 4, collector_timeout)
        self.entry = entry
        self.queues = Selection(entry.include, entry.exclude)
        self.channels = Selection(entry.channels_include, entry.channels_exclude)
        self.backend: Backend | None = None
        self.interval = interval
        self.zone = None
        if entry.time_zone:
            from zoneinfo import ZoneInfo

            self.zone = ZoneInfo(entry.time_zone)
        self.counters = ChannelCounters()
        # the last definitions read: a failed DISPLAY CHANNEL keeps the inactive channels (reported as failed)
        self.definitions: list[ChannelDefinition] | None = None

    def wanted(self, queue: str) -> bool:
        return self.queues(queue)

    def epoch(self, when: datetime) -> float:
        """Unix time of a date and time the queue manager printed (its local time, ``time_zone``)."""
        if when.tzinfo is None:
            # a naive datetime's timestamp() is the exporter's local time: right when no time_zone is set
            when = when.replace(tzinfo=self.zone) if self.zone is not None else when
        return when.timestamp()

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
        stats = getattr(self.backend, "stats", None)
        if snapshot.health is not None and snapshot.health.max_handles and hasattr(stats, "max_handles"):
            stats.max_handles = snapshot.health.max_handles  # type: ignore[union-attr] - caps the next run's subs
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
    name = NAME
    description = DESCRIPTION
    Settings = IbmmqSettings
    clock = staticmethod(time.time)  # "now" for the ages of the queue manager's timestamps (tests set their own)

    def __init__(self, settings: IbmmqSettings, context: Context) -> None:
        super().__init__(settings, context)
        self.settings: IbmmqSettings = settings
        self.qmgrs = [_QueueManager(entry, settings.timeout, settings.interval) for entry in settings.queue_managers]

    def collect_in_background(self) -> bool:
        """Statistics publications pile up on the subscription's queue between reads: they are drained on every
        interval even while nobody scrapes (core/scheduler.py runs the other collectors only when read)."""
        return any(entry.statistics == "publications" for entry in self.settings.queue_managers)

    @classmethod
    def reference_settings(cls) -> IbmmqSettings:
        return IbmmqSettings()

    target_label = "qmgr"

    def static_labels(self) -> list[ConfiguredLabels]:
        return [ConfiguredLabels(entry.name, f"collectors.ibmmq.queue_managers.{index}.labels", entry.labels)
                for index, entry in enumerate(self.settings.queue_managers)]

    def specs(self) -> list[MetricSpec]:
        return SPECS

    def targets(self) -> list[str]:
        return [qm.entry.name for qm in self.qmgrs]

    def collect(self, batch: MetricBatch) -> None:
        fan_out(self.qmgrs, _QueueManager.read)
        for qm in self.qmgrs:
            try:
                self._emit(qm, batch)
            finally:
                # the snapshot (10,000 queues: ~7 MB of status objects) is not kept until the next run
                qm.outcome.value = None
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
        now = self.clock()
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
            self._emit_queue_activity(qm, queue, labels, now, batch)
        QUEUES.add(batch, reported, qmgr=name)
        QUEUES_EXCLUDED.add(batch, excluded, qmgr=name)
        if snap.throughput is not None:
            self._emit_throughput(qm, snap.throughput, seen, batch)
        self._emit_channels(qm, snap, now, batch, qmgr_running=state.running)
        if snap.health is not None:
            self._emit_health(qm, snap.health, now, batch)
        if snap.native_ha is not None:
            self._emit_native_ha(name, snap.native_ha, batch)
            if "nativeha" not in snap.source_errors:
                batch.report_source(name, "nativeha", True)
        for source, error in sorted(snap.source_errors.items()):
            # an optional source (DISPLAY CHANNEL, QMSTATUS, QMGR) failed: its figures are absent, the rest stands
            batch.report_source(name, source, False, f"{backend}: {error}")
        if snap.channel_definitions is not None and "channel" not in snap.source_errors:
            batch.report_source(name, "channel", True)
        if state.running and "chstatus" not in snap.source_errors:
            batch.report_source(name, "chstatus", True)
        if snap.health is not None:
            for source in ("qmstatus", "qmgr"):
                if source not in snap.source_errors:
                    batch.report_source(name, source, True)

    def _ago(self, qm: _QueueManager, when: datetime, now: float) -> float:
        """Seconds since a queue-manager timestamp; one in the future (clocks or time zone off) counts as 0."""
        return max(0.0, now - qm.epoch(when))

    def _emit_queue_activity(self, qm: _QueueManager, queue: QueueStatus, labels: dict[str, str], now: float,
                             batch: MetricBatch) -> None:
        if queue.last_put is not None:
            QUEUE_TIME_SINCE_PUT.add(batch, self._ago(qm, queue.last_put, now), **labels)
        if queue.last_get is not None:
            QUEUE_TIME_SINCE_GET.add(batch, self._ago(qm, queue.last_get, now), **labels)
        for spec, value in ((QUEUE_QTIME_SHORT, queue.qtime_short), (QUEUE_QTIME_LONG, queue.qtime_long),
                            (QUEUE_UNCOMMITTED, queue.uncommitted), (QUEUE_FILE_SIZE, queue.file_size_mb),
                            (QUEUE_FILE_MAX_SIZE, queue.file_max_size_mb)):
            if value is not None:
                spec.add(batch, value, **labels)
        usage = {"NORMAL": 0, "XMITQ": 1}.get(queue.usage.upper())
        if usage is not None:
            QUEUE_USAGE.add(batch, usage, **labels)
        monitoring = queue.monitoring.upper()
        if monitoring in ("OFF", "LOW", "MEDIUM", "HIGH"):  # QMGR (the queue manager's level) or "": unknown
            QUEUE_MONITORING.add(batch, 0 if monitoring == "OFF" else 1, **labels)

    def _emit_channels(self, qm: _QueueManager, snap: QmgrSnapshot, now: float, batch: MetricBatch,
                       qmgr_running: bool = True) -> None:
        name = qm.entry.name
        if snap.channel_definitions is not None:
            qm.definitions = snap.channel_definitions
        definitions = {d.name: d for d in qm.definitions or ()}
        excluded: set[str] = set()
        series: dict[tuple[str, str, str, str, str], list[ChannelState]] = {}
        for channel in snap.channels:
            if not qm.channels(channel.name):
                excluded.add(channel.name)
                continue
            ctype = channel_type_word(channel.type) if channel.type else ""
            if not ctype and channel.name in definitions:
                ctype = definitions[channel.name].type
            jobname = channel.job_name if qm.entry.channel_jobname_label else ""
            key = (channel.name, ctype, channel.connection, channel.remote_qmgr, jobname)
            series.setdefault(key, []).append(channel)
        instances = Counter(key[0] for key, records in series.items() for _ in records)
        # a channel-status answer that could not be read (wholly or in part; the source is reported failed): the
        # channels it lacks are not shown as stopped, neither as inactive definitions nor by a counter reset
        unread = "chstatus" in snap.source_errors
        totals = qm.counters.update(series, partial=unread)
        for key in sorted(series):
            # several instances with the same labels: the gauges are the most alive one's, the counters add up
            best = max(series[key], key=lambda c: channel_status_squash(c.status))
            labels = dict(zip(CH, (name, *key), strict=True))
            status = best.status.upper()
            code = CHANNEL_STATUS_CODES.get(status)
            if code is not None:
                CHANNEL_STATUS.add(batch, code, **labels)
            CHANNEL_STATUS_SQUASH.add(batch, channel_status_squash(status), **labels)
            self._emit_codes(best, key[1], labels, batch)
            substate = CHANNEL_SUBSTATE_CODES.get(best.substate.upper()) if best.substate else None
            if substate is not None:
                CHANNEL_SUBSTATE.add(batch, substate, **labels)
            if best.indoubt is not None:
                CHANNEL_INDOUBT.add(batch, 1 if best.indoubt else 0, **labels)
            for (_, spec), total in zip(CHANNEL_COUNTERS, totals[key], strict=True):
                if total is not None:
                    spec.add(batch, total, **labels)
            if best.last_message is not None:
                CHANNEL_TIME_SINCE_MSG.add(batch, self._ago(qm, best.last_message, now), **labels)
            if best.started is not None:
                CHANNEL_START_EPOCH.add(batch, round(qm.epoch(best.started) * 1000), **labels)
            for field, spec in CHANNEL_PAIRS:
                value = getattr(best, field)
                if value is not None:
                    spec.add(batch, value, **labels)
            CHANNEL_CUR_INST.add(batch, instances[key[0]], **labels)
            self._emit_definition(definitions.get(key[0]), labels, batch)
            if best.sharing_conversations is not None:
                CHANNEL_SHARING.add(batch, best.sharing_conversations, **labels)
            for kind, value in (("short", best.short_retries_left), ("long", best.long_retries_left)):
                if value is not None:
                    CHANNEL_RETRIES.add(batch, value, kind=kind, **labels)
        # a defined channel is inactive only on a running queue manager: one that ended (or stands by) says nothing
        # of its channels, and the last definitions read must not turn them all into "inactive" (0) series
        if qm.entry.show_inactive_channels and not unread and qmgr_running:
            for definition in sorted(definitions.values(), key=lambda d: d.name):
                if definition.name in instances or definition.type == "CLNTCONN":
                    continue  # running, or a client-side definition (never has status on the queue manager)
                if not qm.channels(definition.name):
                    excluded.add(definition.name)
                    continue
                labels = dict(zip(CH, (name, definition.name, definition.type, "", "", ""), strict=True))
                CHANNEL_STATUS.add(batch, CHANNEL_STATUS_CODES["INACTIVE"], **labels)
                CHANNEL_STATUS_SQUASH.add(batch, 0, **labels)
                if definition.type in CHANNEL_TYPE_CODES:
                    CHANNEL_TYPE.add(batch, CHANNEL_TYPE_CODES[definition.type], **labels)
                CHANNEL_CUR_INST.add(batch, 0, **labels)
                self._emit_definition(definition, labels, batch)
        CHANNELS_EXCLUDED.add(batch, len(excluded), qmgr=name)

    @staticmethod
    def _emit_codes(channel: ChannelState, ctype: str, labels: dict[str, str], batch: MetricBatch) -> None:
        """mq_prometheus's numeric codes of a channel instance (type, instance type, security protocol) and
        whether its monitoring figures were measured (MONCHL)."""
        for spec, codes, word in ((CHANNEL_TYPE, CHANNEL_TYPE_CODES, ctype),
                                  (CHANNEL_INSTANCE_TYPE, CHANNEL_INSTANCE_TYPE_CODES, channel.instance_type),
                                  (CHANNEL_SECURITY_PROTOCOL, CHANNEL_SECURITY_PROTOCOL_CODES,
                                   channel.security_protocol)):
            code = codes.get(word.upper()) if word else None
            if code is not None:
                spec.add(batch, code, **labels)
        monitoring = channel.monitoring.upper()
        if monitoring in ("OFF", "LOW", "MEDIUM", "HIGH"):  # QMGR or "": the status does not say
            CHANNEL_MONITORING.add(batch, 0 if monitoring == "OFF" else 1, **labels)

    @staticmethod
    def _emit_definition(definition: ChannelDefinition | None, labels: dict[str, str], batch: MetricBatch) -> None:
        if definition is None:
            return
        if definition.max_instances is not None:
            CHANNEL_MAX_INST.add(batch, definition.max_instances, **labels)
        if definition.max_instances_per_client is not None:
            CHANNEL_MAX_INSTC.add(batch, definition.max_instances_per_client, **labels)

    def _emit_health(self, qm: _QueueManager, health: QmgrHealth, now: float, batch: MetricBatch) -> None:
        name = qm.entry.name
        if health.connections is not None:
            QMGR_CONNECTIONS.add(batch, health.connections, qmgr=name)
        for spec, word in ((QMGR_CMDSERV, health.command_server), (QMGR_CHINIT, health.channel_initiator)):
            code = SERVICE_STATUS_CODES.get(word.upper()) if word else None
            if code is not None:
                spec.add(batch, code, qmgr=name)
        if health.started is not None:
            QMGR_UPTIME.add(batch, self._ago(qm, health.started, now), qmgr=name)
            QMGR_START.add(batch, qm.epoch(health.started), qmgr=name)
        if health.log_started is not None:
            QMGR_LOG_START.add(batch, round(qm.epoch(health.log_started) * 1000), qmgr=name)
        for field, spec in QMGR_LOG_EXTENTS + QMGR_PERCENTS:
            value = getattr(health, field)
            if value is not None:
                spec.add(batch, value, qmgr=name)
        for field, spec in QMGR_LOG_SIZES + QMGR_FS_SIZES:
            value = getattr(health, field)
            if value is not None:
                spec.add(batch, value * 1048576, qmgr=name)
        if health.max_handles is not None:
            QMGR_MAX_HANDLES.add(batch, health.max_handles, qmgr=name)
        info = {"version": health.version, "cmdlevel": health.command_level, "qmid": health.qmid,
                "platform": health.platform, "dlq": health.dead_letter_queue}
        if any(info.values()):
            QMGR_INFO.add_info(batch, info, qmgr=name)

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
        if tp.handles_cap is not None:
            STATS_HANDLES_CAP.add(batch, tp.handles_cap, **labels)
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
        for description, spec in QMGR_LOG_PUBLISHED:  # issue 39: the recovery log (amqsrua DISK/Log)
            if description in tp.log:
                spec.add(batch, tp.log[description], qmgr=name)

    @staticmethod
    def _emit_native_ha(name: str, instances: list[NativeHaInstance], batch: MetricBatch) -> None:
        """Native HA instances (issue 39): each figure only where the answer printed it (the active instance has no
        INSYNC/BACKLOG/CONNACTV of its own)."""
        for instance in instances:
            labels = {"qmgr": name, "nha": instance.name}
            role = NHA_ROLE_CODES.get(instance.role)
            if role is not None:
                NHA_ROLE.add(batch, role, **labels)
            for spec, flag in ((NHA_IN_SYNC, instance.in_sync), (NHA_CONNECTED, instance.connected)):
                if flag is not None:
                    spec.add(batch, 1 if flag else 0, **labels)
            if instance.backlog_kb is not None:
                NHA_BACKLOG.add(batch, instance.backlog_kb * 1024, **labels)
            status = nha_status_code(instance.status) if instance.status else None
            if status is not None:
                NHA_STATUS.add(batch, status, **labels)

    def close(self) -> None:
        for qm in self.qmgrs:
            if qm.backend is not None:
                try:
                    qm.backend.close()
                except Exception:  # noqa: BLE001 - closing must not stop the other queue managers
                    pass
