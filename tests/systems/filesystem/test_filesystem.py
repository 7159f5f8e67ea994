"""The file-system collector on invented mount tables and a scripted statvfs (the hang is an Event the test holds).

Mount tables below are INVENTED in /proc/<pid>/mounts format (fields: device, mount point, type, options, 0, 0);
the real ones are covered by tests/systems/filesystem/test_filesystem_agreement.py and
tests/systems/filesystem/test_filesystem_fuse.py.
"""

from __future__ import annotations

import json
import os
import threading

import pytest
from pydantic import ValidationError

from exporter.core.collector import Context
from exporter.machine.procfs import read_mount_table
from exporter.systems.filesystem.collector import FilesystemCollector
from exporter.systems.filesystem.parse import is_readonly, parse_mounts, select_mounts
from exporter.systems.filesystem.settings import FilesystemSettings
from exporter.systems.filesystem.statfs import StatfsProber

from ...support import FIXTURES, collect

# INVENTED: a typical systemd host with an NFS mount, a FUSE mount, a Docker overlay and a bind mount twice.
MOUNTS = """\
sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0
proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0
udev /dev devtmpfs rw,nosuid,relatime,size=4000000k 0 0
devpts /dev/pts devpts rw,nosuid,noexec,relatime 0 0
tmpfs /run tmpfs rw,nosuid,nodev,noexec,relatime,size=800000k,mode=755 0 0
/dev/mapper/vg-root / ext4 rw,relatime,errors=remount-ro 0 0
cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid,nodev,noexec,relatime 0 0
tmpfs /run/credentials/systemd-journald.service tmpfs ro,nosuid,nodev,noexec,relatime 0 0
/dev/sda1 /boot ext2 ro,relatime 0 0
/dev/sdb1 /u01/app/oracle\\040data xfs rw,relatime 0 0
/dev/sdb1 /u01/app/oracle\\040data xfs rw,relatime 0 0
nfs1:/export/archive /archive nfs4 rw,relatime,vers=4.2,hard 0 0
sshfs#me@h:/ /mnt/remote fuse.sshfs rw,nosuid,nodev,relatime 0 0
overlay /var/lib/docker/overlay2/abc/merged overlay rw,relatime 0 0
/dev/loop3 /snap/core/1 squashfs ro,nodev,relatime 0 0
"""
KEPT = ["/run", "/", "/boot", "/u01/app/oracle data", "/archive", "/mnt/remote"]


def _statvfs(blocks=1000, bfree=600, bavail=500, files=100, ffree=40, frsize=4096) -> os.statvfs_result:
    return os.statvfs_result((frsize, frsize, blocks, bfree, bavail, files, ffree, ffree, 0, 255))


class ScriptedStatfs:
    """statvfs stand-in: counts calls per path; paths in ``hang`` block until the test sets their event."""

    def __init__(self, hang: dict[str, threading.Event] | None = None, errors: dict[str, OSError] | None = None):
        self.hang = hang or {}
        self.errors = errors or {}
        self.calls: dict[str, int] = {}
        self.lock = threading.Lock()

    def __call__(self, path: str) -> os.statvfs_result:
        with self.lock:
            self.calls[path] = self.calls.get(path, 0) + 1
        if path in self.hang:
            self.hang[path].wait(60)
        if path in self.errors:
            raise self.errors[path]
        return _statvfs()


def test_default_filters_keep_real_file_systems_and_drop_pseudo_ones():
    selection = select_mounts(parse_mounts(MOUNTS))
    assert [m.mountpoint for m in selection.mounts] == KEPT
    assert selection.skipped == 8  # sys, proc, dev, dev/pts, cgroup, credentials, docker overlay, squashfs


def test_include_replaces_the_exclude_of_its_kind():
    selection = select_mounts(parse_mounts(MOUNTS), fs_types_include=r"^(sysfs|ext4)$")
    assert [m.mountpoint for m in selection.mounts] == ["/"]  # /sys is still excluded by the mount-point default
    selection = select_mounts(parse_mounts(MOUNTS), mount_points_include=r"^/(sys|dev)$")
    assert [m.mountpoint for m in selection.mounts] == []  # sysfs and devtmpfs are excluded types
    selection = select_mounts(parse_mounts(MOUNTS), mount_points_include="^/sys$", fs_types_include="sysfs")
    assert [m.mountpoint for m in selection.mounts] == ["/sys"]


def test_readonly_from_mount_options():
    mounts = {m.mountpoint: m for m in parse_mounts(MOUNTS)}
    assert is_readonly(mounts["/boot"])
    assert not is_readonly(mounts["/"])  # errors=remount-ro is not ro


def test_mount_table_falls_back_to_self_when_pid_1_is_hidden(tmp_path):
    (tmp_path / "self").mkdir()
    (tmp_path / "self" / "mounts").write_text("/dev/vda1 / ext4 rw 0 0\n")
    mounts, host, path, problem = read_mount_table(str(tmp_path))
    assert [m.mountpoint for m in mounts] == ["/"] and host is False and path == str(tmp_path / "self" / "mounts")
    assert problem.startswith(f"cannot read the host's mount table {tmp_path}/1/mounts: ")
    (tmp_path / "1").mkdir()
    (tmp_path / "1" / "mounts").write_text(MOUNTS)
    mounts, host, _, problem = read_mount_table(str(tmp_path))
    assert len(mounts) == 15 and host is True and problem is None


