"""The IBM MQ REST (mqweb) back-end against the fake mqweb server in tests/fakes/mqweb.py (loopback only)."""

from __future__ import annotations

import base64
import json
import re
import socket
import time
import traceback
import urllib.error
import urllib.request

import pytest

from exporter.core.collector import Context
from exporter.systems.ibmmq.collector import IbmmqCollector
from exporter.systems.ibmmq.model import BackendError, ChannelState, QueueStatus
from exporter.systems.ibmmq.parse import (
    AnswerShapeError,
    describe_mqwb_error,
    map_qmgr_state,
    mqsc_answer,
    qmgr_state_from_answer,
    queues_from_mqsc_json,
    to_age,
    to_int,
)
from exporter.systems.ibmmq.rest import (
    CHANNEL_COMMAND,
    CHSTATUS_COMMAND,
    NATIVEHA_COMMAND,
    QLOCAL_COMMAND,
    QMGR_COMMAND,
    QMSTATUS_COMMAND,
    QSTATUS_COMMAND,
    RestBackend,
    RestHTTPError,
)
from exporter.systems.ibmmq.settings import IbmmqSettings
from tests.fakes.mqweb import (
    FakeChannel,
    FakeMqweb,
    FakeQmgr,
    FakeQueue,
    generate_queues,
    make_self_signed,
    openssl_available,
)

from ...support import collect

USER = "mqreader"
PASSWORD = "s3cr3t-Pa55w0rd"

EXPECTED_QUEUES = [
    QueueStatus("APP.IN", depth=5, max_depth=5000, oldest_message_age=42.0, open_input=1, open_output=2),
    QueueStatus("APP.OUT", depth=0, max_depth=10000, oldest_message_age=None, open_input=0, open_output=1),
    QueueStatus("SYSTEM.DEAD.LETTER.QUEUE", depth=3, max_depth=100000, oldest_message_age=3600.0, open_input=0,
                open_output=0),
]
EXPECTED_CHANNELS = [
    ChannelState("APP.SVRCONN", "RUNNING", "SVRCONN", "192.0.2.10"),
    ChannelState("APP.SVRCONN", "RUNNING", "SVRCONN", "192.0.2.11"),
    ChannelState("FROM.QM2", "STOPPED", "RECEIVER", ""),  # runmqsc's RCVR/SDR as mq_prometheus's words
    ChannelState("TO.QM2", "RUNNING", "SENDER", "10.0.0.2(1414)"),
    ChannelState("TO.QM3", "RETRYING", "SENDER", "10.0.0.3(1414)"),
]


def fixture_qmgr(name: str = "QM1", state: str = "running") -> FakeQmgr:
    return FakeQmgr(name, state, queues=[
        FakeQueue("SYSTEM.DEAD.LETTER.QUEUE", depth=3, max_depth=100000, msgage=3600),
        FakeQueue("APP.IN", depth=5, max_depth=5000, msgage=42, ipprocs=1, opprocs=2),
        FakeQueue("APP.OUT", depth=0, max_depth=10000, msgage=None, opprocs=1),
    ], channels=[
        FakeChannel("TO.QM2", "RUNNING", "SDR", "10.0.0.2(1414)"),
        FakeChannel("APP.SVRCONN", "RUNNING", "SVRCONN", "192.0.2.11"),
        FakeChannel("APP.SVRCONN", "RUNNING", "SVRCONN", "192.0.2.10"),
        FakeChannel("TO.QM3", "RETRYING", "SDR", "10.0.0.3(1414)"),
        FakeChannel("FROM.QM2", "STOPPED", "RCVR", ""),
    ])


@pytest.fixture
def mqweb():
    with FakeMqweb(fixture_qmgr(), username=USER, password=PASSWORD) as server:
        yield server


def backend(server: FakeMqweb, version: str = "v2", **kwargs) -> RestBackend:
    kwargs.setdefault("username", USER)
    kwargs.setdefault("password", PASSWORD)
    kwargs.setdefault("timeout", 5.0)
    qmgr = kwargs.pop("qmgr", server.qmgr.name)
    return RestBackend(qmgr, server.base_url, api_version=version, **kwargs)


