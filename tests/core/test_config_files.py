"""Configured files that never answer or never end (issue 38, items 6 and 10), through real exporter processes.

A FIFO given as ``password_file`` made ``check-config`` wait for ever for a writer; a FIFO as a ``custom_metrics``
file hung ``check-config`` and ``run``, which never listened; a file on a hung FUSE mount blocked the main thread
where not even SIGKILL reaches it.  A deeply nested TOML file exited with "maximum recursion depth exceeded" and
no file name, and a YAML alias bomb ("billion laughs") kept ``check-config`` busy without end.  Each now fails at
start, promptly, naming the key or the file (core/configfiles.py).  A generous subprocess timeout is the failure
detector: before the fixes these processes did not end.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from exporter.core.configfiles import UnreadableFile, check_shape, read_file

from ..fusehang import hung_file
from ..support import REPO, free_port

WAIT = 30  # seconds: far above a prompt failure, far below "for ever"
QUIET = {"host": {"enabled": False}, "process": {"enabled": False}, "filesystem": {"enabled": False},
         "mountstats": {"enabled": False}}
TOML_METRIC = '[[metric]]\ncontext = "a"\nrequest = "select 1 as v from dual"\nmetricsdesc = { v = "h" }\n'


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MIDDLEWARE_EXPORTER_")}
    env["ORA_MONITOR_PW"] = "Tiger-Tiger-42"
    return env


def _oracle(tmp_path: Path, **settings) -> Path:
    database = {"name": "opcdb", "dsn": "opcdb.example:1521/openview", "user": "monitor"}
    database.update(settings.pop("database", {"password_env": "ORA_MONITOR_PW"}))
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"collectors": {**QUIET, "oracle": {"enabled": True, "databases": [database],
                                                                         **settings}}}))
    return config


def _exporter(command: str, *args: str) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "exporter", command, *args]
    if command == "run":
        argv += ["--web.listen-address", f"127.0.0.1:{free_port()}"]
    return subprocess.run(argv, cwd=REPO, env=_env(), capture_output=True, text=True, timeout=WAIT,
                          stdin=subprocess.DEVNULL)


def _fifo(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    os.mkfifo(path)
    return path


# ---- the reader --------------------------------------------------------------------------------------------------
def test_read_file_refuses_what_is_not_a_regular_file_without_blocking(tmp_path):
    import socket

    fifo = _fifo(tmp_path, "pw")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / "sock"))
    cases = {fifo: "a FIFO (named pipe), not a regular file", tmp_path: "a directory, not a regular file",
             Path("/dev/zero"): "a character device, not a regular file", tmp_path / "sock": "a socket, not a "
             "regular file", tmp_path / "missing": "No such file or directory"}
    for path, problem in cases.items():
        with pytest.raises(UnreadableFile) as caught:
            read_file(path, "password_file")
        assert str(caught.value) == f"cannot read password_file {path}: {problem}"
    sock.close()
    link = tmp_path / "link"  # a symbolic link to a regular file (a Kubernetes secret) is read
    (tmp_path / "real").write_bytes(b"Secret-1\n")
    link.symlink_to(tmp_path / "real")
    assert read_file(link, "password_file") == b"Secret-1\n"


def test_read_file_caps_the_size(tmp_path):
    path = tmp_path / "big.toml"
    path.write_bytes(b"x" * 1001)
    with pytest.raises(UnreadableFile, match="larger than 1000 bytes"):
        read_file(path, "custom_metrics file", max_bytes=1000)
    assert read_file(path, "custom_metrics file", max_bytes=1001) == b"x" * 1001


def test_check_shape_bounds_depth_and_values():
    deep: list = []
    node = deep
    for _ in range(100):
        node.append([])
        node = node[0]
    with pytest.raises(ValueError, match=r"^f\.yaml: nested more than 64 levels deep"):
        check_shape(deep, "f.yaml")
    laughs: list = ["lol"] * 10
    for _ in range(8):
        laughs = [laughs] * 10  # one list used ten times: what YAML aliases build
    with pytest.raises(ValueError, match=r"^f\.yaml: more than 1000000 values"):
        check_shape(laughs, "f.yaml")
    itself: list = []
    itself.append(itself)  # `&a [*a]`
    with pytest.raises(ValueError, match="nested more than"):
        check_shape(itself, "f.yaml")
    check_shape({"collectors": {"oracle": {"databases": [{"name": "a", "labels": {"x": "1"}}]}}}, "f.yaml")


# ---- item 6: a FIFO at start -------------------------------------------------------------------------------------
@pytest.mark.parametrize("command", ["check-config", "run"])
def test_a_fifo_as_password_file_fails_at_start_naming_the_key(tmp_path, command):
    fifo = _fifo(tmp_path, "oracle.pw")
    result = _exporter(command, "--config", str(_oracle(tmp_path, database={"password_file": str(fifo)})))
    assert result.returncode == 2, result.stderr
    assert f"collectors.oracle.databases.0.password_file: cannot read password_file {fifo}: a FIFO (named pipe), " \
           "not a regular file" in result.stderr


@pytest.mark.parametrize("command", ["check-config", "run"])
def test_a_fifo_as_wallet_password_file_fails_at_start_naming_the_key(tmp_path, command):
    fifo = _fifo(tmp_path, "wallet.pw")
    config = _oracle(tmp_path, database={"password_env": "ORA_MONITOR_PW", "wallet_location": str(tmp_path),
                                         "wallet_password_file": str(fifo)})
    result = _exporter(command, "--config", str(config))
    assert result.returncode == 2, result.stderr
    assert f"collectors.oracle.databases.0.wallet_password_file: cannot read wallet_password_file {fifo}: a FIFO" \
        in result.stderr


@pytest.mark.parametrize("command", ["check-config", "run"])
def test_a_fifo_as_custom_metrics_file_fails_at_start_naming_the_key(tmp_path, command):
    good = tmp_path / "good.toml"
    good.write_text(TOML_METRIC)
    fifo = _fifo(tmp_path, "custom.toml")
    result = _exporter(command, "--config", str(_oracle(tmp_path, custom_metrics=[str(good), str(fifo)])))
    assert result.returncode == 2, result.stderr
    assert f"collectors.oracle: cannot start: cannot read custom_metrics file {fifo}: a FIFO (named pipe), not a " \
           "regular file" in result.stderr


@pytest.mark.parametrize("key", ["queries_file", "extra_queries_file"])
def test_a_fifo_as_query_file_fails_at_start_naming_the_key(tmp_path, key):
    fifo = _fifo(tmp_path, "queries.yaml")
    result = _exporter("check-config", "--config", str(_oracle(tmp_path, **{key: str(fifo)})))
    assert result.returncode == 2, result.stderr
    assert f"collectors.oracle: cannot start: cannot read {key} {fifo}: a FIFO" in result.stderr


def test_a_fifo_as_the_config_file_or_web_config_file_fails_at_start(tmp_path):
    fifo = _fifo(tmp_path, "config.yaml")
    result = _exporter("check-config", "--config", str(fifo))
    assert result.returncode == 2, result.stderr
    assert f"cannot read config file {fifo}: a FIFO (named pipe), not a regular file" in result.stderr
    web = _fifo(tmp_path, "web.yaml")
    config = tmp_path / "quiet.yaml"
    config.write_text(yaml.safe_dump({"collectors": QUIET}))
    result = _exporter("run", "--config", str(config), "--web.config.file", str(web))
    assert result.returncode == 2, result.stderr
    assert f"cannot read web config file {web}: a FIFO (named pipe), not a regular file" in result.stderr


def test_a_fifo_as_a_tls_certificate_of_the_web_config_fails_at_start(tmp_path):
    cert = _fifo(tmp_path, "cert.pem")
    key = tmp_path / "key.pem"
    key.write_text("-----BEGIN PRIVATE KEY-----\n-----END PRIVATE KEY-----\n")
    web = tmp_path / "web.yaml"
    web.write_text(yaml.safe_dump({"tls_server_config": {"cert_file": str(cert), "key_file": str(key)}}))
    config = tmp_path / "quiet.yaml"
    config.write_text(yaml.safe_dump({"collectors": QUIET}))
    result = _exporter("run", "--config", str(config), "--web.config.file", str(web))
    assert result.returncode == 2, result.stderr
    assert f"{cert}: a FIFO (named pipe), not a regular file" in result.stderr and "cert_file" in result.stderr


# ---- item 6: a hung FUSE mount -------------------------------------------------------------------------------------
@pytest.mark.integration
def test_a_password_file_on_a_hung_fuse_mount_fails_at_start_naming_the_key(tmp_path):
    """check-config reports the password file on a mount whose reads never answer, naming the key, while the read
    still hangs (the main thread never waits on it).  A thread blocked in such a FUSE read cannot be killed until
    the server answers (tests/systems/filesystem/test_filesystem_fuse.py), so the process ends once the server is
    released."""
    with hung_file(tmp_path) as (secret, release):
        config = _oracle(tmp_path, database={"password_file": str(secret)})
        proc = subprocess.Popen([sys.executable, "-m", "exporter", "check-config", "--config", str(config)], cwd=REPO,
                                env=_env(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        try:
            lines: list[str] = []
            reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)  # type: ignore
            reader.start()
            # the start's look at the file gives up after its deadline (a warning: at run, such a file is left to
            # the collector); check-config's read is refused while that read hangs, and fails naming the key
            expected = f"  collectors.oracle.databases.0.password_file: cannot read password_file {secret}: an " \
                       "earlier read has not returned"
            deadline = time.monotonic() + WAIT
            while not any(line.startswith(expected) for line in lines):
                assert time.monotonic() < deadline, f"no error naming the key within {WAIT}s: {lines}"
                time.sleep(0.1)
            assert any("no answer within 5s (a hung mount?)" in line for line in lines), lines
            release()  # reported while the read still hangs; now the blocked thread, and so the process, can end
            assert proc.wait(WAIT) == 2, lines
            assert "configuration OK" not in "".join(lines)
        finally:
            release()
            if proc.poll() is None:
                proc.kill()
                proc.wait(WAIT)


# ---- item 10: nested and self-multiplying files ------------------------------------------------------------------
def test_a_deeply_nested_toml_file_fails_at_start_naming_the_file(tmp_path):
    deep = tmp_path / "deep.toml"
    deep.write_text("a = " + "[" * 100000 + "\n")
    result = _exporter("check-config", "--config", str(_oracle(tmp_path, custom_metrics=[str(deep)])))
    assert result.returncode == 2, result.stderr
    assert f"custom metrics file {deep} is not valid TOML: nested too deeply" in result.stderr
    assert "maximum recursion depth" not in result.stderr and "Traceback" not in result.stderr


def test_a_deeply_nested_yaml_config_fails_naming_the_file(tmp_path):
    for name, text in [("deep-flow.yaml", "collectors: " + "[" * 100000 + "\n"),
                       ("deep-closed.yaml", "collectors: " + "[" * 500 + "]" * 500 + "\n"),
                       ("deep-block.yaml", "".join(f"{'  ' * i}k{i}:\n" for i in range(300)))]:
        config = tmp_path / name
        config.write_text(text)
        result = _exporter("check-config", "--config", str(config))
        assert result.returncode == 2, (name, result.stderr)
        assert f"config file {config}" in result.stderr and "nested" in result.stderr, (name, result.stderr)
        assert "Traceback" not in result.stderr, (name, result.stderr)


BOMB = "".join(f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 9)}]\n" for i in range(9))


def test_a_yaml_alias_bomb_fails_promptly_naming_the_file(tmp_path):
    config = tmp_path / "bomb.yaml"
    config.write_text('a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n' + BOMB)
    result = _exporter("check-config", "--config", str(config))
    assert result.returncode == 2, result.stderr
    assert f"config file {config}: more than 1000000 values" in result.stderr
    queries = tmp_path / "queries.yaml"
    queries.write_text('a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n' + BOMB +
                       "queries: []\n")
    result = _exporter("check-config", "--config", str(_oracle(tmp_path, extra_queries_file=str(queries))))
    assert result.returncode == 2, result.stderr
    assert f"query file {queries}: more than 1000000 values" in result.stderr
