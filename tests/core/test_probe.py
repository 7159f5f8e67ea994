"""The prober (core/probe.py): which requests are refused before anything runs, and how collections are shared,
backed off, bounded and kept apart.  Collectors here are stand-ins that block on events the test controls, so
the order of what happens is asserted, never how long it took."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from exporter.core.collector import Collector
from exporter.core.inventory import InventoryFile
from exporter.core.metrics import MetricSpec
from exporter.core.probe import Prober, ProbeRefused
from exporter.core.probeconfig import ModuleSettings
from exporter.core.scheduler import Scheduler
from exporter.core.settings import CollectorSettings

READING = MetricSpec("middleware_fake_reading", "gauge", "A stand-in's figure.", ("target",))


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Fake(Collector):
    """A target's stand-in collector: counts its runs, can be told to fail or to block until released."""

    name = "fake"
    description = "stand-in"

    def __init__(self, target: str, world: "World") -> None:
        super().__init__(CollectorSettings(timeout=world.timeout, interval=max(15, world.timeout)), None)
        self.target = target
        self.world = world
        self.closed = False

    def specs(self):
        return [READING]

    def targets(self):
        return [self.target]

    def collect(self, batch) -> None:
        with self.world.lock:
            self.world.runs[self.target] = self.world.runs.get(self.target, 0) + 1
            self.world.running += 1
            self.world.most = max(self.world.most, self.world.running)
        try:
            gate = self.world.gates.get(self.target)
            if gate is not None:
                self.world.entered[self.target].set()
                gate.wait(30)
            if self.target in self.world.down:
                batch.report_target(self.target, False, "connection refused")
                return
            READING.add(batch, self.world.runs[self.target], target=self.target)
            batch.report_target(self.target, True)
        finally:
            with self.world.lock:
                self.world.running -= 1

    def close(self) -> None:
        self.closed = True


class World:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.runs: dict[str, int] = {}
        self.running = 0
        self.most = 0
        self.down: set[str] = set()
        self.gates: dict[str, threading.Event] = {}
        self.entered: dict[str, threading.Event] = {}
        self.built: list[Fake] = []
        self.timeout = 5.0  # the stand-in collectors' own timeout

    def block(self, target: str) -> threading.Event:
        self.gates[target] = threading.Event()
        self.entered[target] = threading.Event()
        return self.gates[target]

    def release(self) -> None:
        for gate in self.gates.values():
            gate.set()

    def build(self, module: str, target: str) -> list[Collector]:
        collector = Fake(target, self)
        self.built.append(collector)
        return [collector]


def make(tmp_path: Path | None = None, inventory: list | None = None, clock: Clock | None = None, **module):
    world = World()
    settings = {"collectors": {"host": {}}, "allow": r"t\d+|slow.*|hung.*", **module}
    files = None
    if inventory is not None:
        import json

        path = tmp_path / "targets.json"
        path.write_text(json.dumps(inventory))
        files = InventoryFile(str(path))
    prober = Prober({"unix": ModuleSettings(**settings)}, world.build,
                    lambda collectors: Scheduler(collectors, exporter_wide=False), inventory=files,
                    clock=clock or Clock())
    return prober, world


def body(prober: Prober, target: str, **kw) -> str:
    module, checked = prober.check([target], ["unix"])
    return prober.probe(module, checked, **kw).decode()


def value(text: str, name: str) -> float | None:
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    return None


@pytest.mark.parametrize("target, status, words", [
    ("-oProxyCommand=touch /tmp/x", 400, "starts with '-'"),
    ("host;reboot", 400, "not a host name"),
    ("host$(id)", 400, "not a host name"),
    ("host`id`", 400, "not a host name"),
    ("host\nother", 400, "not a host name"),
    ("a b", 400, "not a host name"),
    ("user@host", 400, "not a host name"),
    ("x" * 300, 400, "longer than 253"),
    ("host:0", 400, "port"),
    ("", 400, "target: missing"),
])
def test_hostile_or_malformed_targets_are_refused_and_nothing_is_built(target, status, words):
    prober, world = make()
    with pytest.raises(ProbeRefused) as refused:
        prober.check([target], ["unix"])
    assert refused.value.status == status and words in refused.value.message
    assert world.built == []


