"""IBM MQ back-end through the administrative REST API of the mqweb server (standard library only).

One snapshot is at most four HTTPS requests, each bounded by ``timeout`` and by ``max_response_bytes``:

* ``GET {base}/ibmmq/rest/{v}/admin/qmgr/{qmgr}`` - the queue manager's ``state``.
* api_version ``v2``/``v3``: three ``POST {base}/ibmmq/rest/{v}/admin/action/qmgr/{qmgr}/mqsc`` with
  ``runCommandJSON`` bodies: ``DISPLAY QSTATUS(*) TYPE(QUEUE)`` (CURDEPTH, IPPROCS, OPPROCS, MSGAGE),
  ``DISPLAY QLOCAL(*)`` (MAXDEPTH) and ``DISPLAY CHSTATUS(*)`` (STATUS, CHLTYPE, CONNAME).
* api_version ``v1``: ``GET .../admin/qmgr/{qmgr}/queue?type=local&status=...&attributes=storage.maximumDepth``
  for the queues, and the same ``runCommandJSON`` DISPLAY CHSTATUS at the v1 path for the channels, best effort:
  an mqweb that rejects it (9.0.x) yields no channels rather than a failed scrape.

Format facts this module relies on (public IBM documentation, and public code that talks to real mqweb servers):

* Paths and versions: ``/ibmmq/rest/{v1,v2,v3}/admin/qmgr/{qmgrName}`` and
  ``/admin/action/qmgr/{qmgrName}/mqsc``; v2 from MQ 9.1.5 (earlier: v1), v3 from 9.2.5; the ``/queue`` and
  ``/channel`` resources exist only in v1 (the channel one only for TCP SDR/RCVR/SVR/RQSTR/cluster channels) -
  IBM Docs "GET" for /admin/qmgr (knowledgecenter SSFKSJ_9.1.0 ... q128360_.htm), for the queue resource
  (q128370_), for the channel resource (SSFKSJ_9.3.0 refadmin q130500_), "/admin/action/qmgr/{qmgrName}/mqsc"
  (q129385_), "Using the messaging REST API" (v3 note).  Names containing ``/``, ``%`` or ``.`` go into the path
  as ``%2F``, ``%25``, ``%2E`` (same pages).
* Queue manager GET answer: an object with a single array ``qmgr`` whose elements carry ``name`` and ``state``;
  the state words ``running``, ``ended``, ``endedImmediately``, ``endedPreemptively``, ``endedUnexpectedly``,
  ``starting``, ``quiescing``, ``endingImmediately``, ``endingPreemptively``, ``beingDeleted``,
  ``stateNotAvailable``, ``runningAsStandby``, ``runningElsewhere`` - IBM Docs q128360_ (response body format,
  ``state`` query parameter) and "REST API and PCF equivalents for queue managers" (q128810_: ``state`` is
  MQIACF_Q_MGR_STATUS, outside the ``status`` object).  ``?status=*`` is not sent: ``state`` comes without it, and
  the status attributes need extra PCF authority (q128360_, "Security requirements").
* ``runCommandJSON`` request fields ``type``, ``command``, ``qualifier``, ``name``, ``parameters``,
  ``responseParameters``; the answer's ``commandResponse[]`` items with ``completionCode``, ``reasonCode`` and
  ``parameters`` (``message`` for a failed item), plus ``overallCompletionCode``/``overallReasonCode`` - IBM Docs
  "POST - JSON formatted command" (q133340_); concrete answers in kedacore/keda's IBM MQ scaler test (a failed
  item: completionCode 2, reasonCode 2085, message ``AMQ8147E ...``, overall 2/3008; a qstatus item's parameters
  keyed ``queue``, ``curdepth``, ``type``) and the wphillipmoore/mq-rest-admin-* "runCommandJSON endpoint" notes
  (per-item and overall codes; a DISPLAY that matches nothing answers 2085).
* Errors: any HTTP status outside 200-299 is an error with the body ``{"error": [{...}]}``: ``type``, ``msgId``
  (documented as ``messageId``; real servers send ``msgId``, so both are read), ``message``, ``explanation``,
  ``action``, ``completionCode``, ``reasonCode`` - IBM Docs "REST API error handling" (q128280_); real answers
  in keda's test (MQWB0009E, reason 2058, HTTP 404 for an unknown queue manager) and in public Native HA notes
  (MQWB0004E, reason 2543, from a standby replica).
* CSRF: POST/PATCH/DELETE with basic authentication must carry the ``ibm-mq-rest-csrf-token`` header - IBM Docs
  "Using HTTP basic authentication with the REST API"; public clients send arbitrary values (IBM's mq-mcp-server
  sends "token").  Without it mqweb answers MQWB0100E, with a wrong token value MQWB0101E - IBM Docs "REST API
  messages" (mqwb01).
* Reason codes 2085 MQRC_UNKNOWN_OBJECT_NAME and 3065 MQRCCF_CHL_STATUS_NOT_FOUND (CMQC/CMQCFC, as in
  ``pcf.py``).

Assumed, not confirmed in the documentation reachable while writing this: the v1 queue answer's attribute names
``storage.maximumDepth`` and ``status.currentDepth``/``oldestMessageAge``/``openInputCount``/``openOutputCount``
(IBM's "Response body attributes for queues"; an age of -1, "not monitored", maps to None), the parameter keys
``channel``/``status``/``chltype``/``conname`` of a CHSTATUS item (MQSC keyword names, lower case, as for
``queue``/``curdepth``), and how runCommandJSON renders the blank MSGAGE of an unmonitored queue (an empty or
blank string, or a missing key, all map to None).
"""

