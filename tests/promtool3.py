"""A Prometheus 3.x promtool next to Debian's 2.42, so that the rule tests and the scenarios run on both majors
(kube-prometheus-stack ships Prometheus 3.x, whose range selectors are left-open: a window holds one sample less).

Built from the module source through the Go module proxy when missing, and cached in
~/.cache/middleware-exporter/bin.  `go install ...@version` refuses the module (its go.mod has replace directives),
so the module is downloaded and built in place.  Locally a missing binary skips; under CI it is built (a cold build
of the module and its dependencies took 12 min 15 s on this 2-core machine)."""

from __future__ import annotations

from pathlib import Path

from .chart_tools import BIN, _module_dir, cached, go_build

VERSION = "v0.314.0"  # Prometheus 3.14.0 (the module tags v0.3xx.y are releases 3.xx.y)
BINARY = BIN / f"promtool-{VERSION}"


def build() -> Path:
    return go_build(_module_dir("github.com/prometheus/prometheus", VERSION), "./cmd/promtool", BINARY, static=False)


def promtool3() -> str:
    """The cached promtool 3.x; built under CI when missing, skipped locally (or set MWE_PROMTOOL3)."""
    return str(cached(BINARY, "MWE_PROMTOOL3", build))
