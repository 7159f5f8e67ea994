"""The PCF back-end's health figures (issue 28) and PCF over TLS, at the driver boundary: the real IbmmqAdapter
talks to the stand-in ``ibmmq`` module (tests/fakes/ibmmq), whose answers carry IBM's PCF parameter ids and the
values of the genuine runmqsc captures in tests/systems/ibmmq/fixtures/real/ (the PCF answers themselves are built here,
not captured: no PCF capture of these commands is public).  The PCF and runmqsc back-ends must then give equal
model objects."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from exporter.systems.ibmmq import mqscmap, pcf
from exporter.systems.ibmmq.collector import make_backend
from exporter.systems.ibmmq.model import (
    CHANNEL_INSTANCE_TYPE_CODES,
    CHANNEL_SECURITY_PROTOCOL_CODES,
    CHANNEL_STATUS_CODES,
    CHANNEL_SUBSTATE_CODES,
    CHANNEL_TYPE_CODES,
    BackendError,
    channel_type_word,
)
from exporter.systems.ibmmq.parse import parse_mqsc
from exporter.systems.ibmmq.settings import IbmmqSettings

from ...fakes import ibmmq as fake
from .test_ibmmq import ibmmq_module  # noqa: F401 - the fixture (real ibmmq with its C part stubbed)

REAL = Path(__file__).parent / "fixtures" / "real"


def blocks(name: str) -> list[dict[str, str]]:
    found, errors = parse_mqsc((REAL / name).read_text())
    assert errors == []
    return found


def pad(text: str, width: int) -> str:
    return text.ljust(width)  # PCF strings come blank-padded to the field's length


@pytest.fixture
def mq(monkeypatch):
    monkeypatch.setitem(sys.modules, "ibmmq", fake)
    fake.reset()
    yield fake
    fake.reset()


def pcf_snapshot(mq, scenario: dict, **entry):
    mq.SCENARIO = {"qmgr": "QM1", **scenario}
    settings = IbmmqSettings.model_validate({"enabled": True, "queue_managers": [
        {"name": "QM1", "backend": "pcf", "statistics": "off", **({"channel": "MONITOR.SVRCONN",
                                                                  "conn_name": "mqhost(1414)"} if "ccdt" not in
                                                                 entry else {}), **entry}]})
    backend = make_backend(settings.queue_managers[0])
    try:
        return backend.snapshot()
    finally:
        backend.close()


# ---- PCF answers with the values of the genuine captures --------------------------------------------------------
# runmqsc_display_chstatus_all_svrconn_9.4.2.txt as MQCMD_INQUIRE_CHANNEL_STATUS answers it (MQIACH_* / MQCACH_*
# ids; STATUS(RUNNING) = MQCHS_RUNNING 3, SUBSTATE(RECEIVE) = MQCHSSTATE_RECEIVING 300, CHLTYPE(SVRCONN) = 7,
# SECPROT(NONE) = MQSECPROT_NONE 0, CURRENT = MQOT_CURRENT_CHANNEL 1011, MONCHL(OFF) = MQIA_MONITORING_CHANNEL
# MQMON_OFF 0).  The monitoring pairs are MQ's "not available" -1 (invented, not in the capture).
SVRCONN_942 = {
    "3501": pad("SYSTEM.ADMIN.SVRCONN", 20), "1511": 7, "1523": 1011, "1527": 3, "1609": 300, "122": 0,
    "3506": pad("9.38.73.124", 264), "1534": 19218, "1535": 27846476, "1536": 2507796, "1538": 19274, "1539": 19240,
    "3529": "2025-05-12", "3528": "05.54.01", "3525": "2025-05-12", "3524": "06.31.24",
    "3530": pad("0000253C00000003", 28), "3544": pad("", 32), "1617": 10, "1645": 0,
    "1605": [-1, -1], "1607": [-1, -1],
}
# runmqsc_display_qmstatus_all_9.4.2.txt as MQCMD_INQUIRE_Q_MGR_STATUS answers it: CMDSERV/CHINIT(RUNNING) =
# MQSVC_STATUS_RUNNING 2, LOGFSSZ/LOGFSUSE(SHARED) = MQFS_SHARED -1, CIRCULAR logging: blank extent names.
QMSTATUS_942 = {
    "1149": 2, "1230": 44, "1233": 2, "1232": 2, "3175": "2025-05-12", "3176": "05.53.55", "3214": "2025-05-12",
    "3216": "04:05:21", "1420": 13, "1421": 13, "1465": 253824, "1464": 11, "1419": 0, "1453": -1, "1452": -1,
    "3071": pad("", 12), "3072": pad("", 12), "3073": pad("", 12), "3208": pad("", 12), "3191": pad("ibmmq1", 64),
}
# runmqsc_display_qmgr_all_9.4.2.txt as MQCMD_INQUIRE_Q_MGR answers it (PLATFORM(UNIX) = MQPL_UNIX 3).
QMGR_942 = {"2120": "09040200", "31": 942, "2032": pad("QM1_2025-04-22_03.01.05", 48), "32": 3,
            "2006": pad("DEV.DEAD.LETTER.QUEUE", 48), "11": 256}
# runmqsc_dis_qstatus_monq_off_curfsize_devserver_2021.txt (MONQ(OFF) = MQMON_OFF 0, blanks are -1 / blank text,
# UNCOM(NO) = 0) and runmqsc_qlocal_qstatus_checkmk.txt (MONQ(MEDIUM) = MQMON_MEDIUM 33, QTIME(999999999, ...)).
# None: a parameter the capture does not show either (the queue has no QLOCAL block, or runmqsc left it out).
DEVSERVER_QUEUE = {"name": "DEV.QUEUE.1", "status": {
    "3": 1, "1437": 1, "1438": 2088960, "17": 0, "18": 0, "3128": "", "3129": "", "3130": "", "3131": "",
    "1258": 0, "1227": -1, "1226": [-1, -1], "1027": 0}, "definition": {"15": None}}
CHECKMK_QUEUES = [
    {"name": "MY.QUEUE.ONE", "status": {"3": 0, "3128": "", "3129": "", "3130": "", "3131": "", "1258": 33,
                                        "1227": 0, "1226": [-1, -1], "17": None, "18": None},
     "definition": {"15": 5000}},
    {"name": "MY.QUEUE.TWO", "status": {"3": 1400, "3130": "2017-03-09", "3131": "08.49.13", "3128": "",
                                        "3129": "", "18": 0, "17": 5, "1258": 33, "1227": 2201,
                                        "1226": [999999999, 999999999]},
     "definition": {"15": 200000}},
]


def definitions_as_pcf(found: list[dict[str, str]]) -> list[dict]:
    """MQCMD_INQUIRE_CHANNEL answers with the values of DISPLAY CHANNEL(*) ALL blocks (MAXINST/MAXINSTC appear
    only for the types that have them, as in PCF)."""
    answers = []
    for block in found:
        item = {"3501": pad(block["CHANNEL"], 20), "1511": CHANNEL_TYPE_CODES[channel_type_word(block["CHLTYPE"])],
                "3502": pad(block.get("DESCR", ""), 64)}
        for key, pid in (("MAXINST", "1618"), ("MAXINSTC", "1619")):
            if key in block:
                item[pid] = int(block[key])
        if "XMITQ" in block:
            item["3505"] = pad(block["XMITQ"], 48)
        answers.append(item)
    return answers


def test_pcf_channel_status_equals_runmqsc_svrconn_942(mq):
    snap = pcf_snapshot(mq, {"channel_status": [SVRCONN_942]})
    want = mqscmap.channels(blocks("runmqsc_display_chstatus_all_svrconn_9.4.2.txt"))
    assert snap.channels == want
    (channel,) = snap.channels
    assert (channel.type, channel.substate, channel.messages, channel.sharing_conversations) == (
        "SVRCONN", "RECEIVE", 19218, 10)
    assert str(channel.started) == "2025-05-12 05:54:01" and channel.network_time_short is None


def test_pcf_qmgr_health_equals_runmqsc_942(mq):
    snap = pcf_snapshot(mq, {"qmgr_status": QMSTATUS_942, "qmgr_attrs": QMGR_942})
    want = mqscmap.health(blocks("runmqsc_display_qmstatus_all_9.4.2.txt")
                          + blocks("runmqsc_display_qmgr_all_9.4.2.txt"))
    assert snap.health == want
    health = snap.health
    assert (health.connections, health.command_server, health.channel_initiator) == (44, "RUNNING", "RUNNING")
    assert (health.log_in_use_percent, health.qm_fs_size_mb, health.log_fs_size_mb) == (13.0, 253824, None)
    assert (health.version, health.command_level, health.platform, health.max_handles) == (
        "09040200", "942", "UNIX", 256)
    assert health.log_extent_current is None and str(health.log_started) == "2025-05-12 04:05:21"


def test_pcf_queue_status_equals_runmqsc(mq):
    snap = pcf_snapshot(mq, {"queues": [DEVSERVER_QUEUE, *CHECKMK_QUEUES]})
    want = (mqscmap.queues(blocks("runmqsc_dis_qstatus_monq_off_curfsize_devserver_2021.txt"))
            + mqscmap.queues(blocks("runmqsc_qlocal_qstatus_checkmk.txt")))
    assert snap.queues == sorted(want, key=lambda q: q.name)
    dev = snap.queues[0]
    assert (dev.file_size_mb, dev.file_max_size_mb, dev.uncommitted, dev.monitoring) == (1, 2088960, 0, "OFF")
    assert dev.oldest_message_age is dev.qtime_short is dev.last_get is None  # -1 / blank: not available
    two = snap.queues[2]
    # 999999999: the display maximum, kept as runmqsc keeps it (issue 39 item 1)
    assert (str(two.last_get), two.qtime_short, two.qtime_long) == ("2017-03-09 08:49:13", 999999999, 999999999)


def test_pcf_channel_definitions_equal_runmqsc_942(mq):
    found = blocks("runmqsc_display_channel_all_maxinst_9.4.2.txt")
    snap = pcf_snapshot(mq, {"channels": definitions_as_pcf(found)})
    assert snap.channel_definitions == mqscmap.channel_definitions(found)
    assert len(snap.channel_definitions) == 14
    svrconn = next(d for d in snap.channel_definitions if d.name == "DEV.APP.SVRCONN")
    assert (svrconn.type, svrconn.max_instances, svrconn.max_instances_per_client) == (
        "SVRCONN", 999999999, 999999999)
    assert {d.type for d in snap.channel_definitions} >= {"SENDER", "RECEIVER", "CLUSSDR", "AMQP"}


def test_pcf_inquiries_send_ibm_ids(mq):
    pcf_snapshot(mq, {"channel_status": [SVRCONN_942]})
    sent = {c[1]: c[2] for c in mq.CALLS if c[0] == "pcf" and 1445 not in c[2]}  # 1445: Native HA, its own test
    assert sent[42] == {3501: b"*", 1523: 1011, 1524: [1009]}  # CURRENT instances, all attributes
    assert sent[25] == {3501: b"*", 1015: [3501, 1511, 1618, 1619, 3502, 3505]}
    assert sent[41] == {2016: b"*", 1103: 1105, 1026: [1009]}
    assert sent[13] == {2016: b"*", 20: 1, 1002: [2016, 20, 15, 12, 2013]}
    assert sent[161] == {1229: [1009]}
    assert sent[2] == {1001: [2120, 31, 2032, 32, 2006, 11]}


# Invented values (no MONCHL capture is public): XQTIME/NETTIME/XBATCHSZ as PCF returns them.
SENDER = {"3501": pad("QM1.TO.QM2", 20), "1511": 1, "1527": 5, "1609": 1250, "1528": 1,
          "1604": [900, 100], "1605": [4000, 3000], "1607": [50, 10], "2017": pad("QM2", 48), "1541": 7,
          "1540": 999999999, "1608": 12, "3525": "", "3524": "", "1537": 3}


@pytest.mark.parametrize(("platform", "short_first"), [(3, False), (11, False), (1, True)])
def test_pcf_channel_pairs_are_long_first_except_on_zos(mq, platform, short_first):
    """IBM PCF defect 304982 (mqmetric channel.go): on Distributed the XMITQ/NETWORK time and batch size pairs
    come long-first; z/OS sends short first.  Queue QTIME is short-first everywhere."""
    queue = {"name": "Q", "status": {"1226": [5, 50]}}
    snap = pcf_snapshot(mq, {"channel_status": [SENDER], "qmgr_attrs": {"32": platform}, "queues": [queue]})
    (c,) = snap.channels
    got = (c.xmitq_time_short, c.xmitq_time_long, c.network_time_short, c.network_time_long,
           c.batch_size_short, c.batch_size_long)
    assert got == ((900, 100, 4000, 3000, 50, 10) if short_first else (100, 900, 3000, 4000, 10, 50))
    assert (snap.queues[0].qtime_short, snap.queues[0].qtime_long) == (5, 50)
    assert (c.type, c.status, c.substate, c.indoubt, c.remote_qmgr) == ("SENDER", "RETRYING", "NETCONNECT", True,
                                                                         "QM2")
    assert (c.short_retries_left, c.long_retries_left, c.xmitq_messages_available, c.batches) == (
        7, 999999999, 12, 3)
    assert c.last_message is None  # blank: no message yet


def test_pcf_not_available_is_none_never_zero(mq):
    blank_status = {"1230": -1, "1233": -1, "1420": -1, "3175": pad("", 12), "3176": pad("", 8), "1464": -1}
    channel = {"3501": pad("C", 20), "1511": 7, "1527": 3, "1534": -1, "1617": -1, "1609": -1, "3525": "",
               "3524": "", "1604": [-1, -1]}
    snap = pcf_snapshot(mq, {"qmgr_status": blank_status, "channel_status": [channel]})
    h, (c,) = snap.health, snap.channels
    assert (h.connections, h.command_server, h.log_in_use_percent, h.started, h.qm_fs_in_use_percent) == (
        None, "", None, None, None)
    assert (c.messages, c.sharing_conversations, c.substate, c.last_message, c.xmitq_time_short) == (
        None, None, "", None, None)
    assert (h.version, h.platform, h.command_level) == ("", "", "")  # INQUIRE_Q_MGR gave none of them


def test_pcf_constants_match_ibmmq_package(ibmmq_module):  # noqa: F811 - the fixture imported above
    from ibmmq import CMQC, CMQCFC, CMQXC

    names = [n for n in dir(pcf) if n.startswith(("MQCA", "MQIA", "MQCMD_", "MQOT_", "MQUS_", "MQPL_", "MQRC",
                                                  "MQCNO_"))]
    assert len(names) > 80
    for name in names:
        value = getattr(pcf, name)
        found = [getattr(m, name) for m in (CMQC, CMQCFC, CMQXC) if hasattr(m, name)]
        assert found and found[0] == value, name
    for code, word in pcf.PLATFORM_WORDS.items():
        assert getattr(CMQC, {"ZOS": "MQPL_ZOS", "WINDOWSNT": "MQPL_WINDOWS_NT"}.get(word, f"MQPL_{word}")) == code
    for code, word in pcf.MQMON_WORDS.items():
        assert getattr(CMQC, f"MQMON_{word}") == code
    for code, word in pcf.SERVICE_STATUS.items():
        assert getattr(CMQC, f"MQSVC_STATUS_{word}") == code
    assert pcf.MQIACF_ALL == CMQCFC.MQIACF_ALL
    # issue 39 items 2 and 7: every channel table agrees with IBM's constants (cmqc.h / cmqcfc.h as the ibmmq
    # package carries them): MQCHS_*, MQCHSSTATE_*, MQCHT_*, MQOT_*_CHANNEL, MQSECPROT_*
    pcf_names = {
        "MQCHSSTATE_": {"OTHER": "OTHER", "ENDBATCH": "END_OF_BATCH", "SEND": "SENDING", "RECEIVE": "RECEIVING",
                        "SERIALIZE": "SERIALIZING", "RESYNCH": "RESYNCHING", "HEARTBEAT": "HEARTBEATING",
                        "SCYEXIT": "IN_SCYEXIT", "RCVEXIT": "IN_RCVEXIT", "SENDEXIT": "IN_SENDEXIT",
                        "MSGEXIT": "IN_MSGEXIT", "MREXIT": "IN_MREXIT", "CHADEXIT": "IN_CHADEXIT",
                        "NETCONNECT": "NET_CONNECTING", "SSLHANDSHK": "SSL_HANDSHAKING", "NAMESERVER": "NAME_SERVER",
                        "MQPUT": "IN_MQPUT", "MQGET": "IN_MQGET", "MQICALL": "IN_MQI_CALL", "COMPRESS": "COMPRESSING"},
        "MQOT_": {"CURRENT": "CURRENT_CHANNEL", "SAVED": "SAVED_CHANNEL", "SHORT": "SHORT_CHANNEL"},
        "MQSECPROT_": {"NONE": "NONE", "SSLV3": "SSLV30", "TLSV1": "TLSV10", "TLSV12": "TLSV12", "TLSV13": "TLSV13"},
    }
    tables = {"MQCHSSTATE_": CHANNEL_SUBSTATE_CODES, "MQOT_": CHANNEL_INSTANCE_TYPE_CODES,
              "MQSECPROT_": CHANNEL_SECURITY_PROTOCOL_CODES, "MQCHS_": CHANNEL_STATUS_CODES,
              "MQCHT_": CHANNEL_TYPE_CODES}
    for prefix, table in tables.items():
        for word, code in table.items():
            name = prefix + pcf_names.get(prefix, {}).get(word, word)
            assert getattr(CMQC, name, getattr(CMQCFC, name, getattr(CMQXC, name, None))) == code, name
    assert set(CHANNEL_SUBSTATE_CODES) == set(pcf_names["MQCHSSTATE_"])
    assert pcf.MQIA_MONITORING_CHANNEL == CMQC.MQIA_MONITORING_CHANNEL


# ---- PCF over TLS -----------------------------------------------------------------------------------------------
@pytest.fixture
def keys(tmp_path):
    (tmp_path / "key.kdb").write_bytes(b"invented: not a real key database")
    (tmp_path / "key.sth").write_bytes(b"invented stash")
    return tmp_path / "key"


def connx(mq) -> dict:
    (seen,) = [c[2] for c in mq.CALLS if c[0] == "connx"]
    return seen


def test_pcf_over_tls_passes_mqcd_cipher_and_mqsco(mq, keys):
    snap = pcf_snapshot(mq, {"ssl_cipher": "TLS_AES_256_GCM_SHA384"}, key_repository=f"{keys}.kdb",
                        cipher_spec="TLS_AES_256_GCM_SHA384", certificate_label="monitor-cert")
    assert snap.status == "RUNNING"
    seen = connx(mq)
    assert seen["cd"]["SSLCipherSpec"] == b"TLS_AES_256_GCM_SHA384"
    assert seen["cd"]["ChannelName"] == b"MONITOR.SVRCONN" and seen["cd"]["ConnectionName"] == b"mqhost(1414)"
    assert seen["sco"] == {"KeyRepository": str(keys).encode(), "CertificateLabel": b"monitor-cert"}  # no .kdb
    assert "cno" not in seen


def test_pcf_over_tls_from_a_json_ccdt(mq, keys, tmp_path):
    ccdt = tmp_path / "ccdt.json"  # IBM's JSON CCDT layout (invented values)
    ccdt.write_text(json.dumps({"channel": [{
        "name": "MONITOR.TLS", "type": "clientConnection",
        "clientConnection": {"connection": [{"host": "mqhost", "port": 1414}], "queueManager": "QM1"},
        "transmissionSecurity": {"cipherSpecification": "ANY_TLS12_OR_HIGHER"}}]}))
    snap = pcf_snapshot(mq, {"ssl_cipher": "TLS_AES_128_GCM_SHA256"}, ccdt=str(ccdt), key_repository=str(keys))
    assert snap.status == "RUNNING"
    seen = connx(mq)
    assert "cd" not in seen  # an MQCD would override the CCDT
    assert seen["cno"]["CCDTUrl"] == ccdt.as_uri().encode() and seen["cno"]["Version"] >= 6
    assert seen["cno"]["Options"] & fake.MQCNO_CLIENT_BINDING
    assert seen["sco"]["KeyRepository"] == str(keys).encode()


def test_pcf_plain_connection_to_a_tls_channel_fails_with_the_mq_reason(mq):
    with pytest.raises(BackendError, match="MQRC 2393"):
        pcf_snapshot(mq, {"ssl_cipher": "TLS_AES_256_GCM_SHA384"})


def test_fake_ibmmq_refuses_what_mq_would(mq, keys):
    """The stand-in's own checks, so the tests above cannot pass on a connection MQ would refuse."""
    mq.SCENARIO = {"qmgr": "QM1", "ssl_cipher": "TLS_AES_256_GCM_SHA384"}
    cd = fake.CD(ChannelName=b"C", ConnectionName=b"h(1)", SSLCipherSpec=b"TLS_AES_256_GCM_SHA384")
    qm = fake.QueueManager(None)
    for sco, reason in ((None, 2381), (fake.SCO(KeyRepository=f"{keys}.kdb".encode()), 2381),
                        (fake.SCO(KeyRepository=str(keys.with_name("nokey")).encode()), 2381)):
        with pytest.raises(fake.MQMIError) as err:
            qm.connect_with_options("QM1", cd=cd, **({"sco": sco} if sco else {}))
        assert err.value.reason == reason
    old_cno = fake.CNO(CCDTUrl=b"file:///nowhere.json")  # version 5: the client ignores the URL
    with pytest.raises(fake.MQMIError) as err:
        qm.connect_with_options("QM1", cno=old_cno)
    assert err.value.reason == 2058
    with pytest.raises(AttributeError):
        fake.SCO().KeyRepo = b"x"  # a misspelt field ibmmq would silently never send
    with pytest.raises(ValueError, match="do not fit"):
        fake.CD().SSLCipherSpec = b"X" * 33
    with pytest.raises(TypeError):
        qm.connect_with_options("QM1", sco=object())


