"""Forecasts from the documents' measured curves: what the guides' tables predict for the figures read now.

Every forecast is a Prometheus recording rule `middleware:forecast:<what>_<unit>` (mixin/rules/forecasts.libsonnet,
rendered from this module by `python -m exporter.advisor.forecasts`, so the rules and the Python figures share one
table module; the mixin renders it into alerts/forecasts.yml with the configured selectors) and an entry of
:func:`evaluate` for the advisor, computed from the scheduler's last snapshot.  Rate-based
forecasts (msgmgrq time to empty) need Prometheus's history: evaluate() gives their inputs and the rule to query.

Interpolation is piecewise linear between a table's own points and clamped at its ends (flagged `extrapolated`).
Why not a fitted curve: three or four measured points per curve do not support a model, and a straight line
between them returns the document's own figures exactly.  Hand-written (a dozen lines) rather than numpy, which
the exporter does not otherwise need, and so that the PromQL rendering is the same formula.
"""

from __future__ import annotations

import bisect
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from . import tables as t

# jsonnet placeholders of mixin/config.libsonnet, filled in when the mixin renders the rules
JOB = "%(middlewareSelector)s"
HOST = "%(hostSelector)s"
CLUSTER = "%(clusterPrefix)s"
PREFIX = "middleware:forecast:"


def _num(value: float) -> str:
    # Full precision (repr), so that the rule returns a table's figures at its points to the last bit; hence widths
    # such as 0.060000000000000005 (0.07 - 0.01 in binary).
    return repr(float(value)) if value != int(value) else str(int(value))


@dataclass(frozen=True)
class Curve:
    """A piecewise-linear curve through (x, y) points with increasing x, clamped at both ends unless `slope_beyond`
    continues it past the last point (a document that says the relation is linear)."""

    points: tuple[tuple[float, float], ...]
    x_unit: str
    y_unit: str
    slope_beyond: float | None = None

    def __post_init__(self) -> None:
        xs = [x for x, _ in self.points]
        if len(xs) < 2 or any(b <= a for a, b in pairwise(xs)):
            raise ValueError(f"curve points must have at least two strictly increasing x: {xs}")

    @property
    def lo(self) -> float:
        return self.points[0][0]

    @property
    def hi(self) -> float:
        return self.points[-1][0]

    def at(self, x: float) -> tuple[float, bool]:
        """(y, extrapolated): y at x; outside the points the end value (or the continued slope)."""
        xs = [p[0] for p in self.points]
        if x < xs[0]:
            return self.points[0][1], True
        if x > xs[-1]:
            if self.slope_beyond is not None:
                return self.points[-1][1] + self.slope_beyond * (x - xs[-1]), True
            return self.points[-1][1], True
        i = bisect.bisect_left(xs, x)
        if xs[i] == x:  # the table's own point, exactly
            return self.points[i][1], False
        (x0, y0), (x1, y1) = self.points[i - 1], self.points[i]
        return y0 + (y1 - y0) * (x - x0) / (x1 - x0), False

    def promql(self, x: str) -> str:
        """The same curve in PromQL over the instant vector `x`: y0 + sum of slope_i * clamp(x - x_i, 0, width_i)."""
        terms = [f"{_num(self.points[0][1])}"]
        for (x0, y0), (x1, y1) in pairwise(self.points):
            slope = (y1 - y0) / (x1 - x0)
            if slope:
                sign = "-" if slope < 0 else "+"
                terms.append(f"{sign} {_num(abs(slope))} * clamp({x} - {_num(x0)}, 0, {_num(x1 - x0)})")
        if self.slope_beyond:
            terms.append(f"+ {_num(self.slope_beyond)} * clamp_min({x} - {_num(self.points[-1][0])}, 0)")
        if len(terms) == 1:  # a flat curve: keep the input's labels
            terms.append(f"+ 0 * ({x})")
        return "(" + "\n  ".join(terms) + ")"


