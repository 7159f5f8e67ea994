"""Genuine published IBM MQ output (tests/systems/ibmmq/fixtures/real/, described file by file in its SOURCE.md): one
test per file asserting what a human reads in it, through the parsers and, where the output is what the runmqsc
back-end would see, through that back-end and the collector with stand-in ``dspmq``/``runmqsc`` scripts that
print the genuine text.

The captures span MQ 7.5.0.2 to 9.4.2: dspmq with and without ``-n`` (upper-case vs translated states), with
``-x`` (instance lines) and ``-o all``/``-o standby``/``-o nativeha``, runmqsc with old (``AMQ8409:``) and 9.x
(``AMQ8705I:``) message ids.
"""

from __future__ import annotations

import os
import stat
from datetime import datetime
from pathlib import Path

import pytest

from exporter.core.collector import Context
from exporter.systems.ibmmq.collector import IbmmqCollector
from exporter.systems.ibmmq.model import ChannelState, QmgrSnapshot, QueueStatus
from exporter.systems.ibmmq.parse import (
    CHSTATUS_ID,
    DspmqRecord,
    channel_status_from_mqsc,
    channels_from_mqsc,
    parse_dspmq,
    parse_dspmq_records,
    parse_mqsc,
    queues_from_mqsc,
    read_mqsc,
)
from exporter.systems.ibmmq.runmqsc import RunmqscBackend
from exporter.systems.ibmmq.settings import IbmmqSettings
from exporter.systems.ibmmq.states import ROLES, qmgr_state, role_from_native_ha

from ...support import collect

REAL = Path(__file__).parent / "fixtures" / "real"
COVERED: set[str] = set()  # files a test below reads; test_every_genuine_file_has_a_test checks them all


def real(name: str) -> str:
    COVERED.add(name)
    return (REAL / name).read_text()


def records(name: str) -> list[DspmqRecord]:
    return parse_dspmq_records(real(name))


def summary(record: DspmqRecord) -> tuple[str, str | None, int, str]:
    """(queue manager, STATUS as printed, ibmmq_qmgr_status, HA role)."""
    return record.qmgr, record.status, record.state.status, record.role


class StandIns:
    """Stand-in ``dspmq`` and ``runmqsc`` that print genuine output, whatever they are asked."""

    def __init__(self, tmp_path: Path, dspmq: str, runmqsc: str | None = None) -> None:
        self.dir = tmp_path
        self.dspmq = self._script("dspmq", dspmq)
        self.runmqsc_ran = tmp_path / "runmqsc.ran"
        self.runmqsc = self._script("runmqsc", runmqsc if runmqsc is not None else "", ran=True)

    def _script(self, name: str, output: str, ran: bool = False) -> str:
        out = self.dir / f"{name}.out"
        out.write_text(output)
        script = self.dir / name
        mark = f"touch '{self.runmqsc_ran}'\ncat > /dev/null\n" if ran else ""
        script.write_text(f"#!/bin/sh\n{mark}cat '{out}'\n")
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
        return str(script)

    def backend(self, qmgr: str) -> RunmqscBackend:
        return RunmqscBackend(qmgr, runmqsc=self.runmqsc, dspmq=self.dspmq, timeout=10.0)

    def metrics(self, qmgr: str) -> dict:
        settings = IbmmqSettings.model_validate({"enabled": True, "queue_managers": [
            {"name": qmgr, "backend": "runmqsc", "runmqsc": self.runmqsc, "dspmq": self.dspmq, "timeout": "10s",
             "exclude": []}]})
        samples, batch = collect(IbmmqCollector(settings, Context()))
        assert batch.errors == {}, batch.errors
        return samples


def value(samples: dict, name: str, /, **labels: str) -> float:
    return samples[(name, tuple(sorted(labels.items())))]


def role_of(samples: dict, qmgr: str) -> str:
    current = [r for r in ROLES if value(samples, "middleware_ibmmq_qmgr_ha_role", qmgr=qmgr, role=r) == 1]
    assert len(current) == 1, current
    return current[0]


def status_and_role(samples: dict, qmgr: str) -> tuple[float, str]:
    return value(samples, "ibmmq_qmgr_status", qmgr=qmgr), role_of(samples, qmgr)


# ---- dspmq: multi-instance (mqfellow, MQ 9.1, translated strings) ------------------------------------------------

def test_mi_active_node_9_1(tmp_path):
    name = "dspmq_mi_active_node_9.1.txt"
    assert [summary(r) for r in records(name)] == [("PSAP", "Running", 2, "active")]
    mq = StandIns(tmp_path, real(name), real("runmqsc_qlocal_qstatus_checkmk.txt"))
    assert status_and_role(mq.metrics("PSAP"), "PSAP") == (2, "active")
    assert mq.runmqsc_ran.exists()  # running here: its queues are read


