"""The Oracle collector's metric declarations: the database's own, the guide checks' (checks.py fills them), the
alert log's (heapwarnings.py) and the compatibility ``oracledb_up``.  The query metrics are declared by the query
files (queries.yaml; querymetrics.py makes their declarations) and the custom-metrics TOML files (tomlmetrics.py)."""

from __future__ import annotations

from ...core.metrics import NAMESPACE, MetricSpec

P = f"{NAMESPACE}_oracle"
# compatibility_names and custom_metrics: the prefix of Oracle's exporter and oracledb_exporter (tomlmetrics.py)
COMPAT_NAMESPACE = "oracledb"

# -- the database (collector.py) ------------------------------------------------------------------------------------
UP = MetricSpec(f"{P}_up", "gauge", "1 if a session to the database could be had in the last attempt.", ("database",))
BACKOFF = MetricSpec(f"{P}_backoff_seconds", "gauge", "Seconds until the next connection attempt after a failure "
                     "(a rejected login waits longer so as not to lock the account).", ("database",))
COLLECT_SUCCESS = MetricSpec(f"{P}_collect_success", "gauge", "1 if the database answered within the deadline and a "
                             "session could be had (query failures are in middleware_oracle_query_success).",
                             ("database",))
COLLECT_DURATION = MetricSpec(f"{P}_collect_duration_seconds", "gauge", "Time spent reading the database in the "
                              "last run.", ("database",))
MOUNT_TABLE_SUCCESS = MetricSpec(f"{P}_mount_table_success", "gauge", "1 if the host's mount table (<procfs>/1/mounts) "
                                 "was read for the file-system checks (ORA-NFS); 0 if they fell back to the "
                                 "exporter's own, which in a container is not the host's, or had none (source error "
                                 "'mounts'). Absent while no database has local files.")

# -- the guide checks (checks.py) -----------------------------------------------------------------------------------
FOLLOWS_GUIDE = MetricSpec(f"{P}_follows_guide", "gauge", "1 if the database follows the guide on this point, 0 if "
                           "not; absent when the inputs are missing.", ("database", "check"), "ORA-*, HPOM-ORA advice")
GUIDE_OBSERVED = MetricSpec(f"{P}_guide_observed", "gauge", "The value a guide check looked at (bytes, counts, "
                            "ratios).", ("database", "check"))
GUIDE_THRESHOLD = MetricSpec(f"{P}_guide_threshold", "gauge", "The threshold a guide check compared it with (the "
                             "lower end for a band).", ("database", "check"))
FILE_SYSTEM_INFO = MetricSpec(f"{P}_file_system_info", "info", "A file system holding database files (when they are "
                              "on this host).", ("database", "mountpoint"))
NFS_MOUNT_FOLLOWS_GUIDE = MetricSpec(
    f"{P}_nfs_mount_follows_guide", "gauge", "1 if an NFS mount holding database files has the option the report "
    "recommends (hard, proto_tcp, vers, rsize, wsize, timeo, direct_io), 0 if not.",
    ("database", "mountpoint", "option"), "ORA-NFS advice")

# -- the alert log: heap warnings and ORA- errors (heapwarnings.py) --------------------------------------------------
HEAP_WARNINGS = MetricSpec(
    f"{P}_kgl_heap_warnings_total", "counter", "Library-cache heap warnings (\"Heap size ... exceeds notification "
    "threshold\") logged since the exporter's first read of the alert log (the history before it is in "
    "..._kgl_heap_warnings_history; ORA-KGL; absent while the source fails).", ("database",),
    "ORA-KGL: round(increase(...[1d]))")
HISTORY_WARNINGS = MetricSpec(
    f"{P}_kgl_heap_warnings_history", "gauge", "Heap warnings in the history the first read counted: the last "
    "heap_warnings.history (default a day) by the log's timestamps, before the counter started.  Kept out of the "
    "counter so that a restart is no burst for increase(); the advice (ORA-KGL) adds the two over the window.",
    ("database",), "ORA-KGL advice with no configured window (issue 39)")
MAX_HEAP = MetricSpec(
    f"{P}_kgl_heap_warning_max_heap_bytes", "gauge", "Largest heap size in the heap warnings counted (absent before "
    "the first one).", ("database",))
OBJECT = MetricSpec(
    f"{P}_kgl_heap_warning_object_info", "info", "The library-cache object of the largest heap counted (the "
    "\"KGL object name :\" line that follows the warning, at most 120 characters, cut before IDENTIFIED; absent "
    "when no warning named one).", ("database",))
