"""Verastream Host Integrator (VHI) session server: host sessions, sessions per CPU, and the memory the guide's
formula asks for.

``settings.py`` holds the configuration (``collectors.vhi``: the host ports and the guide's limits), ``metrics.py``
the series, ``collector.py`` counts the session server's established connections to the hosts from /proc (sockets
of its processes matched against their net/tcp), with the pure readers of those files in ``parse.py``.
"""

# the registry names the collector from these without importing its settings or code (docs/footprint.md)
NAME = "vhi"
DESCRIPTION = "Verastream Host Integrator session server: host sessions, sessions per CPU, memory formula."
