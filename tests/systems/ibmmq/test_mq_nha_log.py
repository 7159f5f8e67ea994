"""Issue 39, IBM MQ items 5 and 6, on the runmqsc path: Native HA instances (DISPLAY QMSTATUS TYPE(NATIVEHA)) and
the recovery log from the DISK/Log resource publications (amqsrua), through stand-in ``dspmq``/``runmqsc``/
``amqsrua`` scripts printing genuine output (tests/systems/ibmmq/fixtures/real/SOURCE.md), the runmqsc back-end
and the collector.  Out-of-sync and failure shapes are the genuine captures edited line by line here (INVENTED
edits, each said where it is made): no public capture shows a replica out of sync."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from exporter.core.collector import Context
from exporter.systems.ibmmq import mqscmap, pcf
from exporter.systems.ibmmq.collector import IbmmqCollector
from exporter.systems.ibmmq.model import NHA_ROLE_CODES, NHA_STATUS_CODES
from exporter.systems.ibmmq.parse import parse_amqsrua, read_mqsc
from exporter.systems.ibmmq.rest import RestBackend
from exporter.systems.ibmmq.settings import IbmmqSettings
from tests.fakes import ibmmq as fake_ibmmq
from tests.fakes.mqweb import FakeMqweb, FakeQmgr

from ...support import collect
from .test_ibmmq import ibmmq_module  # noqa: F401 - the fixture (real ibmmq with its C part stubbed)
from .test_mq_runmqsc import StandIns

HERE = Path(__file__).resolve().parent


def fixture(name: str) -> str:
    """A genuine capture (SOURCE.md beside it)."""
    return (HERE / "fixtures" / "real" / name).read_text()


NHA = "runmqsc_display_qmstatus_nativeha_3_instances_vks_2026.txt"
DISK_LOG = "amqsrua_disk_log_9.0_colinpaice_2018.txt"
QMSTATUS = "runmqsc_display_qmstatus_all_9.4.2.txt"


def v(samples, name, /, **labels):
    return samples[(name, tuple(sorted(labels.items())))]


def names(samples) -> set[str]:
    return {name for name, _ in samples}


def collector(mq: StandIns, **entry) -> IbmmqCollector:
    settings = IbmmqSettings.model_validate({"enabled": True, "queue_managers": [
        {"name": "QM1", "backend": "runmqsc", "runmqsc": str(mq.runmqsc), "dspmq": str(mq.dspmq), "timeout": "10s",
         "statistics": "off", **entry}]})
    return IbmmqCollector(settings, Context())


def standins(tmp_path: Path, runmqsc: str) -> StandIns:
    mq = StandIns(tmp_path)
    mq.set_dspmq("QMNAME(QM1)".ljust(58) + "STATUS(Running)\n")
    mq.set_runmqsc(runmqsc)
    return mq


# ---- item 6: the recovery log from amqsrua's DISK/Log output --------------------------------------------------

def test_amqsrua_keeps_the_non_integer_log_values_of_a_genuine_capture():
    """Before issue 39 the reader took ``%d`` values only: ``150.82%`` and ``280 uSec`` were dropped (and every
    DISK/Log line with them).  Units as mq_prometheus normalises them: uSec to seconds, percentages as percent."""
    out = parse_amqsrua(fixture(DISK_LOG))
    assert not out.errors and not out.garbage and len(out.publications) == 1
    log = out.publications[0].log
    assert log["Log - current primary space in use"] == 150.82
    assert log["Log - workload primary space utilization"] == 146.05
    assert log["Log - write latency"] == 280e-6
    assert log["Log - bytes in use"] == log["Log - bytes max"] == 83886080  # 5 extents of 16 MB, all in use
    assert log["Log file system - bytes max"] == 6207111168
    assert log["Log - physical bytes written"] == 598876160  # the delta, not the rate printed after it
    assert out.publications[0].counts == {}


def test_amqsrua_log_units_and_garbage():
    text = ("Publication received PutDate:20250320 PutTime:15320100 Interval:10.000 seconds\n"
            "Log - bytes required for media recovery 96MB\n"  # MQIAMO_MONITOR_MB in 9.4.1's metadata
            "Log - write latency 1234 uSec\n"
            "Log - current primary space in use -1.00%\n"  # garbage: never a negative share
            "Interval total MQPUT/MQPUT1 count 12.5\n"  # a count is %d: not a count
            "Interval total destructive get- count 7 1/sec\n")
    out = parse_amqsrua(text)
    log = out.publications[0].log
    assert log == {"Log - bytes required for media recovery": 96 * 1048576, "Log - write latency": 0.001234}
    assert out.garbage == ["Log - current primary space in use = -1.00%", "Interval total MQPUT/MQPUT1 count = 12.5"]
    assert out.publications[0].counts == {("STATMQI", "GET", None): {"gets": 7}}


def test_runmqsc_back_end_exports_the_log_under_mq_prometheus_names(tmp_path):
    """Through the collector, a stand-in amqsrua printing the genuine DISK/Log publication (twice: the gauges keep
    the latest value, the two delta elements are summed into counters)."""
    mq = standins(tmp_path, fixture(QMSTATUS))
    calls = tmp_path / "amqsrua.calls"
    publication = tmp_path / "disk_log.txt"
    publication.write_text(fixture(DISK_LOG) * 2)
    amqsrua = tmp_path / "amqsrua"
    amqsrua.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" >> '{calls}'\ncat '{publication}'\nsleep 1\n")
    amqsrua.chmod(0o755)
    c = collector(mq, statistics="publications", amqsrua=str(amqsrua), monitor_interval="10s")
    collect(c)  # starts amqsrua's worker
    deadline = time.monotonic() + 10
    while not (calls.exists() and c.qmgrs[0].backend.stats._runs) and time.monotonic() < deadline:
        time.sleep(0.05)
    samples, batch = collect(c)
    c.close()
    assert batch.errors == {}
    assert "-c\nDISK\n-t\nLog\n" in calls.read_text()
    assert v(samples, "ibmmq_qmgr_log_write_latency_seconds", qmgr="QM1") == 0.00028
    assert v(samples, "ibmmq_qmgr_log_current_primary_space_in_use_percentage", qmgr="QM1") == 150.82
    assert v(samples, "ibmmq_qmgr_log_workload_primary_space_utilization_percentage", qmgr="QM1") == 146.05
    assert v(samples, "ibmmq_qmgr_log_in_use_bytes", qmgr="QM1") == 83886080
    assert v(samples, "ibmmq_qmgr_log_max_bytes", qmgr="QM1") == 83886080
    assert v(samples, "ibmmq_qmgr_log_file_system_in_use_bytes", qmgr="QM1") == 1014132736
    assert v(samples, "ibmmq_qmgr_log_file_system_max_bytes", qmgr="QM1") == 6207111168
    assert v(samples, "ibmmq_qmgr_log_write_size_bytes", qmgr="QM1") == 36809
    assert v(samples, "ibmmq_qmgr_log_physical_written_bytes_total", qmgr="QM1") == 2 * 598876160
    assert v(samples, "ibmmq_qmgr_log_logical_written_bytes_total", qmgr="QM1") == 2 * 532921878
    # elements the 9.0 queue manager did not publish are absent, not 0
    assert "ibmmq_qmgr_log_required_for_media_recovery_bytes" not in names(samples)


# ---- item 5: Native HA through DISPLAY QMSTATUS TYPE(NATIVEHA) ------------------------------------------------

def test_native_ha_instances_of_the_genuine_capture():
    from exporter.systems.ibmmq.mqscmap import native_ha  # new in issue 39 (imported here: the others run without)

    instances = native_ha(read_mqsc(fixture(NHA)).blocks)
    assert [(i.name, i.role, i.in_sync, i.backlog_kb, i.connected, i.status) for i in instances] == [
        ("vks-prod-nativeha-mq-ibm-mq-0", "ACTIVE", None, None, None, "NORMAL"),
        ("vks-prod-nativeha-mq-ibm-mq-1", "REPLICA", True, 0, True, "NORMAL"),
        ("vks-prod-nativeha-mq-ibm-mq-2", "REPLICA", True, 0, True, "NORMAL")]


def out_of_sync(text: str) -> str:
    """INVENTED edit of the genuine capture: replica -2 fell behind (20 MB of log not acknowledged) and lost its
    connection, as after its pod was rescheduled; -1 stays in sync."""
    head, tail = text.split("   INSTANCE(vks-prod-nativeha-mq-ibm-mq-2)")
    tail = (tail.replace("BACKLOG(0)                              CONNACTV(YES)",
                         "BACKLOG(20480)                          CONNACTV(NO)", 1)
            .replace("HASTATUS(NORMAL)                        INSYNC(YES)",
                     "HASTATUS(SYNCHRONIZING)                 INSYNC(NO)", 1))
    return head + "   INSTANCE(vks-prod-nativeha-mq-ibm-mq-2)" + tail


def test_runmqsc_back_end_exports_native_ha_and_a_replica_out_of_sync(tmp_path):
    """Before issue 39 the runmqsc back-end never asked for TYPE(NATIVEHA): none of these series existed."""
    mq = standins(tmp_path, fixture(QMSTATUS) + fixture(NHA))
    c = collector(mq)
    samples, batch = collect(c)
    assert batch.errors == {}
    assert "DISPLAY QMSTATUS TYPE(NATIVEHA) ALL" in mq.runmqsc_stdin.read_text().splitlines()
    active, r1, r2 = ("vks-prod-nativeha-mq-ibm-mq-0", "vks-prod-nativeha-mq-ibm-mq-1", "vks-prod-nativeha-mq-ibm-mq-2")
    assert v(samples, "middleware_ibmmq_nha_role", qmgr="QM1", nha=active) == 1
    assert v(samples, "middleware_ibmmq_nha_role", qmgr="QM1", nha=r1) == 2
    assert v(samples, "middleware_ibmmq_nha_in_sync", qmgr="QM1", nha=r2) == 1
    assert v(samples, "middleware_ibmmq_nha_backlog_bytes", qmgr="QM1", nha=r2) == 0
    assert v(samples, "middleware_ibmmq_nha_connected", qmgr="QM1", nha=r2) == 1
    assert v(samples, "middleware_ibmmq_nha_status", qmgr="QM1", nha=active) == 1  # NORMAL
    # the active instance has no INSYNC of its own: no series, never a 0 that reads as "out of sync"
    assert ("middleware_ibmmq_nha_in_sync", (("nha", active), ("qmgr", "QM1"))) not in samples
    assert batch.reports.targets["QM1"].sources["nativeha"].ok

    mq.set_runmqsc(fixture(QMSTATUS) + out_of_sync(fixture(NHA)))
    samples, batch = collect(c)
    assert v(samples, "middleware_ibmmq_nha_in_sync", qmgr="QM1", nha=r2) == 0
    assert v(samples, "middleware_ibmmq_nha_in_sync", qmgr="QM1", nha=r1) == 1
    assert v(samples, "middleware_ibmmq_nha_backlog_bytes", qmgr="QM1", nha=r2) == 20480 * 1024
    assert v(samples, "middleware_ibmmq_nha_connected", qmgr="QM1", nha=r2) == 0
    assert v(samples, "middleware_ibmmq_nha_status", qmgr="QM1", nha=r2) == 3  # SYNCHRONIZING
    c.close()


def test_queue_manager_without_native_ha_has_no_series_and_no_error(tmp_path):
    """The 9.4.2 capture is not Native HA (INSTANCE( ) blank): no nha series, and no source error for the missing
    answer.  INVENTED edit: the same QMSTATUS naming an instance, without a TYPE(NATIVEHA) answer, is an error."""
    mq = standins(tmp_path, fixture(QMSTATUS))
    c = collector(mq)
    samples, batch = collect(c)
    assert batch.errors == {} and not any(n.startswith("middleware_ibmmq_nha_") for n in names(samples))
    assert "nativeha" not in batch.reports.targets["QM1"].sources
    mq.set_runmqsc(fixture(QMSTATUS).replace("INSTANCE( )", "INSTANCE(qm1-ibm-mq-0)"))
    samples, batch = collect(c)
    source = batch.reports.targets["QM1"].sources["nativeha"]
    assert not source.ok and "DISPLAY QMSTATUS TYPE(NATIVEHA): no answer" in source.error
    assert v(samples, "ibmmq_qmgr_connection_count", qmgr="QM1") == 44  # the rest stands
    c.close()


# ---- item 5 on the REST and PCF back-ends ------------------------------------------------------------------------
# No genuine mqweb or PCF answer for Native HA status is public (SOURCE.md, NOT_FOUND): the answers below are the
# genuine runmqsc capture above carried into each back-end's shape, INVENTED: runCommandJSON items with the MQSC
# keywords in lower case (as the fake mqweb answers every DISPLAY), PCF answers keyed by cmqcfc.h's ids with the
# MQNHAROLE_/MQNHASTATUS_/MQNHAINSYNC_/MQNHACONNACTV_ codes.  A queue manager without Native HA is taken to answer
# MQRCCF_NHA_NOT_AVAILABLE (4098), as IBM's constant names it; that, too, is not seen in a capture.

def nha_capture() -> list:
    """The runmqsc back-end's reading of the genuine capture: what REST and PCF must give."""
    return mqscmap.native_ha(read_mqsc(fixture(NHA)).blocks)


