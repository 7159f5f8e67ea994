"""The host collector's metrics: the counters and gauges of the procfs and psutil back-ends (``SPECS``, one name and
meaning whichever reads them) and the text back-end's interval gauges and per-command sources (``TEXT_SPECS``).
Declarations only; the back-ends (``procfs.py``, ``psutil.py``, ``text.py``) add the samples."""

from __future__ import annotations

from ...core.metrics import NAMESPACE, MetricSpec
from ...core.sources import SourceMetrics

P = f"{NAMESPACE}_host"


def _c(name: str, help_: str, labels: tuple[str, ...] = (), note: str = "") -> MetricSpec:
    return MetricSpec(f"{P}_{name}", "counter", help_, labels, note)


def _g(name: str, help_: str, labels: tuple[str, ...] = (), note: str = "") -> MetricSpec:
    return MetricSpec(f"{P}_{name}", "gauge", help_, labels, note)


DEV = ("device",)

CPUS = _g("cpus", "Online logical CPUs (cpuN lines of /proc/stat).", note="vmstat/sar CPU count")
CPU_CORES = _g("cpu_cores", "Physical CPU cores (distinct package/core pairs in sysfs topology).")
CPU_SECONDS = _c("cpu_seconds_total",
                 "CPU time by CPU and mode (user, nice, system, idle, iowait, irq, softirq, steal).",
                 ("cpu", "mode"), "vmstat us/sy/id/wa/st: 100 * rate() by mode / cpus")
CPU_GUEST_SECONDS = _c("cpu_guest_seconds_total", "CPU time spent running guests, also counted in user/nice.",
                       ("cpu", "mode"))
PROCS_RUNNING = _g("procs_running", "Runnable processes (vmstat r).", note="vmstat r")
PROCS_BLOCKED = _g("procs_blocked", "Processes blocked waiting for I/O (vmstat b).", note="vmstat b")
CONTEXT_SWITCHES = _c("context_switches_total", "Context switches.", note="vmstat cs: rate()")
INTERRUPTS = _c("interrupts_total", "Interrupts serviced.", note="vmstat in: rate()")
FORKS = _c("forks_total", "Processes and threads created.")
BOOT_TIME = _g("boot_time_seconds", "Unix time the host booted.")
LOAD1 = _g("load1", "1-minute load average.", note="text back-end: uptime, sysstat sar -q ldavg-1")
LOAD5 = _g("load5", "5-minute load average.", note="text back-end: uptime, sysstat sar -q ldavg-5")
LOAD15 = _g("load15", "15-minute load average.", note="text back-end: uptime, sysstat sar -q ldavg-15")
MEMORY_TOTAL = _g("memory_total_bytes", "Physical memory (MemTotal).",
                  note="node_exporter: node_memory_MemTotal_bytes; text back-end: AIX svmon -G size, lparstat or "
                       "vmstat mem=")
MEMORY_AVAILABLE = _g("memory_available_bytes", "Memory available for new work without swapping (MemAvailable).",
                      note="node_exporter: node_memory_MemAvailable_bytes; text back-end: sysstat sar -r kbavail, "
                           "AIX svmon -G available")
MEMORY_FREE = _g("memory_free_bytes", "Unused memory (MemFree; vmstat free).",
                 note="node_exporter: node_memory_MemFree_bytes; text back-end: vmstat free/fre, sar -r freemem or "
                      "kbmemfree, svmon -G free")
MEMORY_BUFFERS = _g("memory_buffers_bytes", "Block-device buffers (Buffers; vmstat buff).",
                    note="text back-end: procps vmstat buff, sysstat sar -r kbbuffers")
MEMORY_CACHED = _g("memory_cached_bytes", "Page cache plus reclaimable slab (Cached + SReclaimable; vmstat cache).",
                   note="text back-end: procps vmstat cache")
MEMORY_USED = _g("memory_used_bytes", "Memory in use: MemTotal - MemAvailable (as free(1) of procps 4 shows it).")
MEMORY_SHARED = _g("memory_shared_bytes", "Shared memory and tmpfs (Shmem).")
SWAP_TOTAL = _g("swap_total_bytes", "Swap space configured (SwapTotal).",
                note="node_exporter: node_memory_SwapTotal_bytes; text back-end: paging space on disk: HP-UX "
                     "swapinfo dev/fs rows, AIX lsps -s or svmon -G pg space, sysstat sar -S")
SWAP_USED = _g("swap_used_bytes", "Swap space in use (SwapTotal - SwapFree; vmstat swpd).",
               note="node_exporter: node_memory_SwapTotal_bytes - node_memory_SwapFree_bytes; text back-end: "
                    "swapinfo, lsps -s (to 1 % of the total), svmon -G, sar -S, procps vmstat swpd")
