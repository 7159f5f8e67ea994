"""The guides' experiments as scenarios: time lines of what the exporter would read, rendered into Prometheus
series with seeded noise, and into ``promtool test rules`` files that check which alerts fire when.

A scenario is one YAML file in ``scenarios/`` (format in ``scenarios/README.md``).  Each signal describes a source
value over time (a queue file's size, a host's CPU idle share, a queue's depth, ...) and becomes the series the
exporter would export for it: gauges as they are, CPU shares and rates as the raw counters the collectors emit, so
the alert rules see exactly what they see in production, recording rules included.  The expectations are checked
with ``group by (alertname) (ALERTS{alertstate="firing"})`` at every check time, so they hold whatever the labels
and annotations of the alert are; every alert of the rule files that a scenario does not expect must stay silent.

    python -m tools.scenarios render scenarios/hpom-message-storm.yaml --seed 3   # the promtool test file
    python -m tools.scenarios series scenarios/hpom-message-storm.yaml --seed 3   # the values, for a look
"""

from __future__ import annotations

import argparse
import copy
import math
import random
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import yaml

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"
ALERTS = ROOT / "alerts"
_DURATION = re.compile(r"^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+(?:\.\d+)?)s)?$")


def seconds(value: Any) -> float:
    """``90``, ``"90s"``, ``"4m38s"``, ``"1h"`` -> seconds."""
    if isinstance(value, (int, float)):
        return float(value)
    match = _DURATION.match(str(value).strip())
    if not match or not any(match.groups()):
        raise ValueError(f"{value!r} is not a duration")
    hours, minutes, secs = match.groups()
    return int(hours or 0) * 3600 + int(minutes or 0) * 60 + float(secs or 0)


def _duration_text(value: float) -> str:
    return f"{int(value)}s" if float(value).is_integer() else f"{value}s"


# ---- time lines ---------------------------------------------------------------------------------------------------

@dataclass
class Timeline:
    """Points (t, value) joined by straight lines (``step: true``: each value holds until the next point)."""

    points: list[tuple[float, float]]
    step: bool = False

    @classmethod
    def parse(cls, spec: Any) -> "Timeline":
        if isinstance(spec, (int, float)):
            return cls([(0.0, float(spec))])
        step = False
        if isinstance(spec, dict):
            step = bool(spec.get("step", False))
            spec = spec["points"]
        points = sorted((seconds(t), float(v)) for t, v in spec)
        if not points:
            raise ValueError("a time line needs at least one point")
        return cls(points, step)

    def at(self, t: float) -> float:
        points = self.points
        if t <= points[0][0]:
            return points[0][1]
        for (t0, v0), (t1, v1) in zip(points, points[1:], strict=False):
            if t0 <= t <= t1:
                if self.step or t1 == t0:
                    return v0 if t < t1 else v1
                return v0 + (v1 - v0) * (t - t0) / (t1 - t0)
        return points[-1][1]


@dataclass
class Noise:
    """Gaussian noise: ``relative`` (share of the value) and ``absolute`` standard deviations."""

    relative: float = 0.0
    absolute: float = 0.0

    @classmethod
    def parse(cls, spec: Any) -> "Noise":
        spec = spec or {}
        return cls(float(spec.get("relative", 0.0)), float(spec.get("absolute", 0.0)))

    def apply(self, value: float, rng: random.Random) -> float:
        sigma = abs(value) * self.relative + self.absolute
        return value + rng.gauss(0.0, sigma) if sigma else value


# ---- signals: a source value over time -> the series the exporter would export --------------------------------------

def _labels(labels: dict[str, Any]) -> str:
    return "{" + ", ".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}"


@dataclass
class Signal:
    kind: str
    metric: str | None
    labels: dict[str, str]
    timeline: Timeline
    noise: Noise
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, spec: dict[str, Any], common: dict[str, str]) -> "Signal":
        kind = spec.get("kind", "gauge")
        if kind not in KINDS:
            raise ValueError(f"signal kind {kind!r}: one of {sorted(KINDS)}")
        labels = {**common, **{k: str(v) for k, v in (spec.get("labels") or {}).items()}}
        extra = {k: v for k, v in spec.items() if k not in ("kind", "metric", "labels", "values", "noise")}
        return cls(kind, spec.get("metric"), labels, Timeline.parse(spec["values"]), Noise.parse(spec.get("noise")),
                   extra)

    def series(self, times: list[float], rng: random.Random) -> dict[str, list[float]]:
        return KINDS[self.kind](self, times, rng)


