"""The host collector's configuration (and its text back-end's), apart from the collector so that validating a
configuration does not import them (exporter.registry imports this module at start; the collector only when it is
enabled)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from ...core.config import StaticLabelMap, labels_field
from ...core.settings import CollectorSettings, Duration, StrictModel, check_regex
from ...core.sources import check_command_timeout
from ...machine.remote import check_remote_arguments

COMMANDS = ("sar", "iostat", "vmstat", "uptime", "svmon", "lsps", "swapinfo", "swap", "lparstat")


class TextSettings(StrictModel):
    """Where the text back-end runs its commands (``collectors.host.backend: text``)."""

    command_prefix: list[str] = Field(
        default_factory=list,
        description="Put before every command, e.g. `[ssh, -o, BatchMode=yes, -o, ConnectTimeout=5, hpux1]` for a "
                    "remote host (key authentication; see the host README for a forced command); empty: run locally.")
    sar: list[str] = Field(["sar", "-u", "-d", "5", "1"],
                           description="sar command (argument list; `[]` to skip): CPU (-u), disks (-d), paging "
                                       "with -g on Solaris (pgscan/s) or -B with sysstat, the run queue with -q, "
                                       "free memory and swap with -r (Solaris, sysstat) and -S (sysstat).")
    vmstat: list[str] = Field(["vmstat", "5", "2"],
                              description="vmstat command (`[]` to skip): needs a count of 2 or more (the first "
                                          "line is the average since boot); gives the scan rate `sr` and free "
                                          "memory (free/fre, avm; swpd/buff/cache on Linux, swap on Solaris).")
    iostat: list[str] = Field(default_factory=list,
                              description="iostat command (`[]`, the default, skips it): e.g. `[iostat, -xn, 5, 2]` "
                                          "(Solaris), `[iostat, -D, 5, 2]` or `[iostat, -DRTl, 5, 2]` (AIX), "
                                          "`[iostat, -x, 5, 2]` (sysstat).")
    uptime: list[str] = Field(
        default_factory=list,
        description="uptime command (`[]`, the default, skips it): e.g. `[uptime]`, the load averages as "
                    "`middleware_host_load1/5/15` (every Unix prints them; off by default so that an upgrade runs no "
                    "command a host's forced command does not allow). sysstat's `sar -q` gives them too.")
    svmon: list[str] = Field(
        default_factory=list,
        description="AIX: `[svmon, -G]` (`[]`, the default, skips it): memory size, free and available, paging "
                    "space size and in use, in 4 KiB frames (exact; svmon may need root or the SystemAdmin role).")
    lsps: list[str] = Field(
        default_factory=list,
        description="AIX: `[lsps, -s]` (`[]` skips it): total paging space and the whole percentage used (svmon "
                    "-G, if configured, is exact and wins).")
    swapinfo: list[str] = Field(
        default_factory=list,
        description="HP-UX: `[swapinfo, -tam]` (`[]` skips it; usually root only, e.g. through sudo): paging space "
                    "on disk and the virtual swap total (with pseudo-swap and reservations), in MiB with -m.")
    swap: list[str] = Field(
        default_factory=list,
        description="Solaris: `[/usr/sbin/swap, -s]` (`[]` skips it; without -h): virtual swap used and "
                    "available, in KiB.")
    lparstat: list[str] = Field(
        default_factory=list,
        description="AIX LPAR: `[lparstat, 5, 1]` (`[]` skips it; give an interval, without one lparstat prints "
                    "the average since boot): entitlement (ent), physical cores consumed (physc), %entc and the "
                    "partition's type/mode. These commands are off by default so that an upgrade runs no command "
                    "a host's forced command does not allow; vmstat and sar -r/-S give memory without them.")
    platform: Literal["auto", "hpux", "solaris", "aix", "linux"] = Field(
        "auto", description="The dialect of the output; `auto` recognises it from the banner and the headers.")
    target: str = Field("", description="Value of the `target` label of the text back-end's series (the host the "
                                        "commands read, e.g. `hpux1`); empty: the label is left out.")
    command_timeout: Duration = Field(8.0, description="Seconds a command may run (including ssh) before its whole "
                                                       "process group is killed; shorter than `timeout`.")
    labels: StaticLabelMap = labels_field("Labels added to every series of the host collector while it reads this "
                                          "host (`backend: text`), e.g. site: fra1 (docs/configuration.md).")

    @model_validator(mode="after")
    def _arguments_pass_the_prefix(self) -> "TextSettings":
        check_remote_arguments(self.command_prefix, {tool: getattr(self, tool) for tool in COMMANDS})
        return self


# node_exporter's default: whole disks only, no partitions, loop, ram or floppy devices.
DEFAULT_DISK_EXCLUDE = r"^(ram|loop|fd|(h|s|v|xv)d[a-z]|nvme\d+n\d+p)\d+$"


class HostSettings(CollectorSettings):
    interval: Duration = Field(15.0, description="Seconds between collections.")
    timeout: Duration = Field(10.0, description="Seconds before a collection counts as failed.")
    disk_exclude: str = Field(DEFAULT_DISK_EXCLUDE,
                              description="Regex of block devices to skip (partitions by default).")
    netdev_exclude: str = Field("", description="Regex of network interfaces to skip (none by default).")
    backend: Literal["auto", "procfs", "psutil", "text"] = Field(
        "auto", description="Where the figures come from: `procfs` (Linux's /proc and /sys), `psutil` (other "
                            "platforms), `auto` (procfs on Linux and for a Linux-shaped paths.procfs, psutil "
                            "elsewhere), or `text` (sar/vmstat/iostat, locally or through `text.command_prefix`; "
                            "never chosen by `auto`); see docs/platforms.md.")
    text: TextSettings = Field(default_factory=TextSettings,
                               description="The commands of `backend: text` (HP-UX, old Solaris, remote hosts).")

    @field_validator("disk_exclude", "netdev_exclude")
    @classmethod
    def _check_regex(cls, value: str) -> str:
        return check_regex(value)

    @model_validator(mode="after")
    def _text_commands_within_timeout(self) -> "HostSettings":
        if self.backend == "text":
            check_command_timeout(self.text.command_timeout, self.timeout)
        return self
