"""The host collector must report the same figures as node_exporter reads from the same /proc files.

node_exporter is started on a free loopback port with only the collectors that overlap ours.  Counters are
checked by bracketing rather than with a time tolerance: node_exporter is scraped (A), our host collector
runs once in-process, node_exporter is scraped again (B), and every monotonic counter must satisfy
A <= ours <= B.  A wrong unit, scale, field index or label would break that; an honest reading cannot.
Gauges that move (available memory, load) get a tolerance; fixed ones (MemTotal, SwapTotal, btime) must match.

Needs the ``prometheus-node-exporter`` binary (Debian/Ubuntu package of the same name) or ``node_exporter``.
Without it the module is skipped, except on CI (``CI`` set), where a missing binary is a failure.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Iterator

import pytest
from prometheus_client.parser import text_string_to_metric_families

from exporter.core.collector import Context
from exporter.core.metrics import MetricBatch
from exporter.systems.host.collector import HostCollector

pytestmark = pytest.mark.integration

NODE_COLLECTOR_FLAGS = [
    "--collector.disable-defaults",
    "--collector.cpu",
    "--collector.stat",
    "--collector.meminfo",
    "--collector.vmstat",
    "--collector.diskstats",
    "--collector.loadavg",
    "--collector.netdev",
    # Debian's build defaults --collector.netdev.device-exclude to ^lo$ (upstream excludes nothing); we export
    # every interface, so include lo on both sides: the loopback scrapes are the traffic we can count on.
    "--collector.netdev.device-exclude=^$",
]
STARTUP_SECONDS = 10.0
REL_SLACK = 1e-9  # float rounding only; there is no time tolerance on counters
MIB = 1024 * 1024
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
H = "middleware_host"

# (our sample name, node_exporter sample name, label names compared, divisor applied to our value)
COUNTERS: list[tuple[str, str, tuple[str, ...], float]] = [
    (f"{H}_cpu_seconds_total", "node_cpu_seconds_total", ("cpu", "mode"), 1),
    (f"{H}_context_switches_total", "node_context_switches_total", (), 1),
    (f"{H}_interrupts_total", "node_intr_total", (), 1),
    (f"{H}_forks_total", "node_forks_total", (), 1),
    (f"{H}_disk_reads_completed_total", "node_disk_reads_completed_total", ("device",), 1),
    (f"{H}_disk_writes_completed_total", "node_disk_writes_completed_total", ("device",), 1),
    (f"{H}_disk_read_bytes_total", "node_disk_read_bytes_total", ("device",), 1),
    (f"{H}_disk_written_bytes_total", "node_disk_written_bytes_total", ("device",), 1),
    (f"{H}_disk_read_time_seconds_total", "node_disk_read_time_seconds_total", ("device",), 1),
    (f"{H}_disk_write_time_seconds_total", "node_disk_write_time_seconds_total", ("device",), 1),
    (f"{H}_disk_io_time_seconds_total", "node_disk_io_time_seconds_total", ("device",), 1),
    (f"{H}_disk_io_time_weighted_seconds_total", "node_disk_io_time_weighted_seconds_total", ("device",), 1),
    (f"{H}_network_receive_bytes_total", "node_network_receive_bytes_total", ("device",), 1),
    (f"{H}_network_transmit_bytes_total", "node_network_transmit_bytes_total", ("device",), 1),
    (f"{H}_network_receive_packets_total", "node_network_receive_packets_total", ("device",), 1),
    (f"{H}_network_transmit_packets_total", "node_network_transmit_packets_total", ("device",), 1),
    (f"{H}_page_in_bytes_total", "node_vmstat_pgpgin", (), 1024),
    (f"{H}_page_out_bytes_total", "node_vmstat_pgpgout", (), 1024),
    (f"{H}_swap_in_bytes_total", "node_vmstat_pswpin", (), PAGE_SIZE),
    (f"{H}_swap_out_bytes_total", "node_vmstat_pswpout", (), PAGE_SIZE),
    (f"{H}_page_faults_total", "node_vmstat_pgfault", (), 1),
    (f"{H}_major_page_faults_total", "node_vmstat_pgmajfault", (), 1),
]
NODE_CPU_MODES = {"user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"}

# sample name -> [(labels, value)]
Samples = dict[str, list[tuple[dict[str, str], float]]]


# ---- node_exporter process --------------------------------------------------------------------------------
def _node_exporter_binary() -> str:
    path = shutil.which("prometheus-node-exporter") or shutil.which("node_exporter")
    if path:
        return path
    message = ("node_exporter not found (neither prometheus-node-exporter nor node_exporter is on PATH); "
               "install it with: apt-get install prometheus-node-exporter")
    if os.environ.get("CI"):
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _fetch(url: str, timeout: float = 5.0) -> str:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.read().decode("utf-8")


@dataclass
class NodeExporter:
    url: str
    process: subprocess.Popen


@pytest.fixture(scope="module")
def node_exporter(tmp_path_factory) -> Iterator[NodeExporter]:
    binary = _node_exporter_binary()
    port = _free_port()
    log_path = tmp_path_factory.mktemp("node_exporter") / "node_exporter.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [binary, *NODE_COLLECTOR_FLAGS, f"--web.listen-address=127.0.0.1:{port}"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}/metrics"
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            if process.poll() is not None:
                pytest.fail(f"{binary} exited with status {process.returncode} before answering:\n"
                            f"{log_path.read_text(errors='replace')}", pytrace=False)
            try:
                _fetch(url, timeout=1.0)
                break
            except (urllib.error.URLError, ConnectionError, OSError):
                if time.monotonic() > deadline:
                    pytest.fail(f"{binary} did not answer {url} within {STARTUP_SECONDS:g}s:\n"
                                f"{log_path.read_text(errors='replace')}", pytrace=False)
                time.sleep(0.05)
        yield NodeExporter(url, process)
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


# ---- samples ----------------------------------------------------------------------------------------------
def _node_samples(url: str) -> Samples:
    result: Samples = {}
    for family in text_string_to_metric_families(_fetch(url)):
        for sample in family.samples:
            result.setdefault(sample.name, []).append((dict(sample.labels), float(sample.value)))
    return result


def _our_samples() -> Samples:
    collector = HostCollector(HostCollector.Settings(), Context())
    batch = MetricBatch(collector.specs())
    collector.collect(batch)
    result: Samples = {}
    for family in batch.families():
        for sample in family.samples:
            result.setdefault(sample.name, []).append((dict(sample.labels), float(sample.value)))
    return result


def _by_labels(samples: Samples, name: str, labels: tuple[str, ...]) -> dict[tuple[str, ...], float]:
    return {tuple(lbl.get(k, "") for k in labels): value for lbl, value in samples.get(name, [])}


def _scalar(samples: Samples, name: str) -> float | None:
    values = [value for lbl, value in samples.get(name, []) if not lbl]
    return values[0] if values else None


def _generate_activity(directory) -> None:
    """Disk writes (fsynced, so they reach the device) and reads; the scrapes add the loopback traffic."""
    path = directory / "io.bin"
    block = os.urandom(1024 * 1024)
    with open(path, "wb") as handle:
        for _ in range(4):
            handle.write(block)
            handle.flush()
            os.fsync(handle.fileno())
    with open(path, "rb") as handle:
        while handle.read(1024 * 1024):
            pass
    path.unlink()


@dataclass
class Measurement:
    before: Samples  # node_exporter scrape A
    ours: Samples
    after: Samples  # node_exporter scrape B


@pytest.fixture(scope="module")
def measurement(node_exporter: NodeExporter, tmp_path_factory) -> Measurement:
    _generate_activity(tmp_path_factory.mktemp("disk_io"))
    _node_samples(node_exporter.url)  # warm-up: node_exporter's first scrape initialises collector state
    before = _node_samples(node_exporter.url)
    ours = _our_samples()
    after = _node_samples(node_exporter.url)
    return Measurement(before, ours, after)


def _fmt_labels(names: tuple[str, ...], values: tuple[str, ...]) -> str:
    return "{" + ",".join(f'{k}="{v}"' for k, v in zip(names, values, strict=True)) + "}" if names else ""


def _le(a: float, b: float) -> bool:
    return a <= b + REL_SLACK * max(abs(a), abs(b))


# ---- tests ------------------------------------------------------------------------------------------------
def test_counters_are_bracketed_by_two_node_exporter_scrapes(measurement: Measurement) -> None:
    m = measurement
    mismatches: list[str] = []
    compared = 0
    nonzero = 0
    for ours_name, node_name, labels, divisor in COUNTERS:
        before = _by_labels(m.before, node_name, labels)
        after = _by_labels(m.after, node_name, labels)
        ours = _by_labels(m.ours, ours_name, labels)
        if not before:
            mismatches.append(f"{node_name}: node_exporter did not export it (cannot compare {ours_name})")
            continue
        if not ours:
            mismatches.append(f"{ours_name}: we did not export it (node_exporter has {node_name})")
            continue
        # A series both scrapes of node_exporter have must be ours too (and the reverse), except for a device
        # that appeared or vanished between the scrapes.
        stable = before.keys() & after.keys()
        for key in sorted(stable - ours.keys()):
            mismatches.append(f"{ours_name}{_fmt_labels(labels, key)}: missing from ours "
                              f"(node_exporter has {node_name}={before[key]!r})")
        for key in sorted(ours.keys() - before.keys() - after.keys()):
            mismatches.append(f"{ours_name}{_fmt_labels(labels, key)}: exported by us but not by node_exporter "
                              f"({node_name})")
        for key in sorted(stable & ours.keys()):
            a, b = before[key], after[key]
            value = ours[key] / divisor
            compared += 1
            nonzero += value > 0
            if not (_le(a, value) and _le(value, b)):
                scale = f" (ours / {divisor:g})" if divisor != 1 else ""
                mismatches.append(
                    f"{ours_name}{_fmt_labels(labels, key)}: ours{scale}={value!r} not within "
                    f"node_exporter {node_name} A={a!r} .. B={b!r}")
    if mismatches:
        print("\n".join(mismatches))
    assert not mismatches, f"{len(mismatches)} counter disagreement(s) with node_exporter:\n" + "\n".join(mismatches)
    assert compared > 20, f"only {compared} counter series compared; the test would pass vacuously"
    assert nonzero > 10, f"only {nonzero} of {compared} compared counters are non-zero"


def test_cpu_modes_and_disk_devices_match(measurement: Measurement) -> None:
    m = measurement
    mismatches: list[str] = []
    node_cpu = _by_labels(m.before, "node_cpu_seconds_total", ("cpu", "mode"))
    our_cpu = _by_labels(m.ours, f"{H}_cpu_seconds_total", ("cpu", "mode"))
    node_modes = {mode for _, mode in node_cpu}
    if node_modes != NODE_CPU_MODES:
        mismatches.append(f"node_cpu_seconds_total modes {sorted(node_modes)} != expected {sorted(NODE_CPU_MODES)}")
    if set(node_cpu) != set(our_cpu):
        mismatches.append(f"cpu/mode pairs differ: only node_exporter {sorted(set(node_cpu) - set(our_cpu))}, "
                          f"only ours {sorted(set(our_cpu) - set(node_cpu))}")
    # Both default to the same exclude regex (whole disks only), so the device sets must be equal.
    node_disks = {key[0] for key in _by_labels(m.before, "node_disk_reads_completed_total", ("device",))}
    our_disks = {key[0] for key in _by_labels(m.ours, f"{H}_disk_reads_completed_total", ("device",))}
    if node_disks != our_disks:
        mismatches.append(f"disk devices differ: node_exporter {sorted(node_disks)}, ours {sorted(our_disks)}")
    if mismatches:
        print("\n".join(mismatches))
    assert not mismatches, "\n".join(mismatches)


def test_gauges_agree(measurement: Measurement) -> None:
    m = measurement
    mismatches: list[str] = []

    def check(ours_name: str, node_value: float | None, node_desc: str, tolerance: float, unit: str = "") -> None:
        ours = _scalar(m.ours, ours_name)
        if ours is None:
            mismatches.append(f"{ours_name}: not exported by us")
            return
        if node_value is None:
            mismatches.append(f"{node_desc}: not exported by node_exporter")
            return
        if abs(ours - node_value) > tolerance:
            allowed = "exactly" if tolerance == 0 else f"within {tolerance:g}{unit}"
            mismatches.append(f"{ours_name}={ours!r} != {node_desc}={node_value!r} "
                              f"(difference {ours - node_value:+g}, allowed {allowed})")

    node = m.before

    def node_scalar(name: str) -> float | None:
        return _scalar(node, name)

    check(f"{H}_memory_total_bytes", node_scalar("node_memory_MemTotal_bytes"), "node_memory_MemTotal_bytes", 0)
    check(f"{H}_swap_total_bytes", node_scalar("node_memory_SwapTotal_bytes"), "node_memory_SwapTotal_bytes", 0)
    check(f"{H}_memory_available_bytes", node_scalar("node_memory_MemAvailable_bytes"),
          "node_memory_MemAvailable_bytes", 64 * MIB, " bytes")
    cached = node_scalar("node_memory_Cached_bytes")
    sreclaimable = node_scalar("node_memory_SReclaimable_bytes")
    check(f"{H}_memory_cached_bytes", None if cached is None or sreclaimable is None else cached + sreclaimable,
          "node_memory_Cached_bytes + node_memory_SReclaimable_bytes", 64 * MIB, " bytes")
    cpus = {lbl["cpu"] for lbl, _ in node.get("node_cpu_seconds_total", [])}
    check(f"{H}_cpus", float(len(cpus)) if cpus else None, "distinct cpu labels of node_cpu_seconds_total", 0)
    check(f"{H}_boot_time_seconds", node_scalar("node_boot_time_seconds"), "node_boot_time_seconds", 1.0, " s")
    check(f"{H}_load1", node_scalar("node_load1"), "node_load1", 1.0)
    if mismatches:
        print("\n".join(mismatches))
    assert not mismatches, f"{len(mismatches)} gauge disagreement(s) with node_exporter:\n" + "\n".join(mismatches)
