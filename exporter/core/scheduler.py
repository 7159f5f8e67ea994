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
* Failures are logged once per distinct cause: when a collector or source starts failing, when the cause changes
  (compared by :func:`cause_key`, which ignores the parts that vary from run to run: numbers, addresses,
  connection ids), and when it recovers; sources failing for the same cause share one line.  Every text is
  scrubbed of secrets (``redact``) before it is kept or logged.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

from prometheus_client.core import Metric

from .collector import Collector
from .deadline import BoundedCall, Overdue
from .exposition import Exposition
from .metrics import MetricBatch
from .secrets import scrub
from .selfmetrics import SelfMetrics

log = logging.getLogger("middleware_exporter.scheduler")

# The parts of an error text that change from one attempt to the next without a change of cause.
_VARYING = re.compile(
    r"(?P<uuid>\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b)"
    r"|(?P<idkv>\b(?:[A-Za-z]+[_-])?(?:id|ID|Id)\s*[=:]\s*)[^\s,;)\]}'\"]+"
    r"|(?P<addr>\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b|\[[0-9a-fA-F:.]+\](?::\d+)?)"
    r"|(?P<hex>\b0x[0-9a-fA-F]+\b)"
    r"|(?P<token>(?<![\w+=-])(?=[A-Za-z0-9+_-]*\d)(?=[A-Za-z0-9+_-]*[A-Za-z])[A-Za-z0-9+_-]{12,}={0,2})"
    r"|(?P<code>\b[A-Za-z]+-?\d+[A-Za-z]?\b"
    r"|(?i:\b(?:http|status|errno|reason|code|rc|mqrc|sqlcode|exit status|exit code|exited(?: with)?|signal)"
    r"[\s:=#\[]*)-?\d+)"
    r"|(?P<number>\d+(?:[.,]\d+)*)")
_EXCEPTION_PREFIX = re.compile(r"^(?:[A-Za-z_.]*(?:Error|Exception|Unavailable|Overdue): )+")
_ASIDE = re.compile(r"\s*\(\s*N\s*(?:ms|s|seconds?|minutes?|m|h)?\s*(?:left|remaining|ago|elapsed)?\s*\)")


def cause_key(message: str) -> str:
    """What a failure is, without what varies between attempts: numbers, durations, addresses, connection and
    session ids, hex values and random tokens are replaced; error codes (ORA-12541, AMQ9208E, HTTP 401,
    [Errno 111]) are kept, so a change of cause still shows."""

    def replace(match: re.Match[str]) -> str:
        kind = match.lastgroup
        if kind == "code":
            return match.group(0)
        if kind == "idkv":
            return match.group("idkv") + "<id>"
        return {"uuid": "<id>", "addr": "<addr>", "hex": "<hex>", "token": "<id>", "number": "N"}[kind or "number"]

    message = _EXCEPTION_PREFIX.sub("", message)  # "ConnectionError: x" and "x" are one cause
    return _ASIDE.sub("", _VARYING.sub(replace, message)).strip()


def _read_something(families: list[Metric], errors: dict[str, str]) -> bool:
    """False when the run noted source errors and every ``*_success`` sample it has is 0: nothing was read."""
    if not errors:
        return True
    values = [sample.value for family in families if family.name.endswith("_success") for sample in family.samples]
    return not values or any(value == 1 for value in values)

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
    working: bool | None = None  # the last run succeeded and read at least one of its sources
    logged_cause: str | None = None  # cause_key of the collector failure last logged (None: not failing)
    logged_sources: dict[str, str] = field(default_factory=dict)  # source -> cause_key last logged

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


def _names(sources: list[str], shown: int = 8) -> str:
    names = ",".join(sorted(sources)[:shown])
    return names + (f",...({len(sources) - shown} more)" if len(sources) > shown else "")