def test_mi_running_elsewhere_9_1(tmp_path):
    # Active on the other host, no standby instance started here yet: served elsewhere, not down.
    name = "dspmq_mi_running_elsewhere_9.1.txt"
    assert [summary(r) for r in records(name)] == [("PSAP", "Running elsewhere", 4, "standby")]
    mq = StandIns(tmp_path, real(name))
    assert mq.backend("PSAP").snapshot() == QmgrSnapshot("PSAP", "RUNNING ELSEWHERE")
    assert status_and_role(mq.metrics("PSAP"), "PSAP") == (4, "standby")
    assert not mq.runmqsc_ran.exists()


def test_mi_pair_with_standby_9_1():
    (psap,) = records("dspmq_x_o_standby_mi_pair_9.1.txt")
    assert psap.qmgr == "PSAP" and psap.fields == {"STANDBY": "Permitted"}
    assert psap.instances == [("ip-172-31-23-68.ec2.internal", "Active"), ("ip-172-31-67-58.ec2.internal", "Standby")]
    assert psap.status is None and psap.state.name == "UNKNOWN"  # -o standby prints no STATUS


def test_mi_after_switchover_9_1():
    (psap,) = records("dspmq_x_o_standby_mi_after_switchover_9.1.txt")
    assert (psap.qmgr, psap.fields["STANDBY"]) == ("PSAP", "Permitted")
    assert psap.instances == [("ip-172-31-67-58.ec2.internal", "Active")]  # no standby until strmqm -x again


# ---- dspmq -o all -x -n (Checkmk's agent plugin; upper-case states) --------------------------------------------

def test_mixed_estate_checkmk(tmp_path):
    name = "dspmq_o_all_x_n_mixed_checkmk.txt"
    got = records(name)
    assert [summary(r) for r in got] == [
        ("THE.LOCAL.ONE", "RUNNING", 2, "active"),
        ("THE.MULTI.INSTANCE.ONE", "RUNNING", 2, "active"),
        ("THE.RDQM.ONE", "RUNNING", 2, "active"),
        ("THE.SLEEPING.ONE", "ENDED NORMALLY", 0, "none"),
        ("THE.CRASHED.ONE", "ENDED UNEXPECTEDLY", 0, "none"),
    ]
    assert [r.instances for r in got] == [[("sb112233", "ACTIVE")], [("sb112233", "ACTIVE"), ("sb112255", "STANDBY")],
                                          [("sb008877", "ACTIVE")], [], []]
    assert [r.fields["HA"] for r in got] == ["", "", "REPLICATED", "", ""]
    assert [r.fields["INSTVER"] for r in got] == ["8.0.0.6", "8.0.0.6", "9.1.0.4", "7.5.0.1", "9.0.0.6"]
    assert got[1].fields["STANDBY"] == "PERMITTED"
    # each queue manager through the back-end: the stand-in prints all five, the back-end picks its own
    mq = StandIns(tmp_path, real(name), real("runmqsc_qlocal_qstatus_checkmk.txt"))
    assert mq.backend("THE.CRASHED.ONE").snapshot() == QmgrSnapshot("THE.CRASHED.ONE", "ENDED UNEXPECTEDLY")
    assert mq.backend("THE.SLEEPING.ONE").snapshot() == QmgrSnapshot("THE.SLEEPING.ONE", "ENDED NORMALLY")
    assert not mq.runmqsc_ran.exists()
    assert mq.backend("THE.RDQM.ONE").snapshot().status == "RUNNING"
    assert status_and_role(mq.metrics("THE.CRASHED.ONE"), "THE.CRASHED.ONE") == (0, "none")


def test_rdqm_secondary_running_elsewhere_checkmk(tmp_path):
    name = "dspmq_o_all_x_n_rdqm_running_elsewhere_checkmk.txt"
    got = records(name)
    assert [summary(r) for r in got] == [("THE.RDQM.ONE", "RUNNING", 2, "active"),
                                         ("THE.STANDBY.RDQM", "RUNNING ELSEWHERE", 4, "standby")]
    assert [(r.fields["HA"], r.instances) for r in got] == [("REPLICATED", [("sb008877", "ACTIVE")]),
                                                           ("REPLICATED", [])]
    mq = StandIns(tmp_path, real(name))
    assert status_and_role(mq.metrics("THE.STANDBY.RDQM"), "THE.STANDBY.RDQM") == (4, "standby")
    assert not mq.runmqsc_ran.exists()


def test_ended_preemptively_7_5_0_2_checkmk():
    (ended,) = records("dspmq_o_all_x_n_ended_preemptively_7.5.0.2_checkmk.txt")
    assert summary(ended) == ("THE.ENDED.ONE", "ENDED PREEMPTIVELY", 0, "none")
    assert (ended.state.name, ended.fields["INSTVER"]) == ("ENDED PREEMPTIVELY", "7.5.0.2")


