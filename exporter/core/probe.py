"""Multi-target probing (issue 37, docs/estate.md): ``GET /probe?target=<name>&module=<module>`` answers the
exposition of one target, read on demand, the way blackbox_exporter and snmp_exporter do it.

A *module* (``modules.<name>`` in the configuration, :class:`ModuleSettings`) says what to read and how: the
sections of the collectors that read a target (the host and file-system text back-ends over ssh, an Oracle
database, a queue manager, an HPOM or Domino server), with ``{target}``, ``{host}`` and ``{port}`` standing for the
probed target, and the rules of its probes.  The registry turns a module and a checked target into collectors
(``exporter.registry.module_builder``); this module knows no source system.

Before anything runs, :meth:`Prober.check` decides whether a request may be answered: the module must exist, the
target must pass ``inventory.target_problem`` (no whitespace, metacharacters, leading ``-`` or over-long names) and
be listed for that module in the inventory or match the module's ``allow`` pattern.  Otherwise :class:`ProbeRefused`
carries the 4xx and its text, and nothing is built or run.

Each probed target has a :class:`_Entry`: its collectors under a scheduler of their own (core/scheduler.py: the same
timeouts, target and source reports, degraded states and exposition as /metrics), built on its first probe.  A
probe

- serves the last collection again while it is younger than the module's ``freshness`` (the two servers of an HA
  pair, or a retry, read one collection);
- serves the last collection while the target backs off after a failed one (``backoff``: doubling waits, so a hung
  or refusing host is tried about once per wait, not on every scrape);
- serves a collection read ahead for it: from the gap between a target's probes the read-ahead thread knows
  when the next one is due and starts a collection to end just before it;
- else starts a collection in a thread of its own, which takes one of the module's ``concurrency`` slots.  If the
  target's last collection is younger than ``max_staleness`` the probe is answered with it at once and the next
  probe is served the new one (stale while collecting; the age is in ``middleware_probe_collection_age_seconds``);
  else (a target's first probe) it waits for the new one at most the probe's deadline (``timeout``, or the scrape
  timeout Prometheus sends, less half a second).  A collection not finished by then is answered with
  ``middleware_probe_success 0`` and the reason; it finishes in the background and the next probe serves it.

So a hung host holds one slot for at most its collectors' timeout and delays no other target's probe: a probe
waits only for its own target's first collection.  Targets no longer probed for ``idle`` seconds are closed and
forgotten by the read-ahead thread.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import re
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from .backoff import Backoff
from .exposition import Snapshot
from .inventory import InventoryFile, target_problem
from .metrics import NAMESPACE, MetricBatch, MetricSpec
from .probeconfig import ModuleSettings
from .secrets import scrub

log = logging.getLogger("middleware_exporter")
DEADLINE_MARGIN = 0.5  # seconds kept from the scrape timeout for rendering and the network
READ_AHEAD_MARGIN = 2.0  # seconds by which a read-ahead collection is planned to end before its probe
MAX_GAP = 3600.0  # probes further apart than this are not read ahead
FORGET_EVERY = 60.0  # seconds between two looks for idle targets (in the read-ahead thread, not in a probe)


class ProbeRefused(Exception):
    """A request that is not answered: ``status`` (a 4xx) and the text saying why; nothing was run."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


_M = ("module",)
PROBE_SUCCESS = MetricSpec(f"{NAMESPACE}_probe_success", "gauge",
                           "1 if the probe's collection worked: every collector of the module finished in time and "
                           "the target was up with every source read; 0 otherwise (why: "
                           "middleware_target_up, middleware_target_source_success, /api/v1/probes).", (),
                           "blackbox_exporter: probe_success")
PROBE_DURATION = MetricSpec(f"{NAMESPACE}_probe_duration_seconds", "gauge",
                            "How long the collection served took (its collectors' longest run).", (),
                            "blackbox_exporter: probe_duration_seconds")
PROBE_AGE = MetricSpec(f"{NAMESPACE}_probe_collection_age_seconds", "gauge",
                       "Seconds since the collection served finished: 0 for one made for this probe, more for one "
                       "served again (freshness window, back-off, or while a new one is made: max_staleness).",
                       ())
PROBE_BACKOFF = MetricSpec(f"{NAMESPACE}_probe_backoff_seconds", "gauge",
                           "Seconds until the target is read again after failed collections (0: not backing off).",
                           ())
PROBE_SPECS = [PROBE_SUCCESS, PROBE_DURATION, PROBE_AGE, PROBE_BACKOFF]

