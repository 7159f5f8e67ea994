"""Issue 28, the collector side: channel, queue-activity and queue-manager health from the extended model
(QueueStatus, ChannelState, ChannelDefinition, QmgrHealth) under mq_prometheus's names, the channel selection,
inactive channels, the counters fed with differences, failed optional sources and the MAXHANDS cap of the
statistics subscriptions.  Snapshots here are invented (a fake back-end); the end-to-end test at the bottom runs the
runmqsc back-end on the genuine 9.4.2 captures (tests/systems/ibmmq/fixtures/real, SOURCE.md)."""

from __future__ import annotations

import zoneinfo
from datetime import datetime, timezone
from pathlib import Path

import pytest

from exporter.core.collector import Context
from exporter.systems.ibmmq import collector as ibmmq_collector
from exporter.systems.ibmmq.collector import IbmmqCollector
from exporter.systems.ibmmq.model import (
    Backend,
    ChannelDefinition,
    ChannelState,
    QmgrHealth,
    QmgrSnapshot,
    QueueStatus,
)
from exporter.systems.ibmmq.settings import IbmmqSettings, QueueManagerEntry
from exporter.systems.ibmmq.statistics import handles_cap

from ...support import collect
from .test_ibmmq_stats import fake_mq  # noqa: F401 - the fixture (stand-in ibmmq with MAXHANDS)
from .test_mq_runmqsc import StandIns

REAL = Path(__file__).parent / "fixtures" / "real"
BERLIN = "Europe/Berlin"
needs_tz = pytest.mark.skipif(BERLIN not in zoneinfo.available_timezones(), reason="no IANA time zone data")
# 2025-05-12 08:00:00 in Berlin (CEST, UTC+2) = 06:00:00 UTC
NOW = datetime(2025, 5, 12, 6, 0, 0, tzinfo=timezone.utc).timestamp()


class SnapshotBackend(Backend):
    """Returns the snapshots it is given, one per read (the last one again when they run out)."""

    name = "fake"

    def __init__(self, *snapshots: QmgrSnapshot) -> None:
        self.snapshots = list(snapshots)

    def snapshot(self) -> QmgrSnapshot:
        return self.snapshots.pop(0) if len(self.snapshots) > 1 else self.snapshots[0]


def make(monkeypatch, *snapshots: QmgrSnapshot, **entry) -> IbmmqCollector:
    settings = IbmmqSettings.model_validate({"enabled": True, "queue_managers": [
        {"name": "QM1", "backend": "runmqsc", "timeout": "2s", **entry}]})
    backend = SnapshotBackend(*snapshots)
    monkeypatch.setattr(ibmmq_collector, "make_backend", lambda e: backend)
    c = IbmmqCollector(settings, Context())
    c.clock = lambda: NOW
    return c


def v(samples, name, /, **labels):
    return samples[(name, tuple(sorted(labels.items())))]


def series(samples, name):
    return {labels: value for (metric, labels), value in samples.items() if metric == name}


def ch(channel, ctype, conn="", rqm="", job=""):
    return {"qmgr": "QM1", "channel": channel, "type": ctype, "connname": conn, "rqmname": rqm, "jobname": job}


# invented figures, shaped like the 9.4.2 captures
SENDER = ChannelState(
    "APP.TO.QM2", "RUNNING", "SDR", "qm2host(1414)", substate="MQGET", indoubt=False, messages=100,
    bytes_sent=5000, bytes_received=800, buffers_sent=60, buffers_received=50, batches=20,
    last_message=datetime(2025, 5, 12, 7, 59, 0), started=datetime(2025, 5, 12, 7, 0, 0), xmitq_time_short=120,
    xmitq_time_long=90, network_time_short=300, network_time_long=250, batch_size_short=5, batch_size_long=4,
    remote_qmgr="QM2", job_name="00001234000000AB", short_retries_left=10, long_retries_left=999999999)
