"""Issue 39, IBM MQ items 1, 2, 3, 4 and 7: what an MQ administrator reads in DISPLAY QSTATUS / CHSTATUS, read
the same way through the runmqsc back-end (stand-in ``dspmq``/``runmqsc`` printing the text) and the collector,
and through the PCF back-end (the fake ``ibmmq`` module of tests/fakes).

1. A figure at runmqsc's display maximum (QTIME(999999999, 999999999), MSGAGE, NETTIME) is "at least that", kept;
   only a blank is "no data".
2. Every channel STATUS and SUBSTATE word of IBM's DISPLAY CHSTATUS reference gives its MQCHS / MQCHSSTATE code
   (SSLHANDSHK, not SSLHANDSHAKE), and the dashboards' value mappings are made from the same tables.
3. ``MONCHL(OFF)``: the ``NETTIME(0,0)``, ``XQTIME(0,0)``, ``XBATCHSZ(0,0)`` runmqsc prints were never measured:
   no series (and ``middleware_ibmmq_channel_monitoring_enabled`` 0), never 0.
4. After the queue manager ends, its channels are not turned into "inactive" (0) series from the last
   definitions read: no channel series at all while it does not run.
7. mq_prometheus's ``ibmmq_channel_type``, ``ibmmq_channel_instance_type`` and ``ibmmq_channel_security_protocol``
   with its numeric codes, and every mq_prometheus status name the back-ends can read declared.

Genuine text: tests/systems/ibmmq/fixtures/real (SOURCE.md there: mqfellow's DIS CHS(*) ALL sessions with
MONCHL(OFF), SECPROT(TLSV12), STATUS(BINDING) SUBSTATE(NETCONNECT)) and the older captures (Checkmk's QSTATUS with
QTIME(999999999, 999999999) and MSGAGE(2201), Checkmk's dspmq ``ENDED IMMEDIATELY``), in the same
folder (:func:`genuine`).  Text built here is INVENTED and says so where it is built.
"""

from __future__ import annotations

import importlib.util
import stat
import sys
from pathlib import Path

from exporter.core.collector import Context
from exporter.systems.ibmmq import metrics, pcf
from exporter.systems.ibmmq.collector import IbmmqCollector
from exporter.systems.ibmmq.model import (
    CHANNEL_STATUS_CODES,
    CHANNEL_SUBSTATE_CODES,
    DISPLAY_MAX,
)
from exporter.systems.ibmmq.parse import CHSTATUS_ID, channel_status_from_mqsc, read_mqsc
from exporter.systems.ibmmq.settings import IbmmqSettings

from ...support import collect
from .test_mq_pcf_health import SVRCONN_942, mq, pcf_snapshot  # noqa: F401 - mq is a fixture

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
GENUINE = HERE / "fixtures" / "real"  # genuine captures, SOURCE.md beside them
QMGR = "QM1"

# IBM's numbers (cmqc.h / cmqcfc.h, as mq-golang's ibmmq package and the ibmmq Python package carry them) for the
# words IBM Docs "DISPLAY CHSTATUS" lists: written out here, not taken from the code under test.
IBM_SUBSTATES = {
    "ENDBATCH": 100, "SEND": 200, "RECEIVE": 300, "SERIALIZE": 400, "RESYNCH": 500, "HEARTBEAT": 600,
    "SCYEXIT": 700, "RCVEXIT": 800, "SENDEXIT": 900, "MSGEXIT": 1000, "MREXIT": 1100, "CHADEXIT": 1200,
    "NETCONNECT": 1250, "SSLHANDSHK": 1300, "NAMESERVER": 1400, "MQPUT": 1500, "MQGET": 1600, "MQICALL": 1700,
    "COMPRESS": 1800,
}
IBM_STATUSES = {
    "BINDING": 1, "STARTING": 2, "RUNNING": 3, "STOPPING": 4, "RETRYING": 5, "STOPPED": 6, "REQUESTING": 7,
    "PAUSED": 8, "INITIALIZING": 13, "SWITCHING": 14,
}


