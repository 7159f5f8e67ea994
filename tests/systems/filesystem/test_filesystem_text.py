"""The filesystem collector's text back-end: df / bdf / mount text of HP-UX, Solaris, AIX and Linux.

Every figure asserted for a file under tests/systems/filesystem/fixtures/real/ was read off that file by eye (its KiB
column times 1024; SOURCE.md says where each file was published).  The short samples typed inline below are
invented (figures made up, column layout as the platform prints it) and say so.
"""

from __future__ import annotations

import json
import stat
import sys
import time
from pathlib import Path

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from exporter.core.collector import Context
from exporter.systems.filesystem import textparse as dp
from exporter.systems.filesystem.collector import FilesystemCollector
from exporter.systems.filesystem.settings import FilesystemSettings
from tests.support import collect

FIXTURES = Path(__file__).parent / "fixtures"

REAL = FIXTURES / "real"
K = 1024


def df(name: str) -> dp.DfReading:
    reading = dp.parse_df((REAL / name).read_text())
    assert reading.problem is None and reading.skipped == 0
    return reading


def by_mount(reading: dp.DfReading) -> dict[str, dp.DfRow]:
    return {row.mountpoint: row for row in reading.rows}


# ---- the parsers, on genuine captures ---------------------------------------------------------------------------
def test_hpux_bdf_vxfs():
    r = df("hpux_bdf_hpux1-vxfs.txt")
    assert r.dialect == "used-avail" and len(r.rows) == 10
    # /dev/vg00/lvol3    2097152  339960 1743512   16% /
    assert by_mount(r)["/"] == dp.DfRow("/dev/vg00/lvol3", "/", 2097152 * K, (2097152 - 339960) * K, 1743512 * K)
    # /dev/vgmsa2/lvol1  3984588800 2791336896 1184000752   70% /storage
    storage = by_mount(r)["/storage"]
    assert (storage.size, storage.free, storage.avail) == (3984588800 * K, (3984588800 - 2791336896) * K,
                                                           1184000752 * K)


def test_hpux_bdf_wrapped_nfs_lines_are_joined():
    r = df("hpux_bdf_hpux2-nfs.txt")
    # ignsrv:/storage/Archive
    #                    3984588800 2790675224 1184657264   70% /net/Archive
    assert r.rows == [
        dp.DfRow("ignsrv:/storage/Archive", "/net/Archive", 3984588800 * K, (3984588800 - 2790675224) * K,
                 1184657264 * K),
        dp.DfRow("nfs:/u02/logs/root/kbmon/hpux/dgs/output", "/net/hpux-dgs-chdo", 50412224 * K,
                 (50412224 - 30244184) * K, 17607224 * K)]
    one = df("hpux_bdf_hpux1-nfs.txt").rows
    assert one == [dp.DfRow("nfs:/u02/logs/root/kbmon/hpux/dgs/output/ignsrv", "/net/hpux-dgs-output",
                            50412224 * K, (50412224 - 30266304) * K, 17585104 * K)]
    assert len(df("hpux_bdf_hpux2-vxfs.txt").rows) == 9


def test_solaris_df_k_long_device_and_zero_size_pseudo_mounts():
    r = by_mount(df("generic_df_solaris.txt"))
    # /dev/vx/dsk/bootdg/rootvol 16525754 5423501 10936996    34%    /
    assert r["/"] == dp.DfRow("/dev/vx/dsk/bootdg/rootvol", "/", 16525754 * K, (16525754 - 5423501) * K,
                              10936996 * K)
    assert r["/etc/mnttab"] == dp.DfRow("mnttab", "/etc/mnttab", 0, 0, 0)
    assert set(r) == {"/", "/devices", "/system/contract", "/proc", "/etc/mnttab"}


def test_solaris_zfs_dataset_with_size_0_has_no_free_figure():
    r = by_mount(df("solaris_df_zfs-samples.txt"))
    # Z_FS_DATAPOOL/Z_FS_LV_DUMP       0   23468 471381611     1%    /dump: more used than "size": free unknown
    assert r["/dump"] == dp.DfRow("Z_FS_DATAPOOL/Z_FS_LV_DUMP", "/dump", 0, None, 471381611 * K)
    # swap                 65666032     368 65665664     1%    /etc/svc/volatile
    assert r["/etc/svc/volatile"].free == (65666032 - 368) * K


