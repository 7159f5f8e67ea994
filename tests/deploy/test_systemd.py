"""The service for plain servers (packaging/systemd, packaging/sudo, examples/prometheus.yml; docs/deploy-server.md).

* ``systemd-analyze verify`` is clean for the unit alone and with each drop-in (and does complain about a broken
  unit, so the check is not vacuous);
* ``systemd-analyze security --offline=true`` rates the default unit at most 3.0, each drop-in at the figure
  docs/deploy-server.md states, and a drop-in weakens only the settings it names;
* the sysusers file creates a system user with no login shell; the sudoers snippet passes ``visudo -c`` and sudo
  allows exactly the commands the collectors run and nothing else (``sudo -l`` in a private copy of /etc);
* the exporter installed from the offline artefact (tests/deploy/test_offline.py) at the unit's path is started with the
  unit's exact ExecStart line, its user, its Environment= and EnvironmentFile=, with no capability, no_new_privs,
  a read-only file system, a private /tmp and hidden homes, and serves /metrics. systemd is not PID 1 on this
  machine, so the unit cannot be started through systemctl: a private mount namespace (unshare) provides the
  unit's paths and /etc, and setpriv the user and privilege settings. The seccomp, namespace and other kernel
  settings of the unit are checked by systemd-analyze only.
* ``promtool check config`` accepts examples/prometheus.yml, plain and with its TLS/basic-auth variant.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.deploy.test_offline import lowest_python, offline_build
from tests.support import REPO, free_port, http_get, require_binary

SYSTEMD = REPO / "packaging" / "systemd"
UNIT = SYSTEMD / "middleware-exporter.service"
DROPINS = sorted((SYSTEMD / "drop-ins").glob("*.conf"))
SUDOERS = REPO / "packaging" / "sudo" / "middleware-exporter"
DOC = REPO / "docs" / "deploy-server.md"
MAX_EXPOSURE = 3.0


def service_settings(path: Path) -> list[tuple[str, str]]:
    """The [Service] assignments of a unit file or drop-in, in order (keys may repeat)."""
    section, out = None, []
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            section = line
        elif section == "[Service]":
            key, _, value = line.partition("=")
            out.append((key.strip(), value.strip()))
    return out


def setting(key: str) -> str:
    values = [v for k, v in service_settings(UNIT) if k == key]
    assert len(values) == 1, f"{key}= appears {len(values)} times in the unit"
    return values[0]


def environment_file(text: str) -> dict[str, str]:
    """KEY=VALUE lines as systemd reads an EnvironmentFile (comments, blank lines, optional quotes); written here
    because no library reads systemd's format and the test files use only this subset."""
    env = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        key, _, value = line.partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        env[key.strip()] = value
    return env


def unit_root(tmp_path: Path, dropins: list[Path] = ()) -> Path:
    """A root for systemd-analyze --root: the system's units, ours in /etc, and an executable at ExecStart's path."""
    root = tmp_path / "root"
    shutil.rmtree(root, ignore_errors=True)
    system_units = next(p for p in (Path("/usr/lib/systemd/system"), Path("/lib/systemd/system")) if p.is_dir())
    shutil.copytree(system_units, root / "usr/lib/systemd/system", symlinks=True)
    etc = root / "etc/systemd/system"
    etc.mkdir(parents=True)
    shutil.copy(UNIT, etc / UNIT.name)
    if dropins:
        (etc / f"{UNIT.name}.d").mkdir()
        for dropin in dropins:
            shutil.copy(dropin, etc / f"{UNIT.name}.d" / dropin.name)
    binary = root / shlex.split(setting("ExecStart"))[0].lstrip("/")
    binary.parent.mkdir(parents=True)
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    return root


def analyze(*args: str) -> subprocess.CompletedProcess:
    tool = require_binary("systemd-analyze", package="systemd")
    return subprocess.run([tool, *args], capture_output=True, text=True, timeout=120)


def verify(root: Path) -> str:
    result = analyze("verify", f"--root={root}", UNIT.name)
    return (result.stdout + result.stderr).strip() + ("" if result.returncode == 0 else f" (exit {result.returncode})")


