"""GENERATOR (test data, not a capture): IBM MQ resource-statistics publications built field by field.

No captured publication bytes are public (see tests/systems/ibmmq/fixtures/real/SOURCE.md), so the tests build them here
in the documented layout: an MQCFH (9 MQLONGs: Type, StrucLength 36, Version 1, Command, MsgSeqNumber, Control,
CompCode, Reason, ParameterCount) followed by MQCFIN (Type 3, StrucLength 16, Parameter, Value), MQCFIN64 (Type 23,
StrucLength 24, Parameter, Reserved, Value), MQCFST (Type 4, StrucLength, Parameter, CodedCharSetId,
StringLength, String padded to a multiple of 4) and MQCFGR (Type 20, StrucLength 16, Parameter, ParameterCount,
members following), little-endian as on x86.  Which structures each message holds follows IBM's amqsrua sample
(the fields it reads from CLASSES, TYPES, element metadata and data publications).  The classes, types, element
ids, datatypes and descriptions are not made up: they are read from the genuine amqsrua debug trace of a 9.4.1
queue manager (tests/systems/ibmmq/fixtures/real/amqsrua_debug_metadata_9.4.1_perf0_cphtestp.txt).

Not known from any public source and therefore chosen: the MQCFH Type and Command of these publications (the
decoder, like amqsrua and mq-golang, ignores them), whether element values are MQCFIN or MQCFIN64 (both are
decoded; CFIN64 by default), and the order of the header parameters.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from pathlib import Path

REAL_TRACE = (Path(__file__).resolve().parents[2] / "systems" / "ibmmq" / "fixtures" / "real"
              / "amqsrua_debug_metadata_9.4.1_perf0_cphtestp.txt")

MQCFT_INTEGER, MQCFT_STRING, MQCFT_GROUP, MQCFT_INTEGER64, MQCFT_STATISTICS = 3, 4, 20, 23, 21
MQCFC_LAST = 1
MQCA_Q_MGR_NAME, MQCA_Q_NAME, MQCA_TOPIC_STRING, MQIACF_OBJECT_TYPE, MQOT_Q = 2015, 2016, 2094, 1016, 1
MQIAMO_MONITOR_CLASS, MQIAMO_MONITOR_TYPE, MQIAMO_MONITOR_ELEMENT = 839, 840, 841
MQIAMO_MONITOR_DATATYPE, MQIAMO_MONITOR_FLAGS, MQIAMO64_MONITOR_INTERVAL = 842, 843, 845
MQCAMO_MONITOR_CLASS, MQCAMO_MONITOR_TYPE, MQCAMO_MONITOR_DESC = 2713, 2714, 2715
MQGACF_MONITOR_CLASS, MQGACF_MONITOR_TYPE, MQGACF_MONITOR_ELEMENT = 8015, 8016, 8017


@dataclass
class Elem:
    id: int
    datatype: int
    description: str


@dataclass
class Type:
    id: int
    name: str
    description: str
    data_topic: str = ""  # with PERF0 replaced by the queue manager's name when built
    elements: dict[int, Elem] = field(default_factory=dict)


@dataclass
class Class:
    id: int
    name: str
    description: str
    types: dict[int, Type] = field(default_factory=dict)


def real_metadata(path: Path = REAL_TRACE) -> dict[int, Class]:
    """Classes, types and elements as the traced queue manager listed them."""
    classes: dict[int, Class] = {}
    for line in path.read_text().splitlines():
        m = re.match(r"Register Class: (\d{4}) +(\S+) (.*)$", line)
        if m:
            classes[int(m[1])] = Class(int(m[1]), m[2], m[3].strip())
            continue
        m = re.match(r"Register Type : (\d{4}) (\d{4}) +(\S+) (.*)$", line)
        if m:
            classes[int(m[1])].types[int(m[2])] = Type(int(m[2]), m[3], m[4].strip())
            continue
        m = re.match(r"Register Elem :(\d{4}) (\d{4}) (\d{4}) (\d+) (.*)$", line)
        if m:
            classes[int(m[1])].types[int(m[2])].elements[int(m[3])] = Elem(int(m[3]), int(m[4]), m[5].strip())
            continue
        m = re.match(r"Update Type   :(\d{4}) (\d{4}) (\S+)$", line)
        if m:
            classes[int(m[1])].types[int(m[2])].data_topic = m[3]
    return classes


# ---- structures ------------------------------------------------------------------------------------------------

def cfin(parameter: int, value: int) -> bytes:
    return struct.pack("<4i", MQCFT_INTEGER, 16, parameter, value)


def cfin64(parameter: int, value: int) -> bytes:
    return struct.pack("<4iq", MQCFT_INTEGER64, 24, parameter, 0, value)


def cfst(parameter: int, text: str, ccsid: int = 1208) -> bytes:
    raw = text.encode("utf-8")
    padded = raw + b"\0" * (-len(raw) % 4)
    return struct.pack("<5i", MQCFT_STRING, 20 + len(padded), parameter, ccsid, len(raw)) + padded


def cfgr(parameter: int, members: list[bytes]) -> bytes:
    return struct.pack("<4i", MQCFT_GROUP, 16, parameter, len(members)) + b"".join(members)


def message(params: list[bytes], *, cf_type: int = MQCFT_STATISTICS, command: int = 0, seq: int = 1) -> bytes:
    """An MQCFH with ParameterCount = the top-level structures (a group counts once), then the parameters."""
    header = struct.pack("<9i", cf_type, 36, 1, command, seq, MQCFC_LAST, 0, 0, len(params))
    return header + b"".join(params)


# ---- messages ----------------------------------------------------------------------------------------------------

def _topic(qmgr: str, *parts: str) -> str:
    return "/".join(("$SYS/MQ/INFO/QMGR", qmgr, "Monitor", *parts))


def classes_message(meta: dict[int, Class], qmgr: str) -> bytes:
    groups = []
    for cls in meta.values():
        flags = 1 if cls.name in ("STATQ", "STATAPP", "NHAREPLICA") else 0  # MQIAMO_MONITOR_FLAGS_OBJNAME
        groups.append(cfgr(MQGACF_MONITOR_CLASS, [
            cfin(MQIAMO_MONITOR_CLASS, cls.id), cfin(MQIAMO_MONITOR_FLAGS, flags),
            cfst(MQCAMO_MONITOR_CLASS, cls.name), cfst(MQCAMO_MONITOR_DESC, cls.description),
            cfst(MQCA_TOPIC_STRING, _topic(qmgr, "METADATA", cls.name, "TYPES"))]))
    return message(groups)


def types_message(meta: dict[int, Class], qmgr: str, class_name: str) -> bytes:
    cls = next(c for c in meta.values() if c.name == class_name)
    params = [cfin(MQIAMO_MONITOR_CLASS, cls.id), cfin(MQIAMO_MONITOR_FLAGS, 1 if class_name == "STATQ" else 0)]
    for t in cls.types.values():
        params.append(cfgr(MQGACF_MONITOR_TYPE, [
            cfin(MQIAMO_MONITOR_TYPE, t.id), cfst(MQCAMO_MONITOR_TYPE, t.name),
            cfst(MQCAMO_MONITOR_DESC, t.description),
            cfst(MQCA_TOPIC_STRING, _topic(qmgr, "METADATA", cls.name, t.name))]))
    return message(params)


def elements_message(meta: dict[int, Class], qmgr: str, class_name: str, type_name: str) -> bytes:
    cls = next(c for c in meta.values() if c.name == class_name)
    t = next(t for t in cls.types.values() if t.name == type_name)
    topic = t.data_topic.replace("/QMGR/PERF0/", f"/QMGR/{qmgr}/")
    params = [cfin(MQIAMO_MONITOR_CLASS, cls.id), cfin(MQIAMO_MONITOR_TYPE, t.id), cfst(MQCA_TOPIC_STRING, topic)]
    for e in t.elements.values():
        params.append(cfgr(MQGACF_MONITOR_ELEMENT, [
            cfin(MQIAMO_MONITOR_ELEMENT, e.id), cfin(MQIAMO_MONITOR_DATATYPE, e.datatype),
            cfst(MQCAMO_MONITOR_DESC, e.description)]))
    return message(params)


def data_topic(meta: dict[int, Class], qmgr: str, class_name: str, type_name: str, queue: str | None = None) -> str:
    cls = next(c for c in meta.values() if c.name == class_name)
    t = next(t for t in cls.types.values() if t.name == type_name)
    topic = t.data_topic.replace("/QMGR/PERF0/", f"/QMGR/{qmgr}/")
    return topic.replace("%s", queue) if queue is not None else topic


def publication(meta: dict[int, Class], qmgr: str, class_name: str, type_name: str, values: dict[str, int], *,
                interval_us: int = 10_000_000, queue: str | None = None, int64: bool = True,
                extra: list[bytes] | None = None) -> bytes:
    """A data publication: every element of the type (0 unless ``values`` names its description)."""
    cls = next(c for c in meta.values() if c.name == class_name)
    t = next(t for t in cls.types.values() if t.name == type_name)
    params = [cfin(MQIAMO_MONITOR_CLASS, cls.id), cfin(MQIAMO_MONITOR_TYPE, t.id),
              cfin64(MQIAMO64_MONITOR_INTERVAL, interval_us), cfst(MQCA_Q_MGR_NAME, qmgr.ljust(48))]
    if queue is not None:
        params += [cfst(MQCA_Q_NAME, queue.ljust(48)), cfin(MQIACF_OBJECT_TYPE, MQOT_Q)]
    unknown = set(values) - {e.description for e in t.elements.values()}
    if unknown:
        raise KeyError(f"{class_name}/{type_name} has no elements {sorted(unknown)}")
    for e in t.elements.values():
        value = values.get(e.description, 0)
        params.append(cfin64(e.id, value) if int64 else cfin(e.id, value))
    return message(params + list(extra or []))


def metadata_messages(meta: dict[int, Class], qmgr: str) -> dict[str, bytes]:
    """Topic -> retained metadata message, for every class, type and element list."""
    out = {_topic(qmgr, "METADATA", "CLASSES"): classes_message(meta, qmgr)}
    for cls in meta.values():
        out[_topic(qmgr, "METADATA", cls.name, "TYPES")] = types_message(meta, qmgr, cls.name)
        for t in cls.types.values():
            out[_topic(qmgr, "METADATA", cls.name, t.name)] = elements_message(meta, qmgr, cls.name, t.name)
    return out


# ---- amqsrua text ------------------------------------------------------------------------------------------------

def amqsrua_interval(interval_us: int) -> str:
    """`` Interval:`` as IBM's sample prints it (days, hours and minutes only when there are some)."""
    millis, seconds = (interval_us % 1000000) // 1000, interval_us // 1000000
    text = ""
    if seconds:
        minutes, seconds = seconds // 60, seconds % 60
        if minutes:
            hours, minutes = minutes // 60, minutes % 60
            if hours:
                days, hours = hours // 24, hours % 24
                if days:
                    text += f"{days} days,"
                text += f"{hours} hours,"
            text += f"{minutes} minutes,"
    return text + f"{seconds}.{millis:03d} seconds"


