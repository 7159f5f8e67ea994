"""IBM MQ resource-statistics publications: a bounded PCF decoder, the metadata catalogue and the put/get counters.

Since MQ 9.0 a queue manager publishes its resource usage every MONINT seconds (10 s by default) on
``$SYS/MQ/INFO/QMGR/<qmgr>/Monitor/<CLASS>/[<object>/]<TYPE>`` and describes what it publishes on retained
metadata topics: ``.../Monitor/METADATA/CLASSES`` (class ids, names, where their types are described),
``.../Monitor/METADATA/<CLASS>/TYPES`` (type ids, names, where their elements are described) and
``.../Monitor/METADATA/<CLASS>/<TYPE>`` (element ids, datatypes, descriptions, and the data topic; ``%s`` in it
stands for the queue name of the STATQ class).  Every message is a PCF message: an MQCFH followed by MQCFIN,
MQCFIN64, MQCFST, MQCFIL(64), MQCFSL, MQCFBS and MQCFGR (group) structures.  A data publication carries the class
and type ids, the interval in microseconds (MQIAMO64_MONITOR_INTERVAL), the queue name for STATQ, and one
structure per element whose Parameter is the element id; counts are deltas over the interval.

Elements are found through the metadata by class name, type name and description (as IBM's amqsrua and
mq_prometheus do), never by element id alone.  This module does no I/O: the PCF back-end feeds it messages got
from its subscriptions, the tests feed it bytes.  Hand-written rather than ``ibmmq``'s ``PCFExecute.unpack``: that
decoder only imports where the MQ client C library is installed, and it does not bound-check lengths, so a
truncated or hostile message raises whatever ``struct`` raises.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from typing import Any

# ---- CMQC / CMQCFC values used here (checked against ibmmq's CMQC/CMQCFC in the tests) ----------------------
MQCFH_STRUC_LENGTH = 36
MQCFT_INTEGER = 3
MQCFT_STRING = 4
MQCFT_INTEGER_LIST = 5
MQCFT_STRING_LIST = 6
MQCFT_BYTE_STRING = 9
MQCFT_GROUP = 20
MQCFT_INTEGER64 = 23
MQCFT_INTEGER64_LIST = 25

MQCA_Q_MGR_NAME = 2015
MQCA_Q_NAME = 2016
MQCA_TOPIC_STRING = 2094
MQIACF_OBJECT_TYPE = 1016
MQIAMO_MONITOR_CLASS = 839
MQIAMO_MONITOR_TYPE = 840
MQIAMO_MONITOR_ELEMENT = 841
MQIAMO_MONITOR_DATATYPE = 842
MQIAMO_MONITOR_FLAGS = 843
MQIAMO64_MONITOR_INTERVAL = 845
MQCAMO_MONITOR_CLASS = 2713
MQCAMO_MONITOR_TYPE = 2714
MQCAMO_MONITOR_DESC = 2715
MQGACF_MONITOR_CLASS = 8015
MQGACF_MONITOR_TYPE = 8016
MQGACF_MONITOR_ELEMENT = 8017
MQIAMO_MONITOR_FLAGS_OBJNAME = 1
MQIAMO_MONITOR_DELTA = 2

# Bounds: a publication is a few hundred bytes; metadata a few kilobytes.
MAX_MESSAGE_BYTES = 1024 * 1024
MAX_PARAMETERS = 10000
MAX_GROUP_DEPTH = 4
# A count larger than this in one interval is garbage: 10^10 is 100,000 messages a second for a whole day.
MAX_DELTA = 10**10

_FIXED = {MQCFT_INTEGER: 16, MQCFT_INTEGER64: 24, MQCFT_STRING: 20, MQCFT_INTEGER_LIST: 16,
          MQCFT_INTEGER64_LIST: 16, MQCFT_STRING_LIST: 24, MQCFT_BYTE_STRING: 16, MQCFT_GROUP: 16}
_CODECS = {37: "cp037", 500: "cp500", 819: "latin-1", 1208: "utf-8", 1200: "utf-16-be", 437: "cp437",
           850: "cp850", 1252: "cp1252"}


class PcfError(ValueError):
    """Bytes that are not a well-formed PCF message; the message says where."""


class PublicationError(ValueError):
    """A well-formed PCF message that is not a usable resource publication (unknown class, type, bad count)."""


@dataclass
class Param:
    type: int
    parameter: int
    value: Any  # int, str, list of int/str, bytes, or list[Param] for a group


@dataclass
class PcfMessage:
    type: int
    command: int
    control: int
    comp_code: int
    reason: int
    params: list[Param]
    big_endian: bool = False

    def first(self, parameter: int, kind: int | None = None) -> Any:
        return first(self.params, parameter, kind)


def first(params: list[Param], parameter: int, kind: int | None = None) -> Any:
    """The value of the first structure with that Parameter (and type), or None."""
    for p in params:
        if p.parameter == parameter and (kind is None or p.type == kind):
            return p.value
    return None


def _decode_text(raw: bytes, ccsid: int) -> str:
    codec = _CODECS.get(ccsid, "utf-8")
    return raw.decode(codec, "replace").rstrip("\x00 ").strip()


class _Reader:
    def __init__(self, data: bytes, big_endian: bool) -> None:
        self.data = data
        self.e = ">" if big_endian else "<"
        self.count = 0

    def long(self, offset: int) -> int:
        return struct.unpack_from(self.e + "i", self.data, offset)[0]

    def params(self, offset: int, end: int, count: int, depth: int) -> tuple[list[Param], int]:
        out: list[Param] = []
        for index in range(count):
            self.count += 1
            if self.count > MAX_PARAMETERS:
                raise PcfError(f"more than {MAX_PARAMETERS} parameters")
            if end - offset < 8:
                raise PcfError(f"parameter {index + 1} of {count} cut off at byte {offset} (message ends at {end})")
            kind, length = self.long(offset), self.long(offset + 4)
            fixed = _FIXED.get(kind)
            if fixed is None:
                raise PcfError(f"unknown structure type {kind} at byte {offset}")
            if length < fixed or length % 4 or offset + length > end:
                raise PcfError(f"structure type {kind} at byte {offset} has length {length} "
                               f"(at least {fixed}, a multiple of 4, at most {end - offset} left)")
            parameter = self.long(offset + 8)
            body = offset + fixed
            if kind == MQCFT_INTEGER:
                value: Any = self.long(offset + 12)
            elif kind == MQCFT_INTEGER64:
                value = struct.unpack_from(self.e + "q", self.data, offset + 16)[0]
            elif kind in (MQCFT_STRING, MQCFT_BYTE_STRING):
                if kind == MQCFT_STRING:
                    ccsid, size = self.long(offset + 12), self.long(offset + 16)
                else:
                    ccsid, size = 0, self.long(offset + 12)
                if size < 0 or body + size > offset + length:
                    raise PcfError(f"string at byte {offset} claims {size} bytes in a {length}-byte structure")
                raw = self.data[body:body + size]
                value = _decode_text(raw, ccsid) if kind == MQCFT_STRING else raw
            elif kind in (MQCFT_INTEGER_LIST, MQCFT_INTEGER64_LIST):
                n = self.long(offset + 12)
                size = 4 if kind == MQCFT_INTEGER_LIST else 8
                if n < 0 or body + n * size > offset + length:
                    raise PcfError(f"list at byte {offset} claims {n} values in a {length}-byte structure")
                value = list(struct.unpack_from(f"{self.e}{n}{'i' if size == 4 else 'q'}", self.data, body))
            elif kind == MQCFT_STRING_LIST:
                ccsid, n, size = self.long(offset + 12), self.long(offset + 16), self.long(offset + 20)
                if n < 0 or size < 0 or body + n * size > offset + length:
                    raise PcfError(f"string list at byte {offset} claims {n} x {size} bytes in {length}")
                value = [_decode_text(self.data[body + i * size:body + (i + 1) * size], ccsid) for i in range(n)]
            else:  # group: its members follow it
                n = self.long(offset + 12)
                if depth >= MAX_GROUP_DEPTH:
                    raise PcfError(f"groups nested deeper than {MAX_GROUP_DEPTH}")
                if n < 0 or n > MAX_PARAMETERS:
                    raise PcfError(f"group at byte {offset} claims {n} members")
                members, after = self.params(offset + length, end, n, depth + 1)
                out.append(Param(kind, parameter, members))
                offset = after
                continue
            out.append(Param(kind, parameter, value))
            offset += length
        return out, offset


def decode_pcf(data: bytes) -> PcfMessage:
    """A PCF message from its bytes (MQCFH and its parameters, groups nested); PcfError if malformed.

    The byte order is the one in which the MQCFH's StrucLength reads 36: little-endian on x86 and Linux on
    POWER LE, big-endian on AIX (a message got with MQGMO_CONVERT is in the reader's own order)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise PcfError(f"not bytes but {type(data).__name__}")
    data = bytes(data)
    if len(data) > MAX_MESSAGE_BYTES:
        raise PcfError(f"{len(data)} bytes, more than {MAX_MESSAGE_BYTES}")
    if len(data) < MQCFH_STRUC_LENGTH:
        raise PcfError(f"{len(data)} bytes, shorter than an MQCFH ({MQCFH_STRUC_LENGTH})")
    if struct.unpack_from("<i", data, 4)[0] == MQCFH_STRUC_LENGTH:
        big = False
    elif struct.unpack_from(">i", data, 4)[0] == MQCFH_STRUC_LENGTH:
        big = True
    else:
        raise PcfError("no MQCFH at the start (StrucLength is not 36 in either byte order)")
    fields = struct.unpack_from((">" if big else "<") + "9i", data, 0)
    count = fields[8]
    if count < 0 or count > MAX_PARAMETERS:
        raise PcfError(f"MQCFH claims {count} parameters")
    reader = _Reader(data, big)
    params, end = reader.params(MQCFH_STRUC_LENGTH, len(data), count, 0)
    if end != len(data) and any(data[end:]):
        raise PcfError(f"{len(data) - end} bytes after the last of {count} parameters")
    return PcfMessage(type=fields[0], command=fields[3], control=fields[5], comp_code=fields[6], reason=fields[7],
                      params=params, big_endian=big)


# ---- topics ----------------------------------------------------------------------------------------------------

def classes_topic(qmgr: str) -> str:
    return f"$SYS/MQ/INFO/QMGR/{qmgr}/Monitor/METADATA/CLASSES"


def object_topic_name(queue: str, command_level: int | None = None) -> str:
    """A queue name as it goes into a STATQ topic: from MQ 9.3 a ``/`` in the name is written ``&`` (it would
    split the topic); before, the name as it is."""
    return queue.replace("/", "&") if command_level is None or command_level >= 930 else queue


# ---- metadata ----------------------------------------------------------------------------------------------------

@dataclass
class MonElement:
    id: int
    datatype: int
    description: str


@dataclass
class MonType:
    id: int
    name: str
    description: str
    elements_topic: str
    data_topic: str | None = None  # from the elements metadata; "%s" for the object name where there is one
    elements: dict[int, MonElement] = field(default_factory=dict)


@dataclass
class MonClass:
    id: int
    name: str
    description: str
    types_topic: str
    flags: int = 0
    types: dict[int, MonType] = field(default_factory=dict)


def _group_fields(group: list[Param]) -> dict[int, Any]:
    return {p.parameter: p.value for p in group}


class Catalogue:
    """What a queue manager says it publishes, built from its three kinds of metadata publication."""

    def __init__(self) -> None:
        self.classes: dict[int, MonClass] = {}

    def add_classes(self, msg: PcfMessage) -> list[MonClass]:
        found = []
        for p in msg.params:
            if p.type != MQCFT_GROUP or p.parameter != MQGACF_MONITOR_CLASS:
                continue
            f = _group_fields(p.value)
            if not isinstance(f.get(MQIAMO_MONITOR_CLASS), int) or not f.get(MQCAMO_MONITOR_CLASS):
                raise PublicationError("a CLASSES group without a class id or name")
            cls = MonClass(f[MQIAMO_MONITOR_CLASS], str(f[MQCAMO_MONITOR_CLASS]), str(f.get(MQCAMO_MONITOR_DESC, "")),
                           str(f.get(MQCA_TOPIC_STRING, "")), int(f.get(MQIAMO_MONITOR_FLAGS, 0) or 0))
            self.classes[cls.id] = cls
            found.append(cls)
        if not found:
            raise PublicationError("the CLASSES metadata lists no class")
        return found

    def add_types(self, msg: PcfMessage) -> list[MonType]:
        class_id = msg.first(MQIAMO_MONITOR_CLASS, MQCFT_INTEGER)
        cls = self.classes.get(class_id) if isinstance(class_id, int) else None
        if cls is None:
            raise PublicationError(f"TYPES metadata for class {class_id}, which CLASSES did not list")
        flags = msg.first(MQIAMO_MONITOR_FLAGS, MQCFT_INTEGER)
        if isinstance(flags, int):
            cls.flags = flags
        found = []
        for p in msg.params:
            if p.type != MQCFT_GROUP or p.parameter != MQGACF_MONITOR_TYPE:
                continue
            f = _group_fields(p.value)
            if not isinstance(f.get(MQIAMO_MONITOR_TYPE), int) or not f.get(MQCAMO_MONITOR_TYPE):
                raise PublicationError(f"a TYPES group of class {cls.name} without a type id or name")
            mon_type = MonType(f[MQIAMO_MONITOR_TYPE], str(f[MQCAMO_MONITOR_TYPE]), str(f.get(MQCAMO_MONITOR_DESC, "")),
                               str(f.get(MQCA_TOPIC_STRING, "")))
            cls.types[mon_type.id] = mon_type
            found.append(mon_type)
        return found

    def add_elements(self, msg: PcfMessage) -> MonType:
        class_id = msg.first(MQIAMO_MONITOR_CLASS, MQCFT_INTEGER)
        type_id = msg.first(MQIAMO_MONITOR_TYPE, MQCFT_INTEGER)
        mon_type = self.type_by_id(class_id, type_id)
        if mon_type is None:
            raise PublicationError(f"element metadata for class {class_id} type {type_id}, not listed before")
        topic = msg.first(MQCA_TOPIC_STRING, MQCFT_STRING)
        if topic:
            mon_type.data_topic = str(topic)
        for p in msg.params:
            if p.type != MQCFT_GROUP or p.parameter != MQGACF_MONITOR_ELEMENT:
                continue
            f = _group_fields(p.value)
            if not isinstance(f.get(MQIAMO_MONITOR_ELEMENT), int):
                raise PublicationError(f"an element group of {mon_type.name} without an element id")
            element = MonElement(f[MQIAMO_MONITOR_ELEMENT], int(f.get(MQIAMO_MONITOR_DATATYPE, 0) or 0),
                                 str(f.get(MQCAMO_MONITOR_DESC, "")))
            mon_type.elements[element.id] = element
        return mon_type

    def class_by_name(self, name: str) -> MonClass | None:
        return next((c for c in self.classes.values() if c.name == name), None)

    def type_by_name(self, class_name: str, type_name: str) -> MonType | None:
        cls = self.class_by_name(class_name)
        return next((t for t in cls.types.values() if t.name == type_name), None) if cls else None

    def type_by_id(self, class_id: Any, type_id: Any) -> MonType | None:
        cls = self.classes.get(class_id) if isinstance(class_id, int) else None
        return cls.types.get(type_id) if cls is not None and isinstance(type_id, int) else None

    def class_of(self, mon_type: MonType) -> MonClass:
        return next(c for c in self.classes.values() if mon_type in c.types.values())


# ---- what the exporter counts ------------------------------------------------------------------------------------

def normalise_description(text: str) -> str:
    """Descriptions compared without case, blanks and punctuation ("Interval total destructive get- count" and a
    future "...get - count" are one)."""
    return re.sub(r"[^a-z0-9]", "", text.lower())


# (class, type) -> {normalised element description: counter}; the elements mq_prometheus also reads.
WANTED: dict[tuple[str, str], dict[str, str]] = {
    ("STATMQI", "PUT"): {normalise_description("Interval total MQPUT/MQPUT1 count"): "puts"},
    ("STATMQI", "GET"): {normalise_description("Interval total destructive get- count"): "gets"},
    ("STATQ", "PUT"): {normalise_description("MQPUT/MQPUT1 count"): "puts"},
    ("STATQ", "GET"): {normalise_description("MQGET count"): "gets"},
}


@dataclass
class Publication:
    class_name: str
    type_name: str
    object_name: str | None  # the queue of a STATQ publication
    interval: float | None  # seconds the deltas cover
    counts: dict[str, int]  # "puts"/"gets" -> messages in the interval (wanted elements only)
    unknown_elements: list[int] = field(default_factory=list)


def read_publication(msg: PcfMessage, catalogue: Catalogue) -> Publication:
    """The wanted counts of one data publication, its elements identified through ``catalogue``.

    Unknown element ids are listed (the queue manager may publish more than its metadata said; amqsrua
    prints them as "not recognised") and otherwise ignored.  A publication of a class or type the metadata did
    not list, a wanted element that is not a delta count, or a count below zero or above MAX_DELTA is
    PublicationError."""
    class_id = msg.first(MQIAMO_MONITOR_CLASS, MQCFT_INTEGER)
    type_id = msg.first(MQIAMO_MONITOR_TYPE, MQCFT_INTEGER)
    mon_type = catalogue.type_by_id(class_id, type_id)
    if mon_type is None:
        raise PublicationError(f"publication of class {class_id} type {type_id}, which the metadata does not list")
    cls = catalogue.class_of(mon_type)
    wanted = WANTED.get((cls.name, mon_type.name), {})
    interval = msg.first(MQIAMO64_MONITOR_INTERVAL)
    obj = msg.first(MQCA_Q_NAME, MQCFT_STRING)
    counts: dict[str, int] = {}
    unknown: list[int] = []
    skip = {MQIAMO_MONITOR_CLASS, MQIAMO_MONITOR_TYPE, MQIAMO64_MONITOR_INTERVAL, MQIAMO_MONITOR_FLAGS,
            MQIACF_OBJECT_TYPE, MQCA_Q_MGR_NAME, MQCA_Q_NAME}
    for p in msg.params:
        if p.parameter in skip or p.type not in (MQCFT_INTEGER, MQCFT_INTEGER64):
            continue
        element = mon_type.elements.get(p.parameter)
        if element is None:
            unknown.append(p.parameter)
            continue
        name = wanted.get(normalise_description(element.description))
        if name is None:
            continue
        if element.datatype != MQIAMO_MONITOR_DELTA:
            raise PublicationError(f"{cls.name}/{mon_type.name} element {element.id} ({element.description!r}) has "
                                   f"datatype {element.datatype}, not a delta count")
        if not 0 <= p.value <= MAX_DELTA:
            raise PublicationError(f"{cls.name}/{mon_type.name} {element.description!r} = {p.value} in one interval "
                                   f"(outside 0..{MAX_DELTA})")
        counts[name] = counts.get(name, 0) + p.value
    seconds = interval / 1e6 if isinstance(interval, int) and interval >= 0 else None
    return Publication(cls.name, mon_type.name, str(obj) if obj else None, seconds, counts, unknown)


@dataclass
class ThroughputCounters:
    """Monotonic put/get counters made of the interval deltas of the publications read since the exporter
    started (or since the subscription was made), per queue manager and per queue."""

    qmgr: dict[str, int] = field(default_factory=dict)  # "puts"/"gets"
    queues: dict[str, dict[str, int]] = field(default_factory=dict)  # queue -> "puts"/"gets"
    publications: int = 0

    def add(self, publication: Publication) -> None:
        self.publications += 1
        if publication.class_name == "STATMQI":
            target = self.qmgr
        elif publication.class_name == "STATQ" and publication.object_name:
            target = self.queues.setdefault(publication.object_name, {})
        else:
            return
        for name, value in publication.counts.items():
            target[name] = target.get(name, 0) + value
