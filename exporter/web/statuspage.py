"""The status page (``GET /``): what an operator opens first.  Per collector its state, when it last worked, its
last error, the guide rows its metrics serve and links to its metrics reference, runbook and advice; per target
(core/targets.py) its state, when it was last up, its error and its sources.  It says what the metric
(``middleware_scrape_collector_success``, ``middleware_target_up``), /api/v1/collectors and the log say: it reads
the same ``Scheduler.status()``, already scrubbed of secrets.

Written with ``html.escape`` and f-strings rather than Jinja2 (which the advice page uses): the page is small and
fixed, and the exporter should not keep a template engine in memory for it (issue 30).  No script, nothing loaded
from elsewhere (inline CSS in the advice page's style); the route sends a Content-Security-Policy that forbids both.
"""

from __future__ import annotations

import re
import time
from html import escape
from typing import Iterable

# As the advice page's (exporter/advisor/page.py, not imported: it loads Jinja2): no script, frame or fetch.
CONTENT_SECURITY_POLICY = ("default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; "
                           "frame-ancestors 'none'")
# Where the links to the documentation point (the mixin's runbookURLPattern has the same base).
DOCS = "https://github.com/middleware-exporter/middleware-exporter/blob/main/"
GUIDE_ROW = re.compile(r"\b(?:HPOM|ORA|MQ|VHI|DOM|HOST)-[A-Z0-9]+(?:-[A-Z0-9]+)*\b")
STATES = {  # state -> (badge text, meaning)
    "ok": ("OK", "the last run finished in time and every target and source was read"),
    "degraded": ("Degraded", "the last run finished, but a target is down or a source failed (named under Last "
                 "error): the metrics that were read are served"),
    "failed": ("Failed", "the last run raised, timed out or produced invalid samples: no metrics from it"),
    "pending": ("Pending", "the first run has not finished yet"),
    "up": ("Up", "read in the last run"),
    "down": ("Down", "not read in the last run"),
    "disabled": ("Disabled", "not enabled in the configuration"),
}

_STYLE = """
  :root { --failed: #b00020; --degraded: #8a5a00; --ok: #1b6e20; --pending: #555; --rule: #c8c8c8; --muted: #555; }
  * { box-sizing: border-box; }
  body { font: 14px/1.45 "DejaVu Sans", "Liberation Sans", Arial, sans-serif; color: #111; margin: 0 auto;
         padding: 16px 24px 32px; max-width: 1200px; }
  h1 { font-size: 22px; margin: 0 0 4px; }
  h2 { font-size: 18px; margin: 28px 0 8px; padding-bottom: 4px; border-bottom: 2px solid #111; }
  h3 { font-size: 15px; margin: 12px 0 6px; }
  .meta { color: var(--muted); margin: 0 0 10px; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; vertical-align: top; padding: 4px 8px; border: 1px solid var(--rule);
           overflow-wrap: anywhere; }
  th { background: #f2f2f2; font-weight: 600; }
  table.summary { width: auto; margin: 0 0 10px; }
  table.summary td { font-size: 18px; font-weight: 700; text-align: right; min-width: 64px; }
  table.facts { width: auto; min-width: 60%; margin: 4px 0 8px; }
  table.facts th { width: 160px; }
  td.failed, td.down { color: var(--failed); } td.degraded { color: var(--degraded); }
  td.ok, td.up { color: var(--ok); }
  .badge { display: inline-block; padding: 1px 7px; border-radius: 3px; color: #fff; font-size: 12px;
           font-weight: 700; text-transform: uppercase; letter-spacing: .03em; vertical-align: 1px; }
  .badge.failed, .badge.down { background: var(--failed); } .badge.degraded { background: var(--degraded); }
  .badge.ok, .badge.up { background: var(--ok); } .badge.pending, .badge.disabled { background: var(--pending); }
  section.collector { border: 1px solid var(--rule); border-left: 6px solid var(--ok); padding: 4px 12px 10px;
                      margin: 14px 0; }
  section.collector.failed { border-left-color: var(--failed); }
  section.collector.degraded { border-left-color: var(--degraded); }
  section.collector.pending { border-left-color: var(--pending); }
  section.collector h2 { border: 0; margin: 6px 0; }
  .error { font: 13px/1.4 "DejaVu Sans Mono", monospace; white-space: pre-wrap; word-break: break-word; }
  .rowid { font-family: "DejaVu Sans Mono", monospace; font-size: 13px; }
  ul.sources { margin: 0; padding-left: 18px; }
  table.targets td:nth-child(-n+3), table.targets th:nth-child(-n+3) { white-space: nowrap; overflow-wrap: normal; }
  table.targets td:nth-child(4) { width: 45%; }
  nav ul { margin: 0; padding-left: 20px; }
  .none { color: var(--muted); }
  footer { margin-top: 28px; color: var(--muted); font-size: 13px; }
  footer dt { font-weight: 600; color: #111; } footer dd { margin: 0 0 4px 16px; }
"""


