"""Command line: ``middleware-exporter [run|check-config|collect-once|advise|healthcheck] [flags]``."""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import signal
import sys
import threading
import time
import traceback
from typing import Any, NoReturn, Sequence

from pydantic import BaseModel

from .core import buildinfo
from .core.collector import Collector, Context, static_label_problems
from .core.config import DEFAULT_LISTEN_ADDRESS, ENV_PREFIX, ConfigError, masked_dump, parse_listen_address
from .core.configfiles import UnreadableFile, read_file
from .core.scheduler import Scheduler, cause_key
from .core.secrets import MAX_SECRET_BYTES, check_password_sources, refused_secret_files, remember, scrub
from .core.secrets import secret_values as _secret_values
from .machine import runner
from .registry import COLLECTORS, Config, load

COMMANDS = ("run", "check-config", "collect-once", "advise", "healthcheck")
COLLECT_ONCE_EXIT_STATUS = """exit status:
  0  every enabled collector ran and every configured target and source was read
  1  a collector failed, or one of its targets or sources failed (a database or queue
     manager that cannot be reached or refuses the login, a query, a command);
     with --strict also when a source is absent here (*_source_present 0)
  2  the configuration is invalid"""
ADVISE_EXIT_STATUS = """exit status:
  0  nothing deviates from the guides (follows or unknown only)
  1  at least one recommendation deviates
  2  the configuration is invalid, or the exporter at --url could not be asked"""
CHECK_CONFIG_EXIT_STATUS = """exit status:
  0  the configuration is valid; it is printed on stdout with every secret masked
  2  it is not, and stderr says why: a wrong key or value, a collector that cannot
     start, a password_file not readable or a password_env not set (unless
     --no-password-sources), a --web.config.file that does not load, a bad flag"""
OUTPUT_CLOSED_STATUS = 141  # 128 + SIGPIPE, the status a shell shows for a tool stopped by a closed pipe
log = logging.getLogger("middleware_exporter")


class _Parser(argparse.ArgumentParser):
    """argparse quotes a rejected value in its error ("invalid choice: 'x'", "unrecognized arguments: --a=x"); a
    value may be a password typed in the wrong place, so the errors name the flag only."""

    def error(self, message: str) -> NoReturn:  # type: ignore[override]
        quoted = r"""(?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")"""
        message = re.sub(r"(invalid (?:choice|[\w ]+ value)|ignored explicit argument):? " + quoted, r"\1", message)
        message = re.sub(r"(ambiguous option: )(-[^=\s]*)=\S*", r"\1\2", message)
        if message.startswith("unrecognized arguments: "):
            words = message[len("unrecognized arguments: "):].split()
            flags = [w.split("=", 1)[0] for w in words if re.fullmatch(r"--?[A-Za-z][\w.-]*(=.*)?", w)]
            others = len(words) - len(flags)
            message = "unrecognized arguments: " + " ".join(flags + ([f"({others} other)"] if others else []))
        super().error(message)


