"""Helpers the tests share: the repository's paths, stand-in commands, free ports, HTTP, the real processes a test
starts (an exporter, harmless programs under chosen names), and collecting a collector once.  Imported by the
tests as a library (``from ..support import collect``); tests/conftest.py holds only pytest's hooks and the
fixtures built on these helpers."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent

# Only the fixtures several test folders share (tests/fixtures/README.md); a folder's own fixtures sit beside its
# tests, in its fixtures/ sub-folder.
FIXTURES = REPO / "tests" / "fixtures"


def system_fixtures(system: str) -> Path:
    """tests/systems/<system>/fixtures: a system's fixtures, for the tests outside its folder that feed on them."""
    return REPO / "tests" / "systems" / system / "fixtures"


def shell_script(path: Path, body: str) -> str:
    """An executable /bin/sh script at ``path`` running ``body`` (a stand-in for a system's command); its path."""
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def http_get(url: str, headers: dict[str, str] | None = None, timeout: float = 5.0):
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def require_binary(*names: str, package: str | None = None) -> str:
    """The path of the first binary found; in CI a missing one fails the test instead of skipping it."""
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    package = package or ("prometheus" if "promtool" in names else names[0])
    message = f"{names[0]} not installed (apt-get install {package})"
    if os.environ.get("CI"):
        pytest.fail(message + "; CI must install it (see scripts/test)")
    pytest.skip(message)


class RunningExporter:
    def __init__(self, proc: subprocess.Popen, port: int, log_path: Path) -> None:
        self.proc = proc
        self.port = port
        self.base = f"http://127.0.0.1:{port}"
        self.log_path = log_path

    def get(self, path: str, headers: dict[str, str] | None = None):
        return http_get(self.base + path, headers)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


def exporter_starter(tmp_path):
    """Start ``python -m exporter run`` as a real process on a loopback port; stopped after the test."""
    started: list[RunningExporter] = []

    def start(*args: str, config: str | None = None, env: dict[str, str] | None = None,
              wait_ready: bool = True) -> RunningExporter:
        port = free_port()
        argv = [sys.executable, "-m", "exporter", "run", "--web.listen-address", f"127.0.0.1:{port}", *args]
        if config is not None:
            path = tmp_path / f"config-{port}.yaml"
            path.write_text(config)
            argv += ["--config", str(path)]
        log_path = tmp_path / f"exporter-{port}.log"
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("MIDDLEWARE_EXPORTER_")}
        full_env.update(env or {})
        with open(log_path, "wb") as log_file:
            proc = subprocess.Popen(argv, cwd=REPO, stdout=log_file, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, env=full_env)
        running = RunningExporter(proc, port, log_path)
        started.append(running)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise AssertionError(f"exporter exited with {proc.returncode}:\n{running.log()}")
            try:
                status, _, _ = running.get("/readyz" if wait_ready else "/healthz")
                if status == 200:
                    return running
            except OSError:
                pass
            time.sleep(0.1)
        raise AssertionError(f"exporter not ready within 30 s:\n{running.log()}")

    yield start
    for running in started:
        stop_process(running.proc)


def stop_process(proc: subprocess.Popen, timeout: float = 10.0) -> None:
    """SIGTERM, SIGKILL if it has not ended within ``timeout`` seconds, reaped either way (nothing if it had ended)."""
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


SLEEP = shutil.which("sleep") or "/bin/sleep"


PYTHON = os.path.realpath(sys.executable)


def spawner(tmp_path):
    """Start a harmless program under a chosen process name (a copy of sleep, or a symlink to Python)."""
    procs: list[subprocess.Popen] = []
    bindir = tmp_path / "spawned"
    bindir.mkdir(exist_ok=True)

    def start(name: str, *args: str, python_code: str | None = None) -> subprocess.Popen:
        path = bindir / name
        if python_code is None:
            if not path.exists():
                shutil.copy(SLEEP, path)
            argv = [str(path), *(args or ("120",))]
        else:
            if not path.exists():
                path.symlink_to(PYTHON)
            argv = [str(path), "-c", python_code, *args]
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL)
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        proc.kill()
        proc.wait()


