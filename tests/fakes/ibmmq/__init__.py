"""Stand-in for IBM's ``ibmmq`` package (the MQ client library is not installed here), for the PCF back-end's
tests and for the end-to-end test, where the real exporter imports it through PYTHONPATH=tests/fakes.

It offers what the back-end uses: ``CD``/``SD``/``MD``/``GMO``, ``QueueManager.connect_with_options``,
``PCFExecute`` with the four inquiries and RESET_Q_STATS, ``Subscription`` (``sub``/``get``/``close``) and
``MQMIError``.  What the queue manager holds comes from a scenario: a dict in ``SCENARIO`` or a JSON file named by
``FAKE_IBMMQ_SCENARIO``.  The retained metadata and the data publications are built by :mod:`.publications`
(labelled there as generated) from the metadata of a real 9.4.1 queue manager.  A publication is due every
``monint`` seconds after the scenario's ``start``; each managed subscription receives the publications of the
ticks after it was made, as a queue manager delivers to each subscriber its own copy (reading them consumes
nothing of another subscriber's).

Scenario keys: ``qmgr``, ``monint`` (s), ``start`` (epoch s, default: first use), ``queues`` ([{name, depth,
max_depth, share}]), ``gets``/``puts`` ([[seconds after start, messages per second], ...], step functions),
``garbage`` (None, "truncated", "wrong_length", "unknown_element", "huge", "not_pcf"), ``deny_subscribe``,
``no_metadata``, ``connect_error`` (a text echoed in the MQMIError, for the scrubbing test), ``get_delay`` (s),
``reset_enq``/``reset_deq`` (counts RESET_Q_STATS returns and clears), ``deny_topics`` (substrings of the topics
whose MQSUB fails with 2035, e.g. one queue's ``STATQ/OUTPUT/``) and ``maxhands`` (the handles one connection may
hold, 256 by default as the queue manager's MAXHANDS; one more fails with 2017).  Health (issue 28), each a PCF
answer keyed by parameter id: ``qmgr_status`` (over MQIACF_Q_MGR_STATUS 2), ``qmgr_attrs``, ``channel_status``
and ``channels`` (lists; no channel status answers MQRCCF_CHL_STATUS_NOT_FOUND), per queue ``status`` and
``definition`` (over the defaults; a None value leaves a parameter out); ``native_ha`` (the Native HA instance
answers; absent: MQRCCF_NHA_NOT_AVAILABLE 4098) and ``native_ha_error`` (a reason that inquiry fails with).
TLS: ``ssl_cipher`` (the SVRCONN's SSLCIPH; connecting without a matching cipher fails with 2393), the key
repository must exist as ``<stem>.kdb`` and ``<stem>.sth`` (else 2381) and a CCDT URL is read as IBM's JSON CCDT
(no entry for the queue manager: 2058).  :func:`handles` counts the subscription handles opened, closed (MQCLOSE)
and closed by the disconnect, as a queue manager would see them.
"""

from __future__ import annotations

import json
import os
import threading
import time
from types import SimpleNamespace
from typing import Any

from . import publications as pub

__version__ = "0.0-fake"

CMQC = SimpleNamespace(
    MQSO_CREATE=0x2, MQSO_NON_DURABLE=0x0, MQSO_MANAGED=0x20, MQSO_FAIL_IF_QUIESCING=0x2000,
    MQGMO_WAIT=0x1, MQGMO_NO_WAIT=0x0, MQGMO_NO_SYNCPOINT=0x4, MQGMO_CONVERT=0x4000,
    MQGMO_FAIL_IF_QUIESCING=0x2000, MQCO_NONE=0, MQCO_REMOVE_SUB=0x8, MQRC_NO_MSG_AVAILABLE=2033,
    MQRC_NOT_AUTHORIZED=2035, MQRC_UNKNOWN_OBJECT_NAME=2085, MQCC_FAILED=2, MQIA_MSG_ENQ_COUNT=37,
    MQIA_MSG_DEQ_COUNT=38, MQCA_Q_NAME=2016, MQIA_COMMAND_LEVEL=31, MQRC_Q_MGR_NOT_AVAILABLE=2059)