def _parser() -> argparse.ArgumentParser:
    common = _Parser(add_help=False)
    common.add_argument("--config", metavar="FILE",
                        help=f"YAML configuration file (or set {ENV_PREFIX}CONFIG). Without one, built-in defaults "
                             "apply: host and process metrics.")
    common.add_argument("--path.procfs", dest="procfs", metavar="DIR", help="procfs mount point (default /proc).")
    common.add_argument("--path.sysfs", dest="sysfs", metavar="DIR", help="sysfs mount point (default /sys).")
    common.add_argument("--path.rootfs", dest="rootfs", metavar="DIR",
                        help="mount point of the host's root file system (default /).")
    common.add_argument("--log.level", dest="log_level", choices=("debug", "info", "warning", "error"))
    common.add_argument("--log.format", dest="log_format", choices=("logfmt", "json"))
    for cls in COLLECTORS:
        name = cls.name
        common.add_argument(f"--collector.{name}", dest=f"collector_{name}", action=argparse.BooleanOptionalAction,
                            default=None, help=f"Enable the {name} collector: {cls.description}")
    parser = _Parser(
        prog="middleware-exporter",
        description="Prometheus exporter for HPOM, Oracle, IBM MQ, VHI and Domino servers.",
        formatter_class=argparse.RawDescriptionHelpFormatter,  # --version's lines as written
    )
    parser.add_argument("--version", action="version", version=buildinfo.version_text())
    # where and how the exporter serves: run, and check-config to validate it; the connection limits: run only
    web = _Parser(add_help=False)
    web.add_argument("--web.listen-address", dest="listen_address", metavar="ADDR",
                     help=f"Address to listen on (default {DEFAULT_LISTEN_ADDRESS}).")
    web.add_argument("--web.config.file", dest="web_config_file", metavar="FILE",
                     help="exporter-toolkit web configuration (TLS, basic auth, headers), the file node_exporter "
                          "reads; see docs/security.md.")
    web.add_argument("--inventory.file", dest="inventory_file", metavar="FILE",
                     help="The estate's targets in a file_sd-shaped file (YAML or JSON), served at /sd; see "
                          "docs/estate.md.")
    server = _Parser(add_help=False)
    _web_flags(server)
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("run", parents=[common, web, server], help="Serve /metrics (the default command).")
    check = sub.add_parser("check-config", parents=[common, web],
                           help="Validate the configuration and print it with secrets masked.",
                           description="Validate the configuration (file, environment, flags) and the web "
                                       "configuration as run would load them, and print the configuration with "
                                       "every secret masked.", epilog=CHECK_CONFIG_EXIT_STATUS,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    check.add_argument("--no-password-sources", action="store_true",
                       help="Do not check that password files are readable and password variables set (for "
                            "checking a configuration away from the host that will run it, e.g. a rendered chart).")
    once = sub.add_parser("collect-once", parents=[common],
                          help="Run every enabled collector once and print the exposition; exit 1 when a collector "
                               "or a configured target failed.",
                          description="Run every enabled collector once, print the exposition on stdout and what "
                                      "failed on stderr.", epilog=COLLECT_ONCE_EXIT_STATUS,
                          formatter_class=argparse.RawDescriptionHelpFormatter)
    once.add_argument("--strict", action="store_true",
                      help="Also exit 1 when an enabled collector finds one of its sources absent on this host "
                           "(a *_source_present 0 series).")
    once.add_argument("--format", choices=("text", "openmetrics"), default="text")
    once.add_argument("--no-self-metrics", action="store_true",
                      help="Leave out the exporter's own metrics (durations, timestamps), e.g. for golden files.")
    advise = sub.add_parser("advise", parents=[common],
                            help="The guides' recommendations against this estate (docs/advisor.md); exit 1 when "
                                 "something deviates.",
                            description="Run every enabled collector once (as collect-once does) and judge the "
                                        "snapshot against the guides' advice rows, or ask a running exporter "
                                        "(--url). Prints a table, or the JSON of GET /api/v1/advice.",
                            epilog=ADVISE_EXIT_STATUS, formatter_class=argparse.RawDescriptionHelpFormatter)
    health = sub.add_parser("healthcheck",
                            help="Probe the running exporter's /healthz as its own configuration says (scheme, "
                                 "address, port); exit 1 when it does not answer. The image's HEALTHCHECK.",
                            description="Read the serving exporter's command line, environment and working "
                                        "directory from /proc, load its configuration as run does, and GET /healthz "
                                        "where it listens: https when its web config has TLS (accepting exactly "
                                        "the configured certificate), http otherwise. A 401 of its basic auth, a "
                                        "429 or a 503 count as answers. Exit 0 healthy, 1 unhealthy.")
    health.add_argument("--pid", type=int, metavar="PID",
                        help="The serving exporter's process id (default: PID 1 when it is the exporter, as in the "
                             "image; else the only serving exporter of this user in this mount namespace).")
    health.add_argument("--timeout", type=float, metavar="SECONDS", default=4.0,
                        help="Give up after this many seconds (default 4; keep it under HEALTHCHECK --timeout).")
    advise.add_argument("--format", choices=("text", "json"), default="text")
    advise.add_argument("--url", metavar="URL",
                        help="A running exporter's base URL (e.g. https://host:19462): fetch its /api/v1/advice "
                             "instead of collecting here.")
    advise.add_argument("--url.username", dest="url_username", metavar="USER", help="--url: basic-auth user.")
    advise.add_argument("--url.password-file", dest="url_password_file", metavar="FILE",
                        help="--url: file holding the basic-auth password (never on the command line).")
    advise.add_argument("--url.ca-file", dest="url_ca_file", metavar="FILE",
                        help="--url: CA bundle to verify the exporter's TLS certificate.")
    return parser


def _web_flags(parser: argparse.ArgumentParser) -> None:
    """The server's probe exemptions and connection limits (docs/security.md)."""
    from .web.limits import Limits

    defaults = Limits()
    parser.add_argument("--web.auth-exempt-path", dest="web_auth_exempt", action="append", default=[],
                        choices=("/healthz", "/readyz"),
                        help="Answer this path without basic auth (for probes; repeatable). TLS still applies.")
    parser.add_argument("--web.max-connections", dest="web_max_connections", type=int, metavar="N",
                        default=defaults.max_connections,
                        help="Open connections at most (lowered to fit the open-file limit); at the limit the oldest "
                             f"idle connection is closed (default {defaults.max_connections}).")
    parser.add_argument("--web.max-requests", dest="web_max_requests", type=int, metavar="N",
                        default=defaults.max_requests,
                        help=f"Requests in progress at most; more get 503 (default {defaults.max_requests}).")
    parser.add_argument("--web.header-timeout", dest="web_header_timeout", type=float, metavar="SECONDS",
                        default=defaults.header_timeout,
                        help="Seconds for the TLS handshake and the request headers to arrive (default "
                             f"{defaults.header_timeout:g}).")
    parser.add_argument("--web.request-timeout", dest="web_request_timeout", type=float, metavar="SECONDS",
                        default=defaults.request_timeout,
                        help="Seconds to answer a request, writing to a slow reader included (default "
                             f"{defaults.request_timeout:g}).")
    parser.add_argument("--web.idle-timeout", dest="web_idle_timeout", type=float, metavar="SECONDS",
                        default=defaults.idle_timeout,
                        help="Seconds a kept-alive connection may wait for its next request (default "
                             f"{defaults.idle_timeout:g}: longer than Prometheus keeps an idle connection, so that "
                             "it scrapes over one connection).")
    parser.add_argument("--web.max-header-bytes", dest="web_max_header_bytes", type=int, metavar="BYTES",
                        default=defaults.max_header_bytes,
                        help=f"Request line and headers at most (default {defaults.max_header_bytes}).")


def _web_limits(args: argparse.Namespace):
    from .web.limits import Limits

    for name, value, low in (("--web.max-connections", args.web_max_connections, 1),
                             ("--web.max-requests", args.web_max_requests, 1),
                             ("--web.header-timeout", args.web_header_timeout, 0.1),
                             ("--web.request-timeout", args.web_request_timeout, 0.1),
                             ("--web.idle-timeout", args.web_idle_timeout, 0.1),
                             ("--web.max-header-bytes", args.web_max_header_bytes, 1024)):
        if not value >= low:
            raise ConfigError(f"{name}: must be at least {low:g}")
    return Limits(max_connections=args.web_max_connections, max_requests=args.web_max_requests,
                  header_timeout=args.web_header_timeout, request_timeout=args.web_request_timeout,
                  idle_timeout=args.web_idle_timeout, max_header_bytes=args.web_max_header_bytes)


def _overrides(args: argparse.Namespace) -> dict[tuple[str, ...], Any]:
    result: dict[tuple[str, ...], Any] = {}
    if getattr(args, "listen_address", None) is not None:  # run and check-config have the flag
        result[("web", "listen_address")] = args.listen_address
    if getattr(args, "inventory_file", None) is not None:
        result[("inventory", "file")] = args.inventory_file
    if args.procfs is not None:
        result[("paths", "procfs")] = args.procfs
    if args.sysfs is not None:
        result[("paths", "sysfs")] = args.sysfs
    if args.rootfs is not None:
        result[("paths", "rootfs")] = args.rootfs
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
    return _secret_values(model)


def make_redactor(config: BaseModel):
    """The scrubber for every text that leaves the process: the configuration's passwords, every password read
    from a file or the environment since (``core.secrets``), and URL passwords."""
    for value in _secret_values(config):
        remember(value)
    return scrub


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


def scrub_tracebacks() -> None:
    """Uncaught exceptions (main thread and others) print their traceback scrubbed of secrets: Python's own
    hooks write it to stderr directly, past the logging filter."""

    def hook(exc_type, exc, tb) -> None:
        sys.stderr.write(scrub("".join(traceback.format_exception(exc_type, exc, tb))))

    def thread_hook(args: threading.ExceptHookArgs) -> None:
        if args.exc_type is not SystemExit:
            sys.stderr.write(f"Exception in thread {args.thread.name if args.thread else '?'}:\n")
            hook(args.exc_type, args.exc_value, args.exc_traceback)

    sys.excepthook = hook
    threading.excepthook = thread_hook


def setup_logging(level: str, fmt: str, redact=scrub) -> None:
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
    context = Context(procfs=config.paths.procfs, sysfs=config.paths.sysfs, rootfs=config.paths.rootfs)
    refused = [problem for entry, settings in config.collectors.collectors() if settings.enabled
               for problem in refused_secret_files(settings, f"collectors.{entry.name}")]
    if refused:  # a FIFO as a password file: check-config waited for ever, run hung its collector (issue 38)
        raise ConfigError("password sources:\n" + "\n".join(f"  {p}" for p in refused))
    collectors = []
    for entry, settings in config.collectors.collectors():
        if not settings.enabled:
            continue
        try:
            collectors.append(entry.load()(settings, context))  # a collector's module is imported only when enabled
        except Exception as exc:  # noqa: BLE001 - report which collector could not start
            raise ConfigError(scrub(f"collectors.{entry.name}: cannot start: {exc}")) from None
    problems = static_label_problems(config.labels, collectors)
    if problems:
        raise ConfigError("invalid configuration:\n" + "\n".join(f"  {problem}" for problem in problems))
    return collectors


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:
        # stdout's reader went away (`advise | head`): stop quietly, as a tool that SIGPIPE ends, without a traceback
        # now or at exit's flush of stdout (the Python documentation's recipe, "Note on SIGPIPE")
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return OUTPUT_CLOSED_STATUS


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in COMMANDS and argv[0] not in ("-h", "--help", "--version")):
        argv.insert(0, "run")
    scrub_tracebacks()
    args = _parser().parse_args(argv)
    if args.command == "advise" and args.url:
        return _advise_remote(args)
    if args.command == "healthcheck":
        return _healthcheck(args)
    try:
        config = load(args.config, overrides=_overrides(args))
        host, port = parse_listen_address(config.web.listen_address)
        redact = make_redactor(config)
        setup_logging(config.log.level, config.log.format, redact)
        limits = _web_limits(args) if args.command == "run" else None
        web_config = None
        if getattr(args, "web_config_file", None):
            from .web.webconfig import load_web_config

            web_config = load_web_config(args.web_config_file)
        inventory = None
        if config.inventory.file and args.command in ("run", "check-config"):
            from .core.inventory import InventoryError, InventoryFile

            try:  # a broken inventory at start is a configuration error; later ones keep the last good one
                inventory = InventoryFile(config.inventory.file, config.inventory.refresh_interval)
            except InventoryError as exc:
                raise ConfigError(str(exc)) from None
        if args.command == "check-config":
            build_collectors(config)  # constructors validate what pydantic cannot (e.g. regexes in use)
            if not args.no_password_sources:
                _check_password_sources(config)
            import yaml

            print(yaml.safe_dump(masked_dump(config), sort_keys=False), end="")
            print("configuration OK", file=sys.stderr)
            return 0
        collectors = build_collectors(config)
    except ConfigError as exc:
        print(f"middleware-exporter: {scrub(str(exc))}", file=sys.stderr)
        return 2
    scheduler = Scheduler(collectors, redact=redact, labels=config.labels)
    if args.command == "collect-once":
        return _collect_once(scheduler, args)
    if args.command == "advise":
        return _advise(scheduler, config, args)
    return _serve(scheduler, config, host, port, limits, web_config, frozenset(args.web_auth_exempt), inventory)


