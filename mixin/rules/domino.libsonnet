// Thresholds of alerts/domino.yml (the parameters of mixin/alerts/domino.libsonnet) and the
// recording rules of its dashboard figures (group middleware-domino-recording).

local utils = import '../lib/utils.libsonnet';

{
  prometheusRules+:: {
    groups+: [
      {
        name: 'middleware-domino-thresholds',
        rules: [
          // Average disk service time per I/O (seconds): device busy time per completed I/O, sar -d's service
          // time (svctm; Solaris avserv), the figure the article quotes. It measured 34-35 ms on RAID5 and 14 ms on
          // RAID0 with 1,800 users and still sub-second response times; the RAID5 figure is the default. A device
          // that normally runs at the threshold fires on noise: set it above your storage's normal service time,
          // e.g. between the article's two figures (0.024) for a RAID0 data directory.
          utils.threshold($._config, 'domino_disk_service_time_seconds', 'DOM-DISK'),
          // Fewer I/Os per second than this on a device make its average time meaningless (a handful of slow
          // requests on an idle disk). Not an article figure.
          utils.threshold($._config, 'domino_disk_min_iops', 'DOM-DISK'),
          // vmstat page-scan rate, pages/s. The article saw 75 (RAID0) and 100 (RAID5) on servers it found healthy
          // (Tables 1-2): operating points, not limits, and a threshold at a healthy rate fires on noise (the
          // scenario domino-raid5-steady did with 100). The default is half again the RAID5 rate, 150: the
          // project's choice, not an article figure.
          utils.threshold($._config, 'domino_page_scan_rate', 'DOM-SCAN'),
          // DOM-CPU reference: CPUs' worth of work (vmstat us + sy times the CPU count) per 1,000 users in the article's
          // 4-CPU run: 51 % of 4 CPUs for 1,800 users = 2.04 / 1.8 = 1.13 (the 8-CPU run gives 1.11, the 12-CPU run
          // 0.93: the same work spread thinner, no gain beyond 8 CPUs). NotesMark mail users, not yours: a reference
          // line, not a limit.
          utils.threshold($._config, 'domino_reference_cpus_per_1000_users', 'DOM-CPU'),
          // Fewer users with sessions than this make a per-user CPU figure meaningless (the server's own work dominates
          // at night). Not an article figure.
          utils.threshold($._config, 'domino_per_user_cpu_min_users', 'DOM-CPU'),
        ],
      },
      {
        name: 'middleware-domino-recording',
        rules: [
          // DOM-CPU per user, for the dashboard: CPU seconds per second in user, nice, system, irq and softirq (vmstat
          // us + sy as CPUs' worth, no CPU count needed) per 1,000 users with sessions (show stat Server.Users), on hosts
          // with at least domino_per_user_cpu_min_users users. /proc and psutil hosts (the text back-ends print shares,
          // not CPU seconds).
          {
            record: 'instance:middleware_domino_cpus_busy_per_1000_users:avg5m',
            expr: |||
              sum without (cpu, mode) (rate(middleware_host_cpu_seconds_total{%(middlewareSelector)s, mode=~"user|nice|system|irq|softirq"}[5m]))
                / on (%(clusterPrefix)sinstance) group_left ()
              (
                max by (%(clusterPrefix)sinstance) (middleware_domino_users{%(middlewareSelector)s})
                  >= on () group_left () middleware:threshold:domino_per_user_cpu_min_users
              )
                * 1000
            ||| % $._config,
            labels: { guide_row: 'DOM-CPU' },
          },
          // The same against the article's 4-CPU run: 1 = as much CPU per user as the article's 1,800 users needed,
          // above 1 = more (heavier users, or a CPU-starved or slower host).
          {
            record: 'instance:middleware_domino_cpu_per_user_vs_article:ratio5m',
            expr: |||
              instance:middleware_domino_cpus_busy_per_1000_users:avg5m{%(middlewareSelector)s}
                / on () group_left () middleware:threshold:domino_reference_cpus_per_1000_users
            ||| % $._config,
            labels: { guide_row: 'DOM-CPU' },
          },
        ],
      },
    ],
  },
}
