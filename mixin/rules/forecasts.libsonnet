// Generated from exporter/advisor/forecasts.py and tables.py by `python -m exporter.advisor.forecasts`; do not edit.
// The forecasts of docs/forecasts.md: the documents' measured curves applied to the live series.
// The mixin fills in the selectors (mixin/config.libsonnet) and writes alerts/forecasts.yml.

{
  prometheusRules+:: {
    groups+: [
      {
        name: 'middleware-forecasts',
        rules: [
          {
            record: 'middleware:forecast:hpom_msgmgrq_time_to_empty_seconds',
            expr: |||
              (
                middleware_hpom_queue_entries{%(middlewareSelector)s, queue="msgmgrq"}
                / (-deriv(middleware_hpom_queue_entries{%(middlewareSelector)s, queue="msgmgrq"}[10m]) > 0)
              )
              or
              (
                middleware_hpom_queue_size_bytes{%(middlewareSelector)s, queue="msgmgrq"}
                / (-deriv(middleware_hpom_queue_size_bytes{%(middlewareSelector)s, queue="msgmgrq"}[10m]) > 0)
              )
            ||| % $._config,
            labels: { guide_row: 'HPOM-QUEUE' },
          },
          {
            record: 'middleware:forecast:hpom_msgmgrq_time_to_empty_recovery_ratio',
            expr: |||
              middleware:forecast:hpom_msgmgrq_time_to_empty_seconds{%(middlewareSelector)s}
                / on () group_left () middleware:threshold:hpom_queue_recovery_seconds
            ||| % $._config,
            labels: { guide_row: 'HPOM-QUEUE' },
          },
          {
            record: 'middleware:forecast:hpom_mom_ack_sync_eta_seconds',
            expr: |||
              (0
                + 0.012 * clamp(middleware_hpom_forwarded_window_acknowledged_messages{%(middlewareSelector)s} - 0, 0, 1000)
                + 0.009370000000000002 * clamp(middleware_hpom_forwarded_window_acknowledged_messages{%(middlewareSelector)s} - 1000, 0, 1000)
                + 0.00997 * clamp(middleware_hpom_forwarded_window_acknowledged_messages{%(middlewareSelector)s} - 2000, 0, 1000)
                + 0.007199999999999999 * clamp(middleware_hpom_forwarded_window_acknowledged_messages{%(middlewareSelector)s} - 3000, 0, 1000)
                + 0.012 * clamp_min(middleware_hpom_forwarded_window_acknowledged_messages{%(middlewareSelector)s} - 4000, 0))
            ||| % $._config,
            labels: { guide_row: 'HPOM-MOM' },
          },
          {
            record: 'middleware:forecast:hpom_java_gui_startup_seconds',
            expr: |||
              (
                (6.609
                + 0.00020117777777777779 * clamp(sum without (severity) (middleware_hpom_active_messages{%(middlewareSelector)s}) - 5000, 0, 45000))
                * (1 - clamp(middleware_hpom_managed_nodes{%(middlewareSelector)s} - 500, 0, 1500) / 1500)
                + (7.413
                + 0.0009574444444444444 * clamp(sum without (severity) (middleware_hpom_active_messages{%(middlewareSelector)s}) - 5000, 0, 45000))
                * clamp(middleware_hpom_managed_nodes{%(middlewareSelector)s} - 500, 0, 1500) / 1500
                or
                (7.413
                + 0.0009574444444444444 * clamp(sum without (severity) (middleware_hpom_active_messages{%(middlewareSelector)s}) - 5000, 0, 45000))
              )
              *
              (
                (1
                + 0.05592232689629024 * clamp(clamp_min(middleware_hpom_cma_max_per_message{%(middlewareSelector)s}, 1) - 1, 0, 9)
                + 0.0570654995920184 * clamp(clamp_min(middleware_hpom_cma_max_per_message{%(middlewareSelector)s}, 1) - 10, 0, 40))
                or (sum without (severity) (middleware_hpom_active_messages{%(middlewareSelector)s}) * 0 + 1)
              )
            ||| % $._config,
            labels: { guide_row: 'HPOM-ACTIVE' },
          },
          {
            record: 'middleware:forecast:hpom_throughput_ceiling_messages_per_second',
            expr: |||
              (212.8
                - 2.2777777777777777 * clamp(clamp_min(middleware_hpom_cma_max_per_message{%(middlewareSelector)s}, 1) - 1, 0, 9)
                - 1.9975 * clamp(clamp_min(middleware_hpom_cma_max_per_message{%(middlewareSelector)s}, 1) - 10, 0, 40))
            ||| % $._config,
            labels: { guide_row: 'HPOM-CMA' },
          },
          {
            record: 'middleware:forecast:hpom_throughput_ceiling_usage_ratio',
            expr: |||
              middleware_hpom_window_received_messages{%(middlewareSelector)s} / middleware_hpom_window_seconds{%(middlewareSelector)s}
                / ignoring (guide_row) middleware:forecast:hpom_throughput_ceiling_messages_per_second{%(middlewareSelector)s}
            ||| % $._config,
            labels: { guide_row: 'HPOM-THROUGHPUT' },
          },
          {
            record: 'middleware:forecast:vhi_session_headroom_per_cpu',
            expr: |||
              -(middleware_vhi_sessions_per_cpu{%(middlewareSelector)s}
                - on () group_left () middleware:threshold:vhi_sessions_per_cpu)
            ||| % $._config,
            labels: { guide_row: 'VHI-SESS' },
          },
          {
            record: 'middleware:forecast:vhi_cpu_doubling_gain_ratio',
            expr: |||
              (0.75
                - 0.37 * clamp(middleware_vhi_session_server_cpus{%(middlewareSelector)s} - 1, 0, 1)
                - 0.12 * clamp(middleware_vhi_session_server_cpus{%(middlewareSelector)s} - 2, 0, 2))
            ||| % $._config,
            labels: { guide_row: 'VHI-CPU' },
          },
          {
            record: 'middleware:forecast:ibmmq_added_qmgr_throughput_gain_ratio',
            expr: |||
              (-0.01801949393803426
                + 0.4206634051450682 * clamp(instance:middleware_host_cpu_idle:ratio5m{%(hostSelector)s} - 0.01, 0, 0.060000000000000005)
                + 0.6408461795681014 * clamp(instance:middleware_host_cpu_idle:ratio5m{%(hostSelector)s} - 0.07, 0, 0.13999999999999999)
                + 0.7578334364048661 * clamp(instance:middleware_host_cpu_idle:ratio5m{%(hostSelector)s} - 0.21, 0, 0.12000000000000002)
                + 0.365418894830659 * clamp(instance:middleware_host_cpu_idle:ratio5m{%(hostSelector)s} - 0.33, 0, 0.16999999999999998)
                + 1.4244186046511633 * clamp(instance:middleware_host_cpu_idle:ratio5m{%(hostSelector)s} - 0.5, 0, 0.19999999999999996))
              and on (%(clusterPrefix)sinstance) (ibmmq_qmgr_status{%(middlewareSelector)s} == 2)
            ||| % $._config,
            labels: { guide_row: 'MQ-CPU' },
          },
        ],
      },
    ],
  },
}
