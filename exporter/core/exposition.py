"""The text exposition: the one writer of the text and OpenMetrics formats, and the rendered body of a snapshot.

The scrape path (docs/architecture.md, "The scrape path"): the HTTP app asks the scheduler for its snapshot
(``Scheduler.snapshot``: every collector's last batch, the exporter's own figures, a generation) and hands it to
:meth:`Exposition.render`, which returns the bytes; nothing here calls back into the scheduler.  The body is
rendered at most once per snapshot generation and format (text or OpenMetrics, plain or gzip) and then served
from memory.

Each collector's part is rendered once per result of that collector, so a queue manager with 10,000 queues is
not rendered again because the host collector produced new figures.  A collector's part is written from its
batch's compact series (``MetricBatch.rows``) by :func:`write_rows` (prometheus_client's output, byte for byte,
without its objects); a large part is kept deflated, and after it the whole body is gzipped in the collector's
thread, so that the scrape that follows only copies bytes (docs/footprint.md, "10,000 queues").  Every ``# HELP``
and ``# TYPE`` line the exporter writes is written by :func:`_header`.
"""

from __future__ import annotations

import os
import re
import threading
import zlib
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Mapping, NamedTuple

from .metrics import MetricBatch, Rows, library_family

if TYPE_CHECKING:
    from prometheus_client.core import Metric

# prometheus_client is imported only where its own rendering is needed (_render_library): the exposition of a
# default start never needs it, and importing it costs 1.3 MB resident (issue 30, docs/footprint.md).
OPENMETRICS_CONTENT_TYPE = "application/openmetrics-text; version=1.0.0; charset=utf-8"
TEXT_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_INF, _MINUS_INF = float("inf"), float("-inf")


def go_float(value: float) -> str:
    """A sample value as prometheus_client writes it (Go's way for large numbers): NaN, +Inf and -Inf; a positive
    number of seven or more integer digits as mantissa and two-digit exponent (1250000 is 1.25e+06); anything
    else as Python's repr.  Written here so that rendering does not import the library
    (tests/core/test_exposition_fast.py
    compares the two over many values)."""
    value = float(value)
    if value != value:
        return "NaN"
    if value == _INF:
        return "+Inf"
    if value == _MINUS_INF:
        return "-Inf"
    text = repr(value)
    if value > 0:
        integer, dot, fraction = text.partition(".")
        if dot and len(integer) > 6:
            digits = (integer + fraction).rstrip("0")
            mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
            return f"{mantissa}e+{len(integer) - 1:02d}"
    return text

_EOF = b"# EOF\n"
# A collector's part this large is followed, in its own thread, by the whole body in the last scrape's format.
FULL_PRERENDER_BYTES = 1 << 20


class _Families:
    def __init__(self, families: Iterable[Metric]) -> None:
        self.families = families

    def collect(self) -> Iterable[Metric]:
        return self.families


def _render_library(families: list[Metric], openmetrics: bool, eof: bool = True) -> bytes:
    """prometheus_client's own rendering (the reference, and the path for any family :func:`_family` does not write)."""
    from prometheus_client import CollectorRegistry
    from prometheus_client import generate_latest as generate_text
    from prometheus_client.openmetrics.exposition import generate_latest as generate_openmetrics

    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Families(families))
    body = (generate_openmetrics if openmetrics else generate_text)(registry)
    return body[: -len(_EOF)] if openmetrics and not eof and body.endswith(_EOF) else body


_PLAIN_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")  # needs no escaping in either format
_SUFFIX = {"gauge": "", "counter": "_total", "info": "_info"}


def _escape_value(value: str) -> str:
    return value.replace("\\", r"\\").replace("\n", r"\n").replace('"', r'\"')


class _Escaped(dict):
    """Label values escaped once: they repeat across families (a queue's name in ~13)."""

    def __missing__(self, value: str) -> str:
        text = self[value] = _escape_value(value)
        return text


