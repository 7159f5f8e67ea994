"""The ibmmq collector: metrics from back-end snapshots, isolation of failing/hanging/garbage back-ends, and the
PCF back-end's mapping (fake adapter; real PCF messages from IBM's test suite decoded by ibmmq itself)."""

from __future__ import annotations

import dataclasses
import sys
import time
import types
from pathlib import Path

import pytest

from exporter.core.collector import Context
from exporter.core.fanout import target_limit
from exporter.systems.ibmmq import collector as ibmmq_collector
from exporter.systems.ibmmq import pcf
from exporter.systems.ibmmq.collector import IbmmqCollector
from exporter.systems.ibmmq.model import (
    CHANNEL_TYPE_CODES,
    Backend,
    BackendError,
    BackendNotAvailable,
    ChannelState,
    QmgrSnapshot,
    QueueStatus,
    channel_type_word,
)
from exporter.systems.ibmmq.settings import IbmmqSettings
from exporter.systems.ibmmq.states import ROLES, STATES, qmgr_state, qmgr_state_from_code

from ...support import collect
from ...support import shell_script as _script

SHARED_PCF = Path(__file__).resolve().parents[4] / "shared" / "fixtures" / "ibmmq-pcf"


def fixture_snapshot(qmgr: str = "QM1") -> QmgrSnapshot:
    """The fixture queue manager every back-end must report alike."""
    return QmgrSnapshot(qmgr=qmgr, status="RUNNING", queues=[
        QueueStatus("RULESIN", depth=100, max_depth=5000, oldest_message_age=3.0, open_input=2, open_output=1),
        QueueStatus("RULESOUT", depth=4200, max_depth=5000, oldest_message_age=None, open_input=0, open_output=2),
        QueueStatus("PAYROLL.EU.INPUT.WITH.A.VERY.LONG.NAME.FOR.WRAPPING", depth=0, max_depth=100000, open_input=0,
                    open_output=0),
        QueueStatus("SYSTEM.ADMIN.COMMAND.QUEUE", depth=0, max_depth=3000, open_input=1, open_output=0),
    ], channels=[
        ChannelState("QM1.TO.QM2", "RUNNING", "SDR", "qm2host(1414)"),
        ChannelState("QM2.TO.QM1", "STOPPED", "RCVR", ""),
        ChannelState("APP.SVRCONN", "RUNNING", "SVRCONN", "10.0.0.7"),
        ChannelState("APP.SVRCONN", "RUNNING", "SVRCONN", "10.0.0.8"),
        ChannelState("APP.SVRCONN", "STARTING", "SVRCONN", "10.0.0.8"),
        ChannelState("QM1.TO.QM3", "RETRYING", "SDR", "qm3host(1414)"),
    ])


class FakeBackend(Backend):
    name = "fake"

    def __init__(self, behaviour: str = "ok", qmgr: str = "QM1") -> None:
        self.behaviour = behaviour
        self.qmgr = qmgr
        self.calls = 0

    def snapshot(self):
        self.calls += 1
        if self.behaviour == "fail":
            raise BackendError("authentication failed (HTTP 401)")
        if self.behaviour == "hang":
            time.sleep(30)
        if self.behaviour == "garbage":
            return {"not": "a snapshot"}
        if self.behaviour == "bug":
            raise KeyError("commandResponse")
        return fixture_snapshot(self.qmgr)


_collect = collect


def _v(samples, name, /, **labels):
    return samples[(name, tuple(sorted(labels.items())))]


def _collector(monkeypatch, behaviours: dict[str, str], **entry) -> IbmmqCollector:
    settings = IbmmqSettings.model_validate({"enabled": True, "queue_managers": [
        {"name": name, "backend": "runmqsc", "timeout": "1s", **entry} for name in behaviours]})
    monkeypatch.setattr(ibmmq_collector, "make_backend",
                        lambda e: FakeBackend(behaviours[e.name], qmgr=e.name))
    return IbmmqCollector(settings, Context())


