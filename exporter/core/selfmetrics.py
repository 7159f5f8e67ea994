"""The exporter's own metrics: per collector whether its last run worked, how long it took, when it last worked,
its series and run counts; per target (core/targets.py) whether it is up, when it last was, and its sources'
success; the build info, start time and ``process_*`` figures of the exporter."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable, Iterable

from ..machine.procfs import ProcessEntry, boot_time
from ..machine.proctypes import PAGE_SIZE, USER_HZ
from . import buildinfo
from .metrics import NAMESPACE, MetricBatch, MetricSpec, StaticLabels

if TYPE_CHECKING:
    from prometheus_client.core import Metric

_C = ("collector",)
_P = f"{NAMESPACE}_scrape_collector"
SUCCESS = MetricSpec(f"{_P}_success", "gauge",
                     "1 if the collector's last run worked: it finished in time with valid samples, every target "
                     "it watches is up (middleware_target_up) and every source was read; 0 if it raised, timed out "
                     "or produced invalid samples (failed), or a target is down or a source failed (degraded: "
                     "what was read is served; which source and why in /api/v1/collectors).", _C)
DURATION = MetricSpec(f"{_P}_duration_seconds", "gauge",
                      "Duration of the collector's last run (the timeout when it overran).", _C)
LAST_SUCCESS = MetricSpec(f"{_P}_last_success_timestamp_seconds", "gauge",
                          "Unix time when the collector last worked (success 1; 0 if never).", _C)
TIMEOUT = MetricSpec(f"{_P}_timeout_seconds", "gauge", "Configured timeout of the collector.", _C)
INTERVAL = MetricSpec(f"{_P}_interval_seconds", "gauge", "Configured collection interval of the collector.", _C)
SERIES = MetricSpec(f"{_P}_series", "gauge", "Series the collector contributed to the last snapshot.", _C)
RUNS = MetricSpec(f"{_P}_runs_total", "counter", "Collector runs started.", _C)
FAILURES = MetricSpec(f"{_P}_failures_total", "counter",
                      "Collector runs that did not work (error, timeout, invalid samples, still hung, a target "
                      "down or a source failed).", _C)
_T = ("collector", "target")
TARGET_UP = MetricSpec(f"{NAMESPACE}_target_up", "gauge",
                       "1 if the collector could read the target (a database, queue manager, HPOM server, Domino "
                       "console, host of the text back-end) in its last run, 0 if not: the canonical up/down series "
                       "of every system (docs/architecture.md, Targets).", _T,
                       "MiddlewareExporterTargetDown: down more than half of 10 minutes")
TARGET_LAST_SUCCESS = MetricSpec(f"{NAMESPACE}_target_last_success_timestamp_seconds", "gauge",
                                 "Unix time when the target was last up (0 if never since the exporter started).", _T,
                                 "time() - this: how long it has been down")
TARGET_SOURCE_SUCCESS = MetricSpec(f"{NAMESPACE}_target_source_success", "gauge",
                                   "1 if the source (a query, command or back-end request below the target) was "
                                   "read in the collector's last run, 0 if not; the error is in /api/v1/collectors "
                                   "and on the status page.", (*_T, "source"))
BUILD_INFO = MetricSpec(f"{NAMESPACE}_exporter_build_info", "info",
                        "Version of middleware-exporter, the source revision (unknown for an installed wheel) and "
                        "the version of the Python running it (labels version, revision, pythonversion).", ())
START_TIME = MetricSpec(f"{NAMESPACE}_exporter_start_time_seconds", "gauge", "Unix time when the exporter started.", ())
TLS_NOT_AFTER = MetricSpec(f"{NAMESPACE}_exporter_tls_certificate_not_after_seconds", "gauge",
                           "Unix time after which the exporter's own TLS server certificate (web config cert_file; "
                           "file 'cert' when given inline) is no longer valid; re-read when the file changes; "
                           "absent without TLS.", ("file",),
                           "ssl_exporter: ssl_file_cert_not_after; MiddlewareCertificateExpiresSoon")
TLS_NOT_BEFORE = MetricSpec(f"{NAMESPACE}_exporter_tls_certificate_not_before_seconds", "gauge",
                            "Unix time from which the exporter's own TLS server certificate is valid.", ("file",),
                            "ssl_exporter: ssl_file_cert_not_before")

# The exporter process's own figures, under the names and help texts of prometheus_client's ProcessCollector (what
# every Python exporter has).  Read here rather than by the library's collector: importing prometheus_client costs
# a default start 1.3 MB resident, and these are six numbers from /proc/self (issue 30, docs/footprint.md).
_LIB = "prometheus_client: ProcessCollector, same name"
PROCESS_VIRTUAL_MEMORY = MetricSpec("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", (),
                                    _LIB)
PROCESS_RESIDENT_MEMORY = MetricSpec("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", (),
                                     _LIB)
PROCESS_START_TIME = MetricSpec("process_start_time_seconds", "gauge",
                                "Start time of the process since unix epoch in seconds.", (), _LIB)
PROCESS_CPU = MetricSpec("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.",
                         (), _LIB)
PROCESS_OPEN_FDS = MetricSpec("process_open_fds", "gauge", "Number of open file descriptors.", (), _LIB)
PROCESS_MAX_FDS = MetricSpec("process_max_fds", "gauge", "Maximum number of open file descriptors.", (), _LIB)
PROCESS_SPECS = [PROCESS_VIRTUAL_MEMORY, PROCESS_RESIDENT_MEMORY, PROCESS_START_TIME, PROCESS_CPU, PROCESS_OPEN_FDS,
                 PROCESS_MAX_FDS]

SPECS = [SUCCESS, DURATION, LAST_SUCCESS, TIMEOUT, INTERVAL, SERIES, RUNS, FAILURES, TARGET_UP, TARGET_LAST_SUCCESS,
         TARGET_SOURCE_SUCCESS, BUILD_INFO, START_TIME, TLS_NOT_AFTER, TLS_NOT_BEFORE, *PROCESS_SPECS]


class ProcessFigures:
    """This process's figures from /proc (``proc``: /proc/self, or a recorded tree), read as the process collector
    reads a process (``machine.procfs``): nothing where /proc/<pid>/stat cannot be read (another platform), as the
    library's collector; each other figure only where its file was read."""

    def __init__(self, proc: str = "/proc", pid: str = "self") -> None:
        self._proc = proc
        self._path = f"{proc}/{pid}"
        self._boot_time: float | None = None

    def add(self, batch: MetricBatch) -> None:
        entry = ProcessEntry(0, "", self._path)  # a new entry each time: an entry keeps what it has read
        stat = entry.stat()
        if stat is None:
            return
        PROCESS_VIRTUAL_MEMORY.add(batch, stat.vsize)
        PROCESS_RESIDENT_MEMORY.add(batch, stat.rss_pages * PAGE_SIZE)
        boot = self._boot()
        if boot is not None:
            PROCESS_START_TIME.add(batch, stat.starttime / USER_HZ + boot)
        PROCESS_CPU.add(batch, stat.utime / USER_HZ + stat.stime / USER_HZ)
        fds = entry.open_fds()
        if fds is not None:
            PROCESS_OPEN_FDS.add(batch, fds)
        limit = entry.fd_limit()
        if limit is not None and limit != math.inf:  # "unlimited": no number, as the library gives none
            PROCESS_MAX_FDS.add(batch, limit)

    def _boot(self) -> float | None:
        if self._boot_time is None:
            try:
                self._boot_time = boot_time(self._proc)
            except (OSError, ValueError):
                return None
        return self._boot_time


