"""The advice page (GET /advice): what an operator sees in a browser.

The page is rendered from an advisor report (exporter/advisor/page.py) and loaded in Debian's headless Chromium
through Selenium and Debian's chromedriver, with scripts switched off; the assertions read the page's visible text
(innerText), not its markup. The browser tests fail in CI when Chromium is missing (scripts/test installs it) and
skip elsewhere. Regenerate the screenshot in the docs deliberately:

    UPDATE_SCREENSHOT=1 .venv/bin/python -m pytest tests/advisor/test_advice_page.py -k real_exporter
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from jinja2 import UndefinedError

from exporter.advisor.page import CONTENT_SECURITY_POLICY, group, number, render

from ..chart_tools import CACHE
from ..estate import environment, estate
from ..support import REPO, require_binary

SCREENSHOT = REPO / "docs" / "images" / "advice.png"
HPOM = "HP Operations Manager for UNIX 8.21/8.30 Performance Guide"
ORACLE = "Oracle 10g on HP-UX and IBM System Storage N series"
VHI = "Verastream Host Integrator Server Performance (Technical Note 10087)"
STATUS_RANK = {"DEVIATES": 0, "UNKNOWN": 1, "FOLLOWS": 2}


def _row(row: str, system: str, status: str, **fields) -> dict:
    base = {"row": row, "system": system, "target_kind": "server variable", "target": row.lower(), "title": row,
            "status": status, "reason": None, "observed": "1", "observed_value": 1, "recommended": "2",
            "effect": "faster", "citation": {"document": HPOM, "section": "Management Server Configuration "
                                                                           "Variables, Table 1"},
            "remedy": None, "remedy_note": None}
    return base | fields


def sample_report() -> dict:
    """A report in the advisor's shape, built by hand: the systems listed in an order the page must not keep
    (a system with only follows first, deviations last in the list), and text that must be escaped."""
    recommendations = [
        _row("VHI-SESSIONS", "vhi", "follows", target_kind="server", target="vhi1"),
        _row("HPOM-VAR-GUITHREAD", "hpom", "follows", target="OPCMSGM_USE_GUI_THREAD", observed="TRUE",
             recommended="TRUE"),
        _row("HPOM-VAR-ACKLIMIT", "hpom", "unknown", target="OPC_DIRECT_ACKN_LIMIT", observed=None,
             observed_value=None, reason="ovconfget did not answer: timed out after 2 s"),
        _row("HPOM-VAR-COMMIT", "hpom", "deviates", target="OPC_UPDWN_COMMIT_COUNT", title="History download commit",
             observed="100 (default)", observed_value=100, recommended="1000",
             effect="history download 367 -> 518 msg/s",
             citation={"document": HPOM, "section": "Test: Downloading 100,000 History Messages, Table 27"},
             remedy="ovconfchg -ovrg server -ns opc -set OPC_UPDWN_COMMIT_COUNT 1000",
             remedy_note="Takes effect when the server processes restart (ovc -restart): plan a change window."),
        _row("ORA-FILESIZE", "oracle", "deviates", target_kind="database", target="opcdb <script>alert(1)</script>",
             title="Redo log size", observed="50 MB", observed_value=52428800, recommended=">= 100 MB",
             effect="fewer log switches", citation={"document": ORACLE, "section": "Oracle tuning"},
             remedy="ALTER DATABASE ADD LOGFILE GROUP 4 ('/u01/redo04.log') SIZE 100M;", remedy_note=None),
    ]
    forecasts = [
        {"id": "hpom-history-download", "system": "hpom", "target": "server", "title": "History download time",
         "value": 192.9, "unit": "s", "inputs": {"history_messages": 100000, "commit_count": 100},
         "source": {"document": HPOM, "section": "Test: Downloading 100,000 History Messages, Table 27"},
         "validity": "measured at 100 and 1,000 commits", "extrapolated": False,
         "metric": "middleware_hpom_history_messages", "comparison": None},
        {"id": "vhi-sessions", "system": "vhi", "target": "vhi1", "title": "Sessions at 100 % CPU", "value": None,
         "unit": "sessions", "inputs": {"cpus": 16}, "source": {"document": VHI, "section": "Test Case 2"},
         "validity": "1-8 CPUs", "extrapolated": True, "metric": "middleware_vhi_sessions",
         "comparison": "beyond the document's largest machine"},
    ]
    return {"generated_at": "2026-11-23T05:40:00Z", "generation": 42,
            "summary": {"follows": 2, "deviates": 2, "unknown": 1},
            "recommendations": recommendations, "forecasts": forecasts}


# ---- the template, without a browser --------------------------------------------------------------------------------

def test_groups_put_deviations_first_and_keep_every_row():
    report = sample_report()
    groups = group(report)
    assert [g["system"] for g in groups] == ["hpom", "oracle", "vhi"]  # deviations, then by the systems' order
    hpom = groups[0]
    assert [r["row"] for r in hpom["deviates"]] == ["HPOM-VAR-COMMIT"]
    assert [r["row"] for r in hpom["unknown"]] == ["HPOM-VAR-ACKLIMIT"]
    assert [r["row"] for r in hpom["follows"]] == ["HPOM-VAR-GUITHREAD"]
    assert [f["id"] for f in hpom["forecasts"]] == ["hpom-history-download"]
    rows = [r for g in groups for status in ("deviates", "unknown", "follows") for r in g[status]]
    assert sorted(r["row"] for r in rows) == sorted(r["row"] for r in report["recommendations"])


def test_everything_is_escaped_and_nothing_is_loaded():
    html = render(sample_report())
    assert "opcdb &lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<script" not in html.lower()
    assert "('/u01/redo04.log')" not in html and "(&#39;/u01/redo04.log&#39;)" in html
    # no external asset of any kind: no src/href to another place, no stylesheet link, no CSS import or url()
    assert not re.search(r"<link|<img|<iframe|\ssrc=|@import|url\(", html, re.I)
    assert set(re.findall(r'href="([^"]*)"', html)) == {"#system-hpom", "#system-oracle", "#system-vhi"}
    assert "@media print" in html
    assert "script-src" not in CONTENT_SECURITY_POLICY and "default-src 'none'" in CONTENT_SECURITY_POLICY


def test_a_report_missing_a_field_fails_instead_of_printing_blanks():
    report = sample_report()
    del report["recommendations"][3]["citation"]
    with pytest.raises(UndefinedError):
        render(report)


def test_empty_report_says_so():
    html = render({"generated_at": "2026-11-23T05:40:00Z", "generation": 1,
                   "summary": {"follows": 0, "deviates": 0, "unknown": 0}, "recommendations": [], "forecasts": []})
    assert "No advice" in html and "<section" not in html


def test_numbers_for_people():
    assert [number(v) for v in (None, 3, 100000, 192.9, 1234.56, 0.012345, 2.0)] == \
        ["-", "3", "100,000", "192.9", "1,235", "0.01235", "2"]


@pytest.mark.integration
def _build_backend() -> Path:
    """A Python with pyproject's build requirements, made once in the cache (the first run needs the package index,
    as pip's isolated build would on every run), so that the wheel builds with the network cut."""
    import tomllib

    requires = tomllib.loads((REPO / "pyproject.toml").read_text())["build-system"]["requires"]
    env = CACHE / "build-backend"
    stamp = env / "requires.txt"
    python = env / "bin" / "python"
    if stamp.is_file() and stamp.read_text() == "\n".join(requires) and python.exists():
        return python
    shutil.rmtree(env, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(env)], check=True, timeout=300)
    made = subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *requires],
                          capture_output=True, text=True, timeout=600)
    if made.returncode != 0:
        message = f"the build requirements {requires} are not cached and cannot be installed:\n{made.stderr[-2000:]}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    stamp.write_text("\n".join(requires))
    return python


