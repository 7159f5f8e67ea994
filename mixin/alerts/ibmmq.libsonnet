// IBM MQ alerts: queue-manager CPU saturation (MQ-CPU), queue depth (MQ-DEPTH), queue-manager, channel and
// back-end state, and (issue 28) channel, queue-activity and queue-manager health beyond depth.
//
// Load together with alerts/recording.yml (instance:middleware_host_cpu_idle:ratio5m,
// qmgr:ibmmq_qmgr_destructive_gets:rate5m and its hour's 90th percentile).
//
// MiddlewareMqQueueManagerCpuSaturation joins host CPU figures with queue figures on the `instance` label, so
// both must come from the same exporter: the one running beside the queue managers (host collector plus ibmmq
// collector, typically with the runmqsc back-end). A central exporter that reads remote queue managers over
// REST or PCF has the central host's CPU under its instance label: for those queue managers the CPU rule never
// matches (or, worse, matches the wrong host), so run an exporter on every queue-manager host.

local utils = import '../lib/utils.libsonnet';

{
  prometheusAlerts+:: {
    groups+: [
      {
        name: 'middleware-ibmmq',
        rules: [
          {
            alert: 'MiddlewareMqQueueManagerCpuSaturation',
            expr: |||
              (
                instance:middleware_host_cpu_idle:ratio5m{%(hostSelector)s}
                  < on () group_left () middleware:threshold:mq_cpu_idle_ratio
              )
              and on (%(clusterPrefix)sinstance)
              (
                  count by (%(clusterPrefix)sinstance) (
                      (
                        deriv(ibmmq_queue_depth{%(middlewareSelector)s}[10m]) * 600
                          > on () group_left () middleware:threshold:mq_queue_working_depth
                      )
                    and
                      (ibmmq_queue_depth{%(middlewareSelector)s} > on () group_left () middleware:threshold:mq_queue_working_depth)
                  )
                or
                  count by (%(clusterPrefix)sinstance) (
                      (
                        qmgr:ibmmq_qmgr_destructive_gets:rate5m{%(middlewareSelector)s} / qmgr:ibmmq_qmgr_destructive_gets:rate5m_q90_1h{%(middlewareSelector)s}
                          < on () group_left () (1 - middleware:threshold:mq_throughput_fall_ratio)
                      )
                    and on (%(clusterPrefix)sinstance, qmgr)
                      (
                        max by (%(clusterPrefix)sinstance, qmgr) (ibmmq_queue_depth{%(middlewareSelector)s})
                          > on () group_left () middleware:threshold:mq_queue_working_depth
                      )
                  )
              )
            ||| % $._config,
            'for': '10m',
            labels: { severity: 'critical', system: 'ibmmq', guide_row: 'MQ-CPU' },
            annotations: {
              summary: 'Queue managers short of CPU (idle low while queues grow or throughput falls).',
              description: utils.fold(|||
                CPU idle on {{ $labels.instance }} has been {{ $value | humanizePercentage }} for 10 minutes, under
                the threshold of {{ with query "middleware:threshold:mq_cpu_idle_ratio" }}{{ . | first | value |
                humanizePercentage }}{{ end }}, while a queue there grows by more than its working depth every 10
                minutes, or a queue manager with messages waiting gets {{ with query
                "middleware:threshold:mq_throughput_fall_ratio" }}{{ . | first | value | humanizePercentage }}{{ end
                }} or more fewer per second than it did in the last hour: the queue managers and rules engines wait
                for CPU. The MQSI report hit this wall at 5 queue managers (12 % idle, 215 msg/s); more engines took
                idle to 1 % and throughput down to 195 msg/s.
              |||),
              runbook_url: utils.runbook($._config, 'ibmmq', 'MiddlewareMqQueueManagerCpuSaturation'),
              source: utils.fold(|||
                MQSeries Integrator for Sun Solaris v1.1: Maximizing persistent message throughput, Test Case 2,
                Figures 4-6; Test Cases 3-5, Figures 7-13; Was Our Hypothesis True? (MQ-CPU)
              |||),
            },
          },
          // MQ-CPU: CPU idle under the threshold on the host AND, on the same instance, either
          //  - depth: a queue above its working depth that has grown by more than that working depth (the report's
          //    100 messages) over 10 minutes. A minimum growth, per queue: five queues jittering around 100 messages
          //    at 9 % idle, or a steady busy host (the report's best configuration ran at 8 % idle), are not
          //    saturation; or
          //  - throughput: a queue manager whose get rate (STATMQI destructive gets, the report's msgs/s per queue
          //    manager) has fallen by the threshold share below its own level of the last hour (the 90th percentile of
          //    its 5-minute rate, so one burst does not set the bar) while messages wait on it (a queue above the
          //    working depth). Without waiting messages a lower rate is less demand, not less capacity: a quiet night,
          //    a finished drain. Noise of +-10 % stays under the 25 % share. Only queue managers read through pcf or
          //    runmqsc have the rate (REST: depth branch only).
          // $value is the idle share.
          {
            alert: 'MiddlewareMqQueueDepthHigh',
            expr: |||
              ibmmq_queue_depth_ratio{%(middlewareSelector)s}
                > on () group_left () middleware:threshold:mq_queue_depth_ratio
            ||| % $._config,
            'for': '5m',
            labels: { severity: 'warning', system: 'ibmmq', guide_row: 'MQ-DEPTH' },
            annotations: {
              summary: 'Queue close to its maximum depth.',
              description: utils.fold(|||
                Queue {{ $labels.queue }} on {{ $labels.qmgr }} ({{ $labels.instance }}) has been at {{ $value |
                humanizePercentage }} of its maximum depth for 5 minutes, above the threshold of {{ with query
                "middleware:threshold:mq_queue_depth_ratio" }}{{ . | first | value | humanizePercentage }}{{ end }}.
                When it is full, puts fail with MQRC_Q_FULL (2053).
              |||),
              runbook_url: utils.runbook($._config, 'ibmmq', 'MiddlewareMqQueueDepthHigh'),
              source: utils.fold(|||
                MQSeries Integrator for Sun Solaris v1.1: Maximizing persistent message throughput, Test Model,
                Figure 1 (MQ-DEPTH); 80 % of MAXDEPTH is this project's configurable default, not a report figure
              |||),
            },
          },
          {
            alert: 'MiddlewareMqQueueDepthGrowing',
            expr: |||
              (
                ibmmq_queue_depth{%(middlewareSelector)s}
                  > on () group_left () middleware:threshold:mq_queue_working_depth
              )
              and
              deriv(ibmmq_queue_depth{%(middlewareSelector)s}[15m]) > 0
            ||| % $._config,
            'for': '15m',
            labels: { severity: 'warning', system: 'ibmmq', guide_row: 'MQ-DEPTH' },
            annotations: {
              summary: 'Queue keeps growing beyond its working depth.',
              description: utils.fold(|||
                Queue {{ $labels.queue }} on {{ $labels.qmgr }} ({{ $labels.instance }}) has been growing for 15
                minutes and holds {{ $value | printf "%.0f" }} messages, above the working depth of {{ with query
                "middleware:threshold:mq_queue_working_depth" }}{{ . | first | value | printf "%.0f" }}{{ end }}:
                its consumers fall behind its producers.
              |||),
              runbook_url: utils.runbook($._config, 'ibmmq', 'MiddlewareMqQueueDepthGrowing'),
              source: utils.fold(|||
                MQSeries Integrator for Sun Solaris v1.1: Maximizing persistent message throughput, Test Model,
                Figure 1 (MQ-DEPTH)
              |||),
            },
          },
          // $value is the current depth.
          {
            alert: 'MiddlewareMqQueueManagerNotRunning',
            expr: 'ibmmq_qmgr_status{%(middlewareSelector)s} != 2 and ibmmq_qmgr_status{%(middlewareSelector)s} != 4' % $._config,
            'for': '5m',
            labels: { severity: 'critical', system: 'ibmmq', guide_row: 'none' },
            annotations: {
              summary: 'IBM MQ queue manager not running.',
              description: utils.fold(|||
                Queue manager {{ $labels.qmgr }} ({{ $labels.instance }}) has reported status {{ $value }} ({{ if eq
                $value 0.0 }}ended, or not reachable through its back-end{{ else if eq $value 1.0 }}starting{{ else
                if eq $value 3.0 }}quiescing{{ else }}unknown{{ end }}) for 5 minutes instead of 2 (running) or 4
                (standby).
              |||),
              runbook_url: utils.runbook($._config, 'ibmmq', 'MiddlewareMqQueueManagerNotRunning'),
              source: 'operational rule, not from the guides (none)',
            },
          },
          // 2 is running. 4 is a healthy standby and is left out: the standby instance of a multi-instance queue
          // manager (Running as standby), the other nodes of an RDQM or multi-instance queue manager that runs
          // elsewhere (Running elsewhere), a Native HA replica (Replica, Recovery group leader). Every back-end maps
          // these the same way (exporter/systems/ibmmq/states.py). Fires on 0 (ended, or not reachable through its
          // back-end, see MiddlewareMqBackendFailing), and on 1 (starting, Native HA negotiating) or 3 (quiescing,
          // ending immediately/pre-emptively) that last 5 minutes. Per instance: a pair whose active instance
          // is gone while the rest stand by is MiddlewareMqQueueManagerNoActiveInstance.
          {
            alert: 'MiddlewareMqQueueManagerNoActiveInstance',
            expr: |||
              sum by (%(clusterPrefix)sqmgr) (middleware_ibmmq_qmgr_ha_role{%(middlewareSelector)s, role="active"}) == 0
              and on (%(clusterPrefix)sqmgr)
              sum by (%(clusterPrefix)sqmgr) (middleware_ibmmq_qmgr_ha_role{%(middlewareSelector)s, role=~"standby|replica"}) > 0
            ||| % $._config,
            'for': '5m',
            labels: { severity: 'critical', system: 'ibmmq', guide_row: 'none' },
            annotations: {
              summary: 'IBM MQ queue manager has no active instance.',
              description: utils.fold(|||
                No instance of queue manager {{ $labels.qmgr }} has been active for 5 minutes ({{ $value }} active
                instances) while its other instances stand by (standby or replica): applications cannot connect and
                no fail-over has happened.
              |||),
              runbook_url: utils.runbook($._config, 'ibmmq', 'MiddlewareMqQueueManagerNoActiveInstance'),
              source: 'operational rule, not from the guides (none)',
            },
          },
          // Across every exporter reporting the queue manager (one per node of a multi-instance, RDQM or Native HA
          // group): some instance stands by (standby or replica) but none is active, so nothing serves the
          // applications and no fail-over has taken place. A single-instance queue manager that ends has no
          // standby and is left to MiddlewareMqQueueManagerNotRunning. Grouped by qmgr alone: queue-manager names
          // must be unique among the series this Prometheus evaluates (add a distinguishing label to both by()
          // otherwise). $value is the number of active instances (0).
          {
            alert: 'MiddlewareMqChannelNotRunning',
            expr: |||
              (ibmmq_channel_status{%(middlewareSelector)s, type=~"%(mqSenderChannelTypes)s"} != 0)
              and
              (ibmmq_channel_status_squash{%(middlewareSelector)s} == 0)
            ||| % $._config,
            'for': '10m',
            labels: { severity: 'warning', system: 'ibmmq', guide_row: 'none' },
            annotations: {
              summary: 'IBM MQ sender-side channel stopped.',
              description: utils.fold(|||
                Channel {{ $labels.channel }} ({{ $labels.type }}) of {{ $labels.qmgr }} ({{ $labels.instance }}) to
                {{ $labels.connname }} has reported status {{ $value }} ({{ if eq $value 6.0 }}stopped{{ else if eq
                $value 8.0 }}paused{{ else if eq $value 9.0 }}disconnected{{ else }}not running{{ end }}) for 10
                minutes. Messages for its partner wait on the transmission queue until it runs again.
              |||),
              runbook_url: utils.runbook($._config, 'ibmmq', 'MiddlewareMqChannelNotRunning'),
              source: 'operational rule, not from the guides (none)',
            },
          },
          // Sender-side types only (mqSenderChannelTypes: SENDER, SERVER, REQUESTER, CLUSSDR; mq_prometheus's words):
          // server-connection channels and receiving ends (RECEIVER, CLUSRCVR) are idle by design while no client or
          // partner uses them, and the partner's sender shows a real outage. Status 0 (INACTIVE: a defined channel
          // without status, show_inactive_channels) is left out although its squashed status is 0 too: a sender
          // with nothing to send ends on its disconnect interval and is started again by triggering. $value is the
          // MQCHS status (6 stopped, 8 paused, 9 disconnected).
          {
            alert: 'MiddlewareMqChannelStoppedXmitqGrowing',
            expr: |||
              (ibmmq_channel_status{%(middlewareSelector)s, type=~"SENDER|SERVER|CLUSSDR"} == 6)
              and on (%(clusterPrefix)sinstance, qmgr)
              (
                  (deriv(ibmmq_queue_depth{%(middlewareSelector)s}[15m]) > 0)
                and
                  (min_over_time(ibmmq_queue_depth{%(middlewareSelector)s}[15m]) > 0)
                and on (%(clusterPrefix)sinstance, qmgr, queue)
                  (ibmmq_queue_attribute_usage{%(middlewareSelector)s} == 1)
              )
            ||| % $._config,
            'for': '5m',
            labels: { severity: 'critical', system: 'ibmmq', guide_row: 'none' },
            annotations: {
              summary: 'IBM MQ sender channel stopped while its transmission queue fills.',
              description: utils.fold(|||
                Channel {{ $labels.channel }} ({{ $labels.type }}) of {{ $labels.qmgr }} ({{ $labels.instance }}) to
                {{ $labels.connname }} has been stopped (status {{ $value }}) for 5 minutes while a transmission
                queue of {{ $labels.qmgr }} has held messages for 15 minutes and keeps growing: messages for the
                partner pile up, and the queue fills (MQRC_Q_FULL 2053) if nobody starts the channel.
              |||),
              runbook_url: utils.runbook($._config, 'ibmmq', 'MiddlewareMqChannelStoppedXmitqGrowing'),
              source: 'operational rule, not from the guides (none)',
            },
          },
          // The channel series carry no XMITQ label, so the join is per queue manager: some transmission queue
          // (attribute_usage 1) that never emptied in 15 minutes and grows. A transmission queue served by a
          // running channel drains to 0 between bursts (min_over_time 0) and does not count; a stopped sender with
          // nothing to send at night does not page (its queue does not grow) and is MiddlewareMqChannelNotRunning.
          {
            alert: 'MiddlewareMqChannelRetrying',
            expr: 'ibmmq_channel_status{%(middlewareSelector)s} == 5' % $._config,
            'for': '10m',
            labels: { severity: 'warning', system: 'ibmmq', guide_row: 'none' },
            annotations: {
              summary: 'IBM MQ channel keeps retrying.',
              description: utils.fold(|||
                Channel {{ $labels.channel }} ({{ $labels.type }}) of {{ $labels.qmgr }} ({{ $labels.instance }}) to
                {{ $labels.connname }} has been retrying (status {{ $value }}) for 10 minutes: it cannot reach or
                start its partner and tries again on its short, then long retry interval.
              |||),
              runbook_url: utils.runbook($._config, 'ibmmq', 'MiddlewareMqChannelRetrying'),
              source: 'operational rule, not from the guides (none)',
            },
          },
          // MQCHS_RETRYING (5). A partner restarting or a short network cut recovers within a few short retries
          // (SHORTTMR 60 s by default); 10 minutes of retrying is an outage of the partner or the route.
          {
            alert: 'MiddlewareMqChannelInDoubt',
            expr: 'middleware_ibmmq_channel_indoubt{%(middlewareSelector)s} == 1' % $._config,
            'for': '15m',
            labels: { severity: 'warning', system: 'ibmmq', guide_row: 'none' },
            annotations: {
              summary: 'IBM MQ channel in doubt.',
              description: utils.fold(|||
                Channel {{ $labels.channel }} ({{ $labels.type }}) of {{ $labels.qmgr }} ({{ $labels.instance }}) has
                been in doubt (indoubt = {{ $value }}) at every read for 15 minutes: a batch was sent and its
                confirmation never came, so those messages are neither delivered nor back on the transmission queue.
              |||),
              runbook_url: utils.runbook($._config, 'ibmmq', 'MiddlewareMqChannelInDoubt'),
              source: 'operational rule, not from the guides (none)',
            },
          },
          // A busy sender is in doubt for milliseconds per batch and a read can catch it there; 15 minutes of
          // in-doubt reads (every one) is a batch whose confirmation is lost (partner gone mid-batch).
          {
            alert: 'MiddlewareMqChannelInstancesNearMax',
            expr: |||
              max by (%(clusterPrefix)sinstance, qmgr, channel) (ibmmq_channel_cur_inst{%(middlewareSelector)s, type="SVRCONN"})
                / max by (%(clusterPrefix)sinstance, qmgr, channel) (ibmmq_channel_attribute_max_inst{%(middlewareSelector)s, type="SVRCONN"} > 0)
                > on () group_left () middleware:threshold:mq_channel_instances_ratio
            ||| % $._config,
            'for': '5m',
            labels: { severity: 'warning', system: 'ibmmq', guide_row: 'none' },
            annotations: {
              summary: 'IBM MQ server-connection channel close to its MAXINST.',
              description: utils.fold(|||
                Server-connection channel {{ $labels.channel }} of {{ $labels.qmgr }} ({{ $labels.instance }}) has
                run {{ $value | humanizePercentage }} of its MAXINST instances for 5 minutes, above the threshold of
                {{ with query "middleware:threshold:mq_channel_instances_ratio" }}{{ . | first | value |
                humanizePercentage }}{{ end }}. At MAXINST new client connections are refused (AMQ9513, MQRC 2537).
              |||),
              runbook_url: utils.runbook($._config, 'ibmmq', 'MiddlewareMqChannelInstancesNearMax'),
              source: 'operational rule, not from the guides (none)',
            },
          },
          // cur_inst is on every series of the channel (one per connname): max by channel. The default MAXINST
          // 999999999 leaves the ratio tiny, so only channels with a real limit can fire; MAXINST(0) (no clients
          // allowed) is left out. MAXINSTC (per client address) cannot be checked: cur_inst is per channel.
          {
            alert: 'MiddlewareMqQueueNoReader',
            expr: |||
              (ibmmq_queue_depth{%(middlewareSelector)s, %(mqNoReaderQueueSelector)s} > 0)
              and on (%(clusterPrefix)sinstance, qmgr, queue) (ibmmq_queue_input_handles{%(middlewareSelector)s} == 0)
              unless on (%(clusterPrefix)sinstance, qmgr, queue) (ibmmq_queue_attribute_usage{%(middlewareSelector)s} == 1)
              unless on (%(clusterPrefix)sinstance, qmgr, queue)
                label_replace(middleware_ibmmq_qmgr_info{%(middlewareSelector)s}, "queue", "$1", "dlq", "(.+)")
            ||| % $._config,
            'for': '10m',
            labels: { severity: 'warning', system: 'ibmmq', guide_row: 'none' },
            annotations: {
              summary: 'IBM MQ queue holds messages and nobody reads it.',
              description: utils.fold(|||
                Queue {{ $labels.queue }} on {{ $labels.qmgr }} ({{ $labels.instance }}) has held messages ({{ $value
                | printf "%.0f" }} now) with no handle open for input (IPPROCS 0) for 10 minutes: its consumer is
                down or disconnected.
              |||),
              runbook_url: utils.runbook($._config, 'ibmmq', 'MiddlewareMqQueueNoReader'),
              source: 'operational rule, not from the guides (none)',
            },
          },
          // Transmission queues (read by their channel, MiddlewareMqChannel*), the queue manager's dead-letter queue
          // (DEADQ from middleware_ibmmq_qmgr_info) and the queues of mqNoReaderQueueSelector (backout, archive,
          // SYSTEM) are left out. A consumer that reconnects now and then (IPPROCS 0 for one read) resets for:.
          // $value is the depth.
          {
            alert: 'MiddlewareMqQueueMessageTooOld',
            expr: |||
              ibmmq_queue_oldest_message_age{%(middlewareSelector)s, %(mqMessageAgeQueueSelector)s}
                > on () group_left () middleware:threshold:mq_queue_oldest_message_age_seconds
              and on (%(clusterPrefix)sinstance, qmgr, queue) (middleware_ibmmq_queue_monitoring_enabled{%(middlewareSelector)s} == 1)
              unless on (%(clusterPrefix)sinstance, qmgr, queue)
                label_replace(middleware_ibmmq_qmgr_info{%(middlewareSelector)s}, "queue", "$1", "dlq", "(.+)")
            ||| % $._config,
            'for': '5m',
            labels: { severity: 'warning', system: 'ibmmq', guide_row: 'none' },
            annotations: {
              summary: 'IBM MQ queue holds an old message.',
              description: utils.fold(|||
                The oldest message on queue {{ $labels.queue }} of {{ $labels.qmgr }} ({{ $labels.instance }}) has
                been {{ $value | humanizeDuration }} old for 5 minutes, above the threshold of {{ with query
                "middleware:threshold:mq_queue_oldest_message_age_seconds" }}{{ . | first | value | humanizeDuration
                }}{{ end }}: it is not being consumed (a poison message, a selector nobody matches, a stalled reader).
              |||),
              runbook_url: utils.runbook($._config, 'ibmmq', 'MiddlewareMqQueueMessageTooOld'),
              source: 'operational rule, not from the guides (none)',
            },
          },
          // MSGAGE needs queue monitoring (MONQ); the exporter leaves the age out where it is off (mq_prometheus
          // reports 0, which looks healthy), and the rule requires monitoring_enabled 1 on top, so a queue whose
          // monitoring is off is MiddlewareMqQueueMonitoringOff, not a silent pass. The dead-letter queue is left
          // out: its messages are old by nature (MiddlewareMqDeadLetterQueueGrowing). $value is the age (s).
          {
            alert: 'MiddlewareMqQueueMonitoringOff',
            expr: |||
              count by (%(clusterPrefix)sinstance, qmgr) (
                middleware_ibmmq_queue_monitoring_enabled{%(middlewareSelector)s, %(mqMessageAgeQueueSelector)s} == 0
              )
            ||| % $._config,
            'for': '1h',
            labels: { severity: 'info', system: 'ibmmq', guide_row: 'none' },
            annotations: {
              summary: 'IBM MQ queue monitoring off on watched queues.',
              description: utils.fold(|||
                {{ $value | printf "%.0f" }} watched queues of {{ $labels.qmgr }} ({{ $labels.instance }}) have had
                queue monitoring off (MONQ(OFF)) for an hour: their oldest-message age, queue time and last put/get
                are not kept, so MiddlewareMqQueueMessageTooOld cannot fire for them.
              |||),
              runbook_url: utils.runbook($._config, 'ibmmq', 'MiddlewareMqQueueMonitoringOff'),
              source: 'operational rule, not from the guides (none)',
            },
          },
          // One alert per queue manager (MONQ is OFF by default, so a per-queue advice would flood); the queues are
          // those of mqMessageAgeQueueSelector. $value is how many.
          {
            alert: 'MiddlewareMqDeadLetterQueueGrowing',
            expr: |||
              delta(ibmmq_queue_depth{%(middlewareSelector)s}[15m]) > 0
              and on (%(clusterPrefix)sinstance, qmgr, queue)
                label_replace(middleware_ibmmq_qmgr_info{%(middlewareSelector)s}, "queue", "$1", "dlq", "(.+)")
            ||| % $._config,
            'for': '5m',
            labels: { severity: 'warning', system: 'ibmmq', guide_row: 'none' },
            annotations: {
              summary: 'Messages arrive on the IBM MQ dead-letter queue.',
              description: utils.fold(|||
                The dead-letter queue {{ $labels.queue }} of {{ $labels.qmgr }} ({{ $labels.instance }}) has grown by
                {{ $value | printf "%.0f" }} messages in 15 minutes: messages the queue manager could not deliver
                (unknown queue, queue full, put inhibited, not authorised) are piling up there.
              |||),
              runbook_url: utils.runbook($._config, 'ibmmq', 'MiddlewareMqDeadLetterQueueGrowing'),
              source: 'operational rule, not from the guides (none)',
            },
          },
          // The queue manager's own DEADQ (middleware_ibmmq_qmgr_info's dlq label, copied into `queue`), not a name
          // pattern. A dead-letter handler that drains it keeps delta at 0. $value is the growth over 15 minutes.
          {
            alert: 'MiddlewareMqQueueFileNearlyFull',
            expr: |||
              ibmmq_queue_qfile_current_size{%(middlewareSelector)s} / (ibmmq_queue_qfile_max_size{%(middlewareSelector)s} > 0)
                > on () group_left () middleware:threshold:mq_queue_file_ratio
            ||| % $._config,
            'for': '10m',
            labels: { severity: 'warning', system: 'ibmmq', guide_row: 'none' },
            annotations: {
              summary: 'IBM MQ queue file nearly full.',
              description: utils.fold(|||
                The file of queue {{ $labels.queue }} on {{ $labels.qmgr }} ({{ $labels.instance }}) has been at {{
                $value | humanizePercentage }} of the size it may grow to (CURFSIZE / CURMAXFS) for 10 minutes, above
                the threshold of {{ with query "middleware:threshold:mq_queue_file_ratio" }}{{ . | first | value |
                humanizePercentage }}{{ end }}. When it is full, puts fail with MQRC_Q_SPACE_NOT_AVAILABLE (2056).
              |||),
              runbook_url: utils.runbook($._config, 'ibmmq', 'MiddlewareMqQueueFileNearlyFull'),
              source: 'operational rule, not from the guides (none)',
            },
          },
          // MQ 9.1.5 and later (CURFSIZE, CURMAXFS in MB). $value is the share (0-1).
          {
            alert: 'MiddlewareMqRecoveryLogNearlyFull',
            expr: |||
              middleware_ibmmq_qmgr_log_in_use_percent{%(middlewareSelector)s}
                > on () group_left () middleware:threshold:mq_log_in_use_percent
            ||| % $._config,
            'for': '10m',
            labels: { severity: 'critical', system: 'ibmmq', guide_row: 'none' },
            annotations: {
              summary: 'IBM MQ recovery log nearly full.',
              description: utils.fold(|||
                Queue manager {{ $labels.qmgr }} ({{ $labels.instance }}) has had {{ $value }} % of its primary log
                space in use (LOGINUSE) for 10 minutes, above the threshold of {{ with query
                "middleware:threshold:mq_log_in_use_percent" }}{{ . | first | value }}{{ end }} %: a long unit of
                work pins the log; when the active log is full the queue manager backs it out and puts and gets
                fail with MQRC_RESOURCE_PROBLEM (2102).
              |||),
              runbook_url: utils.runbook($._config, 'ibmmq', 'MiddlewareMqRecoveryLogNearlyFull'),
              source: 'operational rule, not from the guides (none)',
            },
          },
          // DISPLAY QMSTATUS LOGINUSE, percent of the primary log space needed for restart recovery (above 100:
          // secondary extents in use). Critical: the active log (primary plus secondary extents, circular or
          // linear) cannot grow past its configured extents, and what happens at the end is an outage.
          // ---- issue 39: Native HA and the recovery log's file system -------------------------------------------
          {
            alert: 'MiddlewareMqNativeHaReplicaOutOfSync',
            expr: 'middleware_ibmmq_nha_in_sync{%(middlewareSelector)s} == 0' % $._config,
            'for': '10m',
            labels: { severity: 'warning', system: 'ibmmq', guide_row: 'none' },
            annotations: {
              summary: 'IBM MQ Native HA replica out of sync.',
              description: utils.fold(|||
                Native HA replica {{ $labels.nha }} of queue manager {{ $labels.qmgr }} ({{ $labels.instance }}) has
                not been in sync with the active instance (INSYNC(NO)) for 10 minutes: it could not take over without
                losing data, so the group has one failover target fewer. Its backlog is in
                middleware_ibmmq_nha_backlog_bytes.
              |||),
              runbook_url: utils.runbook($._config, 'ibmmq', 'MiddlewareMqNativeHaReplicaOutOfSync'),
              source: 'operational rule, not from the guides (none)',
            },
          },
          // DISPLAY QMSTATUS TYPE(NATIVEHA) on the active instance (runmqsc back-end). One replica out of sync: the
          // queue manager runs on, but one failover target fewer (the other replica and the active still make a
          // quorum): a ticket, not a page. A replica restarted (a rolling upgrade, a rescheduled pod) resynchronises
          // in a few minutes: for: 10m lets that pass. $value is 0.
          {
            alert: 'MiddlewareMqNativeHaNoReplicaInSync',
            expr: 'sum by (%(clusterPrefix)sjob, instance, qmgr) (middleware_ibmmq_nha_in_sync{%(middlewareSelector)s}) == 0' % $._config,
            'for': '5m',
            labels: { severity: 'critical', system: 'ibmmq', guide_row: 'none' },
            annotations: {
              summary: 'IBM MQ Native HA queue manager has no replica in sync.',
              description: utils.fold(|||
                No Native HA replica of queue manager {{ $labels.qmgr }} ({{ $labels.instance }}) has been in sync
                with the active instance for 5 minutes: the group has lost its quorum for log writes, persistent
                messaging stalls, and a failure of the active instance would lose the queue manager.
              |||),
              runbook_url: utils.runbook($._config, 'ibmmq', 'MiddlewareMqNativeHaNoReplicaInSync'),
              source: 'operational rule, not from the guides (none)',
            },
          },
          // No replica in sync: the active instance has no quorum for its log writes (two of three instances), so
          // persistent work stops and a failure of the active now loses the queue manager: someone must act. Only
          // when replicas are reported at all (sum over none is no series). $value is the replicas in sync (0).
          {
            alert: 'MiddlewareMqLogFileSystemNearlyFull',
            expr: |||
              ibmmq_qmgr_log_file_system_in_use_bytes{%(middlewareSelector)s}
                / (ibmmq_qmgr_log_file_system_max_bytes{%(middlewareSelector)s} > 0)
                > on () group_left () middleware:threshold:mq_log_file_system_warning_ratio
            ||| % $._config,
            'for': '30m',
            labels: { severity: 'warning', system: 'ibmmq', guide_row: 'none' },
            annotations: {
              summary: 'IBM MQ recovery log file system nearly full.',
              description: utils.fold(|||
                The file system of the recovery log of {{ $labels.qmgr }} ({{ $labels.instance }}) has been {{ $value |
                humanizePercentage }} full for 30 minutes (DISK/Log publications), above the threshold of {{ with
                query "middleware:threshold:mq_log_file_system_warning_ratio" }}{{ . | first | value |
                humanizePercentage }}{{ end }}. When it is full the queue manager cannot write its log and stops.
              |||),
              runbook_url: utils.runbook($._config, 'ibmmq', 'MiddlewareMqLogFileSystemNearlyFull'),
              source: 'operational rule, not from the guides (none)',
            },
          },
          {
            alert: 'MiddlewareMqLogFileSystemNearlyFull',
            expr: |||
              ibmmq_qmgr_log_file_system_in_use_bytes{%(middlewareSelector)s}
                / (ibmmq_qmgr_log_file_system_max_bytes{%(middlewareSelector)s} > 0)
                > on () group_left () middleware:threshold:mq_log_file_system_critical_ratio
            ||| % $._config,
            'for': '10m',
            labels: { severity: 'critical', system: 'ibmmq', guide_row: 'none' },
            annotations: {
              summary: 'IBM MQ recovery log file system nearly full.',
              description: utils.fold(|||
                The file system of the recovery log of {{ $labels.qmgr }} ({{ $labels.instance }}) has been {{ $value |
                humanizePercentage }} full for 10 minutes (DISK/Log publications), above the threshold of {{ with
                query "middleware:threshold:mq_log_file_system_critical_ratio" }}{{ . | first | value |
                humanizePercentage }}{{ end }}. When it is full the queue manager cannot write its log and stops.
              |||),
              runbook_url: utils.runbook($._config, 'ibmmq', 'MiddlewareMqLogFileSystemNearlyFull'),
              source: 'operational rule, not from the guides (none)',
            },
          },
          // DISK/Log publications (amqsrua, runmqsc back-end): the file system of the recovery log, node-mixin
          // style in two steps. Linear logging grows it until the extents are archived and freed; when it is full
          // the queue manager cannot write its log and stops. $value is the share in use (0-1).
          {
            alert: 'MiddlewareMqCommandServerNotRunning',
            expr: 'ibmmq_qmgr_command_server_status{%(middlewareSelector)s} != 2' % $._config,
            'for': '5m',
            labels: { severity: 'warning', system: 'ibmmq', guide_row: 'none' },
            annotations: {
              summary: 'IBM MQ command server not running.',
              description: utils.fold(|||
                The command server of {{ $labels.qmgr }} ({{ $labels.instance }}) has reported status {{ $value }}
                (0 stopped, 1 starting, 3 stopping, 4 retrying; 2 is running) for 5 minutes: PCF and REST
                administration (and monitoring through them) get no answer.
              |||),
              runbook_url: utils.runbook($._config, 'ibmmq', 'MiddlewareMqCommandServerNotRunning'),
              source: 'operational rule, not from the guides (none)',
            },
          },
          // Only the runmqsc back-end can see a stopped command server (runmqsc does not go through it); with rest
          // or pcf the exporter's own request fails and MiddlewareMqBackendFailing fires instead (runbook).
          {
            alert: 'MiddlewareMqChannelInitiatorNotRunning',
            expr: 'ibmmq_qmgr_channel_initiator_status{%(middlewareSelector)s} != 2' % $._config,
            'for': '5m',
            labels: { severity: 'warning', system: 'ibmmq', guide_row: 'none' },
            annotations: {
              summary: 'IBM MQ channel initiator not running.',
              description: utils.fold(|||
                The channel initiator of {{ $labels.qmgr }} ({{ $labels.instance }}) has reported status {{ $value }}
                (0 stopped, 1 starting, 3 stopping, 4 retrying; 2 is running) for 5 minutes: triggered sender
                channels do not start, so messages for other queue managers stay on the transmission queues.
              |||),
              runbook_url: utils.runbook($._config, 'ibmmq', 'MiddlewareMqChannelInitiatorNotRunning'),
              source: 'operational rule, not from the guides (none)',
            },
          },
          // MQSVC_STATUS from DISPLAY QMSTATUS CHINIT. $value is the status.
          {
            alert: 'MiddlewareMqBackendFailing',
            expr: 'middleware_ibmmq_backend_success{%(middlewareSelector)s} == 0' % $._config,
            'for': '10m',
            labels: { severity: 'warning', system: 'ibmmq', guide_row: 'none' },
            annotations: {
              summary: 'Exporter cannot read an IBM MQ queue manager.',
              description: utils.fold(|||
                The exporter on {{ $labels.instance }} has not read queue manager {{ $labels.qmgr }} through its {{
                $labels.backend }} back-end for 10 minutes (backend_success = {{ $value }}, expected 1): its queue
                and channel figures are missing and ibmmq_qmgr_status reads 0. The error is in /api/v1/collectors.
              |||),
              runbook_url: utils.runbook($._config, 'ibmmq', 'MiddlewareMqBackendFailing'),
              source: 'operational rule, not from the guides (none)',
            },
          },
        ],
      },
    ],
  },
}
