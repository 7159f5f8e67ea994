"""Oracle databases: the collector, the connection layer and query runner (also used by HPOM), the guide checks."""

# the registry names the collector from these without importing its settings or code (docs/footprint.md)
NAME = "oracle"
DESCRIPTION = ("Oracle databases: redo switches and layout, log-switch waits, parameters, limits, NFS, guide "
               "checks, library-cache heap warnings, alert-log errors.")
