"""The guides' experiments replayed against the alert rules (scenarios/*.yaml, rendered by tools/scenarios.py):
each scenario's expected alerts fire in their window and every other alert stays silent, over several noise
seeds, evaluated by promtool.  The suite runs the first MWE_SCENARIO_SEEDS seeds of each (default 3); the long
form (`MWE_SCENARIO_SEEDS=all`) runs as many as each scenario names (docs/testing.md)."""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

import pytest
import yaml

from tools import scenarios as sc

from ..promtool3 import promtool3
from ..support import require_binary

pytestmark = pytest.mark.integration  # runs promtool or renders the whole mixin: slow, left out of the quick loop

SCENARIOS = sc.scenarios()


def _seeds(scenario: sc.Scenario) -> range:
    wanted = os.environ.get("MWE_SCENARIO_SEEDS", "3")
    return range(scenario.seeds if wanted == "all" else min(int(wanted), scenario.seeds))


def run_promtool(promtool: str, scenario: sc.Scenario, seeds: range, workdir: Path) -> subprocess.CompletedProcess:
    sc.write_rules(scenario, workdir / "rules")
    document = sc.render(scenario, seeds, Path("rules"))
    (workdir / "scenario.test.yml").write_text(yaml.safe_dump(document, sort_keys=False, width=10**6))
    return subprocess.run([promtool, "test", "rules", "scenario.test.yml"], cwd=workdir, capture_output=True,
                          text=True, timeout=600)


@pytest.mark.parametrize("major", ["2", "3"], ids=["prometheus-2.42", "prometheus-3.x"])
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_scenario_fires_what_it_expects_and_nothing_else(scenario, major, tmp_path):
    promtool = require_binary("promtool") if major == "2" else promtool3()
    result = run_promtool(promtool, scenario, _seeds(scenario), tmp_path)
    assert result.returncode == 0, f"{scenario.name}:\n{result.stderr[-6000:]}"


def test_every_scenario_cites_its_source_and_states_what_it_proves():
    assert len(SCENARIOS) >= 3
    for scenario in SCENARIOS:
        data = yaml.safe_load(scenario.path.read_text())
        assert data.get("source") and data.get("description"), scenario.name
        assert scenario.seeds >= 10, f"{scenario.name}: many seeds, not one lucky one"
        assert any(s.noise.relative or s.noise.absolute for s in scenario.signals), f"{scenario.name}: noise"


def test_the_checker_catches_a_misfire(tmp_path):
    """The harness itself: a scenario expecting silence while its queue is stuck must fail under promtool."""
    promtool = require_binary("promtool")
    stuck = sc.Scenario.load(sc.SCENARIOS / "hpom-queue-stuck.yaml")
    stuck.expect = []
    result = run_promtool(promtool, stuck, range(1), tmp_path)
    assert result.returncode != 0
    assert "MiddlewareHpomMessageQueueNotDraining" in result.stdout + result.stderr


def test_timelines_interpolate_and_noise_is_seeded():
    line = sc.Timeline.parse([["0s", 0], ["10s", 100], ["20s", 0]])
    assert [line.at(t) for t in (0, 5, 10, 15, 20, 30)] == [0, 50, 100, 50, 0, 0]
    step = sc.Timeline.parse({"step": True, "points": [["0s", 1], ["1m", 5]]})
    assert (step.at(59), step.at(60)) == (1, 5)
    storm = sc.Scenario.load(sc.SCENARIOS / "hpom-message-storm.yaml")
    assert storm.series(1) == storm.series(1) != storm.series(2)
    assert sc.seconds("4m38s") == 278 and sc.seconds("1h") == 3600


def _signal(spec: dict) -> sc.Signal:
    return sc.Signal.parse(spec, {"instance": "h:1", "job": "middleware"})


