"""The Domino collector's configuration, apart from the collector so that validating a configuration imports
neither the collector nor the console parser (exporter.registry imports this module at start; the collector only
when it is enabled)."""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from ...core.config import StaticLabelMap, labels_field
from ...core.settings import CollectorSettings, Duration
from ...core.sources import check_command_timeout
from ...machine.remote import RemoteCommands, check_remote_arguments
from .locales import LOCALES, NumberFormat, locale_format

DEFAULT_INCLUDE = ["Server.*", "Mail.*", "Mem.*", "Database.*", "Disk.*", "Platform.*", "Replica.*", "Agent.*",
                   "Http.*", "NET.*"]

# thousands_separator: the accepted spellings and the NumberFormat class each stands for.
_THOUSANDS = {",": ",", ".": ".", "'": "'", "\u2019": "'", " ": " ", "\u00a0": " ", "\u202f": " ", "space": " ",
              "none": "", "": ""}


class DominoSettings(CollectorSettings, RemoteCommands):
    enabled: bool = Field(False, description="Run this collector (on a Domino server).")
    interval: Duration = Field(60.0, description="Seconds between collections.")
    timeout: Duration = Field(30.0, description="Seconds before a collection counts as failed.")
    command: list[str] | None = Field(
        None, description="Command printing `show stat` output, as an argument list (no shell), e.g. "
        "[/usr/bin/env, -C, /local/notesdata, /opt/hcl/domino/bin/server, -c, show stat]. null: do not run.")
    command_timeout: Duration = Field(20.0, description="Timeout of the command, seconds (shorter than timeout).")
    labels: StaticLabelMap = labels_field("Labels added to every series of this collector (the one Domino server "
                                          "it reads), e.g. env: prod (docs/configuration.md).")
    include: list[str] = Field(default_factory=lambda: list(DEFAULT_INCLUDE),
                               description="Statistic name patterns to expose (glob, case-insensitive).")
    exclude: list[str] = Field(default_factory=list,
                               description="Statistic name patterns to leave out (glob; applied after include).")
    locale: str = Field(
        "auto", description="Number convention of the server's console output (digit grouping, decimal mark): "
        "auto (read from the output itself, e.g. 1.234.567 shows that a dot groups digits, 98,7 that a comma "
        f"marks decimals), or one of {', '.join(sorted(LOCALES))} (also POSIX names such as de_DE.UTF-8; region CH "
        "is ch: 5'075'542.5). A number still undecided (2.978 with nothing to tell) is kept as text, never guessed.")
    thousands_separator: str | None = Field(
        None, description="Digit grouping character, overriding locale: ',', '.', \"'\" (also U+2019), ' ' or "
        "'space' (any space: blank, no-break, narrow no-break, thin, byte 0xFF), or 'none'. null: from locale.")
    decimal_separator: str | None = Field(
        None, description="Decimal mark, overriding locale: '.' or ','. null: from locale. Must differ from the "
        "thousands separator.")

    @field_validator("command")
    @classmethod
    def _argv(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and (not value or not value[0].strip()):
            raise ValueError("must be a non-empty argument list, e.g. [/opt/hcl/domino/bin/server, -c, show stat]")
        return value

    @field_validator("include", "exclude")
    @classmethod
    def _patterns(cls, value: list[str]) -> list[str]:
        if any(not pattern.strip() for pattern in value):
            raise ValueError("patterns must not be empty")
        return value

    @field_validator("locale")
    @classmethod
    def _locale(cls, value: str) -> str:
        locale_format(value)  # raises for an unknown name
        return value

    @field_validator("thousands_separator")
    @classmethod
    def _thousands(cls, value: str | None) -> str | None:
        if value is not None and value.lower() not in _THOUSANDS:
            raise ValueError(f"{value!r} is not a thousands separator: use ',', '.', \"'\", ' ' (or 'space') or "
                             "'none'")
        return value

    @field_validator("decimal_separator")
    @classmethod
    def _decimal(cls, value: str | None) -> str | None:
        if value is not None and value not in (".", ","):
            raise ValueError(f"{value!r} is not a decimal separator: use '.' or ','")
        return value

    @model_validator(mode="after")
    def _command_timeout_fits(self) -> DominoSettings:
        check_command_timeout(self.command_timeout, self.timeout)
        check_remote_arguments(self.command_prefix, {"command": self.command})
        self.number_format()
        return self

    def number_format(self) -> NumberFormat:
        """The configured convention: the locale's, with the explicit separators overriding it."""
        base = locale_format(self.locale)
        grouping = _THOUSANDS[self.thousands_separator.lower()] if self.thousands_separator is not None \
            else base.grouping
        decimal = self.decimal_separator if self.decimal_separator is not None else base.decimal
        if grouping is not None and grouping == decimal:
            thousands_from = "thousands_separator" if self.thousands_separator is not None else f"locale {self.locale}"
            decimal_from = "decimal_separator" if self.decimal_separator is not None else f"locale {self.locale}"
            raise ValueError(f"the thousands separator (from {thousands_from}) and the decimal separator (from "
                             f"{decimal_from}) are both {decimal!r}: they must differ")
        return NumberFormat(grouping, decimal)
