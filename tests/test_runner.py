from __future__ import annotations

import os
import sys
import time

import pytest

from exporter.core.runner import CommandError, CommandNotFound, CommandTimeout, run_command


def test_output_and_exit_status():
    script = "import sys; print('is running'); sys.stderr.write('warn'); sys.exit(3)"
    result = run_command([sys.executable, "-c", script],
                         timeout=10)
    assert result.returncode == 3
    assert result.stdout == "is running\n" and result.stderr == "warn"
    with pytest.raises(CommandError, match="exit status 3: warn"):
        run_command([sys.executable, "-c", "import sys; sys.stderr.write('warn'); sys.exit(3)"], timeout=10,
                    check=True)


def test_no_shell_is_involved():
    with pytest.raises(TypeError):
        run_command("echo hello", timeout=5)
    result = run_command(["/bin/echo", "$(id)", ";", "rm", "-rf", "/"], timeout=5)
    assert result.stdout == "$(id) ; rm -rf /\n"


def test_missing_binary():
    with pytest.raises(CommandNotFound, match="/nonexistent/opcsv: command not found"):
        run_command(["/nonexistent/opcsv", "-status"], timeout=5)


def test_timeout_kills_the_whole_process_group(tmp_path):
    pidfile = tmp_path / "child.pid"
    script = ("import os, subprocess, sys, time\n"
              "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
              f"open({str(pidfile)!r}, 'w').write(str(child.pid))\n"
              "time.sleep(60)\n")
    started = time.monotonic()
    with pytest.raises(CommandTimeout, match="timed out after 0.5s"):
        run_command([sys.executable, "-c", script], timeout=0.5)
    assert time.monotonic() - started < 5
    child = int(pidfile.read_text())
    for _ in range(50):
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        # a killed child may linger as a zombie of its (dead) parent until init reaps it
        try:
            with open(f"/proc/{child}/stat") as handle:
                if handle.read().split(") ")[1].startswith("Z"):
                    break
        except FileNotFoundError:
            break
        time.sleep(0.1)
    else:
        pytest.fail("grandchild survived the timeout")


def test_output_is_capped_without_holding_it_all():
    result = run_command([sys.executable, "-c", "import sys; sys.stdout.write('x' * 5_000_000)"], timeout=20,
                         max_output=1000)
    assert result.truncated
    assert result.stdout == "x" * 1000


def test_stdin_and_environment():
    result = run_command([sys.executable, "-c", "import os, sys; print(sys.stdin.read().upper(), os.environ['Q'])"],
                         timeout=10, input_text="display qlocal(*)", env={"Q": "QM1", "PATH": os.environ["PATH"]})
    assert result.stdout.strip() == "DISPLAY QLOCAL(*) QM1"


def test_undecodable_output_is_replaced_not_fatal():
    result = run_command([sys.executable, "-c", "import sys; sys.stdout.buffer.write(b'ok \\xff\\xfe')"], timeout=10)
    assert result.stdout.startswith("ok ")
