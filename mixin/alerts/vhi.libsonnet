// Verastream Host Integrator session server alerts: sessions per CPU (VHI-SESS), memory formula (VHI-MEM),
// CPU count (VHI-CPU).
//
// The vhi collector runs on the session server host next to the host collector; VHI-MEM joins their figures on
// (instance, job), so both must come from that one exporter. VHI-CPU reads the vhi collector's own core count.

local utils = import '../lib/utils.libsonnet';

{
  prometheusAlerts+:: {
    groups+: [
      {
        name: 'middleware-vhi',
        rules: [
          // VHI-SESS. Reading of the note: it recommends at most "250 concurrent host sessions per single-CPU
          // session server" and meets higher demand "with multiple session servers"; it gives no per-CPU figure.
          // On a one-CPU session server this rule is the note's figure. On more CPUs, 250 per CPU is this
          // project's extrapolation, and a generous one: the note's own table has 2 CPUs gaining only 75 % over
          // one (about 440 sessions, not 500) and 4 CPUs another 38 %. Lower the threshold (or run more session
          // servers) where that matters.
          {
            alert: 'MiddlewareVhiSessionsPerCpuOverLimit',
            expr: |||
              middleware_vhi_sessions_per_cpu{%(middlewareSelector)s}
                > on () group_left () middleware:threshold:vhi_sessions_per_cpu
            ||| % $._config,
            'for': '5m',
            labels: { severity: 'warning', system: 'vhi', guide_row: 'VHI-SESS' },
            annotations: {
              summary: 'More VHI host sessions per CPU than the guide allows.',
              description: utils.fold(|||
                The VHI session server on {{ $labels.instance }} has held {{ $value | printf "%.1f" }} concurrent
                host sessions per CPU for 5 minutes {{- with printf "middleware_vhi_sessions{instance='%s'}"
                $labels.instance | query }} ({{ . | first | value | printf "%.0f" }} sessions{{ end }} {{- with
                printf "middleware_vhi_session_server_cpus{instance='%s'}" $labels.instance | query }} on {{ . |
                first | value | printf "%.0f" }} CPU(s)){{ end }}, above the guide's {{ with query
                "middleware:threshold:vhi_sessions_per_cpu" }}{{ . | first | value | printf "%.0f" }}{{ end }} per
                CPU. The note's limit is 250 sessions per single-CPU session server; per CPU on larger servers is an
                extrapolation (its own table: a second CPU adds only about 75 %).
              |||),
              runbook_url: utils.runbook($._config, 'vhi', 'MiddlewareVhiSessionsPerCpuOverLimit'),
              source: utils.fold(|||
                Verastream Host Integrator Server Performance (Technical Note 10087), Concurrent Sessions (VHI-SESS)
              |||),
            },
          },
          {
            alert: 'MiddlewareVhiMemoryBelowFormula',
            expr: |||
              middleware_host_memory_total_bytes{%(middlewareSelector)s}
                < on (%(clusterPrefix)sinstance, job) middleware_vhi_memory_required_bytes{%(middlewareSelector)s, level="minimum"}
            ||| % $._config,
            'for': '30m',
            labels: { severity: 'warning', system: 'vhi', guide_row: 'VHI-MEM' },
            annotations: {
              summary: "Host memory below the VHI guide's formula for the current sessions.",
              description: utils.fold(|||
                Host {{ $labels.instance }} has {{ $value | humanize1024 }}B of memory; for its {{ with printf
                "middleware_vhi_sessions{instance='%s'}" $labels.instance | query }}{{ . | first | value | printf
                "%.0f" }}{{ end }} concurrent host sessions the VHI guide asks for at least {{ with printf
                "middleware_vhi_memory_required_bytes{instance='%s',level='minimum'}" $labels.instance | query }}{{
                . | first | value | humanize1024 }}B{{ end }} (recommended {{ with printf
                "middleware_vhi_memory_required_bytes{instance='%s',level='recommended'}" $labels.instance | query
                }}{{ . | first | value | humanize1024 }}B{{ end }}): 512 MB (1 GB recommended) up to 100 sessions
                plus 64 MB (128 MB) per further 100.
              |||),
              runbook_url: utils.runbook($._config, 'vhi', 'MiddlewareVhiMemoryBelowFormula'),
              source: utils.fold(|||
                Verastream Host Integrator Server Performance (Technical Note 10087), Memory; Test 1: Session Server
                Memory Usage (VHI-MEM)
              |||),
            },
          },
          // $value is the host's memory; the formula's figures come from the vhi collector at the current sessions.
          //
          // VHI-CPU. The cores are the vhi collector's own count from the sysfs CPU topology
          // (middleware_vhi_session_server_cores: the distinct thread_siblings_list of the CPUs in the session
          // server's affinity). The affinity's CPUs x the host's cores per CPU is no estimate of them: a host that
          // numbers a core's two threads n and n+8 has 8 cores under CPUs 0-7, which that product reads as 4.
          {
            alert: 'MiddlewareVhiTooManyCpus',
            expr: |||
              middleware_vhi_session_server_cores{%(middlewareSelector)s}
                > on () group_left () middleware:threshold:vhi_max_cpu_cores
            ||| % $._config,
            'for': '1h',
            labels: { severity: 'info', system: 'vhi', guide_row: 'VHI-CPU' },
            annotations: {
              summary: 'VHI session server spread over more CPU cores than the guide recommends.',
              description: utils.fold(|||
                The VHI session server on {{ $labels.instance }} may run on {{ $value | printf "%.0f" }} physical
                cores (CPU topology) {{- with printf "middleware_vhi_session_server_cpus{instance='%s'}"
                $labels.instance | query }}, {{ . | first | value | printf "%.0f" }} CPUs{{ end }}; the guide does
                not recommend more than {{ with query "middleware:threshold:vhi_max_cpu_cores" }}{{ . | first |
                value | printf "%.0f" }}{{ end }} (going from 4 to 8 CPUs gained only 14 %). {{- with printf
                "middleware_vhi_session_server_guide_cpus_info{instance='%s'}" $labels.instance | query }} Pinned to
                CPUs {{ . | first | label "cpus" }} (every thread of 4 of the host's cores) it keeps within the
                guide.{{ end }}
              |||),
              runbook_url: utils.runbook($._config, 'vhi', 'MiddlewareVhiTooManyCpus'),
              source: utils.fold(|||
                Verastream Host Integrator Server Performance (Technical Note 10087), Processors and Performance
                (VHI-CPU)
              |||),
            },
          },
          // VHI-CPU without the core count: the session server may run on more CPUs than the guide's 4 cores, and
          // the exporter reports no cores for it (one older than middleware_vhi_session_server_cores, or the sysfs
          // topology not readable). Whether those CPUs are more than 4 cores is not guessed; the alert says the
          // row cannot be judged. On at most 4 CPUs it stays silent: they cannot be more than 4 cores.
          {
            alert: 'MiddlewareVhiCpuCoresUnknown',
            expr: |||
              middleware_vhi_session_server_cpus{%(middlewareSelector)s}
                > on () group_left () middleware:threshold:vhi_max_cpu_cores
              unless on (%(clusterPrefix)sinstance, job)
                middleware_vhi_session_server_cores{%(middlewareSelector)s}
            ||| % $._config,
            'for': '1h',
            labels: { severity: 'info', system: 'vhi', guide_row: 'VHI-CPU' },
            annotations: {
              summary: 'VHI session server on more CPUs than the guide has cores for; its physical cores are unknown.',
              description: utils.fold(|||
                The VHI session server on {{ $labels.instance }} may run on {{ $value | printf "%.0f" }} CPUs;
                whether they are more than the guide's {{ with query "middleware:threshold:vhi_max_cpu_cores" }}{{ .
                | first | value | printf "%.0f" }}{{ end }} physical cores is not known: the exporter reports no
                core count (middleware_vhi_session_server_cores is absent: an exporter without it, or the CPU
                topology under /sys/devices/system/cpu not readable), so VHI-CPU is not judged. CPUs x cores per CPU
                is not used instead: it miscounts hosts that number a core's threads n and n+8.
              |||),
              runbook_url: utils.runbook($._config, 'vhi', 'MiddlewareVhiCpuCoresUnknown'),
              source: utils.fold(|||
                Verastream Host Integrator Server Performance (Technical Note 10087), Processors and Performance
                (VHI-CPU)
              |||),
            },
          },
        ],
      },
    ],
  },
}
