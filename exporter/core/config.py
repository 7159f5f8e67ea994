"""Configuration loading: a YAML file, then environment overrides, then command-line flags, validated by a
pydantic model the caller passes (``exporter.registry.Config``); plus the web, path and log sections.

Unknown keys, repeated keys and wrong types fail at start with a message naming the key and the reason (and the
environment variable or flag, where the value came from one), never the value given: a misplaced password would
otherwise be printed to the terminal, journald or ``kubectl logs``.  Passwords found in the raw configuration are
remembered for scrubbing (``core.secrets``) before anything is validated; a connection string or URL that carries
``user:password@`` is refused; ``check-config`` prints secrets as ``********``.
"""

from __future__ import annotations

import functools
import ipaddress
import os
import re
from typing import Annotated, Any, Iterator, Mapping, TypeVar

from pydantic import AfterValidator, BaseModel, Field, StrictStr, ValidationError, field_validator

from .configfiles import NESTED_TOO_DEEPLY, UnreadableFile, check_shape, read_file
from .metrics import check_label_name, check_label_value
from .secrets import MASK, MIN_SCRUB_LENGTH, remember, scrub
from .settings import StrictModel

ENV_PREFIX = "MIDDLEWARE_EXPORTER_"
DEFAULT_PORT = 19462
DEFAULT_LISTEN_ADDRESS = f":{DEFAULT_PORT}"
SECRET_KEY_RE = re.compile(r"(password|passwd|secret|token|credential|api_?key)", re.IGNORECASE)
# Connection strings and URLs: refused when they carry credentials (user:password@host, user/password@dsn).
CONNECTION_KEY_RE = re.compile(r"^(dsn|url|uri|base_url|connect_string|connection_string)$", re.IGNORECASE)
# ``  password: value`` in the text of a config file (remembered before parsing, so no syntax error can show it).
_SECRET_LINE_RE = re.compile(r"^\s*(?:-\s+)?[\"']?[A-Za-z0-9_]*(?:password|passwd|secret|token|credential|api_?key)"
                             r"[A-Za-z0-9_]*(?<!_file)(?<!_env)[\"']?\s*:\s+(\S.*?)\s*$", re.IGNORECASE)


M = TypeVar("M", bound=BaseModel)


class ConfigError(Exception):
    """Invalid configuration; the message names the offending keys."""


# Static labels (``labels:`` of the exporter and of each target): names by Prometheus' rules and not reserved,
# values strings (a YAML number such as 1.10 would silently become 1.1; quote it). core.metrics.Rows.series adds
# them; the names a collector's series already have are refused when the collectors are built.
StaticLabelMap = dict[Annotated[str, AfterValidator(check_label_name)],
                      Annotated[StrictStr, AfterValidator(check_label_value)]]


def labels_field(description: str) -> Any:
    """A ``labels:`` map with its description (an empty value leaves the label out)."""
    return Field(default_factory=dict, description=description)


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
    rootfs: str = Field("/", description="Mount point of the host's root file system (e.g. /host/root in a "
                                         "container): the filesystem collector measures mount points under it.")


class InventorySettings(StrictModel):
    file: str | None = Field(None, description="The estate's targets in a file of Prometheus' file_sd shape (YAML or "
                                               "JSON), served at GET /sd (docs/estate.md); none by default.")
    refresh_interval: float = Field(5.0, ge=0.1, le=3600,
                                    description="Seconds between looks at the inventory file for a change.")


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
        raise ValueError("not host:port (e.g. :19462, 127.0.0.1:19462 or [::1]:19462)")
    port = int(match.group("port"))
    if port > 65535:
        raise ValueError(f"port {port} is out of range")
    host = match.group("v6") or match.group("host") or "0.0.0.0"
    return host, port


def _child(node: Any, key: str) -> Any:
    return node[int(key)] if isinstance(node, list) else node.get(key)


def _assign(node: Any, key: str, value: Any) -> None:
    if isinstance(node, list):
        node[int(key)] = value
    else:
        node[key] = value


