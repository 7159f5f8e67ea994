"""A collector that raises, hangs past its timeout or returns garbage must not break /metrics or its neighbours."""

from __future__ import annotations

import gc
import gzip
import logging
import random
import string
import threading
import time

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from exporter.core.collector import Collector, Context
from exporter.core.metrics import MetricBatch, MetricSpec
from exporter.core.scheduler import Scheduler
from exporter.core.settings import CollectorSettings
from exporter.machine.deadline import BoundedCall, Overdue
from exporter.systems.domino.collector import DominoCollector
from exporter.systems.domino.settings import DominoSettings
from exporter.web.server import create_app

from ..support import shell_script


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
    assert elapsed < 25, "run_once waited for the hung collector (30 s) instead of its timeout (0.3 s)"
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
        deadline = time.monotonic() + 60  # a backstop: 0.3 s here, longer on a loaded machine
        while good.calls < 3 and time.monotonic() < deadline:
            scheduler.render()  # a scraper: a result nobody reads is not collected again (issue 30)
            time.sleep(0.05)
        assert good.calls >= 3
    finally:
        scheduler.stop()
    calls = good.calls
    time.sleep(0.3)
    assert good.calls == calls, "collector kept running after stop()"


# --- failed runs leave nothing behind (issue 25, item 12) ----------------------------------------------------------
class _Payload:
    """Stands for what a failed run holds in its locals (a command's output): counted while alive."""

    alive: set[int] = set()

    def __init__(self) -> None:
        self.data = bytearray(64 * 1024)
        _Payload.alive.add(id(self))

    def __del__(self) -> None:
        _Payload.alive.discard(id(self))


class _RunFailed(Exception):
    pass


def _fail_with_payload() -> None:
    payload = _Payload()  # noqa: F841 - a local of the failing frame, like the output a parser was reading
    raise _RunFailed("dspmq: exit status 3")


def _live(cls: type) -> int:
    return sum(1 for obj in gc.get_objects() if type(obj) is cls)


@pytest.mark.parametrize("keep_thread", [False, True], ids=["thread-per-call", "kept-thread"])
@pytest.mark.parametrize("collect_cycles", [True, False], ids=["gc", "refcount-only"])
def test_failing_bounded_calls_do_not_keep_earlier_failures(collect_cycles, keep_thread):
    """Each failure used to keep the one before alive (a local in BoundedCall.__call__ held the previous run, whose
    error's traceback held the frame before, ...), with the failed runs' locals, until the next success."""
    _Payload.alive.clear()
    call = BoundedCall("failing", keep_thread=keep_thread)
    if not collect_cycles:
        gc.disable()
    try:
        for _ in range(30):
            with pytest.raises(_RunFailed):
                call(_fail_with_payload, 5.0)
        if collect_cycles:
            gc.collect()
        assert len(_Payload.alive) == 0, "the failed runs' locals are still alive"
        assert _live(_RunFailed) == 0, "earlier failures are still alive"
    finally:
        gc.enable()


@pytest.mark.parametrize("keep_thread", [False, True], ids=["thread-per-call", "kept-thread"])
def test_a_late_failure_after_a_timeout_is_dropped_by_the_next_call(keep_thread):
    _Payload.alive.clear()
    release = threading.Event()

    def late() -> None:
        payload = _Payload()  # noqa: F841
        release.wait(30)
        raise _RunFailed("late")

    call = BoundedCall("late", keep_thread=keep_thread)
    with pytest.raises(Overdue):
        call(late, 0.05)
    release.set()
    while call.busy:
        time.sleep(0.01)
    with pytest.raises(_RunFailed):
        call(_fail_with_payload, 5.0)
    gc.collect()
    assert len(_Payload.alive) == 0 and _live(_RunFailed) == 0


def test_a_kept_thread_serves_every_call_until_one_overruns():
    """The scheduler's calls run in one kept thread (a thread per call cost about 0.7 ms of CPU per interval for
    four collectors, issue 30): the same thread call after call; one that overruns keeps that thread, which ends
    when the hung call returns, and the next call gets a new thread."""
    call = BoundedCall("kept", keep_thread=True)
    first = call(threading.current_thread, 5.0)
    assert call(threading.current_thread, 5.0) is first  # before: a new thread per call
    release = threading.Event()
    with pytest.raises(Overdue, match="timed out"):
        call(lambda: release.wait(30), 0.05)
    with pytest.raises(Overdue, match="still running"):  # one call at a time, as before
        call(threading.current_thread, 5.0)
    release.set()
    first.join(30)  # the hung call's thread ends once the call returns
    assert not first.is_alive(), "the abandoned thread did not end after its call returned"
    second = call(threading.current_thread, 5.0)
    assert second is not first and call(threading.current_thread, 5.0) is second


class _FailingWithOutput(_Base):
    def collect(self, batch):
        output = _Payload()  # noqa: F841
        raise _RunFailed("dspmq: exit status 3: AMQ8146E: IBM MQ queue manager not available")


def test_failing_collector_runs_keep_memory_bounded():
    scheduler = Scheduler([_FailingWithOutput("down")])
    _Payload.alive.clear()
    for _ in range(40):
        scheduler.run_collector("down")
    gc.collect()
    assert scheduler.states["down"].failures == 40
    assert len(_Payload.alive) == 0 and _live(_RunFailed) == 0