DEFINITIONS = [
    ChannelDefinition("APP.TO.QM2", "SENDER"),
    ChannelDefinition("APP.SVRCONN", "SVRCONN", max_instances=50, max_instances_per_client=5),
    ChannelDefinition("APP.IDLE.RCVR", "RECEIVER"),
    ChannelDefinition("APP.CLIENT", "CLNTCONN"),
    ChannelDefinition("SYSTEM.DEF.SVRCONN", "SVRCONN", max_instances=999999999, max_instances_per_client=999999999),
]


def svrconn(conn: str, job: str, messages: int, started=datetime(2025, 5, 12, 6, 0, 0)) -> ChannelState:
    return ChannelState("APP.SVRCONN", "RUNNING", "SVRCONN", conn, substate="RECEIVE", messages=messages,
                        job_name=job, started=started, sharing_conversations=3)


def snap(channels, definitions=DEFINITIONS, **kw) -> QmgrSnapshot:
    return QmgrSnapshot("QM1", "RUNNING", channels=list(channels), channel_definitions=definitions, **kw)


@needs_tz
def test_channel_status_details_have_mq_prometheus_names(monkeypatch):
    c = make(monkeypatch, snap([SENDER, svrconn("10.0.0.7", "J1", 7), svrconn("10.0.0.8", "J2", 9)]),
             time_zone=BERLIN)
    samples, batch = collect(c)
    assert batch.errors == {}
    s = ch("APP.TO.QM2", "SENDER", "qm2host(1414)", "QM2")
    assert v(samples, "ibmmq_channel_status", **s) == 3 and v(samples, "ibmmq_channel_status_squash", **s) == 2
    assert v(samples, "ibmmq_channel_substate", **s) == 1600  # MQGET
    assert v(samples, "middleware_ibmmq_channel_indoubt", **s) == 0
    assert v(samples, "ibmmq_channel_time_since_msg", **s) == 60  # 07:59 Berlin, now 08:00 Berlin
    assert v(samples, "ibmmq_channel_start_epoch", **s) == (NOW - 3600) * 1000  # milliseconds
    assert (v(samples, "ibmmq_channel_xmitq_time_short", **s), v(samples, "ibmmq_channel_xmitq_time_long", **s),
            v(samples, "ibmmq_channel_nettime_short", **s), v(samples, "ibmmq_channel_nettime_long", **s),
            v(samples, "ibmmq_channel_batchsz_short", **s), v(samples, "ibmmq_channel_batchsz_long", **s)) == (
        120, 90, 300, 250, 5, 4)  # microseconds raw, as mq_prometheus
    assert v(samples, "middleware_ibmmq_channel_retries_left", kind="short", **s) == 10
    assert v(samples, "ibmmq_channel_cur_inst", **s) == 1
    # counters: the first read adds nothing (the counts predate the exporter)
    assert v(samples, "ibmmq_channel_messages_total", **s) == 0
    assert v(samples, "ibmmq_channel_batches_total", **s) == 0
    # SVRCONN: both instances counted on each series, MAXINST/MAXINSTC from the definition
    for conn in ("10.0.0.7", "10.0.0.8"):
        labels = ch("APP.SVRCONN", "SVRCONN", conn)
        assert v(samples, "ibmmq_channel_cur_inst", **labels) == 2
        assert v(samples, "ibmmq_channel_attribute_max_inst", **labels) == 50
        assert v(samples, "ibmmq_channel_attribute_max_instc", **labels) == 5
        assert v(samples, "middleware_ibmmq_channel_sharing_conversations", **labels) == 3
        assert v(samples, "ibmmq_channel_substate", **labels) == 300
    # absent, not 0, where the back-end had nothing (no batches for a SVRCONN, no in-doubt word)
    assert ("ibmmq_channel_batches_total", tuple(sorted(ch("APP.SVRCONN", "SVRCONN", "10.0.0.7").items()))) \
        not in samples
    assert not any(dict(labels)["channel"] == "APP.SVRCONN" for labels in series(
        samples, "middleware_ibmmq_channel_indoubt"))