CMQCFC = SimpleNamespace(MQCMD_RESET_Q_STATS=17)
CMQXC = SimpleNamespace(MQCHT_CLNTCONN=6, MQXPT_TCP=2)
MQCNO_CLIENT_BINDING, MQCNO_VERSION_6 = 0x800, 6
MQRC_Q_MGR_NAME_ERROR, MQRC_KEY_REPOSITORY_ERROR, MQRC_SSL_INITIALIZATION_ERROR = 2058, 2381, 2393

SCENARIO: dict[str, Any] | None = None
CLOCK = time.time
_lock = threading.Lock()
_state: dict[str, Any] = {}
CALLS: list[tuple] = []  # what the back-end did, for the tests


class MQMIError(Exception):
    def __init__(self, comp: int, reason: int, text: str = "") -> None:
        super().__init__(f"MQI Error. Comp: {comp}, Reason {reason}" + (f": {text}" if text else ""))
        self.comp, self.reason = comp, reason


class _Bag:
    def __init__(self, **kw: Any) -> None:
        self.__dict__.update(kw)

    def set_vs(self, name: str, value: Any) -> None:
        setattr(self, name, value)


class _Struct:
    """An MQI structure with ibmmq's field names and defaults.  Stricter than ibmmq where ibmmq would go wrong
    silently: an unknown field name (ibmmq keeps it as an attribute the structure never packs) and a value longer
    than the C field (struct.pack cuts it short) raise here."""

    FIELDS: dict[str, tuple[Any, int | None]] = {}  # name: (default, width of a char field or None)

    def __init__(self, **kw: Any) -> None:
        for name, (default, _) in self.FIELDS.items():
            object.__setattr__(self, name, default)
        for name, value in kw.items():
            setattr(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in self.FIELDS:
            raise AttributeError(f"{type(self).__name__} has no field {name} (ibmmq would ignore it silently)")
        width = self.FIELDS[name][1]
        if width is not None:
            if value is None:
                raise TypeError(f"Class:{type(self).__name__} Field:{name} must not be None")  # as ibmmq's pack
            if len(value) > width:
                raise ValueError(f"{type(self).__name__}.{name}: {len(value)} bytes do not fit in {width}")
        object.__setattr__(self, name, value)

    def set_vs(self, name: str, value: Any) -> None:
        setattr(self, name, value)


class CD(_Struct):
    """MQCD, the fields the back-end may set (ibmmq's mqcd.py names and widths)."""

    FIELDS = {"ChannelName": (b"", 20), "Version": (11, None), "ChannelType": (6, None),
              "TransportType": (2, None), "ConnectionName": (b"", 264), "SSLCipherSpec": (b"", 32),
              "SSLPeerNamePtr": (0, None), "CertificateLabel": (b"", 64)}


class SCO(_Struct):
    """MQSCO (ibmmq's mqsco.py: KeyRepository 256s, CertificateLabel 64s, version 5 by default)."""

    FIELDS = {"Version": (5, None), "KeyRepository": (b"", 256), "CryptoHardware": (b"", 256),
              "CertificateLabel": (b"", 64), "FipsRequired": (0, None), "CertificateValPolicy": (0, None)}


class CNO(_Struct):
    """MQCNO as ibmmq's mqcno.py builds it with an MQ 9.x client library (CCDTUrl exists from version 6; the
    structure starts at version 5, so the caller raises Version to use it)."""

    FIELDS = {"Version": (5, None), "Options": (0, None), "ConnTag": (b"", 128), "CCDTUrl": (0, None),
              "ApplName": (b"", 28)}


class SD(_Bag):
    pass


class MD(_Bag):
    pass


class GMO(_Bag):
    pass


def scenario() -> dict[str, Any]:
    global SCENARIO
    with _lock:
        if SCENARIO is None:
            path = os.environ.get("FAKE_IBMMQ_SCENARIO")
            if not path:
                raise MQMIError(2, 2059, "no scenario")
            SCENARIO = json.loads(open(path).read())
        if "start" not in SCENARIO:
            SCENARIO["start"] = CLOCK()
        if "meta" not in _state:
            _state["meta"] = pub.real_metadata()
        return SCENARIO


def _rate(steps: list, t: float) -> float:
    rate = 0.0
    for at, value in steps or []:
        if t >= at:
            rate = float(value)
    return rate


def reset() -> None:
    global SCENARIO
    SCENARIO = None
    _state.clear()
    CALLS.clear()


def handles() -> dict[str, int]:
    """Subscription handles: opened, closed by MQCLOSE, closed by MQDISC, and open now (all connections)."""
    with _lock:
        counts = {key: _state.get(key, 0) for key in ("opened", "closed", "disconnected")}
    counts["open"] = counts["opened"] - counts["closed"] - counts["disconnected"]
    return counts


def _count(key: str, n: int = 1) -> None:
    with _lock:
        _state[key] = _state.get(key, 0) + n


class QueueManager:
    def __init__(self, name: Any = None) -> None:
        self.name = None
        self.handles: set[Subscription] = set()  # open subscription handles of this connection

    def connect_with_options(self, name: str, cd: Any = None, user: str | None = None, password: str | None = None,
                             cno: Any = None, sco: Any = None, **kw: Any) -> None:
        s = scenario()
        CALLS.append(("connect", name, user))
        # what ibmmq itself refuses before calling MQCONNX
        for value, kind in ((cno, CNO), (sco, SCO), (cd, CD)):
            if value is not None and not isinstance(value, kind):
                raise TypeError(f"{kind.__name__.lower()} must be an instance of {kind.__name__}")
        if user and password is None:
            raise ValueError("Password must not be None if user is provided")
        CALLS.append(("connx", name, _connection(cd, cno, sco)))
        _check_connection(s, cd, cno, sco)
        if s.get("connect_error"):
            raise MQMIError(2, 2035, str(s["connect_error"]))
        if name != s["qmgr"]:
            raise MQMIError(2, 2059)
        self.name = name

    def disconnect(self) -> None:
        CALLS.append(("disconnect",))
        for sub in list(self.handles):  # MQDISC closes the connection's handles; non-durable subscriptions go
            sub.closed = True
        _count("disconnected", len(self.handles))
        self.handles.clear()


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value or "")