from __future__ import annotations

import base64
import http.client
import json
import logging
import socket
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from .model import Backend, BackendError, ChannelState, QmgrSnapshot, QueueStatus

log = logging.getLogger(__name__)

API_VERSIONS = ("v1", "v2", "v3")
CSRF_HEADER = "ibm-mq-rest-csrf-token"
DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024
ERROR_BODY_LIMIT = 256 * 1024  # what is read of an error answer
_CHUNK = 256 * 1024

MQCC_FAILED = 2
MQRC_UNKNOWN_OBJECT_NAME = 2085
MQRCCF_CHL_STATUS_NOT_FOUND = 3065

# mqweb ``state`` (lower camel case) -> the model's upper-case word.  ``runningElsewhere`` (the active instance of a
# multi-instance queue manager is on another host) counts as STANDBY from this mqweb's point of view.
QMGR_STATES = {
    "running": "RUNNING",
    "starting": "STARTING",
    "quiescing": "QUIESCING",
    "endingimmediately": "QUIESCING",
    "endingpreemptively": "QUIESCING",
    "runningasstandby": "STANDBY",
    "standby": "STANDBY",
    "runningelsewhere": "STANDBY",
    "ended": "ENDED",
    "endednormally": "ENDED",
    "endedimmediately": "ENDED",
    "endedpreemptively": "ENDED",
    "endedunexpectedly": "ENDED",
    "beingdeleted": "ENDED",
    "statenotavailable": "UNKNOWN",
}

QSTATUS_COMMAND = {"type": "runCommandJSON", "command": "display", "qualifier": "qstatus", "name": "*",
                   "parameters": {"type": "queue"}, "responseParameters": ["curdepth", "ipprocs", "opprocs", "msgage"]}
QLOCAL_COMMAND = {"type": "runCommandJSON", "command": "display", "qualifier": "qlocal", "name": "*",
                  "responseParameters": ["maxdepth"]}
CHSTATUS_COMMAND = {"type": "runCommandJSON", "command": "display", "qualifier": "chstatus", "name": "*",
                    "responseParameters": ["status", "chltype", "conname"]}
V1_QUEUE_QUERY = ("type=local&status=status.currentDepth,status.oldestMessageAge,status.openInputCount,"
                  "status.openOutputCount&attributes=storage.maximumDepth")