class Scheduler:
    """Owns the enabled collectors, their worker threads and the rendered snapshot."""

    def __init__(self, collectors: Iterable[Collector], redact: Callable[[str], str] = scrub,
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

    def stop(self, wait: float = 2.0) -> None:
        """Stop the loops, waiting at most ``wait`` seconds in all (a loop still waiting on a hung run is a daemon
        thread and is left behind), then close the collectors."""
        self._stop.set()
        give_up = time.monotonic() + wait
        for thread in self._threads:
            thread.join(timeout=max(give_up - time.monotonic(), 0))
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
        batch = MetricBatch(collector.specs(), max_series=collector.settings.max_series,
                            const_labels=collector.const_labels())
        collector.collect(batch)
        return batch

    @staticmethod
    def _late_logger(name: str) -> Callable[[float], None]:
        def late(elapsed: float) -> None:
            log.warning("collector=%s msg=%r duration_seconds=%.3f", name,
                        "run finished after its timeout; result discarded", elapsed)
        return late

    def _finish(self, state: CollectorState, batch: MetricBatch | None, error: str | None, duration: float) -> None:
        with self._lock:
            state.duration = duration
            if error is None and batch is not None:
                state.success = True
                state.families = batch.families()
                state.series = batch.series
                state.last_success = self._wall()
                state.last_error = None
                state.source_errors = {k: self._redact(v) for k, v in batch.errors.items()}
                state.working = _read_something(state.families, state.source_errors)
            else:
                state.success = False
                state.working = False
                state.failures += 1
                state.families = []
                state.series = 0
                state.last_error = self._redact(error or "unknown error")
            state.version += 1
            self._generation += 1
        self._log_changes(state, error is None and batch is not None)

    def _log_changes(self, state: CollectorState, succeeded: bool) -> None:
        """One line per new cause: the collector's failure, the sources that fail for the same cause together;
        and one line on recovery.  A failure that goes on with the same cause is not logged again."""
        if not succeeded:
            cause = cause_key(state.last_error or "")
            if cause != state.logged_cause:
                log.warning("collector=%s msg=%r error=%r", state.name, "collection failed", state.last_error)
                state.logged_cause = cause
            return  # the sources' state is unknown after a failed run: keep what was logged
        if state.logged_cause is not None:
            log.info("collector=%s msg=%r", state.name, "collection recovered")
            state.logged_cause = None
        new_causes: dict[str, list[str]] = {}
        messages: dict[str, str] = {}
        current: dict[str, str] = {}
        for source, message in state.source_errors.items():
            cause = cause_key(message)
            current[source] = cause
            if state.logged_sources.get(source) != cause:
                new_causes.setdefault(cause, []).append(source)
                messages.setdefault(cause, message)
        recovered = sorted(set(state.logged_sources) - set(current))
        state.logged_sources = current
        for cause, sources in new_causes.items():
            log.warning("collector=%s sources=%s msg=%r error=%r", state.name, _names(sources),
                        "source failed" if len(sources) == 1 else f"{len(sources)} sources failed", messages[cause])
        if recovered:
            log.info("collector=%s sources=%s msg=%r", state.name, _names(recovered),
                     "source recovered" if len(recovered) == 1 else f"{len(recovered)} sources recovered")

    # ---- state -----------------------------------------------------------------------------------------
    def readiness(self) -> dict:
        """``starting`` until every collector has finished its first run; then ``failing`` while none of them
        reads anything (every run failed, or noted errors for all its sources), else ``ready``."""
        with self._lock:
            pending = sorted(s.name for s in self.states.values() if s.success is None)
            failing = sorted(s.name for s in self.states.values() if s.success is not None and not s.working)
        if pending:
            status = "starting"
        elif self.states and len(failing) == len(self.states):
            status = "failing"
        else:
            status = "ready"
        return {"status": status, "ready": status == "ready", "pending_collectors": pending,
                "failing_collectors": failing}

    def ready(self) -> tuple[bool, list[str]]:
        readiness = self.readiness()
        return readiness["ready"], readiness["pending_collectors"]

    def status(self) -> list[dict]:
        with self._lock:
            result = [state.as_json() for state in self.states.values()]
        for item in result:  # scrubbed again: a secret read after the text was kept is masked too
            if item["last_error"]:
                item["last_error"] = self._redact(item["last_error"])
            item["source_errors"] = {k: self._redact(v) for k, v in item["source_errors"].items()}
        return result

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
