"""Commands through an ssh prefix run what this side built and nothing else (issue 38, item 1).

ssh joins its arguments with spaces and the remote sshd hands that line to the account's shell, so every argument
after an ssh prefix is shell code on the remote host.  Names read from the systems (HPOM queue files, MQ queue
names in runmqsc's answer) and configured values reach that line.  Each path is checked two ways: through an
INVENTED stand-in ``ssh`` that does what ssh and sshd do (drops the options and the host, ``sh -c`` on the joined
rest, in a work directory), and through a real ``sshd`` on loopback (tests/sshd.py).  A hostile name must execute
nothing: the figure is read, or the source fails with a clear error."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from pydantic import ValidationError

from exporter.core.collector import Context
from exporter.machine.remote import UnsafeArgument, check_remote_arguments, prefixed, through_remote_shell
from exporter.machine.runner import run_command
from exporter.systems.domino.collector import DominoCollector
from exporter.systems.domino.settings import DominoSettings
from exporter.systems.hpom.collector import HpomCollector
from exporter.systems.hpom.settings import HpomSettings
from exporter.systems.ibmmq.runmqsc import RunmqscBackend

from ..sshd import LoopbackSshd
from ..support import collect, shell_script, system_fixtures

# Shell syntax in a name: a command list, a command substitution of both kinds, a variable, a glob and a quote.
HOSTILE_WORDS = ["a;touch PWNED;#", "b$(touch PWNED)", "c`touch PWNED`", "d && touch PWNED", "e'; touch PWNED; '",
                 "f|touch PWNED", "g>PWNED", "$HOME", "*"]


def _sshd_like(tmp_path: Path) -> tuple[str, Path]:
    """INVENTED stand-in for ssh + sshd: skips ssh's options and the host, then ``sh -c`` the joined remaining
    arguments (what sshd does with the command line) in ``remote/``, where a hostile name's files would land."""
    remote = tmp_path / "remote"
    remote.mkdir()
    ssh = shell_script(tmp_path / "ssh", f'''while [ $# -gt 0 ]; do
  case "$1" in
    -[bcDEeFIiJLlmOopQRSWw]) shift 2 ;;
    -*) shift ;;
    *) shift; break ;;
  esac
done
cd "{remote}" && exec sh -c "$*"
''')
    return ssh, remote


@pytest.fixture
def sshd(tmp_path):
    server = LoopbackSshd(tmp_path / "sshd", environment={"MWE_REMOTE_DIR": str(tmp_path / "remote")}).start()
    yield server
    server.stop()


def _pwned(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.rglob("PWNED*"))


# --- the quoting itself -------------------------------------------------------------------------------------------
def test_only_a_remote_shell_prefix_quotes():
    assert through_remote_shell(["ssh", "-o", "BatchMode=yes", "h1"])
    assert through_remote_shell(["/usr/bin/sudo", "-u", "mon", "/usr/bin/ssh", "h1"])
    assert through_remote_shell(["remsh", "hpux1"])
    assert not through_remote_shell(["sudo", "-u", "mqm"])  # runs an argument list: nothing to quote
    assert prefixed(["sudo", "-u", "mqm"], ["wc", "a b;c"]) == ["sudo", "-u", "mqm", "wc", "a b;c"]
    assert prefixed([], ["wc", "a b"]) == ["wc", "a b"]
    # plain words stay as they were (forced-command scripts comparing $SSH_ORIGINAL_COMMAND see no change)
    assert prefixed(["ssh", "h1"], ["sar", "-u", "-d", "5", "1"]) == ["ssh", "h1", "sar", "-u", "-d", "5", "1"]
    assert prefixed(["ssh", "h1"], ["server", "-c", "show stat"])[-1] == "'show stat'"


@pytest.mark.parametrize("word", ["x\ntouch PWNED", "x\rtouch PWNED", "x\x00y"])
def test_what_no_quoting_carries_is_refused(word):
    with pytest.raises(UnsafeArgument, match="line break or NUL"):
        prefixed(["ssh", "h1"], ["wc", word])
    assert prefixed([], ["wc", word])[-1] == word  # no shell locally: passed as it is


def test_each_word_arrives_whole_through_the_stand_in(tmp_path):
    ssh, remote = _sshd_like(tmp_path)
    result = run_command(prefixed([ssh, "-o", "BatchMode=yes", "h1"], ["printf", "%s\\n", *HOSTILE_WORDS]),
                         timeout=10, check=True)
    assert result.stdout.splitlines() == HOSTILE_WORDS
    assert _pwned(remote) == []


