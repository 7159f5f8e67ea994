"""Connection limits: under a 1,024 open-file limit a normal scrape succeeds while 1,100 idle connections and
half-sent requests are held, and the log stays short; slow request headers are cut off; oversized headers are
refused. No timing is asserted beyond generous deadlines (the figures are in bench/load.py)."""

from __future__ import annotations

import os
import resource
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from exporter.web.limits import RESERVED_FDS, SLACK, Limits, connection_cap

from ..support import REPO, free_port, http_get
from .test_webconfig import Pki, client_context, https_get, write_config

pytestmark = pytest.mark.integration

HELD = 1100


def _limit_nofile() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))


class _Process:
    def __init__(self, tmp_path: Path, *args: str) -> None:
        self.port = free_port()
        self.log_path = tmp_path / f"exporter-{self.port}.log"
        env = {k: v for k, v in os.environ.items() if not k.startswith("MIDDLEWARE_EXPORTER_")}
        with open(self.log_path, "wb") as out:
            self.proc = subprocess.Popen([sys.executable, "-m", "exporter", "run", "--web.listen-address",
                                          f"127.0.0.1:{self.port}", *args], cwd=REPO, stdout=out,
                                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                                         preexec_fn=_limit_nofile)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def descriptors(self) -> int:
        return len(os.listdir(f"/proc/{self.proc.pid}/fd"))

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def exporter(tmp_path):
    started: list[_Process] = []

    def start(*args: str, probe=None) -> _Process:
        running = _Process(tmp_path, *args)
        started.append(running)
        probe = probe or (lambda port: http_get(f"http://127.0.0.1:{port}/readyz")[0] == 200)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            assert running.proc.poll() is None, running.log()
            try:
                if probe(running.port):
                    return running
            except OSError:
                pass
            time.sleep(0.1)
        raise AssertionError(running.log())

    yield start
    for running in started:
        running.stop()


def _hold(port: int, count: int) -> list[socket.socket]:
    """Open ``count`` connections; every other one sends half a request (no blank line) and stops."""
    held = []
    for i in range(count):
        sock = socket.socket()
        sock.settimeout(10)
        try:
            sock.connect(("127.0.0.1", port))
            if i % 2:
                sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nUser-Agent: slow")
        except OSError:
            sock.close()
            continue
        held.append(sock)
    return held


def _closed_by_server(sock: socket.socket) -> bool:
    sock.settimeout(0)
    try:
        return sock.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def test_the_cap_stays_below_the_open_file_limit():
    assert connection_cap(256, nofile=1024) == 256
    assert connection_cap(5000, nofile=1024) == 1024 - RESERVED_FDS - SLACK
    assert connection_cap(5000, nofile=None) == 5000
    assert Limits().max_connections + SLACK + RESERVED_FDS < 1024


def test_scrape_succeeds_while_1100_idle_connections_are_held_under_1024_descriptors(exporter):
    running = exporter()
    assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] > HELD + 100, "the test itself needs the descriptors"
    with open(f"/proc/{running.proc.pid}/limits") as limits:
        assert any(line.startswith("Max open files") and " 1024 " in line for line in limits)
    held = _hold(running.port, HELD)
    try:
        assert len(held) >= HELD - 10
        status, _, body = http_get(f"http://127.0.0.1:{running.port}/metrics", timeout=10)
        assert status == 200 and b"middleware_host_cpus" in body
        assert running.descriptors() < Limits().max_connections + SLACK + 64
        # the oldest idle connections were closed to make room, the newest are still open
        closed = sum(_closed_by_server(s) for s in held)
        assert closed >= HELD - Limits().max_connections - SLACK
        assert not _closed_by_server(held[-1])
        assert http_get(f"http://127.0.0.1:{running.port}/metrics", timeout=10)[0] == 200
    finally:
        for sock in held:
            sock.close()
    log = running.log()
    assert "out of system resource" not in log
    assert len(log.splitlines()) < 10 and len(log) < 3000, log
    assert running.proc.poll() is None


def test_tls_port_under_the_same_load(tmp_path, exporter):
    pki = Pki(tmp_path / "pki")
    crt, key = pki.issue("server")
    config = write_config(tmp_path / "web.yml", f"tls_server_config:\n  cert_file: {crt}\n  key_file: {key}\n")
    ctx = client_context(pki.crt)
    running = exporter("--web.config.file", str(config),
                       probe=lambda port: https_get(port, "/readyz", ctx)[0] == 200)
    held = _hold(running.port, HELD)  # never start a handshake; half of them send plain HTTP
    try:
        status, _, body = https_get(running.port, "/metrics", ctx)
        assert status == 200 and b"middleware_host_cpus" in body
        assert running.descriptors() < Limits().max_connections + SLACK + 64
    finally:
        for sock in held:
            sock.close()
    log = running.log()
    assert "out of system resource" not in log and len(log.splitlines()) < 10, log


