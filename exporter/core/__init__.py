"""The collection framework: the collector base class and its settings, configuration loading, metric
declarations and labels, the scheduler (one loop per collector, deadlines, the snapshot), sources and targets,
the text exposition, secrets and the exporter's own series.  It knows no source system and no web server; what
it needs from the operating system (procfs, commands, deadlines) comes from ``exporter.machine``."""
