#!/usr/bin/env python3
"""What static labels (``labels:`` of the exporter and of each target) cost a collection.

The labels are added once per collection, when a batch's part of the exposition is written (core.metrics
``Rows.series``), never per scrape: a scrape serves the exposition rendered once per snapshot.  This times, in this
process, one collection's batch of N series (a queue manager's queues: qmgr and queue labels, 4 targets): filled
and rendered to the text format without labels (the reference, measured in the same run), and filled and rendered
with two exporter labels and two labels per target (longer lines: more bytes); the difference is what the labels
cost.  It exits 1 when adding the labels costs more than --max-ratio of the reference.

    python bench/static_labels_bench.py [--series 20000] [--rounds 5] [--max-ratio 0.5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from exporter.core.exposition import render_batch  # noqa: E402
from exporter.core.metrics import MetricBatch, MetricSpec, StaticLabels  # noqa: E402

DEPTH = MetricSpec("bench_queue_depth", "gauge", "Messages on the queue.", ("qmgr", "queue"))
PUTS = MetricSpec("bench_queue_puts_total", "counter", "Messages put.", ("qmgr", "queue"))
QMGRS = ("QM1", "QM2", "QM3", "QM4")


def fill(series: int, static: StaticLabels | None = None) -> MetricBatch:
    batch = MetricBatch([DEPTH, PUTS], static_labels=static)
    for i in range(series // 2):
        qmgr, queue = QMGRS[i % len(QMGRS)], f"APP.QUEUE.{i:06d}"
        DEPTH.add(batch, i % 50, qmgr=qmgr, queue=queue)
        PUTS.add(batch, i * 3, qmgr=qmgr, queue=queue)
    return batch


def timed(fn, *args):  # noqa: ANN001, ANN002, ANN201
    started = time.perf_counter()
    result = fn(*args)
    return time.perf_counter() - started, result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--series", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--max-ratio", type=float, default=0.5)
    args = parser.parse_args()
    static = StaticLabels({"env": "prod", "site": "fra1"}, ("qmgr",),
                          {(q,): {"app": f"app-{q.lower()}", "owner": "team-mq"} for q in QMGRS})
    reference, labelled_runs, sizes = [], [], []
    for _ in range(args.rounds):
        fill_time, batch = timed(fill, args.series)
        render_time, body = timed(render_batch, batch, False)
        reference.append(fill_time + render_time)
        fill_time, batch = timed(fill, args.series, static)
        render_time, labelled = timed(render_batch, batch, False)
        labelled_runs.append(fill_time + render_time)
        sizes = [len(body), len(labelled)]
    ref, with_labels = (statistics.median(x) for x in (reference, labelled_runs))
    add = max(with_labels - ref, 0.0)
    ratio = add / ref
    print(f"{args.series} series, median of {args.rounds} rounds")
    print(f"  reference: fill + render without labels  {ref * 1000:8.1f} ms  {sizes[0]:>9} bytes")
    print(f"  fill + render with the labels            {with_labels * 1000:8.1f} ms  {sizes[1]:>9} bytes")
    print(f"  adding the labels (once per collection)  {add * 1000:8.1f} ms  ({add / args.series * 1e6:.2f} us "
          "per series)")
    print(f"  ratio adding/reference: {ratio:.2f}x (limit {args.max_ratio:.2f}x); per scrape: nothing (served "
          "from the rendered snapshot)")
    return 0 if ratio <= args.max_ratio else 1


if __name__ == "__main__":
    sys.exit(main())
