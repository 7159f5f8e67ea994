"""A newcomer's first hour: what the command line tells, the project records (licence, changelog, version,
release procedure), the quick-start examples, and docs that say what the code does (issue 26, part 3).

The docs' shell commands themselves are run by tests/project/test_doc_commands.py.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from exporter import __version__
from exporter.core import buildinfo

from ..support import REPO

DOCS = REPO / "docs"
QUICKSTART = REPO / "examples" / "quickstart"
# sha256 of the Apache License 2.0 as the ASF publishes it (apache.org/licenses/LICENSE-2.0.txt; Debian's
# /usr/share/common-licenses/Apache-2.0 is the same file)
APACHE_2_SHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"


def _cli(*args: str, **kwargs) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MIDDLEWARE_EXPORTER_")}
    kwargs.setdefault("capture_output", True)
    return subprocess.run([sys.executable, "-m", "exporter", *args], cwd=REPO, env=env, text=True, timeout=120,
                          **kwargs)


# ---- the command line -----------------------------------------------------------------------------------------------
SERVER_ONLY = ("--web.auth-exempt-path", "--web.max-connections", "--web.max-requests", "--web.header-timeout",
               "--web.request-timeout", "--web.max-header-bytes")


@pytest.mark.parametrize("command", ["collect-once", "advise"])
def test_one_shot_commands_do_not_offer_the_servers_flags(command):
    result = _cli(command, "--help")
    assert result.returncode == 0, result.stderr
    assert "--web." not in result.stdout, result.stdout


def test_check_config_offers_what_it_validates_and_says_its_exit_status():
    result = _cli("check-config", "--help")
    assert result.returncode == 0, result.stderr
    assert "--web.config.file" in result.stdout and "--web.listen-address" in result.stdout
    assert not [flag for flag in SERVER_ONLY if flag in result.stdout], result.stdout
    status = result.stdout.partition("exit status:")[2]
    assert re.search(r"^\s+0\s+the configuration is valid", status, re.M), result.stdout
    assert re.search(r"^\s+2\s+it is not", status, re.M), result.stdout


def test_run_keeps_every_server_flag_and_check_config_refuses_them():
    assert all(flag in _cli("run", "--help").stdout for flag in SERVER_ONLY)
    refused = _cli("check-config", "--web.max-connections", "10")
    assert refused.returncode == 2 and "unrecognized arguments: --web.max-connections" in refused.stderr


@pytest.mark.parametrize("args", [["advise"], ["collect-once"], ["check-config"]], ids=lambda a: a[0])
def test_a_closed_stdout_ends_the_command_quietly(args):
    """`advise ... | head`: the reader has gone before the writer is done. Here the pipe's read end is closed
    before the command writes at all, so every run sees it (EPIPE), whatever the machine's speed."""
    read, write = os.pipe()
    os.close(read)
    try:
        result = _cli(*args, "--no-collector.process", stdout=write, stderr=subprocess.PIPE, capture_output=False)
    finally:
        os.close(write)
    assert "Traceback" not in result.stderr and "BrokenPipeError" not in result.stderr, result.stderr
    assert result.returncode == 141, result.stderr


def test_version_says_what_runs():
    result = _cli("--version")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    first = rf"middleware-exporter, version {re.escape(__version__)} \(revision: ([0-9a-f]{{40}}|unknown)\)"
    assert re.fullmatch(first, lines[0]), result.stdout
    assert any(re.fullmatch(r"\s+python version:\s+3\.\d+\.\d+.*", line) for line in lines), result.stdout
    assert any(re.fullmatch(r"\s+platform:\s+\S+/\S+", line) for line in lines), result.stdout


def test_build_info_has_the_exporters_conventional_labels():
    result = _cli("collect-once", "--no-collector.process", "--no-collector.host")
    match = re.search(r"^middleware_exporter_build_info\{(.*)\} 1\.0$", result.stdout, re.M)
    assert match, result.stdout
    labels = dict(re.findall(r'(\w+)="([^"]*)"', match[1]))
    assert set(labels) == {"version", "revision", "pythonversion"}
    assert labels["version"] == __version__
    assert re.fullmatch(r"3\.\d+\.\d+", labels["pythonversion"])
    assert labels["revision"] == buildinfo.revision()


def _git_repo(top: Path, head: str, refs: dict[str, str] | None = None, packed: str | None = None) -> Path:
    git = top / ".git"
    git.mkdir(parents=True)
    (git / "HEAD").write_text(head + "\n")
    for name, sha in (refs or {}).items():
        (git / name).parent.mkdir(parents=True, exist_ok=True)
        (git / name).write_text(sha + "\n")
    if packed is not None:
        (git / "packed-refs").write_text(packed)
    return git


