"""The alert and recording rules: promtool check and unit tests, the style rules of alerts/README.md, every
alert/advice row of the guide-thresholds file covered by a rule, and every alert covered by boundary tests."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from ..promtool3 import promtool3
from ..support import REPO, require_binary

ALERTS = REPO / "alerts"
RULE_TESTS = REPO / "tests" / "rules"
RUNBOOKS = REPO / "docs" / "runbooks"
# The documents as docs/sources.md lists them; a guide-backed rule cites one of them by title.
DOCUMENT_TITLES = [title for title in re.findall(r"^## (.+?)\s*$", (REPO / "docs" / "sources.md").read_text(), re.M)
                   if title not in ("How the project cites them", "Reading notes")]
THRESHOLDS_DOC = REPO.parent / "shared" / "guide-thresholds.md"
SYSTEMS = {"hpom": "Hpom", "oracle": "Oracle", "ibmmq": "Mq", "host": "Host", "vhi": "Vhi", "domino": "Domino",
           "exporter": "Exporter", "process": "Process", "certificates": "Certificate",
           "filesystem": "(?:Filesystem|Nfs)"}
RUNBOOK_BASE = "https://github.com/middleware-exporter/middleware-exporter/blob/main/docs/runbooks/"
# Rows whose last column asks for an alert or advice but that no rule can serve yet, and why.
NOT_COVERED = {
}


def rule_files() -> list[Path]:
    return sorted(p for p in ALERTS.glob("*.yml") if p.name != "alertmanager.yml")


def alerts() -> list[tuple[str, dict]]:
    found = []
    for path in rule_files():
        for group in yaml.safe_load(path.read_text())["groups"]:
            for rule in group["rules"]:
                if "alert" in rule:
                    found.append((path.stem, rule))
    return found


def guide_rows(required: bool = True) -> dict[str, str] | None:
    """Row id -> the row's last column, from ../shared/guide-thresholds.md.  Where that file is absent (a
    user's clone) the tests that need it skip, and the style test leaves out only the row-id check."""
    if not THRESHOLDS_DOC.exists():
        if required:
            pytest.skip("../shared/guide-thresholds.md is not here (a user's clone)")
        return None
    rows = {}
    for line in THRESHOLDS_DOC.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 5 and re.fullmatch(r"[A-Z]+-[A-Z0-9-]+", cells[0]):
            rows[cells[0]] = cells[-1]
    return rows


def promtool_of(major: str) -> str:
    """Debian's promtool (Prometheus 2.42) or a Prometheus 3.x promtool (tests/promtool3.py)."""
    return require_binary("promtool") if major == "2" else promtool3()


MAJORS = pytest.mark.parametrize("major", ["2", "3"], ids=["prometheus-2.42", "prometheus-3.x"])


