"""The rendered exposition: the exporter's own metrics plus every collector's last samples, rendered at most once
per snapshot generation and format (text or OpenMetrics, plain or gzip) and then served from memory.

Each collector's part is rendered once per result of that collector, so a queue manager with 10,000 queues is
not rendered again because the host collector produced new figures.  A collector's part is written from its
batch's compact series by :func:`render_rows` (prometheus_client's output, byte for byte, without its objects); a
large part is kept deflated, and after it the whole body is gzipped in the collector's thread, so that the scrape
that follows only copies bytes (docs/footprint.md, "10,000 queues").
"""

from __future__ import annotations

import os
import re
import threading
import zlib
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Sequence

from .metrics import MetricSpec, StaticLabels

if TYPE_CHECKING:
    from prometheus_client.core import Metric

    from .scheduler import Scheduler

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
    """prometheus_client's own rendering (the reference, and the path for anything :func:`_fast_lines` leaves)."""
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


def _fast_lines(metric: Metric, openmetrics: bool, out: list[str], escaped: dict[str, str]) -> bool:
    """Append one family's lines to ``out`` exactly as prometheus_client writes them, for the families collectors
    make (gauge, counter, info; plain names; no timestamp, exemplar, unit or _created sample); False (nothing
    appended) for any other, which the library renders.  Hand-written because the library's OpenMetrics writer
    escapes every metric name character by character: 2.5 s of the GIL for 137,000 series (10,000 MQ queues),
    during which scrapes waited (docs/footprint.md, "10,000 queues")."""
    mtype = metric.type
    suffix = _SUFFIX.get(mtype)
    name = metric.name
    if suffix is None or metric.unit or not _PLAIN_NAME.fullmatch(name):
        return False
    sample_name = name + suffix
    samples = metric.samples
    for sample in samples:
        if sample[0] != sample_name or sample[3] is not None or sample[4] is not None or \
                (len(sample) > 5 and sample[5] is not None):
            return False
        for label in sample[1]:
            if not _PLAIN_NAME.fullmatch(label):
                return False
    doc = metric.documentation.replace("\\", r"\\").replace("\n", r"\n")
    if openmetrics:
        doc = doc.replace('"', r'\"')
        out.append(f"# HELP {name} {doc}\n# TYPE {name} {mtype}\n")
    else:
        shown = name + suffix
        out.append(f"# HELP {shown} {doc}\n# TYPE {shown} {'gauge' if mtype == 'info' else mtype}\n")
    append, get, go = out.append, escaped.get, go_float
    for sample in samples:
        labels = sample[1]
        if labels:
            parts = []
            for key in sorted(labels):
                value = labels[key]
                text = get(value)
                if text is None:
                    text = escaped[value] = _escape_value(value)
                parts.append(f'{key}="{text}"')
            append(f"{sample_name}{{{','.join(parts)}}} {go(sample[2])}\n")
        else:
            append(f"{sample_name} {go(sample[2])}\n")
    return True


def _yield_gil() -> None:
    """Give the GIL away for a moment (the kernel's yield releases it) so that a thread waiting for it (the HTTP
    server's) runs now rather than after the interpreter's switch interval."""
    os.sched_yield()


def render_families(families: Iterable[Metric], openmetrics: bool, eof: bool = True) -> bytes:
    """Families in the text or OpenMetrics format (``eof=False`` leaves out OpenMetrics' closing line), byte for
    byte as prometheus_client renders them (tests/core/test_exposition_fast.py compares the two)."""
    out: list[str] = []
    escaped: dict[str, str] = {}  # label values repeat across families (a queue's name in ~13): escaped once
    chunks: list[bytes] = []
    for metric in families:
        if not _fast_lines(metric, openmetrics, out, escaped):
            chunks.append(_render_library([metric], openmetrics, eof=False))
        elif out:
            # one family's lines at a time: the lines of 137,000 series held at once cost ~20 MB more peak memory
            chunks.append("".join(out).encode())
            out.clear()
            if len(metric.samples) > 1000:
                _yield_gil()  # let the server thread answer a scrape between two large families
    if openmetrics and eof:
        chunks.append(_EOF)
    return b"".join(chunks)