def test_channel_counters_add_differences_since_the_exporter_started(monkeypatch):
    """mq_prometheus's semantics for MSGS, BYTSSENT, ...: the difference between two reads; a restarted instance
    (a fall) adds its new count; an instance that appears after the first read adds its whole count."""
    one = svrconn("10.0.0.7", "J1", 1000)
    c = make(monkeypatch,
             snap([one]),
             snap([svrconn("10.0.0.7", "J1", 1500)]),
             snap([svrconn("10.0.0.7", "J1", 40)]),  # the instance restarted (same job, counts from 0 again)
             snap([svrconn("10.0.0.7", "J1", 60), svrconn("10.0.0.7", "J9", 25)]))  # a second connection
    labels = ch("APP.SVRCONN", "SVRCONN", "10.0.0.7")
    got = [v(collect(c)[0], "ibmmq_channel_messages_total", **labels) for _ in range(4)]
    assert got == [0, 500, 540, 540 + 20 + 25]


def test_jobname_label_only_by_option(monkeypatch):
    instances = [svrconn("10.0.0.7", "J1", 1), svrconn("10.0.0.7", "J2", 2)]
    samples, _ = collect(make(monkeypatch, snap(instances)))
    assert {dict(k)["jobname"] for k in series(samples, "ibmmq_channel_status")} == {""}
    assert len([k for k in series(samples, "ibmmq_channel_status") if dict(k)["channel"] == "APP.SVRCONN"]) == 1
    samples, _ = collect(make(monkeypatch, snap(instances), channel_jobname_label=True))
    assert {dict(k)["jobname"] for k in series(samples, "ibmmq_channel_status")
            if dict(k)["channel"] == "APP.SVRCONN"} == {"J1", "J2"}


def test_inactive_defined_channels_are_status_0(monkeypatch):
    samples, _ = collect(make(monkeypatch, snap([SENDER])))
    idle = ch("APP.IDLE.RCVR", "RECEIVER")
    assert v(samples, "ibmmq_channel_status", **idle) == 0 and v(samples, "ibmmq_channel_status_squash", **idle) == 0
    assert v(samples, "ibmmq_channel_cur_inst", **idle) == 0
    assert v(samples, "ibmmq_channel_attribute_max_inst", **ch("APP.SVRCONN", "SVRCONN")) == 50
    names = {dict(k)["channel"] for k in series(samples, "ibmmq_channel_status")}
    # client-connection definitions never run on the queue manager; SYSTEM.* are left out by default
    assert names == {"APP.TO.QM2", "APP.IDLE.RCVR", "APP.SVRCONN"}
    assert v(samples, "middleware_ibmmq_channels_excluded", qmgr="QM1") == 1
    samples, _ = collect(make(monkeypatch, snap([SENDER]), show_inactive_channels=False))
    assert {dict(k)["channel"] for k in series(samples, "ibmmq_channel_status")} == {"APP.TO.QM2"}


@pytest.mark.parametrize("include, exclude, expected", [
    ("APP.*,!APP.IDLE*", None, {"APP.TO.QM2", "APP.SVRCONN"}),
    (["!APP.IDLE*"], None, {"APP.TO.QM2", "APP.SVRCONN"}),  # only exclusions: everything else
    (["!APP.*", "APP.SVRCONN"], None, set()),  # an exclusion always wins (mq_prometheus's rule)
    (["*"], [], {"APP.TO.QM2", "APP.SVRCONN", "APP.IDLE.RCVR", "SYSTEM.DEF.SVRCONN"}),
])
def test_channel_patterns(monkeypatch, include, exclude, expected):
    entry = {"channels_include": include} | ({"channels_exclude": exclude} if exclude is not None else {})
    samples, _ = collect(make(monkeypatch, snap([SENDER, svrconn("10.0.0.7", "J1", 1)]), **entry))
    assert {dict(k)["channel"] for k in series(samples, "ibmmq_channel_status")} == expected


def test_queue_patterns_take_bang_entries_too():
    entry = QueueManagerEntry(name="QM1", backend="runmqsc", include="APP.*,!APP.TEST*")
    qm = ibmmq_collector._QueueManager(entry, 10.0)
    assert [q for q in ("APP.IN", "APP.TEST.IN", "OTHER", "SYSTEM.X") if qm.wanted(q)] == ["APP.IN"]


