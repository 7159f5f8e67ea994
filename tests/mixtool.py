"""mixtool (github.com/monitoring-mixins/mixtool) for `mixtool lint mixin/mixin.libsonnet`.

mixtool has no release tags, and the Go module proxy refuses the module ("403 Forbidden: This module version is not
available"), so `go install ...@version` cannot fetch it: the source is cloned from GitHub at a fixed commit and
built with the module proxy serving its dependencies. Cached in ~/.cache/middleware-exporter/bin like promtool 3.x
(tests/chart_tools.py). Since GitHub is needed, the tests that run mixtool are marked `network` (opt-in,
docs/testing.md); opted in, a missing binary is built under CI and skipped locally, and skipped with the reason
where GitHub cannot be reached. What they check runs by default without mixtool: COVERED_BY."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tools.gotools import go as _go

from .chart_tools import BIN, cached, go_build

COMMIT = "496ea9a28ba9134279ae54b2b3379d68da40a364"  # main of 2026-06-29
REPOSITORY = "https://github.com/monitoring-mixins/mixtool"
BINARY = BIN / f"mixtool-{COMMIT[:12]}"
COVERED_BY = ("lint: tests/alerting/test_mixin.py::test_alert_groups_pass_mixtools_lint_rules_offline "
              "(its alert rules), "
              "tests/alerting/test_rules.py::test_promtool_check_rules (rule syntax), "
              "tests/alerting/test_dashboards.py::test_dashboard_linter_strict_reports_nothing (dashboards); generate: "
              "tests/alerting/test_mixin.py::test_checked_in_rule_files_are_a_fresh_render and "
              "::test_checked_in_dashboards_are_a_fresh_render (the same go-jsonnet, through its Python bindings)")


def build() -> Path:
    go, git = _go(), shutil.which("git")
    if go is None or git is None:
        pytest.fail("mixtool is missing and go/git are not installed to build it; CI must provide them")
    source = BIN.parent / "src" / f"mixtool-{COMMIT[:12]}"
    if not (source / "go.mod").exists():
        source.mkdir(parents=True, exist_ok=True)
        commands = (["init", "-q"], ["fetch", "-q", "--depth", "1", REPOSITORY, COMMIT], ["checkout", "-q", COMMIT])
        for command in commands:
            result = subprocess.run([git, *command], cwd=source, capture_output=True, text=True, timeout=600)
            if result.returncode != 0:
                shutil.rmtree(source, ignore_errors=True)
                # The proxy refuses the module, so GitHub is the only source: where it cannot be reached (closed
                # networks, this project's CI) mixtool cannot run; the same checks run without it (COVERED_BY).
                pytest.skip(f"mixtool cannot be fetched (git {command[0]} failed, the Go module proxy answers 403): "
                            f"{result.stderr.strip()[-300:]}; covered by {COVERED_BY}")
    return go_build(source, "./cmd/mixtool", BINARY, static=False)


def mixtool() -> str:
    """The cached mixtool; built under CI when missing, skipped locally (or set MWE_MIXTOOL)."""
    return str(cached(BINARY, "MWE_MIXTOOL", build))