def failure(server: FakeMqweb, version: str = "v2", **kwargs) -> BackendError:
    with pytest.raises(BackendError) as info:
        backend(server, version, **kwargs).snapshot()
    return info.value


def assert_secret_free(exc: BaseException) -> None:
    text = "".join(traceback.format_exception(exc)) + repr(exc) + repr(exc.args)
    token = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    assert PASSWORD not in text and token not in text


# --- snapshots --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["v2", "v3"])
def test_snapshot_through_mqsc_json(mqweb, version):
    snap = backend(mqweb, version).snapshot()

    assert snap.qmgr == "QM1" and snap.status == "RUNNING"
    assert snap.queues == EXPECTED_QUEUES
    assert snap.channels == EXPECTED_CHANNELS
    assert [(r.method, r.path) for r in mqweb.requests] == [
        ("GET", f"/ibmmq/rest/{version}/admin/qmgr/QM1"),
    ] + [("POST", f"/ibmmq/rest/{version}/admin/action/qmgr/QM1/mqsc")] * 7
    assert [r.body for r in mqweb.requests[1:]] == [QSTATUS_COMMAND, QLOCAL_COMMAND, CHSTATUS_COMMAND,
                                                    CHANNEL_COMMAND, QMSTATUS_COMMAND, QMGR_COMMAND,
                                                    NATIVEHA_COMMAND]
    assert mqweb.requests[1].body == {
        "type": "runCommandJSON", "command": "display", "qualifier": "qstatus", "name": "*",
        "parameters": {"type": "queue"}, "responseParameters": ["all"]}
    assert [r.body.get("qualifier") for r in mqweb.requests[4:]] == ["channel", "qmstatus", "qmgr", "qmstatus"]
    assert snap.source_errors == {} and snap.channel_definitions == []
    assert snap.native_ha is None  # not Native HA (MQRCCF_NHA_NOT_AVAILABLE): no instances and no error
    expected_auth = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    for request in mqweb.requests:
        assert request.headers["accept"] == "application/json"
        assert request.headers["ibm-mq-rest-csrf-token"] == "middleware-exporter"
        assert request.headers["authorization"] == expected_auth
    assert mqweb.requests[1].headers["content-type"] == "application/json;charset=utf-8"


def test_snapshot_v1_queue_resource(mqweb):
    rest = backend(mqweb, "v1")
    snap = rest.snapshot()

    assert snap.status == "RUNNING"
    assert snap.queues == EXPECTED_QUEUES
    assert snap.channels == EXPECTED_CHANNELS
    assert rest.item_errors == []
    get_queues = mqweb.requests[1]
    assert (get_queues.method, get_queues.path) == ("GET", "/ibmmq/rest/v1/admin/qmgr/QM1/queue")
    assert get_queues.query == {
        "type": "local",
        "status": "status.currentDepth,status.oldestMessageAge,status.openInputCount,status.openOutputCount",
        "attributes": "storage.maximumDepth"}
    assert [(r.method, r.path, r.body) for r in mqweb.requests[2:]] == [
        ("POST", "/ibmmq/rest/v1/admin/action/qmgr/QM1/mqsc", CHSTATUS_COMMAND)]


def test_v1_mqweb_without_run_command_json_has_queues_but_no_channels(mqweb):
    mqweb.mqsc_in_v1 = False
    rest = backend(mqweb, "v1")
    snap = rest.snapshot()

    assert snap.queues == EXPECTED_QUEUES
    assert snap.channels == []
    assert len(rest.item_errors) == 1
    assert "channels not available through REST API v1" in rest.item_errors[0]
    assert "HTTP 400" in rest.item_errors[0] and "MQWB0120E" in rest.item_errors[0]


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_no_queues_and_no_channel_status_are_empty_not_errors(version):
    # DISPLAY QSTATUS(*) with no queue answers MQRC 2085, DISPLAY CHSTATUS(*) with no channel 3065 (overall 2/3008).
    with FakeMqweb(FakeQmgr("QM1")) as server:
        rest = backend(server, version, username=None, password=None)
        snap = rest.snapshot()
    assert (snap.status, snap.queues, snap.channels) == ("RUNNING", [], [])
    assert rest.item_errors == []