def test_snapshot_becomes_mq_prometheus_metrics(monkeypatch):
    samples, batch = _collect(_collector(monkeypatch, {"QM1": "ok"}))
    assert batch.errors == {}
    q = {"qmgr": "QM1", "queue": "RULESOUT"}
    assert _v(samples, "ibmmq_qmgr_status", qmgr="QM1") == 2
    assert _v(samples, "ibmmq_queue_depth", **q) == 4200
    assert _v(samples, "ibmmq_queue_attribute_max_depth", **q) == 5000
    assert _v(samples, "ibmmq_queue_depth_ratio", **q) == pytest.approx(0.84)
    assert _v(samples, "ibmmq_queue_oldest_message_age", qmgr="QM1", queue="RULESIN") == 3
    assert ("ibmmq_queue_oldest_message_age", tuple(sorted(q.items()))) not in samples  # monitoring off
    assert _v(samples, "ibmmq_queue_input_handles", qmgr="QM1", queue="RULESIN") == 2
    # SYSTEM.* excluded by default
    assert not any(dict(labels).get("queue", "").startswith("SYSTEM.") for _, labels in samples)
    assert _v(samples, "middleware_ibmmq_queues", qmgr="QM1") == 3
    assert _v(samples, "middleware_ibmmq_queues_excluded", qmgr="QM1") == 1
    ch = lambda channel, ctype, conn: {"qmgr": "QM1", "channel": channel, "type": ctype, "connname": conn,  # noqa
                                       "rqmname": "", "jobname": ""}
    # runmqsc's SDR/RCVR become mq_prometheus's words
    assert _v(samples, "ibmmq_channel_status", **ch("QM1.TO.QM2", "SENDER", "qm2host(1414)")) == 3
    assert _v(samples, "ibmmq_channel_status_squash", **ch("QM2.TO.QM1", "RECEIVER", "")) == 0
    assert _v(samples, "ibmmq_channel_status", **ch("QM2.TO.QM1", "RECEIVER", "")) == 6
    assert _v(samples, "ibmmq_channel_status_squash", **ch("QM1.TO.QM3", "SENDER", "qm3host(1414)")) == 1
    # two instances from the same address: one series, the running one
    assert _v(samples, "ibmmq_channel_status", **ch("APP.SVRCONN", "SVRCONN", "10.0.0.8")) == 3
    assert _v(samples, "middleware_ibmmq_backend_success", qmgr="QM1", backend="runmqsc") == 1
    assert {r: _v(samples, "middleware_ibmmq_qmgr_ha_role", qmgr="QM1", role=r) for r in ROLES} == {
        "active": 1, "standby": 0, "replica": 0, "none": 0, "unknown": 0}


def test_include_and_exclude_patterns(monkeypatch):
    collector = _collector(monkeypatch, {"QM1": "ok"}, include=["RULES*", "SYSTEM.ADMIN.*"], exclude=["*OUT"])
    samples, _ = _collect(collector)
    queues = {dict(labels)["queue"] for name, labels in samples if name == "ibmmq_queue_depth"}
    assert queues == {"RULESIN", "SYSTEM.ADMIN.COMMAND.QUEUE"}


@pytest.mark.parametrize("behaviour,message", [
    ("fail", "authentication failed (HTTP 401)"),
    ("hang", "timed out"),
    ("garbage", "not a snapshot"),
    ("bug", "KeyError"),
])
@pytest.mark.integration  # waits out a hang or a timeout
def test_a_failing_back_end_leaves_the_others(monkeypatch, behaviour, message):
    collector = _collector(monkeypatch, {"QM1": "ok", "QMBAD": behaviour})
    started = time.monotonic()
    samples, batch = _collect(collector)
    assert time.monotonic() - started < 25  # the hang is 30 s; the timeout far less (margin for a loaded machine)
    assert _v(samples, "middleware_ibmmq_backend_success", qmgr="QMBAD", backend="runmqsc") == 0
    assert _v(samples, "ibmmq_qmgr_status", qmgr="QMBAD") == 0
    assert _v(samples, "middleware_ibmmq_qmgr_ha_role", qmgr="QMBAD", role="unknown") == 1
    assert _v(samples, "middleware_ibmmq_qmgr_ha_role", qmgr="QMBAD", role="active") == 0
    assert message in batch.errors["QMBAD"]
    assert _v(samples, "ibmmq_queue_depth", qmgr="QM1", queue="RULESIN") == 100
    assert not any(dict(labels).get("qmgr") == "QMBAD" for name, labels in samples if name.startswith("ibmmq_queue"))