@needs_tz
def test_queue_activity(monkeypatch):
    busy = QueueStatus("APP.IN", depth=5, last_put=datetime(2025, 5, 12, 7, 58, 20),
                       last_get=datetime(2025, 5, 12, 7, 50, 0), qtime_short=1500, qtime_long=2500, uncommitted=2,
                       file_size_mb=1, file_max_size_mb=2088960, monitoring="MEDIUM", usage="XMITQ")
    quiet = QueueStatus("APP.OUT", depth=0, monitoring="OFF", usage="NORMAL")
    future = QueueStatus("APP.SKEW", depth=0, last_put=datetime(2025, 5, 12, 8, 5, 0))
    samples, _ = collect(make(monkeypatch, QmgrSnapshot("QM1", "RUNNING", queues=[busy, quiet, future]),
                              time_zone=BERLIN))
    q = {"qmgr": "QM1", "queue": "APP.IN"}
    assert v(samples, "ibmmq_queue_time_since_put", **q) == 100
    assert v(samples, "ibmmq_queue_time_since_get", **q) == 600
    assert (v(samples, "ibmmq_queue_qtime_short", **q), v(samples, "ibmmq_queue_qtime_long", **q)) == (1500, 2500)
    assert v(samples, "ibmmq_queue_uncommitted_messages", **q) == 2
    assert (v(samples, "ibmmq_queue_qfile_current_size", **q), v(samples, "ibmmq_queue_qfile_max_size", **q)) == (
        1, 2088960)
    assert v(samples, "ibmmq_queue_attribute_usage", **q) == 1
    assert v(samples, "middleware_ibmmq_queue_monitoring_enabled", **q) == 1
    out = {"qmgr": "QM1", "queue": "APP.OUT"}
    assert v(samples, "middleware_ibmmq_queue_monitoring_enabled", **out) == 0
    assert v(samples, "ibmmq_queue_attribute_usage", **out) == 0
    # blank (monitoring off) is absent, never 0 ("never" must not look like "just now")
    for name in ("ibmmq_queue_time_since_put", "ibmmq_queue_time_since_get", "ibmmq_queue_qtime_short",
                 "ibmmq_queue_uncommitted_messages"):
        assert (name, tuple(sorted(out.items()))) not in samples
    # a timestamp from the future (clocks or time_zone off) counts as 0
    assert v(samples, "ibmmq_queue_time_since_put", qmgr="QM1", queue="APP.SKEW") == 0


@needs_tz
def test_time_zone_decides_the_ages(monkeypatch):
    """The same printed time is 2 hours older in UTC+2 than in UTC (Berlin in May vs. London's BST +1)."""
    queue = QueueStatus("APP.IN", depth=0, last_put=datetime(2025, 5, 12, 6, 0, 0))
    ages = {zone: v(collect(make(monkeypatch, QmgrSnapshot("QM1", "RUNNING", queues=[queue]), time_zone=zone))[0],
                    "ibmmq_queue_time_since_put", qmgr="QM1", queue="APP.IN")
            for zone in (BERLIN, "Europe/London", "Etc/UTC")}
    assert ages == {BERLIN: 7200, "Europe/London": 3600, "Etc/UTC": 0}


def test_unknown_time_zone_is_refused():
    with pytest.raises(ValueError, match="unknown time zone"):
        QueueManagerEntry(name="QM1", backend="runmqsc", time_zone="Mars/Olympus")


HEALTH = QmgrHealth(
    connections=44, command_server="RUNNING", channel_initiator="STOPPED", started=datetime(2025, 5, 12, 7, 0, 0),
    log_started=datetime(2025, 5, 12, 6, 5, 21), log_in_use_percent=13, log_utilization_percent=14,
    log_extent_current=12, log_extent_media=3, log_extent_restart=11, log_extent_archive=10, log_size_archive_mb=2,
    log_size_reusable_mb=0, log_size_media_mb=5, log_size_restart_mb=1, qm_fs_size_mb=253824, qm_fs_in_use_percent=11,
    version="09040200", command_level="942", qmid="QM1_2025-04-22_03.01.05", platform="UNIX",
    dead_letter_queue="DEV.DEAD.LETTER.QUEUE", max_handles=256)


