"""Running external commands (``opcsv -status``, ``runmqsc``, ``show stat`` wrappers, ...) safely.

* never through a shell: the command is an argument list;
* every command runs in its own process group, and that group is killed (SIGKILL) when the command times out,
  when the bounded call it runs in is abandoned (``machine.deadline``: the command never outlives the deadline of
  its collection), and when it has finished (anything it left running in its group is a stray);
* output read in the calling thread with a selector (no reader threads) into buffers capped at ``max_output``;
  what goes past the cap is read and dropped, so a runaway command cannot eat memory.  When the command has
  exited but something else still holds its output open (a child that escaped into its own session), the pipes
  are closed after ``EXIT_GRACE``: such a child can hold only its own end, never a thread or a descriptor here;
* every live process group is registered in one place, so that :func:`shutdown` kills them all (SIGTERM, a
  short grace, SIGKILL) when the exporter stops;
* a clear :class:`CommandError` for a missing binary, a timeout or a non-zero exit.

What a process cannot do by itself is covered by :func:`guard_process`, called once by the serving exporter: on
Linux it makes the exporter a child subreaper (``PR_SET_CHILD_SUBREAPER``), so a child that escaped with
``setsid`` is re-parented to the exporter when its parent dies and is then found and killed; it starts one small
watchdog process that kills the registered process groups if the exporter is killed with SIGKILL; and it pins
glibc's mmap threshold so large outputs do not fragment the per-thread malloc arenas (see docs/architecture.md,
"Commands and shutdown", for the measurements and for what remains outside the exporter's reach).
"""

from __future__ import annotations

import logging
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import Mapping, Sequence

from .deadline import Scope, current_scope
from .textlines import first_line

log = logging.getLogger("middleware_exporter.runner")

DEFAULT_MAX_OUTPUT = 4 * 1024 * 1024
EXIT_GRACE = 0.5  # seconds the output may stay open after the command exited (a child finishing its last write)
STOP_GRACE = 1.0  # seconds between SIGTERM and SIGKILL at shutdown
REAP_WAIT = 1.0  # seconds to wait for a killed command to be reaped before leaving it to a later sweep
_READ_SIZE = 65536
# Re-parented children that are kept, not killed: OpenSSH's connection masters.  With ControlMaster/ControlPersist in
# the operator's ssh configuration, ssh leaves a master process (in its own session) that later commands to the same
# host share; killing it after every command made each one pay a full handshake.  Kept masters end when their
# ControlPersist time runs out, and at the latest when the exporter stops (shutdown, or the watchdog after SIGKILL).
KEPT_PROGRAMS = frozenset({"ssh"})
MAX_KEPT = 16  # at most this many at once (one per host and user is what ControlPath normally gives); others die
MAX_KEPT_LIMIT = 4096  # keep_masters() raises MAX_KEPT at most this far (probed estates: one master per host)
_POLL = 0.1  # the longest the selector sleeps before looking at the exit, the deadline and cancellation again


class CommandError(Exception):
    """The command could not be run, timed out, or failed."""


class CommandNotFound(CommandError):
    pass


class CommandTimeout(CommandError):
    pass


@dataclass(frozen=True)
class CommandResult:
    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    duration: float
    truncated: bool
    stdout_bytes: bytes = b""  # as the command wrote it, for parsers that decode other code pages themselves


