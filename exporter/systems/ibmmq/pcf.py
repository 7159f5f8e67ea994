"""IBM MQ PCF back-end through the ``ibmmq`` package (the maintained successor of pymqi).

``ibmmq`` is an optional extra (``pip install 'middleware-exporter[mq]'``) that needs the IBM MQ client libraries,
so it is imported on the first read of a queue manager using this back-end; without it only that queue manager
fails ("MQ client not installed").  The decoding (:func:`snapshot_from_pcf`) stays here beside the adapter
because both use the MQ constants below, written out so this module imports without the client library (the
tests check them against ``ibmmq.CMQC``/``CMQCFC``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .model import Backend, BackendError, BackendNotAvailable, ChannelState, QmgrSnapshot, QueueStatus
from .states import STATES, UNKNOWN, qmgr_state_from_code

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

    Not read by a back-end yet (no back-end fills ``enqueued``/``dequeued``); the tests decode a real message.
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

    def close(self) -> None:
        try:
            self.pcf.disconnect()
            self.qm.disconnect()
        except Exception:  # noqa: BLE001 - closing a dead connection
            pass


class PcfBackend(Backend):
    name = "pcf"

    def __init__(self, qmgr: str, channel: str, conn_name: str, user: str | None = None,
                 password: str | None = None, timeout: float = 10.0, adapter_factory=None) -> None:
        self.qmgr = qmgr
        self._args = (qmgr, channel, conn_name, user, password, timeout)
        self._factory = adapter_factory or IbmmqAdapter
        self._adapter: Any = None

    def snapshot(self) -> QmgrSnapshot:
        try:
            if self._adapter is None:
                self._adapter = self._factory(*self._args)
            a = self._adapter
            return snapshot_from_pcf(self.qmgr, a.qmgr_status(), a.queue_status(), a.queues(), a.channel_status())
        except BackendError:
            raise
        except Exception as exc:  # noqa: BLE001 - MQMIError and friends: reconnect next time
            self.close()
            reason = getattr(exc, "reason", None)
            if reason == MQRC_STANDBY_Q_MGR:  # a healthy standby instance, not a failure
                return QmgrSnapshot(qmgr=self.qmgr, status=STATES["STANDBY"].name)
            detail = f"MQRC {reason}" if reason is not None else type(exc).__name__
            message = str(exc).replace(self._args[4] or "\x00", "********") if self._args[4] else str(exc)
            raise BackendError(f"PCF inquiry failed ({detail}): {message[:200]}") from None

    def close(self) -> None:
        if self._adapter is not None:
            self._adapter.close()
            self._adapter = None
