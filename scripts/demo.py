"""Watch it work: the real exporter reading simulated HPOM queue files that replay a scenario, and, where Debian's
``prometheus`` and ``prometheus-alertmanager`` are installed, a local Prometheus with the project's rules and an
Alertmanager with the example routing, delivering to a local receiver that prints each notification.

    scripts/demo                                # hpom-queue-stuck, 40 scenario minutes at 10x: 4 min; pages near 20
    scripts/demo --scenario hpom-message-storm  # the guide's storm, 30 scenario minutes at 10x: 3 min; nothing pages
    scripts/demo --speed 60 --minutes 25 --keep # hpom-queue-stuck, 25 scenario minutes at 60x: 25 s; keeps the logs

Time is compressed by --speed: one scenario minute lasts 60/speed real seconds.  The scenario's time line (with
its seeded noise, as the promtool acceptance tests see it) sets the size of each queue file; the exporter's hpom
collector stats the files (its other sources are switched off: it reports them as not present).  Prometheus
scrapes and evaluates every scenario interval / speed, with copies of alerts/*.yml whose durations are divided
by the speed (see ``compress_rules``).  Only loopback addresses are used; every process keeps its files in the
working directory printed at the start, and is stopped at the end, on Ctrl-C or on SIGTERM.

Exit status: 0 when the run went as the scenario expects (each page it expects within the minutes run arrived,
and no page it does not expect), or when Prometheus/Alertmanager are missing (nothing to check); 1 otherwise;
2 on a usage error; 130 after Ctrl-C.  More: docs/alerting.md, "Watch it work".
"""

from __future__ import annotations

import argparse
import bisect
import copy
import ctypes
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tools.scenarios import Scenario, rule_files  # noqa: E402 (needs ROOT on sys.path)

DEFAULT_SCENARIO = "hpom-queue-stuck"
QUEUE_METRIC = "middleware_hpom_queue_size_bytes"
INSTALL_HINT = "sudo apt-get install prometheus prometheus-alertmanager"
READY_TIMEOUT = 30.0  # seconds each process may take to answer its readiness endpoint
STOP_TIMEOUT = 10.0  # seconds each process may take to stop after SIGTERM before it is killed
HTTP_TIMEOUT = 3.0  # seconds of every HTTP request the demo makes
GRACE = 10.0  # real seconds to wait after the last minute for an expected page still on its way

# Thresholds (middleware:threshold:<name>) that are durations on the scenario's clock, divided by the speed like
# every `for:` and range selector.  Thresholds that are durations of something that is not compressed (a disk's
# service time per I/O) stay as they are.
CLOCK_THRESHOLDS = ("hpom_queue_recovery_seconds",)

_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
_DURATION = r"(?:\d+(?:ms|[smhdwy]))+"
_RANGE = re.compile(rf"\[\s*({_DURATION})\s*(?::\s*({_DURATION})?\s*)?\]")
_OFFSET = re.compile(rf"\boffset(\s+)(-?)({_DURATION})")
_PART = re.compile(r"(\d+)(ms|[smhdwy])")


# ---- durations and rules --------------------------------------------------------------------------------------------

def duration_seconds(text: str | int | float) -> float:
    """A Prometheus duration (``1h30m``, ``90s``, ``250ms``) in seconds."""
    if isinstance(text, (int, float)):
        return float(text)
    text = str(text).strip()
    if not re.fullmatch(_DURATION, text):
        raise ValueError(f"{text!r} is not a Prometheus duration")
    return sum(int(n) * _UNITS[unit] for n, unit in _PART.findall(text))


def compressed(text: str | int | float, speed: float) -> str:
    """``text`` divided by ``speed``, as a Prometheus duration in whole milliseconds (at least 1 ms)."""
    return f"{max(1, round(duration_seconds(text) * 1000 / speed))}ms"


