// Configuration of the middleware-exporter mixin (alerts, recording rules and dashboards).
// Override any field with `(import 'mixin.libsonnet') + { _config+:: { ... } }`; mixin/README.md lists them.
{
  _config+:: {
    // Label matcher(s) that select the middleware-exporter's series. The default matches both scrape jobs the
    // project documents: `job="middleware"` (examples/prometheus.yml, README) and `job="middleware-exporter"`
    // (the Helm chart's ServiceMonitor takes the job from app.kubernetes.io/name). It keeps out the series of
    // IBM's own MQ exporter (same `ibmmq_*` names) scraped under another job. Narrow it to one job where
    // other jobs start with "middleware".
    middlewareSelector: 'job=~"middleware.*"',

    // Where the host figures come from: 'middleware' (the exporter's host collector, middleware_host_*) or
    // 'node_exporter' (node_exporter's node_* series, selected with nodeExporterSelector). The host rules render
    // into alerts/variants/node_exporter/ for the second; see mixin/README.md for what it cannot cover.
    hostMetricsSource: 'middleware',
    nodeExporterSelector: 'job="node-exporter"',

    // Multi-cluster: with showMultiCluster the rules keep `clusterLabel` in every `by`/`on` list and the
    // dashboards get a cluster variable.
    clusterLabel: 'cluster',
    showMultiCluster: false,

    // Runbook link of every alert. Fields: %(system)s (hpom, oracle, ibmmq, host, vhi, domino, exporter),
    // %(alert)s (the alert name in lower case: the anchor of its `## AlertName` section), %(alertname)s.
    runbookURLPattern: 'https://github.com/middleware-exporter/middleware-exporter/blob/main/docs/runbooks/%(system)s.md#%(alert)s',

    // The `middleware:threshold:<name>` recording rules: name -> value. The sources and readings are in the
    // comments of mixin/alerts/<system>.libsonnet and the table of alerts/README.md.
    thresholds: {
      // certificates: days before notAfter (seconds)
      certificate_expiry_warning_seconds: 14 * 86400,
      certificate_expiry_critical_seconds: 3 * 86400,
      // domino
      domino_disk_service_time_seconds: 0.035,
      domino_disk_min_iops: 1,
      domino_page_scan_rate: 150,
      domino_reference_cpus_per_1000_users: 1.13,
      domino_per_user_cpu_min_users: 100,
      // exporter
      exporter_collector_slow_ratio: 0.9,
      // host
      host_cpu_idle_ratio: 0.1,
      host_iowait_ratio: 0.2,
      host_disk_util_ratio: 0.9,
      host_swap_used_ratio: 0.9,
      // filesystem (node-mixin's figures, as ratios of the size / of the file nodes) and NFS
      filesystem_space_filling_up_warning_ratio: 0.40,
      filesystem_space_filling_up_critical_ratio: 0.20,
      filesystem_space_available_warning_ratio: 0.05,
      filesystem_space_available_critical_ratio: 0.03,
      filesystem_files_filling_up_warning_ratio: 0.40,
      filesystem_files_filling_up_critical_ratio: 0.20,
      filesystem_files_available_warning_ratio: 0.05,
      filesystem_files_available_critical_ratio: 0.03,
      nfs_retransmission_ratio: 0.05,
      nfs_min_request_rate: 0.2,
      nfs_response_time_seconds: 0.05,
      // hpom
      hpom_ack_bulk: 5000,
      hpom_cma_per_message: 10,
      hpom_active_messages: 50000,
      hpom_queue_recovery_seconds: 412,
      hpom_queue_min_bytes: 1048576,
      hpom_gui_idle_ratio: 0.10,
      hpom_gui_busy_share: 0.5,
      hpom_mem_base_mib: 512,
      hpom_mem_per_motif_mib: 35,
      hpom_mem_per_java_mib: 128,
      hpom_swap_base_mib: 512,
      hpom_swap_per_motif_mib: 12,
      hpom_swap_per_java_mib: 64,
      hpom_msi_programs: 5,
      hpom_messages_without_key_ratio: 0.5,
      hpom_service_tree_depth: 5,
      hpom_mom_ack_sync_seconds_per_1000: 12,
      hpom_mom_source_rate_without_forwarding: 227,
      hpom_mom_source_rate_with_forwarding: 120,
      hpom_reference_rate_810_parisc: 120,
      hpom_reference_rate_821_ia64: 333,
      hpom_reference_rate_830_ia64: 226,
      hpom_reference_rate_storm_average: 272,
      hpom_history_download_rate_tuned: 400,
      hpom_history_download_rate_small_redo: 37.5,
      // ibmmq
      mq_cpu_idle_ratio: 0.1,
      mq_throughput_fall_ratio: 0.25,
      mq_queue_depth_ratio: 0.8,
      mq_queue_working_depth: 100,
      // issue 28: channel, queue and queue-manager health (this project's defaults, docs/runbooks/ibmmq.md)
      mq_channel_instances_ratio: 0.8,
      mq_queue_oldest_message_age_seconds: 3600,
      mq_queue_file_ratio: 0.8,
      mq_log_in_use_percent: 80,
      // issue 39: the recovery log's file system (DISK/Log publications)
      mq_log_file_system_warning_ratio: 0.85,
      mq_log_file_system_critical_ratio: 0.95,
      // oracle
      oracle_redo_switches_per_hour: 12,
      oracle_log_file_switch_wait_seconds_per_second: 0.1,
      oracle_kgl_heap_warnings_per_day: 1,
      oracle_resource_utilization_ratio: 0.9,
      // issue 29: Oracle health (this project's defaults; readings in mixin/alerts/oracle_health.libsonnet and
      // docs/runbooks/oracle.md). Tablespace ratios are of the autoextend maximum (node-mixin's 40 %/20 % free).
      oracle_tablespace_filling_up_warning_ratio: 0.6,
      oracle_tablespace_filling_up_critical_ratio: 0.8,
      oracle_tablespace_almost_full_ratio: 0.98,
      oracle_fra_used_warning_ratio: 0.85,
      oracle_fra_used_critical_ratio: 0.95,
      // Allowed age of the last successful RMAN backup per input_type: weekly full, daily incremental (level 0
      // and 1 are both DB INCR), archived logs at least twice a day; a day's run may be 2 hours late.
      oracle_backup_db_full_max_age_seconds: 8 * 86400,
      oracle_backup_db_incr_max_age_seconds: 26 * 3600,
      oracle_backup_archivelog_max_age_seconds: 14 * 3600,
      oracle_dataguard_transport_lag_seconds: 300,
      oracle_dataguard_apply_lag_seconds: 900,
      oracle_asm_usable_ratio: 0.1,
      oracle_internal_errors_per_15m: 3,
      // issue 39. Seconds since the standby last received data from its source (V$DATAGUARD_STATS.DATUM_TIME):
      // the primary sends redo, or a heartbeat when idle, every few seconds.
      oracle_dataguard_datum_age_warning_seconds: 600,
      oracle_dataguard_datum_age_critical_seconds: 3600,
      // The base of the incrementals: a weekly level 0, a day late allowed.
      oracle_backup_level0_max_age_seconds: 8 * 86400,
      // TEMP in use by sessions (allocated-but-free extents not counted) and UNDO held by running transactions
      // (ACTIVE extents), each of the autoextend maximum.
      oracle_temp_used_ratio: 0.9,
      oracle_undo_active_ratio: 0.8,
      // process
      process_fd_ratio: 0.9,
      // vhi
      vhi_sessions_per_cpu: 250,
      vhi_max_cpu_cores: 4,
    },

    // MiddlewareProcessGroupMissing: a group counts as expected on a host when it had a process within this window,
    // and groups matched by processGroupMissingSelector (interactive sessions that come and go) are left out.
    processGroupMissingLookback: '1d',
    processGroupMissingSelector: 'group!~"hpom_java_gui|hpom_motif_gui"',

    // File-system alerts (node-mixin's fsSelector / fsMountpointSelector and windows): the mounts they watch (also
    // of node_exporter's node_filesystem_* with hostMetricsSource 'node_exporter'), the look-back of the linear
    // fill prediction, and how far ahead the warning and critical predictions look.
    fsSelector: 'fstype!=""',
    fsMountpointSelector: 'mountpoint!=""',
    fsSpaceFillingUpPredictionWindow: '6h',
    fsWarningPredictionHours: 24,
    fsCriticalPredictionHours: 4,
    // MiddlewareFilesystemReadOnly: a read-only mount alerts when it was read-write at some time within this window
    // (a mount read-only by design never was, so it never alerts).
    fsReadOnlyLookback: '1d',
    // The NFS operations whose round-trip time MiddlewareNfsSlowResponses watches.
    nfsSlowOperationsSelector: 'operation=~"READ|WRITE"',

    // IBM MQ (issue 28). Channel types that start their channel (sender side): a stopped or retrying one holds
    // messages back; receiving ends and server-connection channels are idle by design while nobody uses them.
    mqSenderChannelTypes: 'SENDER|SERVER|REQUESTER|CLUSSDR',
    // MiddlewareMqQueueNoReader: queues meant to be read only now and then (dead-letter, backout, archive queues;
    // a batch job's input read at night) are left out here; the queue manager's own DEADQ and transmission
    // queues always are.
    mqNoReaderQueueSelector: 'queue!~"SYSTEM[.].*|.*DEAD[.]LETTER.*|.*BACKOUT.*|.*[.]BOQ|.*ARCHIVE.*"',
    // MiddlewareMqQueueMessageTooOld and MiddlewareMqQueueMonitoringOff: the queues whose oldest message is watched.
    mqMessageAgeQueueSelector: 'queue!~"SYSTEM[.].*"',

    // Oracle health (issue 29). MiddlewareOracleTablespaceFillingUp: look-back of the linear prediction and how
    // far ahead the warning and critical look (against the autoextend maximum).
    oracleTablespacePredictionWindow: '6h',
    oracleTablespaceWarningPredictionHours: 24,
    oracleTablespaceCriticalPredictionHours: 4,
    // Archive destination statuses that mean "cannot archive there" (V$ARCHIVE_DEST.STATUS).
    oracleArchiveDestErrorStatuses: 'ERROR|DISABLED|FULL|BAD PARAM',
    // MiddlewareOracleBackupMissing: the databases expected to hold their own RMAN backups (e.g.
    // 'database!~".*_stby"' where standbys are backed up from the primary only).
    oracleBackupExpectedSelector: 'database!=""',
    // MiddlewareOracleInstanceRestarted: an instance younger than this (seconds) is reported.
    oracleRestartWindowSeconds: 900,

    // Derived; not meant to be overridden.
    // `%(clusterPrefix)s` opens every non-empty `by (...)` / `on (...)` list of the rules.
    clusterPrefix: if self.showMultiCluster then self.clusterLabel + ', ' else '',
    // The selector of the host figures' series.
    hostSelector:
      if self.hostMetricsSource == 'node_exporter' then self.nodeExporterSelector
      else if self.hostMetricsSource == 'middleware' then self.middlewareSelector
      else error "hostMetricsSource must be 'middleware' or 'node_exporter', not '%s'" % self.hostMetricsSource,
    // The prefix of the file-system series: the exporter's filesystem collector or node_exporter's.
    fsMetricPrefix: if self.hostMetricsSource == 'node_exporter' then 'node_filesystem' else 'middleware_filesystem',
  },
}
