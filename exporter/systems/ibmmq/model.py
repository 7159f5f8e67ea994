"""What every IBM MQ back-end returns, whatever it talks to (REST, PCF, runmqsc).

Channel status words are MQ's own, upper-case, without the MQCHS_ prefix (``RUNNING``, ``STOPPED``, ...), so
that the collector maps them to the numeric codes IBM's mq_prometheus uses once, in one place.  Queue-manager
states go through the one table of :mod:`.states` (shared by all back-ends).
"""

from __future__ import annotations

from dataclasses import dataclass, field

# MQCHS_* (channel status).
CHANNEL_STATUS_CODES = {
    "INACTIVE": 0, "BINDING": 1, "STARTING": 2, "RUNNING": 3, "STOPPING": 4, "RETRYING": 5, "STOPPED": 6,
    "REQUESTING": 7, "PAUSED": 8, "DISCONNECTED": 9, "INITIALIZING": 13, "SWITCHING": 14,
}


def channel_status_squash(status: str) -> int:
    """mq_prometheus's squashed channel status: 0 stopped, 1 transitioning, 2 running."""
    status = status.upper()
    if status == "RUNNING":
        return 2
    if status in ("STOPPED", "INACTIVE", "DISCONNECTED"):
        return 0
    return 1


class BackendError(Exception):
    """The back-end could not produce a snapshot (connection, authentication, garbage, ...)."""


class BackendNotAvailable(BackendError):
    """The back-end cannot run here at all (e.g. the MQ client library is not installed)."""


@dataclass
class QueueStatus:
    name: str
    depth: int | None = None  # CURDEPTH
    max_depth: int | None = None  # MAXDEPTH
    oldest_message_age: float | None = None  # MSGAGE, seconds (None where monitoring is off)
    open_input: int | None = None  # IPPROCS
    open_output: int | None = None  # OPPROCS


@dataclass
class ChannelState:
    name: str
    status: str  # RUNNING, STOPPED, RETRYING, ...
    type: str = ""  # SDR, RCVR, SVRCONN, CLUSSDR, ...
    connection: str = ""  # CONNAME of this instance


@dataclass
class Throughput:
    """Put/get counts of one queue manager from its statistics source (the back-end's resource-statistics
    subscriptions, amqsrua, or opt-in RESET QSTATS), cumulative since the exporter started reading them.

    ``error`` set means the source failed in this run: its counts are not reported this time (they are kept
    and go on from where they were once it recovers)."""

    source: str  # "publications", "amqsrua" or "reset_qstats"
    qmgr_puts: int | None = None  # STATMQI "Interval total MQPUT/MQPUT1 count", summed
    qmgr_gets: int | None = None  # STATMQI "Interval total destructive get- count", summed
    queue_puts: dict[str, int] = field(default_factory=dict)  # STATQ "MQPUT/MQPUT1 count" (or MsgEnqCount)
    queue_gets: dict[str, int] = field(default_factory=dict)  # STATQ "MQGET count" (or MsgDeqCount)
    publications: int = 0  # publications (or RESET QSTATS answers) used so far
    dropped: int = 0  # publications left out so far (garbage, or an implausible interval)
    subscriptions: int = 0  # data subscriptions (or queues reset) in this run
    not_subscribed: int = 0  # wanted queues over the cap
    error: str | None = None
    duration: float = 0.0


@dataclass
class QmgrSnapshot:
    qmgr: str
    status: str  # a state name of states.STATES (RUNNING, RUNNING ELSEWHERE, REPLICA, ENDED NORMALLY, ...)
    queues: list[QueueStatus] = field(default_factory=list)
    channels: list[ChannelState] = field(default_factory=list)
    throughput: Throughput | None = None  # None: this back-end reads no statistics (rest, or statistics off)


class Backend:
    """One queue manager through one back-end.  ``snapshot()`` raises BackendError on failure.

    ``wanted`` is the collector's queue filter (include/exclude), which bounds the per-queue statistics."""

    name = "backend"

    def wanted(self, queue: str) -> bool:
        return True

    def snapshot(self) -> QmgrSnapshot:  # pragma: no cover - interface
        raise NotImplementedError

    def close(self) -> None:
        pass