def amqsrua_publication(meta: dict[int, Class], class_name: str, type_name: str, values: dict[str, int], *,
                        interval_us: int = 10_000_000, queue: str | None = None, put_date: str = "20250320",
                        put_time: str = "15320100") -> str:
    """One publication as amqsrua prints it (printf formats of the 9.4.1 sample): the header line, then every
    element of the type in metadata order, a delta as ``%s %d %s`` with ``N/sec`` (or nothing when the rate
    rounds to 0), a percentage as ``%.2f%%``, a unit as ``%d``, the queue name as ``%-48.*s`` in front."""
    cls = next(c for c in meta.values() if c.name == class_name)
    t = next(t for t in cls.types.values() if t.name == type_name)
    lines = [f"Publication received PutDate:{put_date} PutTime:{put_time} Interval:{amqsrua_interval(interval_us)}"]
    prefix = f"{queue:<48}" if queue is not None else ""
    for e in t.elements.values():
        value = values.get(e.description, 0)
        if e.datatype == 2:
            rate = (value * 1000000 + interval_us // 2) // interval_us if interval_us >= 10000 else 0
            lines.append(f"{prefix}{e.description} {value} {f'{rate}/sec' if rate else ''}")
        elif e.datatype == 10000:
            lines.append(f"{prefix}{e.description} {value / 100:.2f}%")
        elif e.datatype == 1000000:
            lines.append(f"{prefix}{e.description} {value} uSec")
        else:
            lines.append(f"{prefix}{e.description} {value}")
    return "\n".join(lines) + "\n"
