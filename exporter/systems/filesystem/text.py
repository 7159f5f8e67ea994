"""The filesystem collector's text back-end: ``df -k`` (Solaris, AIX, Linux), ``bdf`` (HP-UX) and optionally
``mount`` for the file-system types, run locally or through a command prefix (``ssh -o BatchMode=yes host``),
as the host collector's text back-end runs sar and vmstat (``host/text.py``: C locale, the runner, one
``target``).  For hosts where the exporter's Python cannot run (HP-UX 11i, old Solaris, AIX without psutil).

Each command is a source (``df``, ``mount``) with its own success, duration and error text in
``/api/v1/collectors``; both run at once, each under its own deadline inside the collector's timeout
(``core/sources.SourceSet``), so a df stuck on a hung NFS mount fails the ``df`` source only, is killed at
``command_timeout``, and is not started again while it is still stuck.  The series are the procfs back-end's
(``middleware_filesystem_size_bytes`` etc., labels device, mountpoint, fstype), plus ``target`` when set.
Figures a dialect does not print are absent, never 0 (``textparse.py`` says which).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ...core.metrics import MetricBatch
from ...core.sources import Source, SourceSet
from ...core.targets import local_target
from ...machine.remote import prefixed
from ...machine.runner import DEFAULT_MAX_OUTPUT, CommandError, CommandResult, run_command
from ...machine.textlines import first_line
from .metrics import AVAIL, DEVICE_ERROR, FILES, FILES_FREE, FREE, READONLY, SIZE, SKIPPED, TEXT_SOURCES
from .parse import Mount, select_mounts
from .settings import FilesystemTextSettings

if TYPE_CHECKING:
    from . import textparse

_ENV = {"LC_ALL": "C", "LANG": "C"}  # one spelling of numbers and of the header


class TextFilesystems:
    """One collector's df (and mount) through the runner, kept from run to run (a stuck command is not
    started again while it hangs)."""

    def __init__(self, settings: FilesystemTextSettings, timeout: float, filters: tuple[str, str, str, str]) -> None:
        self.settings = settings
        self.filters = filters  # mount points include, exclude; fs types include, exclude (FilesystemSettings)
        self.sources = SourceSet("filesystem", TEXT_SOURCES, timeout)

    @property
    def target(self) -> str:
        """The host's name on the status page and in middleware_target_up (core/targets.py)."""
        return local_target(self.settings.target)

    def _run(self, argv: list[str], check: bool = True) -> CommandResult:
        command = prefixed(self.settings.command_prefix, argv)
        result = run_command(command, self.settings.command_timeout, env={**os.environ, **_ENV}, check=check)
        if result.truncated and len(result.stdout_bytes) >= DEFAULT_MAX_OUTPUT:
            raise ValueError(f"{argv[0]}: the output was longer than the {DEFAULT_MAX_OUTPUT // (1 << 20)} MiB "
                             "kept and was cut: mounts would be missing")
        return result

    def collect(self, batch: MetricBatch) -> None:
        from . import textparse  # only for this back-end

        table: dict[str, textparse.MountInfo] = {}

        def read_mount():
            result = self._run(self.settings.mount)
            parsed = textparse.parse_mount(result.stdout)
            if not parsed:
                raise ValueError(f"mount: no mount recognised in the output (first line: "
                                 f"{first_line(result.stdout, 120)!r})")
            return lambda: table.update(parsed)  # run before df's samples: the sources are added in list order

        def read_df():
            # df exits non-zero when one mount cannot be read (Solaris "cannot statvfs", AIX) yet prints the others
            argv = self.settings.df_argv()
            result = self._run(argv, check=False)
            reading = textparse.parse_df(result.stdout)
            status = ""
            if result.returncode != 0:
                said = first_line(result.stderr or result.stdout, 200)
                status = f"{argv[0]}: exit status {result.returncode}" + (f": {said}" if said else "")
                if reading.problem is not None or not reading.rows:
                    raise CommandError(status)
            if reading.problem is not None:
                raise ValueError(reading.problem)
            if not reading.rows:
                raise ValueError(f"df: a header but no mount in the output (first line: "
                                 f"{first_line(result.stdout, 120)!r})")

            def add() -> None:
                self._emit(batch, reading, table)
                if status:  # the rows printed are read; what df could not read is said beside them
                    batch.note_error("df exit status", f"{status} (the {len(reading.rows)} mounts printed were read)")
            return add

        self.sources.run(batch, [
            Source("mount", bool(self.settings.mount), read_mount),
            Source("df", bool(self.settings.df_argv()), read_df),
        ], target=self.target)

    def _emit(self, batch: MetricBatch, reading: textparse.DfReading,
              table: dict[str, textparse.MountInfo]) -> None:
        from . import textparse

        mounts, rows = [], {}
        for row in reading.rows:
            info = table.get(row.mountpoint)
            mount = Mount(row.device, row.mountpoint, info.fstype if info else "", "")
            mounts.append(mount)
            rows[(row.device, row.mountpoint, mount.fstype)] = (row, info)
        selection = select_mounts(mounts, *self.filters)
        SKIPPED.add(batch, selection.skipped)
        for mount in selection.mounts:
            row, info = rows[(mount.source, mount.mountpoint, mount.fstype)]
            labels = {"device": mount.source, "mountpoint": mount.mountpoint, "fstype": mount.fstype}
            readonly = textparse.is_readonly(info) if info else None
            if readonly is not None:
                READONLY.add(batch, int(readonly), **labels)
            if row.size is None and row.free is None and row.avail is None:
                continue  # AIX's /proc: all "-"
            DEVICE_ERROR.add(batch, 0, **labels)
            for spec, value in ((SIZE, row.size), (FREE, row.free), (AVAIL, row.avail), (FILES, row.files),
                                (FILES_FREE, row.files_free)):
                if value is not None:
                    spec.add(batch, value, **labels)