# ---- the curves ---------------------------------------------------------------------------------------------------

# MoM: Table 15 from the origin (no acknowledgements, nothing to synchronise; the origin is not a table row), and
# past 4,000 acknowledgements continued at 12 s per 1,000: the guide calls the time linear and says it "can be simply
# extrapolated", 12 s being the upper end of its 10-12 s per 1,000.
MOM_SLOPE_BEYOND = 12.0 / 1000
MOM_SYNC = Curve(((0, 0.0), *t.TABLE_15_SYNC_SECONDS), "acknowledgements", "s", slope_beyond=MOM_SLOPE_BEYOND)

# Java GUI start-up (8.30): Table 17 at 1 GUI, by active messages, one curve per node column (500 and 2,000), and
# between the columns a straight line in the node count (middleware_hpom_managed_nodes), clamped to 500-2,000.
# Without a node count the 2,000 column is used: the larger, and the one Table 20 was measured with.
GUI_NODE_COLUMNS = (500, 2000)
GUI_NODES = 2000  # assumed when the node count is not read
GUI_STARTUP_BY_MESSAGES_AT = {nodes: Curve(((5000, t.TABLE_17_SECONDS[(5000, nodes)][0][1]),
                                            (50000, t.TABLE_17_SECONDS[(50000, nodes)][0][1])), "active messages", "s")
                              for nodes in GUI_NODE_COLUMNS}
GUI_STARTUP_BY_MESSAGES = GUI_STARTUP_BY_MESSAGES_AT[GUI_NODES]


def gui_startup(active: float, nodes: float | None) -> tuple[float, bool]:
    """(seconds, extrapolated) of one Java GUI's start-up at ``active`` messages and ``nodes`` managed nodes (None:
    the 2,000 column); linear in each between Table 17's points, clamped at its ends."""
    lo_nodes, hi_nodes = GUI_NODE_COLUMNS
    high, extra = GUI_STARTUP_BY_MESSAGES_AT[hi_nodes].at(active)
    if nodes is None:
        return high, extra
    low, _ = GUI_STARTUP_BY_MESSAGES_AT[lo_nodes].at(active)
    share = min(max((nodes - lo_nodes) / (hi_nodes - lo_nodes), 0.0), 1.0)
    return low * (1 - share) + high * share, extra or not lo_nodes <= nodes <= hi_nodes


# ... times the CMA factor of Table 20 at 1 GUI (start-up at n CMAs / at 1 CMA; the factor differs by at most 7 %
# between 1 and 20 GUIs).  Fewer than 1 CMA per message reads as 1 (the table's lowest cost).
_T20_BASE = t.TABLE_20_SECONDS[1][0][1]
CMA_STARTUP_FACTOR = Curve(tuple((cmas, rows[0][1] / _T20_BASE) for cmas, rows in t.TABLE_20_SECONDS.items()),
                           "CMAs per message", "")
# Table 17 without CMAs measured 50,498 s at 50,000 messages and 2,000 nodes; the 1-CMA row of Table 20 (10,000
# messages) agrees with the curve above within 10 %, which is why the factor multiplies it.

# Throughput ceiling (8.30): Table 19 by CMAs, scaled by Table 13's duplicates-counter figure / its "off" figure.
THROUGHPUT_BY_CMA = Curve(t.TABLE_19_MSGS_PER_SECOND, "CMAs per message", "msg/s")
DUPLICATE_FACTOR = {state: value / t.TABLE_13_MSGS_PER_SECOND["off"]
                    for state, value in t.TABLE_13_MSGS_PER_SECOND.items()}

# VHI: gain of doubling the CPUs from the current count (75 % from 1, 38 % from 2, 14 % from 4).
VHI_DOUBLING_GAIN = Curve(t.CPU_DOUBLING_GAIN, "CPUs", "")