def test_openindiana_posix_columns():
    r = by_mount(df("solaris_df_oi-2021.10.txt"))
    assert len(r) == 19
    # rpool/ROOT/openindiana    31997952     1655744    25726181     7%    /
    assert r["/"] == dp.DfRow("rpool/ROOT/openindiana", "/", 31997952 * K, (31997952 - 1655744) * K, 25726181 * K)
    assert r["/lib/libc.so.1"].device == "/usr/lib/libc/libc_hwcap2.so.1"


def test_aix_posix_proc_row_of_dashes_is_absent_not_zero():
    r = by_mount(df("generic_df_aix.txt"))
    # /proc                   -         -         -       -  /proc
    assert r["/proc"] == dp.DfRow("/proc", "/proc", None, None, None)
    # /dev/hd10opt       131072    117688     13384      90% /opt
    assert r["/opt"] == dp.DfRow("/dev/hd10opt", "/opt", 131072 * K, (131072 - 117688) * K, 13384 * K)


def test_aix_native_df_k_size_and_free_no_inode_totals():
    r = df("aix_df_k.txt")
    assert r.dialect == "aix" and len(r.rows) == 5
    # /dev/hd2          8028160    962692   89%   110034    33% /usr: no used column; JFS2 keeps no root reserve
    assert by_mount(r)["/usr"] == dp.DfRow("/dev/hd2", "/usr", 8028160 * K, 962692 * K, 962692 * K)


def test_solaris_mount_v_gives_the_types():
    table = dp.parse_mount((REAL / "solaris_mount_oi-2021.10.txt").read_text())
    # rpool/ROOT/openindiana on / type zfs read/write/setuid/devices/dev=4290002 on Thu Jan  1 01:00:00 1970
    assert table["/"] == dp.MountInfo("zfs", "read/write/setuid/devices/dev=4290002")
    assert table["/tmp"].fstype == "tmpfs" and table["/etc/mnttab"].fstype == "mntfs"
    assert dp.is_readonly(table["/"]) is False
    assert set(table) == set(by_mount(df("solaris_df_oi-2021.10.txt")))  # the same host: every df mount typed


# ---- the parsers, on invented samples ---------------------------------------------------------------------------
# INVENTED: AIX `df -g` layout (GB with two decimals), figures made up; /proc and an `-` column as AIX prints them.
AIX_DF_G = """\
Filesystem    GB blocks      Free %Used    Iused %Iused Mounted on
/dev/hd4           2.00      1.64   18%    25002     7% /
/proc                 -         -    -         -     -  /proc
/dev/fslv00     1200.00     86.01   93%      117     1% /data01/db
/aha                  -         -    -       330     2% /aha
"""


def test_invented_aix_df_g_is_gib_with_two_decimals_as_printed():
    r = by_mount(dp.parse_df(AIX_DF_G))
    assert r["/"] == dp.DfRow("/dev/hd4", "/", 2 * 2**30, round(1.64 * 2**30), round(1.64 * 2**30))
    assert r["/data01/db"].free == round(86.01 * 2**30)  # lossy: +-0.005 GiB, documented
    assert r["/proc"] == dp.DfRow("/proc", "/proc", None, None, None)
    assert r["/aha"].size is None


def test_invented_linux_gnu_df_wrapped_and_mount_point_with_a_space():
    text = ("Filesystem     1K-blocks    Used Available Use% Mounted on\n"
            "/dev/mapper/vg01-icprep\n"
            "                  2325600  247479   2078121  11% /ic prep\n")
    assert dp.parse_df(text).rows == [dp.DfRow("/dev/mapper/vg01-icprep", "/ic prep", 2325600 * K,
                                               (2325600 - 247479) * K, 2078121 * K)]


def test_unknown_header_is_a_clear_problem():
    r = dp.parse_df("Filesystem  Inodes  IUsed  IFree IUse% Mounted on\n/dev/sda1 100 10 90 10% /\n")
    assert r.rows == [] and "no known header" in r.problem and "Inodes" in r.problem
    assert "no known header" in dp.parse_df("").problem


