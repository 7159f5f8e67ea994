"""What this exporter is: its version, the source revision when known, and the Python running it.

Reported by ``--version`` and by the ``middleware_exporter_build_info`` series, with the names and labels
Prometheus exporters use for theirs (``node_exporter_build_info{version, revision, goversion, ...}``: here
``pythonversion``). The revision is the commit of the git checkout the package runs from (an editable install, a
source tree); an installed wheel carries none and says ``unknown`` (the container image's
``org.opencontainers.image.revision`` label has it).
"""

from __future__ import annotations

import platform
import re
from functools import lru_cache
from pathlib import Path

from .. import __version__

VERSION = __version__
UNKNOWN = "unknown"
_SHA = re.compile(r"[0-9a-f]{40}")


def _git_dir(top: Path) -> Path | None:
    """The git directory of a checkout at ``top`` (``.git`` a directory, or a worktree's ``gitdir:`` file)."""
    dot = top / ".git"
    if dot.is_dir():
        return dot
    if dot.is_file():
        match = re.match(r"gitdir:\s*(.+)", dot.read_text(encoding="utf-8", errors="replace").strip())
        if match:
            path = Path(match[1])
            return path if path.is_absolute() else top / path
    return None


def _commit(git: Path) -> str | None:
    """HEAD's commit, read from the files (no git process at start-up): a detached HEAD, a loose ref, packed-refs.
    A worktree's HEAD is in its own directory, its refs in the main one (``commondir``)."""
    head = (git / "HEAD").read_text(encoding="utf-8", errors="replace").strip()
    if _SHA.fullmatch(head):
        return head
    if not head.startswith("ref: "):
        return None
    ref = head[5:].strip()
    common = git / (git / "commondir").read_text().strip() if (git / "commondir").is_file() else git
    for base in dict.fromkeys((git, common)):
        loose = base / ref
        if loose.is_file():
            value = loose.read_text(encoding="utf-8", errors="replace").strip()
            return value if _SHA.fullmatch(value) else None
    packed = common / "packed-refs"
    if packed.is_file():
        for line in packed.read_text(encoding="utf-8", errors="replace").splitlines():
            sha, _, name = line.partition(" ")
            if name == ref and _SHA.fullmatch(sha):
                return sha
    return None


@lru_cache(maxsize=1)
def revision() -> str:
    """The commit this code was run from, or ``unknown``."""
    try:
        git = _git_dir(Path(__file__).resolve().parents[2])
        return (_commit(git) if git else None) or UNKNOWN
    except (OSError, ValueError):
        return UNKNOWN


def labels() -> dict[str, str]:
    """The labels of middleware_exporter_build_info."""
    return {"version": VERSION, "revision": revision(), "pythonversion": platform.python_version()}


def version_text(prog: str = "middleware-exporter") -> str:
    """``--version``: the layout of the Prometheus exporters' (prometheus/common's version.Print)."""
    return (f"{prog}, version {VERSION} (revision: {revision()})\n"
            f"  python version:   {platform.python_version()} ({platform.python_implementation()})\n"
            f"  platform:         {platform.system().lower()}/{platform.machine()}")
