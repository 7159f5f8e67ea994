"""The layout promises of docs/architecture.md: `core` knows no system, systems do not reach back up, only the
places that must import the registry, and the repository stands alone (no reference to files a user lacks)."""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest

from ..support import REPO

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
           if name.startswith(("exporter.systems", "exporter.registry", "exporter.cli", "exporter.web.server"))}
    assert not bad, f"{path.relative_to(REPO)} imports {sorted(bad)}: core must know no source system"


@pytest.mark.parametrize("path", modules(PACKAGE / "systems"), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_systems_do_not_reach_back_up_or_sideways(path):
    system = path.relative_to(PACKAGE / "systems").parts[0]
    allowed_other = {"hpom": ("exporter.systems.oracle.client", "exporter.systems.oracle.querymetrics")}
    for name in imports_of(path):
        assert not name.startswith(("exporter.registry", "exporter.cli", "exporter.web.server")), (path, name)
        if name.startswith("exporter.systems.") and not name.startswith(f"exporter.systems.{system}"):
            assert name.startswith(allowed_other.get(system, ("-",))), \
                f"{path.relative_to(REPO)} imports {name}: a system may use core, and HPOM the Oracle database layer"


# The layers, lowest first: a module may import its own layer and those below, never one above.  `machine` reads
# the operating system and runs commands; `core` is the collection framework; `systems` are the source systems;
# `advisor` judges their snapshot; `web` serves it all; `registry` and `cli` tie everything together.
LAYERS = ("machine", "core", "systems", "advisor", "web", "registry", "cli")
# Libraries of the layers above: core must not load them when it is imported (a web server, psutil's C module).
ABOVE_CORE_LIBRARIES = ("fastapi", "starlette", "uvicorn", "h11", "jinja2", "psutil", "bcrypt", "cryptography")


def _layer(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "exporter" or len(parts) < 2:
        return None
    return LAYERS.index(parts[1]) if parts[1] in LAYERS else None


def _module_level_imports(path: Path) -> set[str]:
    """The names ``path`` imports when it is imported: top-level statements only (an import inside a function runs
    when called, and one under ``if TYPE_CHECKING`` never)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level:
            found.add(node.module or "")
    return found


@pytest.mark.parametrize("path", modules(PACKAGE), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_imports_a_layer_above_its_own(path):
    own = _layer(_module_name(path))
    if own is None:
        return  # exporter/__init__.py and __main__.py
    above = sorted(name for name in imports_of(path) if (layer := _layer(name)) is not None and layer > own)
    assert not above, f"{path.relative_to(REPO)} ({LAYERS[own]}) imports {above}: layers {' < '.join(LAYERS)}"


@pytest.mark.parametrize("path", modules(PACKAGE / "core") + modules(PACKAGE / "machine"),
                         ids=lambda p: str(p.relative_to(PACKAGE)))
def test_core_and_machine_load_no_web_or_platform_library_at_import(path):
    loaded = {name for name in _module_level_imports(path) if name.split(".")[0] in ABOVE_CORE_LIBRARIES}
    if path.parent.name == "machine" and path.name == "psutil_procs.py":
        loaded.discard("psutil")  # the psutil reader itself, imported only where /proc is not Linux's
    assert not loaded, f"{path.relative_to(REPO)} imports {sorted(loaded)} at module level"


def _import_graph() -> dict[str, set[str]]:
    names = {_module_name(path): path for path in modules(PACKAGE)}
    graph: dict[str, set[str]] = {}
    for name, path in names.items():
        targets = set()
        for imported in imports_of(path):
            # "from .x import y" names both x and x.y: keep the longest that is a module of the package
            while imported and imported not in names:
                imported = imported.rpartition(".")[0]
            if imported and imported != name and not name.startswith(imported + "."):
                targets.add(imported)
        graph[name] = targets
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_among_exporter_modules():
    cycles = _cycles(_import_graph())
    assert not cycles, "import cycles (a module may not reach itself through others):\n" + "\n".join(
        " <-> ".join(cycle) for cycle in cycles)


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


def test_every_module_is_named_in_the_architecture_map_or_its_folders_readme():
    """docs/architecture.md maps the modules, one line each; a system's modules may be mapped in its README
    instead.  A module named nowhere is one a newcomer cannot place."""
    architecture = (REPO / "docs" / "architecture.md").read_text()
    unnamed = []
    for path in modules(PACKAGE):
        if path.name in ("__init__.py", "__main__.py"):
            continue
        readme = path.parent / "README.md"
        places = [architecture] + ([readme.read_text()] if readme.is_file() else [])
        if not any(re.search(rf"(?<![\w.]){re.escape(path.name)}\b", text) for text in places):
            unnamed.append(str(path.relative_to(REPO)))
    assert not unnamed, "name each module in docs/architecture.md's map (or its folder's README):\n" + "\n".join(
        unnamed)
