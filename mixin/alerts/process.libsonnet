// Process groups (every system): alert rules.
//
// Operational rules (guide_row none) on the `process` collector's series (exporter/systems/process/README.md):
// a group whose processes have all gone, and a process near its open-files limit. Runbooks:
// docs/runbooks/process.md. Unit tests: tests/rules/process.test.yml.

local utils = import '../lib/utils.libsonnet';

{
  prometheusAlerts+:: {
    groups+: [
      {
        name: 'middleware-process',
        rules: [
          // Every built-in group reports 0 on every host (a Domino host has hpom_* groups at 0), so "0" alone
          // cannot mean "missing": a group is expected where it had a process within processGroupMissingLookback.
          // Interactive sessions that go to 0 at night are left out (processGroupMissingSelector).
          {
            alert: 'MiddlewareProcessGroupMissing',
            expr: |||
              sum by (%(clusterPrefix)sinstance, job, group) (
                middleware_process_group_processes{%(middlewareSelector)s, %(processGroupMissingSelector)s}) == 0
              and on (%(clusterPrefix)sinstance, job, group)
                sum by (%(clusterPrefix)sinstance, job, group) (
                  max_over_time(middleware_process_group_processes{%(middlewareSelector)s, %(processGroupMissingSelector)s}[%(processGroupMissingLookback)s])) > 0
            ||| % $._config,
            'for': '5m',
            labels: { severity: 'critical', system: 'process', guide_row: 'none' },
            annotations: {
              summary: 'Every process of a middleware process group has gone.',
              description: utils.fold(|||
                The process group {{ $labels.group }} on {{ $labels.instance }} has had {{ $value }} processes for
                5 minutes, after it had processes within the last %(processGroupMissingLookback)s: the middleware
                it stands for is down or was stopped.
              ||| % $._config),
              runbook_url: utils.runbook($._config, 'process', 'MiddlewareProcessGroupMissing'),
              source: 'exporter/systems/process/README.md, process groups (none)',
            },
          },
          {
            alert: 'MiddlewareProcessGroupFdsNearLimit',
            expr: |||
              middleware_process_group_worst_fd_ratio{%(middlewareSelector)s}
                > on () group_left () middleware:threshold:process_fd_ratio
            ||| % $._config,
            'for': '15m',
            labels: { severity: 'warning', system: 'process', guide_row: 'none' },
            annotations: {
              summary: 'A middleware process is near its open-files limit.',
              description: utils.fold(|||
                A process of the group {{ $labels.group }} ({{ $labels.process }}) on {{ $labels.instance }} has
                used {{ $value | humanizePercentage }} of its soft open-files limit for 15 minutes (threshold {{
                with query "middleware:threshold:process_fd_ratio" }}{{ . | first | value | humanizePercentage
                }}{{ end }}): at the limit its next open() or accept() fails with "Too many open files".
              |||),
              runbook_url: utils.runbook($._config, 'process', 'MiddlewareProcessGroupFdsNearLimit'),
              source: 'exporter/systems/process/README.md, file descriptors (none)',
            },
          },
        ],
      },
    ],
  },
}
