"""The offline install artefact of scripts/build-offline, for hosts that cannot reach a package index.

Built once per session with the lowest Python that pyproject's requires-python allows (the first build needs the
index; later ones take the build tools and the locked wheels from their caches, so they need no network); then a
fresh virtual environment installs it with --no-index and --require-hashes through its install.sh and the installed
exporter serves /metrics, and the single-file zipapp does the same. The committed lock is checked
against pyproject's dependencies without building anything. tests/deploy/test_systemd.py reuses the same build.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import signal
import subprocess
import tarfile
import time
import tomllib
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.version import Version

from tests.support import REPO, free_port, http_get

LOCK = REPO / "packaging" / "offline" / "requirements.lock"
BUILD_DIR = REPO / "build" / "test-offline"  # build/ is ignored by git; the next session overwrites it


def lowest_supported() -> str:
    """The lower bound of requires-python ("3.11" for ">=3.11")."""
    spec = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["requires-python"]
    match = re.fullmatch(r">=\s*(\d+\.\d+)", spec.strip())
    assert match, f"requires-python {spec!r} is not a plain lower bound; update lowest_supported()"
    return match[1]


def lowest_python() -> str:
    """An interpreter of the lowest supported version outside /root (the service user must be able to run it)."""
    version = lowest_supported()
    for candidate in (f"/usr/bin/python{version}", shutil.which(f"python{version}")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    message = f"no python{version} here (Debian: apt-get install python{version} python{version}-venv)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@functools.lru_cache(maxsize=1)
def offline_build() -> Path:
    """Run scripts/build-offline once per session (about 20 s with warm caches) and return its folder."""
    out = BUILD_DIR / "offline"
    shutil.rmtree(BUILD_DIR, ignore_errors=True)
    result = subprocess.run([str(REPO / "scripts" / "build-offline"), "--python", lowest_python(), "--out", str(out)],
                            cwd=REPO, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"build-offline failed:\n{result.stdout}\n{result.stderr}"
    return out


def install(artefact: Path, prefix: Path) -> Path:
    """The artefact's install.sh into ``prefix`` with the lowest Python; returns the console script."""
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "PYTHON": lowest_python(), "HOME": str(prefix.parent),
           "PIP_NO_INDEX": "1", "PIP_CONFIG_FILE": os.devnull}
    result = subprocess.run([str(artefact / "install.sh"), str(prefix)], capture_output=True, text=True, env=env,
                            timeout=300)
    assert result.returncode == 0, f"install.sh failed:\n{result.stdout}\n{result.stderr}"
    return prefix / "bin" / "middleware-exporter"


def serve_metrics(argv: list[str], env: dict[str, str], log: Path, cwd: Path) -> tuple[int, bytes, str]:
    """Start ``argv`` on a free loopback port, wait for /readyz, fetch /metrics, stop it with SIGTERM."""
    port = free_port()
    env = {**env, "MIDDLEWARE_EXPORTER_WEB__LISTEN_ADDRESS": f"127.0.0.1:{port}"}
    with open(log, "wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                                cwd=cwd, start_new_session=True)
    try:
        deadline = time.monotonic() + 60  # the zipapp unpacks itself on its first start
        while True:
            assert proc.poll() is None, f"exited with {proc.returncode}:\n{log.read_text(errors='replace')}"
            try:
                if http_get(f"http://127.0.0.1:{port}/readyz")[0] == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, f"not ready in 60 s:\n{log.read_text(errors='replace')}"
            time.sleep(0.2)
        status, _, body = http_get(f"http://127.0.0.1:{port}/metrics")
    finally:
        proc.terminate()
        try:
            code = proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
    # uvicorn shuts down cleanly, then re-raises SIGTERM; systemd counts death by SIGTERM as a clean stop
    assert code in (0, -signal.SIGTERM), f"exit status {code} after SIGTERM:\n{log.read_text(errors='replace')}"
    return status, body, log.read_text(errors="replace")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _locked(for_this_python: bool = False) -> dict[str, Version]:
    """The lock's pins; ``for_this_python``: only those whose environment marker holds here."""
    pins = re.findall(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)(?: ; ([^\\\n]+))?", LOCK.read_text(), re.M)
    return {_norm(name): Version(version) for name, version, marker in pins
            if not (for_this_python and marker and not Marker(marker).evaluate())}


def test_lock_pins_every_dependency_with_hashes():
    locked = _locked()
    for text in tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]:
        req = Requirement(text)
        name = _norm(req.name)
        assert name in locked, f"{req.name} is not in {LOCK.name}: run scripts/build-offline --update-lock"
        assert req.specifier.contains(locked[name], prereleases=True), \
            f"{req.name}=={locked[name]} in {LOCK.name} does not satisfy {text}: scripts/build-offline --update-lock"
    entries = re.split(r"\n(?=[A-Za-z0-9])", LOCK.read_text().split("\n", 2)[2].strip())
    assert len(entries) == len(locked)
    for entry in entries:
        assert re.search(r"--hash=sha256:[0-9a-f]{64}", entry), f"no hash for {entry.splitlines()[0]}"


@pytest.mark.integration
def test_fresh_venv_installs_with_no_index_and_serves_metrics(tmp_path):
    artefact = offline_build()
    wheels = sorted(p.name for p in (artefact / "wheelhouse").iterdir())
    assert any(w.startswith("middleware_exporter-") for w in wheels)
    assert all(w.endswith(".whl") for w in wheels), f"not only wheels: {wheels}"
    lock = (artefact / "requirements.lock").read_text()
    assert re.search(r"^middleware-exporter==\S+ \\\n    --hash=sha256:[0-9a-f]{64}$", lock, re.M)
    checked = subprocess.run(["sha256sum", "--quiet", "-c", "SHA256SUMS"], cwd=artefact, capture_output=True,
                             text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    tarball = next(artefact.parent.glob("middleware-exporter-offline-*.tar.gz"))
    with tarfile.open(tarball) as tar:
        assert "offline/install.sh" in tar.getnames()

    script = install(artefact, tmp_path / "opt" / "middleware-exporter")
    venv_python = script.parent / "python"
    version = subprocess.run([str(venv_python), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    assert version == lowest_supported()
    frozen = subprocess.run([str(venv_python), "-m", "pip", "freeze", "--all"], capture_output=True, text=True,
                            check=True).stdout
    installed = {_norm(n) for n in re.findall(r"^([^=\s]+)==", frozen, re.M)}
    locked = set(_locked(for_this_python=True)) | {"middleware-exporter"}
    assert locked <= installed, f"locked but not installed: {locked - installed}"
    assert installed - locked <= {"pip", "setuptools"}, f"installed but not locked: {installed - locked}"

    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    status, body, log = serve_metrics([str(script), "run"], env, tmp_path / "venv.log", tmp_path)
    assert status == 200
    assert b"middleware_host_cpus " in body and b"middleware_scrape_collector_success" in body
    assert "starting" in log


@pytest.mark.integration
def test_zipapp_serves_metrics(tmp_path):
    artefact = offline_build()
    pyz = artefact / "middleware-exporter.pyz"
    assert pyz.read_bytes().startswith(f"#!/usr/bin/env python{lowest_supported()}\n".encode())
    # run with the lowest Python, unpacking into a private SHIV_ROOT (the default is ~/.shiv)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "SHIV_ROOT": str(tmp_path / "shiv")}
    status, body, _ = serve_metrics([lowest_python(), str(pyz), "run"], env, tmp_path / "pyz.log", tmp_path)
    assert status == 200 and b"middleware_host_cpus " in body