def _serving(args: list[str]) -> bool:
    """Whether these exporter arguments start the server (``run`` is the default command, as in main())."""
    return not args or args[0] == "run" or (args[0] not in COMMANDS and args[0] not in ("-h", "--help", "--version"))


def _healthcheck(args: argparse.Namespace) -> int:
    """``healthcheck``: the serving process's own flags, environment and files decide where and how to probe
    (web.healthcheck); exit 0 healthy, 1 unhealthy, with one line saying why."""
    from .web import healthcheck

    try:
        server = healthcheck.server_process(args.pid if args.pid is not None else healthcheck.find_server(_serving))
        if not _serving(server.args):
            raise healthcheck.NotFound(f"process {server.pid} runs {server.args[0]}, not the server")
        server_argv = server.args if server.args[:1] == ["run"] else ["run", *server.args]
        try:
            os.chdir(server.cwd)  # its relative --config and --web.config.file
        except OSError:
            pass  # not ours to enter: absolute paths still work, a relative one fails below naming the file
        served = _parser().parse_args(server_argv)
        config = load(served.config, environ=server.environ, overrides=_overrides(served))
        host, port = parse_listen_address(config.web.listen_address)
        web_config = None
        if served.web_config_file:
            from .web.webconfig import load_web_config

            web_config = load_web_config(served.web_config_file)
        healthy, seen = healthcheck.probe(host, port, web_config, args.timeout)
    except (healthcheck.NotFound, ConfigError, OSError) as exc:
        healthy, seen = False, str(getattr(exc, "strerror", None) or exc)
    print(f"{'healthy' if healthy else 'unhealthy'}: {scrub(seen)}")
    return 0 if healthy else 1


