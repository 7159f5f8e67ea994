"""End to end, the throughput branch of MiddlewareMqQueueManagerCpuSaturation: the real exporter reads a queue
manager through its PCF back-end, with the stand-in ``ibmmq`` package (tests/fakes/ibmmq) handing out resource-
statistics publications shaped as a 9.4 queue manager's (metadata, then STATMQI/STATQ PUT and GET every second),
decodes them, and Debian's Prometheus, with the project's rule files, evaluates the rule.

Both runs: host CPU fully busy (a recorded /proc whose counters advance with no idle time), RULESIN holding 150
messages (above the working depth, flat: the depth branch cannot fire).  One queue manager's get rate falls from
215 to 50 msg/s after 20 seconds: the alert fires.  The control keeps 215 msg/s: it does not, although its rate and
the busy CPU are there in Prometheus.

Time is compressed 30 times in the rule files (every ``for:`` to 3 s, every range selector divided by 30: the
5-minute rates become 10-second rates, the hour's level two minutes): a 5-minute rate over less than 5 minutes of
data is extrapolated over the window and would rise for the first 5 minutes whatever the queue manager does.  The
expressions are otherwise the rule files' own; promtool unit tests (tests/rules/ibmmq.test.yml) cover the real
durations.  Loopback only; every process is stopped; every wait is bounded."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import threading
import time
import urllib.parse

import pytest
import yaml

from ...support import FIXTURES, REPO, free_port, http_get, require_binary

pytestmark = pytest.mark.integration

ALERT = "MiddlewareMqQueueManagerCpuSaturation"
SCALE = 30


def _compressed_rules(tmp_path) -> list[str]:
    files = []
    for path in sorted((REPO / "alerts").glob("*.yml")):
        if path.name == "alertmanager.yml":
            continue
        text = re.sub(r"^(\s*)for: .*$", r"\1for: 3s", path.read_text(), flags=re.M)
        text = re.sub(r"\[(\d+)([mh])\]",
                      lambda m: f"[{int(m[1]) * (60 if m[2] == 'm' else 3600) // SCALE}s]", text)
        target = tmp_path / path.name
        target.write_text(text)
        files.append(str(target))
    return files


class ThroughputStack:
    def __init__(self, tmp_path, start_exporter, gets: list) -> None:
        self.procs: list[subprocess.Popen] = []
        self.stop = threading.Event()
        procfs = tmp_path / "proc"
        shutil.copytree(FIXTURES / "host1" / "proc", procfs)
        stat = procfs / "stat"
        lines = stat.read_text().splitlines()

        def burn() -> None:  # user time advances by wall time on every CPU, idle does not
            ticks = 0
            while not self.stop.wait(0.5):
                ticks += 50
                out = []
                for line in lines:
                    parts = line.split()
                    if parts and parts[0].startswith("cpu"):
                        parts[1] = str(int(parts[1]) + ticks * (4 if parts[0] == "cpu" else 1))
                        line = " ".join(parts)
                    out.append(line)
                (procfs / "stat.new").write_text("\n".join(out) + "\n")
                (procfs / "stat.new").replace(stat)

        threading.Thread(target=burn, daemon=True).start()
        scenario = {"qmgr": "QM1", "monint": 1.0, "gets": gets, "puts": gets,
                    "queues": [{"name": "RULESIN", "depth": 150, "max_depth": 5000, "share": 1.0}]}
        (tmp_path / "scenario.json").write_text(json.dumps(scenario))
        config = {"paths": {"procfs": str(procfs), "rootfs": str(FIXTURES / "host1" / "root")}, "collectors": {
            "host": {"interval": 1, "timeout": 1}, "process": {"interval": 1, "timeout": 1},
            "ibmmq": {"enabled": True, "interval": 1, "timeout": 1, "queue_managers": [
                {"name": "QM1", "backend": "pcf", "channel": "MONITOR.SVRCONN", "conn_name": "127.0.0.1(1414)",
                 "timeout": 0.5, "monitor_interval": 1}]}}}
        path = tmp_path / "exporter.yaml"
        path.write_text(yaml.safe_dump(config))
        self.exporter = start_exporter("--config", str(path), env={
            "PYTHONPATH": str(REPO / "tests" / "fakes"), "FAKE_IBMMQ_SCENARIO": str(tmp_path / "scenario.json")})
        port = free_port()
        prom = {"global": {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
                "rule_files": _compressed_rules(tmp_path),
                "scrape_configs": [{"job_name": "middleware",
                                    "static_configs": [{"targets": [f"127.0.0.1:{self.exporter.port}"]}]}]}
        (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(prom))
        self.url = f"http://127.0.0.1:{port}"
        log = open(tmp_path / "prometheus.log", "wb")
        self.procs.append(subprocess.Popen(
            [require_binary("prometheus"), f"--config.file={tmp_path / 'prometheus.yml'}",
             f"--storage.tsdb.path={tmp_path / 'tsdb'}", f"--web.listen-address=127.0.0.1:{port}"],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL))

    def query(self, expr: str) -> list:
        try:
            status, _, body = http_get(self.url + "/api/v1/query?query=" + urllib.parse.quote(expr))
        except OSError:
            return []
        return json.loads(body)["data"]["result"] if status == 200 else []

    def firing(self) -> dict[str, dict]:
        try:
            status, _, body = http_get(self.url + "/api/v1/alerts")
        except OSError:
            return {}
        alerts = json.loads(body)["data"]["alerts"] if status == 200 else []
        return {a["labels"]["alertname"]: a for a in alerts if a["state"] == "firing"}

    def close(self) -> None:
        self.stop.set()
        for proc in self.procs:
            proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture
def throughput_stack(tmp_path, start_exporter):
    require_binary("prometheus")
    made: list[ThroughputStack] = []

    def make(gets: list) -> ThroughputStack:
        made.append(ThroughputStack(tmp_path, start_exporter, gets))
        return made[-1]

    yield make
    for s in made:
        s.close()


def _value(result: list) -> float | None:
    return float(result[0]["value"][1]) if result else None


def test_falling_get_rate_fires_the_throughput_branch(throughput_stack):
    s = throughput_stack([[0, 215], [40, 50]])
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and ALERT not in s.firing():
        time.sleep(1)
    firing = s.firing()
    assert ALERT in firing, (f"not firing; rate {s.query('qmgr:ibmmq_qmgr_destructive_gets:rate5m')}, "
                             f"level {s.query('qmgr:ibmmq_qmgr_destructive_gets:rate5m_q90_1h')}, "
                             f"idle {s.query('instance:middleware_host_cpu_idle:ratio5m')}")
    alert = firing[ALERT]
    assert alert["labels"]["guide_row"] == "MQ-CPU" and alert["labels"]["severity"] == "critical"
    # the depth branch had no part in it: RULESIN is flat
    assert _value(s.query('deriv(ibmmq_queue_depth{queue="RULESIN"}[20s])')) == 0
    # the counters came from the publications: a per-queue count too, and the source reports its success
    assert _value(s.query('ibmmq_queue_mqget_count_total{queue="RULESIN"}')) > 0
    assert _value(s.query('middleware_ibmmq_statistics_success{qmgr="QM1"}')) == 1
    ratio = _value(s.query("qmgr:ibmmq_qmgr_destructive_gets:rate5m / qmgr:ibmmq_qmgr_destructive_gets:rate5m_q90_1h"))
    assert ratio is not None and ratio < 0.75


def test_steady_get_rate_does_not_fire(throughput_stack):
    s = throughput_stack([[0, 215]])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not s.query("qmgr:ibmmq_qmgr_destructive_gets:rate5m_q90_1h"):
        time.sleep(1)
    time.sleep(30)  # past the time the falling run needs to fire
    rate = _value(s.query("qmgr:ibmmq_qmgr_destructive_gets:rate5m"))
    idle = _value(s.query("instance:middleware_host_cpu_idle:ratio5m"))
    assert rate is not None and 150 < rate < 280, rate  # the rate is there (215 msg/s) ...
    assert idle is not None and idle < 0.1, idle  # ... and so is the busy CPU
    assert ALERT not in s.firing()
