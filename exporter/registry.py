"""The collectors this exporter ships and the typed configuration that lists them.

This is the one module that knows every source system; ``exporter.cli`` and the reference generator import it,
nothing in ``exporter.core`` does.  Adding a system means a field in :class:`CollectorsSettings`, an entry in its
``collectors()`` and in ``COLLECTORS`` (exposition order).

Registration is lazy (issue 30, docs/footprint.md): validating the configuration needs each system's settings
classes, which live in a light ``exporter.systems.<system>.settings`` module; the collector module (its metric
tables, parsers and clients) is imported by :meth:`Registered.load` only for a collector that is enabled.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from typing import Any, Mapping

from pydantic import Field

from .core.collector import Collector
from .core.config import LogSettings, PathSettings, StaticLabelMap, WebSettings, labels_field, load_config
from .core.settings import CollectorSettings, StrictModel
from .systems.certificates import settings as certificates_settings
from .systems.certificates.settings import CertificatesSettings
from .systems.domino import settings as domino_settings
from .systems.domino.settings import DominoSettings
from .systems.filesystem import settings as filesystem_settings
from .systems.filesystem.settings import FilesystemSettings
from .systems.host import settings as host_settings
from .systems.host.settings import HostSettings
from .systems.hpom import settings as hpom_settings
from .systems.hpom.settings import HpomSettings
from .systems.ibmmq.collector import IbmmqCollector, IbmmqSettings  # eager: its settings live in its collector module
from .systems.mountstats import settings as mountstats_settings
from .systems.mountstats.settings import MountstatsSettings
from .systems.oracle import settings as oracle_settings
from .systems.oracle.settings import OracleCollectorSettings
from .systems.process import settings as process_settings
from .systems.process.settings import ProcessSettings
from .systems.vhi import settings as vhi_settings
from .systems.vhi.settings import VhiSettings


@dataclass(frozen=True)
class Registered:
    """A collector known by name, description and settings class; its class is imported on first use."""

    name: str
    description: str
    Settings: type[CollectorSettings]
    path: str  # "module:Class"

    def load(self) -> type[Collector]:
        module, _, attr = self.path.partition(":")
        return getattr(importlib.import_module(module), attr)  # tests/test_footprint.py: matches this entry


def _system(module: Any, settings: type[CollectorSettings], cls: str) -> Registered:
    return Registered(module.NAME, module.DESCRIPTION, settings,
                      f"{module.__name__.rsplit('.', 1)[0]}.collector:{cls}")


HOST = _system(host_settings, HostSettings, "HostCollector")
FILESYSTEM = _system(filesystem_settings, FilesystemSettings, "FilesystemCollector")
MOUNTSTATS = _system(mountstats_settings, MountstatsSettings, "MountstatsCollector")
PROCESS = _system(process_settings, ProcessSettings, "ProcessCollector")
HPOM = _system(hpom_settings, HpomSettings, "HpomCollector")
ORACLE = _system(oracle_settings, OracleCollectorSettings, "OracleCollector")
IBMMQ = Registered(IbmmqCollector.name, IbmmqCollector.description, IbmmqSettings,
                   "exporter.systems.ibmmq.collector:IbmmqCollector")
VHI = _system(vhi_settings, VhiSettings, "VhiCollector")
DOMINO = _system(domino_settings, DominoSettings, "DominoCollector")
CERTIFICATES = _system(certificates_settings, CertificatesSettings, "CertificatesCollector")

COLLECTORS: tuple[Registered, ...] = (HOST, FILESYSTEM, MOUNTSTATS, PROCESS, HPOM, ORACLE, IBMMQ, VHI, DOMINO,
                                      CERTIFICATES)


class CollectorsSettings(StrictModel):
    """One section per collector (``collectors.<name>`` in the YAML file)."""

    host: HostSettings = Field(default_factory=HostSettings, description=HOST.description)
    filesystem: FilesystemSettings = Field(default_factory=FilesystemSettings,
                                                      description=FILESYSTEM.description)
    mountstats: MountstatsSettings = Field(default_factory=MountstatsSettings,
                                                      description=MOUNTSTATS.description)
    process: ProcessSettings = Field(default_factory=ProcessSettings, description=PROCESS.description)
    hpom: HpomSettings = Field(default_factory=HpomSettings, description=HPOM.description)
    oracle: OracleCollectorSettings = Field(default_factory=OracleCollectorSettings,
                                                   description=ORACLE.description)
    ibmmq: IbmmqSettings = Field(default_factory=IbmmqSettings, description=IBMMQ.description)
    vhi: VhiSettings = Field(default_factory=VhiSettings, description=VHI.description)
    domino: DominoSettings = Field(default_factory=DominoSettings, description=DOMINO.description)
    certificates: CertificatesSettings = Field(default_factory=CertificatesSettings,
                                                            description=CERTIFICATES.description)

    def collectors(self) -> list[tuple[Registered, CollectorSettings]]:
        """Every registered collector with its settings, in exposition order (``Registered.load()`` imports the
        collector's class)."""
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
