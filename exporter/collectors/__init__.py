"""One module per source system. ``REGISTRY`` maps a collector's name to its class, in exposition order."""

from __future__ import annotations

from ..collector import Collector
from .domino import DominoCollector
from .host import HostCollector
from .hpom import HpomCollector
from .ibmmq import IbmmqCollector
from .oracle import OracleCollector
from .process import ProcessCollector
from .vhi import VhiCollector

REGISTRY: dict[str, type[Collector]] = {
    cls.name: cls for cls in (HostCollector, ProcessCollector, HpomCollector, OracleCollector, IbmmqCollector,
                              VhiCollector, DominoCollector)
}
