"""The example Alertmanager configuration (alerts/alertmanager.yml): amtool accepts it, it routes by severity,
and its inhibitions work in a real Alertmanager.

The module-level helpers (``start_alertmanager``, ``stop_alertmanager``, ``WebhookReceiver``,
``rewrite_receivers``, ``shorten_timers``, ``webhook_config_text``, ``post_alerts``, ``get_alerts``,
``make_alert``) are meant to be imported by other tests (e.g. an end-to-end test of Prometheus -> Alertmanager)
from ``tests.alerting.test_alertmanager``.
"""
from __future__ import annotations

import copy
import datetime as dt
import json
import subprocess
import threading
import time
import urllib.error
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml

from ..support import free_port, require_binary

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
CONFIG_PATH = REPO / "alerts" / "alertmanager.yml"
SECRETS_DIR = "/etc/alertmanager/secrets/"
WAIT = 20.0  # upper bound of every wait for Alertmanager, in seconds
QUIET = 4.0  # how long an inhibited alert must stay undelivered (group_wait and group_interval are 1 s)


# ---------------------------------------------------------------------------------------------------------
# Helpers (importable)
# ---------------------------------------------------------------------------------------------------------

def find_amtool() -> str:
    """amtool's path; skips the test if it is missing (fails it when CI is set)."""
    return require_binary("amtool", package="prometheus-alertmanager")


def find_alertmanager() -> str:
    """The Alertmanager binary (Debian's name first); skips if missing (fails when CI is set)."""
    return require_binary("prometheus-alertmanager", "alertmanager", package="prometheus-alertmanager")


def load_config(path: Path = CONFIG_PATH) -> dict[str, Any]:
    with open(path) as handle:
        return yaml.safe_load(handle)


def _walk_routes(route: dict[str, Any]):
    yield route
    for child in route.get("routes") or []:
        yield from _walk_routes(child)


def rewrite_receivers(config: dict[str, Any], base_url: str) -> dict[str, Any]:
    """A copy of ``config`` whose routing tree and inhibit rules are unchanged but whose every receiver sends
    only to the webhook ``{base_url}/{receiver name}`` (all its pagerduty/opsgenie/webhook/... configs are
    replaced). Resolved notifications are sent too (the webhook default): check each alert's ``status``."""
    result = copy.deepcopy(config)
    base = base_url.rstrip("/")
    receivers = []
    for receiver in result.get("receivers") or []:
        name = receiver["name"]
        receivers.append({"name": name, "webhook_configs": [{"url": f"{base}/{name}", "send_resolved": True}]})
    result["receivers"] = receivers
    return result


def shorten_timers(config: dict[str, Any], group_wait: str = "1s", group_interval: str = "1s",
                   repeat_interval: str | None = None) -> dict[str, Any]:
    """A copy of ``config`` with group_wait/group_interval (and repeat_interval if given) set on the root
    route and overridden wherever a child route sets them, so that tests get notifications within seconds."""
    result = copy.deepcopy(config)
    root = result["route"]
    root["group_wait"] = group_wait
    root["group_interval"] = group_interval
    if repeat_interval is not None:
        root["repeat_interval"] = repeat_interval
    for route in _walk_routes(root):
        if route is root:
            continue
        if "group_wait" in route:
            route["group_wait"] = group_wait
        if "group_interval" in route:
            route["group_interval"] = group_interval
        if repeat_interval is not None and "repeat_interval" in route:
            route["repeat_interval"] = repeat_interval
    return result


def webhook_config_text(base_url: str, config: dict[str, Any] | None = None) -> str:
    """The YAML text of the example configuration (or ``config``) with receivers rewritten to webhooks under
    ``base_url`` and 1 s group timers: ready for ``start_alertmanager``."""
    return yaml.safe_dump(shorten_timers(rewrite_receivers(config if config is not None else load_config(),
                                                           base_url)), sort_keys=False)


