"""middleware-exporter: Prometheus metrics for HPOM, Oracle, IBM MQ, VHI and Domino servers."""

__version__ = "0.1.0"
