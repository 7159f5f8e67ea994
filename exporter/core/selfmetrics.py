"""The exporter's own metrics: per collector whether its last run succeeded, how long it took, when it last
succeeded, its series and run counts; the build info, start time and ``process_*`` figures of the exporter."""

from __future__ import annotations

import platform
from typing import Callable, Iterable

from prometheus_client import ProcessCollector
from prometheus_client.core import Metric

from .. import __version__
from .metrics import NAMESPACE, MetricBatch, MetricSpec

_C = ("collector",)
_P = f"{NAMESPACE}_scrape_collector"
SUCCESS = MetricSpec(f"{_P}_success", "gauge",
                     "1 if the collector's last run succeeded, 0 if it raised, timed out or produced invalid samples.",
                     _C)
DURATION = MetricSpec(f"{_P}_duration_seconds", "gauge",
                      "Duration of the collector's last run (the timeout when it overran).", _C)
LAST_SUCCESS = MetricSpec(f"{_P}_last_success_timestamp_seconds", "gauge",
                          "Unix time when the collector last succeeded (0 if never).", _C)
TIMEOUT = MetricSpec(f"{_P}_timeout_seconds", "gauge", "Configured timeout of the collector.", _C)
INTERVAL = MetricSpec(f"{_P}_interval_seconds", "gauge", "Configured collection interval of the collector.", _C)
SERIES = MetricSpec(f"{_P}_series", "gauge", "Series the collector contributed to the last snapshot.", _C)
RUNS = MetricSpec(f"{_P}_runs_total", "counter", "Collector runs started.", _C)
FAILURES = MetricSpec(f"{_P}_failures_total", "counter",
                      "Collector runs that failed (error, timeout, invalid samples, or still hung).", _C)
BUILD_INFO = MetricSpec(f"{NAMESPACE}_exporter_build_info", "info",
                        "Version of middleware-exporter and of the Python running it.", ())
START_TIME = MetricSpec(f"{NAMESPACE}_exporter_start_time_seconds", "gauge", "Unix time when the exporter started.", ())

SPECS = [SUCCESS, DURATION, LAST_SUCCESS, TIMEOUT, INTERVAL, SERIES, RUNS, FAILURES, BUILD_INFO, START_TIME]


class SelfMetrics:
    """A prometheus_client collector over the scheduler's states (registered by the exposition)."""

    def __init__(self, snapshot: Callable[[], list[tuple]], start_time: float) -> None:
        self._snapshot = snapshot  # the scheduler's consistent list of per-collector figures
        self.start_time = start_time
        self._process = ProcessCollector(registry=None)

    def collect(self) -> Iterable[Metric]:
        batch = MetricBatch(SPECS)
        for name, success, duration, last_success, series, runs, failures, settings in self._snapshot():
            if success is None:
                continue  # not run yet: /readyz says so; no half-truth here
            SUCCESS.add(batch, 1 if success else 0, collector=name)
            DURATION.add(batch, duration or 0.0, collector=name)
            LAST_SUCCESS.add(batch, last_success, collector=name)
            TIMEOUT.add(batch, settings.timeout, collector=name)
            INTERVAL.add(batch, settings.interval, collector=name)
            SERIES.add(batch, series, collector=name)
            RUNS.add(batch, runs, collector=name)
            FAILURES.add(batch, failures, collector=name)
        BUILD_INFO.add_info(batch, {"version": __version__, "python_version": platform.python_version()})
        START_TIME.add(batch, self.start_time)
        yield from batch.families()
        yield from self._process.collect()
