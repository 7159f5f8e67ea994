"""Process groups beyond count/CPU/memory (issue 27): fds, fd ratio, I/O bytes, page faults, context switches,
threads by state, grouping by user, and unreadable files, against real processes the test starts, each figure
compared with /proc read directly at the same moment."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from exporter.core.collector import Context
from exporter.core.metrics import MetricBatch
from exporter.machine import procfs
from exporter.systems.process.collector import ProcessCollector

from ...support import SLEEP, plain_samples, wait_for_comm, wait_for_file

G = "middleware_process_group_"

# Opens N files, writes M bytes to a file on the test's (disk-backed) tmp dir and fsyncs it, lowers its soft
# open-files limit to L, starts T extra sleeping threads, creates the "ready" file, then sleeps.
WORKER = """\
import os, resource, sys, threading, time
n, m, limit, threads, out, ready = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), \\
    sys.argv[5], sys.argv[6]
hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))
held = [open(os.devnull) for _ in range(n)]
with open(out, "wb") as handle:
    handle.write(b"x" * m)
    handle.flush()
    os.fsync(handle.fileno())
for _ in range(threads):
    threading.Thread(target=time.sleep, args=(120,), daemon=True).start()
open(ready, "w").close()
time.sleep(120)
"""


def _collector(**settings) -> ProcessCollector:
    settings.setdefault("groups", [{"name": "site", "names": ["opcmsgm"]}])
    return ProcessCollector(ProcessCollector.Settings(**settings), Context())


def _proc(pid: int) -> dict[str, float]:
    """The figures of one process read from /proc directly."""
    io = procfs.parse_pid_io(Path(f"/proc/{pid}/io").read_text())
    status = procfs.parse_pid_status(Path(f"/proc/{pid}/status").read_text())
    stat = procfs.parse_pid_stat(Path(f"/proc/{pid}/stat").read_text())
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    limit = procfs.parse_nofile_limit(Path(f"/proc/{pid}/limits").read_text())
    return {"read": io[0], "written": io[1], "fds": fds, "ratio": fds / limit, "majflt": stat.majflt,
            "minflt": stat.minflt, "vol": status.voluntary_ctxt_switches, "invol": status.nonvoluntary_ctxt_switches}


def _start_worker(spawn, tmp_path, name="opcmsgm", n=40, m=3 * 1024 * 1024, limit=200, threads=3, tag="w"):
    ready = tmp_path / f"ready-{tag}"
    proc = spawn(name, str(n), str(m), str(limit), str(threads), str(tmp_path / f"out-{tag}"), str(ready),
                 python_code=WORKER)
    wait_for_file(ready, proc)
    wait_for_comm(proc, name)
    return proc


def test_group_figures_agree_with_proc_for_processes_the_test_starts(spawn, tmp_path):
    procs = [_start_worker(spawn, tmp_path, n=40, tag="a"), _start_worker(spawn, tmp_path, n=90, tag="b")]
    collector = _collector(thread_states=True)
    key = (("group", "site"), ("process", "opcmsgm"))
    before = [_proc(p.pid) for p in procs]
    samples = plain_samples(collector)
    after = [_proc(p.pid) for p in procs]

    def bracket(name: str, field: str, **labels: str) -> None:
        value = samples[(G + name, tuple(sorted(key + tuple(labels.items()))))]
        low, high = sum(b[field] for b in before), sum(a[field] for a in after)
        assert low <= value <= high, (name, low, value, high)

    assert samples[(G + "processes", key)] == 2
    bracket("open_fds", "fds")
    assert samples[(G + "open_fds", key)] >= 40 + 90  # the files each worker holds open
    # the worst ratio is the second worker's (90 open of a soft limit of 200), not the sum
    ratio = samples[(G + "worst_fd_ratio", key)]
    assert ratio == max(a["ratio"] for a in after) == before[1]["ratio"]
    assert 90 / 200 < ratio < 1
    bracket("written_bytes_total", "written")
    assert samples[(G + "written_bytes_total", key)] >= 2 * 3 * 1024 * 1024  # fsync'ed to an ext4/xfs tmp dir
    bracket("read_bytes_total", "read")
    bracket("major_page_faults_total", "majflt")
    bracket("minor_page_faults_total", "minflt")
    bracket("context_switches_total", "vol", type="voluntary")
    bracket("context_switches_total", "invol", type="involuntary")
    # four threads each (main + 3 sleeping), all asleep
    assert samples[(G + "threads_by_state", key + (("state", "sleeping"),))] == 8
    for file in ("io", "fds", "limits", "status"):
        assert samples[(G + "unreadable_processes", (("file", file),) + key)] == 0


def test_written_bytes_stay_monotonic_when_a_writer_exits(spawn, tmp_path):
    collector = _collector()
    key = (G + "written_bytes_total", (("group", "site"), ("process", "opcmsgm")))
    keeper = _start_worker(spawn, tmp_path, m=4096, tag="keep")
    writer = _start_worker(spawn, tmp_path, m=2 * 1024 * 1024, tag="gone")
    first = plain_samples(collector)[key]
    assert first >= 2 * 1024 * 1024
    writer.kill()
    writer.wait()
    assert plain_samples(collector)[key] >= first  # the exited writer's bytes stay counted
    assert keeper.poll() is None


def test_extra_files_are_read_only_for_matched_processes(spawn, tmp_path, monkeypatch):
    # 30 processes no group matches, 2 that one does: /proc/<pid>/io, fd, limits, status are read twice each.
    for _ in range(30):
        spawn("nomatch_sleeper")
    procs = [_start_worker(spawn, tmp_path, tag=str(i)) for i in range(2)]
    reads: list[tuple[str, int]] = []
    for method in ("io", "open_fds", "fd_limit", "status"):
        original = getattr(procfs.ProcessEntry, method)

        def counting(self, _original=original, _method=method):
            reads.append((_method, self.pid))
            return _original(self)
        monkeypatch.setattr(procfs.ProcessEntry, method, counting)
    samples = plain_samples(_collector())
    assert samples[(G + "processes", (("group", "site"), ("process", "opcmsgm")))] == 2
    assert sorted(reads) == sorted((m, p.pid) for m in ("io", "open_fds", "fd_limit", "status") for p in procs)


@pytest.fixture
def public_dir():
    """A directory every user may enter (pytest's tmp dirs are root's 0700), removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="procgroups-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _sleep_copy(folder: Path, name: str) -> str:
    """A copy of sleep named ``name`` in ``folder``."""
    path = folder / name
    shutil.copy(SLEEP, path)
    path.chmod(0o755)
    return str(path)


