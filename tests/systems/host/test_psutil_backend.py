"""The psutil back-ends of the host and process collectors.

On this Linux host the psutil back-end is forced and compared with the /proc back-end, read in the order /proc,
psutil, /proc: counters bracketed, gauges within the tolerances of ``host.psutil.TOLERANCES`` (the numbers
docs/platforms.md shows), identical names and label sets.  The other platforms cannot be run here: their absent
series are tested by SIMULATION, replacing psutil's functions with ones returning tuples that have the fields
psutil 7.2.2 builds on that platform (``psutil/_ntuples.py``) and setting the platform the table is read for.
"""

from __future__ import annotations

import collections
import os
import sys
import time
from types import SimpleNamespace

import psutil
import pytest

from exporter.core.collector import Context
from exporter.machine import procfs
from exporter.machine.procfs import ProcessTable, choose_backend, is_linux_procfs
from exporter.machine.psutil_procs import NoProcDirectory, PsutilProcessEntry, process_name, walk_psutil
from exporter.systems.host import psutil as pb
from exporter.systems.host.collector import HostCollector
from exporter.systems.host.metrics import SPECS
from exporter.systems.host.settings import HostSettings
from exporter.systems.process.collector import ProcessCollector
from exporter.systems.process.settings import ProcessSettings

from ...support import FIXTURES, burn_cpu_code, collect, wait_for_comm, wait_for_file

TOL = pb.TOLERANCE
LINUX_ONLY = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="compares with Linux's /proc")
H = "middleware_host"
MOVING_MEMORY = {f"{H}_memory_{n}_bytes" for n in ("available", "free", "cached", "used", "buffers", "shared")} | {
    f"{H}_swap_used_bytes"}
FIXED = {f"{H}_memory_total_bytes", f"{H}_swap_total_bytes", f"{H}_boot_time_seconds", f"{H}_cpus",
         f"{H}_cpu_cores"}
LOADS = {f"{H}_load1", f"{H}_load5", f"{H}_load15"}
COUNTERS = {spec.name for spec in SPECS if spec.type == "counter"}


def _by_name(samples: dict) -> dict[str, set]:
    result: dict[str, set] = collections.defaultdict(set)
    for name, labels in samples:
        result[name].add(labels)
    return result


# --- the table ------------------------------------------------------------------------------------------------


def test_the_table_has_a_row_for_every_host_metric_and_nothing_else():
    assert {row.spec.name for row in pb.ROWS} == {spec.name for spec in SPECS}
    assert len(pb.TABLE) == len(pb.ROWS)  # no key twice
    for row in pb.ROWS:
        assert row.platforms <= set(pb.PLATFORMS)
        assert (row.source == "-") == (not row.platforms), row.key  # a source exactly where some platform has it
        assert row.platforms == set(pb.PLATFORMS) or row.note, f"{row.key}: say why it is absent"


# --- Linux: psutil forced against /proc on this host ----------------------------------------------------------


@LINUX_ONLY
def test_host_series_agree_with_procfs_within_the_stated_tolerances():
    context = Context()
    procfs_collector = HostCollector(HostSettings(backend="procfs"), context)
    psutil_collector = HostCollector(HostSettings(backend="psutil"), context)
    assert psutil_collector.backend == "psutil" and procfs_collector.backend == "procfs"
    before, _ = collect(procfs_collector)
    ours, _ = collect(psutil_collector)
    after, _ = collect(procfs_collector)
    assert psutil.PROCFS_PATH == "/proc"  # never changed process-wide

    # Names: exactly the table's Linux rows that /proc also gives here; label sets identical.
    linux_names = {row.spec.name for row in pb.ROWS if pb.LINUX in row.platforms}
    got, proc_before, proc_after = _by_name(ours), _by_name(before), _by_name(after)
    assert set(got) == linux_names & set(proc_before)
    rows_by_name = collections.defaultdict(list)
    for row in pb.ROWS:
        rows_by_name[row.spec.name].append(row)
    for name, label_sets in got.items():
        wanted = proc_before[name] & proc_after[name]  # a device that came or went between the reads may differ
        modes = {dict(r.labels).get("mode") for r in rows_by_name[name] if pb.LINUX in r.platforms}
        wanted = {ls for ls in wanted if dict(ls).get("mode") in modes}
        assert wanted <= label_sets <= proc_before[name] | proc_after[name], name

    checked = collections.Counter()
    total = before[(f"{H}_memory_total_bytes", ())]
    for key, value in ours.items():
        name = key[0]
        if key not in before or key not in after:
            continue
        low, high = before[key], after[key]
        if name in COUNTERS:
            slack = TOL["counter_relative_slack"]
            assert low * (1 - slack) <= value <= high * (1 + slack), (key, low, value, high)
            checked["counter"] += 1
        elif name in FIXED:
            assert low == value == high, (key, low, value, high)
            checked["fixed"] += 1
        elif name in MOVING_MEMORY:
            margin = TOL["memory_fraction"] * total
            assert min(low, high) - margin <= value <= max(low, high) + margin, (key, low, value, high)
            checked["memory"] += 1
        elif name in LOADS:
            margin = TOL["load_absolute"]
            assert min(low, high) - margin <= value <= max(low, high) + margin, (key, low, value, high)
            checked["load"] += 1
        else:
            pytest.fail(f"{key}: no tolerance stated for it")
    assert checked["counter"] > 20 and checked["fixed"] >= 4 and checked["memory"] >= 5 and checked["load"] == 3