@pytest.mark.parametrize(("state", "expected"), [
    ("endedImmediately", "ENDED IMMEDIATELY"), ("ended", "ENDED"), ("runningAsStandby", "RUNNING AS STANDBY"),
    ("runningElsewhere", "RUNNING ELSEWHERE"), ("starting", "STARTING"), ("quiescing", "QUIESCING"),
    ("endingImmediately", "ENDING IMMEDIATELY"), ("stateNotAvailable", "STATUS NOT AVAILABLE"),
])
def test_queue_manager_not_running_is_reported_without_queue_queries(state, expected):
    with FakeMqweb(fixture_qmgr(state=state)) as server:
        snap = backend(server, username=None, password=None).snapshot()
        assert (snap.status, snap.queues, snap.channels) == (expected, [], [])
        assert [(r.method, r.path) for r in server.requests] == [("GET", "/ibmmq/rest/v2/admin/qmgr/QM1")]


def test_queue_manager_name_is_url_encoded_with_dots():
    with FakeMqweb(fixture_qmgr(name="QM.A/B")) as server:
        snap = backend(server, username=None, password=None).snapshot()
        assert snap.qmgr == "QM.A/B" and snap.queues == EXPECTED_QUEUES
        assert server.requests[0].raw_path == "/ibmmq/rest/v2/admin/qmgr/QM%2EA%2FB"
        assert server.requests[1].raw_path == "/ibmmq/rest/v2/admin/action/qmgr/QM%2EA%2FB/mqsc"


@pytest.mark.parametrize(("state", "expected"), [
    ("running", "RUNNING"), ("starting", "STARTING"), ("quiescing", "QUIESCING"),
    ("runningAsStandby", "RUNNING AS STANDBY"), ("runningElsewhere", "RUNNING ELSEWHERE"),
    ("endingImmediately", "ENDING IMMEDIATELY"), ("endingPreemptively", "ENDING PREEMPTIVELY"), ("ended", "ENDED"),
    ("endedNormally", "ENDED NORMALLY"), ("endedImmediately", "ENDED IMMEDIATELY"),
    ("endedPreemptively", "ENDED PREEMPTIVELY"), ("endedUnexpectedly", "ENDED UNEXPECTEDLY"),
    ("endedSomehowNew", "ENDED"), ("beingDeleted", "BEING DELETED"), ("stateNotAvailable", "STATUS NOT AVAILABLE"),
    ("", "UNKNOWN"), ("banana", "UNKNOWN"), (None, "UNKNOWN"), (2, "UNKNOWN"),
])
def test_state_mapping(state, expected):
    assert map_qmgr_state(state) == expected


@pytest.mark.parametrize(("value", "expected"), [
    (12, 12), ("12", 12), (" 7 ", 7), ("-3", -3), (3.0, 3), (3.5, None), ("", None), ("  ", None), ("12a", None),
    ("1e3", None), ("٣", None), (True, None), (None, None), ([1], None), ({"a": 1}, None),
])
def test_numbers_that_do_not_parse_are_none(value, expected):
    assert to_int(value) == expected


@pytest.mark.parametrize(("value", "expected"), [(42, 42.0), ("42", 42.0), (0, 0.0), ("", None), (" ", None),
                                                 (-1, None), ("x", None), (None, None)])
def test_message_age(value, expected):
    assert to_age(value) == expected


def _item(code: int, reason: int = 0, **params: str) -> dict:
    return {"completionCode": code, "reasonCode": reason, **({"parameters": params} if params else {})}


def test_mqsc_answer_parsing_without_a_server():
    item = _item
    ok = mqsc_answer({"commandResponse": [item(0, queue="A"), item(2, 2085)], "overallCompletionCode": 2},
                     "DISPLAY QSTATUS", (2085,))
    assert (ok.usable, ok.failures, ok.error) == ([{"queue": "A"}], [], None)
    nothing = mqsc_answer({"commandResponse": [item(2, 2085)], "overallCompletionCode": 2,
                           "overallReasonCode": 3008}, "DISPLAY QSTATUS", (2085,))
    assert (nothing.usable, nothing.error) == ([], None)  # nothing matched: empty, not an error
    failed = mqsc_answer({"commandResponse": [{**item(2, 2035), "message": ["AMQ8135E: Not authorized."]}]},
                         "DISPLAY QSTATUS", (2085,))
    assert failed.error == ("DISPLAY QSTATUS failed: DISPLAY QSTATUS: completion code 2, reason 2035 "
                            "(AMQ8135E: Not authorized.)")
    with pytest.raises(AnswerShapeError, match="no 'commandResponse' array"):
        mqsc_answer({"qmgr": []}, "DISPLAY QSTATUS", ())
    with pytest.raises(AnswerShapeError, match="queue manager not in mqweb's answer"):
        qmgr_state_from_answer({"qmgr": [{"name": "QM2"}, {"name": "QM3"}]}, "QM1")
    assert (qmgr_state_from_answer({"qmgr": [{"name": "QM1", "state": "runningAsStandby"}]}, "QM1")
            == "RUNNING AS STANDBY")