@pytest.fixture
def started():
    procs: list[subprocess.Popen] = []

    def start(argv: list[str], **kwargs) -> subprocess.Popen:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, cwd="/", **kwargs)
        procs.append(proc)
        return proc
    yield start
    for proc in procs:
        proc.kill()
        proc.wait()


def test_group_by_user_splits_a_group_by_owner(started, public_dir):
    if os.geteuid() != 0:
        pytest.skip("starting a process as another user needs root")
    import pwd

    program = _sleep_copy(public_dir, "opcmsgm")
    for proc in (started([program, "120"]), started([program, "120"], user=65534, group=65534)):
        wait_for_comm(proc, "opcmsgm")
    samples = plain_samples(_collector(group_by_user=True))
    users = {dict(k[1]).get("user"): v for k, v in samples.items() if k[0] == G + "processes"}
    assert users == {pwd.getpwuid(0).pw_name: 1, pwd.getpwuid(65534).pw_name: 1}


def _collect_as(uid: int) -> dict[tuple[str, str], float]:
    """Run the collector in a forked child that has dropped root (and with it CAP_SYS_PTRACE and
    CAP_DAC_READ_SEARCH) for ``uid``, as an exporter run by an ordinary user does."""
    import pwd  # noqa: F401  (imported before the fork: the child may no longer read the interpreter's files)

    collector = _collector()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 1
        try:
            os.close(read_end)
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            batch = MetricBatch(collector.specs())
            collector.collect(batch)
            rows = [[s.name, s.labels, s.value] for f in batch.families() for s in f.samples
                    if s.labels.get("group") == "site"]
            os.write(write_end, json.dumps(rows).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as handle:
        data = handle.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    return {(name, labels.get("type") or labels.get("file") or ""): value for name, labels, value in json.loads(data)}


def test_unreadable_io_is_absent_and_counted_not_zero(started, public_dir):
    """A non-root exporter cannot read a root process's /proc/<pid>/io or fd: those series are absent, and
    unreadable_processes says why; what every user may read (count, CPU, context switches) is still there."""
    if os.geteuid() != 0:
        pytest.skip("needs root to run the collector as another user")
    proc = started([_sleep_copy(public_dir, "opcmsgm"), "120"])
    wait_for_comm(proc, "opcmsgm")
    samples = _collect_as(65534)
    assert samples[(G + "processes", "")] == 1
    for absent in ("written_bytes_total", "read_bytes_total", "open_fds", "worst_fd_ratio"):
        assert (G + absent, "") not in samples, absent
    assert samples[(G + "unreadable_processes", "io")] == 1
    assert samples[(G + "unreadable_processes", "fds")] == 1
    assert samples[(G + "unreadable_processes", "status")] == 0
    assert (G + "context_switches_total", "voluntary") in samples
    # the same process read as root: every series there, nothing unreadable
    root = {(k[0], k[1]): v for k, v in _collect_as(0).items()}
    assert root[(G + "unreadable_processes", "io")] == 0
    assert (G + "written_bytes_total", "") in root


def test_parsers_on_kernel_text():
    # Layouts as Linux 6.x writes them (proc(5)); numbers invented.
    io = "rchar: 12\nwchar: 34\nsyscr: 1\nsyscw: 2\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n"
    assert procfs.parse_pid_io(io) == (4096, 8192)
    limits = ("Limit                     Soft Limit           Hard Limit           Units     \n"
              "Max open files            1024                 524288               files     \n")
    assert procfs.parse_nofile_limit(limits) == 1024
    assert procfs.parse_nofile_limit(limits.replace("1024  ", "unlimited")) == float("inf")
    with pytest.raises(ValueError):
        procfs.parse_nofile_limit("Max processes 10 10 processes\n")
    status = "Name:\tx\nUid:\t1000\t1001\t1001\t1001\nvoluntary_ctxt_switches:\t5\nnonvoluntary_ctxt_switches:\t7\n"
    assert procfs.parse_pid_status(status) == procfs.ProcStatus(1001, 5, 7)
