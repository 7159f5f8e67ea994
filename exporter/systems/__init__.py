"""One package per source system (host, process, hpom, oracle, ibmmq, vhi, domino): collector, parsers, queries,
checks and a README each.  Registered in ``exporter.registry``."""
