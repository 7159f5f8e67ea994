"""One truth about what works (issue 26): with each kind of target made unreachable in turn (an Oracle database
through the stand-in driver, an MQ queue manager, an HPOM server, a Domino console, a remote host of the text
back-end), a real exporter process says the same thing in the metric (``middleware_target_up``,
``middleware_scrape_collector_success``), the status page, /api/v1/collectors, /readyz and the log.

The unreachable hosts are stand-ins (invented): an ``ssh`` script that fails as OpenSSH does when the host refuses
the connection, a closed loopback port for the MQ REST API, and the DB-API stand-in's ``connect_error``.
"""

from __future__ import annotations

import json
import re
from html import escape
from pathlib import Path

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from ..support import REPO, free_port, shell_script, system_fixtures

FAKES = REPO / "tests" / "fakes"
REFUSED = "ssh: connect to host {host} port 22: Connection refused"


def _ssh(tmp_path: Path) -> str:
    """OpenSSH's words and exit status when the remote host refuses the connection (invented stand-in)."""
    return shell_script(tmp_path / "ssh", 'echo "ssh: connect to host $1 port 22: Connection refused" >&2\nexit 255\n')


def _closed_port() -> int:
    return free_port()  # bound and released: nothing listens there


def _oracle(tmp_path: Path) -> tuple[dict, dict, str, str, str]:
    fixture = tmp_path / "db.yaml"
    data = yaml.safe_load((system_fixtures("oracle") / "db.yaml").read_text())
    data["databases"]["erp.example:1521/erp"]["connect_error"] = "DPY-6005: cannot connect to database (erp down)"
    fixture.write_text(yaml.safe_dump(data))
    env = {"PYTHONPATH": str(FAKES), "FAKE_ORACLEDB_FIXTURE": str(fixture), "ORA_MONITOR_PW": "Tiger-Tiger-42"}
    databases = [{"name": "opcdb", "dsn": "opcdb.example:1521/openview", "user": "monitor",
                  "password_env": "ORA_MONITOR_PW", "hpom": True},
                 {"name": "erp", "dsn": "erp.example:1521/erp", "user": "monitor", "password_env": "ORA_MONITOR_PW"}]
    config = {"paths": {"procfs": str(system_fixtures("oracle") / "proc")},
              "collectors": {"oracle": {"enabled": True, "interval": "60s", "timeout": "20s", "databases": databases}}}
    return config, env, "oracle", "erp", "DPY-6005: cannot connect to database (erp down)"


def _ibmmq(tmp_path: Path) -> tuple[dict, dict, str, str, str]:
    qmgr = {"name": "QM1", "url": f"http://127.0.0.1:{_closed_port()}/ibmmq/rest/v2", "timeout": "2s"}
    config = {"collectors": {"ibmmq": {"enabled": True, "interval": "60s", "timeout": "20s",
                                       "queue_managers": [qmgr]}}}
    return config, {}, "ibmmq", "QM1", "refused"


def _hpom(tmp_path: Path) -> tuple[dict, dict, str, str, str]:
    config = {"collectors": {"hpom": {"enabled": True, "interval": "60s", "timeout": "20s", "command_timeout": "10s",
                                      "queue_dir": str(tmp_path / "no-queue-dir-here"),
                                      "command_prefix": [_ssh(tmp_path), "hpom1"], "target": "hpom1"}}}
    return config, {}, "hpom", "hpom1", REFUSED.format(host="hpom1")


def _domino(tmp_path: Path) -> tuple[dict, dict, str, str, str]:
    config = {"collectors": {"domino": {"enabled": True, "interval": "60s", "timeout": "20s", "command_timeout": "10s",
                                        "command": ["/opt/hcl/domino/bin/server", "-c", "show stat"],
                                        "command_prefix": [_ssh(tmp_path), "domino1"], "target": "domino1"}}}
    return config, {}, "domino", "domino1", REFUSED.format(host="domino1")


def _host_text(tmp_path: Path) -> tuple[dict, dict, str, str, str]:
    config = {"collectors": {"host": {"backend": "text", "interval": "60s", "timeout": "20s",
                                      "text": {"command_prefix": [_ssh(tmp_path), "aix1"], "target": "aix1",
                                               "command_timeout": "10s"}}}}
    return config, {}, "host", "aix1", REFUSED.format(host="aix1")


def _samples(body: bytes) -> dict:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(body.decode()) for s in family.samples}


def _row(page: str, element_id: str) -> str:
    match = re.search(rf'<(tr|section)[^>]* id="{re.escape(element_id)}".*?</\1>', page, re.S)
    assert match, f"{element_id} not on the page"
    return match.group(0)


@pytest.mark.integration
@pytest.mark.parametrize("kind", [_oracle, _ibmmq, _hpom, _domino, _host_text],
                         ids=["oracle-database", "mq-qmgr", "hpom-server", "domino-console", "remote-text-host"])
def test_unreachable_target_metric_page_api_and_log_agree(kind, tmp_path, start_exporter):
    config, env, collector, target, needle = kind(tmp_path)
    if collector != "host":
        config["collectors"].setdefault("host", {"enabled": False})
    config["collectors"]["process"] = {"enabled": False}
    exporter = start_exporter(config=yaml.safe_dump(config), env=env)  # ready (200) once the first run is done

    # the API: the collector did not work, and says which target and why
    api = {c["name"]: c for c in json.loads(exporter.get("/api/v1/collectors")[2])}[collector]
    down = {t["name"]: t for t in api["targets"]}[target]
    error = down["last_error"]
    assert needle.lower() in error.lower(), api
    assert down["up"] is False and down["state"] == "down"
    assert api["state"] == "degraded" and api["last_success"] is False
    assert api["last_error"] == f"target {target} down: {error}"

    # the metric says the same
    samples = _samples(exporter.get("/metrics")[2])
    assert samples[("middleware_target_up", (("collector", collector), ("target", target)))] == 0
    assert samples[("middleware_scrape_collector_success", (("collector", collector),))] == 0
    failed_sources = {s["name"] for s in down["sources"] if not s["success"]}
    for source in failed_sources:
        key = ("middleware_target_source_success", (("collector", collector), ("source", source), ("target", target)))
        assert samples[key] == 0

    # the status page: the collector degraded, the target down with the same error text, no Python `True`
    status, _, body = exporter.get("/")
    page = body.decode()
    assert status == 200
    section = _row(page, f"collector-{collector}")
    assert 'class="collector degraded"' in section and escape(api["last_error"]) in section
    row = _row(page, f"target-{collector}-{target}")
    assert 'class="badge down"' in row and escape(error) in row
    assert ">True<" not in page and ">False<" not in page

    # the log: one "target down" line with that text
    assert f"collector={collector} target={target} msg='target down' error={error!r}" in exporter.log()

    # /readyz: 200 "degraded": Kubernetes keeps the pod in its Service so the outage stays visible
    status, _, body = exporter.get("/readyz")
    assert status == 200 and json.loads(body)["status"] == "degraded"
    assert f"{collector}/{target}" in json.loads(body)["targets_down"]

    if collector == "oracle":  # the other database is up, everywhere
        assert samples[("middleware_target_up", (("collector", "oracle"), ("target", "opcdb")))] == 1
        assert 'class="badge up"' in _row(page, "target-oracle-opcdb")
        assert "Tiger-Tiger-42" not in exporter.log() + page
