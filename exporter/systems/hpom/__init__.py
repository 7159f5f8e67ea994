"""The HPOM management server (HP Operations Manager for UNIX 8.x): its server queue files, its server processes
(``opcsv``/``ovc -status``), the Table 1 configuration variables (``ovconfget``), the MSI programs and the figures
of its Oracle database (``opc_op`` schema), each part a source of its own that a host without it skips.

In this folder: ``settings.py`` (what to read and where, validated without importing the rest), ``metrics.py``
(the fixed metric declarations; the database figures are declared by ``queries.yaml``), ``collector.py`` (the
collector: the sources read at once under their deadlines, and the emitters), ``parse.py`` (the commands' text
output), ``checks.py`` (the guide's variable checks and the query metrics each guide row reads) and
``queries.yaml`` (the database queries, run by the Oracle package's ``client.py`` and ``querymetrics.py``).  What
it reads, the permissions and the guide rows: README.md.
"""

# the registry names the collector from these without importing its settings or code (docs/footprint.md)
NAME = "hpom"
DESCRIPTION = "HPOM management server: queues, server processes, variables, MSI programs, opc_op database."
