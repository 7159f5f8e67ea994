"""One package per source system, each of the same shape: the package docstring says what the system is;
``settings.py`` its configuration, ``metrics.py`` its metric declarations, ``collector.py`` the collector, a reader
per back-end (e.g. ``rest.py``, ``pcf.py``, ``runmqsc.py``), parsers, queries and guide checks where it has them,
and a ``README.md`` whose reference sections ``python -m tools.docs`` writes.  The systems: ``host``,
``filesystem``, ``mountstats``, ``process``, ``certificates`` (on by default where they apply) and ``hpom``,
``oracle``, ``ibmmq``, ``vhi``, ``domino`` (configured).  Each is registered once, in ``exporter.registry``."""
