"""The filesystem collector against Debian's prometheus-node-exporter on this machine's real mounts, same run.

node_exporter (only its filesystem collector, given our default include/exclude regexes as flags, since Debian's
build changes the upstream default) is scraped (A), our collector runs once in-process, node_exporter is scraped
again (B).  Same mounts (device, mountpoint, fstype); size and files equal; free, available and files free between
A and B widened by a stated tolerance (TOL_BYTES, TOL_FILES) for other processes writing in between; readonly and
device_error equal.  node_exporter multiplies by f_bsize and we by f_frsize: a mount where they differ is compared
only for files and readonly (none on ext4, xfs, tmpfs).
"""

from __future__ import annotations

import os

import pytest

from exporter.core.collector import Context
from exporter.systems.filesystem.collector import FilesystemCollector
from exporter.systems.filesystem.parse import DEFAULT_FS_TYPES_EXCLUDE, DEFAULT_MOUNT_POINTS_EXCLUDE
from exporter.systems.filesystem.settings import FilesystemSettings

from ...support import collect
from ..host.test_node_exporter_agreement import NodeExporter, _node_samples  # noqa: F401 - its fixture is used below
from ..host.test_node_exporter_agreement import node_exporter as _node_exporter_fixture  # noqa: F401

pytestmark = pytest.mark.integration

TOL_BYTES = 64 * 1024 * 1024
TOL_FILES = 4096
FLAGS = ["--collector.disable-defaults", "--collector.filesystem",
         f"--collector.filesystem.mount-points-exclude={DEFAULT_MOUNT_POINTS_EXCLUDE}",
         f"--collector.filesystem.fs-types-exclude={DEFAULT_FS_TYPES_EXCLUDE}"]
LABELS = ("device", "mountpoint", "fstype")


def _by_mount(samples, prefix: str) -> dict[str, dict[tuple[str, ...], float]]:
    result: dict[str, dict[tuple[str, ...], float]] = {}
    for name, entries in samples.items():
        if name.startswith(prefix):
            for labels, value in entries:
                result.setdefault(name[len(prefix):], {})[tuple(labels[k] for k in LABELS)] = value
    return result


def test_filesystem_figures_agree_with_node_exporter(monkeypatch, request):
    monkeypatch.setattr("tests.systems.host.test_node_exporter_agreement.NODE_COLLECTOR_FLAGS", FLAGS)
    node: NodeExporter = request.getfixturevalue("_node_exporter_fixture")
    before = _by_mount(_node_samples(node.url), "node_filesystem_")
    collector = FilesystemCollector(FilesystemSettings(), Context())
    ours_raw, batch = collect(collector)
    after = _by_mount(_node_samples(node.url), "node_filesystem_")
    ours: dict[str, dict[tuple[str, ...], float]] = {}
    for (name, labels), value in ours_raw.items():
        if name.startswith("middleware_filesystem_") and labels:
            ours.setdefault(name[len("middleware_filesystem_"):], {})[tuple(dict(labels)[k] for k in LABELS)] = value
    assert not batch.errors, batch.errors
    assert set(ours["readonly"]) == set(before["readonly"]) == set(after["readonly"])  # the same mounts
    assert ours["readonly"] == before["readonly"]
    assert ours["device_error"] == before["device_error"]
    compared = 0
    for key in ours["size_bytes"]:
        st = os.statvfs(key[1])
        assert ours["files"][key] == before["files"][key] == after["files"][key], key
        lo, hi = sorted((before["files_free"][key], after["files_free"][key]))
        assert lo - TOL_FILES <= ours["files_free"][key] <= hi + TOL_FILES, key
        if st.f_bsize != st.f_frsize:
            continue  # node_exporter's f_bsize unit differs from statvfs's f_frsize here
        compared += 1
        assert ours["size_bytes"][key] == before["size_bytes"][key] == after["size_bytes"][key], key
        for figure in ("free_bytes", "avail_bytes"):
            lo, hi = sorted((before[figure][key], after[figure][key]))
            assert lo - TOL_BYTES <= ours[figure][key] <= hi + TOL_BYTES, (figure, key)
    assert compared >= 1  # at least the root file system