SWAP_IN = _c("swap_in_bytes_total", "Bytes swapped in from disk (pswpin x page size).",
             note="vmstat si (KiB/s): rate()/1024")
SWAP_OUT = _c("swap_out_bytes_total", "Bytes swapped out to disk (pswpout x page size).",
              note="vmstat so (KiB/s): rate()/1024")
PAGE_IN = _c("page_in_bytes_total", "Bytes paged in from block devices (pgpgin).", note="vmstat bi: rate()/1024")
PAGE_OUT = _c("page_out_bytes_total", "Bytes paged out to block devices (pgpgout).", note="vmstat bo: rate()/1024")
PAGE_FAULTS = _c("page_faults_total", "Page faults, minor and major (pgfault).")
MAJOR_PAGE_FAULTS = _c("major_page_faults_total", "Major page faults needing I/O (pgmajfault).")
PAGE_SCANS = _c("page_scans_total",
                "Pages scanned by memory reclaim, including cgroup-limited reclaim (pgscan_anon + pgscan_file; "
                "pgscan_kswapd + pgscan_direct on kernels without them).", note="vmstat/sar scan rate: rate()")
PAGE_SCANS_BY_RECLAIMER = _c("page_scans_by_reclaimer_total",
                             "Pages scanned by global reclaim, by reclaimer (kswapd, direct, khugepaged, proactive).",
                             ("reclaimer",))
PAGE_STEALS = _c("page_steals_total", "Pages reclaimed (pgsteal_anon + pgsteal_file, or kswapd + direct).")
OOM_KILLS = _c("oom_kills_total", "Processes killed by the out-of-memory killer.")
DISK_READS_COMPLETED = _c("disk_reads_completed_total", "Reads completed.", DEV, "iostat r/s: rate()")
DISK_READS_MERGED = _c("disk_reads_merged_total", "Adjacent reads merged.", DEV, "iostat rrqm/s: rate()")
DISK_READ_BYTES = _c("disk_read_bytes_total", "Bytes read.", DEV, "iostat rkB/s: rate()/1024")
DISK_READ_TIME = _c("disk_read_time_seconds_total", "Time spent on reads (sum over all reads).", DEV,
                    "iostat r_await: rate(read_time)/rate(reads_completed)")
DISK_WRITES_COMPLETED = _c("disk_writes_completed_total", "Writes completed.", DEV, "iostat w/s: rate()")
DISK_WRITES_MERGED = _c("disk_writes_merged_total", "Adjacent writes merged.", DEV, "iostat wrqm/s: rate()")
DISK_WRITTEN_BYTES = _c("disk_written_bytes_total", "Bytes written.", DEV, "iostat wkB/s: rate()/1024")
DISK_WRITE_TIME = _c("disk_write_time_seconds_total", "Time spent on writes (sum over all writes).", DEV,
                     "iostat w_await")
DISK_IO_NOW = _g("disk_io_now", "I/O requests in flight.", DEV)
DISK_IO_TIME = _c("disk_io_time_seconds_total", "Time the device had I/O in flight.", DEV,
                  "iostat %util: 100 * rate()")
DISK_IO_TIME_WEIGHTED = _c("disk_io_time_weighted_seconds_total", "I/O time weighted by requests in flight.", DEV,
                           "iostat aqu-sz: rate()")
DISK_DISCARDS_COMPLETED = _c("disk_discards_completed_total", "Discards completed.", DEV)
DISK_DISCARDED_BYTES = _c("disk_discarded_bytes_total", "Bytes discarded.", DEV)
DISK_DISCARD_TIME = _c("disk_discard_time_seconds_total", "Time spent on discards.", DEV)
DISK_FLUSH_REQUESTS = _c("disk_flush_requests_total", "Flush requests completed.", DEV)
DISK_FLUSH_REQUESTS_TIME = _c("disk_flush_requests_time_seconds_total", "Time spent on flush requests.", DEV)
KERNEL_PARAMETER = _g("kernel_parameter",
                      "A kernel limit from /proc/sys (kernel.shmmax, kernel.shmall, kernel.sem.semmni, ..., "
                      "fs.file-max, kernel.pid_max, kernel.threads-max; shmall in pages, the rest in their own "
                      "units): the Linux counterparts of the HP-UX tunables in the HPOM guide's Appendix B "
                      "(Tables 29-30).", ("parameter",), "HPOM-KERNEL advice, e.g. shmmax against memory")
FILE_HANDLES_ALLOCATED = _g("file_handles_allocated",
                            "File handles allocated system-wide (first field of fs.file-nr).", (),
                            "against kernel_parameter{parameter=\"fs.file-max\"}")