def running_under(directory: Path) -> list[str]:
    """``pid: command line`` of every process whose command line names a file under ``directory`` (a test's
    stand-in scripts and the sleep they started): what a killed command must not leave behind."""
    return naming(f"{directory}/")


def naming(*texts: str) -> list[str]:
    """``pid: command line`` of every live process whose command line holds one of ``texts``."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if any(text in cmdline for text in texts):
            found.append(f"{pid}: {cmdline}")
    return found


def wait_for_comm(proc: subprocess.Popen, name: str) -> None:
    deadline = time.monotonic() + 60  # a backstop: the exec takes milliseconds, more on a loaded machine
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{proc.pid}/comm") as handle:
                if handle.read().strip() == name:
                    return
        except FileNotFoundError:
            pass
        time.sleep(0.02)
    raise AssertionError(f"pid {proc.pid} never showed comm {name}")


def burn_cpu_code(seconds: float) -> str:
    """Python code for a spawned process: use ``seconds`` of CPU time (user mode mostly), create the file named by
    its first argument, then sleep. CPU time, not wall time: under load the burst takes longer, never less CPU."""
    return ("import sys, time\n"
            f"while time.process_time() < {seconds}:\n"
            "    sum(range(20000))\n"
            "open(sys.argv[1], 'w').close()\n"
            "time.sleep(120)\n")


def wait_for_file(path: Path, proc: subprocess.Popen, limit: float = 300.0) -> None:
    """Wait until ``proc`` has created ``path`` (a burst of burn_cpu_code is over); the limit is only a backstop."""
    deadline = time.monotonic() + limit
    while not path.exists():
        assert proc.poll() is None, f"pid {proc.pid} exited with {proc.returncode} before creating {path}"
        assert time.monotonic() < deadline, f"pid {proc.pid} did not create {path} within {limit} s"
        time.sleep(0.02)


def proc_cpu_ticks(*pids: int) -> tuple[int, int]:
    """utime and stime (clock ticks) of ``pids`` summed, read from /proc/<pid>/stat directly."""
    user = system = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rpartition(")")[2].split()
        user, system = user + int(fields[11]), system + int(fields[12])
    return user, system


def collect(collector) -> tuple[dict, Any]:
    """Run a collector once, as the scheduler does; samples keyed by (name, sorted label items)."""
    from exporter.core.metrics import MetricBatch

    batch = MetricBatch(collector.specs(), max_series=collector.settings.max_series,
                        const_labels=collector.const_labels())
    collector.collect(batch)
    samples = {}
    for family in batch.families():
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples, batch


def plain_samples(collector) -> dict[tuple, float]:
    """Run a collector once in a plain batch (no max_series, no constant labels); samples keyed by (name, sorted
    label items), labels with an empty value left out (the process-group tests' keys)."""
    from exporter.core.metrics import MetricBatch

    batch = MetricBatch(collector.specs())
    collector.collect(batch)
    return {(sample.name, tuple(sorted((k, v) for k, v in sample.labels.items() if v))): sample.value
            for family in batch.families() for sample in family.samples}


def install_fake_oracledb(monkeypatch, fixture: Path, log: Path) -> None:
    """Route `import oracledb` to the DB-API stand-in (tests/fakes/oracledb) answering from ``fixture``."""
    import importlib

    monkeypatch.setenv("FAKE_ORACLEDB_FIXTURE", str(fixture))
    monkeypatch.setenv("FAKE_ORACLEDB_LOG", str(log))
    monkeypatch.syspath_prepend(str(REPO / "tests" / "fakes"))
    # Undone at teardown whatever was loaded before: an absent driver is absent again, a real one comes back as it
    # was (re-importing the real driver beside its stale submodules fails with a circular-import error).
    for name in {"oracledb", "oracledb.sqltypes"} | {n for n in sys.modules if n.startswith("oracledb.")}:
        if name not in sys.modules:
            monkeypatch.setitem(sys.modules, name, None)
        monkeypatch.delitem(sys.modules, name)
    assert importlib.import_module("oracledb").__version__ == "0.0-fake"



def real_oracle_fixture(name: str) -> Path:
    """A genuine Oracle capture (SOURCE.md beside it)."""
    return system_fixtures("oracle") / "real" / name