def _header(family: str, sample: str, mtype: str, doc: str, openmetrics: bool) -> str:
    """A family's ``# HELP`` and ``# TYPE`` lines as prometheus_client writes them: OpenMetrics names the family
    (a counter without ``_total``), the text format the sample (an info metric there is a gauge).  The one place
    in the exporter that writes them."""
    doc = doc.replace("\\", r"\\").replace("\n", r"\n")
    if openmetrics:
        doc = doc.replace('"', r'\"')
        return f"# HELP {family} {doc}\n# TYPE {family} {mtype}\n"
    return f"# HELP {sample} {doc}\n# TYPE {sample} {'gauge' if mtype == 'info' else mtype}\n"


def _family(family: str, sample: str, mtype: str, doc: str, openmetrics: bool, escaped: _Escaped,
            series: Iterable[tuple[tuple[str, ...], tuple[str, ...], float]]) -> bytes:
    """One family's lines, byte for byte as prometheus_client writes them: the header, then each series (label
    names, label values, value: ``Rows.series``) with its labels sorted by name and its value as Go prints it.
    The order of a tuple of names is worked out once (the series of one metric share one or a few)."""
    out = [_header(family, sample, mtype, doc, openmetrics)]
    append, go = out.append, go_float
    layouts: dict[tuple[str, ...], list[tuple[str, int]]] = {}
    last: tuple[str, ...] | None = None
    pairs: list[tuple[str, int]] = []
    for names, values, value in series:
        if names is not last:
            layout = layouts.get(names)
            if layout is None:
                layout = layouts[names] = [(f'{names[i]}="', i) for i in sorted(range(len(names)),
                                                                                   key=names.__getitem__)]
            last, pairs = names, layout
        if pairs:
            text = '",'.join([head + escaped[values[i]] for head, i in pairs])
            append(f'{sample}{{{text}"}} {go(value)}\n')
        else:
            append(f"{sample} {go(value)}\n")
    return "".join(out).encode()


def _writable(metric: Metric) -> bool:
    """Whether :func:`_family` writes a library family as the library does: the kinds collectors make (gauge,
    counter, info; plain names; no timestamp, exemplar, unit or _created sample).  Any other family is left to
    the library."""
    suffix = _SUFFIX.get(metric.type)
    if suffix is None or metric.unit or not _PLAIN_NAME.fullmatch(metric.name):
        return False
    sample_name = metric.name + suffix
    for sample in metric.samples:
        if sample[0] != sample_name or sample[3] is not None or sample[4] is not None or \
                (len(sample) > 5 and sample[5] is not None):
            return False
        for label in sample[1]:
            if not _PLAIN_NAME.fullmatch(label):
                return False
    return True


def _yield_gil() -> None:
    """Give the GIL away for a moment (the kernel's yield releases it) so that a thread waiting for it (the HTTP
    server's) runs now rather than after the interpreter's switch interval."""
    os.sched_yield()


def write_rows(families: Iterable[Rows], openmetrics: bool) -> Iterator[bytes]:
    """A batch's series (``MetricBatch.rows``) in the text or OpenMetrics format without the closing line, byte
    for byte as prometheus_client writes the same samples (tests/core/test_exposition_fast.py).  Hand-written
    because the library's OpenMetrics writer escapes every metric name character by character: 2.5 s of the GIL
    for 137,000 series (10,000 MQ queues), during which scrapes waited (docs/footprint.md, "10,000 queues").  A
    family whose name needs escaping (a ``:``) goes to the library.  One chunk per family, so that the whole body
    need not be held twice (:class:`Exposition` deflates a large part as it comes)."""
    escaped = _Escaped()
    for rows in families:
        spec = rows.spec
        if not _PLAIN_NAME.fullmatch(spec.name):
            yield _render_library([library_family(rows)], openmetrics, eof=False)
            continue
        yield _family(spec.family_name, spec.name, spec.type, spec.help, openmetrics, escaped, rows.series())
        if len(rows.keys) > 1000:
            _yield_gil()  # let the server thread answer a scrape between two large families