def test_mqweb_error_bodies():
    body = json.dumps({"error": [{"messageId": "MQWB0009E", "message": "MQWB0009E: Could not query.",
                                  "reasonCode": 2058}]}).encode()
    assert describe_mqwb_error(body) == ("MQWB0009E", "MQWB0009E: Could not query. (reason 2058)")
    assert describe_mqwb_error(b"<html>proxy error</html>") == ("", "")
    assert describe_mqwb_error(b'{"error": "text"}') == ("", "")
    # nested deeper than the interpreter's stack: json raises RecursionError, not ValueError (it escaped before)
    assert describe_mqwb_error(b"[" * 100_000) == ("", "")


def test_garbage_numbers_in_an_answer_become_none(mqweb):
    mqweb.qmgr.queues = [FakeQueue("ODD.Q", depth="lots", max_depth="", msgage="n/a", ipprocs=None,  # type: ignore
                                   opprocs=2.5)]  # type: ignore[arg-type]
    snap = backend(mqweb).snapshot()
    assert snap.queues == [QueueStatus("ODD.Q", depth=None, max_depth=None, oldest_message_age=None, open_input=None,
                                       open_output=None)]


def test_large_queue_manager_10000_queues(mqweb):
    mqweb.qmgr.queues = generate_queues(10_000)
    for version in ("v2", "v1"):
        started = time.monotonic()
        snap = backend(mqweb, version, timeout=30).snapshot()
        assert time.monotonic() - started < 30
        assert len(snap.queues) == 10_000
        assert snap.queues[1234] == QueueStatus("BENCH.Q.1234", depth=234, max_depth=6234, oldest_message_age=34.0,
                                                open_input=1, open_output=4)
        assert snap.queues[7].oldest_message_age is None  # 7 % 7 == 0: monitoring off in generate_queues


# --- per-item errors --------------------------------------------------------------------------------------------


def test_failed_item_is_skipped_and_recorded(mqweb):
    mqweb.item_error_queue = "APP.OUT"
    rest = backend(mqweb)
    snap = rest.snapshot()

    assert snap.queues == [
        EXPECTED_QUEUES[0],
        QueueStatus("APP.OUT", depth=None, max_depth=10000),  # its QSTATUS failed, its QLOCAL definition did not
        EXPECTED_QUEUES[2],
    ]
    assert snap.channels == EXPECTED_CHANNELS
    assert rest.item_errors == ["DISPLAY QSTATUS: completion code 2, reason 2035 (AMQ8135E: Not authorized (APP.OUT).)"]
    rest.snapshot()
    assert len(rest.item_errors) == 1  # reset for every snapshot


def test_nothing_usable_fails_the_call(mqweb):
    mqweb.qmgr.queues = [FakeQueue("ONLY.Q")]
    mqweb.item_error_queue = "ONLY.Q"
    exc = failure(mqweb)
    assert "DISPLAY QSTATUS failed: DISPLAY QSTATUS: completion code 2, reason 2035" in str(exc)


# --- errors -----------------------------------------------------------------------------------------------------


def test_wrong_password_is_401_without_the_password(mqweb):
    exc = failure(mqweb, password="wrong-" + PASSWORD[::-1])
    assert isinstance(exc, RestHTTPError) and exc.status == 401 and exc.msg_id == "MQWB0104E"
    assert "authentication failed (HTTP 401): MQWB0104E: The REST API request is not authenticated." in str(exc)
    assert "queue manager QM1 via http://127.0.0.1:" in str(exc)
    assert_secret_free(exc)
    assert PASSWORD[::-1] not in str(exc)