def _connection(cd: Any, cno: Any, sco: Any) -> dict[str, Any]:
    """What MQCONNX was given, for the tests (text fields decoded)."""
    seen: dict[str, Any] = {}
    if cd is not None:
        seen["cd"] = {k: getattr(cd, k) for k in ("ChannelName", "ConnectionName", "SSLCipherSpec", "ChannelType",
                                                 "TransportType", "Version")}
    if cno is not None:
        seen["cno"] = {"Version": cno.Version, "Options": cno.Options, "CCDTUrl": cno.CCDTUrl}
    if sco is not None:
        seen["sco"] = {"KeyRepository": sco.KeyRepository, "CertificateLabel": sco.CertificateLabel}
    return seen


def _ccdt_entry(url: str, qmgr: str) -> dict | None:
    """The JSON CCDT's clientConnection entry for ``qmgr`` (IBM's JSON CCDT layout: channel[].name, .type,
    .clientConnection.connection[], .clientConnection.queueManager, .transmissionSecurity.cipherSpecification)."""
    if not url.startswith("file://"):
        return None
    path = url[len("file://"):]
    try:
        data = json.loads(open(path).read())
    except (OSError, ValueError):
        return None
    for channel in data.get("channel", []):
        if channel.get("type") == "clientConnection" and \
                channel.get("clientConnection", {}).get("queueManager") == qmgr:
            return channel
    return None


def _check_connection(s: dict, cd: Any, cno: Any, sco: Any) -> None:
    """What the MQ client library and the queue manager would refuse (as far as a stand-in can tell)."""
    if cd is None:  # no MQCD: the client needs a CCDT, a client binding and an MQCNO new enough to carry the URL
        url = _text(getattr(cno, "CCDTUrl", 0) or "")
        if cno is None or not url or cno.Version < MQCNO_VERSION_6 or not cno.Options & MQCNO_CLIENT_BINDING:
            raise MQMIError(2, MQRC_Q_MGR_NAME_ERROR, "no client channel definition (CCDTUrl ignored or missing)")
        entry = _ccdt_entry(url, s["qmgr"])
        if entry is None:
            raise MQMIError(2, MQRC_Q_MGR_NAME_ERROR, "no CCDT entry for this queue manager")
        name = entry.get("name", "")
        cipher = entry.get("transmissionSecurity", {}).get("cipherSpecification", "")
    else:
        name, cipher = _text(cd.ChannelName), _text(cd.SSLCipherSpec)
    if cipher:
        repo = _text(sco.KeyRepository) if sco is not None else os.environ.get("MQSSLKEYR", "")
        if not repo or repo.endswith(".kdb") or not (os.path.isfile(repo + ".kdb") and os.path.isfile(repo + ".sth")):
            raise MQMIError(2, MQRC_KEY_REPOSITORY_ERROR, f"key repository {repo!r} not usable")
    wanted = s.get("ssl_cipher", "")  # the SVRCONN's SSLCIPH
    if wanted and cipher not in (wanted, "ANY_TLS12_OR_HIGHER", "ANY_TLS13_OR_HIGHER", "ANY"):
        raise MQMIError(2, MQRC_SSL_INITIALIZATION_ERROR, f"channel {name} wants {wanted}")
    if not wanted and cipher:
        raise MQMIError(2, MQRC_SSL_INITIALIZATION_ERROR, f"channel {name} is not a TLS channel")