def render_batch(batch: MetricBatch, openmetrics: bool) -> bytes:
    """A batch in the text or OpenMetrics format, without OpenMetrics' closing line (:func:`write_rows`)."""
    return b"".join(write_rows(batch.rows(), openmetrics))


def render_families(families: Iterable[Metric], openmetrics: bool, eof: bool = True) -> bytes:
    """prometheus_client's families (``collect-once --no-self-metrics``) in the text or OpenMetrics format
    (``eof=False`` leaves out OpenMetrics' closing line), written by the same :func:`_family` as a batch's rows;
    a family it does not write (:func:`_writable`) is the library's."""
    escaped = _Escaped()
    chunks: list[bytes] = []
    for metric in families:
        if not _writable(metric):
            chunks.append(_render_library([metric], openmetrics, eof=False))
            continue
        suffix = _SUFFIX[metric.type]
        chunks.append(_family(metric.name, metric.name + suffix, metric.type, metric.documentation, openmetrics,
                              escaped, ((tuple(s[1]), tuple(s[1].values()), s[2]) for s in metric.samples)))
        if len(metric.samples) > 1000:
            _yield_gil()
    if openmetrics and eof:
        chunks.append(_EOF)
    return b"".join(chunks)


class Snapshot(NamedTuple):
    """What the exposition renders (``Scheduler.snapshot``, taken at once under the scheduler's lock): its
    generation (bumped whenever a collector's result changes), each collector's last batch (None: no samples)
    with its version, and the exporter's own series, made only when the body is rendered."""

    generation: int
    parts: Mapping[str, tuple[int, MetricBatch | None]]
    own: Callable[[], MetricBatch]