def test_unknown_module_and_unlisted_target_are_refused(tmp_path):
    prober, world = make(tmp_path, inventory=[{"targets": ["hpux01"], "labels": {"__param_module": "unix"}},
                                              {"targets": ["db1"], "labels": {"__param_module": "oracle"}}],
                         allow="")
    with pytest.raises(ProbeRefused) as refused:
        prober.check(["hpux01"], ["nosuch"])
    assert refused.value.status == 404 and '"nosuch"' in refused.value.message and "unix" in refused.value.message
    with pytest.raises(ProbeRefused) as refused:
        prober.check(["aix99"], ["unix"])
    assert refused.value.status == 403 and "aix99" in refused.value.message
    with pytest.raises(ProbeRefused) as refused:  # in the inventory, but for another module
        prober.check(["db1"], ["unix"])
    assert refused.value.status == 403
    with pytest.raises(ProbeRefused) as refused:
        prober.check(["hpux01", "hpux02"], ["unix"])
    assert refused.value.status == 400 and "more than once" in refused.value.message
    assert world.built == []
    module, target = prober.check(["hpux01"], [])  # the inventory names the module
    assert (module.name, target) == ("unix", "hpux01")


def test_allow_pattern_admits_targets_outside_the_inventory_whole_match_only():
    prober, _ = make(allow=r"hpux\d+")
    assert prober.check(["hpux7"], ["unix"])[1] == "hpux7"
    with pytest.raises(ProbeRefused):
        prober.check(["hpux7x"], ["unix"])


def test_a_collection_is_served_again_within_the_freshness_window():
    clock = Clock()
    prober, world = make(clock=clock, freshness=30, max_staleness=0)  # every new collection waited for
    first = body(prober, "t1")
    second = body(prober, "t1")  # an HA pair's second server
    assert world.runs == {"t1": 1}
    assert value(first, "middleware_fake_reading") == value(second, "middleware_fake_reading") == 1
    clock.now += 29
    body(prober, "t1")
    assert world.runs == {"t1": 1}
    clock.now += 2
    assert value(body(prober, "t1"), "middleware_fake_reading") == 2
    assert world.runs == {"t1": 2}


def test_a_failing_target_backs_off_and_reports_its_state_meanwhile():
    clock = Clock()
    prober, world = make(clock=clock, freshness=0, backoff={"first": 15, "cap": 60}, max_staleness=0)
    world.down.add("t1")
    text = body(prober, "t1")
    assert value(text, 'middleware_target_up{collector="fake",target="t1"}') == 0
    assert value(text, "middleware_probe_success") == 0
    for _ in range(5):  # scrapes during the back-off: served, nothing run
        text = body(prober, "t1")
        assert value(text, "middleware_probe_success") == 0
        assert value(text, "middleware_probe_backoff_seconds") > 0
    assert world.runs == {"t1": 1}
    clock.now += 16
    body(prober, "t1")
    assert world.runs == {"t1": 2}  # tried again, failed again: the wait doubles
    clock.now += 16
    body(prober, "t1")
    assert world.runs == {"t1": 2}
    world.down.clear()
    clock.now += 15
    text = body(prober, "t1")
    assert world.runs == {"t1": 3} and value(text, "middleware_probe_success") == 1
    assert value(text, "middleware_probe_backoff_seconds") == 0


def test_a_hung_target_answers_at_its_deadline_and_delays_no_other_target():
    prober, world = make(freshness=0, timeout=0.3)
    gate = world.block("hung1")
    try:
        text = body(prober, "hung1")  # returns at the deadline although the collection goes on
        assert not gate.is_set() and world.entered["hung1"].is_set()
        assert value(text, "middleware_probe_success") == 0
        assert value(text, 'middleware_target_up{collector="fake",target="hung1"}') is None  # not read yet
        assert value(body(prober, "t2"), "middleware_probe_success") == 1  # while hung1 still hangs
        again = body(prober, "hung1")  # waits for the same collection, starts no second one
        assert world.runs["hung1"] == 1 and value(again, "middleware_probe_success") == 0
    finally:
        world.release()


