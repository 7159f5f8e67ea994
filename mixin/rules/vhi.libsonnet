// Thresholds of alerts/vhi.yml (the parameters of mixin/alerts/vhi.libsonnet).

local utils = import '../lib/utils.libsonnet';

{
  prometheusRules+:: {
    groups+: [
      {
        name: 'middleware-vhi-thresholds',
        rules: [
          // Concurrent host sessions per CPU: "The recommended maximum limit is 250 concurrent host sessions per
          // single-CPU session server" (Verastream Host Integrator Server Performance (Technical Note 10087),
          // Concurrent Sessions). The per-CPU reading is this project's extrapolation (see docs/sources.md). The
          // exporter also exports its configured limit as middleware_vhi_sessions_per_cpu_limit (dashboards); the
          // alert uses this rule.
          utils.threshold($._config, 'vhi_sessions_per_cpu', 'VHI-SESS'),
          // Physical cores the session server should use at most: "More than 4 physical cores (two Dual Core) is
          // not recommended" (Verastream Host Integrator Server Performance (Technical Note 10087), Processors and
          // Performance).
          utils.threshold($._config, 'vhi_max_cpu_cores', 'VHI-CPU'),
        ],
      },
    ],
  },
}