def test_wheel_ships_the_template(tmp_path):
    """A wheel install (the offline artefact, the container) has the template: it is package data."""
    out = subprocess.run([str(_build_backend()), "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                          "-w", str(tmp_path), str(REPO)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    wheel = next(tmp_path.glob("middleware_exporter-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "exporter/advisor/templates/advice.html.j2" in names and "exporter/advisor/page.py" in names


# ---- in a browser ---------------------------------------------------------------------------------------------------

@pytest.fixture
def browser(tmp_path):
    """Debian's headless Chromium driven by Debian's chromedriver (the same version), scripts off, a new profile."""
    chromium = require_binary("chromium", "chromium-browser", package="chromium")
    chromedriver = require_binary("chromedriver", package="chromium-driver")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = os.path.realpath(chromium) if Path(chromium).name != "chromium" else chromium
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", f"--user-data-dir={tmp_path / 'chromium-profile'}",
                 "--window-size=1200,900", "--blink-settings=scriptEnabled=false"):
        options.add_argument(flag)
    # an explicit driver path: Selenium Manager never runs, so nothing is downloaded
    driver = webdriver.Chrome(service=Service(chromedriver, log_output=str(tmp_path / "chromedriver.log")),
                              options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def _sections(driver) -> list[list[str]]:
    """Each system section's visible lines, as a person reads them (innerText honours CSS text-transform)."""
    from selenium.webdriver.common.by import By

    return [[line.strip() for line in s.get_attribute("innerText").splitlines() if line.strip()]
            for s in driver.find_elements(By.CSS_SELECTOR, "section.system")]


def _badges(lines: list[str]) -> list[str]:
    return [line.split()[0] for line in lines if line.split()[0] in STATUS_RANK]


def _summary_table(driver) -> dict[str, int]:
    """The page's summary table (a row of names over a row of counts) as a person reads it."""
    from selenium.webdriver.common.by import By

    names, values = [line.split("\t") for line in
                     driver.find_element(By.CSS_SELECTOR, "table.summary").get_attribute("innerText").splitlines()
                     if line.strip()]
    return dict(zip([n.strip() for n in names], [int(v) for v in values], strict=True))


def _check_page(driver, report: dict) -> None:
    """What a person sees, checked against the report the page was made from."""
    from selenium.webdriver.common.by import By

    text = driver.execute_script("return document.body.innerText")
    summary = report["summary"]
    expected = {"Deviates": summary["deviates"], "Unknown": summary["unknown"], "Follows": summary["follows"]}
    if report["forecasts"]:
        expected["Forecasts"] = len(report["forecasts"])
    assert _summary_table(driver) == expected
    assert report["generated_at"] in text

    sections = _sections(driver)
    assert sections, text
    deviating = [r for r in report["recommendations"] if r["status"] == "deviates"]
    if deviating:
        # the first group's first row is a deviation
        assert sections[0][1].startswith("DEVIATES "), sections[0][:3]
    for lines in sections:
        ranks = [STATUS_RANK[b] for b in _badges(lines)]
        assert ranks == sorted(ranks), lines  # deviations, then unknowns, then the follows table
    # every deviation and unknown is a visible card with its citation; a deviation's remedy is shown verbatim
    cards = driver.find_elements(By.CSS_SELECTOR, "article.row")
    assert len(cards) == sum(r["status"] in ("deviates", "unknown") for r in report["recommendations"])
    for row in report["recommendations"]:
        if row["status"] not in ("deviates", "unknown"):
            continue
        card = next(c for c in cards if row["row"] in c.find_element(By.TAG_NAME, "h3").text
                    and row["target"] in c.get_attribute("innerText"))
        seen = card.get_attribute("innerText")
        assert card.is_displayed()
        assert f"Source: {row['citation']['document']}, {row['citation']['section']}" in seen
        if row["status"] == "unknown":
            assert row["reason"] in seen
        elif row["remedy"]:
            pre = card.find_element(By.CSS_SELECTOR, ".remedy pre")
            assert pre.is_displayed() and pre.get_attribute("innerText").strip() == row["remedy"].strip()
        if row["status"] == "deviates" and row["remedy_note"]:
            assert row["remedy_note"] in seen
    # the follows are rows of a compact table, each with its source
    follows = driver.find_elements(By.CSS_SELECTOR, "table.follows tr")
    assert len(follows) - len(driver.find_elements(By.CSS_SELECTOR, "table.follows")) == \
        sum(r["status"] == "follows" for r in report["recommendations"])
    for forecast in report["forecasts"]:
        assert forecast["validity"] in text and forecast["source"]["document"] in text
    if any(f["extrapolated"] for f in report["forecasts"]):
        assert "EXTRAPOLATED" in text

    # nothing but the page itself was loaded, and it carries no script
    assert driver.find_elements(By.TAG_NAME, "script") == []
    assert driver.execute_script("return performance.getEntriesByType('resource').length") == 0
    # printed: the contents list (links) goes, every section stays
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    try:
        assert not driver.find_element(By.CSS_SELECTOR, "nav.contents").is_displayed()
        assert all(s.is_displayed() for s in driver.find_elements(By.CSS_SELECTOR, "section.system"))
    finally:
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})


