"""Put/get counts of a queue manager, read without taking them from other tools.

Three sources, one per way of reaching the queue manager:

* :class:`PublicationStats` (``pcf`` back-end): managed, non-durable subscriptions to the resource-statistics
  topics (STATMQI PUT and GET for the queue manager, STATQ PUT and GET per monitored queue), found through the
  metadata topics, read with no-wait gets on every collection.  Each subscriber gets its own copy of every
  publication, so mq_prometheus, amqsrua or a second exporter reading the same topics lose nothing.
* :class:`AmqsruaStats` (``runmqsc`` back-end): IBM's ``amqsrua`` sample, which makes the same subscriptions and
  prints the publications as text.  It waits for publications (every MONINT, 10 s by default), so it runs in a
  worker thread of its own, one bounded command after the other, and a collection only takes what has arrived:
  neither a scrape nor a collection ever waits for the queue manager's next publication.  One that ends without
  a publication is started again after a growing wait (``core/backoff.py``), never in a loop.
* :class:`ResetQstatsStats` (``pcf`` back-end, opt-in only): PCF RESET QSTATS per monitored queue.  DESTRUCTIVE:
  the queue manager's enqueue/dequeue counters are cleared for every other reader of them.

Deltas are summed into monotonic counters kept here, across reconnects; a publication whose interval is
implausibly long (more than ``max_interval``: the first after a long pause may span it) is left out and counted.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from ...core.backoff import Backoff
from ...machine.remote import UnsafeArgument, prefixed
from ...machine.runner import CommandError, CommandNotFound, CommandTimeout, run_command
from ...machine.textlines import first_line
from . import resstats as rs
from .model import OBJECT_NAME, Throughput
from .parse import AMQSRUA_LOG_DELTAS, parse_amqsrua

log = logging.getLogger("middleware_exporter.ibmmq.statistics")

MQRC_NO_MSG_AVAILABLE = 2033
# MQSUB reasons that concern one topic, not the connection: MQRC_NOT_AUTHORIZED, MQRC_UNKNOWN_OBJECT_NAME,
# MQRC_TOPIC_STRING_ERROR.  Any other reason fails the run, and the subscriptions held are closed.
SUBSCRIPTION_REASONS = frozenset({2035, 2085, 2425})
MAX_MESSAGES_PER_SUBSCRIPTION = 1000  # per run; 1,000 intervals of 10 s are almost three hours of backlog
AMQSRUA_MAX_TYPES = 100  # amqsrua takes at most 100 -t arguments (MAX_TYPE_COUNT in the sample's source)
# -t arguments that are not per queue: STATMQI PUT and GET, and DISK Log (the recovery log, issue 39)
AMQSRUA_FIXED_TYPES = 3
AMQSRUA_BACKOFF_CAP = 300.0  # seconds: the longest wait before amqsrua is started again after failures
# MAXHANDS bounds the handles one connection holds.  Ours (or amqsrua's) holds one object handle per subscription
# (the count mq-metric-samples' own MAXHANDS check makes) plus a few of its own: the command and reply queues,
# the two STATMQI subscriptions, a metadata subscription during discovery, and a margin.
HANDLES_RESERVED = 10
MQIA_MAX_HANDLES = 11


def handles_cap(max_handles: int | None) -> int | None:
    """Queues (two STATQ subscriptions each) that fit under MAXHANDS; None while it is unknown."""
    if not max_handles or max_handles <= 0:
        return None
    return max(0, (max_handles - HANDLES_RESERVED) // 2)


def _capped(queues: list[str], max_queues: int, max_handles: int | None) -> tuple[list[str], int | None]:
    cap = handles_cap(max_handles)
    limit = max_queues if cap is None else min(max_queues, cap)
    return sorted(set(queues))[:limit], cap


class StatisticsError(Exception):
    """The statistics source failed in this run."""


class SubscribingAdapter(Protocol):
    def subscribe(self, topic: str) -> Any: ...
    def get(self, handle: Any, wait: float) -> bytes | None: ...
    def unsubscribe(self, handle: Any) -> None: ...


@dataclass
class _Sub:
    handle: Any
    topic: str
    klass: str
    kind: str
    queue: str | None = None


@dataclass
class _Counters:
    qmgr: dict[str, int] = field(default_factory=dict)
    queues: dict[str, dict[str, int]] = field(default_factory=dict)
    publications: int = 0
    dropped: int = 0

    def add(self, klass: str, queue: str | None, counts: dict[str, int]) -> None:
        target = self.qmgr if klass == "STATMQI" else self.queues.setdefault(queue or "", {})
        for name, value in counts.items():
            target[name] = target.get(name, 0) + value

    def throughput(self, source: str, queues: list[str] | None) -> Throughput:
        keep = self.queues if queues is None else {q: self.queues[q] for q in queues if q in self.queues}
        return Throughput(
            source=source, qmgr_puts=self.qmgr.get("puts"), qmgr_gets=self.qmgr.get("gets"),
            queue_puts={q: c["puts"] for q, c in keep.items() if "puts" in c},
            queue_gets={q: c["gets"] for q, c in keep.items() if "gets" in c},
            publications=self.publications, dropped=self.dropped)


def describe_error(exc: BaseException) -> str:
    reason = getattr(exc, "reason", None)
    return f"MQRC {reason}" if reason is not None else f"{type(exc).__name__}: {str(exc)[:160]}"


class PublicationStats:
    """The resource-statistics subscriptions of one queue manager through an adapter that subscribes, gets
    (``None`` when nothing is there) and unsubscribes.  ``read`` is called once per collection."""

    source = "publications"

    def __init__(self, qmgr: str, max_queues: int = 50, wait: float = 2.0, max_interval: float = 60.0,
                 command_level: int | None = None) -> None:
        self.qmgr = qmgr
        self.max_queues = max_queues
        self.wait = wait  # for the retained metadata, delivered at once on subscribing
        self.max_interval = max_interval
        self.command_level = command_level
        self.catalogue: rs.Catalogue | None = None
        self.max_handles: int | None = None  # the queue manager's MAXHANDS (the collector sets it from each read)
        self.subs: dict[tuple[str, str, str | None], _Sub] = {}
        self.counters = _Counters()
        self._adapter: Any = None

    # -- metadata -----------------------------------------------------------------------------------------------
    def _metadata(self, adapter: SubscribingAdapter, topic: str) -> rs.PcfMessage:
        handle = adapter.subscribe(topic)
        try:
            data = adapter.get(handle, self.wait)
        finally:
            adapter.unsubscribe(handle)
        if data is None:
            raise StatisticsError(f"no metadata on {topic} within {self.wait:g}s (IBM MQ 9.0 or later, "
                                  "distributed platforms only)")
        return rs.decode_pcf(data)

    def discover(self, adapter: SubscribingAdapter) -> rs.Catalogue:
        catalogue = rs.Catalogue()
        catalogue.add_classes(self._metadata(adapter, rs.classes_topic(self.qmgr)))
        for class_name in ("STATMQI", "STATQ"):
            cls = catalogue.class_by_name(class_name)
            if cls is None:
                raise StatisticsError(f"the queue manager publishes no {class_name} class")
            catalogue.add_types(self._metadata(adapter, cls.types_topic))
            for type_name in ("PUT", "GET"):
                mon_type = catalogue.type_by_name(class_name, type_name)
                if mon_type is None:
                    raise StatisticsError(f"the queue manager publishes no {class_name}/{type_name}")
                catalogue.add_elements(self._metadata(adapter, mon_type.elements_topic))
                if not mon_type.data_topic:
                    raise StatisticsError(f"the metadata of {class_name}/{type_name} names no topic")
        return catalogue

    # -- subscriptions -------------------------------------------------------------------------------------------
    def _subscribe(self, adapter: SubscribingAdapter, klass: str, kind: str, queue: str | None) -> None:
        assert self.catalogue is not None
        mon_type = self.catalogue.type_by_name(klass, kind)
        assert mon_type is not None and mon_type.data_topic
        topic = mon_type.data_topic
        if queue is not None:
            topic = topic.replace("%s", rs.object_topic_name(queue, self.command_level))
        self.subs[(klass, kind, queue)] = _Sub(adapter.subscribe(topic), topic, klass, kind, queue)

    def _drop(self, adapter: SubscribingAdapter, key: tuple[str, str, str | None]) -> None:
        sub = self.subs.pop(key)
        try:
            adapter.unsubscribe(sub.handle)
        except Exception:  # noqa: BLE001 - the subscription goes with the connection anyway
            pass

    def forget(self) -> None:
        """The connection is gone: its subscriptions went with it (non-durable); the counters stay."""
        self.subs.clear()
        self._adapter = None

    def release(self, adapter: SubscribingAdapter) -> None:
        """A run failed while the connection stays open: close every subscription held (the next run subscribes
        again).  Dropping them without closing leaked one object handle and one managed queue, still filling with
        publications, per subscription and failed run, until the connection ran out of handles (MAXHANDS, 2017)."""
        for key in list(self.subs):
            self._drop(adapter, key)
        self.forget()

    def read(self, adapter: SubscribingAdapter, queues: list[str]) -> Throughput:
        started = time.monotonic()
        if adapter is not self._adapter:
            self.subs.clear()  # a new connection: subscribe again
            self._adapter = adapter
        if self.catalogue is None:
            self.catalogue = self.discover(adapter)
            if self.max_handles is None:  # the first run: never subscribe past MAXHANDS, not even once
                self.max_handles = _adapter_max_handles(adapter)
        wanted, cap = _capped(queues, self.max_queues, self.max_handles)
        for key in [k for k in self.subs if k[2] is not None and k[2] not in wanted]:
            self._drop(adapter, key)
        refused: list[str] = []
        for kind in ("PUT", "GET"):
            if ("STATMQI", kind, None) not in self.subs:
                self._subscribe(adapter, "STATMQI", kind, None)
            for queue in wanted:
                if ("STATQ", kind, queue) not in self.subs:
                    try:
                        self._subscribe(adapter, "STATQ", kind, queue)
                    except Exception as exc:
                        if getattr(exc, "reason", None) not in SUBSCRIPTION_REASONS:
                            raise
                        # this queue's topic only (e.g. no subscribe authority on it): the others keep counting,
                        # and it is tried again next run
                        refused.append(f"STATQ/{queue}/{kind}: {describe_error(exc)}")
        errors: list[str] = []
        for sub in list(self.subs.values()):
            for _ in range(MAX_MESSAGES_PER_SUBSCRIPTION):
                data = adapter.get(sub.handle, 0)
                if data is None:
                    break
                try:
                    self._use(sub, data)
                except (rs.PcfError, rs.PublicationError) as exc:
                    self.counters.dropped += 1
                    errors.append(f"{sub.topic}: {exc}")
                    if isinstance(exc, rs.PublicationError) and "metadata" in str(exc):
                        self.catalogue = None  # e.g. the queue manager was upgraded: discover again next run
        result = self.counters.throughput(self.source, wanted)
        result.subscriptions = len(self.subs)
        result.not_subscribed = max(0, len(set(queues)) - len(wanted))
        result.handles_cap = cap
        result.duration = time.monotonic() - started
        problems = []
        if refused:
            problems.append(f"{len(refused)} subscription(s) refused, first: {refused[0]}"
                            + _reason_hint(refused[0]))
        if errors:
            problems.append(f"{len(errors)} unusable publication(s), first: {errors[0][:300]}")
        result.error = "; ".join(problems) or None
        return result

    def _use(self, sub: _Sub, data: bytes) -> None:
        assert self.catalogue is not None
        publication = rs.read_publication(rs.decode_pcf(data), self.catalogue)
        if (publication.class_name, publication.type_name) != (sub.klass, sub.kind):
            raise rs.PublicationError(f"a {publication.class_name}/{publication.type_name} publication on "
                                      f"{sub.klass}/{sub.kind}'s subscription")
        if sub.queue is not None and publication.object_name != sub.queue:
            raise rs.PublicationError(f"a publication for queue {publication.object_name!r} on {sub.queue!r}'s "
                                      "subscription")
        if publication.interval is None or publication.interval > self.max_interval:
            self.counters.dropped += 1  # spans more than an interval: not a count of one interval
            return
        self.counters.publications += 1
        self.counters.add(sub.klass, sub.queue, publication.counts)


class ResetQstatsStats:
    """Opt-in RESET QSTATS (PCF MQCMD_RESET_Q_STATS) per monitored queue: MsgEnqCount/MsgDeqCount since the last
    reset, summed here.  DESTRUCTIVE: every reset clears the queue manager's counters for every other tool
    reading them (another monitor's RESET QSTATS then sees only what came after ours)."""

    source = "reset_qstats"

    def __init__(self, qmgr: str, max_queues: int = 50) -> None:
        self.qmgr = qmgr
        self.max_queues = max_queues
        self.counters = _Counters()

    def read(self, reset: Callable[[str], tuple[int, int]], queues: list[str]) -> Throughput:
        started = time.monotonic()
        wanted = sorted(set(queues))[: self.max_queues]
        for queue in wanted:
            enq, deq = reset(queue)
            for name, value in (("puts", enq), ("gets", deq)):
                if not isinstance(value, int) or not 0 <= value <= rs.MAX_DELTA:
                    raise StatisticsError(f"RESET QSTATS {queue}: {name} = {value!r}")
            self.counters.publications += 1
            self.counters.add("STATQ", queue, {"puts": enq, "gets": deq})
        result = self.counters.throughput(self.source, wanted)
        result.subscriptions = len(wanted)
        result.not_subscribed = max(0, len(set(queues)) - len(wanted))
        result.duration = time.monotonic() - started
        return result


class AmqsruaStats:
    """``amqsrua`` run in a worker thread, one bounded command after the other:
    ``amqsrua -m QM -c STATMQI -t PUT -t GET -c STATQ -t PUT -o Q1 -t GET -o Q1 ... -n N``, where N is the number
    of publications of ``ticks`` intervals.  It ends right after a publication, and the next command subscribes
    again long before the next one is due, so no interval is lost between commands.  ``read`` takes what the
    worker has parsed since the last collection and never waits.  A command that brings no publication (it ends at
    once: 2059, 2035, ssh refused) is followed by the next only after a capped exponential back-off."""

    source = "amqsrua"

    def __init__(self, qmgr: str, amqsrua: str, command_prefix: list[str] | None = None, monint: float = 10.0,
                 ticks: int = 3, max_queues: int = 49, env: dict[str, str] | None = None,
                 runner: Callable[..., Any] = run_command, backoff: Backoff | None = None,
                 wait: Callable[[float], bool] | None = None) -> None:
        self.qmgr = qmgr
        self.amqsrua = amqsrua
        self.prefix = list(command_prefix or [])
        self.monint = monint
        self.ticks = max(1, ticks)
        self.max_queues = min(max_queues, (AMQSRUA_MAX_TYPES - AMQSRUA_FIXED_TYPES) // 2)
        self.env = env
        self.runner = runner
        self.counters = _Counters()
        self._lock = threading.Lock()
        self._queues: list[str] = []
        self._pending: list[tuple[str, str, str | None, dict[str, int], float | None]] = []
        self._pending_log: list[tuple[dict[str, float], float | None]] = []  # DISK/Log publications (issue 39)
        self.log: dict[str, float] = {}  # latest DISK/Log gauges and summed deltas, in base units
        self._error: str | None = None
        self._runs = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        # an amqsrua that ends at once (2059, 2035, ssh refused) is started again after MONINT, then twice as long
        # each time, at most AMQSRUA_BACKOFF_CAP; one that brought publications is started again at once
        self.backoff = backoff or Backoff(first=max(0.1, monint), cap=max(AMQSRUA_BACKOFF_CAP, monint))
        self._wait = wait or self._stop.wait  # returns True when stopped (tests pass a simulated clock)
        self.spawns = 0  # amqsrua commands started
        self.max_handles: int | None = None  # MAXHANDS (amqsrua's own connection; the collector sets it)

    @property
    def present(self) -> bool:
        """False when amqsrua is not installed at the configured path here (nothing to run, nothing failing)."""
        return bool(self.prefix) or os.access(self.amqsrua, os.X_OK)

    def argv(self, queues: list[str]) -> list[str]:
        """The command for ``queues``, each an MQ object name (:meth:`read` passes no other; through an ssh prefix
        every argument is quoted for the remote shell)."""
        argv = [self.amqsrua, "-m", self.qmgr, "-c", "STATMQI", "-t", "PUT", "-t", "GET", "-c", "DISK", "-t", "Log"]
        if queues:
            argv += ["-c", "STATQ"]
            for queue in queues:
                if not OBJECT_NAME.match(queue):
                    raise StatisticsError(f"amqsrua: {queue[:60]!r} is not an MQ object name; not run")
                argv += ["-t", "PUT", "-o", queue, "-t", "GET", "-o", queue]
        per_tick = AMQSRUA_FIXED_TYPES + 2 * len(queues)
        try:
            return prefixed(self.prefix, [*argv, "-n", str(per_tick * self.ticks)])
        except UnsafeArgument as exc:
            raise StatisticsError(f"amqsrua: {exc}") from None

    def timeout(self) -> float:
        # the ticks, one more interval for the first, and amqsrua's own 30 s wait for a publication
        return (self.ticks + 1) * self.monint + 35.0

    def _run_once(self) -> bool:
        """One amqsrua command; True when it brought publications (it did its work, whatever else it said)."""
        with self._lock:
            queues = list(self._queues)
        argv = self.argv(queues)
        self.spawns += 1
        try:
            result = self.runner(argv, timeout=self.timeout(),
                                 env={**os.environ, **self.env} if self.env is not None else None)
        except CommandNotFound:
            raise StatisticsError(f"amqsrua not found at {self.amqsrua} (IBM MQ samples not installed?)") from None
        except CommandTimeout:
            raise StatisticsError(f"amqsrua: no publications within {self.timeout():.0f}s") from None
        except CommandError as exc:
            raise StatisticsError(f"amqsrua: {exc}") from None
        output = parse_amqsrua(result.stdout, queues)
        items = []
        logs = []
        for publication in output.publications:
            for (klass, _kind, obj), counts in publication.counts.items():
                items.append((klass, _kind, obj, counts, publication.interval))
            if publication.log:
                logs.append((publication.log, publication.interval))
        with self._lock:
            self._pending.extend(items)
            self._pending_log.extend(logs)
            self._runs += 1
            if output.errors:
                self._error = f"amqsrua: {output.errors[0]}" + _reason_hint(output.errors[0])
            elif output.garbage:
                self._error = f"amqsrua: unusable value {output.garbage[0]}"
            elif not output.publications:
                hint = first_line(result.stdout) or first_line(result.stderr) or "no output"
                self._error = f"amqsrua: no publication (exit status {result.returncode}: {hint[:120]!r})"
            else:
                self._error = None
        return bool(output.publications)

    def _loop(self) -> None:
        while not self._stop.is_set():
            error: str | None = None
            try:
                if self._run_once():
                    self.backoff.succeeded()
                    continue  # at once: the next command subscribes before the next publication is due
            except StatisticsError as exc:
                error = str(exc)
            except Exception as exc:  # noqa: BLE001 - the worker must survive anything and say what it was
                error = f"amqsrua worker: {type(exc).__name__}: {exc}"
            delay = self.backoff.failed()
            with self._lock:
                if error is not None:
                    self._error = error
                    self._runs += 1
                elif self._error is None:
                    self._error = "amqsrua: no publication"
                seconds = f"{delay:.0f}" if delay >= 10 else f"{delay:.1f}"
                self._error += (f"; {self.backoff.failures} failed in a row, next try in {seconds} s"
                                if self.backoff.failures > 1 else f"; next try in {seconds} s")
            if self._wait(delay):  # back off: never restarted in a loop (sshd MaxStartups, fail2ban)
                return

    def read(self, queues: list[str]) -> Throughput | None:
        """What has arrived since the last call, added to the counters; None before the first command ended.
        A queue name that is not an MQ object name (a garbled or hostile answer) is not asked for, and said."""
        refused = [queue for queue in queues if not OBJECT_NAME.match(queue)]
        if refused:
            queues = [queue for queue in queues if OBJECT_NAME.match(queue)]
        wanted, cap = _capped(queues, self.max_queues, self.max_handles)
        with self._lock:
            self._queues = wanted  # the next command asks for these
            pending, self._pending = self._pending, []
            pending_log, self._pending_log = self._pending_log, []
            error, runs = self._error, self._runs
        if self._thread is None or not self._thread.is_alive():
            self._stop.clear()
            self._thread = threading.Thread(target=self._loop, name=f"amqsrua-{self.qmgr}", daemon=True)
            self._thread.start()
        started = time.monotonic()
        for klass, _kind, obj, counts, interval in pending:
            if interval is None or interval > max(60.0, 3 * self.monint):
                self.counters.dropped += 1
                continue
            self.counters.publications += 1
            self.counters.add(klass, obj, counts)
        self._add_log(pending_log)
        if runs == 0:
            return None
        result = self.counters.throughput(self.source, wanted)
        result.log = dict(self.log)
        result.subscriptions = AMQSRUA_FIXED_TYPES + 2 * len(wanted)
        result.not_subscribed = max(0, len(set(queues)) - len(wanted))
        result.handles_cap = cap
        result.duration = time.monotonic() - started
        result.error = error
        if refused:
            more = f" (+{len(refused) - 1} more)" if len(refused) > 1 else ""
            said = f"amqsrua: queue name {refused[0][:60]!r}{more} is not an MQ object name; not asked for"
            result.error = f"{said}; {error}" if error else said
        return result

    def _add_log(self, pending: list[tuple[dict[str, float], float | None]]) -> None:
        """DISK/Log publications in arrival order: gauges keep the latest value, deltas are summed (a delta over an
        implausibly long interval is left out, as the put/get counts are)."""
        for values, interval in pending:
            span_ok = interval is not None and interval <= max(60.0, 3 * self.monint)
            for description, value in values.items():
                if description in AMQSRUA_LOG_DELTAS:
                    if span_ok:
                        self.log[description] = self.log.get(description, 0.0) + value
                else:
                    self.log[description] = value

    def stop(self) -> None:
        self._stop.set()


def _adapter_max_handles(adapter: Any) -> int | None:
    """MAXHANDS through the PCF adapter (MQCMD_INQUIRE_Q_MGR), read once with the metadata; None if it cannot."""
    inquire = getattr(adapter, "qmgr_attributes", None)
    if inquire is None:
        return None
    try:
        for attrs in inquire():
            value = attrs.get(MQIA_MAX_HANDLES)
            if isinstance(value, int) and value > 0:
                return value
    except Exception:  # noqa: BLE001 - then the collector passes it on from the next snapshot
        return None
    return None


def _reason_hint(text: str) -> str:
    hints = {"2035": " (not authorized: subscribe authority on the $SYS/MQ/INFO/QMGR topics)",
             "2059": " (queue manager not available)", "2085": " (unknown object)"}
    return next((hint for code, hint in hints.items() if text.endswith(code)), "")
