"""The exposition's own writer (core/exposition.py ``render_families``) against prometheus_client's: byte for byte
the same text and OpenMetrics for every kind of family collectors make, awkward label values and numbers included,
and the library's output for what the writer leaves to it (units, timestamps, _created, other types).  Invented
samples."""

from __future__ import annotations

import math

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    InfoMetricFamily,
    SummaryMetricFamily,
)

from exporter.core.exposition import _render_library, render_batch, render_families
from exporter.core.metrics import MetricBatch, MetricSpec, StaticLabels

VALUES = ["plain", "", 'quo"te', "back\\slash", "new\nline", "ünïcödé", "a,b=c}", "{x}", "tab\tend"]
NUMBERS = [0, 1, -1, 0.5, 1e-9, 123456789.0, 1234567.0, 12345678901234.0, 1.5e300, -2.5e-300, math.inf, -math.inf,
           math.nan, 2**53, 7.0, 100000, 1000000]


def _families():
    gauge = GaugeMetricFamily("t_gauge", 'A "gauge" with \\ and\nnewline help.', labels=["zeta", "alpha", "q"])
    for i, value in enumerate(VALUES):
        gauge.add_metric([value, VALUES[-1 - i], str(i)], NUMBERS[i])
    counter = CounterMetricFamily("t_ops", "Operations.", labels=["queue"])
    for i, number in enumerate(NUMBERS):
        if not (isinstance(number, float) and (math.isnan(number) or number < 0)):
            counter.add_metric([f"Q{i}"], number)
    info = InfoMetricFamily("t_build", "Build.", labels=["qmgr"])
    info.add_metric(["QM1"], {"version": "9.3", "dlq": 'D"L\\Q'})
    bare = GaugeMetricFamily("t_bare", "No labels.", value=42)
    empty = GaugeMetricFamily("t_empty", "No samples.", labels=["a"])
    created = CounterMetricFamily("t_created", "With _created.", labels=["a"])
    created.add_metric(["x"], 3, created=1700000000.0)
    stamped = GaugeMetricFamily("t_stamped", "With a timestamp.", labels=["a"])
    stamped.add_metric(["x"], 1, timestamp=1700000000.5)
    unit = GaugeMetricFamily("t_size_bytes", "With a unit.", unit="bytes")
    unit.add_metric([], 5)
    colon = GaugeMetricFamily("t:colon", "A recording-rule style name.", value=1)
    hist = HistogramMetricFamily("t_hist", "A histogram.", buckets=[("1.0", 1), ("+Inf", 2)], sum_value=3)
    summary = SummaryMetricFamily("t_sum", "A summary.", count_value=2, sum_value=1.5)
    return [gauge, counter, info, bare, empty, created, stamped, unit, colon, hist, summary, gauge]


def test_same_bytes_as_prometheus_client():
    for openmetrics in (False, True):
        for eof in (False, True):
            assert render_families(_families(), openmetrics, eof) == _render_library(_families(), openmetrics, eof)


def test_batch_with_static_labels_same_bytes():
    specs = [MetricSpec("m_depth", "gauge", "Depth.", ("qmgr", "queue")),
             MetricSpec("m_puts_total", "counter", "Puts.", ("qmgr", "queue")),
             MetricSpec("m_qmgr_info", "info", "Info.", ("qmgr",))]
    batch = MetricBatch(specs, static_labels=StaticLabels({"env": 'p"rod'}, ("qmgr",), {("QM1",): {"app": "x\ny"}}))
    for i, value in enumerate(VALUES):
        specs[0].add(batch, i * 1.5, qmgr="QM1" if i % 2 else "QM2", queue=value)
        specs[1].add(batch, i, qmgr="QM1", queue=value)
    specs[2].add_info(batch, {"version": "9.4.0.0"}, qmgr="QM1")
    for openmetrics in (False, True):
        assert render_families(batch.families(), openmetrics) == _render_library(batch.families(), openmetrics)


