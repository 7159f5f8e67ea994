#!/usr/bin/env python3
"""Build the middleware-exporter Grafana dashboards with grafana-foundation-sdk 0.0.21.

    python dashboards/build.py           # write mixin/dashboards/sources/<uid>.json and dashboards/.lint
    python dashboards/build.py --check   # exit 1 if a file on disk differs from what would be written
    python -m tools.mixin                # then: the mixin renders dashboards/<uid>.json with its configuration

Every panel uses the ``${datasource}`` variable and filters every selector on ``job=~"$job", instance=~"$instance"``
(the job variable's "All" is the mixin's middlewareSelector, ``job=~"middleware.*"``). The guide rows' figures of
``docs/sources.md`` are drawn as dashed reference lines: the ``middleware:threshold:*`` series of the alert rules
where the figure has one (so a changed threshold moves the line), otherwise as a constant in the panel's thresholds
(dashed, named in the description). Panel descriptions name the guide row and cite its document by title and
section/table (docs/sources.md lists them). `grafana/dashboard-linter lint --strict` reports nothing on the output;
the exclusions it needs are written to dashboards/.lint with their reasons (tests/alerting/test_dashboards.py runs it).
The status tables' value mappings show the codes and words the systems declare (exporter/systems/ibmmq/model.py and
states.py, exporter/systems/hpom/parse.py), so that this file spells no status code of its own.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import warnings
from pathlib import Path
from typing import Mapping, NamedTuple

HERE = Path(__file__).resolve().parent
# the exporter beside this file, whose declared status codes and words the value mappings show
if str(HERE.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent))

from exporter.systems.hpom.parse import PROCESS_STATE_WORDS  # noqa: E402
from exporter.systems.ibmmq.model import (  # noqa: E402
    CHANNEL_STATUS_CODES,
    CHANNEL_STATUS_SQUASH_CODES,
    SERVICE_STATUS_CODES,
)
from exporter.systems.ibmmq.states import STATUS_WORDS as QMGR_STATUS_WORDS  # noqa: E402

with warnings.catch_warnings():
    # The v1 dashboard builder warns at import time that dashboardv2 is preferred; v1 is what Grafana's
    # file provisioning and the sidecar load, so it is the one used here.
    warnings.simplefilter("ignore", DeprecationWarning)
    from grafana_foundation_sdk.builders import common as cb
    from grafana_foundation_sdk.builders import dashboard as db
    from grafana_foundation_sdk.builders import prometheus as prom
    from grafana_foundation_sdk.builders import table, timeseries
    from grafana_foundation_sdk.cog.encoder import JSONEncoder
    from grafana_foundation_sdk.models import common
    from grafana_foundation_sdk.models import dashboard as dm
    from grafana_foundation_sdk.models import prometheus as prom_models

GUIDE = "docs/sources.md"
# The source documents, cited by title (docs/sources.md gives publisher, version and date).
DOC_HPOM = "HP Operations Manager for UNIX 8.21/8.30 Performance Guide"
DOC_ORACLE = "Oracle 10g on HP-UX and IBM System Storage N series"
DOC_VHI = "Verastream Host Integrator Server Performance (Technical Note 10087)"
DOC_MQSI = "MQSeries Integrator for Sun Solaris v1.1: Maximizing persistent message throughput"
DOC_DOMINO = "Optimizing server performance: CPU scalability"
DS = common.DataSourceRef(type_val="prometheus", uid="${datasource}")
# The mixin's middlewareSelector (mixin/config.libsonnet): both documented scrape jobs, not IBM's own MQ exporter
# (same ibmmq_* names) scraped under another job. It is the job variable's "All".
MIDDLEWARE_JOBS = "middleware.*"
# Every selector's filter (dashboard-linter's target-job and target-instance rules want exactly these matchers).
INST = 'job=~"$job", instance=~"$instance"'
RI = "$__rate_interval"
# A reference line drawn from a threshold series of the alert rules (alerts/<system>.yml), possibly scaled to the
# panel's unit: "middleware:threshold:x", "1000 * middleware:threshold:x", "1 - middleware:threshold:x".
REFERENCE_RE = re.compile(r"^(?:[0-9.]+ \* |1 - )?middleware:threshold:([a-z0-9_]+)$")

# Value mappings for status tables.
UP_MAPPING = dm.ValueMap(options={
    "0": dm.ValueMappingResult(text="not running / no", color="red", index=0),
    "1": dm.ValueMappingResult(text="running / yes", color="green", index=1),
})


def status_mapping(words: Mapping[int, str], colors: Mapping[int, str]) -> dm.ValueMap:
    """The value mapping of a status metric: each code (in order) with the word its system declares for it
    (exporter/systems/...) and a colour of this dashboard."""
    return dm.ValueMap(options={str(code): dm.ValueMappingResult(text=words[code], color=colors[code], index=index)
                                for index, code in enumerate(sorted(words))})


def code_words(codes: Mapping[str, int]) -> dict[int, str]:
    """An MQ status table (word -> code, exporter/systems/ibmmq/model.py) as code -> word in lower case."""
    return {code: word.lower() for word, code in codes.items()}


# middleware_hpom_server_process_up: 0 down, 1 running, 2 in transition, 3 stopped on purpose (expected_stopped).
HPOM_PROCESS_MAPPING = status_mapping(PROCESS_STATE_WORDS, {0: "red", 1: "green", 2: "yellow", 3: "blue"})
FOLLOWS_MAPPING = dm.ValueMap(options={
    "0": dm.ValueMappingResult(text="does not follow the guide", color="orange", index=0),
    "1": dm.ValueMappingResult(text="follows the guide", color="green", index=1),
})
# ibmmq_qmgr_status (MQQMSTA codes, 0 not available).
QMGR_MAPPING = status_mapping(QMGR_STATUS_WORDS, {0: "red", 1: "yellow", 2: "green", 3: "orange", 4: "blue"})
# ibmmq_channel_status (MQCHS codes).
CHANNEL_STATUS_MAPPING = status_mapping(code_words(CHANNEL_STATUS_CODES), {
    0: "text", 1: "yellow", 2: "yellow", 3: "green", 4: "yellow", 5: "orange", 6: "red", 7: "yellow", 8: "orange",
    9: "orange", 13: "yellow", 14: "yellow"})
# ibmmq_qmgr_command_server_status / _channel_initiator_status (MQSVC_STATUS).
SERVICE_MAPPING = status_mapping(code_words(SERVICE_STATUS_CODES),
                                 {0: "red", 1: "yellow", 2: "green", 3: "orange", 4: "orange"})
# ibmmq_channel_status_squash.
CHANNEL_MAPPING = status_mapping(code_words(CHANNEL_STATUS_SQUASH_CODES), {0: "red", 1: "yellow", 2: "green"})


def ref(threshold: str, legend: str, expr: str = "{}") -> tuple[str, str]:
    """A reference line from the threshold series middleware:threshold:<threshold> (alerts/<system>.yml, values in
    mixin/config.libsonnet); `expr` scales it to the panel's unit, e.g. "1000 * {}" for milliseconds."""
    return (expr.format(f"middleware:threshold:{threshold}"), legend)


class Const(NamedTuple):
    """A guide figure no threshold series carries (a measurement such as a throughput): a dashed threshold line
    of the panel, named in its description."""
    value: float
    label: str


def is_reference(expr: str) -> bool:
    return bool(REFERENCE_RE.match(expr.strip()))


def _targets(targets: list[tuple[str, str]], instant: bool) -> list[prom.Dataquery]:
    out = []
    for n, (expr, legend) in enumerate(targets):
        q = prom.Dataquery().expr(expr).legend_format(legend).ref_id(chr(ord("A") + n)).datasource(DS)
        if instant:
            q = q.instant().format(prom_models.PromQueryFormat.TABLE)
        out.append(q)
    return out


def ts(title: str, unit: str, description: str, targets: list[tuple[str, str] | Const], *, w: int = 12,
       h: int = 8, min_val: float | None = None, max_val: float | None = None, axis_label: str | None = None,
       stack: bool = False) -> timeseries.Panel:
    constants = [t for t in targets if isinstance(t, Const)]
    targets = [t for t in targets if not isinstance(t, Const)]
    if constants:
        description += " Dashed threshold lines (guide figures without a threshold series): " + "; ".join(
            c.label for c in constants) + "."
    p = (timeseries.Panel().title(title).description(description).unit(unit).datasource(DS).span(w).height(h)
         .targets(_targets(targets, instant=False))
         .legend(cb.VizLegendOptions().show_legend(True).display_mode(common.LegendDisplayMode.TABLE)
                 .placement(common.LegendPlacement.BOTTOM).calcs(["lastNotNull", "max"]))
         .tooltip(cb.VizTooltipOptions().mode(common.TooltipDisplayMode.MULTI).sort(common.SortOrder.DESCENDING))
         .fill_opacity(0 if not stack else 20).line_width(1))
    if min_val is not None:
        p = p.min(min_val)
    if max_val is not None:
        p = p.max(max_val)
    if axis_label:
        p = p.axis_label(axis_label)
    if stack:
        p = p.stacking(cb.StackingConfig().mode(common.StackingMode.NORMAL))
    if constants:
        steps = [dm.Threshold(value=None, color="transparent")]
        steps += [dm.Threshold(value=c.value, color="red") for c in sorted(constants, key=lambda c: c.value)]
        p = (p.thresholds(db.ThresholdsConfig().mode(dm.ThresholdsMode.ABSOLUTE).steps(steps))
             .thresholds_style(cb.GraphThresholdsStyleConfig().mode(common.GraphThresholdsStyleMode.DASHED)))
    for n, (expr, _legend) in enumerate(targets):
        if is_reference(expr):
            # Guide figures: dashed red line, never stacked.
            p = p.override_by_query(chr(ord("A") + n), [
                dm.DynamicConfigValue(id_val="custom.lineStyle", value={"dash": [10, 10], "fill": "dash"}),
                dm.DynamicConfigValue(id_val="color", value={"fixedColor": "red", "mode": "fixed"}),
            ] + ([dm.DynamicConfigValue(id_val="custom.stacking", value={"group": "ref", "mode": "none"})]
                 if stack else []))
    return p


def tbl(title: str, unit: str, description: str, targets: list[tuple[str, str]], *, w: int = 12, h: int = 8,
        mappings: list | None = None, merge: bool = False,
        column_units: dict[str, str] | None = None, sort_by: tuple[str, bool] | None = None,
        rename: dict[str, str] | None = None) -> table.Panel:
    p = (table.Panel().title(title).description(description).unit(unit).datasource(DS).span(w).height(h)
         .targets(_targets(targets, instant=True)))
    if sort_by is not None:  # (column, descending)
        p = p.sort_by([cb.TableSortByFieldState().display_name(sort_by[0]).desc(sort_by[1])])
    if mappings and merge:
        # Merged instant queries give one column per query ("Value #A", ...): map only the first one.
        p = p.override_by_name("Value #A", [dm.DynamicConfigValue(id_val="mappings", value=mappings)])
    elif mappings:
        p = p.mappings(mappings)
    for column, column_unit in (column_units or {}).items():
        p = p.override_by_name(column, [dm.DynamicConfigValue(id_val="unit", value=column_unit)])
    if merge:
        p = p.with_transformation(dm.DataTransformerConfig(id_val="merge", options={}))
    for column, name in (rename or {}).items():  # column headers ("Value #B" -> "collection age")
        p = p.override_by_name(column, [dm.DynamicConfigValue(id_val="displayName", value=name)])
    p = p.with_transformation(dm.DataTransformerConfig(
        id_val="organize", options={"excludeByName": {"Time": True, "__name__": True, "job": True}}))
    return p


def datasource_variable() -> db.DatasourceVariable:
    return db.DatasourceVariable("datasource").label("Data source").type("prometheus")


def query_variable(name: str, label: str, query: str, all_value: str | None = None,
                   default: list[str] | None = None) -> db.QueryVariable:
    v = (db.QueryVariable(name).label(label).datasource(DS).query(query).definition(query)
         .multi(True).include_all(True).refresh(dm.VariableRefresh.ON_TIME_RANGE_CHANGED)
         .sort(dm.VariableSort.ALPHABETICAL_ASC))
    if default:
        v = v.current(dm.VariableOption(selected=True, text=default, value=default))
    if all_value is not None:
        # "All" as a regex of its own rather than the list of the options Grafana loaded.
        v = v.all_value(all_value).current(dm.VariableOption(selected=True, text=["All"], value=["$__all"]))
    return v


def alerts_annotation() -> db.AnnotationQuery:
    return (db.AnnotationQuery().name("Firing alerts").datasource(DS).enable(True).icon_color("red")
            # Not on $job: an alert whose rule aggregates keeps no job label. (Annotations are not linted.)
            .expr('ALERTS{alertstate="firing", instance=~"$instance"}').step("60s")
            .title_format("{{alertname}}").text_format("{{instance}} {{severity}}"))


