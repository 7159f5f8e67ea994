// Oracle health alerts (issue 29): space (tablespaces, fast recovery area, ASM), archiving, backups, Data Guard,
// internal errors, open state and restarts. Operational rules (guide_row none), node-mixin style: a warning a
// day ahead, a critical only where the database stops (archiver stuck, recovery area full) or stops soon
// (a tablespace predicted full within hours). Facts and proposals: docs/notes/oracle-health-design.md
// sections 5 and 8. Thresholds: middleware:threshold:oracle_* (mixin/rules/oracle.libsonnet, values in
// config.libsonnet). Runbooks: docs/runbooks/oracle.md. Tests: tests/rules/oracle_health.test.yml.
//
// Tablespaces: the prediction and "almost full" watch contents="PERMANENT" only. UNDO's used bytes there count
// expired undo (DBA_TABLESPACE_USAGE_METRICS), so a healthy autoextend UNDO sits at its maximum; TEMP's use is the
// sorts and hash joins in flight: it rises and falls within a batch, and running out fails the one statement
// (ORA-01652), never the database; a prediction on it would fire every night. Issue 39 gives each its own rule
// with its own "used": TEMP in use now (allocated-but-free extents are reusable) held high for half an hour, or
// ORA-01652 in the alert log; UNDO held by running transactions (ACTIVE extents: ORA-30036 when they fill it).
// UNEXPIRED undo is not alerted on: Oracle tunes undo_retention to fill a fixed-size UNDO with it by design.

local utils = import '../lib/utils.libsonnet';

