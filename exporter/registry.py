"""The collectors this exporter ships and the typed configuration that lists them.

This is the one module that knows every source system; ``exporter.cli`` and the reference generator import it,
nothing in ``exporter.core`` does.  Each system is declared once, in :data:`SYSTEMS`: adding one means a package
``exporter/systems/<name>/`` (its ``__init__.py`` holding ``NAME`` and ``DESCRIPTION``, ``settings.py``,
``metrics.py``, ``collector.py``; CONTRIBUTING.md walks it) and one line there.  Its section of the configuration
(``collectors.<name>``, a field of :class:`CollectorsSettings`), its place in the exposition and its command-line
flag follow from that line.

Registration is lazy (issue 30, docs/footprint.md): a collector's module (its metric tables, parsers and clients)
is imported by :meth:`Registered.load` only when the collector is enabled, and the settings class of a collector
that is off by default only when the configuration gives its section (:class:`Dormant` otherwise).
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from typing import Any, Mapping

from pydantic import Field, SerializationInfo, ValidationInfo, create_model, field_serializer, field_validator

from .core.collector import Collector
from .core.config import (
    InventorySettings,
    LogSettings,
    PathSettings,
    StaticLabelMap,
    WebSettings,
    labels_field,
    load_config,
)
from .core.settings import CollectorSettings, StrictModel

ON, OFF = True, False

# Every system, once, in exposition order: its name (the package exporter.systems.<name>), its settings class and
# its collector class ("module:Class" in that package), and whether it is on by default.  The settings class of
# one that is off is imported only when the configuration gives its section (Dormant below).
SYSTEMS: tuple[tuple[str, str, str, bool], ...] = (
    ("host", "settings:HostSettings", "collector:HostCollector", ON),
    ("filesystem", "settings:FilesystemSettings", "collector:FilesystemCollector", ON),
    ("mountstats", "settings:MountstatsSettings", "collector:MountstatsCollector", ON),
    ("process", "settings:ProcessSettings", "collector:ProcessCollector", ON),
    ("hpom", "settings:HpomSettings", "collector:HpomCollector", OFF),
    ("oracle", "settings:OracleCollectorSettings", "collector:OracleCollector", OFF),
    ("ibmmq", "settings:IbmmqSettings", "collector:IbmmqCollector", OFF),
    ("vhi", "settings:VhiSettings", "collector:VhiCollector", OFF),
    ("domino", "settings:DominoSettings", "collector:DominoCollector", OFF),
    ("certificates", "settings:CertificatesSettings", "collector:CertificatesCollector", OFF),
)


def _import(path: str) -> Any:
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(module), attr)


@dataclass(frozen=True)
class Registered:
    """A collector known by name and description; its settings class and its collector class are imported on
    first use (``Settings``, :meth:`load`)."""

    name: str
    description: str
    settings_path: str  # "module:Class"
    path: str  # "module:Class"
    dormant: bool  # off by default: its settings are a Dormant until the configuration gives its section

    @property
    def Settings(self) -> type[CollectorSettings]:  # noqa: N802 - the name the collector classes use
        return _import(self.settings_path)

    def load(self) -> type[Collector]:
        return _import(self.path)  # tests/project/test_footprint.py: matches this entry

    @classmethod
    def declare(cls, name: str, settings: str, collector: str, on: bool) -> "Registered":
        """One line of :data:`SYSTEMS`; the description is the package's (its ``__init__`` imports nothing)."""
        package = f"{__package__}.systems.{name}"
        description = importlib.import_module(package).DESCRIPTION
        return cls(name, description, f"{package}.{settings}", f"{package}.{collector}", not on)


COLLECTORS: tuple[Registered, ...] = tuple(Registered.declare(*system) for system in SYSTEMS)
# Off by default: a section the configuration does not give is a Dormant stand-in, and its settings class (with
# the pydantic validators it builds, about 2 MB resident for the six) is never imported (docs/footprint.md).
DORMANT_WHEN_ABSENT = tuple(entry for entry in COLLECTORS if entry.dormant)
_BY_NAME = {entry.name: entry for entry in COLLECTORS}


class Dormant:
    """The settings of a collector that is off and that the configuration does not mention.  ``enabled`` is False
    without importing anything; reading any other setting (the advisor, check-config's listing) builds the
    collector's default settings then."""

    enabled = False

    def __init__(self, entry: Registered) -> None:
        self._entry = entry
        self._settings: CollectorSettings | None = None

    @property
    def settings(self) -> CollectorSettings:
        if self._settings is None:
            self._settings = self._entry.Settings()
        return self._settings

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # never through the settings (copy, pickle, and the attributes above)
            raise AttributeError(name)
        return getattr(self.settings, name)

    def __repr__(self) -> str:
        return f"Dormant({self._entry.name})"


def _field(entry: Registered) -> tuple[Any, Any]:
    """A section of :class:`CollectorsSettings`: the settings class (imported now: the collector is on by default),
    or a :class:`Dormant` until the configuration gives it."""
    if entry.dormant:
        return Any, Field(default_factory=lambda: Dormant(entry), description=entry.description)
    return entry.Settings, Field(default_factory=entry.Settings, description=entry.description)


class _Sections(StrictModel):
    """The validation of the sections of the collectors that are off by default: with their settings class when
    given (``_configured``), a :class:`Dormant` otherwise."""

    @field_validator(*(entry.name for entry in DORMANT_WHEN_ABSENT), mode="before", check_fields=False)
    @classmethod
    def _configured(cls, value: Any, info: ValidationInfo) -> Any:
        if isinstance(value, Dormant):
            return value
        return _BY_NAME[info.field_name].Settings.model_validate(value)  # errors keep their place (oracle.x.y)

    @field_serializer(*(entry.name for entry in DORMANT_WHEN_ABSENT), check_fields=False)
    def _dump(self, value: Any, info: SerializationInfo) -> Any:
        settings = value.settings if isinstance(value, Dormant) else value
        return settings.model_dump(mode=info.mode)

    def collectors(self) -> list[tuple[Registered, CollectorSettings | Dormant]]:
        """Every registered collector with its settings (a :class:`Dormant` for one that is off and not
        configured), in exposition order (``Registered.load()`` imports the collector's class)."""
        return [(entry, getattr(self, entry.name)) for entry in COLLECTORS]


CollectorsSettings = create_model(
    "CollectorsSettings", __base__=_Sections, __module__=__name__,
    __doc__="One section per collector (``collectors.<name>`` in the YAML file), one per line of SYSTEMS.",
    **{entry.name: _field(entry) for entry in COLLECTORS})


class Config(StrictModel):
    """The whole configuration file."""

    web: WebSettings = Field(default_factory=WebSettings)
    paths: PathSettings = Field(default_factory=PathSettings)
    log: LogSettings = Field(default_factory=LogSettings)
    inventory: InventorySettings = Field(default_factory=InventorySettings)
    labels: StaticLabelMap = labels_field(
        "Labels added to every series this exporter exposes (e.g. env: prod, site: fra1), its own included; a "
        "target's labels of the same name override them (docs/configuration.md, Static labels).")
    collectors: CollectorsSettings = Field(default_factory=CollectorsSettings)


def load(path: str | os.PathLike[str] | None = None, environ: Mapping[str, str] | None = None,
         overrides: dict[tuple[str, ...], Any] | None = None) -> Config:
    """Read and validate the configuration (file, then environment, then flags); see ``core.config``."""
    return load_config(Config, path, environ, overrides)