# ---- the registry of live process groups -------------------------------------------------------------------
class _Watchdog:
    """A small process that holds the read end of a pipe from the exporter and is told each process group the
    exporter starts and reaps.  When the pipe reaches end of file without a goodbye (the exporter was killed,
    SIGKILL included) it kills the groups still listed.  Hand-written: nothing in the standard library or a
    maintained package ties a child's life to a multi-threaded parent safely (PR_SET_PDEATHSIG in preexec_fn is
    unsafe with threads and fires when the forking *thread* exits, not the process)."""

    CODE = r"""
import os, signal, sys, time
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    signal.signal(s, signal.SIG_IGN)
groups = set()
for line in sys.stdin.buffer:
    line = line.strip()
    if line == b"bye":
        groups.clear()
        break
    if line[:1] in (b"+", b"-") and line[1:].isdigit():
        (groups.add if line[:1] == b"+" else groups.discard)(int(line[1:]))
def kill(sig):
    for group in groups:
        try:
            os.killpg(group, sig)
        except OSError:
            pass
if groups:
    kill(signal.SIGTERM)
    time.sleep(0.5)
    kill(signal.SIGKILL)
"""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", self.CODE], stdin=subprocess.PIPE,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, close_fds=True,
                                     start_new_session=True)  # a Ctrl-C at a terminal must not reach it
        assert self.proc.stdin is not None
        self._fd = self.proc.stdin.fileno()
        os.set_blocking(self._fd, False)
        self.alive = True

    def tell(self, line: str) -> None:
        if not self.alive:
            return
        try:
            os.write(self._fd, line.encode() + b"\n")
        except OSError as exc:  # gone, or so far behind that its pipe is full: stop relying on it
            self.alive = False
            log.warning("msg=%r error=%r", "command watchdog lost; commands may outlive a killed exporter", str(exc))

    def close(self) -> None:
        self.tell("bye")
        self.alive = False
        try:
            self.proc.stdin.close()  # type: ignore[union-attr]
            self.proc.wait(2)
        except (OSError, subprocess.TimeoutExpired):
            pass


class _Registry:
    """Every command process still running or not yet reaped, keyed by pid (= its process group id)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()  # held while spawning, killing, reaping and sweeping
        self.procs: dict[int, subprocess.Popen] = {}
        self.orphans: set[int] = set()  # escaped descendants killed and not yet reaped (subreaper only)
        self.kept: set[int] = set()  # re-parented ssh connection masters left running (subreaper only)
        self.stopping = False
        self.stopped: set[int] = set()  # pids of the commands a shutdown killed (their run reports it)
        self.subreaper = False
        self.watchdog: _Watchdog | None = None

    def spawn(self, argv: tuple[str, ...], env: Mapping[str, str] | None, with_stdin: bool) -> subprocess.Popen:
        with self.lock:
            if self.stopping:
                raise CommandError(f"{os.path.basename(argv[0])}: not started: the exporter is stopping")
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE if with_stdin else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=dict(env) if env is not None else None,
                start_new_session=True,  # own session and process group: one kill reaches its children too
                close_fds=True,
            )
            self.procs[proc.pid] = proc
            if self.watchdog is not None:
                self.watchdog.tell(f"+{proc.pid}")
            return proc

    def kill(self, proc: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
        """Signal the command's process group.  Only while the command is not reaped: until then its pid, and so
        the group id, cannot be taken by another process."""
        with self.lock:
            if proc.returncode is None and proc.pid in self.procs:
                _signal_group(proc.pid, sig)

    def reap(self, proc: subprocess.Popen, wait: float) -> bool:
        """Reap a killed command (bounded: one stuck in the kernel stays registered and is retried later)."""
        give_up = time.monotonic() + wait
        pause = 0.0005
        while True:
            with self.lock:
                if proc.poll() is not None:
                    if self.procs.pop(proc.pid, None) is not None and self.watchdog is not None:
                        self.watchdog.tell(f"-{proc.pid}")
                    return True
            if time.monotonic() >= give_up:
                return False
            time.sleep(pause)
            pause = min(pause * 2, 0.05)

    def tidy(self) -> None:
        """Reap the commands that could not be reaped at once; on Linux with the subreaper, kill and reap every
        child of the exporter that is not a registered command (a descendant that escaped and was orphaned), but
        for ssh connection masters (:data:`KEPT_PROGRAMS`), which are kept until they end or the exporter stops."""
        with self.lock:
            for pid, proc in list(self.procs.items()):
                if proc.returncode is None and _exited(proc) and proc.poll() is not None:
                    del self.procs[pid]
                    if self.watchdog is not None:
                        self.watchdog.tell(f"-{pid}")
            if not self.subreaper:
                return
            keep = set(self.procs) | self.kept
            if self.watchdog is not None:
                keep.add(self.watchdog.proc.pid)
            for pid in _children() - keep - self.orphans:
                try:
                    leader = os.getpgid(pid) == pid
                    if leader and not self.stopping and len(self.kept) < MAX_KEPT and _program(pid) in KEPT_PROGRAMS:
                        self.kept.add(pid)  # its own group: one killpg at shutdown ends it and its helpers
                        if self.watchdog is not None:
                            self.watchdog.tell(f"+{pid}")
                        log.debug("msg=%r pid=%d", "keeping an ssh connection master (ControlPersist)", pid)
                        continue
                    if leader:
                        os.killpg(pid, signal.SIGKILL)  # it leads its own group (setsid): its helpers go too
                    else:
                        os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
                self.orphans.add(pid)
            for pid in _reaped(self.kept):  # a master that ended (ControlPersist ran out, or killed at shutdown)
                self.kept.discard(pid)
                if self.watchdog is not None:
                    self.watchdog.tell(f"-{pid}")
            self.orphans -= _reaped(self.orphans)

    def stop_kept(self, sig: int) -> list[int]:
        """Signal the kept ssh masters' groups (still our unreaped children: their ids cannot be anyone else's)."""
        with self.lock:
            for pid in self.kept:
                _signal_group(pid, sig)
            return list(self.kept)

    def live(self) -> int:
        with self.lock:
            return len(self.procs)


_registry = _Registry()


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass
    except PermissionError:  # the group is gone and the id taken by someone else's group: nothing of ours
        pass


def _reaped(pids: set[int]) -> set[int]:
    """Those of ``pids`` (children of ours) that have ended, reaped now (or already reaped elsewhere)."""
    done = set()
    for pid in list(pids):
        try:
            ended, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            ended = pid
        if ended:
            done.add(pid)
    return done


def _pid_exited(pid: int) -> bool:
    """Whether a child of ours has exited, without reaping it."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except (ChildProcessError, AttributeError):
        return True


