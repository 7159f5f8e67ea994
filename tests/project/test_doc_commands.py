"""Every shell command block of the docs works as written, after the README's install.

Each fenced ``sh`` block of every Markdown file runs here, unless the line right above it says why it cannot:

    <!-- doc-test: skip: REASON -->          not run here: a real MQ, root on a server, the network, ... (REASON
                                             says what it needs and which test covers it instead)
    <!-- doc-test: OPTION=VALUE ... -->      run, with options: extra=test (the block needs pyproject's `test`
                                             extra, and the text just before it must say so: `.[test]`),
                                             exit=0,1 (the statuses each command may end with; default 0),
                                             timeout=SECONDS (per command; default 120), stdin=TEXT (fed to each
                                             command), expect=TEXT (must appear in the block's output)

A block runs in a copy of the working tree (so that generators write into the copy), each command (a line,
with its continuation lines) on its own in bash with ``pipefail`` and a timeout, with the repository's ``.venv``
and no ``.venv/bin`` on PATH, as after ``python3 -m venv .venv && .venv/bin/pip install .``; ``python3`` and
``python`` on PATH have their standard library only (a system Python without the exporter's dependencies). Whatever that
install does not bring is hidden from the block's Python: a ``sitecustomize`` refuses to import the top-level
modules of every installed distribution outside middleware-exporter's dependencies (plus pip and setuptools,
which the venv has), unless the block says ``extra=test``. No command may print a Python traceback.

The markers are HTML comments, so a reader does not see them; tests/deploy/test_first_hour.py holds the checks of what
the docs say beyond their commands.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from ..support import REPO

COMMAND_LANGUAGES = ("sh", "bash", "shell", "console")
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.M | re.S)
MARKER = re.compile(r"<!--\s*doc-test:\s*(.*?)\s*-->\s*\Z", re.S)
OPTIONS = {"extra", "exit", "timeout", "stdin", "expect"}
DEFAULT_TIMEOUT = 120.0
# not documentation of this project: tools' caches, the venv, build output
SKIP_DIRS = {".venv", ".git", "build", "dist", "node_modules", "__pycache__", ".pytest_cache", ".hypothesis"}


@dataclass
class Block:
    path: Path
    line: int
    language: str
    body: str
    marker: str | None  # the text after "doc-test:", or None
    before: str  # the document's text before the block (for the extra check)
    options: dict[str, str] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}"

    @property
    def skip_reason(self) -> str | None:
        if self.marker is not None and self.marker.startswith("skip"):
            return self.marker.partition(":")[2].strip()
        return None

    def commands(self) -> list[str]:
        """One entry per command: continuation lines joined, blank lines and whole-line comments left out."""
        commands: list[str] = []
        pending = ""
        for raw in self.body.splitlines():
            if not pending and (not raw.strip() or raw.lstrip().startswith("#")):
                continue
            pending += raw + "\n"
            if not raw.rstrip().endswith("\\"):
                commands.append(pending)
                pending = ""
        if pending:
            commands.append(pending)
        return commands


def markdown_files() -> list[Path]:
    return sorted(p for p in REPO.rglob("*.md")
                  if not SKIP_DIRS & set(p.relative_to(REPO).parts[:-1])
                  and not any(part.endswith(".egg-info") for part in p.parts))


def blocks_of(path: Path) -> list[Block]:
    text = path.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        before = text[:match.start()]
        previous_line = before.rstrip("\n").rpartition("\n")[2]
        marker = MARKER.search(previous_line)
        block = Block(path, before.count("\n") + 1, match[1].strip(), match[2],
                      marker[1].strip() if marker else None, before)
        if block.marker is not None and block.skip_reason is None:
            block.options = dict(word.partition("=")[::2] for word in shlex.split(block.marker))
        found.append(block)
    return found


@lru_cache(maxsize=1)
def all_blocks() -> list[Block]:
    return [block for path in markdown_files() for block in blocks_of(path)]


def command_blocks() -> list[Block]:
    return [b for b in all_blocks() if b.language in COMMAND_LANGUAGES]


def runnable_blocks() -> list[Block]:
    return [b for b in command_blocks() if b.skip_reason is None]


# ---- the docs' markers (fast) -------------------------------------------------------------------------------------
def test_the_docs_have_command_blocks_to_run():
    assert len(command_blocks()) > 40
    assert len(runnable_blocks()) >= 8, [b.id for b in runnable_blocks()]


def test_every_fenced_block_names_its_language():
    """An unlabelled fence could hold commands this test never sees."""
    unlabelled = [b.id for b in all_blocks() if not b.language]
    assert not unlabelled, f"label these fences (```sh, ```text, ...): {unlabelled}"


def test_every_marker_is_well_formed_and_says_why():
    problems = []
    for block in all_blocks():
        if block.marker is None:
            continue
        if block.language not in COMMAND_LANGUAGES:
            problems.append(f"{block.id}: a doc-test marker on a {block.language or 'plain'} block")
        elif block.skip_reason is not None:
            if len(block.skip_reason) < 20:
                problems.append(f"{block.id}: say why the block cannot run here, and what covers it")
        else:
            unknown = set(block.options) - OPTIONS
            if unknown:
                problems.append(f"{block.id}: unknown options {sorted(unknown)}")
            if block.options.get("extra") and f".[{block.options['extra']}]" not in block.before[-800:]:
                problems.append(f"{block.id}: needs the {block.options['extra']} extra, and the text before it "
                                f"must say how to install it (.[{block.options['extra']}])")
    for path in markdown_files():  # a marker not right above a fence marks nothing
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(r"<!--\s*doc-test:.*?-->\n(.*)", text):
            if not match[1].startswith("```"):
                problems.append(f"{path.relative_to(REPO)}:{text[:match.start()].count(chr(10)) + 1}: "
                                "a doc-test marker must be the line right above a fence")
    assert not problems, "\n".join(problems)


def test_a_skip_that_names_a_test_names_one_that_exists():
    for block in command_blocks():
        for name in re.findall(r"tests/(test_\w+\.py)", block.skip_reason or ""):
            assert (REPO / "tests" / name).is_file(), f"{block.id}: {name} does not exist"


# ---- the install the README describes ------------------------------------------------------------------------------
def _closure(name: str, extras: frozenset[str] = frozenset()) -> set[str]:
    """The installed distributions ``name[extras]`` needs (canonical names), itself included."""
    seen: set[str] = set()
    todo = [(name, extras)]
    while todo:
        dist_name, dist_extras = todo.pop()
        key = canonicalize_name(dist_name)
        if key in seen:
            continue
        try:
            requires = metadata.distribution(dist_name).requires or []
        except metadata.PackageNotFoundError:
            continue  # a marker for another platform or Python: not installed, nothing to hide either
        seen.add(key)
        for text in requires:
            req = Requirement(text)
            if req.marker and not any(req.marker.evaluate({"extra": e}) for e in (dist_extras or {""})):
                continue
            todo.append((req.name, frozenset(req.extras)))
    return seen


def hidden_modules(extras: frozenset[str]) -> list[str]:
    """Top-level modules that ``pip install .`` (with ``extras``) would not have installed."""
    allowed = _closure("middleware-exporter", extras) | {"pip", "setuptools"}
    providers: dict[str, set[str]] = {}
    for module, dists in metadata.packages_distributions().items():
        providers.setdefault(module, set()).update(canonicalize_name(d) for d in dists)
    return sorted(m for m, dists in providers.items() if not dists & allowed and m.isidentifier())


SITECUSTOMIZE = '''\
"""doc-test: what `pip install .` does not install is not importable (tests/project/test_doc_commands.py)."""
import json, os, sys

class _NotInstalled:
    hidden = frozenset(json.loads(os.environ.get("DOC_TEST_HIDDEN", "[]")))

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        top = name.partition(".")[0]
        if top in cls.hidden:
            raise ModuleNotFoundError(f"No module named {top!r} (not installed by the documented install)",
                                      name=top)
        return None

sys.meta_path.insert(0, _NotInstalled)
'''


@pytest.fixture(scope="module")
def workdir():
    """A copy of the working tree with the repository's venv, a hiding sitecustomize and a TMPDIR of its own."""
    with tempfile.TemporaryDirectory(prefix="doc-commands-") as tmp:
        root = Path(tmp)
        tree = root / "tree"
        shutil.copytree(REPO, tree, symlinks=True,
                        ignore=lambda d, names: [n for n in names if n in SKIP_DIRS or n.endswith(".egg-info")])
        venv = REPO / ".venv" if (REPO / ".venv" / "bin" / "python").exists() else Path(sys.prefix)
        (tree / ".venv").symlink_to(venv)
        (root / "site").mkdir()
        (root / "site" / "sitecustomize.py").write_text(SITECUSTOMIZE)
        (root / "tmp").mkdir()
        # `python3` / `python` on PATH: an interpreter with its standard library only, as on a host whose
        # system Python has none of the exporter's dependencies (the docs must say .venv/bin/python)
        (root / "bin").mkdir()
        base = Path(sys.base_prefix) / "bin" / "python3"
        for name in ("python", "python3"):
            shim = root / "bin" / name
            shim.write_text(f'#!/bin/sh\nexec "{base}" -S "$@"\n')
            shim.chmod(0o755)
        yield root


