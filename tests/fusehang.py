"""A file whose read never answers, for tests: a tiny libfuse3 server compiled into the test's tmp directory,
serving one regular file, ``pw``, whose stat and open answer and whose read blocks until released (a file on a
hung NFS or FUSE mount, which a FIFO no longer stands for: the exporter refuses a FIFO at once, issue 38).

Needs root, /dev/fuse, gcc and Debian's libfuse3-dev (scripts/test installs fuse3 and libfuse3-dev); skips
otherwise.  A thread blocked in such a read cannot be killed, not even by SIGKILL, until the server answers
(tests/systems/filesystem/test_filesystem_fuse.py): release before stopping a process that reads it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Callable, Iterator

import pytest

from .support import require_binary

HANGREAD_C = r"""
/* Test helper: a FUSE file system with one regular file, /pw, whose read blocks until $HANG_RELEASE exists. */
#define FUSE_USE_VERSION 31
#include <fuse.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char body[] = "Hung-Secret-1\n";

static int hr_getattr(const char *path, struct stat *st, struct fuse_file_info *fi) {
    (void)fi;
    memset(st, 0, sizeof(*st));
    if (strcmp(path, "/") == 0) { st->st_mode = S_IFDIR | 0755; st->st_nlink = 2; return 0; }
    if (strcmp(path, "/pw") == 0) { st->st_mode = S_IFREG | 0600; st->st_nlink = 1; st->st_size = sizeof(body) - 1;
                                    return 0; }
    return -ENOENT;
}

static int hr_open(const char *path, struct fuse_file_info *fi) {
    (void)fi;
    return strcmp(path, "/pw") == 0 ? 0 : -ENOENT;
}

static int hr_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi) {
    (void)path; (void)fi;
    const char *release = getenv("HANG_RELEASE");
    while (release && access(release, F_OK) != 0) usleep(20000);
    size_t len = sizeof(body) - 1;
    if ((size_t)off >= len) return 0;
    if (off + size > len) size = len - off;
    memcpy(buf, body + off, size);
    return size;
}

static const struct fuse_operations ops = {.getattr = hr_getattr, .open = hr_open, .read = hr_read};

int main(int argc, char *argv[]) { return fuse_main(argc, argv, &ops, NULL); }
"""


@contextlib.contextmanager
def fuse_server(tmp_path: Path, c_source: str, name: str) -> Iterator[tuple[Path, Path, subprocess.Popen]]:
    """A libfuse3 server compiled from ``c_source`` and mounted at ``tmp_path / "hung"`` (file system type
    ``fuse.<name>``): (the mount point, the release flag the server's hangs wait for, the server process).  On exit
    the flag is set, the mount lazily unmounted and the server stopped.  Skips without root, /dev/fuse or gcc."""
    if not os.path.exists("/dev/fuse"):
        pytest.skip("/dev/fuse is missing (a container without the FUSE device): no real hang possible here")
    if os.geteuid() != 0:
        pytest.skip("mounting the test's FUSE server needs root")
    gcc = require_binary("gcc", package="gcc")
    if not Path("/usr/include/fuse3/fuse.h").exists():
        require_binary("libfuse3-dev-headers-missing", package="libfuse3-dev")
    source = tmp_path / f"{name}.c"
    source.write_text(c_source)
    binary = tmp_path / name
    subprocess.run([gcc, "-Wall", "-D_FILE_OFFSET_BITS=64", "-I/usr/include/fuse3", str(source), "-o", str(binary),
                    "-lfuse3", "-lpthread"], check=True, capture_output=True)
    mountpoint = tmp_path / "hung"
    mountpoint.mkdir()
    flag = tmp_path / "release"
    server = subprocess.Popen([str(binary), "-f", str(mountpoint)], env={**os.environ, "HANG_RELEASE": str(flag)},
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    mp = str(mountpoint)
    try:
        deadline = time.monotonic() + 10  # a bound on the mount appearing, not a timing assertion
        while f" {mp} fuse.{name} " not in Path("/proc/self/mounts").read_text():
            assert time.monotonic() < deadline and server.poll() is None, "the FUSE mount did not appear"
            time.sleep(0.05)
        yield mountpoint, flag, server
    finally:
        flag.touch()
        time.sleep(0.1)
        subprocess.run([shutil.which("fusermount3") or "fusermount3", "-u", "-z", mp], capture_output=True)
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@contextlib.contextmanager
def hung_file(tmp_path: Path) -> Iterator[tuple[Path, Callable[[], None]]]:
    """(the file whose read hangs, release): release() lets every read of it answer; the mount is removed after."""
    with fuse_server(tmp_path, HANGREAD_C, "hangread") as (mountpoint, flag, _):
        yield mountpoint / "pw", flag.touch