@pytest.mark.integration  # waits out a hung back-end
def test_a_hung_back_end_is_not_called_again_while_hung(monkeypatch):
    collector = _collector(monkeypatch, {"QMHANG": "hang"})
    _collect(collector)
    samples, batch = _collect(collector)
    assert "still running" in batch.errors["QMHANG"]
    assert collector.qmgrs[0].backend.calls == 1


def test_each_queue_manager_gets_four_timeouts_within_the_collector_timeout():
    settings = IbmmqSettings.model_validate({"enabled": True, "timeout": "25s", "queue_managers": [
        {"name": "QMFAST", "backend": "runmqsc", "timeout": "2s"},
        {"name": "QMSLOW", "backend": "runmqsc", "timeout": "10s"}]})
    fast, slow = IbmmqCollector(settings, Context()).qmgrs
    assert fast.deadline == 8.0  # 4 x its own timeout
    assert slow.deadline == target_limit(25.0) == 23.0  # capped below the collector's timeout


def test_configuration_errors():
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="the rest back-end needs url"):
        IbmmqSettings.model_validate({"queue_managers": [{"name": "QM1"}]})
    with pytest.raises(ValidationError, match="needs channel and conn_name"):
        IbmmqSettings.model_validate({"queue_managers": [{"name": "QM1", "backend": "pcf"}]})
    with pytest.raises(ValidationError, match="no queue_managers"):
        IbmmqSettings.model_validate({"enabled": True})


def test_ten_thousand_queues_fit_within_the_series_limit(monkeypatch):
    big = QmgrSnapshot("QMBIG", "RUNNING", [QueueStatus(f"APP.Q{i:05d}", depth=i % 50, max_depth=5000,
                                                       open_input=1, open_output=1) for i in range(10000)])
    settings = IbmmqSettings.model_validate({"enabled": True, "queue_managers": [
        {"name": "QMBIG", "backend": "runmqsc"}]})
    monkeypatch.setattr(ibmmq_collector, "make_backend", lambda e: types.SimpleNamespace(snapshot=lambda: big))
    samples, batch = _collect(IbmmqCollector(settings, Context()))
    assert _v(samples, "middleware_ibmmq_queues", qmgr="QMBIG") == 10000
    assert batch.series == len(samples) > 50000


# ---- PCF ---------------------------------------------------------------------------------------------------
def pcf_answers():
    """PCF answers for the fixture queue manager as ibmmq returns them: dicts keyed by MQ constants, strings as
    blank-padded bytes."""
    pad = lambda s, n=48: s.encode().ljust(n)  # noqa: E731
    qstatus = [{pcf.MQCA_Q_NAME: pad(q.name), pcf.MQIA_CURRENT_Q_DEPTH: q.depth,
                pcf.MQIA_OPEN_INPUT_COUNT: q.open_input or 0, pcf.MQIA_OPEN_OUTPUT_COUNT: q.open_output or 0,
                pcf.MQIACF_OLDEST_MSG_AGE: int(q.oldest_message_age) if q.oldest_message_age is not None else -1}
               for q in fixture_snapshot().queues]
    queues = [{pcf.MQCA_Q_NAME: pad(q.name), pcf.MQIA_Q_TYPE: pcf.MQQT_LOCAL, pcf.MQIA_MAX_Q_DEPTH: q.max_depth}
              for q in fixture_snapshot().queues]
    queues.append({pcf.MQCA_Q_NAME: pad("REMOTE.Q"), pcf.MQIA_Q_TYPE: 6, pcf.MQIA_MAX_Q_DEPTH: 1})
    codes = {v: k for k, v in pcf.CHANNEL_STATUS.items()}
    channels = [{pcf.MQCACH_CHANNEL_NAME: pad(c.name, 20), pcf.MQIACH_CHANNEL_STATUS: codes[c.status],
                 pcf.MQIACH_CHANNEL_TYPE: CHANNEL_TYPE_CODES[channel_type_word(c.type)],
                 pcf.MQCACH_CONNECTION_NAME: pad(c.connection, 264)}
                for c in fixture_snapshot().channels]
    return [{pcf.MQIACF_Q_MGR_STATUS: 2}], qstatus, queues, channels


