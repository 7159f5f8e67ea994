from __future__ import annotations

import html
import json
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest
import yaml
from pydantic import SecretStr

from exporter.cli import make_redactor
from exporter.core.config import ConfigError, masked_dump, parse_listen_address
from exporter.core.settings import StrictModel
from exporter.registry import load as load_config

from ..support import REPO


def _load(tmp_path, text: str, environ: dict[str, str] | None = None, overrides=None):
    path = tmp_path / "config.yaml"
    path.write_text(text)
    return load_config(path, environ=environ or {}, overrides=overrides)


def test_defaults_without_a_file_enable_host_and_process():
    config = load_config(None, environ={})
    assert config.collectors.host.enabled and config.collectors.process.enabled
    assert config.web.listen_address == ":19462"
    assert {g.name for g in config.collectors.process.groups} >= {"hpom_java_gui", "ibmmq", "oracle"}


def test_unknown_key_names_the_key(tmp_path):
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, "collectors:\n  host:\n    intervall: 5\n")
    assert "collectors.host.intervall: unknown key" in str(err.value)
    assert "config file" in str(err.value)


def test_wrong_type_names_the_key_and_reason_not_the_value(tmp_path):
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, "collectors:\n  process:\n    interval: often-and-again\n")
    message = str(err.value)
    assert "collectors.process.interval: Value error, not a duration" in message
    assert "often-and-again" not in message


def test_durations_accept_units(tmp_path):
    config = _load(tmp_path, "collectors:\n  process:\n    interval: 2m\n    timeout: 1500ms\n")
    assert config.collectors.process.interval == 120
    assert config.collectors.process.timeout == 1.5


def test_timeout_longer_than_interval_is_rejected(tmp_path):
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, "collectors:\n  host:\n    interval: 5\n    timeout: 10\n")
    assert "collectors.host" in str(err.value) and "must not exceed interval" in str(err.value)


def test_invalid_yaml_reports_the_line(tmp_path):
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, "collectors:\n  host: [unclosed\n")
    assert "not valid YAML" in str(err.value) and "line" in str(err.value)


def test_top_level_must_be_a_mapping(tmp_path):
    with pytest.raises(ConfigError, match="top level must be a mapping"):
        _load(tmp_path, "- a\n- b\n")


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_config(tmp_path / "nope.yaml", environ={})


def test_environment_overrides_file_and_flags_override_environment(tmp_path):
    env = {"MIDDLEWARE_EXPORTER_COLLECTORS__PROCESS__INTERVAL": "30",
           "MIDDLEWARE_EXPORTER_COLLECTORS__HOST__ENABLED": "false",
           "MIDDLEWARE_EXPORTER_WEB__LISTEN_ADDRESS": "127.0.0.1:1111"}
    config = _load(tmp_path, "collectors:\n  process:\n    interval: 20\n", environ=env,
                   overrides={("web", "listen_address"): "127.0.0.1:2222"})
    assert config.collectors.process.interval == 30
    assert config.collectors.host.enabled is False
    assert config.web.listen_address == "127.0.0.1:2222"


def test_bad_environment_value_names_the_variable(tmp_path):
    env = {"MIDDLEWARE_EXPORTER_COLLECTORS__HOST__MAX_SERIES": "lots"}
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, "{}\n", environ=env)
    assert "collectors.host.max_series" in str(err.value)
    assert "environment variable MIDDLEWARE_EXPORTER_COLLECTORS__HOST__MAX_SERIES" in str(err.value)


def test_process_group_validation(tmp_path):
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, "collectors:\n  process:\n    extra_groups:\n"
                        "      - name: broker\n        names: [DataFlowEngineLong]\n")
    assert "collectors.process.extra_groups.0.names" in str(err.value) and "15 characters" in str(err.value)
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, "collectors:\n  process:\n    extra_groups:\n      - name: x\n        comm: '(['\n")
    assert "invalid regular expression" in str(err.value)
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, "collectors:\n  process:\n    extra_groups:\n      - name: hpom_java_gui\n"
                        "        names: [java]\n")
    assert "defined twice" in str(err.value)
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, "collectors:\n  process:\n    extra_groups:\n      - name: x\n")
    assert "needs names, comm or cmdline" in str(err.value)


def test_listen_address_forms():
    assert parse_listen_address(":19462") == ("0.0.0.0", 19462)
    assert parse_listen_address("127.0.0.1:80") == ("127.0.0.1", 80)
    assert parse_listen_address("[::1]:9") == ("::1", 9)
    for bad in ("19462", "host:99999", "a:b"):
        with pytest.raises(ValueError):
            parse_listen_address(bad)


class _WithSecrets(StrictModel):
    user: str = "monitor"
    password: SecretStr = SecretStr("s3cr3t-Passw0rd")
    api_token: str = "tok-123"


class _Outer(StrictModel):
    db: _WithSecrets = _WithSecrets()