def nha_as_mqsc_json(text: str) -> list[dict]:
    """The capture's instance blocks as runCommandJSON parameters (INVENTED shape: lower-case keywords)."""
    return [{k.lower(): val for k, val in block.items() if k not in ("TYPE", "NHATYPE")}
            for block in read_mqsc(text).blocks if block.get("TYPE") == "NATIVEHA"]


def rest_collector(server: FakeMqweb) -> IbmmqCollector:
    settings = IbmmqSettings.model_validate({"enabled": True, "queue_managers": [
        {"name": "QM1", "backend": "rest", "url": server.base_url, "timeout": "5s"}]})
    return IbmmqCollector(settings, Context())


def test_rest_back_end_exports_native_ha_and_a_replica_out_of_sync():
    """Before this change the REST back-end sent no DISPLAY QMSTATUS TYPE(NATIVEHA): none of these series existed
    and ``snap.native_ha`` stayed None."""
    with FakeMqweb(FakeQmgr("QM1", native_ha=nha_as_mqsc_json(fixture(NHA)))) as mqweb:
        snap = RestBackend("QM1", mqweb.base_url, timeout=5.0).snapshot()
        assert snap.native_ha == nha_capture() and "nativeha" not in snap.source_errors
        sent = [r.body for r in mqweb.requests if r.body and r.body.get("parameters", {}).get("type") == "nativeha"]
        assert sent == [{"type": "runCommandJSON", "command": "display", "qualifier": "qmstatus",
                         "parameters": {"type": "nativeha"}, "responseParameters": ["all"]}]
        mqweb.qmgr.native_ha = nha_as_mqsc_json(out_of_sync(fixture(NHA)))  # INVENTED edit, as on runmqsc
        c = rest_collector(mqweb)
        samples, batch = collect(c)
        r2 = "vks-prod-nativeha-mq-ibm-mq-2"
        assert v(samples, "middleware_ibmmq_nha_in_sync", qmgr="QM1", nha=r2) == 0
        assert v(samples, "middleware_ibmmq_nha_backlog_bytes", qmgr="QM1", nha=r2) == 20480 * 1024
        assert v(samples, "middleware_ibmmq_nha_role", qmgr="QM1", nha="vks-prod-nativeha-mq-ibm-mq-0") == 1
        assert batch.reports.targets["QM1"].sources["nativeha"].ok
        c.close()