def _check_password_sources(config: Config) -> None:
    """check-config: every password_file of an enabled collector readable and not empty, every password_env set
    (the messages name the key and the file or variable, never the password)."""
    problems: list[str] = []
    for entry, settings in config.collectors.collectors():
        if settings.enabled:
            found, warnings = check_password_sources(settings, f"collectors.{entry.name}")
            problems += found
            for warning in warnings:
                print(f"middleware-exporter: warning: {warning}", file=sys.stderr)
    if problems:
        raise ConfigError("password sources:\n" + "\n".join(f"  {p}" for p in problems))


def _absent_sources(state) -> list[str]:
    """The sources a collector reported absent here (``*_source_present`` 0)."""
    return [sample.labels.get("source", "?") for family in state.families if family.name.endswith("_source_present")
            for sample in family.samples if sample.value == 0]


def _collect_once(scheduler: Scheduler, args: argparse.Namespace) -> int:
    """One run of every collector; the exit status is described in COLLECT_ONCE_EXIT_STATUS."""
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
    failures: list[str] = []
    advice: list[str] = []
    for state in scheduler.states.values():
        if not state.success:
            failures.append(f"collector {state.name} failed: {state.last_error}")
            continue
        by_cause: dict[str, list[str]] = {}
        for source, error in sorted(state.source_errors.items()):
            by_cause.setdefault(cause_key(error), []).append(source)
        failures += [f"collector {state.name}: {', '.join(sources)} failed: {state.source_errors[sources[0]]}"
                     for sources in by_cause.values()]
        advice += [f"collector {state.name}: source {source} is not present here" for source in _absent_sources(state)]
    for line in failures + (advice if args.strict else []):
        print(scrub(line), file=sys.stderr)
    return 1 if failures or (args.strict and advice) else 0