def dashboard(uid: str, title: str, description: str, panels: list[timeseries.Panel | table.Panel | str],
              extra_variables: list | None = None,
              tags: list[str] | None = None) -> dm.Dashboard:
    d = (db.Dashboard(title).uid(uid).description(description)
         .tags(["middleware-exporter"] + (tags or [])).timezone("browser").time("now-6h", "now").refresh("1m")
         .tooltip(dm.DashboardCursorSync.CROSSHAIR).readonly()
         .with_variable(datasource_variable())
         # "All" jobs is the mixin's selector; "All" instances is every instance of the jobs chosen.
         .with_variable(query_variable("job", "Job",
                                       f'label_values(middleware_exporter_build_info{{job=~"{MIDDLEWARE_JOBS}"}}, job)',
                                       all_value=MIDDLEWARE_JOBS))
         .with_variable(query_variable("instance", "Instance",
                                       'label_values(middleware_exporter_build_info{job=~"$job"}, instance)',
                                       all_value=".+"))
         .annotation(alerts_annotation())
         # one drop-down to every middleware dashboard, keeping the time range and the variables
         .link(db.DashboardLink("Middleware dashboards").type(dm.DashboardLinkType.DASHBOARDS)
               .tags(["middleware-exporter"]).as_dropdown(True).include_vars(True).keep_time(True)
               .icon("external link")))
    for v in extra_variables or []:
        d = d.with_variable(v)
    # Lay panels out left to right, wrapping to a new row when the next one does not fit in 24 columns (the
    # SDK's own placement lets a full-width panel start mid-row). A string in `panels` starts an (expanded) row.
    x = y = row_h = 0
    for n, p in enumerate(panels, start=1):
        if isinstance(p, str):
            y, x, row_h = y + row_h, 0, 0
            d = d.with_row(db.Row(p).id(n).grid_pos(dm.GridPos(h=1, w=24, x=0, y=y)))
            y += 1
            continue
        grid = p.id(n).build().grid_pos
        if x + grid.w > 24:
            x, y, row_h = 0, y + row_h, 0
        grid.x, grid.y = x, y
        x, row_h = x + grid.w, max(row_h, grid.h)
        d = d.with_panel(p)
    return d.build()


# --------------------------------------------------------------------------------------------------------------
# HPOM management server
# --------------------------------------------------------------------------------------------------------------

def hpom() -> dm.Dashboard:
    q_bytes = f"middleware_hpom_queue_size_bytes{{{INST}}}"
    q_entries = f"middleware_hpom_queue_entries{{{INST}}}"
    panels = [
        "Queues",
        ts("Server queue file sizes (msgmgrq and others)", "bytes",
           f"{GUIDE} HPOM-QUEUE ({DOC_HPOM}, Test: Message Storm): in a storm of 100,000 messages at 360 msg/s the "
           "msgmgrq drained at 272 msg/s on average and took 412 s to empty. File size of every queue in the "
           "server's queue directory (HPOM also changes it when it reorganises the file).",
           [(q_bytes, "{{instance}} {{queue}}")]),
        ts("Server queue entries (site counting command)", "short",
           f"{GUIDE} HPOM-QUEUE ({DOC_HPOM}, Test: Message Storm): entries per queue where queue_count_command is "
           "configured, and msgmgrq predicted 412 s ahead (the storm's recovery time) at the 10-minute trend.",
           [(q_entries, "{{instance}} {{queue}}"),
            (f'predict_linear(middleware_hpom_queue_entries{{queue="msgmgrq", {INST}}}[10m], 412)',
             "{{instance}} msgmgrq predicted in 412 s")]),
        ts("Queue growth (deriv over 10 m)", "Bps",
           f"{GUIDE} HPOM-QUEUE ({DOC_HPOM}, Test: Message Storm): a queue that keeps growing means the server "
           "processes (310 msg/s, 410 with OPCMSGM_USE_GUI_THREAD) fall behind the agents (up to 500 msg/s). "
           "Positive = growing.",
           [(f"deriv({q_bytes}[10m])", "{{instance}} {{queue}} bytes/s")]),
        ts("Queue drain-time estimate", "s",
           f"{GUIDE} HPOM-QUEUE ({DOC_HPOM}, Test: Message Storm): seconds until the queue is empty at its current "
           "drain rate (size / -deriv, shown only while it shrinks), against the storm's 412 s recovery.",
           [(f"({q_entries} / -deriv({q_entries}[5m])) > 0", "{{instance}} {{queue}} (entries)"),
            (f"({q_bytes} / -deriv({q_bytes}[5m])) > 0", "{{instance}} {{queue}} (file size)"),
            ref("hpom_queue_recovery_seconds", "guide: storm recovery time")]),
        "Throughput, active and acknowledged messages",
        ts("Messages received per second", "mps",
           f"{GUIDE} HPOM-THROUGHPUT ({DOC_HPOM}, Management Server Performance; Test: Suppressing Message "
           "Duplicates, Tables 12-13; Test: "
           f"Message Throughput on IP vs. non-IP Nodes, Table 28): reference rates "
           "120 msg/s (8.10 PA-RISC), 226 msg/s (8.30), 272 msg/s (storm average), 333 msg/s (8.21 IA64), 410 "
           "msg/s (with OPCMSGM_USE_GUI_THREAD, Table 1). Received messages in the query window / window length "
           "(recording rule instance:middleware_hpom_received_messages:per_second; the rates are the "
           "middleware:threshold:hpom_reference_rate_* parameters).",
           [(f"middleware_hpom_window_received_messages{{{INST}}} / middleware_hpom_window_seconds{{{INST}}}",
             "{{instance}} received msg/s"),
            ref("hpom_reference_rate_810_parisc", "guide: 8.10 PA-RISC rate"),
            ref("hpom_reference_rate_830_ia64", "guide: 8.30 reference rate"),
            ref("hpom_reference_rate_storm_average", "guide: storm average rate"),
            ref("hpom_reference_rate_821_ia64", "guide: 8.21 IA64 rate"),
            Const(410, "410 msg/s with OPCMSGM_USE_GUI_THREAD (Table 1)")], w=24),
        ts("Active messages", "short",
           f"{GUIDE} HPOM-ACTIVE ({DOC_HPOM}, Test: Varying the Number of Managed Nodes and Messages, Tables 16-17): "
           "Java GUI start-up slows significantly from 50,000 active "
           "messages; keep them low with duplicate suppression and correlation.",
           [(f"sum without (severity) (middleware_hpom_active_messages{{{INST}}})", "{{instance}} active"),
            (f"sum without (severity) (middleware_hpom_active_messages_without_key{{{INST}}})",
             "{{instance}} active without message key"),
            ref("hpom_active_messages", "guide: active messages")]),
        ts("Acknowledged messages (bulk) and acknowledged-not-moved", "short",
           f"{GUIDE} HPOM-ACK ({DOC_HPOM}, Test: Message Acknowledgment, Tables 21-22): acknowledge no more than "
           "5,000 messages at a time (10,000 acks with 5 GUIs drove disk utilisation to 97 %).",
           [(f"middleware_hpom_window_acknowledged_messages{{{INST}}}", "{{instance}} acknowledged in window"),
            (f"sum without (severity) (middleware_hpom_acknowledged_active_messages{{{INST}}})",
             "{{instance}} acknowledged, not yet moved to history"),
            ref("hpom_ack_bulk", "guide: acknowledge bulk")]),
        ts("Custom message attributes per message", "short",
           f"{GUIDE} HPOM-CMA ({DOC_HPOM}, Test: Varying the Number of CMAs, Tables 18-20): keep CMAs at or below 10 "
           "per message (212.8 / 192.3 / "
           "112.4 msg/s at 1 / 10 / 50 CMAs).",
           [(f"middleware_hpom_cma_max_per_message{{{INST}}}", "{{instance}} max CMAs on one message"),
            (f"middleware_hpom_messages_over_cma_limit{{{INST}}}", "{{instance}} messages over the limit"),
            ref("hpom_cma_per_message", "guide: CMAs per message")]),
        "Java GUIs",
        ts("Java GUI sessions (opcuiwww) and CPU count", "short",
           f"{GUIDE} HPOM-GUI ({DOC_HPOM}, Test: Varying the Number of Active Java GUIs): one opcuiwww per Java GUI "
           "login; throughput falls faster once there are more busy GUIs than free CPUs.",
           [(f'sum by (instance) (middleware_process_group_processes{{group="hpom_java_gui", {INST}}})',
             "{{instance}} opcuiwww sessions"),
            (f"middleware_hpom_gui_display_queues{{{INST}}}", "{{instance}} display queues (dispq)"),
            (f"middleware_host_cpus{{{INST}}}", "{{instance}} CPUs")]),
        ts("opcuiwww CPU against the host's CPUs", "short",
           f"{GUIDE} HPOM-GUI ({DOC_HPOM}, Test: Varying the Number of Active Java GUIs): CPU seconds per second "
           "(1 = one CPU busy) of all opcuiwww processes, the CPU count and the idle CPUs.",
           [(f'sum by (instance) (rate(middleware_process_group_cpu_seconds_total'
             f'{{group="hpom_java_gui", {INST}}}[{RI}]))',
             "{{instance}} opcuiwww CPUs busy"),
            (f'sum by (instance) (rate(middleware_host_cpu_seconds_total{{mode="idle", {INST}}}[{RI}]))',
             "{{instance}} idle CPUs"),
            (f"middleware_host_cpus{{{INST}}}", "{{instance}} CPUs")]),
        "Server processes and variables",
        tbl("Server process status (opcsv / ovc)", "none",
            f"{GUIDE} HPOM-QUEUE and HPOM-THROUGHPUT ({DOC_HPOM}): the server processes (opcmsgm, opcmsgr, ...) must "
            "run for the queues to drain. As opcsv -status / ovc -status report them: 1 running, 0 down, 2 "
            "starting or stopping, 3 stopped on purpose (the collector's expected_stopped).",
            [(f"middleware_hpom_server_process_up{{{INST}}}", "{{source}} {{process}}")],
            mappings=[HPOM_PROCESS_MAPPING]),
        tbl("Server variables: follow the guide (Table 1)", "none",
            f"{GUIDE} HPOM-VAR-GUITHREAD (OPCMSGM_USE_GUI_THREAD TRUE: 310 -> 410 msg/s), HPOM-VAR-ACKLIMIT "
            "(OPC_DIRECT_ACKN_LIMIT 0), HPOM-VAR-COMMIT (OPC_UPDWN_COMMIT_COUNT 1000: 367 -> 518 msg/s), "
            f"HPOM-AUTOKEYS ({DOC_HPOM}, Management Server Configuration Variables, Table 1); from 8.22 "
            "OPCUIWWW_BULK_MODE and OPCUIWWW_NEW_MSG_NO_DB TRUE, the latter with OPCMSGM_USE_GUI_THREAD NO_RPC (Test: "
            "Varying the Number of Active Java GUIs, footnote 4). Value A = follows the guide (1/0), B = numeric "
            "value.",
            [(f"middleware_hpom_server_variable_follows_guide{{{INST}}}", "{{variable}}"),
             (f"middleware_hpom_server_variable_value{{{INST}}}", "{{variable}}")],
            mappings=[FOLLOWS_MAPPING], merge=True),
        "History download and MoM forwarding",
        ts("History messages", "short",
           f"{GUIDE} HPOM-HISTDL ({DOC_HPOM}, Test: Downloading 100,000 History Messages, Tables 26-27): messages in "
           "the history table; a download removes them "
           "at 400-500 msg/s with 5 x 100 MB redo groups and commit count 1000 (37.5 msg/s with 3 x 20 MB).",
           [(f"middleware_hpom_history_messages{{{INST}}}", "{{instance}} history messages")]),
        ts("History download rate", "mps",
           f"{GUIDE} HPOM-HISTDL ({DOC_HPOM}, Test: Downloading 100,000 History Messages, Tables 26-27): -deriv of "
           "the history table over 30 minutes (the count is read every 5 minutes; recording rule "
           "instance:middleware_hpom_history_download:per_second), 0 while it does not fall; guide 400-500 msg/s "
           "with 5 x 100 MB redo groups and OPC_UPDWN_COMMIT_COUNT 1000, 37.5 msg/s with 3 x 20 MB groups.",
           [(f"clamp_min(-deriv(middleware_hpom_history_messages{{{INST}}}[30m]), 0)",
             "{{instance}} download msg/s"),
            ref("hpom_history_download_rate_small_redo", "guide: 3 x 20 MB redo groups"),
            ref("hpom_history_download_rate_tuned", "guide: tuned history download"),
            Const(500, "500 msg/s, the tuned history download's upper end")]),
        ts("MoM acknowledgement sync estimate per target server", "s",
           f"{GUIDE} HPOM-MOM ({DOC_HPOM}, Test: MoM Message Forwarding, Table 15): synchronising acknowledgements "
           "to the other management servers is linear, 10-12 s per 1,000. Estimate for the forwarded messages "
           "acknowledged in the query window, per target server: Table 15's measured rows interpolated (recording "
           "rule middleware:forecast:hpom_mom_ack_sync_eta_seconds, docs/forecasts.md) and at the linear 10 s per "
           "1,000; compare with the window length: a longer estimate means the acknowledgements come faster than "
           "they can be passed on, and the forwmgrq queue file (panel Server queue file sizes) grows.",
           [(f"middleware:forecast:hpom_mom_ack_sync_eta_seconds{{{INST}}}",
             "{{instance}} -> {{target}} Table 15 forecast"),
            (f"middleware_hpom_forwarded_window_acknowledged_messages{{{INST}}} * 10 / 1000",
             "{{instance}} -> {{target}} at 10 s per 1,000"),
            (f"middleware_hpom_window_seconds{{{INST}}}", "{{instance}} window length")]),
        ts("Messages received against MoM forwarding", "mps",
           f"{GUIDE} HPOM-MOM ({DOC_HPOM}, Test: MoM Message Forwarding, Table 14): forwarding halves the source "
           "server's throughput, 227 msg/s without and 120 msg/s with forwarding (10,000 messages, one Java GUI "
           "per server). Received messages per second, and forwarded messages still active per target server.",
           [(f"middleware_hpom_window_received_messages{{{INST}}} / middleware_hpom_window_seconds{{{INST}}}",
             "{{instance}} received msg/s"),
            (f"middleware_hpom_forwarded_active_messages{{{INST}}}", "{{instance}} -> {{target}} forwarded, active"),
            ref("hpom_mom_source_rate_without_forwarding", "guide: source without forwarding"),
            ref("hpom_mom_source_rate_with_forwarding", "guide: source with forwarding")]),
        "Service trees, MSI programs and sources",
        ts("Service tree depth", "short",
           f"{GUIDE} HPOM-SLOD ({DOC_HPOM}, Test: Varying the Shape and Size of the Service Tree, Tables 24-25): "
           "levels below the top service of the deepest service tree; above 5 use Service Load on Demand (without "
           "it the Java GUI took 6-7 s to start at depth 5 and 272-331 s at depth 10). Needs the collector's "
           "service_table (HPOM's service tables are not public).",
           [(f"middleware_hpom_service_tree_depth{{{INST}}}", "{{instance}} deepest service tree"),
            ref("hpom_service_tree_depth", "guide: levels without Service Load on Demand")]),
        ts("MSI programs running", "short",
           f"{GUIDE} HPOM-MSI ({DOC_HPOM}, Test: Sending Messages to MSI Programs): more than five simultaneous MSI "
           "programs decrease message throughput.",
           [(f"middleware_hpom_msi_programs_running{{{INST}}}", "{{instance}} MSI programs"),
            ref("hpom_msi_programs", "guide: MSI programs")]),
        tbl("HPOM sources", "none",
            f"{GUIDE} HPOM-* ({DOC_HPOM}): which parts of the hpom collector are present and were read successfully "
            "(A = present, B = success).",
            [(f"middleware_hpom_source_present{{{INST}}}", "{{source}}"),
             (f"middleware_hpom_source_success{{{INST}}}", "{{source}}")],
            mappings=[UP_MAPPING], merge=True, w=24, h=6),
    ]
    return dashboard("middleware-hpom", "Middleware: HPOM management server",
                     "HPOM 8.x management server: queues, throughput, active/acknowledged messages, GUIs, "
                     f"server processes and variables (guide rows HPOM-* of docs/sources.md; {DOC_HPOM}).", panels,
                     tags=["hpom"])


