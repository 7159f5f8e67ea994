// IBM MQ alerts: queue-manager CPU saturation (MQ-CPU), queue depth (MQ-DEPTH), queue-manager, channel and
// back-end state.
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
            expr: 'ibmmq_channel_status_squash{%(middlewareSelector)s, type!~"SVRCONN|RCVR|CLUSRCVR"} == 0' % $._config,
            'for': '10m',
            labels: { severity: 'warning', system: 'ibmmq', guide_row: 'none' },
            annotations: {
              summary: 'IBM MQ channel stopped.',
              description: utils.fold(|||
                Channel {{ $labels.channel }} ({{ $labels.type }}) of {{ $labels.qmgr }} ({{ $labels.instance }}) to
                {{ $labels.connname }} has been stopped or inactive for 10 minutes (squashed status {{ $value }}; 2
                is running). Messages for its partner wait on the transmission queue.
              |||),
              runbook_url: utils.runbook($._config, 'ibmmq', 'MiddlewareMqChannelNotRunning'),
              source: 'operational rule, not from the guides (none)',
            },
          },
          // Server-connection channels and receiving ends (RCVR, CLUSRCVR) are inactive by design while no client
          // or partner uses them; their partner's sender channel shows the problem.
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
