"""A collector that raises, hangs past its timeout or returns garbage must not break /metrics or its neighbours."""

from __future__ import annotations

import gzip
import threading
import time

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from exporter.core.collector import Collector, Context
from exporter.core.metrics import MetricBatch, MetricSpec
from exporter.core.scheduler import Scheduler
from exporter.core.settings import CollectorSettings
from exporter.server import create_app


class _Base(Collector):
    description = "test collector"

    def __init__(self, name: str, timeout: float = 0.5, interval: float = 60.0) -> None:
        super().__init__(CollectorSettings(interval=interval, timeout=timeout), Context())
        self.name = name
        self.calls = 0

    def specs(self):
        return [MetricSpec(f"test_{self.name}_value", "gauge", "A test value.", ("k",)),
                MetricSpec(f"test_{self.name}_events_total", "counter", "A test counter.", ())]


class Good(_Base):
    def collect(self, batch: MetricBatch) -> None:
        self.calls += 1
        batch.add(f"test_{self.name}_value", 42, k="a")
        batch.add(f"test_{self.name}_events_total", self.calls)


class Raising(_Base):
    def collect(self, batch):
        batch.add(f"test_{self.name}_value", 1, k="partial")  # samples before the error must not leak out
        raise RuntimeError("source exploded")


class Hanging(_Base):
    def __init__(self, name: str, timeout: float = 0.3) -> None:
        super().__init__(name, timeout=timeout)
        self.release = threading.Event()

    def collect(self, batch):
        self.calls += 1
        self.release.wait(30)
        batch.add(f"test_{self.name}_value", 7, k="late")


class Undeclared(_Base):
    def collect(self, batch):
        batch.add("node_cpu_seconds_total", 1)  # a name it never declared (could collide with another exporter)


class Duplicate(_Base):
    def collect(self, batch):
        batch.add(f"test_{self.name}_value", 1, k="x")
        batch.add(f"test_{self.name}_value", 2, k="x")  # Prometheus would reject the whole scrape


class NotANumber(_Base):
    def collect(self, batch):
        batch.add(f"test_{self.name}_value", "12 MB", k="x")


class WrongLabels(_Base):
    def collect(self, batch):
        batch.add(f"test_{self.name}_value", 1, k="x", extra="y")


class NegativeCounter(_Base):
    def collect(self, batch):
        batch.add(f"test_{self.name}_events_total", -5)


