"""The filesystem collector's psutil back-end, where /proc is not Linux's (AIX, Solaris, Windows, macOS, FreeBSD):
the mount list from ``psutil.disk_partitions``, and on Windows, which has no statvfs, the usage from
``psutil.disk_usage``.  Imported only where this back-end is chosen."""

from __future__ import annotations

import psutil

from .parse import Mount


def psutil_mounts() -> list[Mount]:
    return [Mount(p.device, p.mountpoint, p.fstype, p.opts) for p in psutil.disk_partitions(all=True)]


class UsageStat:
    """A statvfs-shaped result from ``psutil.disk_usage`` (Windows has no statvfs): bytes, no file nodes."""

    f_frsize = f_bsize = 1
    f_files = f_ffree = -1

    def __init__(self, path: str) -> None:
        usage = psutil.disk_usage(path)
        self.f_blocks, self.f_bfree, self.f_bavail = usage.total, usage.free, usage.free
