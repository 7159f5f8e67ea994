"""VHI session counting with real processes and real sockets on loopback: a listener stands in for the host's
TN3270 port, and a process named like the session server, pinned to one CPU, holds N connections to it."""

from __future__ import annotations

import os
import socket
import threading
import time

import pytest

from exporter.core.collector import Context
from exporter.core.metrics import MetricBatch
from exporter.systems.vhi.collector import VhiCollector
from exporter.systems.vhi.parse import parse_cpu_list, parse_tcp
from exporter.systems.vhi.settings import VhiSettings

from ...support import wait_for_comm

CPU = min(os.sched_getaffinity(0))  # a CPU this test may run on, whatever the machine has (one is enough)
HOLDER = """
import os, socket, sys, time
os.sched_setaffinity(0, {{{cpu}}})
conns = [socket.create_connection(("127.0.0.1", {port})) for _ in range({count})]
print("ready", flush=True)
time.sleep(120)
"""


@pytest.fixture
def host_port():
    """A loopback listener standing in for the mainframe's TN3270 port; accepts and holds connections."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1024)
    held, stop = [], threading.Event()

    def accept():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    server.close()


def _samples(collector) -> dict:
    batch = MetricBatch(collector.specs())
    collector.collect(batch)
    return {(s.name, tuple(sorted(s.labels.items()))): s.value for f in batch.families() for s in f.samples}


def test_300_sessions_on_one_cpu_are_over_the_limit(spawn, host_port):
    holder = spawn("sesssrvr", python_code=HOLDER.format(port=host_port, count=300, cpu=CPU))
    wait_for_comm(holder, "sesssrvr")
    collector = VhiCollector(VhiSettings(enabled=True, host_ports=[host_port]), Context())
    deadline = time.monotonic() + 60  # until all 300 connections are established (a backstop only)
    while time.monotonic() < deadline:
        samples = _samples(collector)
        if samples[("middleware_vhi_sessions", ())] == 300:
            break
        time.sleep(0.05)
    assert samples[("middleware_vhi_sessions", ())] == 300
    assert samples[("middleware_vhi_sessions_by_port", (("port", str(host_port)),))] == 300
    assert samples[("middleware_vhi_session_server_processes", ())] == 1
    assert samples[("middleware_vhi_session_server_cpus", ())] == 1
    assert samples[("middleware_vhi_sessions_per_cpu", ())] == 300
    assert samples[("middleware_vhi_sessions_per_cpu", ())] > samples[("middleware_vhi_sessions_per_cpu_limit", ())]
    # memory formula at 300 sessions: 512 + 2 x 64 MB, recommended 1024 + 2 x 128 MB
    assert samples[("middleware_vhi_memory_required_bytes", (("level", "minimum"),))] == 640 * 2**20
    assert samples[("middleware_vhi_memory_required_bytes", (("level", "recommended"),))] == 1280 * 2**20
    assert samples[("middleware_vhi_session_server_resident_memory_bytes", ())] > 1_000_000


def test_only_the_session_servers_connections_to_host_ports_count(spawn, host_port):
    holder = spawn("sesssrvr", python_code=HOLDER.format(port=host_port, count=20, cpu=CPU))
    other = spawn("notvhi", python_code=HOLDER.format(port=host_port, count=7, cpu=CPU))
    wait_for_comm(holder, "sesssrvr")
    wait_for_comm(other, "notvhi")
    settings = VhiSettings(enabled=True, host_ports=[host_port, 2323], process_names=["sesssrvr"])
    collector = VhiCollector(settings, Context())
    deadline = time.monotonic() + 60  # a backstop only
    while time.monotonic() < deadline:
        samples = _samples(collector)
        if samples[("middleware_vhi_sessions", ())] == 20:
            break
        time.sleep(0.05)
    assert samples[("middleware_vhi_sessions", ())] == 20
    assert samples[("middleware_vhi_sessions_by_port", (("port", "2323"),))] == 0
    assert samples[("middleware_vhi_session_server_cpus", ())] == 1
    assert samples[("middleware_vhi_memory_required_bytes", (("level", "minimum"),))] == 512 * 2**20


def test_no_session_server_running():
    samples = _samples(VhiCollector(VhiSettings(enabled=True, process_names=["no-such-proc"]), Context()))
    assert samples[("middleware_vhi_sessions", ())] == 0
    assert samples[("middleware_vhi_session_server_processes", ())] == 0
    assert ("middleware_vhi_sessions_per_cpu", ()) not in samples


def test_parsers():
    assert parse_cpu_list("0-3,6,8-9\n") == {0, 1, 2, 3, 6, 8, 9}
    table = parse_tcp(
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
        "   0: 0100007F:9C40 0100007F:0017 01 00000000:00000000 00:00000000 00000000  1000        0 4242 1\n"
        "   1: 00000000:0017 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 99 1\n"
        "garbage\n")
    assert table == {4242: (23, "01"), 99: (0, "0A")}


def _recorded_session_server(root, cpus_allowed: str, links: list[str]) -> None:
    """A recorded /proc with one session server (pid 77): its affinity list, fd links and TCP table."""
    (root / "stat").write_text("cpu0 1 2 3 4 5 6 7 8 0 0\nbtime 1\n")
    pid = root / "77"
    (pid / "fd").mkdir(parents=True)
    (pid / "net").mkdir()
    (pid / "comm").write_text("sesssrvr\n")
    (pid / "stat").write_text("77 (sesssrvr) S" + " 1" * 20 + " 100" + " 1" * 28 + "\n")
    (pid / "status").write_text(f"Name:\tsesssrvr\nCpus_allowed_list:\t{cpus_allowed}\nThreads:\t1\n")
    for fd, link in enumerate(links):
        os.symlink(link, pid / "fd" / str(fd))
    (pid / "net" / "tcp").write_text(
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
        "   0: 0100007F:9C40 0100007F:0017 01 00000000:00000000 00:00000000 00000000  1000        0 4242 1\n"
        "   1: 0100007F:9C41 0100007F:0017 01 00000000:00000000 00:00000000 00000000  1000        0 4243 1\n")


def test_a_huge_affinity_list_and_odd_fd_links_do_not_stop_the_count(tmp_path):
    """A long affinity list of repeated ranges (its cost: tests/core/test_parsers_bounded.py) and fd links the kernel
    never writes (``socket:[abc]`` raised ValueError and failed the collector)."""
    _recorded_session_server(tmp_path, ",".join(["0-8191"] * 2000),
                             ["socket:[4242]", "socket:[abc]", "socket:[" + "9" * 400 + "]", "socket:[4243",
                              "pipe:[4243]", "/dev/null"])
    samples = _samples(VhiCollector(VhiSettings(enabled=True, host_ports=[23]), Context(procfs=str(tmp_path))))
    assert samples[("middleware_vhi_sessions", ())] == 1  # only socket:[4242]: 4243 is not a socket link here
    assert samples[("middleware_vhi_session_server_cpus", ())] == 8192


@pytest.mark.skipif(not os.environ.get("MWE_TEST_VHI_PORTS"),
                    reason="set MWE_TEST_VHI_PORTS (comma-separated host ports) on a real VHI session server host")
def test_real_session_server():
    ports = [int(p) for p in os.environ["MWE_TEST_VHI_PORTS"].split(",")]
    samples = _samples(VhiCollector(VhiSettings(enabled=True, host_ports=ports), Context()))
    assert samples[("middleware_vhi_session_server_processes", ())] >= 1
