"""The advisor's model: every advice row of the guides (``rows.py``) judged against the snapshot the scrape serves.

``build_report`` reads the collectors' last samples from the scheduler (``families_of``) and nothing else: it never
runs a collector, opens a connection or reads a file, so ``GET /api/v1/advice``, the page and ``advise`` cost no
more than a scrape and always agree with ``/metrics``. One recommendation per guide row and target (host, HPOM
server, database, queue manager, session server, mount), each follows / deviates / unknown; an unknown one says
why, starting with one of ``REASONS``. The report's shape is documented in docs/advisor.md; the page
(``page.py``) and the forecasts (``forecasts.py``) code against it.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

log = logging.getLogger(__name__)

STATUSES = ("deviates", "unknown", "follows")  # the report's order
# How every unknown reason starts: the source is switched off or absent from the configuration; it was configured
# but failed (or gave nothing) in its last run; the row does not apply to this target (version, platform, role).
NOT_CONFIGURED = "source not configured"
NOT_READABLE = "not readable"
NOT_APPLICABLE = "not applicable"
REASONS = (NOT_CONFIGURED, NOT_READABLE, NOT_APPLICABLE)
SYSTEMS = ("hpom", "oracle", "ibmmq", "vhi", "domino", "host")
TARGET_KINDS = ("host", "hpom_server", "database", "queue_manager", "session_server", "mount")


@dataclass(frozen=True)
class Finding:
    """What a row's judge says about one target; the row supplies the rest of the recommendation."""

    target: str
    status: str
    reason: str | None = None
    observed: str | None = None
    observed_value: float | None = None
    remedy: str | None = None  # filled in with the live values; None keeps the row's own remedy for a deviation
    target_kind: str | None = None  # None: the row's kind
    recommended: str | None = None  # None: the row's text
    remedy_note: str | None = None  # None: the row's note; for a remedy whose parts need other notes than the row's

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status {self.status!r}")
        if self.status == "unknown" and not (self.reason and self.reason.startswith(REASONS)):
            raise ValueError(f"an unknown finding needs a reason starting with one of {REASONS}: {self.reason!r}")


def follows(target: str, observed: str | None = None, value: float | None = None, **kw: Any) -> Finding:
    return Finding(target, "follows", observed=observed, observed_value=value, **kw)


def deviates(target: str, observed: str | None, value: float | None, remedy: str | None = None,
             **kw: Any) -> Finding:
    return Finding(target, "deviates", observed=observed, observed_value=value, remedy=remedy, **kw)


def unknown(target: str, reason: str, observed: str | None = None, value: float | None = None,
            **kw: Any) -> Finding:
    return Finding(target, "unknown", reason=reason, observed=observed, observed_value=value, **kw)


@dataclass
class Snapshot:
    """The collectors' last samples as the scrape serves them, indexed by sample name, with each enabled collector's
    last outcome. ``settings`` (the loaded configuration, optional) only tells which targets are configured."""

    enabled: set[str] = field(default_factory=set)
    succeeded: dict[str, bool | None] = field(default_factory=dict)
    samples: dict[str, list[tuple[dict[str, str], float]]] = field(default_factory=dict)
    settings: Any = None

    @classmethod
    def of(cls, scheduler: Any, settings: Any = None) -> "Snapshot":
        snap = cls(settings=settings)
        for name, state in list(getattr(scheduler, "states", {}).items()):
            snap.enabled.add(name)
            snap.succeeded[name] = state.success
            _, families = scheduler.families_of(name)
            for family in families:
                for sample in family.samples:
                    snap.samples.setdefault(sample.name, []).append((dict(sample.labels), float(sample.value)))
        return snap

    # ---- reading ------------------------------------------------------------------------------------------------
    def all(self, metric: str, /, **match: str) -> list[tuple[dict[str, str], float]]:
        return [(labels, value) for labels, value in self.samples.get(metric, [])
                if all(labels.get(k) == v for k, v in match.items())]

    def value(self, metric: str, /, **match: str) -> float | None:
        found = self.all(metric, **match)
        return found[0][1] if found else None

    def total(self, metric: str, /, **match: str) -> float | None:
        found = self.all(metric, **match)
        return sum(value for _, value in found) if found else None

    def setting(self, *path: str, default: Any = None) -> Any:
        node = self.settings
        for part in path:
            if node is None:
                return default
            node = getattr(node, part, None)
        return default if node is None else node

    # ---- why something cannot be judged ---------------------------------------------------------------------------
    def collector_problem(self, collector: str) -> str | None:
        """The unknown reason when a collector gives nothing to judge: disabled, or its last run failed."""
        if collector not in self.enabled:
            return f"{NOT_CONFIGURED}: the {collector} collector is disabled"
        if self.succeeded.get(collector) is None:
            return f"{NOT_READABLE}: the {collector} collector has not finished a run yet"
        if not self.succeeded.get(collector):
            return f"{NOT_READABLE}: the {collector} collector's last run failed (see /api/v1/collectors)"
        return None


@dataclass(frozen=True)
class Row:
    """An advice row of a guide, declared as data (``rows.py``): what it recommends, what the guide measured, where
    it says so, the standard remedy and whether applying it needs a restart or a change window; ``judge`` reads the
    snapshot and returns one finding per target."""

    id: str
    system: str
    target_kind: str
    title: str
    recommended: str
    effect: str
    document: str
    section: str
    remedy: str | None
    remedy_note: str | None
    judge: Any  # Callable[[Snapshot], list[Finding]]

    def __post_init__(self) -> None:
        if self.system not in SYSTEMS or self.target_kind not in TARGET_KINDS:
            raise ValueError(f"{self.id}: system {self.system!r} or target kind {self.target_kind!r}")


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
    from .rows import ROWS

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
