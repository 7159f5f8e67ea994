"""A distributed monitoring stack on loopback from Debian's packages, for tests/estate/test_fleet.py and
bench/fleet.py (issue 37, item 5): Prometheus in agent mode (``prometheus --enable-feature=agent``) scraping and
remote-writing to VictoriaMetrics single node (``victoria-metrics``), vmalert (same package) evaluating the
project's alerts/*.yml against it and notifying Alertmanager (``prometheus-alertmanager``), which sends to a
webhook receiver the test runs (tests/alerting/test_alertmanager.py's WebhookReceiver, alerts/alertmanager.yml's
routing with every receiver rewritten to it).

Every process listens on 127.0.0.1 on a free port, keeps its log in the stack's directory (quoted in the
failure when it does not start), and is stopped at teardown (SIGTERM, then SIGKILL); the data directories are the
test's.  ``scaled_rules`` copies the rule files with their durations (``for:`` and range selectors) divided by a
factor, so that a rule written for minutes can be exercised in seconds with its shape unchanged.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import yaml

from .support import REPO, free_port, require_binary, stop_process

WAIT = 60.0  # a bound on a process starting (a loaded 2-core machine), not a timing assertion


class Service:
    """One started program: its argv, its log file, the URL that answers 200 when it is ready."""

    def __init__(self, name: str, argv: list[str], log: Path, ready_url: str) -> None:
        self.name, self.argv, self.log_path, self.ready_url = name, argv, log, ready_url
        self.proc: subprocess.Popen | None = None

    def start(self) -> Service:
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + WAIT
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode}: {self.argv}\n{self.log()}")
            try:
                with urllib.request.urlopen(self.ready_url, timeout=2) as response:
                    if response.status == 200:
                        return self
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"{self.name} not ready within {WAIT} s at {self.ready_url}\n{self.log()}")
            time.sleep(0.1)

    def log(self, last: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-last:]
        except OSError:
            return ""

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc)
            self.proc = None


def _url(port: int) -> str:
    return f"http://127.0.0.1:{port}"


def victoria_metrics(work: Path) -> Service:
    """VictoriaMetrics single node; ``-search.latencyOffset`` 1 s (default 30 s) so that vmalert and the tests
    see a sample a second after it was written, as a Prometheus server's own rule evaluation would."""
    binary = require_binary("victoria-metrics", package="victoria-metrics")
    port = free_port()
    (work / "vm-data").mkdir(parents=True, exist_ok=True)
    service = Service("victoria-metrics", [
        binary, f"-httpListenAddr=127.0.0.1:{port}", f"-storageDataPath={work / 'vm-data'}",
        "-retentionPeriod=1d", "-search.latencyOffset=1s", "-search.cacheTimestampOffset=1s",
        "-search.disableCache", "-loggerLevel=WARN"], work / "victoria-metrics.log", _url(port) + "/health")
    service.url = _url(port)  # type: ignore[attr-defined]
    return service


def prometheus_agent(work: Path, scrape_configs: list[dict], remote_write: str, scrape_interval: str = "2s",
                     name: str = "prometheus-agent") -> Service:
    """Prometheus in agent mode: scrapes ``scrape_configs`` and remote-writes every sample to ``remote_write``
    (a second's batch deadline instead of 5 s: the tests wait on what arrives)."""
    binary = require_binary("prometheus", package="prometheus")
    port = free_port()
    config = {"global": {"scrape_interval": scrape_interval, "scrape_timeout": scrape_interval,
                         "external_labels": {"agent": name}},
              "scrape_configs": scrape_configs,
              "remote_write": [{"url": remote_write, "queue_config": {"batch_send_deadline": "1s",
                                                                      "min_backoff": "100ms", "max_backoff": "1s"}}]}
    config_file = work / f"{name}.yml"
    config_file.write_text(yaml.safe_dump(config, sort_keys=False))
    service = Service(name, [
        binary, "--enable-feature=agent", f"--config.file={config_file}",
        f"--storage.agent.path={work / (name + '-wal')}", f"--web.listen-address=127.0.0.1:{port}",
        "--log.level=warn"], work / f"{name}.log", _url(port) + "/-/ready")
    service.url = _url(port)  # type: ignore[attr-defined]
    return service


def vmalert(work: Path, rules: list[Path], datasource: str, notifier: str, interval: str = "2s") -> Service:
    """vmalert evaluating ``rules`` every ``interval`` against ``datasource`` (VictoriaMetrics), its alert states
    written back (-remoteWrite.url) and restored at start (-remoteRead.url), alerts sent to ``notifier``."""
    binary = require_binary("vmalert", package="victoria-metrics")
    port = free_port()
    argv = [binary, f"-httpListenAddr=127.0.0.1:{port}", f"-datasource.url={datasource}",
            f"-remoteWrite.url={datasource}", f"-remoteRead.url={datasource}", f"-notifier.url={notifier}",
            f"-evaluationInterval={interval}", f"-datasource.queryStep={interval}",
            "-remoteWrite.flushInterval=1s", f"-external.url={_url(port)}", "-loggerLevel=WARN",
            *(f"-rule={path}" for path in rules)]
    service = Service("vmalert", argv, work / "vmalert.log", _url(port) + "/health")
    service.url = _url(port)  # type: ignore[attr-defined]
    return service


def rule_files(directory: Path = REPO / "alerts") -> list[Path]:
    """The rule files of ``directory`` (those with ``groups:``; alertmanager.yml is Alertmanager's)."""
    return [path for path in sorted(directory.glob("*.yml"))
            if isinstance(yaml.safe_load(path.read_text()), dict) and "groups" in yaml.safe_load(path.read_text())]


