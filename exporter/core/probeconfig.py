"""The configuration of multi-target probing (``modules:``, docs/estate.md): what a module reads and how, apart
from core/probe.py so that validating a configuration does not import the prober, the inventory or the
exposition (a default start without modules imports neither; tests/project/test_footprint.py)."""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field, field_validator, model_validator

from .settings import Duration, DurationOrZero, StrictModel, check_regex

MODULE_NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,62}")


class SshSettings(StrictModel):
    """How a module's host and file-system text back-ends reach each target (machine/sshcontrol.py)."""

    user: str = Field("", description="Remote user (`-l`); empty: the ssh configuration's.")
    port: int | None = Field(None, ge=1, le=65535, description="Port (`-p`); a target's own `host:port` wins.")
    identity_file: str = Field("", description="Private key (`-i`); empty: the ssh configuration's.")
    config_file: str = Field("", description="The operator's ssh configuration (`-F`): host keys, aliases, "
                                             "bastions (ProxyJump).")
    options: list[str] = Field(default_factory=list,
                               description="More `-o Name=value` options, e.g. `StrictHostKeyChecking=yes`; those "
                                           "that run a command or forward are refused.")
    connect_timeout: Duration = Field(5.0, description="Seconds for the TCP connection and the handshake.")
    control_persist: int = Field(90, ge=0, le=3600,
                                 description="Seconds a host's connection master outlives its last command "
                                             "(reused by the next probe); 0: a new connection per command.")

    @field_validator("user")
    @classmethod
    def _user(cls, value: str) -> str:
        if value and not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,31}", value):
            raise ValueError("a user name is letters, digits, '_', '.' and '-'")
        return value

    @field_validator("options")
    @classmethod
    def _options(cls, value: list[str]) -> list[str]:
        from ..machine.sshcontrol import option_problem

        for option in value:
            problem = option_problem(option)
            if problem:
                raise ValueError(f"option {option[:60]!r}: {problem}")
        return value


class BackoffSettings(StrictModel):
    first: Duration = Field(15.0, description="Seconds before a target whose collection failed is read again.")
    cap: Duration = Field(300.0, description="The longest wait after failures in a row.")

    @model_validator(mode="after")
    def _order(self) -> "BackoffSettings":
        if self.cap < self.first:
            raise ValueError("cap must not be shorter than first")
        return self


class ModuleSettings(StrictModel):
    """One module of ``modules:`` (docs/estate.md)."""

    collectors: dict[str, dict[str, Any]] = Field(
        description="Collector sections as under `collectors:` (host, filesystem, oracle, ibmmq, hpom, domino); "
                    "`{target}`, `{host}` and `{port}` in any string stand for the probed target.")
    ssh: SshSettings | None = Field(None, description="Read the host and file-system text back-ends through ssh "
                                                      "to each target (the command prefix is built from this).")
    timeout: Duration = Field(10.0, description="A probe's deadline (lowered to the scrape timeout Prometheus "
                                                "sends, less 0.5 s); the collectors' own timeout defaults to it.")
    freshness: float = Field(30.0, ge=0, le=3600,
                             description="Seconds a collection is served again (HA pairs, retries); 0: every probe "
                                         "collects. Below the scrape interval.")
    max_staleness: DurationOrZero = Field(
        600.0, description="When a probe must start a new collection and the target's last one is at most this "
                           "old, the probe is answered with the last one at once and the next probe is served the "
                           "new one (middleware_probe_collection_age_seconds says how old it is); 0: a probe waits "
                           "for the new collection, up to its deadline. Above the back-off cap, so a target that "
                           "backs off is never waited for.")
    concurrency: int = Field(16, ge=1, le=1024, description="Collections of this module running at once.")
    allow: str = Field("", description="Regular expression (whole match) of targets accepted outside the "
                                       "inventory; empty: only the inventory's targets of this module.")
    backoff: BackoffSettings = Field(default_factory=BackoffSettings)

    @field_validator("allow")
    @classmethod
    def _allow(cls, value: str) -> str:
        return check_regex(value)

    @field_validator("collectors")
    @classmethod
    def _some(cls, value: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        if not value:
            raise ValueError("a module reads at least one collector")
        return value


def check_module_name(name: str) -> str | None:
    if not isinstance(name, str) or not MODULE_NAME_RE.fullmatch(name):
        return "a module name is letters, digits, '.', '-' and '_', not starting with '-' or '.'"
    return None


def substitute(value: Any, target: str, host: str, port: int | None) -> Any:
    """``value`` (a section of the configuration) with ``{target}``, ``{host}`` and ``{port}`` replaced in every
    string; ``{{`` and ``}}`` stay braces.  Only those three names: another ``{...}`` is left as it is."""
    if isinstance(value, str):
        if "{" not in value:
            return value
        return (value.replace("{target}", target).replace("{host}", host)
                .replace("{port}", "" if port is None else str(port)))
    if isinstance(value, dict):
        return {key: substitute(item, target, host, port) for key, item in value.items()}
    if isinstance(value, list):
        return [substitute(item, target, host, port) for item in value]
    return value
