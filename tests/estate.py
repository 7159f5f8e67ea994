"""The fixture estate: every system of the guides, configured against recorded and public fixtures, for the advisor's
tests (tests/advisor/test_advisor.py, tests/advisor/test_advice_page.py) and for a reader who wants to see the advice
without a
real estate:

    .venv/bin/python -m tests.estate                 # the advice as a table (exit 1: something deviates)
    .venv/bin/python -m tests.estate --format json   # the JSON report

What it holds: the recorded host tree (tests/fixtures/host1: an HPOM management server with Java GUIs and a VHI
session server), the HPOM server's recorded ovconfget answer and database rows (tests/systems/hpom/fixtures/server), two
Oracle databases behind the stand-in driver (tests/fakes/oracledb answering from tests/systems/oracle/fixtures: opcdb,
the HPOM database on NFS mounts; erp, a dedicated host), IBM MQ queue manager QM1 through runmqsc answering with the
recorded DISPLAY output (tests/systems/ibmmq/fixtures/runmqsc) and QM2 whose data and log paths do not exist, and a
Domino server's `show stat`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from .support import FIXTURES, REPO, system_fixtures
from .support import shell_script as _script

DB_PASSWORD = "monitor-pw-7f3a"



def estate(tmp_path: Path, **changes) -> Path:
    """The fixture estate's configuration file in ``tmp_path`` (and the stand-in database rows, db.yaml, beside
    it); ``changes`` replace collector sections."""
    server = system_fixtures("hpom") / "server"
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    queues = tmp_path / "mgmt_sv"
    queues.mkdir(exist_ok=True)
    for name, size in {"msgmgrq": 2_000_000, "actreqq": 512, "dispq0": 4096}.items():
        (queues / name).write_bytes(b"\0" * size)
    db = tmp_path / "db.yaml"
    data = yaml.safe_load((system_fixtures("oracle") / "db.yaml").read_text())
    data["queries"] = yaml.safe_load((server / "db.yaml").read_text())["queries"]
    db.write_text(yaml.safe_dump(data))
    mq = system_fixtures("ibmmq") / "runmqsc"
    oracle = {"user": "monitor", "password_env": "DB_PASSWORD", "connect_timeout": 0.5, "query_timeout": 0.5}
    collectors = {
        "host": {"interval": 60, "timeout": 5},
        "process": {"interval": 60, "timeout": 5},
        "hpom": {"enabled": True, "interval": 60, "timeout": 5, "command_timeout": 2, "queue_dir": str(queues),
                 "opcsv": _script(bindir / "opcsv", f'cat "{server / "opcsv_status.txt"}"\n'),
                 "ovc": _script(bindir / "ovc", f'cat "{server / "ovc_status.txt"}"\n'),
                 "ovconfget": _script(bindir / "ovconfget", f'cat "{server / "ovconfget_server_opc.txt"}"\n'),
                 "msi_programs": ["opcmsgm"],
                 "queue_count_command": [_script(bindir / "qcount", 'echo "$(( $(wc -c < "$1") / 512 ))"\n'),
                                         "{path}"],
                 "database": {"dsn": "hpomdb.example:1521/openview", **oracle}},
        # 20 s: two databases' fifty-odd stand-in queries run one after the other, slow on a loaded machine
        "oracle": {"enabled": True, "interval": 60, "timeout": 20, "databases": [
            {"name": "opcdb", "dsn": "opcdb.example:1521/openview", "hpom": True, **oracle},
            {"name": "erp", "dsn": "erp.example:1521/erp", "dedicated_host": True, **oracle}]},
        "ibmmq": {"enabled": True, "interval": 60, "timeout": 10, "queue_managers": [
            {"name": "QM1", "backend": "runmqsc", "statistics": "off", "timeout": 5,
             "runmqsc": _script(bindir / "runmqsc", f'cat > /dev/null; cat "{mq / "qm1_display.txt"}"\n'),
             "dspmq": _script(bindir / "dspmq", f'cat "{mq / "qm1_dspmq.txt"}"\n')},
            {"name": "QM2", "backend": "runmqsc", "statistics": "off", "timeout": 5,
             "runmqsc": _script(bindir / "runmqsc", f'cat > /dev/null; cat "{mq / "qm1_display.txt"}"\n'),
             "dspmq": _script(bindir / "dspmq2", "echo 'QMNAME(QM2)    STATUS(Running)'\n"),
             "data_path": "/nonexistent/mqm/qmgrs/QM2", "log_path": "/nonexistent/mqm/log/QM2"}]},
        "vhi": {"enabled": True, "interval": 60, "timeout": 5},
        "domino": {"enabled": True, "interval": 60, "timeout": 5, "command_timeout": 2,
                   "command": [_script(bindir / "showstat", f'cat "{system_fixtures("domino") / "show_stat.txt"}"\n')]},
    }
    collectors.update(changes)
    config = {"paths": {"procfs": str(FIXTURES / "host1" / "proc"), "sysfs": str(FIXTURES / "host1" / "sys"),
                        "rootfs": str(FIXTURES / "host1" / "root")},
              "collectors": collectors}
    path = tmp_path / "exporter.yaml"
    path.write_text(yaml.safe_dump(config))
    return path




def environment(tmp_path: Path) -> dict[str, str]:
    """The variables an exporter process needs to read the estate of ``tmp_path`` through the stand-in driver."""
    return {"PYTHONPATH": str(REPO / "tests" / "fakes"), "FAKE_ORACLEDB_FIXTURE": str(tmp_path / "db.yaml"),
            "DB_PASSWORD": DB_PASSWORD}


def main(argv: list[str]) -> int:
    """`advise` on the estate, in a process of its own (the stand-in driver is on its path only)."""
    with tempfile.TemporaryDirectory(prefix="fixture-estate-") as tmp:
        config = estate(Path(tmp))
        env = {**os.environ, **environment(Path(tmp))}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [env["PYTHONPATH"], str(REPO)]))
        return subprocess.run([sys.executable, "-m", "exporter", "advise", "--config", str(config), *argv],
                              env=env, check=False).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
