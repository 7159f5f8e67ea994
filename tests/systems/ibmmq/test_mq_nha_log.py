"""Issue 39, IBM MQ items 5 and 6, on the runmqsc path: Native HA instances (DISPLAY QMSTATUS TYPE(NATIVEHA)) and
the recovery log from the DISK/Log resource publications (amqsrua), through stand-in ``dspmq``/``runmqsc``/
``amqsrua`` scripts printing genuine output (tests/systems/ibmmq/fixtures/real/SOURCE.md), the runmqsc back-end
and the collector.  Out-of-sync and failure shapes are the genuine captures edited line by line here (INVENTED
edits, each said where it is made): no public capture shows a replica out of sync."""

from __future__ import annotations

import time
from pathlib import Path

from exporter.core.collector import Context
from exporter.systems.ibmmq.collector import IbmmqCollector
from exporter.systems.ibmmq.parse import parse_amqsrua, read_mqsc
from exporter.systems.ibmmq.settings import IbmmqSettings

from ...support import collect
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
    amqsrua.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" >> '{calls}'\ncat '{publication}'\nsleep 5\n")
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
