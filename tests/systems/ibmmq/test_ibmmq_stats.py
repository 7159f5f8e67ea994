"""Put/get counts from IBM MQ resource-statistics publications: the PCF decoder and metadata catalogue on
real-shaped messages (built by tests/fakes/ibmmq/publications.py from a real queue manager's metadata), the PCF
back-end's subscriptions through a stand-in ``ibmmq`` module, amqsrua's text, opt-in RESET QSTATS, and the
collector: metrics, failure isolation, no secrets in errors, REST without counts."""

from __future__ import annotations

import random
import struct
import sys
from pathlib import Path

import pytest

from exporter.core.backoff import Backoff
from exporter.core.collector import Context
from exporter.systems.ibmmq import pcf
from exporter.systems.ibmmq import resstats as rs
from exporter.systems.ibmmq.collector import IbmmqCollector
from exporter.systems.ibmmq.parse import amqsrua_interval, parse_amqsrua
from exporter.systems.ibmmq.settings import IbmmqSettings, QueueManagerEntry
from exporter.systems.ibmmq.statistics import AmqsruaStats

from ...fakes import ibmmq as fake
from ...fakes.ibmmq import publications as pub
from ...support import collect
from .test_ibmmq import ibmmq_module  # noqa: F401 - the fixture

AMQSRUA = Path(__file__).parent / "fixtures" / "amqsrua"
META = pub.real_metadata()


def catalogue(meta=META, qmgr="QM1") -> rs.Catalogue:
    messages = pub.metadata_messages(meta, qmgr)
    cat = rs.Catalogue()
    cat.add_classes(rs.decode_pcf(messages[rs.classes_topic(qmgr)]))
    for topic, data in messages.items():
        if topic.endswith("/TYPES"):
            cat.add_types(rs.decode_pcf(data))
    for topic, data in messages.items():
        if not topic.endswith(("/TYPES", "/CLASSES")):
            cat.add_elements(rs.decode_pcf(data))
    return cat


# ---- decoder and catalogue ---------------------------------------------------------------------------------------

def test_constants_match_ibmmq(ibmmq_module):  # noqa: F811
    from ibmmq import CMQC, CMQCFC

    for name in ("MQCA_Q_MGR_NAME", "MQCA_Q_NAME", "MQCA_TOPIC_STRING"):
        assert getattr(rs, name) == getattr(CMQC, name), name
    for name in ("MQCFT_INTEGER", "MQCFT_STRING", "MQCFT_INTEGER_LIST", "MQCFT_STRING_LIST", "MQCFT_BYTE_STRING",
                 "MQCFT_GROUP", "MQCFT_INTEGER64", "MQCFT_INTEGER64_LIST", "MQIACF_OBJECT_TYPE",
                 "MQIAMO_MONITOR_CLASS", "MQIAMO_MONITOR_TYPE", "MQIAMO_MONITOR_ELEMENT", "MQIAMO_MONITOR_DATATYPE",
                 "MQIAMO_MONITOR_FLAGS", "MQIAMO64_MONITOR_INTERVAL", "MQCAMO_MONITOR_CLASS", "MQCAMO_MONITOR_TYPE",
                 "MQCAMO_MONITOR_DESC", "MQGACF_MONITOR_CLASS", "MQGACF_MONITOR_TYPE", "MQGACF_MONITOR_ELEMENT",
                 "MQIAMO_MONITOR_FLAGS_OBJNAME", "MQIAMO_MONITOR_DELTA", "MQCFH_STRUC_LENGTH"):
        assert getattr(rs, name) == getattr(CMQCFC, name), name
    for name in ("MQSO_CREATE", "MQSO_NON_DURABLE", "MQSO_MANAGED", "MQSO_FAIL_IF_QUIESCING", "MQGMO_WAIT",
                 "MQGMO_NO_WAIT", "MQGMO_NO_SYNCPOINT", "MQGMO_CONVERT", "MQGMO_FAIL_IF_QUIESCING",
                 "MQRC_NO_MSG_AVAILABLE", "MQIA_MSG_ENQ_COUNT", "MQIA_MSG_DEQ_COUNT"):
        assert getattr(pcf, name) == getattr(CMQC, name), name
    assert pcf.MQCMD_RESET_Q_STATS == CMQCFC.MQCMD_RESET_Q_STATS


def test_our_decoder_agrees_with_ibmmqs_on_every_generated_message(ibmmq_module):  # noqa: F811
    """The same bytes through ibmmq's own PCFExecute.unpack (with its C part stubbed): same parameters, values and
    group members, so the generator writes what IBM's library reads."""
    messages = list(pub.metadata_messages(META, "QM1").values())
    messages.append(pub.publication(META, "QM1", "STATQ", "GET", {"MQGET count": 7}, queue="RULESIN"))
    messages.append(pub.publication(META, "QM1", "STATMQI", "PUT", {"Interval total MQPUT/MQPUT1 count": 9},
                                    int64=False))
    for data in messages:
        theirs, header = ibmmq_module.PCFExecute.unpack(data)
        ours = rs.decode_pcf(data)
        assert header.ParameterCount == len(ours.params)
        for p in ours.params:
            if p.type == rs.MQCFT_GROUP:
                groups = theirs[p.parameter]
                assert any(all(_same(g.get(m.parameter), m.value) for m in p.value) for g in groups)
            else:
                assert _same(theirs[p.parameter], p.value), p