class RestHTTPError(BackendError):
    """mqweb answered with an HTTP error status (``status``), with the MQWB message id when it sent one."""

    def __init__(self, message: str, status: int, msg_id: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.msg_id = msg_id


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Never follow a redirect: it would carry the Authorization header to wherever the server points."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[override]
        return None


def map_qmgr_state(state: Any) -> str:
    """mqweb's queue manager ``state`` as RUNNING/STARTING/QUIESCING/STANDBY/ENDED, else UNKNOWN."""
    if not isinstance(state, str):
        return "UNKNOWN"
    return QMGR_STATES.get(state.strip().lower(), "ENDED" if state.strip().lower().startswith("ended") else "UNKNOWN")


def to_int(value: Any) -> int | None:
    """An integer from a JSON number or numeric string; anything else (blank, text, bool, fraction) -> None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    if isinstance(value, str):
        text = value.strip()
        if text and text[0] in "+-":
            sign, digits = text[0], text[1:]
        else:
            sign, digits = "", text
        if digits.isascii() and digits.isdigit():
            return int(sign + digits)
    return None


def to_age(value: Any) -> float | None:
    """MSGAGE / oldestMessageAge in seconds; blank (monitoring off), negative (-1) or garbage -> None."""
    number = to_int(value)
    if number is None or number < 0:
        return None
    return float(number)


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _quote_name(name: str) -> str:
    """Queue manager name in a path segment, with ``.`` encoded too as IBM's documentation asks."""
    return urllib.parse.quote(name, safe="").replace(".", "%2E")


def _mqwb_errors(body: bytes) -> list[dict[str, Any]]:
    """The ``error`` array of an mqweb error answer (empty when the body is not one)."""
    try:
        data = json.loads(body.decode("utf-8", "replace"))
    except ValueError:
        return []
    errors = data.get("error") if isinstance(data, dict) else None
    if not isinstance(errors, list):
        return []
    return [e for e in errors if isinstance(e, dict)]


def _describe_mqwb(errors: list[dict[str, Any]]) -> tuple[str, str]:
    """(msgId, "msgId: message[, reason N]") of the first MQWB error, for a message."""
    if not errors:
        return "", ""
    first = errors[0]
    msg_id = _text(first.get("msgId")) or _text(first.get("messageId"))
    message = _text(first.get("message"))
    if msg_id and message.startswith(msg_id):
        message = message[len(msg_id):].lstrip(": ").strip()
    text = ": ".join(part for part in (msg_id, message) if part)
    reason = to_int(first.get("reasonCode"))
    if reason:
        text += f" (reason {reason})"
    return msg_id, text


class RestBackend(Backend):
    """One queue manager through mqweb's administrative REST API (``api_version`` v1, v2 or v3)."""

    name = "rest"

    def __init__(self, qmgr: str, base_url: str, username: str | None = None, password: str | None = None,
                 client_cert: str | None = None, client_key: str | None = None, ca_file: str | None = None,
                 verify_tls: bool = True, timeout: float = 10.0, api_version: str = "v2",
                 max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES) -> None:
        if api_version not in API_VERSIONS:
            raise ValueError(f"api_version must be one of {', '.join(API_VERSIONS)}, not {api_version!r}")
        parsed = urllib.parse.urlsplit(base_url.strip())
        if "@" in parsed.netloc:
            raise ValueError("base_url must not contain credentials: use username and password")
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError(f"base_url must be http(s)://host:port, not {base_url!r}")
        if (username is None) != (password is None):
            raise ValueError("username and password go together")
        if client_key and not client_cert:
            raise ValueError("client_key needs client_cert")
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        self.qmgr = qmgr
        self.base_url = f"{parsed.scheme}://{parsed.netloc}{parsed.path.rstrip('/')}"
        self.api_version = api_version
        self.username = username
        self._password = password
        self.client_cert = client_cert
        self.client_key = client_key
        self.ca_file = ca_file
        self.verify_tls = verify_tls
        self.timeout = float(timeout)
        self.max_response_bytes = int(max_response_bytes)
        self._https = parsed.scheme == "https"
        self._auth: str | None = None
        if username is not None and password is not None:
            token = base64.b64encode(f"{username}:{password}".encode("utf-8")).decode("ascii")
            self._auth = f"Basic {token}"
            if not self._https:
                log.warning("queue manager %s: basic authentication over plain http to %s", qmgr, self.base_url)
        self._opener: urllib.request.OpenerDirector | None = None
        # Per-item failures of the last snapshot (skipped objects, a v1 mqweb without runCommandJSON), for logs.
        self.item_errors: list[str] = []

    def __repr__(self) -> str:
        return f"RestBackend(qmgr={self.qmgr!r}, base_url={self.base_url!r}, api_version={self.api_version!r})"

    # --- HTTP -------------------------------------------------------------------------------------------------

    def _secret_free(self, text: str) -> str:
        for secret in (self._password, self._auth, self._auth.split(" ", 1)[1] if self._auth else None):
            if secret:
                text = text.replace(secret, "***")
        return text

    def _fail(self, message: str, status: int | None = None, msg_id: str = "") -> BackendError:
        message = self._secret_free(f"queue manager {self.qmgr} via {self.base_url}: {message}")
        return RestHTTPError(message, status, msg_id) if status is not None else BackendError(message)

    def _get_opener(self) -> urllib.request.OpenerDirector:
        if self._opener is None:
            # No environment proxies (mqweb is addressed directly) and no redirects (credentials stay put).
            handlers: list[urllib.request.BaseHandler] = [urllib.request.ProxyHandler({}), _NoRedirect()]
            if self._https:
                handlers.append(urllib.request.HTTPSHandler(context=self._ssl_context()))
            self._opener = urllib.request.build_opener(*handlers)
        return self._opener

    def _ssl_context(self) -> ssl.SSLContext:
        try:
            context = ssl.create_default_context(cafile=self.ca_file)
        except (OSError, ssl.SSLError) as exc:
            raise self._fail(f"cannot load ca_file {self.ca_file}: {exc}") from None
        if not self.verify_tls:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        if self.client_cert:
            try:
                context.load_cert_chain(self.client_cert, self.client_key)
            except (OSError, ssl.SSLError) as exc:
                raise self._fail(f"cannot load client certificate {self.client_cert}: {exc}") from None
        return context

    def _request(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """One request; the decoded JSON answer, or BackendError with a message that names no secret."""
        url = self.base_url + path
        what = f"{method} {path.split('?', 1)[0]}"
        headers = {"Accept": "application/json", CSRF_HEADER: "middleware-exporter",
                   "User-Agent": "middleware-exporter"}
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json;charset=utf-8"
        if self._auth:
            headers["Authorization"] = self._auth
        request = urllib.request.Request(url, data=data, headers=headers, method=method)
        opener = self._get_opener()
        started = time.monotonic()
        try:
            with opener.open(request, timeout=self.timeout) as response:
                raw = self._read(response, self.max_response_bytes, started, what)
        except urllib.error.HTTPError as exc:
            try:
                error_body = exc.read(ERROR_BODY_LIMIT)
            except (OSError, ValueError):
                error_body = b""
            finally:
                exc.close()
            raise self._http_error(exc.code, error_body, what) from None
        except BackendError:
            raise
        except (TimeoutError, socket.timeout):
            raise self._fail(f"timed out after {self.timeout:g} s ({what})") from None
        except urllib.error.URLError as exc:
            raise self._connection_error(exc.reason, what) from None
        except (ConnectionError, ssl.SSLError, OSError) as exc:
            raise self._connection_error(exc, what) from None
        except (http.client.HTTPException, ValueError) as exc:  # bad status line, incomplete read, ...
            raise self._fail(f"bad HTTP answer to {what}: {type(exc).__name__} {exc}".rstrip()) from None
        try:
            return json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            start = raw[:60].decode("utf-8", "replace").replace("\n", " ")
            raise self._fail(f"answer to {what} is not valid JSON ({len(raw)} bytes, starting {start!r})") from None

    def _read(self, response: Any, limit: int, started: float, what: str) -> bytes:
        length = response.headers.get("Content-Length")
        if length and length.isdigit() and int(length) > limit:
            raise self._fail(f"answer to {what} is {int(length)} bytes, over the {limit}-byte limit")
        chunks: list[bytes] = []
        total = 0
        while True:
            if time.monotonic() - started > self.timeout:
                raise self._fail(f"timed out after {self.timeout:g} s reading the answer to {what}")
            chunk = response.read(_CHUNK)
            if not chunk:
                return b"".join(chunks)
            total += len(chunk)
            if total > limit:
                raise self._fail(f"answer to {what} exceeds the {limit}-byte limit")
            chunks.append(chunk)

    def _connection_error(self, reason: Any, what: str) -> BackendError:
        if isinstance(reason, (TimeoutError, socket.timeout)):
            return self._fail(f"timed out after {self.timeout:g} s ({what})")
        if isinstance(reason, ConnectionRefusedError):
            return self._fail(f"connection refused ({what})")
        if isinstance(reason, ssl.SSLCertVerificationError):
            hint = "" if self.ca_file else "; give ca_file for a private CA"
            return self._fail(f"TLS certificate verification failed: {reason.verify_message}{hint} ({what})")
        if isinstance(reason, ssl.SSLError):
            return self._fail(f"TLS error: {reason.reason or reason} ({what})")
        if isinstance(reason, socket.gaierror):
            return self._fail(f"cannot resolve host: {reason.strerror or reason} ({what})")
        if isinstance(reason, ConnectionError):
            return self._fail(f"connection failed: {reason.strerror or type(reason).__name__} ({what})")
        if isinstance(reason, OSError):
            return self._fail(f"connection failed: {reason.strerror or reason} ({what})")
        return self._fail(f"connection failed: {reason} ({what})")

    def _http_error(self, status: int, body: bytes, what: str) -> BackendError:
        msg_id, detail = _describe_mqwb(_mqwb_errors(body))
        suffix = f": {detail}" if detail else ""
        lowered = (detail + " " + body[:2000].decode("utf-8", "replace")).lower()
        if status == 401:
            return self._fail(f"authentication failed (HTTP 401){suffix} ({what})", status, msg_id)
        if status == 403 and (msg_id in ("MQWB0100E", "MQWB0101E") or "csrf" in lowered):
            return self._fail(f"CSRF token header {CSRF_HEADER} missing or rejected (HTTP 403){suffix} ({what})",
                              status, msg_id)
        if status == 403:
            return self._fail(f"authorization failed (HTTP 403){suffix} ({what})", status, msg_id)
        if status == 404:
            if msg_id:
                return self._fail(f"queue manager unknown to mqweb or not reachable from it (HTTP 404){suffix} "
                                  f"({what})", status, msg_id)
            return self._fail(f"not found (HTTP 404): is this an mqweb server with REST API {self.api_version}? "
                              f"({what})", status, msg_id)
        if 300 <= status < 400:
            return self._fail(f"unexpected redirect (HTTP {status}), not followed ({what})", status, msg_id)
        if status >= 500:
            return self._fail(f"mqweb server error (HTTP {status}){suffix} ({what})", status, msg_id)
        return self._fail(f"request rejected (HTTP {status}){suffix} ({what})", status, msg_id)

    # --- MQ ---------------------------------------------------------------------------------------------------

    def _prefix(self, version: str | None = None) -> str:
        return f"/ibmmq/rest/{version or self.api_version}/admin"

    def _qmgr_state(self) -> str:
        data = self._request("GET", f"{self._prefix()}/qmgr/{_quote_name(self.qmgr)}")
        entries = data.get("qmgr") if isinstance(data, dict) else None
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise self._fail("unexpected answer shape for the queue manager (no 'qmgr' array)")
        entry = next((e for e in entries if e.get("name") == self.qmgr), entries[0] if len(entries) == 1 else None)
        if entry is None:
            raise self._fail("queue manager not in mqweb's answer")
        state = entry.get("state")
        if state is None and isinstance(entry.get("status"), dict):
            state = entry["status"].get("state")
        return map_qmgr_state(state)

    def _mqsc(self, command: dict[str, Any], benign: tuple[int, ...], version: str | None = None
              ) -> list[dict[str, Any]]:
        """The ``parameters`` of each usable item of one runCommandJSON DISPLAY; failed items are recorded."""
        what = f"DISPLAY {command['qualifier'].upper()}"
        data = self._request("POST", f"{self._prefix(version)}/action/qmgr/{_quote_name(self.qmgr)}/mqsc", command)
        if not isinstance(data, dict) or not isinstance(data.get("commandResponse"), list):
            raise self._fail(f"unexpected answer shape for {what} (no 'commandResponse' array)")
        items = data["commandResponse"]
        overall = to_int(data.get("overallCompletionCode"))
        usable: list[dict[str, Any]] = []
        failures: list[str] = []
        benign_only = True
        for item in items:
            if not isinstance(item, dict):
                raise self._fail(f"unexpected answer shape for {what} (an item is not an object)")
            code = to_int(item.get("completionCode")) or 0
            params = item.get("parameters")
            if code < MQCC_FAILED:  # OK or warning; an item without parameters carries nothing to report
                if isinstance(params, dict):
                    usable.append(params)
                continue
            reason = to_int(item.get("reasonCode"))
            if reason in benign:
                continue
            benign_only = False
            messages = item.get("message")
            text = "; ".join(m.strip() for m in messages if isinstance(m, str)) if isinstance(messages, list) else ""
            failures.append(f"{what}: completion code {code}, reason {reason}" + (f" ({text})" if text else ""))
        if failures:
            self.item_errors.extend(self._secret_free(f) for f in failures)
            for failure in failures:
                log.warning("queue manager %s: skipped %s", self.qmgr, failure)
        if not usable and failures:
            raise self._fail(f"{what} failed: {failures[0]}")
        if not usable and overall == MQCC_FAILED and not (items and benign_only):
            reason = to_int(data.get("overallReasonCode"))
            raise self._fail(f"{what} failed: overall completion code 2, reason {reason}")
        return usable

    def _queues_mqsc(self) -> list[QueueStatus]:
        status = self._mqsc(QSTATUS_COMMAND, (MQRC_UNKNOWN_OBJECT_NAME,))
        definitions = self._mqsc(QLOCAL_COMMAND, (MQRC_UNKNOWN_OBJECT_NAME,))
        queues: dict[str, QueueStatus] = {}
        for params in status:
            name = _text(params.get("queue"))
            if not name:
                continue
            queues[name] = QueueStatus(
                name=name, depth=to_int(params.get("curdepth")), oldest_message_age=to_age(params.get("msgage")),
                open_input=to_int(params.get("ipprocs")), open_output=to_int(params.get("opprocs")))
        for params in definitions:
            name = _text(params.get("queue"))
            if name:
                queues.setdefault(name, QueueStatus(name=name)).max_depth = to_int(params.get("maxdepth"))
        return [queues[name] for name in sorted(queues)]

    def _queues_v1(self) -> list[QueueStatus]:
        data = self._request("GET", f"{self._prefix('v1')}/qmgr/{_quote_name(self.qmgr)}/queue?{V1_QUEUE_QUERY}")
        entries = data.get("queue", []) if isinstance(data, dict) else None
        if not isinstance(entries, list):
            raise self._fail("unexpected answer shape for the queues (no 'queue' array)")
        queues: list[QueueStatus] = []
        for entry in entries:
            if not isinstance(entry, dict) or not _text(entry.get("name")):
                raise self._fail("unexpected answer shape for the queues (an entry without a name)")
            status = entry.get("status") if isinstance(entry.get("status"), dict) else {}
            storage = entry.get("storage") if isinstance(entry.get("storage"), dict) else {}
            queues.append(QueueStatus(
                name=_text(entry["name"]), depth=to_int(status.get("currentDepth")),
                max_depth=to_int(storage.get("maximumDepth")),
                oldest_message_age=to_age(status.get("oldestMessageAge")),
                open_input=to_int(status.get("openInputCount")), open_output=to_int(status.get("openOutputCount"))))
        return sorted(queues, key=lambda q: q.name)

    def _channels(self) -> list[ChannelState]:
        channels: list[ChannelState] = []
        for params in self._mqsc(CHSTATUS_COMMAND, (MQRCCF_CHL_STATUS_NOT_FOUND,)):
            name = _text(params.get("channel"))
            if not name:
                continue
            channels.append(ChannelState(name=name, status=(_text(params.get("status")) or "UNKNOWN").upper(),
                                         type=_text(params.get("chltype")).upper(),
                                         connection=_text(params.get("conname"))))
        return sorted(channels, key=lambda c: (c.name, c.connection))

    def _channels_v1(self) -> list[ChannelState]:
        try:
            return self._channels()
        except RestHTTPError as exc:
            if exc.status in (400, 404, 405, 415, 501):  # an mqweb (9.0.x) without runCommandJSON
                self.item_errors.append(f"channels not available through REST API v1: {exc}")
                log.info("queue manager %s: no channel status through v1: %s", self.qmgr, exc)
                return []
            raise

    def snapshot(self) -> QmgrSnapshot:
        """Queue manager state, local queues and channel instances; BackendError when mqweb cannot tell."""
        self.item_errors = []
        status = self._qmgr_state()
        if status != "RUNNING":
            return QmgrSnapshot(qmgr=self.qmgr, status=status)
        if self.api_version == "v1":
            return QmgrSnapshot(qmgr=self.qmgr, status=status, queues=self._queues_v1(), channels=self._channels_v1())
        return QmgrSnapshot(qmgr=self.qmgr, status=status, queues=self._queues_mqsc(), channels=self._channels())

    def close(self) -> None:
        self._opener = None
