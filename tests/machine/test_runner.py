from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from exporter.machine import runner
from exporter.machine.deadline import BoundedCall, Overdue, Scope
from exporter.machine.runner import CommandError, CommandNotFound, CommandTimeout, live_commands, run_command


def alive(pid: int) -> bool:
    """Running (a killed process may linger as a zombie until its parent, or init, reaps it)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return not handle.read().rsplit(") ", 1)[1].startswith(("Z", "X"))
    except (FileNotFoundError, ProcessLookupError):
        return False


def gone(pid: int, wait: float = 5.0) -> bool:
    """The process ends within ``wait`` seconds (SIGKILL is delivered asynchronously; this is not a timing
    assertion, only a bound on waiting for the kernel)."""
    give_up = time.monotonic() + wait
    while alive(pid):
        if time.monotonic() > give_up:
            return False
        time.sleep(0.02)
    return True


def read_pids(path) -> list[int]:
    for _ in range(500):
        if path.exists() and path.read_text().endswith("\n"):
            return [int(p) for p in path.read_text().split()]
        time.sleep(0.01)
    raise AssertionError(f"{path} never written")


def _python(program: str, timeout: float) -> subprocess.CompletedProcess:
    """Run ``program`` in a new Python process from the repository root (its own process, subreaper or shutdown)."""
    return subprocess.run([sys.executable, "-c", program], cwd=runner.__file__.rsplit("/exporter/", 1)[0],
                          capture_output=True, text=True, timeout=timeout)


def _kill_leftovers(pids: list[int], group: bool = False) -> None:
    """Clean-up whatever the test's outcome: SIGKILL each process (or its group) that may have outlived it."""
    for pid in pids:
        try:
            (os.killpg if group else os.kill)(pid, 9)
        except OSError:  # gone already
            pass


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
    with pytest.raises(CommandTimeout, match="timed out after 0.5s"):
        run_command([sys.executable, "-c", script], timeout=0.5)
    assert gone(int(pidfile.read_text())), "grandchild survived the timeout"
    assert live_commands() == 0


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


# A command that starts a child in its own group and one more in its own session (as daemonising tools do),
# writes their pids to a file and hangs.
FAMILY = """import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])
escaped = subprocess.Popen([sys.executable, '-c', 'import os, time; os.setsid(); time.sleep(120)'])
open(sys.argv[1], 'w').write(f'{os.getpid()} {child.pid} {escaped.pid}\\n')
print('ready', flush=True)
time.sleep(120)
"""


@pytest.mark.integration  # waits out a hang or a timeout
def test_a_run_abandoned_at_its_deadline_kills_its_command_group(tmp_path):
    """The command's own timeout is far away; the bounded call it runs in gives up first: its group goes, the
    abandoned thread ends instead of lingering, and it cannot start another command."""
    pidfile = tmp_path / "pids"
    seen: list[BaseException] = []

    def collect() -> None:
        try:
            run_command([sys.executable, "-c", FAMILY, str(pidfile)], timeout=120)
        except CommandError as exc:
            seen.append(exc)
        try:
            run_command(["/bin/echo", "too late"], timeout=120)
        except CommandError as exc:
            seen.append(exc)

    call = BoundedCall("test")
    try:
        call(collect, 1.0)
    except Overdue:
        pass  # or the run itself noticed its deadline first and returned just in time: the same either way
    leader, child, escaped = read_pids(pidfile)
    try:
        assert gone(leader) and gone(child)
        for _ in range(500):
            if not call.busy:
                break
            time.sleep(0.01)
        assert not call.busy, "the abandoned run still hangs"
        assert [type(e) for e in seen] == [CommandTimeout, CommandTimeout]
        assert "killed at the deadline of its run" in str(seen[0]) and "not started" in str(seen[1])
        assert live_commands() == 0
    finally:
        os.kill(escaped, 9)  # outside the group: only the subreaper (test below) reaches it


def test_a_command_is_given_no_more_than_its_run_has_left():
    """A bounded call of 0.5 s running a command allowed 60 s: the command ends at the call's deadline, whether
    the run notices first (its command is killed at the deadline) or the caller does (the run is abandoned and its
    command killed)."""
    call = BoundedCall("test")
    messages: list[str] = []

    def collect() -> None:
        try:
            run_command([sys.executable, "-c", "import time; time.sleep(60)"], timeout=60)
        except CommandTimeout as exc:
            messages.append(str(exc))

    try:
        call(collect, 0.5)
    except Overdue:
        pass
    for _ in range(1000):
        if not call.busy:
            break
        time.sleep(0.01)
    assert not call.busy and len(messages) == 1
    assert "killed at the deadline of its run" in messages[0]
    if "after it started" in messages[0]:  # the run noticed first: how long the command had, and its own limit
        assert "its own timeout: 60s" in messages[0] and "left of" not in messages[0]
    assert live_commands() == 0