def _exited(proc: subprocess.Popen) -> bool:
    """Whether the command has exited, without reaping it (its pid stays reserved, so killing its group is safe)."""
    if proc.returncode is not None:
        return True
    if hasattr(os, "waitid") and hasattr(os, "WNOWAIT"):
        try:
            return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        except ChildProcessError:
            return True
    return proc.poll() is not None  # elsewhere: reaped at once (a tiny window for a reused group id)


def _program(pid: int) -> str:
    """The program name of a process (``/proc/<pid>/comm``), '' if it cannot be read."""
    try:
        with open(f"/proc/{pid}/comm") as handle:
            return handle.read().strip()
    except OSError:
        return ""


def _children() -> set[int]:
    """The exporter's own children (Linux): from /proc/self/task/*/children, else a walk over /proc."""
    pids: set[int] = set()
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return pids
    listed = False
    for tid in tasks:
        try:
            with open(f"/proc/self/task/{tid}/children") as handle:
                pids.update(int(p) for p in handle.read().split())
            listed = True
        except (OSError, ValueError):
            continue
    if listed:
        return pids
    me = os.getpid()
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as handle:
                    text = handle.read()
                if int(text[text.rindex(b")") + 2:].split()[1]) == me:
                    pids.add(int(name))
            except (OSError, ValueError, IndexError):
                continue
    return pids


# ---- running one command -----------------------------------------------------------------------------------
def run_command(
    argv: Sequence[str],
    timeout: float,
    *,
    env: Mapping[str, str] | None = None,
    input_text: str | None = None,
    max_output: int = DEFAULT_MAX_OUTPUT,
    check: bool = False,
) -> CommandResult:
    """Run ``argv`` without a shell and return its output, decoded as UTF-8 with replacement.

    The command is given ``timeout`` seconds, less if the bounded call it runs in has less left."""
    if isinstance(argv, (str, bytes)) or not argv:
        raise TypeError("argv must be a non-empty list of arguments (no shell is used)")
    argv = tuple(str(a) for a in argv)
    name = os.path.basename(argv[0])
    scope = current_scope()
    limit, by_scope = float(timeout), False
    if scope is not None:
        remaining = scope.remaining()
        if scope.cancelled or remaining == 0:
            raise CommandTimeout(f"{name}: not started: the deadline of its run has passed")
        if remaining is not None and remaining < limit:
            limit, by_scope = remaining, True
    started = time.monotonic()
    try:
        proc = _registry.spawn(argv, env, input_text is not None)
    except FileNotFoundError:
        raise CommandNotFound(f"{argv[0]}: command not found") from None
    except PermissionError:
        raise CommandError(f"{argv[0]}: permission denied") from None
    handle = scope.on_cancel(lambda: _registry.kill(proc)) if scope is not None else None
    try:
        out, err, truncated, outcome = _communicate(proc, input_text.encode() if input_text is not None else None,
                                                    started + limit, max_output, scope)
    finally:
        if scope is not None:
            scope.forget(handle)
        _registry.kill(proc)  # at the deadline; or whatever it left running in its group
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        _registry.reap(proc, REAP_WAIT)
        _registry.tidy()
        with _registry.lock:
            stopped = proc.pid in _registry.stopped
            _registry.stopped.discard(proc.pid)
    if stopped:
        raise CommandError(f"{name}: killed: the exporter is stopping")
    if outcome == "cancelled":
        raise CommandTimeout(f"{name}: killed at the deadline of its run (abandoned after "
                             f"{time.monotonic() - started:.3g}s)")
    if outcome == "deadline":
        if by_scope:
            raise CommandTimeout(f"{name}: killed at the deadline of its run, {limit:.3g}s after it started (its "
                                 f"own timeout: {timeout:g}s)")
        raise CommandTimeout(f"{name}: timed out after {timeout:g}s")
    result = CommandResult(
        argv=argv,
        returncode=proc.returncode if proc.returncode is not None else -signal.SIGKILL,
        stdout=out.decode("utf-8", "replace"),
        stdout_bytes=bytes(out),
        stderr=err.decode("utf-8", "replace"),
        duration=time.monotonic() - started,
        truncated=truncated,
    )
    if check and result.returncode != 0:
        first = first_line(result.stderr or result.stdout)
        hint = f": {first}" if first else ""
        raise CommandError(f"{name}: exit status {result.returncode}{hint}")
    return result


