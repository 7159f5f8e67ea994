"""The advice report: every advice row (``rows/``) judged on the snapshot the scrape serves (``model.Snapshot``),
as the JSON of ``/api/v1/advice`` and ``advise`` (shape in docs/advisor.md), the page's input (``page.py``) and a
terminal table.  Pure: it never runs a collector.
"""

from __future__ import annotations

import logging
import math
from datetime import datetime, timezone
from typing import Any

from .model import NOT_READABLE, STATUSES, Finding, Row, Snapshot, unknown
from .rows import ROWS

log = logging.getLogger(__name__)


def _recommendation(row: Row, finding: Finding) -> dict:
    value = finding.observed_value
    if value is not None and not math.isfinite(value):
        value = None
    remedy = finding.remedy if finding.remedy is not None else row.remedy
    return {
        "row": row.id,
        "system": row.system,
        "target_kind": finding.target_kind or row.target_kind,
        "target": finding.target,
        "title": row.title,
        "status": finding.status,
        "reason": finding.reason if finding.status == "unknown" else None,
        "observed": finding.observed,
        "observed_value": value,
        "recommended": finding.recommended or row.recommended,
        "effect": row.effect,
        "citation": {"document": row.document, "section": row.section},
        # a remedy only for a deviation: what follows needs none, what cannot be judged needs its source first
        "remedy": remedy if finding.status == "deviates" else None,
        "remedy_note": (finding.remedy_note or row.remedy_note) if remedy and finding.status == "deviates" else None,
    }


def _sort_key(rec: dict) -> tuple:
    return STATUSES.index(rec["status"]), rec["system"], rec["row"], rec["target"]


def _forecasts(scheduler: Any) -> list[dict]:
    try:
        from . import forecasts
    except ImportError:
        return []
    try:
        return list(forecasts.evaluate(scheduler))
    except Exception:  # noqa: BLE001 - a broken forecast must not take the advice with it
        log.exception("msg=%s", '"forecasts failed"')
        return []


def recommendations(snapshot: Snapshot, rows: Any = None) -> list[dict]:
    """Every row judged on the snapshot, sorted (deviations first, then unknowns, then what follows)."""
    result = []
    for row in rows if rows is not None else ROWS:
        try:
            findings = row.judge(snapshot)
        except Exception as exc:  # noqa: BLE001 - one row's bug leaves the others standing, and says so
            log.exception("msg=%s row=%s", '"advice row failed"', row.id)
            findings = [unknown("-", f"{NOT_READABLE}: the advisor could not judge this row ({type(exc).__name__})")]
        result += [_recommendation(row, finding) for finding in findings]
    return sorted(result, key=_sort_key)


def build_report(scheduler: Any, settings: Any = None, *, now: datetime | None = None) -> dict:
    """The advice report for the scheduler's current snapshot (shape in docs/advisor.md). Pure: no collection.
    ``generated_at`` is when the snapshot was taken (the latest collector run), not when the report was asked for."""
    generation = int(getattr(scheduler, "generation", 0) or 0)
    recs = recommendations(Snapshot.of(scheduler, settings))
    summary = {status: sum(1 for r in recs if r["status"] == status) for status in ("follows", "deviates", "unknown")}
    if now is None:  # the time of the snapshot: the latest collector run, so one generation has one time
        runs = [state.last_run for state in getattr(scheduler, "states", {}).values()
                if isinstance(getattr(state, "last_run", None), (int, float))]
        now = datetime.fromtimestamp(max(runs), timezone.utc) if runs else datetime.now(timezone.utc)
    moment = now.astimezone(timezone.utc)
    return {
        "generated_at": moment.isoformat(timespec="seconds").replace("+00:00", "Z"),
        "generation": generation,
        "summary": summary,
        "recommendations": recs,
        "forecasts": _forecasts(scheduler),
    }


def deviating(report: dict) -> bool:
    return any(rec["status"] == "deviates" for rec in report.get("recommendations", []))


# ---- the terminal table ---------------------------------------------------------------------------------------------
def _wrap(text: str, width: int, indent: str) -> list[str]:
    import textwrap

    lines: list[str] = []
    for part in str(text).splitlines() or [""]:
        lines += textwrap.wrap(part, width, initial_indent=indent, subsequent_indent=indent + "  ",
                               break_on_hyphens=False) or [indent]
    return lines


def report_to_text(report: dict, width: int = 120) -> str:
    """The report as a terminal table readable at 120 columns: one line per recommendation (status, row, target,
    observed), and under each deviation what to aim for, the guide's figure, the remedy, its note and the citation;
    under each unknown the reason."""
    recs = report.get("recommendations", [])
    s = report.get("summary", {})
    out = [f"middleware-exporter advice, {report.get('generated_at', '')} (generation {report.get('generation', 0)}): "
           f"{s.get('deviates', 0)} deviate, {s.get('unknown', 0)} unknown, {s.get('follows', 0)} follow", ""]
    columns = (("STATUS", 10), ("ROW", 20), ("TARGET", 24))
    rest = width - sum(w for _, w in columns)
    out += ["".join(f"{name:<{w}}" for name, w in columns) + "OBSERVED", "-" * width]
    indent = " " * 10

    def cell(text: object, w: int) -> str:
        text = "-" if text is None else str(text).replace("\n", " ")
        return (text if len(text) < w else text[:w - 2] + "~").ljust(w)

    for rec in recs:
        observed = "-" if rec["observed"] is None else rec["observed"]
        line = (cell(rec["status"].upper() if rec["status"] == "deviates" else rec["status"], 10)
                + cell(rec["row"], 20) + cell(rec["target"], 24))
        first, *more = _wrap(observed, rest, "") or [""]
        out.append(line + first)
        out += [" " * (width - rest) + part.strip() for part in more]
        if rec["status"] == "unknown":
            out += _wrap(f"why: {rec['reason']}", width - 10, indent)
        if rec["status"] != "deviates":
            continue
        out += _wrap(f"{rec['title']}: {rec['recommended']}", width - 10, indent)
        out += _wrap(f"guide measured: {rec['effect']}", width - 10, indent)
        if rec["remedy"]:
            out.append(indent + "remedy:")
            out += _wrap(rec["remedy"], width - 12, indent + "  ")
        if rec["remedy_note"]:
            out += _wrap(f"note: {rec['remedy_note']}", width - 10, indent)
        c = rec["citation"]
        out += _wrap(f"source: {c['document']}, {c['section']}", width - 10, indent)
    forecasts = report.get("forecasts") or []
    if forecasts:
        out += ["", f"{len(forecasts)} forecasts: see --format json, /api/v1/advice or /advice"]
    return "\n".join(out) + "\n"
