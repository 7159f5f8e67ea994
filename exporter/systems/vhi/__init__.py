"""Verastream Host Integrator session server: host sessions, sessions per CPU, the memory formula."""

# the registry names the collector from these without importing its settings or code (docs/footprint.md)
NAME = "vhi"
DESCRIPTION = "Verastream Host Integrator session server: host sessions, sessions per CPU, memory formula."
