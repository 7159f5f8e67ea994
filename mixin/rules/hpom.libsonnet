// Thresholds of alerts/hpom.yml (the parameters of mixin/alerts/hpom.libsonnet) and the
// recording rules of its dashboard figures (group middleware-hpom-recording).

local utils = import '../lib/utils.libsonnet';

{
  prometheusRules+:: {
    groups+: [
      // -------------------------------------------------------------------------------------------------------
      // Parameters. Each is the example figure the guide gives; change the expression (or the Helm chart value)
      // to tune it. The alerts compare with `on() group_left()` or read them with scalar().
      // -------------------------------------------------------------------------------------------------------
      {
        name: 'middleware-hpom-thresholds',
        rules: [
          // "no more than 5,000 messages should be acknowledged at a time" ("Test: Message Acknowledgment",
          // Conclusions; Tables 21-22: 10,000 acks with 5 GUIs took 95-98 s and drove disk utilisation to 97 %).
          // The summary says "less than 5,000"; the rules take the conclusions' reading: exactly 5,000 is allowed.
          utils.threshold($._config, 'hpom_ack_bulk', 'HPOM-ACK'),
          // "keep the number of CMAs at or below 10 CMAs per message" ("Test: Varying the Number of CMAs",
          // Tables 18-20).
          utils.threshold($._config, 'hpom_cma_per_message', 'HPOM-CMA'),
          // Java GUI start-up slows significantly from 50,000 active messages ("Test: Varying the Number of
          // Managed Nodes and Messages", Tables 16-17).
          utils.threshold($._config, 'hpom_active_messages', 'HPOM-ACTIVE'),
          // Seconds msgmgrq may need to drain: the message storm test emptied 100,000 queued messages in 412 s
          // ("Test: Message Storm", Interpretation).
          utils.threshold($._config, 'hpom_queue_recovery_seconds', 'HPOM-QUEUE'),
          // msgmgrq sizes below this are never "not draining" nor "growing" (an idle queue file keeps some bytes;
          // HPOM reorganises the file now and then; a busy server's queue comes and goes by some KB). 1 MiB; not a
          // figure from the guide.
          utils.threshold($._config, 'hpom_queue_min_bytes', 'HPOM-QUEUE'),
          // Host CPU idle ratio under which the Java GUI processes count as saturating the CPU ("Test: Varying
          // the Number of Active Java GUIs", Interpretation: throughput falls faster once no CPU is free).
          // 10 % is the project's reading of "no CPU free" (the same figure as MQ-CPU's idle limit).
          utils.threshold($._config, 'hpom_gui_idle_ratio', 'HPOM-GUI'),
          // Share of the busy CPU the opcuiwww processes must use for the GUIs to be the cause.
          utils.threshold($._config, 'hpom_gui_busy_share', 'HPOM-GUI'),
          // Appendix B, Table 31: RAM (MB) >= 512 + 35 * <#Motif operators> + 128 * <#Java operators>.
          utils.threshold($._config, 'hpom_mem_base_mib', 'HPOM-MEM'),
          utils.threshold($._config, 'hpom_mem_per_motif_mib', 'HPOM-MEM'),
          utils.threshold($._config, 'hpom_mem_per_java_mib', 'HPOM-MEM'),
          // Appendix B, Table 31: swap (MB) >= <RAM> + 512 + 12 * <#Motif operators> + 64 * <#Java operators>.
          utils.threshold($._config, 'hpom_swap_base_mib', 'HPOM-MEM'),
          utils.threshold($._config, 'hpom_swap_per_motif_mib', 'HPOM-MEM'),
          utils.threshold($._config, 'hpom_swap_per_java_mib', 'HPOM-MEM'),
          // "more than five simultaneous MSI programs results in decreasing message throughput" ("Summary of
          // Performance Findings"; "Test: Sending Messages to MSI Programs"). The test's interpretation says "5 or
          // more"; the rule takes the summary's reading (5 is allowed); 4 here gives the stricter one.
          utils.threshold($._config, 'hpom_msi_programs', 'HPOM-MSI'),
          // Share of active messages without a message key above which duplicate suppression gets slow
          // ("Test: Suppressing Message Duplicates", Tables 12-13). The guide gives no share; 0.5 is the
          // project's default.
          utils.threshold($._config, 'hpom_messages_without_key_ratio', 'HPOM-AUTOKEYS'),
          // "If deep service trees (that is, service trees with more than 5 levels) are used, the feature Service
          // Load on Demand should be used" ("Test: Varying the Shape and Size of the Service Tree", Conclusions;
          // Tables 24-25: without SLOD, start-up 6-7 s at depth 5 but 272-331 s at depth 10). Levels below the top.
          utils.threshold($._config, 'hpom_service_tree_depth', 'HPOM-SLOD'),
          // MoM acknowledgement synchronisation, seconds per 1,000 acknowledged messages ("Test: MoM Message
          // Forwarding", Table 15: 12 s for 1,000, 9.6-10.7 s per 1,000 for 2,000-4,000). 12, the slowest figure,
          // is the conservative default of the sync estimate.
          utils.threshold($._config, 'hpom_mom_ack_sync_seconds_per_1000', 'HPOM-MOM'),
          // Source server throughput without and with MoM forwarding (Table 14: 227 and 120 msg/s for 10,000
          // messages): forwarding about halves it. Dashboard reference lines.
          utils.threshold($._config, 'hpom_mom_source_rate_without_forwarding', 'HPOM-MOM'),
          utils.threshold($._config, 'hpom_mom_source_rate_with_forwarding', 'HPOM-MOM'),
          // Reference message processing rates, msg/s ("Management Server Performance"; "Test: Suppressing Message
          // Duplicates", Tables 12-13; "Test: Message Storm"): 8.10 on PA-RISC 120, 8.21 on Itanium 333, 8.30 226,
          // the storm's average drain 272. Dashboard reference lines, not limits.
          utils.threshold($._config, 'hpom_reference_rate_810_parisc', 'HPOM-THROUGHPUT'),
          utils.threshold($._config, 'hpom_reference_rate_821_ia64', 'HPOM-THROUGHPUT'),
          utils.threshold($._config, 'hpom_reference_rate_830_ia64', 'HPOM-THROUGHPUT'),
          utils.threshold($._config, 'hpom_reference_rate_storm_average', 'HPOM-THROUGHPUT'),
          // History download rate, msg/s ("Test: Downloading 100,000 History Messages", Tables 26-27): "about 400 to
          // 500" with 5-6 redo groups of 100 MB and OPC_UPDWN_COMMIT_COUNT 1000 (405 on 8.21, 367-518 on 8.30);
          // 37.5 with 3 groups of 20 MB. Dashboard reference lines.
          utils.threshold($._config, 'hpom_history_download_rate_tuned', 'HPOM-HISTDL'),
          utils.threshold($._config, 'hpom_history_download_rate_small_redo', 'HPOM-HISTDL'),
        ],
      },
      {
        name: 'middleware-hpom-recording',
        rules: [
          // --- Recording rules: the dashboard figures of HPOM-THROUGHPUT, -HISTDL and -MOM -----------------------
          // HPOM-THROUGHPUT: messages received per second, from the receive times in the database (the guide's own
          // measure: "time on server to receive all messages ... divided by number of messages", Table 28).
          {
            record: 'instance:middleware_hpom_received_messages:per_second',
            expr: 'middleware_hpom_window_received_messages{%(middlewareSelector)s} / middleware_hpom_window_seconds{%(middlewareSelector)s}' % $._config,
            labels: { guide_row: 'HPOM-THROUGHPUT' },
          },
          // The same against the 8.30 reference rate (226 msg/s): 1 = the rate HP measured on 8.30.
          {
            record: 'instance:middleware_hpom_received_messages:ratio_to_830_reference',
            expr: |||
              middleware_hpom_window_received_messages{%(middlewareSelector)s} / middleware_hpom_window_seconds{%(middlewareSelector)s}
                / on () group_left () middleware:threshold:hpom_reference_rate_830_ia64
            ||| % $._config,
            labels: { guide_row: 'HPOM-THROUGHPUT' },
          },
          // HPOM-HISTDL: a download (opchistdwn) removes messages from the history table; the rate is the fall of
          // the history count over 30 minutes (the count is read every 5 minutes), 0 while it does not fall.
          {
            record: 'instance:middleware_hpom_history_download:per_second',
            expr: 'clamp_min(-deriv(middleware_hpom_history_messages{%(middlewareSelector)s}[30m]), 0)' % $._config,
            labels: { guide_row: 'HPOM-HISTDL' },
          },
          // HPOM-MOM: the ETA of the acknowledgements' synchronisation is the forecast
          // middleware:forecast:hpom_mom_ack_sync_eta_seconds (Table 15's rows interpolated; docs/forecasts.md).
          // Its share of the window, at the guide's linear 10-12 s per 1,000 (12 by default): above 1 the
          // acknowledgements arrive faster than the sync can pass them on, and the forward queue grows.
          {
            record: 'target:middleware_hpom_mom_ack_sync_load:ratio',
            expr: |||
              middleware_hpom_forwarded_window_acknowledged_messages{%(middlewareSelector)s}
                * on () group_left () middleware:threshold:hpom_mom_ack_sync_seconds_per_1000 / 1000
                / on (%(clusterPrefix)sinstance, job) group_left () middleware_hpom_window_seconds{%(middlewareSelector)s}
            ||| % $._config,
            labels: { guide_row: 'HPOM-MOM' },
          },
        ],
      },
    ],
  },
}