def mq_gain_points(rows: Sequence[t.MqRow], rules_engines: int = 1) -> list[tuple[float, float]]:
    """(CPU idle ratio at n queue managers, throughput gain ratio per queue manager added to n) from a report
    table: (total at the next row / total here) ** (1 / queue managers added) - 1."""
    mine = sorted((r for r in rows if r.rules_engines == rules_engines), key=lambda r: r.qmgrs)
    points = []
    for here, nxt in pairwise(mine):
        gain = (nxt.total_msgs_per_second / here.total_msgs_per_second) ** (1 / (nxt.qmgrs - here.qmgrs)) - 1
        points.append((here.cpu_idle_percent / 100, gain))
    return sorted(points)


# MQ: Test Case 2 (P hub, CPU-bound, the report's headline test), box P1, one rules engine per queue manager:
# normal operation (Figure 4, 1-5 queue managers, idle 70-21 %), and below that the fail-over run of the same box
# (Figure 5, 6-10 queue managers, idle 7 % and 1 %), where the report saw CPU idle reach 0 and throughput stop.
_normal = mq_gain_points(t.TEST_CASE_2_NORMAL_P1)
_failover = [p for p in mq_gain_points(t.TEST_CASE_2_FAILOVER_P1) if p[0] < _normal[0][0]]
MQ_ADDED_QMGR_GAIN = Curve(tuple(sorted(_failover + _normal)), "CPU idle ratio", "")


# ---- recording rules ----------------------------------------------------------------------------------------------

def _sel(metric: str, matchers: str = "", selector: str = JOB) -> str:
    return f"{metric}{{{selector}{', ' + matchers if matchers else ''}}}"


ACTIVE = f"sum without (severity) ({_sel('middleware_hpom_active_messages')})"
CMA = _sel("middleware_hpom_cma_max_per_message")
RULES_FILE = Path(__file__).resolve().parents[2] / "mixin" / "rules" / "forecasts.libsonnet"
HEADER = ("// Generated from exporter/advisor/forecasts.py and tables.py by `python -m exporter.advisor.forecasts`;"
          " do not edit.\n// The forecasts of docs/forecasts.md: the documents' measured curves applied to the live"
          " series.\n// The mixin fills in the selectors (mixin/config.libsonnet) and writes alerts/forecasts.yml.\n")


def _time_to_empty(metric: str) -> str:
    depth = _sel(metric, 'queue="msgmgrq"')
    return f"{depth}\n  / (-deriv({depth}[10m]) > 0)"


def _gui_by_nodes() -> str:
    """Table 17's two node columns by active messages, and between them a line in the node count (clamped)."""
    lo_nodes, hi_nodes = GUI_NODE_COLUMNS
    low, high = (GUI_STARTUP_BY_MESSAGES_AT[n].promql(ACTIVE) for n in GUI_NODE_COLUMNS)
    width = hi_nodes - lo_nodes
    share = f"clamp({_sel('middleware_hpom_managed_nodes')} - {lo_nodes}, 0, {width}) / {width}"
    # low x (1 - share) + high x share: exactly a column's figures at 500 and 2,000 nodes
    return f"{low}\n  * (1 - {share})\n  + {high}\n  * {share}"


