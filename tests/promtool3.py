"""A Prometheus 3.x promtool next to Debian's 2.42, so that the rule tests and the scenarios run on both majors
(kube-prometheus-stack ships Prometheus 3.x, whose range selectors are left-open: a window holds one sample less).

Built from the module source through the Go module proxy when missing, and cached in
~/.cache/middleware-exporter/bin.  `go install ...@version` refuses the module (its go.mod has replace directives),
so the module is downloaded and built in place.  Locally a missing binary skips; under CI it is built (a cold build
of the module and its dependencies took 12 min 15 s on this 2-core machine)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

VERSION = "v0.314.0"  # Prometheus 3.14.0 (the module tags v0.3xx.y are releases 3.xx.y)
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "middleware-exporter" / "bin"
BINARY = CACHE / f"promtool-{VERSION}"


def _go() -> str | None:
    return shutil.which("go") or ("/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else None)


def build() -> Path:
    go = _go()
    if go is None:
        pytest.fail("promtool 3.x is missing and go is not installed to build it; CI must provide one of them")
    env = {**os.environ, "GOWORK": "off", "GOFLAGS": "-mod=mod"}
    info = subprocess.run([go, "mod", "download", "-json", f"github.com/prometheus/prometheus@{VERSION}"],
                          capture_output=True, text=True, timeout=1800, env=env)
    if info.returncode != 0:
        pytest.fail(f"go mod download failed:\n{info.stderr[-3000:]}")
    source = json.loads(info.stdout)["Dir"]
    CACHE.mkdir(parents=True, exist_ok=True)
    result = subprocess.run([go, "build", "-o", str(BINARY), "./cmd/promtool"], cwd=source, capture_output=True,
                            text=True, timeout=3600, env=env)
    if result.returncode != 0 or not BINARY.exists():
        pytest.fail(f"building promtool {VERSION} failed:\n{result.stderr[-3000:]}")
    return BINARY


def promtool3() -> str:
    """The cached promtool 3.x; built under CI when missing, skipped locally."""
    override = os.environ.get("MWE_PROMTOOL3")
    if override:
        return override
    if BINARY.exists():
        return str(BINARY)
    if not os.environ.get("CI"):
        pytest.skip(f"promtool 3.x not built (CI builds it into {CACHE}; or set MWE_PROMTOOL3)")
    return str(build())
