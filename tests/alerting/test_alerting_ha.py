"""Beyond one machine, end to end: two real exporters scraped by one real Prometheus that sends its alerts to
both members of a real Alertmanager HA pair (two processes gossiping on loopback), with the example routing of
alerts/alertmanager.yml pointed at a local webhook receiver.

Each exporter reads an Oracle database that refuses connections (a closed loopback port, through the real
python-oracledb driver), so `MiddlewareOracleDown` (critical) fires once per exporter instance.  The example
routing groups by alertname, system and instance: two groups, each of which must be paged exactly once although
both Alertmanagers hold both alerts (the pair deduplicates through its gossiped notification log).  Then the
Alertmanager that sent the pages is killed (SIGKILL, no graceful leave) and one exporter is killed: the survivor
alone must page the new `MiddlewareExporterDown` for that instance.

As in tests/alerting/test_alerting_e2e.py the rules are the files in alerts/ with every `for:` shortened to 3s and the
example's group timers shortened to 1s; the cluster's timers are shortened too (peer timeout 2s, settle 5s,
gossip 100ms) so the test runs in tens of seconds.  Loopback only; processes are stopped by their PID; every wait
is bounded."""

from __future__ import annotations

import json
import subprocess
import time
import urllib.parse
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from ..support import REPO, free_port, http_get, require_binary
from .test_alerting_e2e import _rules as shortened_rules
from .test_alertmanager import (
    WebhookReceiver,
    find_alertmanager,
    http_json,
    rewrite_receivers,
    shorten_timers,
    stop_alertmanager,
    wait_until,
)

pytestmark = pytest.mark.integration

PEER_TIMEOUT = 2.0  # --cluster.peer-timeout: how long the second member waits for the first one's notification
# Long enough for a duplicate to show: the second member notifies (if it does) PEER_TIMEOUT after its own
# group_wait/group_interval (1 s each), and the notification log is gossiped every 100 ms.
QUIET = 2 * PEER_TIMEOUT + 3.0
WAIT = 45.0  # upper bound of every wait for a page
SITE = "loopback"  # Prometheus' external label, as every Prometheus of a large estate should have one


class Member:
    """One Alertmanager of the HA pair."""

    def __init__(self, name: str, tmp_path: Path) -> None:
        self.name = name
        self.web_port = free_port()
        self.cluster_port = free_port()
        self.base_url = f"http://127.0.0.1:{self.web_port}"
        # The webhook payload's externalURL tells which member sent a notification.
        self.external_url = f"{self.base_url}/{name}"
        self.storage = tmp_path / f"{name}-data"
        self.log_path = tmp_path / f"{name}.log"
        self.proc: subprocess.Popen | None = None

    def start(self, config_file: Path, peer: Member) -> None:
        self.storage.mkdir(parents=True, exist_ok=True)
        argv = [find_alertmanager(), f"--config.file={config_file}", f"--storage.path={self.storage}",
                f"--web.listen-address=127.0.0.1:{self.web_port}", f"--web.external-url={self.external_url}",
                "--web.route-prefix=/",
                f"--cluster.listen-address=127.0.0.1:{self.cluster_port}",
                f"--cluster.advertise-address=127.0.0.1:{self.cluster_port}",
                f"--cluster.peer=127.0.0.1:{peer.cluster_port}",
                f"--cluster.peer-timeout={PEER_TIMEOUT:g}s", "--cluster.settle-timeout=5s",
                "--cluster.gossip-interval=100ms", "--cluster.pushpull-interval=5s",
                "--cluster.reconnect-interval=1s", "--log.level=debug"]
        with open(self.log_path, "wb") as log_file:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log_file, stderr=subprocess.STDOUT)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def cluster(self) -> dict[str, Any]:
        """The `cluster` part of /api/v2/status ({} while not answering)."""
        assert self.proc is not None
        if self.proc.poll() is not None:
            raise AssertionError(f"alertmanager {self.name} exited with {self.proc.returncode}:\n{self.log()}")
        try:
            status, body = http_json("GET", self.base_url + "/api/v2/status", timeout=2)
        except OSError:
            return {}
        return body.get("cluster", {}) if status == 200 and isinstance(body, dict) else {}

    def alerts(self) -> list[dict[str, Any]]:
        status, body = http_json("GET", self.base_url + "/api/v2/alerts", timeout=2)
        assert status == 200, body
        return body

    def notifications(self) -> float:
        """alertmanager_notifications_total of the webhook integration: what this member actually sent."""
        _, _, body = http_get(self.base_url + "/metrics")
        for line in body.decode().splitlines():
            if line.startswith("alertmanager_notifications_total") and 'integration="webhook"' in line:
                return float(line.rsplit(" ", 1)[1])
        return 0.0

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(10)


