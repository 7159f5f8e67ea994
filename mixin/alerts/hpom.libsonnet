// HP Operations Manager (HPOM/OMU) management server: alert rules.
//
// Requirements: the HPOM guide rows of docs/sources.md (HPOM-ACK, -CMA, -ACTIVE, -GUI, -QUEUE,
// -VAR-GUITHREAD, -VAR-ACKLIMIT, -VAR-COMMIT, -AUTOKEYS, -MSI, -SLOD, -MOM, -MEM, -KERNEL; recording rules for the
// dashboard figures of -THROUGHPUT, -HISTDL and -MOM: ../rules/hpom.libsonnet). Source document: the
// HP Operations Manager for UNIX 8.21/8.30 Performance Guide (HP, March 2009).
// Metrics: the `hpom`, `process` and `host` collectors (exporter/systems/hpom/README.md, docs/metrics.md). Runbooks: docs/runbooks/hpom.md. Unit tests: tests/rules/hpom.test.yml.
//
// Not encoded here: HPOM-ORA (Oracle parameters of the HPOM database: alerts/oracle.yml).
//
// Rules that look at host figures (memory, kernel parameters) are limited to HPOM management servers, i.e.
// instances where at least one process of the `hpom_server` process group runs.

local utils = import '../lib/utils.libsonnet';

// The description of the three MiddlewareHpomServerVariableNotAsRecommended rules.
local variableDescription = utils.fold(|||
  {{ $labels.variable }} on {{ $labels.instance }} does not follow the guide's Table 1 (follows_guide
  = {{ $value }}): {{ with printf "middleware_hpom_server_variable_info{instance=%q,variable=%q}"
  $labels.instance $labels.variable | query }}{{ with first . }}it is "{{ label "value" . }}" ({{
  label "origin" . }}); recommended: {{ label "guide" . }}{{ end }}{{ else }}its value is unknown{{
  end }}. Set it with `ovconfchg -ovrg server -ns opc -set {{ $labels.variable }} <value>`.
|||);

