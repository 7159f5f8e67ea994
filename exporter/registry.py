"""The collectors this exporter ships and the typed configuration that lists them.

This is the one module that knows every source system; ``exporter.cli`` and the reference generator import it,
nothing in ``exporter.core`` does.  Adding a system means a field in :class:`CollectorsSettings`, an entry in its
``collectors()`` and in ``COLLECTORS`` (exposition order).

Registration is lazy (issue 30, docs/footprint.md): a collector's module (its metric tables, parsers and clients)
is imported by :meth:`Registered.load` only when the collector is enabled, and the settings class of a collector
that is off by default only when the configuration gives its section (:class:`Dormant` otherwise).
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from typing import Any, Mapping

from pydantic import Field, SerializationInfo, ValidationInfo, field_serializer, field_validator

from .core.collector import Collector
from .core.config import LogSettings, PathSettings, StaticLabelMap, WebSettings, labels_field, load_config
from .core.settings import CollectorSettings, StrictModel
from .systems import certificates, domino, hpom, ibmmq, oracle, vhi
from .systems.filesystem import settings as filesystem_settings
from .systems.filesystem.settings import FilesystemSettings
from .systems.host import settings as host_settings
from .systems.host.settings import HostSettings
from .systems.mountstats import settings as mountstats_settings
from .systems.mountstats.settings import MountstatsSettings
from .systems.process import settings as process_settings
from .systems.process.settings import ProcessSettings


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

    @property
    def Settings(self) -> type[CollectorSettings]:  # noqa: N802 - the name the collector classes use
        return _import(self.settings_path)

    def load(self) -> type[Collector]:
        return _import(self.path)  # tests/project/test_footprint.py: matches this entry


def _system(names: Any, settings: str, cls: str, module: str = "settings") -> Registered:
    """``names``: the module that holds NAME and DESCRIPTION: the system's package (a collector that is off by
    default), or its settings module (one that is on: that module is imported at start anyway)."""
    package = names.__name__ if hasattr(names, "__path__") else names.__name__.rpartition(".")[0]
    return Registered(names.NAME, names.DESCRIPTION, f"{package}.{module}:{settings}", f"{package}.collector:{cls}")


HOST = _system(host_settings, "HostSettings", "HostCollector")
FILESYSTEM = _system(filesystem_settings, "FilesystemSettings", "FilesystemCollector")
MOUNTSTATS = _system(mountstats_settings, "MountstatsSettings", "MountstatsCollector")
PROCESS = _system(process_settings, "ProcessSettings", "ProcessCollector")
HPOM = _system(hpom, "HpomSettings", "HpomCollector")
ORACLE = _system(oracle, "OracleCollectorSettings", "OracleCollector")
IBMMQ = _system(ibmmq, "IbmmqSettings", "IbmmqCollector")
VHI = _system(vhi, "VhiSettings", "VhiCollector")
DOMINO = _system(domino, "DominoSettings", "DominoCollector")
CERTIFICATES = _system(certificates, "CertificatesSettings", "CertificatesCollector")

COLLECTORS: tuple[Registered, ...] = (HOST, FILESYSTEM, MOUNTSTATS, PROCESS, HPOM, ORACLE, IBMMQ, VHI, DOMINO,
                                      CERTIFICATES)
# Off by default: a section the configuration does not give is a Dormant stand-in, and its settings class (with
# the pydantic validators it builds, about 2 MB resident for the six) is never imported (docs/footprint.md).
DORMANT_WHEN_ABSENT = (HPOM, ORACLE, IBMMQ, VHI, DOMINO, CERTIFICATES)
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


def _dormant_field(entry: Registered) -> Any:
    return Field(default_factory=lambda: Dormant(entry), description=entry.description)


class CollectorsSettings(StrictModel):
    """One section per collector (``collectors.<name>`` in the YAML file).  The sections of the collectors that
    are off by default are validated with their settings class when given (``_configured``), and are a
    :class:`Dormant` otherwise."""

    host: HostSettings = Field(default_factory=HostSettings, description=HOST.description)
    filesystem: FilesystemSettings = Field(default_factory=FilesystemSettings, description=FILESYSTEM.description)
    mountstats: MountstatsSettings = Field(default_factory=MountstatsSettings, description=MOUNTSTATS.description)
    process: ProcessSettings = Field(default_factory=ProcessSettings, description=PROCESS.description)
    hpom: Any = _dormant_field(HPOM)
    oracle: Any = _dormant_field(ORACLE)
    ibmmq: Any = _dormant_field(IBMMQ)
    vhi: Any = _dormant_field(VHI)
    domino: Any = _dormant_field(DOMINO)
    certificates: Any = _dormant_field(CERTIFICATES)

    @field_validator(*(entry.name for entry in DORMANT_WHEN_ABSENT), mode="before")
    @classmethod
    def _configured(cls, value: Any, info: ValidationInfo) -> Any:
        if isinstance(value, Dormant):
            return value
        return _BY_NAME[info.field_name].Settings.model_validate(value)  # errors keep their place (oracle.x.y)

    @field_serializer(*(entry.name for entry in DORMANT_WHEN_ABSENT))
    def _dump(self, value: Any, info: SerializationInfo) -> Any:
        settings = value.settings if isinstance(value, Dormant) else value
        return settings.model_dump(mode=info.mode)

    def collectors(self) -> list[tuple[Registered, CollectorSettings | Dormant]]:
        """Every registered collector with its settings (a :class:`Dormant` for one that is off and not
        configured), in exposition order (``Registered.load()`` imports the collector's class)."""
        return [(entry, getattr(self, entry.name)) for entry in COLLECTORS]


class Config(StrictModel):
    """The whole configuration file."""

    web: WebSettings = Field(default_factory=WebSettings)
    paths: PathSettings = Field(default_factory=PathSettings)
    log: LogSettings = Field(default_factory=LogSettings)
    labels: StaticLabelMap = labels_field(
        "Labels added to every series this exporter exposes (e.g. env: prod, site: fra1), its own included; a "
        "target's labels of the same name override them (docs/configuration.md, Static labels).")
    collectors: CollectorsSettings = Field(default_factory=CollectorsSettings)


def load(path: str | os.PathLike[str] | None = None, environ: Mapping[str, str] | None = None,
         overrides: dict[tuple[str, ...], Any] | None = None) -> Config:
    """Read and validate the configuration (file, then environment, then flags); see ``core.config``."""
    return load_config(Config, path, environ, overrides)
