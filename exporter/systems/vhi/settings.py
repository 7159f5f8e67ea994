"""The VHI collector's configuration, apart from the collector so that validating a configuration does not import
it (exporter.registry imports this module at start; the collector only when it is enabled)."""

from __future__ import annotations

from pydantic import Field

from ...core.config import StaticLabelMap, labels_field
from ...core.settings import CollectorSettings, Duration


class VhiSettings(CollectorSettings):
    enabled: bool = Field(False, description="Run this collector (on a VHI session server host).")
    interval: Duration = Field(15.0, description="Seconds between collections.")
    timeout: Duration = Field(10.0, description="Seconds before a collection counts as failed.")
    process_names: list[str] = Field(default_factory=lambda: ["sesssrvr"],
                                     description="Process names of the session server.")
    host_ports: list[int] = Field(
        default_factory=lambda: [23, 992],
        description="Remote ports of the host connections (TN3270/TN5250 23, TLS 992, VT ...).")
    sessions_per_cpu_limit: int = Field(250, ge=1, description="VHI-SESS: sessions per CPU the guide allows.")
    memory_base_mb: int = Field(512, ge=0, description="VHI-MEM: minimum memory for up to base_sessions sessions.")
    memory_recommended_base_mb: int = Field(1024, ge=0, description="VHI-MEM: recommended memory for that.")
    memory_per_100_mb: int = Field(64, ge=0, description="VHI-MEM: minimum per further 100 sessions.")
    memory_recommended_per_100_mb: int = Field(128, ge=0, description="VHI-MEM: recommended per further 100.")
    base_sessions: int = Field(100, ge=0, description="Sessions covered by the base memory.")
    labels: StaticLabelMap = labels_field("Labels added to every series of this collector (the session server of "
                                          "this host), e.g. app: vhi-prod (docs/configuration.md).")