# --------------------------------------------------------------------------------------------------------------
# Oracle
# --------------------------------------------------------------------------------------------------------------

def oracle_health(F: str) -> list:
    """Space, archiving, backups, Data Guard, ASM, internal errors and restarts (issue 29): the figures of the
    MiddlewareOracle* health alerts, each panel naming its runbook section (operational: no guide row)."""
    rb = f"{RUNBOOKS}/oracle.md#"
    perm = f'{F}, contents="PERMANENT"'
    used, mx = (f"middleware_oracle_tablespace_used_bytes{{{perm}}}",
                f"middleware_oracle_tablespace_max_bytes{{{perm}}}")
    ts_legend = "{{instance}} {{database}} {{container}} {{tablespace}}"
    return [
        "Health: space, archiving, backups, standby",
        ts("Tablespace used share of its autoextend maximum", "percentunit",
           f"{OPERATIONAL}: used bytes over the size the files may grow to (sum of GREATEST(bytes, maxbytes)), "
           "PERMANENT tablespaces (UNDO counts expired undo, TEMP is transient: not alerted). Runbooks: "
           f"{rb}middlewareoracletablespacealmostfull, {rb}middlewareoracletablespacefillingup.",
           [(f"{used} / {mx}", ts_legend),
            ref("oracle_tablespace_almost_full_ratio", "guide: none, almost full"),
            ref("oracle_tablespace_filling_up_critical_ratio", "guide: none, filling up (critical) above"),
            ref("oracle_tablespace_filling_up_warning_ratio", "guide: none, filling up (warning) above")],
           min_val=0, max_val=1),
        ts("Tablespace used bytes, 24 h / 4 h prediction and maximum", "bytes",
           f"{OPERATIONAL}: used bytes, where the trend of the last 6h puts them in 24 h and 4 h (predict_linear, "
           "as MiddlewareOracleTablespaceFillingUp: a prediction above the maximum fires it) and the autoextend "
           f"maximum. Runbook: {rb}middlewareoracletablespacefillingup.",
           [(used, f"{ts_legend} used"),
            (f"predict_linear({used}[6h], 24 * 3600)", f"{ts_legend} predicted in 24 h"),
            (f"predict_linear({used}[6h], 4 * 3600)", f"{ts_legend} predicted in 4 h"),
            (mx, f"{ts_legend} maximum")], min_val=0),
        ts("Fast recovery area used, net of reclaimable", "percentunit",
           f"{OPERATIONAL}: (used - reclaimable) / db_recovery_file_dest_size; full, the archiver stops. "
           f"Runbook: {rb}middlewareoraclerecoveryareaalmostfull.",
           [(f"(middleware_oracle_fra_used_bytes{{{F}}} - middleware_oracle_fra_reclaimable_bytes{{{F}}})"
             f" / (middleware_oracle_fra_limit_bytes{{{F}}} > 0)", "{{instance}} {{database}} {{name}}"),
            ref("oracle_fra_used_warning_ratio", "guide: none, warning"),
            ref("oracle_fra_used_critical_ratio", "guide: none, critical")], min_val=0, max_val=1),
        tbl("Archiver and archive destinations", "none",
            f"{OPERATIONAL}: every configured archive destination per instance with its status and binding "
            "(a MANDATORY one in ERROR/FULL/DISABLED/BAD PARAM, or the archiver FAILED, stops the database), and the "
            f"error text. Runbooks: {rb}middlewareoraclearchiverstuck, {rb}middlewareoraclearchivedestinationerror.",
            [(f"middleware_oracle_archive_dest_status{{{F}}}", "{{database}} {{inst_id}} {{dest_name}}"),
             (f"middleware_oracle_archiver_failed{{{F}}}", "{{database}} {{inst_id}}"),
             (f"middleware_oracle_archive_dest_error{{{F}}}", "{{database}} {{inst_id}} {{dest_name}}")]),
        tbl("RMAN backups: age of the last success and newest status", "s",
            f"{OPERATIONAL}: seconds since the last successful RMAN backup per input type (alert over "
            "oracle_backup_*_max_age_seconds: DB FULL 8 d, DB INCR 26 h, ARCHIVELOG 14 h) and the newest job's "
            f"status. Runbooks: {rb}middlewareoraclebackuptooold, {rb}middlewareoraclebackupfailed, "
            f"{rb}middlewareoraclebackupmissing.",
            [(f"middleware_oracle_backup_last_success_age_seconds{{{F}}}", "{{database}} {{input_type}}"),
             (f"middleware_oracle_backup_last_status{{{F}}}", "{{database}} {{input_type}} {{status}}")]),
        ts("Data Guard lag (standby)", "s",
           f"{OPERATIONAL}: transport and apply lag of each standby (v$dataguard_stats; no rows on a primary). "
           f"Runbook: {rb}middlewareoraclestandbylaghigh.",
           [(f"middleware_oracle_dataguard_lag_seconds{{{F}}}", "{{instance}} {{database}} {{name}}"),
            ref("oracle_dataguard_transport_lag_seconds", "guide: none, transport lag"),
            ref("oracle_dataguard_apply_lag_seconds", "guide: none, apply lag")], min_val=0),
        ts("ASM disk group free beyond the mirror reserve", "percentunit",
           f"{OPERATIONAL}: (free - required_mirror_free) / total per disk group (negative: usable_file_mb "
           f"below 0). Runbook: {rb}middlewareoracleasmdiskgroupalmostfull.",
           [(f"(middleware_oracle_asm_diskgroup_free_bytes{{{F}}}"
             f" - middleware_oracle_asm_diskgroup_required_mirror_free_bytes{{{F}}})"
             f" / (middleware_oracle_asm_diskgroup_total_bytes{{{F}}} > 0)",
             "{{instance}} {{database}} {{diskgroup}} ({{type}})"),
            ref("oracle_asm_usable_ratio", "guide: none, almost full")]),
        tbl("ASM disk groups: usable file space and offline disks", "bytes",
            f"{OPERATIONAL}: usable_file_mb (after mirroring and the reserve; negative = redundancy at risk) and "
            f"offline disks. Runbooks: {rb}middlewareoracleasmdiskgroupalmostfull, "
            f"{rb}middlewareoracleasmdisksoffline.",
            [(f"middleware_oracle_asm_diskgroup_usable_file_bytes{{{F}}}", "{{database}} {{diskgroup}}"),
             (f"middleware_oracle_asm_diskgroup_offline_disks{{{F}}}", "{{database}} {{diskgroup}}")],
            merge=True, column_units={"Value #B": "none"}),
        ts("Internal errors in the alert log (ORA-00600 / ORA-07445)", "short",
           f"{OPERATIONAL}: ORA-00600 and ORA-07445 messages per interval from the alert log "
           f"(middleware_oracle_alert_errors_total). Runbook: {rb}middlewareoracleinternalerrors.",
           [(f'increase(middleware_oracle_alert_errors_total{{{F}, code=~"ORA-00600|ORA-07445"}}[{RI}])',
             "{{instance}} {{database}} {{code}}")], min_val=0),
        tbl("Instances and open state", "s",
            f"{OPERATIONAL}: uptime of each instance (a restart shows as a small figure), whether the database is "
            f"open, and its role. Runbooks: {rb}middlewareoracleinstancerestarted, "
            f"{rb}middlewareoracledatabasenotopen.",
            [(f"middleware_oracle_instance_uptime_seconds{{{F}}}", "{{database}} {{inst_id}}"),
             (f"middleware_oracle_database_open{{{F}}}", "{{database}}"),
             (f"middleware_oracle_database_info{{{F}}}", "{{database}} {{database_role}}")]),
    ]


