"""The Grafana dashboards in dashboards/: their mixin sources up to date with dashboards/build.py, the rendered files
the mixin's, decodable by the SDK's model, linted.

Evaluating the queries against a Prometheus is done elsewhere; build.all_queries() is the list it uses.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import warnings
from pathlib import Path

import pytest

pytest.importorskip("grafana_foundation_sdk")

ROOT = Path(__file__).resolve().parents[2]
DASHBOARDS = ROOT / "dashboards"
UIDS = ["middleware-hpom", "middleware-oracle", "middleware-ibmmq", "middleware-host", "middleware-vhi",
        "middleware-exporter"]
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
# A reference line from a threshold series (alerts/<system>.yml), possibly scaled to the panel's unit.
REFERENCE_RE = re.compile(r"^(?:([0-9.]+) \* |(1) - )?middleware:threshold:([a-z0-9_]+)$")
# The guide figures (docs/sources.md) each dashboard must draw as a reference line (a threshold series or a
# constant in the panel's thresholds).
REQUIRED_REFERENCES = {
    "middleware-hpom": [226, 272, 333, 410, 50000, 5000, 10, 412],  # THROUGHPUT, ACTIVE, ACK, CMA, QUEUE
    "middleware-oracle": [5, 104857600],  # HPOM-ORA / ORA-REDO: 5 groups x 100 MB
    "middleware-ibmmq": [100, 0.8, 0.1, 0.15],  # MQ-DEPTH, MQ-CPU idle 10 %, MQ-ENGINE 10-15 %
    "middleware-host": [75, 100, 14, 35],  # DOM-SCAN pages/s, DOM-DISK ms
    "middleware-vhi": [250],  # VHI-SESS
}


def _load_build():
    spec = importlib.util.spec_from_file_location("dashboards_build", DASHBOARDS / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build = _load_build()


def _committed() -> dict[str, dict]:
    return {uid: json.loads((DASHBOARDS / f"{uid}.json").read_text(encoding="utf-8")) for uid in UIDS}


@pytest.fixture(scope="module")
def dashboards() -> dict[str, dict]:
    return _committed()


def _panels(dashboards):
    for uid, dash in dashboards.items():
        for panel in dash["panels"]:
            if panel["type"] != "row":
                yield uid, panel


def _targets(dashboards):
    for uid, panel in _panels(dashboards):
        for target in panel["targets"]:
            yield uid, panel, target


# --- stale check --------------------------------------------------------------------------------------------------

def test_builder_knows_the_six_dashboards():
    assert list(build.BUILDERS) == UIDS
    assert sorted(p.stem for p in DASHBOARDS.glob("*.json")) == sorted(UIDS)


def test_the_mixin_sources_are_what_build_py_writes():
    expected = build.build_all()
    for uid in UIDS:
        on_disk = (build.MIXIN_SOURCES / f"{uid}.json").read_text(encoding="utf-8")
        assert on_disk == expected[uid], f"mixin/dashboards/sources/{uid}.json is stale: run python dashboards/build.py"
    assert build.main(["--check"]) == 0


def test_check_detects_a_stale_file(tmp_path, monkeypatch):
    monkeypatch.setattr(build, "MIXIN_SOURCES", tmp_path)
    monkeypatch.setattr(build, "HERE", tmp_path)
    monkeypatch.setattr(build, "MIXIN_LINT", tmp_path / "mixin.lint")
    assert build.main([]) == 0
    assert {p.relative_to(tmp_path) for p in build.build_files()} == \
        {p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file()}, "everything is written in tmp_path"
    assert build.main(["--check"]) == 0
    path = tmp_path / "middleware-vhi.json"
    path.write_text(path.read_text(encoding="utf-8").replace("250", "251"), encoding="utf-8")
    assert build.main(["--check"]) == 1


def test_the_dashboards_are_the_mixin_render_of_the_sources():
    """dashboards/<uid>.json is the mixin's rendering (python -m tools.mixin) of its source with the configuration,
    which at the default configuration changes nothing (tests/alerting/test_mixin.py renders other configurations)."""
    for uid, dash in _committed().items():
        source = json.loads((build.MIXIN_SOURCES / f"{uid}.json").read_text(encoding="utf-8"))
        assert dash == source, uid
        # every dashboard links to the others (one drop-down of the project's tag, keeping time and variables)
        assert [(link["type"], link["tags"], link["keepTime"], link["includeVars"]) for link in dash["links"]] == \
            [("dashboards", ["middleware-exporter"], True, True)]


def test_output_is_deterministic_and_formatted():
    first, second = build.build_all(), build.build_all()
    assert first == second
    for _uid, content in first.items():
        assert content.endswith("}\n")
        assert content == json.dumps(json.loads(content), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


# --- schema: decode with the SDK's own model ----------------------------------------------------------------------

def test_dashboards_decode_into_the_sdk_model(dashboards):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from grafana_foundation_sdk.cog.encoder import JSONEncoder
        from grafana_foundation_sdk.cog.plugins import register_default_plugins
        from grafana_foundation_sdk.models import dashboard as dm
        from grafana_foundation_sdk.models import prometheus as prom_models
    register_default_plugins()
    for uid, data in dashboards.items():
        model = dm.Dashboard.from_json(data)
        assert model.uid == uid
        for panel in model.panels:
            if isinstance(panel, dm.RowPanel):
                assert not panel.collapsed and not panel.panels, (uid, panel.title)
                continue
            assert isinstance(panel, dm.Panel), (uid, panel)
            for target in panel.targets:
                assert isinstance(target, prom_models.Dataquery), (uid, panel.title, type(target))
        # Decoding and encoding again loses nothing: every key is one the model knows.
        assert json.loads(json.dumps(model, cls=JSONEncoder)) == data, uid


def test_panel_structure(dashboards):
    for uid, dash in dashboards.items():
        assert dash["uid"] == uid and dash["title"]
        ids = [p["id"] for p in dash["panels"]]
        assert len(ids) == len(set(ids)), uid
        for panel in dash["panels"]:
            if panel["type"] == "row":  # a section header, expanded, its panels follow it
                assert panel["title"] and panel["gridPos"] == {"h": 1, "w": 24, "x": 0, "y": panel["gridPos"]["y"]}
                continue
            assert panel["type"] in {"timeseries", "table", "stat"}, (uid, panel.get("title"))
            assert panel["datasource"] == DATASOURCE, (uid, panel["title"])
            assert panel["targets"], (uid, panel["title"])
            grid = panel["gridPos"]
            assert grid["x"] + grid["w"] <= 24 and grid["w"] > 0 and grid["h"] > 0, (uid, panel["title"])
            ref_ids = [t["refId"] for t in panel["targets"]]
            assert len(ref_ids) == len(set(ref_ids)), (uid, panel["title"])
            for target in panel["targets"]:
                assert target["expr"].strip(), (uid, panel["title"])
                assert target["refId"], (uid, panel["title"])
                assert target["legendFormat"], (uid, panel["title"], target["expr"])
                assert target["datasource"] == DATASOURCE, (uid, panel["title"])


def test_template_variables(dashboards):
    for uid, dash in dashboards.items():
        variables = {v["name"]: v for v in dash["templating"]["list"]}
        ds = variables["datasource"]
        assert ds["type"] == "datasource" and ds["query"] == "prometheus"
        inst = variables["instance"]
        assert inst["type"] == "query"
        assert inst["query"] == 'label_values(middleware_exporter_build_info{job=~"$job"}, instance)'
        assert inst["multi"] is True and inst["includeAll"] is True and inst["allValue"] == ".+"
        assert inst["datasource"] == DATASOURCE
        # The job variable: what dashboard-linter's template-job rule asks (dashboards/.lint excludes the rule for its
        # allValue only), with the mixin's middlewareSelector as "All" and the default.
        job = variables["job"]
        assert job["type"] == "query" and job["datasource"] == DATASOURCE and job["label"] == "Job"
        assert job["multi"] is True and job["includeAll"] is True
        assert job["query"] == 'label_values(middleware_exporter_build_info{job=~"middleware.*"}, job)'
        assert job["current"]["value"] == ["$__all"]
        selector = re.search(r"middlewareSelector: 'job=~\"([^\"]+)\"'",
                             (ROOT / "mixin" / "config.libsonnet").read_text()).group(1)
        assert job["allValue"] == selector
        extra = {"middleware-ibmmq": {"qmgr"}, "middleware-oracle": {"database"},
                 "middleware-host": {"nfs_operation"}}.get(uid, set())
        assert set(variables) == {"datasource", "job", "instance"} | extra, uid
        for name in extra:
            assert variables[name]["datasource"] == DATASOURCE
            assert "$instance" in variables[name]["query"]
    for _uid, panel, target in _targets({k: dashboards[k] for k in ("middleware-ibmmq",)}):
        if "ibmmq_" in target["expr"] and not REFERENCE_RE.match(target["expr"]):
            assert "$qmgr" in target["expr"], (panel["title"], target["expr"])
    for _uid, panel, target in _targets({k: dashboards[k] for k in ("middleware-oracle",)}):
        if not REFERENCE_RE.match(target["expr"]):
            assert "$database" in target["expr"], (panel["title"], target["expr"])


def test_firing_alerts_annotation(dashboards):
    for uid, dash in dashboards.items():
        annotations = dash["annotations"]["list"]
        alerts = [a for a in annotations if "ALERTS" in a.get("expr", "")]
        assert len(alerts) == 1, uid
        assert alerts[0]["datasource"] == DATASOURCE
        assert alerts[0]["enable"] is True
        assert 'alertstate="firing"' in alerts[0]["expr"] and 'instance=~"$instance"' in alerts[0]["expr"]


# --- lint ---------------------------------------------------------------------------------------------------------

def test_every_panel_has_title_unit_description(dashboards):
    for uid, panel in _panels(dashboards):
        assert panel.get("title"), uid
        assert panel["fieldConfig"]["defaults"].get("unit"), (uid, panel["title"])
        # The description cites the guide document and one of its rows (or says which it serves).
        assert "docs/sources.md" in panel.get("description", ""), (uid, panel["title"])


def _datasource_refs(node, path=""):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "datasource" and isinstance(value, dict):
                yield path, value
            yield from _datasource_refs(value, f"{path}.{key}")
    elif isinstance(node, list):
        for n, item in enumerate(node):
            yield from _datasource_refs(item, f"{path}[{n}]")


def test_no_hard_coded_datasource(dashboards):
    for uid, dash in dashboards.items():
        refs = list(_datasource_refs(dash))
        assert refs, uid
        for path, ref in refs:
            assert ref == DATASOURCE, (uid, path, ref)
        text = json.dumps(dash)
        assert '"uid": "${datasource}"' in text or '"uid":"${datasource}"' in text


RANGE_FUNCTION_RE = re.compile(r"\b(rate|irate|increase)\s*\(")


def _windows_of_range_functions(expr: str) -> list[str]:
    """The range of every rate(/irate(/increase( call (the [...] inside its parentheses)."""
    windows = []
    for match in RANGE_FUNCTION_RE.finditer(expr):
        depth, i = 1, match.end()
        while i < len(expr) and depth:
            depth += {"(": 1, ")": -1}.get(expr[i], 0)
            i += 1
        windows += re.findall(r"\[([^\]]*)\]", expr[match.end():i])
    return windows


def test_range_functions_use_rate_interval(dashboards):
    assert _windows_of_range_functions('rate(a{b="c"}[5m]) + increase(x[$__rate_interval])') == \
        ["5m", "$__rate_interval"]
    seen = 0
    for uid, panel, target in _targets(dashboards):
        expr = target["expr"]
        if RANGE_FUNCTION_RE.search(expr):
            seen += 1
            windows = _windows_of_range_functions(expr)
            assert windows and all(w == "$__rate_interval" for w in windows), (uid, panel["title"], expr)
    assert seen > 20


def test_every_query_filters_on_instance(dashboards):
    for uid, panel, target in _targets(dashboards):
        expr = target["expr"]
        if REFERENCE_RE.match(expr.strip()):
            assert target["legendFormat"].startswith("guide:"), (uid, panel["title"], expr)
            continue
        assert '"$instance"' in expr, (uid, panel["title"], expr)
        # Every selector: job=~"$job", instance=~"$instance" (what dashboard-linter's target rules check).
        for selector in re.findall(r"\{([^}]*)\}", expr):
            assert 'job=~"$job", instance=~"$instance"' in selector, (uid, panel["title"], expr)
        # Every selector of a metric carries the filter (a bare metric name would mix instances); recording-rule
        # names (level:metric:operations) count as one name.
        for metric in re.findall(r"(?<![\w:])((?:[a-z_]+:)?(?:middleware|ibmmq)_[a-z0-9_]+(?::[a-z0-9_]+)?"
                                 r"|scrape_duration_seconds)(?![\w:{])", expr):
            pytest.fail(f"{uid} / {panel['title']}: {metric} without a label filter in {expr}")


def _threshold_values() -> dict[str, float]:
    """middleware:threshold:<name> -> value, from the recording rules in alerts/<system>.yml."""
    import yaml  # noqa: PLC0415

    values = {}
    for path in sorted((ROOT / "alerts").glob("*.yml")):
        for group in (yaml.safe_load(path.read_text()) or {}).get("groups", []):
            for rule in group["rules"]:
                name = rule.get("record", "")
                if name.startswith("middleware:threshold:"):
                    values[name.split(":")[-1]] = float(re.fullmatch(r"vector\((.+)\)", rule["expr"]).group(1))
    return values


def _reference_values(dash: dict) -> list[float]:
    """The figures a dashboard draws: threshold series (scaled as the query does) and threshold-style constants."""
    thresholds, values = _threshold_values(), []
    for _uid, panel in _panels({"": dash}):
        for target in panel["targets"]:
            match = REFERENCE_RE.match(target["expr"].strip())
            if match:
                scale, one_minus, name = match.groups()
                assert name in thresholds, f"{panel['title']}: no recording rule middleware:threshold:{name}"
                value = thresholds[name]
                values.append(1 - value if one_minus else float(scale or 1) * value)
        for step in panel["fieldConfig"]["defaults"].get("thresholds", {}).get("steps", []):
            if step["value"] is not None:
                values.append(step["value"])
    return values


def test_guide_figures_are_reference_lines(dashboards):
    for uid, figures in REQUIRED_REFERENCES.items():
        values = _reference_values(dashboards[uid])
        for figure in figures:
            assert any(abs(v - figure) < 1e-9 for v in values), f"{uid}: guide figure {figure} is not a reference line"


def test_no_hard_coded_reference_queries(dashboards):
    """Figures with a threshold series are drawn from it; the rest are panel thresholds, never vector(N) queries,
    and every constant is named in the panel's description."""
    for uid, panel, target in _targets(dashboards):
        assert "vector(" not in target["expr"], (uid, panel["title"], target["expr"])
    for uid, panel in _panels(dashboards):
        steps = panel["fieldConfig"]["defaults"].get("thresholds", {}).get("steps", [])
        if any(step["value"] is not None for step in steps):
            assert panel["fieldConfig"]["defaults"]["custom"]["thresholdsStyle"] == {"mode": "dashed"}
            assert "Dashed threshold lines" in panel["description"], (uid, panel["title"])


def test_reference_lines_are_labelled_with_the_guide(dashboards):
    throughput = next(p for p in dashboards["middleware-hpom"]["panels"]
                      if p["title"] == "Messages received per second")
    legends = {t["expr"]: t["legendFormat"] for t in throughput["targets"]}
    assert legends["middleware:threshold:hpom_reference_rate_storm_average"] == "guide: storm average rate"
    assert {f"middleware:threshold:hpom_reference_rate_{n}" for n in ("830_ia64", "821_ia64", "810_parisc")} <= \
        set(legends)
    assert [s["value"] for s in throughput["fieldConfig"]["defaults"]["thresholds"]["steps"]] == [None, 410]
    assert "middleware_hpom_window_received_messages" in throughput["targets"][0]["expr"]
    assert "/ middleware_hpom_window_seconds" in throughput["targets"][0]["expr"]


def test_required_panels_present(dashboards):
    def exprs(uid):
        return "\n".join(t["expr"] for _u, _p, t in _targets({uid: dashboards[uid]}))

    hpom = exprs("middleware-hpom")
    for needle in ("middleware_hpom_queue_size_bytes", "deriv(", "middleware_hpom_active_messages",
                   "middleware_hpom_acknowledged_active_messages", "middleware_hpom_cma_max_per_message",
                   'group="hpom_java_gui"', "middleware_host_cpus", "middleware_hpom_server_process_up",
                   "middleware_hpom_server_variable_follows_guide", "middleware_hpom_history_messages"):
        assert needle in hpom, needle
    oracle = exprs("middleware-oracle")
    for needle in ("middleware_oracle_redo_log_switches_total", "middleware_oracle_redo_group_size_bytes",
                   "middleware_oracle_log_file_switch_waits_total", "middleware_oracle_parameter_value",
                   "middleware_oracle_follows_guide", "middleware_oracle_resource_limit",
                   "middleware_oracle_nfs_mount_follows_guide"):
        assert needle in oracle, needle
    mq = exprs("middleware-ibmmq")
    for needle in ("ibmmq_queue_depth{", "ibmmq_queue_depth_ratio", "topk(", "ibmmq_qmgr_status",
                   "ibmmq_channel_status", 'group="ibmmq"', 'group="mqsi_engine"', 'mode="idle"', 'mode="iowait"'):
        assert needle in mq, needle
    host = exprs("middleware-host")
    for needle in ("middleware_host_procs_running", "middleware_host_procs_blocked",
                   "middleware_host_context_switches_total", "middleware_host_interrupts_total", '"steal"',
                   "middleware_host_swap_in_bytes_total", "middleware_host_page_scans_total",
                   "middleware_host_disk_reads_completed_total", "middleware_host_disk_io_time_seconds_total",
                   "middleware_host_disk_io_time_weighted_seconds_total",
                   # file systems (the alerts' 6 h prediction), NFS mounts, process groups (issue 27)
                   "middleware_filesystem_avail_bytes", "[6h], 24 * 60 * 60)", "[6h], 4 * 60 * 60)",
                   "middleware_filesystem_files_free", "middleware_filesystem_stuck_seconds",
                   "middleware_filesystem_device_error", "middleware_filesystem_readonly",
                   "middleware_mountstats_nfs_operations_response_time_seconds_total",
                   'operation=~"$nfs_operation"', "middleware_mountstats_nfs_operations_transmissions_total",
                   "middleware_mountstats_nfs_operations_major_timeouts_total",
                   "middleware_process_group_open_fds", "middleware_process_group_worst_fd_ratio",
                   "middleware_process_group_read_bytes_total", "middleware_process_group_written_bytes_total",
                   "middleware_process_group_major_page_faults_total",
                   "middleware_process_group_context_switches_total",
                   "middleware_process_group_oldest_start_time_seconds"):
        assert needle in host, needle
    vhi = exprs("middleware-vhi")
    for needle in ("middleware_vhi_sessions_per_cpu", 'level="minimum"', 'level="recommended"',
                   "middleware_host_memory_total_bytes"):
        assert needle in vhi, needle
    exp = exprs("middleware-exporter")
    for needle in ("middleware_scrape_collector_success", "middleware_scrape_collector_duration_seconds",
                   "middleware_scrape_collector_timeout_seconds", "scrape_duration_seconds{",
                   "middleware_certificate_not_after_seconds", "middleware_exporter_tls_certificate_not_after_seconds",
                   # the estate (issue 37, docs/estate.md): /probe's per-target series, the probe and inventory counters
                   "middleware_probe_success{", "middleware_probe_duration_seconds{",
                   "middleware_probe_collection_age_seconds{", "middleware_probe_backoff_seconds{",
                   "middleware_target_last_success_timestamp_seconds{", "middleware_probe_collections_total{",
                   "middleware_probe_requests_total{", "middleware_probe_collections_in_flight{",
                   "middleware_probe_targets{", "middleware_probe_targets_backing_off{",
                   "middleware_inventory_targets{", "middleware_inventory_last_reload_successful{"):
        assert needle in exp, needle


def test_status_mappings_are_the_codes_the_systems_declare(dashboards):
    """The status tables' value mappings are made from the codes and words the systems declare (ibmmq/model.py,
    ibmmq/states.py, hpom/parse.py): every value the collectors emit has its word, and the rendered dashboards show
    those words."""
    from exporter.systems.hpom.parse import PROCESS_STATE_WORDS
    from exporter.systems.ibmmq.model import CHANNEL_STATUS_CODES, SERVICE_STATUS_CODES, channel_status_squash
    from exporter.systems.ibmmq.states import STATES, STATUS_WORDS

    def words(mapping) -> dict[str, str]:
        return {code: result.text for code, result in mapping.options.items()}

    assert set(words(build.QMGR_MAPPING)) == {str(state.status) for state in STATES.values()}
    assert words(build.QMGR_MAPPING) == {str(code): word for code, word in STATUS_WORDS.items()}
    assert words(build.CHANNEL_STATUS_MAPPING) == {str(code): word.lower() for word, code in
                                                   CHANNEL_STATUS_CODES.items()}
    squashed = {str(channel_status_squash(word)) for word in [*CHANNEL_STATUS_CODES, "NOT A STATUS"]}
    assert set(words(build.CHANNEL_MAPPING)) == squashed == {"0", "1", "2"}
    assert words(build.SERVICE_MAPPING) == {str(code): word.lower() for word, code in SERVICE_STATUS_CODES.items()}
    assert words(build.HPOM_PROCESS_MAPPING) == {str(code): word for code, word in PROCESS_STATE_WORDS.items()}
    rendered = json.dumps(dashboards["middleware-ibmmq"])
    assert all(f'"text": "{word.lower()}"' in rendered for word in CHANNEL_STATUS_CODES)


def test_file_system_prediction_is_the_alerts():
    """The space panel's prediction uses the alerts' window and horizons (mixin/config.libsonnet), so a line below 0
    is what MiddlewareFilesystemSpaceFillingUp sees."""
    config = (ROOT / "mixin" / "config.libsonnet").read_text()
    window = re.search(r"fsSpaceFillingUpPredictionWindow: '([^']+)'", config).group(1)
    hours = (int(re.search(r"fsWarningPredictionHours: (\d+)", config).group(1)),
             int(re.search(r"fsCriticalPredictionHours: (\d+)", config).group(1)))
    assert (build.FS_PREDICTION_WINDOW, build.FS_PREDICTION_HOURS) == (window, hours)
    alerts = (ROOT / "alerts" / "filesystem.yml").read_text()
    for h in hours:
        assert f"predict_linear(middleware_filesystem_avail_bytes{{job=~\"middleware.*\", fstype!=\"\", " \
               f"mountpoint!=\"\"}}[{window}], {h} * 60 * 60) < 0" in alerts


def test_node_exporter_variant_file_systems():
    """The variant reads node_filesystem_* (same names and meaning) and has no stuck figure (node_exporter has none);
    the NFS, process-group and certificate series stay the exporter's (its job)."""
    variant = json.loads((DASHBOARDS / "variants" / "node_exporter" / "middleware-host.json").read_text())
    text = json.dumps(variant)
    assert "middleware_filesystem_" not in text and "_stuck" not in text
    table = next(p for p in variant["panels"] if p["title"] == "Stuck, failing and read-only mounts")
    assert [t["expr"] for t in table["targets"]] == [
        '2 * (node_filesystem_device_error{job=~"$job", instance=~"$instance"} == 1) or '
        'node_filesystem_readonly{job=~"$job", instance=~"$instance"} == 1']
    assert "no stuck figure" in table["description"]
    for panel in variant["panels"]:
        for target in panel.get("targets", []):
            if "middleware_mountstats_" in target["expr"] or "middleware_process_group_" in target["expr"]:
                assert 'job=~"$job"' not in target["expr"], (panel["title"], target["expr"])
    operation = next(v for v in variant["templating"]["list"] if v["name"] == "nfs_operation")
    assert 'job=~"middleware.*"' in operation["query"]


def test_all_queries_lists_every_target(dashboards):
    queries = build.all_queries()
    assert queries == [(uid, panel["title"], target["expr"]) for uid, panel, target in _targets(dashboards)]
    assert {uid for uid, _title, _expr in queries} == set(UIDS)
    assert all(isinstance(x, str) for row in queries for x in row)


# --- grafana/dashboard-linter --------------------------------------------------------------------------------------

@pytest.mark.integration
@pytest.mark.parametrize("uid", UIDS + ["variants/node_exporter/middleware-host"])
def test_dashboard_linter_strict_reports_nothing(uid):
    """`dashboard-linter lint --strict` (built from its module source by tests/chart_tools.py; locally a missing
    binary skips, under CI it is built) passes every dashboard and the node_exporter variant, with the reasoned
    exclusions of the .lint beside each."""
    from .. import chart_tools  # noqa: PLC0415 - only this test needs the Go tool

    result = subprocess.run([str(chart_tools.dashboard_linter()), "lint", "--strict", str(DASHBOARDS / f"{uid}.json")],
                            capture_output=True, text=True, timeout=120)
    findings = [line for line in result.stdout.splitlines() if "\u274c" in line or "\u26a0" in line]
    assert result.returncode == 0 and not findings, result.stdout + result.stderr


@pytest.mark.integration
def test_dashboard_linter_exclusions_are_narrow(tmp_path):
    """Control: .lint excludes only the threshold-series targets - a target of the same panel without its job and
    instance matchers is still reported (an entry keyed "targetIdx" instead of "targetidx" would hide it)."""
    from .. import chart_tools  # noqa: PLC0415

    dash = json.loads((DASHBOARDS / "middleware-vhi.json").read_text(encoding="utf-8"))
    panel = next(p for p in dash["panels"] if p["title"] == "Sessions per CPU")
    assert REFERENCE_RE.match(panel["targets"][-1]["expr"])
    panel["targets"][0]["expr"] = "middleware_vhi_sessions_per_cpu"
    (tmp_path / "middleware-vhi.json").write_text(json.dumps(dash), encoding="utf-8")
    (tmp_path / ".lint").write_text((DASHBOARDS / ".lint").read_text(encoding="utf-8"), encoding="utf-8")
    result = subprocess.run([str(chart_tools.dashboard_linter()), "lint", "--strict",
                             str(tmp_path / "middleware-vhi.json")], capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    assert "target idx '0' invalid PromQL query 'middleware_vhi_sessions_per_cpu': job selector not found" in \
        result.stdout
    assert "target idx '2'" not in result.stdout.replace("(Excluded)", "")


def test_lint_exclusions_file_is_current():
    files = build.build_files()
    for lint in (DASHBOARDS / ".lint", DASHBOARDS / "variants" / "node_exporter" / ".lint"):
        assert lint.read_text(encoding="utf-8") == files[lint], lint


def test_runbooks_named_in_descriptions_exist(dashboards):
    """Every docs/runbooks/<file>.md[#anchor] a panel description names exists, with a section of that anchor (the
    alert name in lower case, as the alerts' runbook_url)."""
    named = 0
    for uid, panel in _panels(dashboards):
        for path, anchor in re.findall(r"(docs/runbooks/[a-z]+\.md)(?:#([a-z0-9]+))?", panel["description"]):
            named += 1
            text = (ROOT / path).read_text(encoding="utf-8")
            if anchor:
                headings = {h.strip().lower() for h in re.findall(r"^##+ (.+)$", text, flags=re.M)}
                assert anchor in headings, (uid, panel["title"], path, anchor)
    assert named >= 15