def _same(theirs, ours) -> bool:
    if isinstance(theirs, bytes):
        theirs = theirs.decode().rstrip("\0 ").strip()
    return theirs == ours


def test_metadata_and_publications_read_through_the_metadata():
    cat = catalogue()
    assert sorted(c.name for c in cat.classes.values()) == ["CPU", "DISK", "NHAREPLICA", "STATAPP", "STATMQI",
                                                            "STATQ"]
    assert cat.type_by_name("STATQ", "GET").data_topic == "$SYS/MQ/INFO/QMGR/QM1/Monitor/STATQ/%s/GET"
    assert cat.class_by_name("STATQ").flags & rs.MQIAMO_MONITOR_FLAGS_OBJNAME
    data = pub.publication(META, "QM1", "STATQ", "GET", {"MQGET count": 1074, "MQGET byte count": 10**6,
                                                         "destructive MQGET fails": 3}, queue="RULESIN")
    p = rs.read_publication(rs.decode_pcf(data), cat)
    assert (p.class_name, p.type_name, p.object_name, p.interval, p.counts) == ("STATQ", "GET", "RULESIN", 10.0,
                                                                                {"gets": 1074})
    data = pub.publication(META, "QM1", "STATMQI", "GET", {"Interval total destructive get- count": 2148},
                           interval_us=9_998_000, int64=False)  # MQCFIN values decode the same
    p = rs.read_publication(rs.decode_pcf(data), cat)
    assert (p.class_name, p.type_name, p.object_name, p.counts, p.interval) == ("STATMQI", "GET", None,
                                                                                {"gets": 2148}, 9.998)


def test_elements_are_found_by_description_not_by_id():
    """A queue manager whose metadata numbers the elements differently (a later release may): the count is
    still the one the metadata calls "MQGET count"."""
    meta = pub.real_metadata()
    get = next(t for c in meta.values() if c.name == "STATQ" for t in c.types.values() if t.name == "GET")
    renumbered = {}
    for e in get.elements.values():
        e.id = 40 - e.id
        renumbered[e.id] = e
    get.elements = renumbered
    data = pub.publication(meta, "QM1", "STATQ", "GET", {"MQGET count": 55, "MQGET byte count": 999},
                           queue="Q1")
    assert rs.read_publication(rs.decode_pcf(data), catalogue(meta)).counts == {"gets": 55}
    data = pub.publication(meta, "QM1", "STATQ", "GET", {}, queue="Q1")
    data = data.replace(struct.pack("<4i", 3, 16, 840, 3), struct.pack("<4i", 3, 16, 840, 9))  # type 9
    with pytest.raises(rs.PublicationError, match="metadata does not list"):
        rs.read_publication(rs.decode_pcf(data), catalogue(meta))


def test_big_endian_message_decodes():
    le = pub.publication(META, "QM1", "STATMQI", "PUT", {"Interval total MQPUT/MQPUT1 count": 12}, int64=False)
    # re-encode as big-endian: every MQLONG of these structures swapped (strings are byte strings)
    msg = rs.decode_pcf(le)
    be = struct.pack(">9i", 21, 36, 1, 0, 1, 1, 0, 0, len(msg.params))
    for p in msg.params:
        if p.type == rs.MQCFT_INTEGER:
            be += struct.pack(">4i", 3, 16, p.parameter, p.value)
        elif p.type == rs.MQCFT_INTEGER64:
            be += struct.pack(">4iq", 23, 24, p.parameter, 0, p.value)
        else:
            raw = p.value.encode()
            raw += b"\0" * (-len(raw) % 4)
            be += struct.pack(">5i", 4, 20 + len(raw), p.parameter, 1208, len(p.value)) + raw
    decoded = rs.decode_pcf(be)
    assert decoded.big_endian and rs.read_publication(decoded, catalogue()).counts == {"puts": 12}


