// Thresholds of alerts/certificates.yml (the parameters of mixin/alerts/certificates.libsonnet).

local utils = import '../lib/utils.libsonnet';

{
  prometheusRules+:: {
    groups+: [
      {
        name: 'middleware-certificates-thresholds',
        rules: [
          // Seconds before notAfter: 14 days warns while there is time to renew by the book (change request, CA
          // turnaround), 3 days pages. Not a guide figure: the usual renewal windows (ACME clients renew 30 days
          // ahead, so a certificate still 14 days from expiry has missed its renewal).
          utils.threshold($._config, 'certificate_expiry_warning_seconds', 'none'),
          utils.threshold($._config, 'certificate_expiry_critical_seconds', 'none'),
        ],
      },
    ],
  },
}
