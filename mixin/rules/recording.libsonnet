// Recording rules: the vmstat, iostat and sar columns the guides quote, and per-queue-manager figures.
//
// Naming follows level:metric:operations. Every rule keeps the target labels (instance, job and any labels the
// scrape configuration adds) by aggregating `without` the exporter's own per-CPU/per-mode/per-process labels.
// The 5m window matches the README's "Host metrics as vmstat, iostat and sar columns" table.
//
// Used by alerts/host.yml (CPU idle, I/O wait, disk %util), alerts/ibmmq.yml (MQ-CPU: CPU idle and the
// per-queue-manager throughput) and by the dashboards (svctm, aqu-sz, page scans, CPU per queue manager and per
// rules engine: MQSeries Integrator for Sun Solaris v1.1: Maximizing persistent message throughput, Test Cases
// 1-5; Optimizing server performance: CPU scalability, Tables 1-2; see docs/sources.md).

local utils = import '../lib/utils.libsonnet';

{
  // The host figures by source (config hostMetricsSource): the exporter's host collector, or node_exporter.
  _middlewareHostRecordingRules:: {
    // One rule per name: the /proc rule `or` the text back-end's (below), so that no name is recorded twice in a
    // group (promtool check rules: "duplicate rule(s)"). A host has one back-end, and the text back-end's series
    // keep their `target` label, so the two sides never give the same series.
    middleware: [
      {
        record: rule.record,
        expr: std.rstripChars(rule.expr, '\n') + '\n  or\n' + std.rstripChars(text[rule.record], '\n') + '\n',
      }
      for rule in self.procfs
      for text in [{ [r.record]: r.expr for r in $._middlewareHostRecordingRules.text }]
    ],
    procfs:: [
      // --- CPU, as vmstat's id / wa / (us + sy) columns -----------------------------------------------------------
      // Each share is a ratio (0-1) of all CPU time of all CPUs of the host over 5 minutes: the sum over every
      // mode is the denominator, as vmstat divides by the total of all jiffies. Guest time is already inside user
      // and nice. The three shares plus steal add up to 1:
      //   idle   = mode idle                                 (vmstat id)
      //   iowait = mode iowait                               (vmstat wa)
      //   busy   = user + nice + system + irq + softirq      (vmstat us + sy)
      //          = 1 - idle - iowait - steal
      {
        record: 'instance:middleware_host_cpu_idle:ratio5m',
        expr: |||
          sum without (cpu, mode) (rate(middleware_host_cpu_seconds_total{%(middlewareSelector)s, mode="idle"}[5m]))
            / sum without (cpu, mode) (rate(middleware_host_cpu_seconds_total{%(middlewareSelector)s}[5m]))
        ||| % $._config,
      },
      {
        record: 'instance:middleware_host_cpu_iowait:ratio5m',
        expr: |||
          sum without (cpu, mode) (rate(middleware_host_cpu_seconds_total{%(middlewareSelector)s, mode="iowait"}[5m]))
            / sum without (cpu, mode) (rate(middleware_host_cpu_seconds_total{%(middlewareSelector)s}[5m]))
        ||| % $._config,
      },
      {
        record: 'instance:middleware_host_cpu_busy:ratio5m',
        expr: |||
          sum without (cpu, mode) (rate(middleware_host_cpu_seconds_total{%(middlewareSelector)s, mode=~"user|nice|system|irq|softirq"}[5m]))
            / sum without (cpu, mode) (rate(middleware_host_cpu_seconds_total{%(middlewareSelector)s}[5m]))
        ||| % $._config,
      },
      // --- Disks, as iostat -x / sar -d ---------------------------------------------------------------------------
      // await (seconds): time per completed I/O including queueing, reads and writes together (iostat await).
      // No I/O in the window gives 0/0 = NaN, which no comparison matches.
      {
        record: 'instance_device:middleware_host_disk_await:seconds5m',
        expr: |||
          (rate(middleware_host_disk_read_time_seconds_total{%(middlewareSelector)s}[5m]) + rate(middleware_host_disk_write_time_seconds_total{%(middlewareSelector)s}[5m]))
            / (rate(middleware_host_disk_reads_completed_total{%(middlewareSelector)s}[5m]) + rate(middleware_host_disk_writes_completed_total{%(middlewareSelector)s}[5m]))
        ||| % $._config,
      },
      // svctm (seconds): device busy time per completed I/O, without queueing (sar -d svctm; Solaris avserv, the
      // Domino article's 14 ms RAID0 / 35 ms RAID5 service time).
      {
        record: 'instance_device:middleware_host_disk_service_time:seconds5m',
        expr: |||
          rate(middleware_host_disk_io_time_seconds_total{%(middlewareSelector)s}[5m])
            / (rate(middleware_host_disk_reads_completed_total{%(middlewareSelector)s}[5m]) + rate(middleware_host_disk_writes_completed_total{%(middlewareSelector)s}[5m]))
        ||| % $._config,
      },
      // %util as a ratio (0-1): share of wall time the device had I/O in flight (iostat %util / 100).
      {
        record: 'instance_device:middleware_host_disk_util:ratio5m',
        expr: 'rate(middleware_host_disk_io_time_seconds_total{%(middlewareSelector)s}[5m])' % $._config,
      },
      // aqu-sz: average number of requests in flight or queued (iostat aqu-sz, formerly avgqu-sz).
      {
        record: 'instance_device:middleware_host_disk_queue_size:avg5m',
        expr: 'rate(middleware_host_disk_io_time_weighted_seconds_total{%(middlewareSelector)s}[5m])' % $._config,
      },
      // --- Memory reclaim, as vmstat sr / sar -B pgscank/s + pgscand/s (pages per second) ---------------------
      {
        record: 'instance:middleware_host_page_scans:rate5m',
        expr: 'rate(middleware_host_page_scans_total{%(middlewareSelector)s}[5m])' % $._config,
      },
    ],
    text:: [
      // --- The same series from the host collector's text back-end (sar, vmstat, iostat; HP-UX, Solaris, AIX) ----
      // Those tools print shares, rates and times over their own sample interval, exported as gauges
      // (exporter/systems/host/README.md); averaged over 5 minutes they give the series above, with the same
      // names, so alerts/host.yml and the dashboards read both (each joined to its /proc rule with `or`, above). A
      // figure the platform does not print (iowait on Solaris 10 and later, service time in sysstat 12's iostat)
      // gives no series.
      {
        record: 'instance:middleware_host_cpu_idle:ratio5m',
        expr: 'sum without (mode) (avg_over_time(middleware_host_cpu_mode_ratio{%(middlewareSelector)s, mode="idle"}[5m]))' % $._config,
      },
      {
        record: 'instance:middleware_host_cpu_iowait:ratio5m',
        expr: 'sum without (mode) (avg_over_time(middleware_host_cpu_mode_ratio{%(middlewareSelector)s, mode="iowait"}[5m]))' % $._config,
      },
      // busy = every printed mode but idle, iowait and steal (sar %usr + %sys; vmstat us + sy)
      {
        record: 'instance:middleware_host_cpu_busy:ratio5m',
        expr: 'sum without (mode) (avg_over_time(middleware_host_cpu_mode_ratio{%(middlewareSelector)s, mode!~"idle|iowait|steal"}[5m]))' % $._config,
      },
      {
        record: 'instance_device:middleware_host_disk_await:seconds5m',
        expr: 'avg_over_time(middleware_host_disk_await_seconds{%(middlewareSelector)s}[5m])' % $._config,
      },
      // sar -d avserv, iostat -xn asvc_t: the service time the Domino article quotes (DOM-DISK)
      {
        record: 'instance_device:middleware_host_disk_service_time:seconds5m',
        expr: 'avg_over_time(middleware_host_disk_service_time_seconds{%(middlewareSelector)s}[5m])' % $._config,
      },
      {
        record: 'instance_device:middleware_host_disk_util:ratio5m',
        expr: 'avg_over_time(middleware_host_disk_util_ratio{%(middlewareSelector)s}[5m])' % $._config,
      },
      {
        record: 'instance_device:middleware_host_disk_queue_size:avg5m',
        expr: 'avg_over_time(middleware_host_disk_queue_length{%(middlewareSelector)s}[5m])' % $._config,
      },
      // vmstat sr, sar -g pgscan/s (DOM-SCAN)
      {
        record: 'instance:middleware_host_page_scans:rate5m',
        expr: 'avg_over_time(middleware_host_page_scans_per_second{%(middlewareSelector)s}[5m])' % $._config,
      },
    ],
    node_exporter: [
      // --- CPU, as vmstat's id / wa / (us + sy) columns, from node_exporter's node_cpu_seconds_total ------------
      // The same shares as the exporter's rules above: node_exporter's cpu/mode labels are the exporter's.
      {
        record: 'instance:middleware_host_cpu_idle:ratio5m',
        expr: |||
          sum without (cpu, mode) (rate(node_cpu_seconds_total{%(nodeExporterSelector)s, mode="idle"}[5m]))
            / sum without (cpu, mode) (rate(node_cpu_seconds_total{%(nodeExporterSelector)s}[5m]))
        ||| % $._config,
      },
      {
        record: 'instance:middleware_host_cpu_iowait:ratio5m',
        expr: |||
          sum without (cpu, mode) (rate(node_cpu_seconds_total{%(nodeExporterSelector)s, mode="iowait"}[5m]))
            / sum without (cpu, mode) (rate(node_cpu_seconds_total{%(nodeExporterSelector)s}[5m]))
        ||| % $._config,
      },
      {
        record: 'instance:middleware_host_cpu_busy:ratio5m',
        expr: |||
          sum without (cpu, mode) (rate(node_cpu_seconds_total{%(nodeExporterSelector)s, mode=~"user|nice|system|irq|softirq"}[5m]))
            / sum without (cpu, mode) (rate(node_cpu_seconds_total{%(nodeExporterSelector)s}[5m]))
        ||| % $._config,
      },

      // --- Disks, as iostat -x / sar -d, from node_exporter's diskstats collector -----------------------------
      {
        record: 'instance_device:middleware_host_disk_await:seconds5m',
        expr: |||
          (rate(node_disk_read_time_seconds_total{%(nodeExporterSelector)s}[5m]) + rate(node_disk_write_time_seconds_total{%(nodeExporterSelector)s}[5m]))
            / (rate(node_disk_reads_completed_total{%(nodeExporterSelector)s}[5m]) + rate(node_disk_writes_completed_total{%(nodeExporterSelector)s}[5m]))
        ||| % $._config,
      },
      {
        record: 'instance_device:middleware_host_disk_service_time:seconds5m',
        expr: |||
          rate(node_disk_io_time_seconds_total{%(nodeExporterSelector)s}[5m])
            / (rate(node_disk_reads_completed_total{%(nodeExporterSelector)s}[5m]) + rate(node_disk_writes_completed_total{%(nodeExporterSelector)s}[5m]))
        ||| % $._config,
      },
      {
        record: 'instance_device:middleware_host_disk_util:ratio5m',
        expr: 'rate(node_disk_io_time_seconds_total{%(nodeExporterSelector)s}[5m])' % $._config,
      },
      {
        record: 'instance_device:middleware_host_disk_queue_size:avg5m',
        expr: 'rate(node_disk_io_time_weighted_seconds_total{%(nodeExporterSelector)s}[5m])' % $._config,
      },

      // --- Memory reclaim, from node_exporter's vmstat collector ---------------------------------------------
      // node_exporter exports the pgscan counters only when --collector.vmstat.fields includes them (its default
      // does not), e.g. --collector.vmstat.fields='^(oom_kill|pgpg|pswp|pg.*fault|pgscan_.*)'. As the host
      // collector: pgscan_anon + pgscan_file (kernel 5.8+, counting cgroup-limited reclaim too), else
      // pgscan_kswapd + pgscan_direct.
      {
        record: 'instance:middleware_host_page_scans:rate5m',
        expr: |||
          (rate(node_vmstat_pgscan_anon{%(nodeExporterSelector)s}[5m]) + rate(node_vmstat_pgscan_file{%(nodeExporterSelector)s}[5m]))
            or
          (rate(node_vmstat_pgscan_kswapd{%(nodeExporterSelector)s}[5m]) + rate(node_vmstat_pgscan_direct{%(nodeExporterSelector)s}[5m]))
        ||| % $._config,
      },
    ],
  },
  prometheusRules+:: {
    groups+: [
      {
        name: 'middleware-recording',
        rules: [
          // --- Host: CPU, disks and memory reclaim (above) ---
        ] + $._middlewareHostRecordingRules[$._config.hostMetricsSource] + [
          // --- IBM MQ / MQSI (MQ-CPU, MQ-ENGINE) -------------------------------------------------------------------
          // CPU seconds per second (1 = one CPU fully used) of each queue manager's processes (process group
          // "ibmmq", qmgr taken from `-m QM`), user + system. Processes without -m sum into a series without qmgr.
          {
            record: 'instance_qmgr:middleware_process_group_cpu:rate5m',
            expr: |||
              sum without (group, process, sid, mode) (rate(middleware_process_group_cpu_seconds_total{%(middlewareSelector)s, group="ibmmq"}[5m]))
            ||| % $._config,
          },
          // CPU seconds per second of all MQSI rules engines / brokers on the host (process group "mqsi_engine"; the
          // report measured 10-15 % of the host per rules engine).
          {
            record: 'instance:middleware_process_group_mqsi_engine_cpu:rate5m',
            expr: |||
              sum without (group, process, qmgr, sid, mode) (rate(middleware_process_group_cpu_seconds_total{%(middlewareSelector)s, group="mqsi_engine"}[5m]))
            ||| % $._config,
            labels: { guide_row: 'MQ-ENGINE' },
          },
          // CPU seconds per second of the rules engines serving each queue manager (the report ran one or two engines
          // per queue manager at 10-15 % of the host each; MQ-ENGINE dashboard). Engines without -m sum into a series
          // without qmgr.
          {
            record: 'instance_qmgr:middleware_process_group_mqsi_engine_cpu:rate5m',
            expr: |||
              sum without (group, process, sid, mode) (rate(middleware_process_group_cpu_seconds_total{%(middlewareSelector)s, group="mqsi_engine"}[5m]))
            ||| % $._config,
            labels: { guide_row: 'MQ-ENGINE' },
          },
          // Throughput per queue manager, the report's msgs/s: messages got per second on the whole queue manager
          // (STATMQI destructive gets, every queue), and put per second. pcf and runmqsc back-ends (the queue manager's
          // resource-statistics publications); REST queue managers have no series.
          {
            record: 'qmgr:ibmmq_qmgr_destructive_gets:rate5m',
            expr: 'rate(ibmmq_qmgr_interval_destructive_get_total_count_total{%(middlewareSelector)s}[5m])' % $._config,
            labels: { guide_row: 'MQ-CPU' },
          },
          {
            record: 'qmgr:ibmmq_qmgr_puts:rate5m',
            expr: 'rate(ibmmq_qmgr_interval_mqput_mqput1_total_count_total{%(middlewareSelector)s}[5m])' % $._config,
            labels: { guide_row: 'MQ-CPU' },
          },
          // The queue manager's own recent level: the 90th percentile of its 5-minute get rate over the last hour
          // (the saturation rule's reference for "throughput falls", the dashboard's baseline). A percentile, not the
          // mean: after a fall the mean follows the fall down; not the maximum: one burst would set the bar.
          {
            record: 'qmgr:ibmmq_qmgr_destructive_gets:rate5m_q90_1h',
            expr: 'quantile_over_time(0.9, qmgr:ibmmq_qmgr_destructive_gets:rate5m{%(middlewareSelector)s}[1h])' % $._config,
            labels: { guide_row: 'MQ-CPU' },
          },
          // The same from the per-queue counts, summed over the queues the exporter reports (include/exclude and
          // statistics_max_queues), for the dashboards' enqueue/dequeue rates (MQ-DEPTH).
          {
            record: 'qmgr:ibmmq_queue_mqget_count:rate5m',
            expr: 'sum without (queue) (rate(ibmmq_queue_mqget_count_total{%(middlewareSelector)s}[5m]))' % $._config,
            labels: { guide_row: 'MQ-DEPTH' },
          },
          {
            record: 'qmgr:ibmmq_queue_mqput_mqput1_count:rate5m',
            expr: 'sum without (queue) (rate(ibmmq_queue_mqput_mqput1_count_total{%(middlewareSelector)s}[5m]))' % $._config,
            labels: { guide_row: 'MQ-DEPTH' },
          },
          // --- Domino (DOM-CPU) ---------------------------------------------------------------------------------------
          // The article compares CPU used (vmstat us + sy) for the same 1,800 users at 4, 8 and 12 CPUs: 51 %, 25 %,
          // 14 %, i.e. about 2.0, 2.0 and 1.7 CPUs' worth of work: no gain beyond 8 CPUs (Optimizing server performance:
          // CPU scalability, Tables 1-2). The busy share on hosts running a Domino server, and the same as CPUs' worth
          // (share x CPU count), for the dashboard next to those figures. /proc hosts only (the CPU count comes from
          // the per-CPU counters).
          {
            record: 'instance:middleware_domino_cpu_busy:ratio5m',
            expr: |||
              instance:middleware_host_cpu_busy:ratio5m{%(hostSelector)s}
                and on (%(clusterPrefix)sinstance) (max by (%(clusterPrefix)sinstance) (middleware_process_group_processes{%(middlewareSelector)s, group="domino",process="server"}) > 0)
            ||| % $._config,
            labels: { guide_row: 'DOM-CPU' },
          },
          {
            record: 'instance:middleware_domino_cpus_busy:avg5m',
            expr: |||
              instance:middleware_domino_cpu_busy:ratio5m{%(middlewareSelector)s}
                * on (%(clusterPrefix)sinstance) group_left ()
              count by (%(clusterPrefix)sinstance) (count by (%(clusterPrefix)sinstance, cpu) (middleware_host_cpu_seconds_total{%(middlewareSelector)s}))
            ||| % $._config,
            labels: { guide_row: 'DOM-CPU' },
          },
        ],
      },
    ],
  },
}