@pytest.fixture
def fixture_group(spawn, tmp_path):
    """Three processes named mwpsfixture (one uses 0.3 s of CPU, then all sleep) and a zombie of the same name."""
    done = tmp_path / "burnt"
    procs = [spawn("mwpsfixture", str(done), python_code=burn_cpu_code(0.3))]
    procs += [spawn("mwpsfixture", python_code="import time; time.sleep(120)") for _ in range(2)]
    for proc in procs:
        wait_for_comm(proc, "mwpsfixture")
    zombie = spawn("mwpsfixture", python_code="pass")  # exits at once; not waited for until the end: a zombie
    for _ in range(200):
        try:
            if psutil.Process(zombie.pid).status() == psutil.STATUS_ZOMBIE:
                break
        except psutil.NoSuchProcess:
            break
        time.sleep(0.01)
    wait_for_file(done, procs[0])  # the busy one has finished its burst
    return procs


@LINUX_ONLY
def test_process_group_agrees_with_procfs_for_a_stable_fixture_group(fixture_group):
    groups = [{"name": "fixture", "names": ["mwpsfixture"]}]
    context = Context()
    by_procfs = ProcessCollector(ProcessSettings(groups=groups, backend="procfs"), context)
    by_psutil = ProcessCollector(ProcessSettings(groups=groups, backend="psutil"), context)
    before, _ = collect(by_procfs)
    ours, _ = collect(by_psutil)
    after, _ = collect(ProcessCollector(ProcessSettings(groups=groups, backend="procfs"), context))
    assert by_psutil._table() is not context.processes and by_psutil._table().backend == "psutil"
    # names and label sets; psutil has no page faults (docs/platforms.md, psutil_procs.EXTRA_ROWS)
    P = "middleware_process_group"
    no_psutil = {f"{P}_major_page_faults_total", f"{P}_minor_page_faults_total"}
    assert set(before) == set(after)
    assert set(ours) == {key for key in before if key[0] not in no_psutil}

    labels = (("group", "fixture"), ("process", "mwpsfixture"))
    # the issue-27 figures where psutil gives them: the idle processes' fds are fixed, the counters bracketed
    for name in ("open_fds", "worst_fd_ratio"):
        assert before[(f"{P}_{name}", labels)] == ours[(f"{P}_{name}", labels)] == after[(f"{P}_{name}", labels)]
    for key in [k for k in ours if k[0] in (f"{P}_read_bytes_total", f"{P}_written_bytes_total",
                                            f"{P}_context_switches_total")]:
        assert before[key] <= ours[key] <= after[key], (key, before[key], ours[key], after[key])
    assert before[(f"{P}_processes", labels)] == ours[(f"{P}_processes", labels)] == 3  # the zombie not counted
    assert before[(f"{P}_threads", labels)] == ours[(f"{P}_threads", labels)] == after[(f"{P}_threads", labels)]
    for mode in ("user", "system"):
        key = (f"{P}_cpu_seconds_total", tuple(sorted(labels + (("mode", mode),))))
        slack = TOL["counter_relative_slack"]
        assert before[key] * (1 - slack) <= ours[key] <= after[key] * (1 + slack), (mode, before[key], ours[key])
    burst = sum(ours[(f"{P}_cpu_seconds_total", tuple(sorted(labels + (("mode", mode),))))]
                for mode in ("user", "system"))
    assert burst >= 0.25  # the busy one's 0.3 s of CPU time (time.process_time), whatever the load
    rss = (f"{P}_resident_memory_bytes", labels)
    cpus = os.cpu_count() or 1
    per_process = 3 * max(TOL["process_rss_batch_pages"], 2 * cpus) * cpus * os.sysconf("SC_PAGE_SIZE")
    assert abs(ours[rss] - before[rss]) <= 3 * per_process, (before[rss], ours[rss])
    assert ours[rss] > 3 * 1_000_000  # three Python interpreters
    start = (f"{P}_oldest_start_time_seconds", labels)
    assert abs(ours[start] - before[start]) <= TOL["process_start_seconds"], (before[start], ours[start])
    scanned = ("middleware_process_scanned_processes", ())
    assert abs(ours[scanned] - before[scanned]) <= TOL["scanned_processes_fraction"] * before[scanned]