def test_nested_scopes_share_the_earlier_deadline_and_cancellation():
    outer = Scope(1.0)
    inner = Scope(60.0, outer)
    assert inner.deadline == outer.deadline
    assert Scope(0.1, outer).deadline < outer.deadline
    called: list[str] = []
    inner.on_cancel(lambda: called.append("inner"))
    done = Scope(60.0, outer)
    done.on_cancel(lambda: called.append("closed"))
    done.close()  # its call is over: the outer scope no longer reaches it
    outer.cancel()
    assert inner.cancelled and called == ["inner"]
    assert inner.on_cancel(lambda: called.append("late")) is None and called[-1] == "late"


def fd_count() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.integration  # starts Python processes and waits out their children
def test_an_escaped_child_holding_stdout_pins_no_thread_or_descriptor(tmp_path):
    """10 runs of a command whose grandchild moves to its own session and keeps stdout open: the command's
    output still comes back, and threads and descriptors are the same after as before."""
    script = ("import subprocess, sys\n"
              "p = subprocess.Popen([sys.executable, '-c', 'import os, time; os.setsid(); time.sleep(60)'])\n"
              "open(sys.argv[1], 'a').write(f'{p.pid}\\n')\n"
              "print('status ok')\n")
    pidfile = tmp_path / "escaped"
    run_command(["/bin/true"], timeout=5)  # warm: the selector module and friends are loaded
    fds, threads = fd_count(), threading.active_count()
    try:
        for _ in range(10):
            result = run_command([sys.executable, "-c", script, str(pidfile)], timeout=20)
            assert result.stdout == "status ok\n" and result.returncode == 0
        assert fd_count() == fds and threading.active_count() == threads
        assert live_commands() == 0
        assert all(alive(pid) for pid in read_pids(pidfile))  # no subreaper here: they live on, harmless
    finally:
        _kill_leftovers(read_pids(pidfile))


@pytest.mark.integration  # starts Python processes and waits out their children
def test_with_the_subreaper_an_escaped_child_is_killed_too(tmp_path):
    """In a process set up as the serving exporter sets itself up (runner.guard_process), an orphan that escaped
    into its own session is re-parented to it and killed once its command has finished or been killed."""
    pidfile = tmp_path / "pids"
    program = ("import sys, threading\n"
               "from exporter.machine import runner\n"
               "print(runner.guard_process(watchdog=False)['subreaper'])\n"
               f"runner.run_command([sys.executable, '-c', {FAMILY!r}, {str(pidfile)!r}], timeout=1.5)\n")
    result = _python(program, timeout=60)
    pids = read_pids(pidfile)
    try:
        if result.stdout.startswith("False"):
            pytest.skip("PR_SET_CHILD_SUBREAPER not available here")
        assert "CommandTimeout" in result.stderr
        assert all(gone(pid) for pid in pids), [pid for pid in pids if alive(pid)]
    finally:
        _kill_leftovers(pids)


def test_shutdown_kills_every_running_command(tmp_path):
    pidfile = tmp_path / "pids"
    errors: list[BaseException] = []

    def hang() -> None:
        try:
            run_command([sys.executable, "-c", FAMILY, str(pidfile)], timeout=120)
        except CommandError as exc:
            errors.append(exc)

    thread = threading.Thread(target=hang)
    thread.start()
    leader, child, escaped = read_pids(pidfile)
    try:
        assert live_commands() == 1
        assert runner.shutdown(grace=0.5, final=False) == 1
        thread.join(30)
        assert not thread.is_alive()
        assert [str(e) for e in errors] == [f"{os.path.basename(sys.executable)}: killed: the exporter is stopping"]
        assert gone(leader) and gone(child) and live_commands() == 0
        assert run_command(["/bin/echo", "still works"], timeout=5).stdout == "still works\n"  # final=False
    finally:
        os.kill(escaped, 9)


def test_output_closed_early_still_waits_for_the_exit():
    result = run_command([sys.executable, "-c", "import os, sys, time; print('x', flush=True); os.close(1); "
                          "os.close(2); time.sleep(0.3); sys.exit(4)"], timeout=20)
    assert result.stdout == "x\n" and result.returncode == 4


