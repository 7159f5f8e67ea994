"""The forecasts of exporter/advisor/forecasts.py: the interpolation returns each document table's own values at
its points, stays between them, flags and clamps outside them; the rendered rule file is current; evaluate() reads a
real scheduler's snapshot.  The recording rules themselves are replayed by promtool (tests/rules/forecasts.test.yml)."""

from __future__ import annotations

from itertools import pairwise

import pytest

from exporter.advisor import forecasts as f
from exporter.advisor import tables as t
from exporter.core.collector import Collector, Context
from exporter.core.metrics import MetricSpec
from exporter.core.scheduler import Scheduler
from exporter.core.settings import CollectorSettings
from exporter.systems.hpom.collector import HpomCollector
from exporter.systems.hpom.settings import HpomSettings

from ..systems.hpom.test_hpom import fake_oracledb, hpom_server  # noqa: F401 - the HPOM fixtures, reused


def test_each_table_returns_its_own_values_at_its_points():
    for acks, seconds in t.TABLE_15_SYNC_SECONDS:
        assert f.MOM_SYNC.at(acks) == (pytest.approx(seconds), False)
    for messages in (5000, 50000):
        assert f.GUI_STARTUP_BY_MESSAGES.at(messages) == (t.TABLE_17_SECONDS[(messages, 2000)][0][1], False)
        for nodes in (500, 2000):  # Table 17's four corners, by messages and nodes, at 1 GUI
            assert f.gui_startup(messages, nodes) == (t.TABLE_17_SECONDS[(messages, nodes)][0][1], False)
        assert f.gui_startup(messages, None) == (t.TABLE_17_SECONDS[(messages, 2000)][0][1], False)


def test_gui_startup_between_and_beyond_the_node_columns():
    # halfway between the columns at 50,000 messages: halfway between 15.662 and 50.498 s
    assert f.gui_startup(50_000, 1250) == (pytest.approx((15.662 + 50.498) / 2), False)
    # more nodes move it one way only (the 2,000 column is slower at every message count)
    values = [f.gui_startup(20_000, n)[0] for n in (500, 800, 1250, 1999, 2000)]
    assert values == sorted(values) and len(set(values)) == len(values)
    # outside 500-2,000 nodes: the nearer column, flagged
    assert f.gui_startup(50_000, 100) == (15.662, True)
    assert f.gui_startup(50_000, 9000) == (50.498, True)
    for cmas, rows in t.TABLE_20_SECONDS.items():  # the factor times the 1-CMA start-up is Table 20's figure
        factor, extrapolated = f.CMA_STARTUP_FACTOR.at(cmas)
        assert not extrapolated and factor * t.TABLE_20_SECONDS[1][0][1] == pytest.approx(rows[0][1])
    for cmas, rate in t.TABLE_19_MSGS_PER_SECOND:
        assert f.THROUGHPUT_BY_CMA.at(cmas) == (rate, False)
    for cpus, gain in t.CPU_DOUBLING_GAIN:
        assert f.VHI_DOUBLING_GAIN.at(cpus) == (gain, False)


def test_mq_gain_reproduces_the_report_rows():
    rows = {r.qmgrs: r for r in t.TEST_CASE_2_NORMAL_P1 if r.rules_engines == 1}
    for n in range(1, 5):
        gain, extrapolated = f.MQ_ADDED_QMGR_GAIN.at(rows[n].cpu_idle_percent / 100)
        assert not extrapolated
        assert rows[n].total_msgs_per_second * (1 + gain) == pytest.approx(rows[n + 1].total_msgs_per_second)
    # below 12 % idle the fail-over run of the same box: 8 -> 10 queue managers lost throughput at 1 % idle
    assert f.MQ_ADDED_QMGR_GAIN.at(0.01)[0] < 0 < f.MQ_ADDED_QMGR_GAIN.at(0.07)[0]
    for name, (source, table) in t.MQ_TEST_CASES.items():  # every transcribed test case gives a usable curve
        points = f.mq_gain_points(table)
        assert len(points) == 4 and source.document == t.MQSI, name


CURVES = [f.MOM_SYNC, f.GUI_STARTUP_BY_MESSAGES, f.CMA_STARTUP_FACTOR, f.THROUGHPUT_BY_CMA, f.VHI_DOUBLING_GAIN,
          f.MQ_ADDED_QMGR_GAIN]


