"""Exact exposition for a recorded procfs/sysfs tree (tests/fixtures/host1).

The tree is a 4-CPU HPOM management server with Oracle, two MQ queue managers and a Domino server: recorded
file shapes of a 5.15 kernel with edited values, plus odd cases (a zombie opcuiwww, a comm with ") " in it,
a pid directory without stat, a garbage stat file, a non-Domino process called ``server``).

File systems: the mount table is the recorded ``proc/1/mounts``; every statvfs goes under ``--path.rootfs host1/root``
(the recorded root, so no mount of the machine running the test is asked) and is answered from the recorded
``host1/statvfs.json`` (INVENTED figures) instead of the kernel, so the figures are the same on any machine.

Regenerate deliberately, and explain the diff in the commit:
    UPDATE_GOLDEN=1 python -m pytest tests/core/test_golden.py
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path

import pytest

from exporter.cli import main

from ..support import FIXTURES

GOLDEN = Path(__file__).parent / "fixtures" / "host1.prom"
ROOTFS = FIXTURES / "host1" / "root"
STATVFS = FIXTURES / "host1" / "statvfs.json"
FIELDS = ("f_bsize", "f_frsize", "f_blocks", "f_bfree", "f_bavail", "f_files", "f_ffree", "f_favail", "f_flag",
          "f_namemax")


@pytest.fixture(autouse=True)
def statvfs_calls(monkeypatch) -> list[str]:
    """The recorded statvfs answers in place of os.statvfs; the paths asked, for the assertions."""
    import exporter.systems.filesystem.collector as fs

    recorded = {k: v for k, v in json.loads(STATVFS.read_text()).items() if not k.startswith("_")}
    calls: list[str] = []

    def statvfs(path: str) -> os.statvfs_result:
        calls.append(path)
        relative = os.path.relpath(path, ROOTFS)
        mountpoint = "/" if relative == "." else "/" + relative
        if relative.startswith("..") or mountpoint not in recorded:
            raise FileNotFoundError(2, "No such file or directory", path)
        return os.statvfs_result(tuple(recorded[mountpoint][f] for f in FIELDS))

    monkeypatch.setattr(fs, "_statfs_function", lambda: statvfs)
    return calls


def _collect(*extra: str) -> tuple[int, str]:
    out = io.StringIO()

    class _Stdout:
        def __init__(self) -> None:
            self.buffer = io.BytesIO()

        def flush(self):
            pass

    fake = _Stdout()
    with contextlib.redirect_stdout(fake), contextlib.redirect_stderr(out):  # type: ignore[type-var]
        code = main(["collect-once", "--path.procfs", str(FIXTURES / "host1" / "proc"),
                     "--path.sysfs", str(FIXTURES / "host1" / "sys"), "--path.rootfs", str(ROOTFS),
                     "--no-self-metrics", *extra])
    return code, fake.buffer.getvalue().decode()


def test_golden_exposition():
    code, text = _collect()
    assert code == 0
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.write_text(text)
    assert text == GOLDEN.read_text(), "exposition changed; if intended, regenerate with UPDATE_GOLDEN=1"


def test_golden_facts_that_matter(statvfs_calls):
    """The golden file could be regenerated wrongly; pin the facts the guides' rules rely on."""
    _, text = _collect()
    lines = set(text.splitlines())
    # HPOM-GUI: two live opcuiwww, the zombie not counted
    assert 'middleware_process_group_processes{group="hpom_java_gui",process="opcuiwww",qmgr="",sid=""} 2.0' in lines
    # MQ queue manager from "-m QM1" and "-mQM1"
    assert 'middleware_process_group_processes{group="ibmmq",process="amqzxma0",qmgr="QM.PAY.01",sid=""} 1.0' in lines
    assert 'middleware_process_group_processes{group="ibmmq",process="amqzlaa0",qmgr="QM1",sid=""} 1.0' in lines
    # ORA-DBWR: two database writers for SID opcdb; ora_s000 is not a listed background process
    assert 'middleware_process_group_processes{group="oracle",process="dbw1",qmgr="",sid="opcdb"} 1.0' in lines
    assert "s000" not in text
    # an absent configured process reports 0 so that `== 0` alerts work
    assert 'middleware_process_group_processes{group="hpom_server",process="opcactm",qmgr="",sid=""} 0.0' in lines
    # the non-Domino `server` process is filtered out by the cmdline filter
    assert 'middleware_process_group_processes{group="domino",process="server",qmgr="",sid=""} 1.0' in lines
    # DOM-SCAN: the scan counter includes pgscan_anon + pgscan_file
    assert "middleware_host_page_scans_total 1.25e+06" in lines
    # partitions and loop devices excluded, as node_exporter does
    assert 'device="sda1"' not in text and 'device="loop0"' not in text
    assert "middleware_host_cpu_cores 2.0" in lines and "middleware_host_cpus 4.0" in lines
    # HPOM-KERNEL: Linux counterparts of the Appendix B tunables, tab-separated kernel.sem split up
    assert 'middleware_host_kernel_parameter{parameter="kernel.sem.semmni"} 4096.0' in lines
    assert 'middleware_host_kernel_parameter{parameter="kernel.shmmni"} 4096.0' in lines
    assert "middleware_host_file_handles_allocated 12832.0" in lines
    # file systems, on by default: the recorded mount table measured under the recorded root only (statvfs of the
    # machine running the test never asked), an escaped space decoded, the proc mount left out by type
    assert sorted(statvfs_calls) == sorted(os.path.join(str(ROOTFS), p) for p in ("", "u01/oradata", "u02/redo",
                                                                                 "u03/arch log"))
    nfs = 'device="filer1:/vol/oradata",fstype="nfs",mountpoint="/u01/oradata"'
    assert f"middleware_filesystem_size_bytes{{{nfs}}} 5.49755813888e+11" in lines
    assert f"middleware_filesystem_avail_bytes{{{nfs}}} 3.4359738368e+10" in lines
    assert ('middleware_filesystem_files_free{device="/dev/sdb1",fstype="xfs",mountpoint="/u03/arch log"} '
            "5.24287e+07") in lines
    assert "middleware_filesystem_mount_table_host 1.0" in lines and "middleware_filesystem_mounts_skipped 1.0" in lines
