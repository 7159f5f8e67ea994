"""HTTP endpoints: /metrics, /healthz, /readyz, /api/v1/collectors, the advice (/api/v1/advice, /advice), the
status page (/), with an inventory file the discovery of its targets (/sd, /api/v1/inventory), and with modules
the probes of single targets (/probe, /api/v1/probes; core/probe.py)."""

from __future__ import annotations

import inspect
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from .. import __version__
from ..core.exposition import OPENMETRICS_CONTENT_TYPE, TEXT_CONTENT_TYPE
from ..core.scheduler import Scheduler


def wants_openmetrics(accept: str) -> bool:
    """True when the client lists application/openmetrics-text with a non-zero weight."""
    for part in accept.split(","):
        media, *params = [p.strip() for p in part.split(";")]
        if media != "application/openmetrics-text":
            continue
        for param in params:
            key, _, value = param.partition("=")
            if key.strip() == "q":
                try:
                    if float(value) == 0:
                        break
                except ValueError:
                    break
        else:
            return True
    return False


def accepts_gzip(accept_encoding: str) -> bool:
    for part in accept_encoding.split(","):
        coding, *params = [p.strip() for p in part.split(";")]
        if coding.lower() in ("gzip", "x-gzip"):
            return not any(p.replace(" ", "") in ("q=0", "q=0.0", "q=0.00", "q=0.000") for p in params)
    return False


def _fastapi_options() -> dict:
    options: dict = {"title": "middleware-exporter", "version": __version__, "docs_url": None, "redoc_url": None,
                     "openapi_url": "/api/v1/openapi.json"}
    # Recent FastAPI releases trace every request with OpenTelemetry by default; an exporter scraped every few
    # seconds has no use for spans about its own scrapes, so switch that off where the option exists.
    if "telemetry" in inspect.signature(FastAPI.__init__).parameters:
        options["telemetry"] = {"tracing": False, "metrics": False, "logs": False, "operation_spans": False}
    return options


def _exposition(scheduler: Scheduler, accept: str, accept_encoding: str) -> tuple[bytes, list[tuple[str, str]]]:
    """The /metrics body in the format and coding the request asks for, and its response headers: the scheduler's
    snapshot (a read), rendered by the exposition (docs/architecture.md, "The scrape path")."""
    openmetrics = wants_openmetrics(accept)
    compress = accepts_gzip(accept_encoding)
    body = scheduler.exposition.render(scheduler.snapshot(), openmetrics, compress)
    headers = [("vary", "Accept, Accept-Encoding")]
    if compress:
        headers.append(("content-encoding", "gzip"))
    headers.append(("content-type", OPENMETRICS_CONTENT_TYPE if openmetrics else TEXT_CONTENT_TYPE))
    return body, headers


class App:
    """The ASGI app: ``GET /metrics`` answered here, everything else by FastAPI.  A scrape is the one request that
    comes every few seconds for ever; through FastAPI's and Starlette's middleware, routing and dependency layers
    it cost about 1 ms of CPU more, a sixth of the exporter's CPU per scrape interval (issue 30,
    docs/footprint.md).  Same answer either way (tests/web/test_metrics_endpoint.py compares them)."""

    def __init__(self, api: FastAPI, scheduler: Scheduler) -> None:
        self.api = api
        self._scheduler = scheduler

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or scope["path"] != "/metrics" or scope["method"] != "GET":
            await self.api(scope, receive, send)
            return
        accept = accept_encoding = b""
        for name, value in scope["headers"]:
            if name == b"accept":
                accept = value if not accept else accept + b"," + value
            elif name == b"accept-encoding":
                accept_encoding = value if not accept_encoding else accept_encoding + b"," + value
        body, headers = _exposition(self._scheduler, accept.decode("latin-1"), accept_encoding.decode("latin-1"))
        raw = [(name.encode(), value.encode("latin-1")) for name, value in headers]
        raw.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": 200, "headers": raw})
        await send({"type": "http.response.body", "body": body})


def shard_parameters(query: Any) -> tuple[int, int] | str:
    """``?shard=I&shards=N`` of a /sd request as (I, N), (0, 1) when neither is given, or the message of the 400
    naming the parameter at fault."""
    from ..core.inventory import MAX_SHARDS

    given = {name: query.getlist(name) for name in ("shard", "shards")}
    if not given["shard"] and not given["shards"]:
        return 0, 1
    values = {}
    for name in ("shard", "shards"):
        if not given[name]:
            return f"{name}: missing (give shard and shards together, e.g. ?shard=0&shards=2)"
        if len(given[name]) > 1:
            return f"{name}: given more than once"
        text = given[name][0]
        if not (text.isascii() and text.isdigit() and len(text) <= 4):
            return f"{name}: must be a whole number"
        values[name] = int(text)
    if not 1 <= values["shards"] <= MAX_SHARDS:
        return f"shards: must be from 1 to {MAX_SHARDS}"
    if values["shard"] >= values["shards"]:
        return "shard: must be from 0 to shards-1"
    return values["shard"], values["shards"]


PROBE_THREADS = 128  # probes waiting for their target's collection at once (each at most its deadline)


def scrape_timeout(headers: Any) -> float | None:
    """The scrape timeout Prometheus sends (``X-Prometheus-Scrape-Timeout-Seconds``), or None."""
    text = headers.get("x-prometheus-scrape-timeout-seconds", "")
    try:
        value = float(text)
    except ValueError:
        return None
    return value if 0 < value < 86400 else None


