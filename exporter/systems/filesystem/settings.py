"""The filesystem collector's configuration (and its text back-end's), apart from the collector so that validating
a configuration does not import them (exporter.registry imports this module at start; the collector only when it
is enabled)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from ...core.config import StaticLabelMap, labels_field
from ...core.settings import CollectorSettings, Duration, StrictModel, check_regex
from ...core.sources import check_command_timeout
from ...machine.remote import check_remote_arguments
from .parse import DEFAULT_FS_TYPES_EXCLUDE, DEFAULT_MOUNT_POINTS_EXCLUDE

# df per platform when `df` is not set; HP-UX's own df prints another layout, so bdf there.
DEFAULT_DF = {"hpux": ["bdf"], "solaris": ["df", "-k"], "aix": ["df", "-k"], "linux": ["df", "-kP"],
              "auto": ["df", "-k"]}


class FilesystemTextSettings(StrictModel):
    """Where the text back-end runs its commands (``collectors.filesystem.backend: text``)."""

    command_prefix: list[str] = Field(
        default_factory=list,
        description="Put before every command, e.g. `[ssh, -o, BatchMode=yes, -o, ConnectTimeout=5, hpux1]` for a "
                    "remote host (key authentication); empty: run locally.")
    df: list[str] | None = Field(
        None, description="df command (argument list). Unset: by platform, `[bdf]` (hpux), `[df, -kP]` (linux), "
                          "`[df, -k]` (solaris, aix, auto); AIX `[df, -g]` and `[df, -m]` are read too (GB/MB with "
                          "two decimals: lossy, see the README).")
    mount: list[str] = Field(
        default_factory=list,
        description="Command listing the mounts with their types (`[]`, the default: fstype is empty and "
                    "readonly absent): `[mount, -p]` (HP-UX, Solaris), `[mount]` (AIX, Linux), `[mount, -v]` "
                    "(Solaris).")
    platform: Literal["auto", "hpux", "solaris", "aix", "linux"] = Field(
        "auto", description="Chooses the default `df`; the output's dialect is recognised from its header.")
    target: str = Field("", description="Value of the `target` label of the series (the host the commands read, "
                                        "e.g. `hpux1`); empty: the label is left out.")
    command_timeout: Duration = Field(8.0, description="Seconds a command may run (including ssh) before its whole "
                                                       "process group is killed; shorter than `timeout`.")
    labels: StaticLabelMap = labels_field("Labels added to every series of the filesystem collector while it reads "
                                          "this host (`backend: text`), e.g. site: fra1 (docs/configuration.md).")

    def df_argv(self) -> list[str]:
        return list(self.df) if self.df is not None else list(DEFAULT_DF[self.platform])

    @model_validator(mode="after")
    def _arguments_pass_the_prefix(self) -> "FilesystemTextSettings":
        check_remote_arguments(self.command_prefix, {"df": self.df, "mount": self.mount})
        return self


class FilesystemSettings(CollectorSettings):
    enabled: bool = Field(True, description="Run this collector (one statvfs per mount and run, under "
                                            "paths.rootfs; a hanging mount costs one thread while it hangs).")
    interval: Duration = Field(15.0, description="Seconds between collections.")
    timeout: Duration = Field(10.0, description="Seconds before a collection counts as failed.")
    backend: Literal["auto", "procfs", "psutil", "text"] = Field(
        "auto", description="Where the mount list comes from: `procfs` (<procfs>/1/mounts), `psutil` (other "
                            "platforms), `auto` (procfs on Linux and for a Linux-shaped paths.procfs, psutil "
                            "elsewhere), or `text` (df/bdf, locally or through `text.command_prefix`); see "
                            "docs/platforms.md.")
    text: FilesystemTextSettings = Field(default_factory=FilesystemTextSettings,
                                         description="The commands of `backend: text` (HP-UX, Solaris, AIX, "
                                                     "remote hosts).")
    mount_points_exclude: str = Field(
        DEFAULT_MOUNT_POINTS_EXCLUDE, description="Regex of mount points to leave out (node_exporter's "
                                                  "--collector.filesystem.mount-points-exclude default).")
    mount_points_include: str = Field(
        "", description="Regex of mount points to measure; when set, mount_points_exclude is not used.")
    fs_types_exclude: str = Field(
        DEFAULT_FS_TYPES_EXCLUDE, description="Regex of file-system types to leave out (node_exporter's "
                                              "--collector.filesystem.fs-types-exclude default).")
    fs_types_include: str = Field(
        "", description="Regex of file-system types to measure; when set, fs_types_exclude is not used.")
    statfs_timeout: Duration = Field(
        5.0, description="Seconds a mount's statvfs may take before the mount counts as stuck (node_exporter's "
                         "mount-timeout); at most half the timeout.")
    @field_validator("mount_points_exclude", "mount_points_include", "fs_types_exclude", "fs_types_include")
    @classmethod
    def _regex(cls, value: str) -> str:
        return check_regex(value) if value else value

    @model_validator(mode="after")
    def _statfs_within_timeout(self) -> "FilesystemSettings":
        if self.statfs_timeout > self.timeout / 2:
            raise ValueError(f"statfs_timeout ({self.statfs_timeout:g}s) must be at most half the timeout "
                             f"({self.timeout:g}s): a run must have time for the other mounts after a new hang")
        if self.backend == "text":
            check_command_timeout(self.text.command_timeout, self.timeout)
        return self