class SelfMetrics:
    """The exporter's own series over the scheduler's states: :meth:`batch` for the exposition (rendered as every
    collector's batch is), :meth:`collect` as prometheus_client families."""

    def __init__(self, snapshot: Callable[[], list[tuple]], start_time: float,
                 static_labels: StaticLabels | None = None, exporter_wide: bool = True) -> None:
        self._snapshot = snapshot  # the scheduler's consistent list of per-collector figures
        self.start_time = start_time
        # the exporter's configured labels on every series here (build info and process_* too: they select this
        # exporter's series as a whole), a target's own on its middleware_target_* series
        self._static = static_labels or None
        self._process = ProcessFigures()
        # False for the scheduler of one probed target (core/probe.py): its collectors' and targets' series only;
        # the build info, start time and process figures are the exporter's, on /metrics
        self.exporter_wide = exporter_wide
        # more of the exporter's own series (the prober's and the inventory's, core/probe.py): their declarations
        # and what adds their samples
        self.extra: list[tuple[list[MetricSpec], Callable[[MetricBatch], None]]] = []
        # (file, not before, not after) of the server's TLS certificate (web/webconfig.py), set when serving TLS
        self.tls_certificate: Callable[[], tuple[str, float, float] | None] | None = None

    def collect(self) -> Iterable[Metric]:
        return self.batch().families()

    def batch(self, figures: list[tuple] | None = None,
              more: tuple[list[MetricSpec], Callable[[MetricBatch], None]] | None = None) -> MetricBatch:
        """The series of the scheduler's ``figures`` (one tuple per collector, ``Scheduler.snapshot``; None: as
        they are now), and ``more`` (declarations and what adds their samples) for this batch only."""
        extra = [*self.extra, *([more] if more is not None else [])]
        batch = MetricBatch([*SPECS, *(spec for specs, _ in extra for spec in specs)], static_labels=self._static)
        for name, success, duration, last_success, series, runs, failures, settings, targets in \
                (self._snapshot() if figures is None else figures):
            if success is None:
                continue  # not run yet: /readyz says so; no half-truth here
            for target, up, target_success, sources in targets:
                if up is None:
                    continue
                TARGET_UP.add(batch, 1 if up else 0, collector=name, target=target)
                TARGET_LAST_SUCCESS.add(batch, target_success, collector=name, target=target)
                for source, (ok, _) in sorted(sources.items()):
                    TARGET_SOURCE_SUCCESS.add(batch, 1 if ok else 0, collector=name, target=target, source=source)
            SUCCESS.add(batch, 1 if success else 0, collector=name)
            DURATION.add(batch, duration or 0.0, collector=name)
            LAST_SUCCESS.add(batch, last_success, collector=name)
            TIMEOUT.add(batch, settings.timeout, collector=name)
            INTERVAL.add(batch, settings.interval, collector=name)
            SERIES.add(batch, series, collector=name)
            RUNS.add(batch, runs, collector=name)
            FAILURES.add(batch, failures, collector=name)
        if not self.exporter_wide:
            for _, add in extra:
                add(batch)
            return batch
        BUILD_INFO.add_info(batch, buildinfo.labels())
        START_TIME.add(batch, self.start_time)
        validity = self.tls_certificate() if self.tls_certificate is not None else None
        if validity is not None:
            TLS_NOT_AFTER.add(batch, validity[2], file=validity[0])
            TLS_NOT_BEFORE.add(batch, validity[1], file=validity[0])
        self._process.add(batch)
        for _, add in extra:
            add(batch)
        return batch
