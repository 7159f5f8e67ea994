"""Connection limits for the HTTP server, so that idle or slow clients cannot starve Prometheus's scrape.

uvicorn has no header-read timeout and no connection cap that protects the accept loop: 500 half-sent requests
stayed open for ever, and under a 1,024 open-file limit asyncio's accept loop logged "socket.accept() out of
system resource" hundreds of thousands of times. Here:

- the listening socket is ours (a ``socket.socket`` subclass whose ``accept`` asyncio calls): at the connection
  cap it first closes the oldest connection that is not serving a request (idle keep-alive, TLS handshake or
  request headers still arriving), so a new scrape always gets in; when every connection is serving a request
  the new one is closed at once. The cap stays below the open-file limit, so accept never hits EMFILE; if
  something else exhausts the descriptors, accept pauses for a second and says so once a minute;
- every connection has a deadline: TLS handshake plus request headers within ``header_timeout``, a request
  (handler and writing the answer to a slow reader) within ``request_timeout``; a kept-alive connection may wait
  ``idle_timeout`` for its next request (longer than Prometheus keeps an idle connection, 5 minutes, so that a
  scrape every 15 s reuses one connection instead of opening one per scrape), and from its first byte has
  ``header_timeout`` again for the headers;
- TLS is started per connection (``loop.start_tls``) with the web configuration's current context, so a
  rotated certificate serves the next connection; request headers are capped at ``max_header_bytes`` (h11);
- what the limits close is logged as one summary line a minute, never a line per connection.

Hand-written because uvicorn offers no hook for these; it relies only on uvicorn's documented ``http`` protocol
class option and on public asyncio APIs (``start_tls``, ``create_server(sock=...)``).
"""

from __future__ import annotations

import asyncio
import errno
import logging
import resource
import socket
import time
from collections import Counter
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .webconfig import LiveWebConfig

log = logging.getLogger("middleware_exporter.web")

RESERVED_FDS = 128  # descriptors kept for collectors, log files, subprocess pipes, database connections
SLACK = 32  # connections being closed that may still hold a descriptor for one loop pass
STALLED_AFTER = 10.0  # a request running this long may be closed to let a new connection in
SUMMARY_EVERY = 60.0
OUT_OF_DESCRIPTORS = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)

OPENING, HANDSHAKE, HEADERS, BUSY, IDLE = "opening", "handshake", "headers", "busy", "idle"
QUIET_EVENTS = frozenset({"idle_timeout"})  # closes that are the normal end of a connection: not in the summary


@dataclass(frozen=True)
class Limits:
    """Defaults sized for ten Prometheus replicas with room to spare (see docs/security.md)."""

    max_connections: int = 256
    max_requests: int = 64
    header_timeout: float = 10.0
    request_timeout: float = 30.0
    idle_timeout: float = 310.0
    max_header_bytes: int = 16384
    backlog: int = 128


def open_file_limit() -> int | None:
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else soft


def connection_cap(requested: int, nofile: int | None = None) -> int:
    """``requested``, lowered so that connections can never use the descriptors the rest of the process needs."""
    nofile = open_file_limit() if nofile is None else nofile
    if nofile is None:
        return requested
    return max(1, min(requested, nofile - RESERVED_FDS - SLACK))


class _Conn:
    __slots__ = ("raw", "state", "timer", "busy_since", "closing")

    def __init__(self) -> None:
        self.raw: asyncio.Transport | None = None
        self.state = OPENING
        self.timer: asyncio.TimerHandle | None = None
        self.busy_since = 0.0
        self.closing = False


