"""The Go tools the test suite runs, built from their module source through the Go module proxy and cached in
``~/.cache/middleware-exporter/bin`` (developer tooling; not shipped).

    python -m tools.gotools            # build every tool that is not cached yet (scripts/test runs this first)
    python -m tools.gotools --list     # each tool, its version and whether it is cached

Each is built in place in its downloaded module (``go mod download`` then ``go build``), since ``go install
pkg@version`` refuses a go.mod with replace directives (Prometheus's, helm-unittest's).  Cold builds on this 2-core
machine: promtool 3 12 min 15 s, helm-unittest 4 min 1 s, dashboard-linter 4 min 3 s, kubeconform 14-84 s,
helm-docs 22-24 s; a cached tool costs nothing.  The tests find them through :func:`path` (tests/chart_tools.py):
a missing one is built under CI and skips elsewhere, so a run of scripts/test, which builds them, skips none.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "middleware-exporter"
BIN = CACHE / "bin"


@dataclass(frozen=True)
class Tool:
    module: str
    version: str
    package: str
    binary: str  # the cached file is BIN / f"{binary}-{version}"
    static: bool = True  # CGO_ENABLED=0
    why: str = ""


TOOLS = {
    "promtool3": Tool("github.com/prometheus/prometheus", "v0.314.0", "./cmd/promtool", "promtool", static=False,
                      why="Prometheus 3.14's promtool: rule tests and scenarios on both majors (tests/promtool3.py)"),
    "helm": Tool("helm.sh/helm/v3", "v3.16.4", "./cmd/helm", "helm", why="renders and lints the chart"),
    "kubeconform": Tool("github.com/yannh/kubeconform", "v0.7.0", "./cmd/kubeconform", "kubeconform",
                        why="strict validation of the rendered manifests"),
    "helm-docs": Tool("github.com/norwoodj/helm-docs", "v1.14.2", "./cmd/helm-docs", "helm-docs",
                      why="the chart README"),
    "helm-unittest": Tool("github.com/helm-unittest/helm-unittest", "v1.1.2", "./cmd/helm-unittest", "helm-unittest",
                          why="template unit tests"),
    # main of 2024-12-16: the newest version the module proxy serves whole. It refuses the tags v0.1.0 and v0.1.1
    # (403), and v0.2.0 (2026-06-18) needs a grafana/apps/dashboard pseudo-version it refuses; v0.2.0 only adds the
    # v2 dashboard schema (these dashboards are v1) - its rules are the same as this commit's.
    "dashboard-linter": Tool("github.com/grafana/dashboard-linter", "v0.0.0-20241216132922-9479ff4bfa35", ".",
                             "dashboard-linter", why="`lint --strict` on dashboards/"),
}


class BuildError(RuntimeError):
    """A tool could not be fetched or built; the message says which and why."""


def go() -> str | None:
    return shutil.which("go") or ("/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else None)


def path(name: str) -> Path:
    tool = TOOLS[name]
    return BIN / f"{tool.binary}-{tool.version}"


def module_dir(module: str, version: str) -> Path:
    """The module's source, downloaded through the module proxy (cached by Go)."""
    toolchain = go()
    if toolchain is None:
        raise BuildError(f"{module} is needed and go is not installed to fetch it")
    env = {**os.environ, "GOWORK": "off", "GOFLAGS": "-mod=mod"}
    info = subprocess.run([toolchain, "mod", "download", "-json", f"{module}@{version}"], capture_output=True,
                          text=True, timeout=1800, env=env)
    if info.returncode != 0:
        raise BuildError(f"go mod download {module}@{version} failed:\n{info.stderr[-3000:]}")
    return Path(json.loads(info.stdout)["Dir"])


def go_build(source: Path, package: str, binary: Path, *, static: bool = True) -> Path:
    """``go build`` of ``package`` in the module checked out at ``source`` into ``binary``."""
    toolchain = go()
    if toolchain is None:
        raise BuildError(f"{binary.name} is needed and go is not installed to build it")
    BIN.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "GOWORK": "off", "GOFLAGS": "-mod=mod", **({"CGO_ENABLED": "0"} if static else {})}
    partial = binary.with_name(binary.name + ".partial")  # a build cut short never looks cached
    result = subprocess.run([toolchain, "build", "-o", str(partial), package], cwd=source, capture_output=True,
                            text=True, timeout=3600, env=env)
    if result.returncode != 0 or not partial.exists():
        raise BuildError(f"building {binary.name} failed:\n{result.stderr[-3000:]}")
    partial.rename(binary)
    return binary


def build(name: str) -> Path:
    """The cached tool, built first when missing."""
    target = path(name)
    if target.exists():
        return target
    tool = TOOLS[name]
    return go_build(module_dir(tool.module, tool.version), tool.package, target, static=tool.static)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--list", action="store_true", help="list the tools and whether each is cached")
    parser.add_argument("names", nargs="*", choices=[[], *TOOLS], metavar="NAME",
                        help=f"only these ({', '.join(TOOLS)}); default: all")
    args = parser.parse_args(argv)
    names = args.names or list(TOOLS)
    if args.list:
        for name in names:
            print(f"{name:17} {TOOLS[name].version:40} {'cached' if path(name).exists() else 'missing'}")
        return 0
    failed = 0
    for name in names:
        if path(name).exists():
            continue
        print(f"building {name} {TOOLS[name].version} into {BIN} ({TOOLS[name].why}) ...", file=sys.stderr,
              flush=True)
        try:
            build(name)
        except BuildError as exc:
            failed += 1
            print(f"could not build {name}: {str(exc).splitlines()[0]}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