def test_pcf_mapping_gives_the_fixture_snapshot():
    got = pcf.snapshot_from_pcf("QM1", *pcf_answers())
    want = fixture_snapshot()
    assert got.status == "RUNNING"
    assert {q.name: q for q in got.queues} == {q.name: q for q in want.queues}
    # PCF gives mq_prometheus's type words (SENDER, RECEIVER, ...), whatever spelling the fixture uses
    assert got.channels == [dataclasses.replace(c, type=channel_type_word(c.type)) for c in want.channels]
    assert {c.type for c in got.channels} == {"SENDER", "RECEIVER", "SVRCONN"}


class FakeAdapter:
    def __init__(self, *args, fail_after: int | None = None):
        self.answers = pcf_answers()
        self.closed = False

    def qmgr_status(self):
        return self.answers[0]

    def queue_status(self):
        return self.answers[1]

    def queues(self):
        return self.answers[2]

    def channel_status(self):
        return self.answers[3]

    def channel_definitions(self):
        return []

    def qmgr_attributes(self):
        return []

    def native_ha_status(self):
        return None  # MQRCCF_NHA_NOT_AVAILABLE: not Native HA

    def close(self):
        self.closed = True


def test_pcf_backend_with_a_fake_adapter_and_reconnect_after_errors():
    backend = pcf.PcfBackend("QM1", "MONITOR.SVRCONN", "mqhost(1414)", user="mon", password="s3cret-mq",
                             adapter_factory=FakeAdapter)
    assert backend.snapshot().queues[0].name == "PAYROLL.EU.INPUT.WITH.A.VERY.LONG.NAME.FOR.WRAPPING"

    class Broken(FakeAdapter):
        def queue_status(self):
            error = RuntimeError("MQRC_CONNECTION_BROKEN for mon/s3cret-mq")
            error.reason = 2009
            raise error

    backend = pcf.PcfBackend("QM1", "C", "h(1)", password="s3cret-mq", adapter_factory=Broken)
    with pytest.raises(BackendError) as err:
        backend.snapshot()
    assert "MQRC 2009" in str(err.value) and "s3cret-mq" not in str(err.value)
    assert backend._adapter is None  # dropped: the next snapshot connects again


def test_pcf_without_the_mq_client_says_so(monkeypatch):
    monkeypatch.setitem(sys.modules, "ibmmq", None)  # import fails as without the MQ client library
    backend = pcf.PcfBackend("QM1", "C", "h(1)")
    with pytest.raises(BackendNotAvailable, match="MQ client not installed"):
        backend.snapshot()


@pytest.fixture
def ibmmq_module(monkeypatch):
    """The real ibmmq package with its C extension replaced (no MQ client library here): enough to use its
    constants and its PCF decoder."""
    import importlib.util

    spec = importlib.util.find_spec("ibmmq")
    if spec is None:
        pytest.skip("ibmmq is not installed (pip install 'middleware-exporter[mq]')")
    import importlib.metadata

    version = importlib.metadata.version("ibmmq")

    class Stub(types.ModuleType):
        __version__ = version
        __cmdlevel__ = 930
        __mqbuild__ = "stub"

        def __getattr__(self, name):
            if name.startswith("__"):
                raise AttributeError(name)
            return lambda *args, **kwargs: None

    stub = Stub("ibmmq.ibmmqc")
    monkeypatch.setitem(sys.modules, "ibmmq.ibmmqc", stub)
    monkeypatch.setitem(sys.modules, "ibmmqc", stub)
    for name in [m for m in sys.modules if m == "ibmmq" or m.startswith("ibmmq.")]:
        if name != "ibmmq.ibmmqc":
            monkeypatch.delitem(sys.modules, name)
    before = set(sys.modules)
    path_before = list(sys.path)
    import ibmmq

    yield ibmmq
    for name in set(sys.modules) - before:  # the stubbed package must not leak into other tests
        sys.modules.pop(name, None)
    sys.path[:] = path_before


