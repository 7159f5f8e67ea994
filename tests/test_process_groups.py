"""Process groups against real processes started under the middleware's names."""

from __future__ import annotations

import time

import pytest
from prometheus_client.parser import text_string_to_metric_families

from exporter.core.collector import Context
from exporter.core.metrics import MetricBatch
from exporter.systems.process.collector import ProcessCollector

from .conftest import SLEEP, wait_for_comm


def _samples(collector: ProcessCollector) -> dict[tuple, float]:
    batch = MetricBatch(collector.specs())
    collector.collect(batch)
    result = {}
    for family in batch.families():
        for sample in family.samples:
            labels = {k: v for k, v in sample.labels.items() if v}
            result[(sample.name, tuple(sorted(labels.items())))] = sample.value
    return result


def _collector(**settings) -> ProcessCollector:
    return ProcessCollector(ProcessCollector.Settings(**settings), Context())


def test_three_opcuiwww_show_as_three_java_gui_sessions(spawn):
    collector = _collector()
    key = ("middleware_process_group_processes", (("group", "hpom_java_gui"), ("process", "opcuiwww")))
    assert _samples(collector)[key] == 0
    procs = [spawn("opcuiwww") for _ in range(3)]
    for proc in procs:
        wait_for_comm(proc, "opcuiwww")
    samples = _samples(collector)
    assert samples[key] == 3
    rss = samples[("middleware_process_group_resident_memory_bytes", key[1])]
    assert rss > 3 * 100_000  # three real processes' resident memory, not zero
    assert samples[("middleware_process_group_threads", key[1])] == 3
    procs[0].kill()
    procs[0].wait()
    assert _samples(collector)[key] == 2


def test_children_are_not_counted_into_the_parent_group(spawn, tmp_path):
    # An opcuiwww that forks two children named differently: the group counts one process.
    parent = spawn("opcuiwww", python_code=(
        "import subprocess, time\n"
        f"kids = [subprocess.Popen([{SLEEP!r}, '120']) for _ in range(2)]\n"
        "time.sleep(120)\n"))
    wait_for_comm(parent, "opcuiwww")
    time.sleep(0.3)
    samples = _samples(_collector())
    assert samples[("middleware_process_group_processes", (("group", "hpom_java_gui"), ("process", "opcuiwww")))] == 1


def test_queue_manager_label_from_command_line(spawn):
    for arg in ("-m QM1", "-mQM.PAY"):
        proc = spawn("amqzxma0", *arg.split(), python_code="import time; time.sleep(120)")
        wait_for_comm(proc, "amqzxma0")
    samples = _samples(_collector())
    for qmgr in ("QM1", "QM.PAY"):
        key = ("middleware_process_group_processes",
               (("group", "ibmmq"), ("process", "amqzxma0"), ("qmgr", qmgr)))
        assert samples[key] == 1
    # the zero placeholder is not reported next to live queue managers
    assert ("middleware_process_group_processes", (("group", "ibmmq"), ("process", "amqzxma0"))) not in samples


def test_cpu_counter_stays_monotonic_when_a_busy_process_exits(spawn):
    collector = _collector(groups=[{"name": "hpom_server", "names": ["opcmsgm"]}])
    busy = spawn("opcmsgm", python_code="import time\nend = time.time() + 1.0\nwhile time.time() < end: pass\n"
                                        "time.sleep(120)")
    wait_for_comm(busy, "opcmsgm")
    idle = spawn("opcmsgm", python_code="import time; time.sleep(120)")
    wait_for_comm(idle, "opcmsgm")
    time.sleep(1.2)
    labels = (("group", "hpom_server"), ("mode", "user"), ("process", "opcmsgm"))
    before = _samples(collector)[("middleware_process_group_cpu_seconds_total", labels)]
    assert before >= 0.5, "the busy process's CPU time is missing"
    busy.kill()
    busy.wait()
    after = _samples(collector)[("middleware_process_group_cpu_seconds_total", labels)]
    assert after >= before, f"counter dropped from {before} to {after} when a process exited"


def test_comm_regex_and_cmdline_filter(spawn):
    collector = _collector(groups=[{"name": "broker", "comm": "^(?P<process>worker)$",
                                    "cmdline": r"--queue=(?P<queue>\w+)"}])
    spawn("worker", "--queue=RULESIN", python_code="import time; time.sleep(120)")
    other = spawn("worker", "--other", python_code="import time; time.sleep(120)")
    wait_for_comm(other, "worker")
    time.sleep(0.1)
    samples = _samples(collector)
    assert samples[("middleware_process_group_processes",
                    (("group", "broker"), ("process", "worker"), ("queue", "RULESIN")))] == 1
    assert sum(v for (name, labels), v in samples.items()
               if name == "middleware_process_group_processes") == 1


@pytest.mark.integration
def test_exporter_reports_three_opcuiwww_within_one_interval(spawn, start_exporter):
    config = "collectors:\n  process:\n    interval: 1s\n    timeout: 1s\n"
    exporter = start_exporter(config=config)
    procs = [spawn("opcuiwww") for _ in range(3)]
    for proc in procs:
        wait_for_comm(proc, "opcuiwww")
    started = time.monotonic()
    value = None
    while time.monotonic() - started < 2.5:  # one interval (1 s) plus scheduling slack
        _, _, body = exporter.get("/metrics")
        for family in text_string_to_metric_families(body.decode()):
            for sample in family.samples:
                if (sample.name == "middleware_process_group_processes"
                        and sample.labels.get("process") == "opcuiwww"):
                    value = sample.value
        if value == 3:
            break
        time.sleep(0.1)
    assert value == 3