def test_window_counts_the_events_of_the_trailing_window():
    # 0.5 events/s, and 10,000 more spread over 100 s from 60 s: a 60 s window never holds all of the bulk
    signal = _signal({"kind": "window", "metric": "m", "window": "60s",
                      "values": [[0, 0.5], [60, 0.5], [60.5, 100.5], [160, 100.5], [160.5, 0.5], [600, 0.5]]})
    times = [float(t) for t in range(0, 601, 15)]
    (values,) = signal.series(times, random.Random(0)).values()
    assert values[0] == pytest.approx(30, abs=1)  # the window is full of the steady rate from the first sample
    assert max(values) == pytest.approx(6030, abs=60)
    assert values[-1] == pytest.approx(30, abs=1)
    hourly = _signal({"kind": "window", "metric": "m", "window": "1h", "values": 1 / 300, "integer": True})
    assert set(*hourly.series([0.0, 1800.0, 3600.0], random.Random(0)).values()) == {12.0}


def test_process_group_emits_count_and_cpu_counters():
    signal = _signal({"kind": "process_group", "labels": {"group": "hpom_java_gui", "process": "opcuiwww"},
                      "values": {"step": True, "points": [[0, 4], [60, 8]]}, "cpu": 0.25, "system_share": 0.2})
    series = signal.series([0.0, 30.0, 60.0, 90.0], random.Random(0))
    assert series['middleware_process_group_processes{group="hpom_java_gui", instance="h:1", job="middleware", '
                  'process="opcuiwww"}'] == [4, 4, 8, 8]
    cpu = 'middleware_process_group_cpu_seconds_total{group="hpom_java_gui", instance="h:1", job="middleware", '
    user, system = series[cpu + 'mode="user", process="opcuiwww"}'], series[cpu + 'mode="system", process="opcuiwww"}']
    # as for counters, each sample's rate covers the interval up to it: 4 x 0.25 CPU for 30 s, then 8 x 0.25 for
    # 60 s: 150 CPU seconds, a fifth of them system
    assert user[-1] + system[-1] == pytest.approx(150) and system[-1] == pytest.approx(30)


def test_vhi_sessions_derive_per_cpu_and_the_memory_formula():
    signal = _signal({"kind": "vhi_sessions", "cpus": 2, "values": [[0, 100], [60, 350]]})
    series = signal.series([0.0, 60.0], random.Random(0))
    labels = '{instance="h:1", job="middleware"}'
    assert series[f"middleware_vhi_sessions{labels}"] == [100, 350]
    assert series[f"middleware_vhi_sessions_per_cpu{labels}"] == [50, 175]
    assert series[f"middleware_vhi_session_server_cpus{labels}"] == [2, 2]
    # no cores given: absent, as from an exporter without the CPU topology (MiddlewareVhiCpuCoresUnknown's case)
    assert not any("session_server_cores" in name or "guide_cpus" in name for name in series)
    smt = _signal({"kind": "vhi_sessions", "cpus": 8, "cores": 8, "guide_cpus": "0-3,8-11", "values": 600})
    smt_series = smt.series([0.0, 60.0], random.Random(0))
    assert smt_series[f"middleware_vhi_session_server_cores{labels}"] == [8, 8]
    assert smt_series['middleware_vhi_session_server_guide_cpus_info{cpus="0-3,8-11", instance="h:1", '
                  'job="middleware"}'] == [1, 1]
    minimum = series['middleware_vhi_memory_required_bytes{instance="h:1", job="middleware", level="minimum"}']
    assert minimum == [512 * 1048576, (512 + 3 * 64) * 1048576]  # 250 further sessions: 3 started hundreds


def test_clear_by_makes_an_alert_that_fired_required_silent_again():
    ack = sc.Scenario.load(sc.SCENARIOS / "hpom-ack-bulk.yaml")
    name = "MiddlewareHpomAcknowledgementBulkTooLarge"
    (e,) = [e for e in ack.expect if e.alert == name]
    assert [ack.expected_firing(name, t) for t in (e.after - 1, e.by, e.until, e.clear_by)] == [False, True, True,
                                                                                               False]
    assert ack.expected_firing(name, (e.until + e.clear_by) / 2) is None


def test_clear_by_before_until_is_refused(tmp_path):
    text = (sc.SCENARIOS / "hpom-ack-bulk.yaml").read_text().replace("clear_by: 38m", "clear_by: 30m")
    (tmp_path / "bad.yaml").write_text(text)
    with pytest.raises(ValueError, match="clear_by"):
        sc.Scenario.load(tmp_path / "bad.yaml")
