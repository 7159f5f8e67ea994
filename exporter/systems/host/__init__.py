"""The host: CPU, memory, paging, disks and network, the figures vmstat, iostat and sar show.

``settings.py`` holds the configuration (``collectors.host``), ``metrics.py`` the series, ``collector.py`` chooses
the back-end that reads them: ``procfs.py`` (Linux's /proc and /sys, parsed by ``parse.py``), ``psutil.py`` (AIX,
Solaris, Windows, macOS, FreeBSD, with the table of what each platform gives) or ``text.py`` (sar, vmstat and
iostat run locally or through ssh, parsed by ``textparse.py``: HP-UX, old Solaris, remote hosts).
"""

# the registry names the collector from these without importing its settings or code (docs/footprint.md)
NAME = "host"
DESCRIPTION = "Host CPU, memory, paging, page scans, disks and network (vmstat, iostat, sar figures)."