def recording_rules() -> list[dict[str, Any]]:
    cma_factor = CMA_STARTUP_FACTOR.promql(f"clamp_min({CMA}, 1)")
    rules = [
        # Depth over drain rate; absent while the queue grows or stands still (never a division by zero).
        ("hpom_msgmgrq_time_to_empty_seconds", "HPOM-QUEUE",
         f"(\n  {_time_to_empty('middleware_hpom_queue_entries')}\n)\nor\n"
         f"(\n  {_time_to_empty('middleware_hpom_queue_size_bytes')}\n)"),
        ("hpom_msgmgrq_time_to_empty_recovery_ratio", "HPOM-QUEUE",
         f"{_sel(PREFIX + 'hpom_msgmgrq_time_to_empty_seconds')}\n"
         "  / on () group_left () middleware:threshold:hpom_queue_recovery_seconds"),
        ("hpom_mom_ack_sync_eta_seconds", "HPOM-MOM",
         MOM_SYNC.promql(_sel("middleware_hpom_forwarded_window_acknowledged_messages"))),
        ("hpom_java_gui_startup_seconds", "HPOM-ACTIVE",
         f"(\n  {_gui_by_nodes()}\n  or\n  {GUI_STARTUP_BY_MESSAGES.promql(ACTIVE)}\n)\n"
         f"*\n(\n  {cma_factor}\n  or ({ACTIVE} * 0 + 1)\n)"),
        ("hpom_throughput_ceiling_messages_per_second", "HPOM-CMA",
         f"{THROUGHPUT_BY_CMA.promql(f'clamp_min({CMA}, 1)')}"),
        ("hpom_throughput_ceiling_usage_ratio", "HPOM-THROUGHPUT",
         f"{_sel('middleware_hpom_window_received_messages')} / {_sel('middleware_hpom_window_seconds')}\n"
         f"  / ignoring (guide_row) {_sel(PREFIX + 'hpom_throughput_ceiling_messages_per_second')}"),
        ("vhi_session_headroom_per_cpu", "VHI-SESS",
         f"-({_sel('middleware_vhi_sessions_per_cpu')}\n"
         "  - on () group_left () middleware:threshold:vhi_sessions_per_cpu)"),
        ("vhi_cpu_doubling_gain_ratio", "VHI-CPU",
         VHI_DOUBLING_GAIN.promql(_sel("middleware_vhi_session_server_cpus"))),
        ("ibmmq_added_qmgr_throughput_gain_ratio", "MQ-CPU",
         f"{MQ_ADDED_QMGR_GAIN.promql(_sel('instance:middleware_host_cpu_idle:ratio5m', selector=HOST))}\n"
         f"and on ({CLUSTER}instance) ({_sel('ibmmq_qmgr_status')} == 2)"),
    ]
    return [{"name": "middleware-forecasts",
             "rules": [{"record": PREFIX + name, "expr": expr, "labels": {"guide_row": row}}
                       for name, row, expr in rules]}]


def render_rules() -> str:
    """The rules as the mixin's jsonnet: one group, each expression a text block formatted with $._config."""
    lines = [HEADER, "{", "  prometheusRules+:: {", "    groups+: [", "      {",
             "        name: 'middleware-forecasts',", "        rules: ["]
    for group in recording_rules():
        for rule in group["rules"]:
            if "|||" in rule["expr"] or "%" in rule["expr"].replace("%(", ""):
                raise ValueError(f"{rule['record']}: the expression cannot go into a jsonnet text block as it is")
            lines += ["          {", f"            record: '{rule['record']}',", "            expr: |||"]
            lines += [f"              {line}".rstrip() for line in rule["expr"].splitlines()]
            lines += ["            ||| % $._config,",
                      "            labels: { " + ", ".join(f"{k}: '{v}'" for k, v in rule["labels"].items()) + " },",
                      "          },"]
    lines += ["        ],", "      },", "    ],", "  },", "}"]
    return "\n".join(lines) + "\n"


# ---- evaluate(): the advisor's view -------------------------------------------------------------------------------

Samples = dict[str, list[tuple[dict[str, str], float]]]


def _snapshot(scheduler: Any) -> Samples:
    """metric name -> [(labels, value)] over every collector's last samples (no collection is run)."""
    out: Samples = {}
    for name in list(getattr(scheduler, "states", {})):
        _, families = scheduler.families_of(name)
        for family in families:
            for sample in family.samples:
                if isinstance(sample.value, (int, float)) and not math.isnan(sample.value):
                    out.setdefault(sample.name, []).append((dict(sample.labels), float(sample.value)))
    return out