REQUESTS = MetricSpec(f"{NAMESPACE}_probe_requests_total", "counter",
                      "/probe requests by module and HTTP status (4xx: refused, nothing run).", ("module", "code"))
COLLECTIONS = MetricSpec(f"{NAMESPACE}_probe_collections_total", "counter",
                         "Collections started for probes, by module and result (success, failure: a target down "
                         "or a collector failed, degraded: a source failed, no_slot: every slot of the module busy "
                         "until the deadline).", ("module", "result"))
IN_FLIGHT = MetricSpec(f"{NAMESPACE}_probe_collections_in_flight", "gauge",
                       "Collections of the module running now (at most its concurrency).", _M)
TARGETS = MetricSpec(f"{NAMESPACE}_probe_targets", "gauge",
                     "Targets of the module probed recently (kept with their collectors and last collection).", _M)
BACKING_OFF = MetricSpec(f"{NAMESPACE}_probe_targets_backing_off", "gauge",
                         "Targets of the module waiting out a back-off after failed collections.", _M)
INVENTORY_TARGETS = MetricSpec(f"{NAMESPACE}_inventory_targets", "gauge",
                               "Targets in the inventory served (the last good version of the file).", ())
INVENTORY_RELOADS = MetricSpec(f"{NAMESPACE}_inventory_reloads_total", "counter",
                               "Re-reads of the inventory file after it changed, by result (success, failure: the "
                               "last good inventory stays served).", ("result",))
INVENTORY_OK = MetricSpec(f"{NAMESPACE}_inventory_last_reload_successful", "gauge",
                          "1 if the inventory file as it is now was read, 0 while a newer version is broken.", (),
                          "prometheus: prometheus_config_last_reload_successful")
OWN_SPECS = [REQUESTS, COLLECTIONS, IN_FLIGHT, TARGETS, BACKING_OFF, INVENTORY_TARGETS, INVENTORY_RELOADS,
             INVENTORY_OK]


@dataclass
class Module:
    name: str
    settings: ModuleSettings
    slots: threading.BoundedSemaphore
    allow: re.Pattern[str] | None
    in_flight: int = 0


class _Entry:
    """One probed target of one module: its scheduler, its last collection and its back-off."""

    def __init__(self, module: Module, target: str, scheduler: Any) -> None:
        self.module = module
        self.target = target
        self.scheduler = scheduler
        self.lock = threading.Lock()
        self.running: threading.Event | None = None
        self.finished_at = float("-inf")  # monotonic end of the last collection
        self.read_at = float("-inf")  # the last probe counted (not an HA partner's within the freshness window)
        self.gap: float | None = None  # between the last two counted probes: when the next one is expected
        self.served = float("-inf")  # the end of the last collection a counted probe was served
        self.ahead_finished = float("-inf")  # the end of the last collection read ahead (by the thread)
        self.retry_at = float("-inf")
        self.used_at = float("-inf")
        self.duration = 0.0
        self.success: bool | None = None  # None: nothing collected yet
        self.note: str | None = None  # why the last collection served is not one (no slot)
        backoff = module.settings.backoff
        self.backoff = Backoff(backoff.first, backoff.cap)
        self.generation = itertools.count(1)


