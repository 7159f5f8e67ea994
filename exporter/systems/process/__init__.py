"""Process groups of the middleware (HPOM, IBM MQ, MQSI, Oracle, VHI, Domino): count, CPU, memory, threads, fds,
I/O, page faults and context switches per group.

``settings.py`` holds the configuration (``collectors.process``: the groups and their matching rules), ``metrics.py``
the series (their label names follow the configured groups), ``collector.py`` matches the shared process table
(``machine/procfs.py``, or ``machine/psutil_procs.py`` where /proc is not Linux's) against the groups and keeps the
per-group counters monotonic across process restarts.
"""

# the registry names the collector from these without importing its settings or code (docs/footprint.md)
NAME = "process"
DESCRIPTION = "Process groups of HPOM, IBM MQ, MQSI, Oracle, VHI and Domino: count, CPU, memory, threads."
