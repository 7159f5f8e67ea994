"""A sentinel password fed through every error path the exporter has must come out nowhere: not in stdout or
stderr, the log (logfmt and JSON), /metrics, /api/v1/collectors, the landing page or /readyz.

Paths: the config file (a block the model rejects, wrong types, unknown and missing keys, two password sources,
credentials in a DSN or URL, YAML syntax errors, repeated keys, a file that is not UTF-8), environment overrides,
command-line flags, and at run time: a driver that quotes the password in its errors (python-oracledb's
DPY-4018 quotes the connect string), the real python-oracledb against a closed port, an mqweb that echoes the
request (Authorization header, decoded credentials) in a 401, a 500 and a 200 that is not JSON, HPOM's database
through the same Oracle layer.  The sentinel holds ``(``, ``@``, ``/``, both quotes and non-ASCII letters; every
check looks for a marker that starts it (so a cut-off piece counts too) and for its base64 and URL-encoded forms.
"""

from __future__ import annotations

import base64
import json
import socket
import sys
import textwrap
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import yaml

from exporter.cli import main

from ..support import REPO

MARKER = "Sntl7"
SENTINEL = MARKER + "-q(u@o/t'e\"s-\u00fc\u20ac-9X"
USER = "monitor"


def leaks(text: str) -> list[str]:
    """The forms of the sentinel found in ``text``."""
    forms = {"marker": MARKER, "url-encoded": urllib.parse.quote(SENTINEL, safe=""),
             "basic auth": base64.b64encode(f"{USER}:{SENTINEL}".encode()).decode(),
             "base64": base64.b64encode(SENTINEL.encode()).decode()[:16],
             "json-escaped": json.dumps(SENTINEL)[1:-1][8:]}
    return [name for name, form in forms.items() if form in text]


def _run_main(argv: list[str], capfd) -> tuple[int, str]:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse
        code = int(exc.code or 0)
    out, err = capfd.readouterr()
    return code, out + err


# ---- configuration errors: file, environment, flags ----------------------------------------------------------
Q = json.dumps(SENTINEL)  # the sentinel as a YAML double-quoted scalar

FILE_CASES = {
    "mq block missing url": f"collectors:\n  ibmmq:\n    enabled: true\n    queue_managers:\n"
                            f"      - {{name: QM1, username: {USER}, password: {Q}}}\n",
    "mq url with user:password@": f"collectors:\n  ibmmq:\n    enabled: true\n    queue_managers:\n"
                                  f"      - name: QM1\n        url: {json.dumps(f'https://{USER}:{SENTINEL}@mq:9443')}\n",
    "oracle dsn user/password@ with a (": f"collectors:\n  oracle:\n    enabled: true\n    databases:\n"
                                          f"      - name: db\n        user: {USER}\n        password_env: PW\n"
                                          f"        dsn: {json.dumps(f'{USER}/{SENTINEL}@db:1521/orcl')}\n",
    "hpom database dsn with credentials": f"collectors:\n  hpom:\n    database:\n      user: {USER}\n"
                                          f"      dsn: {json.dumps(f'{USER}/{SENTINEL}@db:1521/ov')}\n"
                                          f"      password: {Q}\n",
    "password of the wrong type (list)": f"collectors:\n  oracle:\n    databases:\n      - name: db\n"
                                         f"        dsn: db:1521/x\n        user: u\n        password: [{Q}]\n",
    "password of the wrong type (mapping)": f"collectors:\n  ibmmq:\n    queue_managers:\n      - name: QM1\n"
                                            f"        url: https://mq:9443\n        password: {{a: {Q}}}\n",
    "password in an unknown key": f"collectors:\n  oracle:\n    databases:\n      - name: db\n        dsn: d:1/x\n"
                                  f"        user: u\n        password_file: /nonexistent\n        passwd: {Q}\n",
    "password beside missing keys": f"collectors:\n  oracle:\n    enabled: true\n    databases:\n"
                                    f"      - {{name: db, password: {Q}}}\n",
    "two password sources": f"collectors:\n  hpom:\n    database: {{dsn: 'db:1521/ov', user: u, password: {Q}, "
                            f"password_env: PW}}\n",
    "password in a whole section of the wrong type": f"collectors:\n  oracle: [{{password: {Q}}}]\n",
    "password in web settings": f"web:\n  listen_address: {Q}\n",
    "password where a duration goes": f"collectors:\n  ibmmq:\n    queue_managers:\n      - name: QM1\n"
                                      f"        url: https://mq:9443\n        timeout: {Q}\n        password: {Q}\n",
    "unquoted alias-like password (syntax error)": f"collectors:\n  oracle:\n    databases:\n      - name: db\n"
                                                   f"        password: *{SENTINEL.replace(chr(34), '')}\n",
    "tag-like password (syntax error)": f"collectors:\n  hpom:\n    database:\n      password: !{MARKER}tag x\n",
    "password then a tab (syntax error)": f"collectors:\n  hpom:\n    database:\n      password: {Q}\n\tuser: u\n",
    "password given twice": f"collectors:\n  hpom:\n    database:\n      password: {Q}\n      password: {Q}\n",
}