def test_rest_back_end_without_native_ha_has_no_series_and_no_error():
    """MQRCCF_NHA_NOT_AVAILABLE is "not Native HA"; a command level before 9.2.2 is not asked at all; any other
    failure, or that answer while QMSTATUS names an instance, is the ``nativeha`` source's error (the rest stands)."""
    with FakeMqweb(FakeQmgr("QM1")) as mqweb:
        rest = RestBackend("QM1", mqweb.base_url, timeout=5.0)
        snap = rest.snapshot()
        assert snap.native_ha is None and snap.source_errors == {} and rest.item_errors == []
        c = rest_collector(mqweb)
        samples, batch = collect(c)
        assert batch.errors == {} and not any(n.startswith("middleware_ibmmq_nha_") for n in names(samples))
        assert "nativeha" not in batch.reports.targets["QM1"].sources
        c.close()
        mqweb.qmgr.attributes = {"cmdlevel": "915"}  # MQ 9.1.5: no Native HA, and no question about it
        mqweb.requests.clear()
        assert rest.snapshot().source_errors == {}
        assert not [r for r in mqweb.requests if r.body and r.body.get("parameters", {}).get("type") == "nativeha"]
        mqweb.qmgr.attributes = {}
        mqweb.qmgr.native_ha_reason = 3008  # MQRCCF_COMMAND_FAILED: says nothing about Native HA
        snap = rest.snapshot()
        assert snap.native_ha is None and "reason 3008" in snap.source_errors["nativeha"]
        assert len(snap.source_errors) == 1 and snap.health is not None
        mqweb.qmgr.native_ha_reason = 4098
        mqweb.qmgr.qmstatus = {"instance": "qm1-ibm-mq-0"}  # INVENTED: QMSTATUS names an instance (9.4)
        snap = rest.snapshot()
        assert "names a Native HA instance" in snap.source_errors["nativeha"]


