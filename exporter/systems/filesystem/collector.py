"""File systems: size, free, available, files, files free and read-only per mount, hang-proof.

The mount list is PID 1's table (``<procfs>/1/mounts``: in a container with the host's /proc, the host's mounts),
or the exporter's own where /proc hides PID 1 (``machine.procfs.read_mount_table``, shared with Oracle's NFS
checks); through psutil where /proc is not Linux's (``psutil.py``); from df and mount with ``backend: text``
(``text.py``).  Pseudo file systems are left out with node_exporter's default filters (``settings.py``).  Every
mount is measured with one ``statvfs`` of its mount point under ``paths.rootfs`` (the host's / mounted at
/host/root in a container; a recorded tree in tests, so that no real mount is asked) through
``statfs.StatfsProber``: a mount whose statvfs does not answer within ``statfs_timeout`` is reported stuck and not
asked again while that call hangs; the other mounts' figures still come, and the stuck one's state shows in
``middleware_filesystem_stuck`` and in ``/api/v1/collectors`` (``source_errors``).  Metric names and semantics are
node_exporter's (``node_filesystem_*``, declared in ``metrics.py``), see README.md.
"""

from __future__ import annotations

import os

from ...core.collector import Collector, Context
from ...core.metrics import ConfiguredLabels, MetricBatch, MetricSpec
from ...machine.deadline import current_scope
from ...machine.procfs import choose_backend, read_mount_table
from . import DESCRIPTION, NAME
from .metrics import (
    AVAIL,
    DEVICE_ERROR,
    FILES,
    FILES_FREE,
    FREE,
    MOUNT_TABLE_HOST,
    READONLY,
    SIZE,
    SKIPPED,
    SPECS,
    STUCK,
    STUCK_SECONDS,
    TEXT_SOURCES,
)
from .parse import (
    is_readonly,
    select_mounts,
)
from .settings import FilesystemSettings


def _statfs_function():
    if hasattr(os, "statvfs"):
        return os.statvfs
    from .psutil import UsageStat  # Windows has no statvfs

    return UsageStat


class FilesystemCollector(Collector):
    name = NAME
    description = DESCRIPTION
    Settings = FilesystemSettings

    def __init__(self, settings: FilesystemSettings, context: Context) -> None:
        super().__init__(settings, context)
        self.settings: FilesystemSettings = settings
        from .statfs import StatfsProber

        self.backend = choose_backend(settings.backend, context.procfs)
        self.prober = StatfsProber(self.name, _statfs_function())
        self._text = None
        if self.backend == "text":
            from .text import TextFilesystems

            self._text = TextFilesystems(settings.text, settings.timeout, (
                settings.mount_points_include, settings.mount_points_exclude, settings.fs_types_include,
                settings.fs_types_exclude))

    def specs(self) -> list[MetricSpec]:
        return [*SPECS, *TEXT_SOURCES.specs()]

    def targets(self) -> list[str]:
        return [self._text.target] if self._text is not None else []

    def const_labels(self) -> dict[str, str]:
        return {"target": self.settings.text.target} if self._text is not None and self.settings.text.target else {}

    def static_labels(self) -> list[ConfiguredLabels]:
        if self._text is None:  # the other back-ends read this host: the exporter's labels are its
            return []
        return [ConfiguredLabels(self._text.target, "collectors.filesystem.text.labels", self.settings.text.labels)]

    def _path(self, mountpoint: str) -> str:
        root = self.context.rootfs
        return mountpoint if root in ("", "/") else os.path.join(root, mountpoint.lstrip("/"))

    def _budget(self) -> float:
        scope = current_scope()
        remaining = scope.remaining() if scope is not None else None
        if remaining is None:
            remaining = self.settings.timeout
        return max(remaining - min(1.0, remaining * 0.1), 0.0)  # keep a moment to build the batch

    def collect(self, batch: MetricBatch) -> None:
        s = self.settings
        if self._text is not None:  # df's failure is its source's (status API), never the run's
            for family in (SIZE, FREE, AVAIL, FILES, FILES_FREE, READONLY, DEVICE_ERROR, SKIPPED):
                family.declare_empty(batch)
            self._text.collect(batch)
            return
        if self.backend == "psutil":
            from .psutil import psutil_mounts  # psutil is imported only where it is the back-end

            mounts, host = psutil_mounts(), True
        else:
            mounts, host = read_mount_table(self.context.procfs)[:2]
            MOUNT_TABLE_HOST.add(batch, int(host))
        selection = select_mounts(mounts, s.mount_points_include, s.mount_points_exclude, s.fs_types_include,
                                  s.fs_types_exclude)
        SKIPPED.add(batch, selection.skipped)
        for family in SPECS:
            family.declare_empty(batch)
        paths = {m.mountpoint: self._path(m.mountpoint) for m in selection.mounts}
        results = self.prober.probe(list(paths.values()), s.statfs_timeout, self._budget())
        unchecked = []
        for mount in selection.mounts:
            labels = {"device": mount.source, "mountpoint": mount.mountpoint, "fstype": mount.fstype}
            result = results.get(paths[mount.mountpoint])
            READONLY.add(batch, int(is_readonly(mount)), **labels)
            if result is None:
                unchecked.append(mount.mountpoint)
                continue
            STUCK.add(batch, int(result.stuck), **labels)
            if result.stat is None:
                DEVICE_ERROR.add(batch, 1, **labels)
                if result.stuck:
                    STUCK_SECONDS.add(batch, round(result.stuck_seconds or 0.0, 3), **labels)
                    batch.note_error(f"statfs {mount.mountpoint}",
                                     f"stuck: statvfs has not returned for {result.stuck_seconds:.0f}s "
                                     "(not asked again until it does)")
                else:
                    batch.note_error(f"statfs {mount.mountpoint}", f"statvfs failed: {result.error}")
                continue
            st = result.stat
            unit = st.f_frsize or st.f_bsize  # POSIX and df use f_frsize; 0 on a few old systems
            DEVICE_ERROR.add(batch, 0, **labels)
            SIZE.add(batch, st.f_blocks * unit, **labels)
            FREE.add(batch, st.f_bfree * unit, **labels)
            AVAIL.add(batch, st.f_bavail * unit, **labels)
            if st.f_files >= 0:
                FILES.add(batch, st.f_files, **labels)
                FILES_FREE.add(batch, st.f_ffree, **labels)
        if unchecked:
            shown = ", ".join(unchecked[:5]) + (f" and {len(unchecked) - 5} more" if len(unchecked) > 5 else "")
            batch.note_error("statfs", f"not checked in this run (no time left after stuck mounts): {shown}")
