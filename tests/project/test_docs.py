"""The docs' promises: generated references are current, every metric is documented, links resolve, and the
README's two commands are the ones CI runs."""

from __future__ import annotations

import re

import pytest

from tools import docs

from ..support import REPO

README = REPO / "README.md"


def _target_id(value) -> str:
    return str(value.relative_to(REPO)) if hasattr(value, "relative_to") else ""


@pytest.mark.parametrize("path,sections", docs.targets(), ids=_target_id)
def test_generated_sections_are_current(path, sections):
    stale = f"{path.relative_to(REPO)} is stale: run `python -m tools.docs`"
    assert docs.render(path, sections) == path.read_text(), stale


def test_replace_sections_rejects_a_file_without_markers():
    with pytest.raises(SystemExit, match="lacks the markers"):
        docs.replace_sections("no markers here", {"metrics": "x"}, "x.md")


def test_every_declared_metric_is_in_the_reference_and_in_its_system_readme():
    reference = docs.METRICS_DOC.read_text()
    names = re.findall(r"\| `(middleware_[a-z0-9_]+|ibmmq_[a-z0-9_]+)` \|", docs.metrics_reference())
    assert len(names) > 60
    for name in names:
        assert f"`{name}`" in reference
    for cls in docs.COLLECTORS:
        readme = (docs.SYSTEMS / cls.name / "README.md").read_text()
        for spec in docs.reference_specs(cls):
            assert f"`{spec.name}`" in readme, (cls.name, spec.name)


def test_readme_starts_with_install_and_test_commands_and_ci_runs_the_test_command():
    readme = README.read_text()
    blocks = re.findall(r"```sh\n(.*?)\n```", readme, flags=re.S)
    install, test = blocks[0], blocks[1]
    assert "pip install" in install and install.rstrip().endswith("middleware-exporter")
    assert test.strip() == "./scripts/test"
    ci = (REPO / ".ci" / "run").read_text()
    assert "exec ./scripts/test\n" in ci
    first_lines = readme.split("---")[0]
    assert install in first_lines and test in first_lines


def _markdown_files():
    return [p for p in [README, REPO / "CONTRIBUTING.md", *sorted((REPO / "docs").rglob("*.md")),
                        *sorted((REPO / "exporter" / "systems").glob("*/README.md")),
                        REPO / "alerts" / "README.md", REPO / "dashboards" / "README.md"] if p.is_file()]


@pytest.mark.parametrize("path", _markdown_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_resolve(path):
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", path.read_text()):
        if re.match(r"^[a-z]+:", target):
            continue
        assert (path.parent / target).exists(), f"{path.relative_to(REPO)} links to missing {target}"


def test_readme_is_short_and_links_the_reference_pages():
    readme = README.read_text()
    assert len(readme.splitlines()) < 150
    for page in ("docs/metrics.md", "docs/configuration.md", "docs/sources.md", "CONTRIBUTING.md"):
        assert f"({page})" in readme
    assert "to come" not in readme
