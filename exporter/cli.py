"""Command line: ``middleware-exporter [run|check-config|collect-once] [flags]``."""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from typing import Any, Sequence

import yaml
from pydantic import BaseModel, SecretStr

from . import __version__
from .core.collector import Collector, Context
from .core.config import DEFAULT_LISTEN_ADDRESS, ENV_PREFIX, ConfigError, masked_dump, parse_listen_address
from .core.scheduler import Scheduler
from .registry import COLLECTORS, Config, load

COMMANDS = ("run", "check-config", "collect-once")
log = logging.getLogger("middleware_exporter")


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", metavar="FILE",
                        help=f"YAML configuration file (or set {ENV_PREFIX}CONFIG). Without one, built-in defaults "
                             "apply: host and process metrics.")
    common.add_argument("--web.listen-address", dest="listen_address", metavar="ADDR",
                        help=f"Address to listen on (default {DEFAULT_LISTEN_ADDRESS}).")
    common.add_argument("--path.procfs", dest="procfs", metavar="DIR", help="procfs mount point (default /proc).")
    common.add_argument("--path.sysfs", dest="sysfs", metavar="DIR", help="sysfs mount point (default /sys).")
    common.add_argument("--log.level", dest="log_level", choices=("debug", "info", "warning", "error"))
    common.add_argument("--log.format", dest="log_format", choices=("logfmt", "json"))
    for cls in COLLECTORS:
        name = cls.name
        common.add_argument(f"--collector.{name}", dest=f"collector_{name}", action=argparse.BooleanOptionalAction,
                            default=None, help=f"Enable the {name} collector: {cls.description}")
    parser = argparse.ArgumentParser(
        prog="middleware-exporter",
        description="Prometheus exporter for HPOM, Oracle, IBM MQ, VHI and Domino servers.",
    )
    parser.add_argument("--version", action="version", version=f"middleware-exporter {__version__}")
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("run", parents=[common], help="Serve /metrics (the default command).")
    sub.add_parser("check-config", parents=[common],
                   help="Validate the configuration and print it with secrets masked.")
    once = sub.add_parser("collect-once", parents=[common],
                          help="Run every enabled collector once and print the exposition.")
    once.add_argument("--format", choices=("text", "openmetrics"), default="text")
    once.add_argument("--no-self-metrics", action="store_true",
                      help="Leave out the exporter's own metrics (durations, timestamps), e.g. for golden files.")
    return parser


def _overrides(args: argparse.Namespace) -> dict[tuple[str, ...], Any]:
    result: dict[tuple[str, ...], Any] = {}
    if args.listen_address is not None:
        result[("web", "listen_address")] = args.listen_address
    if args.procfs is not None:
        result[("paths", "procfs")] = args.procfs
    if args.sysfs is not None:
        result[("paths", "sysfs")] = args.sysfs
    if args.log_level is not None:
        result[("log", "level")] = args.log_level
    if args.log_format is not None:
        result[("log", "format")] = args.log_format
    for cls in COLLECTORS:
        value = getattr(args, f"collector_{cls.name}")
        if value is not None:
            result[("collectors", cls.name, "enabled")] = value
    return result


def secret_values(model: Any) -> list[str]:
    """Every SecretStr value in the configuration, so that error messages can be scrubbed of them."""
    found: list[str] = []
    if isinstance(model, SecretStr):
        value = model.get_secret_value()
        if value:
            found.append(value)
    elif isinstance(model, BaseModel):
        for name in type(model).model_fields:
            found.extend(secret_values(getattr(model, name)))
    elif isinstance(model, (list, tuple)):
        for item in model:
            found.extend(secret_values(item))
    elif isinstance(model, dict):
        for item in model.values():
            found.extend(secret_values(item))
    return found


def make_redactor(config: BaseModel):
    secrets = sorted(set(secret_values(config)), key=len, reverse=True)

    def redact(text: str) -> str:
        for secret in secrets:
            text = text.replace(secret, "********")
        return text

    return redact


class _LogfmtFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z"
        message = record.getMessage()
        if "msg=" not in message:
            message = f"msg={json.dumps(message)}"
        return f"ts={ts} level={record.levelname.lower()} logger={record.name} {message}"


class _JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z"
        return json.dumps({"ts": ts, "level": record.levelname.lower(), "logger": record.name,
                           "msg": record.getMessage()})


