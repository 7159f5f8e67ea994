// File systems and NFS mounts (every system): alert rules.
//
// Operational rules (guide_row none). The eight space and file-node rules are node-mixin's (node_exporter
// docs/node-mixin/alerts/alerts.libsonnet: NodeFilesystemSpaceFillingUp, ...AlmostOutOfSpace, ...FilesFillingUp,
// ...AlmostOutOfFiles, each a warning and a critical) on the `filesystem` collector's series, which carry
// node_exporter's names and meaning (exporter/systems/filesystem/README.md); with hostMetricsSource 'node_exporter'
// they read node_exporter's node_filesystem_* instead. Stuck, device-error and read-only mounts and the NFS client
// rules (the `middleware_mountstats_nfs_*` series, node_exporter's mountstats figures) are this project's.
// Runbooks: docs/runbooks/filesystem.md. Unit tests: tests/rules/filesystem.test.yml, tests/rules/nfs.test.yml and
// tests/rules/variants/node_exporter/filesystem.test.yml.

local utils = import '../lib/utils.libsonnet';

{
  local c = $._config,
  local node = c.hostMetricsSource == 'node_exporter',
  local fs = {
    m: c.fsMetricPrefix,
    sel: '%(hostSelector)s, %(fsSelector)s, %(fsMountpointSelector)s' % c,
    p: c.clusterPrefix,
    window: c.fsSpaceFillingUpPredictionWindow,
    lookback: c.fsReadOnlyLookback,
  },
  local nfs = {
    m: 'middleware_mountstats_nfs_operations',
    sel: c.middlewareSelector,
    slow: c.nfsSlowOperationsSelector,
  },
  // Appended to a description: the Oracle databases whose files are on this mount point, from the oracle
  // collector's middleware_oracle_file_system_info{database, mountpoint} (exported where the database files are on
  // the exporter's host, ORA-NFS), seen within the last day: a database hanging on this mount stops answering the
  // collector and its series end. Nothing when there are none; a template, not a join, so that the alert keeps its
  // labels and fires on hosts without Oracle too (several databases on one mount would also break a group_left).
  local oracleNote =
    '{{ with query (printf "max by (database) (last_over_time(middleware_oracle_file_system_info{instance=%q,'
    + ' mountpoint=%q}[1d]))" $labels.instance $labels.mountpoint) }} It holds files of the Oracle database'
    + ' {{ range $i, $s := sortByLabel "database" . }}{{ if $i }}, {{ end }}'
    + '{{ $s.Labels.database }}{{ end }}.{{ end }}',
  local mount = '{{ $labels.device }} on {{ $labels.mountpoint }} at {{ $labels.instance }}',
  local threshold(name) =
    '{{ with query "middleware:threshold:%s" }}{{ . | first | value | humanizePercentage }}{{ end }}' % name,

  local fillingUp(kind, severity, hours) = {
    local w = {
      space: { avail: 'avail_bytes', total: 'size_bytes', what: 'space', window: fs.window },
      files: { avail: 'files_free', total: 'files', what: 'file nodes (inodes)', window: '6h' },
    }[kind],
    local t = 'filesystem_%s_filling_up_%s_ratio' % [kind, severity],
    local name = if kind == 'space' then 'MiddlewareFilesystemSpaceFillingUp' else 'MiddlewareFilesystemFilesFillingUp',
    alert: name,
    expr: |||
      (
        %(m)s_%(avail)s{%(sel)s} / %(m)s_%(total)s{%(sel)s}
          < on () group_left () middleware:threshold:%(t)s
      and
        predict_linear(%(m)s_%(avail)s{%(sel)s}[%(window)s], %(hours)d * 60 * 60) < 0
      and
        %(m)s_readonly{%(sel)s} == 0
      )
    ||| % (fs + w + { t: t, hours: hours }),
    'for': '1h',
    labels: { severity: severity, system: 'filesystem', guide_row: 'none' },
    annotations: {
      summary: 'File system predicted to run out of %s within the next %d hours.' % [
        if kind == 'space' then 'space' else 'file nodes', hours],
      description: utils.fold(|||
        The file system %s has only {{ $value | humanizePercentage }} of its %s left (alert under %s) and, at
        the rate of the last %s, is predicted to run out within %d hours.
      ||| % [mount, w.what, threshold(t), w.window, hours]) + oracleNote,
      runbook_url: utils.runbook(c, 'filesystem', name),
      source: "node-mixin's %s (node_exporter docs/node-mixin), on %s_* (none)" % [
        if kind == 'space' then 'NodeFilesystemSpaceFillingUp' else 'NodeFilesystemFilesFillingUp', fs.m],
    },
  },

  local almostOut(kind, severity) = {
    local w = {
      space: { avail: 'avail_bytes', total: 'size_bytes', what: 'space', dur: '30m' },
      files: { avail: 'files_free', total: 'files', what: 'file nodes (inodes)', dur: '1h' },
    }[kind],
    local t = 'filesystem_%s_available_%s_ratio' % [kind, severity],
    local name =
      if kind == 'space' then 'MiddlewareFilesystemAlmostOutOfSpace' else 'MiddlewareFilesystemAlmostOutOfFiles',
    alert: name,
    expr: |||
      (
        %(m)s_%(avail)s{%(sel)s} / %(m)s_%(total)s{%(sel)s}
          < on () group_left () middleware:threshold:%(t)s
      and
        %(m)s_readonly{%(sel)s} == 0
      )
    ||| % (fs + w + { t: t }),
    'for': w.dur,
    labels: { severity: severity, system: 'filesystem', guide_row: 'none' },
    annotations: {
      summary: 'File system has almost no %s left.' % (if kind == 'space' then 'space' else 'file nodes'),
      description: utils.fold(|||
        The file system %s has only {{ $value | humanizePercentage }} of its %s left (alert under %s).
      ||| % [mount, w.what, threshold(t)]) + oracleNote,
      runbook_url: utils.runbook(c, 'filesystem', name),
      source: "node-mixin's %s (node_exporter docs/node-mixin), on %s_* (none)" % [
        if kind == 'space' then 'NodeFilesystemAlmostOutOfSpace' else 'NodeFilesystemAlmostOutOfFiles', fs.m],
    },
  },

  // A hung statvfs means every process that touches the mount hangs with it, unkillably, in D state: on a hard
  // NFS mount (what ORA-NFS recommends) Oracle stops at its next write there, a queue manager whose log is on it
  // stops, the HPOM agent's /var/opt/OV buffering stops. It does not heal by itself within minutes, so it pages.
  // A mount nobody depends on can be left out with fsMountpointSelector. node_exporter has no stuck figure (it
  // sets device_error for a mount in an unresponsive state): not rendered in the node_exporter variant.
  local stuck = {
    local name = 'MiddlewareFilesystemStuck',
    alert: name,
    expr: |||
      middleware_filesystem_stuck{%(sel)s} == 1
    ||| % fs,
    'for': '5m',
    labels: { severity: 'critical', system: 'filesystem', guide_row: 'none' },
    annotations: {
      summary: 'A mount does not answer statvfs: processes using it hang.',
      description: utils.fold(|||
        The statvfs of %s has not returned for {{ with query (printf
        "middleware_filesystem_stuck_seconds{instance=%%q, mountpoint=%%q}" $labels.instance $labels.mountpoint)
        }}{{ . | first | value | humanizeDuration }}{{ else }}over 5 minutes{{ end }} ({{ $labels.fstype }}):
        every process that reads or writes there hangs with it.
      ||| % [mount]) + oracleNote,
      runbook_url: utils.runbook(c, 'filesystem', name),
      source: 'exporter/systems/filesystem/README.md, stuck mounts (none)',
    },
  },

  local deviceError = {
    local name = 'MiddlewareFilesystemDeviceError',
    alert: name,
    expr: if node then |||
      %(m)s_device_error{%(sel)s} == 1
    ||| % fs else |||
      %(m)s_device_error{%(sel)s} == 1
      and
      %(m)s_stuck{%(sel)s} == 0
    ||| % fs,
    'for': '15m',
    labels: { severity: 'warning', system: 'filesystem', guide_row: 'none' },
    annotations: {
      summary: 'The figures of a mount cannot be read.',
      description: utils.fold(|||
        statvfs of %s has failed for 15 minutes (value {{ $value }}): its space and file-node figures are missing
        and no space alert can fire for it.
      ||| % [mount]) + oracleNote,
      runbook_url: utils.runbook(c, 'filesystem', name),
      source: 'exporter/systems/filesystem/README.md, device_error (none)',
    },
  },

  // The kernel turns a file system read-only on its own after I/O errors or a journal abort (ext4
  // errors=remount-ro, XFS shutdown): from that moment every write of the middleware on it fails with EROFS
  // (Oracle archiving and redo, the MQ recovery log, HPOM's queues under /var/opt/OV) and nothing heals it without
  // someone (fsck, remount). It pages. A mount read-only by design never was read-write within the look-back and
  // never alerts; one mounted read-only on purpose (maintenance) is silenced.
  local readOnly = {
    local name = 'MiddlewareFilesystemReadOnly',
    alert: name,
    expr: |||
      %(m)s_readonly{%(sel)s} == 1
      and
      min_over_time(%(m)s_readonly{%(sel)s}[%(lookback)s]) == 0
    ||| % fs,
    'for': '5m',
    labels: { severity: 'critical', system: 'filesystem', guide_row: 'none' },
    annotations: {
      summary: 'A file system that was read-write went read-only.',
      description: utils.fold(|||
        The file system %s ({{ $labels.fstype }}) is read-only (value {{ $value }}) after it was read-write
        within the last %s: every write there fails.
      ||| % [mount, fs.lookback]) + oracleNote,
      runbook_url: utils.runbook(c, 'filesystem', name),
      source: 'exporter/systems/filesystem/README.md, readonly (none)',
    },
  },

  local nfsMount = '{{ $labels.export }} on {{ $labels.mountpoint }} at {{ $labels.instance }}',

  local retransmissions = {
    local name = 'MiddlewareNfsRetransmissions',
    alert: name,
    expr: |||
      (
        sum without (operation) (rate(%(m)s_transmissions_total{%(sel)s}[5m]))
        - sum without (operation) (rate(%(m)s_requests_total{%(sel)s}[5m]))
      )
      / sum without (operation) (rate(%(m)s_requests_total{%(sel)s}[5m]))
        > on () group_left () middleware:threshold:nfs_retransmission_ratio
      and
      sum without (operation) (rate(%(m)s_requests_total{%(sel)s}[5m]))
        > on () group_left () middleware:threshold:nfs_min_request_rate
    ||| % nfs,
    'for': '10m',
    labels: { severity: 'warning', system: 'filesystem', guide_row: 'none' },
    annotations: {
      summary: 'An NFS mount retransmits many of its calls.',
      description: utils.fold(|||
        The NFS mount %s ({{ $labels.protocol }} to {{ $labels.mountaddr }}) has retransmitted {{ $value |
        humanizePercentage }} of its calls over 5 minutes, for 10 minutes (alert over %s): the server or the
        network drops or delays replies.
      ||| % [nfsMount, threshold('nfs_retransmission_ratio')]) + oracleNote,
      runbook_url: utils.runbook(c, 'filesystem', name),
      source: 'exporter/systems/filesystem/README.md, NFS client statistics (none)',
    },
  },

  local majorTimeouts = {
    local name = 'MiddlewareNfsMajorTimeouts',
    alert: name,
    expr: |||
      sum without (operation) (rate(%(m)s_major_timeouts_total{%(sel)s}[5m])) > 0
    ||| % nfs,
    'for': '10m',
    labels: { severity: 'warning', system: 'filesystem', guide_row: 'none' },
    annotations: {
      summary: 'An NFS server does not answer the calls of a mount in time.',
      description: utils.fold(|||
        The NFS mount %s ({{ $labels.protocol }} to {{ $labels.mountaddr }}) has had major timeouts ({{ $value
        | printf "%%.3g" }} a second) for 10 minutes: calls got no reply after all their retries ("server not
        responding"); on a hard mount the processes wait, on a soft one they get EIO.
      ||| % [nfsMount]) + oracleNote,
      runbook_url: utils.runbook(c, 'filesystem', name),
      source: 'exporter/systems/filesystem/README.md, NFS client statistics (none)',
    },
  },

  local slowResponses = {
    local name = 'MiddlewareNfsSlowResponses',
    alert: name,
    expr: |||
      rate(%(m)s_response_time_seconds_total{%(sel)s, %(slow)s}[5m])
      / rate(%(m)s_requests_total{%(sel)s, %(slow)s}[5m])
        > on () group_left () middleware:threshold:nfs_response_time_seconds
      and
      rate(%(m)s_requests_total{%(sel)s, %(slow)s}[5m])
        > on () group_left () middleware:threshold:nfs_min_request_rate
    ||| % nfs,
    'for': '15m',
    labels: { severity: 'warning', system: 'filesystem', guide_row: 'none' },
    annotations: {
      summary: 'An NFS server answers the reads or writes of a mount slowly.',
      description: utils.fold(|||
        {{ $labels.operation }} calls of the NFS mount %s have taken {{ $value | humanizeDuration }} on average
        (round trip) for 15 minutes (alert over {{ with query "middleware:threshold:nfs_response_time_seconds"
        }}{{ . | first | value | humanizeDuration }}{{ end }}).
      ||| % [nfsMount]) + oracleNote,
      runbook_url: utils.runbook(c, 'filesystem', name),
      source: 'exporter/systems/filesystem/README.md, NFS client statistics (none)',
    },
  },

  prometheusAlerts+:: {
    groups+: [
      {
        name: 'middleware-filesystem',
        rules: [
          fillingUp('space', 'warning', c.fsWarningPredictionHours),
          fillingUp('space', 'critical', c.fsCriticalPredictionHours),
          almostOut('space', 'warning'),
          almostOut('space', 'critical'),
          fillingUp('files', 'warning', c.fsWarningPredictionHours),
          fillingUp('files', 'critical', c.fsCriticalPredictionHours),
          almostOut('files', 'warning'),
          almostOut('files', 'critical'),
        ] + (if node then [] else [stuck]) + [
          deviceError,
          readOnly,
          retransmissions,
          majorTimeouts,
          slowResponses,
        ],
      },
    ],
  },
}