def compress_expr(expr: str, speed: float) -> str:
    """Range selectors ``[5m]``, subqueries ``[10m:1m]`` and ``offset 5m`` of a PromQL expression, divided."""
    def range_(match: re.Match) -> str:
        window, step = match.group(1), match.group(2)
        if ":" not in match.group(0):
            return f"[{compressed(window, speed)}]"
        return f"[{compressed(window, speed)}:{compressed(step, speed) if step else ''}]"

    expr = _RANGE.sub(range_, expr)
    return _OFFSET.sub(lambda m: f"offset{m.group(1)}{m.group(2)}{compressed(m.group(3), speed)}", expr)


def compress_rules(data: dict[str, Any], speed: float, overrides: dict[str, str] | None = None) -> dict[str, Any]:
    """A copy of a rule file's content running ``speed`` times faster than the clock.

    Prometheus sees one scenario second every 1/speed real second, so every duration on the scenario's clock is
    divided by the speed: ``for:`` and ``keep_firing_for:``, group ``interval:``, range selectors, subqueries
    (window and step), ``offset``, and the thresholds that are durations (CLOCK_THRESHOLDS: the queue's allowed
    recovery time).  Rates and slopes (``rate()``, ``deriv()``) are measured per real second, so they come out
    ``speed`` times larger than in the scenario: a threshold on a per-second rate would have to be multiplied by
    the speed.  The queue rules the demo exercises need no such change: MiddlewareHpomMessageQueueGrowing tests
    only the slope's sign, and MiddlewareHpomMessageQueueNotDraining divides the size by the slope, which gives
    real seconds of work, compared with the recovery time divided by the speed (both sides shrink alike).
    Scenario ``thresholds:`` overrides (as the acceptance tests apply them) are applied first."""
    data = copy.deepcopy(data)
    overrides = overrides or {}
    for group in data.get("groups") or []:
        if "interval" in group:
            group["interval"] = compressed(group["interval"], speed)
        for rule in group.get("rules") or []:
            name = str(rule.get("record", ""))
            if name.startswith("middleware:threshold:"):
                short = name.removeprefix("middleware:threshold:")
                if short in overrides:
                    rule["expr"] = f"vector({overrides[short]})"
                if short in CLOCK_THRESHOLDS:
                    rule["expr"] = f"({str(rule['expr']).strip()}) / {speed:g}"
                continue
            rule["expr"] = compress_expr(str(rule["expr"]), speed)
            for key in ("for", "keep_firing_for"):
                if key in rule:
                    rule[key] = compressed(rule[key], speed)
    return data


def compress_alertmanager(config: dict[str, Any], receiver_url: str, speed: float) -> dict[str, Any]:
    """The example Alertmanager configuration with its routing and inhibitions unchanged, every receiver sending
    to ``{receiver_url}/{receiver name}`` only, and its timers (group_wait, group_interval, repeat_interval,
    resolve_timeout) divided by the speed."""
    config = copy.deepcopy(config)
    config["receivers"] = [{"name": r["name"], "webhook_configs": [
        {"url": f"{receiver_url}/{r['name']}", "send_resolved": True}]} for r in config.get("receivers") or []]
    routes = [config["route"]]
    while routes:
        route = routes.pop()
        for key in ("group_wait", "group_interval", "repeat_interval"):
            if key in route:
                route[key] = compressed(route[key], speed)
        routes += route.get("routes") or []
    glob = config.setdefault("global", {})
    glob["resolve_timeout"] = compressed(glob.get("resolve_timeout", "5m"), speed)
    return config


def alert_severities(paths: list[Path]) -> dict[str, set[str]]:
    result: dict[str, set[str]] = {}
    for path in paths:
        for group in (yaml.safe_load(path.read_text()) or {}).get("groups") or []:
            for rule in group.get("rules") or []:
                if "alert" in rule:
                    result.setdefault(rule["alert"], set()).add(str((rule.get("labels") or {}).get("severity")))
    return result


# ---- the simulated sources ------------------------------------------------------------------------------------------