def http_json(method: str, url: str, body: Any = None, timeout: float = 5.0) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method,
                                     headers={"Content-Type": "application/json"} if data is not None else {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw = response.read()
            status = response.status
    except urllib.error.HTTPError as exc:
        raw = exc.read()
        status = exc.code
    try:
        return status, json.loads(raw) if raw else None
    except ValueError:
        return status, raw.decode(errors="replace")


def start_alertmanager(config_text: str | dict[str, Any], tmp_path: Path,
                       timeout: float = WAIT) -> tuple[str, subprocess.Popen]:
    """Start a real Alertmanager on a free 127.0.0.1 port, clustering off, storage in ``tmp_path``.

    Returns ``(base_url, proc)`` once ``/-/ready`` answers 200; stop it with ``stop_alertmanager(proc)``.
    Its log is in ``tmp_path/alertmanager-PORT.log`` (also in the AssertionError if it fails to start)."""
    binary = find_alertmanager()
    if not isinstance(config_text, str):
        config_text = yaml.safe_dump(config_text, sort_keys=False)
    tmp_path = Path(tmp_path)
    port = free_port()
    config_file = tmp_path / f"alertmanager-{port}.yml"
    config_file.write_text(config_text)
    storage = tmp_path / f"alertmanager-data-{port}"
    storage.mkdir(parents=True, exist_ok=True)
    log_path = tmp_path / f"alertmanager-{port}.log"
    base_url = f"http://127.0.0.1:{port}"
    argv = [binary, f"--config.file={config_file}", f"--storage.path={storage}",
            f"--web.listen-address=127.0.0.1:{port}", "--cluster.listen-address=",
            f"--web.external-url={base_url}", "--log.level=debug"]
    with open(log_path, "wb") as log_file:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log_file, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"alertmanager exited with {proc.returncode}:\n{log_path.read_text(errors='replace')}")
        try:
            with urllib.request.urlopen(base_url + "/-/ready", timeout=2) as response:
                if response.status == 200:
                    return base_url, proc
        except (OSError, urllib.error.URLError):
            pass
        time.sleep(0.1)
    stop_alertmanager(proc)
    raise AssertionError(f"alertmanager not ready within {timeout} s:\n{log_path.read_text(errors='replace')}")


def stop_alertmanager(proc: subprocess.Popen) -> None:
    """Stop the process started by ``start_alertmanager``: terminate, then kill if it lingers."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def _iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.timezone.utc).isoformat().replace("+00:00", "Z")


def make_alert(alertname: str, instance: str, severity: str | None = None, system: str = "hpom",
               guide_row: str = "none", **labels: str) -> dict[str, Any]:
    """An alert for ``POST /api/v2/alerts``, starting now and (unless re-posted) ending in 5 minutes."""
    all_labels = {"alertname": alertname, "instance": instance, "system": system, "guide_row": guide_row}
    if severity is not None:
        all_labels["severity"] = severity
    all_labels.update(labels)
    now = dt.datetime.now(dt.timezone.utc)
    return {"labels": all_labels,
            "annotations": {"summary": f"{alertname} test alert",
                            "description": "posted by tests/alerting/test_alertmanager.py"},
            "startsAt": _iso(now - dt.timedelta(seconds=1)),
            "endsAt": _iso(now + dt.timedelta(minutes=5))}


def post_alerts(base_url: str, alerts: list[dict[str, Any]]) -> None:
    status, body = http_json("POST", base_url + "/api/v2/alerts", alerts)
    assert status == 200, f"POST /api/v2/alerts answered {status}: {body}"


def get_alerts(base_url: str) -> list[dict[str, Any]]:
    """``GET /api/v2/alerts`` (active, silenced and inhibited alerts); each has ``labels`` and ``status``
    (``state``, ``inhibitedBy``, ``silencedBy``)."""
    status, body = http_json("GET", base_url + "/api/v2/alerts")
    assert status == 200, f"GET /api/v2/alerts answered {status}: {body}"
    return body


def wait_until(condition: Callable[[], Any], timeout: float = WAIT, interval: float = 0.2,
               message: str = "condition") -> Any:
    """Poll ``condition`` until it returns something truthy (returned), or fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() >= deadline:
            raise AssertionError(f"{message} not met within {timeout} s")
        time.sleep(interval)