def test_right_password_and_no_credentials(mqweb):
    assert backend(mqweb).snapshot().status == "RUNNING"
    exc = failure(mqweb, username=None, password=None)
    assert "authentication failed (HTTP 401)" in str(exc)


def test_server_echoing_the_password_is_scrubbed(mqweb):
    mqweb.fail_status, mqweb.fail_match = 400, "mqsc"
    mqweb.fail_message = f"bad request from {USER}:{PASSWORD}"
    exc = failure(mqweb)
    assert f"request rejected (HTTP 400): MQWB0120E: bad request from {USER}:***" in str(exc)
    assert_secret_free(exc)


def test_fake_rejects_a_post_without_the_csrf_header(mqweb):
    request = urllib.request.Request(
        f"{mqweb.base_url}/ibmmq/rest/v2/admin/action/qmgr/QM1/mqsc", data=json.dumps(QSTATUS_COMMAND).encode(),
        method="POST", headers={"Content-Type": "application/json",
                                "Authorization": "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()})
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(request, timeout=5)
    assert info.value.code == 403
    assert json.loads(info.value.read())["error"][0]["msgId"] == "MQWB0100E"
    # ... and the back-end, talking to the same server that insists on the header, gets through:
    assert mqweb.require_csrf
    assert backend(mqweb).snapshot().queues == EXPECTED_QUEUES


def test_csrf_rejection_is_named(mqweb):
    mqweb.reject_csrf = True
    exc = failure(mqweb)
    assert isinstance(exc, RestHTTPError) and exc.status == 403
    assert "CSRF token header ibm-mq-rest-csrf-token missing or rejected (HTTP 403): MQWB0100E:" in str(exc)
    assert "(POST /ibmmq/rest/v2/admin/action/qmgr/QM1/mqsc)" in str(exc)


def test_slow_answer_times_out(mqweb):
    mqweb.delay = 60.0  # the fake answers at once when it stops, so a long delay costs nothing
    started = time.monotonic()
    exc = failure(mqweb, timeout=0.5)
    elapsed = time.monotonic() - started
    assert "timed out after 0.5 s (GET /ibmmq/rest/v2/admin/qmgr/QM1)" in str(exc)
    assert elapsed < 30  # the 0.5 s timeout, not the 60 s delay: a wide margin either way on a loaded machine


def test_garbage_body(mqweb):
    mqweb.garbage = True
    exc = failure(mqweb)
    assert "answer to GET /ibmmq/rest/v2/admin/qmgr/QM1 is not valid JSON (45 bytes, starting '<html>" in str(exc)


@pytest.mark.parametrize(("version", "what"), [("v2", "the queue manager (no 'qmgr' array)"),
                                               ("v1", "the queue manager (no 'qmgr' array)")])
def test_wrongly_shaped_json(mqweb, version, what):
    mqweb.garbage_json = True
    assert f"unexpected answer shape for {what}" in str(failure(mqweb, version))


def test_wrongly_shaped_mqsc_answer(mqweb):
    mqweb.garbage_json = True
    rest = backend(mqweb)
    rest._qmgr_state = lambda: "RUNNING"  # type: ignore[method-assign]  # only the mqsc answers are garbage
    with pytest.raises(BackendError, match=r"unexpected answer shape for DISPLAY QSTATUS \(no 'commandResponse'"):
        rest.snapshot()


def test_server_error_500(mqweb):
    mqweb.fail_status = 500
    exc = failure(mqweb)
    assert isinstance(exc, RestHTTPError) and exc.status == 500
    assert "mqweb server error (HTTP 500): MQWB0004E: Failure requested by the test." in str(exc)


def test_bad_request_400_carries_msg_id_and_message(mqweb):
    mqweb.fail_status, mqweb.fail_match = 400, "qlocal"
    exc = failure(mqweb)
    assert "request rejected (HTTP 400): MQWB0120E: Failure requested by the test." in str(exc)
    assert [r.body["qualifier"] for r in mqweb.requests[1:]] == ["qstatus", "qlocal"]


def test_unknown_queue_manager_is_404(mqweb):
    exc = failure(mqweb, qmgr="QM9")
    assert isinstance(exc, RestHTTPError) and exc.status == 404 and exc.msg_id == "MQWB0009E"
    assert ("queue manager QM9 via http://127.0.0.1:" in str(exc)
            and "queue manager unknown to mqweb or not reachable from it (HTTP 404): MQWB0009E: Could not query the "
                "queue manager 'QM9'. (reason 2058)" in str(exc))


def test_unsupported_api_version_is_404_without_mqwb():
    with FakeMqweb(fixture_qmgr(), versions=("v1",)) as server:
        exc = failure(server, "v3", username=None, password=None)
    assert "not found (HTTP 404): is this an mqweb server with REST API v3?" in str(exc)


def test_redirect_is_not_followed(mqweb):
    mqweb.fail_status = 302
    exc = failure(mqweb)
    assert "unexpected redirect (HTTP 302), not followed" in str(exc)
    assert len(mqweb.requests) == 1


def test_refused_connection():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    rest = RestBackend("QM1", f"http://127.0.0.1:{port}", username=USER, password=PASSWORD, timeout=2)
    with pytest.raises(BackendError) as info:
        rest.snapshot()
    assert str(info.value) == (f"queue manager QM1 via http://127.0.0.1:{port}: connection refused "
                               "(GET /ibmmq/rest/v2/admin/qmgr/QM1)")
    assert_secret_free(info.value)


def test_response_size_is_bounded(mqweb):
    mqweb.qmgr.queues = generate_queues(200)
    exc = failure(mqweb, max_response_bytes=4096)
    assert "answer to POST /ibmmq/rest/v2/admin/action/qmgr/QM1/mqsc is " in str(exc)
    assert "bytes, over the 4096-byte limit" in str(exc)


class _Streamed:
    """An answer without Content-Length, read in chunks."""

    headers: dict[str, str] = {}

    def __init__(self, size: int) -> None:
        self.left = size

    def read(self, amount: int) -> bytes:
        chunk = min(amount, self.left)
        self.left -= chunk
        return b" " * chunk


def test_streamed_answer_is_bounded_too():
    rest = RestBackend("QM1", "http://127.0.0.1:1")
    assert rest._read(_Streamed(1000), 4096, time.monotonic(), "GET /x") == b" " * 1000
    with pytest.raises(BackendError, match=r"answer to GET /x exceeds the 1048576-byte limit"):
        rest._read(_Streamed(3 * 1024 * 1024), 1024 * 1024, time.monotonic(), "GET /x")


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"api_version": "v4"}, "api_version must be one of v1, v2, v3"),
    ({"base_url": "ftp://host"}, "base_url must be http(s)://host:port"),
    ({"password": None}, "username and password go together"),
    ({"client_key": "/x.key"}, "client_key needs client_cert"),
    ({"timeout": 0}, "timeout must be positive"),
    ({"base_url": f"https://{USER}:{PASSWORD}@mqhost:9443"}, "base_url must not contain credentials"),
])
def test_bad_arguments(kwargs, message):
    args = {"qmgr": "QM1", "base_url": "https://mqhost:9443", "username": "u", "password": "p", **kwargs}
    with pytest.raises(ValueError, match=re.escape(message)) as info:
        RestBackend(**args)
    assert PASSWORD not in str(info.value)