@pytest.mark.parametrize("mangle, error", [
    (lambda b: b[:20], "shorter than an MQCFH"),
    (lambda b: b[: len(b) // 2], "cut off|length"),
    (lambda b: b[:40] + struct.pack("<i", 9999) + b[44:], "length 9999"),
    (lambda b: b[:40] + struct.pack("<i", 17) + b[44:], "length 17"),
    (lambda b: b[:36] + struct.pack("<i", 77) + b[40:], "unknown structure type 77"),
    (lambda b: b"\x00" * 4 + struct.pack("<i", 35) + b[8:], "no MQCFH"),
    (lambda b: b + b"\x01\x02\x03\x04", "after the last"),
    (lambda b: b[:32] + struct.pack("<i", 10**6) + b[36:], "claims"),
    (lambda b: b"x" * (rs.MAX_MESSAGE_BYTES + 1), "more than"),
])
def test_malformed_messages_are_pcf_errors(mangle, error):
    good = pub.publication(META, "QM1", "STATQ", "PUT", {"MQPUT/MQPUT1 count": 1}, queue="Q1")
    with pytest.raises(rs.PcfError, match=error):
        rs.decode_pcf(mangle(good))


def test_string_longer_than_its_structure_is_refused():
    bad = pub.message([struct.pack("<5i", 4, 24, 2016, 1208, 200) + b"RULESIN\0"])
    with pytest.raises(rs.PcfError, match="claims 200 bytes"):
        rs.decode_pcf(bad)


def test_counts_out_of_range_and_non_delta_elements_are_publication_errors():
    cat = catalogue()
    for value in (rs.MAX_DELTA + 1, 2**62, -1):
        data = pub.publication(META, "QM1", "STATQ", "GET", {"MQGET count": value}, queue="Q1")
        with pytest.raises(rs.PublicationError, match="outside"):
            rs.read_publication(rs.decode_pcf(data), cat)
    cat.type_by_name("STATQ", "GET").elements[0].datatype = 1  # a unit, not a delta: not a count to sum
    with pytest.raises(rs.PublicationError, match="not a delta"):
        rs.read_publication(rs.decode_pcf(pub.publication(META, "QM1", "STATQ", "GET", {}, queue="Q1")), cat)


def test_unknown_element_ids_are_listed_and_ignored():
    data = pub.publication(META, "QM1", "STATMQI", "GET", {"Interval total destructive get- count": 4},
                           extra=[pub.cfin64(99, 123456)])
    p = rs.read_publication(rs.decode_pcf(data), catalogue())
    assert p.counts == {"gets": 4} and p.unknown_elements == [99]


def test_fuzzed_bytes_raise_only_decoder_errors():
    rng = random.Random(15)
    cat = catalogue()
    seeds = [pub.publication(META, "QM1", "STATQ", "GET", {"MQGET count": 5}, queue="Q1"),
             pub.metadata_messages(META, "QM1")[rs.classes_topic("QM1")]]
    for _ in range(3000):
        data = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 6)):
            op = rng.random()
            pos = rng.randrange(len(data))
            if op < 0.5:
                data[pos] = rng.randrange(256)
            elif op < 0.7:
                del data[pos:pos + rng.randint(1, 8)]
            else:
                data[pos:pos] = rng.randbytes(rng.randint(1, 8))
        try:
            msg = rs.decode_pcf(bytes(data))
            rs.read_publication(msg, cat)
        except (rs.PcfError, rs.PublicationError):
            pass


# ---- the PCF back-end's subscriptions, through the stand-in ibmmq ------------------------------------------------

class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def fake_mq(monkeypatch):
    fake.reset()
    clock = Clock()
    monkeypatch.setattr(fake, "CLOCK", clock)
    monkeypatch.setitem(sys.modules, "ibmmq", fake)
    fake.SCENARIO = {"qmgr": "QM1", "monint": 10.0, "start": clock.now,
                     "queues": [{"name": "RULESIN", "depth": 150, "max_depth": 5000, "share": 0.5},
                                {"name": "OUTPUT", "depth": 3, "max_depth": 5000, "share": 0.5},
                                {"name": "SYSTEM.ADMIN.COMMAND.QUEUE", "depth": 0}],
                     "gets": [[0, 215]], "puts": [[0, 216]]}
    yield fake, clock
    fake.reset()


def pcf_backend(**kw) -> pcf.PcfBackend:
    backend = pcf.PcfBackend("QM1", "MONITOR.SVRCONN", "mqhost(1414)", user="monitor", password="s3cret-pw",
                             statistics=kw.pop("statistics", "publications"), **kw)
    backend.wanted = lambda q: not q.startswith("SYSTEM.")
    return backend