def _print_advice(report: dict, fmt: str) -> int:
    from .advisor.report import deviating, report_to_text

    if fmt == "json":
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        print(report_to_text(report), end="")
    return 1 if deviating(report) else 0


def _advise(scheduler: Scheduler, config: Config, args: argparse.Namespace) -> int:
    """One run of every collector, as collect-once does, then the advice on that snapshot (ADVISE_EXIT_STATUS)."""
    from .advisor.report import build_report

    scheduler.run_once()
    return _print_advice(build_report(scheduler, config), args.format)


def _advise_remote(args: argparse.Namespace) -> int:
    """The advice of a running exporter (GET /api/v1/advice), with basic auth and a CA bundle when given."""
    import base64
    import ssl
    import urllib.error
    import urllib.request

    url = args.url.rstrip("/") + "/api/v1/advice"
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    try:
        if args.url_username:
            if not args.url_password_file:
                raise ConfigError("--url.username needs --url.password-file")
            try:  # a FIFO or a file on a hung mount fails naming the flag instead of hanging (issue 38)
                password = read_file(args.url_password_file, "--url.password-file", max_bytes=MAX_SECRET_BYTES) \
                    .decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError:
                raise ConfigError(f"--url.password-file {args.url_password_file} is not UTF-8") from None
            except UnreadableFile as exc:
                raise ConfigError(str(exc)) from None
            remember(password)
            token = base64.b64encode(f"{args.url_username}:{password}".encode()).decode()
            request.add_header("Authorization", f"Basic {token}")
        if args.url_ca_file:
            try:
                read_file(args.url_ca_file, "--url.ca-file")  # OpenSSL would block on a FIFO or a hung mount
            except UnreadableFile as exc:
                raise ConfigError(str(exc)) from None
        context = ssl.create_default_context(cafile=args.url_ca_file) if args.url_ca_file else None
        with urllib.request.urlopen(request, timeout=60, context=context) as response:
            report = json.loads(response.read())
    except ConfigError as exc:
        print(f"middleware-exporter: {scrub(str(exc))}", file=sys.stderr)
        return 2
    except urllib.error.HTTPError as exc:
        print(f"middleware-exporter: {url}: HTTP {exc.code}", file=sys.stderr)
        return 2
    except (OSError, ValueError) as exc:
        print(f"middleware-exporter: {url}: {scrub(str(getattr(exc, 'reason', exc)))}", file=sys.stderr)
        return 2
    if not isinstance(report, dict) or not isinstance(report.get("recommendations"), list):
        print(f"middleware-exporter: {url}: not an advice report", file=sys.stderr)
        return 2
    return _print_advice(report, args.format)


