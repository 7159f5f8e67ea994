// Thresholds of alerts/host.yml (the parameters of mixin/alerts/host.libsonnet).

local utils = import '../lib/utils.libsonnet';

{
  prometheusRules+:: {
    groups+: [
      {
        name: 'middleware-host-thresholds',
        rules: [
          // CPU idle share (0-1) under which the host counts as CPU-saturated. The MQSI report saw throughput stop
          // rising once vmstat idle fell to about 10 % and below (12 % idle at 5 queue managers, 1 % with two
          // engines each): MQSeries Integrator for Sun Solaris v1.1: Maximizing persistent message throughput,
          // Test Case 2, Figure 4.
          utils.threshold($._config, 'host_cpu_idle_ratio', 'MQ-CPU'),
          // I/O wait share (0-1) of all CPU time. The report gives no limit: the P hub, whose cached storage was not
          // the bottleneck, ran at up to about 20 % (0-23 %, Figures 4 and 11), the M hub at 34-66 % before queue data
          // and logs got their own disks (Figure 7): MQSeries Integrator for Sun Solaris v1.1: Maximizing persistent
          // message throughput, Test Cases 2-5. 20 % is this project's default between the two.
          utils.threshold($._config, 'host_iowait_ratio', 'MQ-IO'),
          // Device busy share (iostat %util / 100). Not a guide figure: a device busy 90 % of the time has no
          // headroom left (the HPOM guide's slow bulk acknowledgements came with 97 % disk utilisation:
          // HP Operations Manager for UNIX 8.21/8.30 Performance Guide, Test: Message Acknowledgment, Interpretation).
          utils.threshold($._config, 'host_disk_util_ratio', 'MQ-IO'),
          // Share (0-1) of swap space in use (of the virtual swap on HP-UX and Solaris with the text back-end's
          // swapinfo / swap -s). Not a guide figure: the last 10 % leaves time to act before forks fail.
          utils.threshold($._config, 'host_swap_used_ratio', 'none'),
        ],
      },
    ],
  },
}