def test_pcf_back_end_subscribes_non_durably_and_counts_every_interval(fake_mq):
    mq, clock = fake_mq
    backend = pcf_backend()
    snap = backend.snapshot()
    tp = snap.throughput
    assert tp.error is None and (tp.qmgr_puts, tp.qmgr_gets) == (None, None)  # subscribed, nothing due yet
    subs = [c for c in mq.CALLS if c[0] == "sub"]
    options = {c[2] for c in subs}
    assert options == {pcf.MQSO_CREATE | pcf.MQSO_NON_DURABLE | pcf.MQSO_MANAGED | pcf.MQSO_FAIL_IF_QUIESCING}
    topics = [c[1] for c in subs]
    assert topics[:1] == ["$SYS/MQ/INFO/QMGR/QM1/Monitor/METADATA/CLASSES"]
    data_topics = {t for t in topics if "/METADATA/" not in t}
    assert data_topics == {"$SYS/MQ/INFO/QMGR/QM1/Monitor/STATMQI/PUT", "$SYS/MQ/INFO/QMGR/QM1/Monitor/STATMQI/GET",
                           "$SYS/MQ/INFO/QMGR/QM1/Monitor/STATQ/RULESIN/PUT",
                           "$SYS/MQ/INFO/QMGR/QM1/Monitor/STATQ/RULESIN/GET",
                           "$SYS/MQ/INFO/QMGR/QM1/Monitor/STATQ/OUTPUT/PUT",
                           "$SYS/MQ/INFO/QMGR/QM1/Monitor/STATQ/OUTPUT/GET"}  # SYSTEM.* filtered out
    closed = {c[1] for c in mq.CALLS if c[0] == "close"}
    assert all("/METADATA/" in t for t in closed) and len(closed) == 7  # metadata subscriptions closed again
    assert tp.subscriptions == 6
    clock.now += 30  # three publications per subscription
    tp = backend.snapshot().throughput
    assert (tp.qmgr_puts, tp.qmgr_gets) == (3 * 2160, 3 * 2150)
    assert tp.queue_gets == {"OUTPUT": 3 * 1075, "RULESIN": 3 * 1075} and tp.publications == 18
    mq.SCENARIO["gets"] = [[0, 215], [35, 100]]
    clock.now += 20
    tp = backend.snapshot().throughput
    assert tp.qmgr_gets == 3 * 2150 + 2 * 1000  # counters only grow; the fall shows in the rate
    assert len([c for c in mq.CALLS if c[0] == "sub"]) == len(subs)  # subscriptions kept between runs


def test_two_readers_each_get_every_publication(fake_mq):
    """Subscriptions are per subscriber: a second exporter (or mq_prometheus, or amqsrua) counts the same."""
    mq, clock = fake_mq
    first, second = pcf_backend(), pcf_backend()
    first.snapshot(), second.snapshot()
    clock.now += 20
    a, b = first.snapshot().throughput, second.snapshot().throughput
    assert a.qmgr_gets == b.qmgr_gets == 2 * 2150 and a.queue_puts == b.queue_puts


def test_queue_cap_and_queues_that_go_away(fake_mq):
    mq, clock = fake_mq
    backend = pcf_backend(statistics_max_queues=1)
    tp = backend.snapshot().throughput
    assert (tp.subscriptions, tp.not_subscribed) == (4, 1)  # STATMQI x2 + OUTPUT x2 (first by name)
    mq.SCENARIO["queues"] = [q for q in mq.SCENARIO["queues"] if q["name"] != "OUTPUT"]
    tp = backend.snapshot().throughput
    assert tp.subscriptions == 4 and "$SYS/MQ/INFO/QMGR/QM1/Monitor/STATQ/OUTPUT/GET" in {
        c[1] for c in mq.CALLS if c[0] == "close"}
    clock.now += 10
    assert set(backend.snapshot().throughput.queue_gets) == {"RULESIN"}


@pytest.mark.parametrize("garbage, error", [
    ("truncated", "cut off|length"), ("wrong_length", "length 9999"), ("huge", "outside"),
    ("not_pcf", "no MQCFH|shorter"),
])
def test_garbage_publications_fail_only_the_statistics(fake_mq, garbage, error):
    mq, clock = fake_mq
    backend = pcf_backend()
    backend.snapshot()
    mq.SCENARIO["garbage"] = garbage
    clock.now += 10
    snap = backend.snapshot()
    assert snap.status == "RUNNING" and {q.name: q.depth for q in snap.queues}["RULESIN"] == 150
    assert snap.throughput.error and __import__("re").search(error, snap.throughput.error)
    assert snap.throughput.dropped == 6
    mq.SCENARIO["garbage"] = None
    clock.now += 10
    tp = backend.snapshot().throughput
    assert tp.error is None and tp.qmgr_gets == 2150  # the good interval after the garbage one


def test_unknown_element_ids_do_not_fail(fake_mq):
    mq, clock = fake_mq
    mq.SCENARIO["garbage"] = "unknown_element"
    backend = pcf_backend()
    backend.snapshot()
    clock.now += 10
    tp = backend.snapshot().throughput
    assert tp.error is None and tp.qmgr_gets == 2150


def test_subscribe_not_authorized_and_no_metadata(fake_mq):
    mq, clock = fake_mq
    mq.SCENARIO["deny_subscribe"] = True
    snap = pcf_backend().snapshot()
    assert snap.queues and snap.throughput.error == "MQRC 2035"
    mq.SCENARIO["deny_subscribe"] = False
    mq.SCENARIO["no_metadata"] = True
    snap = pcf_backend(timeout=0.4).snapshot()
    assert "no metadata on $SYS/MQ/INFO/QMGR/QM1/Monitor/METADATA/CLASSES" in snap.throughput.error


def test_errors_carry_no_password(fake_mq):
    mq, clock = fake_mq
    mq.SCENARIO["connect_error"] = "login monitor/s3cret-pw refused"
    with pytest.raises(pcf.BackendError) as info:
        pcf_backend().snapshot()
    assert "s3cret-pw" not in str(info.value) and "********" in str(info.value)


def _pcf_collector(monkeypatch):
    monkeypatch.setenv("MQ_PW", "s3cret-pw")
    return _collector(monkeypatch, [{"name": "QM1", "backend": "pcf", "channel": "MONITOR.SVRCONN",
                                     "conn_name": "mqhost(1414)", "username": "monitor", "password_env": "MQ_PW"}])