def test_secrets_are_masked_and_redacted():
    dumped = masked_dump(_Outer())
    text = yaml.safe_dump(dumped)
    assert "s3cr3t-Passw0rd" not in text and "tok-123" not in text
    assert dumped["db"]["user"] == "monitor"
    redact = make_redactor(_Outer())
    assert redact("ORA-01017 for monitor/s3cr3t-Passw0rd") == "ORA-01017 for monitor/********"


def test_secret_values_are_not_echoed_in_errors(tmp_path):
    from pydantic import ValidationError

    from exporter.core.config import _format_errors

    class M(StrictModel):
        password: int = 0

    try:
        M.model_validate({"password": "hunter2-secret"})
    except ValidationError as exc:
        message = _format_errors(exc, {}, "config file x")
    assert "password" in message and "hunter2-secret" not in message


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "exporter", *args], cwd=REPO, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=60, env={"PATH": "/usr/bin:/bin", **(env or {})})


def test_check_config_cli(tmp_path):
    good = tmp_path / "good.yaml"
    good.write_text((REPO / "examples" / "config.yaml").read_text())
    result = _cli("check-config", "--config", str(good))
    assert result.returncode == 0, result.stderr
    effective = yaml.safe_load(result.stdout)
    assert effective["collectors"]["host"]["enabled"] is True
    bad = tmp_path / "bad.yaml"
    bad.write_text("collectors:\n  hots: {}\n")
    result = _cli("check-config", "--config", str(bad))
    assert result.returncode == 2
    assert "collectors.hots: unknown key" in result.stderr
    assert "Traceback" not in result.stderr


def test_run_with_invalid_config_fails_at_start(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("web:\n  listen_address: nowhere\n")
    result = _cli("--config", str(bad))
    assert result.returncode == 2
    assert "web.listen_address: Value error, not host:port" in result.stderr and "nowhere" not in result.stderr


def test_collector_flags_enable_and_disable():
    result = _cli("check-config", "--no-collector.process")
    assert result.returncode == 0
    assert yaml.safe_load(result.stdout)["collectors"]["process"]["enabled"] is False


def test_environment_override_indexes_a_list(tmp_path):
    text = ("collectors:\n  oracle:\n    databases:\n"
            "      - {name: db, dsn: 'db:1521/x', user: u, password_file: /run/secrets/db}\n")
    env = {"MIDDLEWARE_EXPORTER_COLLECTORS__ORACLE__DATABASES__0__USER": "monitor",
           "MIDDLEWARE_EXPORTER_COLLECTORS__ORACLE__DATABASES__1__NAME": "db2",
           "MIDDLEWARE_EXPORTER_COLLECTORS__ORACLE__DATABASES__1__DSN": "db2:1521/y",
           "MIDDLEWARE_EXPORTER_COLLECTORS__ORACLE__DATABASES__1__USER": "monitor",
           "MIDDLEWARE_EXPORTER_COLLECTORS__ORACLE__DATABASES__1__PASSWORD": "123456"}
    databases = _load(tmp_path, text, environ=env).collectors.oracle.databases
    assert [d.name for d in databases] == ["db", "db2"]
    assert databases[0].user == "monitor" and databases[0].password_file == "/run/secrets/db"
    assert databases[1].password.get_secret_value() == "123456"  # a password stays a string
    with pytest.raises(ConfigError, match="DATABASES__5__USER: collectors.oracle.databases has 1 entries"):
        _load(tmp_path, text, environ={"MIDDLEWARE_EXPORTER_COLLECTORS__ORACLE__DATABASES__5__USER": "x"})


@pytest.mark.parametrize("key,value", [
    ("url", "https://admin:pa55-word@mq:9443"), ("url", "https://admin@mq:9443"), ("dsn", "u/pa(55@db:1521/x"),
    ("dsn", "(DESCRIPTION=(ADDRESS=(HOST=db)(PORT=1521)))@x"),
])
def test_credentials_in_a_connection_string_are_refused_unshown(tmp_path, key, value):
    entry = {"url": "https://mq:9443", "name": "QM1"} if key == "url" else \
        {"name": "db", "dsn": "db:1521/x", "user": "u", "password_env": "X"}
    entry[key] = value
    section = {"ibmmq": {"queue_managers": [entry]}} if key == "url" else {"oracle": {"databases": [entry]}}
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, yaml.safe_dump({"collectors": section}))
    message = str(err.value)
    assert f".0.{key}:" in message and "credentials" in message
    assert value not in message and "pa55" not in message and "pa(55" not in message


def test_scrub_masks_every_form_of_a_remembered_secret():
    from exporter.core.secrets import remember, scrub

    secret = "q'u\"o(te@/d-\u00fc\u20ac"
    remember(secret)
    texts = [f"plain {secret} end", f"repr {secret!r}", f"json {json.dumps(secret)}",
             f"ascii {ascii(secret)}", f"url {urllib.parse.quote(secret, safe='')}",
             f"url+ {urllib.parse.quote_plus(secret)}", f"html {html.escape(secret)}",
             f"logged {repr(f'error: {secret}')}"]
    for text in texts:
        assert "o(te" not in scrub(text) and "o%28te" not in scrub(text), (text, scrub(text))
        assert "********" in scrub(text)
    assert scrub("see https://admin:other-pw@mq:9443/x") == "see https://admin:********@mq:9443/x"
    remember("abc")  # too short to scrub without blotting out words
    assert scrub("abcdef") == "abcdef"