def test_ended_pre_emptively_8_0_0_1_checkmk(tmp_path):
    name = "dspmq_o_all_x_n_ended_pre-emptively_8.0.0.1_checkmk.txt"
    (ended,) = records(name)
    assert summary(ended) == ("THE.ENDED.ONE", "ENDED PRE-EMPTIVELY", 0, "none")
    # the 8.0 spelling is the same state as the 7.5 one
    assert ended.state is records("dspmq_o_all_x_n_ended_preemptively_7.5.0.2_checkmk.txt")[0].state
    assert StandIns(tmp_path, real(name)).backend("THE.ENDED.ONE").snapshot().status == "ENDED PREEMPTIVELY"


def test_mi_active_8_0_0_5_checkmk(tmp_path):
    name = "dspmq_o_all_x_n_mi_active_8.0.0.5_checkmk.txt"
    (qm,) = records(name)
    assert summary(qm) == ("QMIMIQ11", "RUNNING", 2, "active")
    assert qm.instances == [("iasv0001", "Active"), ("tasv0397", "Standby")]  # -n leaves MODE mixed case
    assert qm.fields["STANDBY"] == "PERMITTED"
    mq = StandIns(tmp_path, real(name), real("runmqsc_chstatus_svrconn_two_instances_checkmk.txt"))
    assert status_and_role(mq.metrics("QMIMIQ11"), "QMIMIQ11") == (2, "active")


def test_running_as_standby_8_0_0_5_checkmk(tmp_path):
    # The same queue manager seen from the standby host: healthy, not down.
    name = "dspmq_o_all_x_n_running_as_standby_8.0.0.5_checkmk.txt"
    (qm,) = records(name)
    assert summary(qm) == ("QMIMIQ11", "RUNNING AS STANDBY", 4, "standby")
    assert qm.instances == [("iasv0001", "Active"), ("tasv0397", "Standby")]
    mq = StandIns(tmp_path, real(name))
    assert mq.backend("QMIMIQ11").snapshot() == QmgrSnapshot("QMIMIQ11", "RUNNING AS STANDBY")
    assert status_and_role(mq.metrics("QMIMIQ11"), "QMIMIQ11") == (4, "standby")
    assert not mq.runmqsc_ran.exists()


def test_ended_immediately_8_0_0_4_checkmk(tmp_path):
    name = "dspmq_o_all_x_n_ended_immediately_8.0.0.4_checkmk.txt"
    got = records(name)
    assert [summary(r) for r in got] == [("QMTEMQS02A", "ENDED IMMEDIATELY", 0, "none"),
                                         ("QMTEMQS02", "RUNNING", 2, "active")]
    assert [r.instances for r in got] == [[], [("tasv0065", "Active")]]
    assert [r.fields["STANDBY"] for r in got] == ["NOT APPLICABLE", "NOT PERMITTED"]
    mq = StandIns(tmp_path, real(name))
    assert status_and_role(mq.metrics("QMTEMQS02A"), "QMTEMQS02A") == (0, "none")
    # "Ended immediately" is not "Ending immediately" (a running queue manager on its way down: 3)
    assert qmgr_state("ENDING IMMEDIATELY").status == 3


# ---- dspmq 9.4.2 (instana) ------------------------------------------------------------------------------------

def test_single_instance_9_4_2(tmp_path):
    name = "dspmq_x_o_all_9.4.2_single_instance.txt"
    (qm,) = records(name)
    assert summary(qm) == ("QM1", "Running", 2, "active")
    assert qm.instances == [("ibmmq1.fyre.ibm.com", "Active")]
    assert (qm.fields["ROLE"], qm.fields["GRPROLE"], qm.fields["INSTANCE"], qm.fields["QUORUM"]) == (
        "Not configured", "Not configured", "", "")
    assert role_from_native_ha(qm.fields["ROLE"]) is None  # not Native HA
    assert (qm.fields["STANDBY"], qm.fields["INSTVER"]) == ("Not permitted", "9.4.2.0")
    mq = StandIns(tmp_path, real(name), real("runmqsc_display_chstatus_all_svrconn_9.4.2.txt"))
    samples = mq.metrics("QM1")
    assert status_and_role(samples, "QM1") == (2, "active")
    # SYSTEM.* channels are left out by default (channels_exclude), as SYSTEM.* queues are
    assert not any(name.startswith("ibmmq_channel_") for name, _ in samples)
    assert value(samples, "middleware_ibmmq_channels_excluded", qmgr="QM1") == 1


# ---- dspmq, Native HA (IBM documentation examples copied in a public lab) -------------------------------------