def _samples(body: bytes) -> dict[tuple[str, tuple], float]:
    result = {}
    for family in text_string_to_metric_families(body.decode()):
        for sample in family.samples:
            result[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return result


def _success(samples, name):
    return samples[("middleware_scrape_collector_success", (("collector", name),))]


@pytest.mark.parametrize("bad_cls,error_fragment", [
    (Raising, "RuntimeError: source exploded"),
    (Undeclared, "not declared"),
    (Duplicate, "duplicate series"),
    (NotANumber, "is not a number"),
    (WrongLabels, "do not match the declared"),
    (NegativeCounter, "negative"),
])
def test_failing_collector_is_isolated(bad_cls, error_fragment):
    good, bad = Good("good"), bad_cls("bad")
    scheduler = Scheduler([good, bad])
    scheduler.run_once()
    client = TestClient(create_app(scheduler))
    response = client.get("/metrics")
    assert response.status_code == 200
    samples = _samples(response.content)
    assert _success(samples, "good") == 1
    assert _success(samples, "bad") == 0
    assert samples[("test_good_value", (("k", "a"),))] == 42
    assert not any(name.startswith("test_bad_") for name, _ in samples), "failed collector's samples leaked"
    status = {c["name"]: c for c in client.get("/api/v1/collectors").json()}
    assert status["bad"]["last_success"] is False
    assert error_fragment in status["bad"]["last_error"]
    assert status["good"]["last_error"] is None


def test_hanging_collector_times_out_and_is_not_restarted_while_hung():
    good, hung = Good("good"), Hanging("hung", timeout=0.3)
    scheduler = Scheduler([good, hung])
    client = TestClient(create_app(scheduler))
    started = time.monotonic()
    scheduler.run_once()
    elapsed = time.monotonic() - started
    assert elapsed < 5, "run_once waited for the hung collector instead of its timeout"
    response = client.get("/metrics")
    assert response.status_code == 200
    samples = _samples(response.content)
    assert _success(samples, "hung") == 0
    assert _success(samples, "good") == 1
    assert samples[("middleware_scrape_collector_duration_seconds", (("collector", "hung"),))] == pytest.approx(0.3)
    assert "timed out after 0.3s" in scheduler.states["hung"].last_error

    # The next tick finds the previous run still hung: no second thread is started.
    scheduler.run_collector("hung")
    assert hung.calls == 1
    assert "still running" in scheduler.states["hung"].last_error
    assert scheduler.states["hung"].failures == 2

    # When it finally returns, its late result is discarded, and the next run starts normally.
    hung.release.set()
    for _ in range(50):
        if not scheduler.run_in_progress("hung"):
            break
        time.sleep(0.02)
    assert ("test_hung_value", (("k", "late"),)) not in _samples(client.get("/metrics").content)
    scheduler.run_collector("hung")
    assert hung.calls == 2
    samples = _samples(client.get("/metrics").content)
    assert _success(samples, "hung") == 1
    assert samples[("test_hung_value", (("k", "late"),))] == 7


def test_collector_recovers_and_counts_runs_and_failures():
    class Flaky(Good):
        fail = True

        def collect(self, batch):
            if self.fail:
                raise OSError("connection refused")
            super().collect(batch)

    flaky = Flaky("flaky")
    scheduler = Scheduler([flaky])
    scheduler.run_once()
    flaky.fail = False
    scheduler.run_once()
    samples = _samples(scheduler.render())
    assert _success(samples, "flaky") == 1
    assert samples[("middleware_scrape_collector_runs_total", (("collector", "flaky"),))] == 2
    assert samples[("middleware_scrape_collector_failures_total", (("collector", "flaky"),))] == 1
    assert samples[("middleware_scrape_collector_last_success_timestamp_seconds", (("collector", "flaky"),))] > 0


def test_error_messages_are_redacted():
    class Leaky(Good):
        def collect(self, batch):
            raise ConnectionError("login failed for scott/tiger@db1")

    scheduler = Scheduler([Leaky("leaky")], redact=lambda s: s.replace("tiger", "********"))
    scheduler.run_once()
    assert "tiger" not in scheduler.states["leaky"].last_error
    assert "********" in scheduler.states["leaky"].last_error


def test_render_is_cached_per_generation_and_gzip_matches():
    good = Good("good")
    scheduler = Scheduler([good])
    scheduler.run_once()
    first = scheduler.render()
    assert scheduler.render() is first, "same snapshot must be served from the cache"
    compressed = scheduler.render(compress=True)
    assert gzip.decompress(compressed) == first
    scheduler.run_once()
    second = scheduler.render()
    assert second is not first
    assert _samples(second)[("test_good_events_total", ())] == 2


def test_readiness_waits_for_first_run_of_every_collector():
    scheduler = Scheduler([Good("a"), Good("b")])
    client = TestClient(create_app(scheduler))
    response = client.get("/readyz")
    assert response.status_code == 503
    assert sorted(response.json()["pending_collectors"]) == ["a", "b"]
    # Before any run, the snapshot has no collector self-metrics (no half-truth), but /metrics answers.
    assert client.get("/metrics").status_code == 200
    scheduler.run_collector("a")
    assert client.get("/readyz").json()["pending_collectors"] == ["b"]
    scheduler.run_collector("b")
    assert client.get("/readyz").status_code == 200


def test_background_loop_runs_on_interval_and_stops():
    good = Good("good", timeout=0.1, interval=0.1)
    scheduler = Scheduler([good])
    scheduler.start()
    try:
        deadline = time.monotonic() + 5
        while good.calls < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert good.calls >= 3
    finally:
        scheduler.stop()
    calls = good.calls
    time.sleep(0.3)
    assert good.calls == calls, "collector kept running after stop()"