def _ids(item: dict, defaults: dict | None = None) -> dict:
    """A scenario's PCF answer (JSON: string keys, text values) as ibmmq returns it: integer ids, text as bytes;
    over ``defaults``, where a None value leaves the parameter out of the answer."""
    answer = dict(defaults or {})
    answer.update({int(k): (v.encode() if isinstance(v, str) else v) for k, v in item.items()})
    return {k: v for k, v in answer.items() if v is not None}


class PCFExecute:
    def __init__(self, qm: QueueManager, response_wait_interval: int = 5000, **kw: Any) -> None:
        self.qm = qm

    def disconnect(self) -> None:
        pass

    def MQCMD_INQUIRE_Q_MGR_STATUS(self, args: Any) -> list[dict]:
        CALLS.append(("pcf", 161, args))
        if args.get(1445) == 1447:  # MQIACF_Q_MGR_STATUS_INFO_TYPE = MQIACF_Q_MGR_STATUS_INFO_NHA (issue 39)
            s = scenario()
            if s.get("native_ha_error"):
                raise MQMIError(2, int(s["native_ha_error"]))
            if "native_ha" not in s:  # INVENTED: MQRCCF_NHA_NOT_AVAILABLE, as IBM's constant names it
                raise MQMIError(2, 4098)
            return [_ids(item) for item in s["native_ha"]]
        return [_ids(scenario().get("qmgr_status", {}), {1149: 2})]

    def MQCMD_INQUIRE_Q_MGR(self, args: Any) -> list[dict]:
        CALLS.append(("pcf", 2, args))
        return [_ids(scenario().get("qmgr_attrs", {}), {2015: scenario()["qmgr"].ljust(48).encode()})]

    def MQCMD_INQUIRE_Q_STATUS(self, args: Any) -> list[dict]:
        CALLS.append(("pcf", 41, args))
        return [_ids(q.get("status", {}), {2016: q["name"].ljust(48).encode(), 3: q.get("depth", 0),
                                           17: q.get("ipprocs", 1), 18: q.get("opprocs", 1),
                                           1227: q.get("msgage", 0)})
                for q in scenario().get("queues", [])]

    def MQCMD_INQUIRE_Q(self, args: Any) -> list[dict]:
        CALLS.append(("pcf", 13, args))
        return [_ids(q.get("definition", {}), {2016: q["name"].ljust(48).encode(), 20: 1,
                                               15: q.get("max_depth", 5000)})
                for q in scenario().get("queues", [])]

    def MQCMD_INQUIRE_CHANNEL_STATUS(self, args: Any) -> list[dict]:
        CALLS.append(("pcf", 42, args))
        answers = [_ids(c) for c in scenario().get("channel_status", [])]
        if not answers:
            raise MQMIError(2, 3065)  # MQRCCF_CHL_STATUS_NOT_FOUND, as a queue manager with no channel running
        return answers

    def MQCMD_INQUIRE_CHANNEL(self, args: Any) -> list[dict]:
        CALLS.append(("pcf", 25, args))
        return [_ids(c) for c in scenario().get("channels", [])]

    def MQCMD_RESET_Q_STATS(self, args: Any) -> list[dict]:
        s = scenario()
        name = args[2016].decode().strip() if isinstance(args.get(2016), bytes) else str(args.get(2016)).strip()
        CALLS.append(("reset_qstats", name))
        enq, deq = s.get("reset_enq", {}).get(name, 0), s.get("reset_deq", {}).get(name, 0)
        s.setdefault("reset_enq", {})[name] = 0  # destructive: the next reader gets only what came since
        s.setdefault("reset_deq", {})[name] = 0
        return [{2016: name.ljust(48).encode(), 37: enq, 38: deq, 35: 60}]