NETWORK_RECEIVE_BYTES = _c("network_receive_bytes_total", "Bytes received.", DEV, "sar -n DEV rxkB/s: rate()/1024")
NETWORK_TRANSMIT_BYTES = _c("network_transmit_bytes_total", "Bytes sent.", DEV, "sar -n DEV txkB/s: rate()/1024")
NETWORK_RECEIVE_PACKETS = _c("network_receive_packets_total", "Packets received.", DEV, "sar -n DEV rxpck/s")
NETWORK_TRANSMIT_PACKETS = _c("network_transmit_packets_total", "Packets sent.", DEV, "sar -n DEV txpck/s")
NETWORK_RECEIVE_ERRORS = _c("network_receive_errors_total", "Receive errors.", DEV)
NETWORK_TRANSMIT_ERRORS = _c("network_transmit_errors_total", "Transmit errors.", DEV)
NETWORK_RECEIVE_DROP = _c("network_receive_drop_total", "Received packets dropped.", DEV)
NETWORK_TRANSMIT_DROP = _c("network_transmit_drop_total", "Outgoing packets dropped.", DEV)

SPECS = [
    CPUS, CPU_CORES, CPU_SECONDS, CPU_GUEST_SECONDS, PROCS_RUNNING, PROCS_BLOCKED, CONTEXT_SWITCHES, INTERRUPTS,
    FORKS, BOOT_TIME, LOAD1, LOAD5, LOAD15,
    MEMORY_TOTAL, MEMORY_AVAILABLE, MEMORY_FREE, MEMORY_BUFFERS, MEMORY_CACHED, MEMORY_USED, MEMORY_SHARED,
    SWAP_TOTAL, SWAP_USED, SWAP_IN, SWAP_OUT, PAGE_IN, PAGE_OUT, PAGE_FAULTS, MAJOR_PAGE_FAULTS, PAGE_SCANS,
    PAGE_SCANS_BY_RECLAIMER, PAGE_STEALS, OOM_KILLS,
    DISK_READS_COMPLETED, DISK_READS_MERGED, DISK_READ_BYTES, DISK_READ_TIME, DISK_WRITES_COMPLETED,
    DISK_WRITES_MERGED, DISK_WRITTEN_BYTES, DISK_WRITE_TIME, DISK_IO_NOW, DISK_IO_TIME, DISK_IO_TIME_WEIGHTED,
    DISK_DISCARDS_COMPLETED, DISK_DISCARDED_BYTES, DISK_DISCARD_TIME, DISK_FLUSH_REQUESTS, DISK_FLUSH_REQUESTS_TIME,
    KERNEL_PARAMETER, FILE_HANDLES_ALLOCATED,
    NETWORK_RECEIVE_BYTES, NETWORK_TRANSMIT_BYTES, NETWORK_RECEIVE_PACKETS, NETWORK_TRANSMIT_PACKETS,
    NETWORK_RECEIVE_ERRORS, NETWORK_TRANSMIT_ERRORS, NETWORK_RECEIVE_DROP, NETWORK_TRANSMIT_DROP,
]


# The text back-end: the tools' figures over their sample interval, gauges of their own (text.py).
T = ("target",)
TD = ("target", "device")
CPU_MODE_RATIO = _g("cpu_mode_ratio",
                    "Share (0-1) of all CPU time in the mode over the tool's last sample interval (text back-end: "
                    "sar -u %usr/%sys/%wio/%idle, vmstat us/sy/id/wa, iostat's CPU line).", ("target", "mode"),
                    "vmstat id / 100; recorded as instance:middleware_host_cpu_idle:ratio5m")
PAGE_SCANS_PER_SECOND = _g("page_scans_per_second",
                           "Pages scanned per second over the tool's last sample interval (text back-end: vmstat sr, "
                           "sar -g pgscan/s, sysstat sar -B pgscank/s + pgscand/s).", T,
                           "vmstat sr; recorded as instance:middleware_host_page_scans:rate5m")
DISK_SERVICE_TIME = _g("disk_service_time_seconds",
                       "Average time the device took per transfer, without queueing (text back-end: sar -d avserv, "
                       "iostat -xn asvc_t, AIX iostat -D / -Dl avgserv, sysstat svctm).", TD,
                       "sar -d avserv / 1000; recorded as instance_device:middleware_host_disk_service_time:seconds5m")
DISK_AWAIT = _g("disk_await_seconds",
                "Average time per transfer including the queue (text back-end: sysstat await, Solaris svc_t or "
                "wsvc_t + asvc_t, sar -d avwait + avserv).", TD,
                "iostat await / 1000; recorded as instance_device:middleware_host_disk_await:seconds5m")
DISK_UTIL = _g("disk_util_ratio", "Share (0-1) of the interval the device was busy (text back-end: sar -d %busy, "
                                  "iostat %util / %b / %tm_act).", TD,
               "iostat %util / 100; recorded as instance_device:middleware_host_disk_util:ratio5m")