class WebhookReceiver:
    """A loopback HTTP server in a thread that records every POSTed JSON body by request path.

    ``deliveries["/pager"]`` is the list of Alertmanager webhook payloads posted to ``{base_url}/pager``.
    Use as a context manager, or call ``close()``."""

    def __init__(self) -> None:
        self.deliveries: dict[str, list[Any]] = {}
        self._cond = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    payload = json.loads(raw)
                except ValueError:
                    payload = raw.decode(errors="replace")
                with receiver._cond:
                    receiver.deliveries.setdefault(self.path, []).append(payload)
                    receiver._cond.notify_all()
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self.server.serve_forever, name="webhook-receiver", daemon=True)
        self._thread.start()

    def __enter__(self) -> "WebhookReceiver":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(5)

    @staticmethod
    def _key(path: str) -> str:
        return path if path.startswith("/") else "/" + path

    def payloads(self, path: str) -> list[Any]:
        with self._cond:
            return list(self.deliveries.get(self._key(path), []))

    def alerts(self, path: str, status: str | None = "firing") -> list[dict[str, Any]]:
        """Every alert delivered to ``path`` (all payloads flattened), only those with ``status`` unless None."""
        return [alert for payload in self.payloads(path) if isinstance(payload, dict)
                for alert in payload.get("alerts", []) if status is None or alert.get("status") == status]

    def wait_for_alert(self, path: str, timeout: float = WAIT, status: str | None = "firing",
                       **labels: str) -> dict[str, Any]:
        """The first alert delivered to ``path`` whose labels include ``labels``; fails after ``timeout``."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for alert in self.alerts(path, status):
                    if all(alert.get("labels", {}).get(k) == v for k, v in labels.items()):
                        return alert
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"no alert with {labels} delivered to {path} within {timeout} s; "
                                         f"deliveries: {json.dumps(self.deliveries)[:4000]}")
                self._cond.wait(remaining)

    def delivered(self, path: str | None = None, **labels: str) -> list[dict[str, Any]]:
        """Alerts (any status) with ``labels`` delivered to ``path``, or to any path if None."""
        paths = [self._key(path)] if path is not None else list(self.deliveries)
        return [alert for p in paths for alert in self.alerts(p, None)
                if all(alert.get("labels", {}).get(k) == v for k, v in labels.items())]


# ---------------------------------------------------------------------------------------------------------
# amtool
# ---------------------------------------------------------------------------------------------------------

def run_amtool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([find_amtool(), *args], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL, cwd=REPO)


def test_check_config_passes():
    # The secret files under /etc/alertmanager/secrets/ are read when a notification is sent, not by
    # check-config (verified with Alertmanager 0.25), so the example is checked as it is.
    result = run_amtool("check-config", str(CONFIG_PATH))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_secrets_come_from_files():
    config = load_config()
    receivers = {receiver["name"]: receiver for receiver in config["receivers"]}
    assert set(receivers) == {"pager", "ticket", "advice"}
    pagerduty = receivers["pager"]["pagerduty_configs"]
    opsgenie = receivers["pager"]["opsgenie_configs"]
    assert pagerduty and opsgenie
    for entry in pagerduty:
        assert "routing_key" not in entry and "service_key" not in entry
        assert entry["routing_key_file"].startswith(SECRETS_DIR)
    for entry in opsgenie:
        assert "api_key" not in entry
        assert entry["api_key_file"].startswith(SECRETS_DIR)
    for name in ("ticket", "advice"):
        assert receivers[name]["webhook_configs"], name
    assert config["route"]["group_by"] == ["alertname", "system", "instance"]
    assert config["route"]["receiver"] == "ticket"


def route_of(*labels: str) -> list[str]:
    result = run_amtool("config", "routes", "test", f"--config.file={CONFIG_PATH}", *labels)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout.split()


ALERT_LABELS = ("system=hpom", "alertname=MiddlewareHpomAcknowledgementBulkTooLarge", "instance=x")


@pytest.mark.parametrize("severity, receiver", [
    ("critical", "pager"),
    ("warning", "ticket"),
    ("info", "advice"),
    (None, "ticket"),
])
def test_routes(severity, receiver):
    labels = ([f"severity={severity}"] if severity else []) + list(ALERT_LABELS)
    assert route_of(*labels) == [receiver]


def test_rewritten_config_is_valid(tmp_path):
    path = tmp_path / "rewritten.yml"
    path.write_text(webhook_config_text("http://127.0.0.1:9"))
    result = run_amtool("check-config", str(path))
    assert result.returncode == 0, result.stdout + result.stderr
    rewritten = yaml.safe_load(path.read_text())
    assert rewritten["inhibit_rules"] == load_config()["inhibit_rules"]
    assert [r["name"] for r in rewritten["receivers"]] == ["pager", "ticket", "advice"]
    for receiver in rewritten["receivers"]:
        assert list(receiver) == ["name", "webhook_configs"]
        assert receiver["webhook_configs"][0]["url"] == f"http://127.0.0.1:9/{receiver['name']}"
    for route in _walk_routes(rewritten["route"]):
        assert route.get("group_wait", "1s") == "1s"


# ---------------------------------------------------------------------------------------------------------
# A real Alertmanager
# ---------------------------------------------------------------------------------------------------------

class RunningAlertmanager:
    def __init__(self, base_url: str, proc: subprocess.Popen, webhook: WebhookReceiver) -> None:
        self.base_url = base_url
        self.proc = proc
        self.webhook = webhook

    def post(self, *alerts: dict[str, Any]) -> None:
        post_alerts(self.base_url, list(alerts))

    def status_of(self, **labels: str) -> dict[str, Any] | None:
        for alert in get_alerts(self.base_url):
            if all(alert["labels"].get(k) == v for k, v in labels.items()):
                return alert["status"]
        return None

    def wait_inhibited(self, **labels: str) -> list[str]:
        def inhibited_by():
            status = self.status_of(**labels)
            return status and status.get("inhibitedBy")
        return wait_until(inhibited_by, message=f"alert {labels} inhibited")

    def assert_not_delivered(self, quiet: float = QUIET, **labels: str) -> None:
        """Wait ``quiet`` seconds, then check that no alert with ``labels`` reached any receiver."""
        time.sleep(quiet)
        found = self.webhook.delivered(None, **labels)
        assert not found, f"inhibited alert {labels} was delivered: {found}"


@pytest.fixture(scope="module")
def alertmanager(tmp_path_factory):
    find_alertmanager()
    tmp_path = tmp_path_factory.mktemp("alertmanager")
    with WebhookReceiver() as webhook:
        base_url, proc = start_alertmanager(webhook_config_text(webhook.base_url), tmp_path)
        try:
            yield RunningAlertmanager(base_url, proc, webhook)
        finally:
            stop_alertmanager(proc)


def unique(prefix: str) -> str:
    """A fresh instance label, so that the tests sharing one Alertmanager do not inhibit each other."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}:9120"