@pytest.mark.integration  # runs promtool over every rule file
@MAJORS
def test_promtool_check_rules(major):
    promtool = promtool_of(major)
    variants = sorted((ALERTS / "variants").rglob("*.yml"))
    # --lint-fatal: a lint finding ("duplicate rule(s)": one name recorded twice in a group) fails too; without it
    # promtool prints "lint error" and still exits 0
    result = subprocess.run([promtool, "check", "rules", "--lint-fatal", *map(str, rule_files() + variants)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "lint error" not in result.stdout + result.stderr, result.stdout + result.stderr


@pytest.mark.integration  # runs promtool over every rule file
@MAJORS
def test_promtool_unit_tests(major):
    promtool = promtool_of(major)
    # rglob: the tests of the rendered variants (tests/rules/variants/..., see tools/mixin.py) run too
    tests = sorted(str(p.relative_to(RULE_TESTS)) for p in RULE_TESTS.rglob("*.test.yml"))
    assert tests, "no rule unit tests"
    result = subprocess.run([promtool, "test", "rules", *tests], cwd=RULE_TESTS, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_system_has_its_file_and_groups():
    for system in SYSTEMS:
        path = ALERTS / f"{system}.yml"
        assert path.exists(), path
        groups = [g["name"] for g in yaml.safe_load(path.read_text())["groups"]]
        recording = [f"middleware-{system}-recording"] if f"middleware-{system}-recording" in groups else []
        assert groups == [f"middleware-{system}-thresholds", *recording, f"middleware-{system}"], (path.name, groups)


@pytest.mark.parametrize("system,rule", alerts(), ids=[r["alert"] for _, r in alerts()])
def test_alert_style(system, rule):
    name = rule["alert"]
    assert re.fullmatch(rf"Middleware{SYSTEMS[system]}[A-Z][A-Za-z0-9]+", name), name
    labels, notes = rule.get("labels", {}), rule.get("annotations", {})
    assert labels.get("severity") in ("critical", "warning", "info"), name
    assert labels.get("system") == system, name
    row = labels.get("guide_row")
    rows = guide_rows(required=False)
    assert row == "none" or (row and (rows is None or row in rows)), f"{name}: guide_row {row!r}"
    assert notes.get("summary") and "{{" not in notes["summary"], f"{name}: static summary"
    assert "{{" in notes.get("description", ""), f"{name}: templated description with the live value"
    assert notes.get("runbook_url") == f"{RUNBOOK_BASE}{system}.md#{name.lower()}", name
    runbook = (RUNBOOKS / f"{system}.md").read_text()
    assert re.search(rf"^## {name}\s*$", runbook, re.M), f"{name}: no section in docs/runbooks/{system}.md"
    assert notes.get("source"), f"{name}: source annotation"
    if row != "none":
        assert row in notes["source"], f"{name}: cite the document and the row"
        assert not re.search(r"\b00[0-9]_[0-9a-f]{16}\b|\.\./shared", notes["source"]), f"{name}: cite by title"
        assert any(title in notes["source"] for title in DOCUMENT_TITLES), f"{name}: a title of docs/sources.md"
    assert "for" in rule, f"{name}: for: duration"
    if labels["severity"] == "info":
        assert rule["for"].endswith("h"), f"{name}: advice waits an hour or more"


def test_thresholds_are_recording_rules_with_their_row():
    for path in rule_files():
        for group in yaml.safe_load(path.read_text())["groups"]:
            if not group["name"].endswith("-thresholds"):
                continue
            for rule in group["rules"]:
                assert rule["record"].startswith("middleware:threshold:"), rule
                assert re.fullmatch(r"vector\(-?[0-9.e+]+\)", rule["expr"].strip()), rule
                assert rule.get("labels", {}).get("guide_row"), rule


def test_every_alert_and_advice_row_has_a_rule():
    covered = {rule["labels"]["guide_row"] for _, rule in alerts()}
    wanted = {row for row, last in guide_rows().items() if re.search(r"\b(alert|advice)\b", last, re.I)}
    assert wanted, "could not read the rows"
    missing = wanted - covered - set(NOT_COVERED)
    assert not missing, f"rows without a rule: {sorted(missing)}"
    assert not (set(NOT_COVERED) & covered), "a row listed as not covered now has a rule: update NOT_COVERED"


def _cases() -> dict[str, dict[str, int]]:
    """alertname -> how many firing and silent expectations the unit tests have."""
    counts: dict[str, dict[str, int]] = {}
    for path in RULE_TESTS.glob("*.test.yml"):
        for test in yaml.safe_load(path.read_text()).get("tests", []):
            for case in test.get("alert_rule_test", []) or []:
                kind = "firing" if case.get("exp_alerts") else "silent"
                counts.setdefault(case["alertname"], {"firing": 0, "silent": 0})[kind] += 1
    return counts


def test_every_alert_has_boundary_tests():
    counts = _cases()
    for _, rule in alerts():
        name = rule["alert"]
        got = counts.get(name, {"firing": 0, "silent": 0})
        assert got["firing"] >= 1, f"{name}: no test where it fires"
        assert got["silent"] >= 2, f"{name}: needs silent cases just under the threshold and before for: passes"


def test_the_guide_rows_are_read():
    rows = guide_rows()
    assert {"HPOM-ACK", "HPOM-CMA", "MQ-CPU", "VHI-SESS", "DOM-DISK"} <= set(rows)
    assert "alert" in rows["HPOM-ACK"]


def test_every_page_starts_its_runbook_with_what_to_do_right_now():
    """critical pages someone at 3 a.m.: its runbook section opens with the first thing to do."""
    for system, rule in alerts():
        if rule["labels"]["severity"] != "critical":
            continue
        runbook = (RUNBOOKS / f"{system}.md").read_text()
        section = re.search(rf"^## {rule['alert']}\s*\n(.*?)(?=^## |\Z)", runbook, re.M | re.S)
        assert section and section.group(1).lstrip().startswith("**Right now.**"), rule["alert"]


def _recording_rules() -> list[dict]:
    found = []
    for path in rule_files():
        for group in yaml.safe_load(path.read_text())["groups"]:
            if group["name"].endswith("-thresholds"):
                continue
            found.extend(rule for rule in group["rules"] if "record" in rule)
    return found


def _tested_expressions() -> list[str]:
    exprs = []
    for path in RULE_TESTS.glob("*.test.yml"):
        for test in yaml.safe_load(path.read_text()).get("tests", []):
            exprs.extend(case["expr"] for case in test.get("promql_expr_test", []) or [])
    return exprs


def test_every_guide_row_has_a_tested_rule():
    """Each row of the documents (alert, advice, dashboard or forecast) is served by an alert or a recording rule
    carrying its guide_row, and that rule is tested: alerts by boundary cases (test_every_alert_has_boundary_tests),
    recording rules by a promql_expr_test that evaluates them."""
    rows = set(guide_rows())
    alerted = {rule["labels"]["guide_row"] for _, rule in alerts()}
    recorded = {rule.get("labels", {}).get("guide_row") for rule in _recording_rules()}
    missing = rows - alerted - recorded - set(NOT_COVERED)
    assert not missing, f"rows without a rule: {sorted(missing)}"
    tested = _tested_expressions()
    for rule in _recording_rules():
        if rule.get("labels", {}).get("guide_row", "none") == "none":
            continue
        name = rule["record"]
        assert any(re.search(rf"(?<![\w:]){re.escape(name)}(?![\w:])", expr) for expr in tested), \
            f"{name}: no promql_expr_test evaluates it"
