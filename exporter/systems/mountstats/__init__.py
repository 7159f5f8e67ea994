"""NFS client statistics per mount: bytes, events, transports, per-operation counts and times.

``settings.py`` holds the configuration (``collectors.mountstats``), ``metrics.py`` the series (node_exporter's
``node_mountstats_nfs_*`` under our prefix), ``collector.py`` reads ``<procfs>/self/mountstats`` and
``mountinfo`` once per run, parsed by ``parse.py``.  Counters the kernel keeps in memory: no request reaches the
NFS server, so a hung server cannot block the run.
"""

# the registry names the collector from these without importing its settings or code (docs/footprint.md)
NAME = "mountstats"
DESCRIPTION = "NFS client statistics per mount (bytes, events, transports, per-operation counts and times)."