SHUTDOWN_LIMIT = 4.0  # seconds from SIGTERM/SIGINT to the end of the process, whatever the collectors are doing


class _Shutdown:
    """How the serving exporter stops (docs/architecture.md, "Commands and shutdown"): on the first SIGTERM or
    SIGINT every command is killed at once (``machine.runner``: SIGTERM to each process group, a short grace, SIGKILL)
    while the HTTP server closes, then the collector loops stop and the collectors close.  A thread stuck in a
    driver call cannot be stopped and must not hold the exit: SHUTDOWN_LIMIT seconds after the signal the process
    ends with status 0 whatever is still running.  Later signals change nothing (no traceback, no second exit)."""

    def __init__(self) -> None:
        self._lock = threading.RLock()  # re-entered when a signal arrives while the main thread holds it
        self._timer: threading.Timer | None = None
        self.requested = False
        self.server: Any = None

    def catch_signals(self) -> None:
        """Until uvicorn installs its own handlers (and after it restores these), a signal starts the stop."""
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._on_signal)

    def _on_signal(self, sig, frame) -> None:
        self.requested = True
        if self.server is not None:
            self.server.should_exit = True
        self.begin()

    def begin(self) -> None:
        with self._lock:
            self.requested = True
            if self._timer is not None:
                return
            self._timer = threading.Timer(SHUTDOWN_LIMIT, self._hard_exit)
            self._timer.daemon = True
            self._timer.start()
        threading.Thread(target=runner.shutdown, name="stop-commands", daemon=True).start()

    def finish(self, scheduler: Scheduler) -> None:
        self.begin()
        runner.shutdown()  # returns once every command is gone (the thread begin() started may still be at it)
        scheduler.stop()

    @staticmethod
    def _hard_exit() -> None:
        log.warning("msg=%s limit_seconds=%g", json.dumps("stopping took too long; exiting with collector threads "
                    "still running"), SHUTDOWN_LIMIT)
        runner.shutdown(grace=0)
        for handler in logging.getLogger().handlers:
            handler.flush()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(0)