def setup_logging(level: str, fmt: str, redact=lambda s: s) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_JsonFormatter() if fmt == "json" else _LogfmtFormatter())

    class _Redact(logging.Filter):
        def filter(self, record: logging.LogRecord) -> bool:
            record.msg = redact(record.getMessage())
            record.args = None
            return True

    handler.addFilter(_Redact())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True


def build_collectors(config: Config) -> list[Collector]:
    context = Context(procfs=config.paths.procfs, sysfs=config.paths.sysfs)
    collectors = []
    for cls, settings in config.collectors.collectors():
        if not settings.enabled:
            continue
        try:
            collectors.append(cls(settings, context))
        except Exception as exc:  # noqa: BLE001 - report which collector could not start
            raise ConfigError(f"collectors.{cls.name}: cannot start: {exc}") from None
    return collectors


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in COMMANDS and argv[0] not in ("-h", "--help", "--version")):
        argv.insert(0, "run")
    args = _parser().parse_args(argv)
    try:
        config = load(args.config, overrides=_overrides(args))
        host, port = parse_listen_address(config.web.listen_address)
        redact = make_redactor(config)
        setup_logging(config.log.level, config.log.format, redact)
        if args.command == "check-config":
            build_collectors(config)  # constructors validate what pydantic cannot (e.g. regexes in use)
            print(yaml.safe_dump(masked_dump(config), sort_keys=False), end="")
            print("configuration OK", file=sys.stderr)
            return 0
        collectors = build_collectors(config)
    except ConfigError as exc:
        print(f"middleware-exporter: {exc}", file=sys.stderr)
        return 2
    scheduler = Scheduler(collectors, redact=redact)
    if args.command == "collect-once":
        return _collect_once(scheduler, args)
    return _serve(scheduler, config, host, port)


def _collect_once(scheduler: Scheduler, args: argparse.Namespace) -> int:
    scheduler.run_once()
    openmetrics = args.format == "openmetrics"
    if args.no_self_metrics:
        from .core.exposition import render_families

        families = [family for state in scheduler.states.values() for family in state.families]
        body = render_families(families, openmetrics)
    else:
        body = scheduler.render(openmetrics=openmetrics)
    sys.stdout.buffer.write(body)
    sys.stdout.flush()
    failed = [s for s in scheduler.states.values() if not s.success]
    for state in failed:
        print(f"collector {state.name} failed: {state.last_error}", file=sys.stderr)
    return 1 if failed else 0


def _serve(scheduler: Scheduler, config, host: str, port: int) -> int:
    import asyncio

    import uvicorn

    from .server import create_app

    class _QuietServer(uvicorn.Server):
        """uvicorn wakes up every 0.1 s to check for shutdown: about 3 ms of CPU per second on an idle exporter,
        more than collecting host metrics.  Tick once a second instead, and wake at once on SIGTERM/SIGINT;
        on_tick still refreshes the Date header every second (it does so when the counter is a multiple of 10)."""

        _wake: asyncio.Event | None = None
        _loop: asyncio.AbstractEventLoop | None = None

        async def main_loop(self) -> None:
            self._loop = asyncio.get_running_loop()
            self._wake = asyncio.Event()
            counter = 0
            should_exit = await self.on_tick(counter)
            while not should_exit:
                counter = (counter + 10) % 864000
                try:
                    await asyncio.wait_for(self._wake.wait(), 1.0)
                except asyncio.TimeoutError:
                    pass
                should_exit = await self.on_tick(counter)

        def handle_exit(self, sig, frame) -> None:
            super().handle_exit(sig, frame)
            if self._loop is not None and self._wake is not None:
                self._loop.call_soon_threadsafe(self._wake.set)

    app = create_app(scheduler, {cls.name: cls.description for cls in COLLECTORS})
    log.info("msg=%s version=%s listen_address=%s collectors=%s", json.dumps("starting"), __version__,
             config.web.listen_address, ",".join(scheduler.states) or "none")
    scheduler.start()
    server_cls = _QuietServer if hasattr(uvicorn.Server, "on_tick") else uvicorn.Server
    server = server_cls(uvicorn.Config(app, host=host, port=port, log_config=None, access_log=False,
                                           server_header=False, lifespan="off", ws="none"))
    try:
        server.run()
    finally:
        scheduler.stop()
    return 0 if server.started else 1
