"""Parsers for /proc text across kernel generations, and the host collector's handling of their differences."""

from __future__ import annotations

import pytest

from exporter.collector import Context
from exporter.collectors.host import HostCollector
from exporter.metrics import MetricBatch
from exporter.procfs import parse_diskstats, parse_meminfo, parse_pid_stat, parse_stat


def test_stat_of_an_old_kernel_without_steal_and_guest_columns():
    # 2.6.18 (RHEL 5, HPOM 8 era): 7 CPU columns
    stat = parse_stat("cpu  10 20 30 40 50 60 70\ncpu0 10 20 30 40 50 60 70\nctxt 5\nbtime 100\n"
                      "processes 9\nprocs_running 1\nprocs_blocked 0\n", user_hz=100)
    assert stat.cpus["0"] == {"user": 0.1, "nice": 0.2, "system": 0.3, "idle": 0.4, "iowait": 0.5,
                              "irq": 0.6, "softirq": 0.7, "steal": 0.0}
    assert "" not in stat.cpus, "the aggregate 'cpu' line must not become a CPU"
    assert (stat.context_switches, stat.forks, stat.procs_running, stat.procs_blocked) == (5, 9, 1, 0)


def test_diskstats_field_generations():
    text = ("   8       0 sda 1 2 3 4 5 6 7 8 9 10 11\n"  # 14 fields (< 4.18)
            "   8      16 sdb 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15\n"  # 18 fields (4.18+, discards)
            "   8      32 sdc 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n"  # 20 fields (5.5+, flushes)
            "   8      48 sdd 1 2 3\n"  # truncated: ignored
            "garbage line\n")
    disks = {d.device: d for d in parse_diskstats(text)}
    assert set(disks) == {"sda", "sdb", "sdc"}
    assert disks["sda"].io_weighted_ms == 11 and disks["sda"].discards_completed is None
    assert disks["sdb"].sectors_discarded == 14 and disks["sdb"].flushes_completed is None
    assert disks["sdc"].flushes_completed == 16 and disks["sdc"].flush_ms == 17


def test_meminfo_units():
    info = parse_meminfo("MemTotal:  100 kB\nHugePages_Total:   4\nBroken line\n")
    assert info == {"MemTotal": 102400, "HugePages_Total": 4}


@pytest.mark.parametrize("comm", ["opcuiwww", "weird ) name", "(sd-pam)", "a b c", "x)"])
def test_pid_stat_comm_with_spaces_and_parentheses(comm):
    fields = ["S", "1", "2", "3", "0", "-1", "0", "0", "0", "0", "0", "111", "222", "0", "0", "20", "0", "9",
              "0", "4444", "5", "66"] + ["0"] * 20
    parsed = parse_pid_stat(f"321 ({comm}) " + " ".join(fields))
    assert (parsed.pid, parsed.comm, parsed.state) == (321, comm, "S")
    assert (parsed.utime, parsed.stime, parsed.threads, parsed.starttime, parsed.rss_pages) == (111, 222, 9, 4444, 66)


DEFAULT_MEMINFO = ("MemTotal: 1000 kB\nMemFree: 100 kB\nMemAvailable: 500 kB\nBuffers: 1 kB\nCached: 2 kB\n"
                   "SwapTotal: 0 kB\nSwapFree: 0 kB\nShmem: 0 kB\nSReclaimable: 0 kB\n")


def _host_samples(tmp_path, vmstat: str, net: str = "Inter-|\n face |\n",
                  meminfo: str = DEFAULT_MEMINFO) -> dict[str, float]:
    proc = tmp_path / "proc"
    (proc / "net").mkdir(parents=True, exist_ok=True)
    (proc / "stat").write_text("cpu0 1 2 3 4 5 6 7 8 0 0\nbtime 1\n")
    (proc / "loadavg").write_text("0.1 0.2 0.3 1/2 3\n")
    (proc / "meminfo").write_text(meminfo)
    (proc / "vmstat").write_text(vmstat)
    (proc / "diskstats").write_text("")
    (proc / "net" / "dev").write_text(net)
    collector = HostCollector(HostCollector.Settings(), Context(procfs=str(proc), sysfs=str(tmp_path / "nosys")))
    batch = MetricBatch(collector.specs())
    collector.collect(batch)
    result = {}
    for family in batch.families():
        for sample in family.samples:
            key = sample.name + "".join(f"{{{k}={v}}}" for k, v in sorted(sample.labels.items()))
            result[key] = sample.value
    return result


def test_scan_rate_counts_cgroup_reclaim_on_new_kernels(tmp_path):
    # Under a memcg limit, pgscan_anon/file grow while pgscan_kswapd/direct stay 0 (performance-anchors.md).
    samples = _host_samples(tmp_path, "pgscan_kswapd 0\npgscan_direct 0\npgscan_anon 200000\npgscan_file 62691\n"
                                      "pgsteal_anon 1\npgsteal_file 2\n")
    assert samples["middleware_host_page_scans_total"] == 262691
    assert samples["middleware_host_page_scans_by_reclaimer_total{reclaimer=kswapd}"] == 0
    assert samples["middleware_host_page_steals_total"] == 3


def test_scan_rate_on_old_kernels_sums_zones(tmp_path):
    # 2.6/3.x kernels split the counters by zone and have no pgscan_anon/file.
    samples = _host_samples(tmp_path, "pgscan_kswapd_dma 5\npgscan_kswapd_normal 100\npgscan_kswapd_movable 0\n"
                                      "pgscan_direct_dma 0\npgscan_direct_normal 20\npgscan_direct_throttle 99\n"
                                      "pgsteal_kswapd_normal 50\npgsteal_direct_normal 10\n")
    assert samples["middleware_host_page_scans_by_reclaimer_total{reclaimer=kswapd}"] == 105
    assert samples["middleware_host_page_scans_by_reclaimer_total{reclaimer=direct}"] == 20
    assert samples["middleware_host_page_scans_total"] == 125  # throttle events are not scans
    assert samples["middleware_host_page_steals_total"] == 60
    assert "middleware_host_cpu_cores" not in samples  # no sysfs topology: unknown, not guessed


def test_network_counters_are_exported_raw_even_when_they_go_down(tmp_path):
    """An interface re-created under the same name restarts its counters; export what /proc says (Prometheus
    handles the reset), never an adjusted figure that stays above it for good."""
    net = "Inter-|\n face |\n  eth0: {0} 10 0 0 0 0 0 0 {0} 10 0 0 0 0 0 0\n"
    first = _host_samples(tmp_path, "", net=net.format(5_000_000))
    assert first["middleware_host_network_receive_bytes_total{device=eth0}"] == 5_000_000
    second = _host_samples(tmp_path, "", net=net.format(1_000))
    assert second["middleware_host_network_receive_bytes_total{device=eth0}"] == 1_000


def test_memory_on_a_kernel_without_memavailable(tmp_path):
    samples = _host_samples(tmp_path, "", meminfo="MemTotal: 1000 kB\nMemFree: 100 kB\nBuffers: 10 kB\n"
                                                  "Cached: 200 kB\nSwapTotal: 50 kB\nSwapFree: 20 kB\n")
    assert samples["middleware_host_memory_available_bytes"] == 310 * 1024
    assert samples["middleware_host_memory_used_bytes"] == 690 * 1024
    assert samples["middleware_host_swap_used_bytes"] == 30 * 1024