def test_invented_hpux_mount_p_and_aix_mount():
    hpux = dp.parse_mount("/dev/vg00/lvol3 / vxfs ioerror=mwdisable,delaylog,dev=40000003 0 1\n"
                          "/dev/vg00/lvol1 /stand hfs ro,defaults 0 0\n")  # INVENTED (fstab layout of mount -p)
    assert hpux["/"] == dp.MountInfo("vxfs", "ioerror=mwdisable,delaylog,dev=40000003")
    assert dp.is_readonly(hpux["/stand"]) is True
    aix = dp.parse_mount(  # INVENTED (AIX mount layout: node column empty for local mounts)
        "  node       mounted        mounted over    vfs       date        options\n"
        "-------- ---------------  ---------------  ------ ------------ ---------------\n"
        "         /dev/hd4         /                jfs2   Jun 09 10:01 rw,log=/dev/hd8\n"
        "nfssrv   /export/tools    /mnt/tools       nfs3   Jun 09 10:05 ro,bg,hard,intr\n")
    assert aix == {"/": dp.MountInfo("jfs2", "rw,log=/dev/hd8"), "/mnt/tools": dp.MountInfo("nfs3", "ro,bg,hard,intr")}
    solaris = dp.parse_mount("/dev/dsk/c0t0d0s0 - / ufs - no rw,intr,largefiles,logging\n")  # INVENTED, vfstab layout
    assert solaris["/"].fstype == "ufs"


def test_junk_and_long_outputs_never_raise():
    for junk in (None, 5, "\x00" * 10, "Filesystem kbytes used avail %used Mounted on\n" + "x y\n" * 100,
                 "Filesystem kbytes used avail %used Mounted on\n" + "a" * 10_000 + "\n"):
        dp.parse_df(junk)  # type: ignore[arg-type]
        dp.parse_mount(junk)  # type: ignore[arg-type]
    many = "Filesystem kbytes used avail %used Mounted on\n" + "/dev/x 1 0 1 0% /m\n" * (dp.MAX_LINES + 1)
    assert "more than" in dp.parse_df(many).problem


# ---- the collector ----------------------------------------------------------------------------------------------
def _stand_in_ssh(tmp_path: Path, outputs: dict[str, str]) -> tuple[Path, Path]:
    """A stand-in for ssh: records its arguments and prints the fixture for the remote command (df, bdf, mount);
    a command named ``fail`` exits 1 with a message."""
    log = tmp_path / "ssh-argv.txt"
    script = tmp_path / "ssh"
    script.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        f"open({str(log)!r}, 'a').write(repr(sys.argv[1:]) + '\\n')\n"
        "tool = sys.argv[sys.argv.index('hpux1') + 1]\n"
        f"outputs = {outputs!r}\n"
        "if tool not in outputs:\n"
        "    sys.stderr.write(tool + ': not found\\n'); sys.exit(127)\n"
        "sys.stdout.write(open(outputs[tool]).read())\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script, log


def _collector(**text) -> FilesystemCollector:
    text.setdefault("command_timeout", 4)
    settings = FilesystemSettings(enabled=True, backend="text", timeout=10, statfs_timeout=2, text=text)
    return FilesystemCollector(settings, Context())


def test_collector_runs_bdf_and_mount_through_the_prefix(tmp_path):
    mount = tmp_path / "mount-p.txt"
    mount.write_text("/dev/vg00/lvol3 / vxfs delaylog,dev=40000003 0 1\n"  # INVENTED mount -p lines
                     "ignsrv:/storage/Archive /net/Archive nfs ro,hard 0 0\n")
    ssh, log = _stand_in_ssh(tmp_path, {"bdf": str(REAL / "hpux_bdf_hpux1-vxfs.txt"), "mount": str(mount)})
    c = _collector(command_prefix=[str(ssh), "-o", "BatchMode=yes", "hpux1"], platform="hpux",
                   mount=["mount", "-p"], target="hpux1")
    samples, batch = collect(c)
    calls = sorted(eval(line) for line in log.read_text().splitlines())  # noqa: S307 - our own repr() lines
    assert calls == [["-o", "BatchMode=yes", "hpux1", "bdf"], ["-o", "BatchMode=yes", "hpux1", "mount", "-p"]]
    root = (("device", "/dev/vg00/lvol3"), ("fstype", "vxfs"), ("mountpoint", "/"), ("target", "hpux1"))
    assert samples[("middleware_filesystem_size_bytes", root)] == 2097152 * K
    assert samples[("middleware_filesystem_free_bytes", root)] == (2097152 - 339960) * K
    assert samples[("middleware_filesystem_avail_bytes", root)] == 1743512 * K
    assert samples[("middleware_filesystem_device_error", root)] == 0
    assert samples[("middleware_filesystem_readonly", root)] == 0
    # a mount the mount table does not list: fstype empty, no readonly (unknown), figures still there
    var = (("device", "/dev/vg00/lvol8"), ("fstype", ""), ("mountpoint", "/var"), ("target", "hpux1"))
    assert samples[("middleware_filesystem_size_bytes", var)] == 163840000 * K
    assert ("middleware_filesystem_readonly", var) not in samples
    assert not any(name == "middleware_filesystem_files" for name, _ in samples)  # bdf prints no inodes
    t = ("target", "hpux1")
    assert samples[("middleware_filesystem_text_source_success", (("source", "df"), t))] == 1
    assert samples[("middleware_filesystem_text_source_success", (("source", "mount"), t))] == 1
    assert batch.errors == {}
    sources = batch.reports.targets["hpux1"].sources
    assert sources["df"].ok and sources["mount"].ok
    assert c.targets() == ["hpux1"]