class Prober:
    """The probed targets of every module (docs/estate.md).  ``build(module, target)`` makes the collectors of a
    checked target (the registry's); ``scheduler(collectors)`` the scheduler that runs them (core/scheduler.py)."""

    def __init__(self, modules: Mapping[str, ModuleSettings], build: Callable[[str, str], list[Any]],
                 scheduler: Callable[[list[Any]], Any], inventory: InventoryFile | None = None,
                 redact: Callable[[str], str] = scrub, clock: Callable[[], float] = time.monotonic,
                 idle: float = 3600.0, max_targets: int = 20000,
                 on_change: Callable[[], None] | None = None) -> None:
        self.modules = {name: Module(name, settings, threading.BoundedSemaphore(settings.concurrency),
                                     re.compile(settings.allow) if settings.allow else None)
                        for name, settings in modules.items()}
        self._build = build
        self._scheduler = scheduler
        self.inventory = inventory
        self._redact = redact
        self._clock = clock
        self._idle = idle
        self._max_targets = max_targets
        self._lock = threading.Lock()
        self._entries: dict[tuple[str, str], _Entry] = {}
        self._requests: dict[tuple[str, str], int] = {}
        self._collections: dict[tuple[str, str], int] = {}
        self._closed = False
        self._ahead: list[tuple[float, int, _Entry]] = []  # (due, order, entry): the read-ahead collections
        self._ahead_order = itertools.count()
        self._ahead_lock = threading.Condition()
        self._forgot_at = float("-inf")
        self._on_change = on_change or (lambda: None)  # the exporter's own series changed (Scheduler.touch)

    # ---- deciding ------------------------------------------------------------------------------------------
    def _listed(self) -> dict[str, set[str]]:
        """target -> the modules the inventory reads it with."""
        listed: dict[str, set[str]] = {}
        if self.inventory is not None:
            for group in self.inventory.inventory.groups:
                for target in group.targets:
                    listed.setdefault(target, set()).add(group.module or "")
        return listed

    def check(self, targets: list[str], modules: list[str]) -> tuple[Module, str]:
        """The module and target a request names (the values of its ``target`` and ``module`` parameters), or
        :class:`ProbeRefused` saying what is wrong with them."""
        if len(targets) > 1:
            raise ProbeRefused(400, "target: given more than once")
        if len(modules) > 1:
            raise ProbeRefused(400, "module: given more than once")
        if not targets or not targets[0]:
            raise ProbeRefused(400, "target: missing (e.g. /probe?target=hpux01&module=unix)")
        target = targets[0]
        problem = target_problem(target)
        if problem:
            raise ProbeRefused(400, f"target {_shown(target)} refused: {problem}")
        listed = self._listed().get(target, set())
        if not modules or not modules[0]:
            known = sorted(name for name in listed if name in self.modules)
            if len(known) != 1:
                raise ProbeRefused(400, "module: missing" + (
                    f" (the inventory reads {target} with {', '.join(known)})" if known else ""))
            name = known[0]
        else:
            name = modules[0]
        module = self.modules.get(name)
        if module is None:
            raise ProbeRefused(404, f"module {_shown(name)} unknown" + (
                f" (configured: {', '.join(sorted(self.modules))})" if self.modules else " (no modules configured)"))
        if name not in listed and not (module.allow is not None and module.allow.fullmatch(target)):
            raise ProbeRefused(403, f"target {target} is not in the inventory for module {name}" + (
                "" if module.allow is None else " and does not match its allow pattern"))
        return module, target

    def count_request(self, module: str, code: int) -> None:
        key = (module if module in self.modules else "", str(code))  # an unknown module's name is not a label
        with self._lock:
            self._requests[key] = self._requests.get(key, 0) + 1
        self._on_change()

    # ---- probing -------------------------------------------------------------------------------------------
    def _entry(self, module: Module, target: str) -> _Entry:
        key = (module.name, target)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                return entry
        collectors = self._build(module.name, target)  # outside the lock: building may import a collector
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                if self._closed:
                    raise ProbeRefused(503, "the exporter is stopping")
                if len(self._entries) >= self._max_targets:
                    self._forget(self._clock(), force=True)
                entry = self._entries[key] = _Entry(module, target, self._scheduler(collectors))
                return entry
        for collector in collectors:  # another request built it first
            collector.close()
        return entry

    def probe(self, module: Module, target: str, openmetrics: bool = False, compress: bool = False,
              scrape_timeout: float | None = None) -> bytes:
        """The exposition of ``target`` (checked by :meth:`check`): a collection not served yet (read ahead for
        this probe) or younger than the freshness window as it is; else, unless the target backs off, a new one is
        started.  The last collection is served at once while it is younger than ``max_staleness``; only a target
        without one (its first probe, or after a long silence) waits, for at most the deadline."""
        deadline = module.settings.timeout
        if scrape_timeout is not None and scrape_timeout > 0:
            deadline = max(min(deadline, scrape_timeout - DEADLINE_MARGIN), 0.1)
        entry = self._entry(module, target)
        now = self._clock()
        freshness = module.settings.freshness
        with entry.lock:
            entry.used_at = now
            unread = entry.finished_at > entry.served  # read ahead, and not served to a probe yet
            counted = now - entry.read_at >= freshness  # a probe of its own, not an HA partner's in the window
            if counted:
                if entry.read_at != float("-inf"):
                    entry.gap = now - entry.read_at
                entry.read_at = now
                self._plan(entry, now)
            event = entry.running
            if event is None and not unread and now - entry.finished_at >= freshness and now >= entry.retry_at:
                event = self._start(entry, now)
            if event is not None and entry.success is not None and \
                    now - entry.finished_at <= module.settings.max_staleness:
                event = None  # serve the last collection at once; the next probe is served the new one
        if event is not None:
            event.wait(deadline)
        if counted:
            with entry.lock:
                entry.served = max(entry.served, entry.finished_at)
        return self._render(entry, openmetrics, compress)

    def _start(self, entry: _Entry, now: float, ahead: bool = False) -> threading.Event:
        """Start a collection of ``entry`` in a thread of its own (called with ``entry.lock`` held); ``ahead``:
        by the read-ahead thread, for a probe expected soon."""
        event = entry.running = threading.Event()
        threading.Thread(target=self._collect, args=(entry, event, now + entry.module.settings.timeout, ahead),
                         name=f"probe-{entry.module.name}", daemon=True).start()
        return event

    # ---- reading ahead -------------------------------------------------------------------------------------
    def _plan(self, entry: _Entry, now: float) -> None:
        """Read the target again so that the collection is done just before its next probe is expected (the gap
        between its last two probes later; as the scheduler reads ahead of scrapes): the probe then serves it at
        once instead of waiting for ssh and sar.  Called with ``entry.lock`` held."""
        if entry.gap is None or entry.gap > MAX_GAP:
            return
        lead = min(entry.duration + READ_AHEAD_MARGIN, entry.module.settings.timeout)
        due = now + max(entry.gap - lead, 0.0)
        with self._ahead_lock:
            heapq.heappush(self._ahead, (due, next(self._ahead_order), entry))
            self._ahead_lock.notify()

    def tick(self) -> None:
        """Start the read-ahead collections that are due and forget the idle targets (the read-ahead thread
        calls it; tests with their own clock call it themselves)."""
        now = self._clock()
        if now - self._forgot_at >= FORGET_EVERY:
            self._forgot_at = now
            self._forget(now)
        due = []
        with self._ahead_lock:
            while self._ahead and self._ahead[0][0] <= now:
                due.append(heapq.heappop(self._ahead)[2])
        for entry in due:
            with entry.lock:
                if self._closed or entry.running is not None or now < entry.retry_at or \
                        entry.ahead_finished > entry.served:
                    continue  # still running, backing off, or the last one read ahead not served yet
                self._start(entry, now, ahead=True)

    def _read_ahead(self) -> None:
        while not self._closed:
            self.tick()
            with self._ahead_lock:
                wait = (self._ahead[0][0] - self._clock()) if self._ahead else FORGET_EVERY
                if wait > 0 and not self._closed:
                    self._ahead_lock.wait(min(wait, FORGET_EVERY))

    def start(self) -> None:
        """Start the read-ahead thread (the serving exporter)."""
        threading.Thread(target=self._read_ahead, name="probe-read-ahead", daemon=True).start()

    def _collect(self, entry: _Entry, event: threading.Event, give_up: float, ahead: bool) -> None:
        module = entry.module
        result = "no_slot"
        try:
            if not module.slots.acquire(timeout=max(give_up - self._clock(), 0)):
                with entry.lock:
                    entry.note = (f"no free collection slot: the module's {module.settings.concurrency} slots were "
                                  f"busy for {module.settings.timeout:g}s")
                return
            with self._lock:
                module.in_flight += 1
            try:
                entry.scheduler.run_once()
            finally:
                with self._lock:
                    module.in_flight -= 1
                module.slots.release()
            states = list(entry.scheduler.states.values())
            down = any(not s.success or any(t.up is False for t in s.targets.values()) for s in states)
            worked = all(s.worked for s in states)
            result = "success" if worked else "failure" if down else "degraded"
            with entry.lock:
                entry.success = worked
                entry.note = None
                entry.duration = max((s.duration or 0.0) for s in states) if states else 0.0
                entry.finished_at = self._clock()
                if ahead:
                    entry.ahead_finished = entry.finished_at
                if down:
                    entry.retry_at = entry.finished_at + entry.backoff.failed()
                else:
                    entry.backoff.succeeded()
                    entry.retry_at = float("-inf")
        except Exception as exc:  # noqa: BLE001 - a probe must never take the exporter down
            result = "failure"
            log.warning("module=%s target=%s msg=%r error=%r", module.name, entry.target, "probe collection failed",
                        self._redact(str(exc)))
        finally:
            with entry.lock:
                entry.running = None
            with self._lock:
                key = (module.name, result)
                self._collections[key] = self._collections.get(key, 0) + 1
            event.set()
            self._on_change()

    def _render(self, entry: _Entry, openmetrics: bool, compress: bool) -> bytes:
        scheduler = entry.scheduler
        now = self._clock()
        with entry.lock:
            success, duration, finished = entry.success, entry.duration, entry.finished_at
            backoff = max(entry.retry_at - now, 0.0)
            note = entry.note

        def add(batch: MetricBatch) -> None:
            PROBE_SUCCESS.add(batch, 1 if success else 0)
            PROBE_DURATION.add(batch, duration)
            if finished != float("-inf"):
                PROBE_AGE.add(batch, max(now - finished, 0.0))
            PROBE_BACKOFF.add(batch, backoff)

        def own() -> MetricBatch:
            return scheduler.self_metrics.batch(more=(PROBE_SPECS, add))

        snapshot = scheduler.snapshot(read=False)
        if success is None:  # nothing collected: say why in the log's words, once per probe
            log.debug("module=%s target=%s msg=%r", entry.module.name, entry.target,
                      note or "collection still running at the deadline")
        return entry.scheduler.exposition.render(
            Snapshot(next(entry.generation), snapshot.parts, own), openmetrics, compress, remember=False)

    def _forget(self, now: float, force: bool = False) -> None:
        """Close the targets not probed for ``idle`` seconds (with ``force``, the least recently used one too)."""
        with self._lock:
            idle = [key for key, entry in self._entries.items()
                    if entry.running is None and now - entry.used_at > self._idle]
            if force and not idle and self._entries:
                idle = [min(self._entries, key=lambda key: self._entries[key].used_at)]
            gone = [self._entries.pop(key) for key in idle]
        for entry in gone:
            entry.scheduler.stop(wait=0)

    # ---- state ---------------------------------------------------------------------------------------------
    def status(self) -> list[dict[str, Any]]:
        """/api/v1/probes: each probed target, its last collection and its collectors' states."""
        now = self._clock()
        with self._lock:
            entries = list(self._entries.values())
        result = []
        for entry in sorted(entries, key=lambda e: (e.module.name, e.target)):
            with entry.lock:
                item = {"module": entry.module.name, "target": entry.target, "success": entry.success,
                        "running": entry.running is not None,
                        "age_seconds": None if entry.finished_at == float("-inf")
                        else round(now - entry.finished_at, 3),
                        "backoff_seconds": round(max(entry.retry_at - now, 0.0), 3),
                        "failures_in_a_row": entry.backoff.failures, "note": entry.note}
            item["collectors"] = entry.scheduler.status()
            result.append(item)
        return result

    def add_own_series(self, batch: MetricBatch) -> None:
        """The prober's and the inventory's series on the exporter's /metrics."""
        now = self._clock()
        with self._lock:
            requests = dict(self._requests)
            collections = dict(self._collections)
            entries = list(self._entries.values())
            in_flight = {name: module.in_flight for name, module in self.modules.items()}
        for (module, code), count in sorted(requests.items()):
            REQUESTS.add(batch, count, module=module, code=code)
        for (module, result), count in sorted(collections.items()):
            COLLECTIONS.add(batch, count, module=module, result=result)
        for name in sorted(self.modules):
            IN_FLIGHT.add(batch, in_flight[name], module=name)
            TARGETS.add(batch, sum(1 for e in entries if e.module.name == name), module=name)
            BACKING_OFF.add(batch, sum(1 for e in entries if e.module.name == name and e.retry_at > now),
                            module=name)
        add_inventory_series(batch, self.inventory)

    def close(self) -> None:
        with self._ahead_lock:
            self._closed = True
            self._ahead.clear()
            self._ahead_lock.notify()
        with self._lock:
            entries = list(self._entries.values())
            self._entries.clear()
        for entry in entries:
            entry.scheduler.stop(wait=0)


INVENTORY_SPECS = [INVENTORY_TARGETS, INVENTORY_RELOADS, INVENTORY_OK]


def add_inventory_series(batch: MetricBatch, inventory: InventoryFile | None) -> None:
    if inventory is None:
        return
    INVENTORY_TARGETS.add(batch, len(inventory.inventory.targets()))
    INVENTORY_RELOADS.add(batch, inventory.reloads, result="success")
    INVENTORY_RELOADS.add(batch, inventory.failures, result="failure")
    INVENTORY_OK.add(batch, 0 if inventory.error else 1)


def _shown(text: str) -> str:
    import json

    return json.dumps(text[:80] + ("..." if len(text) > 80 else ""))

