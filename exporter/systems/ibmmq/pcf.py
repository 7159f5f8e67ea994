"""IBM MQ PCF back-end through the ``ibmmq`` package (the maintained successor of pymqi).

Besides its six inquiries (queue manager status and attributes, queue status and definitions, channel status
and definitions) it holds the queue manager's resource-statistics subscriptions (put/get counts,
:mod:`.statistics`) on the same connection, or, only where configured, resets queue statistics (destructive).

``ibmmq`` is an optional extra (``pip install 'middleware-exporter[mq]'``) that needs the IBM MQ client libraries,
so it is imported on the first read of a queue manager using this back-end; without it only that queue manager
fails ("MQ client not installed").  The decoding (:func:`snapshot_from_pcf`) stays here beside the adapter
because both use the MQ constants below, written out so this module imports without the client library (the
tests check them against ``ibmmq.CMQC``/``CMQCFC``).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ...machine.numbers import integer
from .model import (
    CHANNEL_INSTANCE_TYPE_CODES,
    CHANNEL_SECURITY_PROTOCOL_CODES,
    CHANNEL_STATUS_CODES,
    CHANNEL_SUBSTATE_CODES,
    NHA_ROLE_CODES,
    NHA_STATUS_CODES,
    SERVICE_STATUS_CODES,
    Backend,
    BackendError,
    BackendNotAvailable,
    ChannelDefinition,
    ChannelState,
    NativeHaInstance,
    QmgrHealth,
    QmgrSnapshot,
    QueueStatus,
    Throughput,
    channel_type_word,
)
from .parse import ChannelStatusAnswer
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
# Health figures (issue 28).  Every id below was checked against IBM's constants as generated from cmqc.h /
# cmqcfc.h / cmqxc.h in ibm-messaging/mq-golang, ibmmq/cmqc_linux_amd64.go, commit
# 965b115c2dcc0268fe5b86e5ddc74dc62f9cfa12 (2026-02-06), and the tests check them again against the ``ibmmq``
# package's CMQC / CMQCFC.
MQCMD_INQUIRE_Q_MGR = 2
MQCMD_INQUIRE_Q = 13
MQCMD_INQUIRE_CHANNEL = 25
MQCMD_INQUIRE_Q_STATUS = 41
MQCMD_INQUIRE_CHANNEL_STATUS = 42
MQCMD_INQUIRE_Q_MGR_STATUS = 161
MQIACF_ALL = 1009
MQIACF_Q_MGR_ATTRS = 1001
MQIACF_Q_ATTRS = 1002
MQIACF_CHANNEL_ATTRS = 1015
MQIACF_Q_STATUS_ATTRS = 1026
MQIACF_Q_STATUS_TYPE = 1103
MQIACF_Q_STATUS = 1105
MQIACF_Q_MGR_STATUS_ATTRS = 1229
MQIACH_CHANNEL_INSTANCE_TYPE = 1523
MQIACH_CHANNEL_INSTANCE_ATTRS = 1524
MQOT_CURRENT_CHANNEL = 1011
# queue status / definition
MQCACF_LAST_PUT_DATE, MQCACF_LAST_PUT_TIME, MQCACF_LAST_GET_DATE, MQCACF_LAST_GET_TIME = 3128, 3129, 3130, 3131
MQIACF_Q_TIME_INDICATOR = 1226  # [short, long] on every platform
MQIACF_UNCOMMITTED_MSGS = 1027
MQIACF_CUR_Q_FILE_SIZE = 1437
MQIACF_CUR_MAX_FILE_SIZE = 1438
MQIACF_MONITORING = 1258
MQIA_USAGE = 12
MQCA_Q_DESC = 2013
MQUS_NORMAL, MQUS_TRANSMISSION = 0, 1
MQMON_WORDS = {0: "OFF", 17: "LOW", 33: "MEDIUM", 65: "HIGH"}  # MQMON_OFF/LOW/MEDIUM/HIGH
# channel status / definition
MQIACH_CHANNEL_SUBSTATE = 1609
MQIA_MONITORING_CHANNEL = 122  # the channel status's MONCHL level (MQMON_*)
MQIACH_SECURITY_PROTOCOL = 1645  # MQSECPROT_*
MQIACH_INDOUBT_STATUS = 1528
MQIACH_MSGS = 1534
MQIACH_BYTES_SENT = 1535
MQIACH_BYTES_RCVD = 1536
MQIACH_BATCHES = 1537
MQIACH_BUFFERS_SENT = 1538
MQIACH_BUFFERS_RCVD = 1539
MQIACH_XMITQ_TIME_INDICATOR = 1604
MQIACH_NETWORK_TIME_INDICATOR = 1605
MQIACH_BATCH_SIZE_INDICATOR = 1607
MQIACH_XMITQ_MSGS_AVAILABLE = 1608
MQIACH_CURRENT_SHARING_CONVS = 1617
MQIACH_SHORT_RETRIES_LEFT = 1541
MQIACH_LONG_RETRIES_LEFT = 1540
MQCACH_LAST_MSG_TIME = 3524
MQCACH_LAST_MSG_DATE = 3525
MQCACH_CHANNEL_START_TIME = 3528
MQCACH_CHANNEL_START_DATE = 3529
MQCACH_MCA_JOB_NAME = 3530
MQCACH_SSL_CIPHER_SPEC = 3544
MQCA_REMOTE_Q_MGR_NAME = 2017
MQIACH_MAX_INSTANCES = 1618
MQIACH_MAX_INSTS_PER_CLIENT = 1619
MQCACH_DESC = 3502
MQCACH_XMIT_Q_NAME = 3505
# queue manager status / attributes
MQIACF_CONNECTION_COUNT = 1230
MQIACF_CHINIT_STATUS = 1232
MQIACF_CMD_SERVER_STATUS = 1233
MQCACF_Q_MGR_START_DATE = 3175
MQCACF_Q_MGR_START_TIME = 3176
MQCACF_LOG_START_DATE = 3214
MQCACF_LOG_START_TIME = 3216
MQIACF_LOG_IN_USE = 1420
MQIACF_LOG_UTILIZATION = 1421
MQCACF_CURRENT_LOG_EXTENT_NAME = 3071
MQCACF_RESTART_LOG_EXTENT_NAME = 3072
MQCACF_MEDIA_LOG_EXTENT_NAME = 3073
MQCACF_ARCHIVE_LOG_EXTENT_NAME = 3208
MQIACF_ARCHIVE_LOG_SIZE = 1416
MQIACF_MEDIA_LOG_SIZE = 1417
MQIACF_RESTART_LOG_SIZE = 1418
MQIACF_REUSABLE_LOG_SIZE = 1419
MQIACF_LOG_FS_IN_USE = 1452
MQIACF_LOG_FS_SIZE = 1453
MQIACF_Q_MGR_FS_IN_USE = 1464
MQIACF_Q_MGR_FS_SIZE = 1465
MQCA_VERSION = 2120
MQIA_COMMAND_LEVEL = 31
MQCA_Q_MGR_IDENTIFIER = 2032
MQIA_PLATFORM = 32
MQCA_DEAD_LETTER_Q_NAME = 2006
MQIA_MAX_HANDLES = 11
MQPL_ZOS = 1
# MQPL_* -> the word runmqsc prints in PLATFORM(...) (MVS is printed as ZOS here, as mq_prometheus names it)
PLATFORM_WORDS = {1: "ZOS", 3: "UNIX", 4: "OS400", 11: "WINDOWSNT", 13: "NSK", 28: "APPLIANCE"}
MQRCCF_CHANNEL_NOT_FOUND = 4032
# MQCNO_VERSION_6 is the first MQCNO with CCDTUrl; MQCNO_CLIENT_BINDING forces a client connection without an MQCD
MQCNO_VERSION_6 = 6
MQCNO_CLIENT_BINDING = 0x800
MQGACF_Q_STATISTICS_DATA = 8011
MQIAMO_PUTS = 735
MQIAMO_PUT1S = 734
MQIAMO_GETS = 722
MQCMD_STATISTICS_Q = 165
MQRC_UNKNOWN_OBJECT_NAME = 2085
MQRCCF_CHL_STATUS_NOT_FOUND = 3065
MQRC_STANDBY_Q_MGR = 2543  # connecting to the standby instance of a multi-instance queue manager
MQRC_NO_MSG_AVAILABLE = 2033
# Native HA (issue 39): MQCMD_INQUIRE_Q_MGR_STATUS with MQIACF_Q_MGR_STATUS_INFO_TYPE = ..._INFO_NHA is DISPLAY
# QMSTATUS TYPE(NATIVEHA); one answer per instance of the local group (NHATYPE(INSTANCE), the default).  Ids from
# cmqcfc.h as the ibmmq package carries them (checked by the tests); MQ 9.2.2 (command level 922) and later.
MQIACF_Q_MGR_STATUS_INFO_TYPE = 1445
MQIACF_Q_MGR_STATUS_INFO_NHA = 1447
MQCACF_NHA_INSTANCE_NAME = 3211
MQIACF_NHA_INSTANCE_ROLE = 1460
MQIACF_NHA_INSTANCE_IN_SYNC = 1459
MQIACF_NHA_INSTANCE_BACKLOG = 1458  # KB; MQNHABACKLOG_UNKNOWN -1
MQIACF_NHA_INSTANCE_ACTV_CONNS = 1457
MQIACF_NHA_INSTANCE_STATUS = 1476
MQRCCF_NHA_NOT_AVAILABLE = 4098  # "Native HA not available": the queue manager is not Native HA
NHA_COMMAND_LEVEL = 922  # Native HA came with MQ 9.2.2: an older queue manager is not asked
MQIA_MSG_ENQ_COUNT = 37
MQIA_MSG_DEQ_COUNT = 38
MQCMD_RESET_Q_STATS = 17
# MQSUB and MQGET options of the statistics subscriptions: a managed (the queue manager makes the queue),
# non-durable (it goes when the connection goes) subscription, read without waiting or syncpoint.
MQSO_CREATE, MQSO_NON_DURABLE, MQSO_MANAGED, MQSO_FAIL_IF_QUIESCING = 0x2, 0x0, 0x20, 0x2000
MQGMO_WAIT, MQGMO_NO_WAIT, MQGMO_NO_SYNCPOINT, MQGMO_CONVERT, MQGMO_FAIL_IF_QUIESCING = 0x1, 0x0, 0x4, 0x4000, 0x2000

# MQQMSTA_* code -> state name (the states themselves are in .states, shared with the other back-ends).
QMGR_STATUS = {code: qmgr_state_from_code(code).name for code in (1, 2, 3, 4)}
# Integer codes -> the model's words (the tables are the model's, inverted here once).
CHANNEL_STATUS = {code: word for word, code in CHANNEL_STATUS_CODES.items()}
CHANNEL_SUBSTATE = {code: word for word, code in CHANNEL_SUBSTATE_CODES.items()}
CHANNEL_INSTANCE_TYPE = {code: word for word, code in CHANNEL_INSTANCE_TYPE_CODES.items()}
SECURITY_PROTOCOL = {code: word for word, code in CHANNEL_SECURITY_PROTOCOL_CODES.items()}
SERVICE_STATUS = {code: word for word, code in SERVICE_STATUS_CODES.items()}
NHA_ROLE = {code: word for word, code in NHA_ROLE_CODES.items()}
NHA_STATUS = {code: word for word, code in NHA_STATUS_CODES.items()}


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
    return integer(_text(value), "+-")  # the strict reader (machine/numbers.py)


def _number(value: Any) -> int | None:
    """A status figure: negative (MQ's -1 "not available", MQFS_SHARED -1, ...) or missing is None."""
    number = _int(value) if not isinstance(value, (list, tuple)) else None
    return number if number is not None and number >= 0 else None


def _pair(value: Any, first_is_long: bool) -> tuple[int | None, int | None]:
    """(short, long) of a two-value indicator; -1 (not available) is None, 999999999 (the largest value MQ shows:
    model.DISPLAY_MAX) is kept ("at least"), as mq_prometheus keeps it."""
    if not isinstance(value, (list, tuple)) or len(value) < 2:
        return None, None
    first, second = (_number(v) for v in value[:2])
    return (second, first) if first_is_long else (first, second)


_DAY = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_TIME = re.compile(r"^(\d{2})[.:](\d{2})[.:](\d{2})$")


def _when(date: Any, time_: Any) -> datetime | None:
    """A date (YYYY-MM-DD) and time (HH.MM.SS; some fields use colons) as the queue manager's naive local time."""
    day, clock = _DAY.match(_text(date or "")), _TIME.match(_text(time_ or ""))
    if not day or not clock:
        return None
    try:
        return datetime(*(int(g) for g in day.groups()), *(int(g) for g in clock.groups()))
    except ValueError:
        return None


_EXTENT = re.compile(r"S(\d+)\.LOG$", re.IGNORECASE)


def _extent(value: Any) -> int | None:
    match = _EXTENT.search(_text(value or ""))
    return int(match.group(1)) if match else None


def _word(table: dict[int, str], value: Any) -> str:
    code = _int(value) if not isinstance(value, (list, tuple)) else None
    return table.get(code, "") if code is not None else ""


def _percent(value: Any) -> float | None:
    number = _number(value)
    return float(number) if number is not None else None


def channel_from_pcf(item: dict, first_is_long: bool = True) -> ChannelState | None:
    """One MQCMD_INQUIRE_CHANNEL_STATUS answer.  ``first_is_long``: the XMITQ/NETWORK time and batch size pairs
    come long-first on Distributed platforms and short-first on z/OS (IBM PCF defect 304982, as mqmetric's
    channel.go reads them); queue QTIME is short-first everywhere."""
    name = _text(item.get(MQCACH_CHANNEL_NAME, ""))
    if not name:
        return None
    code = _int(item.get(MQIACH_CHANNEL_STATUS))
    kind = _int(item.get(MQIACH_CHANNEL_TYPE))
    indoubt = _number(item.get(MQIACH_INDOUBT_STATUS))
    monitoring = _word(MQMON_WORDS, item.get(MQIA_MONITORING_CHANNEL))
    measured = monitoring != "OFF"  # MONCHL off: the indicators were never measured (not 0)
    xq_short, xq_long = _pair(item.get(MQIACH_XMITQ_TIME_INDICATOR), first_is_long) if measured else (None, None)
    net_short, net_long = (_pair(item.get(MQIACH_NETWORK_TIME_INDICATOR), first_is_long) if measured
                           else (None, None))
    batch_short, batch_long = (_pair(item.get(MQIACH_BATCH_SIZE_INDICATOR), first_is_long) if measured
                               else (None, None))
    return ChannelState(
        name=name,
        status=CHANNEL_STATUS.get(code if code is not None else -1, "UNKNOWN"),
        type=channel_type_word(kind) if kind is not None else "",
        connection=_text(item.get(MQCACH_CONNECTION_NAME, "")),
        substate=_word(CHANNEL_SUBSTATE, item.get(MQIACH_CHANNEL_SUBSTATE)),
        indoubt=None if indoubt is None else indoubt == 1,  # MQCHIDS_INDOUBT 1, MQCHIDS_NOT_INDOUBT 0
        messages=_number(item.get(MQIACH_MSGS)),
        bytes_sent=_number(item.get(MQIACH_BYTES_SENT)),
        bytes_received=_number(item.get(MQIACH_BYTES_RCVD)),
        buffers_sent=_number(item.get(MQIACH_BUFFERS_SENT)),
        buffers_received=_number(item.get(MQIACH_BUFFERS_RCVD)),
        batches=_number(item.get(MQIACH_BATCHES)),
        last_message=_when(item.get(MQCACH_LAST_MSG_DATE), item.get(MQCACH_LAST_MSG_TIME)),
        started=_when(item.get(MQCACH_CHANNEL_START_DATE), item.get(MQCACH_CHANNEL_START_TIME)),
        xmitq_time_short=xq_short, xmitq_time_long=xq_long,
        network_time_short=net_short, network_time_long=net_long,
        batch_size_short=batch_short, batch_size_long=batch_long,
        remote_qmgr=_text(item.get(MQCA_REMOTE_Q_MGR_NAME, "")),
        job_name=_text(item.get(MQCACH_MCA_JOB_NAME, "")),
        ssl_cipher=_text(item.get(MQCACH_SSL_CIPHER_SPEC, "")),
        sharing_conversations=_number(item.get(MQIACH_CURRENT_SHARING_CONVS)),
        short_retries_left=_number(item.get(MQIACH_SHORT_RETRIES_LEFT)),
        long_retries_left=_number(item.get(MQIACH_LONG_RETRIES_LEFT)),
        xmitq_messages_available=_number(item.get(MQIACH_XMITQ_MSGS_AVAILABLE)) if measured else None,
        monitoring=monitoring,
        instance_type=_word(CHANNEL_INSTANCE_TYPE, item.get(MQIACH_CHANNEL_INSTANCE_TYPE)),
        security_protocol=_word(SECURITY_PROTOCOL, item.get(MQIACH_SECURITY_PROTOCOL)),
    )


def channel_status_from_pcf(items: Iterable[Any], first_is_long: bool = True) -> ChannelStatusAnswer:
    """The MQCMD_INQUIRE_CHANNEL_STATUS answers, and an error when one cannot be read: not a parameter mapping, or
    without the channel name or status that every answer carries (as the runmqsc and REST readers require); the
    error quotes the first such answer, cut to 120 characters.  The answers that can be read are kept."""
    channels: list[ChannelState] = []
    unreadable: list[Any] = []
    total = 0
    for item in items:
        total += 1
        readable = isinstance(item, dict) and _int(item.get(MQIACH_CHANNEL_STATUS)) is not None
        channel = channel_from_pcf(item, first_is_long) if readable else None
        if channel is None:
            unreadable.append(item)
        else:
            channels.append(channel)
    if not unreadable:
        return ChannelStatusAnswer(channels)
    shown = repr(unreadable[0])
    shown = shown if len(shown) <= 120 else shown[:120] + "..."
    return ChannelStatusAnswer(channels, f"INQUIRE_CHANNEL_STATUS: {len(unreadable)} of {total} channel status "
                                         f"answers unreadable (no channel name or status); the first is {shown}")


def definition_from_pcf(item: dict) -> ChannelDefinition | None:
    """One MQCMD_INQUIRE_CHANNEL answer."""
    name = _text(item.get(MQCACH_CHANNEL_NAME, ""))
    kind = _int(item.get(MQIACH_CHANNEL_TYPE))
    if not name or kind is None:
        return None
    return ChannelDefinition(
        name=name, type=channel_type_word(kind),
        max_instances=_number(item.get(MQIACH_MAX_INSTANCES)),
        max_instances_per_client=_number(item.get(MQIACH_MAX_INSTS_PER_CLIENT)),
        description=_text(item.get(MQCACH_DESC, "")),
        xmit_queue=_text(item.get(MQCACH_XMIT_Q_NAME, "")),
    )


def _yes_no(value: Any) -> bool | None:
    """MQNHAINSYNC_* / MQNHACONNACTV_*: 1 yes, 0 no, anything else (absent, -1) not known."""
    code = _int(value) if not isinstance(value, (list, tuple)) else None
    return {1: True, 0: False}.get(code) if code is not None else None


def native_ha_from_pcf(items: Iterable[Any]) -> list[NativeHaInstance] | None:
    """The Native HA instances of an MQCMD_INQUIRE_Q_MGR_STATUS (..._INFO_NHA) answer, as runmqsc's
    DISPLAY QMSTATUS TYPE(NATIVEHA) reads (mqscmap.native_ha): one per instance name, in order; None when there is
    none.  Codes map to runmqsc's words (MQNHAROLE_*, MQNHASTATUS_*); a code outside the tables stays unread."""
    found: dict[str, NativeHaInstance] = {}
    for item in items:
        name = _text(item.get(MQCACF_NHA_INSTANCE_NAME, "")) if isinstance(item, dict) else ""
        if not name:
            continue
        found.setdefault(name, NativeHaInstance(
            name=name, role=_word(NHA_ROLE, item.get(MQIACF_NHA_INSTANCE_ROLE)),
            in_sync=_yes_no(item.get(MQIACF_NHA_INSTANCE_IN_SYNC)),
            backlog_kb=_number(item.get(MQIACF_NHA_INSTANCE_BACKLOG)),  # MQNHABACKLOG_UNKNOWN -1: None
            connected=_yes_no(item.get(MQIACF_NHA_INSTANCE_ACTV_CONNS)),
            status=_word(NHA_STATUS, item.get(MQIACF_NHA_INSTANCE_STATUS))))
    return list(found.values()) or None


def health_from_pcf(status: dict, attrs: dict) -> QmgrHealth:
    """MQCMD_INQUIRE_Q_MGR_STATUS (``status``) and MQCMD_INQUIRE_Q_MGR (``attrs``) answers."""
    level = _number(attrs.get(MQIA_COMMAND_LEVEL))
    platform = _int(attrs.get(MQIA_PLATFORM))
    return QmgrHealth(
        connections=_number(status.get(MQIACF_CONNECTION_COUNT)),
        command_server=_word(SERVICE_STATUS, status.get(MQIACF_CMD_SERVER_STATUS)),
        channel_initiator=_word(SERVICE_STATUS, status.get(MQIACF_CHINIT_STATUS)),
        started=_when(status.get(MQCACF_Q_MGR_START_DATE), status.get(MQCACF_Q_MGR_START_TIME)),
        log_started=_when(status.get(MQCACF_LOG_START_DATE), status.get(MQCACF_LOG_START_TIME)),
        log_in_use_percent=_percent(status.get(MQIACF_LOG_IN_USE)),
        log_utilization_percent=_percent(status.get(MQIACF_LOG_UTILIZATION)),
        log_extent_current=_extent(status.get(MQCACF_CURRENT_LOG_EXTENT_NAME)),
        log_extent_media=_extent(status.get(MQCACF_MEDIA_LOG_EXTENT_NAME)),
        log_extent_restart=_extent(status.get(MQCACF_RESTART_LOG_EXTENT_NAME)),
        log_extent_archive=_extent(status.get(MQCACF_ARCHIVE_LOG_EXTENT_NAME)),
        log_size_archive_mb=_number(status.get(MQIACF_ARCHIVE_LOG_SIZE)),
        log_size_reusable_mb=_number(status.get(MQIACF_REUSABLE_LOG_SIZE)),
        log_size_media_mb=_number(status.get(MQIACF_MEDIA_LOG_SIZE)),
        log_size_restart_mb=_number(status.get(MQIACF_RESTART_LOG_SIZE)),
        log_fs_size_mb=_number(status.get(MQIACF_LOG_FS_SIZE)),  # MQFS_SHARED (-1): on the qmgr's FS -> None
        log_fs_in_use_percent=_percent(status.get(MQIACF_LOG_FS_IN_USE)),
        qm_fs_size_mb=_number(status.get(MQIACF_Q_MGR_FS_SIZE)),
        qm_fs_in_use_percent=_percent(status.get(MQIACF_Q_MGR_FS_IN_USE)),
        version=_text(attrs.get(MQCA_VERSION, "")),
        command_level=str(level) if level is not None else "",
        qmid=_text(attrs.get(MQCA_Q_MGR_IDENTIFIER, "")),
        platform=PLATFORM_WORDS.get(platform, str(platform)) if platform is not None else "",
        dead_letter_queue=_text(attrs.get(MQCA_DEAD_LETTER_Q_NAME, "")),
        max_handles=_number(attrs.get(MQIA_MAX_HANDLES)),
    )


def snapshot_from_pcf(qmgr: str, qmgr_status: Iterable[dict], queue_status: Iterable[dict],
                      queues: Iterable[dict], channel_status: Iterable[dict],
                      channel_definitions: Iterable[dict] | None = None,
                      qmgr_attributes: Iterable[dict] = ()) -> QmgrSnapshot:
    """The common model from PCF answers (MQCMD_INQUIRE_Q_MGR_STATUS, _Q_STATUS, _Q, _CHANNEL_STATUS, and
    MQCMD_INQUIRE_CHANNEL (None: not read), MQCMD_INQUIRE_Q_MGR)."""
    status = UNKNOWN.name
    status_items = list(qmgr_status)
    for item in status_items:
        status = qmgr_state_from_code(_int(item.get(MQIACF_Q_MGR_STATUS))).name
    attrs = next(iter(qmgr_attributes), {})
    health = health_from_pcf(status_items[-1], attrs) if status_items else None
    first_is_long = _int(attrs.get(MQIA_PLATFORM)) != MQPL_ZOS
    by_name: dict[str, QueueStatus] = {}
    for item in queues:
        name = _text(item.get(MQCA_Q_NAME, ""))
        if not name or _int(item.get(MQIA_Q_TYPE, MQQT_LOCAL)) != MQQT_LOCAL:
            continue
        queue = by_name.setdefault(name, QueueStatus(name))
        queue.max_depth = _int(item.get(MQIA_MAX_Q_DEPTH))
        queue.usage = {MQUS_NORMAL: "NORMAL", MQUS_TRANSMISSION: "XMITQ"}.get(_int(item.get(MQIA_USAGE)), "")
        queue.description = _text(item.get(MQCA_Q_DESC, ""))
    for item in queue_status:
        name = _text(item.get(MQCA_Q_NAME, ""))
        if not name:
            continue
        queue = by_name.setdefault(name, QueueStatus(name))
        queue.depth = _int(item.get(MQIA_CURRENT_Q_DEPTH))
        queue.open_input = _int(item.get(MQIA_OPEN_INPUT_COUNT))
        queue.open_output = _int(item.get(MQIA_OPEN_OUTPUT_COUNT))
        age = _number(item.get(MQIACF_OLDEST_MSG_AGE))
        queue.oldest_message_age = float(age) if age is not None else None  # -1: monitoring off
        queue.last_put = _when(item.get(MQCACF_LAST_PUT_DATE), item.get(MQCACF_LAST_PUT_TIME))
        queue.last_get = _when(item.get(MQCACF_LAST_GET_DATE), item.get(MQCACF_LAST_GET_TIME))
        queue.qtime_short, queue.qtime_long = _pair(item.get(MQIACF_Q_TIME_INDICATOR), first_is_long=False)
        queue.uncommitted = _number(item.get(MQIACF_UNCOMMITTED_MSGS))
        queue.file_size_mb = _number(item.get(MQIACF_CUR_Q_FILE_SIZE))
        queue.file_max_size_mb = _number(item.get(MQIACF_CUR_MAX_FILE_SIZE))
        queue.monitoring = _word(MQMON_WORDS, item.get(MQIACF_MONITORING))
    chstatus = channel_status_from_pcf(channel_status, first_is_long)
    definitions = None
    if channel_definitions is not None:
        definitions = [d for d in (definition_from_pcf(item) for item in channel_definitions) if d is not None]
    snap = QmgrSnapshot(qmgr=qmgr, status=status, queues=sorted(by_name.values(), key=lambda q: q.name),
                        channels=chstatus.channels, channel_definitions=definitions, health=health)
    if chstatus.error:  # an answer that cannot be read is not "no channel running"
        snap.source_errors["chstatus"] = chstatus.error
    return snap


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


@dataclass(frozen=True)
class PcfTls:
    """TLS of the client connection (checked by the queue manager entry's validation before it gets here).

    ``ccdt``: a file:// (or http(s)/ftp) URL of a JSON or binary CCDT, passed as MQCNO.CCDTUrl (MQCCDTURL); the
    channel, its connection name and its cipher then come from the CCDT entry.  ``key_repository``: MQSCO
    KeyRepository (MQSSLKEYR), the key database's path without ``.kdb``.  ``cipher_spec``: MQCD.SSLCipherSpec.
    ``certificate_label``: MQSCO CertificateLabel (the client's certificate; default ibmwebspheremq<user>)."""

    ccdt: str | None = None
    key_repository: str | None = None
    cipher_spec: str | None = None
    certificate_label: str | None = None


class IbmmqAdapter:
    """The PCF inquiries through ``ibmmq`` over a client connection (plain, TLS, or from a CCDT)."""

    def __init__(self, qmgr: str, channel: str, conn_name: str, user: str | None, password: str | None,
                 timeout: float, tls: PcfTls | None = None) -> None:
        ibmmq = load_ibmmq()
        self.ibmmq = ibmmq
        tls = tls or PcfTls()
        kwargs: dict[str, Any] = {}
        if tls.ccdt:
            # no MQCD: an MQCD passed beside the CCDT would win over it (MQCONNX's order: MQCD, then CCDT)
            cno = ibmmq.CNO()
            if not hasattr(cno, "CCDTUrl"):  # the MQ client library predates MQCNO version 6 (MQ 9.0)
                raise BackendNotAvailable("MQ client library too old for a CCDT URL (needs MQ 9.0 or later)")
            cno.Version = max(cno.Version, MQCNO_VERSION_6)
            cno.Options |= MQCNO_CLIENT_BINDING
            cno.CCDTUrl = tls.ccdt.encode()
            kwargs["cno"] = cno
        else:
            cd = ibmmq.CD()
            cd.ChannelName = channel.encode()
            cd.ConnectionName = conn_name.encode()
            cd.ChannelType = ibmmq.CMQXC.MQCHT_CLNTCONN
            cd.TransportType = ibmmq.CMQXC.MQXPT_TCP
            if tls.cipher_spec:
                cd.SSLCipherSpec = tls.cipher_spec.encode()  # ibmmq raises MQCD.Version to 7 for it
            kwargs["cd"] = cd
        if tls.key_repository or tls.certificate_label:
            sco = ibmmq.SCO()
            if tls.key_repository:
                sco.KeyRepository = tls.key_repository.encode()
            if tls.certificate_label:
                sco.CertificateLabel = tls.certificate_label.encode()
            kwargs["sco"] = sco
        self.qm = ibmmq.QueueManager(None)
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
        return self._inquire("MQCMD_INQUIRE_Q_MGR_STATUS", {MQIACF_Q_MGR_STATUS_ATTRS: [MQIACF_ALL]})

    def native_ha_status(self) -> list[dict] | None:
        """DISPLAY QMSTATUS TYPE(NATIVEHA) as PCF; None when the queue manager answers that it is not Native HA
        (MQRCCF_NHA_NOT_AVAILABLE).  Any other MQ error is raised: the caller makes it the source's failure."""
        try:
            return list(self.pcf.MQCMD_INQUIRE_Q_MGR_STATUS({
                MQIACF_Q_MGR_STATUS_INFO_TYPE: MQIACF_Q_MGR_STATUS_INFO_NHA,
                MQIACF_Q_MGR_STATUS_ATTRS: [MQIACF_ALL]}))
        except self.ibmmq.MQMIError as exc:
            if getattr(exc, "reason", None) == MQRCCF_NHA_NOT_AVAILABLE:
                return None
            raise

    def qmgr_attributes(self) -> list[dict]:
        return self._inquire("MQCMD_INQUIRE_Q_MGR", {MQIACF_Q_MGR_ATTRS: [
            MQCA_VERSION, MQIA_COMMAND_LEVEL, MQCA_Q_MGR_IDENTIFIER, MQIA_PLATFORM, MQCA_DEAD_LETTER_Q_NAME,
            MQIA_MAX_HANDLES]})

    def queue_status(self) -> list[dict]:
        return self._inquire("MQCMD_INQUIRE_Q_STATUS", {MQCA_Q_NAME: b"*", MQIACF_Q_STATUS_TYPE: MQIACF_Q_STATUS,
                                                        MQIACF_Q_STATUS_ATTRS: [MQIACF_ALL]},
                             (MQRC_UNKNOWN_OBJECT_NAME,))

    def queues(self) -> list[dict]:
        return self._inquire("MQCMD_INQUIRE_Q", {MQCA_Q_NAME: b"*", MQIA_Q_TYPE: MQQT_LOCAL, MQIACF_Q_ATTRS: [
            MQCA_Q_NAME, MQIA_Q_TYPE, MQIA_MAX_Q_DEPTH, MQIA_USAGE, MQCA_Q_DESC]}, (MQRC_UNKNOWN_OBJECT_NAME,))

    def channel_status(self) -> list[dict]:
        return self._inquire("MQCMD_INQUIRE_CHANNEL_STATUS", {
            MQCACH_CHANNEL_NAME: b"*", MQIACH_CHANNEL_INSTANCE_TYPE: MQOT_CURRENT_CHANNEL,
            MQIACH_CHANNEL_INSTANCE_ATTRS: [MQIACF_ALL]}, (MQRCCF_CHL_STATUS_NOT_FOUND,))

    def channel_definitions(self) -> list[dict]:
        return self._inquire("MQCMD_INQUIRE_CHANNEL", {MQCACH_CHANNEL_NAME: b"*", MQIACF_CHANNEL_ATTRS: [
            MQCACH_CHANNEL_NAME, MQIACH_CHANNEL_TYPE, MQIACH_MAX_INSTANCES, MQIACH_MAX_INSTS_PER_CLIENT,
            MQCACH_DESC, MQCACH_XMIT_Q_NAME]}, (MQRCCF_CHANNEL_NOT_FOUND,))

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
                 statistics: str = "off", statistics_max_queues: int = 50, monitor_interval: float = 10.0,
                 tls: PcfTls | None = None) -> None:
        self.qmgr = qmgr
        self._args = (qmgr, channel, conn_name, user, password, timeout)
        self._tls = tls if tls is not None and any(vars(tls).values()) else None
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
                self._adapter = self._factory(*self._args, **({"tls": self._tls} if self._tls else {}))
            a = self._adapter
            qmgr_status = a.qmgr_status()
            attributes = a.qmgr_attributes() if qmgr_status else []
            snap = snapshot_from_pcf(self.qmgr, qmgr_status, a.queue_status(), a.queues(), a.channel_status(),
                                     a.channel_definitions(), attributes)
            if qmgr_status:
                self._native_ha(snap, qmgr_status, attributes)
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

    def _native_ha(self, snap: QmgrSnapshot, qmgr_status: list[dict], attributes: list[dict]) -> None:
        """Native HA instances (issue 39), as the runmqsc back-end reads them: "not Native HA" (the queue manager
        says MQRCCF_NHA_NOT_AVAILABLE, or no instance answers, or its command level predates Native HA) gives no
        series and no error; any other MQ error, or no answer where the status names a Native HA instance, is the
        ``nativeha`` source's failure while the rest of the snapshot stands."""
        level = _int(attributes[0].get(MQIA_COMMAND_LEVEL)) if attributes else None
        if level is not None and level < NHA_COMMAND_LEVEL:
            return
        try:
            items = self._adapter.native_ha_status()
        except Exception as exc:  # noqa: BLE001 - MQMIError and friends: only this source fails
            reason = getattr(exc, "reason", None)
            detail = f"MQRC {reason}" if reason is not None else type(exc).__name__
            snap.source_errors["nativeha"] = self._secret_free(
                f"INQUIRE_Q_MGR_STATUS (Native HA) failed ({detail}): {exc}")[:300]
            return
        snap.native_ha = native_ha_from_pcf(items or [])
        configured = any(_text(item.get(MQCACF_NHA_INSTANCE_NAME, "")) for item in qmgr_status)
        if snap.native_ha is None and configured:
            snap.source_errors["nativeha"] = ("INQUIRE_Q_MGR_STATUS (Native HA): no instance in the answer, but the "
                                              "queue manager status names a Native HA instance")

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


