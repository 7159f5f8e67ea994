"""Configuration loading: a YAML file, then environment overrides, then command-line flags, validated by a
pydantic model the caller passes (``exporter.registry.Config``); plus the web, path and log sections.

Unknown keys and wrong types fail at start with a message naming the key (and the environment variable, where
the value came from one).  Secret values (``SecretStr`` fields, or any key whose name says password, secret or
token) are never echoed back: not in errors, not in ``check-config`` output.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Mapping, TypeVar

import yaml
from pydantic import BaseModel, Field, ValidationError, field_validator

from .settings import StrictModel

ENV_PREFIX = "MIDDLEWARE_EXPORTER_"
DEFAULT_PORT = 19462
DEFAULT_LISTEN_ADDRESS = f":{DEFAULT_PORT}"
SECRET_KEY_RE = re.compile(r"(password|passwd|secret|token|credential|api_?key)", re.IGNORECASE)
# Values never echoed in error messages: secrets, and connection strings that may carry one by mistake.
NO_ECHO_KEY_RE = re.compile(SECRET_KEY_RE.pattern + r"|^(dsn|url|uri|connect_string|connection_string)$",
                            re.IGNORECASE)


M = TypeVar("M", bound=BaseModel)


class ConfigError(Exception):
    """Invalid configuration; the message names the offending keys."""


class WebSettings(StrictModel):
    listen_address: str = Field(
        DEFAULT_LISTEN_ADDRESS,
        description="host:port to listen on; ':PORT' listens on all interfaces.",
    )

    @field_validator("listen_address")
    @classmethod
    def _valid_address(cls, value: str) -> str:
        parse_listen_address(value)
        return value


class PathSettings(StrictModel):
    procfs: str = Field("/proc", description="Mount point of the host's /proc (e.g. /host/proc in a container).")
    sysfs: str = Field("/sys", description="Mount point of the host's /sys.")


class LogSettings(StrictModel):
    level: str = Field("info", description="debug, info, warning or error.")
    format: str = Field("logfmt", description="logfmt or json.")

    @field_validator("level")
    @classmethod
    def _level(cls, value: str) -> str:
        value = value.lower()
        if value not in ("debug", "info", "warning", "error"):
            raise ValueError("must be one of debug, info, warning, error")
        return value

    @field_validator("format")
    @classmethod
    def _format(cls, value: str) -> str:
        if value not in ("logfmt", "json"):
            raise ValueError("must be logfmt or json")
        return value


def parse_listen_address(value: str) -> tuple[str, int]:
    """Split ``host:port`` (``:port`` = all interfaces, ``[::1]:port`` for IPv6)."""
    match = re.match(r"^(?:\[(?P<v6>[0-9a-fA-F:.]+)\]|(?P<host>[^:\[\]]*)):(?P<port>\d{1,5})$", value.strip())
    if not match:
        raise ValueError(f"{value!r} is not host:port")
    port = int(match.group("port"))
    if port > 65535:
        raise ValueError(f"port {port} is out of range")
    host = match.group("v6") or match.group("host") or "0.0.0.0"
    return host, port


def _set_path(data: dict[str, Any], path: list[str], value: Any) -> None:
    node = data
    for key in path[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            child = {}
            node[key] = child
        node = child
    node[path[-1]] = value


def env_overrides(environ: Mapping[str, str]) -> dict[tuple[str, ...], str]:
    """``MIDDLEWARE_EXPORTER_COLLECTORS__HOST__INTERVAL=5`` -> {("collectors","host","interval"): "5"}."""
    result = {}
    for key, value in environ.items():
        if not key.startswith(ENV_PREFIX) or key == ENV_PREFIX + "CONFIG":
            continue
        path = tuple(part.lower() for part in key[len(ENV_PREFIX):].split("__") if part)
        if path:
            result[path] = value
    return result


def _is_secret_path(loc: tuple[Any, ...]) -> bool:
    return any(isinstance(part, str) and NO_ECHO_KEY_RE.search(part) for part in loc)


def _format_errors(exc: ValidationError, sources: dict[tuple[str, ...], str], origin: str) -> str:
    lines = []
    for err in exc.errors(include_url=False):
        loc = tuple(str(p) for p in err["loc"])
        key = ".".join(loc) or "(top level)"
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown key"
        elif err["type"] == "missing":
            msg = "required key is missing"
        where = origin
        for path, env_name in sources.items():
            if loc[: len(path)] == path:
                where = f"environment variable {env_name}"
                break
        detail = ""
        if err["type"] not in ("extra_forbidden", "missing") and not _is_secret_path(loc):
            shown = repr(err.get("input"))
            detail = f" (got {shown[:80]})"
        lines.append(f"  {key}: {msg}{detail} [from {where}]")
    return "invalid configuration:\n" + "\n".join(lines)


def load_config(
    model: type[M],
    path: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
    overrides: dict[tuple[str, ...], Any] | None = None,
) -> M:
    """Read, merge and validate into ``model``. Precedence: flags (``overrides``) > environment > file > defaults."""
    environ = os.environ if environ is None else environ
    if path is None and environ.get(ENV_PREFIX + "CONFIG"):
        path = environ[ENV_PREFIX + "CONFIG"]
    data: dict[str, Any] = {}
    origin = "defaults"
    if path is not None:
        origin = f"config file {path}"
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from None
        try:
            loaded = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
            problem = getattr(exc, "problem", None) or "syntax error"
            raise ConfigError(f"config file {path} is not valid YAML{where}: {problem}") from None
        if loaded is None:
            loaded = {}
        if not isinstance(loaded, dict):
            raise ConfigError(f"config file {path}: the top level must be a mapping, not {type(loaded).__name__}")
        data = loaded
    sources: dict[tuple[str, ...], str] = {}
    for env_path, raw in env_overrides(environ).items():
        try:
            value = yaml.safe_load(raw) if raw.strip() else ""
        except yaml.YAMLError:
            value = raw
        _set_path(data, list(env_path), value)
        sources[env_path] = ENV_PREFIX + "__".join(p.upper() for p in env_path)
    for flag_path, value in (overrides or {}).items():
        _set_path(data, list(flag_path), value)
        sources[flag_path] = "command-line flag"
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_format_errors(exc, sources, origin)) from None


def masked_dump(config: BaseModel) -> dict[str, Any]:
    """The effective configuration with every secret replaced by ``********``."""

    def mask(node: Any, key: str = "") -> Any:
        if isinstance(node, dict):
            return {k: mask(v, k) for k, v in node.items()}
        if isinstance(node, list):
            return [mask(v, key) for v in node]
        # password_file / password_env name where the secret is, they are not the secret
        if key and SECRET_KEY_RE.search(key) and not key.endswith(("_file", "_env")) and node not in (None, ""):
            return "********"
        return node

    # SecretStr fields already dump as '**********' in python mode; mode="json" keeps them masked too.
    return mask(config.model_dump(mode="json"))
