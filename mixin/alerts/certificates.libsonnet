// Certificate expiry: the files of the certificates collector (PEM, DER, PKCS#12: Oracle wallets, the MQ mqweb
// keystore) and the exporter's own TLS certificate. One alert name at two severities, as node-mixin's
// filesystem alerts do: warning 14 days before notAfter, critical 3 days before.
//
// $value is the seconds left (negative once expired). A file that cannot be read any more has no series, so this
// alert resolves; MiddlewareExporterTargetDown (collector="certificates") fires for it instead.

local utils = import '../lib/utils.libsonnet';

local expiring(config, severity, threshold, forDuration, days) = {
  alert: 'MiddlewareCertificateExpiresSoon',
  expr: |||
    (
      middleware_certificate_not_after_seconds{%(middlewareSelector)s}
        or middleware_exporter_tls_certificate_not_after_seconds{%(middlewareSelector)s}
    ) - time()
      < on () group_left () middleware:threshold:%(threshold)s
  ||| % (config { threshold: threshold }),
  'for': forDuration,
  labels: { severity: severity, system: 'certificates', guide_row: 'none' },
  annotations: {
    summary: 'A certificate expires within %s days.' % days,
    description: utils.fold(|||
      The certificate {{ with $labels.subject_cn }}CN={{ . }} {{ end }}{{ with $labels.serial }}(serial {{ . }})
      {{ end }}in {{ $labels.file }} on {{ $labels.instance }} {{ if lt $value 0.0 }}has expired{{ else }}expires
      in {{ $value | humanizeDuration }}{{ end }}, within the threshold of {{ with query
      "middleware:threshold:%s" }}{{ . | first | value | humanizeDuration }}{{ end }}.{{ with $labels.issuer_cn }} Issuer: {{ . }}.{{ end
      }}{{ with $labels.alias }} Alias: {{ . }}.{{ end }}
    ||| % threshold),
    runbook_url: utils.runbook(config, 'certificates', 'MiddlewareCertificateExpiresSoon'),
    source: 'exporter/systems/certificates/README.md, What is exported (none)',
  },
};

{
  prometheusAlerts+:: {
    groups+: [
      {
        name: 'middleware-certificates',
        rules: [
          expiring($._config, 'warning', 'certificate_expiry_warning_seconds', '15m', 14),
          expiring($._config, 'critical', 'certificate_expiry_critical_seconds', '5m', 3),
        ],
      },
    ],
  },
}