@LINUX_ONLY
def test_psutil_cpu_counter_stays_monotonic_across_runs(fixture_group):
    collector = ProcessCollector(ProcessSettings(groups=[{"name": "fixture", "names": ["mwpsfixture"]}],
                                                 backend="psutil"), Context())
    key = ("middleware_process_group_cpu_seconds_total",
           (("group", "fixture"), ("mode", "user"), ("process", "mwpsfixture")))
    system = key[:1] + (tuple(sorted(key[1][:1] + key[1][2:] + (("mode", "system"),))),)
    first, _ = collect(collector)
    fixture_group[0].kill()
    fixture_group[0].wait()  # the process that burnt the CPU exits: the group's counter must not go down
    second, _ = collect(collector)
    assert second[key] >= first[key] and second[system] >= first[system]
    assert first[key] + first[system] >= 0.25  # the burst (0.3 s of CPU time) was counted
    assert second[("middleware_process_group_processes", key[1][:1] + key[1][2:])] == 2


@LINUX_ONLY
def test_psutil_entries_answer_like_procfs_ones_for_hpom_msi_and_refuse_vhi_paths(fixture_group):
    entries = [e for e in walk_psutil() if e.comm == "mwpsfixture"]
    states = sorted(e.stat().state for e in entries)
    assert states.count("Z") == 1 and len(states) == 4  # HPOM's MSI count skips the "Z" one, as with /proc
    live = next(e for e in entries if e.stat().state != "Z")
    assert live.cmdline().endswith("time.sleep(120)") or "time.sleep" in live.cmdline()
    with pytest.raises(NoProcDirectory, match="Linux's /proc"):
        live.path  # noqa: B018 - VHI reads /proc/<pid>/...: it must fail, not count 0 sessions
    assert isinstance(live, PsutilProcessEntry)


def test_process_names_match_the_built_in_groups_on_windows():
    assert process_name("amqzxma0.exe", windows=True) == "amqzxma0"
    assert process_name("DataFlowEngine.EXE", windows=True) == "DataFlowEngine"
    assert process_name("tool.exe", windows=False) == "tool.exe"
    assert process_name("a_very_long_process_name", windows=False) == "a_very_long_pro"  # Linux's comm length


# --- absent where the table says so (SIMULATION of the other platforms) ---------------------------------------

# The fields psutil 7.2.2 gives per platform (psutil/_ntuples.py); swap, cpu_stats and network tuples are common.
CPU_FIELDS = {
    pb.LINUX: "user nice system idle iowait irq softirq steal guest guest_nice",
    pb.AIX: "user system idle iowait", pb.SUNOS: "user system idle iowait",
    pb.WINDOWS: "user system idle interrupt dpc", pb.MACOS: "user nice system idle",
    pb.FREEBSD: "user nice system idle irq",
}
MEM_FIELDS = {
    pb.LINUX: "total available percent used free active inactive buffers cached shared slab",
    pb.AIX: "total available percent used free", pb.SUNOS: "total available percent used free",
    pb.WINDOWS: "total available percent used free",
    pb.MACOS: "total available percent used free active inactive wired",
    pb.FREEBSD: "total available percent used free active inactive buffers cached shared wired",
}
_BASIC_DISK = "read_count write_count read_bytes write_bytes read_time write_time"
DISK_FIELDS = {
    pb.LINUX: _BASIC_DISK + " read_merged_count write_merged_count busy_time", pb.AIX: _BASIC_DISK,
    pb.SUNOS: _BASIC_DISK, pb.WINDOWS: _BASIC_DISK, pb.MACOS: _BASIC_DISK, pb.FREEBSD: _BASIC_DISK + " busy_time",
}


