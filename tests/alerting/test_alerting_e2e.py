"""End to end: the real exporter fed by fixtures that cross the guides' thresholds, Debian's real Prometheus
scraping it every second with the project's rule files, and the real Alertmanager with the example routing
(receivers pointed at a local webhook).  The queue-manager/CPU saturation alert must reach the pager receiver, the
acknowledgement bulk the ticket receiver and the CMA advice the advice receiver (neither pages: the bulk is over by
the time anyone could act, the guide calls the CMA cost low); a fixture just under the thresholds must raise none of
them.

The rules are the files in alerts/ with every `for:` shortened to 3s and the example's group_wait/interval
shortened to 1s, so that the test runs in seconds; promtool unit tests cover the real durations.
Loopback only; every process is stopped by its PID; every wait is bounded."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import threading
import time
import urllib.parse

import pytest
import yaml

from ..support import FIXTURES, REPO, free_port, http_get, require_binary, system_fixtures
from .test_alertmanager import WebhookReceiver, rewrite_receivers, shorten_timers, start_alertmanager

pytestmark = pytest.mark.integration

HEADLINE = ("MiddlewareHpomAcknowledgementBulkTooLarge", "MiddlewareHpomCustomAttributesOverLimit",
            "MiddlewareMqQueueManagerCpuSaturation")
# where each goes (alerts/alertmanager.yml routes by severity)
RECEIVER = {"MiddlewareHpomAcknowledgementBulkTooLarge": "ticket", "MiddlewareHpomCustomAttributesOverLimit": "advice",
            "MiddlewareMqQueueManagerCpuSaturation": "pager"}


def _db_fixture(path, acked: int, cmas: int) -> None:
    data = yaml.safe_load((system_fixtures("hpom") / "server" / "db.yaml").read_text())
    for query in data["queries"]:
        if query["match"] == "AS received":
            query["rows"] = [[acked, 600, ":window_seconds"]]
        if query["match"] == "opc_act_cust_attrib":
            query["rows"] = [[cmas, 1 if cmas > 10 else 0, ":cma_limit"]]
    path.write_text(yaml.safe_dump(data))


def _rules(tmp_path) -> list[str]:
    files = []
    for path in sorted((REPO / "alerts").glob("*.yml")):
        if path.name == "alertmanager.yml":
            continue
        text = re.sub(r"^(\s*)for: .*$", r"\1for: 3s", path.read_text(), flags=re.M)
        target = tmp_path / path.name
        target.write_text(text)
        files.append(str(target))
    return files


class Stack:
    """exporter + mqweb stand-in + Prometheus + Alertmanager + webhook receiver, all on loopback."""

    def __init__(self, tmp_path, start_exporter, *, acked: int, cmas: int, saturated: bool) -> None:
        from ..fakes.mqweb import FakeMqweb, FakeQmgr, FakeQueue

        self.tmp = tmp_path
        self.procs: list[subprocess.Popen] = []
        self.stop_event = threading.Event()
        queue = FakeQueue("RULESIN", depth=100, max_depth=5000, msgage=5, ipprocs=2, opprocs=1)
        self.mqweb = FakeMqweb(FakeQmgr("QM1", "running", [queue])).start()
        if saturated:  # consumers fall behind: the input queue grows
            def grow():
                while not self.stop_event.wait(0.5):
                    queue.depth += 25
            threading.Thread(target=grow, daemon=True).start()
        db = tmp_path / "db.yaml"
        _db_fixture(db, acked, cmas)
        procfs = "/proc"
        if saturated:
            # A recorded /proc whose CPU counters advance as on a host with no idle time left: user time grows,
            # idle does not (the MQSI report's saturation: idle falling to 0 as engines were added).
            procfs = str(tmp_path / "proc")
            shutil.copytree(FIXTURES / "host1" / "proc", procfs)
            stat = tmp_path / "proc" / "stat"
            lines = stat.read_text().splitlines()

            def burn():
                ticks = 0
                while not self.stop_event.wait(0.5):
                    ticks += 50  # 0.5 s of user time per CPU per 0.5 s
                    out = []
                    for line in lines:
                        parts = line.split()
                        if parts and parts[0].startswith("cpu"):
                            cpus = 4 if parts[0] == "cpu" else 1
                            parts[1] = str(int(parts[1]) + ticks * cpus)
                            line = " ".join(parts)
                        out.append(line)
                    tmp = stat.with_suffix(".new")
                    tmp.write_text("\n".join(out) + "\n")
                    tmp.replace(stat)
            threading.Thread(target=burn, daemon=True).start()
        config = {
            "paths": {"procfs": procfs, "rootfs": str(FIXTURES / "host1" / "root") if saturated else "/"},
            "collectors": {
                "host": {"interval": 1, "timeout": 1},
                "process": {"interval": 1, "timeout": 1},
                "hpom": {"enabled": True, "interval": 1, "timeout": 1, "command_timeout": 0.5,
                         "queue_dir": str(tmp_path / "no-queues"), "opcsv": None, "ovc": None, "ovconfget": None,
                         "database": {"dsn": "hpomdb:1521/openview", "user": "opc_monitor",
                                      "password_env": "HPOM_DB_PASSWORD", "connect_timeout": 0.5,
                                      "query_timeout": 0.5}},
                "ibmmq": {"enabled": True, "interval": 1, "timeout": 1, "queue_managers": [
                    {"name": "QM1", "backend": "rest", "url": self.mqweb.base_url, "timeout": 0.5}]},
            },
        }
        path = tmp_path / "exporter.yaml"
        path.write_text(yaml.safe_dump(config))
        self.exporter = start_exporter("--config", str(path), env={
            "PYTHONPATH": str(REPO / "tests" / "fakes"), "FAKE_ORACLEDB_FIXTURE": str(db),
            "HPOM_DB_PASSWORD": "not-a-real-one"})
        # Alertmanager with the example routing, receivers -> local webhook
        self.webhook = WebhookReceiver()
        am_config = yaml.safe_load((REPO / "alerts" / "alertmanager.yml").read_text())
        am_config = shorten_timers(rewrite_receivers(am_config, self.webhook.base_url))
        self.alertmanager_url, am_proc = start_alertmanager(yaml.safe_dump(am_config), tmp_path)
        self.procs.append(am_proc)
        # Prometheus
        port = free_port()
        prom_config = {
            "global": {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
            "rule_files": _rules(tmp_path),
            "alerting": {"alertmanagers": [{"static_configs": [
                {"targets": [urllib.parse.urlparse(self.alertmanager_url).netloc]}]}]},
            "scrape_configs": [{"job_name": "middleware", "static_configs": [
                {"targets": [f"127.0.0.1:{self.exporter.port}"]}]}],
        }
        (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(prom_config))
        log = open(tmp_path / "prometheus.log", "wb")
        self.prometheus_url = f"http://127.0.0.1:{port}"
        self.procs.append(subprocess.Popen(
            [require_binary("prometheus"), f"--config.file={tmp_path / 'prometheus.yml'}",
             f"--storage.tsdb.path={tmp_path / 'tsdb'}", f"--web.listen-address=127.0.0.1:{port}"],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL))

    def query(self, expr: str) -> list:
        try:
            status, _, body = http_get(self.prometheus_url + "/api/v1/query?query=" + urllib.parse.quote(expr))
        except OSError:  # not listening yet
            return []
        return json.loads(body)["data"]["result"] if status == 200 else []

    def firing(self) -> dict[str, dict]:
        try:
            status, _, body = http_get(self.prometheus_url + "/api/v1/alerts")
        except OSError:
            return {}
        if status != 200:
            return {}
        return {a["labels"]["alertname"]: a for a in json.loads(body)["data"]["alerts"] if a["state"] == "firing"}

    def close(self) -> None:
        self.stop_event.set()
        for proc in self.procs:
            proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.webhook.close()
        self.mqweb.stop()


@pytest.fixture
def stack(tmp_path, start_exporter):
    require_binary("prometheus")
    require_binary("prometheus-alertmanager")
    made: list[Stack] = []

    def make(**kwargs) -> Stack:
        made.append(Stack(tmp_path, start_exporter, **kwargs))
        return made[-1]

    yield make
    for s in made:
        s.close()
    shutil.rmtree(tmp_path / "tsdb", ignore_errors=True)


def _delivered(webhook, receiver: str) -> dict[str, dict]:
    return {alert["labels"]["alertname"]: alert for alert in webhook.alerts(f"/{receiver}")}


def test_headline_alerts_reach_their_receivers(stack):
    s = stack(acked=5001, cmas=11, saturated=True)
    deadline = time.monotonic() + 90
    delivered: dict[str, dict] = {}
    while time.monotonic() < deadline:
        delivered = {name: alert for receiver in set(RECEIVER.values())
                     for name, alert in _delivered(s.webhook, receiver).items() if RECEIVER.get(name) == receiver}
        if all(name in delivered for name in HEADLINE):
            break
        time.sleep(1)
    assert set(HEADLINE) <= set(delivered), (f"delivered: {sorted(delivered)}; "
                                            f"firing in Prometheus: {sorted(s.firing())}")
    ack = delivered["MiddlewareHpomAcknowledgementBulkTooLarge"]
    assert ack["labels"]["severity"] == "warning" and ack["labels"]["system"] == "hpom"
    assert ack["labels"]["guide_row"] == "HPOM-ACK"
    assert "5001" in ack["annotations"]["description"].replace(",", "")
    cma = delivered["MiddlewareHpomCustomAttributesOverLimit"]
    assert cma["labels"]["guide_row"] == "HPOM-CMA" and cma["labels"]["severity"] == "info"
    saturation = delivered["MiddlewareMqQueueManagerCpuSaturation"]
    assert saturation["labels"]["guide_row"] == "MQ-CPU" and saturation["labels"]["severity"] == "critical"
    # only critical alerts page
    assert all(a["labels"]["severity"] == "critical" for a in _delivered(s.webhook, "pager").values())


def test_nothing_fires_just_under_the_thresholds(stack):
    s = stack(acked=5000, cmas=10, saturated=False)
    # wait until the rules have been evaluated on real data for a while
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not s.query("middleware_hpom_cma_max_per_message"):
        time.sleep(1)
    assert s.query("middleware_hpom_cma_max_per_message"), "Prometheus never got the HPOM figures"
    time.sleep(12)  # several evaluations past the shortened for:
    firing = s.firing()
    assert not set(HEADLINE) & set(firing), sorted(firing)
    for receiver in ("pager", "ticket", "advice"):
        assert not set(HEADLINE) & set(_delivered(s.webhook, receiver)), receiver
