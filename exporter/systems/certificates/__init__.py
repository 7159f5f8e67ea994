"""Certificate expiry of PEM, DER and PKCS#12 files."""