def _tuple(name: str, fields: str, start: float = 7.0):
    cls = collections.namedtuple(name, fields.split())
    return cls(*[start + i for i in range(len(cls._fields))])  # non-zero, so an absent series is not a 0


def _simulate(monkeypatch, platform: str, cpu_fields: str | None = None) -> None:
    """SIMULATION: psutil's system functions answer with the tuples psutil builds on ``platform``."""
    cpu = cpu_fields or CPU_FIELDS[platform]
    monkeypatch.setattr(psutil, "cpu_count", lambda logical=True: 4 if logical else 2)
    monkeypatch.setattr(psutil, "cpu_times", lambda percpu=False: [_tuple("scputimes", cpu), _tuple("scputimes", cpu)])
    monkeypatch.setattr(psutil, "cpu_stats", lambda: _tuple("scpustats", "ctx_switches interrupts soft_interrupts "
                                                                         "syscalls"))
    monkeypatch.setattr(psutil, "boot_time", lambda: 1.7e9)
    monkeypatch.setattr(psutil, "getloadavg", lambda: (0.5, 0.4, 0.3))
    monkeypatch.setattr(psutil, "virtual_memory", lambda: _tuple("svmem", MEM_FIELDS[platform], 1e9))
    monkeypatch.setattr(psutil, "swap_memory", lambda: _tuple("sswap", "total used free percent sin sout", 1e6))
    monkeypatch.setattr(psutil, "disk_io_counters", lambda perdisk=False, nowrap=True: {
        "disk0": _tuple("sdiskio", DISK_FIELDS[platform])})
    monkeypatch.setattr(psutil, "net_io_counters", lambda pernic=False, nowrap=True: {
        "net0": _tuple("snetio", "bytes_sent bytes_recv packets_sent packets_recv errin errout dropin dropout")})


def _present(samples: dict, row: pb.Row) -> bool:
    wanted = set(row.labels)
    return any(name == row.spec.name and wanted <= set(labels) for name, labels in samples)


def _run(platform: str) -> dict:
    host = pb.PsutilHost(None, None, platform=platform)
    from exporter.core.metrics import MetricBatch

    batch = MetricBatch(SPECS)
    host.collect(batch)
    return {(s.name, tuple(sorted(s.labels.items()))): s.value for f in batch.families() for s in f.samples}


@pytest.mark.parametrize("platform", pb.PLATFORMS)
def test_series_are_present_exactly_where_the_platform_table_says(monkeypatch, platform):
    _simulate(monkeypatch, platform)
    samples = _run(platform)
    for row in pb.ROWS:
        if platform in row.platforms and row.source.startswith("cpu_times"):
            # the table may only claim a field psutil has there
            assert row.source.rsplit(".", 1)[1] in CPU_FIELDS[platform].split(), row.key
        assert _present(samples, row) == (platform in row.platforms), (platform, row.key)


def test_a_field_psutil_does_not_give_is_absent_even_where_the_table_lists_it(monkeypatch):
    # SIMULATION: a Linux kernel before 2.6.11 (no steal, no guest fields in /proc/stat, so none in psutil's tuple)
    _simulate(monkeypatch, pb.LINUX, cpu_fields="user nice system idle iowait irq softirq")
    samples = _run(pb.LINUX)
    for key in ('cpu_seconds_total{mode="steal"}', 'cpu_guest_seconds_total{mode="user"}',
                'cpu_guest_seconds_total{mode="nice"}'):
        assert not _present(samples, pb.TABLE[key]), key
    assert _present(samples, pb.TABLE['cpu_seconds_total{mode="softirq"}'])
    assert _present(samples, pb.TABLE["cpu_cores"])


def test_counters_are_read_without_psutils_nowrap_cache(monkeypatch):
    _simulate(monkeypatch, pb.FREEBSD)
    calls = []
    monkeypatch.setattr(psutil, "disk_io_counters", lambda **kw: calls.append(("disk", kw)) or {})
    monkeypatch.setattr(psutil, "net_io_counters", lambda **kw: calls.append(("net", kw)) or {})
    _run(pb.FREEBSD)
    assert calls == [("disk", {"perdisk": True, "nowrap": False}), ("net", {"pernic": True, "nowrap": False})]


