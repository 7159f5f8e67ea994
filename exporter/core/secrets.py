"""Where a password comes from: the configuration, a file (read at each use, so rotation works) or an environment
variable; and the scrubbing that keeps every password out of logs, error texts, the API and the pages.

Every password the exporter holds or reads is remembered here (process-wide) with the forms it takes when quoted,
escaped or URL-encoded, and :func:`scrub` replaces all of them with ``********`` in any text: log lines (the
logging filter), the errors kept for ``/api/v1/collectors``, ``check-config`` output.  A driver that quotes its
connect string or a server that echoes the request therefore cannot leak one.  Values shorter than
``MIN_SCRUB_LENGTH`` characters are not scrubbed (they would blot out ordinary words); ``check-config`` warns
about such a password.  Shared by every collector that logs in (Oracle, HPOM's database, IBM MQ).
"""

from __future__ import annotations

import html
import json
import logging
import os
import re
import threading
import urllib.parse
from typing import Any, ClassVar, Iterator

from pydantic import BaseModel, Field, SecretStr, model_validator

from .configfiles import UnreadableFile, read_file
from .settings import StrictModel

log = logging.getLogger("middleware_exporter.secrets")

MASK = "********"
MAX_SECRET_BYTES = 1024 * 1024  # a password or token is far smaller; a wrong path to a large file is refused
MIN_SCRUB_LENGTH = 4
# ``scheme://user:password@host``: the password part, whatever the password is.  The scheme is matched from the
# start of its run of scheme characters only (a lookbehind), once per run: started at every letter of a long run, as
# ``\b[a-z][a-z0-9+.-]*://`` was, the scan took time quadratic in the run's length (issue 38, an error text of one
# 40,000-character word); the masked part is the same wherever in the run the match starts.
_URL_USERINFO_RE = re.compile(r"(?i)(?<![a-z0-9+.-])((?=[0-9+.-]*+[a-z])[a-z0-9+.-]*+://[^\s/?#@:]*+:)[^\s/?#@]*+@")


class SecretUnavailable(Exception):
    """The configured password source cannot be read (the message names the source, never the secret)."""


_lock = threading.Lock()
_known: set[str] = set()
_pattern: re.Pattern[str] | None = None


def _forms(value: str) -> set[str]:
    """The value as it appears in a message: raw, repr/JSON-escaped (either quote), URL-encoded, HTML-escaped."""
    escaped = value.replace("\\", "\\\\")
    forms = {value, escaped, escaped.replace("'", "\\'"), escaped.replace('"', '\\"'),
             escaped.replace("'", "\\'").replace('"', '\\"'), repr(value)[1:-1], ascii(value)[1:-1],
             json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1],
             urllib.parse.quote(value, safe=""), urllib.parse.quote(value), urllib.parse.quote_plus(value),
             html.escape(value), html.escape(value, quote=False)}
    return {form for form in forms if len(form) >= MIN_SCRUB_LENGTH}


def remember(value: str | None) -> None:
    """Scrub ``value`` (and its quoted, escaped and encoded forms) from every text :func:`scrub` sees from now on."""
    global _pattern
    if not value or len(value) < MIN_SCRUB_LENGTH:
        return
    forms = _forms(value)
    with _lock:
        if forms <= _known:
            return
        _known.update(forms)
        ordered = sorted(_known, key=len, reverse=True)  # the longest first: a secret may contain another
        _pattern = re.compile("|".join(re.escape(form) for form in ordered))


def scrub(text: str) -> str:
    """``text`` with every remembered secret, and the password of any ``scheme://user:password@`` URL, masked."""
    if not isinstance(text, str):
        text = str(text)
    pattern = _pattern
    if pattern is not None:
        text = pattern.sub(MASK, text)
    if "@" in text:
        text = _URL_USERINFO_RE.sub(lambda m: m.group(1) + MASK + "@", text)
    return text


def secret_values(model: Any) -> list[str]:
    """Every ``SecretStr`` value in a model (nested models, lists and dicts included)."""
    found: list[str] = []
    if isinstance(model, SecretStr):
        value = model.get_secret_value()
        if value:
            found.append(value)
    elif isinstance(model, BaseModel):
        for name in type(model).model_fields:
            found.extend(secret_values(getattr(model, name)))
    elif isinstance(model, (list, tuple)):
        for item in model:
            found.extend(secret_values(item))
    elif isinstance(model, dict):
        for item in model.values():
            found.extend(secret_values(item))
    return found


def read_secret_file(path: str, key: str) -> str:
    """A secret kept in a file (UTF-8, surrounding white space stripped); SecretUnavailable naming the setting ``key``
    and the path, never the content, when it cannot be read.  Read by core.configfiles: a FIFO, socket, device or
    directory is refused without blocking, and a file on a hung mount fails after a deadline (issue 38)."""
    try:
        return read_file(path, key, max_bytes=MAX_SECRET_BYTES).decode("utf-8").strip()
    except UnreadableFile as exc:
        raise SecretUnavailable(str(exc)) from None
    except UnicodeDecodeError:
        raise SecretUnavailable(f"{key} {path} is not UTF-8") from None


