"""The status page (GET /, exporter/web/statuspage.py): what an operator opens first (issue 26).

Checked as markup for escaping and wording, then in Debian's headless Chromium (the advice page's ``browser``
fixture: Selenium, chromedriver, scripts off) against a real exporter with one Oracle database down (the DB-API
stand-in refuses it) and one remote host of the text back-end refusing ssh (an invented stand-in script).
Regenerate the screenshot in the docs deliberately:

    UPDATE_SCREENSHOT=1 .venv/bin/python -m pytest tests/web/test_status_page.py -k browser
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from exporter.web.statuspage import CONTENT_SECURITY_POLICY, age, guide_rows, render

from ..advisor.test_advice_page import _fits_and_screenshot, _summary_table, browser  # noqa: F401 - the fixture, shared
from ..support import REPO, shell_script, system_fixtures

SCREENSHOT = REPO / "docs" / "images" / "status.png"
FAKES = REPO / "tests" / "fakes"


def _collector(**fields) -> dict:
    base = {"name": "oracle", "description": "Oracle databases.", "enabled": True, "state": "degraded",
            "interval_seconds": 60.0, "timeout_seconds": 50.0, "runs": 3, "failures": 3, "last_success": False,
            "samples_served": True, "last_run_timestamp": 1_000_000.0, "last_success_timestamp": None,
            "last_duration_seconds": 0.25, "series": 10, "last_error": "target erp down: <b>refused</b>",
            "source_errors": {"erp": "<b>refused</b>", "mounts": "cannot read the host's mount table"},
            "targets": [
                {"name": "erp", "up": False, "state": "down", "last_error": "<b>refused</b>",
                 "last_success_timestamp": None, "sources": []},
                {"name": "opcdb", "up": True, "state": "up", "last_error": None,
                 "last_success_timestamp": 999_990.0,
                 "sources": [{"name": "redo_groups", "success": True, "last_error": None},
                             {"name": "parameters", "success": False, "last_error": "ORA-00942: no table"}]}]}
    return base | fields


def test_page_escapes_errors_and_says_states_in_words():
    page = render([_collector(), {"name": "vhi", "description": "VHI <x>", "enabled": False}],
                  {"status": "degraded"}, {"oracle": ["ORA-NFS", "ORA-REDO"]}, "1.2.3", now=1_000_042.0)
    assert "<b>refused</b>" not in page and "&lt;b&gt;refused&lt;/b&gt;" in page
    assert "VHI &lt;x&gt;" in page
    assert 'class="badge down"' in page and 'class="badge up"' in page and 'class="badge degraded"' in page
    assert ">True<" not in page and ">False<" not in page and "None" not in page
    assert "1 of 2 read" in page and "ORA-00942: no table" in page  # the failed source of an up target
    assert "42 s ago" in page and "52 s ago" in page  # the last run; opcdb last up
    assert "cannot read the host&#x27;s mount table" in page  # a collector-level source note
    assert 'href="/advice#system-oracle">ORA-NFS</a>' in page
    assert "docs/runbooks/oracle.md" in page and "docs/runbooks/exporter.md#middlewareexportertargetdown" in page
    assert "<script" not in page


def test_estate_section_shows_a_broken_inventory_and_failing_probes_escaped():
    inventory = {"file": "/etc/t.yml", "groups": 2, "targets": 300, "reloads": 4, "failed_reloads": 1,
                 "error": "group 1: target \"<x>\" refused"}
    probes = [{"module": "unix", "target": "hpux01", "success": True, "running": False, "age_seconds": 3.0,
               "backoff_seconds": 0.0, "failures_in_a_row": 0, "note": None, "collectors": []},
              {"module": "unix", "target": "aix07", "success": False, "running": False, "age_seconds": 12.0,
               "backoff_seconds": 28.0, "failures_in_a_row": 2, "note": None,
               "collectors": [_collector(targets=[{"name": "aix07", "state": "down", "last_error": "<b>hung</b>",
                                                   "sources": []}])]}]
    page = render([_collector()], {"status": "degraded"}, {}, "1.2.3", now=1_000_042.0, inventory=inventory,
                  probes=probes)
    estate = page.split("<h2>Estate</h2>", 1)[1].split("<h2>", 1)[0]
    assert "300 targets in 2 groups" in estate and "4 taken, 1 refused" in estate
    assert "&lt;x&gt;" in estate and "the last good inventory is served" in estate
    assert "2 targets probed recently, 1 failing, 1 backing off" in estate
    assert "aix07" in estate and "&lt;b&gt;hung&lt;/b&gt;" in estate and "28 s" in estate
    assert "hpux01" not in estate  # only the failing ones
    assert "<h2>Estate</h2>" not in render([_collector()], {"status": "ok"}, {}, "1.2.3", now=1_000_042.0)


def test_age_for_people():
    assert age(None, 100.0) == "never"
    assert age(95.0, 100.0) == "5 s ago"
    assert age(100.0 - 185, 100.0) == "3 min 05 s ago"
    assert age(100.0 - 7800, 100.0) == "2 h 10 min ago"


def test_guide_rows_come_from_the_metric_help():
    from exporter.systems.hpom.collector import HpomCollector
    from exporter.systems.oracle.collector import OracleCollector

    def rows(cls) -> list[str]:
        collector = cls(cls.reference_settings(), None)
        return guide_rows(f"{s.help} {s.unit_note}" for s in collector.specs())

    assert {"HPOM-QUEUE", "HPOM-MSI"} <= set(rows(HpomCollector))
    assert "ORA-NFS" in rows(OracleCollector)


def test_page_does_not_load_jinja2():
    """The status page keeps the exporter's memory small (issue 30): no template engine for it."""
    code = ("import sys\nfrom fastapi.testclient import TestClient\nfrom exporter.core.scheduler import Scheduler\n"
            "from exporter.web.server import create_app\n"
            "client = TestClient(create_app(Scheduler([])))\n"
            "response = client.get('/')\nassert response.status_code == 200, response.text\n"
            "assert 'status' in response.text\nprint(sorted(m for m in sys.modules if m.startswith('jinja2')))\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


@pytest.mark.integration
def test_status_page_with_one_target_down_in_a_browser(start_exporter, browser, tmp_path):  # noqa: F811
    from selenium.webdriver.common.by import By

    fixture = tmp_path / "db.yaml"
    data = yaml.safe_load((system_fixtures("oracle") / "db.yaml").read_text())
    data["databases"]["erp.example:1521/erp"]["connect_error"] = \
        "DPY-6005: cannot connect to database (CONNECTION_ID=Qm9ndXM=). [Errno 111] Connection refused"
    fixture.write_text(yaml.safe_dump(data))
    ssh = shell_script(tmp_path / "ssh", 'echo "ssh: connect to host $1 port 22: Connection refused" >&2\nexit 255\n')
    databases = [{"name": "opcdb", "dsn": "opcdb.example:1521/openview", "user": "monitor",
                  "password_env": "ORA_MONITOR_PW", "hpom": True},
                 {"name": "erp", "dsn": "erp.example:1521/erp", "user": "monitor", "password_env": "ORA_MONITOR_PW"}]
    config = {"paths": {"procfs": str(system_fixtures("oracle") / "proc")}, "collectors": {
        "host": {"backend": "text", "interval": "60s", "timeout": "20s",
                 "text": {"command_prefix": [ssh, "aix1"], "target": "aix1", "command_timeout": "10s"}},
        "process": {"enabled": False}, "filesystem": {"enabled": False}, "mountstats": {"enabled": False},
        "oracle": {"enabled": True, "interval": "60s", "timeout": "20s", "databases": databases}}}
    env = {"PYTHONPATH": str(FAKES), "FAKE_ORACLEDB_FIXTURE": str(fixture), "ORA_MONITOR_PW": "Tiger-Tiger-42"}
    exporter = start_exporter(config=yaml.safe_dump(config), env=env)
    status, headers, _ = exporter.get("/")
    assert status == 200 and headers["content-type"].startswith("text/html")
    assert headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    api = {c["name"]: c for c in json.loads(exporter.get("/api/v1/collectors")[2])}

    browser.get(exporter.base + "/")
    text = browser.execute_script("return document.body.innerText")
    assert _summary_table(browser) == {"Collectors OK": 0, "Degraded": 2, "Failed": 0, "Targets up": 1,
                                       "Targets down": 2}
    for name in ("oracle", "host"):
        section = browser.find_element(By.ID, f"collector-{name}")
        seen = section.get_attribute("innerText")
        assert section.is_displayed() and seen.startswith(f"{name}\nDEGRADED") or f"{name} DEGRADED" in seen, seen
        assert api[name]["last_error"] in seen
        for target in api[name]["targets"]:
            row = browser.find_element(By.ID, f"target-{name}-{target['name']}").get_attribute("innerText")
            assert ("DOWN" if not target["up"] else "UP") in row
            if target["last_error"]:
                assert target["last_error"] in row
    assert "ORA-" in text and "Connection refused" in text and "Tiger-Tiger-42" not in text
    assert "True" not in text.split() and "None" not in text.split()
    # readable without scripts, nothing loaded from elsewhere, nothing off the side of the window
    assert browser.find_elements(By.TAG_NAME, "script") == []
    assert browser.execute_script("return performance.getEntriesByType('resource').length") == 0
    _fits_and_screenshot(browser, tmp_path / "status.png", SCREENSHOT)
