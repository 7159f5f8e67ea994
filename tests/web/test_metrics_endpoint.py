"""GET /metrics is answered by the exporter's own ASGI app (exporter/web/server.py, App) without FastAPI's middleware,
routing and dependency layers (issue 30: about 1 ms of CPU per scrape); the answer is the one FastAPI's route
gives, and every other method and path still goes to FastAPI."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from exporter.core.scheduler import Scheduler
from exporter.web.server import create_app

from ..core.test_isolation import Good

PROMETHEUS_ACCEPT = ("application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,"
                     "application/openmetrics-text;version=0.0.1;q=0.5,text/plain;version=1.0.0;q=0.4,"
                     "text/plain;version=0.0.4;q=0.3,*/*;q=0.2")


class _Counting:
    """An ASGI app in front of FastAPI that counts the requests reaching it."""

    def __init__(self, app) -> None:
        self.app, self.paths = app, []

    async def __call__(self, scope, receive, send) -> None:
        self.paths.append((scope.get("method"), scope.get("path")))
        await self.app(scope, receive, send)


@pytest.fixture
def app():
    scheduler = Scheduler([Good("good")])
    scheduler.run_once()
    app = create_app(scheduler)
    app.api = _Counting(app.api)
    return app


@pytest.mark.parametrize("headers", [
    {},
    {"Accept-Encoding": "gzip"},
    {"Accept-Encoding": "identity"},
    {"Accept": PROMETHEUS_ACCEPT, "Accept-Encoding": "gzip"},
    {"Accept": "application/openmetrics-text; version=1.0.0"},
    {"Accept": "application/openmetrics-text;q=0", "Accept-Encoding": "gzip;q=0"},
])
def test_a_scrape_is_answered_as_fastapi_answers_it_without_passing_through_it(app, headers):
    fast = TestClient(app).get("/metrics", headers=headers)
    assert app.api.paths == []
    routed = TestClient(app.api.app).get("/metrics", headers=headers)
    assert fast.status_code == routed.status_code == 200
    assert dict(fast.headers) == dict(routed.headers)
    body = fast.content  # decompressed by the client when the answer is gzip
    assert routed.content == body
    assert b"test_good_value" in body
    assert ("openmetrics" in fast.headers["content-type"]) == body.endswith(b"# EOF\n")


def test_other_methods_and_paths_go_to_fastapi(app):
    client = TestClient(app)
    assert client.head("/metrics").status_code == 405
    assert client.post("/metrics").status_code == 405
    assert client.get("/healthz").json() == {"status": "ok"}
    assert client.get("/api/v1/collectors").status_code == 200
    assert app.api.paths == [("HEAD", "/metrics"), ("POST", "/metrics"), ("GET", "/healthz"),
                             ("GET", "/api/v1/collectors")]
