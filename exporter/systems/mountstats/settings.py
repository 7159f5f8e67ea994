"""The mountstats collector's configuration, apart from the collector so that validating a configuration does not
import it (exporter.registry imports this module at start; the collector only when it is enabled)."""

from __future__ import annotations

from pydantic import Field, field_validator

from ...core.settings import CollectorSettings, check_regex


class MountstatsSettings(CollectorSettings):
    enabled: bool = Field(True, description="Run this collector: one read of <procfs>/self/mountstats per run "
                                            "(no statfs, nothing sent to the NFS server, so a hung server cannot "
                                            "block it); no series on a host without NFS mounts.")
    operations: str = Field(".*", description="Regex (full match) of the NFS operations whose per-op series are "
                                              "exported, e.g. `READ|WRITE|GETATTR|LOOKUP|ACCESS`; every one by "
                                              "default (about 60 per NFSv4 mount, 9 series each); `''` for none.")

    @field_validator("operations")
    @classmethod
    def _regex(cls, value: str) -> str:
        return check_regex(value)