def _set_path(data: dict[str, Any], path: list[str], value: Any, origin: str = "override") -> None:
    """Set ``value`` at ``path``; a numeric part indexes a list (``DATABASES__0__PASSWORD``), one past the end adds
    an entry."""
    node: Any = data
    for depth, (key, following) in enumerate(zip(path[:-1], path[1:], strict=True)):
        child = _child(node, key)
        if following.isdigit() and isinstance(child, list):
            if int(following) == len(child):
                child.append({} if depth + 2 < len(path) else None)
            elif int(following) > len(child):
                raise ConfigError(f"{origin}: {'.'.join(path[:depth + 1])} has {len(child)} entries, so there is "
                                  f"no entry {following}")
        elif following.isdigit() and child is None:
            child = [{}] if following == "0" else {}
            _assign(node, key, child)
        elif not isinstance(child, dict):
            child = {}
            _assign(node, key, child)
        node = child
    _assign(node, path[-1], value)


def _path_order(item: tuple[tuple[str, ...], str]) -> tuple:
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in item[0])


# Variables a platform puts into the environment under a name derived from a name someone chose (a Service, a
# linked container), so that they can start with ENV_PREFIX whatever prefix is chosen: a Service called
# middleware-exporter gives every pod of its namespace MIDDLEWARE_EXPORTER_SERVICE_HOST, MIDDLEWARE_EXPORTER_PORT
# and more. Their grammar (after "<NAME>_") and the shape of their values:
# - Kubernetes service links (kubelet, pkg/kubelet/envvars): for every Service with a cluster IP,
#   SERVICE_HOST=<cluster IP> (always), SERVICE_PORT[_<PORT NAME>]=<n>, PORT=<proto>://<ip>:<n>,
#   PORT_<n>_<PROTO>=<proto>://<ip>:<n> with _PROTO=<proto>, _PORT=<n>, _ADDR=<ip>.
# - Docker legacy links (moby, daemon/links): the same PORT family, _START/_END/_PORT_START/_PORT_END for a range,
#   NAME=/<container>/<alias> (always; <NAME> is the alias upper-cased, '-' as '_') and ENV_<VAR>=<the linked
#   container's VAR>.
# systemd (INVOCATION_ID, NOTIFY_SOCKET, LISTEN_FDS, ...) and Docker (HOSTNAME, HOME) use fixed names outside the
# prefix. A family is recognised by its anchor (SERVICE_HOST holding an IP address, NAME holding the link path that
# ends in the alias) and each member by its suffix and value, so that a misspelt setting is still reported.
_K8S_SUFFIX_RE = re.compile(r"SERVICE_HOST|SERVICE_PORT(?:_[A-Z0-9_]+)?"
                            r"|PORT(?:_\d{1,5}_[A-Z]+(?:_PROTO|_PORT|_ADDR)?)?")
_DOCKER_SUFFIX_RE = re.compile(r"NAME|ENV_.+|PORT(?:_\d{1,5}_[A-Z]+(?:_PROTO|_PORT|_ADDR|_START|_END|_PORT_START"
                               r"|_PORT_END)?)?")


def _is_ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value.strip("[]"))
    except ValueError:
        return False
    return True


def _is_link_url(value: str) -> bool:
    """``tcp://10.0.0.1:19462`` (``tcp://[fd00::1]:80``; an old kubelet wrote IPv6 without the brackets)."""
    proto, sep, rest = value.partition("://")
    host, _, port = rest.rpartition(":")
    return bool(sep) and proto.isalpha() and proto.islower() and port.isdigit() and _is_ip(host)


def _link_value_fits(suffix: str, value: str) -> bool:
    if suffix.startswith("ENV_") or suffix == "NAME":  # any value; NAME is the anchor, checked already
        return True
    if suffix == "SERVICE_HOST" or suffix.endswith("_ADDR"):
        return _is_ip(value)
    if suffix.startswith("SERVICE_PORT") or suffix.endswith(("_PORT", "_PORT_START", "_PORT_END")):
        return value.isdigit()
    if suffix.endswith("_PROTO"):
        return value.isalpha() and value.islower()
    return _is_link_url(value)  # PORT, PORT_<n>_<PROTO>, ..._START, ..._END


