"""mixtool (github.com/monitoring-mixins/mixtool) for `mixtool lint mixin/mixin.libsonnet`.

mixtool has no release tags, and the Go module proxy refuses the module ("403 Forbidden: This module version is not
available"), so `go install ...@version` cannot fetch it: the source is cloned from GitHub at a fixed commit and
built with the module proxy serving its dependencies. Cached in ~/.cache/middleware-exporter/bin like promtool 3.x
(tests/chart_tools.py); locally a missing binary skips, under CI it is built,
or skipped with the reason when GitHub cannot be reached."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from .chart_tools import BIN, _go, cached, go_build

COMMIT = "496ea9a28ba9134279ae54b2b3379d68da40a364"  # main of 2026-06-29
REPOSITORY = "https://github.com/monitoring-mixins/mixtool"
BINARY = BIN / f"mixtool-{COMMIT[:12]}"


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
                # networks, this project's CI) mixtool lint cannot run; promtool check rules still covers the render.
                pytest.skip(f"mixtool cannot be fetched (git {command[0]} failed, the Go module proxy answers 403): "
                            f"{result.stderr.strip()[-300:]}")
    return go_build(source, "./cmd/mixtool", BINARY, static=False)


def mixtool() -> str:
    """The cached mixtool; built under CI when missing, skipped locally (or set MWE_MIXTOOL)."""
    return str(cached(BINARY, "MWE_MIXTOOL", build))
