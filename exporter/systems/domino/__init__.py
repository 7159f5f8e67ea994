"""Domino servers: statistics from the console's `show stat`."""