def security(root: Path) -> tuple[float, set[str]]:
    """The overall exposure and the names of the checks that fail (the ✗ lines)."""
    result = analyze("security", "--offline=true", f"--root={root}", UNIT.name)
    assert result.returncode == 0, result.stdout + result.stderr
    match = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", result.stdout)
    assert match, result.stdout
    failing = {m.split()[0] for m in re.findall(r"^✗ (\S+)", result.stdout, re.M)}
    return float(match[1]), failing


def documented_exposures() -> dict[str, float]:
    """docs/deploy-server.md's table: | `file` | ... | exposure |."""
    rows = re.findall(r"^\| `([\w.-]+\.(?:service|conf))` \|.*\| (\d+\.\d) \|$", DOC.read_text(), re.M)
    return {name: float(value) for name, value in rows}


# ---- systemd-analyze -------------------------------------------------------------------------------------------

def test_unit_verifies_clean_and_a_broken_one_does_not(tmp_path):
    root = unit_root(tmp_path)
    assert verify(root) == ""
    unit = root / "etc/systemd/system" / UNIT.name
    unit.write_text(unit.read_text().replace("ProtectSystem=strict", "ProtectSystem=sometimes"))
    assert "Failed to parse protect system value" in verify(root)


@pytest.mark.parametrize("dropin", DROPINS, ids=lambda p: p.name)
def test_each_dropin_verifies_clean(tmp_path, dropin):
    assert verify(unit_root(tmp_path, [dropin])) == ""


def test_default_unit_exposure_at_most_3(tmp_path):
    exposure, _ = security(unit_root(tmp_path))
    assert exposure <= MAX_EXPOSURE, f"exposure {exposure} > {MAX_EXPOSURE}"
    assert documented_exposures().get(UNIT.name) == exposure, \
        f"docs/deploy-server.md should state the measured exposure {exposure} for {UNIT.name}"


# A drop-in's own settings explain the checks it makes fail; User=root also makes RemoveIPC= moot (it only
# removes IPC objects of an unprivileged user).
CONSEQUENCES = {"User": {"User", "DynamicUser", "RemoveIPC"}}


@pytest.mark.parametrize("dropin", DROPINS, ids=lambda p: p.name)
def test_dropin_weakens_only_what_it_names(tmp_path, dropin):
    _, base_failing = security(unit_root(tmp_path))
    exposure, failing = security(unit_root(tmp_path, [dropin]))
    named = set()
    for key, _ in service_settings(dropin):
        named |= CONSEQUENCES.get(key, {key})
    for check in failing - base_failing:
        directive = re.split(r"[=/]", check)[0]
        assert directive in named, f"{dropin.name} makes {check} fail without setting {directive}="
    assert documented_exposures().get(dropin.name) == exposure, \
        f"docs/deploy-server.md should state the measured exposure {exposure} for {dropin.name}"


def test_every_dropin_setting_says_why():
    for dropin in DROPINS:
        lines = dropin.read_text().splitlines()
        for number, line in enumerate(lines):
            if re.match(r"^[A-Z]\w+=", line):
                before = [text for text in lines[:number] if not re.match(r"^[A-Z]\w+=", text)]
                assert before and before[-1].startswith("#"), f"{dropin.name}:{number + 1}: {line} has no reason"


# ---- user, sudo, Prometheus ---------------------------------------------------------------------------------