def genuine(name: str) -> str:
    """A genuine capture by file name."""
    return (GENUINE / name).read_text()


class StandIn:
    """Stand-in ``dspmq`` and ``runmqsc`` printing the current contents of two files (changed between runs), read
    by one collector (its state - channel definitions, counters - kept from run to run)."""

    def __init__(self, tmp_path: Path, dspmq: str, runmqsc: str = "", **entry) -> None:
        self.dir = tmp_path
        self.set(dspmq, runmqsc)
        for name in ("dspmq", "runmqsc"):
            script = tmp_path / name
            script.write_text(f"#!/bin/sh\ncat > /dev/null\ncat '{tmp_path / (name + '.out')}'\n")
            script.chmod(script.stat().st_mode | stat.S_IXUSR)
        settings = IbmmqSettings.model_validate({"enabled": True, "queue_managers": [
            {"name": QMGR, "backend": "runmqsc", "runmqsc": str(tmp_path / "runmqsc"),
             "dspmq": str(tmp_path / "dspmq"), "timeout": "10s", "exclude": [], **entry}]})
        self.collector = IbmmqCollector(settings, Context())

    def set(self, dspmq: str, runmqsc: str = "") -> None:
        (self.dir / "dspmq.out").write_text(dspmq)
        (self.dir / "runmqsc.out").write_text(runmqsc)

    def samples(self) -> dict:
        samples, batch = collect(self.collector)
        assert batch.errors == {}, batch.errors
        return samples


# INVENTED: dspmq's answer for a running QM1 (the -n spelling of the genuine Checkmk captures).
RUNNING = f"QMNAME({QMGR})                                               STATUS(RUNNING)\n"


def series(samples: dict, name: str, **match: str) -> dict[str, float]:
    """channel (or queue) -> value of metric ``name`` for the series whose labels include ``match``."""
    found = {}
    for (metric, labels), v in samples.items():
        labels = dict(labels)
        if metric == name and all(labels.get(k) == w for k, w in match.items()):
            found[labels.get("channel") or labels.get("queue") or ""] = v
    return found


# ---- item 1: capped values are kept -----------------------------------------------------------------------------

def test_qtime_and_msgage_at_the_display_maximum_are_kept(tmp_path):
    """Checkmk's genuine QSTATUS: MY.QUEUE.TWO has QTIME(999999999, 999999999) next to MSGAGE(2201), MY.QUEUE.ONE
    QTIME( , ).  Before: no qtime series for TWO (999999999 was read as "not available")."""
    text = genuine("runmqsc_qlocal_qstatus_checkmk.txt")
    samples = StandIn(tmp_path, text.splitlines()[0].replace("MY.TEST", QMGR) + "\n", text).samples()
    assert series(samples, "ibmmq_queue_qtime_short") == {"MY.QUEUE.TWO": DISPLAY_MAX}  # ONE: blank, absent
    assert series(samples, "ibmmq_queue_qtime_long") == {"MY.QUEUE.TWO": DISPLAY_MAX}
    assert series(samples, "ibmmq_queue_oldest_message_age")["MY.QUEUE.TWO"] == 2201
    # INVENTED: the same queue once its oldest message is older than runmqsc can show
    capped = text.replace("MSGAGE(2201)", f"MSGAGE({DISPLAY_MAX})")
    assert capped != text
    (tmp_path / "capped").mkdir()
    samples = StandIn(tmp_path / "capped", RUNNING, capped).samples()
    assert series(samples, "ibmmq_queue_oldest_message_age")["MY.QUEUE.TWO"] == DISPLAY_MAX


def test_capped_values_are_documented_as_at_least():
    for spec in (metrics.QUEUE_QTIME_SHORT, metrics.QUEUE_QTIME_LONG, metrics.QUEUE_OLDEST_MESSAGE_AGE,
                 dict(metrics.CHANNEL_PAIRS)["xmitq_time_short"], dict(metrics.CHANNEL_PAIRS)["network_time_short"]):
        assert f"{DISPLAY_MAX} (the largest value MQ shows) means at least" in spec.help, spec.name


