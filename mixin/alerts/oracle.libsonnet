// Oracle alerts: availability, redo switching (ORA-REDO), the guide checks the exporter computes (HPOM-ORA,
// ORA-REDO layout, ORA-DBWR, ORA-SGA, ORA-NFS) and resource limits.
//
// The guide checks (middleware_oracle_follows_guide{check}) are evaluated by the exporter against the thresholds
// under collectors.oracle.guide (5 redo groups, 100 MB, 1.5 MB log buffer, ...); the alerts below only report
// them, with the observed value and the exporter's threshold (middleware_oracle_guide_observed / _threshold).
// Thresholds that only PromQL applies are the middleware:threshold:* rules of the first group.
// ORA-KGL: library-cache heap warnings counted from the alert log (V$DIAG_ALERT_EXT or the text file), advice.

local utils = import '../lib/utils.libsonnet';
local health = import 'oracle_health.libsonnet';

health + {
  prometheusAlerts+:: {
    groups+: [
      {
        name: 'middleware-oracle',
        rules: [
          {
            alert: 'MiddlewareOracleDown',
            expr: 'middleware_oracle_up{%(middlewareSelector)s} == 0' % $._config,
            'for': '10m',
            labels: { severity: 'critical', system: 'oracle', guide_row: 'none' },
            annotations: {
              summary: 'Oracle database unreachable.',
              description: utils.fold(|||
                The exporter on {{ $labels.instance }} has had no session to database {{ $labels.database }} for 10
                minutes (middleware_oracle_up = {{ $value }}, expected 1): the database is down, unreachable, or
                refuses the monitoring login.
              |||),
              runbook_url: utils.runbook($._config, 'oracle', 'MiddlewareOracleDown'),
              source: 'operational rule, not from the guides (none)',
            },
          },
          // The switches of the last hour are the increase of the log sequence (v$thread), a counter: unlike
          // middleware_oracle_redo_log_switches_last_hour, which compares local DATEs and counts up to two hours in
          // the hour repeated when daylight saving ends (and too few in the hour skipped in spring), it does not
          // depend on the database's clock. increase() extrapolates to the window's edges (13.2 for 13 switches), so
          // the count is rounded before it is compared; it needs an hour of samples to reach the full count.
          {
            alert: 'MiddlewareOracleRedoSwitchesHigh',
            expr: |||
              round(increase(middleware_oracle_redo_log_switches_total{%(middlewareSelector)s}[1h]))
                > on () group_left () middleware:threshold:oracle_redo_switches_per_hour
            ||| % $._config,
            'for': '30m',
            labels: { severity: 'warning', system: 'oracle', guide_row: 'ORA-REDO' },
            annotations: {
              summary: 'Oracle switches redo logs too often.',
              description: utils.fold(|||
                Thread {{ $labels.thread }} of database {{ $labels.database }} ({{ $labels.instance }}) switched
                redo logs {{ $value | printf "%.0f" }} times in the last hour, above the threshold of {{ with query
                "middleware:threshold:oracle_redo_switches_per_hour" }}{{ . | first | value | printf "%.0f" }}{{ end
                }} per hour. The redo log groups are small for the redo rate; every switch forces a checkpoint.
              |||),
              runbook_url: utils.runbook($._config, 'oracle', 'MiddlewareOracleRedoSwitchesHigh'),
              source: utils.fold(|||
                HP Operations Manager for UNIX 8.21/8.30 Performance Guide, Test: Message Storm, Interpretation;
                Test: Downloading 100,000 History Messages, Tables 26-27 and Conclusions (ORA-REDO); the guides give
                no switch-rate limit, 12 per hour is this project's default
              |||),
            },
          },
          {
            alert: 'MiddlewareOracleLogFileSwitchWaits',
            expr: |||
              rate(middleware_oracle_log_file_switch_wait_seconds_total{%(middlewareSelector)s}[5m])
                > on () group_left () middleware:threshold:oracle_log_file_switch_wait_seconds_per_second
            ||| % $._config,
            'for': '15m',
            labels: { severity: 'warning', system: 'oracle', guide_row: 'ORA-REDO' },
            annotations: {
              summary: 'Oracle sessions wait for redo log switches.',
              description: utils.fold(|||
                Sessions of database {{ $labels.database }}{{ with $labels.inst_id }} instance {{ . }}{{ end }} ({{
                $labels.instance }}) have spent {{ $value | printf "%.2f" }} s per second waiting on '{{
                $labels.event }}' for 15 minutes, above the threshold of {{
                with query "middleware:threshold:oracle_log_file_switch_wait_seconds_per_second" }}{{ . | first |
                value | printf "%.2f" }}{{ end }} s/s. Commits stall until the next redo log group can be used.
              |||),
              runbook_url: utils.runbook($._config, 'oracle', 'MiddlewareOracleLogFileSwitchWaits'),
              source: utils.fold(|||
                HP Operations Manager for UNIX 8.21/8.30 Performance Guide, Test: Message Storm, Interpretation;
                Test: Downloading 100,000 History Messages, Conclusions (ORA-REDO); the guides give no wait limit,
                0.1 s/s is this project's default
              |||),
            },
          },
          // The counter (v$system_event) catches every wait between two collections; the gauge of sessions waiting
          // now (middleware_oracle_sessions_waiting_log_file_switch) is a snapshot once a minute and would rarely
          // stay above 0 at every evaluation for 15 minutes. It is in the runbook for confirmation.
          // v$system_event counts since the instance started: the series carry inst_id, so a reconnect through a
          // RAC SCAN address to another instance starts new series (rate() sees no reset) and the old ones go stale.
          {
            alert: 'MiddlewareOracleRedoLayoutBelowGuide',
            expr: |||
              middleware_oracle_guide_observed{%(middlewareSelector)s, check=~"redo_groups_per_thread|redo_group_size"}
                and on (%(clusterPrefix)sinstance, job, database, check)
              (middleware_oracle_follows_guide{%(middlewareSelector)s, check=~"redo_groups_per_thread|redo_group_size"} == 0)
            ||| % $._config,
            'for': '1h',
            labels: { severity: 'info', system: 'oracle', guide_row: 'ORA-REDO' },
            annotations: {
              summary: "Oracle redo log groups fewer or smaller than the guide's 5 x 100 MB.",
              description: utils.fold(|||
                {{ $t := 0.0 }}{{ with printf
                "middleware_oracle_guide_threshold{instance='%s',database='%s',check='%s'}" $labels.instance
                $labels.database $labels.check | query }}{{ $t = . | first | value }}{{ end }}Database {{
                $labels.database }} ({{ $labels.instance }}): {{ if eq $labels.check "redo_group_size" }}the
                smallest redo log group is {{ $value | humanize1024 }}B, the guide asks for {{ $t | humanize1024
                }}B{{ else }}a redo thread has {{ $value | printf "%.0f" }} log groups, the guide asks for {{ $t |
                printf "%.0f" }}{{ end }}. The guide's history download ran at 37.5 msg/s with 3 groups of 20 MB and
                at 405 msg/s with 100 MB groups.
              |||),
              runbook_url: utils.runbook($._config, 'oracle', 'MiddlewareOracleRedoLayoutBelowGuide'),
              source: utils.fold(|||
                HP Operations Manager for UNIX 8.21/8.30 Performance Guide, Test: Downloading 100,000 History
                Messages, Tables 26-27 and Conclusions; RDBMS Installation, Table 6 (ORA-REDO, HPOM-ORA)
              |||),
            },
          },
          // $value is the observed figure (fewest groups of a thread, or smallest group in bytes); the threshold
          // is the one the exporter compared it with.
          {
            alert: 'MiddlewareOracleParameterBelowGuide',
            expr: |||
              middleware_oracle_guide_observed{%(middlewareSelector)s, check=~"log_buffer|hpom_.+"}
                and on (%(clusterPrefix)sinstance, job, database, check)
              (middleware_oracle_follows_guide{%(middlewareSelector)s, check=~"log_buffer|hpom_.+"} == 0)
            ||| % $._config,
            'for': '1h',
            labels: { severity: 'info', system: 'oracle', guide_row: 'HPOM-ORA' },
            annotations: {
              summary: "Oracle parameter below the HPOM guide's Table 6.",
              description: utils.fold(|||
                {{ $t := 0.0 }}{{ with printf
                "middleware_oracle_guide_threshold{instance='%s',database='%s',check='%s'}" $labels.instance
                $labels.database $labels.check | query }}{{ $t = . | first | value }}{{ end }}Database {{
                $labels.database }} ({{ $labels.instance }}): {{ if eq $labels.check "log_buffer" }}log_buffer is {{
                $value | humanize1024 }}B, the guide asks for at least {{ $t | humanize1024 }}B (1.5-2 MB; Oracle's
                default is 64 KB){{ else if eq $labels.check "hpom_sga_target" }}sga_target (memory_target when
                sga_target is 0) is {{ $value | humanize1024 }}B, the guide asks for at least {{ $t | humanize1024
                }}B (350 MB; 512 MB in its tests){{ else if eq $labels.check "hpom_processes" }}processes is {{
                $value | printf "%.0f" }}, the guide asks for at least {{ $t | printf "%.0f" }} (200-500){{ else if
                eq $labels.check "hpom_multiblock_read_count" }}db_file_multiblock_read_count is {{ $value | printf
                "%.0f" }}, the guide asks for {{ $t | printf "%.0f" }}{{ else }}check {{ $labels.check }} observed
                {{ $value }}, threshold {{ $t }}{{ end }}.
              |||),
              runbook_url: utils.runbook($._config, 'oracle', 'MiddlewareOracleParameterBelowGuide'),
              source: utils.fold(|||
                HP Operations Manager for UNIX 8.21/8.30 Performance Guide, RDBMS Installation, Table 6 (HPOM-ORA)
              |||),
            },
          },
          // HPOM-ORA: log_buffer (checked on every database) and the hpom_* checks (databases with hpom: true).
          {
            alert: 'MiddlewareOracleDbWriterProcessesBelowCores',
            expr: |||
              middleware_oracle_guide_observed{%(middlewareSelector)s, check="db_writer_processes"}
                and on (%(clusterPrefix)sinstance, job, database, check)
              (middleware_oracle_follows_guide{%(middlewareSelector)s, check="db_writer_processes"} == 0)
            ||| % $._config,
            'for': '1h',
            labels: { severity: 'info', system: 'oracle', guide_row: 'ORA-DBWR' },
            annotations: {
              summary: 'Fewer Oracle database writer processes than CPU cores.',
              description: utils.fold(|||
                Database {{ $labels.database }} ({{ $labels.instance }}) runs {{ $value | printf "%.0f" }} database
                writer process(es) (db_writer_processes) on a host with {{ with printf
                "middleware_oracle_guide_threshold{instance='%s',database='%s',check='%s'}" $labels.instance
                $labels.database $labels.check | query }}{{ . | first | value | printf "%.0f" }}{{ end }} CPU cores;
                the NFS report recommends at least one per core.
              |||),
              runbook_url: utils.runbook($._config, 'oracle', 'MiddlewareOracleDbWriterProcessesBelowCores'),
              source: 'Oracle 10g on HP-UX and IBM System Storage N series, Oracle tuning (ORA-DBWR)',
            },
          },
          {
            alert: 'MiddlewareOracleSgaShareOutsideGuide',
            expr: |||
              middleware_oracle_guide_observed{%(middlewareSelector)s, check="sga_share_of_memory"}
                and on (%(clusterPrefix)sinstance, job, database, check)
              (middleware_oracle_follows_guide{%(middlewareSelector)s, check="sga_share_of_memory"} == 0)
            ||| % $._config,
            'for': '1h',
            labels: { severity: 'info', system: 'oracle', guide_row: 'ORA-SGA' },
            annotations: {
              summary: 'Oracle SGA outside 50-70 % of the memory of a dedicated host.',
              description: utils.fold(|||
                The SGA of database {{ $labels.database }} ({{ $labels.instance }}) is {{ $value |
                humanizePercentage }} of the host's memory, outside the band the NFS report advises for a host that
                runs only Oracle (from {{ with printf
                "middleware_oracle_guide_threshold{instance='%s',database='%s',check='%s'}" $labels.instance
                $labels.database $labels.check | query }}{{ . | first | value | humanizePercentage }}{{ end }}; the
                report says about 50-70 %).
              |||),
              runbook_url: utils.runbook($._config, 'oracle', 'MiddlewareOracleSgaShareOutsideGuide'),
              source: 'Oracle 10g on HP-UX and IBM System Storage N series, Oracle tuning (ORA-SGA)',
            },
          },
          // Checked only for databases configured with dedicated_host: true. The exporter exports the lower end
          // of the band as the threshold; the upper end is collectors.oracle.guide.sga_share_max (default 0.7).
          {
            alert: 'MiddlewareOracleNfsMountNotAsRecommended',
            expr: 'middleware_oracle_nfs_mount_follows_guide{%(middlewareSelector)s} == 0' % $._config,
            'for': '1h',
            labels: { severity: 'info', system: 'oracle', guide_row: 'ORA-NFS' },
            annotations: {
              summary: 'NFS mount of Oracle files lacks an option the NFS report recommends.',
              description: utils.fold(|||
                The NFS mount {{ $labels.mountpoint }} holding files of database {{ $labels.database }} ({{
                $labels.instance }}) does not follow the report on {{ $labels.option }} (check value {{ $value }},
                expected 1); recommended: {{ if eq $labels.option "hard" }}hard (with nointr), never soft{{ else if
                eq $labels.option "proto_tcp" }}proto=tcp{{ else if eq $labels.option "vers" }}vers=3{{ else if eq
                $labels.option "rsize" }}rsize=32768 or larger{{ else if eq $labels.option "wsize" }}wsize=32768 or
                larger{{ else if eq $labels.option "timeo" }}timeo=600{{ else if eq $labels.option "direct_io"
                }}direct I/O (forcedirectio, or filesystemio_options=setall or directio){{ else }}see the runbook{{
                end }}.{{ with printf
                "middleware_oracle_file_system_info{instance='%s',database='%s',mountpoint='%s'}" $labels.instance
                $labels.database $labels.mountpoint | query }} Mounted with: {{ . | first | label "options" }}.{{
                end }}
              |||),
              runbook_url: utils.runbook($._config, 'oracle', 'MiddlewareOracleNfsMountNotAsRecommended'),
              source: utils.fold(|||
                Oracle 10g on HP-UX and IBM System Storage N series, HP-UX NFS configuration, The forcedirectio
                mount option; Oracle performance over NFS (ORA-NFS)
              |||),
            },
          },
          {
            alert: 'MiddlewareOracleResourceNearLimit',
            expr: |||
              middleware_oracle_resource_current_utilization{%(middlewareSelector)s} / middleware_oracle_resource_limit{%(middlewareSelector)s}
                > on () group_left () middleware:threshold:oracle_resource_utilization_ratio
            ||| % $._config,
            'for': '15m',
            labels: { severity: 'warning', system: 'oracle', guide_row: 'none' },
            annotations: {
              summary: 'Oracle processes or sessions close to their limit.',
              description: utils.fold(|||
                Database {{ $labels.database }}{{ with $labels.inst_id }} instance {{ . }}{{ end }} ({{
                $labels.instance }}) uses {{ $value | humanizePercentage }} of its {{ $labels.resource }} limit {{-
                with printf
                "middleware_oracle_resource_limit{instance='%s',database='%s',inst_id='%s',resource='%s'}"
                $labels.instance $labels.database $labels.inst_id $labels.resource | query }} of {{ . | first |
                value | printf "%.0f" }}{{ end }},
                above the threshold of {{ with query "middleware:threshold:oracle_resource_utilization_ratio" }}{{ .
                | first | value | humanizePercentage }}{{ end }}. At the limit new connections fail (ORA-00020 for
                processes, ORA-00018 for sessions).
              |||),
              runbook_url: utils.runbook($._config, 'oracle', 'MiddlewareOracleResourceNearLimit'),
              source: 'operational rule, not from the guides (none); HPOM-ORA asks for processes 200-500',
            },
          },
          // ORA-KGL: the counter starts at 0 with the exporter and resets when it restarts, which increase() handles;
          // increase() extrapolates to the window's edges and gives e.g. 1.0007 for one warning, so the count is
          // rounded before it is compared. A day's window with for: 1h (advice): a burst fires an hour after it and
          // clears a day later; one warning a day never fires.
          {
            alert: 'MiddlewareOracleKglHeapWarnings',
            expr: |||
              round(increase(middleware_oracle_kgl_heap_warnings_total{%(middlewareSelector)s}[1d]))
                > on () group_left () middleware:threshold:oracle_kgl_heap_warnings_per_day
            ||| % $._config,
            'for': '1h',
            labels: { severity: 'info', system: 'oracle', guide_row: 'ORA-KGL' },
            annotations: {
              summary: 'Oracle keeps logging library-cache heap warnings.',
              description: utils.fold(|||
                Database {{ $labels.database }} ({{ $labels.instance }}) logged {{ $value | printf "%.0f" }} "Heap
                size ... exceeds notification threshold" warnings in its alert log in the last 24 hours, more than
                {{ with query "middleware:threshold:oracle_kgl_heap_warnings_per_day" }}{{ . | first | value |
                printf "%.0f" }}{{ end }}. {{- with printf
                "middleware_oracle_kgl_heap_warning_logged_threshold_bytes{instance='%s',database='%s'}"
                $labels.instance $labels.database | query }} The latest names a threshold of {{ . | first | value |
                humanize1024 }}B.{{ end }} {{- with printf
                "middleware_oracle_kgl_heap_warning_max_heap_bytes{instance='%s',database='%s'}" $labels.instance
                $labels.database | query }} The largest heap was {{ . | first | value | humanize1024 }}B.{{ end }}
                The warnings are harmless by themselves; the NFS report raised _kgl_large_heap_warning_threshold (50
                MB, the default from 10.2.0.2).
              |||),
              runbook_url: utils.runbook($._config, 'oracle', 'MiddlewareOracleKglHeapWarnings'),
              source: utils.fold(|||
                Oracle 10g on HP-UX and IBM System Storage N series, Oracle tuning (ORA-KGL); more than one warning
                a day is this project's reading of the report's "multiple times"
              |||),
            },
          },
        ] + $._oracleHealthAlerts,
      },
    ],
  },
}