@pytest.mark.parametrize("curve", CURVES, ids=lambda c: f"{c.x_unit}->{c.y_unit or 'ratio'}")
def test_between_points_the_value_lies_between_them_and_moves_one_way(curve):
    for (x0, y0), (x1, y1) in pairwise(curve.points):
        xs = [x0 + (x1 - x0) * k / 10 for k in range(11)]
        ys = [curve.at(x)[0] for x in xs]
        assert all(not curve.at(x)[1] for x in xs)
        assert all(min(y0, y1) - 1e-12 <= y <= max(y0, y1) + 1e-12 for y in ys)
        steps = [b - a for a, b in pairwise(ys)]
        assert all(s >= -1e-12 for s in steps) or all(s <= 1e-12 for s in steps)


@pytest.mark.parametrize("curve", CURVES, ids=lambda c: f"{c.x_unit}->{c.y_unit or 'ratio'}")
def test_outside_the_table_is_flagged_and_clamped(curve):
    below, flagged = curve.at(curve.lo - 1)
    assert flagged and below == curve.points[0][1]
    above, flagged = curve.at(curve.hi * 2 + 1)
    assert flagged
    if curve.slope_beyond is None:
        assert above == curve.points[-1][1]
    else:  # MoM: linear past the table at 12 s per 1,000, as the guide says
        assert above == pytest.approx(curve.points[-1][1] + curve.slope_beyond * (curve.hi + 1))


def test_a_curve_needs_increasing_points():
    with pytest.raises(ValueError):
        f.Curve(((2, 1.0), (1, 2.0)), "x", "y")


def test_the_rule_file_is_a_fresh_render():
    assert f.RULES_FILE.read_text() == f.render_rules(), "run python -m exporter.advisor.forecasts"
    assert f.RULES_FILE.name == "forecasts.libsonnet", "the mixin renders alerts/forecasts.yml from it"
    names = [r["record"] for g in f.recording_rules() for r in g["rules"]]
    assert all(n.startswith("middleware:forecast:") for n in names)
    assert all(n.rsplit("_", 1)[-1] in ("seconds", "ratio", "second", "cpu") for n in names), names


# ---- evaluate() over a real scheduler -----------------------------------------------------------------------------

SPECS = {
    "hpom": [MetricSpec("middleware_hpom_queue_size_bytes", "gauge", "q", ("queue",)),
             MetricSpec("middleware_hpom_queue_entries", "gauge", "q", ("queue",)),
             MetricSpec("middleware_hpom_active_messages", "gauge", "a", ("severity",)),
             MetricSpec("middleware_hpom_active_messages_without_key", "gauge", "a", ("severity",)),
             MetricSpec("middleware_hpom_cma_max_per_message", "gauge", "c"),
             MetricSpec("middleware_hpom_window_received_messages", "gauge", "w"),
             MetricSpec("middleware_hpom_window_seconds", "gauge", "w"),
             MetricSpec("middleware_hpom_forwarded_window_acknowledged_messages", "gauge", "m", ("target",))],
    "vhi": [MetricSpec("middleware_vhi_sessions", "gauge", "s"),
            MetricSpec("middleware_vhi_session_server_cpus", "gauge", "s"),
            MetricSpec("middleware_vhi_sessions_per_cpu", "gauge", "s")],
    "ibmmq": [MetricSpec("ibmmq_qmgr_status", "gauge", "s", ("qmgr",))],
    "host": [MetricSpec("middleware_host_cpu_mode_ratio", "gauge", "m", ("target", "mode"))],
}
SAMPLES = {
    "hpom": [("middleware_hpom_queue_size_bytes", 4_000_000, {"queue": "msgmgrq"}),
             ("middleware_hpom_queue_size_bytes", 1024, {"queue": "actreqq"}),
             ("middleware_hpom_queue_entries", 15_000, {"queue": "msgmgrq"}),
             ("middleware_hpom_active_messages", 20_000, {"severity": "normal"}),
             ("middleware_hpom_active_messages", 7_500, {"severity": "critical"}),
             ("middleware_hpom_active_messages_without_key", 300, {"severity": "normal"}),
             ("middleware_hpom_cma_max_per_message", 10, {}),
             ("middleware_hpom_window_received_messages", 45_000, {}),
             ("middleware_hpom_window_seconds", 300, {}),
             ("middleware_hpom_forwarded_window_acknowledged_messages", 2500, {"target": "mom1"}),
             ("middleware_hpom_forwarded_window_acknowledged_messages", 6000, {"target": "mom2"})],
    "vhi": [("middleware_vhi_sessions", 600, {}), ("middleware_vhi_session_server_cpus", 3, {}),
            ("middleware_vhi_sessions_per_cpu", 200, {})],
    "ibmmq": [("ibmmq_qmgr_status", 2, {"qmgr": "QM1"})],
    "host": [("middleware_host_cpu_mode_ratio", 0.4, {"target": "local", "mode": "idle"}),
             ("middleware_host_cpu_mode_ratio", 0.5, {"target": "local", "mode": "user"})],
}


