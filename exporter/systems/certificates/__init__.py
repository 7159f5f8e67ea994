"""Certificate expiry of PEM, DER and PKCS#12 files: not-after and not-before per certificate, each file a target.

``settings.py`` holds the configuration (``collectors.certificates``: the files and their passwords),
``metrics.py`` the series, ``collector.py`` reads each file in its own bounded call, and ``parse.py`` turns the
bytes into certificates (``cryptography``, imported only when the collector runs).
"""

# the registry names the collector from these without importing its settings or code (docs/footprint.md)
NAME = "certificates"
DESCRIPTION = "Certificate expiry (not after / not before) of PEM, DER and PKCS#12 files."