class Exposition:
    """Render cache over the scheduler's snapshots."""

    def __init__(self) -> None:
        self._cache: dict[tuple[bool, bool], tuple[int, bytes]] = {}
        # (collector, openmetrics) -> (version, body, compressed): a large part is kept deflated (level 1: 11 MB
        # of 10,000 MQ queues in 0.7 MB) and inflated only while the whole body is made
        self._part_cache: dict[tuple[str, bool], tuple[int, bytes, bool]] = {}
        self._render_lock = threading.Lock()
        self.last_format: tuple[bool, bool] | None = None  # what the last scrape asked for
        self.renders = 0  # whole bodies joined, and compressed (tests count them: once per generation and format)
        self.compressions = 0
        self.part_renders = 0

    def _render_part(self, snapshot: Snapshot, name: str, openmetrics: bool) -> tuple[bytes, bool]:
        """A collector's part as kept: (body, whether it is deflated)."""
        key = (name, openmetrics)
        version, batch = snapshot.parts[name]
        cached = self._part_cache.get(key)
        if cached is not None and cached[0] >= version:  # later: a collector's thread rendered its newer result
            return cached[1], cached[2]
        self._part_cache.pop(key, None)  # the old one goes before the new one is made
        self.part_renders += 1
        chunks: list[bytes] = []
        size = 0
        packer = None
        for chunk in write_rows(batch.rows(), openmetrics) if batch is not None else ():
            if packer is None:
                chunks.append(chunk)
                size += len(chunk)
                if size >= FULL_PRERENDER_BYTES:  # large: deflated from here on, chunk by chunk
                    packer = zlib.compressobj(1)
                    chunks = [packer.compress(b"".join(chunks))]
            else:
                chunks.append(packer.compress(chunk))
        if packer is not None:
            chunks.append(packer.flush())
        body = b"".join(chunks)
        del chunks
        self._part_cache[key] = (version, body, packer is not None)
        return body, packer is not None

    def prerender(self, snapshot: Snapshot, name: str | None = None) -> None:
        """Render a collector's new samples (``name``; None: the whole ``snapshot``) in the format the scrapers use, in
        the collector's thread, so that a scrape right after a collection does not pay for rendering thousands of
        series.  Only the collector's part: the exporter's own metrics, the joining and gzip are done once by the
        next scrape, not once per collector that finished (issue 30: ten collectors, ten full renders), except after
        a part of :data:`FULL_PRERENDER_BYTES` or more."""
        if self.last_format is not None:
            try:
                if name is None:
                    self.render(snapshot, *self.last_format, remember=False)
                    return
                with self._render_lock:
                    _, large = self._render_part(snapshot, name, self.last_format[0])
                if large:
                    # a large part (10,000 MQ queues: 11 MB): joining and compressing the whole body takes tens of
                    # ms, here rather than in the scrape that comes next, which then only copies bytes
                    self.render(snapshot, *self.last_format, remember=False)
            except Exception:  # noqa: BLE001 - the scrape will render (and report) it
                pass

    def _gzip(self, parts: list[tuple[bytes, bool]]) -> bytes:
        """The gzip file of the parts joined (each inflated only while it is compressed).  Level 1: a fraction of
        the CPU of level 6 for a few percent more bytes (the default host body of 31 KB: 0.07 ms instead of 0.21 ms,
        6.1 KB instead of 5.3 KB, once per collection; issue 30)."""
        packer = zlib.compressobj(1, zlib.DEFLATED, 16 + zlib.MAX_WBITS)  # 16+: a gzip header
        chunks = []
        for part, deflated in parts:
            if not deflated:
                chunks.append(packer.compress(part))
                continue
            # inflated 1 MB at a time: zlib.decompress of the whole part held 11 MB plus its growing buffer
            unpacker = zlib.decompressobj()
            while part:
                chunks.append(packer.compress(unpacker.decompress(part, 1 << 20)))
                part = unpacker.unconsumed_tail
            chunks.append(packer.compress(unpacker.flush()))
        chunks.append(packer.flush())
        self.compressions += 1
        return b"".join(chunks)

    def render(self, snapshot: Snapshot, openmetrics: bool = False, compress: bool = False,
               remember: bool = True) -> bytes:
        """The exposition of ``snapshot``, rendered once per generation and format (a body rendered for a later
        generation, by a collector's thread meanwhile, is served as it is: it is newer).

        A scrape never waits for a render in progress when an earlier body of the same format exists: it gets
        that one (at most one collection older), while the collector thread finishes the new one."""
        key = (openmetrics, compress)
        if remember:
            self.last_format = key
        generation = snapshot.generation
        cached = self._cache.get(key)
        if cached is not None and cached[0] >= generation:
            return cached[1]
        if cached is not None and not self._render_lock.acquire(blocking=False):
            return cached[1]
        if cached is None:
            self._render_lock.acquire()
        try:
            cached = self._cache.get(key)
            if cached is not None and cached[0] >= generation:
                return cached[1]
            plain = self._cache.get((openmetrics, False))
            if plain is not None and plain[0] == generation:
                body = plain[1]
                if compress:
                    body = self._gzip([(body, False)])
            else:
                parts = [(render_batch(snapshot.own(), openmetrics), False)]
                parts += [self._render_part(snapshot, name, openmetrics) for name in snapshot.parts]
                if openmetrics:
                    parts.append((_EOF, False))
                self.renders += 1
                # gzip straight from the parts: the whole plain body (11 MB for 10,000 MQ queues) is never made
                body = self._gzip(parts) if compress else \
                    b"".join(zlib.decompress(part) if deflated else part for part, deflated in parts)
                del parts
            # only what was asked for is kept (Prometheus asks for gzip: the 11 MB plain body of 10,000 MQ queues
            # is not kept beside it), and bodies of other formats from older generations go
            self._cache = {k: v for k, v in self._cache.items() if v[0] >= generation}
            self._cache[key] = (generation, body)
            return body
        finally:
            self._render_lock.release()