def test_native_ha_status_examples(tmp_path):
    name = "dspmq_nativeha_status_examples_lab.txt"
    got = records(name)
    assert [summary(r) for r in got] == [
        ("mq05ha", "Running", 2, "active"),  # the active pod
        ("mq05ha", "Replica", 4, "replica"),  # a healthy replica: not down
        ("mq05ha", "Ended Immediately", 0, "none"),  # an instance that is not running
        ("mq05ha", "Negotiating", 1, "unknown"),  # during an election
    ]
    # each pod's dspmq prints its own line; upper case as with -n
    lines = real(name).splitlines(keepends=True)
    for line, want in zip(lines[1:], [(4, "replica"), (0, "none"), (1, "unknown")], strict=True):
        for text in (line, line.upper().replace("QMNAME(MQ05HA)", "QMNAME(mq05ha)")):
            mq = StandIns(tmp_path, text)
            assert status_and_role(mq.metrics("mq05ha"), "mq05ha") == want, text
            assert not mq.runmqsc_ran.exists()


def test_native_ha_roles():
    got = records("dspmq_o_nativeha_examples_lab.txt")
    assert [(r.qmgr, r.fields["ROLE"], r.role, r.fields["INSTANCE"], r.fields["INSYNC"], r.fields["QUORUM"])
            for r in got] == [
        ("mq05ha", "Active", "active", "inst1", "Yes", "3/3"),
        ("mq05ha", "Replica", "replica", "inst2", "Yes", "2/3"),
        ("mq05ha", "Unknown", "unknown", "inst3", "no", "0/3"),
    ]
    assert all(r.status is None for r in got)  # -o nativeha prints no STATUS


# ---- runmqsc -----------------------------------------------------------------------------------------------------

def test_qlocal_and_qstatus_checkmk(tmp_path):
    # The first line is the Checkmk plugin's `dspmq -n` header; the rest is runmqsc -e output (MQ 8.0 era).
    name = "runmqsc_qlocal_qstatus_checkmk.txt"
    text = real(name)
    blocks, errors = parse_mqsc(text)
    assert errors == []
    status = [b for b in blocks if b["TYPE"] == "QUEUE"]
    assert [(b["QUEUE"], b["LGETDATE"], b["LGETTIME"], b["QTIME"], b["MONQ"]) for b in status] == [
        ("MY.QUEUE.ONE", "", "", ",", "MEDIUM"),  # blank LGETDATE( ), QTIME( , ): never got from
        ("MY.QUEUE.TWO", "2017-03-09", "08.49.13", "999999999, 999999999", "MEDIUM"),  # QTIME at its maximum
    ]
    # issue 28: MONQ(MEDIUM) and the last get (the queue manager's local time, naive) are kept; QTIME( , ) is "no
    # data": None, never 0; issue 39: QTIME(999999999, 999999999) is the display maximum, kept ("at least")
    assert queues_from_mqsc(blocks) == [
        QueueStatus("MY.QUEUE.ONE", depth=0, max_depth=5000, oldest_message_age=0.0, monitoring="MEDIUM"),
        QueueStatus("MY.QUEUE.TWO", depth=1400, max_depth=200000, oldest_message_age=2201.0, open_input=5,
                    open_output=0, last_get=datetime(2017, 3, 9, 8, 49, 13), qtime_short=999999999,
                    qtime_long=999999999, monitoring="MEDIUM"),
    ]
    assert parse_dspmq(text.splitlines()[0]) == {"MY.TEST": "RUNNING"}
    mq = StandIns(tmp_path, text.splitlines()[0] + "\n", text)
    samples = mq.metrics("MY.TEST")
    two = {"qmgr": "MY.TEST", "queue": "MY.QUEUE.TWO"}
    one = {"qmgr": "MY.TEST", "queue": "MY.QUEUE.ONE"}
    assert status_and_role(samples, "MY.TEST") == (2, "active")
    assert value(samples, "ibmmq_queue_depth", **two) == 1400
    assert value(samples, "ibmmq_queue_attribute_max_depth", **two) == 200000
    assert value(samples, "ibmmq_queue_depth_ratio", **two) == pytest.approx(0.007)
    assert value(samples, "ibmmq_queue_oldest_message_age", **two) == 2201
    assert value(samples, "ibmmq_queue_input_handles", **two) == 5
    assert value(samples, "ibmmq_queue_output_handles", **two) == 0
    assert value(samples, "ibmmq_queue_depth", **one) == 0
    assert value(samples, "ibmmq_queue_attribute_max_depth", **one) == 5000
    assert value(samples, "ibmmq_queue_oldest_message_age", **one) == 0
    assert ("ibmmq_queue_input_handles", tuple(sorted(one.items()))) not in samples  # not displayed for ONE
    assert value(samples, "middleware_ibmmq_queues", qmgr="MY.TEST") == 2