def test_pcf_keeps_the_display_maximum(mq):  # noqa: F811 - the fixture
    """PCF answers the same cap in its indicator pairs: kept, as mq_prometheus keeps it (INVENTED answer: the
    genuine SVRCONN of the 9.4.2 capture as a sender with MONCHL(HIGH), NETTIME long at the cap)."""
    sender = {**SVRCONN_942, "1511": 1, "122": 65, "1605": [DISPLAY_MAX, 40], "1604": [7, 9]}
    (channel,) = pcf_snapshot(mq, {"channel_status": [sender]}).channels
    # Distributed PCF gives these pairs long first (mqmetric's idxDefault): NETTIME short 40, long at the cap
    assert (channel.network_time_short, channel.network_time_long) == (40, DISPLAY_MAX)
    assert (channel.xmitq_time_short, channel.xmitq_time_long) == (9, 7)


# ---- item 2: every STATUS and SUBSTATE word ---------------------------------------------------------------------

def _chstatus_block(name: str, status: str, substate: str, chltype: str = "SDR") -> str:
    """INVENTED: one DISPLAY CHSTATUS block in runmqsc's two-column layout (the genuine captures' shape)."""
    return (f"AMQ8417I: Display Channel Status details.\n"
            f"   CHANNEL({name}){' ' * max(1, 31 - len(name))}CHLTYPE({chltype})\n"
            f"   CONNAME(mq2.example.com(1414))          CURRENT\n"
            f"   RQMNAME(QM2)                            STATUS({status})\n"
            f"   SUBSTATE({substate})\n")


def test_every_ibm_substate_word_gives_its_mqchsstate_code(tmp_path):
    """Each SUBSTATE word of IBM's list through the runmqsc parser and the collector gives its MQCHSSTATE number.
    Before: SUBSTATE(SSLHANDSHK) (a channel stuck in its TLS handshake) had no series (the table said SSLHANDSHAKE)."""
    text = "".join(_chstatus_block(f"APP.S{i}", "RUNNING", word) for i, word in enumerate(IBM_SUBSTATES))
    answer = channel_status_from_mqsc(read_mqsc(text, track=(CHSTATUS_ID,)))
    assert answer.error is None
    assert [c.substate for c in answer.channels] == list(IBM_SUBSTATES)
    samples = StandIn(tmp_path, RUNNING, text).samples()
    got = series(samples, "ibmmq_channel_substate")
    assert got == {f"APP.S{i}": code for i, code in enumerate(IBM_SUBSTATES.values())}
    assert {w: c for w, c in CHANNEL_SUBSTATE_CODES.items() if w != "OTHER"} == IBM_SUBSTATES


def test_every_ibm_status_word_gives_its_mqchs_code(tmp_path):
    text = "".join(_chstatus_block(f"APP.C{i}", word, "") for i, word in enumerate(IBM_STATUSES))
    samples = StandIn(tmp_path, RUNNING, text).samples()
    assert series(samples, "ibmmq_channel_status") == {f"APP.C{i}": code for i, code in
                                                       enumerate(IBM_STATUSES.values())}
    assert series(samples, "ibmmq_channel_substate") == {}  # blank SUBSTATE( ): no code, no series
    assert all(CHANNEL_STATUS_CODES[word] == code for word, code in IBM_STATUSES.items())


def test_dashboards_map_every_status_code_the_collector_emits():
    """dashboards/build.py makes its value mappings from the model's tables: every MQCHS code the collector can
    emit has IBM's word on the dashboard."""
    spec = importlib.util.spec_from_file_location("dashboards_build", ROOT / "dashboards" / "build.py")
    build = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(ROOT))
    try:
        spec.loader.exec_module(build)
    finally:
        sys.path.remove(str(ROOT))
    shown = {code: result.text for code, result in build.CHANNEL_STATUS_MAPPING.options.items()}
    for word, code in IBM_STATUSES.items():
        assert shown[str(code)] == word.lower()
    assert shown["0"] == "inactive"