def platform_variables(environ: Mapping[str, str]) -> set[str]:
    """The names in ``environ`` that Kubernetes service links or Docker links put there (see above), among those
    that start with ENV_PREFIX: they are not settings and are ignored."""
    ours = {k: v for k, v in environ.items() if k.startswith(ENV_PREFIX)}
    roots: list[tuple[str, re.Pattern[str]]] = []
    for key, value in ours.items():
        if key.endswith("_SERVICE_HOST") and _is_ip(value):
            roots.append((key[: -len("SERVICE_HOST")], _K8S_SUFFIX_RE))
        if key.endswith("_NAME") and value.startswith("/"):
            alias = value.rstrip("/").rsplit("/", 1)[-1].upper().replace("-", "_")
            if alias and key == alias + "_NAME":
                roots.append((key[: -len("NAME")], _DOCKER_SUFFIX_RE))
    found = set()
    for key, value in ours.items():
        for root, grammar in roots:
            suffix = key[len(root):]
            if key.startswith(root) and grammar.fullmatch(suffix) and _link_value_fits(suffix, value):
                found.add(key)
    return found


def _env_settings(environ: Mapping[str, str]) -> dict[tuple[str, ...], tuple[str, str]]:
    """``MIDDLEWARE_EXPORTER_COLLECTORS__HOST__INTERVAL=5`` -> {("collectors","host","interval"): (name, "5")}."""
    skip = platform_variables(environ) | {ENV_PREFIX + "CONFIG"}
    result = {}
    for key, value in environ.items():
        if not key.startswith(ENV_PREFIX) or key in skip:
            continue
        path = tuple(part.lower() for part in key[len(ENV_PREFIX):].split("__") if part)
        if path:
            result[path] = (key, value)
    return dict(sorted(result.items(), key=_path_order))


def _is_secret_key(key: Any) -> bool:
    return isinstance(key, str) and bool(SECRET_KEY_RE.search(key)) and not key.endswith(("_file", "_env"))


class DuplicateKeyError(ValueError):
    """A mapping repeats a key (YAML forbids it; PyYAML would silently keep the last value)."""

    def __init__(self, key: str, line: int, first_line: int) -> None:
        super().__init__(f"key {key!r} is given twice (line {first_line} and line {line})")
        self.key, self.line, self.first_line = key, line, first_line


@functools.cache
def _strict_loader() -> type:
    """SafeLoader that refuses duplicate keys.  Hand-written because PyYAML has no option for it, and
    ruamel.yaml's duplicate-key error quotes both values, which may be passwords.  Built on first use: a start
    with neither a configuration file nor a MIDDLEWARE_EXPORTER_ variable never imports yaml (docs/footprint.md)."""
    import yaml

    class StrictLoader(yaml.SafeLoader):
        def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue  # '<<' merges: keys given next to it override the merged ones, as YAML intends
                if not isinstance(key_node, yaml.ScalarNode):
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    if key in seen:
                        raise DuplicateKeyError(str(key), key_node.start_mark.line + 1, seen[key])
                    seen[key] = key_node.start_mark.line + 1
                except TypeError:  # unhashable: SafeLoader reports it below
                    pass
            return super().construct_mapping(node, deep)

    return StrictLoader


def _parse_yaml(text: str) -> Any:
    import yaml

    return yaml.load(text, Loader=_strict_loader())  # noqa: S506 - a SafeLoader subclass


def _yaml_error() -> type[Exception]:
    import yaml

    return yaml.YAMLError


def _yaml_problem(exc: Exception) -> str:
    """PyYAML's description of a syntax error without what it quotes of the text (an alias or tag name could
    be the start of an unquoted password); a quoted single character such as '\\t' stays."""
    problem = getattr(exc, "problem", None) or "syntax error"
    return re.sub(r"'[^']{4,}'|\"[^\"]{4,}\"", "'...'", problem)


def parse_yaml(text: str, where: str) -> Any:
    """``text`` parsed by the strict loader (a repeated key fails) and bounded by ``check_shape``; a ValueError
    naming ``where`` (``config file /etc/x.yml``, ``inventory file ...``) and the line, never quoting the text."""
    try:
        data = _parse_yaml(text)
    except DuplicateKeyError as exc:
        raise ValueError(f"{where}: {exc}") from None
    except _yaml_error() as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ValueError(f"{where} is not valid YAML{at}: {_yaml_problem(exc)}") from None
    except RecursionError:  # PyYAML composes nested collections recursively
        raise ValueError(f"{where} is not valid YAML: {NESTED_TOO_DEEPLY}") from None
    check_shape(data, where)
    return data