def test_solaris_busy_time_comes_from_psutils_read_time_field(monkeypatch):
    _simulate(monkeypatch, pb.SUNOS)
    samples = _run(pb.SUNOS)
    io = psutil.disk_io_counters(perdisk=True)["disk0"]
    assert samples[(f"{H}_disk_io_time_seconds_total", (("device", "disk0"),))] == io.read_time / 1000
    assert (f"{H}_disk_read_time_seconds_total", (("device", "disk0"),)) not in samples


def test_aix_and_macos_page_ins_are_not_reported_as_swap_ins(monkeypatch):
    for platform in (pb.AIX, pb.MACOS):
        _simulate(monkeypatch, platform)
        samples = _run(platform)
        assert samples[(f"{H}_page_in_bytes_total", ())] == psutil.swap_memory().sin
        assert (f"{H}_swap_in_bytes_total", ()) not in samples


# --- choosing the back-end ------------------------------------------------------------------------------------


def test_auto_picks_procfs_on_linux_and_psutil_where_proc_is_absent_or_not_linuxs(tmp_path):
    solaris_like = tmp_path / "proc"
    (solaris_like / "1").mkdir(parents=True)
    (solaris_like / "1" / "psinfo").write_bytes(b"\0" * 64)  # Solaris/AIX /proc: per-pid binary files, no stat
    missing = str(tmp_path / "missing")
    recorded = str(FIXTURES / "host1" / "proc")
    assert choose_backend("auto", "/proc", platform="linux") == "procfs"
    assert choose_backend("auto", missing, platform="linux") == "procfs"  # fails loudly there, no quiet fallback
    for platform in ("aix7", "sunos5", "win32", "darwin", "freebsd14"):
        assert choose_backend("auto", str(solaris_like), platform=platform) == "psutil", platform
        assert choose_backend("auto", missing, platform=platform) == "psutil", platform
        assert choose_backend("auto", recorded, platform=platform) == "procfs", platform  # a Linux-shaped tree
    assert choose_backend("psutil", "/proc", platform="linux") == "psutil"
    assert choose_backend("procfs", missing, platform="win32") == "procfs"
    with pytest.raises(ValueError, match="backend must be one of"):
        choose_backend("kstat", "/proc")
    assert is_linux_procfs(recorded) and not is_linux_procfs(str(solaris_like))


def test_the_shared_table_and_the_host_collector_follow_auto_on_a_simulated_solaris(monkeypatch, tmp_path):
    monkeypatch.setattr(procfs, "sys", SimpleNamespace(platform="sunos5"))  # SIMULATION of sys.platform only
    context = Context(procfs=str(tmp_path))
    assert context.processes.resolve_backend() == "psutil"
    assert HostCollector(HostSettings(), context).backend == "psutil"
    linux_tree = Context(procfs=str(FIXTURES / "host1" / "proc"))
    assert linux_tree.processes.resolve_backend() == "procfs"


@LINUX_ONLY
def test_psutil_on_linux_refuses_a_procfs_path_it_cannot_honour():
    context = Context(procfs=str(FIXTURES / "host1" / "proc"))
    for collector in (HostCollector(HostSettings(backend="psutil"), context),
                      ProcessCollector(ProcessSettings(backend="psutil"), context)):
        with pytest.raises(ValueError, match="psutil back-end reads /proc"):
            collect(collector)


@LINUX_ONLY
def test_auto_on_linux_with_a_missing_procfs_fails_instead_of_falling_back(tmp_path):
    collector = HostCollector(HostSettings(), Context(procfs=str(tmp_path / "missing")))
    assert collector.backend == "procfs"
    with pytest.raises(FileNotFoundError):
        collect(collector)


@LINUX_ONLY
def test_a_forced_process_backend_equal_to_the_shared_one_shares_its_walk():
    context = Context()
    collector = ProcessCollector(ProcessSettings(backend="procfs"), context)
    collect(collector)
    assert collector._table() is context.processes and context.processes.walks == 1
    assert isinstance(ProcessTable("/proc", backend="psutil").snapshot(object())[0], PsutilProcessEntry)
    assert os.path.isdir("/proc/self")