def test_sender_channels_retrying_checkmk(tmp_path):
    name = "runmqsc_channel_chstatus_retrying_checkmk.txt"
    text = real(name)
    blocks, errors = parse_mqsc(text)
    assert errors == []
    defined = [b for b in blocks if "STATUS" not in b]
    assert [(b["CHANNEL"], b["CHLTYPE"], b["XMITQ"]) for b in defined] == [
        ("HERE.TO.THERE.ONE", "SDR", "HERE.TO.THERE.ONE.XMIT"), ("HERE.TO.THERE.TWO", "SDR", "HERE.TO.THERE.TWO.XMIT"),
        ("SYSTEM.DEF.SENDER", "SDR", "")]
    two = "55.888.222.333(1414),22,333.444.555(1414)"
    one = "62.240.197.243(1414),62.240.197.244(1414)"
    # SDR is mq_prometheus's SENDER; SUBSTATE(MQGET) on ONE only; MONCHL(OFF): the XQTIME(0,1) and XBATCHSZ(0,0)
    # printed were not measured (issue 39 item 3: None, never 0)
    assert channels_from_mqsc(blocks) == [
        ChannelState("HERE.TO.THERE.TWO", "RETRYING", "SENDER", two, monitoring="OFF", instance_type="CURRENT"),
        ChannelState("HERE.TO.THERE.ONE", "RETRYING", "SENDER", one, substate="MQGET", monitoring="OFF",
                     instance_type="CURRENT")]
    assert [b["SUBSTATE"] for b in blocks if "STATUS" in b] == ["", "MQGET"]
    mq = StandIns(tmp_path, text.splitlines()[0] + "\n", text)
    samples = mq.metrics("MY.TEST")
    for channel, conn in (("HERE.TO.THERE.ONE", one), ("HERE.TO.THERE.TWO", two)):
        labels = {"qmgr": "MY.TEST", "channel": channel, "type": "SENDER", "connname": conn, "rqmname": "",
                  "jobname": ""}
        assert value(samples, "ibmmq_channel_status", **labels) == 5  # retrying
        assert value(samples, "ibmmq_channel_status_squash", **labels) == 1  # a warning, not stopped
    # a channel that is only defined has no status: with show_inactive_channels (default on) it is reported as
    # inactive (0, squash 0: not a stopped channel, MiddlewareMqChannelNotRunning leaves it out) - but SYSTEM.*
    # channels are excluded by default
    assert not any(dict(labels).get("channel") == "SYSTEM.DEF.SENDER" for _, labels in samples)
    assert value(samples, "middleware_ibmmq_queues", qmgr="MY.TEST") == 0


def test_svrconn_with_two_instances_checkmk(tmp_path):
    name = "runmqsc_chstatus_svrconn_two_instances_checkmk.txt"
    text = real(name)
    blocks, errors = parse_mqsc(text)  # ends with the odd "One MQSC commands read."
    assert errors == [] and len(blocks) == 2
    assert channels_from_mqsc(blocks) == [
        ChannelState("XXXXXX.IIB.SVRCONN", "RUNNING", "SVRCONN", "10.25.19.182", substate="RECEIVE",
                     instance_type="CURRENT"),
        ChannelState("XXXXXX.IIB.SVRCONN", "RUNNING", "SVRCONN", "10.25.19.183", substate="RECEIVE",
                     instance_type="CURRENT"),
    ]
    mq = StandIns(tmp_path, text.splitlines()[0] + "\n", text)
    samples = mq.metrics("MY.TEST")
    series = {dict(labels)["connname"]: v for (metric, labels), v in samples.items()
              if metric == "ibmmq_channel_status"}
    assert series == {"10.25.19.182": 3, "10.25.19.183": 3}  # one series per instance, both running
    # mq_prometheus's cur_inst: the count of status records of the channel, on each of its series
    assert {dict(labels)["connname"]: v for (metric, labels), v in samples.items()
            if metric == "ibmmq_channel_cur_inst"} == {"10.25.19.182": 2, "10.25.19.183": 2}


def test_chstatus_all_svrconn_9_4_2():
    blocks, errors = parse_mqsc(real("runmqsc_display_chstatus_all_svrconn_9.4.2.txt"))
    assert errors == []  # AMQ8417I starts a block; the echoed command and the summary are skipped
    (block,) = blocks
    assert (block["CHANNEL"], block["CHLTYPE"], block["STATUS"], block["SUBSTATE"], block["CONNAME"]) == (
        "SYSTEM.ADMIN.SVRCONN", "SVRCONN", "RUNNING", "RECEIVE", "9.38.73.124")
    assert (block["MSGS"], block["RAPPLTAG"], block["LOCLADDR"], block["MCAUSER"], block["CURRENT"]) == (
        "19218", "org.apache.karaf.main.Main", "9.30.219.53(1415)", "root", "")
    assert (block["SSLPEER"], block["RVERSION"], block["RPRODUCT"]) == ("", "09040005", "MQJB")
    assert channels_from_mqsc(blocks) == [ChannelState(
        "SYSTEM.ADMIN.SVRCONN", "RUNNING", "SVRCONN", "9.38.73.124", substate="RECEIVE", messages=19218,
        bytes_sent=27846476, bytes_received=2507796, buffers_sent=19274, buffers_received=19240,
        last_message=datetime(2025, 5, 12, 6, 31, 24), started=datetime(2025, 5, 12, 5, 54, 1),
        job_name="0000253C00000003", sharing_conversations=10, monitoring="OFF", instance_type="CURRENT",
        security_protocol="NONE")]


