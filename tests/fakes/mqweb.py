"""A small stand-in for IBM MQ's mqweb server (administrative REST API) on 127.0.0.1, for tests.

It answers, from an in-memory queue manager, the requests ``exporter.systems.ibmmq.rest`` makes, in the shapes
IBM documents (see the sources in ``docs/notes/ibmmq.md``):

* ``GET /ibmmq/rest/{v1,v2,v3}/admin/qmgr/{qmgr}`` -> ``{"qmgr": [{"name": ..., "state": ...}]}``
* ``GET /ibmmq/rest/v1/admin/qmgr/{qmgr}/queue?type=local&status=...&attributes=...`` -> ``{"queue": [...]}``
* ``POST /ibmmq/rest/{v}/admin/action/qmgr/{qmgr}/mqsc`` with a ``runCommandJSON`` DISPLAY of ``qstatus``,
  ``qlocal``, ``chstatus``, ``channel``, ``qmstatus`` or ``qmgr`` -> ``{"commandResponse": [...],
  "overallCompletionCode": ..., "overallReasonCode": ...}``.  INVENTED shape beyond curdepth/status: no genuine
  runCommandJSON answer is public, so the parameters are the MQSC keywords in lower case with the values runmqsc
  prints (the tests take them from the genuine runmqsc captures); pair values (``qtime``, ``xqtime``) are whatever
  the test puts in ``extra`` (a ``"a, b"`` string, a list, or left out).
* errors -> ``{"error": [{"type": "rest", "msgId": "MQWB....E", "message": ..., ...}]}`` with the HTTP status.

Switches (plain attributes, change them at any time): ``username``/``password`` (basic auth required, else 401),
``require_csrf`` (POST without ``ibm-mq-rest-csrf-token`` -> 403 MQWB0100E), ``reject_csrf`` (every POST -> 403 as if
the header had been stripped on the way), ``delay`` (seconds before answering), ``item_error_queue`` (that queue's
DISPLAY QSTATUS item fails with completion code 2), ``garbage`` (a non-JSON body), ``garbage_json`` (JSON of the
wrong shape), ``fail_status`` (answer every request whose path or MQSC qualifier contains ``fail_match`` with that
status and an MQWB error, with ``fail_reason`` as its reasonCode when set; 3xx is a redirect),
``failed_qualifiers`` (qualifier -> reason: that DISPLAY answers one failed item, as when not authorised),
``mqsc_in_v1`` (False: an mqweb 9.0 that rejects runCommandJSON).  DISPLAY QMSTATUS with ``parameters.type``
``nativeha`` answers ``FakeQmgr.native_ha`` (issue 39).

``tls=True`` serves HTTPS with a throw-away self-signed certificate made by the ``openssl`` binary
(``openssl_available()``); ``ca_file`` is then the certificate to trust.  ``client_ca`` makes the server require a
client certificate signed by (or equal to) that file; ``make_self_signed()`` makes one.

Queues for a large benchmark: ``FakeQmgr(queues=generate_queues(10_000))`` builds 10,000 queues in milliseconds;
each answer is built and serialised once per request (about 10 ms for 10,000 queues).
"""

from __future__ import annotations

import atexit
import base64
import fnmatch
import json
import re
import shutil
import ssl
import subprocess
import tempfile
import threading
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

CSRF_HEADER = "ibm-mq-rest-csrf-token"


@dataclass
class FakeQueue:
    name: str
    depth: int = 0  # CURDEPTH
    max_depth: int | None = 5000  # MAXDEPTH (None: not in the DISPLAY QLOCAL answer)
    msgage: int | None = 0  # MSGAGE; None = queue monitoring off (blank)
    ipprocs: int | None = 0  # None: not in the DISPLAY QSTATUS answer
    opprocs: int | None = 0
    # How runCommandJSON renders a blank MSGAGE (msgage None): "" (empty string), " " (a blank), or "missing"
    # (no msgage key).  IBM does not document which; the exporter must take all three as "no age".
    blank_msgage: str = ""
    extra: dict[str, Any] = field(default_factory=dict)  # more DISPLAY QSTATUS parameters (lower-case keywords)
    definition: dict[str, Any] = field(default_factory=dict)  # more DISPLAY QLOCAL parameters (usage, descr)