# MQNHAROLE_ACTIVE 1 / REPLICA 2, MQNHASTATUS_NORMAL 1 / SYNCHRONIZING 3, MQNHAINSYNC_YES 1, MQNHACONNACTV_YES 1;
# 3211 MQCACF_NHA_INSTANCE_NAME, 1460 ..._ROLE, 1459 ..._IN_SYNC, 1458 ..._BACKLOG, 1457 ..._ACTV_CONNS,
# 1476 ..._STATUS (PCF strings blank-padded).  The active instance carries no in-sync/backlog/connection of its own.
PCF_NHA = [
    {"3211": "vks-prod-nativeha-mq-ibm-mq-0".ljust(48), "1460": 1, "1476": 1},
    {"3211": "vks-prod-nativeha-mq-ibm-mq-1".ljust(48), "1460": 2, "1459": 1, "1458": 0, "1457": 1, "1476": 1},
    {"3211": "vks-prod-nativeha-mq-ibm-mq-2".ljust(48), "1460": 2, "1459": 1, "1458": 0, "1457": 1, "1476": 1},
]


@pytest.fixture
def pcf_mq(monkeypatch):
    """The stand-in ``ibmmq`` module (tests/fakes/ibmmq) in place of IBM's."""
    monkeypatch.setitem(sys.modules, "ibmmq", fake_ibmmq)
    fake_ibmmq.reset()
    yield fake_ibmmq
    fake_ibmmq.reset()