def test_collector_mount_point_filters_apply_to_df_rows(tmp_path):
    settings = FilesystemSettings(enabled=True, backend="text", timeout=10, statfs_timeout=2,
                                  mount_points_exclude="^/(proc|u0[12])($|/)",
                                  text={"df": ["cat", str(REAL / "generic_df_aix.txt")], "command_timeout": 4})
    samples, batch = collect(FilesystemCollector(settings, Context()))
    mounts = {dict(labels)["mountpoint"] for name, labels in samples if name == "middleware_filesystem_size_bytes"}
    assert mounts == {"/", "/usr", "/var", "/tmp", "/var/adm/ras/platform", "/home", "/admin", "/opt"}
    assert samples[("middleware_filesystem_mounts_skipped", ())] == 1  # /proc
    assert all("target" not in dict(labels) for _, labels in samples)  # no target set: no label
    settings = FilesystemSettings(enabled=True, backend="text", timeout=10, statfs_timeout=2,
                                  mount_points_include="^/(usr|opt)$",
                                  text={"df": ["cat", str(REAL / "generic_df_aix.txt")], "command_timeout": 4})
    samples, _ = collect(FilesystemCollector(settings, Context()))
    mounts = {dict(labels)["mountpoint"] for name, labels in samples if name == "middleware_filesystem_size_bytes"}
    assert mounts == {"/usr", "/opt"}


def test_a_failing_hanging_or_unreadable_df_is_its_sources_failure(tmp_path):
    samples, batch = collect(_collector(df=["sh", "-c", "echo 'df: cannot stat /net/x' >&2; exit 2"]))
    assert samples[("middleware_filesystem_text_source_success", (("source", "df"),))] == 0
    assert "exit status 2" in batch.errors["df"] and "cannot stat" in batch.errors["df"]
    assert batch.reports.targets["local"].sources["df"].ok is False
    assert not any(name == "middleware_filesystem_size_bytes" for name, _ in samples)

    samples, batch = collect(_collector(df=["sleep", "30"], command_timeout=0.5))
    assert samples[("middleware_filesystem_text_source_success", (("source", "df"),))] == 0
    assert "timed out after 0.5s" in batch.errors["df"]

    samples, batch = collect(_collector(df=["echo", "Filesystem Inodes IUsed IFree IUse% Mounted on"]))
    assert "no known header" in batch.errors["df"]

    # df exiting 2 after printing the mounts it could read (Solaris "cannot statvfs"): those are read, the rest said
    partial = ["sh", "-c", f"cat {REAL / 'aix_df_k.txt'}; echo 'df: /net/x: Permission denied' >&2; exit 2"]
    samples, batch = collect(_collector(df=partial))
    assert samples[("middleware_filesystem_text_source_success", (("source", "df"),))] == 1
    assert samples[("middleware_filesystem_size_bytes", (("device", "/dev/hd1"), ("fstype", ""),
                                                         ("mountpoint", "/home")))] == 32768 * K
    assert "exit status 2: df: /net/x: Permission denied" in batch.errors["df exit status"]

    # mount failing costs only the types: df's figures still come, with fstype empty
    samples, batch = collect(_collector(df=["cat", str(REAL / "aix_df_k.txt")], mount=["false"]))
    assert samples[("middleware_filesystem_text_source_success", (("source", "mount"),))] == 0
    assert samples[("middleware_filesystem_size_bytes", (("device", "/dev/hd4"), ("fstype", ""),
                                                         ("mountpoint", "/")))] == 229376 * K