def guide_rows(texts: Iterable[str]) -> list[str]:
    """The guide rows (HPOM-ACK, ORA-NFS, MQ-DEPTH, ...) named in a collector's metric help texts and notes."""
    return sorted({row for text in texts for row in GUIDE_ROW.findall(text)})


def age(timestamp: float | None, now: float) -> str:
    """How long ago, for people: ``42 s ago``, ``3 min 05 s ago``, ``2 h 10 min ago``; ``never``."""
    if not timestamp:
        return "never"
    seconds = max(int(now - timestamp), 0)
    if seconds < 60:
        return f"{seconds} s ago"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s ago"
    if seconds < 86400:
        return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min ago"
    return f"{seconds // 86400} d {seconds % 86400 // 3600:02d} h ago"


def _badge(state: str) -> str:
    text, meaning = STATES.get(state, (state, ""))
    return f'<span class="badge {escape(state)}" title="{escape(meaning)}">{escape(text)}</span>'


def _error(text: str | None) -> str:
    return f'<span class="error">{escape(text)}</span>' if text else '<span class="none">none</span>'


def _time(timestamp: float | None, now: float) -> str:
    if not timestamp:
        return "never"
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(timestamp))
    return f'<time datetime="{stamp}">{escape(age(timestamp, now))}</time>'


def _sources(sources: list[dict], target_error: str | None) -> str:
    """How many sources were read; the failed ones grouped by error text (a database that refuses the session fails
    every query with its words: said once, under the target's error)."""
    if not sources:
        return '<span class="none">-</span>'
    failed = [s for s in sources if not s["success"]]
    head = f"{len(sources) - len(failed)} of {len(sources)} read"
    if not failed:
        return escape(head)
    by_error: dict[str, list[str]] = {}
    for source in failed:
        by_error.setdefault(source["last_error"] or "failed", []).append(source["name"])
    items = "".join(
        f'<li><span class="rowid">{escape(", ".join(names))}</span>: '
        f'{"the target&#x27;s error" if error == target_error else _error(error)}</li>'
        for error, names in by_error.items())
    return f'{escape(head)}; failed:<ul class="sources">{items}</ul>'


def _targets(collector: dict, now: float) -> str:
    targets = collector.get("targets") or []
    if not targets:
        return ""
    rows = "".join(
        f'<tr id="target-{escape(collector["name"])}-{escape(t["name"])}"><td>{escape(t["name"])}</td>'
        f'<td class="{escape(t["state"])}">{_badge(t["state"])}</td>'
        f'<td>{_time(t["last_success_timestamp"], now)}</td><td>{_error(t["last_error"])}</td>'
        f'<td>{_sources(t["sources"], t["last_error"])}</td></tr>'
        for t in targets)
    return ("<h3>Targets</h3><table class=\"targets\"><tr><th>Target</th><th>State</th><th>Last up</th>"
            f"<th>Last error</th><th>Sources</th></tr>{rows}</table>")


def _other_errors(collector: dict) -> str:
    """Source errors that belong to no target's listing (a collector-level source: a stuck mount, a command)."""
    named = {collector["name"]} | {t["name"] for t in collector.get("targets") or []}
    listed = {s["name"] for t in collector.get("targets") or [] for s in t["sources"] if not s["success"]}
    rest = {k: v for k, v in (collector.get("source_errors") or {}).items()
            if k not in named and k not in listed and not k.startswith(tuple(f"{n}:" for n in named))
            and not k.startswith(tuple(f"{n}/" for n in named))}
    if not rest:
        return ""
    items = "".join(f'<li><span class="rowid">{escape(k)}</span>: {_error(v)}</li>' for k, v in sorted(rest.items()))
    return f'<h3>Failed sources</h3><ul class="sources">{items}</ul>'