LOGGED_THRESHOLD = MetricSpec(
    f"{P}_kgl_heap_warning_logged_threshold_bytes", "gauge", "The notification threshold printed in the latest heap "
    "warning: _kgl_large_heap_warning_threshold as the instance applied it then (absent before the first one).",
    ("database",))
WINDOW = MetricSpec(
    f"{P}_kgl_heap_warnings_window_seconds", "gauge", "How much of the alert log the heap-warning counter covers: "
    "the history the first read counted (heap_warnings.history, less where the file's tail or the file itself "
    "starts later) plus the time since that read; 0 on a first run that could place nothing of the log in time "
    "(history 0, a file without timestamp lines): 0 warnings then says nothing.", ("database",),
    "ORA-KGL: the advice judges no warnings only over a window above 0")
WINDOW_START = MetricSpec(
    f"{P}_kgl_heap_warnings_window_start_timestamp_seconds", "gauge", "Where the stretch of the alert log the "
    "heap-warning counter covers begins, in seconds since the epoch by the log's clock: heap_warnings.history before "
    "the first read (the database's clock for the view), or the first message of the file's tail when that is later "
    "(a capped tail, a new file).", ("database",), "ORA-KGL: the window the advice states")
HISTORY_CAPPED = MetricSpec(
    f"{P}_alert_log_history_capped", "gauge", "1 if the alert log's history was cut short: the file's tail read at the "
    "start (heap_warnings.max_bytes) begins after heap_warnings.history, or the view's last read stopped at "
    "heap_warnings.max_rows (the count covers up to its newest row until the next runs catch up); else 0.",
    ("database",))
LAST_ENTRY = MetricSpec(
    f"{P}_alert_log_last_entry_timestamp_seconds", "gauge", "The newest timestamp line read from the alert-log file, "
    "in seconds since the epoch (old-format lines in the host's local time): a file the instance no longer writes "
    "(another diagnostic_dest, a stopped instance) stops moving (absent before one is read; file source only).",
    ("database",), "ORA-KGL: a log with no entry in the window covers none of it")
UNREAD = MetricSpec(
    f"{P}_alert_log_unread_bytes", "gauge", "Bytes of the alert-log file not read yet (above 0 after a run: the "
    "file grows faster than max_bytes per interval).", ("database",))
ALERT_ERRORS = MetricSpec(
    f"{P}_alert_errors_total", "counter", "ORA- errors in the alert log by code (ORA-\\d{5}), each code once per "
    "message, since the exporter started reading it; code=\"other\" counts the codes beyond the first "
    "heap_warnings.max_error_codes distinct ones.  A code's series first appears at 0 and shows its count from the "
    "next run on (absent while the source fails).", ("database", "code"), "issue 29: alert-log errors")
SOURCE_SUCCESS = MetricSpec(
    f"{P}_source_success", "gauge", "1 if the source (alert_log_view, alert_log_file) was read successfully in the "
    "last run.", ("database", "source"))
SOURCE_DURATION = MetricSpec(
    f"{P}_source_duration_seconds", "gauge", "Time spent reading the source in the last run.",
    ("database", "source"))

# -- compatibility_names (tomlmetrics.py) ---------------------------------------------------------------------------
COMPAT_UP = MetricSpec(
    f"{COMPAT_NAMESPACE}_up", "gauge", "1 if a session to the database could be had in the last attempt "
    "(compatibility_names: the name Oracle's exporter and oracledb_exporter give it).", ("database",),
    "Oracle's exporter / oracledb_exporter `oracledb_up`")

# every database's series but its query metrics, in the exposition's order
SPECS = [UP, BACKOFF, COLLECT_SUCCESS, COLLECT_DURATION, MOUNT_TABLE_SUCCESS,
         FOLLOWS_GUIDE, GUIDE_OBSERVED, GUIDE_THRESHOLD, FILE_SYSTEM_INFO, NFS_MOUNT_FOLLOWS_GUIDE,
         HEAP_WARNINGS, HISTORY_WARNINGS, MAX_HEAP, OBJECT, LOGGED_THRESHOLD, WINDOW, WINDOW_START, HISTORY_CAPPED,
         LAST_ENTRY, UNREAD, ALERT_ERRORS, SOURCE_SUCCESS, SOURCE_DURATION]
