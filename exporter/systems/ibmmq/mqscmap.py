"""One mapping from MQSC attribute keywords to the model (:mod:`.model`), shared by the runmqsc and REST back-ends.

Every function takes a mapping of **upper-case** MQSC keyword -> value: the text runmqsc prints (already split
into ``{"CURDEPTH": "17", "QTIME": "999999999, 999999999"}`` by :func:`.parse.parse_mqsc`) or the scalar a
runCommandJSON answer carries (its lower-case keys upper-cased by the caller; numbers may be JSON numbers, pairs a
``"a, b"`` string or a two-item list).  A key that is missing, blank or not a number leaves the field None ("not
read"), never 0.

Facts used (sources in ``docs/notes/mq-health-design.md``):

* Dates are ``YYYY-MM-DD``; times ``HH.MM.SS`` (QSTATUS, CHSTATUS, QMSTATUS STARTTI) or ``HH:MM:SS`` (LOGSTRTI in
  the 9.4.2 QMSTATUS capture).  They are the queue manager's local time: naive ``datetime`` objects.
* Short/long pairs (QTIME, XQTIME, NETTIME, XBATCHSZ) are printed short first, long second: IBM Docs "DISPLAY
  CHSTATUS" (q086090_) and "DISPLAY QSTATUS" (q086260_) describe the two values in that order.  mqmetric swaps
  the channel indicators only for *PCF* on Distributed (an IBM PCF defect); runmqsc text is taken as documented.
* 999999999 is the largest value runmqsc shows (IBM Docs DISPLAY QSTATUS, QTIME and MSGAGE: "the maximum displayable
  value is 999999999"; DISPLAY CHSTATUS on z/OS: any numeric parameter over 999,999,999): a figure at the cap is kept
  as it is ("at least"), only a blank is "no data".
* ``MONCHL(OFF)`` in a channel status: the monitoring figures (XQTIME, NETTIME, XBATCHSZ, XQMSGSA) were not measured
  (IBM Docs "Attributes that control real-time monitoring": with monitoring off "no monitoring information is held
  in these monitoring attributes"), although runmqsc prints ``NETTIME(0,0)``: None, never 0.
* UNCOM prints ``NO``/``YES`` on Linux (devserver capture) and, where a count is given, the count.
* QMSTATUS prints ``SHARED`` for LOGFSSZ/LOGFSUSE (and DATFSSZ/DATFSUSE) when that file system is the queue
  manager's own: no separate figure, so None; the queue manager file system's QMFSSZ/QMFSUSE then cover it.
* CURRLOG/MEDIALOG/RECLOG/ARCHLOG are extent file names ``Snnnnnnn.LOG``: the number n (blank with circular logging).

Hand-written: no library maps MQSC keywords (see :mod:`.parse`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from ...machine.numbers import integer
from .model import (
    CHANNEL_INSTANCE_TYPE_CODES,
    ChannelDefinition,
    ChannelState,
    NativeHaInstance,
    QmgrHealth,
    QueueStatus,
    channel_type_word,
)

_INT64 = 2**63
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_TIME = re.compile(r"(\d{2})[.:](\d{2})[.:](\d{2})")
_EXTENT = re.compile(r"[A-Za-z](\d{1,9})\.LOG", re.IGNORECASE)

# Attributes only a channel *status* shows (never DISPLAY CHANNEL): a channel block with any of them, or with
# STATUS, is a status instance; one without is a definition (a status block cut off after CHLTYPE stays ambiguous).
_STATUS_ONLY = frozenset({
    "STATUS", "CURRENT", "SAVED", "SHORT", "SUBSTATE", "MCASTAT", "STOPREQ", "CHSTADA", "CHSTATI", "MSGS",
    "BUFSSENT", "BUFSRCVD", "BYTSSENT", "BYTSRCVD", "BATCHES", "LSTMSGDA", "LSTMSGTI", "INDOUBT", "CURMSGS",
    "CURSEQNO", "LSTSEQNO", "CURLUWID", "LSTLUWID", "COMPRATE", "COMPTIME", "EXITTIME", "XQTIME", "NETTIME",
    "XBATCHSZ", "XQMSGSA", "CURSHCNV", "JOBNAME", "RQMNAME", "SHORTRTS", "LONGRTS", "RVERSION", "RPRODUCT",
    "RAPPLTAG", "SECPROT", "SSLCERTI", "SSLKEYDA", "SSLKEYTI", "SSLRKEYS",
})
# Attributes of DISPLAY QMSTATUS / DISPLAY QMGR that make a block the queue manager's.
_QMGR_KEYS = frozenset({"QMNAME"})


# ---- values -----------------------------------------------------------------------------------------------------

def to_int(value: Any) -> int | None:
    """An integer from a JSON number or numeric text; anything else (blank, text, bool, fraction, beyond a
    64-bit integer) -> None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value if -_INT64 <= value < _INT64 else None  # MQ's integers are 64-bit at most
    if isinstance(value, float):
        return int(value) if value.is_integer() and -_INT64 <= value < _INT64 else None
    if isinstance(value, str):
        number = integer(value.strip(), "+-", 19)  # the strict reader (machine/numbers.py); blank: absent
        if number is not None:
            return number if -_INT64 <= number < _INT64 else None
    return None