def _collector(c: dict, rows: list[str], now: float) -> str:
    name = c["name"]
    runbook = f"{DOCS}docs/runbooks/{name}.md" if name != "process" else f"{DOCS}docs/runbooks/host.md"
    links = (f'<a href="/metrics">/metrics</a> (series <code>{{collector="{escape(name)}"}}</code> and its '
             f'own), <a href="{escape(DOCS)}exporter/systems/{escape(name)}/README.md">metrics reference</a>, '
             f'<a href="{escape(runbook)}">runbook</a>, '
             f'<a href="{escape(DOCS)}docs/runbooks/exporter.md#middlewareexportertargetdown">target down</a>, '
             f'<a href="/advice#system-{escape(name)}">advice</a>')
    guide = (" ".join(f'<a class="rowid" href="/advice#system-{escape(name)}">{escape(r)}</a>' for r in rows)
             if rows else '<span class="none">none (operational figures)</span>')
    return (
        f'<section class="collector {escape(c["state"])}" id="collector-{escape(name)}">'
        f'<h2>{escape(name)} {_badge(c["state"])}</h2>'
        '<table class="facts">'
        f'<tr><th>State</th><td class="{escape(c["state"])}">{escape(STATES[c["state"]][1])}</td></tr>'
        f'<tr><th>Last worked</th><td>{_time(c["last_success_timestamp"], now)}</td></tr>'
        f'<tr><th>Last run</th><td>{_time(c["last_run_timestamp"], now)}'
        f'{_duration(c["last_duration_seconds"])}, every {c["interval_seconds"]:g} s, '
        f'{c["runs"]} runs, {c["failures"]} did not work</td></tr>'
        f'<tr><th>Last error</th><td>{_error(c["last_error"])}</td></tr>'
        f'<tr><th>Collects</th><td>{escape(c["description"])}</td></tr>'
        f'<tr><th>Guide rows</th><td>{guide}</td></tr>'
        f'<tr><th>Links</th><td>{links}</td></tr>'
        f'</table>{_targets(c, now)}{_other_errors(c)}</section>')


def _duration(seconds: float | None) -> str:
    return f", took {seconds:.2f} s" if seconds is not None else ""


SHOWN_PROBES = 50  # failing probed targets listed on the page (all of them: /api/v1/probes)


def _probe_error(item: dict) -> str | None:
    for collector in item.get("collectors") or []:
        for target in collector.get("targets") or []:
            if target.get("last_error"):
                return target["last_error"]
        if collector.get("last_error"):
            return collector["last_error"]
    return item.get("note")


def _probe_row(item: dict) -> str:
    age = item.get("age_seconds")
    collected = "not yet" if age is None else f"{age:.0f} s ago"
    return (f"<tr><td>{escape(item['module'])}</td><td>{escape(item['target'])}</td><td>{_badge('down')}</td>"
            f"<td>{collected}</td><td>{item['backoff_seconds']:.0f} s</td><td>{_error(_probe_error(item))}</td></tr>")


def _estate(inventory: dict | None, probes: list[dict] | None) -> str:
    """The inventory file and the probed targets (docs/estate.md): what /api/v1/inventory and /api/v1/probes say."""
    parts = ["<h2>Estate</h2>"]
    if inventory is not None:
        state = "failed" if inventory.get("error") else "ok"
        parts.append(
            '<table class="facts">'
            f"<tr><th>Inventory file</th><td>{escape(str(inventory['file']))} {_badge(state)}</td></tr>"
            f"<tr><th>Served</th><td>{inventory['targets']} targets in {inventory['groups']} groups "
            "(<a href='/sd'>/sd</a>, <a href='/api/v1/inventory'>JSON</a>)</td></tr>"
            f"<tr><th>Re-reads</th><td>{inventory['reloads']} taken, {inventory['failed_reloads']} refused</td></tr>"
            + (f"<tr><th>Last error</th><td>{_error(inventory['error'])} (the last good inventory is served)"
               "</td></tr>" if inventory.get("error") else "") + "</table>")
    if probes is not None:
        failing = [item for item in probes if item.get("success") is False or item.get("note")]
        backing = sum(1 for item in probes if item.get("backoff_seconds"))
        parts.append(f'<p class="meta">{len(probes)} targets probed recently, {len(failing)} failing, {backing} '
                     "backing off (<a href='/api/v1/probes'>/api/v1/probes</a>).</p>")
        if failing:
            rows = "".join(_probe_row(item) for item in failing[:SHOWN_PROBES])
            more = (f'<p class="meta">{len(failing) - SHOWN_PROBES} more failing targets: /api/v1/probes.</p>'
                    if len(failing) > SHOWN_PROBES else "")
            parts.append("<table><tr><th>Module</th><th>Target</th><th>State</th><th>Collected</th>"
                         f"<th>Next try in</th><th>Error</th></tr>{rows}</table>{more}")
    return "".join(parts)