def _screenshot(driver, path: Path) -> None:
    """The whole page in one picture: the window made as tall as the document."""
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1200, min(height + 40, 12000))
    path.parent.mkdir(parents=True, exist_ok=True)
    assert driver.save_screenshot(str(path))
    data = path.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000


def _fits_and_screenshot(driver, path: Path, keep: Path) -> bool:
    """Nothing runs off the side of the window; the whole page shot to ``path``, and copied to ``keep`` (the
    picture in the docs) when UPDATE_SCREENSHOT is set: whether it was."""
    assert driver.execute_script("return document.documentElement.scrollWidth <= "
                                 "document.documentElement.clientWidth")
    _screenshot(driver, path)
    if not os.environ.get("UPDATE_SCREENSHOT"):
        return False
    keep.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(path, keep)
    return True


def test_rendered_report_in_a_browser(browser, tmp_path):
    report = sample_report()
    page = tmp_path / "advice.html"
    page.write_text(render(report))
    browser.get(page.as_uri())
    _check_page(browser, report)
    sections = _sections(browser)
    assert [s[0].split(" ")[0] for s in sections] == ["HPOM", "Oracle", "Verastream"]
    # the escaped target reads as text, as it was in the report
    assert "opcdb <script>alert(1)</script>" in browser.execute_script("return document.body.innerText")
    _screenshot(browser, tmp_path / "advice.png")