def pcf_scenario(mq, **scenario):
    mq.SCENARIO = {"qmgr": "QM1", "qmgr_attrs": {"31": 942}, **scenario}
    settings = IbmmqSettings.model_validate({"enabled": True, "queue_managers": [
        {"name": "QM1", "backend": "pcf", "channel": "MONITOR.SVRCONN", "conn_name": "mqhost(1414)",
         "statistics": "off"}]})
    return IbmmqCollector(settings, Context())


def test_pcf_back_end_reads_native_ha_as_runmqsc_does(pcf_mq):
    """Before this change the PCF back-end asked nothing about Native HA: ``native_ha`` stayed None."""
    backend = pcf.PcfBackend("QM1", "MONITOR.SVRCONN", "mqhost(1414)")
    pcf_mq.SCENARIO = {"qmgr": "QM1", "qmgr_attrs": {"31": 942}, "native_ha": PCF_NHA}
    snap = backend.snapshot()
    backend.close()
    assert snap.native_ha == nha_capture() and snap.source_errors == {}
    asked = [c[2] for c in pcf_mq.CALLS if c[0] == "pcf" and c[1] == 161]
    assert {1445: 1447, 1229: [1009]} in asked  # MQIACF_Q_MGR_STATUS_INFO_TYPE = _INFO_NHA, all attributes
    # INVENTED out-of-sync replica: not in sync, 52428 KB behind, no active connections, SYNCHRONIZING
    out = [*PCF_NHA[:2], {**PCF_NHA[2], "1459": 0, "1458": 52428, "1457": 0, "1476": 3}]
    c = pcf_scenario(pcf_mq, native_ha=out)
    samples, batch = collect(c)
    r2 = "vks-prod-nativeha-mq-ibm-mq-2"
    assert v(samples, "middleware_ibmmq_nha_in_sync", qmgr="QM1", nha=r2) == 0
    assert v(samples, "middleware_ibmmq_nha_backlog_bytes", qmgr="QM1", nha=r2) == 52428 * 1024
    assert v(samples, "middleware_ibmmq_nha_connected", qmgr="QM1", nha=r2) == 0
    assert v(samples, "middleware_ibmmq_nha_status", qmgr="QM1", nha=r2) == 3
    assert v(samples, "middleware_ibmmq_nha_role", qmgr="QM1", nha="vks-prod-nativeha-mq-ibm-mq-1") == 2
    assert batch.reports.targets["QM1"].sources["nativeha"].ok
    c.close()


