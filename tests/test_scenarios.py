"""The guides' experiments replayed against the alert rules (scenarios/*.yaml, rendered by tools/scenarios.py):
each scenario's expected alerts fire in their window and every other alert stays silent, over several noise
seeds, evaluated by promtool.  The suite runs the first MWE_SCENARIO_SEEDS seeds of each (default 3); the long
form (`MWE_SCENARIO_SEEDS=all`) runs as many as each scenario names (docs/testing.md)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml

from tools import scenarios as sc

from .conftest import require_binary

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


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_scenario_fires_what_it_expects_and_nothing_else(scenario, tmp_path):
    promtool = require_binary("promtool")
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
