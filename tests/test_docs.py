"""The README's promises: generated references are current, and its two commands are the ones CI runs."""

from __future__ import annotations

import re

from exporter import docs

from .conftest import REPO


def test_generated_sections_are_current():
    current = docs.README.read_text()
    assert docs.render_readme(current) == current, "README.md is stale: run `python -m exporter.docs`"


def test_every_declared_metric_is_in_the_readme():
    readme = docs.README.read_text()
    reference = docs.metrics_reference()
    names = re.findall(r"\| `(middleware_[a-z0-9_]+)` \|", reference)
    assert len(names) > 60
    for name in names:
        assert f"`{name}`" in readme


def test_readme_starts_with_install_and_test_commands_and_ci_runs_the_test_command():
    readme = docs.README.read_text()
    blocks = re.findall(r"```sh\n(.*?)\n```", readme, flags=re.S)
    install, test = blocks[0], blocks[1]
    assert "pip install" in install and install.rstrip().endswith("middleware-exporter")
    assert test.strip() == "./scripts/test"
    ci = (REPO / ".ci" / "run").read_text()
    assert "exec ./scripts/test\n" in ci
    first_lines = readme.split("---")[0]
    assert install in first_lines and test in first_lines


def test_alert_thresholds_table_is_current():
    current = docs.ALERTS_README.read_text()
    assert docs.render_alerts_readme(current) == current, "alerts/README.md is stale: run `python -m exporter.docs`"