def test_revision_is_read_from_the_checkout(tmp_path):
    sha, other = "a" * 40, "b" * 40
    loose = _git_repo(tmp_path / "loose", "ref: refs/heads/main", {"refs/heads/main": sha})
    assert buildinfo._commit(loose) == sha
    packed = _git_repo(tmp_path / "packed", "ref: refs/heads/main",
                       packed=f"# pack-refs with: peeled fully-peeled sorted\n{other} refs/heads/dev\n"
                              f"{sha} refs/heads/main\n")
    assert buildinfo._commit(packed) == sha
    assert buildinfo._commit(_git_repo(tmp_path / "detached", other)) == other
    assert buildinfo._commit(_git_repo(tmp_path / "unborn", "ref: refs/heads/main")) is None
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {loose}\n")
    assert buildinfo._git_dir(worktree) == loose
    assert buildinfo._git_dir(tmp_path / "nowhere") is None


# ---- project records ------------------------------------------------------------------------------------------------
def test_the_licence_pyproject_names_is_there():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["license"] == {"text": "Apache-2.0"}
    assert hashlib.sha256((REPO / "LICENSE").read_bytes()).hexdigest() == APACHE_2_SHA256


def _changelog_versions() -> list[str]:
    return re.findall(r"^## (\d+\.\d+\.\d+)\b", (REPO / "CHANGELOG.md").read_text(), re.M)


def test_one_version_everywhere():
    """docs/releasing.md: the exporter, the image, the chart's appVersion, the docs' image tags and bundle names
    and the changelog's newest heading name one version."""
    assert _changelog_versions() and _changelog_versions()[0] == __version__
    chart = yaml.safe_load((REPO / "helm" / "middleware-exporter" / "Chart.yaml").read_text())
    assert chart["appVersion"] == __version__
    assert re.search(r"^ARG VERSION=(\S+)$", (REPO / "Dockerfile").read_text(), re.M)[1] == __version__
    stale = []
    patterns = (r"middleware-exporter:(\d+\.\d+\.\d+)", r"middleware-exporter-offline-(\d+\.\d+\.\d+)",
                r"""\btag: ["']?(\d+\.\d+\.\d+)""")
    files = [REPO / "Dockerfile", *REPO.glob("*.md"), *DOCS.rglob("*.md"), *(REPO / "examples").rglob("*.y*ml"),
             *(REPO / "helm").rglob("*.yaml"), *(REPO / "helm").rglob("*.md")]
    for path in files:
        for pattern in patterns:
            for found in re.findall(pattern, path.read_text()):
                if found != __version__:
                    stale.append(f"{path.relative_to(REPO)}: {found}")
    assert not stale, f"still naming another version than {__version__}: {stale}"


def _renames() -> list[tuple[str, str]]:
    text = (REPO / "CHANGELOG.md").read_text()
    section = re.search(r"^### Renamed.*?(?=^### |^## )", text, re.M | re.S)
    assert section, "CHANGELOG.md has no Renamed section"
    return re.findall(r"`([^`]+)` → `([^`]+)`", section[0])


def _everything_served_and_recorded() -> str:
    """The generated references and the rule files: every name a user can see."""
    parts = [(DOCS / "metrics.md").read_text()]
    parts += [p.read_text() for p in (REPO / "alerts").rglob("*.yml")]
    return "\n".join(parts)


def test_the_changelog_names_every_rename_and_the_new_names_exist():
    renames = _renames()
    assert len(renames) >= 5, renames
    current = _everything_served_and_recorded()
    for old, new in renames:
        old_name, new_name = re.sub(r"\{.*", "", old), re.sub(r"\{.*", "", new)
        assert re.search(rf"(?<![\w:]){re.escape(new_name)}(?![\w:])", current), f"{new_name} is not served"
        if old_name != new_name:
            assert not re.search(rf"(?<![\w:]){re.escape(old_name)}(?![\w:])", current), f"{old_name} still exists"
    labels = {o: n for o, n in renames if o.startswith("middleware_exporter_build_info")}
    assert labels, "the build info's label rename is listed"


def test_the_release_procedure_is_documented_and_linked():
    text = (DOCS / "releasing.md").read_text()
    for step in ("git tag -a v", "docker buildx build", "--build-arg VERSION=", "helm package", "appVersion",
                 "CHANGELOG.md", "scripts/build-offline", "./scripts/test"):
        assert step in text, step
    readme = (REPO / "README.md").read_text()
    assert "(docs/releasing.md)" in readme and "(CHANGELOG.md)" in readme and "(LICENSE)" in readme


