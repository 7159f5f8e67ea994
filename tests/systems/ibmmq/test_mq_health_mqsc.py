"""Issue 28 part A: every figure of the model read through the one MQSC keyword mapping (``mqscmap``), by both
the runmqsc and the REST back-ends.

Each genuine capture in ``tests/systems/ibmmq/fixtures/real/`` (SOURCE.md) is read to the values a person reads off it,
field by field.  The REST answers are built from the same captures' values in an INVENTED JSON shape (lower-case
MQSC keywords; no genuine runCommandJSON answer is public, docs/notes/mq-health-design.md open question 3), so the
REST test checks that both back-ends map the same values to the same model objects.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from pathlib import Path

import pytest

from exporter.systems.ibmmq import mqscmap
from exporter.systems.ibmmq.model import ChannelDefinition, ChannelState, QmgrHealth, QueueStatus
from exporter.systems.ibmmq.parse import (
    channel_definitions_from_mqsc,
    channels_from_mqsc,
    health_from_mqsc,
    parse_mqsc,
    queues_from_mqsc,
)
from exporter.systems.ibmmq.rest import RestBackend

from ...fakes.mqweb import FakeChannel, FakeMqweb, FakeQmgr, FakeQueue
from .test_mq_runmqsc import StandIns

REAL = Path(__file__).parent / "fixtures" / "real"


def blocks(name: str) -> list[dict[str, str]]:
    found, errors = parse_mqsc((REAL / name).read_text())
    assert errors == []
    return found


# --- what a person reads off each capture -------------------------------------------------------------------

SVRCONN_9_4_2 = ChannelState(
    "SYSTEM.ADMIN.SVRCONN", "RUNNING", "SVRCONN", "9.38.73.124", substate="RECEIVE", messages=19218,
    bytes_sent=27846476, bytes_received=2507796, buffers_sent=19274, buffers_received=19240,
    last_message=datetime(2025, 5, 12, 6, 31, 24), started=datetime(2025, 5, 12, 5, 54, 1),
    job_name="0000253C00000003", ssl_cipher="", sharing_conversations=10, monitoring="OFF", instance_type="CURRENT",
    security_protocol="NONE")
# MONCHL(OFF): no XQTIME/NETTIME/XBATCHSZ; a SVRCONN shows no INDOUBT, BATCHES, RQMNAME, SHORTRTS/LONGRTS.

SENDER_DEFAULT = ChannelState("CRC01CRD.A.CRC01CMM", "RUNNING", "SENDER", "192.168.1.110(1416)", substate="MQGET",
                              remote_qmgr="CRC01CMM", instance_type="CURRENT")

# XQTIME(0,1) and XBATCHSZ(0,0) under MONCHL(OFF): printed, never measured - None (issue 39 item 3).
RETRYING_TWO = ChannelState("HERE.TO.THERE.TWO", "RETRYING", "SENDER", "55.888.222.333(1414),22,333.444.555(1414)",
                            monitoring="OFF", instance_type="CURRENT")
RETRYING_ONE = ChannelState("HERE.TO.THERE.ONE", "RETRYING", "SENDER", "62.240.197.243(1414),62.240.197.244(1414)",
                            substate="MQGET", monitoring="OFF", instance_type="CURRENT")
RETRYING_DEFINITIONS = [
    ChannelDefinition("HERE.TO.THERE.ONE", "SENDER", xmit_queue="HERE.TO.THERE.ONE.XMIT"),
    ChannelDefinition("HERE.TO.THERE.TWO", "SENDER", xmit_queue="HERE.TO.THERE.TWO.XMIT"),
    ChannelDefinition("SYSTEM.DEF.SENDER", "SENDER"),
]

_SVRCONN_DEF = {"max_instances": 999999999, "max_instances_per_client": 999999999}
CHANNEL_ALL_9_4_2 = [
    ChannelDefinition("DEV.ADMIN.SVRCONN", "SVRCONN", **_SVRCONN_DEF),
    ChannelDefinition("DEV.APP.SVRCONN", "SVRCONN", **_SVRCONN_DEF),
    ChannelDefinition("SYSTEM.ADMIN.SVRCONN", "SVRCONN", **_SVRCONN_DEF),
    ChannelDefinition("SYSTEM.AUTO.RECEIVER", "RECEIVER", description="Auto-defined by"),
    ChannelDefinition("SYSTEM.AUTO.SVRCONN", "SVRCONN", description="Auto-defined by", **_SVRCONN_DEF),
    ChannelDefinition("SYSTEM.DEF.AMQP", "AMQP", max_instances=999999999),  # AMQP: MAXINST, no MAXINSTC
    ChannelDefinition("SYSTEM.DEF.CLUSRCVR", "CLUSRCVR"),
    ChannelDefinition("SYSTEM.DEF.CLUSSDR", "CLUSSDR"),
    ChannelDefinition("SYSTEM.DEF.RECEIVER", "RECEIVER"),
    ChannelDefinition("SYSTEM.DEF.REQUESTER", "REQUESTER"),
    ChannelDefinition("SYSTEM.DEF.SENDER", "SENDER"),  # XMITQ( )
    ChannelDefinition("SYSTEM.DEF.SERVER", "SERVER"),
    ChannelDefinition("SYSTEM.DEF.SVRCONN", "SVRCONN", **_SVRCONN_DEF),
    ChannelDefinition("SYSTEM.DEF.CLNTCONN", "CLNTCONN"),
]

# Circular logging: no CURRLOG/MEDIALOG/RECLOG/ARCHLOG; LOGFSSZ/LOGFSUSE(SHARED): the log is on the queue
# manager's file system, so no figure of its own (QMFSSZ/QMFSUSE cover it).
QMSTATUS_9_4_2 = QmgrHealth(
    connections=44, command_server="RUNNING", channel_initiator="RUNNING", started=datetime(2025, 5, 12, 5, 53, 55),
    log_started=datetime(2025, 5, 12, 4, 5, 21), log_in_use_percent=13.0, log_utilization_percent=13.0,
    log_size_reusable_mb=0, qm_fs_size_mb=253824, qm_fs_in_use_percent=11.0)
QMGR_9_4_2 = QmgrHealth(version="09040200", command_level="942", qmid="QM1_2025-04-22_03.01.05", platform="UNIX",
                        dead_letter_queue="DEV.DEAD.LETTER.QUEUE", max_handles=256)

CHECKMK_QUEUES = [
    # QLOCAL first (MAXDEPTH), then QSTATUS: LGET/LPUT blank, QTIME( , ), MSGAGE(0), MONQ(MEDIUM)
    QueueStatus("MY.QUEUE.ONE", depth=0, max_depth=5000, oldest_message_age=0.0, monitoring="MEDIUM"),
    # QTIME(999999999, 999999999): MQ's display maximum, kept ("at least 999999999 us"; issue 39 item 1)
    QueueStatus("MY.QUEUE.TWO", depth=1400, max_depth=200000, oldest_message_age=2201.0, open_input=5,
                open_output=0, last_get=datetime(2017, 3, 9, 8, 49, 13), qtime_short=999999999,
                qtime_long=999999999, monitoring="MEDIUM"),
]
DEVSERVER_QUEUE = QueueStatus("DEV.QUEUE.1", depth=1, open_input=0, open_output=0, uncommitted=0, file_size_mb=1,
                              file_max_size_mb=2088960, monitoring="OFF")


def test_chstatus_all_svrconn_9_4_2():
    assert channels_from_mqsc(blocks("runmqsc_display_chstatus_all_svrconn_9.4.2.txt")) == [SVRCONN_9_4_2]
    assert channel_definitions_from_mqsc(blocks("runmqsc_display_chstatus_all_svrconn_9.4.2.txt")) == []


def test_chstatus_sender_default_fields():
    found = blocks("runmqsc_chstatus_sender_running_default_fields.txt")
    assert channels_from_mqsc(found) == [SENDER_DEFAULT]  # type SDR -> mq_prometheus's SENDER
    assert channel_definitions_from_mqsc(found) == []


def test_channel_and_chstatus_retrying_checkmk():
    found = blocks("runmqsc_channel_chstatus_retrying_checkmk.txt")
    assert channels_from_mqsc(found) == [RETRYING_TWO, RETRYING_ONE]
    assert channel_definitions_from_mqsc(found) == RETRYING_DEFINITIONS


def test_display_channel_all_9_4_2():
    found = blocks("runmqsc_display_channel_all_maxinst_9.4.2.txt")
    assert channel_definitions_from_mqsc(found) == CHANNEL_ALL_9_4_2
    assert channels_from_mqsc(found) == []  # no DISPLAY CHANNEL ALL attribute is mistaken for a status one


def test_qmstatus_all_9_4_2():
    assert health_from_mqsc(blocks("runmqsc_display_qmstatus_all_9.4.2.txt")) == QMSTATUS_9_4_2


def test_qmgr_all_9_4_2():
    found = blocks("runmqsc_display_qmgr_all_9.4.2.txt")  # the installation details before it are not a block
    assert health_from_mqsc(found) == QMGR_9_4_2
    assert queues_from_mqsc(found) == [] and channels_from_mqsc(found) == []


def test_qmstatus_and_qmgr_make_one_health():
    found = blocks("runmqsc_display_qmstatus_all_9.4.2.txt") + blocks("runmqsc_display_qmgr_all_9.4.2.txt")
    expected = QmgrHealth(**{**vars(QMSTATUS_9_4_2), **{k: v for k, v in vars(QMGR_9_4_2).items() if v}})
    assert health_from_mqsc(found) == expected


def test_qlocal_qstatus_checkmk():
    assert queues_from_mqsc(blocks("runmqsc_qlocal_qstatus_checkmk.txt")) == CHECKMK_QUEUES


def test_qstatus_monq_off_curfsize_devserver():
    assert queues_from_mqsc(blocks("runmqsc_dis_qstatus_monq_off_curfsize_devserver_2021.txt")) == [DEVSERVER_QUEUE]


# --- single values ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("date, time, expected", [
    ("2025-05-12", "05.53.55", datetime(2025, 5, 12, 5, 53, 55)),  # QSTATUS/CHSTATUS/STARTTI
    ("2025-05-12", "04:05:21", datetime(2025, 5, 12, 4, 5, 21)),  # LOGSTRTI in the 9.4.2 capture
    ("", "", None), (" ", " ", None), ("2025-05-12", "", None), (None, None, None),
    ("2025-02-30", "01.02.03", None), ("2025-05-12", "25.00.00", None), ("12/05/2025", "05.53.55", None),
])
def test_timestamp(date, time, expected):
    assert mqscmap.timestamp(date, time) == expected


@pytest.mark.parametrize("value, expected", [("NO", 0), ("YES", 1), ("no", 0), ("7", 7), (7, 7), ("", None),
                                             (" ", None), ("MAYBE", None), ("-1", None), (None, None)])
def test_uncommitted(value, expected):
    assert mqscmap.uncommitted(value) == expected


@pytest.mark.parametrize("value, expected", [
    ("12, 34", (12, 34)), ("12,34", (12, 34)), (",", (None, None)), (" , ", (None, None)), ([12, 34], (12, 34)),
    (["12", "34"], (12, 34)), (None, (None, None)), ("12", (None, None)), ([1, 2, 3], (None, None)),
    ("x, 5", (None, 5)), ({"short": 1}, (None, None)),
])
def test_pair_shapes(value, expected):
    assert mqscmap.pair(value) == expected


def test_qtime_at_the_display_maximum_is_kept():
    """Issue 39 item 1: 999999999 is the largest QTIME runmqsc shows ("at least"), not "no data"; blank is."""
    queue = mqscmap.queue_status({"QUEUE": "Q", "QTIME": "999999999, 120"})
    assert (queue.qtime_short, queue.qtime_long) == (999999999, 120)
    queue = mqscmap.queue_status({"QUEUE": "Q", "QTIME": [35, 999999999]})
    assert (queue.qtime_short, queue.qtime_long) == (35, 999999999)
    queue = mqscmap.queue_status({"QUEUE": "Q", "QTIME": " , "})
    assert (queue.qtime_short, queue.qtime_long) == (None, None)


@pytest.mark.parametrize("value, expected", [("S0000123.LOG", 123), ("S0000000.LOG", 0), ("", None),
                                             ("SHARED", None), ("S00001.TXT", None)])
def test_log_extent(value, expected):
    assert mqscmap.log_extent(value) == expected


def test_shared_file_system_and_linear_log():
    health = mqscmap.update_health(QmgrHealth(), {
        "LOGFSSZ": "SHARED", "LOGFSUSE": "SHARED", "QMFSSZ": "253824", "QMFSUSE": "11", "CURRLOG": "S0000123.LOG",
        "MEDIALOG": "S0000100.LOG", "RECLOG": "S0000120.LOG", "ARCHLOG": "S0000099.LOG", "MEDIASZ": "48",
        "RECSZ": "16", "ARCHSZ": "0"})
    assert (health.log_fs_size_mb, health.log_fs_in_use_percent) == (None, None)
    assert (health.qm_fs_size_mb, health.qm_fs_in_use_percent) == (253824, 11.0)
    assert (health.log_extent_current, health.log_extent_media, health.log_extent_restart,
            health.log_extent_archive) == (123, 100, 120, 99)
    assert (health.log_size_media_mb, health.log_size_restart_mb, health.log_size_archive_mb) == (48, 16, 0)


def test_indoubt_and_retries():
    channel = mqscmap.channel_state({"CHANNEL": "C", "STATUS": "running", "CHLTYPE": "SDR", "INDOUBT": "YES",
                                     "SHORTRTS": "10", "LONGRTS": "999999999", "XQMSGSA": "4", "BATCHES": "3",
                                     "NETTIME": "250, 300", "XQTIME": "1000, 2000", "XBATCHSZ": "1, 2"})
    assert channel == ChannelState("C", "RUNNING", "SENDER", indoubt=True, short_retries_left=10,
                                   long_retries_left=999999999, xmitq_messages_available=4, batches=3,
                                   network_time_short=250, network_time_long=300, xmitq_time_short=1000,
                                   xmitq_time_long=2000, batch_size_short=1, batch_size_long=2)


# --- the REST back-end: the same captures' values through runCommandJSON (INVENTED JSON shape) ----------------

def _lower(block: dict[str, str]) -> dict[str, object]:
    """A runmqsc block as runCommandJSON parameters (lower-case keywords; numbers as JSON numbers)."""
    return {key.lower(): int(value) if value.isdigit() and (value == "0" or value[0] != "0") else value
            for key, value in block.items()}  # 09040200 (VERSION) stays text


def _render_pairs(params: dict[str, object], shape: str) -> dict[str, object]:
    for key in ("qtime", "xqtime", "nettime", "xbatchsz"):
        if key in params:
            values = [v.strip() for v in str(params[key]).split(",")]
            if shape == "list":
                params[key] = [int(v) if v.isdigit() else "" for v in values]
            elif shape == "missing":
                del params[key]
    return params


def _fake_from_captures(shape: str) -> FakeQmgr:
    """A fake mqweb queue manager whose answers carry the values of the genuine runmqsc captures."""
    queues = []
    for block in (blocks("runmqsc_qlocal_qstatus_checkmk.txt")
                  + blocks("runmqsc_dis_qstatus_monq_off_curfsize_devserver_2021.txt")):
        if block["TYPE"] != "QUEUE":
            continue
        params = _render_pairs(_lower(block), shape)
        msgage = params.pop("msgage")
        queue = FakeQueue(params.pop("queue"), depth=params.pop("curdepth"), msgage=None if msgage == "" else msgage,
                          ipprocs=params.pop("ipprocs", None), opprocs=params.pop("opprocs", None), blank_msgage=" ",
                          extra=params)
        queues.append(queue)
    # checkmk's QLOCAL answers; none for devserver
    for queue, max_depth in zip(queues, (5000, 200000, None), strict=True):
        queue.max_depth = max_depth
    channels = []
    for name in ("runmqsc_display_chstatus_all_svrconn_9.4.2.txt", "runmqsc_channel_chstatus_retrying_checkmk.txt",
                 "runmqsc_chstatus_sender_running_default_fields.txt"):
        for block in blocks(name):
            if "STATUS" in block:
                params = _render_pairs(_lower(block), shape)
                channels.append(FakeChannel(params.pop("channel"), params.pop("status"), params.pop("chltype"),
                                            params.pop("conname"), extra=params))
    definitions = [_lower(b) for b in blocks("runmqsc_display_channel_all_maxinst_9.4.2.txt")]
    (qmstatus,) = blocks("runmqsc_display_qmstatus_all_9.4.2.txt")
    (attributes,) = blocks("runmqsc_display_qmgr_all_9.4.2.txt")
    return FakeQmgr("QM1", "running", queues, channels, definitions, _lower(qmstatus), _lower(attributes))


@pytest.mark.parametrize("shape", ["string", "list", "missing"])
def test_rest_reads_every_figure_as_runmqsc_does(shape):
    with FakeMqweb(_fake_from_captures(shape)) as mqweb:
        snap = RestBackend("QM1", mqweb.base_url, timeout=5.0).snapshot()
    assert snap.source_errors == {}
    # (QTIME of these queues is blank, None, or 999999999, kept as the display maximum; absent keys: None)
    queues = CHECKMK_QUEUES
    if shape == "missing":
        queues = [replace(q, qtime_short=None, qtime_long=None) for q in queues]
    assert snap.queues == sorted([DEVSERVER_QUEUE, *queues], key=lambda q: q.name)
    retrying = [RETRYING_ONE, RETRYING_TWO]
    if shape == "missing":  # no pair keys: no pair figures (None), never 0
        retrying = [ChannelState(c.name, c.status, c.type, c.connection, substate=c.substate, monitoring=c.monitoring,
                                 instance_type=c.instance_type) for c in retrying]
    assert snap.channels == sorted([SVRCONN_9_4_2, SENDER_DEFAULT, *retrying], key=lambda c: (c.name, c.connection))
    assert snap.channel_definitions == sorted(CHANNEL_ALL_9_4_2, key=lambda d: d.name)
    assert snap.health == QmgrHealth(**{**vars(QMSTATUS_9_4_2),
                                        **{k: v for k, v in vars(QMGR_9_4_2).items() if v}})


@pytest.mark.parametrize("failing", ["qmstatus", "qmgr", "channel"])
def test_rest_failed_optional_source_is_its_own_error(failing):
    with FakeMqweb(_fake_from_captures("string")) as mqweb:
        mqweb.failed_qualifiers = {failing: 2035}  # not authorised to that DISPLAY
        rest = RestBackend("QM1", mqweb.base_url, timeout=5.0)
        snap = rest.snapshot()
    # DISPLAY QMSTATUS TYPE(NATIVEHA) (issue 39) is the same qualifier: refused with it, its own source fails too
    assert list(snap.source_errors) == [failing, *(["nativeha"] if failing == "qmstatus" else [])]
    assert snap.source_errors[failing].endswith(
        f"DISPLAY {failing.upper()} failed: DISPLAY {failing.upper()}: completion code 2, reason 2035 "
        f"(AMQ8135E: Not authorized ({failing}).)")
    assert len(snap.queues) == 3 and len(snap.channels) == 4  # the snapshot stands
    if failing == "channel":
        assert snap.channel_definitions is None and snap.health is not None
    elif failing == "qmstatus":
        assert snap.health == QMGR_9_4_2 and snap.channel_definitions is not None
    else:
        assert snap.health == QMSTATUS_9_4_2


def test_rest_qualifier_rejected_by_an_older_mqweb():
    with FakeMqweb(_fake_from_captures("string")) as mqweb:
        mqweb.fail_status, mqweb.fail_match = 400, "qmstatus"  # HTTP 400 for that qualifier only
        snap = RestBackend("QM1", mqweb.base_url, timeout=5.0).snapshot()
    assert list(snap.source_errors) == ["qmstatus", "nativeha"] and "(HTTP 400)" in snap.source_errors["qmstatus"]
    assert "(HTTP 400)" in snap.source_errors["nativeha"]  # the same qualifier (issue 39): an error, not "not NHA"
    assert snap.health == QMGR_9_4_2 and len(snap.queues) == 3


def test_rest_v1_reads_no_health():
    with FakeMqweb(_fake_from_captures("string")) as mqweb:
        snap = RestBackend("QM1", mqweb.base_url, timeout=5.0, api_version="v1").snapshot()
        qualifiers = [r.body.get("qualifier") for r in mqweb.requests if isinstance(r.body, dict)]
    assert snap.health is None and snap.channel_definitions is None and snap.source_errors == {}
    assert qualifiers == ["chstatus"]
    assert [c.name for c in snap.channels] == sorted(c.name for c in snap.channels) and len(snap.channels) == 4


# --- the runmqsc back-end: a stand-in runmqsc printing the genuine captures ------------------------------------

def test_runmqsc_reads_every_figure(tmp_path):
    mq = StandIns(tmp_path)
    mq.set_dspmq("QMNAME(QM1)".ljust(58) + "STATUS(Running)\n")
    text = "".join((REAL / name).read_text() for name in (  # each capture ends with a line break
        "runmqsc_dis_qstatus_monq_off_curfsize_devserver_2021.txt", "runmqsc_display_chstatus_all_svrconn_9.4.2.txt",
        "runmqsc_display_channel_all_maxinst_9.4.2.txt", "runmqsc_display_qmstatus_all_9.4.2.txt",
        "runmqsc_display_qmgr_all_9.4.2.txt"))
    mq.set_runmqsc(text)
    snap = mq.backend().snapshot()
    assert snap.queues == [DEVSERVER_QUEUE]
    assert snap.channels == [SVRCONN_9_4_2]
    assert snap.channel_definitions == CHANNEL_ALL_9_4_2
    assert snap.health == QmgrHealth(**{**vars(QMSTATUS_9_4_2), **{k: v for k, v in vars(QMGR_9_4_2).items() if v}})
    assert snap.source_errors == {}
    assert len(mq.runmqsc_stdin.read_text().splitlines()) == 7  # one session for all seven commands (issue 39)


def test_runmqsc_without_qmstatus_answer_keeps_the_rest(tmp_path):
    """A queue manager that rejects DISPLAY QMSTATUS ALL (syntax error) still gives queues, channels and QMGR."""
    mq = StandIns(tmp_path)
    mq.set_dspmq("QMNAME(QM1)".ljust(58) + "STATUS(Running)\n")
    text = "".join((REAL / name).read_text() for name in (
        "runmqsc_dis_qstatus_monq_off_curfsize_devserver_2021.txt", "runmqsc_display_chstatus_all_not_found_9.4.2.txt",
        "runmqsc_display_channel_all_maxinst_9.4.2.txt"))
    text += ("AMQ8405I: Syntax error detected at or near end of command segment below:-\nDISPLAY QMSTATUS A\n\n"
             + (REAL / "runmqsc_display_qmgr_all_9.4.2.txt").read_text())
    mq.set_runmqsc(text, rc=10)
    snap = mq.backend().snapshot()
    assert snap.queues == [DEVSERVER_QUEUE] and snap.channels == []
    assert snap.health == QMGR_9_4_2
    assert snap.source_errors == {"qmstatus": "DISPLAY QMSTATUS: no answer (AMQ8405I: Syntax error detected at or "
                                              "near end of command segment below:-)"}