class _Summary:
    """Counts what the limits did; logs the first event at once, then one line per minute while it goes on."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.totals: Counter[str] = Counter()
        self._last = -SUMMARY_EVERY
        self._flush_scheduled = False

    def note(self, event: str) -> None:
        self.counts[event] += 1
        self.totals[event] += 1
        now = time.monotonic()
        if now - self._last >= SUMMARY_EVERY:
            self.flush()
        elif not self._flush_scheduled:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                return
            self._flush_scheduled = True
            loop.call_later(SUMMARY_EVERY - (now - self._last), self.flush)

    def flush(self) -> None:
        self._flush_scheduled = False
        if not self.counts:
            return
        self._last = time.monotonic()
        fields = " ".join(f"{k}={v}" for k, v in sorted(self.counts.items()))
        log.warning('msg="connections closed or refused by the web limits (counts since the last such line)" %s',
                    fields)
        self.counts.clear()


class _RepeatFilter(logging.Filter):
    """uvicorn logs a warning per malformed request (e.g. headers over the size cap): once a minute per text."""

    def __init__(self) -> None:
        super().__init__()
        self._seen: dict[str, float] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        key = str(record.msg)
        now = time.monotonic()
        if now - self._seen.get(key, -SUMMARY_EVERY) < SUMMARY_EVERY:
            return False
        self._seen[key] = now
        return True


class ConnectionGuard:
    """Tracks every connection from accept to close and enforces the limits."""

    def __init__(self, limits: Limits, live: LiveWebConfig | None = None) -> None:
        self.limits = limits
        self.live = live
        self.cap = connection_cap(limits.max_connections)
        self.summary = _Summary()
        self._conns: dict[_Conn, None] = {}
        self._accepted = 0  # accepted by the listening socket, no protocol yet
        self._closing = 0
        self._paused_until = 0.0

    # ------------------------------------------------------------------ accounting

    @property
    def open_connections(self) -> int:
        return len(self._conns) + self._accepted

    def _victim(self) -> _Conn | None:
        for conn in self._conns:
            if not conn.closing and conn.state != BUSY:
                return conn
        now = time.monotonic()
        stalled = [c for c in self._conns if not c.closing and now - c.busy_since >= STALLED_AFTER]
        return min(stalled, key=lambda c: c.busy_since) if stalled else None

    def _close(self, conn: _Conn, event: str) -> None:
        if conn.closing or conn not in self._conns:
            return
        if event not in QUIET_EVENTS:
            self.summary.note(event)
        if conn.raw is None:
            self.release(conn)
            return
        conn.closing = True
        self._closing += 1
        conn.raw.abort()

    def release(self, conn: _Conn) -> None:
        if conn.timer is not None:
            conn.timer.cancel()
            conn.timer = None
        if conn in self._conns:
            del self._conns[conn]
            if conn.closing:
                self._closing -= 1

    def _deadline(self, conn: _Conn, seconds: float, event: str) -> None:
        if conn.timer is not None:
            conn.timer.cancel()
        conn.timer = asyncio.get_running_loop().call_later(seconds, self._close, conn, event)

    def mark(self, conn: _Conn, busy: bool) -> None:
        if busy and conn.state != BUSY:
            conn.state, conn.busy_since = BUSY, time.monotonic()
            self._deadline(conn, self.limits.request_timeout, "request_timeout")
        elif not busy and conn.state == BUSY:
            # waiting for the next request: uvicorn's keep-alive timeout (set to idle_timeout) closes it politely;
            # this deadline is the backstop
            conn.state = IDLE
            self._deadline(conn, self.limits.idle_timeout + self.limits.header_timeout, "idle_timeout")

    def request_begins(self, conn: _Conn) -> None:
        """The first bytes of a request arrived on an idle kept-alive connection: its headers are due within
        ``header_timeout``."""
        if conn.state == IDLE:
            conn.state = HEADERS
            self._deadline(conn, self.limits.header_timeout, "header_timeout")

    # ------------------------------------------------------------------ accept

    def before_accept(self) -> str:
        """'accept', 'refuse' (take it off the queue and close it) or 'wait' (descriptors are being freed)."""
        if self.open_connections - self._closing >= self.cap:
            victim = self._victim()
            if victim is None:
                return "refuse"
            self._close(victim, "evicted_at_limit")
        if self.open_connections >= self.cap + SLACK:
            return "wait"
        return "accept"

    def out_of_descriptors(self, exc: OSError) -> None:
        """accept() failed for lack of descriptors: free one if a connection can go, else pause accepting for a
        second (asyncio does that when it sees the error: raise it once, not once per queued connection)."""
        self.summary.note("accept_out_of_descriptors")
        victim = self._victim()
        if victim is not None:
            self._close(victim, "evicted_at_limit")
            raise BlockingIOError from None
        now = time.monotonic()
        if now < self._paused_until:
            raise BlockingIOError from None
        self._paused_until = now + 1.0
        raise exc

    def listen(self, host: str, port: int) -> socket.socket:
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        family, type_, proto, _, address = infos[0]
        sock = _ListeningSocket(family, type_, proto)
        sock.guard = self
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(address)
            sock.listen(self.limits.backlog)
        except OSError:
            sock.close()
            raise
        sock.setblocking(False)
        return sock

    # ------------------------------------------------------------------ protocols

    def protocol(self, **kwargs: Any) -> asyncio.Protocol:
        """uvicorn's ``http`` option: called with config, server_state, app_state (and _loop) per connection."""
        self._accepted = max(0, self._accepted - 1)
        conn = _Conn()
        self._conns[conn] = None
        self._deadline(conn, self.limits.header_timeout, "header_timeout")
        http = _guarded_h11()(guard=self, conn=conn, **kwargs)
        if self.live is not None and self.live.tls:
            return _TLSConnection(self, conn, http)
        return http

    def install(self, loop: asyncio.AbstractEventLoop) -> None:
        """Quiet asyncio's accept-failure log (a line per queued connection) and uvicorn's per-request warnings."""
        previous = loop.get_exception_handler()

        def handler(loop: asyncio.AbstractEventLoop, context: dict) -> None:
            if str(context.get("message", "")).startswith("socket.accept() out of system resource"):
                self.summary.note("accept_out_of_descriptors")
                return
            if previous is not None:
                previous(loop, context)
            else:
                loop.default_exception_handler(context)

        loop.set_exception_handler(handler)
        error_log = logging.getLogger("uvicorn.error")
        if not any(isinstance(f, _RepeatFilter) for f in error_log.filters):
            error_log.addFilter(_RepeatFilter())


