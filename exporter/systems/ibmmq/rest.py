"""IBM MQ back-end through the administrative REST API of the mqweb server.

One snapshot is at most eight HTTPS requests, each bounded by ``timeout`` and ``max_response_bytes``: ``GET
.../admin/qmgr/{qmgr}`` for the state, then (v2/v3) the ``runCommandJSON`` DISPLAYs of the runmqsc back-end
(QSTATUS, QLOCAL, CHSTATUS, and the optional CHANNEL, QMSTATUS, QMGR and QMSTATUS TYPE(NATIVEHA), whose failures
are the snapshot's ``source_errors``) or (v1) the ``/queue`` resource and a best-effort DISPLAY CHSTATUS.  The
answers are read by :mod:`.parse`; the paths, answer shapes and error bodies it relies on are in
``docs/notes/ibmmq.md``.

HTTP is urllib from the standard library: four plain requests need no client dependency, and urllib lets the
back-end refuse redirects and proxies and cap the size of an answer in a few lines.
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
from collections.abc import Callable
from typing import Any, TypeVar

from ...core.secrets import remember, scrub
from . import mqscmap
from .model import Backend, BackendError, QmgrSnapshot, QueueStatus
from .parse import (
    AnswerShapeError,
    ChannelStatusAnswer,
    MqscAnswer,
    channel_definitions_from_mqsc_json,
    channel_status_from_mqsc_json,
    describe_mqwb_error,
    health_from_mqsc_json,
    mqsc_answer,
    mqwb_error_reason,
    qmgr_state_from_answer,
    queues_from_mqsc_json,
    queues_from_v1,
)
from .pcf import (
    MQRC_STANDBY_Q_MGR,
    MQRC_UNKNOWN_OBJECT_NAME,
    MQRCCF_CHL_STATUS_NOT_FOUND,
    MQRCCF_NHA_NOT_AVAILABLE,
    NHA_COMMAND_LEVEL,
)
from .states import STATES, qmgr_state

log = logging.getLogger(__name__)

API_VERSIONS = ("v1", "v2", "v3")
CSRF_HEADER = "ibm-mq-rest-csrf-token"
DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024
ERROR_BODY_LIMIT = 256 * 1024  # what is read of an error answer
_CHUNK = 256 * 1024

T = TypeVar("T")

# The MQSC commands of the runmqsc back-end (runmqsc.MQSC_COMMANDS) as runCommandJSON requests; the answers'
# lower-case keys go through the same keyword mapping (mqscmap).
QSTATUS_COMMAND = {"type": "runCommandJSON", "command": "display", "qualifier": "qstatus", "name": "*",
                   "parameters": {"type": "queue"}, "responseParameters": ["all"]}
QLOCAL_COMMAND = {"type": "runCommandJSON", "command": "display", "qualifier": "qlocal", "name": "*",
                  "responseParameters": ["maxdepth", "usage", "descr"]}
CHSTATUS_COMMAND = {"type": "runCommandJSON", "command": "display", "qualifier": "chstatus", "name": "*",
                    "responseParameters": ["all"]}
# Optional sources: a failure is recorded in QmgrSnapshot.source_errors (key = qualifier), the snapshot stands.
CHANNEL_COMMAND = {"type": "runCommandJSON", "command": "display", "qualifier": "channel", "name": "*",
                   "responseParameters": ["chltype", "maxinst", "maxinstc", "descr", "xmitq"]}
QMSTATUS_COMMAND = {"type": "runCommandJSON", "command": "display", "qualifier": "qmstatus",
                    "responseParameters": ["all"]}
QMGR_COMMAND = {"type": "runCommandJSON", "command": "display", "qualifier": "qmgr",
                "responseParameters": ["version", "cmdlevel", "qmid", "platform", "deadq", "maxhands"]}
# issue 39: DISPLAY QMSTATUS TYPE(NATIVEHA) ALL (NHATYPE(INSTANCE) by default), read by mqscmap.native_ha like the
# runmqsc answer; an item failing with MQRCCF_NHA_NOT_AVAILABLE says "not Native HA" (no series, no error).
NATIVEHA_COMMAND = {"type": "runCommandJSON", "command": "display", "qualifier": "qmstatus",
                    "parameters": {"type": "nativeha"}, "responseParameters": ["all"]}
V1_QUEUE_QUERY = ("type=local&status=status.currentDepth,status.oldestMessageAge,status.openInputCount,"
                  "status.openOutputCount&attributes=storage.maximumDepth")


class RestHTTPError(BackendError):
    """mqweb answered with an HTTP error status (``status``), with the MQWB message id when it sent one."""

    def __init__(self, message: str, status: int, msg_id: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.msg_id = msg_id
        self.reason: int | None = None  # the MQ reason code of the error body, when it has one


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Never follow a redirect: it would carry the Authorization header to wherever the server points."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[override]
        return None


def _with_channels(snap: QmgrSnapshot, chstatus: ChannelStatusAnswer) -> QmgrSnapshot:
    """The snapshot with the channel instances read, and the answer's error as the ``chstatus`` source's."""
    snap.channels = chstatus.channels
    if chstatus.error:
        snap.source_errors["chstatus"] = chstatus.error[:500]
    return snap


def _quote_name(name: str) -> str:
    """Queue manager name in a path segment, with ``.`` encoded too as IBM's documentation asks."""
    return urllib.parse.quote(name, safe="").replace(".", "%2E")


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
            raise ValueError("base_url must be http(s)://host:port")  # the value unquoted: it could hold a password
        if (username is None) != (password is None):
            raise ValueError("username and password go together")
        if client_key and not client_cert:
            raise ValueError("client_key needs client_cert")
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        self.qmgr = qmgr
        self.base_url = f"{parsed.scheme}://{parsed.netloc}{parsed.path.rstrip('/')}"
        self.api_version = api_version
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
            token = base64.b64encode(f"{username}:{password}".encode()).decode("ascii")
            self._auth = f"Basic {token}"
            remember(token)  # a server that echoes the request must not get the header into a log
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
            error = self._http_error(exc.code, error_body, what)
            if isinstance(error, RestHTTPError):
                error.reason = mqwb_error_reason(error_body)
            raise error from None
        except BackendError:
            raise
        except TimeoutError:
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
            start = scrub(raw[:4096].decode("utf-8", "replace"))[:60].replace("\n", " ")  # scrubbed, then cut
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
        msg_id, detail = describe_mqwb_error(body)
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

    def _prefix(self) -> str:
        return f"/ibmmq/rest/{self.api_version}/admin"

    def _parsed(self, parse: Callable[..., T], *args: Any) -> T:
        """``parse(*args)``, with an answer of the wrong shape reported as this queue manager's error."""
        try:
            return parse(*args)
        except AnswerShapeError as exc:
            raise self._fail(str(exc)) from None

    def _qmgr_state(self) -> str:
        try:
            data = self._request("GET", f"{self._prefix()}/qmgr/{_quote_name(self.qmgr)}")
        except RestHTTPError as exc:
            if exc.reason == MQRC_STANDBY_Q_MGR:  # mqweb beside a standby instance: healthy, not a failure
                log.info("queue manager %s: mqweb answers that it is a standby instance (%s)", self.qmgr, exc)
                return STATES["STANDBY"].name
            raise
        return self._parsed(qmgr_state_from_answer, data, self.qmgr)

    def _mqsc(self, command: dict[str, Any], benign: tuple[int, ...]) -> list[dict[str, Any]]:
        """The ``parameters`` of each usable item of one runCommandJSON DISPLAY; failed items are recorded."""
        return self._mqsc_answer(command, benign).usable

    def _mqsc_answer(self, command: dict[str, Any], benign: tuple[int, ...]) -> MqscAnswer:
        """One runCommandJSON DISPLAY's answer; failed items are recorded, a failed command raises."""
        what = f"DISPLAY {command['qualifier'].upper()}"
        data = self._request("POST", f"{self._prefix()}/action/qmgr/{_quote_name(self.qmgr)}/mqsc", command)
        answer = self._parsed(mqsc_answer, data, what, benign)
        if answer.failures:
            self.item_errors.extend(self._secret_free(f) for f in answer.failures)
            for failure in answer.failures:
                log.warning("queue manager %s: skipped %s", self.qmgr, self._secret_free(failure))
        if answer.error:
            raise self._fail(answer.error)
        return answer

    def _queues_mqsc(self) -> list[QueueStatus]:
        status = self._mqsc(QSTATUS_COMMAND, (MQRC_UNKNOWN_OBJECT_NAME,))
        definitions = self._mqsc(QLOCAL_COMMAND, (MQRC_UNKNOWN_OBJECT_NAME,))
        return queues_from_mqsc_json(status, definitions)

    def _queues_v1(self) -> list[QueueStatus]:
        data = self._request("GET", f"{self._prefix()}/qmgr/{_quote_name(self.qmgr)}/queue?{V1_QUEUE_QUERY}")
        return self._parsed(queues_from_v1, data)

    def _channels(self) -> ChannelStatusAnswer:
        """DISPLAY CHSTATUS: the channel instances, and an error when the answer cannot be read (an item without a
        channel name or status), for ``source_errors["chstatus"]``; a command MQ failed still fails the snapshot."""
        answer = self._mqsc_answer(CHSTATUS_COMMAND, (MQRCCF_CHL_STATUS_NOT_FOUND,))
        chstatus = channel_status_from_mqsc_json(answer)
        if chstatus.error:
            chstatus.error = self._secret_free(chstatus.error)
            log.info("queue manager %s: %s", self.qmgr, chstatus.error)
        return chstatus

    def _channels_v1(self) -> ChannelStatusAnswer:
        try:
            return self._channels()
        except RestHTTPError as exc:
            if exc.status in (400, 404, 405, 415, 501):  # an mqweb (9.0.x) without runCommandJSON
                self.item_errors.append(f"channels not available through REST API v1: {exc}")
                log.info("queue manager %s: no channel status through v1: %s", self.qmgr, exc)
                return ChannelStatusAnswer()
            raise

    def snapshot(self) -> QmgrSnapshot:
        """Queue manager state, local queues and channel instances; BackendError when mqweb cannot tell."""
        self.item_errors = []
        status = self._qmgr_state()
        if not qmgr_state(status).running:
            return QmgrSnapshot(qmgr=self.qmgr, status=status)
        if self.api_version == "v1":  # no MQSC here: definitions and health stay None
            queues = self._queues_v1()
            return _with_channels(QmgrSnapshot(qmgr=self.qmgr, status=status, queues=queues), self._channels_v1())
        queues = self._queues_mqsc()
        snap = _with_channels(QmgrSnapshot(qmgr=self.qmgr, status=status, queues=queues), self._channels())
        self._optional_sources(snap)
        return snap

    def _optional(self, snap: QmgrSnapshot, command: dict[str, Any]) -> list[dict[str, Any]] | None:
        """The usable items of an optional DISPLAY, or None with its error in ``snap.source_errors``.  After one
        timed out the others are not sent (a hung mqweb costs one timeout, not three)."""
        qualifier = command["qualifier"]
        timed_out = next((k for k, v in snap.source_errors.items() if "timed out" in v), None)
        if timed_out is not None:
            snap.source_errors[qualifier] = (f"DISPLAY {qualifier.upper()} not sent: "
                                             f"DISPLAY {timed_out.upper()} timed out")
            return None
        try:
            return self._mqsc(command, (MQRC_UNKNOWN_OBJECT_NAME,))
        except BackendError as exc:  # not authorised, unknown to an older queue manager, timed out, ...
            snap.source_errors[qualifier] = self._secret_free(str(exc))[:500]
            log.info("queue manager %s: %s", self.qmgr, snap.source_errors[qualifier])
            return None

    def _optional_sources(self, snap: QmgrSnapshot) -> None:
        """Channel definitions (DISPLAY CHANNEL) and health (DISPLAY QMSTATUS + DISPLAY QMGR); each may fail alone."""
        definitions = self._optional(snap, CHANNEL_COMMAND)
        if definitions is not None:
            snap.channel_definitions = channel_definitions_from_mqsc_json(definitions)
        qmstatus = self._optional(snap, QMSTATUS_COMMAND)
        qmgr = self._optional(snap, QMGR_COMMAND)
        snap.health = health_from_mqsc_json(qmstatus or [], qmgr or [])
        self._native_ha(snap, qmstatus or [])

    def _native_ha(self, snap: QmgrSnapshot, qmstatus: list[dict[str, Any]]) -> None:
        """Native HA instances (issue 39), as the runmqsc back-end reads them: "not Native HA" (MQ answers
        MQRCCF_NHA_NOT_AVAILABLE, or no instance, or the command level predates Native HA) gives no series and no
        error; any other failure, or no instance where QMSTATUS names one (INSTANCE, 9.4), is the ``nativeha``
        source's error while the rest stands."""
        level = snap.health.command_level if snap.health is not None else ""
        if level.isdigit() and int(level) < NHA_COMMAND_LEVEL:
            return
        timed_out = next((k for k, v in snap.source_errors.items() if "timed out" in v), None)
        if timed_out is not None:
            snap.source_errors["nativeha"] = (f"DISPLAY QMSTATUS TYPE(NATIVEHA) not sent: "
                                              f"DISPLAY {timed_out.upper()} timed out")
            return
        try:
            items = self._mqsc(NATIVEHA_COMMAND, (MQRCCF_NHA_NOT_AVAILABLE,))
        except BackendError as exc:  # not authorised, a syntax error on an older MQ, timed out, ...
            snap.source_errors["nativeha"] = self._secret_free(str(exc))[:500]
            log.info("queue manager %s: %s", self.qmgr, snap.source_errors["nativeha"])
            return
        snap.native_ha = mqscmap.native_ha(mqscmap.upper_keys(item) for item in items)
        configured = any(mqscmap.text(mqscmap.upper_keys(item).get("INSTANCE")) for item in qmstatus)
        if snap.native_ha is None and configured:
            snap.source_errors["nativeha"] = ("DISPLAY QMSTATUS TYPE(NATIVEHA): no instance in the answer, but "
                                              "QMSTATUS names a Native HA instance")

    def close(self) -> None:
        self._opener = None