@pytest.mark.integration
def test_each_word_arrives_whole_through_a_real_sshd(tmp_path, sshd):
    (tmp_path / "remote").mkdir()
    words = [*HOSTILE_WORDS, "h;cd $MWE_REMOTE_DIR;touch PWNED"]
    result = run_command(prefixed(sshd.prefix(), ["printf", "%s\\n", *words]), timeout=20, check=True)
    assert result.stdout.splitlines() == words
    assert _pwned(tmp_path) == []


# --- configured values: refused at load time ----------------------------------------------------------------------
def test_a_configured_argument_with_a_line_break_is_refused_naming_its_key():
    with pytest.raises(ValidationError, match="queue_count_command: argument"):
        HpomSettings(enabled=True, command_prefix=["ssh", "hpom1"], queue_count_command=["wc", "-l\ntouch X"])
    with pytest.raises(ValidationError, match="command: argument"):
        DominoSettings(enabled=True, command_prefix=["ssh", "dom1"], command=["server", "-c", "show\nstat"])
    DominoSettings(enabled=True, command=["server", "-c", "show\nstat"])  # locally no shell reads it
    with pytest.raises(ValueError, match="^iostat: argument"):
        check_remote_arguments(["ssh", "h"], {"iostat": ["iostat", "\n"]})


# --- HPOM: queue file names in queue_count_command ----------------------------------------------------------------
HOSTILE_QUEUES = ["msgq;touch PWNED;#", "msgq$(touch PWNED)", "msgq`touch PWNED`",
                  "msgq;cd $MWE_REMOTE_DIR;touch PWNED", "-rfq"]


def _hpom_queue_dir(tmp_path: Path) -> Path:
    queues = tmp_path / "mgmt_sv"
    queues.mkdir()
    (queues / "msgagtq").write_bytes(b"0123456789")
    for name in HOSTILE_QUEUES:
        (queues / name).write_bytes(b"abc")
    return queues


def _hpom(prefix: list[str], queues: Path) -> HpomSettings:
    return HpomSettings(enabled=True, queue_dir=str(queues), queue_pattern=r"q", queue_count_command=[
                        "wc", "-c", "{path}"], queue_count_pattern=r"(?P<count>\d+)", command_prefix=prefix,
                        opcsv=None, ovc=None, ovconfget=None, command_timeout=8, timeout=10)


def _hpom_outcome(settings: HpomSettings) -> tuple[dict[str, float], str]:
    samples, batch = collect(HpomCollector(settings, Context()))
    entries = {dict(labels)["queue"]: value for (name, labels), value in samples.items()
               if name == "middleware_hpom_queue_entries"}
    sizes = {dict(labels)["queue"] for (name, labels), _ in samples.items()
             if name == "middleware_hpom_queue_size_bytes"}
    assert sizes == {"msgagtq", *HOSTILE_QUEUES}  # read locally, whatever the name: nothing lost
    return entries, batch.errors.get("queue_count", "")


def test_hostile_queue_file_names_run_nothing_through_the_stand_in(tmp_path):
    ssh, remote = _sshd_like(tmp_path)
    entries, error = _hpom_outcome(_hpom([ssh, "-o", "BatchMode=yes", "hpom1"], _hpom_queue_dir(tmp_path)))
    assert _pwned(tmp_path) == []
    assert entries == {"msgagtq": 10}
    for name in HOSTILE_QUEUES[:3]:
        assert repr(name) in error
    assert "not passed to queue_count_command" in error


@pytest.mark.integration
def test_hostile_queue_file_names_run_nothing_through_a_real_sshd(tmp_path, sshd):
    (tmp_path / "remote").mkdir()
    entries, error = _hpom_outcome(_hpom(sshd.prefix(), _hpom_queue_dir(tmp_path)))
    assert _pwned(tmp_path) == []
    assert entries == {"msgagtq": 10}
    assert "not passed to queue_count_command" in error


# --- Domino: a configured argument with a space -------------------------------------------------------------------
def test_the_console_command_reaches_the_server_as_one_argument(tmp_path):
    ssh, remote = _sshd_like(tmp_path)
    server = shell_script(tmp_path / "server", f'''[ "$1" = "-c" ] && [ "$2" = "show stat" ] && [ $# -eq 2 ] \\
  && exec cat "{system_fixtures("domino") / "show_stat.txt"}"
echo "server: unexpected arguments: $*" >&2; exit 2
''')
    settings = DominoSettings(enabled=True, command=[server, "-c", "show stat"], command_prefix=[ssh, "dom1"])
    samples, batch = collect(DominoCollector(settings, Context()))
    assert batch.errors == {}
    assert any(name.startswith("middleware_domino_") and name != "middleware_domino_source_success"
               for (name, _) in samples)


