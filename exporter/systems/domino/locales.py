"""Domino's number conventions by locale, and the readings of a number they admit: apart from parse.py so that the
collector's settings can check a locale without importing the parser (exporter.registry validates a configured
collector's settings at start)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple


class Reading(NamedTuple):
    """One way of reading a number: its value and the grouping / decimal characters that reading assumes
    (``None``: the reading uses none)."""

    value: float
    grouping: str | None
    decimal: str | None



@dataclass(frozen=True)
class NumberFormat:
    """A convention for the separators: ``grouping`` is ``","``, ``"."``, ``"'"`` (any apostrophe), ``" "``
    (any space-like character) or ``""`` (numbers are not grouped); ``decimal`` is ``"."`` or ``","``.
    ``None`` leaves that part open."""

    grouping: str | None = None
    decimal: str | None = None

    def admits(self, reading: Reading) -> bool:
        """Whether ``reading`` fits: a locale has one grouping character and one decimal mark, so a reading
        grouping with the decimal mark (or marking decimals with the grouping character) does not fit either."""
        grouping, decimal = self.grouping, self.decimal
        if reading.grouping is not None and (
                (grouping is not None and reading.grouping != grouping) or reading.grouping == decimal):
            return False
        if reading.decimal is not None and (
                (decimal is not None and reading.decimal != decimal) or reading.decimal == grouping):
            return False
        return True

    def describe(self) -> str:
        def show(value: str | None) -> str:
            return {None: "open", "": "none", " ": "space"}.get(value, repr(value))
        return f"thousands {show(self.grouping)}, decimal {show(self.decimal)}"


AUTO = NumberFormat()

# Number conventions by locale: (thousands separator, decimal separator), as the operating systems' regional
# settings print them (CLDR / glibc).  A POSIX-style name (de_DE.UTF-8, fr-CA) is looked up by its language;
# any name with region CH (de_CH, fr_CH, it_CH) is "ch".  "c" is the C/POSIX locale: no grouping at all.
LOCALES: dict[str, tuple[str, str]] = {
    "c": ("", "."),
    "en": (",", "."), "ja": (",", "."), "zh": (",", "."), "ko": (",", "."),
    "de": (".", ","), "it": (".", ","), "es": (".", ","), "nl": (".", ","), "pt": (".", ","), "da": (".", ","),
    "tr": (".", ","), "id": (".", ","),
    "fr": (" ", ","), "sv": (" ", ","), "fi": (" ", ","), "nb": (" ", ","), "no": (" ", ","), "pl": (" ", ","),
    "cs": (" ", ","), "sk": (" ", ","), "hu": (" ", ","), "ru": (" ", ","), "uk": (" ", ","),
    "ch": ("'", "."),
}


def locale_format(name: str) -> NumberFormat:
    """The convention of a locale name (``auto``: open), or ValueError for an unknown one."""
    key = name.strip().lower().split(".")[0].replace("-", "_")
    if key == "auto":
        return AUTO
    language, _, region = key.partition("_")
    if region == "ch":
        language = "ch"
    if language == "posix":
        language = "c"
    if language not in LOCALES:
        raise ValueError(f"unknown locale {name!r}: use auto or one of {', '.join(sorted(LOCALES))} "
                         "(or set thousands_separator and decimal_separator)")
    return NumberFormat(*LOCALES[language])