def _decode(raw: bytes, path: Any) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line_start = raw.rfind(b"\n", 0, exc.start) + 1
        line_end = raw.find(b"\n", exc.start)
        line_text = raw[line_start:line_end if line_end >= 0 else len(raw)].decode("utf-8", "replace")
        key = re.match(r"^\s*(?:-\s+)?([A-Za-z0-9_.-]+)\s*:", line_text)
        line = raw.count(b"\n", 0, exc.start) + 1
        where = f"line {line}, column {exc.start - line_start + 1}"
        if key:
            where += f" (key {key.group(1)})"
        raise ConfigError(f"config file {path} is not UTF-8: byte 0x{raw[exc.start]:02x} at {where}; save it as "
                          "UTF-8") from None


def _credential_parts(value: str) -> list[str]:
    """What precedes the '@' of ``user:password@host`` or ``user/password@dsn``, whole and split."""
    userinfo = value.rsplit("@", 1)[0]
    userinfo = userinfo.split("://", 1)[-1]
    parts = [userinfo]
    for sep in (":", "/"):
        if sep in userinfo:
            parts.append(userinfo.split(sep, 1)[1])
    return parts


def _raw_secrets(node: Any, key: Any = None) -> Iterator[str]:
    """Every value of a password-like key in the raw (not yet validated) configuration."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _raw_secrets(v, k)
    elif isinstance(node, list):
        for item in node:
            yield from _raw_secrets(item, key)
    elif _is_secret_key(key) and node is not None and not isinstance(node, bool):
        yield str(node)


def _raw_credentials(node: Any, key: Any = None) -> Iterator[str]:
    """The userinfo of every connection string or URL that carries one (refused; scrubbed from that error)."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _raw_credentials(v, k)
    elif isinstance(node, list):
        for item in node:
            yield from _raw_credentials(item, key)
    elif isinstance(node, str) and isinstance(key, str) and CONNECTION_KEY_RE.search(key) and "@" in node:
        yield from _credential_parts(node)


def _credential_problems(node: Any, loc: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], str]]:
    """A connection string or URL carrying ``user:password@``: refused, without showing it."""
    if isinstance(node, dict):
        for k, v in node.items():
            if isinstance(k, str) and CONNECTION_KEY_RE.search(k) and isinstance(v, str) and "@" in v:
                yield (*loc, k), ("must not carry credentials (it contains '@'): give the user in user or "
                                  "username and the password in password_file or password_env")
            else:
                yield from _credential_problems(v, (*loc, str(k)))
    elif isinstance(node, list):
        for index, item in enumerate(node):
            yield from _credential_problems(item, (*loc, str(index)))


def _origin_of(loc: tuple[str, ...], sources: dict[tuple[str, ...], str], origin: str) -> str:
    for path, name in sources.items():
        if loc[: len(path)] == path:
            return name
    # an unknown key above what a variable sets (MIDDLEWARE_EXPORTER_COLECTORS__HOST__INTERVAL: "colectors")
    below = [name for path, name in sources.items() if path[: len(loc)] == loc]
    return ", ".join(below) if below else origin


def _format_errors(exc: ValidationError | None, sources: dict[tuple[str, ...], str], origin: str,
                   extra: list[tuple[tuple[str, ...], str]] = ()) -> str:
    """One line per problem: the key, the reason and where it came from; never the value given."""
    lines = []
    reported = {tuple(str(p) for p in err["loc"]) for err in exc.errors()} if exc is not None else set()
    for loc, msg in extra:
        if loc in reported:  # the model's own validator said it already
            continue
        lines.append(f"  {'.'.join(loc)}: {msg} [from {_origin_of(loc, sources, origin)}]")
    for err in exc.errors(include_url=False) if exc is not None else []:
        loc = tuple(str(p) for p in err["loc"])
        msg = err["msg"]
        if loc[-1:] == ("[key]",):  # a mapping's key is wrong (a label name): name it as the key
            loc = (*loc[:-2], loc[-2] or '""')
            msg = msg.removeprefix("Value error, ")
        key = ".".join(loc) or "(top level)"
        if err["type"] == "extra_forbidden":
            msg = "unknown key"
        elif err["type"] == "missing":
            msg = "required key is missing"
        if err["type"] == "string_type" and loc and (_is_secret_key(loc[-1]) or loc[-2:-1] == ("labels",)) \
                and isinstance(err.get("input"), (int, float)):
            msg += " (put it in quotes)"
        lines.append(f"  {key}: {msg} [from {_origin_of(loc, sources, origin)}]")
    return "invalid configuration:\n" + "\n".join(lines)