def oracle() -> dm.Dashboard:
    F = f'{INST}, database=~"$database"'
    panels = [
        "Redo logs",
        ts("Redo log switches per hour", "short",
           f"{GUIDE} ORA-REDO ({DOC_HPOM}, Test: Message Storm, Interpretation; Test: Downloading 100,000 History "
           "Messages, Conclusions): redo "
           "switches cause throughput dips; 5 x 100 MB groups recommended. Rate of the log sequence x 3600, "
           "and v$log_history's count for the last hour.",
           [(f"3600 * rate(middleware_oracle_redo_log_switches_total{{{F}}}[{RI}])",
             "{{instance}} {{database}} thread {{thread}} (rate x 3600)"),
            (f"middleware_oracle_redo_log_switches_last_hour{{{F}}}",
             "{{instance}} {{database}} thread {{thread}} (v$log_history, last hour)")], w=24),
        ts("Redo groups per thread", "short",
           f"{GUIDE} HPOM-ORA and ORA-REDO ({DOC_HPOM}, RDBMS Installation, Table 6): 5 redo groups per thread "
           "(default 3).",
           [(f"count by (instance, database, thread) (middleware_oracle_redo_group_size_bytes{{{F}}})",
             "{{instance}} {{database}} thread {{thread}} groups"),
            Const(5, "5 redo groups per thread")], min_val=0),
        ts("Redo group size", "bytes",
           f"{GUIDE} HPOM-ORA and ORA-REDO ({DOC_HPOM}, RDBMS Installation, Table 6; Test: Downloading 100,000 "
           "History Messages, Tables 26-27): 100 MB per group (default 20 MB; "
           "3 x 20 MB gave a 37.5 msg/s history download).",
           [(f"middleware_oracle_redo_group_size_bytes{{{F}}}",
             "{{instance}} {{database}} thread {{thread}} group {{log_group}}"),
            Const(104857600, "100 MB per redo group")], min_val=0),
        ts("Redo groups by status", "short",
           f"{GUIDE} ORA-REDO ({DOC_HPOM}): many ACTIVE groups mean checkpoints lag behind the switches (log file "
           "switch (checkpoint incomplete) waits follow).",
           [(f"middleware_oracle_redo_groups{{{F}}}", "{{instance}} {{database}} {{status}}")], stack=True),
        ts("Log file switch waits per second", "ops",
           f"{GUIDE} ORA-REDO ({DOC_HPOM}; {DOC_ORACLE}): waits on 'log file switch%' events; any sustained rate "
           "means redo "
           "groups are too few or too small (guide: 5 x 100 MB).",
           [(f"rate(middleware_oracle_log_file_switch_waits_total{{{F}}}[{RI}])",
             "{{instance}} {{database}} {{event}}")]),
        ts("Log file switch wait time", "s",
           f"{GUIDE} ORA-REDO ({DOC_HPOM}; {DOC_ORACLE}): seconds waited per second on 'log file switch%' events, and "
           "the "
           "sessions waiting now.",
           [(f"rate(middleware_oracle_log_file_switch_wait_seconds_total{{{F}}}[{RI}])",
             "{{instance}} {{database}} {{event}} s/s"),
            (f"middleware_oracle_sessions_waiting_log_file_switch{{{F}}}",
             "{{instance}} {{database}} {{event}} sessions waiting")]),
        "Limits, parameters and guide checks",
        ts("Sessions and processes against limits", "short",
           f"{GUIDE} HPOM-ORA ({DOC_HPOM}, RDBMS Installation, Table 6): processes 200-500 for the HPOM database; "
           "current, highest since "
           "start and limit from v$resource_limit.",
           [(f"middleware_oracle_resource_current_utilization{{{F}}}",
             "{{instance}} {{database}} {{resource}} current"),
            (f"middleware_oracle_resource_max_utilization{{{F}}}",
             "{{instance}} {{database}} {{resource}} max since start"),
            (f"middleware_oracle_resource_limit{{{F}}}", "{{instance}} {{database}} {{resource}} limit"),
            Const(200, "HPOM processes at least 200"),
            Const(500, "HPOM processes up to 500")], w=24),
        tbl("Guide checks (middleware_oracle_follows_guide)", "none",
            f"{GUIDE} HPOM-ORA ({DOC_HPOM}, RDBMS Installation, Table 6: sga_target >= 350 MB, log_buffer 1.5-2 MB, 5 "
            "x 100 MB redo, "
            "processes 200-500, db_file_multiblock_read_count 32), ORA-DBWR (db_writer_processes >= cores), "
            "ORA-SGA (50-70 % of memory), ORA-REDO. A = follows (1/0), B = observed, C = threshold.",
            [(f"middleware_oracle_follows_guide{{{F}}}", "{{database}} {{check}}"),
             (f"middleware_oracle_guide_observed{{{F}}}", "{{database}} {{check}}"),
             (f"middleware_oracle_guide_threshold{{{F}}}", "{{database}} {{check}}")],
            mappings=[FOLLOWS_MAPPING], merge=True, w=24),
        tbl("Initialisation parameters", "none",
            f"{GUIDE} HPOM-ORA ({DOC_HPOM}, RDBMS Installation, Table 6), ORA-DBWR, ORA-SGA, ORA-NFS ({DOC_ORACLE}, "
            "Oracle tuning: filesystemio_options=directio): "
            "numeric parameter values (booleans 1/0); text parameters in the table beside.",
            [(f"middleware_oracle_parameter_value{{{F}}}", "{{database}} {{name}}")]),
        tbl("Text parameters", "none",
            f"{GUIDE} ORA-NFS ({DOC_ORACLE}, Oracle performance over NFS): filesystemio_options, disk_asynch_io and "
            "other text parameters, and whether they are the default.",
            [(f"middleware_oracle_parameter_info{{{F}}}", "{{database}} {{name}}")]),
        *oracle_health(F),
        "NFS, file systems and reachability",
        tbl("NFS mount option checks", "none",
            f"{GUIDE} ORA-NFS ({DOC_ORACLE}, HP-UX NFS configuration): rw,bg,hard,nointr,forcedirectio,proto=tcp,"
            "vers=3,rsize=32768,wsize=32768,timeo=600; direct I/O alone gave +482 %, all tuning +640 % "
            "(1,423 -> 10,531 OETs/min). 1 = the mount has the option.",
            [(f"middleware_oracle_nfs_mount_follows_guide{{{F}}}", "{{database}} {{mountpoint}} {{option}}")],
            mappings=[FOLLOWS_MAPPING]),
        tbl("File systems holding database files", "none",
            f"{GUIDE} ORA-NFS ({DOC_ORACLE}): file system type, source and mount options of the mounts holding data, "
            "temp, redo and control files.",
            [(f"middleware_oracle_file_system_info{{{F}}}", "{{database}} {{mountpoint}}")]),
        tbl("Database reachability", "none",
            f"{GUIDE} HPOM-ORA, ORA-* ({DOC_HPOM}; {DOC_ORACLE}): the checks above need a session; A = session "
            "available, "
            "B = collection within the deadline.",
            [(f"middleware_oracle_up{{{F}}}", "{{database}}"),
             (f"middleware_oracle_collect_success{{{F}}}", "{{database}}")],
            mappings=[UP_MAPPING], merge=True, w=24, h=6),
    ]
    database = query_variable("database", "Database",
                              f'label_values(middleware_oracle_up{{{INST}}}, database)')
    return dashboard("middleware-oracle", "Middleware: Oracle databases",
                     "Redo switches and layout, log-file-switch waits, parameters, limits, NFS and guide checks "
                     f"(guide rows HPOM-ORA, ORA-* of docs/sources.md; {DOC_HPOM}; {DOC_ORACLE}).", panels,
                     extra_variables=[database], tags=["oracle"])


# --------------------------------------------------------------------------------------------------------------
# IBM MQ / MQSI
# --------------------------------------------------------------------------------------------------------------

def mq_health(F: str) -> list:
    """Channel, queue-activity and queue-manager health (issue 28): the figures of the MiddlewareMq* health alerts,
    each panel naming its runbook section (operational: no guide row)."""
    rb = f"{RUNBOOKS}/ibmmq.md#"
    dlq = f'label_replace(middleware_ibmmq_qmgr_info{{{F}}}, "queue", "$1", "dlq", "(.+)")'
    return [
        "Channel, queue and queue-manager health",
        tbl("Channel status (MQCHS)", "none",
            f"{OPERATIONAL}: every channel's status code; 0 inactive (a defined channel without status: normal for "
            "an idle sender), 5 retrying, 6 stopped. Runbooks: "
            f"{rb}middlewaremqchannelnotrunning, {rb}middlewaremqchannelretrying.",
            [(f"ibmmq_channel_status{{{F}}}", "{{qmgr}} {{channel}} {{type}}"),
             (f"middleware_ibmmq_channel_indoubt{{{F}}}", "{{qmgr}} {{channel}} {{type}}")],
            mappings=[CHANNEL_STATUS_MAPPING], merge=True, sort_by=("Value #A", True)),
        ts("SVRCONN instances as a share of MAXINST", "percentunit",
           f"{OPERATIONAL}: running instances of each server-connection channel over its MAXINST (the default "
           f"999999999 gives a ratio near 0); at 100 % new clients are refused. Runbook: "
           f"{rb}middlewaremqchannelinstancesnearmax.",
           [(f'max by (instance, qmgr, channel) (ibmmq_channel_cur_inst{{type="SVRCONN", {F}}})'
             f' / max by (instance, qmgr, channel) (ibmmq_channel_attribute_max_inst{{type="SVRCONN", {F}}} > 0)',
             "{{instance}} {{qmgr}} {{channel}}"),
            ref("mq_channel_instances_ratio", "guide: none, alert share of MAXINST")], min_val=0),
        ts("Queues with messages and no reader (depth where IPPROCS is 0)", "short",
           f"{OPERATIONAL}: depth of the queues that hold messages while no handle is open for input; transmission "
           f"queues are in the next panel. Runbook: {rb}middlewaremqqueuenoreader.",
           [(f"(ibmmq_queue_depth{{{F}}} > 0) and on (instance, qmgr, queue) "
             f"(ibmmq_queue_input_handles{{{F}}} == 0) unless on (instance, qmgr, queue) "
             f"(ibmmq_queue_attribute_usage{{{F}}} == 1)", "{{instance}} {{qmgr}} {{queue}}")]),
        ts("Transmission and dead-letter queue depth", "short",
           f"{OPERATIONAL}: transmission queues (usage XMITQ) fill while their sender channel is stopped; the "
           "dead-letter queue (the queue manager's DEADQ) holds what could not be delivered. Runbooks: "
           f"{rb}middlewaremqchannelstoppedxmitqgrowing, {rb}middlewaremqdeadletterqueuegrowing.",
           [(f"ibmmq_queue_depth{{{F}}} and on (instance, qmgr, queue) (ibmmq_queue_attribute_usage{{{F}}} == 1)",
             "{{instance}} {{qmgr}} {{queue}} (xmitq)"),
            (f"ibmmq_queue_depth{{{F}}} and on (instance, qmgr, queue) {dlq}",
             "{{instance}} {{qmgr}} {{queue}} (dead-letter)")]),
        ts("Oldest message age (queues with monitoring on)", "s",
           f"{OPERATIONAL}: MSGAGE of queues with queue monitoring on (MONQ not OFF; without it MQ keeps no age). "
           f"Runbook: {rb}middlewaremqqueuemessagetooold.",
           [(f"ibmmq_queue_oldest_message_age{{{F}}} and on (instance, qmgr, queue) "
             f"(middleware_ibmmq_queue_monitoring_enabled{{{F}}} == 1)", "{{instance}} {{qmgr}} {{queue}}"),
            ref("mq_queue_oldest_message_age_seconds", "guide: none, alert oldest message age")], min_val=0),
        tbl("Queues without queue monitoring (MONQ OFF)", "short",
            f"{OPERATIONAL}: per queue manager, how many reported queues have queue monitoring off: their age, "
            f"queue time and last put/get are not kept. Runbook: {rb}middlewaremqqueuemonitoringoff.",
            [(f"count by (instance, qmgr) (middleware_ibmmq_queue_monitoring_enabled{{{F}}} == 0)",
              "{{instance}} {{qmgr}}")]),
        ts("Queue file use (CURFSIZE / CURMAXFS)", "percentunit",
           f"{OPERATIONAL}: size of each queue's file over the size it may grow to now (MQ 9.1.5+); when full, puts "
           f"fail with 2056. Runbook: {rb}middlewaremqqueuefilenearlyfull.",
           [(f"ibmmq_queue_qfile_current_size{{{F}}} / (ibmmq_queue_qfile_max_size{{{F}}} > 0)",
             "{{instance}} {{qmgr}} {{queue}}"),
            ref("mq_queue_file_ratio", "guide: none, alert share of the file")], min_val=0, max_val=1),
        ts("Recovery log: primary space in use and needed (LOGINUSE, LOGUTIL)", "percent",
           f"{OPERATIONAL}: share of the primary log space in use for restart recovery, and what the workload "
           f"needs (over 100: secondary extents). Runbook: {rb}middlewaremqrecoverylognearlyfull.",
           [(f"middleware_ibmmq_qmgr_log_in_use_percent{{{F}}}", "{{instance}} {{qmgr}} in use"),
            (f"middleware_ibmmq_qmgr_log_utilization_percent{{{F}}}", "{{instance}} {{qmgr}} workload needs"),
            ref("mq_log_in_use_percent", "guide: none, alert primary log in use")], min_val=0),
        tbl("Command server and channel initiator", "none",
            f"{OPERATIONAL}: MQSVC_STATUS of the command server and the channel initiator; 2 running. Only the "
            "runmqsc and REST back-ends read it; with the command server down REST and PCF requests fail "
            f"(back-end status below). Runbooks: {rb}middlewaremqcommandservernotrunning, "
            f"{rb}middlewaremqchannelinitiatornotrunning.",
            [(f'label_replace(ibmmq_qmgr_command_server_status{{{F}}}, "service", "command server", "", "") or '
              f'label_replace(ibmmq_qmgr_channel_initiator_status{{{F}}}, "service", "channel initiator", "", "")',
              "{{qmgr}} {{service}}")],
            mappings=[SERVICE_MAPPING]),
    ]