def _gauge(signal: Signal, times: list[float], rng: random.Random) -> dict[str, list[float]]:
    values = [signal.noise.apply(signal.timeline.at(t), rng) for t in times]
    if not signal.extra.get("negative", False):
        values = [max(0.0, v) for v in values]
    if signal.extra.get("integer", False):
        values = [float(round(v)) for v in values]
    return {f"{signal.metric}{_labels(signal.labels)}": values}


def _counter(signal: Signal, times: list[float], rng: random.Random) -> dict[str, list[float]]:
    """The time line is a rate per second; the series is its running total (never decreasing)."""
    total, values, previous = float(signal.extra.get("start", 0.0)), [], times[0]
    for t in times:
        rate = max(0.0, signal.noise.apply(signal.timeline.at(t), rng))
        total += rate * (t - previous)
        previous = t
        values.append(total)
    return {f"{signal.metric}{_labels(signal.labels)}": values}


def _host_cpu(signal: Signal, times: list[float], rng: random.Random) -> dict[str, list[float]]:
    """The time line is the idle share (0-1); ``iowait`` (a share or a time line) is taken from the rest; the
    remaining busy time is split user 3 : system 1.  Emits the host collector's per-CPU counters and CPU count."""
    cpus = int(signal.extra.get("cpus", 4))
    iowait = Timeline.parse(signal.extra.get("iowait", 0.0))
    series: dict[str, list[float]] = {}
    totals = {mode: [0.0] * cpus for mode in ("idle", "iowait", "user", "system")}
    previous = times[0]
    rows: dict[tuple[int, str], list[float]] = {(cpu, mode): [] for cpu in range(cpus) for mode in totals}
    for t in times:
        dt = t - previous
        previous = t
        for cpu in range(cpus):
            idle = min(1.0, max(0.0, signal.noise.apply(signal.timeline.at(t), rng)))
            wait = min(1.0 - idle, max(0.0, iowait.at(t)))
            busy = 1.0 - idle - wait
            shares = {"idle": idle, "iowait": wait, "user": busy * 0.75, "system": busy * 0.25}
            for mode, share in shares.items():
                totals[mode][cpu] += share * dt
                rows[(cpu, mode)].append(round(totals[mode][cpu], 3))
    for (cpu, mode), values in rows.items():
        series[f"middleware_host_cpu_seconds_total{_labels({**signal.labels, 'cpu': cpu, 'mode': mode})}"] = values
    series[f"middleware_host_cpus{_labels(signal.labels)}"] = [float(cpus)] * len(times)
    return series


def _disk(signal: Signal, times: list[float], rng: random.Random) -> dict[str, list[float]]:
    """The time line is the average service time in seconds per I/O; ``iops`` (a number or time line) the I/O
    rate, split reads 1 : writes 1.  Emits the host collector's disk counters (busy time = iops x service time)."""
    iops = Timeline.parse(signal.extra.get("iops", 100.0))
    queue = float(signal.extra.get("await_factor", 1.5))  # await = service time x this (queueing on top)
    names = {"io": "middleware_host_disk_io_time_seconds_total", "reads": "middleware_host_disk_reads_completed_total",
             "writes": "middleware_host_disk_writes_completed_total",
             "rtime": "middleware_host_disk_read_time_seconds_total",
             "wtime": "middleware_host_disk_write_time_seconds_total"}
    totals = dict.fromkeys(names, 0.0)
    rows: dict[str, list[float]] = {key: [] for key in names}
    previous = times[0]
    for t in times:
        dt, previous = t - previous, t
        ops = max(0.0, signal.noise.apply(iops.at(t), rng)) * dt
        service = max(0.0, signal.noise.apply(signal.timeline.at(t), rng))
        totals["reads"] += ops / 2
        totals["writes"] += ops / 2
        totals["io"] += min(ops * service, dt)
        totals["rtime"] += ops / 2 * service * queue
        totals["wtime"] += ops / 2 * service * queue
        for key in names:
            rows[key].append(round(totals[key], 4))
    return {f"{names[key]}{_labels(signal.labels)}": values for key, values in rows.items()}