# Field widths of MQCD.SSLCipherSpec, MQSCO.KeyRepository and MQSCO.CertificateLabel (cmqxc.h / cmqc.h: MQ_SSL_
# CIPHER_SPEC_LENGTH 32, MQ_SSL_KEY_REPOSITORY_LENGTH 256, MQ_CERT_LABEL_LENGTH 64); ibmmq packs the structures with
# struct.pack, which cuts longer values short without a word, so they are refused here.
_WIDTHS = {"cipher_spec": 32, "key_repository": 256, "certificate_label": 64}
_CCDT_SCHEMES = ("file://", "http://", "https://", "ftp://")


def tls_settings(ccdt: str | None, key_repository: str | None, cipher_spec: str | None,
                 certificate_label: str | None, channel: str | None = None,
                 conn_name: str | None = None) -> PcfTls:
    """The PCF connection's TLS settings of a queue manager entry, checked: ValueError names the key and why.

    A CCDT given as a path becomes a file:// URL (what MQCNO.CCDTUrl takes); a key repository given with its
    ``.kdb`` is taken without it (MQ adds it); both are made absolute, so the exporter's working directory does
    not matter later."""
    from pathlib import Path  # noqa: PLC0415 - only for queue managers using PCF over TLS

    for key, value in (("cipher_spec", cipher_spec), ("key_repository", key_repository),
                       ("certificate_label", certificate_label)):
        if value is not None and len(value) > _WIDTHS[key]:
            raise ValueError(f"{key}: longer than MQ's {_WIDTHS[key]} characters")
    url = None
    if ccdt:
        if channel or conn_name:
            raise ValueError("ccdt: set either ccdt or channel/conn_name, not both (the CCDT entry names the "
                             "channel and its connection, and an MQCD beside it would override the CCDT)")
        if cipher_spec:
            raise ValueError("cipher_spec: not with ccdt (the cipher is the SSLCIPH of the CCDT's channel entry)")
        if ccdt.lower().startswith(_CCDT_SCHEMES[1:]):
            url = ccdt
        else:
            if "://" in ccdt and not ccdt.lower().startswith("file://"):
                raise ValueError(f"ccdt: {ccdt.split('://')[0]}:// is not a CCDT location MQ reads (file, http, "
                                 "https, ftp)")
            path = Path(ccdt[len("file://"):] if ccdt.lower().startswith("file://") else ccdt).absolute()
            if not path.is_file():
                raise ValueError(f"ccdt: {path} does not exist or is not a file")
            url = path.as_uri()
    if (cipher_spec or certificate_label) and not key_repository:
        key = "cipher_spec" if cipher_spec else "certificate_label"
        raise ValueError(f"{key}: needs key_repository (the client's key database holding the CA certificates "
                         "and any client certificate; without it MQ fails the connection with MQRC 2381)")
    stem = None
    if key_repository:
        base = key_repository[:-4] if key_repository.lower().endswith(".kdb") else key_repository
        stem_path = Path(base).absolute()
        for suffix, what in ((".kdb", "key database"), (".sth", "stash file holding its password")):
            if not stem_path.with_name(stem_path.name + suffix).is_file():
                raise ValueError(f"key_repository: {stem_path}{suffix} ({what}) does not exist")
        stem = str(stem_path)
        if len(stem) > _WIDTHS["key_repository"]:
            raise ValueError(f"key_repository: {stem} is longer than MQ's 256 characters")
    return PcfTls(ccdt=url, key_repository=stem, cipher_spec=cipher_spec or None,
                  certificate_label=certificate_label or None)
