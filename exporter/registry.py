"""The collectors this exporter ships and the typed configuration that lists them.

This is the one module that knows every source system; ``exporter.cli`` and the reference generator import it,
nothing in ``exporter.core`` does.  Adding a system means a field in :class:`CollectorsSettings`, an entry in its
``collectors()`` and in ``COLLECTORS`` (exposition order).
"""

from __future__ import annotations

import os
from typing import Any, Mapping

from pydantic import Field

from .core.collector import Collector
from .core.config import LogSettings, PathSettings, StaticLabelMap, WebSettings, labels_field, load_config
from .core.settings import CollectorSettings, StrictModel
from .systems.certificates.collector import CertificatesCollector, CertificatesSettings
from .systems.domino.collector import DominoCollector, DominoSettings
from .systems.filesystem.collector import FilesystemCollector, FilesystemSettings
from .systems.host.collector import HostCollector, HostSettings
from .systems.hpom.collector import HpomCollector, HpomSettings
from .systems.ibmmq.collector import IbmmqCollector, IbmmqSettings
from .systems.mountstats.collector import MountstatsCollector, MountstatsSettings
from .systems.oracle.collector import OracleCollector, OracleCollectorSettings
from .systems.process.collector import ProcessCollector, ProcessSettings
from .systems.vhi.collector import VhiCollector, VhiSettings

COLLECTORS: tuple[type[Collector], ...] = (HostCollector, FilesystemCollector, MountstatsCollector, ProcessCollector,
                                          HpomCollector,
                                          OracleCollector, IbmmqCollector, VhiCollector, DominoCollector,
                                          CertificatesCollector)


class CollectorsSettings(StrictModel):
    """One section per collector (``collectors.<name>`` in the YAML file)."""

    host: HostSettings = Field(default_factory=HostSettings, description=HostCollector.description)
    filesystem: FilesystemSettings = Field(default_factory=FilesystemSettings,
                                           description=FilesystemCollector.description)
    mountstats: MountstatsSettings = Field(default_factory=MountstatsSettings,
                                           description=MountstatsCollector.description)
    process: ProcessSettings = Field(default_factory=ProcessSettings, description=ProcessCollector.description)
    hpom: HpomSettings = Field(default_factory=HpomSettings, description=HpomCollector.description)
    oracle: OracleCollectorSettings = Field(default_factory=OracleCollectorSettings,
                                            description=OracleCollector.description)
    ibmmq: IbmmqSettings = Field(default_factory=IbmmqSettings, description=IbmmqCollector.description)
    vhi: VhiSettings = Field(default_factory=VhiSettings, description=VhiCollector.description)
    domino: DominoSettings = Field(default_factory=DominoSettings, description=DominoCollector.description)
    certificates: CertificatesSettings = Field(default_factory=CertificatesSettings,
                                               description=CertificatesCollector.description)

    def collectors(self) -> list[tuple[type[Collector], CollectorSettings]]:
        """Every collector class with its settings, in exposition order."""
        return [(HostCollector, self.host), (FilesystemCollector, self.filesystem),
                (MountstatsCollector, self.mountstats), (ProcessCollector, self.process),
                (HpomCollector, self.hpom),
                (OracleCollector, self.oracle), (IbmmqCollector, self.ibmmq), (VhiCollector, self.vhi),
                (DominoCollector, self.domino), (CertificatesCollector, self.certificates)]


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
