// middleware-exporter itself: alert rules.
//
// Operational rules (guide_row none): the exporter is not scraped, a collector fails, or a collector takes
// nearly its whole timeout. Metrics: `up` (Prometheus) and the `exporter` self-metrics
// (middleware_scrape_collector_*; docs/architecture.md, docs/metrics.md).
// Runbooks: docs/runbooks/exporter.md. Unit tests: tests/rules/exporter.test.yml.

local utils = import '../lib/utils.libsonnet';

{
  prometheusAlerts+:: {
    groups+: [
      {
        name: 'middleware-exporter',
        rules: [
          // The job selector (config middlewareSelector, in every rule) must match the job name of the scrape
          // configuration that scrapes the exporters (job="middleware" in the project's examples,
          // "middleware-exporter" from the Helm chart; by default any job whose name starts with "middleware").
          // Set middlewareSelector when the exporters are scraped under another job name, or no alert fires.
          // The alert keeps `instance`: Alertmanager's example configuration (alerts/alertmanager.yml) inhibits
          // every other alert of the same instance while this one fires.
          {
            alert: 'MiddlewareExporterDown',
            expr: 'up{%(middlewareSelector)s} == 0' % $._config,
            'for': '5m',
            labels: { severity: 'critical', system: 'exporter', guide_row: 'none' },
            annotations: {
              summary: 'Prometheus cannot scrape a middleware-exporter.',
              description: utils.fold(|||
                Prometheus has not been able to scrape {{ $labels.instance }} (job {{ $labels.job }}) for 5 minutes
                (up = {{ $value }}). No HPOM, Oracle, IBM MQ, VHI, Domino or host figures arrive from it, so none of
                their alerts can fire.
              |||),
              runbook_url: utils.runbook($._config, 'exporter', 'MiddlewareExporterDown'),
              source: 'docs/architecture.md, Endpoints and How collection works (none)',
            },
          },
          // A collector whose success is 0 because a target is down is MiddlewareExporterTargetDown's (one alert per
          // outage): this one is about the collector itself (its runs fail), a collector without targets, or a
          // degraded one (a source failed, its targets up: that source's figures are missing, so a ticket).
          {
            alert: 'MiddlewareExporterCollectorFailing',
            expr: |||
              middleware_scrape_collector_success{%(middlewareSelector)s} == 0
                unless on (%(clusterPrefix)sjob, instance, collector)
                  (middleware_target_up{%(middlewareSelector)s} == 0)
            ||| % $._config,
            'for': '15m',
            labels: { severity: 'warning', system: 'exporter', guide_row: 'none' },
            annotations: {
              summary: 'A middleware-exporter collector is failing.',
              description: utils.fold(|||
                The {{ $labels.collector }} collector on {{ $labels.instance }} has not worked for 15 minutes
                (success = {{ $value }}): its runs failed (an error, a timeout or invalid samples: its metrics are
                left out of /metrics) or are degraded (a source failed: that source's figures are missing). Which
                sources and why: last_error on the exporter's status page (/) and in /api/v1/collectors.
              |||),
              runbook_url: utils.runbook($._config, 'exporter', 'MiddlewareExporterCollectorFailing'),
              source: 'docs/architecture.md, How collection works, self-metrics (none)',
            },
          },
          // The one up/down alert of every system's targets (a database, a queue manager, an HPOM server, a Domino
          // console, a host of the text back-end; exporter/core/targets.py): the share of the last 10 minutes the
          // target was up.  A restart of a few minutes stays silent, a steady outage tickets after about 10
          // minutes, and a target that flaps but is down more often than up fires too.
          {
            alert: 'MiddlewareExporterTargetDown',
            expr: 'avg_over_time(middleware_target_up{%(middlewareSelector)s}[10m]) < 0.5' % $._config,
            'for': '5m',
            labels: { severity: 'warning', system: 'exporter', guide_row: 'none' },
            annotations: {
              summary: 'A monitored target cannot be read.',
              description: utils.fold(|||
                The {{ $labels.collector }} collector on {{ $labels.instance }} could not read its target {{
                $labels.target }} for more than half of the last 10 minutes, for 5 minutes (up {{ $value |
                humanizePercentage }} of the time, threshold 50 %). Its figures are missing, so the alerts built on
                them cannot fire. The error, and the source that failed, are on the exporter's status page (/)
                and in /api/v1/collectors.
              |||),
              runbook_url: utils.runbook($._config, 'exporter', 'MiddlewareExporterTargetDown'),
              source: 'docs/architecture.md, Targets (none)',
            },
          },
          // $value is the last run's duration; the threshold is a share of the collector's own timeout.
          {
            alert: 'MiddlewareExporterCollectorSlow',
            expr: |||
              middleware_scrape_collector_duration_seconds{%(middlewareSelector)s}
                > middleware_scrape_collector_timeout_seconds{%(middlewareSelector)s}
                  * on () group_left () middleware:threshold:exporter_collector_slow_ratio
            ||| % $._config,
            'for': '15m',
            labels: { severity: 'warning', system: 'exporter', guide_row: 'none' },
            annotations: {
              summary: 'A middleware-exporter collector is nearly slower than its timeout.',
              description: utils.fold(|||
                The {{ $labels.collector }} collector on {{ $labels.instance }} has taken {{ $value |
                humanizeDuration }} per run for 15 minutes, more than {{ with query
                "middleware:threshold:exporter_collector_slow_ratio" }}{{ . | first | value | humanizePercentage
                }}{{ end }} of its {{ with printf
                "middleware_scrape_collector_timeout_seconds{instance=%q,collector=%q}" $labels.instance
                $labels.collector | query }}{{ . | first | value | humanizeDuration }}{{ end }} timeout: a little
                more and its runs fail and its metrics disappear.
              |||),
              runbook_url: utils.runbook($._config, 'exporter', 'MiddlewareExporterCollectorSlow'),
              source: 'docs/architecture.md, How collection works, self-metrics (none)',
            },
          },
          // The inventory of the estate (docs/estate.md): a broken new version of the file keeps the last good one
          // served, as Prometheus keeps its configuration when a reload fails; like Prometheus' own config-reload
          // alert, a ticket once it has stayed broken: targets added or removed since are not probed as written.
          // A broken file at start is not this alert's: the exporter does not start (MiddlewareExporterDown).
          {
            alert: 'MiddlewareExporterInventoryReloadFailed',
            expr: 'middleware_inventory_last_reload_successful{%(middlewareSelector)s} == 0' % $._config,
            'for': '10m',
            labels: { severity: 'warning', system: 'exporter', guide_row: 'none' },
            annotations: {
              summary: "A middleware-exporter's inventory file cannot be read.",
              description: utils.fold(|||
                The inventory file of {{ $labels.instance }} (job {{ $labels.job }}) has changed and could not be
                read for 10 minutes: the exporter still serves its last good version ({{ with printf
                "middleware_inventory_targets{instance=%q,job=%q}" $labels.instance $labels.job | query }}{{ . |
                first | value }}{{ end }} targets at /sd and /probe), so the targets added or removed since are
                not. The error, naming the group and the value, is in /api/v1/inventory and the exporter's log.
              |||),
              runbook_url: utils.runbook($._config, 'exporter', 'MiddlewareExporterInventoryReloadFailed'),
              source: 'docs/estate.md, The inventory file (none)',
            },
          },
        ],
      },
    ],
  },
}
