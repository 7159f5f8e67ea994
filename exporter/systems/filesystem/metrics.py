"""The filesystem collector's metrics: node_exporter's ``node_filesystem_*`` under our prefix (whichever back-end
reads them), the stuck-mount figures, and the text back-end's per-command sources.  Declarations only
(``collector.py`` and ``text.py`` add the samples)."""

from __future__ import annotations

from ...core.metrics import NAMESPACE, MetricSpec
from ...core.sources import SourceMetrics

P = f"{NAMESPACE}_filesystem"
LABELS = ("device", "mountpoint", "fstype")
NE = "node_exporter: node_filesystem_"

SIZE = MetricSpec(f"{P}_size_bytes", "gauge", "File system size (f_blocks × f_frsize).", LABELS, NE + "size_bytes")
FREE = MetricSpec(f"{P}_free_bytes", "gauge", "Free space, including the blocks reserved for root "
                  "(f_bfree × f_frsize).", LABELS, NE + "free_bytes")
AVAIL = MetricSpec(f"{P}_avail_bytes", "gauge", "Space an unprivileged user can still use (f_bavail × f_frsize).",
                   LABELS, NE + "avail_bytes")
FILES = MetricSpec(f"{P}_files", "gauge", "File nodes (inodes) in all (f_files).", LABELS, NE + "files")
FILES_FREE = MetricSpec(f"{P}_files_free", "gauge", "Free file nodes (f_ffree).", LABELS, NE + "files_free")
READONLY = MetricSpec(f"{P}_readonly", "gauge", "1 if mounted read-only (mount option ro; also for a failing or "
                      "stuck mount).", LABELS, NE + "readonly")
DEVICE_ERROR = MetricSpec(f"{P}_device_error", "gauge", "1 if statvfs failed or hangs (then only readonly, "
                          "device_error and stuck are emitted for the mount); the error is in /api/v1/collectors.",
                          LABELS, NE + "device_error (without its device_error label)")
STUCK = MetricSpec(f"{P}_stuck", "gauge", "1 while a statvfs of the mount has not returned after statfs_timeout; "
                   "the mount is not asked again until it does.", LABELS)
STUCK_SECONDS = MetricSpec(f"{P}_stuck_seconds", "gauge", "How long the hanging statvfs of a stuck mount has run.",
                           LABELS)
SKIPPED = MetricSpec(f"{P}_mounts_skipped", "gauge", "Mounts of the table left out by the include/exclude "
                     "settings (pseudo file systems by default).", ())
MOUNT_TABLE_HOST = MetricSpec(f"{P}_mount_table_host", "gauge", "1 if the mount table read is PID 1's (the host's); "
                              "0 if /proc hides it and the exporter's own table was read.", ())
SPECS = [SIZE, FREE, AVAIL, FILES, FILES_FREE, READONLY, DEVICE_ERROR, STUCK, STUCK_SECONDS, SKIPPED,
         MOUNT_TABLE_HOST]
TEXT_SOURCES = SourceMetrics.declare(f"{P}_text",
                                     "1 if the command is configured (sources df, mount; text back-end only).")