def _key(labels: dict[str, str], drop: tuple[str, ...] = ()) -> tuple:
    return tuple(sorted((k, v) for k, v in labels.items() if k not in drop))


def _target(labels: dict[str, str]) -> str:
    return labels.get("target") or labels.get("instance") or "local"


def _forecast(fid: str, system: str, target: str, title: str, value: float | None, unit: str, inputs: dict,
              source: t.Source | list[t.Source], validity: str, extrapolated: bool, metric: str,
              comparison: str | None) -> dict:
    sources = source if isinstance(source, list) else [source]
    return {"id": fid, "system": system, "target": target, "title": title,
            "value": None if value is None else round(value, 6), "unit": unit, "inputs": inputs,
            "source": {"document": sources[0].document, "section": "; ".join(s.section for s in sources)},
            "validity": validity, "extrapolated": extrapolated, "metric": metric, "comparison": comparison}


def _hpom(samples: Samples) -> list[dict]:
    out = []
    for labels, depth in samples.get("middleware_hpom_queue_size_bytes", []):
        if labels.get("queue") != "msgmgrq":
            continue
        entries = [v for lab, v in samples.get("middleware_hpom_queue_entries", []) if lab == labels]
        inputs = {"queue_size_bytes": depth, **({"queue_entries": entries[0]} if entries else {})}
        out.append(_forecast(
            "hpom_msgmgrq_time_to_empty", "hpom", _target(labels), "Time until msgmgrq empties at the current drain "
            "rate", None, "s", inputs, t.STORM,
            f"the guide's storm: {t.STORM_MESSAGES:,} messages drained in {t.STORM_RECOVERY_SECONDS:g} s "
            f"({t.STORM_DRAIN_RATE_AVERAGE:g} msg/s on average); the drain rate needs Prometheus (deriv over 10m)",
            False, PREFIX + "hpom_msgmgrq_time_to_empty_seconds",
            f"query {PREFIX}hpom_msgmgrq_time_to_empty_seconds against the guide's "
            f"{t.STORM_RECOVERY_SECONDS:g} s recovery"))
    for labels, acks in samples.get("middleware_hpom_forwarded_window_acknowledged_messages", []):
        eta, extra = MOM_SYNC.at(acks)
        extra = acks > MOM_SYNC.hi  # below the table's first row the line runs to the origin
        out.append(_forecast(
            "hpom_mom_ack_sync_eta", "hpom", labels.get("target", "local"), "MoM acknowledgement synchronisation ETA",
            eta, "s", {"forwarded_window_acknowledged_messages": acks}, t.TABLE_15,
            "Table 15 measured 1,000-4,000 acknowledgements (12-38.54 s); beyond, 12 s per 1,000 (the guide: "
            "linear, 10-12 s per 1,000)", extra, PREFIX + "hpom_mom_ack_sync_eta_seconds",
            f"{acks:,.0f} acknowledgements to synchronise: about {acks / 100:.0f}-{acks * 12 / 1000:.0f} s at "
            "10-12 s per 1,000"))
    by_instance: dict[tuple, float] = {}
    for labels, value in samples.get("middleware_hpom_active_messages", []):
        key = _key(labels, ("severity",))
        by_instance[key] = by_instance.get(key, 0.0) + value
    cmas = {_key(lab): v for lab, v in samples.get("middleware_hpom_cma_max_per_message", [])}
    received = {_key(lab): v for lab, v in samples.get("middleware_hpom_window_received_messages", [])}
    window = {_key(lab): v for lab, v in samples.get("middleware_hpom_window_seconds", [])}
    without_key = sum(v for _, v in samples.get("middleware_hpom_active_messages_without_key", []))
    nodes_by = {_key(lab): v for lab, v in samples.get("middleware_hpom_managed_nodes", [])}
    for key, active in sorted(by_instance.items()):
        labels = dict(key)
        cma = cmas.get(key)
        cma_in = max(cma if cma is not None else 1.0, 1.0)
        nodes = nodes_by.get(key)
        base, extra_m = gui_startup(active, nodes)
        factor, extra_c = CMA_STARTUP_FACTOR.at(cma_in)
        inputs = {"active_messages": active, "cma_max_per_message": cma if cma is not None else None,
                  **({"managed_nodes": nodes} if nodes is not None else {"managed_nodes_assumed": GUI_NODES}),
                  "java_guis": 1}
        lo_nodes, hi_nodes = GUI_NODE_COLUMNS
        node_note = (f"{nodes:,.0f} nodes" + (" lie outside 500-2,000, the nearer column is used"
                                               if not lo_nodes <= nodes <= hi_nodes else "")
                     if nodes is not None else "no node count read, 2,000 assumed")
        out.append(_forecast(
            "hpom_java_gui_startup", "hpom", _target(labels), "Expected Java GUI start-up time", base * factor, "s",
            {k: v for k, v in inputs.items() if v is not None}, [t.TABLE_17, t.TABLE_20],
            f"Table 17: 5,000-50,000 active messages, 500-2,000 nodes ({node_note}); Table 20: 1-50 CMAs at "
            "10,000 messages; 1 GUI; HPOM 8.30 (8.21's Java GUI started slower, Tables 16 and 18)"
            + (f"; {active:,.0f} active messages lie outside 5,000-50,000, the table's end value is used"
               if extra_m else "") + (f"; {cma_in:g} CMAs lie outside 1-50" if extra_c else ""),
            extra_m or extra_c, PREFIX + "hpom_java_gui_startup_seconds",
            f"{active:,.0f} active messages, "
            + (f"{nodes:,.0f} nodes, " if nodes is not None else "")
            + f"{cma_in:g} CMAs per message: {base * factor:.1f} s expected"))
        ceiling, extra_t = THROUGHPUT_BY_CMA.at(cma_in)
        inflow = received.get(key, 0.0) / window[key] if window.get(key) else None
        no_keys = ceiling * DUPLICATE_FACTOR["no_keys"]
        comparison = (f"observed inflow {inflow:.0f} msg/s against a ceiling of {ceiling:.0f} msg/s"
                      if inflow is not None else f"a ceiling of {ceiling:.0f} msg/s (no inflow window read)")
        if without_key:
            comparison += (f"; with the duplicates counter on and messages without keys ({without_key:,.0f} now) "
                           f"the ceiling falls to about {no_keys:.0f} msg/s (Table 13)")
        out.append(_forecast(
            "hpom_throughput_ceiling", "hpom", _target(labels), "Expected message throughput ceiling", ceiling,
            "msg/s", {"cma_max_per_message": cma_in, **({"inflow_msgs_per_second": round(inflow, 3)}
                                                        if inflow is not None else {})},
            [t.TABLE_19, t.TABLE_13, t.TABLE_12],
            "Table 19: 1-50 CMAs (212.8-112.4 msg/s), duplicates counter off, HPOM 8.30 on Itanium; Table 13: "
            "duplicates counter on without keys x0.61, with one key x1.16; 8.21 (Table 12) ran faster"
            + (f"; {cma_in:g} CMAs lie outside 1-50" if extra_t else ""),
            extra_t, PREFIX + "hpom_throughput_ceiling_messages_per_second", comparison))
    return out