def _window(signal: Signal, times: list[float], rng: random.Random) -> dict[str, list[float]]:
    """The time line is an event rate per second (acknowledgements, redo log switches); the series is the number of
    events in the trailing ``window`` (a duration, default 60s), as a query counting the last N seconds reports it.
    Before the scenario starts the rate is the first point's, so the window is full from the first sample.  Noise
    applies to the count; ``integer: true`` rounds it."""
    window = seconds(signal.extra.get("window", "60s"))
    step = 1.0
    start = times[0] - window
    totals = [0.0]  # events from `start` to start + k * step
    for k in range(int((times[-1] - start) / step) + 1):
        totals.append(totals[-1] + max(0.0, signal.timeline.at(start + (k + 0.5) * step)) * step)

    def events_until(t: float) -> float:
        position = (t - start) / step
        k = min(int(position), len(totals) - 2)
        return totals[k] + (totals[k + 1] - totals[k]) * (position - k)

    values = [max(0.0, signal.noise.apply(events_until(t) - events_until(t - window), rng)) for t in times]
    if signal.extra.get("integer", False):
        values = [float(round(v)) for v in values]
    return {f"{signal.metric}{_labels(signal.labels)}": values}


def _process_group(signal: Signal, times: list[float], rng: random.Random) -> dict[str, list[float]]:
    """A process group of the process collector: the time line is the number of processes (rounded); ``cpu`` (a
    number or time line) the CPU seconds per second each process uses, ``system_share`` (default 0.2) the part of
    it in mode system.  Noise applies to the group's CPU.  Emits middleware_process_group_processes and the
    group's middleware_process_group_cpu_seconds_total by mode; the labels name the group and process."""
    cpu = Timeline.parse(signal.extra.get("cpu", 0.0))
    system_share = float(signal.extra.get("system_share", 0.2))
    counts, user, system = [], [], []
    total, previous = 0.0, times[0]
    for t in times:
        count = float(max(0, round(signal.timeline.at(t))))
        total += max(0.0, signal.noise.apply(count * cpu.at(t), rng)) * (t - previous)
        previous = t
        counts.append(count)
        user.append(round(total * (1 - system_share), 3))
        system.append(round(total * system_share, 3))
    return {
        f"middleware_process_group_processes{_labels(signal.labels)}": counts,
        f"middleware_process_group_cpu_seconds_total{_labels({**signal.labels, 'mode': 'user'})}": user,
        f"middleware_process_group_cpu_seconds_total{_labels({**signal.labels, 'mode': 'system'})}": system,
    }