def test_chstatus_all_not_found_9_4_2():
    """No channel has a status: ``AMQ8420I`` is the whole answer, an empty one (runmqsc exits 10), not a failure."""
    text = real("runmqsc_display_chstatus_all_not_found_9.4.2.txt")
    blocks, errors = parse_mqsc(text)
    assert (blocks, errors) == ([], ["AMQ8420I: Channel Status not found."])
    answer = channel_status_from_mqsc(read_mqsc(text, track=(CHSTATUS_ID,)))
    assert (answer.channels, answer.error) == ([], None)


def test_qmstatus_all_9_4_2():
    blocks, errors = parse_mqsc(real("runmqsc_display_qmstatus_all_9.4.2.txt"))
    assert errors == []  # AMQ8705I starts the block
    (block,) = blocks
    assert (block["QMNAME"], block["STATUS"], block["CHINIT"], block["CMDSERV"], block["CONNS"]) == (
        "QM1", "RUNNING", "RUNNING", "RUNNING", "44")
    assert (block["GRPROLE"], block["STANDBY"], block["INSTANCE"], block["QUORUM"]) == ("NOTCONFIG", "NOPERMIT",
                                                                                         "", "")
    assert (block["DISKLSN"], block["LOGSTRTI"], block["LOGPATH"]) == ("<0:0:79:38170>", "04:05:21",
                                                                        "/var/mqm/log/QM1/active/")
    assert (qmgr_state(block["STATUS"]).status, qmgr_state(block["STATUS"]).role) == (2, "active")
    assert queues_from_mqsc(blocks) == [] and channels_from_mqsc(blocks) == []


def test_health_captures_9_4_2_through_the_runmqsc_back_end(tmp_path):
    """Issue 28: the queue-activity, channel-definition, sender-status, QMSTATUS, QMGR and LSSTATUS captures in one
    runmqsc session, read by the runmqsc back-end and the collector to the figures the health alerts use."""
    names = ("runmqsc_dis_qstatus_monq_off_curfsize_devserver_2021.txt",
             "runmqsc_chstatus_sender_running_default_fields.txt", "runmqsc_display_channel_all_maxinst_9.4.2.txt",
             "runmqsc_display_qmstatus_all_9.4.2.txt", "runmqsc_display_qmgr_all_9.4.2.txt")
    text = "".join(real(name) for name in names)  # each capture ends with a line break
    listeners, errors = parse_mqsc(real("runmqsc_display_lsstatus_all_9.4.2.txt"))
    assert errors == []
    # two listeners running; a listener block is neither a queue nor a channel
    assert [(b["LISTENER"], b["STATUS"], b["PORT"]) for b in listeners] == [
        ("DEV.LISTENER.TCP", "RUNNING", "1414"), ("SYSTEM.ADMIN.LISTENER", "RUNNING", "1415")]
    assert queues_from_mqsc(listeners) == [] and channels_from_mqsc(listeners) == []
    mq = StandIns(tmp_path, "QMNAME(QM1)".ljust(58) + "STATUS(Running)\n", text)
    samples = mq.metrics("QM1")
    qm = {"qmgr": "QM1"}
    # DISPLAY QMSTATUS ALL: CMDSERV(RUNNING), CHINIT(RUNNING), CONNS(44), LOGINUSE(13), LOGUTIL(13), QMFSUSE(11),
    # QMFSSZ(253824) MB; LOGFSSZ(SHARED): no separate log file system
    assert value(samples, "ibmmq_qmgr_command_server_status", **qm) == 2
    assert value(samples, "ibmmq_qmgr_channel_initiator_status", **qm) == 2
    assert value(samples, "ibmmq_qmgr_connection_count", **qm) == 44
    assert value(samples, "middleware_ibmmq_qmgr_log_in_use_percent", **qm) == 13
    assert value(samples, "middleware_ibmmq_qmgr_log_utilization_percent", **qm) == 13
    assert value(samples, "middleware_ibmmq_qmgr_file_system_in_use_percent", **qm) == 11
    assert value(samples, "middleware_ibmmq_qmgr_file_system_size_bytes", **qm) == 253824 * 1048576
    assert not any(m == "middleware_ibmmq_qmgr_log_file_system_size_bytes" for m, _ in samples)
    # DISPLAY QMGR ALL: the dead-letter queue the DLQ alert joins on, MAXHANDS(256)
    assert value(samples, "middleware_ibmmq_qmgr_info", qmgr="QM1", version="09040200", cmdlevel="942",
                 qmid="QM1_2025-04-22_03.01.05", platform="UNIX", dlq="DEV.DEAD.LETTER.QUEUE") == 1
    assert value(samples, "middleware_ibmmq_qmgr_max_handles", **qm) == 256
    # the sender's status record: SDR -> SENDER, RUNNING (3), SUBSTATE(MQGET) (1600), RQMNAME(CRC01CMM)
    sender = {"qmgr": "QM1", "channel": "CRC01CRD.A.CRC01CMM", "type": "SENDER", "connname": "192.168.1.110(1416)",
              "rqmname": "CRC01CMM", "jobname": ""}
    assert value(samples, "ibmmq_channel_status", **sender) == 3
    assert value(samples, "ibmmq_channel_status_squash", **sender) == 2
    assert value(samples, "ibmmq_channel_substate", **sender) == 1600
    assert value(samples, "ibmmq_channel_cur_inst", **sender) == 1
    # DISPLAY CHANNEL(*) ALL: DEV.APP.SVRCONN is defined without status: inactive (0, squash 0), no instance, its
    # MAXINST left at the default 999999999 (the MAXINST alert's ratio is then ~0); SYSTEM.* excluded by default
    inactive = {"qmgr": "QM1", "channel": "DEV.APP.SVRCONN", "type": "SVRCONN", "connname": "", "rqmname": "",
                "jobname": ""}
    assert value(samples, "ibmmq_channel_status", **inactive) == 0
    assert value(samples, "ibmmq_channel_status_squash", **inactive) == 0
    assert value(samples, "ibmmq_channel_cur_inst", **inactive) == 0
    assert value(samples, "ibmmq_channel_attribute_max_inst", **inactive) == 999999999
    assert value(samples, "ibmmq_channel_attribute_max_instc", **inactive) == 999999999
    assert not any(dict(labels).get("channel", "").startswith("SYSTEM.") for _, labels in samples)
    # DIS QSTATUS: DEV.QUEUE.1, MONQ(OFF): monitoring 0 and no age (not 0), CURFSIZE(1), CURMAXFS(2088960), UNCOM(NO)
    q = {"qmgr": "QM1", "queue": "DEV.QUEUE.1"}
    assert value(samples, "ibmmq_queue_depth", **q) == 1
    assert value(samples, "middleware_ibmmq_queue_monitoring_enabled", **q) == 0
    assert ("ibmmq_queue_oldest_message_age", tuple(sorted(q.items()))) not in samples
    assert value(samples, "ibmmq_queue_qfile_current_size", **q) == 1
    assert value(samples, "ibmmq_queue_qfile_max_size", **q) == 2088960
    assert value(samples, "ibmmq_queue_uncommitted_messages", **q) == 0