# ---- item 3: MONCHL(OFF) -----------------------------------------------------------------------------------------

def test_monchl_off_figures_are_absent_not_zero(tmp_path):
    """mqfellow's genuine WEST session: sender QMR01.QM01 RUNNING with MONCHL(OFF), NETTIME(0,0), XQTIME(0,0),
    XBATCHSZ(0,0).  Before: six series at 0."""
    samples = StandIn(tmp_path, RUNNING, genuine("runmqsc_dis_chs_all_monchl_off_west_mqfellow.txt")).samples()
    assert series(samples, "ibmmq_channel_status") == {"QMR01.QM01": 3}
    for name in ("ibmmq_channel_xmitq_time_short", "ibmmq_channel_xmitq_time_long", "ibmmq_channel_nettime_short",
                 "ibmmq_channel_nettime_long", "ibmmq_channel_batchsz_short", "ibmmq_channel_batchsz_long"):
        assert series(samples, name) == {}, name
    assert series(samples, "middleware_ibmmq_channel_monitoring_enabled") == {"QMR01.QM01": 0}


def test_a_retrying_sender_without_an_mca_reads_as_retrying_with_no_substate_and_no_measurements(tmp_path):
    """mqfellow's genuine DIS CHSTATUS after REFRESH SECURITY: sender QMR01.QM01 STATUS(RETRYING), MCASTAT(NOT
    RUNNING), blank SUBSTATE( ), SECPROT(NONE), MONCHL(OFF): retrying (5, not stopped), no substate series, no
    measured times, no TLS negotiated (0)."""
    samples = StandIn(tmp_path, RUNNING, genuine("runmqsc_dis_chstatus_retrying_mqfellow.txt")).samples()
    assert series(samples, "ibmmq_channel_status") == {"QMR01.QM01": 5}
    assert series(samples, "ibmmq_channel_substate") == {}
    assert series(samples, "ibmmq_channel_nettime_short") == {}
    assert series(samples, "ibmmq_channel_xmitq_time_long") == {}
    assert series(samples, "ibmmq_channel_security_protocol") == {"QMR01.QM01": 0}


def test_monchl_on_figures_are_kept(tmp_path):
    """INVENTED: the same sender with MONCHL(MEDIUM) and measured figures: the series are there."""
    text = genuine("runmqsc_dis_chs_all_monchl_off_west_mqfellow.txt")
    text = (text.replace("MONCHL(OFF)", "MONCHL(MEDIUM)").replace("NETTIME(0,0)", "NETTIME(310,250)")
            .replace("XQTIME(0,0)", f"XQTIME({DISPLAY_MAX},120)").replace("XBATCHSZ(0,0)", "XBATCHSZ(1,2)"))
    samples = StandIn(tmp_path, RUNNING, text).samples()
    assert series(samples, "ibmmq_channel_nettime_short") == {"QMR01.QM01": 310}
    assert series(samples, "ibmmq_channel_xmitq_time_short") == {"QMR01.QM01": DISPLAY_MAX}  # capped: kept
    assert series(samples, "ibmmq_channel_batchsz_long") == {"QMR01.QM01": 2}
    assert series(samples, "middleware_ibmmq_channel_monitoring_enabled") == {"QMR01.QM01": 1}


def test_pcf_monchl_off_figures_are_absent(mq):  # noqa: F811 - the fixture
    """PCF's MQIA_MONITORING_CHANNEL MQMON_OFF with the zeros MQ sends: None, as runmqsc (INVENTED answer)."""
    sender = {**SVRCONN_942, "1511": 1, "122": 0, "1605": [0, 0], "1604": [0, 0], "1607": [0, 0], "1608": 0}
    (channel,) = pcf_snapshot(mq, {"channel_status": [sender]}).channels
    assert channel.monitoring == "OFF"
    assert (channel.network_time_short, channel.xmitq_time_long, channel.batch_size_short,
            channel.xmitq_messages_available) == (None, None, None, None)