@needs_tz
def test_queue_manager_health(monkeypatch):
    samples, _ = collect(make(monkeypatch, QmgrSnapshot("QM1", "RUNNING", health=HEALTH), time_zone=BERLIN))
    q = {"qmgr": "QM1"}
    assert v(samples, "ibmmq_qmgr_connection_count", **q) == 44
    assert v(samples, "ibmmq_qmgr_command_server_status", **q) == 2
    assert v(samples, "ibmmq_qmgr_channel_initiator_status", **q) == 0
    assert v(samples, "ibmmq_qmgr_uptime", **q) == 3600
    assert v(samples, "middleware_ibmmq_qmgr_start_time_seconds", **q) == NOW - 3600
    assert v(samples, "ibmmq_qmgr_log_start_epoch", **q) == (NOW - 2 * 3600 + 321) * 1000
    assert [v(samples, f"ibmmq_qmgr_log_extent_{k}", **q) for k in ("current", "media", "restart", "archive")] == [
        12, 3, 11, 10]
    assert v(samples, "ibmmq_qmgr_log_size_media", **q) == 5 * 1048576  # bytes, as mq_prometheus
    assert v(samples, "ibmmq_qmgr_log_size_reusable", **q) == 0
    assert v(samples, "middleware_ibmmq_qmgr_log_in_use_percent", **q) == 13
    assert v(samples, "middleware_ibmmq_qmgr_file_system_size_bytes", **q) == 253824 * 1048576
    assert v(samples, "middleware_ibmmq_qmgr_max_handles", **q) == 256
    assert ("middleware_ibmmq_qmgr_log_file_system_size_bytes", (("qmgr", "QM1"),)) not in samples  # SHARED
    info = dict(next(k for k in series(samples, "middleware_ibmmq_qmgr_info")))
    assert info == {"qmgr": "QM1", "version": "09040200", "cmdlevel": "942", "qmid": "QM1_2025-04-22_03.01.05",
                    "platform": "UNIX", "dlq": "DEV.DEAD.LETTER.QUEUE"}


def test_failed_optional_source_is_its_own_not_the_targets(monkeypatch):
    """DISPLAY CHANNEL failing: the source is reported failed with its error, the queue manager stays up, and the
    inactive channels of the last good definitions stay (no flapping series)."""
    c = make(monkeypatch, snap([SENDER]),
             snap([SENDER], definitions=None, source_errors={"channel": "DISPLAY CHANNEL: no answer"}))
    collect(c)
    samples, batch = collect(c)
    target = batch.reports.targets["QM1"]
    assert target.up is True
    assert target.sources["channel"].ok is False
    assert target.sources["channel"].error == "runmqsc: DISPLAY CHANNEL: no answer"
    assert v(samples, "middleware_ibmmq_backend_success", qmgr="QM1", backend="runmqsc") == 1
    assert v(samples, "ibmmq_channel_status", **ch("APP.IDLE.RCVR", "RECEIVER")) == 0
    assert batch.errors == {}


# ---- MAXHANDS: the statistics subscriptions never take the connection past it ------------------------------------

def test_handles_cap_arithmetic():
    assert handles_cap(None) is None and handles_cap(0) is None
    assert handles_cap(256) == 123  # default MAXHANDS: more than the default 50 queues
    assert handles_cap(12) == 1 and handles_cap(5) == 0


