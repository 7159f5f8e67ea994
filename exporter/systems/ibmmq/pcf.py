"""IBM MQ PCF back-end through the ``ibmmq`` package (the maintained successor of pymqi).

Besides the four inquiries it holds the queue manager's resource-statistics subscriptions (put/get counts,
:mod:`.statistics`) on the same connection, or, only where configured, resets queue statistics (destructive).

``ibmmq`` is an optional extra (``pip install 'middleware-exporter[mq]'``) that needs the IBM MQ client libraries,
so it is imported on the first read of a queue manager using this back-end; without it only that queue manager
fails ("MQ client not installed").  The decoding (:func:`snapshot_from_pcf`) stays here beside the adapter
because both use the MQ constants below, written out so this module imports without the client library (the
tests check them against ``ibmmq.CMQC``/``CMQCFC``).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from .model import Backend, BackendError, BackendNotAvailable, ChannelState, QmgrSnapshot, QueueStatus, Throughput
from .states import STATES, UNKNOWN, qmgr_state_from_code
from .statistics import PublicationStats, ResetQstatsStats, StatisticsError, describe_error

# CMQC / CMQCFC constants used here.
MQCA_Q_NAME = 2016
MQIA_CURRENT_Q_DEPTH = 3
MQIA_MAX_Q_DEPTH = 15
MQIA_OPEN_INPUT_COUNT = 17
MQIA_OPEN_OUTPUT_COUNT = 18
MQIA_Q_TYPE = 20
MQQT_LOCAL = 1
MQIACF_OLDEST_MSG_AGE = 1227
MQIACF_Q_MGR_STATUS = 1149
MQCACH_CHANNEL_NAME = 3501
MQCACH_CONNECTION_NAME = 3506
MQIACH_CHANNEL_TYPE = 1511
MQIACH_CHANNEL_STATUS = 1527
MQGACF_Q_STATISTICS_DATA = 8011
MQIAMO_PUTS = 735
MQIAMO_PUT1S = 734
MQIAMO_GETS = 722
MQCMD_STATISTICS_Q = 165
MQRC_UNKNOWN_OBJECT_NAME = 2085
MQRCCF_CHL_STATUS_NOT_FOUND = 3065
MQRC_STANDBY_Q_MGR = 2543  # connecting to the standby instance of a multi-instance queue manager
MQRC_NO_MSG_AVAILABLE = 2033
MQIA_MSG_ENQ_COUNT = 37
MQIA_MSG_DEQ_COUNT = 38
MQCMD_RESET_Q_STATS = 17
# MQSUB and MQGET options of the statistics subscriptions: a managed (the queue manager makes the queue),
# non-durable (it goes when the connection goes) subscription, read without waiting or syncpoint.
MQSO_CREATE, MQSO_NON_DURABLE, MQSO_MANAGED, MQSO_FAIL_IF_QUIESCING = 0x2, 0x0, 0x20, 0x2000
MQGMO_WAIT, MQGMO_NO_WAIT, MQGMO_NO_SYNCPOINT, MQGMO_CONVERT, MQGMO_FAIL_IF_QUIESCING = 0x1, 0x0, 0x4, 0x4000, 0x2000

# MQQMSTA_* code -> state name (the states themselves are in .states, shared with the other back-ends).
QMGR_STATUS = {code: qmgr_state_from_code(code).name for code in (1, 2, 3, 4)}
CHANNEL_STATUS = {0: "INACTIVE", 1: "BINDING", 2: "STARTING", 3: "RUNNING", 4: "STOPPING", 5: "RETRYING",
                  6: "STOPPED", 7: "REQUESTING", 8: "PAUSED", 9: "DISCONNECTED", 13: "INITIALIZING",
                  14: "SWITCHING"}
CHANNEL_TYPES = {1: "SDR", 2: "SVR", 3: "RCVR", 4: "RQSTR", 6: "CLNTCONN", 7: "SVRCONN", 8: "CLUSRCVR",
                 9: "CLUSSDR", 10: "MQTT", 11: "AMQP"}


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return str(value).strip().rstrip("\x00").strip()


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, (list, tuple)):  # persistent/non-persistent pairs
        numbers = [v for v in value if isinstance(v, int) and not isinstance(v, bool)]
        return sum(numbers) if numbers else None
    try:
        return int(_text(value))
    except ValueError:
        return None


def snapshot_from_pcf(qmgr: str, qmgr_status: Iterable[dict], queue_status: Iterable[dict],
                      queues: Iterable[dict], channel_status: Iterable[dict]) -> QmgrSnapshot:
    """The common model from PCF answers (MQCMD_INQUIRE_Q_MGR_STATUS, _Q_STATUS, _Q, _CHANNEL_STATUS)."""
    status = UNKNOWN.name
    for item in qmgr_status:
        status = qmgr_state_from_code(_int(item.get(MQIACF_Q_MGR_STATUS))).name
    by_name: dict[str, QueueStatus] = {}
    for item in queues:
        name = _text(item.get(MQCA_Q_NAME, ""))
        if not name or _int(item.get(MQIA_Q_TYPE, MQQT_LOCAL)) != MQQT_LOCAL:
            continue
        by_name.setdefault(name, QueueStatus(name)).max_depth = _int(item.get(MQIA_MAX_Q_DEPTH))
    for item in queue_status:
        name = _text(item.get(MQCA_Q_NAME, ""))
        if not name:
            continue
        queue = by_name.setdefault(name, QueueStatus(name))
        queue.depth = _int(item.get(MQIA_CURRENT_Q_DEPTH))
        queue.open_input = _int(item.get(MQIA_OPEN_INPUT_COUNT))
        queue.open_output = _int(item.get(MQIA_OPEN_OUTPUT_COUNT))
        age = _int(item.get(MQIACF_OLDEST_MSG_AGE))
        queue.oldest_message_age = float(age) if age is not None and age >= 0 else None  # -1: monitoring off
    channels = []
    for item in channel_status:
        name = _text(item.get(MQCACH_CHANNEL_NAME, ""))
        if not name:
            continue
        code = _int(item.get(MQIACH_CHANNEL_STATUS))
        channels.append(ChannelState(
            name=name,
            status=CHANNEL_STATUS.get(code if code is not None else -1, "UNKNOWN"),
            type=CHANNEL_TYPES.get(_int(item.get(MQIACH_CHANNEL_TYPE)) or -1, ""),
            connection=_text(item.get(MQCACH_CONNECTION_NAME, "")),
        ))
    return QmgrSnapshot(qmgr=qmgr, status=status, queues=sorted(by_name.values(), key=lambda q: q.name),
                        channels=channels)


def queue_statistics(params: dict) -> dict[str, tuple[int, int]]:
    """Messages put (MQPUT + MQPUT1) and got per queue from one MQCMD_STATISTICS_Q message's parameters.

    Not read by a back-end: statistics messages go to SYSTEM.ADMIN.STATISTICS.QUEUE, where the first reader takes
    them from every other tool; the back-ends read the resource-statistics publications instead
    (:mod:`.statistics`).  Kept for the test that decodes a real message.
    """
    result = {}
    for item in params.get(MQGACF_Q_STATISTICS_DATA, []) or []:
        name = _text(item.get(MQCA_Q_NAME, ""))
        if name:
            puts = (_int(item.get(MQIAMO_PUTS)) or 0) + (_int(item.get(MQIAMO_PUT1S)) or 0)
            result[name] = (puts, _int(item.get(MQIAMO_GETS)) or 0)
    return result


def load_ibmmq() -> Any:
    """The ``ibmmq`` module, or BackendNotAvailable saying what to install."""
    try:
        import ibmmq  # noqa: PLC0415 - optional, needs the MQ client library
    except ImportError as exc:
        raise BackendNotAvailable(
            f"MQ client not installed ({exc}): install the IBM MQ redistributable client and "
            "pip install 'middleware-exporter[mq]'") from None
    except Exception as exc:  # noqa: BLE001 - e.g. a version mismatch between ibmmq and its C part
        raise BackendNotAvailable(f"MQ client library unusable: {exc}") from None
    return ibmmq


class IbmmqAdapter:
    """The four PCF inquiries through ``ibmmq`` over a client connection."""

    def __init__(self, qmgr: str, channel: str, conn_name: str, user: str | None, password: str | None,
                 timeout: float) -> None:
        ibmmq = load_ibmmq()
        self.ibmmq = ibmmq
        cd = ibmmq.CD()
        cd.ChannelName = channel.encode()
        cd.ConnectionName = conn_name.encode()
        cd.ChannelType = ibmmq.CMQXC.MQCHT_CLNTCONN
        cd.TransportType = ibmmq.CMQXC.MQXPT_TCP
        self.qm = ibmmq.QueueManager(None)
        kwargs: dict[str, Any] = {"cd": cd}
        if user:
            kwargs.update(user=user, password=password or "")
        self.qm.connect_with_options(qmgr, **kwargs)
        self.pcf = ibmmq.PCFExecute(self.qm, response_wait_interval=int(timeout * 1000))

    def _inquire(self, command: str, args: dict, none_reasons: tuple[int, ...] = ()) -> list[dict]:
        try:
            return list(getattr(self.pcf, command)(args))
        except self.ibmmq.MQMIError as exc:
            if getattr(exc, "reason", None) in none_reasons:
                return []
            raise

    def qmgr_status(self) -> list[dict]:
        return self._inquire("MQCMD_INQUIRE_Q_MGR_STATUS", {})

    def queue_status(self) -> list[dict]:
        return self._inquire("MQCMD_INQUIRE_Q_STATUS", {MQCA_Q_NAME: b"*"}, (MQRC_UNKNOWN_OBJECT_NAME,))

    def queues(self) -> list[dict]:
        return self._inquire("MQCMD_INQUIRE_Q", {MQCA_Q_NAME: b"*", MQIA_Q_TYPE: MQQT_LOCAL},
                             (MQRC_UNKNOWN_OBJECT_NAME,))

    def channel_status(self) -> list[dict]:
        return self._inquire("MQCMD_INQUIRE_CHANNEL_STATUS", {MQCACH_CHANNEL_NAME: b"*"},
                             (MQRCCF_CHL_STATUS_NOT_FOUND,))

    def subscribe(self, topic: str) -> Any:
        """A managed, non-durable subscription to ``topic``: the queue manager delivers this subscriber its own
        copy of every publication; nothing is taken from other subscribers."""
        sub = self.ibmmq.Subscription(self.qm)
        sub.sub(sub_opts=MQSO_CREATE | MQSO_NON_DURABLE | MQSO_MANAGED | MQSO_FAIL_IF_QUIESCING,
                topic_string=topic)
        return sub

    def get(self, handle: Any, wait: float) -> bytes | None:
        """The next publication of the subscription, or None; waits ``wait`` seconds at most (0: not at all)."""
        options = MQGMO_NO_SYNCPOINT | MQGMO_CONVERT | MQGMO_FAIL_IF_QUIESCING
        options |= MQGMO_WAIT if wait > 0 else MQGMO_NO_WAIT
        gmo = self.ibmmq.GMO(Options=options, WaitInterval=int(wait * 1000))
        try:
            return handle.get(None, self.ibmmq.MD(), gmo)
        except self.ibmmq.MQMIError as exc:
            if getattr(exc, "reason", None) == MQRC_NO_MSG_AVAILABLE:
                return None
            raise

    def unsubscribe(self, handle: Any) -> None:
        handle.close(close_sub_queue=True)

    def reset_q_stats(self, queue: str) -> tuple[int, int]:
        """RESET QSTATS: messages put and got since the last reset, and the counters back to 0 for everyone."""
        answers = self._inquire("MQCMD_RESET_Q_STATS", {MQCA_Q_NAME: queue.encode()})
        item = answers[0] if answers else {}
        return _int(item.get(MQIA_MSG_ENQ_COUNT)) or 0, _int(item.get(MQIA_MSG_DEQ_COUNT)) or 0

    def close(self) -> None:
        try:
            self.pcf.disconnect()
            self.qm.disconnect()
        except Exception:  # noqa: BLE001 - closing a dead connection
            pass


class PcfBackend(Backend):
    name = "pcf"

    def __init__(self, qmgr: str, channel: str, conn_name: str, user: str | None = None,
                 password: str | None = None, timeout: float = 10.0, adapter_factory=None,
                 statistics: str = "off", statistics_max_queues: int = 50, monitor_interval: float = 10.0) -> None:
        self.qmgr = qmgr
        self._args = (qmgr, channel, conn_name, user, password, timeout)
        self._factory = adapter_factory or IbmmqAdapter
        self._adapter: Any = None
        self.stats: PublicationStats | ResetQstatsStats | None = None
        if statistics == "publications":
            self.stats = PublicationStats(qmgr, statistics_max_queues, wait=min(2.0, timeout / 4),
                                          max_interval=max(60.0, 3 * monitor_interval))
        elif statistics == "reset_qstats":
            self.stats = ResetQstatsStats(qmgr, statistics_max_queues)

    def _secret_free(self, text: str) -> str:
        password = self._args[4]
        return text.replace(password, "********") if password else text

    def snapshot(self) -> QmgrSnapshot:
        try:
            if self._adapter is None:
                self._adapter = self._factory(*self._args)
            a = self._adapter
            snap = snapshot_from_pcf(self.qmgr, a.qmgr_status(), a.queue_status(), a.queues(), a.channel_status())
        except BackendError:
            raise
        except Exception as exc:  # noqa: BLE001 - MQMIError and friends: reconnect next time
            self.close()
            reason = getattr(exc, "reason", None)
            if reason == MQRC_STANDBY_Q_MGR:  # a healthy standby instance, not a failure
                return QmgrSnapshot(qmgr=self.qmgr, status=STATES["STANDBY"].name)
            detail = f"MQRC {reason}" if reason is not None else type(exc).__name__
            raise BackendError(f"PCF inquiry failed ({detail}): {self._secret_free(str(exc))[:200]}") from None
        if self.stats is not None:
            snap.throughput = self._statistics(snap)
        return snap

    def _statistics(self, snap: QmgrSnapshot) -> Throughput:
        """The statistics source's reading; its failure is its own (the snapshot's other figures stand)."""
        started = time.monotonic()
        queues = [q.name for q in snap.queues if self.wanted(q.name)]
        stats = self.stats
        assert stats is not None
        try:
            if isinstance(stats, ResetQstatsStats):
                return stats.read(self._adapter.reset_q_stats, queues)
            return stats.read(self._adapter, queues)
        except Exception as exc:  # noqa: BLE001 - MQMIError, garbage, a missing class: only this source fails
            if isinstance(stats, PublicationStats):
                # the connection stays open: close what the run holds (forgetting the handles leaked them until
                # MAXHANDS); a broken connection refuses the closes and takes its subscriptions with it anyway
                stats.release(self._adapter)
            text = str(exc) if isinstance(exc, StatisticsError) else describe_error(exc)
            return Throughput(source=stats.source, error=self._secret_free(text)[:300],
                              duration=time.monotonic() - started)

    def close(self) -> None:
        if self._adapter is not None:
            self._adapter.close()
            self._adapter = None
        if isinstance(self.stats, PublicationStats):
            self.stats.forget()
