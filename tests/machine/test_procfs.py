"""Parsers for /proc text across kernel generations, the host collector's handling of their differences, and the
process table shared by the collectors that read processes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time

import pytest

from exporter.cli import build_collectors
from exporter.core.collector import Context
from exporter.core.exposition import render_families
from exporter.core.metrics import MetricBatch
from exporter.core.scheduler import Scheduler
from exporter.machine import procfs, proctypes
from exporter.machine.procfs import ProcessTable, parse_int, parse_pid_stat, walk_processes
from exporter.registry import load
from exporter.systems.host.collector import HostCollector
from exporter.systems.host.parse import (
    parse_diskstats,
    parse_key_values,
    parse_loadavg,
    parse_meminfo,
    parse_net_dev,
    parse_stat,
)
from exporter.systems.hpom.collector import HpomCollector
from exporter.systems.hpom.settings import HpomSettings
from exporter.systems.process.collector import ProcessCollector
from exporter.systems.vhi.collector import VhiCollector
from exporter.systems.vhi.settings import VhiSettings

from ..support import FIXTURES, collect


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


# ---- the shared process table --------------------------------------------------------------------------------
HOST1_PROC = FIXTURES / "host1" / "proc"


def test_walk_reads_names_and_skips_what_it_cannot_read():
    # The recorded tree has no comm files (as on kernels before 2.6.33): names come from stat.
    entries = {e.pid: e for e in walk_processes(str(HOST1_PROC))}
    assert 9999 not in entries, "a stat file without '(name)' is left out"
    assert 9998 not in entries, "a pid directory without stat (the process exited mid-walk) is left out"
    assert entries[3103].comm == "opcuiwww" and entries[3103].stat().state == "Z"
    assert entries[7002].comm == "weird ) name" and entries[7001].comm == "(sd-pam)"
    stat = entries[2301].stat()
    assert (stat.pid, stat.comm, stat.utime, stat.stime, stat.threads) == (2301, "opcmsgm", 812345, 123456, 14)
    assert entries[2301].path == os.path.join(str(HOST1_PROC), "2301")


def _proc_dir(root, pid: int, comm: str, state: str = "S", comm_file: bool = True) -> None:
    directory = root / str(pid)
    directory.mkdir()
    (directory / "stat").write_text(f"{pid} ({comm}) {state}" + " 7" * 49 + "\n")
    if comm_file:
        (directory / "comm").write_text(comm + "\n")


def test_walk_reads_comm_and_stat_only_on_demand(tmp_path):
    _proc_dir(tmp_path, 5, "opc msgm")
    _proc_dir(tmp_path, 6, "oldkernel", comm_file=False)
    (tmp_path / "7").mkdir()  # exited between the listing and the read
    (tmp_path / "self").mkdir()
    entries = {e.pid: e for e in walk_processes(str(tmp_path))}
    assert sorted(entries) == [5, 6]
    assert entries[5].comm == "opc msgm" and entries[6].comm == "oldkernel"
    (tmp_path / "5" / "stat").unlink()
    assert entries[5].stat() is None, "exited after the walk: no numbers"
    assert entries[6].stat().utime == 7


def test_entry_parses_a_garbled_stat_line_as_none(tmp_path):
    (tmp_path / "42").mkdir()
    (tmp_path / "42" / "comm").write_text("opcmsgm\n")
    (tmp_path / "42" / "stat").write_text("42 (opcmsgm) S 1 2 3 not-a-number\n")
    [entry] = walk_processes(str(tmp_path))
    assert entry.comm == "opcmsgm"
    assert entry.stat() is None


def test_cmdline_is_read_once_per_walk(tmp_path):
    _proc_dir(tmp_path, 7, "amqzxma0")
    (tmp_path / "7" / "cmdline").write_bytes(b"amqzxma0\0-m\0QM1\0")
    table = ProcessTable(str(tmp_path))
    [entry] = table.snapshot("process")
    assert entry.cmdline() == "amqzxma0 -m QM1"
    (tmp_path / "7" / "cmdline").unlink()
    assert table.snapshot("vhi")[0].cmdline() == "amqzxma0 -m QM1", "a second reader of the walk reuses it"
    assert table.snapshot("process")[0].cmdline() == "", "a new walk reads it again (gone now)"


def test_readers_of_one_interval_share_a_walk_and_a_stale_one_is_read_again():
    now = [1000.0]
    table = ProcessTable(str(HOST1_PROC), max_age=5.0, clock=lambda: now[0])
    first = table.snapshot("process")
    now[0] += 1
    assert table.snapshot("vhi") is first and table.snapshot("hpom") is first
    assert table.walks == 1
    # the same reader again: a new walk, which the others then share
    second = table.snapshot("process")
    assert table.walks == 2 and second is not first
    assert table.snapshot("vhi") is second
    # past the freshness window: walked again even for a reader that has not had the last walk
    now[0] += 5.5
    assert table.snapshot("hpom") is not second
    assert table.walks == 3


def test_a_reader_never_gets_the_same_walk_twice(tmp_path):
    _proc_dir(tmp_path, 1, "init")
    table = ProcessTable(str(tmp_path))
    assert [e.comm for e in table.snapshot("process")] == ["init"]
    _proc_dir(tmp_path, 2, "opcuiwww")
    assert sorted(e.comm for e in table.snapshot("process")) == ["init", "opcuiwww"]


def _three_collectors(context: Context):
    process = ProcessCollector(ProcessCollector.Settings(), context)
    vhi = VhiCollector(VhiSettings(enabled=True), context)
    hpom = HpomCollector(HpomSettings(enabled=True, queue_dir="/nonexistent", opcsv=None, ovc=None, ovconfget=None,
                                      msi_programs=["opcmsgm", "opcuiwww"]), context)
    return process, vhi, hpom


def test_three_collectors_collecting_at_once_walk_proc_once():
    context = Context(procfs=str(HOST1_PROC))
    collectors = _three_collectors(context)
    walks = []
    original = procfs.walk_processes

    def counting_walk(root):
        walks.append(threading.current_thread().name)
        time.sleep(0.2)  # a slow walk: the others arrive while it runs and wait for it
        return original(root)

    barrier = threading.Barrier(len(collectors))
    results = {}

    def run(collector):
        batch = MetricBatch(collector.specs())
        barrier.wait()
        collector.collect(batch)
        results[collector.name] = {s.name + str(sorted(s.labels.items())): s.value
                                   for f in batch.families() for s in f.samples}

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(procfs, "walk_processes", counting_walk)
        for _ in range(2):  # two intervals
            threads = [threading.Thread(target=run, args=(c,)) for c in collectors]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
    assert len(walks) == 2, f"one walk per interval for three collectors, not {len(walks)}"
    assert context.processes.walks == 2
    # and each read what it always read from that tree
    assert results["process"]["middleware_process_scanned_processes[]"] == 20
    assert results["vhi"]["middleware_vhi_session_server_processes[]"] == 1
    assert results["hpom"]["middleware_hpom_msi_program_processes[('program', 'opcuiwww')]"] == 2  # not the zombie


def test_the_exporter_gives_all_its_collectors_one_process_table(tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text("collectors:\n  vhi:\n    enabled: true\n  hpom:\n    enabled: true\n"
                      "    msi_programs: [opcmsgm]\n    opcsv: null\n    ovc: null\n    ovconfget: null\n")
    collectors = build_collectors(load(config, environ={}, overrides={("paths", "procfs"): str(HOST1_PROC)}))
    readers = [c for c in collectors if c.name in ("process", "vhi", "hpom")]
    assert len(readers) == 3
    assert len({id(c.context.processes) for c in collectors}) == 1
    Scheduler(collectors).run_once()
    assert readers[0].context.processes.walks == 1


# ---- numbers no kernel writes: huge, non-finite, odd -------------------------------------------------------------
HUGE = "9" * 400  # a 400-digit counter: int() takes it, dividing it or turning it into a float overflows


def test_stat_skips_a_line_with_a_huge_or_odd_counter_and_keeps_the_others():
    stat = parse_stat(f"cpu0 {HUGE} 1 2 3 4 5 6 7\ncpu1 100 0 0 0 0 0 0 0\nctxt nan\nintr inf 0\nprocesses 1e400\n"
                      f"procs_running ١٢\nprocs_blocked 1_0\nbtime {HUGE}\n", user_hz=100)  # was OverflowError
    assert list(stat.cpus) == ["1"] and stat.cpus["1"]["user"] == 1.0
    assert (stat.context_switches, stat.interrupts, stat.forks, stat.procs_running, stat.procs_blocked,
            stat.boot_time) == (None,) * 6
    assert parse_stat("cpu0 18446744073709551615 0 0 0\n", user_hz=100).cpus["0"]["user"] == (2**64 - 1) / 100


def test_every_proc_parser_leaves_out_a_huge_or_odd_field():
    assert parse_meminfo(f"MemTotal: {HUGE} kB\nMemFree: 5 kB\nCached: ٣ kB\n") == {"MemFree": 5120}
    assert parse_key_values(f"pgscan_anon {HUGE}\npgfault 12\nnr_x 1_0\n") == {"pgfault": 12}
    disks = parse_diskstats(f"8 0 sda {HUGE}" + " 1" * 10 + "\n8 16 sdb" + " 1" * 11 + "\n")
    assert [d.device for d in disks] == ["sdb"]
    nets = parse_net_dev(f"Inter-|\n face |\n eth0: {HUGE}" + " 0" * 15 + "\n lo: 1" + " 0" * 15 + "\n")
    assert [n.device for n in nets] == ["lo"]
    for bad in ("nan 0.1 0.2 1/2 3", "inf 0.1 0.2 1/2 3", "1e400 0 0 1/2 3", f"{HUGE} 0 0 1/2 3", "0x1 0 0 1/2 3"):
        with pytest.raises(ValueError, match="not /proc/loadavg"):  # reported by the host collector, not NaN
            parse_loadavg(bad)
    assert parse_loadavg("0.53 1.00 12.5 1/123 4567") == (0.53, 1.0, 12.5)
    fields = ["S"] + ["1"] * 8 + [HUGE] + ["1"] * 40
    with pytest.raises(ValueError):
        parse_pid_stat("321 (x) " + " ".join(fields[:11] + [HUGE] + fields[12:]))
    assert parse_pid_stat("321 (x) " + " ".join(["S"] + ["1"] * 45)).utime == 1
    assert parse_int("18446744073709551615") == 2**64 - 1 and parse_int("-1") == -1
    for bad in ("", "-", "+1", "1_0", "٣", " 1", "1" * 21, "0x10"):
        with pytest.raises(ValueError):
            parse_int(bad)


def test_a_process_with_a_huge_counter_is_left_out_not_raised(tmp_path):
    (tmp_path / "stat").write_text("cpu0 1 2 3 4 5 6 7 8 0 0\nbtime 1\n")
    _proc_dir(tmp_path, 5, "sesssrvr")
    (tmp_path / "5" / "stat").write_text("5 (sesssrvr) S" + " 7" * 10 + f" {HUGE}" + " 7" * 38 + "\n")
    _proc_dir(tmp_path, 6, "sesssrvr")
    settings = ProcessCollector.Settings(groups=[{"name": "vhi", "names": ["sesssrvr"]}])
    samples, batch = collect(ProcessCollector(settings, Context(procfs=str(tmp_path))))
    cpu = {k: v for k, v in samples.items() if k[0] == "middleware_process_group_cpu_seconds_total"}
    assert cpu and all(v == 7 / proctypes.USER_HZ for v in cpu.values())  # pid 6 alone: pid 5's line is garbled


def test_kernel_parameters_of_hundreds_of_digits_are_left_out(tmp_path):
    proc = _host_tree(tmp_path)
    (proc / "sys" / "kernel" / "shmmax").write_text(HUGE + "\n")  # was an OverflowError at the exposition
    (proc / "sys" / "kernel" / "shmmni").write_text("4096\n")
    samples, batch = collect(HostCollector(HostCollector.Settings(), Context(procfs=str(proc),
                                                                            sysfs=str(tmp_path / "nosys"))))
    params = {dict(k[1])["parameter"]: v for k, v in samples.items() if k[0] == "middleware_host_kernel_parameter"}
    assert params.get("kernel.shmmni") == 4096 and "kernel.shmmax" not in params


def _host_tree(tmp_path, stat: str = "cpu0 1 2 3 4 5 6 7 8 0 0\nbtime 1\n"):
    proc = tmp_path / "proc"
    shutil.copytree(HOST1_PROC, proc, ignore=shutil.ignore_patterns("[0-9]*"))
    (proc / "stat").write_text(stat)
    return proc


@pytest.mark.integration
def test_exporter_process_keeps_the_host_collector_up_with_a_huge_proc_stat_counter(tmp_path, start_exporter):
    """A real exporter process whose /proc/stat has a 400-digit counter on one CPU line: before, parse_stat
    raised OverflowError and the whole host collector failed every run."""
    stat = (FIXTURES / "host1" / "proc" / "stat").read_text()
    first_cpu = next(line for line in stat.splitlines() if line.startswith("cpu0 "))
    proc = _host_tree(tmp_path, stat.replace(first_cpu, f"cpu0 {HUGE}" + first_cpu[4:].split(" ", 2)[2]))
    exporter = start_exporter("--path.procfs", str(proc), "--path.sysfs", str(tmp_path / "nosys"))
    status, _, body = exporter.get("/metrics")
    assert status == 200
    text = body.decode()
    assert 'middleware_scrape_collector_success{collector="host"} 1.0' in text
    assert 'middleware_host_cpu_seconds_total{cpu="1",mode="user"}' in text  # the other CPUs still counted
    assert 'cpu="0"' not in text  # the garbled line is left out, not guessed


@pytest.mark.skipif(not os.path.exists("/proc/self/comm"), reason="needs Linux's writable /proc/<pid>/comm")
def test_psutil_walk_turns_undecodable_names_into_replacement_characters(tmp_path):
    """psutil keeps the bytes of a name or command line that are not UTF-8 as lone surrogates; as a label value
    they made the exposition's UTF-8 encoding raise (the scrape failed).  Both back-ends now give U+FFFD."""
    code = "import sys, time\nopen('/proc/self/comm', 'wb').write(b'vhi\\xff\\xfesrv')\ntime.sleep(120)\n"
    child = subprocess.Popen([sys.executable, "-c", code, b"--site=\xff\xfeA"], stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60  # a backstop: the write takes milliseconds
        while open(f"/proc/{child.pid}/comm", "rb").read() != b"vhi\xff\xfesrv\n":
            assert time.monotonic() < deadline and child.poll() is None
            time.sleep(0.02)
        settings = ProcessCollector.Settings(backend="psutil", groups=[{
            "name": "vhi", "comm": r"^(?P<process>vhi.*)", "labels_from_cmdline": r"--site=(?P<site>\S+)"}])
        samples, batch = collect(ProcessCollector(settings, Context()))
        text = render_families(batch.families(), openmetrics=False).decode()  # raised UnicodeEncodeError
        assert 'process="vhi\ufffd\ufffdsrv"' in text and 'site="\ufffd\ufffdA"' in text
        assert {e.comm for e in walk_processes("/proc") if e.pid == child.pid} == {"vhi\ufffd\ufffdsrv"}  # alike
    finally:
        child.kill()
        child.wait()


# ---- the mount table (one reader for the filesystem collector and Oracle's NFS checks) -----------------------------


def test_one_mount_table_reader_for_every_system():
    from exporter.systems.filesystem import parse as fs_parse
    from exporter.systems.oracle import checks as oracle_checks

    assert fs_parse.parse_mounts is procfs.parse_mounts
    assert fs_parse.Mount is oracle_checks.Mount is procfs.Mount
    # INVENTED lines: escapes of space, tab, backslash and newline; a short line skipped
    text = "/dev/sdb1 /u03/arch\\040log\\011x xfs rw 0 0\nsrv:/a\\134b /m\\012n nfs ro 0 0\nshort line\n"
    assert procfs.parse_mounts(text) == [procfs.Mount("/dev/sdb1", "/u03/arch log\tx", "xfs", "rw"),
                                         procfs.Mount("srv:/a\\b", "/m\nn", "nfs", "ro")]


def test_mount_table_prefers_pid_1_then_the_own_table_then_self(tmp_path):
    with pytest.raises(FileNotFoundError):
        procfs.read_mount_table(str(tmp_path))  # none: PID 1's error
    (tmp_path / "self").mkdir()
    (tmp_path / "self" / "mounts").write_text("a /self ext4 rw 0 0\n")
    assert procfs.read_mount_table(str(tmp_path)).path == str(tmp_path / "self" / "mounts")
    (tmp_path / "mounts").write_text("a /own ext4 rw 0 0\n")  # a recorded tree may hold <procfs>/mounts only
    table = procfs.read_mount_table(str(tmp_path))
    assert table.path == str(tmp_path / "mounts") and not table.host and table.mounts[0].mountpoint == "/own"
    assert table.problem.startswith(f"cannot read the host's mount table {tmp_path}/1/mounts: ")
    (tmp_path / "1").mkdir()
    (tmp_path / "1" / "mounts").write_text("a /host ext4 rw 0 0\n")
    assert procfs.read_mount_table(str(tmp_path)) == ([procfs.Mount("a", "/host", "ext4", "rw")], True,
                                                      str(tmp_path / "1" / "mounts"), None)


def test_physical_cores_are_counted_again_only_when_the_cpu_count_changes(tmp_path):
    """The sysfs topology was globbed and read (two files per CPU) on every pass; the count of cores only changes
    with CPU hotplug, which changes the CPUs /proc/stat lists, so it is read again only then (issue 30)."""
    from exporter.core.collector import Context
    from exporter.core.metrics import MetricBatch
    from exporter.systems.host.collector import HostCollector

    tree = tmp_path / "host1"
    shutil.copytree(FIXTURES / "host1", tree)
    collector = HostCollector(HostCollector.Settings(backend="procfs"),
                              Context(procfs=str(tree / "proc"), sysfs=str(tree / "sys")))

    def cores() -> float | None:
        batch = MetricBatch(collector.specs())
        collector.collect(batch)
        values = {s.name: s.value for f in batch.families() for s in f.samples}
        return values.get("middleware_host_cpu_cores")

    assert cores() == 2
    for cpu in ("cpu1", "cpu3"):  # core 1's topology is gone (re-read, it would count 1 core) ...
        shutil.rmtree(tree / "sys" / "devices" / "system" / "cpu" / cpu)
    assert cores() == 2  # ... but the same CPUs are online: not read again
    stat = tree / "proc" / "stat"
    stat.write_text("".join(line for line in stat.read_text().splitlines(keepends=True)
                            if not line.startswith("cpu3 ")))  # CPU 3 went offline
    assert cores() == 1  # counted again: cpu0 and cpu2 are the two threads of core 0


def test_kernel_parameters_are_read_again_every_five_minutes_and_file_handles_every_pass(tmp_path):
    """Ten sysctl reads (shmmax, sem, ...) were the largest part of a host pass, for tunables that change when an
    administrator runs sysctl (issue 30).  They are read again once 300 s have passed; fs.file-nr, a live count,
    on every pass.  The clock is the test's."""
    import shutil

    from exporter.core.collector import Context
    from exporter.core.metrics import MetricBatch
    from exporter.systems.host.collector import HostCollector

    tree = tmp_path / "host1"
    shutil.copytree(FIXTURES / "host1", tree)
    collector = HostCollector(HostCollector.Settings(backend="procfs"),
                              Context(procfs=str(tree / "proc"), sysfs=str(tree / "sys")))
    now = [1000.0]
    collector.clock = lambda: now[0]

    def figures() -> tuple[float | None, float | None]:
        batch = MetricBatch(collector.specs())
        collector.collect(batch)
        values = {(s.name, s.labels.get("parameter")): s.value for f in batch.families() for s in f.samples}
        return (values.get(("middleware_host_kernel_parameter", "kernel.shmmni")),
                values.get(("middleware_host_file_handles_allocated", None)))

    assert figures() == (4096, 12832)
    (tree / "proc" / "sys" / "kernel" / "shmmni").write_text("8192\n")
    nr = tree / "proc" / "sys" / "fs" / "file-nr"
    nr.write_text(nr.read_text().replace("12832", "13000", 1))
    now[0] += 299.0
    assert figures() == (4096, 13000)  # the tunable as read before; the live count new
    now[0] += 1.0
    assert figures() == (8192, 13000)


def test_vmstat_read_by_prefix_only():
    """The host collector parses only the /proc/vmstat lines it exports (issue 30: 20 of 170-300 lines per pass);
    the others are not even split, so a line it does not read cannot matter."""
    from exporter.systems.host.parse import parse_key_values

    text = "nr_free_pages 12\npgfault 7\npgscan_kswapd 3\nnot a number line x\npgsteal_file 2\nworkingset 1\n"
    assert parse_key_values(text, ("pgfault", "pgscan_", "pgsteal_")) == {"pgfault": 7, "pgscan_kswapd": 3,
                                                                         "pgsteal_file": 2}
    assert parse_key_values(text)["nr_free_pages"] == 12