def _collector(system: str) -> Collector:
    class Stub(Collector):
        name = system
        description = "forecast inputs"
        Settings = CollectorSettings

        def specs(self):
            return SPECS[system]

        def collect(self, batch):
            for metric, value, labels in SAMPLES[system]:
                batch.add(metric, value, **labels)

    return Stub(CollectorSettings(), Context())


@pytest.fixture
def scheduler():
    sched = Scheduler([_collector(s) for s in SPECS])
    sched.run_once()
    return sched


def test_evaluate_reads_the_snapshot_and_cites_each_table(scheduler):
    items = {(i["id"], i["target"]): i for i in f.evaluate(scheduler)}
    keys = {"id", "system", "target", "title", "value", "unit", "inputs", "source", "validity", "extrapolated",
            "metric", "comparison"}
    assert all(set(i) == keys for i in items.values())
    assert all(i["metric"].startswith("middleware:forecast:") and i["source"]["document"] in
               (t.HPOM, t.VHI, t.MQSI) for i in items.values())
    drain = next(i for (fid, _), i in items.items() if fid == "hpom_msgmgrq_time_to_empty")
    assert drain["value"] is None and drain["inputs"] == {"queue_size_bytes": 4_000_000, "queue_entries": 15_000}
    assert "412" in drain["comparison"]
    mom1, mom2 = items[("hpom_mom_ack_sync_eta", "mom1")], items[("hpom_mom_ack_sync_eta", "mom2")]
    assert mom1["value"] == pytest.approx(26.355) and not mom1["extrapolated"]
    assert mom2["value"] == pytest.approx(38.54 + 2000 * 0.012) and mom2["extrapolated"]
    assert "Table 15" in mom1["source"]["section"]
    gui = next(i for (fid, _), i in items.items() if fid == "hpom_java_gui_startup")
    base = 7.413 + (50.498 - 7.413) * (27_500 - 5000) / 45_000
    assert gui["value"] == pytest.approx(base * 20.266 / 13.481, rel=1e-6)
    assert gui["inputs"]["active_messages"] == 27_500 and not gui["extrapolated"]
    assert gui["inputs"]["managed_nodes_assumed"] == 2000 and "2,000 assumed" in gui["validity"]
    ceiling = next(i for (fid, _), i in items.items() if fid == "hpom_throughput_ceiling")
    assert ceiling["value"] == pytest.approx(192.3)
    assert "observed inflow 150 msg/s against a ceiling of 192 msg/s" in ceiling["comparison"]
    assert "Table 13" in ceiling["comparison"]
    headroom = next(i for (fid, _), i in items.items() if fid == "vhi_session_headroom_per_cpu")
    assert headroom["value"] == 50 and "150 more sessions" in headroom["comparison"]
    gain = next(i for (fid, _), i in items.items() if fid == "vhi_cpu_doubling_gain")
    assert gain["value"] == pytest.approx(0.26) and not gain["extrapolated"]
    mq = next(i for (fid, _), i in items.items() if fid == "ibmmq_added_qmgr_throughput_gain")
    assert mq["value"] == pytest.approx(f.MQ_ADDED_QMGR_GAIN.at(0.4)[0]) and mq["inputs"]["cpu_idle_ratio"] == 0.4


