// Thresholds of alerts/exporter.yml (the parameters of mixin/alerts/exporter.libsonnet).

local utils = import '../lib/utils.libsonnet';

{
  prometheusRules+:: {
    groups+: [
      {
        name: 'middleware-exporter-thresholds',
        rules: [
          // A collector run counts as slow above this share of its configured timeout (at the timeout the run
          // is abandoned and the collector fails). Not a guide figure.
          utils.threshold($._config, 'exporter_collector_slow_ratio', 'none'),
        ],
      },
    ],
  },
}