def create_app(scheduler: Scheduler, catalogue: dict[str, str] | None = None, settings: Any = None,
               inventory: Any = None, prober: Any = None) -> App:
    """The HTTP app over a running scheduler; ``catalogue`` (name -> description of every collector this build
    has) lets the status pages list the disabled ones too; ``settings`` (the loaded configuration) tells the
    advisor which targets are configured; ``inventory`` (a core.inventory.InventoryFile, when one is configured)
    is served at /sd; ``prober`` (a core.probe.Prober, when modules are configured) answers /probe."""
    app = FastAPI(**_fastapi_options())
    enabled = set(scheduler.states)

    @app.get("/metrics")
    async def metrics(request: Request) -> Response:
        body, headers = _exposition(scheduler, request.headers.get("accept", ""),
                                    request.headers.get("accept-encoding", ""))
        return Response(content=body, headers=dict(headers))

    # Handlers return Response objects, not dicts: a `-> dict` annotation would make FastAPI build a pydantic
    # response model, about 2 MB of resident memory for nothing.
    @app.get("/healthz")
    async def healthz() -> JSONResponse:
        return JSONResponse({"status": "ok"})

    @app.get("/readyz")
    async def readyz() -> JSONResponse:
        # 503 "starting" before every collector's first run, 503 "failing" while every collector's run fails (a run
        # with nothing to read counts neither way); 200 "ready", or "degraded" while a target is down or a source
        # fails (core/scheduler.py, Scheduler.readiness)
        readiness = scheduler.readiness()
        body = {key: readiness[key] for key in ("status", "pending_collectors", "failing_collectors", "targets_down")}
        return JSONResponse(body, status_code=200 if readiness["ready"] else 503)

    def collector_status() -> list[dict]:
        result = scheduler.status()
        for name, description in (catalogue or {}).items():
            if name not in enabled:
                result.append({"name": name, "description": description, "enabled": False})
        return result

    @app.get("/api/v1/collectors")
    async def collectors() -> JSONResponse:
        return JSONResponse(collector_status())

    # The advice reads the snapshot the scrape serves (exporter/advisor/report.py); it never runs a collector.
    @app.get("/api/v1/advice")
    async def advice_json() -> JSONResponse:
        from ..advisor.report import build_report

        return JSONResponse(build_report(scheduler, settings))

    @app.get("/advice")
    async def advice_page() -> HTMLResponse:
        from ..advisor.page import CONTENT_SECURITY_POLICY, render
        from ..advisor.report import build_report

        return HTMLResponse(render(build_report(scheduler, settings), version=__version__),
                            headers={"Content-Security-Policy": CONTENT_SECURITY_POLICY})

    if inventory is not None:
        @app.get("/sd")
        async def service_discovery(request: Request) -> Response:
            # Prometheus' http_sd (docs/estate.md): 200 with application/json, [] when there is nothing; the last
            # good inventory while a newer version of the file is broken (/api/v1/inventory says why)
            from ..core.inventory import select

            parameters = shard_parameters(request.query_params)
            if isinstance(parameters, str):
                return Response(parameters + "\n", status_code=400, media_type="text/plain; charset=utf-8")
            return JSONResponse(select(inventory.inventory, *parameters).as_sd())

        @app.get("/api/v1/inventory")
        async def inventory_status() -> JSONResponse:
            return JSONResponse(inventory.status())

    limiter: list[Any] = []  # the probes' thread limit, made in the event loop on the first probe

    @app.get("/probe")
    async def probe(request: Request) -> Response:
        # one target's exposition (docs/estate.md); a refusal (4xx) names what is wrong and runs nothing
        from ..core.probe import ProbeRefused

        query = request.query_params
        if prober is None:
            return Response("no modules configured: /probe needs a modules: section (docs/estate.md)\n",
                            status_code=404, media_type="text/plain; charset=utf-8")
        try:
            module, target = prober.check(query.getlist("target"), query.getlist("module"))
        except ProbeRefused as exc:
            prober.count_request((query.getlist("module") or [""])[0], exc.status)
            return Response(exc.message + "\n", status_code=exc.status, media_type="text/plain; charset=utf-8")
        openmetrics = wants_openmetrics(request.headers.get("accept", ""))
        compress = accepts_gzip(request.headers.get("accept-encoding", ""))
        import anyio

        if not limiter:
            limiter.append(anyio.CapacityLimiter(PROBE_THREADS))
        try:
            body = await anyio.to_thread.run_sync(prober.probe, module, target, openmetrics, compress,
                                                  scrape_timeout(request.headers), limiter=limiter[0])
        except ProbeRefused as exc:
            prober.count_request(module.name, exc.status)
            return Response(exc.message + "\n", status_code=exc.status, media_type="text/plain; charset=utf-8")
        prober.count_request(module.name, 200)
        headers = {"vary": "Accept, Accept-Encoding",
                   "content-type": OPENMETRICS_CONTENT_TYPE if openmetrics else TEXT_CONTENT_TYPE}
        if compress:
            headers["content-encoding"] = "gzip"
        return Response(content=body, headers=headers)

    if prober is not None:
        @app.get("/api/v1/probes")
        async def probes() -> JSONResponse:
            return JSONResponse(prober.status())

    guide: dict[str, list[str]] = {}  # collector -> the guide rows its metrics serve, worked out on first use

    @app.get("/")
    async def landing() -> HTMLResponse:
        # the status page (exporter/web/statuspage.py): the same states as the metrics, the API and the log
        from .statuspage import CONTENT_SECURITY_POLICY, guide_rows, render

        if not guide:
            for name, state in scheduler.states.items():
                guide[name] = guide_rows(f"{spec.help} {spec.unit_note}" for spec in state.collector.specs())
        return HTMLResponse(render(collector_status(), scheduler.readiness(), guide, __version__,
                                   inventory=inventory.status() if inventory is not None else None,
                                   probes=prober.status() if prober is not None else None),
                            headers={"Content-Security-Policy": CONTENT_SECURITY_POLICY})

    return App(app, scheduler)