def test_a_refused_subscription_leaks_no_handle(fake_mq, monkeypatch):
    """Issue 25 #3: 2035 on one queue's STATQ topic made every run drop its handles unclosed (3, 6, 9, ... open
    until MAXHANDS, 2017).  Now the refused topic is tried again each run, the others stay subscribed and keep
    counting, the handles held stay constant, and every handle opened is closed in the end."""
    mq, clock = fake_mq
    mq.SCENARIO.update(deny_topics=["/STATQ/OUTPUT/"], maxhands=30)
    c = _pcf_collector(monkeypatch)
    open_after_run, runs = [], []
    for _ in range(12):
        runs.append(collect(c))
        open_after_run.append(mq.handles()["open"])
        clock.now += 10
    assert open_after_run == [4] * 12  # STATMQI PUT/GET and RULESIN PUT/GET, held from run to run
    for samples, batch in runs:
        assert samples["middleware_ibmmq_statistics_success", (("qmgr", "QM1"), ("source", "publications"))] == 0
        assert samples["middleware_ibmmq_backend_success", (("backend", "pcf"), ("qmgr", "QM1"))] == 1
        error = batch.errors["QM1/statistics"]
        assert "2 subscription(s) refused, first: STATQ/OUTPUT/PUT: MQRC 2035 (not authorized" in error
    tp = c.qmgrs[0].backend.snapshot().throughput
    assert tp.qmgr_gets == 12 * 2150 and tp.queue_gets == {"RULESIN": 12 * 1075}  # nothing lost meanwhile
    mq.SCENARIO["deny_topics"] = []  # authority granted: subscribed at the next run, and the counts come back
    samples, batch = collect(c)
    assert "QM1/statistics" not in batch.errors and mq.handles()["open"] == 6
    assert samples["ibmmq_queue_mqget_count_total", (("qmgr", "QM1"), ("queue", "RULESIN"))] == 12 * 1075
    c.close()
    counts = mq.handles()
    assert counts["open"] == 0 and counts["opened"] == counts["closed"] + counts["disconnected"]


def test_a_failed_run_closes_the_subscriptions_it_holds(fake_mq):
    """A run that fails for a reason of the connection (here MAXHANDS: 2017) while the connection stays open closes
    what it holds; before, the handles were forgotten open and every later run failed with 2017."""
    mq, clock = fake_mq
    mq.SCENARIO["maxhands"] = 5  # STATMQI x2 + two queues x2 need 6
    backend = pcf_backend()
    for _ in range(5):
        tp = backend.snapshot().throughput
        assert tp.error == "MQRC 2017"
        counts = mq.handles()
        assert counts["open"] == 0 and counts["opened"] == counts["closed"]
        clock.now += 10
    mq.SCENARIO["maxhands"] = 6
    assert backend.snapshot().throughput.error is None and mq.handles()["open"] == 6


def test_reset_qstats_is_opt_in_and_sums_what_each_reset_returns(fake_mq):
    mq, clock = fake_mq
    assert pcf_backend(statistics="publications") and QueueManagerEntry(
        name="QM1", backend="pcf", channel="C", conn_name="h(1)").statistics == "publications"
    with pytest.raises(ValueError, match="reset_qstats needs the pcf back-end"):
        QueueManagerEntry(name="QM1", backend="runmqsc", statistics="reset_qstats")
    mq.SCENARIO.update(reset_enq={"RULESIN": 40, "OUTPUT": 5}, reset_deq={"RULESIN": 38, "OUTPUT": 5})
    backend = pcf_backend(statistics="reset_qstats")
    tp = backend.snapshot().throughput
    assert tp.source == "reset_qstats" and tp.queue_puts == {"OUTPUT": 5, "RULESIN": 40}
    assert tp.qmgr_gets is None and not [c for c in mq.CALLS if c[0] == "sub"]
    mq.SCENARIO["reset_enq"]["RULESIN"] = 10  # what came in since our reset
    assert backend.snapshot().throughput.queue_puts["RULESIN"] == 50
    assert {c[1] for c in mq.CALLS if c[0] == "reset_qstats"} == {"RULESIN", "OUTPUT"}


# ---- amqsrua --------------------------------------------------------------------------------------------------

def test_amqsrua_interval_formats():
    assert amqsrua_interval("10.000 seconds") == 10.0
    assert amqsrua_interval("4 minutes,39.999 seconds") == 279.999
    assert amqsrua_interval("1 days,0 hours,0 minutes,0.000 seconds") == 86400.0
    assert amqsrua_interval(pub.amqsrua_interval(3_723_004_000)) == 3723.004
    assert amqsrua_interval("soon") is None