@pytest.mark.integration
def test_real_exporter_advice_page_in_a_browser(start_exporter, browser, tmp_path):
    pytest.importorskip("exporter.advisor.model", reason="the advisor model (exporter/advisor/model.py) is not here")
    # the fixture estate of every system (tests/estate.py), as tests/advisor/test_advisor.py judges it
    exporter = start_exporter("--config", str(estate(tmp_path)), env=environment(tmp_path))
    status, headers, body = exporter.get("/api/v1/advice")
    assert status == 200, body
    report = json.loads(body)
    assert report["recommendations"], report
    assert any(r["status"] == "deviates" for r in report["recommendations"]), "the estate should deviate somewhere"

    status, headers, body = exporter.get("/advice")
    assert status == 200 and headers["content-type"].startswith("text/html")
    assert headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    landing = exporter.get("/")[2].decode()
    assert "href='/advice'" in landing or 'href="/advice"' in landing

    # collectors run once a minute here, so the JSON and the page normally come from one generation of the
    # report; should a run land in between, fetch both again
    for _ in range(5):
        browser.get(exporter.base + "/advice")
        text = browser.execute_script("return document.body.innerText")
        if int(re.search(r"report generation (\d+)", text)[1]) == report["generation"]:
            break
        report = json.loads(exporter.get("/api/v1/advice")[2])
    _check_page(browser, report)
    # nothing runs off the side of a 1200-pixel window (long metric names and commands wrap)
    if _fits_and_screenshot(browser, tmp_path / "advice.png", SCREENSHOT):
        # and the first screen, readable at the size a document shows it
        browser.set_window_size(1200, 1300)
        browser.execute_script("window.scrollTo(0, 0)")
        assert browser.save_screenshot(str(SCREENSHOT.with_name("advice-first-screen.png")))
