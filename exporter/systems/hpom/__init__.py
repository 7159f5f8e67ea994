"""HPOM management server: queues, server processes, configuration variables, MSI programs, the opc_op database."""

# the registry names the collector from these without importing its settings or code (docs/footprint.md)
NAME = "hpom"
DESCRIPTION = "HPOM management server: queues, server processes, variables, MSI programs, opc_op database."