def test_amqsrua_output_parses_to_counts():
    text = (AMQSRUA / "statmqi_statq_two_ticks.txt").read_text()
    out = parse_amqsrua(text, ["RULESIN", "OUTPUT"])
    assert len(out.publications) == 12 and not out.errors and not out.garbage
    first = out.publications[0]
    assert (first.put_date, first.put_time, first.interval) == ("20250320", "15320100", 10.0)
    totals: dict = {}
    for p in out.publications:
        for key, counts in p.counts.items():
            for name, value in counts.items():
                totals[key + (name,)] = totals.get(key + (name,), 0) + value
    assert totals == {("STATMQI", "PUT", None, "puts"): 4100, ("STATMQI", "GET", None, "gets"): 4099,
                      ("STATQ", "PUT", "RULESIN", "puts"): 2050, ("STATQ", "GET", "RULESIN", "gets"): 2050,
                      ("STATQ", "PUT", "OUTPUT", "puts"): 2050, ("STATQ", "GET", "OUTPUT", "gets"): 2049}
    # a queue not asked for is not read as one (and its lines are not mistaken for the queue manager's)
    assert not any(k[2] == "RULESIN" for p in parse_amqsrua(text, ["OUTPUT"]).publications for k in p.counts)


def test_amqsrua_errors_and_garbage():
    out = parse_amqsrua("MQSUB ended with reason code 2035\n")
    assert out.errors == ["MQSUB ended with reason code 2035"] and not out.publications
    out = parse_amqsrua("Publication received PutDate:20250320 PutTime:15320100 Interval:10.000 seconds\n"
                        "Interval total MQPUT/MQPUT1 count -5 \n"
                        "Interval total destructive get- count 99999999999999999999999 \n"
                        "Parameter(99) Value(7) not recognised\n\x00\xff garbage\n")
    assert out.garbage == ["Interval total MQPUT/MQPUT1 count = -5"] and out.publications[0].counts == {}


class FakeRunner:
    def __init__(self, outputs):
        self.outputs = list(outputs)
        self.calls = []

    def __call__(self, argv, timeout, env=None):
        self.calls.append((list(argv), timeout))
        item = self.outputs.pop(0) if self.outputs else ""
        if isinstance(item, Exception):
            raise item
        if not self.outputs:
            import time
            time.sleep(0.05)
        return type("R", (), {"stdout": item, "stderr": "", "returncode": 0 if item else 20})()


def _wait_runs(stats, runs):
    import time

    deadline = time.monotonic() + 5
    while stats._runs < runs and time.monotonic() < deadline:
        time.sleep(0.01)


def test_amqsrua_worker_arguments_counts_and_never_waits():
    text = (AMQSRUA / "statmqi_statq_two_ticks.txt").read_text()
    runner = FakeRunner([text, text])
    stats = AmqsruaStats("QM1", "/opt/mqm/samp/bin/amqsrua", ["ssh", "mqhost"], monint=10, ticks=2, runner=runner)
    assert stats.read(["RULESIN", "OUTPUT"]) is None  # starts the worker, returns at once
    _wait_runs(stats, 2)
    stats.stop()
    argv, timeout = runner.calls[1]
    # DISK Log (the recovery log, issue 39) is one more publication per interval: 7 a tick
    assert argv == ["ssh", "mqhost", "/opt/mqm/samp/bin/amqsrua", "-m", "QM1", "-c", "STATMQI", "-t", "PUT", "-t",
                    "GET", "-c", "DISK", "-t", "Log", "-c", "STATQ", "-t", "PUT", "-o", "OUTPUT", "-t", "GET", "-o",
                    "OUTPUT", "-t", "PUT", "-o", "RULESIN", "-t", "GET", "-o", "RULESIN", "-n", "14"]
    assert timeout == 3 * 10 + 35
    tp = stats.read(["RULESIN", "OUTPUT"])
    assert tp.error is None and (tp.qmgr_puts, tp.qmgr_gets) == (8200, 8198)
    assert tp.queue_gets == {"OUTPUT": 4098, "RULESIN": 4100} and tp.publications == 24


def test_amqsrua_failures_are_the_sources_own():
    from exporter.machine.runner import CommandNotFound, CommandTimeout

    for outcome, message in ((CommandTimeout("x"), "no publications within 75s"),
                             (CommandNotFound("x"), "amqsrua not found"),
                             ("MQCONN ended with reason code 2059\n", "2059 (queue manager not available)"),
                             ("MQSUB ended with reason code 2035\n", "subscribe authority")):
        stats = AmqsruaStats("QM1", "/x/amqsrua", monint=10, ticks=3, runner=FakeRunner([outcome]))
        stats.read([])
        _wait_runs(stats, 1)
        stats.stop()
        tp = stats.read([])
        assert tp is not None and message in tp.error


class SimulatedWait:
    """The worker's wait on a simulated clock: records each delay, stops the worker after ``until`` seconds."""

    def __init__(self, until: float) -> None:
        self.until = until
        self.now = 0.0
        self.delays: list[float] = []

    def __call__(self, delay: float) -> bool:
        self.delays.append(delay)
        self.now += delay
        return self.now >= self.until