def test_pcf_constants_match_ibmmq(ibmmq_module):
    from ibmmq import CMQC, CMQCFC

    for name in ("MQCA_Q_NAME", "MQIA_CURRENT_Q_DEPTH", "MQIA_MAX_Q_DEPTH", "MQIA_OPEN_INPUT_COUNT",
                 "MQIA_OPEN_OUTPUT_COUNT", "MQIA_Q_TYPE", "MQQT_LOCAL", "MQRC_UNKNOWN_OBJECT_NAME",
                 "MQRC_STANDBY_Q_MGR"):
        assert getattr(pcf, name) == getattr(CMQC, name), name
    for name in ("MQIACF_OLDEST_MSG_AGE", "MQIACF_Q_MGR_STATUS", "MQCACH_CHANNEL_NAME", "MQCACH_CONNECTION_NAME",
                 "MQIACH_CHANNEL_TYPE", "MQIACH_CHANNEL_STATUS", "MQGACF_Q_STATISTICS_DATA", "MQIAMO_PUTS",
                 "MQIAMO_PUT1S", "MQIAMO_GETS", "MQCMD_STATISTICS_Q", "MQRCCF_CHL_STATUS_NOT_FOUND"):
        assert getattr(pcf, name) == getattr(CMQCFC, name), name
    for code, word in pcf.CHANNEL_STATUS.items():
        assert getattr(CMQCFC, f"MQCHS_{word}") == code
    for code, word in pcf.QMGR_STATUS.items():
        assert getattr(CMQCFC, f"MQQMSTA_{word}") == code


def test_real_statistics_message_decodes_to_puts_and_gets(ibmmq_module):
    path = SHARED_PCF / "statistics_q.dat"
    if not path.exists():
        pytest.skip("../shared/fixtures/ibmmq-pcf is not here (a user's clone)")
    params, header = ibmmq_module.PCFExecute.unpack(path.read_bytes())
    assert header.Command == pcf.MQCMD_STATISTICS_Q
    stats = pcf.queue_statistics(params)
    assert len(stats) == 16
    assert stats["SYSTEM.ADMIN.COMMAND.QUEUE"] == (14, 14)
    assert all(puts >= 0 and gets >= 0 for puts, gets in stats.values())


@pytest.mark.skipif(not __import__("os").environ.get("MWE_TEST_MQ_QMGR"),
                    reason="set MWE_TEST_MQ_QMGR and MWE_TEST_MQ_URL (rest) or MWE_TEST_MQ_CONNAME and "
                           "MWE_TEST_MQ_CHANNEL (pcf), plus MWE_TEST_MQ_USER/MWE_TEST_MQ_PASSWORD, to run against a "
                           "real queue manager (not run on these machines)")
def test_real_queue_manager():
    import os

    entry = {"name": os.environ["MWE_TEST_MQ_QMGR"], "username": os.environ.get("MWE_TEST_MQ_USER"),
             "password_env": "MWE_TEST_MQ_PASSWORD" if os.environ.get("MWE_TEST_MQ_PASSWORD") else None}
    if os.environ.get("MWE_TEST_MQ_URL"):
        entry.update(backend="rest", url=os.environ["MWE_TEST_MQ_URL"],
                     verify_tls=not os.environ.get("MWE_TEST_MQ_INSECURE"))
    else:
        entry.update(backend="pcf", conn_name=os.environ["MWE_TEST_MQ_CONNAME"],
                     channel=os.environ["MWE_TEST_MQ_CHANNEL"])
    settings = IbmmqSettings.model_validate({"enabled": True, "queue_managers": [entry]})
    samples, batch = _collect(IbmmqCollector(settings, Context()))
    assert not batch.errors, batch.errors
    assert _v(samples, "ibmmq_qmgr_status", qmgr=entry["name"]) == 2


