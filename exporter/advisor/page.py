"""The advice page (``GET /advice``): the advisor's report as one HTML page an operator prints or screenshots into
a change ticket.

Grouped by system, systems with deviations first; inside a system the deviations (observed, recommended, remedy,
change-window note, citation), then what could not be judged (with the reason), then a compact table of what follows
the guides, then the forecasts. Rendered server-side with Jinja2 (autoescape always on: every value in the report
comes from a monitored system or a site's configuration); the page has no script and loads nothing else (inline CSS),
and the route sends a Content-Security-Policy that forbids both.
"""

from __future__ import annotations

import math
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

# The order and printed names of the systems; a system the report names but this list does not comes after these.
SYSTEMS: dict[str, str] = {
    "hpom": "HPOM",
    "oracle": "Oracle Database",
    "ibmmq": "IBM MQ",
    "vhi": "Verastream Host Integrator",
    "domino": "Domino",
    "host": "Host",
}
STATUSES = ("deviates", "unknown", "follows")

# Forbids every script, frame, form target and fetched resource; only the page's own <style> applies.
CONTENT_SECURITY_POLICY = ("default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; "
                           "frame-ancestors 'none'")

_environment = Environment(
    loader=PackageLoader("exporter.advisor", "templates"),
    autoescape=True,  # every template, whatever its file name
    undefined=StrictUndefined,  # a report that lacks a field of the shape fails loudly rather than printing blanks
    trim_blocks=True,
    lstrip_blocks=True,
)


def number(value: Any) -> str:
    """A figure for people: thousands separated, at most four significant digits below 1,000, '-' for none."""
    if value is None or isinstance(value, bool):
        return "-" if value is None else str(value)
    if not isinstance(value, int | float):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(value):,}"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.4g}"


_environment.filters["number"] = number
# the report's target kinds, as a row heading reads them
TARGET_KIND_LABELS = {"host": "Host", "hpom_server": "HPOM server", "database": "Database",
                      "queue_manager": "Queue manager", "session_server": "Session server", "mount": "NFS mount"}
_environment.filters["kind"] = lambda kind: TARGET_KIND_LABELS.get(kind, kind)


def group(report: dict) -> list[dict]:
    """The report's recommendations and forecasts per system: systems with deviations first, then those with
    unknowns, then the rest, each in the order of ``SYSTEMS``; inside a system the rows by status (deviations,
    unknowns, follows), keeping the report's order within a status."""
    groups: dict[str, dict] = {}

    def bucket(system: str) -> dict:
        if system not in groups:
            groups[system] = {"system": system, "title": SYSTEMS.get(system, system),
                              **{status: [] for status in STATUSES}, "forecasts": []}
        return groups[system]

    for row in report.get("recommendations", []):
        status = row.get("status")
        bucket(row.get("system", ""))[status if status in STATUSES else "unknown"].append(row)
    for forecast in report.get("forecasts", []):
        bucket(forecast.get("system", ""))["forecasts"].append(forecast)
    known = list(SYSTEMS)

    def order(g: dict) -> tuple:
        rank = 0 if g["deviates"] else 1 if g["unknown"] else 2
        position = known.index(g["system"]) if g["system"] in known else len(known)
        return rank, position, g["system"]

    return sorted(groups.values(), key=order)


def render(report: dict, *, version: str | None = None) -> str:
    """The HTML page for an advisor report (the shape of ``GET /api/v1/advice``)."""
    summary = report.get("summary", {})
    counts = {status: summary.get(status, 0) for status in STATUSES}
    return _environment.get_template("advice.html.j2").render(
        report=report, groups=group(report), counts=counts, version=version)