def ibmmq() -> dm.Dashboard:
    F = f'{INST}, qmgr=~"$qmgr"'
    cpu_all = f"sum by (instance) (rate(middleware_host_cpu_seconds_total{{{INST}}}[{RI}]))"
    panels = [
        "Queues and channels",
        ts("Queue depth", "short",
           f"{GUIDE} MQ-DEPTH ({DOC_MQSI}, Test Model): the driver kept the input queue at a depth of 100 so the "
           "engines were never idle; growth beyond that means consumers fall behind.",
           [(f"ibmmq_queue_depth{{{F}}}", "{{instance}} {{qmgr}} {{queue}}"),
            ref("mq_queue_working_depth", "guide: input queue depth")]),
        ts("Queue depth ratio (depth / max depth)", "percentunit",
           f"{GUIDE} MQ-DEPTH ({DOC_MQSI}): alert when depth exceeds a share of the maximum depth (default 80 %).",
           [(f"ibmmq_queue_depth_ratio{{{F}}}", "{{instance}} {{qmgr}} {{queue}}"),
            ref("mq_queue_depth_ratio", "guide: share of max depth")], min_val=0, max_val=1),
        tbl("Top 10 queues by depth", "short",
            f"{GUIDE} MQ-DEPTH ({DOC_MQSI}): the ten deepest queues now (topk).",
            [(f"topk(10, ibmmq_queue_depth{{{F}}})", "{{qmgr}} {{queue}}")]),
        ts("Queue depth growth (deriv over 10 m)", "mps",
           f"{GUIDE} MQ-DEPTH ({DOC_MQSI}): messages per second the depth grows (positive) or shrinks; steady growth "
           "means consumers fall behind.",
           [(f"deriv(ibmmq_queue_depth{{{F}}}[10m])", "{{instance}} {{qmgr}} {{queue}}")]),
        tbl("Queue manager status", "none",
            f"{GUIDE} MQ-CPU, MQ-DEPTH ({DOC_MQSI}): MQQMSTA 2 = running; 0 = ended or unreachable.",
            [(f"ibmmq_qmgr_status{{{F}}}", "{{qmgr}}")], mappings=[QMGR_MAPPING]),
        tbl("Channel status", "none",
            f"{GUIDE} MQ-DEPTH ({DOC_MQSI}): channels that are not running let transmission queues grow "
            "(squashed status: 0 stopped, 1 transitioning, 2 running).",
            [(f"ibmmq_channel_status_squash{{{F}}}", "{{qmgr}} {{channel}}")], mappings=[CHANNEL_MAPPING]),
        *mq_health(F),
        "CPU saturation and throughput",
        ts("CPU per queue manager", "percentunit",
           f"{GUIDE} MQ-CPU ({DOC_MQSI}, Test Cases 2-5, Figures 4-13): CPU, not disk, was the limit (1 qmgr: 86 "
           "msg/s, "
           "70 % idle; 5 qmgrs: 215 msg/s, 12 % idle). CPU seconds per second of the ibmmq process group per "
           "qmgr (1 = 100 % = one CPU).",
           [(f'sum by (instance, qmgr) (rate(middleware_process_group_cpu_seconds_total{{group="ibmmq", {F}}}[{RI}]))',
             "{{instance}} {{qmgr}}")]),
        ts("Rules engines: CPU share of the host per engine", "percentunit",
           f"{GUIDE} MQ-ENGINE ({DOC_MQSI}, Test Cases 1-2): each rules engine consumed 10-15 % CPU; a second engine "
           "per "
           "queue only helped while CPU was free. Process group mqsi_engine, per process name, divided by the "
           "host's CPUs and the number of engine processes.",
           [(f'sum by (instance, process) (rate(middleware_process_group_cpu_seconds_total'
             f'{{group="mqsi_engine", {INST}}}[{RI}]))'
             f" / on (instance) group_left () max by (instance) (middleware_host_cpus{{{INST}}})"
             f' / on (instance, process) (sum by (instance, process) '
             f'(middleware_process_group_processes{{group="mqsi_engine", {INST}}}) > 0)',
             "{{instance}} {{process}} per engine"),
            Const(0.1, "rules engine 10 % CPU"),
            Const(0.15, "rules engine 15 % CPU")]),
        ts("Host CPU idle and I/O wait", "percentunit",
           f"{GUIDE} MQ-CPU and MQ-IO ({DOC_MQSI}): CPU idle approached 0 as qmgrs and engines were added (2 engines x "
           "5 qmgrs: 1 % idle); saturation alert when idle stays under 10 % while depth grows. I/O wait falls "
           "with queues and logs on separate disks.",
           [(f'sum by (instance) (rate(middleware_host_cpu_seconds_total{{mode="idle", {INST}}}[{RI}])) / {cpu_all}',
             "{{instance}} idle"),
            (f'sum by (instance) (rate(middleware_host_cpu_seconds_total{{mode="iowait", {INST}}}[{RI}])) / {cpu_all}',
             "{{instance}} I/O wait"),
            ref("mq_cpu_idle_ratio", "guide: CPU idle")], min_val=0, max_val=1),
        ts("Throughput per queue manager (messages got and put per second)", "mps",
           f"{GUIDE} MQ-CPU ({DOC_MQSI}, Test Case 2, Figure 4): the report measured messages per second per queue "
           "manager; it fell as queue managers and engines were added (1 qmgr: 86 msg/s; each of 5: 43 msg/s) while "
           "CPU idle approached 0. From the queue manager's resource-statistics publications (STATMQI; pcf and "
           "runmqsc back-ends, not REST). The dashed series is the hour's level the saturation alert compares with.",
           [(f"rate(ibmmq_qmgr_interval_destructive_get_total_count_total{{{F}}}[{RI}])", "{{instance}} {{qmgr}} got"),
            (f"rate(ibmmq_qmgr_interval_mqput_mqput1_total_count_total{{{F}}}[{RI}])", "{{instance}} {{qmgr}} put"),
            (f"qmgr:ibmmq_qmgr_destructive_gets:rate5m_q90_1h{{{F}}}", "{{instance}} {{qmgr}} got, last hour's level"),
            Const(86, "1 qmgr, 1 engine: 86 msg/s"),
            Const(43, "each of 5 qmgrs: 43 msg/s")]),
        ts("Throughput against the last hour (got now / hour's level)", "percentunit",
           f"{GUIDE} MQ-CPU ({DOC_MQSI}, Test Case 2, Figure 4): 'per-qmgr throughput falls' is the second sign of "
           "CPU saturation; the alert fires when this is under 75 % (a 25 % fall: 2 engines, 2 to 3 qmgrs took each "
           "from 84 to 61 msg/s) with messages waiting and CPU idle under 10 %.",
           [(f"qmgr:ibmmq_qmgr_destructive_gets:rate5m{{{F}}} / qmgr:ibmmq_qmgr_destructive_gets:rate5m_q90_1h{{{F}}}",
             "{{instance}} {{qmgr}}"),
            ref("mq_throughput_fall_ratio", "guide: alert under (1 - the fall)", "1 - {}")], min_val=0),
        "Queue rates, rules engines and back-ends",
        ts("Enqueue and dequeue rate per queue", "mps",
           f"{GUIDE} MQ-DEPTH ({DOC_MQSI}, Test Model): enqueue above dequeue is what makes the depth grow. STATQ "
           "publications (pcf, runmqsc) for the reported queues, up to statistics_max_queues.",
           [(f"rate(ibmmq_queue_mqput_mqput1_count_total{{{F}}}[{RI}])", "{{instance}} {{qmgr}} {{queue}} put"),
            (f"rate(ibmmq_queue_mqget_count_total{{{F}}}[{RI}])", "{{instance}} {{qmgr}} {{queue}} got")]),
        ts("Rules engines: CPU per queue manager", "percentunit",
           f"{GUIDE} MQ-ENGINE ({DOC_MQSI}, Test Cases 1-2): CPU seconds per second of the rules engines serving each "
           "queue manager (process group mqsi_engine, qmgr from -m; 1 = one CPU); the report ran one engine per "
           "queue manager at 10-15 % of the host each.",
           [(f"instance_qmgr:middleware_process_group_mqsi_engine_cpu:rate5m{{{F}}}", "{{instance}} {{qmgr}}")],
           min_val=0),
        tbl("Back-end status per queue manager", "none",
            f"{GUIDE} MQ-* ({DOC_MQSI}): the figures above need the queue manager's back-end (rest, pcf or runmqsc) "
            "to answer; A = success, B = duration in seconds.",
            [(f"middleware_ibmmq_backend_success{{{F}}}", "{{qmgr}} {{backend}}"),
             (f"middleware_ibmmq_backend_duration_seconds{{{F}}}", "{{qmgr}} {{backend}}")],
            mappings=[UP_MAPPING], merge=True, column_units={"Value #B": "s"}, w=24, h=6),
    ]
    qmgr = query_variable("qmgr", "Queue manager", f'label_values(ibmmq_qmgr_status{{{INST}}}, qmgr)')
    return dashboard("middleware-ibmmq", "Middleware: IBM MQ and MQSI",
                     "Queue depths, queue manager and channel status, CPU per queue manager and rules engine "
                     f"against host idle (guide rows MQ-* of docs/sources.md; {DOC_MQSI}).", panels,
                     extra_variables=[qmgr], tags=["ibmmq"])


# --------------------------------------------------------------------------------------------------------------
# Host (vmstat, iostat, sar)
# --------------------------------------------------------------------------------------------------------------

def host() -> dm.Dashboard:
    cpu_all = f"sum by (instance) (rate(middleware_host_cpu_seconds_total{{{INST}}}[{RI}]))"

    def cpu_mode(modes: str) -> str:
        return (f'sum by (instance) (rate(middleware_host_cpu_seconds_total{{mode=~"{modes}", {INST}}}[{RI}]))'
                f' / {cpu_all}')

    ios = (f"(rate(middleware_host_disk_reads_completed_total{{{INST}}}[{RI}])"
           f" + rate(middleware_host_disk_writes_completed_total{{{INST}}}[{RI}]))")
    panels = [
        "CPU",
        ts("Run queue: vmstat r and b", "short",
           f"{GUIDE} DOM-CPU and MQ-CPU ({DOC_DOMINO}, Tables 1-2; {DOC_MQSI}): runnable (r) and I/O-blocked (b) "
           "processes; "
           "r persistently above the CPU count means CPU saturation.",
           [(f"middleware_host_procs_running{{{INST}}}", "{{instance}} r (runnable)"),
            (f"middleware_host_procs_blocked{{{INST}}}", "{{instance}} b (blocked)"),
            (f"middleware_host_cpus{{{INST}}}", "{{instance}} CPUs")]),
        ts("Context switches and interrupts: vmstat cs and in", "ops",
           f"{GUIDE} MQ-CPU ({DOC_MQSI}, Test Cases 2-5, Figures 4-13): the report's vmstat picture; rate of context "
           "switches and "
           "interrupts.",
           [(f"rate(middleware_host_context_switches_total{{{INST}}}[{RI}])", "{{instance}} cs"),
            (f"rate(middleware_host_interrupts_total{{{INST}}}[{RI}])", "{{instance}} in")]),
        ts("CPU: vmstat us / sy / id / wa / st", "percentunit",
           f"{GUIDE} DOM-CPU ({DOC_DOMINO}, Tables 1-2), MQ-CPU ({DOC_MQSI}): shares of all CPU time; us includes "
           "nice, sy "
           "includes irq and softirq.",
           [(cpu_mode("user|nice"), "{{instance}} us"),
            (cpu_mode("system|irq|softirq"), "{{instance}} sy"),
            (cpu_mode("idle"), "{{instance}} id"),
            (cpu_mode("iowait"), "{{instance}} wa"),
            (cpu_mode("steal"), "{{instance}} st")], min_val=0, max_val=1, stack=True),
        ts("CPU busy (us + sy) against the Domino article", "percentunit",
           f"{GUIDE} DOM-CPU ({DOC_DOMINO}, Tables 1-2): 1,800 users used 51 % / 25 % / 14 % CPU (user + sys) on 4 / "
           "8 / "
           "12 CPUs; no gain beyond 8 CPUs.",
           [(cpu_mode("user|nice|system|irq|softirq"), "{{instance}} us + sy"),
            Const(0.51, "Domino 1,800 users on 4 CPUs 51 %"),
            Const(0.25, "Domino 1,800 users on 8 CPUs 25 %"),
            Const(0.14, "Domino 1,800 users on 12 CPUs 14 %")], min_val=0, max_val=1),
        "Memory and paging",
        ts("Swapping: vmstat si / so", "binBps",
           f"{GUIDE} HPOM-MEM, DOM-SCAN ({DOC_HPOM}, Appendix B; {DOC_DOMINO}): bytes swapped in and out per second "
           "(vmstat "
           "shows KiB/s); any sustained swapping means memory is short.",
           [(f"rate(middleware_host_swap_in_bytes_total{{{INST}}}[{RI}])", "{{instance}} si"),
            (f"rate(middleware_host_swap_out_bytes_total{{{INST}}}[{RI}])", "{{instance}} so")]),
        ts("Page-scan rate: vmstat sr", "short",
           f"{GUIDE} DOM-SCAN ({DOC_DOMINO}, Tables 1-2): page-scan rate 75 pages/s on RAID0 against 100 pages/s on "
           "RAID5 at 1,800 users. Pages scanned by reclaim per second.",
           [(f"rate(middleware_host_page_scans_total{{{INST}}}[{RI}])", "{{instance}} pages/s"),
            Const(75, "Domino RAID0 75 pages/s"),
            Const(100, "Domino RAID5 100 pages/s")], axis_label="pages/s"),
        ts("Memory", "bytes",
           f"{GUIDE} HPOM-MEM ({DOC_HPOM}, Appendix B, Table 31), VHI-MEM ({DOC_VHI}): total, available and used "
           "memory, "
           "swap in use.",
           [(f"middleware_host_memory_total_bytes{{{INST}}}", "{{instance}} total"),
            (f"middleware_host_memory_available_bytes{{{INST}}}", "{{instance}} available"),
            (f"middleware_host_memory_used_bytes{{{INST}}}", "{{instance}} used"),
            (f"middleware_host_swap_used_bytes{{{INST}}}", "{{instance}} swap used")]),
        "Disks",
        ts("Disk I/O per second: iostat r/s and w/s", "iops",
           f"{GUIDE} DOM-DISK, MQ-IO ({DOC_DOMINO}, Tables 1-2; {DOC_MQSI}, Test Case 4): reads and writes completed "
           "per second "
           "per device.",
           [(f"rate(middleware_host_disk_reads_completed_total{{{INST}}}[{RI}])", "{{instance}} {{device}} r/s"),
            (f"rate(middleware_host_disk_writes_completed_total{{{INST}}}[{RI}])", "{{instance}} {{device}} w/s")]),
        ts("Disk await (iostat await)", "ms",
           f"{GUIDE} DOM-DISK ({DOC_DOMINO}, Tables 1-2): 14 ms on RAID0, 34-35 ms on RAID5, measured as sar -d "
           "service time, not await. Time per completed I/O including queueing; the alert compares the service "
           "time (next panel).",
           [(f"1000 * (rate(middleware_host_disk_read_time_seconds_total{{{INST}}}[{RI}])"
             f" + rate(middleware_host_disk_write_time_seconds_total{{{INST}}}[{RI}])) / {ios}",
             "{{instance}} {{device}} await"),
            Const(14, "Domino RAID0 14 ms"),
            ref("domino_disk_service_time_seconds", "guide: Domino RAID5 (the DOM-DISK threshold)", "1000 * {}")]),
        ts("Disk service time (sar -d svctm)", "ms",
           f"{GUIDE} DOM-DISK ({DOC_DOMINO}, Tables 1-2): service time 14 ms on RAID0 against 34-35 ms on RAID5 "
           "(sar -d); busy time per completed I/O, without queueing. The DOM-DISK alert warns when it stays above "
           "35 ms.",
           [(f"1000 * rate(middleware_host_disk_io_time_seconds_total{{{INST}}}[{RI}]) / {ios}",
             "{{instance}} {{device}} svctm"),
            Const(14, "Domino RAID0 service time 14 ms"),
            ref("domino_disk_service_time_seconds", "guide: Domino RAID5 service time (DOM-DISK threshold)",
                "1000 * {}")]),
        ts("Disk utilisation (iostat %util)", "percentunit",
           f"{GUIDE} HPOM-ACK ({DOC_HPOM}, Test: Message Acknowledgment, Tables 21-22: 10,000 acks with 5 GUIs "
           "reached 97 % disk utilisation), MQ-IO "
           f"({DOC_MQSI}, Test Case 4): share of time the device had I/O in flight.",
           [(f"rate(middleware_host_disk_io_time_seconds_total{{{INST}}}[{RI}])", "{{instance}} {{device}} %util")],
           min_val=0, max_val=1),
        ts("Disk queue size (iostat aqu-sz)", "short",
           f"{GUIDE} DOM-DISK, MQ-IO ({DOC_DOMINO}; {DOC_MQSI}): average requests in flight or queued per device.",
           [(f"rate(middleware_host_disk_io_time_weighted_seconds_total{{{INST}}}[{RI}])",
             "{{instance}} {{device}} aqu-sz")]),
        *filesystem_panels(),
        *nfs_panels(),
        *process_group_panels(),
        "Domino",
        ts("Domino users and transactions", "short",
           f"{GUIDE} DOM-CPU ({DOC_DOMINO}, Tables 1-2): the article's load was 1,800 NotesMark users; users with "
           "sessions "
           "and transactions per minute from show stat.",
           [(f"middleware_domino_users{{{INST}}}", "{{instance}} users"),
            (f"middleware_domino_transactions_per_minute{{{INST}}}", "{{instance}} transactions/min"),
            Const(1800, "Domino article 1,800 users")], w=24),
    ]
    nfs_operation = query_variable("nfs_operation", "NFS operation",
                                   f"label_values({NFS_OPS}_requests_total{{{INST}}}, operation)",
                                   default=["READ", "WRITE"])
    return dashboard("middleware-host", "Middleware: host (vmstat, iostat, sar)",
                     "Host CPU, run queue, paging, page scans and disks as vmstat/iostat/sar columns, with the "
                     f"Domino article's figures (guide rows DOM-*, MQ-CPU, MQ-IO of docs/sources.md; {DOC_DOMINO}; "
                     f"{DOC_MQSI}); file systems, NFS mounts and process groups (operational, runbooks in "
                     f"docs/runbooks/).",
                     panels, extra_variables=[nfs_operation], tags=["host", "domino"])