def _vhi_sessions(signal: Signal, times: list[float], rng: random.Random) -> dict[str, list[float]]:
    """A VHI session server: the time line is the concurrent host sessions (noise applies, rounded); ``cpus`` the
    CPUs the session server may run on (default 1), ``cores`` the physical cores behind them (the collector reads
    them from the sysfs topology; no ``cores``: the series is absent, as from an exporter without the topology),
    ``guide_cpus`` the taskset list of 4 cores (middleware_vhi_session_server_guide_cpus_info).  Emits what the vhi
    collector derives from the one count: sessions, sessions per CPU, the CPU count, the 250 limit and the memory
    formula (512 MB, 1 GB recommended, up to 100 sessions, plus 64 MB / 128 MB per further 100 started), as
    exporter/systems/vhi/collector.py does."""
    cpus = float(signal.extra.get("cpus", 1))
    cores = signal.extra.get("cores")
    guide_cpus = signal.extra.get("guide_cpus")
    limit = float(signal.extra.get("limit", 250))
    mib = 1048576
    series: dict[str, list[float]] = {name: [] for name in ("sessions", "per_cpu", "minimum", "recommended")}
    for t in times:
        sessions = float(max(0, round(signal.noise.apply(signal.timeline.at(t), rng))))
        extra = math.ceil(max(0.0, sessions - 100) / 100)
        series["sessions"].append(sessions)
        series["per_cpu"].append(sessions / cpus)
        series["minimum"].append(float((512 + 64 * extra) * mib))
        series["recommended"].append(float((1024 + 128 * extra) * mib))
    labels = signal.labels
    topology = {}
    if cores is not None:
        topology[f"middleware_vhi_session_server_cores{_labels(labels)}"] = [float(cores)] * len(times)
    if guide_cpus is not None:
        info = _labels({**labels, "cpus": str(guide_cpus)})
        topology[f"middleware_vhi_session_server_guide_cpus_info{info}"] = [1.0] * len(times)
    return {
        f"middleware_vhi_session_server_processes{_labels(labels)}": [1.0] * len(times),
        f"middleware_vhi_sessions{_labels(labels)}": series["sessions"],
        f"middleware_vhi_session_server_cpus{_labels(labels)}": [cpus] * len(times),
        f"middleware_vhi_sessions_per_cpu{_labels(labels)}": series["per_cpu"],
        f"middleware_vhi_sessions_per_cpu_limit{_labels(labels)}": [limit] * len(times),
        f"middleware_vhi_memory_required_bytes{_labels({**labels, 'level': 'minimum'})}": series["minimum"],
        f"middleware_vhi_memory_required_bytes{_labels({**labels, 'level': 'recommended'})}": series["recommended"],
        **topology,
    }


KINDS = {"gauge": _gauge, "counter": _counter, "host_cpu": _host_cpu, "disk": _disk, "window": _window,
         "process_group": _process_group, "vhi_sessions": _vhi_sessions}


# ---- scenarios ------------------------------------------------------------------------------------------------------

@dataclass
class Expectation:
    """An alert that must be firing from ``by`` to ``until`` and must not fire before ``after`` (between the two
    it may or may not: noise moves the exact moment); with ``clear_by``, it must be silent again from then on."""

    alert: str
    after: float
    by: float
    until: float | None
    clear_by: float | None = None


