"""Collections nobody reads are not made (issue 30): the scheduler runs a collector once at start and then only when
its last result has been read, at most once per interval; a collector that must drain its source runs on every
interval anyway; a hung collector still never stalls a read; a process that execs into a watched name is counted.

Counted in collector runs against a background collector's runs (the clock of these tests), never in seconds.
"""

from __future__ import annotations

import http.client
import json
import os
import threading
import time

import pytest
from prometheus_client.parser import text_string_to_metric_families

from exporter.core.collector import Collector, Context
from exporter.core.metrics import MetricSpec
from exporter.core.scheduler import Scheduler
from exporter.core.settings import CollectorSettings
from tests.support import PYTHON, wait_for_comm

BACKSTOP = 60.0  # seconds: only against a test that would otherwise hang; the loops tick every 0.02 s
UP = MetricSpec("demo_up", "gauge", "-", ())


class Counting(Collector):
    description = "test collector"

    def __init__(self, name: str, interval: float = 0.02, background: bool = False) -> None:
        super().__init__(CollectorSettings(interval=interval, timeout=interval), Context())
        self.name = name  # type: ignore[misc]
        self.collect_in_background = background
        self.calls = 0

    def specs(self) -> list[MetricSpec]:
        return [UP]

    def collect(self, batch) -> None:
        self.calls += 1
        UP.add(batch, 1)


class Hung(Counting):
    def __init__(self, name: str, release: threading.Event) -> None:
        super().__init__(name)
        self.release = release

    def collect(self, batch) -> None:
        self.calls += 1
        if self.calls > 1:
            self.release.wait(BACKSTOP)
        UP.add(batch, 1)


def _wait(condition, what: str) -> None:
    deadline = time.monotonic() + BACKSTOP
    while not condition():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.005)


def test_nobody_reading_means_no_collection_after_the_first():
    """Before issue 30 every collector ran on every interval whether or not anyone scraped: here about 30 runs."""
    clock, demand = Counting("clock", background=True), Counting("demand")
    scheduler = Scheduler([clock, demand])
    scheduler.start()
    try:
        _wait(lambda: clock.calls >= 30, "30 background runs")
        assert demand.calls == 1  # the first run (readiness needs it), then nothing: nobody read it
    finally:
        scheduler.stop()


@pytest.mark.integration  # waits out several intervals
def test_one_collection_per_read_at_most_one_per_interval():
    clock, demand = Counting("clock", background=True), Counting("demand")
    scheduler = Scheduler([clock, demand])
    scheduler.start()
    try:
        _wait(lambda: demand.calls == 1 and clock.calls >= 2, "the first runs")
        for scrape in range(1, 6):
            scheduler.render()  # a scrape: it reads the result, so the next collection is due
            _wait(lambda n=1 + scrape: demand.calls == n, f"the collection after scrape {scrape}")
            ticks = clock.calls
            _wait(lambda t=ticks + 5: clock.calls >= t, "five intervals without a read")
            assert demand.calls == 1 + scrape, "a collection nobody read"
        scheduler.status()  # the status API and page read the snapshot too
        _wait(lambda: demand.calls == 7, "the collection after a status read")
    finally:
        scheduler.stop()


def test_collection_is_timed_for_the_next_expected_read():
    """Reads every 60 s, interval 15 s: the collection runs 15 s before the next expected read (fresh when read,
    one per read), not right after the last read (then 60 s old when read)."""
    demand = Counting("demand", interval=15.0)
    scheduler = Scheduler([demand])
    scheduler._finished_at["demand"] = 90.0
    scheduler._read_at, scheduler._read_gap = 100.0, 60.0
    assert scheduler._next_run("demand", 15.0, started=89.0, now=101.0) == 145.0
    # reads every 5 s (two Prometheus replicas, or a fast scrape): at most once per interval
    scheduler._read_gap = 5.0
    assert scheduler._next_run("demand", 15.0, started=89.0, now=101.0) == 104.0
    # the expected read did not come: due at once when the next one does, then paced again
    scheduler._read_gap = 60.0
    assert scheduler._next_run("demand", 15.0, started=89.0, now=170.0) == 104.0
    # the last result not read since it was published: not due at all
    scheduler._finished_at["demand"] = 100.5
    assert scheduler._next_run("demand", 15.0, started=89.0, now=170.0) is None


def test_a_hung_collector_never_stalls_a_read_and_is_not_started_twice():
    release = threading.Event()
    clock, hung = Counting("clock", background=True), Hung("hung", release)
    scheduler = Scheduler([clock, hung])
    scheduler.start()
    try:
        _wait(lambda: hung.calls == 1 and scheduler.states["hung"].success, "the first run")
        scheduler.render()
        _wait(lambda: hung.calls == 2, "the run that hangs")
        for _ in range(20):  # every read returns the last good data at once, the hung run is not started again
            ticks = clock.calls
            assert b"demo_up" in scheduler.render()
            _wait(lambda t=ticks + 2: clock.calls >= t, "two intervals")
        assert hung.calls == 2
        _wait(lambda: scheduler.states["hung"].success is False, "the overrun reported")
        assert scheduler.states["hung"].last_error_type == "Overdue"  # "timed out", then "still running"
    finally:
        release.set()
        scheduler.stop()