@pytest.mark.parametrize("case", sorted(FILE_CASES))
@pytest.mark.parametrize("command", ["check-config", "run"])
def test_config_file_errors_never_show_the_password(case, command, tmp_path, capfd, monkeypatch):
    monkeypatch.setenv("PW", "set-but-unused")
    path = tmp_path / "config.yaml"
    path.write_text(FILE_CASES[case], encoding="utf-8")
    code, output = _run_main([command, "--config", str(path)], capfd)
    assert code == 2, output
    assert "Traceback" not in output
    assert not leaks(output), output


def test_config_file_not_utf8_with_a_password_line(tmp_path, capfd):
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"collectors:\n  hpom:\n    database:\n      password: " + SENTINEL.encode("utf-8")
                     + b"\xe9\xff\n")
    code, output = _run_main(["check-config", "--config", str(path)], capfd)
    assert code == 2 and "not UTF-8" in output and "key password" in output
    assert not leaks(output), output


ENV_CASES = {
    "queue manager list missing url": {"MIDDLEWARE_EXPORTER_COLLECTORS__IBMMQ__ENABLED": "true",
                                       "MIDDLEWARE_EXPORTER_COLLECTORS__IBMMQ__QUEUE_MANAGERS":
                                           f"[{{name: QM1, username: {USER}, password: {Q}}}]"},
    "database list with a dsn carrying the password": {
        "MIDDLEWARE_EXPORTER_COLLECTORS__ORACLE__DATABASES":
            f"[{{name: db, user: u, password: {Q}, dsn: {json.dumps(f'u/{SENTINEL}@h:1/x')}}}]"},
    "password for an entry that does not exist": {
        "MIDDLEWARE_EXPORTER_COLLECTORS__ORACLE__DATABASES__3__PASSWORD": SENTINEL},
    "password into a section of the wrong type": {"MIDDLEWARE_EXPORTER_COLLECTORS__HPOM__DATABASE": SENTINEL},
    "password beside a bad value": {"MIDDLEWARE_EXPORTER_COLLECTORS__HPOM__DATABASE__PASSWORD": SENTINEL,
                                    "MIDDLEWARE_EXPORTER_COLLECTORS__HPOM__DATABASE__DSN": "db:1521/ov",
                                    "MIDDLEWARE_EXPORTER_COLLECTORS__HPOM__DATABASE__POOL_MAX": "lots"},
    "unparsable yaml holding the password": {"MIDDLEWARE_EXPORTER_COLLECTORS__IBMMQ__QUEUE_MANAGERS":
                                             f"[{{name: QM1, password: {Q}"},
    "password given twice in one variable": {"MIDDLEWARE_EXPORTER_COLLECTORS__HPOM__DATABASE":
                                             f"{{password: {Q}, password: {Q}}}"},
}


@pytest.mark.parametrize("case", sorted(ENV_CASES))
def test_environment_override_errors_never_show_the_password(case, capfd, monkeypatch):
    for name, value in ENV_CASES[case].items():
        monkeypatch.setenv(name, value)
    code, output = _run_main(["check-config"], capfd)
    assert code == 2, output
    assert not leaks(output), output


@pytest.mark.parametrize("flags", [
    ["--web.listen-address", SENTINEL], ["--log.level", SENTINEL], [f"--collector.oracle.password={SENTINEL}"],
    ["--web.max-connections", SENTINEL], [f"--no-collector.host={SENTINEL}"], ["--config", "/nonexistent", SENTINEL],
    [f"--web={SENTINEL}"],
])
def test_flag_errors_never_show_the_value(flags, capfd):
    code, output = _run_main(["check-config", *flags], capfd)
    assert code == 2, output
    assert not leaks(output), output


def test_numeric_password_from_the_environment_stays_a_string(monkeypatch, capfd):
    monkeypatch.setenv("MIDDLEWARE_EXPORTER_COLLECTORS__HPOM__DATABASE__PASSWORD", "0123456789")
    monkeypatch.setenv("MIDDLEWARE_EXPORTER_COLLECTORS__HPOM__DATABASE__DSN", "db:1521/ov")
    monkeypatch.setenv("MIDDLEWARE_EXPORTER_COLLECTORS__HPOM__DATABASE__USER", "u")
    from exporter.registry import load

    assert load(None).collectors.hpom.database.password.get_secret_value() == "0123456789"


