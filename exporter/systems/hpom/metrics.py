"""The HPOM collector's metric declarations: the sources' success, the queue files, the server processes, the
configuration variables, the MSI programs and the database's session.  The database figures are declared by the
query file (queries.yaml; oracle/querymetrics.py makes their declarations)."""

from __future__ import annotations

from ...core.metrics import NAMESPACE, MetricSpec
from ...core.sources import SourceMetrics

P = f"{NAMESPACE}_hpom"

QUEUE_SIZE = MetricSpec(f"{P}_queue_size_bytes", "gauge",
                        "Size of a server queue file (msgmgrq, actreqq, dispq<N>, ...).", ("queue",),
                        "HPOM-QUEUE: deriv()/predict_linear() for growth and drain time")
QUEUE_MODIFIED = MetricSpec(f"{P}_queue_modified_timestamp_seconds", "gauge",
                            "Last modification of a server queue file (Unix time).", ("queue",), "age: time() - this")
QUEUE_ENTRIES = MetricSpec(f"{P}_queue_entries", "gauge",
                           "Entries in a queue file, from the site's queue_count_command.", ("queue",),
                           "HPOM-QUEUE (the guide's storm figures are in entries)")
GUI_DISPLAY_QUEUES = MetricSpec(f"{P}_gui_display_queues", "gauge", "dispq<N> files: one per running GUI session.",
                                (), "HPOM-GUI, HPOM-MEM")
SERVER_PROCESS_UP = MetricSpec(f"{P}_server_process_up", "gauge",
                               "1 if opcsv/ovc report the process running, 0 if it is down (stopped, aborted, any "
                               "other state), 2 while it is in transition (Starting, Stopping, ...), 3 if it is "
                               "not running and listed in expected_stopped (a name listed twice takes its worst "
                               "entry).", ("source", "process"),
                               "== 0: a server process down; == 2 for long: stuck starting or stopping")
VARIABLE_INFO = MetricSpec(f"{P}_server_variable_info", "info",
                           "A server configuration variable: its value, whether it is set or the documented "
                           "default, and what the guide recommends.", ("variable",))
VARIABLE_VALUE = MetricSpec(f"{P}_server_variable_value", "gauge",
                            "Numeric value of a server configuration variable (set or default).", ("variable",),
                            "HPOM-VAR-*")
VARIABLE_FOLLOWS_GUIDE = MetricSpec(f"{P}_server_variable_follows_guide", "gauge",
                                    "1 if the variable's value (set or default) follows the guide's Table 1 "
                                    "recommendation, 0 if not.", ("variable",), "HPOM-VAR-* advice")
MSI_PROGRAM_PROCESSES = MetricSpec(f"{P}_msi_program_processes", "gauge", "Processes of a configured MSI program.",
                                   ("program",))
MSI_PROGRAMS_RUNNING = MetricSpec(f"{P}_msi_programs_running", "gauge",
                                  "Configured MSI programs with at least one process.", (),
                                  "HPOM-MSI: more than 5 slow processing")
DATABASE_UP = MetricSpec(f"{P}_database_up", "gauge",
                         "1 if a session to the HPOM database could be had in the last attempt.")
SERVICE_LOAD_ON_DEMAND = MetricSpec(f"{P}_service_load_on_demand", "gauge",
                                    "1 if Service Load on Demand is on, 0 if off (from service_load_on_demand_"
                                    "variable, else the service_load_on_demand setting; absent when unknown).", (),
                                    "HPOM-SLOD: deep service trees need it")
DATABASE_BACKOFF = MetricSpec(f"{P}_database_backoff_seconds", "gauge",
                              "Seconds until the next connection attempt after a failure (a rejected login waits "
                              "longer so as not to lock the account).")

SOURCE_METRICS = SourceMetrics.declare(
    P, "1 if the source is installed/configured here (queue directory, binary, database), 0 if it is skipped.")
SPECS = [
    *SOURCE_METRICS.specs(),
    QUEUE_SIZE, QUEUE_MODIFIED, QUEUE_ENTRIES, GUI_DISPLAY_QUEUES, SERVER_PROCESS_UP,
    VARIABLE_INFO, VARIABLE_VALUE, VARIABLE_FOLLOWS_GUIDE, MSI_PROGRAM_PROCESSES, MSI_PROGRAMS_RUNNING,
    SERVICE_LOAD_ON_DEMAND, DATABASE_UP, DATABASE_BACKOFF,
]