class PasswordSettings(StrictModel):
    password_required: ClassVar[bool] = False

    password: SecretStr | None = Field(None, description="The password (prefer password_file or password_env).")
    password_file: str | None = Field(None, description="File holding the password (read at each connect).")
    password_env: str | None = Field(None, description="Environment variable holding the password.")

    @model_validator(mode="after")
    def _password_sources(self) -> "PasswordSettings":
        given = [n for n in ("password", "password_file", "password_env") if getattr(self, n)]
        if self.password_required and len(given) != 1:
            raise ValueError("give exactly one of password, password_file, password_env")
        if len(given) > 1:
            raise ValueError("give at most one of password, password_file, password_env")
        return self

    def read_password(self) -> str | None:
        """The password from wherever it is configured; remembered for scrubbing before it is returned."""
        if self.password is not None:
            value = self.password.get_secret_value()
        elif self.password_file:
            value = read_secret_file(self.password_file, "password_file")
        elif self.password_env:
            value = os.environ.get(self.password_env, "")
            if not value:
                raise SecretUnavailable(f"environment variable {self.password_env} (password_env) is not set")
        else:
            return None
        remember(value)
        return value


def password_settings(model: Any, path: str = "") -> Iterator[tuple[str, PasswordSettings]]:
    """Every :class:`PasswordSettings` inside ``model`` with its dotted key (``collectors.oracle.databases.0``)."""
    if isinstance(model, PasswordSettings):
        yield path, model
    if isinstance(model, BaseModel):
        for name in type(model).model_fields:
            yield from password_settings(getattr(model, name), f"{path}.{name}" if path else name)
    elif isinstance(model, (list, tuple)):
        for index, item in enumerate(model):
            yield from password_settings(item, f"{path}.{index}")


def secret_files(model: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(dotted key, path) of every password file set inside ``model``: each ``password_file`` and
    ``*_password_file`` (Oracle's ``wallet_password_file``)."""
    if isinstance(model, BaseModel):
        for name in type(model).model_fields:
            value = getattr(model, name)
            key = f"{path}.{name}" if path else name
            if name.endswith("password_file") and isinstance(value, str) and value:
                yield key, value
            else:
                yield from secret_files(value, key)
    elif isinstance(model, (list, tuple)):
        for index, item in enumerate(model):
            yield from secret_files(item, f"{path}.{index}")


def refused_secret_files(model: Any, path: str = "") -> list[str]:
    """At start (every command): the password files inside ``model`` that can never be read, each named by its key:
    a FIFO, socket, device or directory (a FIFO made check-config wait for ever, issue 38) or one too large.  One
    missing or not readable now is left to the read at each connect (it may appear or be fixed later), and one on
    a mount that does not answer is logged and left to the collector, whose targets report it."""
    problems = []
    for key, file in secret_files(model, path):
        try:
            read_file(file, key.rsplit(".", 1)[-1], max_bytes=MAX_SECRET_BYTES)
        except UnreadableFile as exc:
            if exc.refused:
                problems.append(f"{key}: {exc}")
            elif exc.hung:
                log.warning("msg=%r", f"{key}: {exc}; left to the collector")
    return problems


def check_password_sources(model: Any, path: str = "") -> tuple[list[str], list[str]]:
    """(problems, warnings) of every password source inside ``model``: a ``password_file`` that cannot be read or
    is empty, a ``password_env`` that is not set, a password too short to be scrubbed.  The texts name the key and
    the file or variable, never the password."""
    problems: list[str] = []
    warnings: list[str] = []
    for key, settings in password_settings(model, path):
        if not (settings.password or settings.password_file or settings.password_env):
            continue
        try:
            value = settings.read_password()
        except SecretUnavailable as exc:
            field = "password_file" if settings.password_file else "password_env"
            problems.append(f"{key}.{field}: {exc}")
            continue
        if not value:
            field = "password_file" if settings.password_file else "password"
            where = f" ({settings.password_file})" if settings.password_file else ""
            problems.append(f"{key}.{field}: the password{where} is empty")
        elif len(value) < MIN_SCRUB_LENGTH:
            warnings.append(f"{key}: the password is shorter than {MIN_SCRUB_LENGTH} characters, too short to be "
                            "scrubbed from error messages")
    for key, file in secret_files(model, path):  # the others (wallet_password_file): readable now
        if not key.endswith(".password_file"):
            try:
                remember(read_secret_file(file, key.rsplit(".", 1)[-1]))
            except SecretUnavailable as exc:
                problems.append(f"{key}: {exc}")
    return problems, warnings