class QueueSimulator:
    """Resizes one file per queue in ``queue_dir`` to the scenario's value at the current scenario time."""

    def __init__(self, scenario: Scenario, seed: int, queue_dir: Path) -> None:
        self.queue_dir = queue_dir
        self.times = scenario.times()
        self.queues: dict[str, list[float]] = {}
        for name, values in scenario.series(seed).items():
            match = re.search(r'queue="([^"]+)"', name)
            if not name.startswith(QUEUE_METRIC + "{") or not match:
                raise ValueError(f"the demo cannot simulate {name}")
            self.queues[match.group(1)] = values
        self.written: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def value(self, queue: str, t: float) -> float:
        """The queue's size at scenario time ``t``: straight lines between the noisy samples."""
        values, times = self.queues[queue], self.times
        if t <= times[0]:
            return values[0]
        i = bisect.bisect_right(times, t)
        if i >= len(times):
            return values[-1]
        t0, t1 = times[i - 1], times[i]
        return values[i - 1] + (values[i] - values[i - 1]) * (t - t0) / (t1 - t0)

    def write(self, t: float) -> None:
        for queue in self.queues:
            size = max(0, int(self.value(queue, t)))
            path = self.queue_dir / queue
            with open(path, "ab") as handle:  # sparse: only the size matters to the collector
                handle.truncate(size)
            self.written[queue] = size

    def start(self, clock: Callable[[], float], tick: float) -> None:
        def run() -> None:
            while not self._stop.wait(tick):
                self.write(clock())

        self._thread = threading.Thread(target=run, name="queue-simulator", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)


# ---- the receiver ---------------------------------------------------------------------------------------------------

class Receiver:
    """Loopback webhook receiver: Alertmanager posts to /<receiver name>; each alert is printed once per state."""

    LABELS = {"pager": "PAGE", "ticket": "TICKET", "advice": "ADVICE"}

    def __init__(self, say: Callable[[str], None], minute: Callable[[], float]) -> None:
        self.say, self.minute = say, minute
        self.pages: dict[str, float] = {}  # alertname -> scenario minute of its first page
        self.received: list[tuple[str, dict]] = []
        self._seen: set[tuple] = set()
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send_response(200)
                self.end_headers()
                try:
                    payload = json.loads(raw)
                except ValueError:
                    return
                receiver.notified(self.path.strip("/"), payload)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self.server.serve_forever, name="receiver", daemon=True)
        self._thread.start()

    def notified(self, name: str, payload: dict) -> None:
        minute = self.minute()
        for alert in payload.get("alerts") or []:
            labels, status = alert.get("labels") or {}, alert.get("status", "firing")
            key = (name, labels.get("alertname"), labels.get("instance"), alert.get("startsAt"), status)
            with self._lock:
                if key in self._seen:
                    continue  # a reminder (repeat_interval) of a notification already printed
                self._seen.add(key)
                self.received.append((name, alert))
                if name == "pager" and status == "firing":
                    self.pages.setdefault(labels.get("alertname", "?"), minute)
            kind = self.LABELS.get(name, name.upper())
            if status != "firing":
                kind = f"{kind} resolved"
            summary = (alert.get("annotations") or {}).get("summary", "")
            self.say(f"minute {minute:4.1f}: >>> {kind}: {labels.get('alertname')} ({labels.get('severity')}) "
                     f"on {labels.get('instance')}\n{'':17}{summary}")

    def close(self) -> None:
        if self._thread is not None:
            self.server.shutdown()
            self._thread.join(5)
        self.server.server_close()


# ---- processes ------------------------------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def http_get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=HTTP_TIMEOUT) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM it when the demo dies, even by SIGKILL (Linux PR_SET_PDEATHSIG)."""
    if _PRCTL is not None:
        _PRCTL(1, signal.SIGTERM)


try:
    _PRCTL = ctypes.CDLL(None, use_errno=True).prctl if sys.platform.startswith("linux") else None
except (OSError, AttributeError):
    _PRCTL = None