def _communicate(proc: subprocess.Popen, data: bytes | None, deadline: float, cap: int,
                 scope: Scope | None) -> tuple[bytearray, bytearray, bool, str]:
    """Feed stdin and read stdout and stderr until the command has exited and both are closed, the command has
    exited ``EXIT_GRACE`` ago (something else holds the output), the deadline passes or the scope is cancelled.
    Returns the output (at most ``cap`` bytes each), whether some was dropped, and the outcome."""
    assert proc.stdout is not None and proc.stderr is not None
    buffers = {proc.stdout.fileno(): bytearray(), proc.stderr.fileno(): bytearray()}
    scratch = bytearray(_READ_SIZE)
    view = memoryview(scratch)
    truncated = False
    written = 0
    exited_at: float | None = None
    pause = 0.0005
    with selectors.DefaultSelector() as selector:
        for fd in buffers:
            os.set_blocking(fd, False)
            selector.register(fd, selectors.EVENT_READ)
        stdin_fd = proc.stdin.fileno() if proc.stdin is not None else None
        if stdin_fd is not None:
            if data:
                os.set_blocking(stdin_fd, False)
                selector.register(stdin_fd, selectors.EVENT_WRITE)
            else:
                proc.stdin.close()  # type: ignore[union-attr]
        while True:
            if scope is not None and scope.cancelled:
                return buffers[proc.stdout.fileno()], buffers[proc.stderr.fileno()], truncated, "cancelled"
            now = time.monotonic()
            if exited_at is None and _exited(proc):
                exited_at = now
            reading = any(key.events == selectors.EVENT_READ for key in selector.get_map().values())
            if not reading and exited_at is not None:
                break
            if now >= deadline:
                return buffers[proc.stdout.fileno()], buffers[proc.stderr.fileno()], truncated, "deadline"
            if exited_at is not None and now >= exited_at + EXIT_GRACE:
                break  # the command is gone; whatever still holds its output is not waited for
            wait = min(deadline - now, _POLL)
            if exited_at is not None:
                wait = min(wait, exited_at + EXIT_GRACE - now)
            if not selector.get_map():  # output closed, command still running: wait for its exit
                time.sleep(min(wait, pause))
                pause = min(pause * 2, 0.05)
                continue
            for key, _ in selector.select(max(wait, 0)):
                fd = key.fd
                if fd == stdin_fd:
                    assert data is not None
                    try:
                        written += os.write(fd, data[written:written + _READ_SIZE])
                    except BlockingIOError:
                        continue
                    except OSError:  # it closed its input: what it did not read is not needed
                        written = len(data)
                    if written >= len(data):
                        selector.unregister(fd)
                        proc.stdin.close()  # type: ignore[union-attr]
                    continue
                try:
                    n = os.readv(fd, [scratch])
                except BlockingIOError:
                    continue
                except OSError:
                    n = 0
                if n == 0:
                    selector.unregister(fd)
                    continue
                buffer = buffers[fd]
                room = cap - len(buffer)
                if room > 0:
                    buffer += view[:min(n, room)]
                if n > room:
                    truncated = True
    return buffers[proc.stdout.fileno()], buffers[proc.stderr.fileno()], truncated, "exited"