# --- TLS --------------------------------------------------------------------------------------------------------

needs_openssl = pytest.mark.skipif(not openssl_available(), reason="openssl binary not installed")


@needs_openssl
def test_tls_verification_is_on_by_default():
    with FakeMqweb(fixture_qmgr(), username=USER, password=PASSWORD, tls=True) as server:
        assert server.base_url.startswith("https://127.0.0.1:")
        exc = failure(server)
        assert re.search(r"TLS certificate verification failed: self[- ]signed certificate; give ca_file for a "
                         r"private CA \(GET /ibmmq/rest/v2/admin/qmgr/QM1\)", str(exc))
        assert_secret_free(exc)
        assert server.requests == []  # nothing (no credentials) went over the unverified connection

        assert backend(server, ca_file=server.ca_file).snapshot().queues == EXPECTED_QUEUES
        assert backend(server, verify_tls=False).snapshot().channels == EXPECTED_CHANNELS


@needs_openssl
def test_tls_client_certificate():
    client_cert, client_key = make_self_signed("exporter-client", cn="middleware-exporter")
    with FakeMqweb(fixture_qmgr(), tls=True, client_ca=client_cert) as server:
        exc = failure(server, username=None, password=None, ca_file=server.ca_file)
        assert "TLS error" in str(exc) or "connection failed" in str(exc)
        snap = backend(server, username=None, password=None, ca_file=server.ca_file, client_cert=client_cert,
                       client_key=client_key).snapshot()
        assert snap.queues == EXPECTED_QUEUES and snap.channels == EXPECTED_CHANNELS
        assert "authorization" not in server.requests[-1].headers