class Estate:
    """Two exporters, one Prometheus, an Alertmanager pair and a webhook receiver, all on loopback."""

    def __init__(self, tmp_path: Path, start_exporter) -> None:
        self.tmp = tmp_path
        self.procs: list[subprocess.Popen] = []
        self.webhook = WebhookReceiver()
        self.members = [Member("am-a", tmp_path), Member("am-b", tmp_path)]
        self.prometheus_log = tmp_path / "prometheus.log"
        self.prometheus_url = ""
        self.start_exporter = start_exporter
        self.exporters: list = []

    # -- the Alertmanager pair ------------------------------------------------------------------------------
    def start_alertmanagers(self) -> None:
        """Start both members, each naming the other as its peer; ``wait_cluster`` waits for the pair."""
        config = yaml.safe_load((REPO / "alerts" / "alertmanager.yml").read_text())
        config = shorten_timers(rewrite_receivers(config, self.webhook.base_url))
        config_file = self.tmp / "alertmanager.yml"
        config_file.write_text(yaml.safe_dump(config, sort_keys=False))
        first, second = self.members
        first.start(config_file, second)
        second.start(config_file, first)
        for member in self.members:
            assert member.proc is not None
            self.procs.append(member.proc)

    def wait_cluster(self) -> None:
        """Until both members report a settled cluster of the same 2 peers (/api/v2/status)."""
        def formed():
            clusters = [member.cluster() for member in self.members]
            return all(c.get("status") == "ready" and len(c.get("peers") or []) == 2 for c in clusters) and clusters

        try:
            clusters = wait_until(formed, timeout=30, message="Alertmanager cluster of 2 peers ready")
        except AssertionError:
            logs = "\n".join(f"--- {m.name}\n{m.log()[-3000:]}" for m in self.members)
            raise AssertionError(f"the pair did not form a cluster:\n{logs}") from None
        names = [sorted(p["name"] for p in c["peers"]) for c in clusters]
        assert names[0] == names[1], f"the members disagree about the peers: {names}"

    # -- the exporters -------------------------------------------------------------------------------------
    def start_exporters(self) -> None:
        for _ in range(2):
            closed = free_port()  # nothing listens here: the database "refuses connections"
            config = {
                "collectors": {
                    "host": {"enabled": False},
                    "process": {"enabled": False},
                    "oracle": {"enabled": True, "interval": 1, "timeout": 1, "databases": [
                        {"name": "ORCL", "dsn": f"127.0.0.1:{closed}/orcl", "user": "monitor",
                         "password_env": "ORACLE_MONITOR_PASSWORD", "connect_timeout": 0.5}]},
                },
            }
            # its only collector fails by design (the page under test), so /readyz says 503: wait for /healthz
            self.exporters.append(self.start_exporter(config=yaml.safe_dump(config), wait_ready=False,
                                                      env={"ORACLE_MONITOR_PASSWORD": "not-a-real-one"}))

    @property
    def instances(self) -> list[str]:
        return [f"127.0.0.1:{exporter.port}" for exporter in self.exporters]

    # -- Prometheus ----------------------------------------------------------------------------------------
    def start_prometheus(self) -> None:
        port = free_port()
        config = {
            "global": {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s",
                       "external_labels": {"site": SITE}},
            "rule_files": shortened_rules(self.tmp),
            # Every member of the pair gets every alert (never a load balancer in front of them).
            "alerting": {"alertmanagers": [{"static_configs": [
                {"targets": [f"127.0.0.1:{m.web_port}" for m in self.members]}]}]},
            "scrape_configs": [{"job_name": "middleware", "static_configs": [{"targets": self.instances}]}],
        }
        (self.tmp / "prometheus.yml").write_text(yaml.safe_dump(config))
        self.prometheus_url = f"http://127.0.0.1:{port}"
        with open(self.prometheus_log, "wb") as log:
            self.procs.append(subprocess.Popen(
                [require_binary("prometheus"), f"--config.file={self.tmp / 'prometheus.yml'}",
                 f"--storage.tsdb.path={self.tmp / 'tsdb'}", f"--web.listen-address=127.0.0.1:{port}"],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL))

    def prometheus_api(self, path: str) -> Any:
        try:
            status, _, body = http_get(self.prometheus_url + path)
        except OSError:  # not listening yet
            return None
        return json.loads(body)["data"] if status == 200 else None

    # -- what reached the pager ----------------------------------------------------------------------------
    def pages(self, status: str = "firing") -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """(payload, alert) for every alert with ``status`` in every notification posted to /pager."""
        return [(payload, alert) for payload in self.webhook.payloads("/pager") if isinstance(payload, dict)
                for alert in payload.get("alerts", []) if alert.get("status") == status]

    def page_counts(self, alertname: str) -> Counter:
        """How many times each instance was paged (firing) for ``alertname``."""
        return Counter(alert["labels"]["instance"] for _, alert in self.pages()
                       if alert["labels"]["alertname"] == alertname)

    def wait_pages(self, alertname: str, instances: list[str]) -> None:
        def arrived():
            return set(instances) <= set(self.page_counts(alertname))
        try:
            wait_until(arrived, timeout=WAIT, interval=0.25, message=f"{alertname} paged for {instances}")
        except AssertionError:
            firing = self.prometheus_api("/api/v1/alerts") or {}
            raise AssertionError(
                f"{alertname} not paged for all of {instances} within {WAIT} s; pages: {self.summary()}; "
                f"Prometheus alerts: {json.dumps(firing)[:3000]}; "
                f"Prometheus log: {self.prometheus_log.read_text(errors='replace')[-2000:]}") from None

    def summary(self) -> list[tuple[str, str, str]]:
        return [(payload.get("externalURL", ""), alert["labels"]["alertname"], alert["labels"].get("instance", ""))
                for payload, alert in self.pages()]

    def close(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                stop_alertmanager(proc)  # kill, then wait
        self.webhook.close()


@pytest.fixture
def estate(tmp_path, start_exporter):
    require_binary("prometheus")
    find_alertmanager()
    made = Estate(tmp_path, start_exporter)
    try:
        yield made
    finally:
        made.close()


def test_ha_pair_pages_once_per_group_and_survives_losing_a_member(estate):
    started = time.monotonic()
    estate.start_alertmanagers()
    estate.start_exporters()  # while the pair gossips
    estate.wait_cluster()  # before anything is sent to it
    estate.start_prometheus()
    instances = estate.instances
    am_a, am_b = estate.members

    # Prometheus sends to both members.
    def both_discovered():
        data = estate.prometheus_api("/api/v1/alertmanagers") or {}
        urls = {urllib.parse.urlparse(a["url"]).netloc for a in data.get("activeAlertmanagers", [])}
        return urls == {f"127.0.0.1:{m.web_port}" for m in estate.members}
    wait_until(both_discovered, timeout=20, message="Prometheus has both Alertmanagers")

    # 1. One page per alert group (alertname, system, instance): one per exporter, each exactly once.
    estate.wait_pages("MiddlewareOracleDown", instances)
    first_page = time.monotonic()
    time.sleep(QUIET)  # a duplicate from the other member would arrive within this
    pages = estate.pages()
    assert estate.page_counts("MiddlewareOracleDown") == Counter({i: 1 for i in instances}), estate.summary()
    assert {a["labels"]["alertname"] for _, a in pages} == {"MiddlewareOracleDown"}, estate.summary()
    for payload, alert in pages:
        labels = alert["labels"]
        assert payload["receiver"] == "pager" and len(payload["alerts"]) == 1
        assert payload["groupLabels"] == {"alertname": "MiddlewareOracleDown", "system": "oracle",
                                          "instance": labels["instance"]}
        assert labels["severity"] == "critical" and labels["system"] == "oracle"
        assert labels["job"] == "middleware" and labels["database"] == "ORCL" and labels["site"] == SITE
        assert labels["instance"] in instances
    # Both members hold both alerts (Prometheus sent them to each): the single page is deduplication, not loss.
    for member in estate.members:
        held = {a["labels"]["instance"] for a in member.alerts()
                if a["labels"]["alertname"] == "MiddlewareOracleDown" and a["status"]["state"] == "active"}
        assert held == set(instances), (member.name, held)
    # What the members sent is what the receiver got: the pages above, plus the notifications of the same outage's
    # other groups to other receivers (MiddlewareExporterTargetDown, a warning, fires with every `for:` shortened).
    # A page sent by both members would have shown as two pages of one instance above.
    def sent_is_delivered() -> bool:
        sent = sum(m.notifications() for m in estate.members)
        return sent == sum(len(estate.webhook.payloads(path)) for path in list(estate.webhook.deliveries))
    wait_until(sent_is_delivered, timeout=20, message="the members' notification counters match the deliveries")
    assert estate.page_counts("MiddlewareOracleDown") == Counter({i: 1 for i in instances}), estate.summary()
    # The other groups are not pages: nothing for these instances went to the ticket or advice receivers.
    assert not estate.webhook.delivered("/ticket", alertname="MiddlewareOracleDown")

    # 2. Kill the member that paged (SIGKILL: no graceful leave; it is still a peer until the survivor's probes
    # find it dead), then lose an exporter: the member that had deduplicated until now must page it.
    sender = pages[0][0]["externalURL"]
    assert sender in (am_a.external_url, am_b.external_url), sender
    victim, survivor = (am_a, am_b) if sender == am_a.external_url else (am_b, am_a)
    victim.kill()
    lost = estate.exporters[0]
    lost.proc.kill()
    lost.proc.wait(10)
    lost_instance = instances[0]
    estate.wait_pages("MiddlewareExporterDown", [lost_instance])
    down = [(p, a) for p, a in estate.pages() if a["labels"]["alertname"] == "MiddlewareExporterDown"]
    assert len(down) == 1, estate.summary()
    payload, alert = down[0]
    assert payload["externalURL"] == survivor.external_url, estate.summary()
    assert alert["labels"]["instance"] == lost_instance and alert["labels"]["severity"] == "critical"
    assert payload["groupLabels"] == {"alertname": "MiddlewareExporterDown", "system": "exporter",
                                      "instance": lost_instance}
    # The surviving exporter's group was not paged again.
    assert estate.page_counts("MiddlewareOracleDown") == Counter({i: 1 for i in instances}), estate.summary()
    assert survivor.proc is not None and survivor.proc.poll() is None
    elapsed = time.monotonic() - started
    print(f"first pages after {first_page - started:.1f} s, whole test {elapsed:.1f} s")
