// The middleware-exporter mixin: prometheusAlerts, prometheusRules and grafanaDashboards, configured by
// config.libsonnet. Render with `python -m tools.mixin` (writes alerts/*.yml) or any jsonnet/mixtool.
(import 'config.libsonnet') +
(import 'alerts/alerts.libsonnet') +
(import 'rules/rules.libsonnet') +
(import 'dashboards/dashboards.libsonnet')