def _batch(static: StaticLabels | None = None, const: dict[str, str] | None = None) -> MetricBatch:
    specs = [MetricSpec("m_depth", "gauge", 'Depth "now".', ("qmgr", "queue")),
             MetricSpec("m_puts_total", "counter", "Puts\\n.", ("queue", "qmgr")),
             MetricSpec("m_qmgr_info", "info", "Info.", ("qmgr",)),
             MetricSpec("m_up", "gauge", "No labels.", ()),
             MetricSpec("m_empty", "gauge", "Declared, no samples.", ("a",)),
             MetricSpec("m:rule", "gauge", "A name with a colon.", ("qmgr",))]
    batch = MetricBatch(specs, const_labels=const, static_labels=static)
    for i, value in enumerate(VALUES):
        specs[0].add(batch, NUMBERS[i], qmgr="QM1" if i % 2 else "QM2", queue=value)
        specs[1].add(batch, i, qmgr="QM1", queue=value)
    specs[2].add_info(batch, {"version": "9.4", "dlq": 'D"L'}, qmgr="QM1")
    specs[2].add_info(batch, {"zz": "last", "aa": ""}, qmgr="QM2")
    specs[3].add(batch, 1)
    specs[4].declare_empty(batch)
    specs[5].add(batch, 2, qmgr="QM1")
    return batch


def test_batch_rows_render_as_the_library_renders_its_families():
    """render_batch writes the rows directly; prometheus_client's objects (families()) are the reference."""
    cases = [_batch(), _batch(const={"target": "t1"}),
             _batch(StaticLabels({"env": 'p"rod', "zone": "a"}, ("qmgr",), {("QM1",): {"app": "x\ny", "zone": ""}})),
             _batch(StaticLabels({"env": "prod"}))]
    for batch in cases:
        batch.check()
        for openmetrics in (False, True):
            assert render_batch(batch, openmetrics) == _render_library(batch.families(), openmetrics, eof=False)


def test_duplicates_refused_by_the_check_after_the_collection():
    """The duplicate check runs once the collection is over (MetricBatch.check, called by the scheduler), also
    for series added after an earlier check."""
    import pytest

    from exporter.core.metrics import InvalidSample
    batch = _batch()
    batch.check()
    MetricSpec("m_depth", "gauge", 'Depth "now".', ("qmgr", "queue")).add(batch, 1, qmgr="QM2", queue="plain")
    with pytest.raises(InvalidSample, match='m_depth: duplicate series .*plain'):
        batch.check()
    batch = _batch()
    batch.add_info("m_qmgr_info", {"version": "9.4", "dlq": 'D"L'}, qmgr="QM1")
    with pytest.raises(InvalidSample, match="m_qmgr_info: duplicate series"):
        batch.check()
    batch = _batch()
    batch.add_info("m_qmgr_info", {"version": "9.5", "dlq": 'D"L'}, qmgr="QM1")  # other info labels: a new series
    batch.check()


def test_whole_body_made_once_per_collection_in_the_collectors_thread(monkeypatch):
    """Counted, not timed: after a collection whose part is large, the collector's thread has already joined and
    gzipped the body in the format the last scrape asked for, so the next scrapes render and compress nothing;
    only that format's gzip body is kept (not the plain one beside it), and the large part is kept deflated."""
    import gzip

    from exporter.core import exposition
    from exporter.core.collector import Collector, Context
    from exporter.core.scheduler import Scheduler
    from exporter.core.settings import CollectorSettings

    monkeypatch.setattr(exposition, "FULL_PRERENDER_BYTES", 2000)  # "large" at a few hundred series
    depth = MetricSpec("q_depth", "gauge", "Depth.", ("queue",))

    class Queues(Collector):
        name = "queues"  # type: ignore[assignment]
        description = "test collector"

        def __init__(self) -> None:
            super().__init__(CollectorSettings(interval=60, timeout=30), Context())
            self.run = 0

        def specs(self) -> list[MetricSpec]:
            return [depth]

        def collect(self, batch) -> None:
            self.run += 1
            for i in range(300):
                depth.add(batch, i + self.run, queue=f"Q{i:04d}")

    scheduler = Scheduler([Queues()])
    expo = scheduler.exposition
    scheduler.run_collector("queues")
    first = scheduler.render(openmetrics=True, compress=True)  # the first scrape renders: no format known yet
    assert (expo.renders, expo.compressions) == (1, 1)
    for run in (2, 3):
        scheduler.run_collector("queues")
        assert (expo.renders, expo.compressions, expo.part_renders) == (run, run, run)  # done in the run
        for _ in range(3):
            body = scheduler.render(openmetrics=True, compress=True)
        assert (expo.renders, expo.compressions) == (run, run)  # the scrapes copied bytes
        assert list(expo._cache) == [(True, True)]
        assert all(entry[2] for entry in expo._part_cache.values())  # kept deflated
        text = gzip.decompress(body).decode()
        assert f'q_depth{{queue="Q0299"}} {299 + run}.0' in text and text.endswith("# EOF\n")
    assert gzip.decompress(first) != gzip.decompress(body)
    plain = scheduler.render(openmetrics=False, compress=False)  # another format: rendered for it, once
    assert plain.startswith(b"# HELP") and expo.renders == 4
    assert scheduler.render(openmetrics=False, compress=False) == plain and expo.renders == 4