def test_masked_dump_hides_url_passwords_and_remembered_secrets():
    from exporter.core.secrets import remember

    class Target(StrictModel):
        url: str = "https://user:not-rejected-here@host"
        note: str = "holds Remembered-Secret-1 somewhere"
        password_file: str = "/run/secrets/x"

    remember("Remembered-Secret-1")
    dumped = masked_dump(Target())
    assert dumped == {"url": "https://user:********@host", "note": "holds ******** somewhere",
                      "password_file": "/run/secrets/x"}


# ------------------------------------------------------------------ what platforms put into the environment

PLATFORM_ENV = Path(__file__).parent / "fixtures" / "platform_env"


def _env_file(name: str) -> dict[str, str]:
    lines = (PLATFORM_ENV / name).read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))


@pytest.mark.parametrize("name", ["kubernetes-pod.env", "docker-links.env", "systemd-unit.env"])
def test_platform_variables_are_not_settings(tmp_path, name):
    """Service links of a Service called middleware-exporter (or -xyz, --collectors), Docker links with that alias
    and systemd's variables: none is read as a setting; real settings next to them still apply."""
    from exporter.core.config import platform_variables

    env = _env_file(name)
    ours = {k for k in env if k.startswith("MIDDLEWARE_EXPORTER_")}
    assert platform_variables(env) == ours
    env["MIDDLEWARE_EXPORTER_COLLECTORS__PROCESS__INTERVAL"] = "30"
    env["MIDDLEWARE_EXPORTER_WEB__LISTEN_ADDRESS"] = "127.0.0.1:1111"
    config = _load(tmp_path, "{}\n", environ=env)
    assert config.collectors.process.interval == 30 and config.web.listen_address == "127.0.0.1:1111"


@pytest.mark.parametrize("name, value, key", [
    ("MIDDLEWARE_EXPORTER_COLECTORS__HOST__INTERVAL", "5", "colectors"),
    ("MIDDLEWARE_EXPORTER_COLLECTORS__HOST__INTERVL", "5", "collectors.host.intervl"),
    ("MIDDLEWARE_EXPORTER_WEB_LISTEN_ADDRESS", ":9100", "web_listen_address"),
    # shaped like a platform variable, but no Service or link stands behind it (no anchor) or the value is not
    # what the platform writes: a setting someone meant, reported
    ("MIDDLEWARE_EXPORTER_PORT", "9100", "port"),
    ("MIDDLEWARE_EXPORTER_XYZ_SERVICE_PORT_METRICS", "http", "xyz_service_port_metrics"),
    ("MIDDLEWARE_EXPORTER_NAME", "exporter-b", "name"),
    ("MIDDLEWARE_EXPORTER_V6_PORT_19462_TCP_ADDR", "localhost", "v6_port_19462_tcp_addr"),
    ("MIDDLEWARE_EXPORTER_COLLECTORS__ORACLE__DATABASES__0__SERVCE_NAME", "ORCLPDB1", "servce_name"),
])
def test_misspelt_setting_next_to_platform_variables_fails_naming_key_and_variable(tmp_path, name, value, key):
    env = {**_env_file("kubernetes-pod.env"), **_env_file("systemd-unit.env"), name: value}
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, "collectors:\n  oracle:\n    databases: [{name: a, dsn: h/s, user: u, password_env: P}]\n"
                        if "ORACLE" in name else "{}\n", environ=env)
    text = str(err.value)
    assert key in text and "unknown key" in text and f"[from environment variable {name}]" in text, text
    assert text.count("\n  ") == 1, text  # that variable only: none of the platform's


def test_platform_variable_with_a_value_the_platform_never_writes_is_reported(tmp_path):
    env = {**_env_file("kubernetes-pod.env"), "MIDDLEWARE_EXPORTER_PORT": "9100"}  # not tcp://<ip>:<port>
    with pytest.raises(ConfigError, match=r"port: unknown key \[from environment variable MIDDLEWARE_EXPORTER_PORT"):
        _load(tmp_path, "{}\n", environ=env)


def test_exporter_starts_with_the_environment_of_a_pod_next_to_its_own_service(start_exporter):
    """The crash loop of issue 25: a release called middleware-exporter, so every pod of the namespace gets
    MIDDLEWARE_EXPORTER_SERVICE_HOST and friends. The real process starts and serves /metrics, and a setting
    given in the same environment applies."""
    env = {**_env_file("kubernetes-pod.env"), **_env_file("systemd-unit.env")}
    env["MIDDLEWARE_EXPORTER_COLLECTORS__PROCESS__ENABLED"] = "false"
    exporter = start_exporter(env=env)
    status, _, body = exporter.get("/metrics")
    assert status == 200 and b"middleware_host_cpus" in body
    assert b"middleware_process_" not in body  # the setting next to the platform's variables applied
