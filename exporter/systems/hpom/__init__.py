"""HPOM management server: queues, server processes, configuration variables, MSI programs, the opc_op database."""