def test_check_config_checks_password_sources_naming_only_file_or_variable(tmp_path, capfd, monkeypatch):
    secret_file = tmp_path / "db.pw"
    secret_file.write_text(SENTINEL + "\n")
    monkeypatch.setenv("MQ_PW", SENTINEL)
    config = tmp_path / "config.yaml"
    config.write_text(textwrap.dedent(f"""\
        collectors:
          oracle:
            enabled: true
            databases:
              - {{name: a, dsn: "db:1521/a", user: {USER}, password_file: {secret_file}}}
              - {{name: b, dsn: "db:1521/b", user: {USER}, password: {Q}}}
          ibmmq:
            enabled: true
            queue_managers:
              - {{name: QM1, url: "https://mq:9443", username: {USER}, password_env: MQ_PW}}
        """))
    code, output = _run_main(["check-config", "--config", str(config)], capfd)
    assert code == 0, output
    assert "password: '********'" in output and f"password_file: {secret_file}" in output
    assert not leaks(output), output
    monkeypatch.delenv("MQ_PW")
    (tmp_path / "empty.pw").write_text("\n")
    config.write_text(config.read_text().replace(str(secret_file), str(tmp_path / "missing.pw"))
                      .replace(f"password: {Q}", f"password_file: {tmp_path / 'empty.pw'}"))
    code, output = _run_main(["check-config", "--config", str(config)], capfd)
    assert code == 2
    assert f"collectors.oracle.databases.0.password_file: cannot read password_file {tmp_path / 'missing.pw'}" \
        in output
    assert f"collectors.oracle.databases.1.password_file: the password ({tmp_path / 'empty.pw'}) is empty" in output
    assert "collectors.ibmmq.queue_managers.0.password_env: environment variable MQ_PW (password_env) is not set" \
        in output


# ---- at run time: drivers and servers that quote the password --------------------------------------------------
ECHO_DRIVER = '''
"""A DB-API stand-in whose errors quote the password the way careless drivers and proxies do (test only)."""
import json
import urllib.parse


class DatabaseError(Exception):
    pass


def connect(user, password, dsn, **kwargs):
    if "long" in dsn:  # the password where a 300-character cut would split it
        raise DatabaseError("ORA-12170: " + "x" * 290 + password + " tail")
    raise DatabaseError(
        f'ORA-01017: invalid username/password; logon denied for "{user}/{password}@{dsn}" '
        f"(repr {password!r}, json {json.dumps(password)}, url {urllib.parse.quote(password, safe='')})")
'''


