"""Process groups against real processes started under the middleware's names."""

from __future__ import annotations

import os
import time

import pytest
from prometheus_client.parser import text_string_to_metric_families

from exporter.core.collector import Context
from exporter.systems.process.collector import ProcessCollector

from ...support import SLEEP, burn_cpu_code, plain_samples, proc_cpu_ticks, wait_for_comm, wait_for_file


def _collector(**settings) -> ProcessCollector:
    return ProcessCollector(ProcessCollector.Settings(**settings), Context())


def test_three_opcuiwww_show_as_three_java_gui_sessions(spawn):
    collector = _collector()
    key = ("middleware_process_group_processes", (("group", "hpom_java_gui"), ("process", "opcuiwww")))
    assert plain_samples(collector)[key] == 0
    procs = [spawn("opcuiwww") for _ in range(3)]
    for proc in procs:
        wait_for_comm(proc, "opcuiwww")
    samples = plain_samples(collector)
    assert samples[key] == 3
    rss = samples[("middleware_process_group_resident_memory_bytes", key[1])]
    assert rss > 3 * 100_000  # three real processes' resident memory, not zero
    assert samples[("middleware_process_group_threads", key[1])] == 3
    procs[0].kill()
    procs[0].wait()
    assert plain_samples(collector)[key] == 2


def test_children_are_not_counted_into_the_parent_group(spawn, tmp_path):
    # An opcuiwww that forks two children named differently: the group counts one process.
    parent = spawn("opcuiwww", python_code=(
        "import subprocess, time\n"
        f"kids = [subprocess.Popen([{SLEEP!r}, '120']) for _ in range(2)]\n"
        "time.sleep(120)\n"))
    wait_for_comm(parent, "opcuiwww")
    time.sleep(0.3)
    samples = plain_samples(_collector())
    assert samples[("middleware_process_group_processes", (("group", "hpom_java_gui"), ("process", "opcuiwww")))] == 1


def test_queue_manager_label_from_command_line(spawn):
    for arg in ("-m QM1", "-mQM.PAY"):
        proc = spawn("amqzxma0", *arg.split(), python_code="import time; time.sleep(120)")
        wait_for_comm(proc, "amqzxma0")
    samples = plain_samples(_collector())
    for qmgr in ("QM1", "QM.PAY"):
        key = ("middleware_process_group_processes",
               (("group", "ibmmq"), ("process", "amqzxma0"), ("qmgr", qmgr)))
        assert samples[key] == 1
    # the zero placeholder is not reported next to live queue managers
    assert ("middleware_process_group_processes", (("group", "ibmmq"), ("process", "amqzxma0"))) not in samples


def test_cpu_counter_stays_monotonic_when_a_busy_process_exits(spawn, tmp_path):
    collector = _collector(groups=[{"name": "hpom_server", "names": ["opcmsgm"]}])
    done = tmp_path / "burnt"
    busy = spawn("opcmsgm", str(done), python_code=burn_cpu_code(1.0))
    idle = spawn("opcmsgm", python_code="import time; time.sleep(120)")
    wait_for_comm(busy, "opcmsgm")
    wait_for_comm(idle, "opcmsgm")
    wait_for_file(done, busy)
    labels = (("group", "hpom_server"), ("process", "opcmsgm"))
    key = {mode: ("middleware_process_group_cpu_seconds_total", tuple(sorted(labels + (("mode", mode),))))
           for mode in ("user", "system")}
    # The collector's reading is the kernel's: bracketed by /proc/<pid>/stat read just before and just after.
    low = proc_cpu_ticks(busy.pid, idle.pid)
    samples = plain_samples(collector)
    high = proc_cpu_ticks(busy.pid, idle.pid)
    before = {mode: samples[key[mode]] for mode in key}
    hz = os.sysconf("SC_CLK_TCK")
    for index, mode in enumerate(("user", "system")):
        assert low[index] / hz <= before[mode] <= high[index] / hz, (mode, low, before, high)
    # The busy process used 1.0 s of CPU (its own time.process_time) before it created the file.
    assert before["user"] + before["system"] >= 0.9, f"the busy process's CPU time is missing: {before}"
    busy.kill()
    busy.wait()
    samples = plain_samples(collector)
    for mode in key:
        after = samples[key[mode]]
        assert after >= before[mode], f"{mode} counter dropped from {before[mode]} to {after} when a process exited"


