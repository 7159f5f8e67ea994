"""The layout promises of docs/architecture.md: `core` knows no system, systems do not reach back up, only the
places that must import the registry, and the repository stands alone (no reference to files a user lacks)."""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest

from .conftest import REPO

PACKAGE = REPO / "exporter"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> set[str]:
    """Absolute names of every module ``path`` imports (relative imports resolved, including ``from . import x``)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = _module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def modules(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.py"))


def test_imports_of_resolves_relative_imports():
    # the checker itself: a relative import two levels up must resolve, or the layout tests prove nothing
    names = imports_of(PACKAGE / "systems" / "hpom" / "collector.py")
    assert "exporter.core.metrics" in names
    assert any(name.startswith("exporter.systems.oracle") for name in names)


@pytest.mark.parametrize("path", modules(PACKAGE / "core"), ids=lambda p: p.name)
def test_core_imports_no_system(path):
    bad = {name for name in imports_of(path)
           if name.startswith(("exporter.systems", "exporter.registry", "exporter.cli", "exporter.server"))}
    assert not bad, f"{path.relative_to(REPO)} imports {sorted(bad)}: core must know no source system"


@pytest.mark.parametrize("path", modules(PACKAGE / "systems"), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_systems_do_not_reach_back_up_or_sideways(path):
    system = path.relative_to(PACKAGE / "systems").parts[0]
    allowed_other = {"hpom": ("exporter.systems.oracle.client", "exporter.systems.oracle.querymetrics")}
    for name in imports_of(path):
        assert not name.startswith(("exporter.registry", "exporter.cli", "exporter.server")), (path, name)
        if name.startswith("exporter.systems.") and not name.startswith(f"exporter.systems.{system}"):
            assert name.startswith(allowed_other.get(system, ("-",))), \
                f"{path.relative_to(REPO)} imports {name}: a system may use core, and HPOM the Oracle database layer"


def test_only_the_cli_and_tools_import_the_registry():
    importers = {str(path.relative_to(REPO)) for path in modules(PACKAGE) + modules(REPO / "tools")
                 if any(name.startswith("exporter.registry") for name in imports_of(path))}
    assert importers <= {"exporter/cli.py", "tools/docs.py"}, importers
    assert "exporter/cli.py" in importers


# Paths and names only the developers have: the source documents are cited by title (docs/sources.md).
FORBIDDEN = re.compile(r"\.\./shared|guide-thresholds\.md|performance-anchors\.md|\b00[0-9]_[0-9a-f]{16}\b")


def tracked_files() -> list[Path]:
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO, capture_output=True, text=True)
    if out.returncode != 0:
        pytest.skip("not a git checkout")
    return [REPO / line for line in out.stdout.splitlines() if line]


def test_forbidden_pattern_catches_what_it_should():
    assert FORBIDDEN.search("see ../shared/seeds") and FORBIDDEN.search("000_cb9c6d184be713ef.txt")
    assert not FORBIDDEN.search("shared plumbing lives once")


def test_nothing_outside_tests_refers_to_the_developers_files():
    offenders = []
    for path in tracked_files():
        relative = path.relative_to(REPO)
        if relative.parts[0] == "tests" or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if FORBIDDEN.search(line):
                offenders.append(f"{relative}:{number}: {line.strip()[:100]}")
    assert not offenders, "cite documents by title (docs/sources.md), not by these paths:\n" + "\n".join(offenders)


def test_every_system_folder_has_its_readme_and_collector():
    for folder in sorted(p for p in (PACKAGE / "systems").iterdir() if p.is_dir() and p.name != "__pycache__"):
        assert (folder / "collector.py").is_file(), folder
        readme = (folder / "README.md").read_text()
        assert "BEGIN GENERATED metrics" in readme and "BEGIN GENERATED config" in readme, folder
