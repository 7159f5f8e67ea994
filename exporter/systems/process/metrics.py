"""The process collector's metrics.  The per-group series carry the label names of the configured groups (the
capture groups of their regexes), so they are declared per collector by :meth:`GroupMetrics.declare`; the others
are fixed.  Declarations only (``collector.py`` adds the samples)."""

from __future__ import annotations

from dataclasses import dataclass, fields

from ...core.metrics import NAMESPACE, MetricSpec

P = f"{NAMESPACE}_process"

SCANNED_PROCESSES = MetricSpec(f"{P}_scanned_processes", "gauge", "Processes read from /proc in the last pass.", ())
EVENTS_CONNECTED = MetricSpec(
    f"{P}_events_connected", "gauge",
    "1 when the pass re-reads only the names of processes that forked, exec'd or renamed (Linux's process events "
    "connector on the live /proc; CAP_NET_ADMIN before Linux 6.6); 0 when it re-reads every name on every pass.",
    ())


@dataclass(frozen=True)
class GroupMetrics:
    """The per-group series of one collector, labelled ``group``, ``process``, the configured capture labels and
    ``user`` (with group_by_user)."""

    processes: MetricSpec
    cpu_seconds: MetricSpec
    resident_memory: MetricSpec
    threads: MetricSpec
    oldest_start_time: MetricSpec
    open_fds: MetricSpec
    worst_fd_ratio: MetricSpec
    read_bytes: MetricSpec
    written_bytes: MetricSpec
    major_page_faults: MetricSpec
    minor_page_faults: MetricSpec
    context_switches: MetricSpec
    threads_by_state: MetricSpec
    unreadable_processes: MetricSpec

    @classmethod
    def declare(cls, lv: tuple[str, ...]) -> "GroupMetrics":
        """The series for these label names."""
        processes = MetricSpec(
            f"{P}_group_processes", "gauge", "Processes in the group (0 for a configured name that is not running).",
            lv, "HPOM-GUI: group=\"hpom_java_gui\" is the number of Java GUI sessions")
        cpu_seconds = MetricSpec(
            f"{P}_group_cpu_seconds_total", "counter",
            "CPU time of the group's processes by mode (user, system); monotonic across restarts.",
            lv + ("mode",), "CPU share: rate() summed over mode")
        resident_memory = MetricSpec(
            f"{P}_group_resident_memory_bytes", "gauge", "Resident memory of the group's processes.", lv)
        threads = MetricSpec(f"{P}_group_threads", "gauge", "Threads of the group's processes.", lv)
        oldest_start_time = MetricSpec(
            f"{P}_group_oldest_start_time_seconds", "gauge",
            "Unix start time of the group's oldest process (changes when it restarts).", lv,
            "process-exporter: namedprocess_namegroup_oldest_start_time_seconds; changes() shows restarts")
        # Beyond count/CPU/memory: process-exporter's per-group figures (ncabatoff/process-exporter v0.8.7,
        # collector/process_collector.go), read only for the processes a group matched.
        pe = "process-exporter: namedprocess_namegroup_"
        open_fds = MetricSpec(
            f"{P}_group_open_fds", "gauge",
            "Open file descriptors of the group's processes (entries of /proc/<pid>/fd, summed); absent when none "
            "could be read.", lv, pe + "open_filedesc")
        worst_fd_ratio = MetricSpec(
            f"{P}_group_worst_fd_ratio", "gauge",
            "Highest ratio of open file descriptors to the soft open-files limit among the group's processes (a sum "
            "would hide the one about to run out); absent when no process could be read.", lv,
            pe + "worst_fd_ratio; MiddlewareProcessGroupFdsNearLimit")

        def io_bytes(metric: str, moved: str, field: str) -> MetricSpec:  # one of /proc/<pid>/io's byte counters
            return MetricSpec(
                f"{P}_group_{metric}_bytes_total", "counter",
                f"Bytes the group's processes caused to be {moved} storage (/proc/<pid>/io {field}); monotonic "
                "across restarts; absent when no process's io could be read.", lv, f"{pe}{field}_total")

        read_bytes = io_bytes("read", "read from", "read_bytes")
        written_bytes = io_bytes("written", "sent to", "write_bytes")
        major_page_faults = MetricSpec(
            f"{P}_group_major_page_faults_total", "counter",
            "Major page faults (a page read from disk) of the group's processes; monotonic across restarts.", lv,
            pe + "major_page_faults_total")
        minor_page_faults = MetricSpec(
            f"{P}_group_minor_page_faults_total", "counter",
            "Minor page faults of the group's processes; monotonic across restarts.", lv,
            pe + "minor_page_faults_total")
        context_switches = MetricSpec(
            f"{P}_group_context_switches_total", "counter",
            "Context switches of the group's processes by type (voluntary, involuntary); monotonic across "
            "restarts.", lv + ("type",), pe + "context_switches_total (label ctxswitchtype, nonvoluntary)")
        threads_by_state = MetricSpec(
            f"{P}_group_threads_by_state", "gauge",
            "Threads of the group's processes by state (running, sleeping, disk_sleep, stopped, zombie, idle, "
            "...); with thread_states: true.", lv + ("state",),
            pe + "states counts processes; this counts threads (task/<tid>/stat)")
        unreadable_processes = MetricSpec(
            f"{P}_group_unreadable_processes", "gauge",
            "Processes of the group whose /proc/<pid>/<file> (io, fds, limits, status) could not be read: another "
            "user's process without root or CAP_SYS_PTRACE, or one that exited meanwhile; their figures are "
            "left out of the sums.", lv + ("file",), "process-exporter: namedprocess_namegroup partial_errors")
        return cls(processes, cpu_seconds, resident_memory, threads, oldest_start_time, open_fds, worst_fd_ratio,
                   read_bytes, written_bytes, major_page_faults, minor_page_faults, context_switches,
                   threads_by_state, unreadable_processes)

    def specs(self) -> list[MetricSpec]:
        return [getattr(self, field.name) for field in fields(self)]  # in declaration order
