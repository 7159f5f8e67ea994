"""Runs collectors on their own intervals, isolates their failures, and serves one cached snapshot.

Design (documented in the README, "How collection works"):

* Every enabled collector runs in the background on its own ``interval``; ``/metrics`` never runs a collector.
  Scrapes read the latest snapshot, so two Prometheus replicas scraping every 5 s cost the monitored
  systems nothing more than one, and a slow database cannot stall a scrape.
* Each run happens in a fresh daemon thread.  The scheduler waits at most ``timeout`` seconds for it.  A run
  that raises, returns invalid samples or overruns its timeout marks that collector failed
  (``middleware_scrape_collector_success 0``) and drops its samples from the snapshot; other collectors are
  untouched.  A run still hung at the next tick is not started again (no thread pile-up); the failure says
  how long it has been running.
* The exposition (:mod:`.exposition`) and the exporter's own metrics (:mod:`.selfmetrics`) read the states
  kept here.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

from prometheus_client.core import Metric

from .collector import Collector
from .deadline import BoundedCall, Overdue
from .exposition import Exposition
from .metrics import MetricBatch
from .selfmetrics import SelfMetrics

log = logging.getLogger("middleware_exporter.scheduler")

@dataclass
class CollectorState:
    collector: Collector
    families: list[Metric] = field(default_factory=list)
    success: bool | None = None
    duration: float | None = None
    series: int = 0
    last_success: float = 0.0
    last_run: float | None = None
    last_error: str | None = None
    runs: int = 0
    failures: int = 0
    source_errors: dict[str, str] = field(default_factory=dict)
    version: int = 0  # bumped whenever `families` changes
    logged_failure: float | None = None  # monotonic time of the last failure log line

    @property
    def name(self) -> str:
        return self.collector.name

    def as_json(self) -> dict:
        s = self.collector.settings
        return {
            "name": self.name,
            "description": self.collector.description,
            "enabled": True,
            "interval_seconds": s.interval,
            "timeout_seconds": s.timeout,
            "runs": self.runs,
            "failures": self.failures,
            "last_success": self.success,
            "last_run_timestamp": self.last_run,
            "last_success_timestamp": self.last_success or None,
            "last_duration_seconds": self.duration,
            "series": self.series,
            "last_error": self.last_error,
            "source_errors": self.source_errors,
        }


class Scheduler:
    """Owns the enabled collectors, their worker threads and the rendered snapshot."""

    REPEAT_FAILURE_LOG_SECONDS = 300.0

    def __init__(self, collectors: Iterable[Collector], redact: Callable[[str], str] = lambda s: s,
                 wall_clock: Callable[[], float] = time.time) -> None:
        self.states = {c.name: CollectorState(c) for c in collectors}
        self._redact = redact
        self._wall = wall_clock
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._calls = {name: BoundedCall(name, on_late=self._late_logger(name)) for name in self.states}
        self._generation = 0
        self.start_time = self._wall()
        self.self_metrics = SelfMetrics(self._self_snapshot, self.start_time)
        self.exposition = Exposition(self)

    # ---- running ---------------------------------------------------------------------------------------
    def start(self) -> None:
        for state in self.states.values():
            thread = threading.Thread(target=self._loop, args=(state,), daemon=True,
                                      name=f"schedule-{state.name}")
            thread.start()
            self._threads.append(thread)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=2)
        for state in self.states.values():
            try:
                state.collector.close()
            except Exception:  # noqa: BLE001 - shutdown must go on
                log.warning("collector=%s msg=%r", state.name, "error while closing")

    def _loop(self, state: CollectorState) -> None:
        interval = state.collector.settings.interval
        next_due = time.monotonic()
        while not self._stop.is_set():
            self.run_collector(state.name)
            next_due += interval
            now = time.monotonic()
            if next_due < now:  # a run overran: skip the missed ticks instead of running back to back
                next_due = now + interval
            if self._stop.wait(next_due - now):
                return

    def run_once(self) -> None:
        """Run every collector once, concurrently, and return when all have finished or timed out."""
        threads = [threading.Thread(target=self.run_collector, args=(name,), daemon=True)
                   for name in self.states]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    def run_collector(self, name: str) -> None:
        state = self.states[name]
        collector = state.collector
        timeout = collector.settings.timeout
        with self._lock:
            state.runs += 1
            state.last_run = self._wall()
        started = time.monotonic()
        try:
            batch = self._calls[name](lambda: self._execute(collector), timeout)
        except Overdue as exc:
            self._finish(state, None, str(exc), duration=timeout)
        except BaseException as exc:  # noqa: BLE001 - isolate anything a collector does
            message = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            self._finish(state, None, message, duration=time.monotonic() - started)
        else:
            self._finish(state, batch, None, duration=time.monotonic() - started)
        self.exposition.prerender()

    def run_in_progress(self, name: str) -> bool:
        return self._calls[name].busy

    @staticmethod
    def _execute(collector: Collector) -> MetricBatch:
        batch = MetricBatch(collector.specs(), max_series=collector.settings.max_series)
        collector.collect(batch)
        return batch

    @staticmethod
    def _late_logger(name: str) -> Callable[[float], None]:
        def late(elapsed: float) -> None:
            log.warning("collector=%s msg=%r duration_seconds=%.3f", name,
                        "run finished after its timeout; result discarded", elapsed)
        return late

    def _finish(self, state: CollectorState, batch: MetricBatch | None, error: str | None, duration: float) -> None:
        now_mono = time.monotonic()
        with self._lock:
            was_failing = state.success is False
            state.duration = duration
            if error is None and batch is not None:
                state.success = True
                state.families = batch.families()
                state.series = batch.series
                state.last_success = self._wall()
                state.last_error = None
                new_errors = {k: self._redact(v) for k, v in batch.errors.items()}
                changed = {k: v for k, v in new_errors.items() if state.source_errors.get(k) != v}
                state.source_errors = new_errors
            else:
                state.success = False
                state.failures += 1
                state.families = []
                state.series = 0
                state.last_error = self._redact(error or "unknown error")
                changed = {}
            state.version += 1
            self._generation += 1
        for source, message in changed.items():
            log.warning("collector=%s source=%s msg=%r error=%r", state.name, source, "source failed", message)
        if error is not None:
            repeat = (state.logged_failure is None
                      or now_mono - state.logged_failure >= self.REPEAT_FAILURE_LOG_SECONDS)
            if not was_failing or repeat:
                log.warning("collector=%s msg=%r error=%r", state.name, "collection failed", state.last_error)
                state.logged_failure = now_mono
        elif was_failing:
            log.info("collector=%s msg=%r", state.name, "collection recovered")
            state.logged_failure = None

    # ---- state -----------------------------------------------------------------------------------------
    def ready(self) -> tuple[bool, list[str]]:
        pending = [s.name for s in self.states.values() if s.success is None]
        return not pending, pending

    def status(self) -> list[dict]:
        with self._lock:
            return [state.as_json() for state in self.states.values()]

    def _self_snapshot(self) -> list[tuple]:
        with self._lock:
            return [(s.name, s.success, s.duration, s.last_success, s.series, s.runs, s.failures,
                     s.collector.settings) for s in self.states.values()]

    def families_of(self, name: str) -> tuple[int, list[Metric]]:
        """A collector's last samples and their version (bumped whenever they change)."""
        state = self.states[name]
        with self._lock:
            return state.version, list(state.families)

    @property
    def generation(self) -> int:
        return self._generation

    def render(self, openmetrics: bool = False, compress: bool = False) -> bytes:
        return self.exposition.render(openmetrics, compress)