class _EchoMqweb(BaseHTTPRequestHandler):
    """mqweb that echoes the request: the Authorization header and the decoded credentials."""

    def log_message(self, *args) -> None:
        pass

    def _echo(self) -> str:
        auth = self.headers.get("Authorization", "")
        decoded = base64.b64decode(auth.split(" ", 1)[1]).decode() if " " in auth else ""
        return f"{self.command} {self.path} Authorization: {auth} ({decoded})"

    def do_GET(self) -> None:
        self.do_POST()

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        if "QM401" in self.path:
            status, body = 401, json.dumps({"error": [{"msgId": "MQWB0104E", "message": "not authenticated: "
                                                       + self._echo()}]}).encode()
        elif "QM500" in self.path:
            status, body = 500, ("Internal error while handling\n" + self._echo()).encode()
        else:
            status, body = 200, (self._echo()[40:] + " <not json>").encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def echo_mqweb():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EchoMqweb)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def silent_listener():
    """A port that accepts connections and never answers (a hung listener)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    yield sock.getsockname()[1]
    sock.close()


def _closed_port() -> int:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


def _runtime_config(tmp_path, mqweb: str, silent_port: int | None = None) -> dict:
    secret_file = tmp_path / "db.pw"
    secret_file.write_text(SENTINEL + "\n")
    quiet = {"connect_timeout": 2, "login_backoff": 1}
    databases = [
        {"name": "echo", "driver": "cx_Oracle", "dsn": "echo:1521/orcl", "user": USER,
         "password_file": str(secret_file), **quiet},
        {"name": "echolong", "driver": "cx_Oracle", "dsn": "long:1521/orcl", "user": USER,
         "password_env": "SENTINEL_PW", **quiet},
        {"name": "closed", "driver": "oracledb", "dsn": f"127.0.0.1:{_closed_port()}/orcl", "user": USER,
         "password": SENTINEL, **quiet},
    ]
    if silent_port:  # python-oracledb's other connects in this process wait while one hangs on this listener
        databases.append({"name": "silent", "driver": "oracledb", "dsn": f"127.0.0.1:{silent_port}/orcl",
                          "user": USER, "password": SENTINEL, "connect_timeout": 1})
    qmgrs = [{"name": name, "url": mqweb, "username": USER, "password": SENTINEL, "timeout": 2}
             for name in ("QM401", "QM500", "QMJSON")]
    return {"collectors": {
        "host": {"enabled": False}, "process": {"enabled": False},
        "oracle": {"enabled": True, "interval": "5s", "timeout": "5s", "databases": databases},
        "ibmmq": {"enabled": True, "interval": "2s", "timeout": "2s", "queue_managers": qmgrs},
        "hpom": {"enabled": True, "interval": "2s", "timeout": "2s", "command_timeout": "1s", "opcsv": None,
                 "ovc": None, "ovconfget": None, "queue_dir": str(tmp_path / "no-queues"),
                 "database": {"driver": "cx_Oracle", "dsn": "echo:1521/ov", "user": USER,
                              "password_env": "SENTINEL_PW", **quiet}},
    }}


def test_collect_once_with_echoing_drivers_and_servers(tmp_path, capfd, monkeypatch, echo_mqweb):
    driver_dir = tmp_path / "drivers"
    driver_dir.mkdir()
    (driver_dir / "cx_Oracle.py").write_text(ECHO_DRIVER)
    monkeypatch.syspath_prepend(str(driver_dir))
    monkeypatch.delitem(sys.modules, "cx_Oracle", raising=False)
    if getattr(sys.modules.get("oracledb"), "__version__", "") == "0.0-fake":
        monkeypatch.delitem(sys.modules, "oracledb")
    pytest.importorskip("oracledb")  # imported here: a first import inside the collectors' deadline may overrun it
    monkeypatch.setenv("SENTINEL_PW", SENTINEL)
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(_runtime_config(tmp_path, echo_mqweb)))
    for log_format in ("logfmt", "json"):
        code, output = _run_main(["collect-once", "--config", str(config), "--log.format", log_format], capfd)
        assert code == 1, output
        # the failures are reported, with the driver's and the server's words, but not the password
        for expected in ("ORA-01017", "ORA-12170", "DPY-6005", "HTTP 401", "HTTP 500", "not valid JSON",
                         "collector hpom: database"):
            assert expected in output, (expected, output)
        assert "********" in output
        assert not leaks(output), output


@pytest.mark.integration  # waits out a silent listener
def test_silent_listener(tmp_path, capfd, monkeypatch, silent_listener):
    if getattr(sys.modules.get("oracledb"), "__version__", "") == "0.0-fake":
        monkeypatch.delitem(sys.modules, "oracledb")
    pytest.importorskip("oracledb")
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"collectors": {
        "host": {"enabled": False}, "process": {"enabled": False},
        "oracle": {"enabled": True, "interval": "5s", "timeout": "5s", "databases": [
            {"name": "silent", "dsn": f"127.0.0.1:{silent_listener}/orcl", "user": USER, "password": SENTINEL,
             "connect_timeout": 1}]}}}))
    code, output = _run_main(["collect-once", "--config", str(config)], capfd)
    assert code == 1 and "collector oracle: silent" in output and "timed out" in output, output
    assert not leaks(output), output


@pytest.mark.integration
def test_running_exporter_shows_the_password_nowhere(start_exporter, tmp_path, echo_mqweb, silent_listener):
    driver_dir = tmp_path / "drivers"
    driver_dir.mkdir()
    (driver_dir / "cx_Oracle.py").write_text(ECHO_DRIVER)
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(_runtime_config(tmp_path, echo_mqweb, silent_listener)))
    env = {"PYTHONPATH": f"{driver_dir}:{REPO}", "SENTINEL_PW": SENTINEL}
    exporter = start_exporter("--config", str(config), "--log.level", "debug", env=env, wait_ready=False)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # every collector has run at least twice
        _, _, body = exporter.get("/api/v1/collectors")
        runs = [c.get("runs", 0) for c in json.loads(body) if c["enabled"]]
        if runs and min(runs) >= 2:
            break
        time.sleep(0.3)
    pages = {path: exporter.get(path)[2].decode("utf-8", "replace")
             for path in ("/metrics", "/api/v1/collectors", "/", "/readyz", "/healthz")}
    api = json.loads(pages["/api/v1/collectors"])
    errors = json.dumps({c["name"]: (c.get("last_error"), c.get("source_errors")) for c in api})
    assert "ORA-01017" in errors and "HTTP 401" in errors and "ORA-12170" in errors, errors
    # every target down, every run finished: ready, "degraded" (issue 26: the pod stays in its Service)
    assert json.loads(pages["/readyz"])["status"] == "degraded", pages["/readyz"]
    log = exporter.log()
    assert "ORA-01017" in log
    for name, text in {**pages, "log": log}.items():
        assert not leaks(text), (name, text[:3000])