@pytest.mark.parametrize(("entry", "message"), [
    ({"cipher_spec": "TLS_AES_256_GCM_SHA384"}, "cipher_spec: needs key_repository"),
    ({"certificate_label": "x"}, "certificate_label: needs key_repository"),
    ({"key_repository": "/nonexistent/key"}, "key_repository: /nonexistent/key.kdb"),
    ({"ccdt": "/nonexistent/ccdt.json", "channel": None, "conn_name": None}, "ccdt: /nonexistent/ccdt.json does not"),
    ({"ccdt": "https://config.example/ccdt.json"}, "ccdt: set either ccdt or channel/conn_name"),
    ({"ccdt": "https://config.example/ccdt.json", "channel": None, "conn_name": None, "cipher_spec": "X"},
     "cipher_spec: not with ccdt"),
    ({"ccdt": "ldap://x/ccdt", "channel": None, "conn_name": None}, "ccdt: ldap:// is not"),
    ({"cipher_spec": "X" * 33}, "cipher_spec: longer than MQ's 32"),
    ({"backend": "rest", "url": "https://mqweb:9443", "cipher_spec": "X"}, "cipher_spec: pcf back-end only"),
])
def test_pcf_tls_settings_are_checked_at_start(entry, message):
    base = {"name": "QM1", "backend": "pcf", "channel": "C", "conn_name": "h(1)"}
    with pytest.raises(ValidationError, match="queue manager QM1: " + message.replace("(", r"\(").replace(
            ")", r"\)")):
        IbmmqSettings.model_validate({"queue_managers": [{**base, **entry}]})