@pytest.mark.parametrize("severity, receiver", [("critical", "pager"), ("warning", "ticket"), ("info", "advice")])
def test_delivery_by_severity(alertmanager, severity, receiver):
    instance = unique(severity)
    alertmanager.post(make_alert("MiddlewareHpomAcknowledgementBulkTooLarge", instance, severity,
                                 guide_row="HPOM-ACK"))
    alert = alertmanager.webhook.wait_for_alert(f"/{receiver}", instance=instance)
    assert alert["labels"]["severity"] == severity
    others = {"/pager", "/ticket", "/advice"} - {f"/{receiver}"}
    for path in others:
        assert not alertmanager.webhook.delivered(path, instance=instance)


def test_critical_inhibits_warning_of_same_alert(alertmanager):
    instance = unique("crit-warn")
    name = "MiddlewareOracleTablespaceFull"
    alertmanager.post(make_alert(name, instance, "critical", system="oracle"))
    alertmanager.webhook.wait_for_alert("/pager", alertname=name, instance=instance)
    # Same alertname, system and instance at warning level: inhibited.
    alertmanager.post(make_alert(name, instance, "warning", system="oracle"))
    # A warning of another alert on the same instance: not inhibited by this rule.
    alertmanager.post(make_alert("MiddlewareOracleSessionsHigh", instance, "warning", system="oracle"))
    inhibited_by = alertmanager.wait_inhibited(alertname=name, instance=instance, severity="warning")
    assert inhibited_by
    alertmanager.webhook.wait_for_alert("/ticket", alertname="MiddlewareOracleSessionsHigh", instance=instance)
    status = alertmanager.status_of(alertname="MiddlewareOracleSessionsHigh", instance=instance)
    assert status and not status["inhibitedBy"]
    alertmanager.assert_not_delivered(alertname=name, instance=instance, severity="warning")


def test_critical_does_not_inhibit_warning_on_other_instance(alertmanager):
    instance, other = unique("crit"), unique("warn-elsewhere")
    name = "MiddlewareMqQueueDepthHigh"
    alertmanager.post(make_alert(name, instance, "critical", system="ibmmq"))
    alertmanager.webhook.wait_for_alert("/pager", alertname=name, instance=instance)
    alertmanager.post(make_alert(name, other, "warning", system="ibmmq"))
    alertmanager.webhook.wait_for_alert("/ticket", alertname=name, instance=other)


def test_exporter_down_inhibits_alerts_on_its_instance(alertmanager):
    down, healthy = unique("down"), unique("healthy")
    alertmanager.post(make_alert("MiddlewareExporterDown", down, "critical", system="exporter"))
    alertmanager.webhook.wait_for_alert("/pager", alertname="MiddlewareExporterDown", instance=down)
    alertmanager.post(
        make_alert("MiddlewareHostCpuBusy", down, "warning", system="host"),
        make_alert("MiddlewareDominoServerDown", down, "critical", system="domino"),
        make_alert("MiddlewareVhiSessionsAdvice", down, "info", system="vhi"),
        make_alert("MiddlewareHostCpuBusy", healthy, "warning", system="host"),
    )
    for name in ("MiddlewareHostCpuBusy", "MiddlewareDominoServerDown", "MiddlewareVhiSessionsAdvice"):
        assert alertmanager.wait_inhibited(alertname=name, instance=down)
    # The same alert on another instance is delivered ...
    alertmanager.webhook.wait_for_alert("/ticket", alertname="MiddlewareHostCpuBusy", instance=healthy)
    status = alertmanager.status_of(alertname="MiddlewareHostCpuBusy", instance=healthy)
    assert status and not status["inhibitedBy"]
    # ... the exporter-down alert itself is not inhibited ...
    status = alertmanager.status_of(alertname="MiddlewareExporterDown", instance=down)
    assert status and not status["inhibitedBy"]
    # ... and nothing else about the down instance is.
    time.sleep(QUIET)
    delivered = [a["labels"]["alertname"] for a in alertmanager.webhook.delivered(None, instance=down)]
    assert delivered == ["MiddlewareExporterDown"], delivered
