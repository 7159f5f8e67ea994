"""The certificates collector's metrics: not-after and not-before per certificate of a file (ssl_exporter's and
x509-certificate-exporter's convention, Unix seconds), and the certificates per file.  Declarations only
(``collector.py`` adds the samples)."""

from __future__ import annotations

from ...core.metrics import NAMESPACE, MetricSpec

P = f"{NAMESPACE}_certificate"
CERT_LABELS = ("file", "subject_cn", "issuer_cn", "serial", "alias")
_ORIGIN = "ssl_exporter: ssl_file_cert_not_{0}; x509-certificate-exporter: x509_cert_not_{0}"
NOT_AFTER = MetricSpec(f"{P}_not_after_seconds", "gauge",
                       "Unix time after which the certificate is no longer valid (notAfter), per certificate of the "
                       "file (a bundle's or keystore chain's every certificate; alias is the PKCS#12 friendly name).",
                       CERT_LABELS, _ORIGIN.format("after") + "; (this - time()) / 86400: days left")
NOT_BEFORE = MetricSpec(f"{P}_not_before_seconds", "gauge",
                        "Unix time from which the certificate is valid (notBefore).", CERT_LABELS,
                        _ORIGIN.format("before"))
FILE_CERTIFICATES = MetricSpec(f"{P}_file_certificates", "gauge",
                               "Certificates in the file (all of them, also those beyond max_certificates_per_file).",
                               ("file",))
SPECS = [NOT_AFTER, NOT_BEFORE, FILE_CERTIFICATES]
