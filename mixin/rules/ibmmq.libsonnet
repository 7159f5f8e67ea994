// Thresholds of alerts/ibmmq.yml (the parameters of mixin/alerts/ibmmq.libsonnet).

local utils = import '../lib/utils.libsonnet';

{
  prometheusRules+:: {
    groups+: [
      {
        name: 'middleware-ibmmq-thresholds',
        rules: [
          // Host CPU idle share (0-1) under which queue managers count as CPU-starved. MQSeries Integrator for Sun
          // Solaris v1.1: Maximizing persistent message throughput, Test Case 2, Figure 4: 5 queue managers reached
          // 215 msg/s at 12 % idle; adding engines took idle to 1 % and throughput fell to 195 msg/s.
          utils.threshold($._config, 'mq_cpu_idle_ratio', 'MQ-CPU'),
          // Share (0-1) by which a queue manager's get rate must fall below its own recent level (the 90th percentile
          // of its 5-minute rate over the last hour) to count as "throughput falls". MQSeries Integrator for Sun
          // Solaris v1.1: Maximizing persistent message throughput, Test Case 2, Figure 4: with two rules engines per
          // queue manager, going from 2 to 3 queue managers took CPU idle from 24 % to 9 % and each queue manager's
          // rate from 84 to 61 msg/s, a fall of 27 %; 25 % is that step, rounded down.
          utils.threshold($._config, 'mq_throughput_fall_ratio', 'MQ-CPU'),
          // Depth as a share of MAXDEPTH (0-1). The report gives no share; 80 % is this project's example default
          // (guide row MQ-DEPTH, docs/sources.md).
          utils.threshold($._config, 'mq_queue_depth_ratio', 'MQ-DEPTH'),
          // Messages on a queue that count as normal working depth: the report's driver held the input queue at
          // 100 messages so that the rules engines were never idle (MQSeries Integrator for Sun Solaris v1.1:
          // Maximizing persistent message throughput, Test Model).
          utils.threshold($._config, 'mq_queue_working_depth', 'MQ-DEPTH'),
          // Channel, queue and queue-manager health (issue 28): this project's defaults, not guide figures; the
          // reasoning is in docs/runbooks/ibmmq.md under each alert.
          // Running instances of a SVRCONN channel as a share (0-1) of its MAXINST.
          utils.threshold($._config, 'mq_channel_instances_ratio', 'none'),
          // Age (seconds) of the oldest message (MSGAGE) above which a watched queue counts as stuck.
          utils.threshold($._config, 'mq_queue_oldest_message_age_seconds', 'none'),
          // Queue file size as a share (0-1) of the size it may grow to (CURFSIZE / CURMAXFS).
          utils.threshold($._config, 'mq_queue_file_ratio', 'none'),
          // Primary recovery-log space in use (LOGINUSE, percent) above which the log counts as nearly full.
          utils.threshold($._config, 'mq_log_in_use_percent', 'none'),
          // issue 39: use (0-1) of the file system holding the recovery log (DISK/Log "Log file system - bytes in
          // use" / "bytes max") above which it warns, and above which it pages: when it is full the queue manager
          // cannot write its log and stops (this project's defaults, as node-mixin's two-step file-system alerts).
          utils.threshold($._config, 'mq_log_file_system_warning_ratio', 'none'),
          utils.threshold($._config, 'mq_log_file_system_critical_ratio', 'none'),
        ],
      },
    ],
  },
}