def test_process_execing_into_a_watched_name_is_counted(spawn, start_exporter, tmp_path):
    """A process already known under another name execs (same pid, same start time) into a program whose name a
    group watches: the pass re-reads every process's name each time, so the next collection counts it."""
    watched = tmp_path / "f2watched"
    watched.symlink_to(PYTHON)
    go = tmp_path / "go"
    code = ("import os, sys, time\n"
            f"while not os.path.exists({str(go)!r}):\n    time.sleep(0.02)\n"
            f"os.execv({str(watched)!r}, [{str(watched)!r}, '-c', 'import time; time.sleep(120)'])\n")
    config = ("collectors:\n  process:\n    interval: 0.2s\n    timeout: 0.2s\n    groups:\n"
              "      - name: execed\n        names: [f2watched]\n")
    exporter = start_exporter(config=config)
    proc = spawn("f2plain", python_code=code)
    wait_for_comm(proc, "f2plain")

    def read() -> tuple[float | None, float]:
        value, runs = None, 0.0
        for family in text_string_to_metric_families(exporter.get("/metrics")[2].decode()):
            for sample in family.samples:
                if sample.name == "middleware_process_group_processes" and sample.labels.get("group") == "execed":
                    value = sample.value
                elif (sample.name == "middleware_scrape_collector_runs_total"
                      and sample.labels.get("collector") == "process"):
                    runs = sample.value
        return value, runs

    _, runs = read()
    _wait(lambda: read()[1] >= runs + 2, "a collection after f2plain started")
    assert read()[0] == 0
    go.write_text("")
    wait_for_comm(proc, "f2watched")
    _, runs = read()
    deadline = time.monotonic() + BACKSTOP
    while True:  # the collection that starts after the exec counts it: published at most two runs later
        value, now = read()
        if value == 1:
            break
        assert now <= runs + 2, f"{now - runs:.0f} runs after the exec the group shows {value}"
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_exporter_at_rest_collects_nothing(start_exporter):
    """A real exporter nobody scrapes: its collectors ran once at start and not again (before issue 30: one run
    per interval, here about 25 in 5 s)."""
    exporter = start_exporter(config="collectors:\n  process:\n    interval: 0.2s\n    timeout: 0.2s\n")
    time.sleep(5.0)  # no read: /readyz (the start-up probe) is not one
    runs = {c["name"]: c["runs"] for c in json.loads(exporter.get("/api/v1/collectors")[2])
            if c.get("enabled")}
    assert runs["process"] == 1, runs


def _voluntary_switches(pid: int) -> dict[int, int]:
    """Each thread's voluntary context switches so far (a thread that sleeps and wakes up counts one each time)."""
    counts = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/status") as handle:
                for line in handle:
                    if line.startswith("voluntary_ctxt_switches:"):
                        counts[int(task)] = int(line.split()[1])
        except FileNotFoundError:
            continue  # a thread that ended meanwhile
    return counts


def test_exporter_at_rest_wakes_up_no_thread(start_exporter):
    """An exporter nobody scrapes does not wake up at all: no collector loop, and no web server tick (uvicorn
    polled for shutdown every 0.1 s, and the tick of once a second that replaced it cost 0.35 ms of CPU per second
    at rest: issue 30).  Counted, not timed: a thread's voluntary context switches grow each time it wakes.  A
    window of 3 s in which no thread woke must come within five (the first may still see the start-up's last
    work on a loaded machine); before, the tick woke the main thread in every one."""
    exporter = start_exporter()
    windows = []
    for _ in range(5):
        before = _voluntary_switches(exporter.proc.pid)
        time.sleep(3.0)
        after = _voluntary_switches(exporter.proc.pid)
        woke = {tid: after[tid] - count for tid, count in before.items() if tid in after and after[tid] > count}
        if not woke:
            break
        windows.append(woke)
    else:
        raise AssertionError(f"threads woke up at rest in every window (thread id: times): {windows}")


def test_responses_carry_a_date_header(start_exporter):
    """uvicorn's own Date header needs its once-a-second tick; WebGate writes it instead (RFC 9110 section 6.6.1:
    an origin server with a clock sends one)."""
    from email.utils import parsedate_to_datetime

    from exporter.web.gate import http_date

    assert http_date(0) == b"Thu, 01 Jan 1970 00:00:00 GMT"
    assert http_date(86399.9) == b"Thu, 01 Jan 1970 23:59:59 GMT"
    exporter = start_exporter()
    for path in ("/metrics", "/healthz", "/no-such-page"):
        connection = http.client.HTTPConnection("127.0.0.1", exporter.port, timeout=10)
        try:
            connection.request("GET", path)
            response = connection.getresponse()
            response.read()
            dates = [value for name, value in response.getheaders() if name.lower() == "date"]
        finally:
            connection.close()
        assert len(dates) == 1, (path, response.getheaders())  # one, not uvicorn's and ours
        assert parsedate_to_datetime(dates[0]).tzinfo is not None