def test_unreadable_client_certificate_is_a_backend_error(tmp_path):
    missing = tmp_path / "missing.pem"
    rest = RestBackend("QM1", "https://127.0.0.1:1", client_cert=str(missing))
    with pytest.raises(BackendError, match="cannot load client certificate .*missing.pem"):
        rest.snapshot()


# --- a blank MSGAGE and a standby instance (issue 13) -----------------------------------------------------------
#
# How runCommandJSON renders the MSGAGE of a queue without monitoring (MONQ off) is not documented and no real
# answer has been found: runmqsc prints MSGAGE( ), so it may be an empty string, a blank, or no key at all.
# Each must give no ibmmq_queue_oldest_message_age sample for that queue (and the queue's other figures), never
# an exception or a failed scrape.

@pytest.mark.parametrize("rendered", ["", " ", "missing"], ids=["empty", "blank", "missing"])
def test_blank_msgage_from_runcommandjson_gives_no_age_sample(rendered):
    qmgr = FakeQmgr("QM1", "running", queues=[
        FakeQueue("APP.UNMONITORED", depth=7, max_depth=5000, msgage=None, ipprocs=1, blank_msgage=rendered),
        FakeQueue("APP.MONITORED", depth=2, max_depth=5000, msgage=30),
    ])
    with FakeMqweb(qmgr) as server:
        snap = backend(server, username=None, password=None).snapshot()
        assert {q.name: q.oldest_message_age for q in snap.queues} == {"APP.UNMONITORED": None,
                                                                        "APP.MONITORED": 30.0}
        settings = IbmmqSettings.model_validate({"enabled": True, "queue_managers": [
            {"name": "QM1", "backend": "rest", "url": server.base_url, "timeout": "5s"}]})
        samples, batch = collect(IbmmqCollector(settings, Context()))
    assert batch.errors == {}
    unmonitored = (("qmgr", "QM1"), ("queue", "APP.UNMONITORED"))
    assert ("ibmmq_queue_oldest_message_age", unmonitored) not in samples
    assert samples[("ibmmq_queue_depth", unmonitored)] == 7
    assert samples[("ibmmq_queue_input_handles", unmonitored)] == 1
    assert samples[("ibmmq_queue_oldest_message_age", (("qmgr", "QM1"), ("queue", "APP.MONITORED")))] == 30


@pytest.mark.parametrize("value", ["", " ", "   ", None, "n/a", -1, [], {}])
def test_blank_or_odd_msgage_parameters_map_to_none(value):
    params = {"queue": "Q", "curdepth": 1} if value is None else {"queue": "Q", "curdepth": 1, "msgage": value}
    assert queues_from_mqsc_json([params], []) == [QueueStatus("Q", depth=1)]


def test_mqweb_answering_standby_queue_manager_reads_as_standby_not_failed():
    # MQRC_STANDBY_Q_MGR (2543) in mqweb's error body: the instance is a healthy standby, not an outage.
    with FakeMqweb(fixture_qmgr()) as server:
        server.fail_status, server.fail_match, server.fail_reason = 503, "/admin/qmgr/QM1", 2543
        snap = backend(server, username=None, password=None).snapshot()
        assert (snap.status, snap.queues, snap.channels) == ("STANDBY", [], [])
        server.fail_reason = 2059  # any other reason is still a failure
        with pytest.raises(RestHTTPError) as info:
            backend(server, username=None, password=None).snapshot()
        assert info.value.reason == 2059 and info.value.status == 503