def to_age(value: Any) -> float | None:
    """MSGAGE in seconds; blank (monitoring off), negative (-1) or garbage -> None."""
    number = to_int(value)
    if number is None or number < 0:
        return None
    return float(number)


def text(value: Any) -> str:
    """A text attribute, stripped; numbers as their digits; anything else ''."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return ""


def to_count(value: Any) -> int | None:
    """A count that cannot be negative (MSGS, BYTSSENT, ...): None for blanks, garbage and negatives."""
    number = to_int(value)
    return number if number is not None and number >= 0 else None


def to_percent(value: Any) -> float | None:
    """A percentage (LOGINUSE, QMFSUSE): None for blank, ``SHARED`` and garbage."""
    number = to_int(value)
    return float(number) if number is not None and number >= 0 else None


def pair(value: Any) -> tuple[int | None, int | None]:
    """(short, long) of a two-value attribute: ``"12, 34"``, ``"12,34"``, ``" , "``, ``[12, 34]`` or absent."""
    if isinstance(value, (list, tuple)):
        items = list(value)
    elif isinstance(value, str):
        items = value.split(",")
    else:
        return None, None
    if len(items) != 2:
        return None, None
    first, second = (to_count(v) for v in items)
    return first, second


def timestamp(date: Any, time: Any) -> datetime | None:
    """``YYYY-MM-DD`` + ``HH.MM.SS`` or ``HH:MM:SS`` as a naive datetime (the queue manager's local time); blank,
    malformed or impossible (2025-02-30) -> None."""
    date_match = _DATE.fullmatch(text(date))
    time_match = _TIME.fullmatch(text(time))
    if date_match is None or time_match is None:
        return None
    try:
        return datetime(*(int(g) for g in date_match.groups()), *(int(g) for g in time_match.groups()))
    except ValueError:
        return None


def uncommitted(value: Any) -> int | None:
    """UNCOM: ``NO`` -> 0, ``YES`` -> 1, a count -> the count; blank or garbage -> None."""
    word = text(value).upper()
    if word == "NO":
        return 0
    if word == "YES":
        return 1
    return to_count(value)


def yes_no(value: Any) -> bool | None:
    word = text(value).upper()
    return True if word == "YES" else False if word == "NO" else None


def log_extent(value: Any) -> int | None:
    """``S0000123.LOG`` -> 123; blank (circular logging) or anything else -> None."""
    match = _EXTENT.fullmatch(text(value))
    return int(match.group(1)) if match else None


# ---- one object -------------------------------------------------------------------------------------------------

def update_queue(queue: QueueStatus, fields: Mapping[str, Any]) -> QueueStatus:
    """Fill ``queue`` from the keywords of one QSTATUS or QLOCAL answer (only the keys present are touched)."""
    if "LPUTDATE" in fields or "LPUTTIME" in fields:
        queue.last_put = timestamp(fields.get("LPUTDATE"), fields.get("LPUTTIME"))
    if "LGETDATE" in fields or "LGETTIME" in fields:
        queue.last_get = timestamp(fields.get("LGETDATE"), fields.get("LGETTIME"))
    if "QTIME" in fields:
        queue.qtime_short, queue.qtime_long = pair(fields["QTIME"])  # 999999999 kept: at least that long
    return _fill(queue, fields, _QUEUE_FIELDS)


def _fill(target: Any, fields: Mapping[str, Any], table: tuple[tuple[str, str, Any], ...]) -> Any:
    """Set each attribute of ``table`` whose keyword the answer has, through its converter; the others stay."""
    for key, attr, convert in table:
        if key in fields:
            setattr(target, attr, convert(fields[key]))
    return target


def _upper(value: Any) -> str:
    return text(value).upper()


_QUEUE_FIELDS: tuple[tuple[str, str, Any], ...] = (
    ("CURDEPTH", "depth", to_int),
    ("MAXDEPTH", "max_depth", to_int),
    ("IPPROCS", "open_input", to_int),
    ("OPPROCS", "open_output", to_int),
    ("MSGAGE", "oldest_message_age", to_age),
    ("UNCOM", "uncommitted", uncommitted),
    ("CURFSIZE", "file_size_mb", to_count),
    ("CURMAXFS", "file_max_size_mb", to_count),
    ("MONQ", "monitoring", _upper),
    ("USAGE", "usage", _upper),
    ("DESCR", "description", text),
)


def queue_status(fields: Mapping[str, Any]) -> QueueStatus | None:
    """A QueueStatus from one QSTATUS or QLOCAL answer; None without a QUEUE name."""
    name = text(fields.get("QUEUE"))
    return update_queue(QueueStatus(name=name), fields) if name else None


def channel_state(fields: Mapping[str, Any]) -> ChannelState | None:
    """One channel instance from a CHSTATUS answer; None without a CHANNEL name.  A missing STATUS is UNKNOWN."""
    name = text(fields.get("CHANNEL"))
    if not name:
        return None
    monitoring = _upper(fields.get("MONCHL"))
    measured = monitoring != "OFF"  # MONCHL(OFF): the zeros runmqsc prints were never measured
    xq_short, xq_long = pair(fields.get("XQTIME")) if measured else (None, None)
    net_short, net_long = pair(fields.get("NETTIME")) if measured else (None, None)
    batch_short, batch_long = pair(fields.get("XBATCHSZ")) if measured else (None, None)
    chltype = text(fields.get("CHLTYPE"))
    instance = next((word for word in CHANNEL_INSTANCE_TYPE_CODES if word in fields), "")
    return ChannelState(
        name=name, status=(text(fields.get("STATUS")) or "UNKNOWN").upper(),
        type=channel_type_word(chltype) if chltype else "", connection=text(fields.get("CONNAME")),
        substate=text(fields.get("SUBSTATE")).upper(), indoubt=yes_no(fields.get("INDOUBT")),
        messages=to_count(fields.get("MSGS")), bytes_sent=to_count(fields.get("BYTSSENT")),
        bytes_received=to_count(fields.get("BYTSRCVD")), buffers_sent=to_count(fields.get("BUFSSENT")),
        buffers_received=to_count(fields.get("BUFSRCVD")), batches=to_count(fields.get("BATCHES")),
        last_message=timestamp(fields.get("LSTMSGDA"), fields.get("LSTMSGTI")),
        started=timestamp(fields.get("CHSTADA"), fields.get("CHSTATI")),
        xmitq_time_short=xq_short, xmitq_time_long=xq_long,
        network_time_short=net_short, network_time_long=net_long,
        batch_size_short=batch_short, batch_size_long=batch_long,
        remote_qmgr=text(fields.get("RQMNAME")), job_name=text(fields.get("JOBNAME")),
        ssl_cipher=text(fields.get("SSLCIPH")), sharing_conversations=to_count(fields.get("CURSHCNV")),
        short_retries_left=to_count(fields.get("SHORTRTS")), long_retries_left=to_count(fields.get("LONGRTS")),
        xmitq_messages_available=to_count(fields.get("XQMSGSA")) if measured else None,
        monitoring=monitoring, instance_type=instance, security_protocol=_upper(fields.get("SECPROT")))


def channel_definition(fields: Mapping[str, Any]) -> ChannelDefinition | None:
    """One defined channel from a DISPLAY CHANNEL answer; None without a CHANNEL name."""
    name = text(fields.get("CHANNEL"))
    if not name:
        return None
    chltype = text(fields.get("CHLTYPE"))
    return ChannelDefinition(
        name=name, type=channel_type_word(chltype) if chltype else "",
        max_instances=to_count(fields.get("MAXINST")), max_instances_per_client=to_count(fields.get("MAXINSTC")),
        description=text(fields.get("DESCR")), xmit_queue=text(fields.get("XMITQ")))


def update_health(health: QmgrHealth, fields: Mapping[str, Any]) -> QmgrHealth:
    """Fill ``health`` from a DISPLAY QMSTATUS or DISPLAY QMGR answer (only the keys present are touched)."""
    if "STARTDA" in fields or "STARTTI" in fields:
        health.started = timestamp(fields.get("STARTDA"), fields.get("STARTTI"))
    if "LOGSTRDA" in fields or "LOGSTRTI" in fields:
        health.log_started = timestamp(fields.get("LOGSTRDA"), fields.get("LOGSTRTI"))
    return _fill(health, fields, _HEALTH_FIELDS)


_HEALTH_FIELDS: tuple[tuple[str, str, Any], ...] = (
    ("CONNS", "connections", to_count),
    ("CMDSERV", "command_server", _upper),
    ("CHINIT", "channel_initiator", _upper),
    ("LOGINUSE", "log_in_use_percent", to_percent),
    ("LOGUTIL", "log_utilization_percent", to_percent),
    ("CURRLOG", "log_extent_current", log_extent),
    ("MEDIALOG", "log_extent_media", log_extent),
    ("RECLOG", "log_extent_restart", log_extent),
    ("ARCHLOG", "log_extent_archive", log_extent),
    ("ARCHSZ", "log_size_archive_mb", to_count),
    ("REUSESZ", "log_size_reusable_mb", to_count),
    ("MEDIASZ", "log_size_media_mb", to_count),
    ("RECSZ", "log_size_restart_mb", to_count),
    ("LOGFSSZ", "log_fs_size_mb", to_count),  # SHARED (on the queue manager's file system) -> None
    ("LOGFSUSE", "log_fs_in_use_percent", to_percent),
    ("QMFSSZ", "qm_fs_size_mb", to_count),
    ("QMFSUSE", "qm_fs_in_use_percent", to_percent),
    ("VERSION", "version", text),
    ("CMDLEVEL", "command_level", text),
    ("QMID", "qmid", text),
    ("PLATFORM", "platform", _upper),
    ("DEADQ", "dead_letter_queue", text),
    ("MAXHANDS", "max_handles", to_count),
)


# ---- runmqsc blocks (or answers) by kind -----------------------------------------------------------------------

def is_channel(fields: Mapping[str, Any]) -> bool:
    return "CHANNEL" in fields and "QUEUE" not in fields


def is_channel_status(fields: Mapping[str, Any]) -> bool:
    """A CHSTATUS block: a channel block with a STATUS (or another attribute only status shows)."""
    return is_channel(fields) and any(key in fields for key in _STATUS_ONLY)


def is_queue_manager(fields: Mapping[str, Any]) -> bool:
    """A DISPLAY QMSTATUS or DISPLAY QMGR block."""
    return "QMNAME" in fields and "QUEUE" not in fields and "CHANNEL" not in fields


def queues(blocks: Iterable[Mapping[str, Any]]) -> list[QueueStatus]:
    """Queues merged by name (status and definition blocks), in first-seen order."""
    merged: dict[str, QueueStatus] = {}
    for block in blocks:
        name = text(block.get("QUEUE"))
        if not name or is_channel(block):
            continue
        update_queue(merged.setdefault(name, QueueStatus(name=name)), block)
    return list(merged.values())


def channels(blocks: Iterable[Mapping[str, Any]]) -> list[ChannelState]:
    """One entry per channel instance, in order; blocks without a STATUS (definitions, cut-off blocks) skipped."""
    found = []
    for block in blocks:
        if is_channel(block) and text(block.get("STATUS")):
            channel = channel_state(block)
            if channel is not None:
                found.append(channel)
    return found


def channel_definitions(blocks: Iterable[Mapping[str, Any]]) -> list[ChannelDefinition]:
    """The defined channels (channel blocks with no status attribute), in order."""
    found = []
    for block in blocks:
        if is_channel(block) and not is_channel_status(block):
            definition = channel_definition(block)
            if definition is not None:
                found.append(definition)
    return found


def health(blocks: Iterable[Mapping[str, Any]]) -> QmgrHealth | None:
    """QmgrHealth from the QMSTATUS and QMGR blocks; None when there is neither."""
    result: QmgrHealth | None = None
    for block in blocks:
        if is_queue_manager(block):
            result = update_health(result if result is not None else QmgrHealth(), block)
    return result


def upper_keys(params: Mapping[str, Any]) -> dict[str, Any]:
    """A runCommandJSON ``parameters`` object with its (lower-case) keys upper-cased, for the functions above."""
    return {str(key).upper(): value for key, value in params.items()}


# ---- Native HA (DISPLAY QMSTATUS TYPE(NATIVEHA); issue 39) -----------------------------------------------------

def is_native_ha(fields: Mapping[str, Any]) -> bool:
    """A DISPLAY QMSTATUS TYPE(NATIVEHA) instance block (NHATYPE(GROUP) blocks of cross-region replication have
    GRPNAME, not INSTANCE, and are not read)."""
    return _upper(fields.get("TYPE")) == "NATIVEHA" and bool(text(fields.get("INSTANCE")))


def native_ha_instance(fields: Mapping[str, Any]) -> NativeHaInstance:
    return NativeHaInstance(
        name=text(fields.get("INSTANCE")), role=_upper(fields.get("ROLE")), in_sync=yes_no(fields.get("INSYNC")),
        backlog_kb=to_count(fields.get("BACKLOG")), connected=yes_no(fields.get("CONNACTV")),
        status=_upper(fields.get("HASTATUS")))


def native_ha(blocks: Iterable[Mapping[str, Any]]) -> list[NativeHaInstance] | None:
    """The Native HA instances of the answer, in order (one per instance name); None when there is none."""
    found: dict[str, NativeHaInstance] = {}
    for block in blocks:
        if is_native_ha(block):
            instance = native_ha_instance(block)
            found.setdefault(instance.name, instance)
    return list(found.values()) or None