def test_comm_regex_and_cmdline_filter(spawn):
    collector = _collector(groups=[{"name": "broker", "comm": "^(?P<process>worker)$",
                                    "cmdline": r"--queue=(?P<queue>\w+)"}])
    rules = spawn("worker", "--queue=RULESIN", python_code="import time; time.sleep(120)")
    other = spawn("worker", "--other", python_code="import time; time.sleep(120)")
    wait_for_comm(rules, "worker")  # both, not the last one only: under load the first may exec later
    wait_for_comm(other, "worker")
    samples = plain_samples(collector)
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

    def read() -> tuple[float | None, float]:
        value, runs = None, 0.0
        _, _, body = exporter.get("/metrics")
        for family in text_string_to_metric_families(body.decode()):
            for sample in family.samples:
                if (sample.name == "middleware_process_group_processes"
                        and sample.labels.get("process") == "opcuiwww"):
                    value = sample.value
                elif (sample.name == "middleware_scrape_collector_runs_total"
                        and sample.labels.get("collector") == "process"):
                    runs = sample.value
        return value, runs

    # Counted in collector runs, not seconds (a loaded machine stretches the seconds): the first run that starts
    # after the three exist shows them; by the time it is published, at most the one after it has started.
    _, runs_when_started = read()
    deadline = time.monotonic() + 120  # a backstop only
    while True:
        value, runs = read()
        if value == 3:
            break
        assert runs <= runs_when_started + 2, f"{runs - runs_when_started:.0f} runs later the group shows {value}"
        assert time.monotonic() < deadline, f"no process collector run published within 120 s (value {value})"
        time.sleep(0.1)
    assert runs <= runs_when_started + 2


@pytest.mark.parametrize("btime", ["1" * 400, "1e400", "nan", "inf"])
def test_a_garbled_boot_time_fails_the_run_instead_of_infinite_start_times(tmp_path, btime):
    """`float(btime)` took 400 digits, 1e400, nan and inf, so every start time became inf or nan (and the
    exposition of the start-time series failed later). A btime the kernel cannot have written fails the run,
    with the reason, as any unreadable /proc/stat does."""
    (tmp_path / "stat").write_text(f"cpu0 1 2 3 4 5 6 7 8 0 0\nbtime {btime}\n")
    collector = ProcessCollector(ProcessCollector.Settings(backend="procfs"), Context(procfs=str(tmp_path)))
    with pytest.raises(ValueError, match="not a kernel integer"):
        collector._boot_time("procfs")
    (tmp_path / "stat").write_text("cpu0 1 2 3 4 5 6 7 8 0 0\nbtime 1700000000\n")
    assert collector._boot_time("procfs") == 1700000000.0


def _recorded_process(root, pid: int, comm: str) -> None:
    """An invented /proc/<pid> (comm and a 52-field stat line in the kernel's layout), for the pattern-cache test."""
    directory = root / str(pid)
    directory.mkdir()
    (directory / "comm").write_text(comm + "\n")
    fields = [str(pid), f"({comm})", "S"] + ["1"] * 49
    (directory / "stat").write_text(" ".join(fields) + "\n")


def test_a_process_name_is_tried_against_the_patterns_once(tmp_path):
    """A pass over many processes of one unwatched name searched every pattern group's regex once per process
    (2,000 processes: 2,000 searches per pattern and about 3 ms a pass, issue 30); the groups a name can be in are
    now worked out once per name.  What is matched does not change: the watched process is counted on every pass."""
    (tmp_path / "stat").write_text("cpu0 1 2 3 4 5 6 7 8 0 0\nbtime 1700000000\n")
    for pid in range(100, 160):
        _recorded_process(tmp_path, pid, "sleep")
    _recorded_process(tmp_path, 300, "worker")
    collector = ProcessCollector(ProcessCollector.Settings(backend="procfs", groups=[
        {"name": "w", "comm": "^(?P<process>work)er$"}]), Context(procfs=str(tmp_path)))
    matcher = next(m for m in collector.matchers if m.group.name == "w")
    searched: list[str] = []

    class CountingPattern:
        def __init__(self, pattern):
            self.pattern = pattern

        def search(self, text):
            searched.append(text)
            return self.pattern.search(text)

    matcher.comm = CountingPattern(matcher.comm)
    key = ("middleware_process_group_processes", (("group", "w"), ("process", "work")))
    for _ in range(3):
        assert plain_samples(collector)[key] == 1
    assert searched.count("sleep") == 1, searched.count("sleep")  # before: 60 per pass, 180 in all
