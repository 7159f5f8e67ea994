"""Certificate expiry of PEM, DER and PKCS#12 files."""

# the registry names the collector from these without importing its settings or code (docs/footprint.md)
NAME = "certificates"
DESCRIPTION = "Certificate expiry (not after / not before) of PEM, DER and PKCS#12 files."