def test_pcf_back_end_without_native_ha_has_no_series_and_no_error(pcf_mq):
    c = pcf_scenario(pcf_mq)  # no native_ha: MQRCCF_NHA_NOT_AVAILABLE
    samples, batch = collect(c)
    assert batch.errors == {} and not any(n.startswith("middleware_ibmmq_nha_") for n in names(samples))
    assert "nativeha" not in batch.reports.targets["QM1"].sources
    c.close()
    pcf_mq.reset()
    c = pcf_scenario(pcf_mq, qmgr_attrs={"31": 915}, native_ha_error=3008)  # 9.1.5: not asked, so no error either
    samples, batch = collect(c)
    assert "nativeha" not in batch.reports.targets["QM1"].sources
    assert not [call for call in pcf_mq.CALLS if call[0] == "pcf" and 1445 in call[2]]
    c.close()
    pcf_mq.reset()
    c = pcf_scenario(pcf_mq, native_ha_error=2035)  # not authorised: says nothing about Native HA
    samples, batch = collect(c)
    source = batch.reports.targets["QM1"].sources["nativeha"]
    assert not source.ok and "MQRC 2035" in source.error
    assert v(samples, "middleware_ibmmq_backend_success", qmgr="QM1", backend="pcf") == 1  # the rest stands
    c.close()
    pcf_mq.reset()
    # INVENTED: the queue manager status names a Native HA instance, yet no instance answers
    c = pcf_scenario(pcf_mq, qmgr_status={"3211": "qm1-ibm-mq-0".ljust(48)}, native_ha=[])
    samples, batch = collect(c)
    assert "names a Native HA instance" in batch.reports.targets["QM1"].sources["nativeha"].error
    c.close()


def test_nha_code_tables_match_ibm_constants(ibmmq_module):  # noqa: F811 - the fixture imported above
    from ibmmq import CMQCFC

    for word, code in NHA_ROLE_CODES.items():
        assert getattr(CMQCFC, f"MQNHAROLE_{word}") == code
    for word, code in NHA_STATUS_CODES.items():
        assert getattr(CMQCFC, f"MQNHASTATUS_{'DISK_FULL' if word == 'DISKFULL' else word}") == code
    assert pcf.MQRCCF_NHA_NOT_AVAILABLE == CMQCFC.MQRCCF_NHA_NOT_AVAILABLE
    assert (CMQCFC.MQNHAINSYNC_YES, CMQCFC.MQNHACONNACTV_YES, CMQCFC.MQNHABACKLOG_UNKNOWN) == (1, 1, -1)