@dataclass
class Scenario:
    name: str
    path: Path
    description: str
    interval: float
    duration: float
    check_every: float
    seeds: int
    signals: list[Signal]
    expect: list[Expectation]
    rule_overrides: dict[str, str]

    @classmethod
    def load(cls, path: Path) -> "Scenario":
        data = yaml.safe_load(path.read_text())
        common = {k: str(v) for k, v in (data.get("labels") or {"instance": "host1:19462",
                                                                  "job": "middleware"}).items()}
        expect = []
        for alert, spec in (data.get("expect") or {}).items():
            by = seconds(spec["by"])
            expect.append(Expectation(alert, seconds(spec.get("after", 0)), by,
                                      seconds(spec["until"]) if spec.get("until") is not None else None,
                                      seconds(spec["clear_by"]) if spec.get("clear_by") is not None else None))
            last = expect[-1]
            if last.clear_by is not None and last.clear_by <= max(last.by, last.until or 0):
                raise ValueError(f"{path.stem}: {alert}: clear_by must come after by and until")
        return cls(
            name=path.stem, path=path, description=str(data.get("description", "")).strip(),
            interval=seconds(data.get("interval", "15s")), duration=seconds(data["duration"]),
            check_every=seconds(data.get("check_every", "1m")), seeds=int(data.get("seeds", 10)),
            signals=[Signal.parse(s, common) for s in data["signals"]], expect=expect,
            rule_overrides={k: str(v) for k, v in (data.get("thresholds") or {}).items()},
        )

    def times(self) -> list[float]:
        steps = int(self.duration // self.interval)
        return [i * self.interval for i in range(steps + 1)]

    def series(self, seed: int) -> dict[str, list[float]]:
        rng = random.Random(f"{self.name}:{seed}")
        times = self.times()
        result: dict[str, list[float]] = {}
        for signal in self.signals:
            result.update(signal.series(times, rng))
        return result

    def check_times(self) -> list[float]:
        steps = int(self.duration // self.check_every)
        return [i * self.check_every for i in range(1, steps + 1)]

    def expected_firing(self, alert: str, t: float) -> bool | None:
        """True: must be firing at t; False: must not; None: either (the window where noise decides)."""
        for e in self.expect:
            if e.alert != alert:
                continue
            if t < e.after or (e.clear_by is not None and t >= e.clear_by):
                return False
            if t >= e.by and (e.until is None or t <= e.until):
                return True
            return None
        return False


def alert_names(rule_files: Iterable[Path]) -> list[str]:
    names = []
    for path in rule_files:
        for group in (yaml.safe_load(path.read_text()) or {}).get("groups", []):
            names += [rule["alert"] for rule in group.get("rules", []) if "alert" in rule]
    return sorted(set(names))


def rule_files() -> list[Path]:
    return sorted(p for p in ALERTS.glob("*.yml") if p.name != "alertmanager.yml")


def _value_text(values: list[float]) -> str:
    return " ".join(f"{v:.6g}" for v in values)


def render(scenario: Scenario, seeds: Iterable[int], rules_dir: Path) -> dict[str, Any]:
    """The promtool test document, one test group per seed.  ``rules_dir`` holds copies of the rule files (with
    the scenario's threshold overrides applied), referenced relative to where the test file is written."""
    alerts = alert_names(rule_files())
    unknown = [e.alert for e in scenario.expect if e.alert not in alerts]
    if unknown:
        raise ValueError(f"{scenario.name}: expects alerts the rule files do not have: {unknown}")
    # One check per time: the alerts firing then, leaving out those whose moment noise decides, must be exactly
    # those that must fire (a third of the promtool time of one check per alert and time).
    checks = []
    for t in scenario.check_times():
        wanted = {alert: scenario.expected_firing(alert, t) for alert in alerts}
        undecided = "|".join(alert for alert, want in wanted.items() if want is None)
        selector = 'alertstate="firing"' + (f', alertname!~"{undecided}"' if undecided else "")
        checks.append({
            "expr": f"group by (alertname) (ALERTS{{{selector}}})",
            "eval_time": _duration_text(t),
            "exp_samples": [{"labels": f'{{alertname="{alert}"}}', "value": 1}
                            for alert, want in wanted.items() if want],
        })
    return {
        "rule_files": [str(rules_dir / p.name) for p in rule_files()],
        "evaluation_interval": _duration_text(scenario.interval),
        "tests": [{
            "name": f"{scenario.name} seed {seed}",
            "interval": _duration_text(scenario.interval),
            "input_series": [{"series": name, "values": _value_text(values)}
                             for name, values in sorted(scenario.series(seed).items())],
            "promql_expr_test": copy.deepcopy(checks),  # no YAML aliases: promtool refuses many of them
        } for seed in seeds],
    }


def write_rules(scenario: Scenario, target: Path) -> None:
    """Copies of the rule files, with ``middleware:threshold:<name>`` overridden where the scenario says so."""
    target.mkdir(parents=True, exist_ok=True)
    for path in rule_files():
        data = yaml.safe_load(path.read_text())
        for group in data.get("groups", []):
            for rule in group.get("rules", []):
                name = str(rule.get("record", "")).removeprefix("middleware:threshold:")
                if rule.get("record", "").startswith("middleware:threshold:") and name in scenario.rule_overrides:
                    rule["expr"] = f"vector({scenario.rule_overrides[name]})"
        (target / path.name).write_text(yaml.safe_dump(data, sort_keys=False))


def scenarios() -> list[Scenario]:
    return [Scenario.load(p) for p in sorted(SCENARIOS.glob("*.yaml"))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=("render", "series"))
    parser.add_argument("scenario", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    scenario = Scenario.load(args.scenario)
    if args.what == "series":
        times = scenario.times()
        for name, values in sorted(scenario.series(args.seed).items()):
            print(name)
            print("  " + " ".join(f"{_duration_text(t)}={v:.4g}" for t, v in zip(times, values, strict=True)))
        return 0
    print(yaml.safe_dump(render(scenario, [args.seed], Path("rules")), sort_keys=False, width=10**6))
    return 0


if __name__ == "__main__":
    sys.exit(main())
