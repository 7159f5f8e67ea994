"""A real hang: a FUSE file system whose statfs blocks, mounted next to this machine's real mounts while a real
exporter process runs the filesystem collector.

The test compiles a tiny libfuse3 server into its tmp directory (``statfs`` waits until a release file appears),
mounts it, and checks that the exporter keeps serving, the other mounts' figures keep coming, the mount is
reported stuck (metric and /api/v1/collectors), no thread is added per run, and after release the mount recovers.
Needs root, /dev/fuse, gcc and Debian's libfuse3-dev (scripts/test installs fuse3 and libfuse3-dev).

Kernel fact seen here: a thread blocked in a FUSE request the daemon has already read cannot be killed (not even
by SIGKILL) until the daemon answers or the connection is aborted; the test therefore always releases the server
(and aborts the connection) before stopping the exporter.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from ...fusehang import fuse_server

pytestmark = pytest.mark.integration

HANGFS_C = r"""
/* Test helper: a FUSE file system whose statfs blocks until the file named by $HANG_RELEASE exists. */
#define FUSE_USE_VERSION 31
#include <fuse.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int hang_getattr(const char *path, struct stat *st, struct fuse_file_info *fi) {
    (void)fi;
    memset(st, 0, sizeof(*st));
    if (strcmp(path, "/") != 0) return -ENOENT;
    st->st_mode = S_IFDIR | 0755;
    st->st_nlink = 2;
    return 0;
}

static int hang_statfs(const char *path, struct statvfs *st) {
    (void)path;
    const char *release = getenv("HANG_RELEASE");
    while (release && access(release, F_OK) != 0) usleep(20000);
    memset(st, 0, sizeof(*st));
    st->f_bsize = st->f_frsize = 4096;
    st->f_blocks = 1000; st->f_bfree = 600; st->f_bavail = 500;
    st->f_files = 100; st->f_ffree = 40; st->f_namemax = 255;
    return 0;
}

static const struct fuse_operations ops = {.getattr = hang_getattr, .statfs = hang_statfs};

int main(int argc, char *argv[]) { return fuse_main(argc, argv, &ops, NULL); }
"""

CONFIG = """\
collectors:
  host: {enabled: false}
  process: {enabled: false}
  filesystem: {enabled: true, interval: 1s, timeout: 1s, statfs_timeout: 0.4s}
"""


def _samples(exporter) -> dict[tuple[str, str], float]:
    status, _, body = exporter.get("/metrics")
    assert status == 200
    result = {}
    for family in text_string_to_metric_families(body.decode()):
        for sample in family.samples:
            if sample.name.startswith("middleware_filesystem_") and "mountpoint" in sample.labels:
                result[(sample.name, sample.labels["mountpoint"])] = sample.value
    return result


def _api(exporter) -> dict:
    return next(c for c in json.loads(exporter.get("/api/v1/collectors")[2]) if c["name"] == "filesystem")


def _success(exporter) -> float | None:
    for family in text_string_to_metric_families(exporter.get("/metrics")[2].decode()):
        for sample in family.samples:
            if sample.name == "middleware_scrape_collector_success" and sample.labels["collector"] == "filesystem":
                return sample.value
    return None


def _threads(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    raise AssertionError("no Threads line")


def _wait(predicate, what: str, proc, limit: float = 60.0):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        assert proc.poll() is None, f"exporter exited while waiting for {what}"
        time.sleep(0.1)
    raise AssertionError(f"not seen within {limit:g}s: {what}")


def _runs(exporter) -> int:
    status, _, body = exporter.get("/metrics")
    for family in text_string_to_metric_families(body.decode()):
        for sample in family.samples:
            if sample.name == "middleware_scrape_collector_runs_total" and sample.labels["collector"] == "filesystem":
                return int(sample.value)
    return 0


def test_a_hanging_fuse_statfs_is_reported_stuck_and_does_not_stall_anything(tmp_path, start_exporter):
    with fuse_server(tmp_path, HANGFS_C, "hangfs") as (mountpoint, release, server):
        mp = str(mountpoint)
        exporter = start_exporter(config=CONFIG)
        # The first run that meets the hang marks the mount stuck; the other mounts are measured in that run.
        samples = _wait(lambda: (s := _samples(exporter)).get(("middleware_filesystem_stuck", mp)) == 1 and s,
                        "the FUSE mount reported stuck", exporter.proc)
        assert samples[("middleware_filesystem_device_error", mp)] == 1
        assert ("middleware_filesystem_size_bytes", mp) not in samples
        assert samples[("middleware_filesystem_size_bytes", "/")] > 0  # the other mounts' figures keep coming
        api = _api(exporter)
        assert api["source_errors"][f"statfs {mp}"].startswith("stuck: statvfs has not returned")
        # issue 38, item 5: a stuck mount makes the run degraded in the API, the metric, the page and the log
        # (it read as "ok", success 1), naming the mount and why
        api = _wait(lambda: (a := _api(exporter))["state"] == "degraded" and a, "the collector degraded",
                    exporter.proc)
        assert api["last_success"] is False and f"statfs {mp}: stuck: statvfs has not returned for" in \
            api["last_error"], api
        assert _success(exporter) == 0  # every run degraded while the mount stays stuck
        page = exporter.get("/")[2].decode()
        assert 'class="collector degraded" id="collector-filesystem"' in page, page
        assert f"sources=statfs {mp} msg='source failed; collector degraded'" in exporter.log(), exporter.log()
        # Later runs: fresh figures for the others, the stuck mount not asked again, no thread added per run.
        runs, threads = _runs(exporter), _threads(exporter.proc.pid)
        _wait(lambda: _runs(exporter) >= runs + 5, "five more runs", exporter.proc)
        assert _threads(exporter.proc.pid) <= threads + 1  # +1: a run's walker may be alive at that instant
        durations = []
        for _ in range(50):
            started = time.monotonic()
            samples = _samples(exporter)
            durations.append(time.monotonic() - started)
            assert samples[("middleware_filesystem_stuck", mp)] == 1
            assert samples[("middleware_filesystem_size_bytes", "/")] > 0
        durations.sort()
        assert durations[49] < 2.0, durations  # p99 of 50 scrapes; the hang itself never ends on its own
        assert _samples(exporter)[("middleware_filesystem_stuck_seconds", mp)] > 1
        # Release: the hung call returns, the next run asks again and the mount recovers.
        release.touch()
        samples = _wait(lambda: (s := _samples(exporter)).get(("middleware_filesystem_size_bytes", mp)) and s,
                        "the FUSE mount recovered", exporter.proc)
        assert samples[("middleware_filesystem_size_bytes", mp)] == 1000 * 4096
        assert samples[("middleware_filesystem_stuck", mp)] == 0
        # the degraded state ends with the hang (on a host whose other mounts all answer: ok, success 1)
        api = _wait(lambda: f"statfs {mp}" not in ((a := _api(exporter))["last_error"] or "") and a,
                    "the stuck mount gone from the last error", exporter.proc)
        if not api["source_errors"]:
            assert api["state"] == "ok" and api["last_error"] is None, api
            assert _wait(lambda: _success(exporter) == 1, "collector success 1", exporter.proc)
        assert samples[("middleware_filesystem_device_error", mp)] == 0