def test_a_command_that_closes_its_output_and_hangs_times_out(tmp_path):
    pidfile = tmp_path / "pid"
    with pytest.raises(CommandTimeout):
        run_command([sys.executable, "-c", "import os, sys, time; open(sys.argv[1], 'w').write(f'{os.getpid()}\\n'); "
                     "os.close(1); os.close(2); time.sleep(60)", str(pidfile)], timeout=0.5)
    assert gone(read_pids(pidfile)[0])


def test_large_input_and_both_outputs_capped():
    data = "q" * 1_000_000  # more than a pipe holds: written as the command reads
    script = ("import sys; d = sys.stdin.read(); sys.stdout.write(str(len(d)) + 'o' * 3_000_000); "
              "sys.stderr.write('e' * 3_000_000)")
    result = run_command([sys.executable, "-c", script], timeout=30, input_text=data, max_output=2000)
    assert result.truncated
    assert result.stdout == "1000000" + "o" * 1993 and result.stderr == "e" * 2000
    assert result.stdout_bytes == result.stdout.encode()


def test_after_a_final_shutdown_no_command_starts():
    program = ("from exporter.machine import runner\n"
               "runner.shutdown(grace=0)\n"
               "try:\n"
               "    runner.run_command(['/bin/echo', 'x'], timeout=5)\n"
               "except runner.CommandError as exc:\n"
               "    print(exc)\n")
    result = _python(program, timeout=60)
    assert result.stdout.strip() == "echo: not started: the exporter is stopping"


# An INVENTED stand-in for ssh with ControlPersist that never finds its master (a new ControlPath every time): each
# run leaves a new master, named ssh, in its own session; or, given "stray", a child of another name.
MASTER_EVERY_TIME = r"""#!/bin/sh
if [ "$1" = "__master" ]; then echo $$ >> "$2"; while :; do sleep 1; done; fi
if [ "$1" = "stray" ]; then
    ( setsid sh -c 'echo $$ >> "$1"; while :; do sleep 1; done' stray "$2" </dev/null >/dev/null 2>&1 &
      while [ ! -s "$2" ]; do sleep 0.01; done ) ; exit 0
fi
n=$(wc -l < "$1" 2>/dev/null || echo 0)
( setsid "$0" __master "$1" </dev/null >/dev/null 2>&1 &
  while [ "$(wc -l < "$1" 2>/dev/null || echo 0)" -le "$n" ]; do sleep 0.01; done )
echo connected
"""


@pytest.mark.integration  # starts Python processes and waits out their children
def test_ssh_masters_are_kept_up_to_a_bound_and_other_escapees_killed(tmp_path):
    """In a process set up as the serving exporter (subreaper): re-parented ssh masters are kept, at most MAX_KEPT;
    an escaped child of another name is killed as before; shutdown ends the kept ones."""
    ssh = tmp_path / "ssh"
    ssh.write_text(MASTER_EVERY_TIME)
    ssh.chmod(0o755)
    masters, strays = tmp_path / "masters", tmp_path / "strays"
    runs = runner.MAX_KEPT + 4
    program = ("import sys, time\n"
               "from exporter.machine import runner\n"
               "print(runner.guard_process(watchdog=False)['subreaper'], flush=True)\n"
               f"for _ in range({runs}):\n"
               f"    assert runner.run_command([{str(ssh)!r}, {str(masters)!r}], timeout=20).stdout == 'connected\\n'\n"
               f"runner.run_command([{str(ssh)!r}, 'stray', {str(strays)!r}], timeout=20)\n"
               "time.sleep(0.3); runner.run_command(['/bin/true'], timeout=20)  # a tidy after the re-parenting\n"
               "print(len(runner._registry.kept), flush=True)\n"
               "runner.shutdown(grace=0.5)\n"
               "print(len(runner._registry.kept), flush=True)\n")
    result = _python(program, timeout=120)
    pids = read_pids(masters) + read_pids(strays)
    try:
        lines = result.stdout.split()
        if lines[:1] == ["False"]:
            pytest.skip("PR_SET_CHILD_SUBREAPER not available here")
        assert result.returncode == 0, result.stderr
        assert len(read_pids(masters)) == runs
        assert lines[1:] == [str(runner.MAX_KEPT), "0"]
        assert all(gone(pid) for pid in pids), [pid for pid in pids if alive(pid)]
    finally:
        _kill_leftovers(pids, group=True)