def render(collectors: list[dict], readiness: dict, guide: dict[str, list[str]], version: str,
           now: float | None = None, inventory: dict | None = None, probes: list[dict] | None = None) -> str:
    """The page for ``/api/v1/collectors``' list (disabled collectors included) and ``Scheduler.readiness()``;
    with an inventory file or modules, the estate's section (``inventory``: /api/v1/inventory's JSON,
    ``probes``: /api/v1/probes')."""
    now = time.time() if now is None else now
    enabled = [c for c in collectors if c.get("enabled")]
    disabled = [c for c in collectors if not c.get("enabled")]
    counts = {state: sum(1 for c in enabled if c["state"] == state) for state in ("ok", "degraded", "failed")}
    targets = [t for c in enabled for t in c.get("targets") or []]
    up = sum(1 for t in targets if t["state"] == "up")
    down = sum(1 for t in targets if t["state"] == "down")
    sections = "".join(_collector(c, guide.get(c["name"], []), now) for c in enabled)
    if inventory is not None or probes is not None:
        sections = _estate(inventory, probes) + sections
    off = ""
    if disabled:
        off = ("<h2>Disabled collectors</h2><table><tr><th>Collector</th><th>What it collects</th></tr>" + "".join(
            f"<tr><td>{escape(c['name'])} {_badge('disabled')}</td><td>{escape(c['description'])}</td></tr>"
            for c in disabled) + "</table>")
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))
    legend = "".join(f"<dt>{escape(text)}</dt><dd>{escape(meaning)}</dd>" for text, meaning in STATES.values())
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Status - middleware-exporter</title><style>{_STYLE}</style></head><body><header>"
        f"<h1>middleware-exporter status</h1>"
        f'<p class="meta">Generated <time datetime="{stamp}">{stamp}</time> by middleware-exporter '
        f'{escape(version)}. Readiness: <strong>{escape(readiness["status"])}</strong> '
        f'(<a href="/readyz">/readyz</a>).</p>'
        '<table class="summary"><tr><th>Collectors OK</th><th>Degraded</th><th>Failed</th><th>Targets up</th>'
        f'<th>Targets down</th></tr><tr><td class="ok">{counts["ok"]}</td><td class="degraded">{counts["degraded"]}'
        f'</td><td class="failed">{counts["failed"]}</td><td class="up">{up}</td><td class="down">{down}</td></tr>'
        "</table><nav><ul>"
        "<li><a href='/metrics'>/metrics</a>: Prometheus exposition</li>"
        "<li><a href='/api/v1/collectors'>/api/v1/collectors</a>: this page as JSON</li>"
        "<li><a href='/advice'>/advice</a>: the guides' recommendations against this estate "
        "(<a href='/api/v1/advice'>JSON</a>)</li>"
        "<li><a href='/healthz'>/healthz</a>: process alive; <a href='/readyz'>/readyz</a>: first collection "
        "done</li></ul></nav></header>"
        f"<main>{sections}{off}</main>"
        f"<footer><dl>{legend}</dl>The same states as <code>middleware_scrape_collector_success</code> (1 only when "
        "OK), <code>middleware_target_up</code> and the log's <code>target down</code> and <code>source "
        "failed</code> lines. Errors are shown "
        "with secrets masked.</footer></body></html>")
