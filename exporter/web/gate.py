"""The ASGI gate in front of every route: the in-flight request bound and the Date header always; with a web
configuration (``web/webconfig.py``, imported only then) its response headers, rate limit and basic auth.  Apart
from the web configuration so that a start without one does not import it (its pydantic models and TLS code:
docs/footprint.md)."""

from __future__ import annotations

import email.utils
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .webconfig import BasicAuth, LiveWebConfig, _TokenBucket

REALM = 'realm="middleware-exporter"'


class WebGate:
    """ASGI middleware in front of every route: the in-flight request bound, then (with a web config) the
    configured response headers, the rate limit and basic auth. ``open_paths`` answer without basic auth (only
    when the operator says so, e.g. ``/healthz`` for a liveness probe).  ``date``: add the Date header to every
    response (the server's own is off, so that it need not wake up every second to refresh it)."""

    def __init__(self, app, live: LiveWebConfig | None = None, open_paths: frozenset[str] = frozenset(),
                 max_requests: int = 64, date: bool = False) -> None:
        self.app = app
        self.date = date
        self.live = live
        self.open_paths = open_paths
        self.max_requests = max_requests
        self.in_flight = 0
        self.refused = 0
        self.auth: BasicAuth | None = None
        self.bucket: _TokenBucket | None = None
        if live is not None:  # the web configuration's module only where there is one
            from .webconfig import BasicAuth, _TokenBucket

            self.auth = BasicAuth(max_pending=max_requests)  # no tighter than the gate's own bound
            self.bucket = _TokenBucket()

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        config = self.live.current() if self.live is not None else None
        extra = config.headers if config is not None else []
        if self.date:
            extra = [(b"date", http_date()), *extra]

        async def send_with_headers(message) -> None:
            if message["type"] == "http.response.start" and extra:
                message = dict(message)
                message["headers"] = list(message.get("headers", [])) + extra
            await send(message)

        if self.in_flight >= self.max_requests:
            self.refused += 1
            await _plain(send_with_headers, 503, "too many requests in progress\n", [(b"retry-after", b"1")])
            return
        self.in_flight += 1
        try:
            if config is not None:
                if config.rate_interval > 0 and not self.bucket.allow(config.rate_interval, config.rate_burst):
                    await _plain(send_with_headers, 429, "Too Many Requests\n")
                    return
                if config.users and scope.get("path") not in self.open_paths:
                    authorization = None
                    for name, value in scope.get("headers", []):
                        if name == b"authorization":
                            authorization = value.decode("latin-1")
                    client = scope.get("client")  # each address waits in its own line for bcrypt
                    ok = await self.auth.check(config.users, authorization, client[0] if client else "")
                    if ok is None:
                        await _plain(send_with_headers, 503, "authentication busy\n", [(b"retry-after", b"1")])
                        return
                    if not ok:
                        await _plain(send_with_headers, 401, "Unauthorized\n",
                                     [(b"www-authenticate", f"Basic {REALM}".encode())])
                        return
            await self.app(scope, receive, send_with_headers)
        finally:
            self.in_flight -= 1


_date_cache: tuple[int, bytes] = (-1, b"")


def http_date(now: float | None = None) -> bytes:
    """The Date header's value (RFC 9110's IMF-fixdate) for ``now`` (default: the wall clock), formatted once per
    second."""
    global _date_cache
    second = int(time.time() if now is None else now)
    cached = _date_cache
    if cached[0] != second:
        cached = _date_cache = (second, email.utils.formatdate(second, usegmt=True).encode())
    return cached[1]


async def _plain(send, status: int, text: str, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    body = text.encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode()), *(headers or [])]})
    await send({"type": "http.response.body", "body": body})
