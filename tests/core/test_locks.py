"""The dependency locks, checked without the network; their refresh against the index is an opt-in check.

packaging/image/*.lock (the container image, tests/deploy/test_dockerfile.py replays its installs) and
packaging/offline/requirements.lock (scripts/build-offline) are written by scripts/refresh-locks, a release step.
Offline, from the files in the repository alone:

- each lock covers exactly pyproject.toml's requirements: every dependency (and extra) pinned within its
  specifier, and every pin reached from them through the lock's `# via` lines (nothing stray, nothing missing);
- every pin has, among its hashes, a binary wheel for each platform the lock serves (the image: CPython 3.11 on
  Debian 12's glibc 2.36, amd64 and arm64; the offline artefact: CPython 3.11 on glibc 2.17 or later), read from
  the folder's lock-files.sha256 (the file name of every hash, written by scripts/refresh-locks from the index).

`network` (opt-in, docs/testing.md): scripts/refresh-locks --check regenerates every lock from the date in its
header and compares, for x86_64 and aarch64 too.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.tags import Tag, compatible_tags, cpython_tags
from packaging.utils import canonicalize_name, parse_sdist_filename, parse_wheel_filename
from packaging.version import Version

from tests.deploy.test_dockerfile import BUILD_LOCK, MQ_LOCK, RUNTIME_LOCK, parse_lock
from tests.support import REPO

OFFLINE_LOCK = REPO / "packaging" / "offline" / "requirements.lock"
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
SELF = "middleware-exporter (pyproject.toml)"  # how uv names the project in `# via`


def _manylinux(glibc_minor: int, arch: str) -> list[str]:
    """The platform tags pip accepts on a glibc 2.<glibc_minor> Linux of ``arch`` (newest first)."""
    tags = [f"manylinux_2_{minor}_{arch}" for minor in range(glibc_minor, 4, -1)]
    legacy = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}
    return tags + [f"{name}_{arch}" for minor, name in legacy.items() if minor <= glibc_minor]


def supported_tags(python: tuple[int, int], glibc_minor: int, arch: str) -> frozenset[Tag]:
    platforms = _manylinux(glibc_minor, arch)
    return frozenset([*cpython_tags(python, platforms=platforms),
                      *compatible_tags(python, f"cp{python[0]}{python[1]}", platforms=platforms)])


@dataclass(frozen=True)
class Target:
    name: str
    tags: frozenset[Tag]
    environment: dict[str, str]  # for the lock's environment markers


def _target(name: str, glibc_minor: int, arch: str) -> Target:
    env = {"implementation_name": "cpython", "platform_python_implementation": "CPython", "sys_platform": "linux",
           "platform_system": "Linux", "platform_machine": arch, "python_version": "3.11",
           "python_full_version": "3.11.0", "os_name": "posix"}
    return Target(name, supported_tags((3, 11), glibc_minor, arch), env)


# The image's base (python:3.11-slim-bookworm): Debian 12, glibc 2.36; the documented build is linux/amd64+arm64.
IMAGE = (_target("image linux/amd64", 36, "x86_64"), _target("image linux/arm64", 36, "aarch64"))
# scripts/build-offline: CPython 3.11 (the lowest supported), glibc 2.17 or later (its default floor).
OFFLINE = (_target("offline x86_64, glibc 2.17", 17, "x86_64"), _target("offline aarch64, glibc 2.17", 17, "aarch64"))
# The lock -> the platforms it serves, and the pins that serve fewer of them (with the reason in docs).
SERVES = {
    BUILD_LOCK: (IMAGE, {}),
    RUNTIME_LOCK: (IMAGE, {}),
    # docs/deployment.md: WITH_MQ=true is linux/amd64 only, ibmmq publishes no arm64 wheel
    MQ_LOCK: (IMAGE, {"ibmmq": {"image linux/amd64"}}),
    OFFLINE_LOCK: (OFFLINE, {}),
}


def _roots(lock) -> list[Requirement]:
    """The requirements a lock is compiled from (scripts/refresh-locks)."""
    if lock == BUILD_LOCK:
        return [Requirement(r) for r in PROJECT["build-system"]["requires"]]
    extras = ["mq"] if lock == MQ_LOCK else []
    optional = PROJECT["project"]["optional-dependencies"]
    texts = PROJECT["project"]["dependencies"] + [r for extra in extras for r in optional[extra]]
    return [Requirement(r) for r in texts]


def _via(lock) -> dict[str, set[str]]:
    """name -> the names in its `# via` lines (``SELF`` for pyproject.toml)."""
    via: dict[str, set[str]] = {}
    current = None
    for raw in lock.read_text().splitlines():
        pin = re.match(r"([A-Za-z0-9][A-Za-z0-9._-]*)==", raw)
        if pin:
            current = canonicalize_name(pin[1])
            via[current] = set()
            continue
        comment = re.match(r"\s+#\s+(?:via\s*)?(.*)$", raw)
        if current and comment and comment[1].strip():
            via[current].add(comment[1].strip())
    return via


def _inventory(lock) -> dict[str, str]:
    """sha256 -> file name, from the lock's folder's lock-files.sha256."""
    path = lock.parent / "lock-files.sha256"
    assert path.is_file(), f"{path.relative_to(REPO)} missing: run scripts/refresh-locks"
    files = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if line.startswith("#"):
            continue
        match = re.fullmatch(r"([0-9a-f]{64})  (\S+)", line)
        assert match, f"{path.name}:{number}: not `<sha256>  <file name>`"
        files[match[1]] = match[2]
    return files


LOCKS = list(SERVES)


@pytest.mark.parametrize("lock", LOCKS, ids=lambda p: str(p.relative_to(REPO / "packaging")))
def test_lock_covers_exactly_pyprojects_requirements(lock):
    pins = parse_lock(lock)
    roots = _roots(lock)
    where = lock.relative_to(REPO)
    for requirement in roots:
        pin = pins.get(canonicalize_name(requirement.name))
        assert pin, f"{requirement} (pyproject.toml) is not in {where}: run scripts/refresh-locks"
        assert requirement.specifier.contains(Version(pin.version), prereleases=True), \
            f"{pin.name}=={pin.version} in {where} does not satisfy {requirement}: run scripts/refresh-locks"
    assert "middleware-exporter" not in pins, f"{where}: the lock holds the dependencies, not the exporter"
    if lock == BUILD_LOCK:  # compiled from standard input: no `# via`; nothing but the build requirements
        assert set(pins) == {canonicalize_name(r.name) for r in roots}, f"{where}: {sorted(pins)}"
        return
    via = _via(lock)
    assert set(via) == set(pins)
    root_names = {canonicalize_name(r.name) for r in roots}
    for name, parents in via.items():
        assert parents, f"{where}: {name} says nothing on why it is there (`# via`)"
        required = "requires" if name in root_names else "does not require"
        assert (SELF in parents) == (name in root_names), \
            f"{where}: {name} via {sorted(parents)}, but pyproject.toml {required} it: run scripts/refresh-locks"
        stray = {p for p in parents - {SELF} if canonicalize_name(p) not in pins}
        assert not stray, f"{where}: {name} is there for {sorted(stray)}, which the lock does not pin"
    # Every pin is reached from pyproject.toml through the `# via` edges.
    reached, frontier = set(), set(root_names)
    children: dict[str, set[str]] = {}
    for name, parents in via.items():
        for parent in parents - {SELF}:
            children.setdefault(canonicalize_name(parent), set()).add(name)
    while frontier:
        name = frontier.pop()
        reached.add(name)
        frontier |= children.get(name, set()) - reached
    assert reached == set(pins), f"{where}: pinned but required by nothing: {sorted(set(pins) - reached)}"


@pytest.mark.parametrize("lock", LOCKS, ids=lambda p: str(p.relative_to(REPO / "packaging")))
def test_every_pin_has_a_wheel_for_each_platform_the_lock_serves(lock):
    targets, fewer = SERVES[lock]
    files = _inventory(lock)
    where = lock.relative_to(REPO)
    markers = dict(re.findall(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==\S+ ; ([^\\\n]+?)\s*\\?$", lock.read_text(), re.M))
    markers = {canonicalize_name(name): Marker(text) for name, text in markers.items()}
    checked = 0
    for name, pin in parse_lock(lock).items():
        wheels = []
        for digest in pin.hashes:
            assert digest in files, f"{where}: {name}=={pin.version}: sha256 {digest} has no file in " \
                                    f"lock-files.sha256: run scripts/refresh-locks"
            filename = files[digest]
            if filename.endswith(".whl"):
                wheel_name, version, _, tags = parse_wheel_filename(filename)
                wheels.append(tags)
            else:
                wheel_name, version = parse_sdist_filename(filename)
            assert (wheel_name, version) == (name, Version(pin.version)), f"{where}: {filename} is not {name}"
        for target in targets:
            if name in markers and not markers[name].evaluate(target.environment):
                continue
            if name in fewer and target.name not in fewer[name]:
                continue
            assert any(tags & target.tags for tags in wheels), \
                f"{where}: {name}=={pin.version} has no wheel for {target.name} among its hashes"
            checked += 1
    assert checked >= len(parse_lock(lock)), "every pin checked for at least one platform"


@pytest.mark.parametrize("folder", sorted({lock.parent for lock in LOCKS}), ids=lambda p: p.name)
def test_lock_files_list_names_only_the_locks_hashes(folder):
    hashes = set().union(*(pin.hashes for lock in LOCKS if lock.parent == folder
                           for pin in parse_lock(lock).values()))
    listed = set(_inventory(next(lock for lock in LOCKS if lock.parent == folder)))
    assert listed == hashes, f"{folder.name}/lock-files.sha256 is out of step with the locks: run scripts/refresh-locks"


def test_the_supported_tags_are_what_pip_takes_on_such_a_host():
    """The tag sets above, against names of real wheels (e.g. pydantic-core's and cryptography's)."""
    amd64_236, arm64_217 = IMAGE[0].tags, OFFLINE[1].tags
    for filename, on_image_amd64, on_offline_arm64 in (
        ("pydantic_core-2.50.5-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", True, False),
        ("cryptography-50.0.2-cp311-abi3-manylinux_2_28_aarch64.whl", False, False),  # 2.28 > the 2.17 floor
        ("cryptography-50.0.2-cp311-abi3-manylinux2014_aarch64.manylinux_2_17_aarch64.whl", False, True),
        ("psutil-7.2.2-cp36-abi3-manylinux2010_x86_64.manylinux_2_12_x86_64.whl", True, False),
        ("ibmmq-2.1.2-cp39-abi3-manylinux_2_28_x86_64.whl", True, False),
        ("bcrypt-5.0.0-cp39-abi3-musllinux_1_2_x86_64.whl", False, False),  # musl, not glibc
        ("pyyaml-6.0.3-cp312-cp312-manylinux_2_17_x86_64.whl", False, False),  # another Python
        ("annotated_doc-0.0.7-py3-none-any.whl", True, True),
    ):
        tags = parse_wheel_filename(filename)[3]
        assert (bool(tags & amd64_236), bool(tags & arm64_217)) == (on_image_amd64, on_offline_arm64), filename


@pytest.mark.network
def test_locks_are_what_refresh_locks_gives_from_the_index():
    """The release step's own check: each lock regenerated from its header's date (and for x86_64 and aarch64)
    gives the same pins and hashes, and lock-files.sha256 names the index's files. Needs the package index."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "VIRTUAL_ENV"))}
    result = subprocess.run([sys.executable, str(REPO / "scripts" / "refresh-locks"), "--check"], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, result.stderr[-4000:]