class Subscription:
    def __init__(self, qm: QueueManager, **kw: Any) -> None:
        self.qm = qm
        self.topic: str | None = None
        self.made = 0.0
        self.next_tick = 0
        self.pending: list[bytes] = []
        self.closed = False

    def sub(self, sub_desc: Any = None, sub_opts: int | None = None, topic_string: Any = None, **kw: Any) -> None:
        s = scenario()
        topic = topic_string.decode() if isinstance(topic_string, bytes) else str(topic_string)
        CALLS.append(("sub", topic, sub_opts))
        if s.get("deny_subscribe") or any(part in topic for part in s.get("deny_topics", [])):
            raise MQMIError(2, CMQC.MQRC_NOT_AUTHORIZED)
        if len(self.qm.handles) >= int(s.get("maxhands", 256)):
            raise MQMIError(2, 2017)  # MQRC_HANDLE_NOT_AVAILABLE
        self.qm.handles.add(self)
        _count("opened")
        self.topic = topic
        self.made = CLOCK()
        monint = float(s.get("monint", 10.0))
        self.next_tick = int((self.made - s["start"]) // monint) + 1
        metadata = pub.metadata_messages(_state["meta"], s["qmgr"])
        if "/METADATA/" in topic:
            if not s.get("no_metadata") and topic in metadata:
                self.pending.append(metadata[topic])  # retained: delivered at once

    def _due(self) -> None:
        s = scenario()
        if "/METADATA/" in (self.topic or ""):
            return
        monint = float(s.get("monint", 10.0))
        now = CLOCK()
        while s["start"] + self.next_tick * monint <= now:
            t = self.next_tick * monint
            self.next_tick += 1
            message = self._publication(s, t, monint)
            if message is not None:
                self.pending.append(message)

    def _publication(self, s: dict, t: float, monint: float) -> bytes | None:
        meta, qmgr = _state["meta"], s["qmgr"]
        gets = round(_rate(s.get("gets"), t - monint / 2) * monint)
        puts = round(_rate(s.get("puts", s.get("gets")), t - monint / 2) * monint)
        parts = self.topic.split("/")
        klass, kind = parts[6], parts[-1]
        queue = parts[7] if klass == "STATQ" else None
        extra = []
        garbage = s.get("garbage")
        if garbage == "unknown_element":
            extra = [pub.cfin64(99, 5)]
        if garbage == "huge":
            gets = puts = 2**62
        if klass == "STATMQI":
            desc = {"PUT": "Interval total MQPUT/MQPUT1 count", "GET": "Interval total destructive get- count"}[kind]
            values = {desc: puts if kind == "PUT" else gets}
        else:
            queues = s.get("queues", [])
            share = next((q.get("share", 1 / max(len(queues), 1)) for q in queues if q["name"] == queue), 0)
            desc = {"PUT": "MQPUT/MQPUT1 count", "GET": "MQGET count"}[kind]
            values = {desc: round((puts if kind == "PUT" else gets) * share)}
        message = pub.publication(meta, qmgr, klass, kind, values, interval_us=int(monint * 1e6), queue=queue,
                                  extra=extra)
        if garbage == "truncated":
            message = message[: len(message) // 2]
        elif garbage == "wrong_length":
            message = message[:40] + (9999).to_bytes(4, "little") + message[44:]
        elif garbage == "not_pcf":
            message = b"hello world, not a PCF message at all"
        return message

    def get(self, max_length: Any = None, md: Any = None, gmo: Any = None) -> bytes:
        s = scenario()
        if s.get("get_delay"):
            time.sleep(float(s["get_delay"]))
        if self.closed:
            raise MQMIError(2, 2019)
        self._due()
        if not self.pending:
            raise MQMIError(2, CMQC.MQRC_NO_MSG_AVAILABLE)
        return self.pending.pop(0)

    def close(self, sub_close_options: int = 0, close_sub_queue: bool = False, **kw: Any) -> None:
        CALLS.append(("close", self.topic))
        if self.closed:
            raise MQMIError(2, 2019)  # MQRC_HOBJ_ERROR: not an open handle
        self.closed = True
        if self in self.qm.handles:
            self.qm.handles.discard(self)
            _count("closed")