@pytest.mark.skipif(not os.environ.get("MWE_TEST_MQ_QMGR"),
                    reason="set MWE_TEST_MQ_QMGR and MWE_TEST_MQ_URL (rest), MWE_TEST_MQ_CONNAME and "
                           "MWE_TEST_MQ_CHANNEL (pcf) or MWE_TEST_MQ_RUNMQSC=1 (runmqsc on this host), plus "
                           "MWE_TEST_MQ_USER/MWE_TEST_MQ_PASSWORD, to read a real queue manager (not run here)")
def test_real_queue_manager_health_figures():
    """Opt-in: every issue-28 figure from a real queue manager (a developer image such as icr.io/ibm-messaging/mq
    has DEV.* queues and channels, MONQ(OFF) by default)."""
    entry: dict = {"name": os.environ["MWE_TEST_MQ_QMGR"], "username": os.environ.get("MWE_TEST_MQ_USER"),
                   "password_env": "MWE_TEST_MQ_PASSWORD" if os.environ.get("MWE_TEST_MQ_PASSWORD") else None}
    if os.environ.get("MWE_TEST_MQ_URL"):
        entry.update(backend="rest", url=os.environ["MWE_TEST_MQ_URL"],
                     verify_tls=not os.environ.get("MWE_TEST_MQ_INSECURE"))
    elif os.environ.get("MWE_TEST_MQ_RUNMQSC"):
        entry.update(backend="runmqsc")
    else:
        entry.update(backend="pcf", conn_name=os.environ["MWE_TEST_MQ_CONNAME"],
                     channel=os.environ["MWE_TEST_MQ_CHANNEL"])
    settings = IbmmqSettings.model_validate({"enabled": True, "queue_managers": [entry]})
    samples, batch = collect(IbmmqCollector(settings, Context()))
    assert not batch.errors, batch.errors
    names = {metric for metric, _ in samples}
    qm = {"qmgr": entry["name"]}
    assert value(samples, "ibmmq_qmgr_status", **qm) == 2
    # queue manager: command server and channel initiator running (the back-end answered, so for rest/pcf the
    # command server runs), connections, log use, DLQ name in the info labels
    if entry["backend"] != "pcf" or "ibmmq_qmgr_command_server_status" in names:
        assert value(samples, "ibmmq_qmgr_command_server_status", **qm) == 2
        assert value(samples, "ibmmq_qmgr_channel_initiator_status", **qm) in (0, 1, 2, 3, 4)
        assert value(samples, "ibmmq_qmgr_connection_count", **qm) >= 1
        assert 0 <= value(samples, "middleware_ibmmq_qmgr_log_in_use_percent", **qm) <= 1000
        assert "ibmmq_qmgr_uptime" in names
    assert any(m == "middleware_ibmmq_qmgr_info" for m in names)
    # queues: depth, handles, usage, monitoring flag, file sizes (9.1.5+); age only where monitoring is on
    for metric in ("ibmmq_queue_depth", "ibmmq_queue_input_handles", "ibmmq_queue_attribute_usage",
                   "middleware_ibmmq_queue_monitoring_enabled", "ibmmq_queue_qfile_current_size",
                   "ibmmq_queue_qfile_max_size"):
        assert metric in names, metric
    off = {labels for (m, labels), v in samples.items() if m == "middleware_ibmmq_queue_monitoring_enabled" and v == 0}
    assert not any(m == "ibmmq_queue_oldest_message_age" and labels in off for m, labels in samples)
    # channels: every defined channel (status, squash, cur_inst, MAXINST) with mq_prometheus's type words
    types = {dict(labels)["type"] for m, labels in samples if m == "ibmmq_channel_status"}
    assert types and types <= {"SENDER", "SERVER", "RECEIVER", "REQUESTER", "SVRCONN", "CLUSSDR", "CLUSRCVR",
                               "AMQP", "MQTT"}, types
    for metric in ("ibmmq_channel_status_squash", "ibmmq_channel_cur_inst", "ibmmq_channel_attribute_max_inst"):
        assert metric in names, metric