def check_rules(paths: list[Path]) -> dict[str, str]:
    """vmalert's own check (``-dryRun``) of each file: {file name: vmalert's error} for those it refuses."""
    binary = require_binary("vmalert", package="victoria-metrics")
    refused = {}
    for path in paths:
        result = subprocess.run([binary, "-dryRun", f"-rule={path}", "-loggerLevel=ERROR"], capture_output=True,
                                text=True, timeout=60)
        if result.returncode != 0:
            said = (result.stderr + result.stdout).splitlines()
            lines = [line for line in said if "fatal" in line or "error" in line]
            refused[path.name] = (lines[-1] if lines else f"exit {result.returncode}")[:500]
    return refused


_DURATION = re.compile(r"(\d+)(ms|s|m|h|d|w)")
_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def _scale(text: str, factor: float) -> str:
    """A Prometheus duration (``10m``, ``1h30m``) divided by ``factor``, in whole seconds (at least 1 s)."""
    seconds = sum(int(n) * _SECONDS[unit] for n, unit in _DURATION.findall(text))
    return f"{max(1, round(seconds / factor))}s"


def scaled_rules(work: Path, factor: float, sources: list[Path] | None = None) -> list[Path]:
    """Copies of the rule files with every ``for:`` and every range selector (``[10m]``, ``[1h:5m]``) divided by
    ``factor``: the same expressions and thresholds on a shorter clock.  Other durations (``offset``,
    ``predict_linear`` horizons) are left alone."""
    out = []
    (work / "rules").mkdir(parents=True, exist_ok=True)
    for path in sources if sources is not None else rule_files():
        data = yaml.safe_load(path.read_text())
        for group in data["groups"]:
            for rule in group.get("rules", []):
                if "for" in rule:
                    rule["for"] = _scale(str(rule["for"]), factor)
                rule["expr"] = re.sub(
                    r"\[((?:\d+(?:ms|s|m|h|d|w))+)(?::((?:\d+(?:ms|s|m|h|d|w))+))?\]",
                    lambda m: f"[{_scale(m[1], factor)}" + (f":{_scale(m[2], factor)}" if m[2] else "") + "]",
                    str(rule["expr"]))
        target = work / "rules" / path.name
        target.write_text(yaml.safe_dump(data, sort_keys=False))
        out.append(target)
    return out


def rule(name: str, sources: list[Path] | None = None) -> dict:
    """The alerting rule ``name`` as alerts/*.yml define it (the first of that name)."""
    for path in sources if sources is not None else rule_files():
        for group in yaml.safe_load(path.read_text())["groups"]:
            for item in group.get("rules", []):
                if item.get("alert") == name:
                    return item
    raise KeyError(name)


class Stack:
    """victoria-metrics + vmalert + Alertmanager + a webhook receiver, and any number of Prometheus agents
    (``add_agent``) remote-writing to it; a context manager that stops everything it started."""

    def __init__(self, work: Path, rules: list[Path], interval: str = "2s") -> None:
        from .alerting.test_alertmanager import WebhookReceiver

        self.work = work
        work.mkdir(parents=True, exist_ok=True)
        self.rules, self.interval = rules, interval
        self.webhook = WebhookReceiver()
        self.services: list[Service] = []
        self.alertmanager_proc: subprocess.Popen | None = None

    def start(self) -> Stack:
        from .alerting.test_alertmanager import start_alertmanager, webhook_config_text

        try:
            self.vm = self._start(victoria_metrics(self.work))
            self.alertmanager_url, self.alertmanager_proc = start_alertmanager(
                webhook_config_text(self.webhook.base_url), self.work)
            self.vmalert = self._start(vmalert(self.work, self.rules, self.vm.url, self.alertmanager_url,
                                               self.interval))
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self, service: Service) -> Service:
        self.services.append(service)
        return service.start()

    def add_agent(self, scrape_configs: list[dict], scrape_interval: str = "2s",
                  name: str = "prometheus-agent") -> Service:
        return self._start(prometheus_agent(self.work, scrape_configs, self.vm.url + "/api/v1/write",
                                            scrape_interval, name))

    def stop(self) -> None:
        for service in reversed(self.services):
            service.stop()
        if self.alertmanager_proc is not None:
            from .alerting.test_alertmanager import stop_alertmanager

            stop_alertmanager(self.alertmanager_proc)
            self.alertmanager_proc = None
        self.webhook.close()

    def __enter__(self) -> Stack:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def logs(self) -> str:
        """Every service's log tail, for a failure message."""
        parts = [f"--- {service.name} ---\n{service.log(1500)}" for service in self.services]
        for path in sorted(self.work.glob("alertmanager-*.log")):
            parts.append(f"--- alertmanager ---\n{path.read_text(errors='replace')[-1500:]}")
        return "\n".join(parts)

    def query(self, expr: str) -> list[dict[str, Any]]:
        """An instant query against VictoriaMetrics (its Prometheus API): the result vector."""
        url = self.vm.url + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})
        with urllib.request.urlopen(url, timeout=30) as response:
            body = json.load(response)
        assert body["status"] == "success", body
        return body["data"]["result"]

    def notifications(self) -> list[dict[str, Any]]:
        """Every alert the webhook received (each with ``receiver`` added: the path Alertmanager posted to)."""
        alerts = []
        for path, payloads in list(self.webhook.deliveries.items()):
            for payload in payloads:
                for alert in payload.get("alerts", []) if isinstance(payload, dict) else []:
                    alerts.append({**alert, "receiver": path.strip("/")})
        return alerts