def render_rows(families: Iterable[tuple[MetricSpec, tuple[str, ...], list, Sequence, Callable[[], list[Metric]]]],
                openmetrics: bool, static: StaticLabels | None = None) -> Iterator[bytes]:
    """A batch's series (core/metrics.py ``_Family``: label values, and values: numbers or an info metric's
    labels) in the text or OpenMetrics format without the closing line, byte for byte as prometheus_client writes
    the same samples: HELP and TYPE as :func:`_fast_lines`, labels sorted by name, values as Go prints them.
    ``static``: the configured labels, added to each series as ``StaticLabels.apply`` does.  A family whose name
    needs escaping (a ``:``) goes to the library (the last item builds its object).  One chunk per family, so
    that the whole body need not be held twice (core/exposition.py deflates a large part as it comes)."""
    escaped: dict[str, str] = {}
    get, go = escaped.get, go_float

    def esc(value: str) -> str:
        text = get(value)
        if text is None:
            text = escaped[value] = _escape_value(value)
        return text

    for spec, names, keys, values, build in families:
        name = spec.family_name
        if not _PLAIN_NAME.fullmatch(spec.name):
            yield _render_library(build(), openmetrics, eof=False)
            continue
        doc = spec.help.replace("\\", r"\\").replace("\n", r"\n")
        if openmetrics:
            doc = doc.replace('"', r'\"')
            out = [f"# HELP {name} {doc}\n# TYPE {name} {spec.type}\n"]
        else:
            out = [f"# HELP {spec.name} {doc}\n# TYPE {spec.name} {'gauge' if spec.type == 'info' else spec.type}\n"]
        append, sample = out.append, spec.name
        if spec.type == "info" or static is not None:
            info = spec.type == "info"
            for key, value in zip(keys, values, strict=True):
                labels = dict(zip(names, key, strict=True))
                if info:
                    labels.update(value)
                if static is not None:
                    labels = {**static.labels_for(labels), **labels}
                text = ",".join([f'{key}="{esc(labels[key])}"' for key in sorted(labels)])
                number = "1.0" if info else go(value)
                append(f"{sample}{{{text}}} {number}\n" if text else f"{sample} {number}\n")
        elif names:
            order = sorted(range(len(names)), key=names.__getitem__)
            heads = [f'{names[i]}="' for i in order]
            pairs = list(zip(heads, order, strict=True))
            for key, value in zip(keys, values, strict=True):
                text = '",'.join([head + esc(key[i]) for head, i in pairs])
                append(f'{sample}{{{text}"}} {go(value)}\n')
        else:
            for value in values:
                append(f"{sample} {go(value)}\n")
        chunk = "".join(out).encode()
        del out
        yield chunk
        if len(keys) > 1000:
            _yield_gil()


class Exposition:
    """Render cache over a scheduler's snapshot."""

    def __init__(self, scheduler: "Scheduler") -> None:
        self._scheduler = scheduler
        self._cache: dict[tuple[bool, bool], tuple[int, bytes]] = {}
        # (collector, openmetrics) -> (version, body, compressed): a large part is kept deflated (level 1: 11 MB
        # of 10,000 MQ queues in 0.7 MB) and inflated only while the whole body is made
        self._part_cache: dict[tuple[str, bool], tuple[int, bytes, bool]] = {}
        self._render_lock = threading.Lock()
        self.last_format: tuple[bool, bool] | None = None  # what the last scrape asked for
        self.renders = 0  # whole bodies joined, and compressed (tests count them: once per generation and format)
        self.compressions = 0
        self.part_renders = 0

    def _render_part(self, name: str, openmetrics: bool) -> tuple[bytes, bool]:
        """A collector's part as kept: (body, whether it is deflated)."""
        key = (name, openmetrics)
        version, batch = self._scheduler.batch_of(name)
        cached = self._part_cache.get(key)
        if cached is not None and cached[0] == version:
            return cached[1], cached[2]
        self._part_cache.pop(key, None)  # the old one goes before the new one is made
        self.part_renders += 1
        chunks: list[bytes] = []
        size = 0
        packer = None
        for chunk in batch.render_chunks(openmetrics) if batch is not None else ():
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

    def prerender(self, name: str | None = None) -> None:
        """Render a collector's new samples (``name``; None: the whole snapshot) in the format the scrapers use, in
        the collector's thread, so that a scrape right after a collection does not pay for rendering thousands of
        series.  Only the collector's part: the exporter's own metrics, the joining and gzip are done once by the
        next scrape, not once per collector that finished (issue 30: ten collectors, ten full renders), except after
        a part of :data:`FULL_PRERENDER_BYTES` or more."""
        if self.last_format is not None:
            try:
                if name is None:
                    self.render(*self.last_format, remember=False)
                    return
                with self._render_lock:
                    _, large = self._render_part(name, self.last_format[0])
                if large:
                    # a large part (10,000 MQ queues: 11 MB): joining and compressing the whole body takes tens of
                    # ms, here rather than in the scrape that comes next, which then only copies bytes
                    self.render(*self.last_format, remember=False)
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

    def render(self, openmetrics: bool = False, compress: bool = False, remember: bool = True) -> bytes:
        """The exposition for the current snapshot, rendered once per generation and format.

        A scrape never waits for a render in progress when an earlier body of the same format exists: it gets
        that one (at most one collection older), while the collector thread finishes the new one."""
        key = (openmetrics, compress)
        if remember:
            self.last_format = key
        cached = self._cache.get(key)
        generation = self._scheduler.generation
        if cached is not None and cached[0] == generation:
            return cached[1]
        if cached is not None and not self._render_lock.acquire(blocking=False):
            return cached[1]
        if cached is None:
            self._render_lock.acquire()
        try:
            generation = self._scheduler.generation
            cached = self._cache.get(key)
            if cached is not None and cached[0] == generation:
                return cached[1]
            plain = self._cache.get((openmetrics, False))
            if plain is not None and plain[0] == generation:
                body = plain[1]
                if compress:
                    body = self._gzip([(body, False)])
            else:
                parts = [(self._scheduler.self_metrics.batch().render(openmetrics), False)]
                parts += [self._render_part(name, openmetrics) for name in self._scheduler.states]
                if openmetrics:
                    parts.append((_EOF, False))
                self.renders += 1
                # gzip straight from the parts: the whole plain body (11 MB for 10,000 MQ queues) is never made
                body = self._gzip(parts) if compress else \
                    b"".join(zlib.decompress(part) if deflated else part for part, deflated in parts)
                del parts
            # only what was asked for is kept (Prometheus asks for gzip: the 11 MB plain body of 10,000 MQ queues
            # is not kept beside it), and bodies of other formats from older generations go
            self._cache = {k: v for k, v in self._cache.items() if v[0] == generation}
            self._cache[key] = (generation, body)
            return body
        finally:
            self._render_lock.release()