def test_readme_lists_every_docs_page():
    readme = (REPO / "README.md").read_text()
    missing = [p.name for p in sorted(DOCS.glob("*.md")) if f"(docs/{p.name})" not in readme]
    assert not missing, f"README's documentation table lacks {missing}"


def test_readme_says_what_was_verified_against_what():
    readme = (REPO / "README.md").read_text()
    section = readme.partition("## Verified against")[2]
    assert section, "README has no 'Verified against' section"
    rows = {row.split("|")[1].strip(): row for row in section.splitlines() if row.startswith("| ") and "---" not in row}
    for part in ("host, Linux", "host, text back-end", "process groups", "HPOM", "Oracle", "IBM MQ", "VHI",
                 "Domino"):
        assert part in rows, part
    # the systems never run against here say so, and Domino has nothing real
    for part in ("HPOM", "Oracle", "IBM MQ", "VHI"):
        assert re.search(r"\bno\b|never", rows[part].split("|")[3]), rows[part]
    assert "invented" in rows["Domino"]


# ---- the examples ---------------------------------------------------------------------------------------------------
QUICKSTARTS = {"oracle.yaml": "oracle", "ibmmq-rest.yaml": "ibmmq", "hpom.yaml": "hpom", "domino.yaml": "domino",
               "hpux-text.yaml": "host"}


def test_one_quick_start_per_system():
    assert {p.name for p in QUICKSTART.glob("*.yaml")} == set(QUICKSTARTS)
    mq = yaml.safe_load((QUICKSTART / "ibmmq-rest.yaml").read_text())["collectors"]["ibmmq"]["queue_managers"]
    assert len(mq) == 1 and mq[0]["backend"] == "rest"
    assert len(yaml.safe_load((QUICKSTART / "oracle.yaml").read_text())["collectors"]["oracle"]["databases"]) == 1
    text = yaml.safe_load((QUICKSTART / "hpux-text.yaml").read_text())["collectors"]["host"]
    assert text["backend"] == "text" and text["text"]["platform"] == "hpux"
    assert text["text"]["command_prefix"][0] == "ssh"


@pytest.mark.integration  # two exporter processes per example (about 6 s in all): the full suite runs it
@pytest.mark.parametrize("name", sorted(QUICKSTARTS))
def test_quick_start_passes_check_config(name, tmp_path):
    """As shipped (away from its host: --no-password-sources), and on a host where its files exist."""
    source = QUICKSTART / name
    shipped = _cli("check-config", "--no-password-sources", "--config", str(source))
    assert shipped.returncode == 0, shipped.stderr
    assert "configuration OK" in shipped.stderr
    config = yaml.safe_load(shipped.stdout)
    enabled = {collector for collector, settings in config["collectors"].items() if settings["enabled"]}
    everywhere = {"host", "process", "filesystem", "mountstats"}  # the collectors on by default
    assert QUICKSTARTS[name] in enabled and enabled <= {QUICKSTARTS[name], *everywhere}, enabled
    # on its host: every /etc/middleware-exporter file in place, password sources checked
    etc = tmp_path / "etc"
    etc.mkdir()
    text = source.read_text()
    for path in set(re.findall(r"/etc/middleware-exporter/[\w.-]+", text)):
        (etc / Path(path).name).write_text("s3cret-pw\n")
    placed = tmp_path / name
    placed.write_text(text.replace("/etc/middleware-exporter/", f"{etc}/"))
    on_host = _cli("check-config", "--config", str(placed))
    assert on_host.returncode == 0, on_host.stderr
    assert "s3cret-pw" not in on_host.stdout + on_host.stderr


def test_the_sample_configuration_adds_no_process_groups():
    """docs/deploy-server.md installs examples/config.yaml as the server's configuration."""
    result = _cli("check-config", "--config", "examples/config.yaml")
    assert result.returncode == 0, result.stderr
    assert yaml.safe_load(result.stdout)["collectors"]["process"]["extra_groups"] == []


def test_the_example_web_config_shows_the_documented_hash_command():
    command = re.search(r"^\.venv/bin/python -c .*bcrypt.*$", (DOCS / "security.md").read_text(), re.M)[0]
    assert f"#   {command}\n" in (REPO / "examples" / "web-config.yml").read_text()


# ---- docs that say what the code does -----------------------------------------------------------------------------
def _recorded() -> set[str]:
    return {name for path in (REPO / "alerts").rglob("*.yml")
            for name in re.findall(r"^\s*- record: (\S+)", path.read_text(), re.M)}


