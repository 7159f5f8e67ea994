// Thresholds of alerts/process.yml (the parameters of mixin/alerts/process.libsonnet).

local utils = import '../lib/utils.libsonnet';

{
  prometheusRules+:: {
    groups+: [
      {
        name: 'middleware-process-thresholds',
        rules: [
          // Share of the soft open-files limit above which one process of a group is about to fail with EMFILE
          // ("Too many open files"). Not a guide figure: process-exporter's README motivates worst_fd_ratio with
          // the same case; 0.9 leaves room for a burst between two 15 s passes.
          utils.threshold($._config, 'process_fd_ratio', 'none'),
        ],
      },
    ],
  },
}
