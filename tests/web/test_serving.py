"""The uvicorn internals web/serving.py overrides (``main_loop``, ``on_tick``, ``handle_exit``,
``_captured_signals``, ``startup``): still there, with the signatures relied on, in a uvicorn release within the
range tested.  An upgrade that changes them fails here, loudly, rather than leaving an exporter that spins at rest
or dies on SIGTERM before its commands are killed (tests/machine/test_shutdown.py and
tests/core/test_collect_on_demand.py check that behaviour through a real process)."""

from __future__ import annotations

import inspect
import signal

import uvicorn

from exporter.web.limits import ConnectionGuard, Limits
from exporter.web.serving import UVICORN_TESTED, quiet_supported, server_class


def _parameters(function) -> list[str]:
    return list(inspect.signature(function).parameters)


def test_installed_uvicorn_is_within_the_tested_range():
    installed = tuple(int(part) for part in uvicorn.__version__.split(".")[:2])
    low, high = UVICORN_TESTED
    assert low <= installed <= high, (
        f"uvicorn {uvicorn.__version__} is outside the range exporter/web/serving.py was checked against "
        f"({'.'.join(map(str, low))} to {'.'.join(map(str, high))}): check its overrides, then raise UVICORN_TESTED")


def test_the_overridden_internals_still_exist_with_their_signatures():
    server = uvicorn.Server
    assert quiet_supported()
    assert inspect.iscoroutinefunction(server.main_loop) and _parameters(server.main_loop) == ["self"]
    assert inspect.iscoroutinefunction(server.on_tick) and _parameters(server.on_tick) == ["self", "counter"]
    assert _parameters(server.handle_exit) == ["self", "sig", "frame"]
    assert inspect.iscoroutinefunction(server.startup) and _parameters(server.startup) == ["self", "sockets"]
    # the loop is what serving runs between start-up and shutdown, and the captured signals are what it raises
    # again at the end: what the overrides replace and clear
    assert "self.main_loop()" in inspect.getsource(server._serve)
    assert "_captured_signals" in inspect.getsource(server.capture_signals)
    assert "_captured_signals" in inspect.getsource(server.handle_exit)
    assert isinstance(uvicorn.Server(uvicorn.Config(app=None))._captured_signals, list)


def test_a_signal_stops_the_quiet_server_without_being_raised_again():
    stopped = []
    cls = server_class(ConnectionGuard(Limits()), lambda: stopped.append(True), quiet=True)
    server = cls(uvicorn.Config(app=None))
    server.handle_exit(signal.SIGTERM, None)
    assert server.should_exit and server._captured_signals == [] and stopped == [True]
    assert {"main_loop", "handle_exit", "startup"} <= {name for klass in cls.__mro__[:2] for name in vars(klass)}
    plain = server_class(ConnectionGuard(Limits()), lambda: None, quiet=False)
    assert "main_loop" not in vars(plain) and "startup" in vars(plain)


def test_the_h11_protocol_methods_the_connection_guard_extends_are_still_there():
    """web/limits.py's protocol extends uvicorn's h11 protocol (its ``http`` option: a documented hook) by calling
    the parent's connection_made, data_received, on_response_complete and connection_lost and reading
    ``cycle.response_complete``; a release that renames them would leave connections uncounted."""
    from uvicorn.protocols.http.flow_control import FlowControl  # noqa: F401 - the protocol's own dependency
    from uvicorn.protocols.http.h11_impl import H11Protocol, RequestResponseCycle

    assert _parameters(H11Protocol.connection_made) == ["self", "transport"]
    assert _parameters(H11Protocol.data_received) == ["self", "data"]
    assert _parameters(H11Protocol.on_response_complete) == ["self"]
    assert _parameters(H11Protocol.connection_lost) == ["self", "exc"]
    assert "response_complete" in inspect.getsource(RequestResponseCycle.__init__)
    assert "self.cycle" in inspect.getsource(H11Protocol.handle_events)