def test_statistics_stay_under_maxhands(fake_mq):  # noqa: F811
    """40 queues wanted, MAXHANDS 40: before, the 39th subscription failed with 2017 and every run lost all
    counts; now the exporter subscribes for (40 - 10) // 2 = 15 queues and says so."""
    mq, clock = fake_mq
    mq.SCENARIO["queues"] = [{"name": f"APP.Q{i:02d}", "depth": 0, "max_depth": 5000, "share": 1 / 40}
                             for i in range(40)]
    mq.SCENARIO.update(maxhands=40, qmgr_attrs={"11": 40})
    settings = IbmmqSettings.model_validate({"enabled": True, "queue_managers": [
        {"name": "QM1", "backend": "pcf", "channel": "MONITOR.SVRCONN", "conn_name": "mqhost(1414)"}]})
    c = IbmmqCollector(settings, Context())
    for _ in range(3):
        samples, batch = collect(c)
        labels = (("qmgr", "QM1"), ("source", "publications"))
        assert samples["middleware_ibmmq_statistics_success", labels] == 1, batch.errors
        assert samples["middleware_ibmmq_statistics_handles_cap", labels] == 15
        assert samples["middleware_ibmmq_statistics_subscriptions", labels] == 2 + 2 * 15
        assert samples["middleware_ibmmq_statistics_queues_not_subscribed", labels] == 25
        assert mq.handles()["open"] <= 40
        clock.now += 10
    c.close()


# ---- end to end: the runmqsc back-end on the genuine 9.4.2 captures ------------------------------------------------

@needs_tz
def test_runmqsc_captures_end_to_end(tmp_path):
    mq = StandIns(tmp_path)
    mq.set_dspmq("QMNAME(QM1)".ljust(58) + "STATUS(Running)\n")
    mq.set_runmqsc("".join((REAL / name).read_text() for name in (
        "runmqsc_dis_qstatus_monq_off_curfsize_devserver_2021.txt", "runmqsc_display_chstatus_all_svrconn_9.4.2.txt",
        "runmqsc_display_channel_all_maxinst_9.4.2.txt", "runmqsc_display_qmstatus_all_9.4.2.txt",
        "runmqsc_display_qmgr_all_9.4.2.txt")))
    settings = IbmmqSettings.model_validate({"enabled": True, "queue_managers": [
        {"name": "QM1", "backend": "runmqsc", "runmqsc": str(mq.runmqsc), "dspmq": str(mq.dspmq), "timeout": "10s",
         "statistics": "off", "time_zone": "Etc/UTC", "channels_exclude": ["SYSTEM.DEF.*", "SYSTEM.AUTO.*"]}]})
    c = IbmmqCollector(settings, Context())
    c.clock = lambda: datetime(2025, 5, 12, 6, 31, 54, tzinfo=timezone.utc).timestamp()
    samples, batch = collect(c)
    assert batch.errors == {}
    assert all(s.ok for s in batch.reports.targets["QM1"].sources.values())
    admin = ch("SYSTEM.ADMIN.SVRCONN", "SVRCONN", "9.38.73.124")
    assert v(samples, "ibmmq_channel_status", **admin) == 3
    assert v(samples, "ibmmq_channel_substate", **admin) == 300  # RECEIVE
    assert v(samples, "ibmmq_channel_time_since_msg", **admin) == 30  # LSTMSGTI(06.31.24)
    assert v(samples, "ibmmq_channel_messages_total", **admin) == 0  # first read
    assert v(samples, "middleware_ibmmq_channel_sharing_conversations", **admin) == 10
    assert v(samples, "ibmmq_channel_attribute_max_inst", **admin) == 999999999
    # defined, no status: inactive; DEV.* from the same capture
    assert v(samples, "ibmmq_channel_status", **ch("DEV.APP.SVRCONN", "SVRCONN")) == 0
    assert v(samples, "ibmmq_qmgr_connection_count", qmgr="QM1") == 44
    assert v(samples, "ibmmq_qmgr_command_server_status", qmgr="QM1") == 2
    assert v(samples, "middleware_ibmmq_qmgr_log_in_use_percent", qmgr="QM1") == 13
    assert v(samples, "middleware_ibmmq_qmgr_max_handles", qmgr="QM1") == 256
    assert v(samples, "ibmmq_qmgr_uptime", qmgr="QM1") == 38 * 60 - 1  # STARTTI(05.53.55)
    info = dict(next(iter(series(samples, "middleware_ibmmq_qmgr_info"))))
    assert (info["version"], info["cmdlevel"]) == ("09040200", "942")
