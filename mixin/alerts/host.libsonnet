// Host alerts: CPU saturation and the host-level parts of MQ-IO (I/O wait, disk busy).
//
// Inputs are the recording rules of alerts/recording.yml (load both files). Thresholds are parameters: change
// the expression of a middleware:threshold:* rule below (the Helm chart renders this group from its values).

local utils = import '../lib/utils.libsonnet';

// The share of swap in use, by source: the paging space on disk (/proc, psutil, swapinfo dev rows, lsps, svmon,
// sar -S) and, from the exporter's text back-end, the virtual swap that HP-UX and Solaris reservations draw on
// (swapinfo -t, swap -s), whichever is over the threshold; node_exporter has the disk swap only.
local swapUsed(config) =
  if config.hostMetricsSource == 'node_exporter' then |||
    1 - node_memory_SwapFree_bytes{%(hostSelector)s} / (node_memory_SwapTotal_bytes{%(hostSelector)s} > 0)
      > on () group_left () middleware:threshold:host_swap_used_ratio
  ||| % config else |||
    middleware_host_swap_used_bytes{%(hostSelector)s} / (middleware_host_swap_total_bytes{%(hostSelector)s} > 0)
      > on () group_left () middleware:threshold:host_swap_used_ratio
    or
    1 - middleware_host_virtual_swap_available_bytes{%(hostSelector)s} / (middleware_host_virtual_swap_total_bytes{%(hostSelector)s} > 0)
      > on () group_left () middleware:threshold:host_swap_used_ratio
  ||| % config;

{
  prometheusAlerts+:: {
    groups+: [
      {
        name: 'middleware-host',
        rules: [
          {
            alert: 'MiddlewareHostCpuSaturated',
            expr: |||
              instance:middleware_host_cpu_idle:ratio5m{%(hostSelector)s}
                < on () group_left () middleware:threshold:host_cpu_idle_ratio
            ||| % $._config,
            'for': '15m',
            labels: { severity: 'warning', system: 'host', guide_row: 'none' },
            annotations: {
              summary: 'Host CPU saturated (idle under the threshold).',
              description: utils.fold(|||
                CPU idle on {{ $labels.instance }} has been {{ $value | humanizePercentage }} of all CPU time
                (vmstat id) for 15 minutes, under the threshold of {{ with query
                "middleware:threshold:host_cpu_idle_ratio" }}{{ . | first | value | humanizePercentage }}{{ end }}.
                Work on this host queues for CPU; throughput no longer rises with load.
              |||),
              runbook_url: utils.runbook($._config, 'host', 'MiddlewareHostCpuSaturated'),
              source: utils.fold(|||
                operational rule (none); threshold after MQSeries Integrator for Sun Solaris v1.1: Maximizing
                persistent message throughput, Test Case 2, Figure 4; Was Our Hypothesis True? (MQ-CPU)
              |||),
            },
          },
          // Operational rule (guide_row none): the CPU is used up whatever runs on the host. The MQ-CPU rule of
          // the guide (idle low *while* queues grow) is MiddlewareMqQueueManagerCpuSaturation in alerts/ibmmq.yml.
          {
            alert: 'MiddlewareHostIoWaitHigh',
            expr: |||
              instance:middleware_host_cpu_iowait:ratio5m{%(hostSelector)s}
                > on () group_left () middleware:threshold:host_iowait_ratio
            ||| % $._config,
            'for': '15m',
            labels: { severity: 'warning', system: 'host', guide_row: 'MQ-IO' },
            annotations: {
              summary: 'Host CPU time waiting for I/O is high.',
              description: utils.fold(|||
                I/O wait on {{ $labels.instance }} has been {{ $value | humanizePercentage }} of all CPU time
                (vmstat wa) for 15 minutes, above the threshold of {{ with query
                "middleware:threshold:host_iowait_ratio" }}{{ . | first | value | humanizePercentage }}{{ end }}.
                Processes wait for the disks; check which devices are busy.
              |||),
              runbook_url: utils.runbook($._config, 'host', 'MiddlewareHostIoWaitHigh'),
              source: utils.fold(|||
                MQSeries Integrator for Sun Solaris v1.1: Maximizing persistent message throughput, Initial Hub Disk
                Architecture; Test Cases 3-4, Figures 7 and 9 (MQ-IO); the report gives no I/O-wait limit
              |||),
            },
          },
          {
            alert: 'MiddlewareHostDiskUtilisationHigh',
            expr: |||
              instance_device:middleware_host_disk_util:ratio5m{%(hostSelector)s}
                > on () group_left () middleware:threshold:host_disk_util_ratio
            ||| % $._config,
            'for': '15m',
            labels: { severity: 'warning', system: 'host', guide_row: 'MQ-IO' },
            annotations: {
              summary: 'Disk busy nearly all the time.',
              description: utils.fold(|||
                Device {{ $labels.device }} on {{ $labels.instance }} has been busy {{ $value | humanizePercentage
                }} of the time (iostat %util) for 15 minutes, above the threshold of {{ with query
                "middleware:threshold:host_disk_util_ratio" }}{{ . | first | value | humanizePercentage }}{{ end }}.
              |||),
              runbook_url: utils.runbook($._config, 'host', 'MiddlewareHostDiskUtilisationHigh'),
              source: utils.fold(|||
                MQSeries Integrator for Sun Solaris v1.1: Maximizing persistent message throughput, Initial Hub Disk
                Architecture; Test Case 4, Figure 9 (MQ-IO); 90 % is this project's default, not a report figure
              |||),
            },
          },
          // Operational rule (guide_row none): once swap (or, on HP-UX and Solaris, the virtual swap that every
          // reservation draws on) is used up, new processes and allocations fail whatever runs on the host.
          {
            alert: 'MiddlewareHostSwapNearlyExhausted',
            expr: swapUsed($._config),
            'for': '15m',
            labels: { severity: 'warning', system: 'host', guide_row: 'none' },
            annotations: {
              summary: 'Host swap space nearly used up.',
              description: utils.fold(|||
                {{ $labels.instance }}{{ with $labels.target }} ({{ . }}){{ end }} has used {{ $value |
                humanizePercentage }} of its swap space for 15 minutes, above the threshold of {{ with query
                "middleware:threshold:host_swap_used_ratio" }}{{ . | first | value | humanizePercentage }}{{ end
                }}. When it runs out, fork and memory allocations fail (HP-UX and Solaris count the reservations
                of running processes, swapinfo -t / swap -s).
              |||),
              runbook_url: utils.runbook($._config, 'host', 'MiddlewareHostSwapNearlyExhausted'),
              source: 'operational rule (none); 90 % is this project\'s default',
            },
          },
        ],
      },
    ],
  },
}
