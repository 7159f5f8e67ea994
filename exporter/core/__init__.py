"""The framework: settings, configuration loading, metric declarations, scheduling, exposition and the plumbing
collectors share (commands, deadlines, fan-out, secrets, procfs).  It knows no source system."""