@dataclass
class FakeChannel:
    name: str
    status: str = "RUNNING"
    chltype: str = "SDR"
    conname: str = ""
    extra: dict[str, Any] = field(default_factory=dict)  # more DISPLAY CHSTATUS parameters (lower-case keywords)


@dataclass
class FakeQmgr:
    name: str = "QM1"
    state: str = "running"  # mqweb's words: running, endedImmediately, runningAsStandby, ...
    queues: list[FakeQueue] = field(default_factory=list)
    channels: list[FakeChannel] = field(default_factory=list)
    # DISPLAY CHANNEL items (parameters with lower-case keywords: channel, chltype, maxinst, ...)
    definitions: list[dict[str, Any]] = field(default_factory=list)
    qmstatus: dict[str, Any] = field(default_factory=dict)  # DISPLAY QMSTATUS parameters ({} -> qmname only)
    attributes: dict[str, Any] = field(default_factory=dict)  # DISPLAY QMGR parameters
    # DISPLAY QMSTATUS TYPE(NATIVEHA) items (issue 39; lower-case keywords: instance, role, insync, ...); None: not
    # Native HA, answered by one item failing with ``native_ha_reason`` (INVENTED: MQRCCF_NHA_NOT_AVAILABLE 4098, as
    # IBM's constant names it; no genuine mqweb answer of a queue manager without Native HA is public)
    native_ha: list[dict[str, Any]] | None = None
    native_ha_reason: int = 4098


@dataclass
class RecordedRequest:
    method: str
    path: str  # decoded, without the query
    raw_path: str  # as sent (percent-encoded)
    query: dict[str, str]
    headers: dict[str, str]  # lower-case names
    body: Any  # decoded JSON of a POST, else None


def generate_queues(count: int, prefix: str = "BENCH.Q.") -> list[FakeQueue]:
    """``count`` queues with distinct, predictable values (depth i % 1000, max depth 5000 + i, ...)."""
    width = len(str(max(count - 1, 0)))
    return [FakeQueue(f"{prefix}{i:0{width}d}", i % 1000, 5000 + i, (i % 600) if i % 7 else None, i % 3, i % 5)
            for i in range(count)]


# DISPLAY QMSTATUS ALL / DISPLAY QMGR ALL values of the genuine 9.4.2 captures (tests/systems/ibmmq/fixtures/real:
# runmqsc_display_qmstatus_all_9.4.2.txt, runmqsc_display_qmgr_all_9.4.2.txt), keywords in lower case as
# runCommandJSON gives them.
QMSTATUS_9_4_2 = {"status": "RUNNING", "chinit": "RUNNING", "cmdserv": "RUNNING", "conns": 44,
                  "loginuse": 13, "logutil": 13, "logtype": "CIRCULAR", "logfssz": "SHARED", "logfsuse": "SHARED",
                  "qmfssz": 253824, "qmfsuse": 11, "reusesz": 0, "startda": "2025-05-12", "startti": "05.53.55",
                  "logstrda": "2025-05-12", "logstrti": "04:05:21"}
QMGR_9_4_2 = {"version": "09040200", "cmdlevel": 942, "platform": "UNIX", "qmid": "QM1_2025-04-22_03.01.05",
              "deadq": "DEV.DEAD.LETTER.QUEUE", "maxhands": 256}