def test_collections_of_a_module_never_exceed_its_concurrency_and_a_probe_without_a_slot_says_so():
    prober, world = make(freshness=0, timeout=0.3, concurrency=2)
    for i in range(4):
        world.block(f"slow{i}")
    try:
        results = []
        threads = [threading.Thread(target=lambda i=i: results.append(body(prober, f"slow{i}"))) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        assert world.most == 2 and sum(world.runs.values()) == 2
        assert all(value(text, "middleware_probe_success") == 0 for text in results)
        # A probe's deadline and its collection's wait for a slot are both 0.3 s: the probe may answer before the
        # collection without a slot has given up, so wait (not sleep) for both to have given up
        gave_up = threading.Event()
        for _ in range(200):
            if prober._collections.get(("unix", "no_slot"), 0) == 2:
                gave_up.set()
                break
            gave_up.wait(0.05)
        assert gave_up.is_set(), prober._collections
        status = {item["target"]: item for item in prober.status()}
        assert sum(1 for item in status.values() if item["running"]) == 2
        assert sum(1 for item in status.values() if "no free collection slot" in (item["note"] or "")) == 2
    finally:
        world.release()


def test_idle_targets_are_closed_and_forgotten():
    clock = Clock()
    prober, world = make(clock=clock)
    prober._idle = 100
    body(prober, "t1")
    clock.now += 101
    body(prober, "t2")
    assert not any(c.closed for c in world.built)  # a probe does not look (the read-ahead thread does)
    prober.tick()
    assert [c.target for c in world.built if c.closed] == ["t1"]
    assert [item["target"] for item in prober.status()] == ["t2"]


def test_the_exporter_counts_probes_collections_and_the_inventory(tmp_path):
    from exporter.core.metrics import MetricBatch
    from exporter.core.probe import OWN_SPECS

    prober, world = make(tmp_path, inventory=[{"targets": ["t1"], "labels": {"__param_module": "unix"}}])
    body(prober, "t1")
    prober.count_request("unix", 200)
    prober.count_request("nosuch", 404)
    batch = MetricBatch(OWN_SPECS)
    prober.add_own_series(batch)
    rows = {(family.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in batch.families() for sample in family.samples}
    assert rows[("middleware_probe_collections", (("module", "unix"), ("result", "success")))] == 1
    assert rows[("middleware_probe_requests", (("code", "404"), ("module", "")))] == 1  # not the unknown name
    assert rows[("middleware_inventory_targets", ())] == 1
    assert rows[("middleware_probe_targets", (("module", "unix"),))] == 1


def test_probe_series_carry_no_exporter_wide_figures():
    prober, _ = make()
    text = body(prober, "t1")
    assert "middleware_exporter_build_info" not in text and "process_cpu_seconds_total" not in text
    assert value(text, 'middleware_fake_reading{target="t1"}') == 1
    assert value(body(prober, "t1", openmetrics=True).rstrip().splitlines()[-1] + " 0", "# EOF") is not None


def _settled(prober: Prober) -> None:
    """Wait (a step at a time, at most 2 s) for the collections running in their own threads to end."""
    for _ in range(200):
        if not any(item["running"] for item in prober.status()):
            return
        threading.Event().wait(0.01)


def test_a_target_is_read_ahead_of_its_next_expected_probe_which_then_waits_for_nothing():
    clock = Clock()
    prober, world = make(clock=clock, freshness=30)
    body(prober, "t1")
    clock.now += 60
    body(prober, "t1")  # the second probe: the gap (60 s) is known from now on
    _settled(prober)  # it was served the first collection at once and made a new one
    assert world.runs == {"t1": 2}
    clock.now += 30
    prober.tick()
    assert world.runs == {"t1": 2}  # not due yet
    clock.now += 28  # 2 s before the next probe is expected
    prober.tick()
    _settled(prober)  # the read-ahead collection runs in its own thread
    assert world.runs == {"t1": 3}
    clock.now += 2
    text = body(prober, "t1")  # served the collection read ahead, no new one
    assert world.runs == {"t1": 3} and value(text, 'middleware_fake_reading{target="t1"}') == 3
    assert value(text, "middleware_probe_collection_age_seconds") == 2
    prober.tick()
    assert world.runs == {"t1": 3}


def test_an_ha_partner_within_the_window_neither_collects_nor_shortens_the_expected_gap():
    clock = Clock()
    prober, world = make(clock=clock, freshness=30)
    body(prober, "t1")
    clock.now += 10
    body(prober, "t1")  # the second Prometheus of the pair
    clock.now += 50
    body(prober, "t1")
    _settled(prober)
    assert world.runs == {"t1": 2}
    entry = next(iter(prober._entries.values()))
    assert entry.gap == 60


def test_a_probe_during_a_read_ahead_collection_is_served_the_previous_one_at_once():
    clock = Clock()
    prober, world = make(clock=clock, freshness=30)
    body(prober, "t1")
    clock.now += 60
    body(prober, "t1")
    _settled(prober)
    gate = world.block("t1")
    try:
        clock.now += 58
        prober.tick()
        assert world.entered["t1"].wait(10)  # the read-ahead collection hangs
        clock.now += 2
        text = body(prober, "t1")  # returns without waiting for it
        assert value(text, 'middleware_fake_reading{target="t1"}') == 2 and not gate.is_set()
        assert value(text, "middleware_probe_collection_age_seconds") == 60  # the second probe's catch-up
    finally:
        world.release()


def test_a_target_no_longer_probed_is_read_ahead_once_at_most():
    clock = Clock()
    prober, world = make(clock=clock, freshness=30)
    body(prober, "t1")
    clock.now += 60
    body(prober, "t1")
    _settled(prober)
    for _ in range(5):
        clock.now += 60
        prober.tick()
        _settled(prober)
    assert world.runs == {"t1": 3}


def _answered(prober: Prober, target: str) -> str:
    """The probe's answer, which must come while the collection it started still hangs (it would wait 600 s):
    10 s is a bound on a hang, not a measure of speed."""
    results: list[str] = []
    thread = threading.Thread(target=lambda: results.append(body(prober, target)), daemon=True)
    thread.start()
    thread.join(10)
    assert results, "the probe waited for the collection it started"
    return results[0]


def test_a_probe_is_answered_with_the_last_collection_at_once_while_a_new_one_is_made():
    clock = Clock()
    prober, world = make(clock=clock, freshness=0, timeout=600)
    world.timeout = 600
    assert value(body(prober, "t1"), 'middleware_fake_reading{target="t1"}') == 1  # the first probe waits
    gate = world.block("t1")
    try:
        clock.now += 60
        text = _answered(prober, "t1")  # the new collection hangs: answered with the last one, not at 600 s
        assert world.entered["t1"].wait(10) and not gate.is_set()
        assert value(text, 'middleware_fake_reading{target="t1"}') == 1
        assert value(text, "middleware_probe_collection_age_seconds") == 60
    finally:
        world.release()
    _settled(prober)
    text = body(prober, "t1")  # the next probe is served the new one and starts no other
    assert value(text, 'middleware_fake_reading{target="t1"}') == 2 and world.runs == {"t1": 2}


def test_a_collection_older_than_max_staleness_is_not_served_at_once():
    clock = Clock()
    prober, world = make(clock=clock, freshness=0, timeout=30, max_staleness=300)
    body(prober, "t1")
    clock.now += 301
    world.block("t1")
    results = []
    thread = threading.Thread(target=lambda: results.append(body(prober, "t1")))
    thread.start()
    try:
        assert world.entered["t1"].wait(10)
        assert thread.is_alive() and results == []  # waits for the new collection (its deadline is 30 s)
    finally:
        world.release()
        thread.join(30)
    assert value(results[0], 'middleware_fake_reading{target="t1"}') == 2


def test_a_target_backing_off_is_answered_at_once_when_it_is_tried_again():
    clock = Clock()
    prober, world = make(clock=clock, freshness=0, timeout=600, backoff={"first": 15, "cap": 60})
    world.timeout = 600
    world.down.add("t1")
    body(prober, "t1")
    clock.now += 16
    gate = world.block("t1")  # tried again and hangs: the probe does not wait for it
    try:
        text = _answered(prober, "t1")
        assert world.entered["t1"].wait(10) and not gate.is_set()
        assert value(text, "middleware_probe_success") == 0
        assert value(text, 'middleware_target_up{collector="fake",target="t1"}') == 0
    finally:
        world.release()