class Process:
    def __init__(self, name: str, argv: list[str], workdir: Path, env: dict[str, str] | None = None) -> None:
        self.name = name
        self.log = workdir / f"{name}.log"
        with open(self.log, "wb") as log:
            # Own session: Ctrl-C reaches the demo only, which stops the processes in order. The processes are
            # started before the demo starts any thread (preexec_fn is not safe with threads).
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                         cwd=ROOT, env=env, start_new_session=True, preexec_fn=_die_with_parent)

    def wait_ready(self, url: str, timeout: float = READY_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with status {self.proc.returncode}:\n{self.tail()}")
            try:
                if http_get(url)[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"{self.name} did not answer {url} within {timeout:g} s:\n{self.tail()}")

    def tail(self, lines: int = 15) -> str:
        text = self.log.read_text(errors="replace").splitlines()
        return "\n".join("    " + line for line in text[-lines:])

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(STOP_TIMEOUT)


# ---- the demo -------------------------------------------------------------------------------------------------------

def find_scenario(name: str) -> Path:
    path = Path(name)
    if path.suffix in (".yaml", ".yml") and path.is_file():
        return path
    path = ROOT / "scenarios" / f"{name.removesuffix('.yaml')}.yaml"
    if path.is_file():
        return path
    raise FileNotFoundError(f"no scenario {name!r} (scenarios/*.yaml)")


def playable(scenario: Scenario) -> bool:
    return all(s.kind == "gauge" and s.metric == QUEUE_METRIC and "queue" in s.labels for s in scenario.signals)


def playable_names() -> list[str]:
    names = []
    for path in sorted((ROOT / "scenarios").glob("*.yaml")):
        try:
            if playable(Scenario.load(path)):
                names.append(path.stem)
        except (ValueError, KeyError, yaml.YAMLError):
            continue
    return names


def _mib(size: float) -> str:
    return f"{size / 1048576:6.1f} MiB"


class Demo:
    def __init__(self, args: argparse.Namespace, scenario: Scenario) -> None:
        self.args = args
        self.scenario = scenario
        self.speed = float(args.speed)
        self.minutes = args.minutes if args.minutes is not None else scenario.duration / 60
        self.workdir = Path(tempfile.mkdtemp(prefix="middleware-demo-"))
        self.processes: list[Process] = []
        self.receiver: Receiver | None = None
        self.simulator = QueueSimulator(scenario, args.seed, self.workdir / "queues")
        self.t0: float | None = None
        self.prometheus_url = ""
        self._out = threading.Lock()

    # -- output and clock
    def say(self, text: str = "") -> None:
        with self._out:
            print(text, flush=True)

    def scenario_seconds(self) -> float:
        return 0.0 if self.t0 is None else (time.monotonic() - self.t0) * self.speed

    def minute(self) -> float:
        return self.scenario_seconds() / 60

    # -- set-up
    def start(self, with_prometheus: bool) -> None:
        scenario, speed = self.scenario, self.speed
        step = scenario.interval / speed  # real seconds per scenario sample: the scrape and evaluation interval
        (self.workdir / "queues").mkdir()
        self.simulator.write(0.0)
        config = {
            "log": {"level": "warning"},
            "collectors": {
                "host": {"enabled": False},
                "process": {"enabled": False},
                "filesystem": {"enabled": False},  # the scenario's alerts only, not this machine's disks
                # collected once per scrape; the timeout as long as the interval allows, so that a busy machine
                # does not make MiddlewareExporterCollectorSlow fire; no command runs (they are null), and
                # command_timeout only has to be shorter than the timeout
                "hpom": {"enabled": True, "interval": round(step, 3), "timeout": round(step, 3),
                         "command_timeout": round(step / 2, 3), "queue_dir": str(self.workdir / "queues"),
                         "opcsv": None, "ovc": None, "ovconfget": None},
            },
        }
        (self.workdir / "exporter.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
        port = free_port()
        self.exporter_url = f"http://127.0.0.1:{port}"
        env = {k: v for k, v in os.environ.items() if not k.startswith("MIDDLEWARE_EXPORTER_")}
        exporter = Process("exporter", [sys.executable, "-m", "exporter", "run", "--config",
                                        str(self.workdir / "exporter.yaml"),
                                        "--web.listen-address", f"127.0.0.1:{port}"], self.workdir, env)
        self.processes.append(exporter)
        exporter.wait_ready(self.exporter_url + "/readyz")
        if with_prometheus:
            self.receiver = Receiver(self.say, self.minute)  # bound now, served once every process runs
            self._start_alertmanager()
            self._start_prometheus(port, step)
            self.receiver.start()

    def _start_alertmanager(self) -> None:
        assert self.receiver is not None
        config = compress_alertmanager(yaml.safe_load((ROOT / "alerts" / "alertmanager.yml").read_text()),
                                       self.receiver.url, self.speed)
        path = self.workdir / "alertmanager.yml"
        path.write_text(yaml.safe_dump(config, sort_keys=False))
        port = free_port()
        self.alertmanager_url = f"http://127.0.0.1:{port}"
        (self.workdir / "alertmanager-data").mkdir()
        binary = shutil.which("prometheus-alertmanager") or shutil.which("alertmanager")
        assert binary is not None
        am = Process("alertmanager", [binary, f"--config.file={path}",
                                      f"--storage.path={self.workdir / 'alertmanager-data'}",
                                      f"--web.listen-address=127.0.0.1:{port}", "--cluster.listen-address=",
                                      f"--web.external-url={self.alertmanager_url}"], self.workdir)
        self.processes.append(am)
        am.wait_ready(self.alertmanager_url + "/-/ready")

    def _start_prometheus(self, exporter_port: int, step: float) -> None:
        rules_dir = self.workdir / "rules"
        rules_dir.mkdir()
        files = []
        for path in rule_files():
            data = compress_rules(yaml.safe_load(path.read_text()) or {}, self.speed, self.scenario.rule_overrides)
            (rules_dir / path.name).write_text(yaml.safe_dump(data, sort_keys=False, width=1000))
            files.append(str(rules_dir / path.name))
        port = free_port()
        self.prometheus_url = f"http://127.0.0.1:{port}"
        interval = f"{max(1, round(step * 1000))}ms"
        config = {
            "global": {"scrape_interval": interval, "scrape_timeout": interval, "evaluation_interval": interval},
            "rule_files": files,
            "alerting": {"alertmanagers": [{"static_configs": [
                {"targets": [self.alertmanager_url.removeprefix("http://")]}]}]},
            "scrape_configs": [{"job_name": "middleware",
                                "static_configs": [{"targets": [f"127.0.0.1:{exporter_port}"]}]}],
        }
        (self.workdir / "prometheus.yml").write_text(yaml.safe_dump(config, sort_keys=False))
        prom = Process("prometheus", [shutil.which("prometheus") or "prometheus",
                                      f"--config.file={self.workdir / 'prometheus.yml'}",
                                      f"--storage.tsdb.path={self.workdir / 'tsdb'}",
                                      f"--web.listen-address=127.0.0.1:{port}",
                                      f"--web.external-url={self.prometheus_url}"], self.workdir)
        self.processes.append(prom)
        prom.wait_ready(self.prometheus_url + "/-/ready")
        # Prometheus hands new targets to its scrapers at most every 5 s, even static ones: the scenario's clock
        # starts once the first scrape is in, or the rules would see the first scenario minutes late.
        query = "/api/v1/query?query=" + urllib.parse.quote('up{job="middleware"} == 1')
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            try:
                status, body = http_get(self.prometheus_url + query)
                if status == 200 and json.loads(body)["data"]["result"]:
                    return
            except (OSError, ValueError, KeyError):
                pass
            if prom.proc.poll() is not None:
                break
            time.sleep(0.2)
        raise RuntimeError(f"Prometheus did not scrape the exporter within {READY_TIMEOUT:g} s:\n{prom.tail()}")

    # -- reading back
    def exported_sizes(self) -> dict[str, float]:
        try:
            status, body = http_get(self.exporter_url + "/metrics")
        except OSError:
            return {}
        sizes = {}
        for line in body.decode(errors="replace").splitlines() if status == 200 else []:
            match = re.match(rf'{QUEUE_METRIC}\{{[^}}]*queue="([^"]+)"[^}}]*\}} (\S+)', line)
            if match:
                sizes[match.group(1)] = float(match.group(2))
        return sizes

    def alert_states(self) -> list[str]:
        if not self.prometheus_url:
            return []
        try:
            status, body = http_get(self.prometheus_url + "/api/v1/alerts")
            alerts = json.loads(body)["data"]["alerts"] if status == 200 else []
        except (OSError, ValueError, KeyError):
            return ["(Prometheus did not answer)"]
        states: dict[str, set[str]] = {}
        for alert in alerts:
            labels = alert.get("labels") or {}
            states.setdefault(alert.get("state", "?"), set()).add(
                f"{labels.get('alertname')} ({labels.get('severity')})")
        return [f"{state} {', '.join(sorted(names))}" for state, names in sorted(states.items())]

    # -- the run
    def expected_pages(self, severities: dict[str, set[str]]) -> list[tuple[str, float]]:
        """(alert, minute by which it must page) for each critical alert the scenario expects within the run."""
        return [(e.alert, e.by / 60) for e in self.scenario.expect
                if "critical" in severities.get(e.alert, set()) and e.by / 60 <= self.minutes]

    def run(self) -> int:
        args, scenario, speed = self.args, self.scenario, self.speed
        binaries = {"prometheus": shutil.which("prometheus"),
                    "prometheus-alertmanager": shutil.which("prometheus-alertmanager") or shutil.which("alertmanager")}
        missing = [name for name, path in binaries.items() if path is None]
        with_prometheus = not args.no_prometheus and not missing
        severities = alert_severities(rule_files())
        real = self.minutes * 60 / speed
        self.say(f"middleware-exporter demo: scenario {scenario.name}, {self.minutes:g} scenario minutes at "
                 f"{speed:g}x (one minute every {60 / speed:g} s, about {real / 60:.1f} min in all)")
        self.say("  " + " ".join(scenario.description.split()))
        for e in scenario.expect:
            kind = "/".join(sorted(severities.get(e.alert, {"?"})))
            self.say(f"  expected: {e.alert} ({kind}) firing from minute {e.after / 60:g}-{e.by / 60:g}")
        if not scenario.expect:
            self.say("  expected: nothing fires, nothing pages")
        self.say(f"working directory (configurations, logs): {self.workdir}")
        self.start(with_prometheus)
        self.say(f"exporter      {self.exporter_url}/metrics   (queue files in {self.workdir / 'queues'})")
        if with_prometheus:
            assert self.receiver is not None
            self.say(f"prometheus    {self.prometheus_url}/alerts   (rules: alerts/*.yml, durations divided by "
                     f"{speed:g})")
            self.say(f"alertmanager  {self.alertmanager_url}/#/alerts   (routing: alerts/alertmanager.yml)")
            self.say(f"receiver      {self.receiver.url}/<receiver>   (prints what Alertmanager delivers)")
        elif args.no_prometheus:
            self.say("prometheus    not started (--no-prometheus): the exporter and the simulated sources only")
        else:
            self.say(f"prometheus    not started: {' and '.join(missing)} not installed ({INSTALL_HINT}); "
                     "running the exporter and the simulated sources only, no alerts")
        self.say("Ctrl-C stops everything.\n")
        self.t0 = time.monotonic()
        self.simulator.start(self.scenario_seconds, tick=min(0.5, scenario.interval / speed / 4))
        minute = 0
        while minute < self.minutes:
            minute = min(minute + 1, self.minutes)
            self._sleep_until(minute)
            sizes = self.exported_sizes() or {q: float(s) for q, s in self.simulator.written.items()}
            queues = ", ".join(f"{q} {_mib(s)}" for q, s in sorted(sizes.items())) or "no queue exported yet"
            states = "; ".join(self.alert_states()) or ("no alerts" if with_prometheus else "")
            self.say(f"minute {minute:4g}: {queues}" + (f" | {states}" if states else ""))
        if args.no_prometheus:
            self.say("\nfinished (--no-prometheus: no alerts to show)")
            return 0
        if not with_prometheus:
            self.say("\nfinished (without Prometheus and Alertmanager there were no alerts to show; "
                     f"{INSTALL_HINT}, then run it again)")
            return 0
        return self.verdict(severities)

    def _sleep_until(self, minute: float) -> None:
        assert self.t0 is not None
        while True:
            left = self.t0 + minute * 60 / self.speed - time.monotonic()
            if left <= 0:
                return
            time.sleep(min(left, 0.5))

    def verdict(self, severities: dict[str, set[str]]) -> int:
        assert self.receiver is not None
        expected = self.expected_pages(severities)
        deadline = time.monotonic() + GRACE
        while any(a not in self.receiver.pages for a, _ in expected) and time.monotonic() < deadline:
            time.sleep(0.2)
        pages = dict(self.receiver.pages)
        wanted = {e.alert for e in self.scenario.expect}
        unexpected = sorted(set(pages) - wanted)
        missing = [a for a, _ in expected if a not in pages]
        self.say("")
        for alert, at in sorted(pages.items(), key=lambda item: item[1]):
            self.say(f"paged: {alert} at minute {at:.1f}")
        later = [e.alert for e in self.scenario.expect
                 if "critical" in severities.get(e.alert, set()) and e.by / 60 > self.minutes]
        if later:
            self.say(f"note: the scenario expects {', '.join(later)} to page later than the {self.minutes:g} "
                     "minutes run")
        if missing or unexpected:
            for alert in missing:
                by = dict(expected)[alert]
                self.say(f"FAILED: {alert} was expected to page by minute {by:g} and did not")
            for alert in unexpected:
                self.say(f"FAILED: {alert} paged, which {self.scenario.name} does not expect")
            self.args.keep = True
            return 1
        if expected:
            self.say(f"OK: the expected page{'s' if len(expected) > 1 else ''} arrived")
        elif later:
            self.say(f"OK: no page expected within {self.minutes:g} minutes, and none arrived")
        else:
            self.say("OK: nothing paged, as the scenario expects")
        return 0

    def close(self) -> None:
        self.simulator.stop()
        for process in reversed(self.processes):  # Prometheus first, the exporter last
            process.stop()
        if self.receiver is not None:
            self.receiver.close()
        if self.args.keep:
            self.say(f"kept {self.workdir}")
        else:
            shutil.rmtree(self.workdir, ignore_errors=True)
        if self.processes:
            self.say("stopped " + ", ".join(f"{p.name} (pid {p.proc.pid})" for p in self.processes))


def _interrupted(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/demo", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="Scenarios the demo can play: " + ", ".join(playable_names()))
    parser.add_argument("--scenario", default=DEFAULT_SCENARIO,
                        help=f"a scenario name from scenarios/ or a path (default {DEFAULT_SCENARIO})")
    parser.add_argument("--speed", type=float, default=10.0,
                        help="time compression: scenario seconds per real second (default 10, at most 120)")
    parser.add_argument("--minutes", type=float, help="scenario minutes to play (default: the whole scenario)")
    parser.add_argument("--seed", type=int, default=0, help="noise seed of the scenario's time line (default 0)")
    parser.add_argument("--no-prometheus", action="store_true",
                        help="run only the exporter and the simulated sources")
    parser.add_argument("--keep", action="store_true", help="keep the working directory (logs, configurations)")
    args = parser.parse_args(argv)
    if not 1 <= args.speed <= 120:
        parser.error("--speed must be between 1 and 120")
    if args.minutes is not None and args.minutes <= 0:
        parser.error("--minutes must be positive")
    try:
        scenario = Scenario.load(find_scenario(args.scenario))
    except (OSError, ValueError, KeyError, yaml.YAMLError) as exc:
        parser.error(str(exc))
    if not playable(scenario):
        parser.error(f"{scenario.name} has signals the demo cannot simulate (it plays HPOM queue files only); "
                     f"try one of: {', '.join(playable_names())}")
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # SIGINT too: a shell may start us ignoring it
        signal.signal(signum, _interrupted)
    demo = Demo(args, scenario)
    try:
        return demo.run()
    except KeyboardInterrupt:
        demo.say("\ninterrupted")
        return 130
    except RuntimeError as exc:
        demo.say(f"\nFAILED: {exc}")
        args.keep = True
        return 1
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # a second Ctrl-C must not cut the
            signal.signal(signum, signal.SIG_IGN)                          # clean-up short
        demo.close()


if __name__ == "__main__":
    sys.exit(main())