# ---- the same queue manager through all three back-ends ------------------------------------------------------
def runmqsc_text(snapshot: QmgrSnapshot) -> str:
    """The fixture queue manager as `runmqsc -e` prints it: AMQ8450I/AMQ8409I/AMQ8417I blocks, attributes two
    per line in 40-character columns, a name of 40 characters or more on a line of its own, MSGAGE( ) when
    queue monitoring is off."""
    def block(header: str, attrs: list[tuple[str, str]]) -> list[str]:
        lines, row = [header], []
        for name, value in attrs:
            token = f"{name}({value})"
            if len(token) >= 40:
                if row:
                    lines.append("   " + row[0])
                    row = []
                lines.append("   " + token)
                continue
            row.append(token)
            if len(row) == 2:
                lines.append("   " + row[0].ljust(40) + row[1])
                row = []
        if row:
            lines.append("   " + row[0])
        return lines

    out = ["5724-H72 (C) Copyright IBM Corp. 1994, 2024.", f"Starting MQSC for queue manager {snapshot.qmgr}.", ""]
    for q in snapshot.queues:
        age = " " if q.oldest_message_age is None else str(int(q.oldest_message_age))
        out += block("AMQ8450I: Display queue status details.",
                     [("QUEUE", q.name), ("TYPE", "QUEUE"), ("CURDEPTH", str(q.depth)), ("IPPROCS", str(q.open_input)),
                      ("MSGAGE", age), ("OPPROCS", str(q.open_output))])
    for q in snapshot.queues:
        out += block("AMQ8409I: Display Queue details.",
                     [("QUEUE", q.name), ("TYPE", "QLOCAL"), ("DESCR", "fixture (queue)"),
                      ("MAXDEPTH", str(q.max_depth))])
    for c in snapshot.channels:
        attrs = [("CHANNEL", c.name), ("CHLTYPE", c.type)]
        if c.connection:
            attrs.append(("CONNAME", c.connection))
        attrs.append(("STATUS", c.status))
        out += block("AMQ8417I: Display Channel Status details.", attrs)
    out += ["     3 MQSC commands read.", "No commands have a syntax error.", "All valid MQSC commands were processed."]
    return "\n".join(out) + "\n"



def test_every_back_end_yields_the_same_metrics(tmp_path, monkeypatch):
    from ...fakes.mqweb import FakeChannel, FakeMqweb, FakeQmgr, FakeQueue

    want = fixture_snapshot()
    # runmqsc: stand-in dspmq and runmqsc printing what the real ones print
    (tmp_path / "display.txt").write_text(runmqsc_text(want))
    dspmq = _script(tmp_path / "dspmq", 'echo "' + "QMNAME(QM1)".ljust(58) + 'STATUS(Running)"\n')
    runmqsc = _script(tmp_path / "runmqsc", f'cat > /dev/null\ncat "{tmp_path / "display.txt"}"\n')
    # rest: mqweb answering from the same queue manager
    fake = FakeMqweb(FakeQmgr("QM1", "running",
                              [FakeQueue(q.name, q.depth, q.max_depth,
                                         None if q.oldest_message_age is None else int(q.oldest_message_age),
                                         q.open_input, q.open_output) for q in want.queues],
                              [FakeChannel(c.name, c.status, c.type, c.connection) for c in want.channels])).start()
    try:
        results = {}
        for backend, entry in {
            "rest": {"backend": "rest", "url": fake.base_url},
            "runmqsc": {"backend": "runmqsc", "runmqsc": runmqsc, "dspmq": dspmq},
            "pcf": {"backend": "pcf", "channel": "MONITOR.SVRCONN", "conn_name": "mqhost(1414)"},
        }.items():
            settings = IbmmqSettings.model_validate({"enabled": True, "queue_managers": [
                {"name": "QM1", "timeout": "5s", **entry}]})
            collector = IbmmqCollector(settings, Context())
            if backend == "pcf":
                collector.qmgrs[0].backend = pcf.PcfBackend("QM1", "C", "h(1)", adapter_factory=FakeAdapter)
            samples, batch = _collect(collector)
            assert batch.errors == {}, (backend, batch.errors)
            results[backend] = {k: v for k, v in samples.items()
                                if k[0].startswith("ibmmq_")
                                or k[0] in ("middleware_ibmmq_queues", "middleware_ibmmq_qmgr_ha_role")}
    finally:
        fake.stop()
    assert results["rest"] == results["runmqsc"] == results["pcf"]
    depth = ("ibmmq_queue_depth", (("qmgr", "QM1"), ("queue", "RULESOUT")))
    assert results["rest"][depth] == 4200
    names = {k[0] for k in results["rest"]}
    assert {"ibmmq_qmgr_status", "ibmmq_queue_depth", "ibmmq_queue_attribute_max_depth", "ibmmq_channel_status",
            "ibmmq_channel_status_squash", "ibmmq_queue_oldest_message_age"} <= names