def generate_channels(count: int, prefix: str = "BENCH.") -> tuple[list[FakeChannel], list[dict[str, Any]]]:
    """``count`` defined channels (invented; a realistic mix): two in five are SVRCONN channels with a MAXINST of
    100 running (i % 50) + 1 instances' worth of one status record each, the rest senders and receivers of which
    one in ten is stopped, one in twenty retrying and one in four has no status (inactive).  Returns the status
    records and the DISPLAY CHANNEL definitions."""
    channels: list[FakeChannel] = []
    definitions: list[dict[str, Any]] = []
    width = len(str(max(count - 1, 0)))
    for i in range(count):
        name = f"{prefix}{i:0{width}d}"
        kind = ("SVRCONN", "SDR", "RCVR", "SVRCONN", "SDR")[i % 5]
        definitions.append({"channel": name, "chltype": kind, "maxinst": 100 if kind == "SVRCONN" else 999999999,
                            "maxinstc": 999999999, "descr": f"invented channel {i}",
                            **({"xmitq": f"XQ.{i}"} if kind == "SDR" else {})})
        if kind != "SVRCONN" and i % 4 == 0:
            continue  # defined, no status: inactive
        status = "STOPPED" if i % 10 == 1 else "RETRYING" if i % 20 == 2 else "RUNNING"
        extra: dict[str, Any] = {"substate": "RECEIVE", "indoubt": "NO", "msgs": i * 7, "bytssent": i * 900,
                                 "bytsrcvd": i * 1100, "lstmsgda": "2025-05-12", "lstmsgti": "05.54.10",
                                 "chstada": "2025-05-12", "chstati": "05.53.58"}
        if kind == "SDR":
            extra.update({"rqmname": f"QM{i}", "shortrts": 10, "longrts": 999999999, "xqtime": "120, 95"})
        channels.append(FakeChannel(name, status, kind, f"10.{i // 250}.{i % 250}.1(1414)", extra))
    return channels, definitions


def with_health(qmgr: FakeQmgr) -> FakeQmgr:
    """``qmgr`` with the queue-manager health answers (QMSTATUS, QMGR: the 9.4.2 captures' values, DEADQ renamed
    to a queue the exporter reports) and queue-activity figures on its queues (invented): queue monitoring on for
    two queues in three (MSGAGE kept), off for the rest; queue files of 1-2,000 MB out of 2,048; a dead-letter queue
    <qmgr>.DEAD.LETTER with 3 messages and a transmission queue XQ.<qmgr> with 12."""
    qmgr.qmstatus = {**QMSTATUS_9_4_2, **qmgr.qmstatus}
    dlq = f"{qmgr.name}.DEAD.LETTER"
    qmgr.attributes = {**QMGR_9_4_2, "deadq": dlq, **qmgr.attributes}
    for i, queue in enumerate(qmgr.queues):
        monq = "MEDIUM" if i % 3 else "OFF"
        queue.extra = {"monq": monq, "curfsize": 1 + (i * 37) % 2000, "curmaxfs": 2048, "uncom": "NO",
                       "lputdate": "2025-05-12" if i % 3 else "", "lputtime": "05.54.10" if i % 3 else "",
                       **queue.extra}
        if monq == "OFF":
            queue.msgage = None
        queue.definition = {"usage": "NORMAL", **queue.definition}
    qmgr.queues.append(FakeQueue(dlq, 3, 5000, 7200, 0, 0, extra={"monq": "MEDIUM", "curfsize": 1, "curmaxfs": 2048},
                                 definition={"usage": "NORMAL"}))
    qmgr.queues.append(FakeQueue(f"XQ.{qmgr.name}", 12, 5000, 40, 0, 0, extra={"monq": "MEDIUM"},
                                 definition={"usage": "XMITQ"}))
    return qmgr


# --- certificates --------------------------------------------------------------------------------------------

_CERT_DIR: Path | None = None
_CERT_LOCK = threading.Lock()


def openssl_available() -> bool:
    return shutil.which("openssl") is not None


