// Domino server hosts: alert rules.
//
// Requirements: the Domino guide rows of docs/sources.md (DOM-DISK, DOM-SCAN; DOM-CPU is a dashboard figure: the
// busy share and CPUs' worth per Domino host are recording rules in recording.yml, the figure per 1,000 users and
// its ratio to the article's in ../rules/domino.libsonnet).
// Source document: Optimizing server performance: CPU scalability (Iris Today, Iris Associates, 1999; Domino
// 4.6), Tables 1 (RAID0) and 2 (RAID5) of its "CPU scalability test results" sidebar.
// Metrics: the `host`, `process` and `domino` collectors (exporter/systems/domino/README.md, docs/metrics.md).
// Runbooks: docs/runbooks/domino.md. Unit tests: tests/rules/domino.test.yml.
//
// The host rules apply only to hosts where the Domino server process runs:
//   and on (instance) (max by (instance) (middleware_process_group_processes{group="domino",process="server"}) > 0)

local utils = import '../lib/utils.libsonnet';

{
  prometheusAlerts+:: {
    groups+: [
      {
        name: 'middleware-domino',
        rules: [
          // DOM-DISK: service time = device busy time / (reads + writes), per device, in seconds (the recording
          // rule instance_device:middleware_host_disk_service_time:seconds5m, written out so that this file works
          // alone). Reading of the article: it quotes "the average disk service time" from sar's disk report (14 ms
          // RAID0; 34 ms in its text and 35 ms in Table 2 for RAID5, with response times still acceptable), so the
          // rule compares the service time, not await: await adds the time requests wait in the queue, so a busy
          // but healthy disk at the RAID0 service time can show an await above 35 ms. $value is the service time.
          {
            alert: 'MiddlewareDominoDiskServiceTimeHigh',
            expr: |||
              (
                rate(middleware_host_disk_io_time_seconds_total{%(middlewareSelector)s}[5m])
                /
                (
                    rate(middleware_host_disk_reads_completed_total{%(middlewareSelector)s}[5m])
                  + rate(middleware_host_disk_writes_completed_total{%(middlewareSelector)s}[5m])
                )
                > on () group_left () middleware:threshold:domino_disk_service_time_seconds
              )
              and
              (
                  rate(middleware_host_disk_reads_completed_total{%(middlewareSelector)s}[5m])
                + rate(middleware_host_disk_writes_completed_total{%(middlewareSelector)s}[5m])
                >= on () group_left () middleware:threshold:domino_disk_min_iops
              )
              and on (%(clusterPrefix)sinstance)
                (max by (%(clusterPrefix)sinstance) (middleware_process_group_processes{%(middlewareSelector)s, group="domino",process="server"}) > 0)
            ||| % $._config,
            'for': '15m',
            labels: { severity: 'warning', system: 'domino', guide_row: 'DOM-DISK' },
            annotations: {
              summary: 'Disk I/O on a Domino server is slower than the RAID5 figure of the Domino article.',
              description: utils.fold(|||
                I/Os on {{ $labels.device }} of the Domino server {{ $labels.instance }} have kept the device busy
                {{ $value | humanizeDuration }} each on average (service time, sar -d) for 15 minutes, more than {{
                with query "middleware:threshold:domino_disk_service_time_seconds" }}{{ . | first | value |
                humanizeDuration }}{{ end }}. The article measured service times of 14 ms on RAID0 and 34-35 ms on
                RAID5 for 1,800 users; with RAID5 the response time rose by 150 % (still under a second). Await,
                which adds queueing, is not what the article measured.
              |||),
              runbook_url: utils.runbook($._config, 'domino', 'MiddlewareDominoDiskServiceTimeHigh'),
              source: utils.fold(|||
                Optimizing server performance: CPU scalability, CPU scalability test results, Tables 1-2, Disk
                Service Time; What did we find out? (DOM-DISK)
              |||),
            },
          },
          // DOM-SCAN: the page scanner runs when memory is short. The threshold (150) sits above both rates the
          // article measured on healthy servers.
          {
            alert: 'MiddlewareDominoPageScanningSustained',
            expr: |||
              rate(middleware_host_page_scans_total{%(middlewareSelector)s}[5m])
                > on () group_left () middleware:threshold:domino_page_scan_rate
              and on (%(clusterPrefix)sinstance)
                (max by (%(clusterPrefix)sinstance) (middleware_process_group_processes{%(middlewareSelector)s, group="domino",process="server"}) > 0)
            ||| % $._config,
            'for': '15m',
            labels: { severity: 'warning', system: 'domino', guide_row: 'DOM-SCAN' },
            annotations: {
              summary: 'Sustained page scanning on a Domino server.',
              description: utils.fold(|||
                The kernel on the Domino server {{ $labels.instance }} has scanned {{ $value | printf "%.0f" }}
                pages/s for 15 minutes, more than {{ with query "middleware:threshold:domino_page_scan_rate" }}{{ .
                | first | value | printf "%.0f" }}{{ end }}: memory is short. The article saw 75 pages/s on RAID0
                and 100 pages/s on RAID5 with 1,800 users and found both servers healthy.
              |||),
              runbook_url: utils.runbook($._config, 'domino', 'MiddlewareDominoPageScanningSustained'),
              source: utils.fold(|||
                Optimizing server performance: CPU scalability, CPU scalability test results, Tables 1-2, Scan Rate
                (DOM-SCAN); 150 pages/s is this project's default, above both rates the article measured
              |||),
            },
          },
          // Operational: `show stat` cannot be read.
          {
            alert: 'MiddlewareDominoStatisticsUnavailable',
            expr: 'middleware_domino_source_success{%(middlewareSelector)s} == 0' % $._config,
            'for': '30m',
            labels: { severity: 'warning', system: 'domino', guide_row: 'none' },
            annotations: {
              summary: 'The exporter cannot read the Domino server statistics.',
              description: utils.fold(|||
                The Domino source {{ $labels.source }} on {{ $labels.instance }} has failed for 30 minutes (success
                = {{ $value }}): the `show stat` command failed, hung or printed no statistics, so the Domino
                statistics are missing. The error is in the exporter's /api/v1/collectors.
              |||),
              runbook_url: utils.runbook($._config, 'domino', 'MiddlewareDominoStatisticsUnavailable'),
              source: 'exporter/systems/domino/README.md (none)',
            },
          },
        ],
      },
    ],
  },
}