@pytest.mark.integration
def test_exporter_process_with_mqweb_that_turns_to_garbage(start_exporter, tmp_path):
    from ...fakes.mqweb import FakeMqweb, FakeQmgr, generate_queues

    fake = FakeMqweb(FakeQmgr("QM1", "running", generate_queues(20, "APP.Q."))).start()
    try:
        config = tmp_path / "mq.yaml"
        config.write_text(f"collectors:\n  ibmmq:\n    enabled: true\n    interval: 1s\n    timeout: 1s\n"
                          f"    queue_managers:\n      - name: QM1\n        url: {fake.base_url}\n"
                          f"        timeout: 0.5s\n")
        exporter = start_exporter("--config", str(config))
        _, _, body = exporter.get("/metrics")
        assert b'ibmmq_queue_depth{qmgr="QM1",queue="APP.Q.07"} 7.0' in body
        fake.garbage = True
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            status, _, body = exporter.get("/metrics")
            if b'middleware_ibmmq_backend_success{backend="rest",qmgr="QM1"} 0.0' in body:
                break
            time.sleep(0.2)
        assert status == 200
        assert b'middleware_ibmmq_backend_success{backend="rest",qmgr="QM1"} 0.0' in body
        assert b"ibmmq_queue_depth{" not in body
        assert b'middleware_scrape_collector_success{collector="host"} 1.0' in body
        # the queue manager is down, so the collector did not work (issue 26: one truth about what works)
        assert b'middleware_target_up{collector="ibmmq",target="QM1"} 0.0' in body
        assert b'middleware_scrape_collector_success{collector="ibmmq"} 0.0' in body
    finally:
        fake.stop()


# ---- queue-manager states: one table, the same value through every back-end (issue 13) ----------------------

# (dspmq's words, mqweb's state, PCF's MQQMSTA code or None, ibmmq_qmgr_status, HA role).  dspmq and mqweb words
# are IBM's (dspmq reference, mqweb's GET /admin/qmgr); REPLICA/NEGOTIATING are Native HA dspmq words only.
STATE_CASES = [
    ("Running", "running", 2, 2, "active"),
    ("Starting", "starting", 1, 1, "active"),
    ("Quiescing", "quiescing", 3, 3, "active"),
    ("Ending immediately", "endingImmediately", None, 3, "active"),
    ("Ending pre-emptively", "endingPreemptively", None, 3, "active"),
    ("Running as standby", "runningAsStandby", 4, 4, "standby"),
    ("Running elsewhere", "runningElsewhere", None, 4, "standby"),
    ("Replica", None, None, 4, "replica"),
    ("Recovery group leader", None, None, 4, "replica"),
    ("Negotiating", None, None, 1, "unknown"),
    ("Ended normally", "endedNormally", None, 0, "none"),
    ("Ended immediately", "endedImmediately", None, 0, "none"),
    ("Ended pre-emptively", "endedPreemptively", None, 0, "none"),
    ("Ended unexpectedly", "endedUnexpectedly", None, 0, "none"),
    ("Status not available", "stateNotAvailable", None, 0, "unknown"),
]


@pytest.mark.parametrize("words,rest_state,code,status,role", STATE_CASES, ids=[c[0] for c in STATE_CASES])
def test_state_table(words, rest_state, code, status, role):
    spellings = [words, words.upper(), words.lower(), words.upper().replace("PRE-EMPTIVELY", "PREEMPTIVELY"),
                 words.replace("-", "")]
    for spelling in spellings:
        assert (qmgr_state(spelling).status, qmgr_state(spelling).role) == (status, role), spelling
    if rest_state is not None:
        assert qmgr_state(rest_state) == qmgr_state(words)
    if code is not None:
        assert (qmgr_state_from_code(code).status, qmgr_state_from_code(code).role) == (status, role)