def test_outside_a_table_evaluate_says_so(scheduler, monkeypatch):
    monkeypatch.setitem(SAMPLES, "hpom", [("middleware_hpom_active_messages", 90_000, {"severity": "normal"}),
                                          ("middleware_hpom_cma_max_per_message", 0, {})])
    monkeypatch.setitem(SAMPLES, "vhi", [("middleware_vhi_session_server_cpus", 16, {})])
    scheduler.run_once()
    items = {i["id"]: i for i in f.evaluate(scheduler)}
    gui = items["hpom_java_gui_startup"]
    assert gui["extrapolated"] and "outside 5,000-50,000" in gui["validity"]
    assert gui["value"] == pytest.approx(50.498)  # clamped at the table's end, 0 CMAs read as 1
    assert items["vhi_cpu_doubling_gain"]["extrapolated"] and items["vhi_cpu_doubling_gain"]["value"] == 0.14
    assert "vhi_session_headroom_per_cpu" not in items


def test_an_empty_snapshot_gives_no_forecasts():
    sched = Scheduler([_collector("ibmmq")])  # never run: no samples yet
    assert f.evaluate(sched) == []


def test_evaluate_over_the_hpom_collector_fed_by_its_fixtures(request):
    """The real HPOM collector, fed by tests/systems/hpom/fixtures/server (queue files, commands, database rows)."""
    request.getfixturevalue("fake_oracledb")
    settings = request.getfixturevalue("hpom_server")
    sched = Scheduler([HpomCollector(HpomSettings.model_validate(settings), Context())])
    sched.run_once()
    items = {(i["id"], i["target"]): i for i in f.evaluate(sched)}
    gui = next(i for (fid, _), i in items.items() if fid == "hpom_java_gui_startup")
    # 52,712 active messages lie beyond Table 17's 50,000: clamped there and flagged; 1,240 nodes between its
    # 500 and 2,000 columns (15.662 and 50.498 s at 50,000 messages); 14 CMAs within Table 20
    assert gui["inputs"]["active_messages"] == 52_712 and gui["extrapolated"]
    assert gui["inputs"]["managed_nodes"] == 1240 and "managed_nodes_assumed" not in gui["inputs"]
    share = (1240 - 500) / 1500
    assert gui["value"] == pytest.approx((15.662 + (50.498 - 15.662) * share) * f.CMA_STARTUP_FACTOR.at(14)[0])
    assert "1,240 nodes" in gui["validity"] and "1,240 nodes" in gui["comparison"]
    ceiling = next(i for (fid, _), i in items.items() if fid == "hpom_throughput_ceiling")
    assert ceiling["value"] == pytest.approx(192.3 + (112.4 - 192.3) * 4 / 40)
    assert "observed inflow 225 msg/s against a ceiling of 184 msg/s" in ceiling["comparison"]
    assert items[("hpom_mom_ack_sync_eta", "mom-central.example.com")]["value"] == pytest.approx(26.355)
    assert items[("hpom_mom_ack_sync_eta", "mom-backup.example.com")]["value"] == 0
    drain = next(i for (fid, _), i in items.items() if fid == "hpom_msgmgrq_time_to_empty")
    assert drain["inputs"] == {"queue_size_bytes": 123_456, "queue_entries": 241}


def test_every_selector_of_the_forecast_rules_selects_the_job():
    """As tests/alerting/test_mixin.py checks for the mixin's rules: every selector carries the job matcher, except the
    thresholds, which have no scrape job of their own (a forecast keeps its inputs' job, so it is selected too)."""
    import yaml

    from ..alerting.test_mixin import DEFAULT_JOB, _job, _parse

    # the placeholders the mixin fills in: the job selector (the CPU idle through the host selector)
    for group in f.recording_rules():
        for rule in group["rules"]:
            assert "job" not in rule["expr"].replace("%(middlewareSelector)s", ""), rule["record"]
    checked = 0
    rendered = yaml.safe_load((f.RULES_FILE.parents[2] / "alerts" / "forecasts.yml").read_text())
    for group in rendered["groups"]:
        for rule in group["rules"]:
            for selector in _parse(rule["expr"])[0]:
                if (selector.name or "").startswith("middleware:threshold:"):
                    continue
                assert _job(selector) == DEFAULT_JOB, (rule["record"], selector.name)
                checked += 1
    assert checked >= 20
