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
* The exposition is rendered at most once per snapshot generation and per format (text or OpenMetrics,
  plain or gzip); scrapes between two collections are served from that cache.
"""

from __future__ import annotations

import gzip
import logging
import platform
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

from prometheus_client import CollectorRegistry, ProcessCollector
from prometheus_client import generate_latest as generate_text
from prometheus_client.core import Metric
from prometheus_client.openmetrics.exposition import generate_latest as generate_openmetrics

from . import __version__
from .collector import Collector
from .deadline import BoundedCall, Overdue
from .metrics import NAMESPACE, MetricBatch, MetricSpec

log = logging.getLogger("middleware_exporter.scheduler")

SELF_SPECS = [
    MetricSpec(f"{NAMESPACE}_scrape_collector_success", "gauge",
               "1 if the collector's last run succeeded, 0 if it raised, timed out or produced invalid samples.",
               ("collector",)),
    MetricSpec(f"{NAMESPACE}_scrape_collector_duration_seconds", "gauge",
               "Duration of the collector's last run (the timeout when it overran).", ("collector",)),
    MetricSpec(f"{NAMESPACE}_scrape_collector_last_success_timestamp_seconds", "gauge",
               "Unix time when the collector last succeeded (0 if never).", ("collector",)),
    MetricSpec(f"{NAMESPACE}_scrape_collector_timeout_seconds", "gauge",
               "Configured timeout of the collector.", ("collector",)),
    MetricSpec(f"{NAMESPACE}_scrape_collector_interval_seconds", "gauge",
               "Configured collection interval of the collector.", ("collector",)),
    MetricSpec(f"{NAMESPACE}_scrape_collector_series", "gauge",
               "Series the collector contributed to the last snapshot.", ("collector",)),
    MetricSpec(f"{NAMESPACE}_scrape_collector_runs_total", "counter",
               "Collector runs started.", ("collector",)),
    MetricSpec(f"{NAMESPACE}_scrape_collector_failures_total", "counter",
               "Collector runs that failed (error, timeout, invalid samples, or still hung).", ("collector",)),
    MetricSpec(f"{NAMESPACE}_exporter_build_info", "info",
               "Version of middleware-exporter and of the Python running it.", ()),
    MetricSpec(f"{NAMESPACE}_exporter_start_time_seconds", "gauge",
               "Unix time when the exporter started.", ()),
]


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
        self._cache: dict[tuple[bool, bool], tuple[int, bytes]] = {}
        self._part_cache: dict[tuple[str, bool], tuple[int, bytes]] = {}
        self._last_format: tuple[bool, bool] | None = None  # what the last scrape asked for
        self._render_lock = threading.Lock()
        self._process = ProcessCollector(registry=None)
        self.start_time = self._wall()
        self._registry = CollectorRegistry(auto_describe=False)
        self._registry.register(self)  # prometheus_client calls self.collect() while rendering

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
        self._prerender()

    def _prerender(self) -> None:
        """Render the new snapshot in the format the scrapers use, here in the collector's thread, so that a
        scrape right after a collection does not pay for rendering thousands of series."""
        if self._last_format is not None:
            try:
                self.render(*self._last_format, remember=False)
            except Exception:  # noqa: BLE001 - the scrape will render (and report) it
                pass

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

    # ---- exposition ------------------------------------------------------------------------------------
    def collect(self) -> Iterable[Metric]:
        """The exporter's own metrics (prometheus_client calls this while rendering the self part)."""
        with self._lock:
            snapshot = [(s.name, s.success, s.duration, s.last_success, s.series, s.runs, s.failures,
                         s.collector.settings) for s in self.states.values()]
        self_batch = MetricBatch(SELF_SPECS)
        p = f"{NAMESPACE}_scrape_collector"
        for name, success, duration, last_success, series, runs, failures, settings in snapshot:
            if success is None:
                continue  # not run yet: /readyz says so; no half-truth here
            self_batch.add(f"{p}_success", 1 if success else 0, collector=name)
            self_batch.add(f"{p}_duration_seconds", duration or 0.0, collector=name)
            self_batch.add(f"{p}_last_success_timestamp_seconds", last_success, collector=name)
            self_batch.add(f"{p}_timeout_seconds", settings.timeout, collector=name)
            self_batch.add(f"{p}_interval_seconds", settings.interval, collector=name)
            self_batch.add(f"{p}_series", series, collector=name)
            self_batch.add(f"{p}_runs_total", runs, collector=name)
            self_batch.add(f"{p}_failures_total", failures, collector=name)
        self_batch.add_info(f"{NAMESPACE}_exporter_build_info",
                            {"version": __version__, "python_version": platform.python_version()})
        self_batch.add(f"{NAMESPACE}_exporter_start_time_seconds", self.start_time)
        yield from self_batch.families()
        yield from self._process.collect()

    @property
    def generation(self) -> int:
        return self._generation

    def _render_part(self, state: CollectorState, openmetrics: bool) -> bytes:
        """One collector's samples, rendered once per result of that collector (a queue manager with 10,000
        queues is not rendered again because the host collector produced new figures)."""
        key = (state.name, openmetrics)
        with self._lock:
            version, families = state.version, list(state.families)
        cached = self._part_cache.get(key)
        if cached is not None and cached[0] == version:
            return cached[1]
        body = _render_families(families, openmetrics)
        self._part_cache[key] = (version, body)
        return body

    def render(self, openmetrics: bool = False, compress: bool = False, remember: bool = True) -> bytes:
        """The exposition for the current snapshot, rendered once per generation and format.

        A scrape never waits for a render in progress when an earlier body of the same format exists: it gets
        that one (at most one collection older), while the collector thread finishes the new one."""
        key = (openmetrics, compress)
        if remember:
            self._last_format = key
        cached = self._cache.get(key)
        if cached is not None and cached[0] == self._generation:
            return cached[1]
        if cached is not None and not self._render_lock.acquire(blocking=False):
            return cached[1]
        if cached is None:
            self._render_lock.acquire()
        try:
            generation = self._generation
            cached = self._cache.get(key)
            if cached is not None and cached[0] == generation:
                return cached[1]
            plain_key = (openmetrics, False)
            plain = self._cache.get(plain_key)
            if plain is None or plain[0] != generation:
                own = (generate_openmetrics if openmetrics else generate_text)(self._registry)
                parts = [own[: -len(_EOF)] if openmetrics and own.endswith(_EOF) else own]
                parts += [self._render_part(state, openmetrics) for state in self.states.values()]
                if openmetrics:
                    parts.append(_EOF)
                body = b"".join(parts)
                self._cache[plain_key] = (generation, body)
            else:
                body = plain[1]
            if compress:
                # level 1 for large bodies: a fraction of the CPU of level 6 for a few percent more bytes
                body = gzip.compress(body, compresslevel=6 if len(body) < 1 << 20 else 1, mtime=0)
                self._cache[key] = (generation, body)
            return body
        finally:
            self._render_lock.release()


_EOF = b"# EOF\n"


class _Families:
    def __init__(self, families: list[Metric]) -> None:
        self.families = families

    def collect(self) -> list[Metric]:
        return self.families


def _render_families(families: list[Metric], openmetrics: bool) -> bytes:
    if not families:
        return b""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Families(families))
    body = (generate_openmetrics if openmetrics else generate_text)(registry)
    return body[: -len(_EOF)] if openmetrics and body.endswith(_EOF) else body