def test_every_state_has_a_valid_status_and_role():
    assert {s.status for s in STATES.values()} == {0, 1, 2, 3, 4}
    assert {s.role for s in STATES.values()} == set(ROLES)
    assert all(qmgr_state(name) is state for name, state in STATES.items())
    assert qmgr_state_from_code(5) is qmgr_state_from_code(None) is qmgr_state(None) is STATES["UNKNOWN"]
    assert qmgr_state("Ended somehow new").name == "ENDED" and qmgr_state("Ending slowly").status == 3


def _status_and_role(collector: IbmmqCollector) -> tuple[float, str]:
    samples, batch = _collect(collector)
    assert batch.errors == {}, batch.errors
    roles = [r for r in ROLES if _v(samples, "middleware_ibmmq_qmgr_ha_role", qmgr="QM1", role=r) == 1]
    assert len(roles) == 1 and sum(_v(samples, "middleware_ibmmq_qmgr_ha_role", qmgr="QM1", role=r)
                                   for r in ROLES) == 1
    return _v(samples, "ibmmq_qmgr_status", qmgr="QM1"), roles[0]


NOT_RUNNING = [case for case in STATE_CASES if case[3] != 2]  # running: test_every_back_end_yields_the_same_metrics


@pytest.mark.parametrize("words,rest_state,code,status,role", NOT_RUNNING, ids=[c[0] for c in NOT_RUNNING])
def test_each_state_reads_the_same_through_every_back_end(tmp_path, words, rest_state, code, status, role):
    from ...fakes.mqweb import FakeMqweb, FakeQmgr

    seen = {}
    for spelling in (words, words.upper()):  # dspmq without and with -n
        dspmq = _script(tmp_path / "dspmq", 'echo "' + "QMNAME(QM1)".ljust(58) + f'STATUS({spelling})"\n')
        runmqsc = _script(tmp_path / "runmqsc", "exit 99\n")  # never run for a queue manager that is not running
        settings = IbmmqSettings.model_validate({"enabled": True, "queue_managers": [
            {"name": "QM1", "backend": "runmqsc", "runmqsc": runmqsc, "dspmq": dspmq, "timeout": "5s"}]})
        seen[f"runmqsc {spelling}"] = _status_and_role(IbmmqCollector(settings, Context()))
    if rest_state is not None:
        with FakeMqweb(FakeQmgr("QM1", rest_state)) as fake:
            settings = IbmmqSettings.model_validate({"enabled": True, "queue_managers": [
                {"name": "QM1", "backend": "rest", "url": fake.base_url, "timeout": "5s"}]})
            seen["rest"] = _status_and_role(IbmmqCollector(settings, Context()))
    if code is not None:
        class Adapter(FakeAdapter):
            def qmgr_status(self):
                return [{pcf.MQIACF_Q_MGR_STATUS: code}]

        settings = IbmmqSettings.model_validate({"enabled": True, "queue_managers": [
            {"name": "QM1", "backend": "pcf", "channel": "C", "conn_name": "h(1)"}]})
        collector = IbmmqCollector(settings, Context())
        collector.qmgrs[0].backend = pcf.PcfBackend("QM1", "C", "h(1)", adapter_factory=Adapter)
        seen["pcf"] = _status_and_role(collector)
    assert set(seen.values()) == {(status, role)}, seen


def test_pcf_standby_instance_is_standby_not_a_failure():
    class Standby(FakeAdapter):
        def __init__(self, *args):
            error = RuntimeError("MQRC_STANDBY_Q_MGR")
            error.reason = pcf.MQRC_STANDBY_Q_MGR
            raise error

    snap = pcf.PcfBackend("QM1", "C", "h(1)", adapter_factory=Standby).snapshot()
    assert (snap.status, qmgr_state(snap.status).status, qmgr_state(snap.status).role) == ("STANDBY", 4, "standby")
