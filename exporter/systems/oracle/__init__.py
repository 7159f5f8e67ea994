"""Oracle databases: the collector, the connection layer and query runner (also used by HPOM), the guide checks."""