# --- IBM MQ: queue names from runmqsc's answer passed to amqsrua ---------------------------------------------------
HOSTILE_MQ_QUEUE = "APP.Q;touch PWNED;#"


def _mq_commands(tmp_path: Path) -> tuple[str, str, str, Path]:
    """Stand-ins for dspmq and runmqsc (the recorded QM1 answers, one queue-status block with a hostile name
    added: INVENTED) and amqsrua (records its arguments, prints nothing)."""
    mq = system_fixtures("ibmmq") / "runmqsc"
    display = (mq / "qm1_display.txt").read_text().replace(
        "AMQ8450I: Display queue status details.\n",
        f"AMQ8450I: Display queue status details.\n   QUEUE({HOSTILE_MQ_QUEUE})   TYPE(QUEUE)\n"
        "   CURDEPTH(1)   IPPROCS(0)\n   MSGAGE(3)   OPPROCS(0)\nAMQ8450I: Display queue status details.\n", 1)
    (tmp_path / "display.txt").write_text(display)
    dspmq = shell_script(tmp_path / "dspmq", f'cat "{mq / "qm1_dspmq.txt"}"\n')
    runmqsc = shell_script(tmp_path / "runmqsc", f'cat > /dev/null; cat "{tmp_path / "display.txt"}"\n')
    calls = tmp_path / "amqsrua.calls"
    amqsrua = shell_script(tmp_path / "amqsrua", f'printf "%s\\n" "$@" > "{calls}"\n')
    return dspmq, runmqsc, amqsrua, calls


def _amqsrua_arguments(prefix: list[str], tmp_path: Path) -> tuple[list[str], str]:
    dspmq, runmqsc, amqsrua, calls = _mq_commands(tmp_path)
    backend = RunmqscBackend("QM1", runmqsc=runmqsc, dspmq=dspmq, amqsrua=amqsrua, command_prefix=prefix,
                             timeout=15, monitor_interval=0.2, statistics_ticks=1)
    try:
        snapshot = backend.snapshot()
        assert HOSTILE_MQ_QUEUE in {queue.name for queue in snapshot.queues}  # depth is read: nothing lost
        give_up = time.monotonic() + 30  # a bound on amqsrua's worker starting, not a timing assertion
        while not calls.exists():
            assert time.monotonic() < give_up, "amqsrua was never run"
            time.sleep(0.05)
        time.sleep(0.2)
        throughput = backend.snapshot().throughput
        return calls.read_text().splitlines(), (throughput.error or "") if throughput else ""
    finally:
        backend.close()


def test_hostile_mq_queue_names_reach_no_command_through_the_stand_in(tmp_path):
    ssh, remote = _sshd_like(tmp_path)
    arguments, error = _amqsrua_arguments([ssh, "mqhost1"], tmp_path)
    assert _pwned(tmp_path) == []
    assert HOSTILE_MQ_QUEUE not in arguments and "APP.ORDERS.IN" in arguments
    assert f"{HOSTILE_MQ_QUEUE!r}" in error and "not an MQ object name" in error


@pytest.mark.integration
def test_hostile_mq_queue_names_reach_no_command_through_a_real_sshd(tmp_path, sshd):
    (tmp_path / "remote").mkdir()
    arguments, error = _amqsrua_arguments(sshd.prefix(), tmp_path)
    assert _pwned(tmp_path) == []
    assert HOSTILE_MQ_QUEUE not in arguments and "APP.ORDERS.IN" in arguments
    assert "not an MQ object name" in error


# --- configured target and labels: label values only, never on a command line ------------------------------------
def test_hostile_target_and_label_values_are_labels_and_nothing_else(tmp_path):
    ssh, remote = _sshd_like(tmp_path)
    server = shell_script(tmp_path / "server", f'cat "{system_fixtures("domino") / "show_stat.txt"}"\n')
    settings = DominoSettings(enabled=True, command=[server, "-c", "show stat"], command_prefix=[ssh, "dom1"],
                              target="dom1;touch PWNED", labels={"site": "$(touch PWNED)"})
    samples, batch = collect(DominoCollector(settings, Context()))
    assert batch.errors == {} and _pwned(tmp_path) == []
    assert {dict(labels).get("target") for (_, labels) in samples} == {"dom1;touch PWNED"}
