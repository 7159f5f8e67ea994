"""Pure functions of the file-system collector: which mounts of a mount table are measured.

The table is parsed by ``machine.procfs.parse_mounts`` (octal escapes decoded; shared with Oracle's NFS checks) and
filtered here with node_exporter's include/exclude semantics.  No I/O here.
"""

from __future__ import annotations

import re
from typing import NamedTuple, Sequence

from ...machine.procfs import Mount, parse_mounts

__all__ = ["Mount", "parse_mounts", "Selection", "select_mounts", "is_readonly"]

# node_exporter's defaults (collector/filesystem_linux.go, v1.12.1; docs/notes/host-health-design.md §1).
DEFAULT_MOUNT_POINTS_EXCLUDE = (r"^/(dev|proc|run/credentials/.+|sys|var/lib/docker/.+|"
                                r"var/lib/containers/storage/.+)($|/)")
DEFAULT_FS_TYPES_EXCLUDE = (r"^(autofs|binfmt_misc|bpf|cgroup2?|configfs|debugfs|devpts|devtmpfs|fusectl|hugetlbfs|"
                            r"iso9660|mqueue|nsfs|overlay|proc|procfs|pstore|rpc_pipefs|securityfs|selinuxfs|"
                            r"squashfs|erofs|sysfs|tracefs)$")


class Selection(NamedTuple):
    mounts: list[Mount]  # to measure, in table order, one per (device, mountpoint, fstype)
    skipped: int  # left out by the filters


def _keep(value: str, include: re.Pattern[str] | None, exclude: re.Pattern[str] | None) -> bool:
    if include is not None:
        return include.search(value) is not None
    return exclude is None or exclude.search(value) is None


def select_mounts(mounts: Sequence[Mount], mount_points_include: str = "",
                  mount_points_exclude: str = DEFAULT_MOUNT_POINTS_EXCLUDE, fs_types_include: str = "",
                  fs_types_exclude: str = DEFAULT_FS_TYPES_EXCLUDE) -> Selection:
    """The mounts to measure.  An include pattern, when given, replaces the exclude pattern of its kind (as in
    node_exporter, where giving the include flag clears the default exclude); an empty pattern matches nothing.
    A mount listed twice with the same device, mount point and type is kept once (node_exporter emits it once)."""
    mp_inc = re.compile(mount_points_include) if mount_points_include else None
    mp_exc = re.compile(mount_points_exclude) if mount_points_exclude else None
    fs_inc = re.compile(fs_types_include) if fs_types_include else None
    fs_exc = re.compile(fs_types_exclude) if fs_types_exclude else None
    kept: list[Mount] = []
    seen: set[tuple[str, str, str]] = set()
    skipped = 0
    for mount in mounts:
        if not (_keep(mount.mountpoint, mp_inc, mp_exc) and _keep(mount.fstype, fs_inc, fs_exc)):
            skipped += 1
            continue
        key = (mount.source, mount.mountpoint, mount.fstype)
        if key not in seen:
            seen.add(key)
            kept.append(mount)
    return Selection(kept, skipped)


def is_readonly(mount: Mount) -> bool:
    """Mounted read-only, from the mount options (node_exporter 1.5's rule; it needs no statfs, so a stuck or
    failing mount still has it)."""
    return "ro" in mount.options.split(",")