class _ListeningSocket(socket.socket):
    """asyncio calls this accept(): the guard decides before a descriptor is taken."""

    guard: ConnectionGuard

    def accept(self):  # type: ignore[override]
        decision = self.guard.before_accept()
        if decision == "wait":
            raise BlockingIOError
        try:
            conn, address = super().accept()
        except OSError as exc:
            if exc.errno in OUT_OF_DESCRIPTORS:
                self.guard.out_of_descriptors(exc)
            raise
        if decision == "refuse":
            conn.close()
            self.guard.summary.note("refused_all_busy")
            raise BlockingIOError
        self.guard._accepted += 1
        return conn, address


@cache
def _guarded_h11() -> type:
    """uvicorn's h11 protocol, reporting to the guard when a request starts and when its answer is complete
    (built on first use: the command line imports this module for the defaults without loading uvicorn)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class _GuardedH11(H11Protocol):
        """uvicorn's h11 protocol, reporting to the guard when a request starts and when its answer is complete."""

        def __init__(self, *, guard: ConnectionGuard, conn: _Conn, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self._guard = guard
            self._conn = conn
            self._head_seen = 0
            self._head_tail = b""

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            conn = self._conn
            if conn.raw is None:  # plain HTTP: this is the TCP transport
                conn.raw = transport
            if conn not in self._guard._conns:  # closed while it was being set up
                transport.abort()
                return
            conn.state = HEADERS

        def data_received(self, data: bytes) -> None:
            self._guard.request_begins(self._conn)
            if self._conn.state != BUSY and self._too_large(data):
                self._guard.summary.note("headers_too_large")
                self.transport.write(b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\n"
                                     b"connection: close\r\n\r\n")
                self.transport.close()
                return
            super().data_received(data)
            self._update()

        def _too_large(self, data: bytes) -> bool:
            """h11's own limit only applies while the header block is incomplete; one that arrives whole in a
            single read is measured here."""
            limit = self._guard.limits.max_header_bytes
            window = self._head_tail + data
            end = window.find(b"\r\n\r\n")
            if end == -1:
                self._head_seen += len(data)
                self._head_tail = window[-3:]
                return self._head_seen > limit
            size = self._head_seen + end + 4 - len(self._head_tail)
            self._head_seen, self._head_tail = 0, b""
            return size > limit

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._head_seen, self._head_tail = 0, b""
            self._update()

        def _update(self) -> None:
            if self._conn.closing:
                return
            self._guard.mark(self._conn, self.cycle is not None and not self.cycle.response_complete)

        def connection_lost(self, exc: Exception | None) -> None:
            super().connection_lost(exc)
            self._guard.release(self._conn)

    return _GuardedH11


class _TLSConnection(asyncio.Protocol):
    """The TCP protocol of a TLS connection: runs the handshake with the current context (``loop.start_tls``),
    then passes the decrypted stream to the HTTP protocol; bytes that arrive before that hand-over are kept."""

    def __init__(self, guard: ConnectionGuard, conn: _Conn, http: Any) -> None:
        self.guard, self.conn, self.http = guard, conn, http
        self.attached = False
        self.pending: list[bytes] = []
        self.eof = False
        self.task: asyncio.Task | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if self.attached:
            return
        self.conn.raw = transport  # type: ignore[assignment]
        if self.conn not in self.guard._conns:
            transport.abort()  # type: ignore[attr-defined]
            return
        self.conn.state = HANDSHAKE
        transport.pause_reading()  # type: ignore[attr-defined]
        self.task = asyncio.get_running_loop().create_task(self._handshake(transport))

    async def _handshake(self, transport) -> None:
        from .webconfig import peer_allowed

        loop = asyncio.get_running_loop()
        config = self.guard.live.current()
        try:
            tls_transport = await loop.start_tls(transport, self, config.ssl_context, server_side=True,
                                                 ssl_handshake_timeout=self.guard.limits.header_timeout)
        except asyncio.CancelledError:
            transport.abort()
            self.guard.release(self.conn)
            raise
        except Exception:  # noqa: BLE001 - any handshake failure (plain HTTP, wrong CA, expired, reset) ends it
            if not self.conn.closing:
                self.guard.summary.note("tls_handshake_failed")
            transport.abort()
            self.guard.release(self.conn)
            return
        if tls_transport is None or tls_transport.is_closing():
            # aborted during the handshake (evicted or timed out): asyncio then completes start_tls without
            # an error and without a transport
            transport.abort()
            self.guard.release(self.conn)
            return
        if not peer_allowed(config, tls_transport.get_extra_info("ssl_object")):
            self.guard.summary.note("client_san_not_allowed")
            transport.abort()
            self.guard.release(self.conn)
            return
        self.attached = True
        self.http.connection_made(tls_transport)
        for data in self.pending:
            self.http.data_received(data)
        self.pending.clear()
        if self.eof:
            self.http.eof_received()

    # after the handshake, asyncio's TLS layer calls these with decrypted data
    def data_received(self, data: bytes) -> None:
        if self.attached:
            self.http.data_received(data)
        else:
            self.pending.append(data)

    def eof_received(self) -> bool | None:
        if self.attached:
            return self.http.eof_received()
        self.eof = True
        return True

    def pause_writing(self) -> None:
        if self.attached:
            self.http.pause_writing()

    def resume_writing(self) -> None:
        if self.attached:
            self.http.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.attached:
            self.attached = False
            self.http.connection_lost(exc)
        else:
            self.guard.release(self.conn)
            if self.task is not None and not self.task.done() and self.conn.raw is None:
                self.task.cancel()