def test_prober_marks_a_hanging_mount_stuck_asks_it_once_and_recovers():
    release = threading.Event()
    statfs = ScriptedStatfs(hang={"/b": release})
    prober = StatfsProber("t", statfs)
    try:
        first = prober.probe(["/a", "/b", "/c"], statfs_timeout=0.2, budget=5)
        assert first["/a"].stat is not None and first["/c"].stat is not None  # the mount after the hang too
        assert first["/b"].stuck
        threads = threading.active_count()
        for _ in range(20):
            again = prober.probe(["/a", "/b", "/c"], statfs_timeout=0.2, budget=5)
            assert again["/b"].stuck and again["/a"].stat is not None and again["/c"].stat is not None
        assert statfs.calls["/b"] == 1  # never asked again while its call hangs
        assert statfs.calls["/a"] == 21
        assert threading.active_count() <= threads  # the walker threads end; only the hung one stays
        assert prober.walks == 22  # one walk per run plus the one after the hang: no thread per mount
    finally:
        release.set()
    for _ in range(100):  # the hung thread returns; the next run asks the mount again
        if not prober.stuck_paths():
            break
        threading.Event().wait(0.05)
        prober.probe(["/a", "/b", "/c"], statfs_timeout=0.2, budget=5)
    recovered = prober.probe(["/a", "/b", "/c"], statfs_timeout=0.2, budget=5)
    assert recovered["/b"].stat is not None and not recovered["/b"].stuck
    assert statfs.calls["/b"] >= 2


def test_prober_reports_errors_per_mount():
    statfs = ScriptedStatfs(errors={"/gone": OSError(107, "Transport endpoint is not connected")})
    results = StatfsProber("t", statfs).probe(["/gone", "/ok"], statfs_timeout=1, budget=5)
    assert results["/gone"].error == "Transport endpoint is not connected" and results["/ok"].stat is not None


def test_prober_without_budget_leaves_mounts_unchecked_and_asks_them_first_next_run():
    release = threading.Event()
    statfs = ScriptedStatfs(hang={"/x": release})
    prober = StatfsProber("t", statfs)
    try:
        first = prober.probe(["/x", "/y"], statfs_timeout=0.3, budget=0.3)
        assert first["/x"].stuck and "/y" not in first  # no time left for /y: not checked, no figures
        second = prober.probe(["/x", "/y"], statfs_timeout=0.3, budget=5)
        assert second["/y"].stat is not None and second["/x"].stuck
        assert statfs.calls["/x"] == 1
    finally:
        release.set()


def _collector(tmp_path, statfs) -> FilesystemCollector:
    (tmp_path / "1").mkdir()
    (tmp_path / "1" / "mounts").write_text(MOUNTS)
    collector = FilesystemCollector(FilesystemSettings(statfs_timeout=0.2, timeout=5, interval=5),
                                    Context(procfs=str(tmp_path)))
    collector.prober._statfs = statfs
    return collector


def test_collector_emits_node_exporter_figures_and_a_stuck_mount_only_with_its_state(tmp_path):
    release = threading.Event()
    statfs = ScriptedStatfs(hang={"/archive": release}, errors={"/mnt/remote": OSError(5, "Input/output error")})
    collector = _collector(tmp_path, statfs)
    try:
        samples, batch = collect(collector)
    finally:
        release.set()
    root = (("device", "/dev/mapper/vg-root"), ("fstype", "ext4"), ("mountpoint", "/"))
    p = "middleware_filesystem"
    assert samples[(f"{p}_size_bytes", root)] == 1000 * 4096
    assert samples[(f"{p}_free_bytes", root)] == 600 * 4096
    assert samples[(f"{p}_avail_bytes", root)] == 500 * 4096
    assert samples[(f"{p}_files", root)] == 100 and samples[(f"{p}_files_free", root)] == 40
    assert samples[(f"{p}_device_error", root)] == 0 and samples[(f"{p}_stuck", root)] == 0
    boot = (("device", "/dev/sda1"), ("fstype", "ext2"), ("mountpoint", "/boot"))
    assert samples[(f"{p}_readonly", boot)] == 1
    nfs = (("device", "nfs1:/export/archive"), ("fstype", "nfs4"), ("mountpoint", "/archive"))
    assert samples[(f"{p}_stuck", nfs)] == 1 and samples[(f"{p}_device_error", nfs)] == 1
    assert samples[(f"{p}_readonly", nfs)] == 0 and samples[(f"{p}_stuck_seconds", nfs)] > 0
    assert not [k for k in samples if k[1] == nfs and k[0].endswith(("_bytes", "_files", "_files_free"))]
    fuse = (("device", "sshfs#me@h:/"), ("fstype", "fuse.sshfs"), ("mountpoint", "/mnt/remote"))
    assert samples[(f"{p}_device_error", fuse)] == 1 and samples[(f"{p}_stuck", fuse)] == 0
    assert (f"{p}_size_bytes", fuse) not in samples
    assert batch.errors["statfs /archive"].startswith("stuck: statvfs has not returned")
    assert batch.errors["statfs /mnt/remote"] == "statvfs failed: Input/output error"
    assert samples[(f"{p}_mounts_skipped", ())] == 8 and samples[(f"{p}_mount_table_host", ())] == 1
    oracle = (("device", "/dev/sdb1"), ("fstype", "xfs"), ("mountpoint", "/u01/app/oracle data"))
    assert samples[(f"{p}_size_bytes", oracle)] == 1000 * 4096  # escaped space decoded, duplicate emitted once