def _vhi(samples: Samples) -> list[dict]:
    out = []
    per_cpu = {_key(lab): v for lab, v in samples.get("middleware_vhi_sessions_per_cpu", [])}
    sessions = {_key(lab): v for lab, v in samples.get("middleware_vhi_sessions", [])}
    for labels, cpus in samples.get("middleware_vhi_session_server_cpus", []):
        key = _key(labels)
        if key in per_cpu:
            headroom = t.SESSIONS_PER_CPU_LIMIT - per_cpu[key]
            out.append(_forecast(
                "vhi_session_headroom_per_cpu", "vhi", _target(labels), "Session headroom per CPU", headroom,
                "sessions", {"sessions_per_cpu": per_cpu[key], "sessions": sessions.get(key, 0.0), "cpus": cpus},
                t.CONCURRENT_SESSIONS, f"the note's {t.SESSIONS_PER_CPU_LIMIT:g} concurrent sessions per CPU",
                False, PREFIX + "vhi_session_headroom_per_cpu",
                f"{per_cpu[key]:.0f} sessions per CPU against {t.SESSIONS_PER_CPU_LIMIT:g}: room for about "
                f"{max(headroom, 0) * cpus:.0f} more sessions on {cpus:g} CPUs"))
        gain, extra = VHI_DOUBLING_GAIN.at(cpus)
        out.append(_forecast(
            "vhi_cpu_doubling_gain", "vhi", _target(labels), "Gain from doubling the session server's CPUs", gain,
            "ratio", {"cpus": cpus}, t.PROCESSORS,
            "doubling from 1, 2 and 4 CPUs: 75 %, 38 %, 14 %; more than 4 physical cores not recommended"
            + ("; outside 1-4 CPUs the nearest figure is used" if extra else ""),
            extra, PREFIX + "vhi_cpu_doubling_gain_ratio",
            f"{cpus:g} -> {2 * cpus:g} CPUs: about {gain * 100:.0f} % more throughput"))
    return out


