"""Exact exposition for a recorded procfs/sysfs tree (tests/fixtures/host1).

The tree is a 4-CPU HPOM management server with Oracle, two MQ queue managers and a Domino server: recorded
file shapes of a 5.15 kernel with edited values, plus odd cases (a zombie opcuiwww, a comm with ") " in it,
a pid directory without stat, a garbage stat file, a non-Domino process called ``server``).

Regenerate deliberately, and explain the diff in the commit:
    UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py
"""

from __future__ import annotations

import contextlib
import io
import os

from exporter.cli import main

from .conftest import FIXTURES

GOLDEN = FIXTURES / "host1.prom"


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
                     "--path.sysfs", str(FIXTURES / "host1" / "sys"), "--no-self-metrics", *extra])
    return code, fake.buffer.getvalue().decode()


def test_golden_exposition():
    code, text = _collect()
    assert code == 0
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.write_text(text)
    assert text == GOLDEN.read_text(), "exposition changed; if intended, regenerate with UPDATE_GOLDEN=1"


def test_golden_facts_that_matter():
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