class EndsAtOnce:
    """A runner whose amqsrua ends at once, as with the queue manager ended (2059); stops a runaway worker."""

    def __init__(self, outputs=(), limit: int = 1000) -> None:
        self.outputs = list(outputs)
        self.calls = 0
        self.limit = limit
        self.stats: AmqsruaStats | None = None

    def __call__(self, argv, timeout, env=None):
        self.calls += 1
        if self.calls >= self.limit and self.stats is not None:
            self.stats.stop()  # without back-off the worker would spin here for ever
        text = self.outputs.pop(0) if self.outputs else "MQCONN ended with reason code 2059\n"
        return type("R", (), {"stdout": text, "stderr": "", "returncode": 0})()


def _run_worker(stats: AmqsruaStats) -> None:
    stats.read([])
    assert stats._thread is not None
    stats._thread.join(30)
    assert not stats._thread.is_alive()


def test_amqsrua_that_ends_at_once_is_started_again_with_capped_exponential_backoff():
    """Issue 25 #2: an amqsrua that exits at once was started again with no pause (570 spawns in 2 s with a
    stand-in).  Over a simulated hour: MONINT, then twice as long each time, at most 300 s."""
    wait = SimulatedWait(until=3600)
    runner = EndsAtOnce()
    stats = AmqsruaStats("QM1", "/x/amqsrua", monint=10, ticks=3, runner=runner, wait=wait)
    runner.stats = stats
    _run_worker(stats)
    assert runner.calls == stats.spawns < 30  # 17-19 in an hour, not thousands
    expected = [min(300.0, 10.0 * 2**k) for k in range(len(wait.delays))]
    assert all(0.9 * e <= d <= e for d, e in zip(wait.delays, expected, strict=True))
    assert max(wait.delays) > 250 and sum(wait.delays[:5]) < 310  # it doubles, and it is capped
    tp = stats.read([])
    assert tp is not None and tp.error.startswith("amqsrua: MQCONN ended with reason code 2059 (queue manager "
                                                  "not available); ")
    assert "failed in a row, next try in" in tp.error


def test_amqsrua_backoff_starts_again_after_a_run_with_publications():
    text = (AMQSRUA / "statmqi_statq_two_ticks.txt").read_text()
    fail = "MQSUB ended with reason code 2035\n"
    wait = SimulatedWait(until=100)
    runner = EndsAtOnce([fail, fail, fail, text, fail, ""])
    stats = AmqsruaStats("QM1", "/x/amqsrua", monint=10, ticks=2, runner=runner, wait=wait,
                         backoff=Backoff(first=10, cap=300, jitter=0))
    runner.stats = stats
    _run_worker(stats)
    assert wait.delays == [10, 20, 40, 10, 20]  # the run with publications was followed at once, and reset it
    assert "no publication (exit status 0: 'no output'); 2 failed in a row, next try in 20 s" in stats.read([]).error


def test_backoff_bounds():
    b = Backoff(first=0.5, cap=4, jitter=0)
    assert [b.failed() for _ in range(6)] == [0.5, 1, 2, 4, 4, 4] and b.failures == 6
    b.succeeded()
    assert b.failed() == 0.5
    b = Backoff(first=1, cap=10, jitter=0.1, rng=lambda: 1.0)
    assert b.failed() == pytest.approx(0.9)
    b.failures = 10**6  # no overflow after days of failures
    assert b.peek() == 10
    with pytest.raises(ValueError):
        Backoff(first=0, cap=1)


AMQSRUA_ENDS_AT_ONCE = """import sys, time
with open(sys.argv[0] + ".spawns", "a") as log:
    log.write(f"{time.monotonic()}\\n")
print("MQCONN ended with reason code 2059")
"""