DISK_TRANSFERS = _g("disk_transfers_per_second", "Reads and writes per second (text back-end: sar -d r+w/s or tps, "
                                                 "iostat r/s + w/s or tps).", TD, "iostat r/s + w/s")
DISK_QUEUE = _g("disk_queue_length", "Average requests queued or in service (text back-end: sar -d avque, iostat "
                                     "aqu-sz, Solaris wait + actv, AIX avgwqsz + avgsqsz).", TD,
                "iostat aqu-sz; recorded as instance_device:middleware_host_disk_queue_size:avg5m")
RUN_QUEUE = _g("run_queue_length",
               "Threads waiting for a CPU, averaged over the tool's last sample interval while the queue was occupied "
               "(text back-end: sar -q runq-sz; sysstat's is the queue length at the end of the interval).", T,
               "sar -q runq-sz; consistently above 2 per CPU: CPU-bound (Solaris guide)")
RUN_QUEUE_OCCUPIED = _g("run_queue_occupied_ratio",
                        "Share (0-1) of the tool's last sample interval the run queue was occupied (text back-end: "
                        "sar -q %runocc of HP-UX, Solaris and AIX).", T, "sar -q %runocc / 100")
VIRTUAL_SWAP_TOTAL = _g("virtual_swap_total_bytes",
                        "Virtual swap: the paging space on disk plus the memory that may back reservations "
                        "(HP-UX pseudo-swap, Solaris), which every process's reservation draws on; a fork or a "
                        "malloc fails when none is available (text back-end: HP-UX swapinfo -t total AVAIL, Solaris "
                        "swap -s used + available).", T, "swapinfo -tam total AVAIL (MiB) * 2^20")
VIRTUAL_SWAP_AVAILABLE = _g("virtual_swap_available_bytes",
                            "Virtual swap not yet reserved (text back-end: HP-UX swapinfo -t total AVAIL - USED, "
                            "Solaris swap -s available, sar -r freeswap, vmstat swap).", T,
                            "swap -s available (KiB) * 1024; sar -r freeswap * 512")
MEMORY_ACTIVE_VIRTUAL = _g("memory_active_virtual_bytes",
                           "Active virtual memory: pages of working storage in use, in memory or on paging space "
                           "(text back-end: AIX and HP-UX vmstat avm).", T, "vmstat avm * 4096")
LPAR_ENTITLED_CORES = _g("lpar_entitled_cores",
                         "Processing capacity the AIX LPAR is entitled to, in physical cores (lparstat ent=; "
                         "absent on a dedicated LPAR that prints none).", T, "lparstat ent")
LPAR_PHYSICAL_CORES = _g("lpar_physical_cores",
                         "Physical cores the AIX LPAR consumed over lparstat's last interval (physc); on a shared "
                         "uncapped LPAR it can exceed the entitlement, up to its virtual processors.", T,
                         "lparstat physc")
LPAR_ENTITLEMENT_CONSUMED = _g("lpar_entitlement_consumed_ratio",
                               "Share of the entitlement the AIX LPAR consumed over lparstat's last interval "
                               "(%entc / 100): above 1 when an uncapped LPAR borrows idle pool capacity, which its "
                               "CPU shares alone do not show.", T, "lparstat %entc / 100")
LPAR_INFO = _g("lpar_info", "1 for the AIX LPAR's type (Shared, Dedicated), mode (Capped, Uncapped, Donating) and "
                            "SMT setting as lparstat's configuration line prints them.", ("target", "type", "mode",
                                                                                          "smt"), "lparstat")
PLATFORM = _g("text_platform", "1 for the platform and release the text back-end recognised in the output.",
              ("target", "platform", "release"))
TEXT_SOURCES = SourceMetrics.declare(f"{P}_text",
                                     "1 if the command is configured (sources sar, vmstat, iostat, uptime, "
                                     "svmon, lsps, swapinfo, swap, lparstat).")
TEXT_SPECS = [CPU_MODE_RATIO, PAGE_SCANS_PER_SECOND, DISK_SERVICE_TIME, DISK_AWAIT, DISK_UTIL, DISK_TRANSFERS,
              DISK_QUEUE, RUN_QUEUE, RUN_QUEUE_OCCUPIED, VIRTUAL_SWAP_TOTAL, VIRTUAL_SWAP_AVAILABLE,
              MEMORY_ACTIVE_VIRTUAL, LPAR_ENTITLED_CORES, LPAR_PHYSICAL_CORES, LPAR_ENTITLEMENT_CONSUMED, LPAR_INFO,
              PLATFORM, *TEXT_SOURCES.specs()]