def test_slow_request_headers_are_cut_off(exporter):
    running = exporter("--web.header-timeout", "1")
    idle, slow, started_tls = socket.socket(), socket.socket(), socket.socket()
    for sock in (idle, slow, started_tls):
        sock.settimeout(15)
        sock.connect(("127.0.0.1", running.port))
    slow.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
    # a slowloris keeps sending a header byte now and then; the deadline is for the whole header block
    deadline = time.monotonic() + 15
    closed = False
    while time.monotonic() < deadline and not closed:
        try:
            slow.sendall(b"X")
        except OSError:
            closed = True
        time.sleep(0.2)
    assert closed or slow.recv(1) == b""
    assert idle.recv(1) == b""  # the server closed it
    for sock in (idle, slow, started_tls):
        sock.close()
    # a prompt request still gets its answer
    assert http_get(f"http://127.0.0.1:{running.port}/metrics")[0] == 200


def _read_response(sock: socket.socket) -> bytes:
    """One HTTP/1.1 response with a content-length, read whole from the socket."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int([line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")][0])
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk
        body += chunk
    return head


def test_a_kept_alive_connection_waits_for_the_next_scrape(exporter):
    """Prometheus keeps its connection to a target open between scrapes (up to 5 minutes idle): an idle kept-alive
    connection stays open past the header timeout and serves the next scrape, so a scrape every 15 s does not open
    a connection (and, with TLS, run a handshake) each time.  Before issue 30 it was closed after the header
    timeout (10 s; uvicorn's own keep-alive timeout, 5 s, closed it even sooner).  Once the next request has begun,
    its headers are due within the header timeout as on a new connection, and after --web.idle-timeout the idle
    connection is closed without a line in the log."""
    running = exporter("--web.header-timeout", "1", "--web.idle-timeout", "4")
    request = b"GET /metrics HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n"
    sock = socket.create_connection(("127.0.0.1", running.port), timeout=15)
    sock.sendall(request)
    assert _read_response(sock).startswith(b"HTTP/1.1 200")
    time.sleep(2.5)  # idle for more than the header timeout
    sock.sendall(request)
    assert _read_response(sock).startswith(b"HTTP/1.1 200")
    # the next request begins and stalls: cut off after the header timeout, not the idle timeout
    time.sleep(0.5)
    sock.sendall(b"GET /metrics HTTP/1.1\r\n")
    started = time.monotonic()
    assert sock.recv(1) == b""
    assert time.monotonic() - started < 3.5
    sock.close()
    # an idle connection is closed after the idle timeout, quietly
    idle = socket.create_connection(("127.0.0.1", running.port), timeout=15)
    idle.sendall(request)
    assert _read_response(idle).startswith(b"HTTP/1.1 200")
    started = time.monotonic()
    assert idle.recv(1) == b""
    assert time.monotonic() - started > 3
    idle.close()
    time.sleep(0.5)
    assert "idle_timeout" not in running.log()


def test_oversized_request_headers_are_refused(exporter):
    running = exporter("--web.max-header-bytes", "4096")
    status, _, _ = http_get(f"http://127.0.0.1:{running.port}/metrics", {"X-Big": "a" * 8000})
    assert status == 431
    # the same headers sent a few bytes at a time (h11's limit on an incomplete header block)
    sock = socket.create_connection(("127.0.0.1", running.port), timeout=15)
    sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
    for _ in range(10):
        try:
            sock.sendall(b"X-Big: " + b"a" * 1000 + b"\r\n")
        except OSError:
            break
        time.sleep(0.05)
    assert sock.recv(100).split(b" ")[1] in (b"400", b"431")
    sock.close()
    assert http_get(f"http://127.0.0.1:{running.port}/metrics", {"X-Small": "a" * 1000})[0] == 200


def test_a_slow_reader_is_closed_after_the_request_timeout(exporter):
    running = exporter("--web.request-timeout", "1")
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(15)
    sock.connect(("127.0.0.1", running.port))
    # ask for the landing page many times over one connection without reading: the answers pile up
    sock.sendall(b"GET /api/v1/collectors HTTP/1.1\r\nHost: x\r\n\r\n" * 2000)
    time.sleep(3)
    received = b""
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(65536)
        except (ConnectionResetError, TimeoutError):
            break
        if not chunk:
            break
        received += chunk
    assert received.count(b"HTTP/1.1 200") < 2000  # cut off before every answer was written
    sock.close()
    assert http_get(f"http://127.0.0.1:{running.port}/metrics")[0] == 200


def test_a_connection_over_tls_without_a_handshake_is_cut_off(tmp_path, exporter):
    pki = Pki(tmp_path / "pki")
    crt, key = pki.issue("server")
    config = write_config(tmp_path / "web.yml", f"tls_server_config:\n  cert_file: {crt}\n  key_file: {key}\n")
    ctx = client_context(pki.crt)
    running = exporter("--web.config.file", str(config), "--web.header-timeout", "1",
                       probe=lambda port: https_get(port, "/readyz", ctx)[0] == 200)
    sock = socket.create_connection(("127.0.0.1", running.port), timeout=15)
    assert sock.recv(1) == b""
    sock.close()
    tls = ctx.wrap_socket(socket.create_connection(("127.0.0.1", running.port), timeout=15),
                          server_hostname="localhost")
    tls.sendall(b"GET /metrics HTTP/1.1\r\n")  # handshake done, headers never finished
    assert tls.recv(1) == b""
    tls.close()