# --- logged once per cause, whatever random text the error carries (issue 25, item 15c) ---------------------------
class _Erring(_Base):
    """Notes a source error, or raises, with the text the test sets."""

    def __init__(self) -> None:
        super().__init__("erring", timeout=5.0)
        self.source_error: str | None = None
        self.raise_error: Exception | None = None

    def collect(self, batch):
        if self.raise_error is not None:
            raise self.raise_error
        batch.add("test_erring_value", 0 if self.source_error else 1, k="db")
        if self.source_error:
            batch.note_error("db", self.source_error)


def _letters(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


B64 = string.ascii_letters + "+/"
VARIANTS = {
    "token without digits": lambda rng: f"ticket {_letters(rng, B64, 22)}== rejected by the listener",
    "token with a slash": lambda rng: f"login failed for session {_letters(rng, B64 + string.digits, 24)}",
    "lower-case handle": lambda rng: f"control socket /tmp/ssh-{_letters(rng, string.ascii_lowercase, 10)} closed",
    "letters-only handle": lambda rng: f"handle {_letters(rng, string.ascii_letters, 8)} expired, retrying",
    "upper-case handle": lambda rng: f"QM1 refused conversation {_letters(rng, string.ascii_uppercase, 8)}",
    "random bytes as UTF-8": lambda rng: f"dspmq: exit status 3: {rng.randbytes(40).decode('utf-8', 'replace')}",
    "random bytes as cp1252": lambda rng: f"dspmq: exit status 3: {rng.randbytes(40).decode('cp1252', 'replace')}",
    "random bytes as Latin-1": lambda rng: f"answer was {rng.randbytes(40).decode('latin-1')} (invalid)",
    "a bytes repr": lambda rng: f"unexpected answer {rng.randbytes(40)!r}",
}


def _warning_lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.levelno >= logging.WARNING and r.name.startswith("middleware_exporter")]


def _erring_scheduler(caplog) -> tuple[_Erring, Scheduler]:
    """A scheduler of one _Erring collector, its log captured from INFO up."""
    erring = _Erring()
    scheduler = Scheduler([erring])
    caplog.set_level(logging.INFO)
    return erring, scheduler


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_random_text_in_a_source_error_is_logged_once(caplog, variant):
    rng = random.Random(f"15c-{variant}")
    erring, scheduler = _erring_scheduler(caplog)
    texts = set()
    for _ in range(200):
        erring.source_error = VARIANTS[variant](rng)
        texts.add(erring.source_error)
        scheduler.run_collector("erring")
    assert len(texts) > 190, "the variants did not vary; the test proves nothing"
    assert len(_warning_lines(caplog)) == 1, _warning_lines(caplog)[:5]
    assert scheduler.status()[0]["source_errors"]["db"] == erring.source_error  # the API has the latest text
    caplog.clear()
    erring.source_error = "login rejected (ORA-01017: invalid username/password; logon denied)"
    scheduler.run_collector("erring")
    assert len(_warning_lines(caplog)) == 1 and "ORA-01017" in _warning_lines(caplog)[0]


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_random_text_in_a_collector_failure_is_logged_once(caplog, variant):
    rng = random.Random(f"15c-raise-{variant}")
    erring, scheduler = _erring_scheduler(caplog)
    for _ in range(100):
        erring.raise_error = ConnectionError(VARIANTS[variant](rng))
        scheduler.run_collector("erring")
    assert len(_warning_lines(caplog)) == 1
    erring.raise_error = ValueError(str(erring.raise_error))  # another exception type: another cause
    scheduler.run_collector("erring")
    assert len(_warning_lines(caplog)) == 2


def test_a_real_change_of_one_word_is_still_logged(caplog):
    erring, scheduler = _erring_scheduler(caplog)
    for text in ("queue manager QM1 is stopping", "queue manager QM1 is stopping", "queue manager QM1 is starting",
                 "connection refused", "connection timeout", "connection timeout"):
        erring.source_error = text
        scheduler.run_collector("erring")
    assert [line.split("error=")[1] for line in _warning_lines(caplog)] == [
        "'queue manager QM1 is stopping'", "'queue manager QM1 is starting'", "'connection refused'",
        "'connection timeout'"]


def test_text_that_changes_shape_on_every_attempt_stops_being_logged(caplog):
    """Whatever the normaliser misses, a text that changes on every attempt costs a few lines, not one a run."""
    rng = random.Random("15c-words")
    erring, scheduler = _erring_scheduler(caplog)
    for _ in range(100):
        words = " ".join(_letters(rng, string.ascii_lowercase, rng.randint(2, 9)) for _ in range(rng.randint(2, 6)))
        erring.source_error = f"remote said: {words}"
        scheduler.run_collector("erring")
    lines = _warning_lines(caplog)
    assert len(lines) == 5 and "changes on every attempt" in lines[-1]
    erring.source_error = None
    scheduler.run_collector("erring")
    erring.source_error = "login rejected (ORA-01017)"
    scheduler.run_collector("erring")
    assert len(_warning_lines(caplog)) == 6  # after recovery a failure is logged again


def test_a_command_printing_random_bytes_is_logged_once(caplog, tmp_path):
    """Through the Domino collector and the runner: a stand-in `show stat` printing random bytes and failing."""
    stand_in = shell_script(tmp_path / "server", "head -c 300 /dev/urandom >&2; exit 3\n")
    domino = DominoCollector(DominoSettings(enabled=True, command=[stand_in]), Context())
    scheduler = Scheduler([domino])
    caplog.set_level(logging.INFO)
    for _ in range(25):
        scheduler.run_collector("domino")
    assert scheduler.states["domino"].source_errors["show_stat"] == "server: exit status 3: (binary output)"
    assert len(_warning_lines(caplog)) == 1, _warning_lines(caplog)