{
  prometheusAlerts+:: {
    groups+: [
      // -------------------------------------------------------------------------------------------------------
      // Alerts.
      // -------------------------------------------------------------------------------------------------------
      {
        name: 'middleware-hpom',
        rules: [
          // HPOM-ACK: a ticket, not a page. By the time anyone could act the bulk is over (the guide's 10,000
          // acknowledgements had left every GUI after 95-98 s) and the server recovers by itself; what is left to
          // do is to talk to whoever acknowledges in such bulks, in office hours. The window gauge counts the
          // messages acknowledged in the last window_seconds (60 s by default), so one bulk is visible for about a
          // minute; max_over_time over 30 minutes keeps the ticket open for half an hour after the last oversized
          // bulk (an operator working through a backlog in several large bulks makes one ticket, not one per
          // bulk), after which it resolves by itself. `for: 1m`: the bulk is the event itself; a longer for: would
          // only delay the ticket, as max_over_time holds the value anyway.
          // Reading of the guide: its summary says to acknowledge "less than 5,000 messages", the test's
          // conclusions "no more than 5,000"; the rule follows the conclusions: a bulk of exactly 5,000 is allowed,
          // above 5,000 fires.
          {
            alert: 'MiddlewareHpomAcknowledgementBulkTooLarge',
            expr: |||
              max_over_time(middleware_hpom_window_acknowledged_messages{%(middlewareSelector)s}[30m])
                > on () group_left () middleware:threshold:hpom_ack_bulk
            ||| % $._config,
            'for': '1m',
            labels: { severity: 'warning', system: 'hpom', guide_row: 'HPOM-ACK' },
            annotations: {
              summary: 'HPOM messages are being acknowledged in bulks larger than the guide allows.',
              description: utils.fold(|||
                Up to {{ $value | printf "%.0f" }} messages were acknowledged on {{ $labels.instance }} within one
                query window in the last 30 minutes, more than the {{ with query
                "middleware:threshold:hpom_ack_bulk" }}{{ . | first | value | printf "%.0f" }}{{ end }} the guide
                allows at a time (its conclusions say "no more than 5,000"; the summary's "less than 5,000" would
                also count a bulk of exactly 5,000). Acknowledging 10,000 messages with 5 Java GUIs open took 95-98
                s to reach every GUI, and moving them to the history table drove the database disk to 97 %
                utilisation; acknowledge in smaller bulks.
              |||),
              runbook_url: utils.runbook($._config, 'hpom', 'MiddlewareHpomAcknowledgementBulkTooLarge'),
              source: utils.fold(|||
                HP Operations Manager for UNIX 8.21/8.30 Performance Guide, Test: Message Acknowledgment, Tables
                21-22 and Conclusions; Summary of Performance Findings (HPOM-ACK)
              |||),
            },
          },
          // HPOM-ACK: acknowledged messages that stay in the active table (mark-only mode, OPC_DIRECT_ACKN_LIMIT
          // 0, or bulks above the limit) pile up until the message mover takes them to the history table; a
          // backlog above the bulk size means the next move is itself a bulk larger than the guide allows.
          {
            alert: 'MiddlewareHpomAcknowledgedBacklog',
            expr: |||
              sum without (severity) (middleware_hpom_acknowledged_active_messages{%(middlewareSelector)s})
                > on () group_left () middleware:threshold:hpom_ack_bulk
            ||| % $._config,
            'for': '30m',
            labels: { severity: 'warning', system: 'hpom', guide_row: 'HPOM-ACK' },
            annotations: {
              summary: 'Acknowledged HPOM messages are piling up in the active message table.',
              description: utils.fold(|||
                {{ $value | printf "%.0f" }} acknowledged messages on {{ $labels.instance }} have stayed in the
                active message table for 30 minutes, more than the {{ with query
                "middleware:threshold:hpom_ack_bulk" }}{{ . | first | value | printf "%.0f" }}{{ end }} the guide
                allows to be acknowledged at a time: they are not being moved to the history table, and moving them
                later will be a bulk of that size.
              |||),
              runbook_url: utils.runbook($._config, 'hpom', 'MiddlewareHpomAcknowledgedBacklog'),
              source: utils.fold(|||
                HP Operations Manager for UNIX 8.21/8.30 Performance Guide, Test: Message Acknowledgment, Tables
                21-22 and Conclusions (HPOM-ACK)
              |||),
            },
          },
          // HPOM-CMA: advice, not a page. The guide's summary calls the extra slowdown from CMAs "low", the test's
          // conclusions "noticeable and non-linear" (Table 19: 212.8 / 192.3 / 112.4 msg/s at 1 / 10 / 50 CMAs);
          // either way nobody has to act at night: the cure is in the policies and integrations that add the
          // attributes. The figure (the most CMAs on any active message) follows the configuration, so it waits an
          // hour like the other advice rules. "At or below 10 CMAs per message": 10 is allowed, above 10 fires.
          {
            alert: 'MiddlewareHpomCustomAttributesOverLimit',
            expr: |||
              middleware_hpom_cma_max_per_message{%(middlewareSelector)s}
                > on () group_left () middleware:threshold:hpom_cma_per_message
            ||| % $._config,
            'for': '1h',
            labels: { severity: 'info', system: 'hpom', guide_row: 'HPOM-CMA' },
            annotations: {
              summary: 'HPOM active messages carry more custom message attributes than the guide recommends.',
              description: utils.fold(|||
                An active message on {{ $labels.instance }} carries {{ $value | printf "%.0f" }} custom message
                attributes, more than the {{ with query "middleware:threshold:hpom_cma_per_message" }}{{ . | first |
                value | printf "%.0f" }}{{ end }} per message the guide recommends ({{ with printf
                "middleware_hpom_messages_over_cma_limit{instance=%q}" $labels.instance | query }}{{ . | first |
                value | printf "%.0f" }}{{ else }}unknown number of{{ end }} messages over the exporter's
                cma_limit), for an hour. Between 1 and 50 CMAs the guide measured message throughput falling from
                212.8 to 112.4 msg/s and Java GUI start-up rising from 13.5 to 51.0 s; it calls the extra cost low
                and recommends at most 10 CMAs per message.
              |||),
              runbook_url: utils.runbook($._config, 'hpom', 'MiddlewareHpomCustomAttributesOverLimit'),
              source: utils.fold(|||
                HP Operations Manager for UNIX 8.21/8.30 Performance Guide, Test: Varying the Number of CMAs, Tables
                18-20; Summary of Performance Findings (HPOM-CMA)
              |||),
            },
          },
          // HPOM-ACTIVE. The rule in the guide is "50,000 and more", hence >=.
          {
            alert: 'MiddlewareHpomActiveMessagesHigh',
            expr: |||
              sum without (severity) (middleware_hpom_active_messages{%(middlewareSelector)s})
                >= on () group_left () middleware:threshold:hpom_active_messages
            ||| % $._config,
            'for': '15m',
            labels: { severity: 'warning', system: 'hpom', guide_row: 'HPOM-ACTIVE' },
            annotations: {
              summary: 'Too many active HPOM messages for fast Java GUI start-up.',
              description: utils.fold(|||
                {{ $labels.instance }} holds {{ $value | printf "%.0f" }} active (unacknowledged) messages, at or
                above {{ with query "middleware:threshold:hpom_active_messages" }}{{ . | first | value | printf
                "%.0f" }}{{ end }}. Every Java GUI log-on loads all active messages into its opcuiwww process; with
                50,000 messages the guide measured start-up times of 15.7-77.6 s against 6.6-9.2 s with 5,000.
              |||),
              runbook_url: utils.runbook($._config, 'hpom', 'MiddlewareHpomActiveMessagesHigh'),
              source: utils.fold(|||
                HP Operations Manager for UNIX 8.21/8.30 Performance Guide, Test: Varying the Number of Managed
                Nodes and Messages, Tables 16-17 (HPOM-ACTIVE)
              |||),
            },
          },
          // HPOM-QUEUE: the message manager queue file keeps growing, and holds more than the minimum size
          // (hpom_queue_min_bytes, 1 MiB: about a thousand messages, seconds of work). Below it, a busy server's
          // queue that merely comes and goes by some KB has a positive 10-minute slope about half the time and
          // ticketed on noise (scenario hpom-busy-healthy); an empty queue file that HPOM truncates and refills is
          // not growth either.
          {
            alert: 'MiddlewareHpomMessageQueueGrowing',
            expr: |||
              deriv(middleware_hpom_queue_size_bytes{%(middlewareSelector)s, queue="msgmgrq"}[10m]) > 0
              and
              middleware_hpom_queue_size_bytes{%(middlewareSelector)s, queue="msgmgrq"}
                > on () group_left () middleware:threshold:hpom_queue_min_bytes
            ||| % $._config,
            'for': '15m',
            labels: { severity: 'warning', system: 'hpom', guide_row: 'HPOM-QUEUE' },
            annotations: {
              summary: 'The HPOM message manager queue (msgmgrq) keeps growing.',
              description: utils.fold(|||
                The msgmgrq queue file on {{ $labels.instance }} has been growing for 15 minutes, now by {{ $value |
                humanize1024 }}B/s (size {{ with printf
                "middleware_hpom_queue_size_bytes{instance=%q,queue='msgmgrq'}" $labels.instance | query }}{{ . |
                first | value | humanize1024 }}B{{ end }}): messages arrive faster than opcmsgm processes them (the
                guide measured 310 msg/s, 410 with OPCMSGM_USE_GUI_THREAD, against up to 500 msg/s from a single
                HTTPS agent).
              |||),
              runbook_url: utils.runbook($._config, 'hpom', 'MiddlewareHpomMessageQueueGrowing'),
              source: utils.fold(|||
                HP Operations Manager for UNIX 8.21/8.30 Performance Guide, Test: Detailed Inspection of Message
                Processing; Test: Message Storm (HPOM-QUEUE)
              |||),
            },
          },
          // HPOM-QUEUE: at its trend over the last 10 minutes, msgmgrq will not be empty within the allowed
          // recovery time (the storm test's 412 s), and it holds more than the minimum size.
          {
            alert: 'MiddlewareHpomMessageQueueNotDraining',
            expr: |||
              (
                  middleware_hpom_queue_size_bytes{%(middlewareSelector)s, queue="msgmgrq"}
                    / -deriv(middleware_hpom_queue_size_bytes{%(middlewareSelector)s, queue="msgmgrq"}[5m])
                    > on () group_left () middleware:threshold:hpom_queue_recovery_seconds
                or
                  (
                    sum_over_time((deriv(middleware_hpom_queue_size_bytes{%(middlewareSelector)s, queue="msgmgrq"}[5m]) >= bool 0)[10m:1m])
                      >= 10
                  ) * 0 + Inf
              )
              and
              middleware_hpom_queue_size_bytes{%(middlewareSelector)s, queue="msgmgrq"}
                > on () group_left () middleware:threshold:hpom_queue_min_bytes
            ||| % $._config,
            'for': '10m',
            labels: { severity: 'critical', system: 'hpom', guide_row: 'HPOM-QUEUE' },
            annotations: {
              summary: 'The HPOM message manager queue (msgmgrq) will not drain within the allowed recovery time.',
              description: utils.fold(|||
                The msgmgrq queue file on {{ $labels.instance }} (now {{ with printf
                "middleware_hpom_queue_size_bytes{instance=%q,queue='msgmgrq'}" $labels.instance | query }}{{ . |
                first | value | humanize1024 }}B{{ end }}) holds {{ $value | printf "%.0f" }} s of work at its drain
                rate over the last 5 minutes (+Inf: it has not shrunk for 10 minutes), more than the {{ with query
                "middleware:threshold:hpom_queue_recovery_seconds" }}{{ . | first | value | printf "%.0f" }}{{ end
                }} s allowed. In the guide's storm test 100,000 queued messages drained at 272 msg/s on average and
                were gone 412 s after the storm began.
              |||),
              runbook_url: utils.runbook($._config, 'hpom', 'MiddlewareHpomMessageQueueNotDraining'),
              source: utils.fold(|||
                HP Operations Manager for UNIX 8.21/8.30 Performance Guide, Test: Message Storm, Interpretation and
                Conclusions (HPOM-QUEUE)
              |||),
            },
          },
          // HPOM-QUEUE as the guide states it: the queue must be worked off within the allowed recovery time. The
          // work held is depth / drain rate, the drain rate the queue's slope over the last 5 minutes (a short
          // window, so that a drain counts as soon as it starts; a 10-minute window still carried the growth phase
          // and paged during a healthy drain). A queue that has not shrunk in any 5-minute window for 10 minutes
          // holds unbounded work (+Inf). for: 10m, so that a backlog that clears itself in minutes does not page. Reading of the guide: its 412 s is counted from the start of the storm,
          // not the drain time of a backlog; used here, as a default, as the most work the queue may hold.
          //
          // Operational: an HPOM server process reported by `opcsv -status` (or an `ovc -status` component) is
          // not running. Only 0 is down: 2 (Starting, Stopping, ... : in transition) and 3 (not running, but listed
          // in the collector's expected_stopped, by default ttd, perfalarm and perfd) do not page; components in
          // ignore_processes are not reported at all.
          {
            alert: 'MiddlewareHpomServerProcessDown',
            expr: 'middleware_hpom_server_process_up{%(middlewareSelector)s} == 0' % $._config,
            'for': '5m',
            labels: { severity: 'critical', system: 'hpom', guide_row: 'none' },
            annotations: {
              summary: 'An HPOM server process is not running.',
              description: utils.fold(|||
                {{ $labels.process }} on {{ $labels.instance }} has not been running for 5 minutes according to `{{
                $labels.source }} -status` (up = {{ $value }}).
              |||),
              runbook_url: utils.runbook($._config, 'hpom', 'MiddlewareHpomServerProcessDown'),
              source: 'exporter/systems/hpom/README.md, sources opcsv and ovc (none)',
            },
          },
          // Operational: a process or component has stayed in a transitional state (Starting, Stopping,
          // Restarting, Aborting, Initializing; up = 2) for 30 minutes. A start or stop takes seconds to minutes;
          // one that never finishes (ovbbccb "Starting" without a pid) leaves the component unusable.
          {
            alert: 'MiddlewareHpomServerProcessStuckInTransition',
            expr: 'middleware_hpom_server_process_up{%(middlewareSelector)s} == 2' % $._config,
            'for': '30m',
            labels: { severity: 'warning', system: 'hpom', guide_row: 'none' },
            annotations: {
              summary: 'An HPOM server process has been starting or stopping for a long time.',
              description: utils.fold(|||
                {{ $labels.process }} on {{ $labels.instance }} has been in a transitional state (Starting,
                Stopping, ...) for 30 minutes according to `{{ $labels.source }} -status` (up = {{ $value }}).
              |||),
              runbook_url: utils.runbook($._config, 'hpom', 'MiddlewareHpomServerProcessStuckInTransition'),
              source: 'exporter/systems/hpom/README.md, sources opcsv and ovc (none)',
            },
          },
          // HPOM-GUI: little CPU idle while the opcuiwww processes (one per Java GUI session) take more than
          // half of the busy CPU. $value is the host's idle ratio.
          {
            alert: 'MiddlewareHpomJavaGuiCpuSaturation',
            expr: |||
              (
                avg by (%(clusterPrefix)sinstance, job) (rate(middleware_host_cpu_seconds_total{%(middlewareSelector)s, mode="idle"}[5m]))
                  < on () group_left () middleware:threshold:hpom_gui_idle_ratio
              )
              and on (%(clusterPrefix)sinstance)
              (
                sum by (%(clusterPrefix)sinstance, job) (rate(middleware_process_group_cpu_seconds_total{%(middlewareSelector)s, group="hpom_java_gui"}[5m]))
                  / on (%(clusterPrefix)sinstance) middleware_host_cpus{%(middlewareSelector)s}
                > on (%(clusterPrefix)sinstance)
                (1 - avg by (%(clusterPrefix)sinstance, job) (rate(middleware_host_cpu_seconds_total{%(middlewareSelector)s, mode="idle"}[5m])))
                  * on () group_left () middleware:threshold:hpom_gui_busy_share
              )
            ||| % $._config,
            'for': '10m',
            labels: { severity: 'warning', system: 'hpom', guide_row: 'HPOM-GUI' },
            annotations: {
              summary: "HPOM Java GUI processes (opcuiwww) are saturating the management server's CPU.",
              description: utils.fold(|||
                Only {{ $value | humanizePercentage }} of the CPU on {{ $labels.instance }} is idle (threshold {{
                with query "middleware:threshold:hpom_gui_idle_ratio" }}{{ . | first | value | humanizePercentage
                }}{{ end }}) and the {{ with printf
                "sum(middleware_process_group_processes{group='hpom_java_gui',instance=%q})" $labels.instance |
                query }}{{ . | first | value | printf "%.0f" }}{{ end }} opcuiwww processes use more than {{ with
                query "middleware:threshold:hpom_gui_busy_share" }}{{ . | first | value | humanizePercentage }}{{
                end }} of the busy CPU. Once no CPU is free, message throughput falls faster with every further Java
                GUI.
              |||),
              runbook_url: utils.runbook($._config, 'hpom', 'MiddlewareHpomJavaGuiCpuSaturation'),
              source: utils.fold(|||
                HP Operations Manager for UNIX 8.21/8.30 Performance Guide, Test: Varying the Number of Active Java
                GUIs, Interpretation and Conclusions; Summary of Performance Findings (HPOM-GUI)
              |||),
            },
          },
          // HPOM-GUI advice: more Java GUI sessions than CPUs.
          {
            alert: 'MiddlewareHpomJavaGuisExceedCpus',
            expr: |||
              sum by (%(clusterPrefix)sinstance, job) (middleware_process_group_processes{%(middlewareSelector)s, group="hpom_java_gui"})
                > on (%(clusterPrefix)sinstance) group_left () middleware_host_cpus{%(middlewareSelector)s}
            ||| % $._config,
            'for': '1h',
            labels: { severity: 'info', system: 'hpom', guide_row: 'HPOM-GUI' },
            annotations: {
              summary: 'More HPOM Java GUI sessions than CPUs on the management server.',
              description: utils.fold(|||
                {{ $value | printf "%.0f" }} Java GUI sessions (opcuiwww processes) have been running on {{
                $labels.instance }} for an hour, more than its {{ with printf "middleware_host_cpus{instance=%q}"
                $labels.instance | query }}{{ . | first | value | printf "%.0f" }}{{ end }} CPUs. Each session has
                its own opcuiwww process; the guide advises starting only the GUIs needed at the moment.
              |||),
              runbook_url: utils.runbook($._config, 'hpom', 'MiddlewareHpomJavaGuisExceedCpus'),
              source: utils.fold(|||
                HP Operations Manager for UNIX 8.21/8.30 Performance Guide, Summary of Performance Findings
                (Management server, Java GUI); Test: Varying the Number of Active Java GUIs (HPOM-GUI)
              |||),
            },
          },
          // HPOM-MEM: Appendix B, Table 31, with the GUI sessions running now as the operator counts.
          {
            alert: 'MiddlewareHpomMemoryBelowFormula',
            expr: |||
              middleware_host_memory_total_bytes{%(middlewareSelector)s}
                < on (%(clusterPrefix)sinstance) group_left ()
                (
                    scalar(middleware:threshold:hpom_mem_base_mib)
                  + scalar(middleware:threshold:hpom_mem_per_motif_mib)
                    * sum by (%(clusterPrefix)sinstance) (middleware_process_group_processes{%(middlewareSelector)s, group="hpom_motif_gui"})
                  + on (%(clusterPrefix)sinstance)
                    scalar(middleware:threshold:hpom_mem_per_java_mib)
                    * sum by (%(clusterPrefix)sinstance) (middleware_process_group_processes{%(middlewareSelector)s, group="hpom_java_gui"})
                ) * 1048576
              and on (%(clusterPrefix)sinstance)
                (max by (%(clusterPrefix)sinstance) (middleware_process_group_processes{%(middlewareSelector)s, group="hpom_server"}) > 0)
            ||| % $._config,
            'for': '30m',
            labels: { severity: 'warning', system: 'hpom', guide_row: 'HPOM-MEM' },
            annotations: {
              summary: "The HPOM management server has less RAM than the guide's formula asks for.",
              description: utils.fold(|||
                {{ $labels.instance }} has {{ $value | humanize1024 }}B of RAM, less than the {{ with printf
                "(scalar(middleware:threshold:hpom_mem_base_mib) +
                scalar(middleware:threshold:hpom_mem_per_motif_mib) *
                sum(middleware_process_group_processes{group='hpom_motif_gui',instance=%q}) +
                scalar(middleware:threshold:hpom_mem_per_java_mib) *
                sum(middleware_process_group_processes{group='hpom_java_gui',instance=%q})) * 1048576"
                $labels.instance $labels.instance | query }}{{ . | first | value | humanize1024 }}B{{ end }} that
                Appendix B asks for with the {{ with printf
                "sum(middleware_process_group_processes{group='hpom_motif_gui',instance=%q})" $labels.instance |
                query }}{{ . | first | value | printf "%.0f" }}{{ end }} Motif and {{ with printf
                "sum(middleware_process_group_processes{group='hpom_java_gui',instance=%q})" $labels.instance |
                query }}{{ . | first | value | printf "%.0f" }}{{ end }} Java GUI sessions running now ({{ with
                query "middleware:threshold:hpom_mem_base_mib" }}{{ . | first | value | printf "%.0f" }}{{ end }} MB
                + {{ with query "middleware:threshold:hpom_mem_per_motif_mib" }}{{ . | first | value | printf "%.0f"
                }}{{ end }} MB per Motif + {{ with query "middleware:threshold:hpom_mem_per_java_mib" }}{{ . | first
                | value | printf "%.0f" }}{{ end }} MB per Java operator).
              |||),
              runbook_url: utils.runbook($._config, 'hpom', 'MiddlewareHpomMemoryBelowFormula'),
              source: utils.fold(|||
                HP Operations Manager for UNIX 8.21/8.30 Performance Guide, Appendix B: Memory and Kernel Parameter
                Formulas, Table 31 (HPOM-MEM)
              |||),
            },
          },
          // HPOM-MEM, second formula of Table 31: swap against RAM plus the GUI sessions. Advice (info) rather
          // than a ticket: many Linux hosts run with less swap on purpose, and swap matters only once memory is
          // short (MiddlewareHpomMemoryBelowFormula, paging figures).
          {
            alert: 'MiddlewareHpomSwapBelowFormula',
            expr: |||
              middleware_host_swap_total_bytes{%(middlewareSelector)s}
                < on (%(clusterPrefix)sinstance) group_left ()
                (
                    middleware_host_memory_total_bytes{%(middlewareSelector)s}
                  + on (%(clusterPrefix)sinstance)
                    (
                        scalar(middleware:threshold:hpom_swap_base_mib)
                      + scalar(middleware:threshold:hpom_swap_per_motif_mib)
                        * sum by (%(clusterPrefix)sinstance) (middleware_process_group_processes{%(middlewareSelector)s, group="hpom_motif_gui"})
                      + on (%(clusterPrefix)sinstance)
                        scalar(middleware:threshold:hpom_swap_per_java_mib)
                        * sum by (%(clusterPrefix)sinstance) (middleware_process_group_processes{%(middlewareSelector)s, group="hpom_java_gui"})
                    ) * 1048576
                )
              and on (%(clusterPrefix)sinstance)
                (max by (%(clusterPrefix)sinstance) (middleware_process_group_processes{%(middlewareSelector)s, group="hpom_server"}) > 0)
            ||| % $._config,
            'for': '1h',
            labels: { severity: 'info', system: 'hpom', guide_row: 'HPOM-MEM' },
            annotations: {
              summary: "The HPOM management server has less swap space than the guide's formula asks for.",
              description: utils.fold(|||
                {{ $labels.instance }} has {{ $value | humanize1024 }}B of swap, less than the {{ with printf
                "sum(middleware_host_memory_total_bytes{instance=%q}) +
                (scalar(middleware:threshold:hpom_swap_base_mib) +
                scalar(middleware:threshold:hpom_swap_per_motif_mib) *
                sum(middleware_process_group_processes{group='hpom_motif_gui',instance=%q}) +
                scalar(middleware:threshold:hpom_swap_per_java_mib) *
                sum(middleware_process_group_processes{group='hpom_java_gui',instance=%q})) * 1048576"
                $labels.instance $labels.instance $labels.instance | query }}{{ . | first | value | humanize1024
                }}B{{ end }} that Appendix B asks for: its RAM ({{ with printf
                "middleware_host_memory_total_bytes{instance=%q}" $labels.instance | query }}{{ . | first | value |
                humanize1024 }}B{{ end }}) + {{ with query "middleware:threshold:hpom_swap_base_mib" }}{{ . | first
                | value | printf "%.0f" }}{{ end }} MB + {{ with query
                "middleware:threshold:hpom_swap_per_motif_mib" }}{{ . | first | value | printf "%.0f" }}{{ end }} MB
                per Motif + {{ with query "middleware:threshold:hpom_swap_per_java_mib" }}{{ . | first | value |
                printf "%.0f" }}{{ end }} MB per Java GUI session, with the {{ with printf
                "sum(middleware_process_group_processes{group='hpom_motif_gui',instance=%q})" $labels.instance |
                query }}{{ . | first | value | printf "%.0f" }}{{ end }} Motif and {{ with printf
                "sum(middleware_process_group_processes{group='hpom_java_gui',instance=%q})" $labels.instance |
                query }}{{ . | first | value | printf "%.0f" }}{{ end }} Java sessions running now.
              |||),
              runbook_url: utils.runbook($._config, 'hpom', 'MiddlewareHpomSwapBelowFormula'),
              source: utils.fold(|||
                HP Operations Manager for UNIX 8.21/8.30 Performance Guide, Appendix B: Memory and Kernel Parameter
                Formulas, Table 31 (HPOM-MEM)
              |||),
            },
          },
          // HPOM-MSI. Reading of the guide: its summary says "more than five" simultaneous MSI programs decrease
          // throughput, the interpretation of its MSI test sees "a slight performance loss" with "5 or more". The
          // rule takes the summary's reading: more than 5 (> threshold) fires, exactly 5 does not.
          {
            alert: 'MiddlewareHpomTooManyMsiPrograms',
            expr: |||
              middleware_hpom_msi_programs_running{%(middlewareSelector)s}
                > on () group_left () middleware:threshold:hpom_msi_programs
            ||| % $._config,
            'for': '15m',
            labels: { severity: 'warning', system: 'hpom', guide_row: 'HPOM-MSI' },
            annotations: {
              summary: 'More simultaneous MSI programs than the guide recommends.',
              description: utils.fold(|||
                {{ $value | printf "%.0f" }} of the configured MSI programs are running on {{ $labels.instance }},
                more than {{ with query "middleware:threshold:hpom_msi_programs" }}{{ . | first | value | printf
                "%.0f" }}{{ end }}. The guide's summary found that more than five simultaneous MSI programs decrease
                message throughput (its MSI test saw a slight loss from 5 on; this rule takes the summary's reading,
                so exactly 5 does not fire).
              |||),
              runbook_url: utils.runbook($._config, 'hpom', 'MiddlewareHpomTooManyMsiPrograms'),
              source: utils.fold(|||
                HP Operations Manager for UNIX 8.21/8.30 Performance Guide, Summary of Performance Findings; Test:
                Sending Messages to MSI Programs (HPOM-MSI)
              |||),
            },
          },
          // HPOM-VAR-*: one rule per variable, so that each alert carries its own guide row. The three rules
          // share the alert name (and runbook section); the exporter decides whether a value follows Table 1
          // (middleware_hpom_server_variable_follows_guide) and explains the recommendation in the `guide` label
          // of middleware_hpom_server_variable_info, which the description quotes.
          // The GUI-thread row also covers the two 8.22 variables of footnote 4 (Test: Varying the Number of Active
          // Java GUIs): OPCUIWWW_BULK_MODE=TRUE, and OPCUIWWW_NEW_MSG_NO_DB=TRUE with its prerequisite
          // OPCMSGM_USE_GUI_THREAD=NO_RPC. The exporter judges those only where the server can have them (8.22 and
          // later, when the collector's server_version says so; unknown: judged). One rule for the three (a second
          // rule with the same name and labels would be a duplicate).
          {
            alert: 'MiddlewareHpomServerVariableNotAsRecommended',
            expr: |||
              middleware_hpom_server_variable_follows_guide{%(middlewareSelector)s,
                variable=~"OPCMSGM_USE_GUI_THREAD|OPCUIWWW_BULK_MODE|OPCUIWWW_NEW_MSG_NO_DB"} == 0
            ||| % $._config,
            'for': '1h',
            labels: { severity: 'info', system: 'hpom', guide_row: 'HPOM-VAR-GUITHREAD' },
            annotations: {
              summary: 'An HPOM server variable of the message manager GUI thread (Table 1, footnote 4) is not as recommended.',
              description: variableDescription,
              runbook_url: utils.runbook($._config, 'hpom', 'MiddlewareHpomServerVariableNotAsRecommended'),
              source: utils.fold(|||
                HP Operations Manager for UNIX 8.21/8.30 Performance Guide, Management Server Configuration
                Variables, Table 1; Test: Varying the Number of Active Java GUIs, footnotes 1, 2 and 4; Test:
                Detailed Inspection of Message Processing (HPOM-VAR-GUITHREAD)
              |||),
            },
          },
          {
            alert: 'MiddlewareHpomServerVariableNotAsRecommended',
            expr: 'middleware_hpom_server_variable_follows_guide{%(middlewareSelector)s, variable="OPC_DIRECT_ACKN_LIMIT"} == 0' % $._config,
            'for': '1h',
            labels: { severity: 'info', system: 'hpom', guide_row: 'HPOM-VAR-ACKLIMIT' },
            annotations: {
              summary: 'HPOM server variable OPC_DIRECT_ACKN_LIMIT is not 0 (mark acknowledged messages only).',
              description: variableDescription,
              runbook_url: utils.runbook($._config, 'hpom', 'MiddlewareHpomServerVariableNotAsRecommended'),
              source: utils.fold(|||
                HP Operations Manager for UNIX 8.21/8.30 Performance Guide, Management Server Configuration
                Variables, Table 1; Test: Message Acknowledgment (HPOM-VAR-ACKLIMIT)
              |||),
            },
          },
          {
            alert: 'MiddlewareHpomServerVariableNotAsRecommended',
            expr: 'middleware_hpom_server_variable_follows_guide{%(middlewareSelector)s, variable="OPC_UPDWN_COMMIT_COUNT"} == 0' % $._config,
            'for': '1h',
            labels: { severity: 'info', system: 'hpom', guide_row: 'HPOM-VAR-COMMIT' },
            annotations: {
              summary: 'HPOM server variable OPC_UPDWN_COMMIT_COUNT is below 1000.',
              description: variableDescription,
              runbook_url: utils.runbook($._config, 'hpom', 'MiddlewareHpomServerVariableNotAsRecommended'),
              source: utils.fold(|||
                HP Operations Manager for UNIX 8.21/8.30 Performance Guide, Management Server Configuration
                Variables, Table 1; Test: Downloading 100,000 History Messages, Table 27 (HPOM-VAR-COMMIT)
              |||),
            },
          },
          // HPOM-AUTOKEYS: many active messages without a message key, or automatic keys switched off. The two
          // conditions give separate alerts (the second carries the `variable` label).
          {
            alert: 'MiddlewareHpomMessagesWithoutKeys',
            expr: |||
              (
                sum without (severity) (middleware_hpom_active_messages_without_key{%(middlewareSelector)s})
                  / sum without (severity) (middleware_hpom_active_messages{%(middlewareSelector)s})
                > on () group_left () middleware:threshold:hpom_messages_without_key_ratio
              )
              or
              middleware_hpom_server_variable_follows_guide{%(middlewareSelector)s, variable="OPC_CREATE_AUTO_KEYS"} == 0
            ||| % $._config,
            'for': '1h',
            labels: { severity: 'info', system: 'hpom', guide_row: 'HPOM-AUTOKEYS' },
            annotations: {
              summary: 'HPOM messages lack message keys, which makes duplicate suppression slow.',
              description: utils.fold(|||
                {{ if $labels.variable }}OPC_CREATE_AUTO_KEYS on {{ $labels.instance }} does not follow the guide
                (follows_guide = {{ $value }}): messages without a key do not get one automatically.{{ else }}{{
                $value | humanizePercentage }} of the active messages on {{ $labels.instance }} have no message key
                (threshold {{ with query "middleware:threshold:hpom_messages_without_key_ratio" }}{{ . | first |
                value | humanizePercentage }}{{ end }}).{{ end }} With duplicate suppression on and no keys the
                guide measured 28 msg/s (8.21) and 137 msg/s (8.30), against 476 and 226 msg/s with suppression off.
              |||),
              runbook_url: utils.runbook($._config, 'hpom', 'MiddlewareHpomMessagesWithoutKeys'),
              source: utils.fold(|||
                HP Operations Manager for UNIX 8.21/8.30 Performance Guide, Test: Suppressing Message Duplicates,
                Tables 12-13; Summary of Performance Findings (HPOM-AUTOKEYS)
              |||),
            },
          },
          // HPOM-SLOD: a service tree deeper than 5 levels while Service Load on Demand is not known to be on
          // (middleware_hpom_service_load_on_demand 0, or absent: the switch is not public, so the exporter knows it
          // only from the site's service_load_on_demand setting or variable). Advice: the cost is Java GUI start-up
          // time (Tables 24-25), and the cure a configuration change.
          {
            alert: 'MiddlewareHpomServiceTreeTooDeepWithoutSlod',
            expr: |||
              middleware_hpom_service_tree_depth{%(middlewareSelector)s}
                > on () group_left () middleware:threshold:hpom_service_tree_depth
              unless on (%(clusterPrefix)sinstance, job)
                middleware_hpom_service_load_on_demand{%(middlewareSelector)s} == 1
            ||| % $._config,
            'for': '1h',
            labels: { severity: 'info', system: 'hpom', guide_row: 'HPOM-SLOD' },
            annotations: {
              summary: 'An HPOM service tree is deeper than 5 levels without Service Load on Demand.',
              description: utils.fold(|||
                The deepest service tree on {{ $labels.instance }} has {{ $value | printf "%.0f" }} levels below its
                top service, more than {{ with query "middleware:threshold:hpom_service_tree_depth" }}{{ . | first |
                value | printf "%.0f" }}{{ end }}, and Service Load on Demand is {{ with printf
                "middleware_hpom_service_load_on_demand{instance=%q}" $labels.instance | query }}off{{ else }}not
                known to be on{{ end }}. Without it the guide measured Java GUI start-up of 6-7 s at depth 5 but
                272-331 s at depth 10 (breadth 3); depth weighs more than the number of services.
              |||),
              runbook_url: utils.runbook($._config, 'hpom', 'MiddlewareHpomServiceTreeTooDeepWithoutSlod'),
              source: utils.fold(|||
                HP Operations Manager for UNIX 8.21/8.30 Performance Guide, Test: Varying the Shape and Size of the
                Service Tree, Tables 24-25 and Conclusions (HPOM-SLOD)
              |||),
            },
          },
          // HPOM-MOM: the forward manager's queue (forwmgrq: messages, message operations such as acknowledgements,
          // and action responses waiting for other management servers) holds more than the minimum size and has not
          // shrunk for 30 minutes: a target server is unreachable or opcforwm is stuck, and the target servers'
          // operators see stale messages and acknowledgements. A ticket: nothing is lost while the queue holds, but
          // the other servers fall behind. deriv over 15 minutes >= 0 at every evaluation for 30 minutes: a busy but
          // healthy queue goes down as well as up and resets the `for:`.
          {
            alert: 'MiddlewareHpomForwardQueueNotDraining',
            expr: |||
              deriv(middleware_hpom_queue_size_bytes{%(middlewareSelector)s, queue="forwmgrq"}[15m]) >= 0
              and
              middleware_hpom_queue_size_bytes{%(middlewareSelector)s, queue="forwmgrq"}
                > on () group_left () middleware:threshold:hpom_queue_min_bytes
            ||| % $._config,
            'for': '30m',
            labels: { severity: 'warning', system: 'hpom', guide_row: 'HPOM-MOM' },
            annotations: {
              summary: 'The HPOM forward manager queue (forwmgrq) is not draining.',
              description: utils.fold(|||
                The forwmgrq queue file on {{ $labels.instance }} holds {{ with printf
                "middleware_hpom_queue_size_bytes{instance=%q,queue='forwmgrq'}" $labels.instance | query }}{{ . |
                first | value | humanize1024 }}B{{ end }} and has not shrunk for 30 minutes (trend {{ $value |
                humanize1024 }}B/s): messages and acknowledgements for the other management servers are not getting
                through. The guide measured the acknowledgement sync at 10-12 s per 1,000 once the target is
                reachable.
              |||),
              runbook_url: utils.runbook($._config, 'hpom', 'MiddlewareHpomForwardQueueNotDraining'),
              source: utils.fold(|||
                HP Operations Manager for UNIX 8.21/8.30 Performance Guide, Test: MoM Message Forwarding, Tables
                14-15 (HPOM-MOM)
              |||),
            },
          },
          // HPOM-KERNEL: the Linux counterpart of Appendix B's `shmmax = <RAM size>` (Tables 29-30). The other
          // HP-UX formulas have no direct Linux equivalent that the exporter can compare.
          {
            alert: 'MiddlewareHpomKernelShmmaxBelowMemory',
            expr: |||
              middleware_host_kernel_parameter{%(middlewareSelector)s, parameter="kernel.shmmax"}
                < ignoring (parameter) group_left () middleware_host_memory_total_bytes{%(middlewareSelector)s}
              and on (%(clusterPrefix)sinstance)
                (max by (%(clusterPrefix)sinstance) (middleware_process_group_processes{%(middlewareSelector)s, group="hpom_server"}) > 0)
            ||| % $._config,
            'for': '1h',
            labels: { severity: 'info', system: 'hpom', guide_row: 'HPOM-KERNEL' },
            annotations: {
              summary: 'The kernel.shmmax of the HPOM management server is smaller than its RAM.',
              description: utils.fold(|||
                kernel.shmmax on {{ $labels.instance }} is {{ $value | humanize1024 }}B, less than the host's {{
                with printf "middleware_host_memory_total_bytes{instance=%q}" $labels.instance | query }}{{ . |
                first | value | humanize1024 }}B{{ end }} of RAM; HPOM's installer formulas set shmmax to the RAM
                size.
              |||),
              runbook_url: utils.runbook($._config, 'hpom', 'MiddlewareHpomKernelShmmaxBelowMemory'),
              source: utils.fold(|||
                HP Operations Manager for UNIX 8.21/8.30 Performance Guide, Appendix B: Memory and Kernel Parameter
                Formulas, Tables 29-30 (HPOM-KERNEL)
              |||),
            },
          },
          // Operational: one part of the hpom collector (queues, queue_count, opcsv, ovc, ovconfget, msi,
          // database) fails; the alerts built on it cannot fire meanwhile.
          {
            alert: 'MiddlewareHpomSourceFailing',
            expr: 'middleware_hpom_source_success{%(middlewareSelector)s} == 0' % $._config,
            'for': '15m',
            labels: { severity: 'warning', system: 'hpom', guide_row: 'none' },
            annotations: {
              summary: "A source of the exporter's HPOM collector is failing.",
              description: utils.fold(|||
                The HPOM source {{ $labels.source }} on {{ $labels.instance }} has failed for 15 minutes (success =
                {{ $value }}); its metrics are missing and the alerts built on them cannot fire. The error is under
                source_errors in the exporter's /api/v1/collectors.
              |||),
              runbook_url: utils.runbook($._config, 'hpom', 'MiddlewareHpomSourceFailing'),
              source: 'exporter/systems/hpom/README.md, sources (none)',
            },
          },
          // Operational: no session to the HPOM database (opc_op); the HPOM-ACK, -CMA, -ACTIVE and -AUTOKEYS
          // figures come from it.
          {
            alert: 'MiddlewareHpomDatabaseDown',
            expr: 'middleware_hpom_database_up{%(middlewareSelector)s} == 0' % $._config,
            'for': '10m',
            labels: { severity: 'critical', system: 'hpom', guide_row: 'none' },
            annotations: {
              summary: 'The exporter cannot reach the HPOM database.',
              description: utils.fold(|||
                The exporter on {{ $labels.instance }} has had no session to the HPOM database for 10 minutes (up =
                {{ $value }}). The message figures (acknowledgements, CMAs, active messages, message keys) are
                missing, so their alerts cannot fire.
              |||),
              runbook_url: utils.runbook($._config, 'hpom', 'MiddlewareHpomDatabaseDown'),
              source: 'exporter/systems/hpom/README.md, the database (none)',
            },
          },
        ],
      },
    ],
  },
}