# ---- the process as a whole --------------------------------------------------------------------------------
def live_commands() -> int:
    """How many commands are running or not yet reaped."""
    return _registry.live()


def keep_masters(count: int) -> int:
    """Keep up to ``count`` ssh connection masters (a gateway probing that many hosts through ssh, core/probe.py);
    never fewer than the default.  Returns the limit now in force."""
    global MAX_KEPT
    MAX_KEPT = max(MAX_KEPT, min(int(count), MAX_KEPT_LIMIT))
    return MAX_KEPT


def shutdown(grace: float = STOP_GRACE, final: bool = True) -> int:
    """Kill every command still running: SIGTERM to each process group, up to ``grace`` seconds for them to
    exit, then SIGKILL; orphaned descendants and kept ssh connection masters too (with the subreaper).  With
    ``final`` no command starts after this (the exporter is stopping).  Returns how many commands were running."""
    with _registry.lock:
        if final:
            _registry.stopping = True
        procs = [p for p in _registry.procs.values() if p.returncode is None]
        _registry.stopped.update(p.pid for p in procs)
    for proc in procs:
        _registry.kill(proc, signal.SIGTERM)
    masters = _registry.stop_kept(signal.SIGTERM)  # ssh closes its connections on SIGTERM
    give_up = time.monotonic() + grace
    while (procs or masters) and time.monotonic() < give_up and not (
            all(_exited(p) for p in procs) and all(_pid_exited(pid) for pid in masters)):
        time.sleep(0.02)
    for proc in procs:
        _registry.kill(proc, signal.SIGKILL)
    _registry.stop_kept(signal.SIGKILL)
    for proc in procs:
        _registry.reap(proc, 0.2)
    give_up = time.monotonic() + 0.2
    while True:
        _registry.tidy()  # reaps the masters
        if not _registry.kept or time.monotonic() >= give_up:
            break
        time.sleep(0.01)
    with _registry.lock:
        watchdog = _registry.watchdog if final and not _registry.procs and not _registry.kept else None
        if watchdog is not None:
            _registry.watchdog = None
    if watchdog is not None:
        watchdog.close()  # its goodbye: nothing left for it to kill
    return len(procs)


def guard_process(watchdog: bool = True) -> dict[str, bool]:
    """Once, in the serving exporter before any command runs: make it a child subreaper (Linux), start the
    watchdog that kills the commands if the exporter is killed, and pin glibc's mmap threshold.  Returns which
    of these took effect (each is best effort; the exporter works without them)."""
    done = {"subreaper": False, "watchdog": False, "malloc": False}
    libc = _libc()
    if libc is not None and sys.platform.startswith("linux"):
        try:
            done["subreaper"] = libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
        except (AttributeError, OSError):
            pass
    if libc is not None:
        try:
            # M_MMAP_THRESHOLD (-3) at its default, 128 KiB, made fixed: large buffers are always mmap()ed and
            # returned to the system when freed (glibc otherwise raises the threshold after the first large free,
            # and 4 MiB outputs then fragment the arena of whichever thread read them).
            # M_ARENA_MAX (-8) 2: glibc gives each new thread its own arena (up to 8 per core); collectors
            # parsing floods in several threads left every arena holding freed space, and resident memory crept
            # up about 3-5 MB per 1,000 scrapes under the fault run; with 2 arenas it stays flat
            # (docs/reliability.md, bench/faults.py).  Same effect as MALLOC_ARENA_MAX=2 in the environment.
            done["malloc"] = libc.mallopt(-3, 128 * 1024) == 1 and libc.mallopt(-8, 2) == 1
        except (AttributeError, OSError):
            pass
    _registry.subreaper = done["subreaper"]
    if watchdog and _registry.watchdog is None:
        try:
            _registry.watchdog = _Watchdog()
            done["watchdog"] = True
        except OSError as exc:
            log.warning("msg=%r error=%r", "cannot start the command watchdog", str(exc))
    return done


def _libc():
    import ctypes  # only here: the serving exporter needs it once

    try:
        return ctypes.CDLL(None, use_errno=True)  # the C library the interpreter is linked with
    except OSError:
        return None
