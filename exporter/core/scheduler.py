"""Runs collectors on their own intervals, isolates their failures, and serves one cached snapshot.

Design (documented in the README, "How collection works"):

* Every enabled collector runs in its own background loop, once at start and then only when its last result has
  been read (a scrape of ``/metrics``, the status API or page: :meth:`Scheduler.mark_read`), at most once per
  ``interval`` and timed to be at most one interval old at the next expected read (the gap between the last two
  reads).  Nobody reading: no collection and no wake-up at all.  ``/metrics`` never runs a collector: scrapes read
  the latest snapshot, so two Prometheus replicas scraping every 5 s cost the monitored systems nothing more than
  one, and a slow database cannot stall a scrape.  A collector whose source must be drained even when nobody reads
  (``collect_in_background``: MQ statistics publications) runs on every ``interval`` as before.
* Each run happens in the collector's own daemon thread, kept between runs (a new one after a run that overran:
  the hung one is left to its call).  The scheduler waits at most ``timeout`` seconds for it.  A run
  that raises, returns invalid samples or overruns its timeout marks that collector failed
  (``middleware_scrape_collector_success 0``) and drops its samples from the snapshot; other collectors are
  untouched.  A run still hung at the next tick is not started again (no thread pile-up); the failure says
  how long it has been running.  A run that finished while a target was down or a source failed is *degraded*:
  its samples are served, its success is 0 too and ``last_error`` names the targets and sources and why
  (:func:`failed_sources`).
* A scrape takes the states kept here as one :meth:`Scheduler.snapshot` (every collector's last batch, the
  exporter's own figures, a generation) and the exposition (:mod:`.exposition`) renders it: the scrape path goes
  from here to the bytes and never comes back (docs/architecture.md, "The scrape path").
* Failures are logged once per distinct cause: when a collector or source starts failing, when the cause changes
  (compared by the exception type and :func:`cause_key`, which ignores the parts that vary from run to run:
  numbers, addresses, connection ids, random tokens, undecodable bytes; :class:`_Cause` also learns the places
  where a handle changes from run to run), and when it recovers; sources failing for the same cause share one line.
  A text that changes on every attempt all the same is logged a few times, then no more until recovery.  Every
  text is scrubbed of secrets (``redact``) before it is kept or logged.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterable

from ..machine.deadline import BoundedCall, Overdue
from .collector import Collector
from .exposition import Exposition, Snapshot
from .metrics import MetricBatch, StaticLabels, static_labels_for
from .secrets import scrub
from .selfmetrics import SelfMetrics

if TYPE_CHECKING:
    from prometheus_client.core import Metric

log = logging.getLogger("middleware_exporter.scheduler")

# Every function here runs in time linear in the text's length, whatever its shape (issue 38: one 40,000-letter
# word took seconds per attempt, holding the interpreter): cause_key reads a bounded part of the text
# (:func:`_bounded`), and no pattern backtracks over a run more than once: each scan of a run of word characters
# starts only where the run starts (a lookbehind) or is possessive (``*+``), and a lookahead tests one class at a time.
# bench/fuzz.py times the worst shapes known at n and 8n.
CAUSE_HEAD_WORDS = 32
CAUSE_TAIL_WORDS = 16
CAUSE_WORD_END = 64  # characters kept at either end of a longer word
CAUSE_WORD = 2 * CAUSE_WORD_END + len("...")  # the most characters of a word _bounded keeps
CAUSE_TEXT = (CAUSE_HEAD_WORDS + CAUSE_TAIL_WORDS) * (CAUSE_WORD + 1) + len("<cut> ")  # the most _bounded returns
BLANKS = {" ", "\t", "\r", "\n"}
_BLANK_WORD = re.compile(r"[^ \t\r\n]+")  # words between blanks (other spaces and control characters are garbage)
# A bytes repr (b'\x8f...'), which may hold blanks: replaced in the whole text before it is bounded, so that a long
# one is still one placeholder (no cut inside it)
_BYTES_REPR = re.compile(r"\bb'(?:\\.|[^'\\])*+'|\bb\"(?:\\.|[^\"\\])*+\"")

# The parts of an error text that change from one attempt to the next without a change of cause.
_VARYING = re.compile(
    r"(?P<uuid>\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b)"
    r"|(?P<idkv>\b(?:[A-Za-z]++[_-])?(?i:id|handle|session|sid|token|nonce|cookie)\s*+[=:]\s*+)[^\s,;)\]}'\"]+"
    r"|(?P<addr>\b\d{1,3}(?:\.\d{1,3}){3}(?::\d++)?\b|\[[0-9a-fA-F:.]++\](?::\d+)?)"
    r"|(?P<hex>\b0x[0-9a-fA-F]++\b)"
    r"|(?P<bytes>(?:\\x[0-9a-fA-F]{2})+)"  # \x8f\x10 (a bytes repr is replaced before: _BYTES_REPR)
    # random tokens: 12+ characters mixing letters and digits, or 8+ mixing lower and upper case (base64 without
    # digits, letters-only handles); '/', '+' and '=' padding are part of them.  A token is a whole run: it starts
    # where no token character precedes and ends where none follows
    r"|(?P<token>(?<![\w+=/-])(?:(?=[\w+/-]*?\d)(?=[\w+/-]*?[A-Za-z])[\w+/-]{12,}+"
    r"|(?=[\w+/-]*?[a-z])(?=[\w+/-]*?[A-Z])[\w+/-]{8,}+)={0,2}+(?![\w+/=-]))"
    r"|(?P<code>\b[A-Za-z]++-?\d++[A-Za-z]?\b"
    r"|(?i:\b(?:http|status|errno|reason|code|rc|mqrc|sqlcode|exit status|exit code|exited(?: with)?|signal)"
    r"[\s:=#\[]*+)-?\d+)"
    r"|(?P<number>\d+(?:[.,]\d+)*)")
# A word in CamelCase (ConnectionRefusedError, HTTPError, getaddrinfo) is a name, not a random token: kept.
_NAME = re.compile(r"(?:[a-z]+|[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]{2,})(?:[A-Z]+(?=[A-Z][a-z]|$)|[A-Z][a-z]{2,})*"
                   r"(?:[A-Z]+)?")
_EXCEPTION_PREFIX = re.compile(r"^(?:[A-Za-z_.]*(?:Error|Exception|Unavailable|Overdue): )+")
# "(N s left)" and the like; it starts where a run of blanks starts (a start inside the run would scan it again)
_ASIDE = re.compile(r"(?<!\s)\s*+\(\s*+N(?:\s*+(?:ms|s|seconds?|minutes?|m|h))?(?:\s*+(?:left|remaining|ago|elapsed))?"
                    r"\s*+\)")
# Characters no one writes in an error text: bytes that were not text (U+FFFD, control characters, surrogates,
# private use).  From the first of them the rest of the text is random: one placeholder for all of it.
_GARBAGE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffd\ud800-\udfff\ue000-\uf8ff]")
_WORD = re.compile(r"\S+")
_LAST_WORD = re.compile(r"(?<!\S)\S*+\Z")  # the last word (empty after a blank); found from each word's start once
_PLAIN_WORD = re.compile(r"[(\[]?(?:[A-Za-z][a-z]{2,}|[A-Z]{3,})[)\],.;]?|[A-Za-z0-9_.-]*[A-Za-z0-9]:")


def _bounded(message: str) -> str:
    """The words of a text, one blank between them, a word of more than :data:`CAUSE_WORD` characters as its first
    and last :data:`CAUSE_WORD_END` with ``...`` between them (a bytes repr keeps its ``b'`` and its closing quote);
    of a text of more than ``CAUSE_HEAD_WORDS + CAUSE_TAIL_WORDS`` words, the first and the last words with
    ``<cut>`` between them.  What a failure is shows there (a message's words first, the request or command it
    concerns often last), and a text of any length costs cause_key the same.  Words, not characters, so that a text
    whose length varies (a number with one more digit) keeps the same parts: the first words are counted from the
    start, the last read from a window at the end."""
    head: list[str] = []
    for word in _BLANK_WORD.finditer(message):
        if len(head) == CAUSE_HEAD_WORDS + CAUSE_TAIL_WORDS:
            break
        start, end = word.span()
        head.append(message[start:end] if end - start <= CAUSE_WORD else
                    f"{message[start:start + CAUSE_WORD_END]}...{message[end - CAUSE_WORD_END:end]}")
    else:
        return " ".join(head)
    window = message[-CAUSE_TAIL_WORDS * (CAUSE_WORD + 1):]
    words = _BLANK_WORD.findall(window)
    if len(words) > 1 and len(message) > len(window) and not {message[-len(window) - 1], window[0]} & BLANKS:
        words = words[1:]  # the window starts inside a word: from the next one
    tail = [word if len(word) <= CAUSE_WORD else f"{word[:CAUSE_WORD_END]}...{word[-CAUSE_WORD_END:]}"
            for word in words[-CAUSE_TAIL_WORDS:]]
    return " ".join([*head[:CAUSE_HEAD_WORDS], "<cut>", *tail])


def _random_word(word: str) -> bool:
    """A word of bytes read as Latin-1 or Windows-1252: three or more non-ASCII characters, one of them no letter
    (``Ã¿Ë†``, ``ê‹’¶``); words of a language have letters only (``Größe``, ``Zürich``)."""
    foreign = [char for char in word if ord(char) > 127]
    return len(foreign) >= 3 and not all(char.isalpha() for char in foreign)


def _cut_garbage(message: str) -> str:
    """The text up to where bytes that are not text begin, then ``<bytes>``.  They begin at the first unprintable
    character (:data:`_GARBAGE`) or word of :func:`_random_word`; the cut then goes back over the words before it
    that are no plain words (a few random characters that happened to be printable) but never past a ``:``
    (``dspmq: exit status 3: <first line of output>``)."""
    found = _GARBAGE.search(message)
    start = found.start() if found is not None else None
    for word in _WORD.finditer(message, 0, len(message) if start is None else start):
        if _random_word(word.group()):
            start = word.start()
            break
    if start is None:
        return message
    glued = _LAST_WORD.search(message, 0, start)  # printable characters glued to them are theirs
    end = glued.start() if glued is not None else start
    for word in reversed(list(_WORD.finditer(message, 0, end))):  # back over the words that are no plain words
        if _PLAIN_WORD.fullmatch(word.group()):
            break
        end = word.start()
    head = message[:end].rstrip()
    return f"{head} <bytes>" if head else "<bytes>"


def cause_key(message: str) -> str:
    """What a failure is, without what varies between attempts: numbers, durations, addresses, connection and
    session ids, hex values, random tokens and undecodable output are replaced; error codes (ORA-12541, AMQ9208E,
    HTTP 401, [Errno 111]) are kept, so a change of cause still shows.  Words that vary between attempts and look
    like no token (a handle of lower-case letters) are told apart by :class:`_Cause`, from attempt to attempt.
    Of a long text, its first and its last words (:func:`_bounded`)."""
    return _cause_of(_bounded(_BYTES_REPR.sub("<bytes>", message)))


def _cause_of(message: str) -> str:
    """:func:`cause_key` of a text already bounded (bench/fuzz.py times it unbounded: linear as well)."""

    def replace(match: re.Match[str]) -> str:
        kind = match.lastgroup
        if kind == "code":
            return match.group(0)
        if kind == "idkv":
            return match.group("idkv") + "<id>"
        if kind == "token" and _NAME.fullmatch(match.group(0)):
            return match.group(0)
        return {"uuid": "<id>", "addr": "<addr>", "hex": "<hex>", "token": "<id>", "bytes": "<bytes>",
                "number": "N"}[kind or "number"]

    message = _EXCEPTION_PREFIX.sub("", _cut_garbage(message))  # "ConnectionError: x" and "x" are one cause
    return _ASIDE.sub("", _VARYING.sub(replace, message)).strip()


_WORD_TOKENS = re.compile(r"<\w+>|\w+|[^\w\s]")
_VOWELS = re.compile(r"[aeiouy]", re.IGNORECASE)


def _word_like(token: str) -> bool:
    """Whether a token could be a word of prose (letters, vowels among them, no long consonant runs).  A rough
    test, hand-written (no dictionary ships with Python): it only decides whether two different tokens at the same
    place are told apart at once (both word-like) or only once the place has taken ``_Cause.VARYING_AFTER`` values."""
    return bool(re.fullmatch(r"[A-Z]?[a-z]+", token)) and len(_VOWELS.findall(token)) * 5 >= len(token) and \
        not re.search(r"[^aeiouy]{5,}|(.)\1\1|q(?!u)", token.lower())


class _Cause:
    """The cause last logged for one collector or source: the exception type and the tokens of its
    :func:`cause_key`, where places seen to vary (a handle, a temporary name) become wildcards.

    A new failure has the same cause when its type is the same and its tokens are the same but at up to
    :data:`MAX_VARYING` places, each holding a word of 5 or more characters of similar length in both, where one of
    the two does not look like prose (:func:`_word_like`), or where the place has already held
    :data:`VARYING_AFTER` different words.  So ``session qzkxwvtp closed`` and ``session mwhrtbdk closed`` are one
    cause; ``queue manager QM1 is stopping`` and ``... is starting`` two (until a third word turns up there).
    When the text changes on every attempt all the same (:data:`CHANGES_LOGGED` new causes in a row), one line says
    so and no new cause is logged until recovery: the status API and the error metric keep the current text."""

    MAX_VARYING = 2
    VARYING_AFTER = 3
    CHANGES_LOGGED = 3
    WILDCARD = "<*>"

    def __init__(self, kind: str, key: str) -> None:
        self.kind = kind
        self.tokens = _WORD_TOKENS.findall(key)
        self.seen: dict[int, set[str]] = {}  # place -> the different words it held
        self.changes = 0  # new causes logged in a row (one per failed run)
        self.quiet = False

    def observe(self, kind: str, key: str) -> str:
        """``"same"``, ``"new"`` (log it), ``"unsettled"`` (log that the text keeps changing) or ``"quiet"``."""
        tokens = _WORD_TOKENS.findall(key)
        same_shape = kind == self.kind and len(tokens) == len(self.tokens)
        places = [i for i, (old, new) in enumerate(zip(self.tokens, tokens, strict=True))
                  if old != new and old != self.WILDCARD] if same_shape else []
        if same_shape and not places:
            self.changes = 0
            return "same"
        if same_shape and len(tokens) >= 3 and len(places) <= self.MAX_VARYING and all(
                _handle_pair(self.tokens[i], tokens[i]) for i in places):
            for i in places:
                self.seen.setdefault(i, {self.tokens[i]}).add(tokens[i])
            if all(len(self.seen[i]) >= self.VARYING_AFTER or not (_word_like(self.tokens[i]) and _word_like(tokens[i]))
                   for i in places):
                for i in places:
                    self.tokens[i] = self.WILDCARD
                self.changes = 0
                return "same"
            wildcards = [i for i, token in enumerate(self.tokens) if token == self.WILDCARD]
            self.tokens = tokens  # the same shape: the places' history stays
            for i in wildcards:
                self.tokens[i] = self.WILDCARD
        else:
            self.kind, self.tokens, self.seen = kind, tokens, {}
        if self.quiet:
            return "quiet"
        self.changes += 1
        if self.changes > self.CHANGES_LOGGED:
            self.quiet = True
            return "unsettled"
        return "new"


def _handle_pair(old: str, new: str) -> bool:
    """Whether two different tokens at one place could both be a varying handle: words of 5 or more letters, digits
    or ``_``, of similar length (or one of them a token :func:`cause_key` masked)."""
    if "<id>" in (old, new):  # a random token the key masked, against one that looked like a name
        return all(token == "<id>" or (len(token) >= 5 and re.fullmatch(r"\w+", token)) for token in (old, new))
    return len(old) >= 5 and len(new) >= 5 and abs(len(old) - len(new)) <= 2 and \
        re.fullmatch(r"\w+", old) is not None and re.fullmatch(r"\w+", new) is not None


@dataclass
class TargetState:
    """One target of a collector as the last run left it (core/targets.py): up, why not, since when it was last
    up (wall-clock time, 0: never), and its sources' success and error."""

    up: bool | None = None  # None: no run has finished yet
    error: str | None = None
    last_success: float = 0.0
    sources: dict[str, tuple[bool, str | None]] = field(default_factory=dict)

    def as_json(self, name: str) -> dict:
        return {"name": name, "up": self.up, "state": _target_state(self.up), "last_error": self.error,
                "last_success_timestamp": self.last_success or None,
                # a source that is fine carries its note (why it read nothing) in the text slot of its tuple
                "sources": [{"name": source, "success": ok, "last_error": None if ok else error,
                             **({"note": error} if ok and error else {})}
                            for source, (ok, error) in sorted(self.sources.items())]}


def _target_state(up: bool | None) -> str:
    return "pending" if up is None else "up" if up else "down"


@dataclass
class CollectorState:
    collector: Collector
    batch: MetricBatch | None = None  # the last run's samples (None: none to serve)
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
    # What middleware_scrape_collector_success says (core/targets.py): the run finished in time with valid samples
    # (`success`), every target it watches is up and no source failed.  None before the first run.
    worked: bool | None = None
    targets: dict[str, TargetState] = field(default_factory=dict)
    logged_targets: dict[str, _Cause] = field(default_factory=dict)  # target -> the "target down" cause last logged
    last_error_type: str = ""  # the exception type of the last failed run ("Overdue" for a timeout)
    nothing_read: str | None = None  # why the last run, which worked, had nothing to read (readiness leaves it out)
    logged_cause: _Cause | None = None  # the collector failure last logged (None: not failing)
    logged_sources: dict[str, _Cause] = field(default_factory=dict)  # source -> the failure last logged

    def __post_init__(self) -> None:
        self.targets = {name: TargetState() for name in self.collector.targets()}

    @property
    def name(self) -> str:
        return self.collector.name

    @property
    def families(self) -> list[Metric]:
        """The last run's samples as prometheus_client objects, built when asked (the exposition writes the
        batch's rows without them: MetricBatch.rows)."""
        return self.batch.families() if self.batch is not None else []

    @property
    def state(self) -> str:
        """``pending`` before the first run; ``ok`` when it worked; ``degraded`` when the run finished but a target
        is down or a source failed (what was read is served, :func:`failed_sources`); ``failed`` when the run
        itself failed (no samples)."""
        if self.success is None:
            return "pending"
        if not self.success:
            return "failed"
        return "ok" if self.worked else "degraded"

    def as_json(self) -> dict:
        s = self.collector.settings
        return {
            "name": self.name,
            "description": self.collector.description,
            "enabled": True,
            "state": self.state,
            "interval_seconds": s.interval,
            "timeout_seconds": s.timeout,
            "runs": self.runs,
            "failures": self.failures,
            "last_success": self.worked,
            "samples_served": self.success,
            "last_run_timestamp": self.last_run,
            "last_success_timestamp": self.last_success or None,
            "last_duration_seconds": self.duration,
            "series": self.series,
            "last_error": self.last_error,
            "source_errors": self.source_errors,
            "targets": [target.as_json(name) for name, target in self.targets.items()],
        }


UNSETTLED = "the error text changes on every attempt: further changes are not logged until it recovers"


def _names(sources: list[str], shown: int = 8) -> str:
    names = ",".join(sorted(sources)[:shown])
    return names + (f",...({len(sources) - shown} more)" if len(sources) > shown else "")


def _of_down_target(source: str, down: dict[str, TargetState]) -> bool:
    """Whether a source error is a down target's own or one of its sources': its "target down" says it."""
    return any(source == name or source.startswith((f"{name}:", f"{name}/")) or source in target.sources
               for name, target in down.items())


def failed_sources(state: CollectorState) -> dict[str, str]:
    """The sources that failed in a collector's last finished run, with their errors (such a run is degraded,
    docs/architecture.md, "Targets and what success means"): its ``source_errors`` and the failed sources of its
    targets that are up, less those of a target that is down (its "target down" says why).  A target's source that
    ``source_errors`` does not name is ``target/source``."""
    down = {name: target for name, target in state.targets.items() if target.up is False}
    failed = {source: message for source, message in sorted(state.source_errors.items())
              if not _of_down_target(source, down)}
    for name, target in state.targets.items():
        if target.up is False:
            continue
        for source, (ok, error) in sorted(target.sources.items()):
            named = (source, f"{name}:{source}", f"{name}/{source}", f"{name}/{source.partition(':')[0]}")
            if ok or any(key in state.source_errors for key in named) or state.source_errors.get(name) == error:
                continue  # told already: under its own key, or its text under the target's
            failed[f"{name}/{source}"] = error or "failed"
    return failed


def _failed_summary(failed: dict[str, str], shown: int = 4) -> str:
    """A degraded run's ``last_error``: ``3 sources failed: opcsv: timed out after 3s; ovc: ...``.  Sources with
    the same error text share it (``db1:a, db1:b and 21 more: ORA-00942: ...``), the most common first; at most
    ``shown`` texts and ``shown`` names per text are spelt out, so 500 failing queries stay one short line."""
    by_error: dict[str, list[str]] = {}
    for source, message in failed.items():
        by_error.setdefault(message, []).append(source)
    groups = sorted(by_error.items(), key=lambda item: -len(item[1]))  # the most common error first
    parts = []
    for message, sources in groups[:shown]:
        if len(sources) == 1 and message.startswith(f"{sources[0]}:"):
            parts.append(message)  # the text names its source already ("opcsv: timed out after 3s")
            continue
        more = f" and {len(sources) - shown} more" if len(sources) > shown else ""
        parts.append(f"{', '.join(sources[:shown])}{more}: {message}")
    if len(groups) > shown:
        rest = sum(len(sources) for _, sources in groups[shown:])
        parts.append(f"{rest} more with other errors")
    what = "source failed" if len(failed) == 1 else f"{len(failed)} sources failed"
    return f"{what}: {'; '.join(parts)}"


class Scheduler:
    """Owns the enabled collectors, their worker threads and the rendered snapshot."""

    def __init__(self, collectors: Iterable[Collector], redact: Callable[[str], str] = scrub,
                 wall_clock: Callable[[], float] = time.time, labels: dict[str, str] | None = None,
                 exporter_wide: bool = True) -> None:
        self.states = {c.name: CollectorState(c) for c in collectors}
        # the configured labels (exporter-wide ``labels`` and each target's), added to a run's samples when they
        # are written (core.metrics.Rows.series), and to the exporter's own series
        self._static: dict[str, StaticLabels] = {}
        own: dict[tuple[str, ...], dict[str, str]] = {}
        for name, state in self.states.items():
            collector = state.collector
            self._static[name], by_target = static_labels_for(name, labels or {}, collector.target_label,
                                                              collector.static_labels())
            own.update({(name, target): dict(target_labels) for target, target_labels in by_target.items()})
        self._redact = redact
        self._wall = wall_clock
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._calls = {name: BoundedCall(name, on_late=self._late_logger(name), keep_thread=True)
                       for name in self.states}
        self._generation = 0
        # demand (docs/architecture.md, "When collections happen"): when the snapshot was last read and the gap
        # between the last two reads (the scrape interval as observed), both on the monotonic clock
        self._demand = threading.Condition()
        self._read_at: float | None = None
        self._read_gap: float | None = None
        self._finished_at = {name: float("-inf") for name in self.states}  # when each run last ended (monotonic)
        self.start_time = self._wall()
        self.self_metrics = SelfMetrics(self._self_snapshot, self.start_time,
                                        StaticLabels(labels, ("collector", "target"), own), exporter_wide)
        self.exposition = Exposition()

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
        with self._demand:
            self._demand.notify_all()
        give_up = time.monotonic() + wait
        for thread in self._threads:
            thread.join(timeout=max(give_up - time.monotonic(), 0))
        for state in self.states.values():
            try:
                state.collector.close()
            except Exception:  # noqa: BLE001 - shutdown must go on
                log.warning("collector=%s msg=%r", state.name, "error while closing")

    def mark_read(self) -> None:
        """Someone read the snapshot (a scrape, the status API or page): the collectors whose result it was may run
        again.  Called on the request path: it only notes the time and wakes the waiting loops."""
        now = time.monotonic()
        with self._demand:
            if self._read_at is not None:
                self._read_gap = now - self._read_at
            self._read_at = now
            self._demand.notify_all()

    @staticmethod
    def _background(collector: Collector) -> bool:
        """Whether a collector runs on every interval whether or not anyone reads (its source must be drained)."""
        flag = getattr(collector, "collect_in_background", False)
        return bool(flag() if callable(flag) else flag)

    def _next_run(self, name: str, interval: float, started: float, now: float) -> float | None:
        """When a collector that last started at ``started`` should run next (monotonic), or None: not until
        someone reads its last result.  Never sooner than one interval after the last start; with reads coming
        every G seconds (G over the interval), as late as still gives a result at most one interval old at the
        next expected read, so one collection serves one scrape.  Called with ``_demand`` held."""
        read_at = self._read_at
        if read_at is None or read_at < self._finished_at[name]:
            return None  # the last result has not been read yet
        due = started + interval
        if self._read_gap is not None and now - read_at < self._read_gap:
            due = max(due, read_at + self._read_gap - interval)
        return due

    def _loop(self, state: CollectorState) -> None:
        interval = state.collector.settings.interval
        background = self._background(state.collector)
        next_due = time.monotonic()
        while not self._stop.is_set():
            started = time.monotonic()
            self.run_collector(state.name)
            if background:
                next_due += interval
                now = time.monotonic()
                if next_due < now:  # a run overran: skip the missed ticks instead of running back to back
                    next_due = now + interval
                if self._stop.wait(next_due - now):
                    return
                continue
            with self._demand:
                while not self._stop.is_set():
                    now = time.monotonic()
                    due = self._next_run(state.name, interval, started, now)
                    if due is not None and due <= now:
                        break
                    self._demand.wait(None if due is None else due - now)  # no read: no wake-up at all

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
            batch = self._calls[name](lambda: self._execute(collector, self._static[name]), timeout)
        except Overdue as exc:
            self._finish(state, None, str(exc), duration=timeout, kind="Overdue")
        except BaseException as exc:  # noqa: BLE001 - isolate anything a collector does
            message = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            self._finish(state, None, message, duration=time.monotonic() - started, kind=type(exc).__name__)
        else:
            self._finish(state, batch, None, duration=time.monotonic() - started)
        self.exposition.prerender(self.snapshot(read=False), name)

    def run_in_progress(self, name: str) -> bool:
        return self._calls[name].busy

    @staticmethod
    def _execute(collector: Collector, static: StaticLabels | None = None) -> MetricBatch:
        batch = MetricBatch(collector.specs(), max_series=collector.settings.max_series,
                            const_labels=collector.const_labels(), static_labels=static or None)
        collector.collect(batch)
        batch.check()  # a duplicate series fails the run (core/metrics.py)
        return batch

    @staticmethod
    def _late_logger(name: str) -> Callable[[float], None]:
        def late(elapsed: float) -> None:
            log.warning("collector=%s msg=%r duration_seconds=%.3f", name,
                        "run finished after its timeout; result discarded", elapsed)
        return late

    def _finish(self, state: CollectorState, batch: MetricBatch | None, error: str | None, duration: float,
                kind: str = "") -> None:
        with self._demand:  # a read from now on reads this result (the collector's loop waits for one)
            self._finished_at[state.name] = time.monotonic()
        failed: dict[str, str] = {}
        with self._lock:
            state.duration = duration
            now = self._wall()
            if error is None and batch is not None:
                state.success = True
                state.batch = batch
                state.series = batch.series
                state.source_errors = {k: self._redact(v) for k, v in batch.errors.items()}
                self._settle_targets(state, batch, now)
                down = [(name, t.error) for name, t in state.targets.items() if not t.up]
                failed = failed_sources(state)
                state.worked = not down and not failed  # degraded: a target down or a source failed
                if down or failed:
                    state.failures += 1
                    reasons = []
                    if down:
                        more = f" (and {len(down) - 1} more target(s) down)" if len(down) > 1 else ""
                        reasons.append(f"target {down[0][0]} down: {down[0][1]}{more}")
                    if failed:
                        reasons.append(_failed_summary(failed))
                    state.last_error = "; ".join(reasons)
                else:
                    state.last_success = now
                    state.last_error = None
            else:
                state.success = False
                state.worked = False
                state.failures += 1
                state.batch = None
                state.series = 0
                state.last_error = self._redact(error or "unknown error")
                state.last_error_type = kind
                for target in state.targets.values():  # nothing was read from any of them
                    target.up, target.error, target.sources = False, f"collection failed: {state.last_error}", {}
            state.nothing_read = batch.nothing_to_read if error is None and batch is not None else None
            state.version += 1
            self._generation += 1
        self._log_changes(state, error is None and batch is not None, failed)

    def _settle_targets(self, state: CollectorState, batch: MetricBatch, now: float) -> None:
        """Keep what the run said about each target (core/targets.py); a configured target it did not mention was
        not read (a collector that forgot one must not make it look up)."""
        reports = batch.reports.targets
        for name in list(state.targets) + [n for n in reports if n not in state.targets]:
            report = reports.get(name)
            target = state.targets.setdefault(name, TargetState())
            if report is None:
                target.up, target.error, target.sources = False, "not read in the last run", {}
                continue
            report.settle()
            target.up = bool(report.up)
            target.error = None if target.up else self._redact(report.error or "not reachable")
            target.sources = {source: (r.ok, (self._redact(r.note) if r.note else None) if r.ok
                                       else self._redact(r.error or "failed"))
                              for source, r in report.sources.items()}
            if target.up:
                target.last_success = now

    def _log_changes(self, state: CollectorState, succeeded: bool, failed: dict[str, str]) -> None:
        """One line per new cause: the collector's failure, the sources that fail for the same cause together;
        and one line on recovery.  A failure that goes on with the same cause is not logged again.  ``failed``:
        the run's :func:`failed_sources`, as :meth:`_finish` worked them out."""
        if not succeeded:
            key = cause_key(state.last_error or "")
            if state.logged_cause is None:
                state.logged_cause = _Cause(state.last_error_type, key)
                seen = "new"
            else:
                seen = state.logged_cause.observe(state.last_error_type, key)
            if seen == "new":
                log.warning("collector=%s msg=%r error=%r", state.name, "collection failed", state.last_error)
            elif seen == "unsettled":
                log.warning("collector=%s msg=%r error=%r", state.name, UNSETTLED, state.last_error)
            return  # the sources' state is unknown after a failed run: keep what was logged
        if state.logged_cause is not None:
            log.info("collector=%s msg=%r", state.name, "collection recovered")
            state.logged_cause = None
        self._log_targets(state)
        new_causes: dict[tuple[str, str], list[str]] = {}
        messages: dict[tuple[str, str], str] = {}
        current: dict[str, _Cause] = {}
        for source, message in failed.items():  # a down target's: its "target down" line says it
            key = cause_key(message)
            cause = state.logged_sources.get(source)
            seen = "new" if cause is None else cause.observe("", key)
            current[source] = cause if cause is not None else _Cause("", key)
            if seen in ("new", "unsettled"):
                new_causes.setdefault((seen, key), []).append(source)
                messages.setdefault((seen, key), message)
        recovered = sorted(set(state.logged_sources) - set(current))
        state.logged_sources = current
        # each line says what the collector's state now is (a failed source makes the run degraded)
        for (seen, key), sources in new_causes.items():
            what = "source failed" if len(sources) == 1 else f"{len(sources)} sources failed"
            what = f"{what}; collector {state.state}"
            log.warning("collector=%s sources=%s msg=%r error=%r", state.name, _names(sources),
                        f"{what}; {UNSETTLED}" if seen == "unsettled" else what, messages[(seen, key)])
        if recovered:
            what = "source recovered" if len(recovered) == 1 else f"{len(recovered)} sources recovered"
            log.info("collector=%s sources=%s msg=%r", state.name, _names(recovered),
                     f"{what}; collector {state.state}")

    def _log_targets(self, state: CollectorState) -> None:
        """``target down`` once per cause (the same error text the API and the page show), ``target recovered``."""
        for name, target in state.targets.items():
            cause = state.logged_targets.get(name)
            if target.up is False:
                key = cause_key(target.error or "")
                seen = "new" if cause is None else cause.observe("", key)
                if cause is None:
                    state.logged_targets[name] = _Cause("", key)
                if seen in ("new", "unsettled"):
                    log.warning("collector=%s target=%s msg=%r error=%r", state.name, name,
                                "target down" if seen == "new" else f"target down; {UNSETTLED}", target.error)
            elif cause is not None:
                del state.logged_targets[name]
                log.info("collector=%s target=%s msg=%r", state.name, name, "target recovered")

    # ---- state -----------------------------------------------------------------------------------------
    def readiness(self) -> dict:
        """``starting`` until every collector has finished its first run; ``failing`` while no collector's run
        itself works (each raised, timed out or produced invalid samples: the exporter is broken, not what it
        watches); else ``degraded`` while a collector's success is 0 (a target down: the exporter is reporting
        it), and ``ready``.  Ready covers ``degraded``: a pod taken out of its Service because a database is down
        could no longer say that the database is down (docs/architecture.md, "Readiness").  A collector whose
        last run had nothing to read (mountstats on a host without NFS mounts: ``note_nothing_to_read``) counts
        neither way: with every other collector failing the exporter is failing, and on its own it is ready."""
        with self._lock:
            pending = sorted(s.name for s in self.states.values() if s.success is None)
            failing = sorted(s.name for s in self.states.values() if s.success is not None and not s.worked)
            counted = [s for s in self.states.values() if not (s.success and s.nothing_read)]
            broken = [s.name for s in counted if s.success is False]
            down = sorted(f"{s.name}/{name}" for s in self.states.values() for name, t in s.targets.items()
                          if t.up is False)
        if pending:
            status = "starting"
        elif counted and len(broken) == len(counted):
            status = "failing"
        else:
            status = "degraded" if failing else "ready"
        return {"status": status, "ready": status in ("ready", "degraded"), "pending_collectors": pending,
                "failing_collectors": failing, "targets_down": down}

    def ready(self) -> tuple[bool, list[str]]:
        readiness = self.readiness()
        return readiness["ready"], readiness["pending_collectors"]

    def status(self) -> list[dict]:
        """Every collector's state (the status API and page: a read, :meth:`mark_read`)."""
        self.mark_read()
        with self._lock:
            result = [state.as_json() for state in self.states.values()]
        for item in result:  # scrubbed again: a secret read after the text was kept is masked too
            if item["last_error"]:
                item["last_error"] = self._redact(item["last_error"])
            item["source_errors"] = {k: self._redact(v) for k, v in item["source_errors"].items()}
            for target in item["targets"]:
                if target["last_error"]:
                    target["last_error"] = self._redact(target["last_error"])
                for source in target["sources"]:
                    if source["last_error"]:
                        source["last_error"] = self._redact(source["last_error"])
        return result

    def _self_figures(self) -> list[tuple]:
        """Per collector the figures of the exporter's own series (core/selfmetrics.py).  Called with the lock held."""
        return [(s.name, s.worked, s.duration, s.last_success, s.series, s.runs, s.failures, s.collector.settings,
                 [(name, t.up, t.last_success, dict(t.sources)) for name, t in s.targets.items()])
                for s in self.states.values()]

    def _self_snapshot(self) -> list[tuple]:
        with self._lock:
            return self._self_figures()

    def families_of(self, name: str) -> tuple[int, list[Metric]]:
        """A collector's last samples and their version (bumped whenever they change)."""
        version, batch = self.batch_of(name)
        return version, batch.families() if batch is not None else []

    def batch_of(self, name: str) -> tuple[int, MetricBatch | None]:
        """A collector's last batch (None: no samples) and its version."""
        state = self.states[name]
        with self._lock:
            return state.version, state.batch

    def touch(self) -> None:
        """Something outside the collectors changed the exporter's own series (a probe, an inventory reload): the
        next scrape renders them again."""
        with self._lock:
            self._generation += 1

    @property
    def generation(self) -> int:
        return self._generation

    def snapshot(self, read: bool = True) -> Snapshot:
        """Everything a scrape serves, taken at once: every collector's last batch and its version, the figures of
        the exporter's own series and the generation (bumped whenever a result changes).  ``read``: a scrape is
        reading it (:meth:`mark_read`); the collectors' threads take one to render their new part ahead."""
        if read:
            self.mark_read()
        with self._lock:
            parts = {name: (state.version, state.batch) for name, state in self.states.items()}
            figures = self._self_figures()
            generation = self._generation
        return Snapshot(generation, parts, lambda: self.self_metrics.batch(figures))

    def render(self, openmetrics: bool = False, compress: bool = False) -> bytes:
        """The exposition of the current snapshot, as a scrape gets it (it counts as a read, :meth:`mark_read`)."""
        return self.exposition.render(self.snapshot(), openmetrics, compress)