def test_sysusers_creates_a_system_user_without_login(tmp_path):
    tool = require_binary("systemd-sysusers", package="systemd")
    (tmp_path / "etc").mkdir()
    result = subprocess.run([tool, f"--root={tmp_path}", str(SYSTEMD / "middleware-exporter.sysusers")],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    entry = next(line for line in (tmp_path / "etc/passwd").read_text().splitlines()
                 if line.startswith(setting("User") + ":"))
    _, _, uid, gid, _, home, shell = entry.split(":")
    assert int(uid) < 1000 and shell == "/usr/sbin/nologin"
    assert f"{setting('Group')}:x:{gid}:" in (tmp_path / "etc/group").read_text()


def test_sudoers_snippet_parses():
    visudo = require_binary("visudo", package="sudo")
    result = subprocess.run([visudo, "-c", "-f", str(SUDOERS)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_prometheus_example_is_valid_plain_and_with_tls(tmp_path):
    promtool = require_binary("promtool")
    text = (REPO / "examples" / "prometheus.yml").read_text()
    assert re.search(r"^  - job_name: middleware$", text, re.M), "the rules select job=~\"middleware.*\""
    plain = tmp_path / "plain.yml"
    plain.write_text(text)
    # the commented TLS/basic-auth job replacing the plain one, with its files present
    block = re.search(r"^  # - job_name: middleware\n(?:  #.*\n)+", text, re.M)[0]
    tls_job = re.sub(r"^  # ?", "  ", block, flags=re.M)
    (tmp_path / "ca.crt").write_text("")
    (tmp_path / "pw").write_text("secret\n")
    tls_job = tls_job.replace("/etc/prometheus/middleware-ca.crt", str(tmp_path / "ca.crt"))
    tls_job = tls_job.replace("/etc/prometheus/middleware-exporter.pw", str(tmp_path / "pw"))
    head = text[:text.index("  - job_name: middleware")]
    tls = tmp_path / "tls.yml"
    tls.write_text(head + tls_job)
    for config in (plain, tls):
        result = subprocess.run([promtool, "check", "config", str(config)], capture_output=True,
                                text=True)
        assert result.returncode == 0, f"{config.name}: {result.stdout}{result.stderr}"
    assert "scheme: https" in tls.read_text() and "basic_auth" in tls.read_text()


# ---- the exporter started as the unit starts it ---------------------------------------------------------------

# Run inside `unshare --mount`: nothing below is visible outside the namespace.
SANDBOX = r"""
set -eu
work=$1; shift
mkdir -p "$work/etc-up" "$work/etc-work"
mount -t overlay overlay -o "lowerdir=/etc,upperdir=$work/etc-up,workdir=$work/etc-work" /etc
mount -t tmpfs tmpfs /opt
# the installation as docs/deploy-server.md describes it
systemd-sysusers "$SYSUSERS"
install -d -m 0755 /etc/middleware-exporter
install -m 0640 -g middleware-exporter "$work/config.yaml" /etc/middleware-exporter/config.yaml
install -m 0600 "$work/environment" /etc/middleware-exporter/environment
PYTHON="$LOWEST_PYTHON" "$ARTEFACT/install.sh" /opt/middleware-exporter >/dev/null
# sudo: the snippet, a queue manager user and fake vendor programs at the paths it names
useradd --system --no-create-home --shell /usr/sbin/nologin mqm
install -m 0440 "$SUDOERS" /etc/sudoers.d/middleware-exporter
for p in /opt/OV/bin/OpC/opcsv /opt/OV/bin/ovc /opt/mqm/bin/dspmq /opt/mqm/bin/runmqsc; do
  install -D -m 0755 /dev/null "$p"
done
check() {  # expected exit status, run-as user, command...
  want=$1 as=$2; shift 2
  if sudo -l -U middleware-exporter -u "$as" "$@" >/dev/null 2>&1; then got=0; else got=1; fi
  [ "$got" = "$want" ] || { echo "sudo -l -u $as $*: exit $got, expected $want" >&2; exit 3; }
}
check 0 root /opt/OV/bin/OpC/opcsv -status
check 0 root /opt/OV/bin/ovc -status
check 0 mqm /opt/mqm/bin/dspmq -n -m QM1
check 0 mqm /opt/mqm/bin/runmqsc -e QM1
check 1 root /opt/OV/bin/OpC/opcsv -stop
check 1 root /opt/OV/bin/ovc -kill
check 1 root /opt/mqm/bin/runmqsc -e QM1
check 1 mqm /opt/mqm/bin/runmqsc -e QM2
check 1 mqm /opt/mqm/bin/runmqsc -e QM1 -c
check 1 root /bin/sh
# ProtectSystem=strict: every mount read-only (the unit protects /proc, /sys and /dev by other settings)
grep -o '^[0-9]* [0-9]* [^ ]* [^ ]* [^ ]*' /proc/self/mountinfo | cut -d' ' -f5 | sort -u | while read -r m; do
  case "$m" in /proc*|/sys*|/dev*) continue ;; esac
  mount -o remount,bind,ro "$m" 2>/dev/null || true
done
# PrivateTmp=yes, ProtectHome=yes
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /var/tmp
for d in /home /root /run/user; do [ -d "$d" ] && mount -t tmpfs -o mode=000 tmpfs "$d"; done
echo sandbox-ready >&2
exec "$@"
"""


def _sandbox_available() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root (a throwaway system user and a private mount namespace); CI runs as root")
    for tool in ("unshare", "setpriv", "systemd-sysusers", "useradd", "sudo"):
        require_binary(tool, package={"systemd-sysusers": "systemd", "useradd": "passwd"}.get(tool, tool))
    probe = subprocess.run(["unshare", "--mount", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("unshare --mount is not permitted here")


@pytest.mark.integration
def test_exporter_runs_as_the_unit_starts_it(tmp_path):
    _sandbox_available()
    artefact = offline_build()
    work = tmp_path / "work"
    work.mkdir()
    port = free_port()
    (work / "config.yaml").write_text((REPO / "examples" / "config.yaml").read_text())
    # the environment file as an operator writes it: a secret and a setting, with a comment and quotes
    (work / "environment").write_text(
        "# secrets for the collectors\n"
        'MQ_MONITOR_PASSWORD="not-used-here"\n'
        f"MIDDLEWARE_EXPORTER_WEB__LISTEN_ADDRESS=127.0.0.1:{port}\n")

    user, group = setting("User"), setting("Group")
    env_file = setting("EnvironmentFile").lstrip("-")
    assert env_file == "/etc/middleware-exporter/environment"
    env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin", "HOME": "/", "USER": user,
           "LOGNAME": user, "SHELL": "/usr/sbin/nologin"}  # what systemd gives a service with User=
    for key, value in service_settings(UNIT):
        if key == "Environment":
            env.update(dict(item.split("=", 1) for item in shlex.split(value)))
    env.update(environment_file((work / "environment").read_text()))
    no_capability = setting("CapabilityBoundingSet") == "" and setting("NoNewPrivileges") == "yes"
    assert no_capability
    argv = ["env", "-i", *(f"{k}={v}" for k, v in env.items()),
            "setpriv", f"--reuid={user}", f"--regid={group}", "--init-groups", "--no-new-privs",
            "--bounding-set=-all", "--inh-caps=-all", "--",
            *shlex.split(setting("ExecStart"))]  # exactly the unit's line: the sandbox puts its paths in place
    sandbox_env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}  # the host's pip settings
    sandbox_env |= {"SYSUSERS": str(SYSTEMD / "middleware-exporter.sysusers"),
                    "LOWEST_PYTHON": lowest_python(), "ARTEFACT": str(artefact), "SUDOERS": str(SUDOERS)}
    log = tmp_path / "exporter.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "bash", "-c", SANDBOX,
                                 "sandbox", str(work), *argv], stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=sandbox_env, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, f"exited with {proc.returncode}:\n{log.read_text(errors='replace')}"
            try:
                if http_get(f"http://127.0.0.1:{port}/readyz")[0] == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, f"not ready in 120 s:\n{log.read_text(errors='replace')}"
            time.sleep(0.3)
        status, _, body = http_get(f"http://127.0.0.1:{port}/metrics")
        assert status == 200
        assert b"middleware_host_cpus " in body and b'middleware_process_group_processes{' in body
        # the process that answered: the unit's user, no capability, no way to gain one
        fields = dict(line.split(":", 1) for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines())
        passwd = (work / "etc-up" / "passwd").read_text()
        uid = next(line.split(":")[2] for line in passwd.splitlines() if line.startswith(user + ":"))
        assert fields["Uid"].split()[:2] == [uid, uid] and uid != "0"
        assert fields["NoNewPrivs"].strip() == "1"
        assert int(fields["CapBnd"], 16) == 0 and int(fields["CapEff"], 16) == 0
        cmdline = Path(f"/proc/{proc.pid}/cmdline").read_bytes().split(b"\0")
        assert b"/opt/middleware-exporter/bin/middleware-exporter" in cmdline
    finally:
        proc.terminate()
        try:
            code = proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
    # uvicorn shuts down cleanly, then re-raises SIGTERM; systemd counts death by SIGTERM as a clean stop
    assert code in (0, -signal.SIGTERM), f"exit status {code} after SIGTERM:\n{log.read_text(errors='replace')}"
    text = log.read_text(errors="replace")
    assert "sandbox-ready" in text and "not-used-here" not in text