# ---- resource-statistics metadata (amqsrua debug trace of a real 9.4.1 queue manager) ------------------------

def test_amqsrua_trace_lists_the_elements_the_exporter_reads():
    """The classes, types, element ids and datatypes the publication generator builds from: the four elements the
    exporter counts are delta counts (datatype 2) with the descriptions it looks for, at the ids mq_prometheus's
    and IBM's sample programs met on that queue manager."""
    from ...fakes.ibmmq.publications import real_metadata

    real("amqsrua_debug_metadata_9.4.1_perf0_cphtestp.txt")
    meta = {c.name: c for c in real_metadata(REAL / "amqsrua_debug_metadata_9.4.1_perf0_cphtestp.txt").values()}
    assert [c for c in meta] == ["CPU", "DISK", "STATMQI", "STATQ", "STATAPP", "NHAREPLICA"]
    types = {(c.name, t.name): t for c in meta.values() for t in c.types.values()}
    assert (meta["STATMQI"].id, types["STATMQI", "PUT"].id, types["STATMQI", "GET"].id) == (2, 3, 4)
    assert (meta["STATQ"].id, types["STATQ", "PUT"].id, types["STATQ", "GET"].id) == (3, 2, 3)
    read = {("STATMQI", "PUT"): "Interval total MQPUT/MQPUT1 count",
            ("STATMQI", "GET"): "Interval total destructive get- count",
            ("STATQ", "PUT"): "MQPUT/MQPUT1 count", ("STATQ", "GET"): "MQGET count"}
    for key, description in read.items():
        element = types[key].elements[0]
        assert (element.description, element.datatype) == (description, 2), key
    assert types["STATQ", "GET"].data_topic == "$SYS/MQ/INFO/QMGR/PERF0/Monitor/STATQ/%s/GET"
    assert types["STATMQI", "PUT"].data_topic == "$SYS/MQ/INFO/QMGR/PERF0/Monitor/STATMQI/PUT"
    assert len(types["STATQ", "GET"].elements) == 17 and len(types["STATMQI", "PUT"].elements) == 11


# ---- the folder ----------------------------------------------------------------------------------------------

def test_every_genuine_file_has_a_test_and_a_source_entry():
    files = {p.name for p in REAL.glob("*.txt")}
    assert len(files) >= 19
    source = (REAL / "SOURCE.md").read_text()
    assert all(f"`{name}`" in source for name in files), sorted(n for n in files if f"`{n}`" not in source)
    # the tests above read every file (run in this module's order, this one last)
    # ... or a test module of their own beside this one names them (issue 39's captures)
    others = "".join(p.read_text() for p in Path(__file__).parent.glob("test_*.py") if p.name != Path(__file__).name)
    missing = {name for name in files - COVERED if name not in others}
    if missing and len(COVERED) < 5:
        pytest.skip("run with the rest of the module to check coverage")
    assert not missing, sorted(missing)