{
  local c = $._config,
  local sel = c.middlewareSelector,
  local p = c.clusterPrefix,
  local on = '%sinstance, job, database' % p,
  local t(name, fmt) =
    '{{ with query "middleware:threshold:%s" }}{{ . | first | value | %s }}{{ end }}' % [name, fmt],
  local rule(name, severity, forDur, expr, summary, description, source='operational rule, not from the guides (none)') = {
    alert: name,
    expr: expr,
    'for': forDur,
    labels: { severity: severity, system: 'oracle', guide_row: 'none' },
    annotations: {
      summary: summary,
      description: utils.fold(description),
      runbook_url: utils.runbook(c, 'oracle', name),
      source: source,
    },
  },
  local ts = 'middleware_oracle_tablespace_%s{' + sel + ', contents="PERMANENT"}',

  // predict_linear of the used bytes against the autoextend maximum, not the current size: an autoextend
  // tablespace is "full" only when its files cannot grow any more. The ratio guard (node-mixin's) keeps a young
  // or small tablespace's steep but short growth out; for: 1h keeps a nightly load's step out.
  local fillingUp(severity, hours) = rule(
    'MiddlewareOracleTablespaceFillingUp', severity, '1h',
    |||
      (
        %(used)s / %(max)s
          > on () group_left () middleware:threshold:oracle_tablespace_filling_up_%(severity)s_ratio
      and
        predict_linear(%(used)s[%(window)s], %(hours)d * 3600) >= %(max)s
      )
    ||| % { used: ts % 'used_bytes', max: ts % 'max_bytes', severity: severity, hours: hours,
            window: c.oracleTablespacePredictionWindow },
    'Oracle tablespace predicted to reach its maximum size within the next %d hours.' % hours,
    |||
      Tablespace {{ $labels.tablespace }}{{ with $labels.container }} of container {{ . }}{{ end }} in database
      {{ $labels.database }} ({{ $labels.instance }}) uses {{ $value | humanizePercentage }} of the size its
      files may grow to (autoextend maximum; alert above %s) and, at the growth of the last %s, reaches that
      maximum within %d hours. Then inserts into its segments fail (ORA-01653/ORA-01654).
    ||| % [t('oracle_tablespace_filling_up_%s_ratio' % severity, 'humanizePercentage'),
           c.oracleTablespacePredictionWindow, hours],
    "node-mixin's NodeFilesystemSpaceFillingUp (node_exporter docs/node-mixin) applied to tablespaces (none)",
  ),

  _oracleHealthAlerts:: [
    fillingUp('warning', c.oracleTablespaceWarningPredictionHours),
    fillingUp('critical', c.oracleTablespaceCriticalPredictionHours),
    // Static: a full tablespace that does not grow harms nothing (reference data sized tight); a growing one is
    // the prediction's. Hence only a warning, and only very close to the maximum.
    rule(
      'MiddlewareOracleTablespaceAlmostFull', 'warning', '30m',
      |||
        %(used)s / %(max)s
          > on () group_left () middleware:threshold:oracle_tablespace_almost_full_ratio
      ||| % { used: ts % 'used_bytes', max: ts % 'max_bytes' },
      'Oracle tablespace almost at its maximum size.',
      |||
        Tablespace {{ $labels.tablespace }}{{ with $labels.container }} of container {{ . }}{{ end }} in
        database {{ $labels.database }} ({{ $labels.instance }}) uses {{ $value | humanizePercentage }} of the
        size its files may grow to (autoextend maximum), above %s. The next large insert or index build may
        fail with ORA-01653/ORA-01654.
      ||| % t('oracle_tablespace_almost_full_ratio', 'humanizePercentage'),
    ),
  ] + [
    // Reclaimable space (obsolete backups, archived logs already backed up) is freed by Oracle when it needs it.
    // Full with nothing to reclaim: the archiver cannot write (ORA-19809, ORA-00257) and the database hangs.
    rule(
      'MiddlewareOracleRecoveryAreaAlmostFull', s.severity, s['for'],
      |||
        (
          middleware_oracle_fra_used_bytes{%(sel)s} - middleware_oracle_fra_reclaimable_bytes{%(sel)s}
        ) / (middleware_oracle_fra_limit_bytes{%(sel)s} > 0)
          > on () group_left () middleware:threshold:oracle_fra_used_%(severity)s_ratio
      ||| % { sel: sel, severity: s.severity },
      'Oracle fast recovery area almost full of files it cannot delete.',
      |||
        The fast recovery area {{ $labels.name }} of database {{ $labels.database }} ({{ $labels.instance }}) is
        {{ $value | humanizePercentage }} full after subtracting what Oracle could reclaim (alert above %s). When
        it is full the archiver stops (ORA-19809, ORA-00257) and every commit waits.
      ||| % t('oracle_fra_used_%s_ratio' % s.severity, 'humanizePercentage'),
    )
    for s in [{ severity: 'warning', 'for': '15m' }, { severity: 'critical', 'for': '5m' }]
  ] + [
    // ARCHIVER = FAILED means the last attempt failed (it retries within 5 minutes: for: 5m); a MANDATORY
    // destination that cannot be written blocks the reuse of online logs. Either way, once the online logs are
    // all waiting to be archived the database stops: critical.
    rule(
      'MiddlewareOracleArchiverStuck', 'critical', '5m',
      |||
        max by (%(on)s, inst_id) (middleware_oracle_archiver_failed{%(sel)s} == 1)
        or
        max by (%(on)s, inst_id) (
          middleware_oracle_archive_dest_status{%(sel)s, binding="MANDATORY", status=~"%(bad)s"}
        )
      ||| % { on: on, sel: sel, bad: c.oracleArchiveDestErrorStatuses },
      'Oracle cannot archive its redo logs.',
      |||
        Instance {{ $labels.inst_id }} of database {{ $labels.database }} ({{ $labels.instance }}) has failed to
        archive redo logs for 5 minutes (archiver FAILED or a MANDATORY archive destination in error; value {{
        $value }}). When every online log waits for archiving, all changes stop ("log file switch (archiving
        needed)").
      |||,
    ),
    rule(
      'MiddlewareOracleArchiveDestinationError', 'warning', '15m',
      'middleware_oracle_archive_dest_status{%(sel)s, binding!="MANDATORY", status=~"%(bad)s"}'
      % { sel: sel, bad: c.oracleArchiveDestErrorStatuses },
      'Oracle optional archive destination in error.',
      |||
        Archive destination {{ $labels.dest_name }} ({{ $labels.target }}{{ with $labels.binding }}, {{ . }}{{
        end }}) of instance {{ $labels.inst_id }} of database {{ $labels.database }} ({{ $labels.instance }}) has
        been {{ $labels.status }} for 15 minutes (value {{ $value }}). Logs are not copied there: a standby falls
        behind, or a second copy is missing.
      |||,
    ),
  ] + [
    rule(
      'MiddlewareOracleBackupTooOld', 'warning', '0m',
      std.join('\nor\n', [
        'middleware_oracle_backup_last_success_age_seconds{%s, input_type="%s"}\n  > on () group_left () middleware:threshold:oracle_backup_%s_max_age_seconds'
        % [sel, b[0], b[1]]
        for b in [['DB FULL', 'db_full'], ['DB INCR', 'db_incr'], ['ARCHIVELOG', 'archivelog']]
      ]) + '\n',
      'Oracle RMAN backup older than allowed.',
      |||
        The last successful RMAN backup of type {{ $labels.input_type }} of database {{ $labels.database }} ({{
        $labels.instance }}) ended {{ $value | humanizeDuration }} ago, longer than allowed for that type
        (middleware:threshold:oracle_backup_*_max_age_seconds).
      |||,
    ),
    // "Never": no successful DB FULL / DB INCR in the control file for a database that is open and whose backup
    // query ran (a failing or skipped query is not "no backup").
    rule(
      'MiddlewareOracleBackupMissing', 'warning', '1h',
      |||
        (middleware_oracle_database_open{%(sel)s, %(db)s} == 1)
          and on (%(on)s) (middleware_oracle_query_success{%(sel)s, query="backup_age"} == 1)
          unless on (%(on)s) (middleware_oracle_query_skipped{%(sel)s, query="backup_age"} == 1)
          unless on (%(on)s) middleware_oracle_backup_last_success_age_seconds{%(sel)s, input_type=~"DB FULL|DB INCR"}
      ||| % { sel: sel, on: on, db: c.oracleBackupExpectedSelector },
      'Oracle database without any successful RMAN database backup.',
      |||
        Database {{ $labels.database }} ({{ $labels.instance }}) is open but its control file records no
        successful RMAN database backup (DB FULL or DB INCR) for an hour (value {{ $value }}): never backed up,
        or the last one aged out of the control file (control_file_record_keep_time).
      |||,
    ),
    rule(
      'MiddlewareOracleBackupFailed', 'warning', '0m',
      'middleware_oracle_backup_last_status{%s, status=~"FAILED|COMPLETED WITH ERRORS"} == 1' % sel,
      'Oracle RMAN backup failed.',
      |||
        The newest RMAN job of type {{ $labels.input_type }} of database {{ $labels.database }} ({{
        $labels.instance }}) ended {{ $labels.status }} (value {{ $value }}). The alert clears when a later job of
        the type succeeds or runs.
      |||,
    ),
    // On a standby (v$dataguard_stats has no rows on a primary). Warning: the primary works; a failover now
    // would lose (transport) or take long to apply (apply) this much redo.
    rule(
      'MiddlewareOracleStandbyLagHigh', 'warning', '10m',
      |||
        middleware_oracle_dataguard_lag_seconds{%(sel)s, name="transport_lag"}
          > on () group_left () middleware:threshold:oracle_dataguard_transport_lag_seconds
        or
        middleware_oracle_dataguard_lag_seconds{%(sel)s, name="apply_lag"}
          > on () group_left () middleware:threshold:oracle_dataguard_apply_lag_seconds
      ||| % { sel: sel },
      'Oracle Data Guard standby lags behind its primary.',
      |||
        Standby database {{ $labels.database }} ({{ $labels.instance }}) has had a {{ $labels.name }} of {{ $value
        | humanizeDuration }} for 10 minutes (thresholds: transport {{ with query
        "middleware:threshold:oracle_dataguard_transport_lag_seconds" }}{{ . | first | value | humanizeDuration
        }}{{ end }}, apply {{ with query "middleware:threshold:oracle_dataguard_apply_lag_seconds" }}{{ . | first
        | value | humanizeDuration }}{{ end }}).
      |||,
    ),
  ] + [
    // Issue 39. DATUM_TIME is when the standby last received data from its source (redo, or the heartbeat the
    // source sends when idle); the lag figures freeze at their last value when nothing arrives, its age keeps
    // growing. Nothing received means a failover now loses everything since: a warning after 10 minutes, critical
    // after an hour (someone must restore transport before the primary fails). Per source (18c+ far sync,
    // cascades): max by the source.
    rule(
      'MiddlewareOracleStandbyNotReceiving', s.severity, '5m',
      |||
        max by (%(on)s, source_db_unique_name) (
          middleware_oracle_dataguard_datum_age_seconds{%(sel)s, name="transport_lag"}
        ) > on () group_left () middleware:threshold:oracle_dataguard_datum_age_%(severity)s_seconds
      ||| % { sel: sel, on: on, severity: s.severity },
      'Oracle Data Guard standby receives nothing from its primary.',
      |||
        Standby database {{ $labels.database }} ({{ $labels.instance }}) last received data{{ with
        $labels.source_db_unique_name }} from {{ . }}{{ end }} {{ $value | humanizeDuration }} ago (V$DATAGUARD_STATS
        DATUM_TIME; alert above %s). Its lag figures are frozen at their last value; a failover now would lose
        every transaction since. Check the primary's archive destination (middleware_oracle_archive_dest_error),
        the network and the standby's RFS processes.
      ||| % t('oracle_dataguard_datum_age_%s_seconds' % s.severity, 'humanizeDuration'),
    )
    for s in [{ severity: 'warning' }, { severity: 'critical' }]
  ] + [
    // Apply stopped (MRP0 not running) on a physical standby: the apply lag turns NULL, so the lag alert cannot
    // see it. Redo still arrives (StandbyNotReceiving watches that, the data is safe: RPO held) but piles up
    // unapplied: a failover would first apply the whole backlog (RTO grows by the hour) and an Active Data Guard
    // standby serves ever older data. Warning: no data is lost and it waits for the working day; 30 minutes
    // keeps a planned restart of apply (patching, a broker reconfiguration) quiet.
    rule(
      'MiddlewareOracleStandbyApplyStopped', 'warning', '30m',
      |||
        (middleware_oracle_dataguard_apply_running{%(sel)s} == 0)
          and on (%(on)s) middleware_oracle_dataguard_info{%(sel)s, database_role="PHYSICAL STANDBY"}
      ||| % { sel: sel, on: on },
      'Oracle physical standby does not apply redo.',
      |||
        Physical standby database {{ $labels.database }} ({{ $labels.instance }}) has had no managed recovery
        process (MRP0) for 30 minutes: redo is received but not applied, its apply lag is unknown (NULL) and grows,
        and a failover would first have to apply the backlog. Start it with ALTER DATABASE RECOVER MANAGED STANDBY
        DATABASE DISCONNECT (or the broker's EDIT DATABASE ... SET STATE='APPLY-ON').
      |||,
    ),
    // "DB INCR" is level 0 and level 1 alike; a level 1 chain without a recent level 0 makes restores long, and
    // with none left in the control file the incrementals have no base.
    rule(
      'MiddlewareOracleBackupLevel0TooOld', 'warning', '30m',
      |||
        middleware_oracle_backup_incremental_last_success_age_seconds{%(sel)s, level="0"}
          > on () group_left () middleware:threshold:oracle_backup_level0_max_age_seconds
        or
        (
          middleware_oracle_backup_incremental_last_success_age_seconds{%(sel)s, level="1"}
            unless on (%(on)s) middleware_oracle_backup_incremental_last_success_age_seconds{%(sel)s, level="0"}
        )
      ||| % { sel: sel, on: on },
      'Oracle RMAN incremental backups without a recent level 0.',
      |||
        Database {{ $labels.database }} ({{ $labels.instance }}): {{ if eq $labels.level "0" }}the last successful
        level 0 backup ended {{ $value | humanizeDuration }} ago (allowed: %s){{ else }}level 1 backups run (the last
        {{ $value | humanizeDuration }} ago) but the control file records no successful level 0 they build on{{ end
        }}. A restore needs the level 0 and every level 1 since.
      ||| % t('oracle_backup_level0_max_age_seconds', 'humanizeDuration'),
    ),
    rule(
      'MiddlewareOracleTempSpaceLow', 'warning', '30m',
      |||
        middleware_oracle_tablespace_used_bytes{%(sel)s, contents="TEMPORARY"}
          / (middleware_oracle_tablespace_max_bytes{%(sel)s, contents="TEMPORARY"} > 0)
          > on () group_left () middleware:threshold:oracle_temp_used_ratio
      ||| % { sel: sel },
      'Oracle temporary tablespace nearly exhausted for half an hour.',
      |||
        Sessions of database {{ $labels.database }} ({{ $labels.instance }}) have held {{ $value |
        humanizePercentage }} of temporary tablespace {{ $labels.tablespace }}{{ with $labels.container }} of
        container {{ . }}{{ end }} (of its autoextend maximum; extents allocated but free are not counted) for 30
        minutes, above %s. The next large sort or hash join fails with ORA-01652.
      ||| % t('oracle_temp_used_ratio', 'humanizePercentage'),
    ),
    rule(
      'MiddlewareOracleTempSpaceErrors', 'warning', '0m',
      'round(increase(middleware_oracle_alert_errors_total{%s, code="ORA-01652"}[1h])) >= 1' % sel,
      'Oracle statements failed for lack of temporary space (ORA-01652).',
      |||
        Database {{ $labels.database }} ({{ $labels.instance }}) logged {{ $value | printf "%.0f" }} ORA-01652
        ("unable to extend temp segment") in its alert log in the last hour: those statements failed. The alert log
        names the tablespace (a TEMP tablespace too small, or a permanent one during an index build).
      |||,
    ),
    rule(
      'MiddlewareOracleUndoActiveHigh', 'warning', '15m',
      |||
        sum by (%(on)s, container, tablespace) (middleware_oracle_undo_extent_bytes{%(sel)s, status="ACTIVE"})
          / on (%(on)s, container, tablespace) (
            max by (%(on)s, container, tablespace) (middleware_oracle_tablespace_max_bytes{%(sel)s, contents="UNDO"}) > 0
          )
          > on () group_left () middleware:threshold:oracle_undo_active_ratio
      ||| % { sel: sel, on: on },
      'Oracle UNDO tablespace filling with active transactions.',
      |||
        Running transactions of database {{ $labels.database }} ({{ $labels.instance }}) hold {{ $value |
        humanizePercentage }} of UNDO tablespace {{ $labels.tablespace }}{{ with $labels.container }} of container
        {{ . }}{{ end }} (ACTIVE extents, of its autoextend maximum; alert above %s) for 15 minutes. When active undo
        fills it, transactions fail with ORA-30036; before that, unexpired undo is overwritten and long queries
        get ORA-01555. Look for a long-running or stuck transaction (V$TRANSACTION).
      ||| % t('oracle_undo_active_ratio', 'humanizePercentage'),
    ),
    // Usable = free minus the reserve needed to restore redundancy after losing a failure group; usable_file < 0
    // means that reserve is already eaten. A dismounted group (total 0) is left out by the division.
    rule(
      'MiddlewareOracleAsmDiskGroupAlmostFull', 'warning', '15m',
      |||
        (
          middleware_oracle_asm_diskgroup_free_bytes{%(sel)s} - middleware_oracle_asm_diskgroup_required_mirror_free_bytes{%(sel)s}
        ) / (middleware_oracle_asm_diskgroup_total_bytes{%(sel)s} > 0)
          < on () group_left () middleware:threshold:oracle_asm_usable_ratio
        or
        middleware_oracle_asm_diskgroup_usable_file_bytes{%(sel)s} < 0
      ||| % { sel: sel },
      'Oracle ASM disk group almost full.',
      |||
        ASM disk group {{ $labels.diskgroup }} ({{ $labels.type }} redundancy) seen from database {{
        $labels.database }} ({{ $labels.instance }}): {{ if lt $value 0.0 }}usable file space is {{ $value |
        humanize1024 }}B, negative: losing a failure group now could not be repaired by a rebalance{{ else }}only {{
        $value | humanizePercentage }} of its raw size is free beyond the mirror reserve (alert under %s){{ end }}.
      ||| % t('oracle_asm_usable_ratio', 'humanizePercentage'),
    ),
    // Warning, not critical: with NORMAL/HIGH redundancy the database keeps running on the mirror copies and
    // ASM resyncs the disk if it returns within disk_repair_time (else drops it and rebalances); with EXTERNAL
    // redundancy an offline disk dismounts the group and the database alerts fire.
    rule(
      'MiddlewareOracleAsmDisksOffline', 'warning', '5m',
      'middleware_oracle_asm_diskgroup_offline_disks{%s} > 0' % sel,
      'Oracle ASM disks offline.',
      |||
        ASM disk group {{ $labels.diskgroup }} ({{ $labels.type }} redundancy) seen from database {{
        $labels.database }} ({{ $labels.instance }}) has had {{ $value | printf "%.0f" }} offline disk(s) for 5
        minutes: its data has one copy fewer until they are back.
      |||,
    ),
    // The counter's series of a code appears at 0 the first time the code is seen and counts from the next
    // run, so increase() sees the first burst; an exporter restart is a reset, which increase() handles.
    // increase() extrapolates (3.1 for 3), hence round().
    rule(
      'MiddlewareOracleInternalErrors', 'warning', '0m',
      |||
        round(increase(middleware_oracle_alert_errors_total{%(sel)s, code=~"ORA-00600|ORA-07445"}[15m]))
          >= on () group_left () middleware:threshold:oracle_internal_errors_per_15m
      ||| % { sel: sel },
      'Oracle logs a burst of internal errors (ORA-00600 / ORA-07445).',
      |||
        Database {{ $labels.database }} ({{ $labels.instance }}) logged {{ $value | printf "%.0f" }} {{
        $labels.code }} errors in its alert log in the last 15 minutes (alert at {{ with query
        "middleware:threshold:oracle_internal_errors_per_15m" }}{{ . | first | value | printf "%.0f" }}{{ end
        }}). Each has an incident trace; repeated ones point at a bug or corruption.
      |||,
    ),
    // A physical standby is MOUNTED by design (without Active Data Guard): only primaries are watched. Seen only
    // where the monitoring login may connect to a mounted database (SYSDBA-class); else MiddlewareOracleDown.
    rule(
      'MiddlewareOracleDatabaseNotOpen', 'warning', '10m',
      |||
        (middleware_oracle_database_open{%(sel)s} == 0)
          and on (%(on)s) middleware_oracle_database_info{%(sel)s, database_role="PRIMARY"}
      ||| % { sel: sel, on: on },
      'Oracle primary database mounted but not open.',
      |||
        Primary database {{ $labels.database }} ({{ $labels.instance }}) has been mounted but not open for 10
        minutes (middleware_oracle_database_open = {{ $value }}): applications get ORA-01033/ORA-01109.
      |||,
    ),
    // Uptime from the database (SYSDATE - STARTUP_TIME) rather than resets(): the end of daylight saving moves
    // SYSDATE back an hour, which resets() would take for a restart. An exporter restart or a reconnect leaves
    // the figure as it is. Warning, not info (the project's info is advice that waits an hour): an unplanned
    // restart deserves a look the same day; a planned one is silenced with its maintenance.
    rule(
      'MiddlewareOracleInstanceRestarted', 'warning', '0m',
      'middleware_oracle_instance_uptime_seconds{%s} < %d' % [sel, c.oracleRestartWindowSeconds],
      'Oracle instance restarted recently.',
      |||
        Instance {{ $labels.inst_id }} of database {{ $labels.database }} ({{ $labels.instance }}) started {{
        $value | humanizeDuration }} ago.
      |||,
    ),
  ],
}
