// Thresholds of alerts/filesystem.yml (the parameters of mixin/alerts/filesystem.libsonnet).

local utils = import '../lib/utils.libsonnet';

{
  prometheusRules+:: {
    groups+: [
      {
        name: 'middleware-filesystem-thresholds',
        rules: [
          // Share of the size still available (avail / size) under which a mount that the linear prediction sees
          // full within fsWarningPredictionHours / fsCriticalPredictionHours warns / pages. Not a guide figure:
          // node-mixin's fsSpaceFillingUpWarningThreshold 40 and fsSpaceFillingUpCriticalThreshold 20 (per cent),
          // so that a large, mostly empty file system with a burst of writes does not alert.
          utils.threshold($._config, 'filesystem_space_filling_up_warning_ratio', 'none'),
          utils.threshold($._config, 'filesystem_space_filling_up_critical_ratio', 'none'),
          // Share of the size still available under which a mount is almost out of space whatever its trend:
          // node-mixin's fsSpaceAvailableWarningThreshold 5 and fsSpaceAvailableCriticalThreshold 3 (per cent).
          utils.threshold($._config, 'filesystem_space_available_warning_ratio', 'none'),
          utils.threshold($._config, 'filesystem_space_available_critical_ratio', 'none'),
          // The same four for file nodes (files_free / files): node-mixin's literals 40, 20, 5 and 3 per cent.
          utils.threshold($._config, 'filesystem_files_filling_up_warning_ratio', 'none'),
          utils.threshold($._config, 'filesystem_files_filling_up_critical_ratio', 'none'),
          utils.threshold($._config, 'filesystem_files_available_warning_ratio', 'none'),
          utils.threshold($._config, 'filesystem_files_available_critical_ratio', 'none'),
          // NFS: share of RPC transmissions that were retransmissions ((transmissions - requests) / requests over
          // 5 minutes). Not a guide figure: the classic NFS client tuning advice (nfsstat -rc) treats
          // retransmissions above about 5 % of calls as a server or network that does not keep up.
          utils.threshold($._config, 'nfs_retransmission_ratio', 'none'),
          // NFS: operations per second of a mount (all operations for the retransmissions, the watched operation
          // for the response time) under which the ratios are not judged: at night a handful of calls make any
          // ratio or mean jump. 0.2 is 60 calls in the 5-minute window, where one retransmission is under 2 %.
          utils.threshold($._config, 'nfs_min_request_rate', 'none'),
          // NFS: mean round-trip time of a READ or WRITE (response_time / requests over 5 minutes) above which the
          // mount is slow. Not a guide figure: a filer on the same LAN answers within a few milliseconds; 50 ms is
          // slower than a local disk seek by far and makes Oracle's single-block reads and MQ's log writes wait.
          utils.threshold($._config, 'nfs_response_time_seconds', 'none'),
        ],
      },
    ],
  },
}
