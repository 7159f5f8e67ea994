"""Helpers shared by the bench/ scripts (each script is run as ``python bench/<name>.py``, so this folder is on
``sys.path`` and ``from _common import ...`` finds this module)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from pathlib import Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def node_exporter_binary(given: str | None) -> str | None:
    """The node_exporter to measure against: ``given`` (--node-exporter), else Debian's prometheus-node-exporter or
    a node_exporter on PATH; None when there is none."""
    return given or shutil.which("prometheus-node-exporter") or shutil.which("node_exporter")


def stop_process(proc: subprocess.Popen, timeout: float = 10.0) -> None:
    """SIGTERM, SIGKILL if it has not ended within ``timeout`` seconds, reaped either way (nothing if it had ended)."""
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def cpu_seconds(pid: int) -> float:
    """utime + stime of the whole process (all threads, including exited ones), in seconds, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()  # fields[0] is field 3 (state)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