def load_config(
    model: type[M],
    path: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
    overrides: dict[tuple[str, ...], Any] | None = None,
) -> M:
    """Read, merge and validate into ``model``. Precedence: flags (``overrides``) > environment > file > defaults.

    Errors name the key, the reason and the source (file, variable or flag), never a value; a file that is not
    UTF-8, is not YAML, repeats a key, nests too deeply or multiplies through YAML aliases, or is not a regular file
    (a FIFO) or does not answer (a hung mount) is refused naming the file and the line or key."""
    environ = os.environ if environ is None else environ
    if path is None and environ.get(ENV_PREFIX + "CONFIG"):
        path = environ[ENV_PREFIX + "CONFIG"]
    data: dict[str, Any] = {}
    origin = "defaults"
    if path is not None:
        origin = f"config file {path}"
        try:  # a FIFO or a file on a hung mount fails naming the file instead of hanging (core.configfiles)
            raw = read_file(path, "config file")
        except UnreadableFile as exc:
            raise ConfigError(str(exc)) from None
        text = _decode(raw, path)
        for line in text.splitlines():  # so that a syntax error can never show one
            match = _SECRET_LINE_RE.match(line)
            if match:
                remember(match.group(1).strip().strip("'\"").lstrip("*&!"))
        try:
            loaded = parse_yaml(text, origin)
        except ValueError as exc:
            raise ConfigError(scrub(str(exc))) from None
        if loaded is None:
            loaded = {}
        if not isinstance(loaded, dict):
            raise ConfigError(f"config file {path}: the top level must be a mapping, not {type(loaded).__name__}")
        data = loaded
    sources: dict[tuple[str, ...], str] = {}
    for env_path, (name, raw_value) in _env_settings(environ).items():
        if _is_secret_key(env_path[-1]) or env_path[-2:-1] == ("labels",):
            # a password or a label value is a string as given: 123456 or yes must not become a number or true
            value: Any = raw_value
        else:
            try:
                value = _parse_yaml(raw_value) if raw_value.strip() else ""
                check_shape(value, f"environment variable {name}")
            except DuplicateKeyError as exc:
                raise ConfigError(f"environment variable {name}: {exc}") from None
            except _yaml_error():
                value = raw_value
            except RecursionError:
                raise ConfigError(f"environment variable {name}: {NESTED_TOO_DEEPLY}") from None
            except ValueError as exc:  # check_shape
                raise ConfigError(str(exc)) from None
        _set_path(data, list(env_path), value, f"environment variable {name}")
        sources[env_path] = f"environment variable {name}"
    for flag_path, value in (overrides or {}).items():
        _set_path(data, list(flag_path), value, "command-line flag")
        sources[flag_path] = "command-line flag"
    for secret in _raw_secrets(data):
        remember(secret)
    problems = list(_credential_problems(data))
    credentials = sorted((c for c in _raw_credentials(data) if len(c) >= MIN_SCRUB_LENGTH), key=len, reverse=True)

    def scrubbed(text: str) -> str:
        for part in credentials:  # only in this error: a user name is no secret once the URL is fixed
            text = text.replace(part, MASK)
        return scrub(text)

    try:
        result = model.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(scrubbed(_format_errors(exc, sources, origin, problems))) from None
    if problems:
        raise ConfigError(scrubbed(_format_errors(None, sources, origin, problems)))
    return result


def masked_dump(config: BaseModel) -> dict[str, Any]:
    """The effective configuration with every secret replaced by ``********`` (and any remembered secret or URL
    password scrubbed from the other values)."""

    def mask(node: Any, key: str = "") -> Any:
        if isinstance(node, dict):
            return {k: mask(v, k) for k, v in node.items()}
        if isinstance(node, list):
            return [mask(v, key) for v in node]
        # password_file / password_env name where the secret is, they are not the secret
        if _is_secret_key(key) and node not in (None, ""):
            return MASK
        return scrub(node) if isinstance(node, str) else node

    # SecretStr fields already dump as '**********' in python mode; mode="json" keeps them masked too.
    return mask(config.model_dump(mode="json"))