@pytest.mark.integration
def test_exporter_backs_off_an_amqsrua_that_ends_at_once(tmp_path, start_exporter):
    """Issue 25 #2 at process level: a real exporter (runmqsc back-end, stand-in dspmq, runmqsc and amqsrua, MONINT
    0.2 s) starts an amqsrua that exits at once (the queue manager failed over: 2059) again only after 0.2, 0.4,
    0.8, 1.6 s (each less at most 10 % jitter), not hundreds of times a second; the source's success is 0 with the
    error text in /metrics and /api/v1/collectors."""
    import json
    import time

    import yaml

    from ...support import PYTHON, shell_script

    display = Path(__file__).parent / "fixtures" / "runmqsc"
    amqsrua = tmp_path / "amqsrua"
    amqsrua.write_text(f"#!{PYTHON}\n" + AMQSRUA_ENDS_AT_ONCE)
    amqsrua.chmod(0o755)
    qm = {"name": "QM1", "backend": "runmqsc", "monitor_interval": 0.2, "amqsrua": str(amqsrua),
          "dspmq": shell_script(tmp_path / "dspmq", f"cat '{display / 'qm1_dspmq.txt'}'\n"),
          "runmqsc": shell_script(tmp_path / "runmqsc", f"cat >/dev/null; cat '{display / 'qm1_display.txt'}'\n")}
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"collectors": {"host": {"enabled": False}, "process": {"enabled": False},
                                                     "ibmmq": {"enabled": True, "interval": 1, "timeout": 1,
                                                               "queue_managers": [qm]}}}))
    exporter = start_exporter("--config", str(config))
    spawns_file = Path(str(amqsrua) + ".spawns")
    give_up = time.monotonic() + 60
    spawns: list[float] = []
    while len(spawns) < 5 and time.monotonic() < give_up:
        time.sleep(0.2)
        spawns = [float(x) for x in spawns_file.read_text().split()] if spawns_file.exists() else []
    assert len(spawns) >= 5, f"amqsrua started {len(spawns)} times in 60 s"
    gaps = [b - a for a, b in zip(spawns[:4], spawns[1:5], strict=True)]
    # each gap is at least its wait (a wait never ends early; only the start of a process adds to it)
    assert all(gap >= 0.95 * 0.9 * 0.2 * 2**k for k, gap in enumerate(gaps)), gaps
    assert spawns[4] - spawns[0] >= 0.95 * 0.9 * 0.2 * 15  # five starts took 2.7 s at least, not milliseconds
    give_up = time.monotonic() + 30
    while True:
        _, _, body = exporter.get("/metrics")
        line = next((x for x in body.decode().splitlines()
                     if x.startswith('middleware_ibmmq_statistics_success{qmgr="QM1",source="amqsrua"}')), "")
        if line.endswith((" 0", " 0.0")) or time.monotonic() > give_up:
            break
        time.sleep(0.2)
    assert float(line.split()[-1]) == 0, line
    _, _, body = exporter.get("/api/v1/collectors")
    ibmmq = next(c for c in json.loads(body) if c["name"] == "ibmmq")
    error = ibmmq["source_errors"]["QM1/statistics"]
    assert "amqsrua: MQCONN ended with reason code 2059 (queue manager not available)" in error
    assert "next try in" in error


def test_amqsrua_caps_queues_at_what_it_accepts():
    stats = AmqsruaStats("QM1", "/x/amqsrua", max_queues=500)
    assert stats.max_queues == 48  # 100 -t less STATMQI PUT and GET and DISK Log (issue 39), two per queue
    argv = stats.argv([f"Q{i}" for i in range(48)])
    assert argv.count("-t") == 99


# ---- the collector --------------------------------------------------------------------------------------------

def _collector(monkeypatch, entries):
    settings = IbmmqSettings(enabled=True, queue_managers=entries)
    return IbmmqCollector(settings, Context())


def test_collector_emits_mq_prometheus_names_and_isolates_statistics_failures(fake_mq, monkeypatch):
    mq, clock = fake_mq
    monkeypatch.setenv("MQ_PW", "s3cret-pw")
    c = _collector(monkeypatch, [{"name": "QM1", "backend": "pcf", "channel": "MONITOR.SVRCONN",
                                  "conn_name": "mqhost(1414)", "username": "monitor", "password_env": "MQ_PW"}])
    collect(c)
    clock.now += 20
    samples, batch = collect(c)
    assert batch.errors == {}
    got = samples
    assert got["ibmmq_qmgr_interval_destructive_get_total_count_total", (("qmgr", "QM1"),)] == 4300
    assert got["ibmmq_qmgr_interval_mqput_mqput1_total_count_total", (("qmgr", "QM1"),)] == 4320
    assert got["ibmmq_queue_mqget_count_total", (("qmgr", "QM1"), ("queue", "RULESIN"))] == 2150
    assert got["ibmmq_queue_mqput_mqput1_count_total", (("qmgr", "QM1"), ("queue", "OUTPUT"))] == 2160
    assert got["middleware_ibmmq_statistics_success", (("qmgr", "QM1"), ("source", "publications"))] == 1
    assert got["middleware_ibmmq_statistics_subscriptions", (("qmgr", "QM1"), ("source", "publications"))] == 6
    mq.SCENARIO["garbage"] = "truncated"
    clock.now += 10
    samples, batch = collect(c)
    names = {name for name, _ in samples}
    assert "ibmmq_queue_depth" in names and "ibmmq_qmgr_interval_destructive_get_total_count_total" not in names
    assert "ibmmq_queue_mqget_count_total" not in names
    assert {v for (n, _), v in samples.items() if n == "middleware_ibmmq_statistics_success"} == {0}
    assert {v for (n, _), v in samples.items() if n == "middleware_ibmmq_backend_success"} == {1}
    assert list(batch.errors) == ["QM1/statistics"] and "s3cret-pw" not in str(batch.errors)
    c.close()


def test_rest_queue_managers_have_no_counts_not_zero(monkeypatch):
    from ...fakes.mqweb import FakeMqweb, FakeQmgr, FakeQueue

    web = FakeMqweb(FakeQmgr("QM1", "running", [FakeQueue("RULESIN", depth=5)])).start()
    try:
        c = _collector(monkeypatch, [{"name": "QM1", "backend": "rest", "url": web.base_url}])
        samples, batch = collect(c)
    finally:
        web.stop()
    names = {name for name, _ in samples}
    assert "ibmmq_queue_depth" in names
    assert not {n for n in names if "mqget" in n or "mqput" in n or "statistics" in n}