def _prober(scheduler: Scheduler, config, inventory):
    """The prober of the configured modules (core/probe.py) and the directory of its ssh connection masters, or
    (None, None); the inventory's and the prober's series join the exporter's own."""
    if inventory is not None:
        from .core.probe import INVENTORY_SPECS, add_inventory_series

        inventory.on_change = scheduler.touch
        if not config.modules:
            scheduler.self_metrics.extra.append((INVENTORY_SPECS, lambda batch: add_inventory_series(batch,
                                                                                                     inventory)))
    if not config.modules:
        return None, None
    from .core.probe import OWN_SPECS, Prober
    from .machine.sshcontrol import ControlDirectory
    from .registry import module_builder

    control = ControlDirectory()
    context = Context(procfs=config.paths.procfs, sysfs=config.paths.sysfs, rootfs=config.paths.rootfs)
    redact = make_redactor(config)
    prober = Prober(config.modules, module_builder(config, context, control),
                    lambda collectors: Scheduler(collectors, redact=redact, labels=config.labels, exporter_wide=False),
                    inventory=inventory, redact=redact, on_change=scheduler.touch)
    scheduler.self_metrics.extra.append((OWN_SPECS, prober.add_own_series))
    ssh_targets = len(inventory.inventory.targets()) if inventory is not None else 0
    if any(module.ssh is not None and module.ssh.control_persist for module in config.modules.values()):
        runner.keep_masters(max(ssh_targets + ssh_targets // 4, 64))  # one master per host, room for growth
    return prober, control


def _serve(scheduler: Scheduler, config, host: str, port: int, limits=None, web_config=None,
           open_paths: frozenset[str] = frozenset(), inventory=None) -> int:
    import uvicorn

    from .web.gate import WebGate
    from .web.limits import ConnectionGuard, Limits, open_file_limit
    from .web.server import create_app
    from .web.serving import quiet_supported, server_class

    stopper = _Shutdown()
    limits = limits or Limits()
    quiet = quiet_supported()
    live = None
    if web_config is not None:
        from .web.webconfig import LiveWebConfig

        live = LiveWebConfig(web_config)
    if live is not None:
        scheduler.self_metrics.tls_certificate = live.certificate_validity
    guard = ConnectionGuard(limits, live)
    prober, control = _prober(scheduler, config, inventory)
    app = WebGate(create_app(scheduler, {cls.name: cls.description for cls in COLLECTORS}, settings=config,
                             inventory=inventory, prober=prober),
                  live=live, open_paths=open_paths, max_requests=limits.max_requests, date=quiet)
    try:
        sock = guard.listen(host, port)
    except OSError as exc:
        log.error("msg=%s listen_address=%s error=%s", json.dumps("cannot listen"), config.web.listen_address,
                  json.dumps(exc.strerror or str(exc)))
        return 1
    log.info("msg=%s version=%s listen_address=%s tls=%s basic_auth=%s max_connections=%d collectors=%s",
             json.dumps("starting"), buildinfo.VERSION, config.web.listen_address, str(bool(live and live.tls)).lower(),
             str(bool(web_config and web_config.users)).lower(), guard.cap, ",".join(scheduler.states) or "none")
    if guard.cap < limits.max_connections:
        log.warning("msg=%s requested=%d open_file_limit=%s", json.dumps("--web.max-connections lowered to fit the "
                    f"open-file limit: {guard.cap}"), limits.max_connections, open_file_limit())
    guards = runner.guard_process()
    log.debug("msg=%s %s", json.dumps("command guards"), " ".join(f"{k}={str(v).lower()}" for k, v in guards.items()))
    stopper.catch_signals()
    scheduler.start()
    if inventory is not None:
        inventory.start()
    if prober is not None:
        prober.start()  # reads probed targets ahead of their next expected probe
    server_cls = server_class(guard, stopper.begin, quiet)  # uvicorn's internals, in one place: web/serving.py
    server = server_cls(uvicorn.Config(app, host=host, port=port, log_config=None, access_log=False,
                                           date_header=not quiet,
                                           server_header=False, lifespan="off", ws="none", http=guard.protocol,
                                           h11_max_incomplete_event_size=limits.max_header_bytes,
                                           backlog=limits.backlog, timeout_graceful_shutdown=1,
                                           timeout_keep_alive=limits.idle_timeout))
    stopper.server = server
    try:
        if not stopper.requested:
            server.run(sockets=[sock])
    finally:
        stopper.finish(scheduler)
        if inventory is not None:
            inventory.stop()
        if prober is not None:
            prober.close()
            control.close()
        sock.close()
    return 0 if server.started or stopper.requested else 1