def test_command_timeout_must_be_shorter_than_timeout():
    with pytest.raises(ValueError, match="command_timeout"):
        FilesystemSettings(backend="text", timeout=10, statfs_timeout=2, text={"command_timeout": 10})
    FilesystemSettings(backend="procfs", timeout=10, statfs_timeout=2, text={"command_timeout": 10})


@pytest.mark.integration
def test_exporter_process_reports_df_through_a_prefix_and_its_failure(tmp_path, start_exporter):
    good = tmp_path / "good"
    good.mkdir()
    ssh, _ = _stand_in_ssh(good, {"df": str(REAL / "solaris_df_oi-2021.10.txt"),
                                  "mount": str(REAL / "solaris_mount_oi-2021.10.txt")})
    for prefix_ok in (True, False):
        text = {"command_prefix": [str(ssh), "hpux1"], "df": ["df", "-k"] if prefix_ok else ["fail"],
                "mount": ["mount", "-v"], "target": "oi1", "command_timeout": "8s"}
        config = yaml.safe_dump({"collectors": {"process": {"enabled": False}, "host": {"enabled": False},
                                                "filesystem": {"enabled": True, "backend": "text", "interval": "60s",
                                                               "timeout": "20s", "text": text}}})
        exporter = start_exporter(config=config, wait_ready=False)
        deadline = time.monotonic() + 60  # a backstop: the first run takes well under a second
        key = ("middleware_filesystem_text_source_success", (("source", "df"), ("target", "oi1")))
        samples: dict = {}
        while key not in samples:
            assert time.monotonic() < deadline, exporter.log()
            time.sleep(0.1)
            status, _, body = exporter.get("/metrics")
            assert status == 200
            samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
                       for family in text_string_to_metric_families(body.decode()) for s in family.samples}
        root = (("device", "rpool/ROOT/openindiana"), ("fstype", "zfs"), ("mountpoint", "/"), ("target", "oi1"))
        fs = next(c for c in json.loads(exporter.get("/api/v1/collectors")[2]) if c["name"] == "filesystem")
        target = next(t for t in fs["targets"] if t["name"] == "oi1")
        df_state = next(s for s in target["sources"] if s["name"] == "df")
        if prefix_ok:
            assert samples[key] == 1
            assert samples[("middleware_filesystem_size_bytes", root)] == 31997952 * K
            assert samples[("middleware_filesystem_avail_bytes", root)] == 25726181 * K
            assert df_state["success"] is True and fs["source_errors"] == {}
        else:  # the metric, the status API and the log agree, and say why
            assert samples[key] == 0
            assert ("middleware_filesystem_size_bytes", root) not in samples
            assert df_state["success"] is False and "fail: not found" in df_state["last_error"]
            assert "fail: not found" in fs["source_errors"]["df"]
            assert fs["source_errors"]["df"] in exporter.log()


def test_hpux_bdf_li_gives_file_nodes_too():
    """bdf -i: the inode columns give files (iused + ifree) and files_free (ifree); a capture without them none."""
    r = df("hpux_bdf_li_opensvc.txt")
    # /dev/vg00/lvol3    1048576  228160  814136   22%   2105  25607    8% /
    assert r.dialect == "used-avail-inodes"
    assert r.rows == [dp.DfRow("/dev/vg00/lvol3", "/", 1048576 * K, (1048576 - 228160) * K, 814136 * K,
                               2105 + 25607, 25607)]
    assert by_mount(df("hpux_bdf_hpux1-vxfs.txt"))["/"].files is None


def test_invented_macos_df_k_i_columns_are_read():
    """INVENTED sample in the BSD/macOS `df -k -i` column layout (`iused ifree %iused`), figures made up."""
    r = dp.parse_df("Filesystem 1024-blocks Used Available Capacity iused ifree %iused  Mounted on\n"
                    "/dev/disk1s1 488245288 401176852 82838848 83% 2188469 4880000 31% /\n")
    assert r.rows == [dp.DfRow("/dev/disk1s1", "/", 488245288 * K, (488245288 - 401176852) * K, 82838848 * K,
                               2188469 + 4880000, 4880000)]
