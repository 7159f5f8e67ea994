"""File systems: size, free, available, file nodes and read-only per mount, and the mounts that hang or fail.

``settings.py`` holds the configuration (``collectors.filesystem``), ``metrics.py`` the series, ``collector.py``
reads the mount table (PID 1's under /proc, ``parse.py`` choosing the mounts) and measures each mount with one
statvfs through the stuck-mount prober (``statfs.py``); ``psutil.py`` gives the mount list and usage where /proc is
not Linux's, and ``text.py`` runs df (bdf) and mount instead, locally or through ssh, parsed by ``textparse.py``
(HP-UX, Solaris, AIX, remote hosts).
"""

# the registry names the collector from these without importing its settings or code (docs/footprint.md)
NAME = "filesystem"
DESCRIPTION = "File systems: size, free, available, file nodes, read-only, and stuck or failing mounts."