def test_values_are_written_as_the_library_writes_them():
    """``go_float`` (so that rendering does not import prometheus_client) against the library's floatToGoString:
    the awkward numbers above, every power of ten, and 300,000 pseudo-random doubles (any bit pattern, uniform
    magnitudes, integers) from a fixed seed."""
    import random
    import struct

    from prometheus_client.utils import floatToGoString

    from exporter.core.exposition import go_float

    values = [*NUMBERS, -0.0, 5e-324, 999999.9, 9999999.999, 1e15, 1.5e15]
    values += [10.0 ** e for e in range(-30, 31)] + [-(10.0 ** e) for e in range(-30, 31)]
    rng = random.Random(30)
    for _ in range(100_000):
        values.append(struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0])
        values.append(rng.uniform(0, 10 ** rng.randint(0, 20)))
        values.append(float(rng.randint(0, 10 ** rng.randint(0, 18))))
    different = [(v, go_float(v), floatToGoString(v)) for v in values if go_float(v) != floatToGoString(v)]
    assert different == []


def test_process_figures_are_the_library_process_collectors(tmp_path):
    """The exporter reads its own process_* figures (prometheus_client's ProcessCollector made every start import
    the library: 1.3 MB resident); on the same recorded /proc, the same families, help texts and values, and the
    same bytes rendered.  The stat, limits and fd entries are INVENTED, in the kernel's layout."""
    from prometheus_client import ProcessCollector

    from exporter.core.selfmetrics import PROCESS_SPECS, ProcessFigures

    proc = tmp_path / "proc"
    (proc / "4242" / "fd").mkdir(parents=True)
    for fd in range(7):
        (proc / "4242" / "fd" / str(fd)).write_text("")
    fields = ["4242", "(middleware-expo)", "S"] + [str(n) for n in range(1, 50)]
    fields[13], fields[14] = "1234", "567"  # utime, stime (clock ticks)
    fields[21], fields[22], fields[23] = "98765", "356941824", "11872"  # starttime, vsize, rss (pages)
    (proc / "4242" / "stat").write_text(" ".join(fields) + "\n")
    (proc / "4242" / "limits").write_text(
        "Limit                     Soft Limit           Hard Limit           Units     \n"
        "Max open files            20000                1048576              files     \n")
    (proc / "stat").write_text("cpu  1 2 3 4 5 6 7 8 9 10\nbtime 1764100000\n")
    batch = MetricBatch(PROCESS_SPECS)
    ProcessFigures(str(proc), "4242").add(batch)
    library = list(ProcessCollector(proc=str(proc), pid=lambda: "4242", registry=None).collect())
    ours = batch.families()
    assert [(f.name, f.type, f.documentation, [tuple(s)[:3] for s in f.samples]) for f in ours] == \
        [(f.name, f.type, f.documentation, [tuple(s)[:3] for s in f.samples]) for f in library]
    for openmetrics in (False, True):
        assert render_batch(batch, openmetrics) == _render_library(library, openmetrics, eof=False)
