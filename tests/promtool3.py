"""A Prometheus 3.x promtool next to Debian's 2.42, so that the rule tests and the scenarios run on both majors
(kube-prometheus-stack ships Prometheus 3.x, whose range selectors are left-open: a window holds one sample less).

Built from the module source through the Go module proxy when missing, and cached in
~/.cache/middleware-exporter/bin.  `go install ...@version` refuses the module (its go.mod has replace directives),
so the module is downloaded and built in place.  Locally a missing binary skips; under CI it is built (a cold build
of the module and its dependencies took 12 min 15 s on this 2-core machine)."""

from __future__ import annotations

from .chart_tools import tool

VERSION = "v0.314.0"  # Prometheus 3.14.0 (the module tags v0.3xx.y are releases 3.xx.y): tools/gotools.py


def promtool3() -> str:
    """The cached promtool 3.x; built by scripts/test (tools/gotools.py) or under CI when missing, skipped
    elsewhere (or set MWE_PROMTOOL3)."""
    return str(tool("promtool3"))