def _ibmmq(samples: Samples) -> list[dict]:
    running = [lab for lab, v in samples.get("ibmmq_qmgr_status", []) if v == 2]
    if not running:
        return []
    idle = [v for lab, v in samples.get("middleware_host_cpu_mode_ratio", []) if lab.get("mode") == "idle"]
    value, extra = MQ_ADDED_QMGR_GAIN.at(idle[0]) if idle else (None, False)
    inputs = {"running_qmgrs": float(len(running)), **({"cpu_idle_ratio": idle[0]} if idle else {})}
    lo, hi = MQ_ADDED_QMGR_GAIN.lo * 100, MQ_ADDED_QMGR_GAIN.hi * 100
    comparison = (f"observed CPU idle {idle[0] * 100:.0f} %: one more queue manager adds about {value * 100:.0f} % "
                  "throughput in the report's CPU-bound hub" if idle else
                  f"CPU idle is a rate here: query {PREFIX}ibmmq_added_qmgr_throughput_gain_ratio")
    return [_forecast(
        "ibmmq_added_qmgr_throughput_gain", "ibmmq", "local", "Throughput gain per added queue manager", value,
        "ratio", inputs, t.Source(t.MQSI, "Test Case 2, Figures 4-5"),
        f"Test Case 2 box P1, one rules engine: CPU idle {lo:g}-{hi:g} % (1-10 queue managers); Test Cases 3-5 "
        "(disk-bound M hub, separate disks) are kept in the table module" + ("; outside, the end value" if extra
                                                                             else ""),
        extra, PREFIX + "ibmmq_added_qmgr_throughput_gain_ratio", comparison)]


SYSTEMS: tuple[Callable[[Samples], list[dict]], ...] = (_hpom, _vhi, _ibmmq)


def evaluate(scheduler: Any) -> list[dict]:
    """The forecasts for the scheduler's last snapshot (see the module docstring), one dict per forecast and
    target; a system whose inputs are not in the snapshot contributes nothing."""
    samples = _snapshot(scheduler)
    return [item for system in SYSTEMS for item in system(samples)]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    text = render_rules()
    if argv == ["--check"]:
        current = RULES_FILE.read_text() if RULES_FILE.exists() else ""
        if current != text:
            print(f"{RULES_FILE} is stale: run python -m exporter.advisor.forecasts", file=sys.stderr)
            return 1
        return 0
    RULES_FILE.write_text(text)
    print(f"wrote {RULES_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