# ---- operational panels of the host dashboard (no guide row: the alerts' figures, each naming its runbook) --------
OPERATIONAL = f"{GUIDE} (none: operational, no guide row)"
RUNBOOKS = "docs/runbooks"
FS = "middleware_filesystem"
NFS_OPS = "middleware_mountstats_nfs_operations"
# The alerts' linear prediction (mixin/config.libsonnet fsSpaceFillingUpPredictionWindow, fsWarningPredictionHours,
# fsCriticalPredictionHours): the same window and horizons, so the line crossing 0 is what the alert sees.
FS_PREDICTION_WINDOW = "6h"
FS_PREDICTION_HOURS = (24, 4)
# The stuck part of the mount-state table: node_exporter has no stuck figure, the variant leaves it out.
FS_STUCK_TERM = f"3 * ({FS}_stuck{{{INST}}} == 1) or "
FS_STUCK_NOTE = ("3 stuck (statvfs has not returned after statfs_timeout; the stuck-for column says how long), "
                 "2 device error (statvfs fails), 1 read-only.")
FS_STUCK_NOTE_NODE = ("2 device error (node_exporter's device_error: statvfs failed or timed out; node_exporter "
                      "has no stuck figure), 1 read-only.")
FS_STATE_MAPPING = dm.ValueMap(options={
    "1": dm.ValueMappingResult(text="read-only", color="orange", index=0),
    "2": dm.ValueMappingResult(text="device error", color="red", index=1),
    "3": dm.ValueMappingResult(text="stuck", color="dark-red", index=2),
})


def filesystem_panels() -> list:
    avail, size = f"{FS}_avail_bytes{{{INST}}}", f"{FS}_size_bytes{{{INST}}}"
    mount = "{{instance}} {{mountpoint}}"
    book = f"{RUNBOOKS}/filesystem.md"
    return [
        "File systems",
        ts("File system space used", "percentunit",
           f"{OPERATIONAL}: share of each mount's space an unprivileged user can no longer use (1 - avail / size, "
           "the ratio the space alerts read), against the alerts' thresholds. Runbook: "
           f"{book}#middlewarefilesystemalmostoutofspace.",
           [(f"1 - {avail} / {size}", mount),
            ref("filesystem_space_available_warning_ratio", "guide: none, almost out of space (warning)",
                "1 - {}"),
            ref("filesystem_space_available_critical_ratio", "guide: none, almost out of space (critical)",
                "1 - {}")], min_val=0, max_val=1),
        ts("File system space available and its linear prediction", "bytes",
           f"{OPERATIONAL}: available bytes per mount and where the trend of the last {FS_PREDICTION_WINDOW} "
           f"puts them in {FS_PREDICTION_HOURS[0]} h and {FS_PREDICTION_HOURS[1]} h (predict_linear, as "
           "MiddlewareFilesystemSpaceFillingUp: a prediction below 0 with little space left fires it). Runbook: "
           f"{book}#middlewarefilesystemspacefillingup.",
           [(avail, f"{mount} available")]
           + [(f"predict_linear({avail}[{FS_PREDICTION_WINDOW}], {hours} * 60 * 60)",
               f"{mount} predicted in {hours} h") for hours in FS_PREDICTION_HOURS]),
        ts("File nodes (inodes) used", "percentunit",
           f"{OPERATIONAL}: share of each mount's file nodes in use (1 - files_free / files), against the "
           f"alerts' thresholds. Runbook: {book}#middlewarefilesystemalmostoutoffiles.",
           [(f"1 - {FS}_files_free{{{INST}}} / {FS}_files{{{INST}}}", mount),
            ref("filesystem_files_available_warning_ratio", "guide: none, almost out of file nodes (warning)",
                "1 - {}"),
            ref("filesystem_files_available_critical_ratio", "guide: none, almost out of file nodes (critical)",
                "1 - {}")], min_val=0, max_val=1),
        tbl("Stuck, failing and read-only mounts", "none",
            f"{OPERATIONAL}: the mounts in trouble now, worst state first: {FS_STUCK_NOTE} Healthy mounts are not "
            f"listed. Runbooks: {book}#middlewarefilesystemstuck, {book}#middlewarefilesystemdeviceerror, "
            f"{book}#middlewarefilesystemreadonly.",
            [(f"{FS_STUCK_TERM}2 * ({FS}_device_error{{{INST}}} == 1) or {FS}_readonly{{{INST}}} == 1",
              "{{instance}} {{mountpoint}} state"),
             (f"{FS}_stuck_seconds{{{INST}}}", "{{instance}} {{mountpoint}} stuck for")],
            mappings=[FS_STATE_MAPPING], merge=True, column_units={"Value #B": "s"},
            sort_by=("Value #A", True)),
    ]


def nfs_panels() -> list:
    def per_mount(name: str) -> str:
        return f"sum without (operation) (rate({NFS_OPS}_{name}_total{{{INST}}}[{RI}]))"

    book = f"{RUNBOOKS}/filesystem.md"
    ops = f'{INST}, operation=~"$nfs_operation"'
    return [
        "NFS mounts",
        ts("NFS round-trip time per operation", "s",
           f"{OPERATIONAL}: mean time from sending a call to its reply (rate of response time / rate of "
           "requests, shown while there are requests) per mount and operation; the NFS operation variable "
           "picks them (READ and WRITE, what MiddlewareNfsSlowResponses watches, by default). Runbook: "
           f"{book}#middlewarenfsslowresponses.",
           [(f"rate({NFS_OPS}_response_time_seconds_total{{{ops}}}[{RI}])"
             f" / (rate({NFS_OPS}_requests_total{{{ops}}}[{RI}]) > 0)",
             "{{instance}} {{mountpoint}} {{operation}}"),
            ref("nfs_response_time_seconds", "guide: none, slow responses")]),
        ts("NFS retransmissions", "percentunit",
           f"{OPERATIONAL}: share of the calls of each mount sent again (transmissions - requests, over "
           f"requests, all operations). Runbook: {book}#middlewarenfsretransmissions.",
           [(f"({per_mount('transmissions')} - {per_mount('requests')}) / ({per_mount('requests')} > 0)",
             "{{instance}} {{mountpoint}}"),
            ref("nfs_retransmission_ratio", "guide: none, retransmissions")], min_val=0),
        ts("NFS major timeouts", "short",
           f"{OPERATIONAL}: calls per second that got no reply after all their retries ('server not "
           f"responding'), per mount; any is an alert. Runbook: {book}#middlewarenfsmajortimeouts.",
           [(per_mount("major_timeouts"), "{{instance}} {{mountpoint}}")], axis_label="timeouts/s", min_val=0),
    ]


def process_group_panels() -> list:
    grp = "{{instance}} {{group}}"
    book = f"{RUNBOOKS}/process.md"

    def rate_by_group(name: str, by: str = "") -> str:
        return f"sum by (instance, group{by}) (rate(middleware_process_group_{name}{{{INST}}}[{RI}]))"

    return [
        "Process groups",
        ts("Open file descriptors per group", "short",
           f"{OPERATIONAL}: open file descriptors of each group's processes, summed. Runbook: "
           f"{book}#middlewareprocessgroupfdsnearlimit.",
           [(f"sum by (instance, group) (middleware_process_group_open_fds{{{INST}}})", grp)]),
        ts("Worst file-descriptor ratio per group", "percentunit",
           f"{OPERATIONAL}: the highest share of its open-files limit any process of the group uses (a sum "
           f"would hide the one about to run out). Runbook: {book}#middlewareprocessgroupfdsnearlimit.",
           [(f"max by (instance, group) (middleware_process_group_worst_fd_ratio{{{INST}}})", grp),
            ref("process_fd_ratio", "guide: none, file descriptors near the limit")], min_val=0, max_val=1),
        ts("Storage read and written per group", "Bps",
           f"{OPERATIONAL}: bytes per second the group's processes caused to be read from and written to "
           f"storage (/proc/<pid>/io). Runbook: {book}.",
           [(rate_by_group("read_bytes_total"), f"{grp} read"),
            (rate_by_group("written_bytes_total"), f"{grp} written")]),
        ts("Major page faults per group", "short",
           f"{OPERATIONAL}: page faults per second that read a page from disk (memory short, or a large file "
           f"mapped). Runbook: {book}.",
           [(rate_by_group("major_page_faults_total"), grp)], axis_label="faults/s"),
        ts("Context switches per group", "ops",
           f"{OPERATIONAL}: voluntary (waiting for I/O or a lock) and involuntary (preempted: CPU short) context "
           f"switches per second. Runbook: {book}.",
           [(rate_by_group("context_switches_total", ", type"), f"{grp} {{{{type}}}}")]),
        ts("Age of the oldest process per group (restarts)", "s",
           f"{OPERATIONAL}: time since the group's oldest process started; a drop is a restart of the whole "
           f"group. Runbook: {book}#middlewareprocessgroupmissing.",
           [(f"time() - min by (instance, group) (middleware_process_group_oldest_start_time_seconds{{{INST}}})",
             grp)]),
    ]


# --------------------------------------------------------------------------------------------------------------
# VHI
# --------------------------------------------------------------------------------------------------------------