def test_the_docs_name_only_recorded_series():
    """A recording rule the docs tell you to query exists (the runbooks once kept a removed one)."""
    recorded = _recorded()
    missing = []
    for path in REPO.rglob("*.md"):
        if {".venv", "build", ".git"} & set(path.parts) or path.name == "CHANGELOG.md":
            continue
        for paragraph in re.split(r"\n\s*\n", path.read_text()):
            if re.search(r"\b(removed|renamed|gone)\b", paragraph):
                continue  # history: the name is there because it is no more
            for name in re.findall(r"\b[a-z_]+:[a-z0-9_]*(?:middleware|ibmmq)[a-z0-9_]*:[a-z0-9_]+\b(?![*\w]|\.\*)|"
                                   r"\bmiddleware:[a-z]+:[a-z0-9_]+\b(?![*\w]|\.\*)", paragraph):
                if name not in recorded and not name.endswith("_"):
                    missing.append(f"{path.relative_to(REPO)}: {name}")
    assert not missing, "\n".join(missing)


def test_alerting_doc_lists_every_rule_file_and_no_row_without_a_rule():
    text = (DOCS / "alerting.md").read_text()
    for path in sorted((REPO / "alerts").glob("*.yml")):
        assert f"`{path.name}`" in text, path.name
    rows_with_rules = {row for path in (REPO / "alerts").glob("*.yml")
                       for row in re.findall(r"guide_row: (\S+)", path.read_text())}
    claimed = re.findall(r"except ([A-Z][A-Z0-9-]+(?: and [A-Z][A-Z0-9-]+)*)[^.]*no (?:metric|rule)", text)
    wrong = [row for group in claimed for row in group.split(" and ") if row in rows_with_rules]
    assert not wrong, f"docs/alerting.md says these rows have no rule, but they have: {wrong}"


_DEMO_LINE = re.compile(r"^\s*scripts/demo(?P<args>[^#\n]*)#\s*(?P<comment>.*)$", re.M)
_DURATION = re.compile(r"(?P<minutes>\d+) scenario minutes at (?P<speed>\d+)x: (?P<real>\d+) (?P<unit>min|s)\b")


def _demo_claims(text: str) -> list[tuple[str, re.Match]]:
    return [(m["args"], _DURATION.search(m["comment"])) for m in _DEMO_LINE.finditer(text)]


def test_demo_durations_and_speeds_agree_with_the_script():
    """docs/alerting.md and scripts/demo.py say the same runs last the same: each 'N scenario minutes at Sx: T'
    is what --scenario, --minutes and --speed (or their defaults) give."""
    spec = importlib.util.spec_from_file_location("demo_script", REPO / "scripts" / "demo.py")
    demo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo)
    from tools.scenarios import Scenario

    doc = (DOCS / "alerting.md").read_text()
    usage = demo.__doc__ or ""
    claims = _demo_claims(doc) + _demo_claims(usage)
    assert len(claims) >= 6
    for args, claim in claims:
        assert claim, f"scripts/demo{args}: say how long it runs ('N scenario minutes at Sx: T min')"
        words = args.split()
        option = dict(zip(words[::2], words[1::2], strict=False))
        scenario = Scenario.load(demo.find_scenario(option.get("--scenario", demo.DEFAULT_SCENARIO)))
        minutes = float(option.get("--minutes", scenario.duration / 60))
        speed = float(option.get("--speed", 10))
        assert float(claim["minutes"]) == minutes, (args, claim[0])
        assert float(claim["speed"]) == speed, (args, claim[0])
        real = minutes * 60 / speed / (60 if claim["unit"] == "min" else 1)
        assert float(claim["real"]) == pytest.approx(real, rel=0.05), (args, claim[0])
    for line in re.findall(r"^ {4}(scripts/demo.*)$", usage, re.M):
        assert line in doc, f"scripts/demo.py's usage line is not in docs/alerting.md: {line}"


def test_advisor_doc_figures_are_the_golden_reports():
    golden = json.loads((REPO / "tests" / "golden" / "advice.json").read_text())["summary"]
    text = (DOCS / "advisor.md").read_text()
    said = re.search(r"It gives (\d+) deviations, (\d+) unknowns and (\d+) rows that follow", text)
    assert said and tuple(map(int, said.groups())) == (golden["deviates"], golden["unknown"], golden["follows"])
    marker = f'expect="{golden["deviates"]} deviate, {golden["unknown"]} unknown, {golden["follows"]} follow"'
    assert marker in text, "the doc-test marker of the estate block checks the same figures"