def test_pcf_key_repository_missing_its_stash_is_refused(keys):
    keys.with_suffix(".sth").unlink()
    with pytest.raises(ValidationError, match="key_repository: .*key.sth \\(stash file"):
        IbmmqSettings.model_validate({"queue_managers": [{
            "name": "QM1", "backend": "pcf", "channel": "C", "conn_name": "h(1)", "key_repository": str(keys)}]})


def test_pcf_ccdt_over_https_needs_no_channel(mq):
    settings = IbmmqSettings.model_validate({"queue_managers": [{
        "name": "QM1", "backend": "pcf", "ccdt": "https://config.example/ccdt.json"}]})
    backend = make_backend(settings.queue_managers[0])
    assert backend._tls == pcf.PcfTls(ccdt="https://config.example/ccdt.json")


def test_pcf_without_tls_settings_connects_as_before(mq):
    pcf_snapshot(mq, {})
    seen = connx(mq)
    assert set(seen) == {"cd"} and seen["cd"]["SSLCipherSpec"] == b""


def test_pcf_queue_fields_are_model_fields(mq):
    """The queue fields are set by attribute (a misspelt name would add an attribute silently)."""
    snap = pcf_snapshot(mq, {"queues": [DEVSERVER_QUEUE]})
    assert set(vars(snap.queues[0])) == {f.name for f in dataclasses.fields(pcf.QueueStatus)}