def vhi() -> dm.Dashboard:
    panels = [
        ts("Sessions per CPU", "short",
           f"{GUIDE} VHI-SESS ({DOC_VHI}, Concurrent Sessions): at most 250 concurrent host sessions per CPU of the "
           "session server (CPUs = its affinity).",
           [(f"middleware_vhi_sessions_per_cpu{{{INST}}}", "{{instance}} sessions per CPU"),
            (f"middleware_vhi_sessions_per_cpu_limit{{{INST}}}", "{{instance}} configured limit"),
            ref("vhi_sessions_per_cpu", "guide: sessions per CPU")]),
        ts("Concurrent host sessions", "short",
           f"{GUIDE} VHI-SESS ({DOC_VHI}): established connections from the session server to the host ports, and "
           "the CPUs it may use (250 sessions each).",
           [(f"middleware_vhi_sessions{{{INST}}}", "{{instance}} sessions"),
            (f"middleware_vhi_sessions_by_port{{{INST}}}", "{{instance}} port {{port}}"),
            (f"middleware_vhi_session_server_cpus{{{INST}}}", "{{instance}} session server CPUs")]),
        ts("Memory required by the guide against host memory", "bytes",
           f"{GUIDE} VHI-MEM ({DOC_VHI}, Memory): 512 MB minimum (1 GB recommended) up to 100 sessions plus 64 MB "
           "(128 MB recommended) per further 100; VHI uses at most 4 GB.",
           [(f'middleware_vhi_memory_required_bytes{{level="minimum", {INST}}}', "{{instance}} required (minimum)"),
            (f'middleware_vhi_memory_required_bytes{{level="recommended", {INST}}}',
             "{{instance}} required (recommended)"),
            (f"middleware_host_memory_total_bytes{{{INST}}}", "{{instance}} host memory"),
            (f"middleware_vhi_session_server_resident_memory_bytes{{{INST}}}", "{{instance}} session server RSS"),
            Const(4294967296, "VHI uses at most 4 GB")], w=24),
        ts("Session server CPU", "percentunit",
           f"{GUIDE} VHI-CPU ({DOC_VHI}, Processors and Performance): gains per CPU doubling 75 %, 38 %, 14 %; more "
           "than 4 cores not recommended. CPU seconds per second of the session server (1 = one CPU).",
           [(f'sum by (instance) (rate(middleware_process_group_cpu_seconds_total'
             f'{{group="vhi_session_server", {INST}}}[{RI}]))',
             "{{instance}} sesssrvr CPU")]),
        ts("Session server CPUs and physical cores", "short",
           f"{GUIDE} VHI-CPU ({DOC_VHI}, Processors and Performance): more than 4 physical cores not recommended. The "
           "CPUs of the session server's affinity and the physical cores behind them, read from the CPU topology "
           "(thread_siblings_list: a host numbering a core's threads n and n+8 has 8 cores under CPUs 0-7); no "
           "cores line: the exporter could not read the topology.",
           [(f"middleware_vhi_session_server_cpus{{{INST}}}", "{{instance}} CPUs"),
            (f"middleware_vhi_session_server_cores{{{INST}}}", "{{instance}} physical cores"),
            ref("vhi_max_cpu_cores", "guide: at most 4 physical cores")]),
        ts("Session server processes", "short",
           f"{GUIDE} VHI-SESS ({DOC_VHI}): session server processes running (0 = no sessions can be served).",
           [(f"middleware_vhi_session_server_processes{{{INST}}}", "{{instance}} sesssrvr processes")]),
    ]
    return dashboard("middleware-vhi", "Middleware: Verastream Host Integrator",
                     "VHI session server: sessions per CPU and the memory formula (guide rows VHI-* of "
                     "docs/sources.md; "
                     f"{DOC_VHI}).", panels, tags=["vhi"])


# --------------------------------------------------------------------------------------------------------------
# The exporter itself
# --------------------------------------------------------------------------------------------------------------

def exporter() -> dm.Dashboard:
    panels = [
        ts("Collector success", "none",
           f"{GUIDE} (all rows): every guide figure on the other dashboards needs its collector to succeed; "
           "1 = the collector's last run succeeded.",
           [(f"middleware_scrape_collector_success{{{INST}}}", "{{instance}} {{collector}}")],
           min_val=0, max_val=1, w=24),
        ts("Collector duration against timeout", "s",
           f"{GUIDE} (all rows): a collector at its timeout reports stale or no figures.",
           [(f"middleware_scrape_collector_duration_seconds{{{INST}}}", "{{instance}} {{collector}} duration"),
            (f"middleware_scrape_collector_timeout_seconds{{{INST}}}", "{{instance}} {{collector}} timeout")]),
        ts("Scrape duration", "s",
           f"{GUIDE} (all rows): Prometheus' own scrape_duration_seconds for the exporter (the 10,000-queue MQ "
           "benchmark targets under 250 ms).",
           [(f"scrape_duration_seconds{{{INST}}}", "{{instance}} {{job}}")]),
        ts("Collector failures", "short",
           f"{GUIDE} (all rows): failed collector runs (error, timeout, invalid samples) per rate interval.",
           [(f"increase(middleware_scrape_collector_failures_total{{{INST}}}[{RI}])", "{{instance}} {{collector}}")]),
        ts("Time since last success", "s",
           f"{GUIDE} (all rows): age of each collector's last successful run, against its interval.",
           [(f"time() - middleware_scrape_collector_last_success_timestamp_seconds{{{INST}}}",
             "{{instance}} {{collector}} age"),
            (f"middleware_scrape_collector_interval_seconds{{{INST}}}", "{{instance}} {{collector}} interval")]),
        ts("Series per collector", "short",
           f"{GUIDE} (all rows): series each collector contributed to the last snapshot.",
           [(f"middleware_scrape_collector_series{{{INST}}}", "{{instance}} {{collector}}")]),
        tbl("Build info", "none",
            f"{GUIDE} (all rows): exporter and Python versions per instance.",
            [(f"middleware_exporter_build_info{{{INST}}}", "{{instance}}")]),
        # Here rather than on the host dashboard: the files are the middleware's (Oracle wallets, mqweb keystores)
        # and the exporter's own TLS certificate, read by the exporter; each file is one of its targets.
        tbl("Certificates: days left", "d",
            f"{OPERATIONAL}: days until each certificate of the files the certificates collector reads (and the "
            "exporter's own TLS certificate) expires, soonest first; negative = expired. The alert warns at 14 "
            "days and pages at 3 (middleware:threshold:certificate_expiry_*). A file that cannot be read is a "
            "target down (Collector success, /api/v1/collectors). Runbook: "
            f"{RUNBOOKS}/certificates.md#middlewarecertificateexpiressoon.",
            [(f"((middleware_certificate_not_after_seconds{{{INST}}}"
              f" or middleware_exporter_tls_certificate_not_after_seconds{{{INST}}}) - time()) / 86400",
              "{{instance}} {{file}} {{subject_cn}}")],
            w=24, sort_by=("Value", False)),
        *estate_panels(),
    ]
    return dashboard("middleware-exporter", "Middleware: exporter",
                     "The exporter itself: collector success, duration against timeout, scrape duration; the "
                     "estate it probes (/probe, docs/estate.md).",
                     panels, tags=["exporter"])


# The estate (issue 37, docs/estate.md): the per-target series of /probe, scraped by the probe jobs with instance =
# the target, and the exporter's own counters of its probes and inventory on /metrics. A row of the exporter
# dashboard rather than a dashboard of its own: they are the exporter's figures (its collections, its slots, its
# inventory), and every dashboard shares the job/instance variables the tests and the mixin's rewriting rely on.
ESTATE = "docs/estate.md"
ESTATE_NOTE = (" The per-target series come from the probe scrape jobs (instance = the target), not from an "
               "exporter's /metrics: they show with the Job and Instance variables at All (the Instance list "
               "names the exporters).")
PROBE_MAPPING = dm.ValueMap(options={
    "0": dm.ValueMappingResult(text="failing", color="red", index=0),
    "1": dm.ValueMappingResult(text="ok", color="green", index=1),
})
RELOAD_MAPPING = dm.ValueMap(options={
    "0": dm.ValueMappingResult(text="last re-read failed (previous version served)", color="red", index=0),
    "1": dm.ValueMappingResult(text="file as it is now", color="green", index=1),
})
# middleware_target_last_success_timestamp_seconds is 0 for a target never up since its probe's collectors were
# built: time() - 0 is some 56 years, shown as "never".
NEVER_UP_MAPPING = dm.RangeMap(options=dm.DashboardRangeMapOptions(
    from_val=1e9, to=None, result=dm.ValueMappingResult(text="never up since first probed", color="red", index=0)))


def estate_panels() -> list:
    # every column aggregated by (job, instance): the same labels and no metric name, so the table's merge joins
    # the columns of one target into one row
    failing = f"(max by (job, instance) (middleware_probe_success{{{INST}}}) == 0)"
    return [
        "Estate: multi-target probing (/probe) and the inventory",
        tbl("Probes failing now", "s",
            f"{OPERATIONAL}; {ESTATE} (Modules and GET /probe, How a probe is bounded): the probed targets whose "
            "last collection did not work (middleware_probe_success 0: a target down, a collector failed or timed "
            "out, a source failed, or no free slot), worst first. Down for: seconds since the target was last up "
            "(middleware_target_last_success_timestamp_seconds, the oldest of its collectors'). Collection age: "
            "how old the collection served is (a target backing off is answered with its last one). Back-off: "
            "seconds until it is read again (doubling from the module's backoff.first up to backoff.cap). Why: "
            "middleware_target_up and /api/v1/probes on the exporter. Runbook: "
            f"{RUNBOOKS}/exporter.md#middlewareexportertargetdown." + ESTATE_NOTE,
            [(failing, "{{instance}}"),
             (f"time() - min by (job, instance) (middleware_target_last_success_timestamp_seconds{{{INST}}})"
              f" and on (job, instance) {failing}", "{{instance}}"),
             (f"max by (job, instance) (middleware_probe_collection_age_seconds{{{INST}}})"
              f" and on (job, instance) {failing}", "{{instance}}"),
             (f"max by (job, instance) (middleware_probe_backoff_seconds{{{INST}}}) and on (job, instance) {failing}",
              "{{instance}}")],
            mappings=[PROBE_MAPPING], merge=True, w=24, sort_by=("down for", True),
            rename={"instance": "target (instance)", "Value #A": "probe", "Value #B": "down for",
                    "Value #C": "collection age", "Value #D": "back-off"}).override_by_name(
            "Value #B", [dm.DynamicConfigValue(id_val="mappings", value=[NEVER_UP_MAPPING])]),
        ts("Probe success by job and collection success by module", "percentunit",
           f"{OPERATIONAL}; {ESTATE} (Modules and GET /probe): the share of the probed targets whose last probe "
           "worked (avg of middleware_probe_success per probe job), and the share of the collections of each "
           "module that worked (middleware_probe_collections_total, result success, on the exporter's /metrics; "
           "the per-target series carry no module label)." + ESTATE_NOTE,
           [(f"avg by (job) (middleware_probe_success{{{INST}}})", "{{job}} probes succeeding"),
            (f'sum by (module) (rate(middleware_probe_collections_total{{result="success", {INST}}}[{RI}]))'
             f" / sum by (module) (rate(middleware_probe_collections_total{{{INST}}}[{RI}]))",
             "module {{module}} collections succeeding")],
           min_val=0, max_val=1),
        ts("Collections by result and probe requests by status", "ops",
           f"{OPERATIONAL}; {ESTATE} (How a probe is bounded; the exporter's own /metrics): collections started "
           "per second by module and result (success, degraded: a source failed, failure: a target down or a "
           "collector failed, no_slot: every slot of the module busy until the deadline: raise its concurrency "
           "or add a shard), and /probe requests per second by HTTP status (4xx: refused, nothing run).",
           [(f"sum by (instance, module, result) (rate(middleware_probe_collections_total{{{INST}}}[{RI}]))",
             "{{instance}} {{module}} {{result}}"),
            (f"sum by (instance, module, code) (rate(middleware_probe_requests_total{{{INST}}}[{RI}]))",
             "{{instance}} {{module}} requests {{code}}")]),
        ts("Collections in flight", "short",
           f"{OPERATIONAL}; {ESTATE} (How a probe is bounded): collections of each module running now, at most "
           "the module's concurrency (not exported: see the configuration); a module that stays at its "
           "concurrency makes probes wait for a slot (result no_slot in Collections by result).",
           [(f"middleware_probe_collections_in_flight{{{INST}}}", "{{instance}} {{module}}")]),
        ts("Targets and targets backing off by module", "short",
           f"{OPERATIONAL}; {ESTATE} (How a probe is bounded): targets each module keeps (probed in the last "
           "hour) and those waiting out a back-off after a failed collection (hung, refusing or down hosts, "
           "each tried again once per back-off).",
           [(f"middleware_probe_targets{{{INST}}}", "{{instance}} {{module}} targets"),
            (f"middleware_probe_targets_backing_off{{{INST}}}", "{{instance}} {{module}} backing off")]),
        ts("Probe duration over targets (max, 90th percentile, median)", "s",
           f"{OPERATIONAL}; {ESTATE} (How a probe is bounded, Sizing): how long the collections served took "
           "(middleware_probe_duration_seconds), the slowest target and the 90th percentile and median over the "
           "targets of each probe job; the slowest near the module's timeout means a target hangs until its "
           "deadline." + ESTATE_NOTE,
           [(f"max by (job) (middleware_probe_duration_seconds{{{INST}}})", "{{job}} slowest target"),
            (f"quantile by (job) (0.9, middleware_probe_duration_seconds{{{INST}}})", "{{job}} 90th percentile"),
            (f"quantile by (job) (0.5, middleware_probe_duration_seconds{{{INST}}})", "{{job}} median")]),
        ts("Collection age and back-off (max over targets)", "s",
           f"{OPERATIONAL}; {ESTATE} (How a probe is bounded): the oldest collection served "
           "(middleware_probe_collection_age_seconds: 0 for one made for the probe, more when served again "
           "within freshness, read ahead, during a back-off or while a new one is made up to max_staleness) and "
           "the longest back-off (middleware_probe_backoff_seconds) per probe job. An age growing past the "
           "scrape interval for healthy targets means the gateway does not keep up." + ESTATE_NOTE,
           [(f"max by (job) (middleware_probe_collection_age_seconds{{{INST}}})", "{{job}} oldest collection"),
            (f"max by (job) (middleware_probe_backoff_seconds{{{INST}}})", "{{job}} longest back-off")]),
        tbl("Inventory", "short",
            f"{OPERATIONAL}; {ESTATE} (The inventory file): per exporter, whether the inventory file as it is now "
            "was read (middleware_inventory_last_reload_successful; 0: a newer version is broken and the last good "
            "one stays served, the error in /api/v1/inventory), the targets served "
            "(middleware_inventory_targets). Runbook: "
            f"{RUNBOOKS}/exporter.md#middlewareexporterinventoryreloadfailed.",
            [(f"max by (job, instance) (middleware_inventory_last_reload_successful{{{INST}}})", "{{instance}}"),
             (f"max by (job, instance) (middleware_inventory_targets{{{INST}}})", "{{instance}}")],
            mappings=[RELOAD_MAPPING], merge=True, w=24, h=6,
            rename={"instance": "exporter (instance)", "Value #A": "last re-read", "Value #B": "targets served"}),
    ]