# ---- item 4: the queue manager ended ----------------------------------------------------------------------------

def test_channels_of_an_ended_queue_manager_are_not_inactive(tmp_path):
    """Run 1: QM1 runs (INVENTED dspmq line), runmqsc prints Checkmk's genuine DISPLAY CHANNEL + CHSTATUS (two
    RETRYING senders) and mqfellow's genuine WEST session.  Run 2: dspmq says ``ENDED IMMEDIATELY`` (Checkmk's
    genuine 8.0.0.4 capture, its queue manager renamed QM1).  Before: every defined channel came back as a status-0
    (INACTIVE) series made from run 1's definitions; now no channel series while the queue manager is not running,
    and MiddlewareMqChannelNotRunning (status != 0 and squash == 0) sees nothing."""
    channels = genuine("runmqsc_channel_chstatus_retrying_checkmk.txt")
    qm = StandIn(tmp_path, RUNNING, channels)
    samples = qm.samples()
    assert series(samples, "ibmmq_channel_status") == {"HERE.TO.THERE.ONE": 5, "HERE.TO.THERE.TWO": 5}
    ended = genuine("dspmq_o_all_x_n_ended_immediately_8.0.0.4_checkmk.txt").replace("QMTEMQS02A)", f"{QMGR})")
    assert f"QMNAME({QMGR})" in ended and "ENDED IMMEDIATELY" in ended
    qm.set(ended)
    samples = qm.samples()
    assert samples[("ibmmq_qmgr_status", (("qmgr", QMGR),))] == 0
    assert [m for m, _ in samples if m.startswith(("ibmmq_channel_", "middleware_ibmmq_channel_"))] == []
    # back up: the channels are read again (and a defined channel without status is inactive again)
    qm.set(RUNNING, channels)
    assert series(qm.samples(), "ibmmq_channel_status") == {"HERE.TO.THERE.ONE": 5, "HERE.TO.THERE.TWO": 5}


def test_inactive_definitions_still_shown_while_running(tmp_path):
    """The definitions of a running queue manager without status stay inactive (0) series with their MQCHT type."""
    text = genuine("runmqsc_channel_chstatus_retrying_checkmk.txt")
    samples = StandIn(tmp_path, RUNNING, text, channels_exclude=[]).samples()
    assert series(samples, "ibmmq_channel_status")["SYSTEM.DEF.SENDER"] == 0
    assert series(samples, "ibmmq_channel_type")["SYSTEM.DEF.SENDER"] == 1  # MQCHT_SENDER


# ---- item 7: mq_prometheus's channel codes ----------------------------------------------------------------------

def test_channel_type_instance_type_and_security_protocol(tmp_path):
    """mqfellow's genuine EAST session: sender QM01.QMR01 BINDING / NETCONNECT with SECPROT(NONE), receiver
    QMR01.QM01 RUNNING with SECPROT(TLSV12), both CURRENT.  mq_prometheus's codes: MQCHT_SENDER 1, MQCHT_RECEIVER 3,
    MQOT_CURRENT_CHANNEL 1011, MQSECPROT_NONE 0, MQSECPROT_TLSV12 4.  Before: none of the three series."""
    samples = StandIn(tmp_path, RUNNING, genuine("runmqsc_dis_chs_all_monchl_off_east_mqfellow.txt")).samples()
    assert series(samples, "ibmmq_channel_status") == {"QM01.QMR01": 1, "QMR01.QM01": 3}
    assert series(samples, "ibmmq_channel_substate") == {"QM01.QMR01": 1250, "QMR01.QM01": 300}
    assert series(samples, "ibmmq_channel_type") == {"QM01.QMR01": 1, "QMR01.QM01": 3}
    assert series(samples, "ibmmq_channel_instance_type") == {"QM01.QMR01": 1011, "QMR01.QM01": 1011}
    assert series(samples, "ibmmq_channel_security_protocol") == {"QM01.QMR01": 0, "QMR01.QM01": 4}
    assert series(samples, "ibmmq_channel_security_protocol", type="RECEIVER", rqmname="QMR01") == {"QMR01.QM01": 4}


