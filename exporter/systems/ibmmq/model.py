"""What every IBM MQ back-end returns, whatever it talks to (REST, PCF, runmqsc).

Channel status words are MQ's own, upper-case, without the MQCHS_ prefix (``RUNNING``, ``STOPPED``, ...), so
that the collector maps them to the numeric codes IBM's mq_prometheus uses once, in one place.  Queue-manager
states go through the one table of :mod:`.states` (shared by all back-ends).  The status tables below (word ->
code) are the only spelling of these codes: the metrics' help texts and the dashboards' value mappings
(``dashboards/build.py``) are made from them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

# IBM MQ's object names (queue managers, queues; channels are at most 20 of them): A-Z a-z 0-9 . / _ %, at most
# 48 characters ("Rules for naming IBM MQ objects").  A name read from a queue manager's answer that is not one is
# never passed to a command (amqsrua -o, through ssh a remote shell's word).
OBJECT_NAME_PATTERN = r"^[A-Za-z0-9._%/]{1,48}$"
OBJECT_NAME = re.compile(OBJECT_NAME_PATTERN)

# MQCHS_* (channel status): ibmmq_channel_status.
CHANNEL_STATUS_CODES = {
    "INACTIVE": 0, "BINDING": 1, "STARTING": 2, "RUNNING": 3, "STOPPING": 4, "RETRYING": 5, "STOPPED": 6,
    "REQUESTING": 7, "PAUSED": 8, "DISCONNECTED": 9, "INITIALIZING": 13, "SWITCHING": 14,
}


# MQCHT_* without the prefix: the ``type`` label values of IBM's mq_prometheus.  Back-ends map their own spelling
# (runmqsc's CHLTYPE(SDR), PCF's MQIACH_CHANNEL_TYPE integer, REST's "sdr") to these words through CHANNEL_TYPE_WORDS.
CHANNEL_TYPE_CODES = {
    "SENDER": 1, "SERVER": 2, "RECEIVER": 3, "REQUESTER": 4, "CLNTCONN": 6, "SVRCONN": 7, "CLUSRCVR": 8,
    "CLUSSDR": 9, "MQTT": 10, "AMQP": 11,
}
CHANNEL_TYPE_WORDS = {
    "SDR": "SENDER", "SVR": "SERVER", "RCVR": "RECEIVER", "RQSTR": "REQUESTER", "CLNTCONN": "CLNTCONN",
    "SVRCONN": "SVRCONN", "CLUSRCVR": "CLUSRCVR", "CLUSSDR": "CLUSSDR", "MQTT": "MQTT", "AMQP": "AMQP",
    **{word: word for word in CHANNEL_TYPE_CODES},
    **{str(code): word for word, code in CHANNEL_TYPE_CODES.items()},
}

# MQCHSSTATE_* (channel substate): the words runmqsc and REST print in SUBSTATE(...) (IBM Docs "DISPLAY CHSTATUS",
# SUBSTATE), PCF the number (cmqcfc.h; mq-golang's ibmmq constants): SSLHANDSHK is MQCHSSTATE_SSL_HANDSHAKING,
# NETCONNECT MQCHSSTATE_NET_CONNECTING, ...; OTHER is PCF's MQCHSSTATE_OTHER.  A blank SUBSTATE( ) (no MCA running,
# e.g. RETRYING) has no code.
CHANNEL_SUBSTATE_CODES = {
    "OTHER": 0, "ENDBATCH": 100, "SEND": 200, "RECEIVE": 300, "SERIALIZE": 400, "RESYNCH": 500, "HEARTBEAT": 600,
    "SCYEXIT": 700, "RCVEXIT": 800, "SENDEXIT": 900, "MSGEXIT": 1000, "MREXIT": 1100, "CHADEXIT": 1200,
    "NETCONNECT": 1250, "SSLHANDSHK": 1300, "NAMESERVER": 1400, "MQPUT": 1500, "MQGET": 1600, "MQICALL": 1700,
    "COMPRESS": 1800,
}

# MQOT_*_CHANNEL (the instance type of a channel status: runmqsc prints the bare keyword CURRENT, SAVED or SHORT,
# PCF answers MQIACH_CHANNEL_INSTANCE_TYPE): ibmmq_channel_instance_type, as mq_prometheus exports the code.
CHANNEL_INSTANCE_TYPE_CODES = {"CURRENT": 1011, "SAVED": 1012, "SHORT": 1015}

# MQSECPROT_* (the security protocol a channel instance negotiated: runmqsc's SECPROT(...) words, PCF's
# MQIACH_SECURITY_PROTOCOL): ibmmq_channel_security_protocol, as mq_prometheus exports the code.
CHANNEL_SECURITY_PROTOCOL_CODES = {"NONE": 0, "SSLV3": 1, "TLSV1": 2, "TLSV12": 4, "TLSV13": 8}

# The largest number runmqsc (and PCF) show for a figure such as QTIME, MSGAGE, XQTIME or NETTIME (IBM Docs "DISPLAY
# QSTATUS": "the maximum displayable value is 999999999"; "DISPLAY CHSTATUS": on z/OS every numeric parameter over
# 999,999,999 is displayed as 999999999).  A figure at the cap is kept: it means "at least this much", never "no data"
# (blank is no data).
DISPLAY_MAX = 999999999

# MQSVC_STATUS_* (command server, channel initiator): ibmmq_qmgr_command_server_status and
# ibmmq_qmgr_channel_initiator_status.
SERVICE_STATUS_CODES = {"STOPPED": 0, "STARTING": 1, "RUNNING": 2, "STOPPING": 3, "RETRYING": 4}

# mq_prometheus's squashed channel status (ibmmq_channel_status_squash; see channel_status_squash).
CHANNEL_STATUS_SQUASH_CODES = {"STOPPED": 0, "TRANSITIONING": 1, "RUNNING": 2}


def code_words(codes: dict[str, int]) -> str:
    """A status table as a help text reads it: ``0 stopped, 1 starting, ...`` (in the table's order)."""
    return ", ".join(f"{code} {word.lower()}" for word, code in codes.items())


def channel_type_word(value: object) -> str:
    """The mq_prometheus word for a channel type in any back-end's spelling (``SDR``, ``1``, ``sdr``); unknown
    spellings are kept upper-cased rather than dropped."""
    text = str(value).strip().upper()
    return CHANNEL_TYPE_WORDS.get(text, text)


def channel_status_squash(status: str) -> int:
    """mq_prometheus's squashed channel status (mqmetric ChannelNormalise): 0 stopped (INACTIVE, DISCONNECTED,
    STOPPED, PAUSED and any unknown word), 1 transitioning, 2 running."""
    status = status.upper()
    if status == "RUNNING":
        return CHANNEL_STATUS_SQUASH_CODES["RUNNING"]
    if status in ("BINDING", "STARTING", "STOPPING", "RETRYING", "REQUESTING", "INITIALIZING", "SWITCHING"):
        return CHANNEL_STATUS_SQUASH_CODES["TRANSITIONING"]
    return CHANNEL_STATUS_SQUASH_CODES["STOPPED"]


class BackendError(Exception):
    """The back-end could not produce a snapshot (connection, authentication, garbage, ...)."""


class BackendNotAvailable(BackendError):
    """The back-end cannot run here at all (e.g. the MQ client library is not installed)."""


# Every field below that a back-end could not read is None (or "" for text): the collector then emits no sample,
# never 0.  Dates and times the queue manager prints (LPUTDATE/LPUTTIME, LSTMSGDA/LSTMSGTI, STARTDA/STARTTI, ...)
# are its *local* time: back-ends return them as naive ``datetime`` objects and the collector turns them into ages
# with the queue manager's configured time zone.  Microsecond and MB figures stay in the unit MQ gives (IBM's
# mq_prometheus exports them raw under the same names).


@dataclass
class QueueStatus:
    name: str
    depth: int | None = None  # CURDEPTH
    max_depth: int | None = None  # MAXDEPTH (definition)
    oldest_message_age: float | None = None  # MSGAGE, seconds (None where monitoring is off)
    open_input: int | None = None  # IPPROCS
    open_output: int | None = None  # OPPROCS
    last_put: datetime | None = None  # LPUTDATE + LPUTTIME (queue manager's local time; None: blank / MONQ off)
    last_get: datetime | None = None  # LGETDATE + LGETTIME
    qtime_short: int | None = None  # QTIME first value, microseconds (None: blank; DISPLAY_MAX: at least that)
    qtime_long: int | None = None  # QTIME second value, microseconds
    uncommitted: int | None = None  # UNCOM: a count where MQ gives one; NO -> 0, YES -> 1
    file_size_mb: int | None = None  # CURFSIZE, MB (9.1.5+)
    file_max_size_mb: int | None = None  # CURMAXFS, MB (9.1.5+)
    monitoring: str = ""  # MONQ of the status (OFF, LOW, MEDIUM, HIGH; "" unknown)
    usage: str = ""  # NORMAL or XMITQ (definition USAGE)
    description: str = ""  # DESCR (definition)


@dataclass
class ChannelState:
    """One instance of a channel's status (DISPLAY CHSTATUS CURRENT); an inactive defined channel is one with
    status INACTIVE made from its definition."""

    name: str
    status: str  # RUNNING, STOPPED, RETRYING, ... (INACTIVE for a defined channel with no status)
    type: str = ""  # mq_prometheus word: SENDER, RECEIVER, SVRCONN, CLUSSDR, ... (see channel_type_word)
    connection: str = ""  # CONNAME of this instance
    substate: str = ""  # SUBSTATE word (MQGET, RECEIVE, ...)
    indoubt: bool | None = None  # INDOUBT(YES/NO)
    messages: int | None = None  # MSGS (MQI calls for SVRCONN)
    bytes_sent: int | None = None  # BYTSSENT
    bytes_received: int | None = None  # BYTSRCVD
    buffers_sent: int | None = None  # BUFSSENT
    buffers_received: int | None = None  # BUFSRCVD
    batches: int | None = None  # BATCHES
    last_message: datetime | None = None  # LSTMSGDA + LSTMSGTI (local time; None: no message yet)
    started: datetime | None = None  # CHSTADA + CHSTATI (local time)
    xmitq_time_short: int | None = None  # XQTIME, microseconds (MONCHL on; sender-side types)
    xmitq_time_long: int | None = None
    network_time_short: int | None = None  # NETTIME, microseconds (MONCHL on)
    network_time_long: int | None = None
    batch_size_short: int | None = None  # XBATCHSZ (MONCHL on)
    batch_size_long: int | None = None
    remote_qmgr: str = ""  # RQMNAME
    job_name: str = ""  # JOBNAME
    ssl_cipher: str = ""  # SSLCIPH
    sharing_conversations: int | None = None  # CURSHCNV (SVRCONN)
    short_retries_left: int | None = None  # SHORTRTS
    long_retries_left: int | None = None  # LONGRTS
    xmitq_messages_available: int | None = None  # XQMSGSA (MONCHL on)
    monitoring: str = ""  # MONCHL of the status (OFF, LOW, MEDIUM, HIGH; "" unknown): OFF -> the MONCHL figures None
    instance_type: str = ""  # CURRENT, SAVED or SHORT (see CHANNEL_INSTANCE_TYPE_CODES)
    security_protocol: str = ""  # SECPROT: NONE, SSLV3, TLSV1, TLSV12, TLSV13 (see CHANNEL_SECURITY_PROTOCOL_CODES)


@dataclass
class ChannelDefinition:
    """A defined channel (DISPLAY CHANNEL): what makes inactive channels visible and bounds SVRCONN instances."""

    name: str
    type: str  # mq_prometheus word (see channel_type_word)
    max_instances: int | None = None  # MAXINST (SVRCONN; 999999999 by default)
    max_instances_per_client: int | None = None  # MAXINSTC
    description: str = ""  # DESCR
    xmit_queue: str = ""  # XMITQ (sender-side types)


@dataclass
class QmgrHealth:
    """DISPLAY QMSTATUS ALL and DISPLAY QMGR: the queue manager's own health (None / "": not read)."""

    connections: int | None = None  # CONNS
    command_server: str = ""  # CMDSERV word (RUNNING, STOPPED, ...; see SERVICE_STATUS_CODES)
    channel_initiator: str = ""  # CHINIT word
    started: datetime | None = None  # STARTDA + STARTTI (local time)
    # LOGSTRDA + LOGSTRTI, the date and time of the oldest log record
    # needed (local time; mq_prometheus's log_start_epoch); LOGSTRTI comes as HH:MM:SS or HH.MM.SS.
    log_started: datetime | None = None
    log_in_use_percent: float | None = None  # LOGINUSE
    log_utilization_percent: float | None = None  # LOGUTIL
    log_extent_current: int | None = None  # CURRLOG Snnnnnnn.LOG -> n (linear logging)
    log_extent_media: int | None = None  # MEDIALOG
    log_extent_restart: int | None = None  # RECLOG
    log_extent_archive: int | None = None  # ARCHLOG
    log_size_archive_mb: int | None = None  # ARCHSZ
    log_size_reusable_mb: int | None = None  # REUSESZ
    log_size_media_mb: int | None = None  # MEDIASZ
    log_size_restart_mb: int | None = None  # RECSZ
    log_fs_size_mb: int | None = None  # LOGFSSZ
    log_fs_in_use_percent: float | None = None  # LOGFSUSE
    qm_fs_size_mb: int | None = None  # QMFSSZ
    qm_fs_in_use_percent: float | None = None  # QMFSUSE
    version: str = ""  # VERSION (DISPLAY QMGR), e.g. 09040002
    command_level: str = ""  # CMDLEVEL
    qmid: str = ""  # QMID
    platform: str = ""  # PLATFORM word (UNIX, WINDOWSNT, ZOS, ...)
    dead_letter_queue: str = ""  # DEADQ
    max_handles: int | None = None  # MAXHANDS


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
    # queues the queue manager's MAXHANDS leaves room for (the statistics
    # never hold more handles than MAXHANDS allows); None while MAXHANDS is unknown.
    handles_cap: int | None = None
    error: str | None = None
    duration: float = 0.0
    # issue 39: the recovery log from DISK/Log publications (amqsrua), by element description (parse.py's
    # AMQSRUA_LOG_ELEMENTS) -> the latest value in base units, or for the two delta elements the sum so far
    log: dict[str, float] = field(default_factory=dict)


# ---- Native HA (issue 39) -----------------------------------------------------------------------------------------
# MQNHAROLE_* and MQNHASTATUS_* (cmqc.h, as in mq-golang's ibmmq package): the codes PCF answers with; runmqsc and
# REST print the word (ROLE(REPLICA), HASTATUS(NORMAL)).
NHA_ROLE_CODES = {"UNKNOWN": 0, "ACTIVE": 1, "REPLICA": 2, "LEADER": 3}
NHA_STATUS_CODES = {"UNKNOWN": 0, "NORMAL": 1, "CHECKING": 2, "SYNCHRONIZING": 3, "REBASING": 4, "DISKFULL": 5,
                    "DISCONNECTED": 6, "PARTITIONED": 7}


def nha_status_code(word: str) -> int | None:
    """MQNHASTATUS code of a HASTATUS word in any spelling (``DISK FULL``, ``DISKFULL``, ``Synchronising``);
    None for a word not in the table (never guessed as 0)."""
    key = re.sub(r"[^A-Z]", "", word.upper()).replace("SYNCHRONIS", "SYNCHRONIZ")
    return NHA_STATUS_CODES.get(key)


@dataclass
class NativeHaInstance:
    """One Native HA instance of the local group (DISPLAY QMSTATUS TYPE(NATIVEHA) NHATYPE(INSTANCE)), as the
    instance that answered sees it.  The active instance shows no INSYNC/BACKLOG/CONNACTV of its own."""

    name: str  # INSTANCE
    role: str = ""  # ROLE word: ACTIVE, REPLICA, UNKNOWN (LEADER for a cross-region group's leader)
    in_sync: bool | None = None  # INSYNC(YES/NO)
    backlog_kb: int | None = None  # BACKLOG: KB of log written by the active, not yet acknowledged by this one
    connected: bool | None = None  # CONNACTV(YES/NO): a pair of active connections to the active instance
    status: str = ""  # HASTATUS word as printed, upper case: NORMAL, SYNCHRONIZING, REBASING, ... (nha_status_code)


@dataclass
class QmgrSnapshot:
    qmgr: str
    status: str  # a state name of states.STATES (RUNNING, RUNNING ELSEWHERE, REPLICA, ENDED NORMALLY, ...)
    queues: list[QueueStatus] = field(default_factory=list)
    channels: list[ChannelState] = field(default_factory=list)
    channel_definitions: list[ChannelDefinition] | None = None  # None: this back-end did not read definitions
    health: QmgrHealth | None = None  # None: not read (queue manager not running, or the back-end cannot)
    throughput: Throughput | None = None  # None: this back-end reads no statistics (rest, or statistics off)
    # optional sources of this snapshot that failed while the rest stood, by source ("channel"
    # = DISPLAY CHANNEL, "chstatus" = DISPLAY CHSTATUS, "qmstatus" = DISPLAY QMSTATUS, "qmgr" = DISPLAY QMGR) ->
    # error text (secret-free).  A
    # failed source leaves its fields None (channel_definitions None, health None or partly filled).
    source_errors: dict[str, str] = field(default_factory=dict)
    # issue 39: the Native HA instances as the active instance sees them (DISPLAY QMSTATUS TYPE(NATIVEHA)); None:
    # not read (not Native HA, not running here, or the back-end cannot)
    native_ha: list[NativeHaInstance] | None = None


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
