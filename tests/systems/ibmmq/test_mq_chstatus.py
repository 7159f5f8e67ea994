"""Issue 38 item 8: a DISPLAY CHSTATUS answer that cannot be read fails the channel-status source (``chstatus``)
instead of passing for "no channel running".

Readable, as an MQ administrator reads it: ``AMQ8417I`` blocks naming their CHANNEL and STATUS, or ``AMQ8420I:
Channel Status not found.`` (nothing running: an empty answer).  Everything else is unreadable: the queue manager
answered (target up, queues stand), the ``chstatus`` source fails with an error naming what was seen, and the
channels it could not read are neither reported as inactive definitions nor restarted counters.

Genuine text: the captures in tests/systems/ibmmq/fixtures/real (SOURCE.md), among them
``runmqsc_display_chstatus_all_not_found_9.4.2.txt`` (AMQ8420I, MQ 9.4.2).  The unreadable answers below are
INVENTED (no public capture of a garbled or rejected DISPLAY CHSTATUS was found): each is labelled where it is
defined, with the message ids and texts of IBM's documentation ("Resolving problems with MQSC commands",
docs/notes/ibmmq.md).
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import pytest

from exporter.core.collector import Context
from exporter.systems.ibmmq import pcf
from exporter.systems.ibmmq.collector import IbmmqCollector
from exporter.systems.ibmmq.model import QmgrSnapshot
from exporter.systems.ibmmq.parse import (
    CHSTATUS_ID,
    channel_status_from_mqsc,
    channel_status_from_mqsc_json,
    mqsc_answer,
    read_mqsc,
)
from exporter.systems.ibmmq.rest import RestBackend
from exporter.systems.ibmmq.settings import IbmmqSettings

from ...fakes.mqweb import FakeChannel, FakeMqweb
from ...support import collect
from .test_ibmmq import FakeAdapter
from .test_mq_health_mqsc import _fake_from_captures
from .test_mq_runmqsc import FIXTURES, StandIns

REAL = Path(__file__).parent / "fixtures" / "real"
NOT_FOUND = "runmqsc_display_chstatus_all_not_found_9.4.2.txt"  # genuine: AMQ8420I
SVRCONN = "runmqsc_display_chstatus_all_svrconn_9.4.2.txt"  # genuine: one running SVRCONN
RETRYING = "runmqsc_channel_chstatus_retrying_checkmk.txt"  # genuine: AMQ8414/AMQ8417 without the I suffix
BANNER = "5724-H72 (C) Copyright IBM Corp. 1994, 2025.\nStarting MQSC for queue manager QM1.\n\n\n"
SUMMARY = "One MQSC command read.\nOne command has a syntax error.\nAll valid MQSC commands were processed.\n"

# INVENTED unreadable answers (a banner, then what stands where the AMQ8417I blocks or AMQ8420I should be), and the
# line the error must name.
SYNTAX = ("AMQ8405E: Syntax error detected at or near end of command segment below:-\nDISPLAY CHSTATUS(*) ALL\n",
          "AMQ8405E: Syntax error detected at or near end of command segment below:-")
VALID_SYNTAX = ("AMQ8427E: Valid syntax for the MQSC command:\n\n   DISPLAY CHSTATUS( generic_channel_name )\n",
                "AMQ8427E: Valid syntax for the MQSC command:")
UNREADABLE = {
    "syntax error": SYNTAX,
    "valid syntax listing": VALID_SYNTAX,
    "not recognised": ("MQSC command not recognised\n", "MQSC command not recognised"),
    "qmgr does not exist": ("AMQ8118E: IBM MQ queue manager does not exist.\n",
                            "AMQ8118E: IBM MQ queue manager does not exist."),
    "qmgr not available": ("AMQ8146E: IBM MQ queue manager not available.\n",
                           "AMQ8146E: IBM MQ queue manager not available."),
    "garbage": ("\x00\x17#&%@ qwz\n~~~~ 4f 9a 00 17\n", "\x00\x17#&%@ qwz"),
}


def chstatus(text: str):
    return channel_status_from_mqsc(read_mqsc(text, track=(CHSTATUS_ID,)))


def real(name: str) -> str:
    return (REAL / name).read_text()


# ---- the parser -------------------------------------------------------------------------------------------------

def test_genuine_answers_are_readable():
    empty = chstatus(real(NOT_FOUND))
    assert (empty.channels, empty.error) == ([], None)  # nothing running: an answer, not a failure
    running = chstatus(real(SVRCONN))
    assert running.error is None and [(c.name, c.status) for c in running.channels] == [
        ("SYSTEM.ADMIN.SVRCONN", "RUNNING")]
    retrying = chstatus(real(RETRYING))  # old ids without the severity letter, DISPLAY CHANNEL blocks before
    assert retrying.error is None and [(c.name, c.status) for c in retrying.channels] == [
        ("HERE.TO.THERE.TWO", "RETRYING"), ("HERE.TO.THERE.ONE", "RETRYING")]


@pytest.mark.parametrize("case", sorted(UNREADABLE))
def test_an_answer_with_neither_blocks_nor_not_found_is_unreadable(case):
    body, seen = UNREADABLE[case]
    answer = chstatus(BANNER + body + SUMMARY)
    assert answer.channels == []
    assert answer.error == ("DISPLAY CHSTATUS: no readable answer (no AMQ8417I channel status block, no AMQ8420I "
                            f"Channel Status not found); saw {seen!r}")


def test_empty_and_cut_off_before_the_answer():
    for text in ("", BANNER, BANNER + "     1 : DISPLAY CHSTATUS(*) ALL\n"):
        assert chstatus(text).error == ("DISPLAY CHSTATUS: no readable answer (no AMQ8417I channel status block, "
                                        "no AMQ8420I Channel Status not found); nothing else in the output")
    random_bytes = bytes(random.Random(38).randrange(256) for _ in range(4096)).decode("latin-1")
    assert "no readable answer" in (chstatus(random_bytes).error or "")


def test_the_error_quotes_a_bounded_part_of_what_was_seen():
    answer = chstatus(BANNER + "X" * 40_000 + "\n")  # one 40,000-character line instead of an answer
    assert answer.error is not None and len(answer.error) < 300
    assert answer.error.endswith("saw '" + "X" * 120 + "'")


def test_a_block_without_channel_or_status_is_unreadable():
    header = "AMQ8417I: Display Channel Status details.\n"
    no_channel = header + "   CHLTYPE(SDR)                           STATUS(RUNNING)\n"
    answer = chstatus(BANNER + no_channel)
    assert answer.channels == [] and answer.error == (
        "DISPLAY CHSTATUS: 1 of 1 channel status blocks unreadable (no CHANNEL or STATUS); the first starts "
        "'CHLTYPE(SDR)                           STATUS(RUNNING)'")
    answer = chstatus(BANNER + header + "#~ 17 ~#\n")
    assert answer.error is not None and answer.error.endswith("the first starts '#~ 17 ~#'")
    answer = chstatus(BANNER + header + header.replace("8417I", "8417"))  # two headers, nothing after them
    assert answer.error is not None and answer.error.endswith("2 of 2 channel status blocks unreadable (no CHANNEL "
                                                              "or STATUS); the first nothing after its header")


def test_mixed_answer_keeps_what_it_read_and_fails():
    """Two genuine blocks and, between them, one cut off after its CHANNEL line (INVENTED cut)."""
    svrconn = real(SVRCONN)
    start = svrconn.index("AMQ8417I")
    block = svrconn[start:svrconn.index("One MQSC command read.")]
    cut = block[:block.index("   BUFSRCVD")]  # header and CHANNEL/CHLTYPE line only
    answer = chstatus(BANNER + block + cut + block.replace("9.38.73.124", "9.38.73.125"))
    assert [(c.name, c.connection) for c in answer.channels] == [
        ("SYSTEM.ADMIN.SVRCONN", "9.38.73.124"), ("SYSTEM.ADMIN.SVRCONN", "9.38.73.125")]
    assert answer.error == ("DISPLAY CHSTATUS: 1 of 3 channel status blocks unreadable (no CHANNEL or STATUS); "
                            "the first starts 'CHANNEL(SYSTEM.ADMIN.SVRCONN)           CHLTYPE(SVRCONN)'")


def test_output_cut_off_inside_the_answer():
    """tests/systems/ibmmq/fixtures/runmqsc/truncated.txt ends inside its third channel status block (no STATUS yet)."""
    answer = chstatus((FIXTURES / "truncated.txt").read_text())
    assert [c.name for c in answer.channels] == ["QM1.TO.QM2", "QM2.TO.QM1"]
    assert answer.error is not None and answer.error.startswith(
        "DISPLAY CHSTATUS: 1 of 3 channel status blocks unreadable (no CHANNEL or STATUS); the first starts "
        "'CHANNEL(APP.SVRCONN)")


def test_other_messages_do_not_make_an_answer_unreadable():
    """The errors fixture: AMQ8147E (QSTATUS), AMQ8420I (CHSTATUS), AMQ8405I (QLOCAL): the CHSTATUS answer reads."""
    answer = chstatus((FIXTURES / "errors.txt").read_text())
    assert (answer.channels, answer.error) == ([], None)


# ---- the runmqsc back-end: a stand-in runmqsc printing a whole session -----------------------------------------

def session(chstatus_answer: str) -> str:
    """The six answers of one session from the genuine captures, with ``chstatus_answer`` as the third."""
    return "".join([real("runmqsc_dis_qstatus_monq_off_curfsize_devserver_2021.txt"), chstatus_answer,
                    real("runmqsc_display_channel_all_maxinst_9.4.2.txt"),
                    real("runmqsc_display_qmstatus_all_9.4.2.txt"), real("runmqsc_display_qmgr_all_9.4.2.txt")])


def runmqsc(tmp_path: Path, text: str, rc: int = 0) -> QmgrSnapshot:
    mq = StandIns(tmp_path)
    mq.set_dspmq("QMNAME(QM1)".ljust(58) + "STATUS(Running)\n")
    mq.set_runmqsc(text, rc=rc)
    return mq.backend().snapshot()


def test_runmqsc_back_end_reads_the_genuine_answers(tmp_path):
    snap = runmqsc(tmp_path, session(real(NOT_FOUND)), rc=10)
    assert (snap.channels, snap.source_errors) == ([], {})
    snap = runmqsc(tmp_path, session(real(SVRCONN)))
    assert [c.name for c in snap.channels] == ["SYSTEM.ADMIN.SVRCONN"] and snap.source_errors == {}


@pytest.mark.parametrize("case", ["syntax error", "not recognised", "garbage"])
def test_runmqsc_back_end_fails_the_chstatus_source(tmp_path, case):
    body, seen = UNREADABLE[case]
    snap = runmqsc(tmp_path, session(BANNER + body + SUMMARY), rc=10)
    assert snap.status == "RUNNING" and [q.name for q in snap.queues] == ["DEV.QUEUE.1"]  # the rest stands
    assert snap.channels == [] and snap.channel_definitions and snap.health is not None
    assert snap.source_errors == {"chstatus": "DISPLAY CHSTATUS: no readable answer (no AMQ8417I channel status "
                                              f"block, no AMQ8420I Channel Status not found); saw {seen!r}"}


def test_runmqsc_back_end_cut_off_after_the_queues(tmp_path):
    """The session ends before DISPLAY CHSTATUS answered: every later source fails, chstatus among them."""
    snap = runmqsc(tmp_path, real("runmqsc_dis_qstatus_monq_off_curfsize_devserver_2021.txt"))
    assert [q.name for q in snap.queues] == ["DEV.QUEUE.1"] and snap.channels == []
    assert sorted(snap.source_errors) == ["channel", "chstatus", "qmgr", "qmstatus"]
    assert snap.source_errors["chstatus"].startswith("DISPLAY CHSTATUS: no readable answer")


# ---- the collector: the queue manager stays up, the channels are not shown as stopped --------------------------

def collector_for(mq: StandIns) -> IbmmqCollector:
    settings = IbmmqSettings.model_validate({"enabled": True, "queue_managers": [
        {"name": "QM1", "backend": "runmqsc", "runmqsc": str(mq.runmqsc), "dspmq": str(mq.dspmq), "timeout": "10s",
         "statistics": "off", "time_zone": "Etc/UTC", "channels_exclude": ["SYSTEM.DEF.*", "SYSTEM.AUTO.*"]}]})
    return IbmmqCollector(settings, Context())


def channel_series(samples: dict, metric: str) -> dict[tuple[str, str], float]:
    return {(dict(labels)["channel"], dict(labels)["connname"]): value for (name, labels), value in samples.items()
            if name == metric}


def test_collector_keeps_the_target_up_and_shows_no_channel_as_stopped(tmp_path):
    mq = StandIns(tmp_path)
    mq.set_dspmq("QMNAME(QM1)".ljust(58) + "STATUS(Running)\n")
    mq.set_runmqsc(session(real(SVRCONN)))
    c = collector_for(mq)
    samples, batch = collect(c)
    admin = ("SYSTEM.ADMIN.SVRCONN", "9.38.73.124")
    assert channel_series(samples, "ibmmq_channel_status")[admin] == 3
    assert batch.reports.targets["QM1"].sources["chstatus"].ok is True
    counted = channel_series(samples, "ibmmq_channel_messages_total")[admin]

    mq.set_runmqsc(session(BANNER + SYNTAX[0] + SUMMARY), rc=10)  # the same queue manager, CHSTATUS unreadable
    samples, batch = collect(c)
    target = batch.reports.targets["QM1"]
    assert target.up is True  # the queue manager answered
    assert target.sources["chstatus"].ok is False
    assert target.sources["chstatus"].error == (
        "runmqsc: DISPLAY CHSTATUS: no readable answer (no AMQ8417I channel status block, no AMQ8420I Channel "
        f"Status not found); saw {SYNTAX[1]!r}")
    assert samples["ibmmq_queue_depth", (("qmgr", "QM1"), ("queue", "DEV.QUEUE.1"))] == 1
    # before the fix every defined channel showed as INACTIVE (0), the running SVRCONN among them
    assert channel_series(samples, "ibmmq_channel_status") == {}
    assert channel_series(samples, "ibmmq_channel_status_squash") == {}

    mq.set_runmqsc(session(real(SVRCONN).replace("MSGS(19218)", "MSGS(19230)")))  # readable again
    samples, batch = collect(c)
    assert batch.reports.targets["QM1"].sources["chstatus"].ok is True
    assert channel_series(samples, "ibmmq_channel_status")[admin] == 3
    # the counter goes on from where it was (+12), not restarted with the instance's whole count
    assert channel_series(samples, "ibmmq_channel_messages_total")[admin] == counted + 12


# ---- REST: runCommandJSON answers (INVENTED JSON shape, see tests/fakes/mqweb.py) -------------------------------

def _item(**params) -> dict:
    return {"completionCode": 0, "reasonCode": 0, "parameters": params}


def test_rest_items_without_channel_or_status_are_unreadable():
    good = _item(channel="APP.SVRCONN", status="RUNNING", chltype="SVRCONN", conname="10.0.0.5")
    not_found = {"completionCode": 2, "reasonCode": 3065, "message": ["AMQ8420I: Channel Status not found."]}
    benign = (3065,)
    empty = channel_status_from_mqsc_json(mqsc_answer(
        {"commandResponse": [not_found], "overallCompletionCode": 2, "overallReasonCode": 3008}, "CHSTATUS", benign))
    assert (empty.channels, empty.error) == ([], None)
    mixed = channel_status_from_mqsc_json(mqsc_answer({"commandResponse": [
        good, _item(chltype="SDR", status="RUNNING"), {"completionCode": 0, "reasonCode": 0, "parameters": "%%"}]},
        "CHSTATUS", benign))
    assert [c.name for c in mixed.channels] == ["APP.SVRCONN"]
    assert mixed.error == ("DISPLAY CHSTATUS: 2 of 3 channel status items unreadable (no channel or status); the "
                           'first is {"completionCode": 0, "reasonCode": 0, "parameters": "%%"}')
    no_items = channel_status_from_mqsc_json(mqsc_answer({"commandResponse": []}, "CHSTATUS", benign))
    assert no_items.error is not None and no_items.error.startswith("DISPLAY CHSTATUS: no readable answer")
    long = channel_status_from_mqsc_json(mqsc_answer({"commandResponse": [_item(x="Y" * 40_000)]}, "CHSTATUS",
                                                     benign))
    assert long.error is not None and len(long.error) < 300


def test_rest_back_end_fails_the_chstatus_source_not_the_snapshot():
    qmgr = _fake_from_captures("string")
    qmgr.channels.append(FakeChannel("", "RUNNING", "SDR", "mq2(1414)"))  # an item without its channel name
    with FakeMqweb(qmgr) as mqweb:
        snap = RestBackend("QM1", mqweb.base_url, timeout=5.0).snapshot()
    assert len(snap.queues) == 3 and snap.health is not None and snap.channel_definitions  # the rest stands
    assert len(snap.channels) == 4  # the readable ones
    assert list(snap.source_errors) == ["chstatus"]
    assert snap.source_errors["chstatus"].startswith(
        'DISPLAY CHSTATUS: 1 of 5 channel status items unreadable (no channel or status); the first is '
        '{"channel": "", ')


def test_rest_v1_back_end_fails_the_chstatus_source_too():
    qmgr = _fake_from_captures("string")
    qmgr.channels.append(FakeChannel("APP.SDR", None, "SDR", "mq2(1414)"))  # type: ignore[arg-type] - no status
    with FakeMqweb(qmgr) as mqweb:
        snap = RestBackend("QM1", mqweb.base_url, timeout=5.0, api_version="v1").snapshot()
    assert len(snap.channels) == 4 and list(snap.source_errors) == ["chstatus"]
    assert '"channel": "APP.SDR"' in snap.source_errors["chstatus"]


# ---- PCF: MQCMD_INQUIRE_CHANNEL_STATUS answers --------------------------------------------------------------------

def test_pcf_answers_without_channel_name_or_status_are_unreadable():
    items = list(FakeAdapter().answers[3])
    assert pcf.channel_status_from_pcf(items).error is None
    garbled = [items[0], {pcf.MQIACH_CHANNEL_STATUS: 3}, {pcf.MQCACH_CHANNEL_NAME: b"APP.SDR"}, "junk"]
    answer = pcf.channel_status_from_pcf(garbled)
    assert [c.name for c in answer.channels] == [pcf.channel_from_pcf(items[0]).name]
    assert answer.error == ("INQUIRE_CHANNEL_STATUS: 3 of 4 channel status answers unreadable (no channel name or "
                            f"status); the first is {{{pcf.MQIACH_CHANNEL_STATUS}: 3}}")


def test_pcf_back_end_fails_the_chstatus_source_not_the_snapshot():
    class Garbled(FakeAdapter):
        def channel_status(self):
            return [*self.answers[3], {pcf.MQIACH_CHANNEL_STATUS: 3}]

    snap = pcf.PcfBackend("QM1", "C", "h(1)", adapter_factory=Garbled).snapshot()
    good = pcf.PcfBackend("QM1", "C", "h(1)", adapter_factory=FakeAdapter).snapshot()
    assert snap.queues == good.queues and snap.channels == good.channels
    assert list(snap.source_errors) == ["chstatus"] and "unreadable" in snap.source_errors["chstatus"]
    assert good.source_errors == {}


# ---- a real exporter process ------------------------------------------------------------------------------------

@pytest.mark.integration
def test_exporter_process_reports_the_unreadable_answer(start_exporter, tmp_path):
    mq = StandIns(tmp_path)
    mq.set_dspmq("QMNAME(QM1)".ljust(58) + "STATUS(Running)\n")
    mq.set_runmqsc(session(real(SVRCONN)))
    config = (f"collectors:\n  ibmmq:\n    enabled: true\n    interval: 1s\n    timeout: 1s\n"
              f"    queue_managers:\n      - name: QM1\n        backend: runmqsc\n        runmqsc: {mq.runmqsc}\n"
              f"        dspmq: {mq.dspmq}\n        statistics: 'off'\n        timeout: 1s\n"
              f"        channels_exclude: ['SYSTEM.DEF.*', 'SYSTEM.AUTO.*']\n")
    exporter = start_exporter(config=config)
    running = (b'ibmmq_channel_status{channel="SYSTEM.ADMIN.SVRCONN",connname="9.38.73.124",jobname="",'
               b'qmgr="QM1",rqmname="",type="SVRCONN"} 3.0')
    failed = b'middleware_target_source_success{collector="ibmmq",source="chstatus",target="QM1"} 0.0'

    def scrape_until(wanted: bytes) -> bytes:
        deadline = time.monotonic() + 20
        body = b""
        while time.monotonic() < deadline:
            _, _, body = exporter.get("/metrics")
            if wanted in body:
                break
            time.sleep(0.2)
        return body

    assert running in scrape_until(running)
    mq.set_runmqsc(session(BANNER + SYNTAX[0] + SUMMARY), rc=10)
    body = scrape_until(failed)
    assert failed in body
    assert b'middleware_target_up{collector="ibmmq",target="QM1"} 1.0' in body
    assert b'ibmmq_queue_depth{qmgr="QM1",queue="DEV.QUEUE.1"} 1.0' in body
    assert b"ibmmq_channel_status{" not in body  # not shown as stopped or inactive
    _, _, api = exporter.get("/api/v1/collectors")
    text = json.dumps(json.loads(api))
    assert "DISPLAY CHSTATUS: no readable answer" in text and "AMQ8405E: Syntax error detected" in text
