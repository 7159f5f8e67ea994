"""Domino servers: statistics from the console's `show stat`."""

# the registry names the collector from these without importing its settings or code (docs/footprint.md)
NAME = "domino"
DESCRIPTION = "Domino server statistics from the console (show stat)."