def _environment(root: Path, block: Block) -> dict[str, str]:
    venv_bin = str(Path(sys.prefix) / "bin")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("MIDDLEWARE_EXPORTER_", "MWE_", "PYTEST_", "VIRTUAL_ENV", "PYTHON"))}
    env["PATH"] = os.pathsep.join([str(root / "bin")] + [
        p for p in env.get("PATH", "/usr/bin:/bin").split(os.pathsep)
        if p and Path(p).resolve() != Path(venv_bin).resolve() and not p.endswith("/.venv/bin")])
    extras = frozenset(filter(None, block.options.get("extra", "").split(",")))
    env["PYTHONPATH"] = str(root / "site")
    env["DOC_TEST_HIDDEN"] = json.dumps(hidden_modules(extras))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["TMPDIR"] = str(root / "tmp")
    return env


def _stop_group(proc: subprocess.Popen) -> None:
    """A command past its timeout: SIGTERM to its process group (the demo stops what it started), then SIGKILL."""
    for sig, grace in ((signal.SIGTERM, 15), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(grace)
            return
        except subprocess.TimeoutExpired:
            continue


def run_block(block: Block, root: Path) -> list[str]:
    """Run the block's commands as the docs' reader would; what went wrong (empty: nothing)."""
    env = _environment(root, block)
    statuses = {int(s) for s in block.options.get("exit", "0").split(",")}
    timeout = float(block.options.get("timeout", DEFAULT_TIMEOUT))
    stdin = block.options.get("stdin")
    output = []
    for command in block.commands():
        shown = command.strip()
        proc = subprocess.Popen(["bash", "-o", "pipefail", "-c", command], cwd=root / "tree", env=env,
                                stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            stdout, stderr = proc.communicate(None if stdin is None else stdin + "\n", timeout=timeout)
        except subprocess.TimeoutExpired:
            _stop_group(proc)
            try:
                stdout, stderr = proc.communicate(timeout=10)
            except subprocess.TimeoutExpired:  # a process outside the group still holds the pipes
                stdout, stderr = "", ""
            return [f"{block.id}: `{shown}` still running after {timeout:g} s\n{(stdout + stderr)[-4000:]}"]
        said = stdout + stderr
        output.append(said)
        if proc.returncode not in statuses:
            return [f"{block.id}: `{shown}` exited {proc.returncode} (allowed {sorted(statuses)}):\n{said[-4000:]}"]
        if "Traceback (most recent call last)" in said:
            return [f"{block.id}: `{shown}` printed a traceback:\n{said[-4000:]}"]
    if "expect" in block.options and block.options["expect"] not in "".join(output):
        return [f"{block.id}: no {block.options['expect']!r} in:\n" + "".join(output)[-4000:]]
    return []


@pytest.mark.integration
@pytest.mark.parametrize("block", runnable_blocks(), ids=lambda b: b.id)
def test_doc_command_block_runs(block: Block, workdir: Path):
    problems = run_block(block, workdir)
    assert not problems, "\n".join(problems)


def test_hidden_modules_are_what_the_install_leaves_out():
    """The stand-in for `pip install .` hides the test tools and keeps the dependencies."""
    base = hidden_modules(frozenset())
    assert {"pytest", "sqlglot", "_gojsonnet"} <= set(base)
    assert not {"yaml", "bcrypt", "prometheus_client", "fastapi", "oracledb", "pip"} & set(base)
    assert "sqlglot" not in hidden_modules(frozenset({"test"}))
