// Thresholds of alerts/oracle.yml (the parameters of mixin/alerts/oracle.libsonnet).

local utils = import '../lib/utils.libsonnet';

{
  prometheusRules+:: {
    groups+: [
      {
        name: 'middleware-oracle-thresholds',
        rules: [
          // Redo log switches per hour per thread. The guides give no number: the HPOM guide only says switches
          // cause throughput dips and that more and bigger redo logs (5 x 100 MB) speed history download up
          // dramatically. 12 per hour (one every 5 minutes) is this project's default.
          utils.threshold($._config, 'oracle_redo_switches_per_hour', 'ORA-REDO'),
          // Seconds spent waiting on 'log file switch%' events per second of wall time (= average sessions waiting),
          // per event. No guide number; 0.1 (6 s of waiting per minute) is this project's default.
          utils.threshold($._config, 'oracle_log_file_switch_wait_seconds_per_second', 'ORA-REDO'),
          // Library-cache heap warnings ("Heap size ... exceeds notification threshold") a database may log in a day
          // before the advice appears. The NFS report saw them "multiple times" and raised
          // _kgl_large_heap_warning_threshold; one warning a day (e.g. while a large package compiles) stays silent,
          // more than one is advice. 1 is this project's reading of "multiple times", not a report figure.
          utils.threshold($._config, 'oracle_kgl_heap_warnings_per_day', 'ORA-KGL'),
          // Share of the processes / sessions limit in use (operational).
          utils.threshold($._config, 'oracle_resource_utilization_ratio', 'none'),
        ] + [
          // Oracle health (issue 29): this project's defaults, readings in mixin/alerts/oracle_health.libsonnet.
          utils.threshold($._config, name, 'none')
          for name in [
            'oracle_tablespace_filling_up_warning_ratio',
            'oracle_tablespace_filling_up_critical_ratio',
            'oracle_tablespace_almost_full_ratio',
            'oracle_fra_used_warning_ratio',
            'oracle_fra_used_critical_ratio',
            'oracle_backup_db_full_max_age_seconds',
            'oracle_backup_db_incr_max_age_seconds',
            'oracle_backup_archivelog_max_age_seconds',
            'oracle_dataguard_transport_lag_seconds',
            'oracle_dataguard_apply_lag_seconds',
            'oracle_asm_usable_ratio',
            'oracle_internal_errors_per_15m',
            // issue 39
            'oracle_dataguard_datum_age_warning_seconds',
            'oracle_dataguard_datum_age_critical_seconds',
            'oracle_backup_level0_max_age_seconds',
            'oracle_temp_used_ratio',
            'oracle_undo_active_ratio',
          ]
        ],
      },
    ],
  },
}
