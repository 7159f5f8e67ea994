"""What both process back-ends produce: the clock tick and page size their figures are counted in, and the record of
one process's /proc/<pid>/stat fields (``procfs.py`` parses it from the file, ``psutil_procs.py`` fills it from
psutil where /proc is not Linux's).  Apart from both so that neither back-end imports the other."""

from __future__ import annotations

import os
from dataclasses import dataclass

USER_HZ = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


@dataclass
class ProcStat:
    """The fields of /proc/<pid>/stat the collectors use."""

    pid: int
    comm: str
    state: str
    utime: int  # clock ticks
    stime: int
    threads: int
    starttime: int  # clock ticks after boot
    rss_pages: int
    minflt: int = 0  # minor page faults (field 10)
    majflt: int = 0  # major page faults (field 12)
    vsize: int = 0  # virtual memory size in bytes (field 23)