BUILDERS = {
    "middleware-hpom": hpom,
    "middleware-oracle": oracle,
    "middleware-ibmmq": ibmmq,
    "middleware-host": host,
    "middleware-vhi": vhi,
    "middleware-exporter": exporter,
}


# ---- the node_exporter variant of the host dashboard (the mixin's hostMetricsSource: 'node_exporter') -------------
# As for the rules (mixin/README.md, "Host figures from node_exporter"): the host dashboard's vmstat/iostat/sar panels
# read node_exporter's node_* series; the HPOM, MQ and VHI panels that set a process against the host keep the host
# collector's series (they join on the exporter's instance). The job variable lists node_exporter's jobs; its "All"
# and query carry the mixin's default nodeExporterSelector, which the mixin replaces with the configured one.
NODE_SELECTOR = 'job="node-exporter"'
NODE_JOB = "node-exporter"
NODE_VARIANT_UIDS = ("middleware-host",)
NODE_VARIANT = Path("variants") / "node_exporter"  # under the mixin's sources and under dashboards/, as tools.mixin
NODE_RENAMES = {  # middleware_host_* -> the node_exporter series with the same meaning, labels and unit
    "cpu_seconds_total": "node_cpu_seconds_total", "context_switches_total": "node_context_switches_total",
    "interrupts_total": "node_intr_total", "procs_running": "node_procs_running",
    "procs_blocked": "node_procs_blocked", "memory_total_bytes": "node_memory_MemTotal_bytes",
    "memory_available_bytes": "node_memory_MemAvailable_bytes",
    **{f"disk_{n}": f"node_disk_{n}" for n in ("io_time_seconds_total", "io_time_weighted_seconds_total",
                                                "read_time_seconds_total", "reads_completed_total",
                                                "write_time_seconds_total", "writes_completed_total")},
}
# node_exporter counts swapped pages (pswpin/pswpout); the host collector bytes: x 4096, the page size of x86-64
# and of the usual arm64 kernels.
PAGE_SIZE = 4096
_RATE = re.compile(r"rate\(middleware_host_(swap_in_bytes_total|swap_out_bytes_total|page_scans_total)"
                   r"\{([^}]*)\}\[([^\]]+)\]\)")
_SERIES = re.compile(r"middleware_host_([a-z_]+)\{([^}]*)\}")
_FS_SERIES = re.compile(r"middleware_filesystem_([a-z_]+)\{")
_EXPORTER_SERIES = re.compile(r'\b(middleware_[a-z_]+|[a-z_]+:middleware_[a-z_:]+)\{job=~"\$job"')


def _node_rate(match: re.Match) -> str:
    name, matchers, window = match.groups()
    if name == "page_scans_total":  # as the host collector and the recording rule: anon + file, else kswapd + direct
        def scans(a: str, b: str) -> str:
            return (f"rate(node_vmstat_pgscan_{a}{{{matchers}}}[{window}]) + "
                    f"rate(node_vmstat_pgscan_{b}{{{matchers}}}[{window}])")
        return f"(({scans('anon', 'file')}) or ({scans('kswapd', 'direct')}))"
    pages = "pswpin" if name == "swap_in_bytes_total" else "pswpout"
    return f"{PAGE_SIZE} * rate(node_vmstat_{pages}{{{matchers}}}[{window}])"


def _node_series(match: re.Match) -> str:
    name, matchers = match.groups()
    if name in NODE_RENAMES:
        return f"{NODE_RENAMES[name]}{{{matchers}}}"
    if name == "cpus":
        return f'count without (cpu, mode) (node_cpu_seconds_total{{{matchers}, mode="idle"}})'
    if name == "memory_used_bytes":  # MemTotal - MemAvailable, as the host collector
        return f"(node_memory_MemTotal_bytes{{{matchers}}} - node_memory_MemAvailable_bytes{{{matchers}}})"
    if name == "swap_used_bytes":
        return f"(node_memory_SwapTotal_bytes{{{matchers}}} - node_memory_SwapFree_bytes{{{matchers}}})"
    raise ValueError(f"no node_exporter counterpart for middleware_host_{name}")


def node_exporter_variant(dash: dict) -> dict:
    """The dashboard with its host series from node_exporter (every middleware_host_* series mapped, or an error)."""
    variant = json.loads(json.dumps(dash))
    variant["description"] += (" Host figures from node_exporter (the mixin's hostMetricsSource 'node_exporter'): "
                               "the Job variable lists node_exporter's jobs.")
    for v in variant["templating"]["list"]:
        if v["name"] == "job":
            v["query"] = v["definition"] = f"label_values(node_uname_info{{{NODE_SELECTOR}}}, job)"
            v["allValue"] = NODE_JOB
        elif v["name"] == "instance":
            v["query"] = v["definition"] = 'label_values(node_uname_info{job=~"$job"}, instance)'
        elif v["type"] == "query":  # the exporter's series (NFS operations): the exporter's job
            v["query"] = v["definition"] = _EXPORTER_SERIES.sub(rf'\1{{job=~"{MIDDLEWARE_JOBS}"', v["query"])
    for panel in variant["panels"]:
        # node_exporter has no stuck figure: the mount-state table keeps device error and read-only
        panel["targets"] = [t for t in panel.get("targets", []) if f"{FS}_stuck_seconds" not in t["expr"]]
        for target in panel["targets"]:
            expr = _SERIES.sub(_node_series, _RATE.sub(_node_rate, target["expr"]))
            # file systems: node_exporter's node_filesystem_* (same names, labels and meaning)
            expr = _FS_SERIES.sub(r"node_filesystem_\1{", expr.replace(FS_STUCK_TERM, ""))
            # the exporter's own series on this dashboard (Domino's) keep the exporter's job: the mixin's selector
            target["expr"] = _EXPORTER_SERIES.sub(rf'\1{{job=~"{MIDDLEWARE_JOBS}"', expr)
        if "description" in panel:
            panel["description"] = panel["description"].replace(FS_STUCK_NOTE, FS_STUCK_NOTE_NODE)
        if "description" in panel and "middleware_host_" in panel["description"]:
            panel["description"] = panel["description"].replace("middleware_host_", "node_exporter's ")
    if f"{FS}_" in json.dumps(variant):
        raise ValueError(f"{dash['uid']}: a {FS}_ series is left in the node_exporter variant")
    if "middleware_host_" in json.dumps(variant):
        raise ValueError(f"{dash['uid']}: a middleware_host_ series is left in the node_exporter variant")
    return variant


def to_dict(dash: dm.Dashboard) -> dict:
    return json.loads(json.dumps(dash, cls=JSONEncoder))


def render(dash: dm.Dashboard) -> str:
    return render_dict(to_dict(dash))


def render_dict(data: dict) -> str:
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def build_all() -> dict[str, str]:
    """uid -> file content."""
    return {uid: render(fn()) for uid, fn in BUILDERS.items()}


LINT_HEADER = """\
# dashboard-linter exclusions (`dashboard-linter lint --strict dashboards/<uid>.json` reads this file from the
# directory of the dashboard). Written by dashboards/build.py: edit the builder, not this file.
exclusions:
"""
# rule -> why its finding is wrong here; the entries are derived from the dashboards.
LINT_REASONS = {
    "template-job-rule": (
        'The job variable\'s All is the mixin\'s middlewareSelector (job=~"middleware.*"), not .+: the exporter '
        "publishes IBM MQ figures under ibmmq_* names that IBM's own MQ exporter also uses, and .+ would mix that "
        "exporter's series (another scrape job) into these panels. tests/alerting/test_dashboards.py checks the "
        "rule's other "
        "points (Prometheus query variable on $datasource, label Job, multi-value). In the node_exporter variant "
        "of the host dashboard the All is the mixin's nodeExporterSelector, for the same reason."),
    "target-job-rule": (
        "The reference lines read middleware:threshold:* series: recording rules of constants (vector(N) in "
        "alerts/<system>.yml) that carry no job label, so a job matcher would select nothing. In the node_exporter "
        "variant of the host dashboard the Job variable lists node_exporter's jobs, and the exporter's own series "
        "there (Domino's) select the exporter's job with the mixin's selector instead."),
    "target-instance-rule": (
        "The reference lines read middleware:threshold:* series: recording rules of constants (vector(N) in "
        "alerts/<system>.yml) that carry no instance label, so an instance matcher would select nothing."),
}


def lint_exclusions(dashboards: dict[str, dict]) -> str:
    """dashboards/.lint: the job variable's All on every dashboard, and every threshold-series target."""
    entries: dict[str, list[str]] = {rule: [] for rule in LINT_REASONS}
    for dash in dashboards.values():
        title = json.dumps(dash["title"], ensure_ascii=False)
        entries["template-job-rule"].append(f"dashboard: {title}")
        for panel in dash.get("panels", []):
            for n, target in enumerate(panel.get("targets", [])):
                exporter_job = f'job=~"{MIDDLEWARE_JOBS}"' in target["expr"]  # node_exporter variant
                if exporter_job:
                    entry = f'dashboard: {title}, panel: {json.dumps(panel["title"], ensure_ascii=False)}, ' \
                            f'targetidx: "{n}"'
                    entries["target-job-rule"].append(entry)
                elif is_reference(target["expr"]):
                    panel_title = json.dumps(panel["title"], ensure_ascii=False)
                    # "targetidx": the linter decodes with yaml.v3, which ignores the json tag "targetIdx" (an
                    # entry with that key would exclude every target of the panel).
                    entry = f'dashboard: {title}, panel: {panel_title}, targetidx: "{n}"'
                    entries["target-job-rule"].append(entry)
                    entries["target-instance-rule"].append(entry)
    lines = [LINT_HEADER.rstrip("\n")]
    for rule, reason in LINT_REASONS.items():
        lines += [f"  {rule}:", f"    reason: {json.dumps(reason, ensure_ascii=False)}", "    entries:"]
        lines += [f"      - {{{entry}}}" for entry in entries[rule]]
    return "\n".join(lines) + "\n"


MIXIN_SOURCES = HERE.parent / "mixin" / "dashboards" / "sources"


MIXIN_LINT = HERE.parent / "mixin" / ".lint"
MIXIN_LINT_MARK = "  # ---- the dashboards' exclusions, written by dashboards/build.py (edit the builder)"


def mixin_lint(dashboard_lint: str) -> str:
    """mixin/.lint: its hand-written alert exclusions, then the dashboards' (mixtool lint runs the dashboard linter
    on the mixin's dashboards too, with the same rules)."""
    text = MIXIN_LINT.read_text(encoding="utf-8") if MIXIN_LINT.exists() else "exclusions:\n"
    alerts = text.split(MIXIN_LINT_MARK)[0].rstrip("\n")
    rules = dashboard_lint.split("exclusions:\n", 1)[1]
    return f"{alerts}\n{MIXIN_LINT_MARK}\n{rules}"


def build_files() -> dict[Path, str]:
    """path -> content: the dashboards' panels as the mixin's sources (mixin/dashboards/sources/<uid>.json, which the
    mixin renders into dashboards/<uid>.json with its configuration: `python -m tools.mixin`) and the linter's
    exclusions (dashboards/.lint, beside the rendered dashboards the linter reads)."""
    dashboards = all_dashboards()
    files = {MIXIN_SOURCES / f"{uid}.json": render_dict(dash) for uid, dash in dashboards.items()}
    variants = {uid: node_exporter_variant(dashboards[uid]) for uid in NODE_VARIANT_UIDS}
    files.update({MIXIN_SOURCES / NODE_VARIANT / f"{uid}.json": render_dict(dash) for uid, dash in variants.items()})
    # the linter reads .lint from the directory of the dashboard: the mixin renders the variant into
    # dashboards/variants/node_exporter/
    files[HERE / NODE_VARIANT / ".lint"] = lint_exclusions(variants)
    files[HERE / ".lint"] = lint_exclusions(dashboards)
    files[MIXIN_LINT] = mixin_lint(files[HERE / ".lint"])
    return files


def all_dashboards() -> dict[str, dict]:
    """uid -> dashboard JSON as a dict."""
    return {uid: to_dict(fn()) for uid, fn in BUILDERS.items()}


def all_queries() -> list[tuple[str, str, str]]:
    """(dashboard uid, panel title, expr) for every panel target."""
    out = []
    for uid, dash in all_dashboards().items():
        for panel in dash.get("panels", []):
            for target in panel.get("targets", []):
                out.append((uid, panel["title"], target["expr"]))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a file on disk is stale")
    args = parser.parse_args(argv)
    stale = []
    for path, content in build_files().items():
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != content:
                stale.append(str(path))
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")
    if stale:
        print("stale dashboard sources (run python dashboards/build.py, then python -m tools.mixin):\n  "
              + "\n  ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
