"""Oracle databases, many per exporter, each with its own ``database`` label: the figures of the queries in
``queries.yaml`` (data, not code), the guide checks computed from them and from the mounts holding the database
files, and the alert log's library-cache heap warnings and ORA- errors.

In this folder: ``settings.py`` (the databases to read and the guide thresholds, validated without importing the
rest), ``metrics.py`` (the fixed metric declarations; the query metrics are declared by the query files),
``collector.py`` (the collector: one target per database, read at once, and the emitters), ``client.py`` (the
connection layer, also used by HPOM's database source), ``querymetrics.py`` (the query-file runner, also HPOM's),
``tomlmetrics.py`` (the custom-metrics TOML files of Oracle's exporter and oracledb_exporter, with ``compat/``
their published defaults), ``checks.py`` (the guide checks), ``heapwarnings.py`` and ``alertlog.py`` (the alert
log: the reader and the ORA- code counts) and ``parse.py`` (mount options and heap-warning text).  What it reads,
the permissions and the guide rows: README.md.
"""

# the registry names the collector from these without importing its settings or code (docs/footprint.md)
NAME = "oracle"
DESCRIPTION = ("Oracle databases: redo switches and layout, log-switch waits, parameters, limits, NFS, guide "
               "checks, library-cache heap warnings, alert-log errors.")