def test_statfs_timeout_must_leave_room_in_the_run():
    with pytest.raises(ValidationError, match="at most half the timeout"):
        FilesystemSettings(timeout=6, statfs_timeout=5)
    FilesystemSettings(timeout=10, statfs_timeout=5)


def test_psutil_backend_lists_mounts_through_psutil_and_filters_them_the_same_way():
    collector = FilesystemCollector(FilesystemSettings(backend="psutil"), Context())
    samples, batch = collect(collector)
    import psutil

    expected = select_mounts(read_mount_table("/proc").mounts if os.path.exists("/proc/self/mounts") else [])
    root = next(p for p in psutil.disk_partitions(all=True) if p.mountpoint == "/")
    key = (("device", root.device), ("fstype", root.fstype), ("mountpoint", "/"))
    st = os.statvfs("/")
    assert samples[("middleware_filesystem_size_bytes", key)] == st.f_blocks * (st.f_frsize or st.f_bsize)
    assert ("middleware_filesystem_mount_table_host", ()) not in samples  # no mount table read on this back-end
    mountpoints = {dict(k[1])["mountpoint"] for k in samples if k[0] == "middleware_filesystem_readonly"}
    if expected.mounts:  # on Linux psutil reads the same table as procfs: the same mounts are kept
        assert mountpoints == {m.mountpoint for m in expected.mounts}


def _series(text: str, name: str) -> dict[str, float]:
    """mountpoint -> value of one filesystem family in an exposition."""
    import re

    found = {}
    for match in re.finditer(rf'^{name}\{{[^}}]*mountpoint="([^"]*)"[^}}]*\}} (\S+)$', text, re.M):
        found[match.group(1)] = float(match.group(2))
    return found


@pytest.mark.integration
def test_default_start_serves_the_file_systems_of_this_machine(start_exporter):
    """`middleware-exporter` with no configuration (the README's start command): the filesystem collector is on
    and measures every mount the default filters keep (PID 1's table, this machine's real statvfs)."""
    exporter = start_exporter()
    _, _, body = exporter.get("/metrics")
    text = body.decode()
    assert 'middleware_scrape_collector_success{collector="filesystem"} 1.0' in text
    assert "middleware_filesystem_mount_table_host 1.0" in text
    kept = {m.mountpoint for m in select_mounts(read_mount_table("/proc").mounts).mounts}
    assert set(_series(text, "middleware_filesystem_readonly")) == kept
    size = _series(text, "middleware_filesystem_size_bytes")
    if "/" in kept:
        st = os.statvfs("/")
        assert size["/"] == st.f_blocks * (st.f_frsize or st.f_bsize)


@pytest.mark.integration
def test_a_recorded_tree_is_measured_under_paths_rootfs_only(start_exporter, tmp_path):
    """A recorded /proc (host1: /, /u01/oradata, /u02/redo, "/u03/arch log") with paths.rootfs at a recorded root
    holding two of the mount points: statvfs asks only below that root, so the machine's own /u01/oradata (were it
    there) is never measured, and the absent ones fail as absent rather than reading the machine's mounts."""
    root = tmp_path / "root"
    (root / "u01" / "oradata").mkdir(parents=True)
    (root / "u03" / "arch log").mkdir(parents=True)
    exporter = start_exporter("--path.procfs", str(FIXTURES / "host1" / "proc"), "--path.rootfs", str(root),
                              "--no-collector.host", "--no-collector.process")
    text = exporter.get("/metrics")[2].decode()
    st = os.statvfs(root)
    size = _series(text, "middleware_filesystem_size_bytes")
    assert size == {m: st.f_blocks * (st.f_frsize or st.f_bsize) for m in ("/", "/u01/oradata", "/u03/arch log")}
    assert _series(text, "middleware_filesystem_device_error") == {"/": 0, "/u01/oradata": 0, "/u02/redo": 1,
                                                                   "/u03/arch log": 0}
    collectors = {c["name"]: c for c in json.loads(exporter.get("/api/v1/collectors")[2])}
    errors = collectors["filesystem"]["source_errors"]
    assert errors == {"statfs /u02/redo": "statvfs failed: No such file or directory"}