def make_self_signed(name: str, cn: str = "localhost") -> tuple[str, str]:
    """(certificate, key) PEM paths of a self-signed EC certificate for 127.0.0.1/localhost, made once per name."""
    global _CERT_DIR
    with _CERT_LOCK:
        if _CERT_DIR is None:
            _CERT_DIR = Path(tempfile.mkdtemp(prefix="fake-mqweb-certs-"))
            atexit.register(shutil.rmtree, _CERT_DIR, True)
        cert, key = _CERT_DIR / f"{name}.crt", _CERT_DIR / f"{name}.key"
        if not cert.exists():
            subprocess.run(
                ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                 "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", f"/CN={cn}",
                 "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60)
        return str(cert), str(key)


# --- answers ---------------------------------------------------------------------------------------------------

def mqwb_error(msg_id: str, message: str, explanation: str = "", action: str = "", reason: int = 0,
               completion: int = 0) -> dict[str, Any]:
    """An mqweb error answer: one element in the ``error`` array."""
    return {"error": [{"type": "rest", "msgId": msg_id, "message": f"{msg_id}: {message}",
                       "explanation": explanation, "action": action, "completionCode": completion,
                       "reasonCode": reason}]}


def _command_answer(items: list[dict[str, Any]]) -> dict[str, Any]:
    failed = any(item["completionCode"] == 2 for item in items)
    return {"commandResponse": items, "overallCompletionCode": 2 if failed else 0,
            "overallReasonCode": 3008 if failed else 0}


def _ok(parameters: dict[str, Any]) -> dict[str, Any]:
    return {"completionCode": 0, "reasonCode": 0, "parameters": parameters}


def _failed(reason: int, message: str) -> dict[str, Any]:
    return {"completionCode": 2, "reasonCode": reason, "message": [message]}


def _matches(pattern: str, name: str) -> bool:
    return pattern == "*" or (fnmatch.fnmatchcase(name, pattern) if pattern.endswith("*") else pattern == name)


class _Handler(BaseHTTPRequestHandler):
    server: "_Server"
    server_version = "FakeMqweb/1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        pass

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def _send(self, status: int, body: bytes, content_type: str = "application/json; charset=utf-8",
              headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            pass  # the client gave up (a timeout test)

    def _json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(data, separators=(",", ":")).encode("utf-8"), headers=headers)

    def _serve(self, method: str) -> None:
        fake = self.server.fake
        split = urllib.parse.urlsplit(self.path)
        path = urllib.parse.unquote(split.path)
        query = dict(urllib.parse.parse_qsl(split.query, keep_blank_values=True))
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body: Any = None
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw
        fake.requests.append(RecordedRequest(method, path, split.path, query,
                                             {k.lower(): v for k, v in self.headers.items()}, body))
        if fake.delay and fake._stopping.wait(fake.delay):
            return
        if fake.username is not None:
            expected = base64.b64encode(f"{fake.username}:{fake.password}".encode()).decode()
            if self.headers.get("Authorization") != f"Basic {expected}":
                return self._json(401, mqwb_error("MQWB0104E", "The REST API request is not authenticated.",
                                                  "Credentials were missing or wrong.", "Send valid credentials."),
                                  {"WWW-Authenticate": 'Basic realm="mqweb"'})
        if method == "POST" and (fake.reject_csrf or (fake.require_csrf and CSRF_HEADER not in
                                                      {k.lower() for k in self.headers.keys()})):
            return self._json(403, mqwb_error("MQWB0100E", f"The CSRF header {CSRF_HEADER} is missing from the "
                                              "request.", "The request had no CSRF header.",
                                              "Send the request again with the CSRF header."))
        qualifier = body.get("qualifier", "") if isinstance(body, dict) else ""
        if fake.fail_status and (not fake.fail_match or fake.fail_match in path or fake.fail_match == qualifier):
            status = fake.fail_status
            if 300 <= status < 400:
                return self._send(status, b"", headers={"Location": "http://127.0.0.1:1/elsewhere"})
            msg_id = {400: "MQWB0120E", 404: "MQWB0009E"}.get(status, "MQWB0004E")
            reason = fake.fail_reason if fake.fail_reason is not None else 2058 if status == 404 else 0
            return self._json(status, mqwb_error(msg_id, fake.fail_message, "Failure requested by the test.",
                                                 "None.", reason=reason, completion=2))
        if fake.garbage:
            return self._send(200, b"<html><body>Service Unavailable</body></html>", "text/html")
        if fake.garbage_json:
            return self._json(200, {"unexpected": [1, 2, 3]})
        self._route(method, split.path, query, body)

    def _route(self, method: str, raw_path: str, query: dict[str, str], body: Any) -> None:
        fake = self.server.fake
        match = re.fullmatch(r"/ibmmq/rest/(v[123])/admin(/action)?/qmgr/([^/]+)(/queue|/mqsc)?", raw_path)
        if not match or match.group(1) not in fake.versions:
            return self._send(404, b"Not Found", "text/plain")
        version, action, quoted_name, tail = match.groups()
        name = urllib.parse.unquote(quoted_name)
        if name != fake.qmgr.name:
            return self._json(404, mqwb_error("MQWB0009E", f"Could not query the queue manager '{name}'.",
                                              "No queue manager of that name is known.",
                                              "Use a valid queue manager name.", 2058, 2))
        if method == "GET" and not action and tail is None:
            return self._json(200, {"qmgr": [self._qmgr_entry(query)]})
        if method == "GET" and not action and tail == "/queue" and version == "v1":
            return self._json(200, {"queue": self._v1_queues(query)})
        if method == "POST" and action and tail == "/mqsc":
            if version == "v1" and not fake.mqsc_in_v1:
                return self._json(400, mqwb_error("MQWB0120E", "The request body is not valid for this resource.",
                                                  "runCommandJSON is not known here.", "Use runCommand."))
            return self._mqsc(body)
        return self._send(405 if tail else 404, b"Not allowed", "text/plain")

    def _qmgr_entry(self, query: dict[str, str]) -> dict[str, Any]:
        qmgr = self.server.fake.qmgr
        entry: dict[str, Any] = {"name": qmgr.name, "state": qmgr.state}
        if "status" in query:
            entry["status"] = {"started": "2024-01-01T00:00:00.000Z", "channelInitiatorState": "running",
                               "connectionCount": 7}
        return entry

    def _v1_queues(self, query: dict[str, str]) -> list[dict[str, Any]]:
        if query.get("type", "all") not in ("local", "all"):
            return []
        wanted_status = {s.split(".", 1)[-1] for s in query.get("status", "").split(",") if s}
        wanted_attrs = {a for a in query.get("attributes", "").split(",") if a}
        everything = "*" in wanted_status or "status" in wanted_status
        entries = []
        for queue in self.server.fake.qmgr.queues:
            entry: dict[str, Any] = {"name": queue.name, "type": "local"}
            if wanted_status:
                status = {"currentDepth": queue.depth, "openInputCount": queue.ipprocs,
                          "openOutputCount": queue.opprocs,
                          "oldestMessageAge": -1 if queue.msgage is None else queue.msgage}
                entry["status"] = status if everything else {k: v for k, v in status.items() if k in wanted_status}
            if "storage.maximumDepth" in wanted_attrs or "storage" in wanted_attrs or "*" in wanted_attrs:
                entry["storage"] = {"maximumDepth": queue.max_depth}
            entries.append(entry)
        return entries

    def _mqsc(self, body: Any) -> None:
        fake = self.server.fake
        if not isinstance(body, dict) or body.get("type") != "runCommandJSON" or body.get("command") != "display":
            return self._json(400, mqwb_error("MQWB0120E", "The request body is not valid.", "", "", 0, 2))
        qualifier = body.get("qualifier")
        pattern = body.get("name", "*")
        wanted = {p.lower() for p in body.get("responseParameters", ["all"])}

        def pick(parameters: dict[str, Any], always: tuple[str, ...]) -> dict[str, Any]:
            if "all" in wanted:
                return parameters
            return {k: v for k, v in parameters.items() if k in wanted or k in always}

        items: list[dict[str, Any]] = []
        if qualifier in fake.failed_qualifiers:  # e.g. not authorised to this DISPLAY
            reason = fake.failed_qualifiers[qualifier]
            return self._json(200, _command_answer([_failed(reason, f"AMQ8135E: Not authorized ({qualifier}).")]))
        if qualifier in ("qstatus", "qlocal"):
            for queue in fake.qmgr.queues:
                if not _matches(pattern, queue.name):
                    continue
                if qualifier == "qstatus" and queue.name == fake.item_error_queue:
                    items.append(_failed(fake.item_error_reason, f"AMQ8135E: Not authorized ({queue.name})."))
                elif qualifier == "qstatus":
                    parameters = {"queue": queue.name, "type": "QUEUE", "curdepth": queue.depth,
                                  "ipprocs": queue.ipprocs, "opprocs": queue.opprocs,
                                  "msgage": queue.blank_msgage if queue.msgage is None else queue.msgage,
                                  **queue.extra}
                    if queue.msgage is None and queue.blank_msgage == "missing":
                        del parameters["msgage"]
                    parameters = {k: v for k, v in parameters.items() if v is not None}  # None: not shown
                    items.append(_ok(pick(parameters, ("queue", "type"))))
                else:
                    parameters = {"queue": queue.name, "type": "QLOCAL", "maxdepth": queue.max_depth,
                                  "curdepth": queue.depth, **queue.definition}
                    items.append(_ok(pick({k: v for k, v in parameters.items() if v is not None},
                                          ("queue", "type"))))
            if not items:
                items.append(_failed(2085, f"AMQ8147E: IBM MQ object {pattern} not found."))
        elif qualifier == "chstatus":
            for channel in fake.qmgr.channels:
                if _matches(pattern, channel.name):
                    items.append(_ok(pick({"channel": channel.name, "chltype": channel.chltype,
                                           "status": channel.status, "conname": channel.conname,
                                           "currentSharingConversations": 1, **channel.extra},
                                          ("channel", "chltype"))))
            if not items:
                items.append(_failed(3065, "AMQ8420I: Channel Status not found."))
        elif qualifier == "channel":
            for definition in fake.qmgr.definitions:
                if _matches(pattern, str(definition.get("channel", ""))):
                    items.append(_ok(pick(definition, ("channel", "chltype"))))
            if not items:
                items.append(_failed(2085, f"AMQ8147E: IBM MQ object {pattern} not found."))
        elif qualifier == "qmstatus" and str((body.get("parameters") or {}).get("type", "")).lower() == "nativeha":
            if fake.qmgr.native_ha is None:
                items.append(_failed(fake.qmgr.native_ha_reason, "AMQ8xxxE: Native HA not available (invented)."))
            for instance in fake.qmgr.native_ha or []:
                items.append(_ok(pick({"type": "NATIVEHA", "nhatype": "INSTANCE", **instance}, ("instance",))))
        elif qualifier == "qmstatus":
            items.append(_ok(pick({"qmname": fake.qmgr.name, "type": "QMGR", **fake.qmgr.qmstatus}, ("qmname",))))
        elif qualifier == "qmgr":
            items.append(_ok(pick({"qmname": fake.qmgr.name, **fake.qmgr.attributes}, ("qmname",))))
        else:
            return self._json(400, mqwb_error("MQWB0120E", f"The qualifier {qualifier!r} is not supported here."))
        return self._json(200, _command_answer(items))


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    fake: "FakeMqweb"

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # TLS handshakes a test makes fail on purpose, clients that hang up


class FakeMqweb:
    """The fake server; ``start()``/``stop()`` or ``with FakeMqweb(...) as mqweb:``; ``base_url`` to point at."""

    def __init__(self, qmgr: FakeQmgr | None = None, *, username: str | None = None, password: str | None = None,
                 require_csrf: bool = True, tls: bool = False, client_ca: str | None = None,
                 versions: tuple[str, ...] = ("v1", "v2", "v3")) -> None:
        self.qmgr = qmgr if qmgr is not None else FakeQmgr()
        self.username = username
        self.password = password
        self.require_csrf = require_csrf
        self.reject_csrf = False
        self.delay = 0.0
        self.item_error_queue: str | None = None
        self.item_error_reason = 2035
        self.garbage = False
        self.garbage_json = False
        self.fail_status: int | None = None
        self.fail_match = ""
        self.fail_message = "Failure requested by the test."
        self.fail_reason: int | None = None
        self.mqsc_in_v1 = True
        self.failed_qualifiers: dict[str, int] = {}  # MQSC qualifier -> reason of its one failed item
        self.versions = versions
        self.tls = tls
        self.client_ca = client_ca
        self.ca_file: str | None = None
        self.requests: list[RecordedRequest] = []
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        assert self._server is not None, "not started"
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def start(self) -> "FakeMqweb":
        server = _Server(("127.0.0.1", 0), _Handler)
        server.fake = self
        if self.tls:
            cert, key = make_self_signed("mqweb-server")
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(cert, key)
            if self.client_ca:
                context.verify_mode = ssl.CERT_REQUIRED
                context.load_verify_locations(self.client_ca)
            server.socket = context.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
            self.ca_file = cert
        self._server = server
        self._stopping.clear()
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-mqweb", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None

    def __enter__(self) -> "FakeMqweb":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