def test_pcf_channel_codes(mq):  # noqa: F811 - the fixture
    """PCF's numbers read to the same words (INVENTED answer: TLS 1.3, MQSECPROT_TLSV13 8; SSL handshake)."""
    sender = {**SVRCONN_942, "1511": 1, "1645": 8, "1609": 1300, "1527": 1}
    (channel,) = pcf_snapshot(mq, {"channel_status": [sender]}).channels
    assert (channel.type, channel.status, channel.substate, channel.instance_type, channel.security_protocol) == (
        "SENDER", "BINDING", "SSLHANDSHK", "CURRENT", "TLSV13")
    assert pcf.MQIACH_SECURITY_PROTOCOL == 1645


# mq_prometheus's object-status names (mq-golang mqmetric channel.go, queue.go, qmgr.go, ATTR_* constants at commit
# 965b115c2dcc0268fe5b86e5ddc74dc62f9cfa12; class "channel" -> ibmmq_channel_<attr>, ...) -> the name declared here,
# or why it is not (a figure none of the back-ends reads).
MQ_PROMETHEUS = {
    "channel": {
        "batches": "ibmmq_channel_batches_total", "batchsz_long": None, "batchsz_short": None,
        "buffers_rcvd": "ibmmq_channel_buffers_rcvd_total", "buffers_sent": "ibmmq_channel_buffers_sent_total",
        "bytes_rcvd": "ibmmq_channel_bytes_rcvd_total", "bytes_sent": "ibmmq_channel_bytes_sent_total",
        "cur_inst": None, "instance_type": None, "attribute_max_inst": None, "attribute_max_instc": None,
        "messages": "ibmmq_channel_messages_total", "nettime_long": None, "nettime_short": None,
        "security_protocol": None, "time_since_msg": None, "start_epoch": None, "status": None,
        "status_squash": None, "substate": None, "type": None, "xmitq_time_long": None, "xmitq_time_short": None,
    },
    "queue": {
        "qfile_current_size": None, "qfile_max_size": None, "depth": None,
        "mqget_count": "ibmmq_queue_mqget_count_total",
        "mqput_mqput1_count": "ibmmq_queue_mqput_mqput1_count_total", "input_handles": None,
        "attribute_max_depth": None, "oldest_message_age": None, "output_handles": None, "qtime_long": None,
        "qtime_short": None, "time_since_get": None, "time_since_put": None, "uncommitted_messages": None,
        "attribute_usage": None,
        "hi_depth": "not read: RESET QSTATS HIQDEPTH (mq_prometheus reads it only on z/OS with useResetQStats)",
    },
    "qmgr": {
        "channel_initiator_status": None, "command_server_status": None, "connection_count": None,
        "log_extent_archive": None, "log_extent_current": None, "log_extent_media": None,
        "log_extent_restart": None, "log_size_archive": None, "log_size_media": None, "log_size_restart": None,
        "log_size_reusable": None, "log_start_epoch": None, "status": None, "uptime": None,
        "active_listeners": "not read: DISPLAY LSSTATUS(*) is not among the back-ends' commands",
        "active_services": "not read: DISPLAY SVSTATUS(*) is not among the back-ends' commands",
        "max_channels": "z/OS only (DISPLAY QMGR MAXCHL): not read", "max_active_channels": "z/OS only: not read",
        "max_tcp_channels": "z/OS only: not read",
    },
}


def test_every_mq_prometheus_status_name_the_back_ends_read_is_declared():
    declared = {spec.name for spec in metrics.SPECS}
    missing = []
    for cls, names in MQ_PROMETHEUS.items():
        for attr, ours in names.items():
            if ours is None:
                ours = f"ibmmq_{cls}_{attr}"
            if ours.startswith(("ibmmq_", "middleware_")) and ours not in declared:
                missing.append(ours)
    assert missing == []
