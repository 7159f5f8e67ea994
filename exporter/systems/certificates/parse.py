"""Reading certificate files: PEM (one certificate or a bundle, keys and other blocks skipped), DER, and PKCS#12
(a keystore with its chain: Oracle's ``ewallet.p12``, an IBM MQ mqweb keystore of type PKCS12), into plain
:class:`Certificate` records.

This module imports ``cryptography``; the collector imports it only when it runs, so an exporter without
certificate files never loads it.  Errors are :class:`CertificateFileError` with a text that names the cause
(wrong password, JKS, an Oracle auto-login wallet, garbage) and never the password.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID

FORMATS = ("auto", "pem", "der", "pkcs12")
_PEM_CERT = b"-----BEGIN CERTIFICATE-----"
_JKS_MAGIC = b"\xfe\xed\xfe\xed"
_JCEKS_MAGIC = b"\xce\xce\xce\xce"


class CertificateFileError(Exception):
    """The file could not be read as certificates; the text says why (never the password)."""


@dataclass(frozen=True)
class Certificate:
    subject_cn: str
    issuer_cn: str
    serial: str  # hexadecimal, lower case, as openssl x509 -serial prints it (without leading zeros)
    alias: str  # PKCS#12 friendly name (Oracle wallets and Java keystores set one), else ""
    not_before: float  # Unix seconds
    not_after: float


def _cn(name: x509.Name) -> str:
    values = name.get_attributes_for_oid(NameOID.COMMON_NAME)
    if not values:
        return ""
    value = values[0].value
    return value if isinstance(value, str) else value.decode("utf-8", "replace")


def _record(cert: x509.Certificate, alias: bytes | None = None) -> Certificate:
    return Certificate(subject_cn=_cn(cert.subject), issuer_cn=_cn(cert.issuer), serial=format(cert.serial_number, "x"),
                       alias=alias.decode("utf-8", "replace") if alias else "",
                       not_before=cert.not_valid_before_utc.timestamp(), not_after=cert.not_valid_after_utc.timestamp())


def _looks_like_pkcs12(data: bytes) -> bool:
    """A PFX is ``SEQUENCE { INTEGER 3, ... }``; a certificate is ``SEQUENCE { SEQUENCE ... }``.  Peeking at the
    DER header (hand-written: cryptography has no format detection) lets the error say "wrong password" for a
    keystore and "not a certificate" for garbage."""
    if len(data) < 8 or data[0] != 0x30:
        return False
    length = data[1]
    offset = 2 if length < 0x80 else 2 + (length & 0x7F)
    return data[offset:offset + 3] == b"\x02\x01\x03"


def _pem(data: bytes) -> list[Certificate]:
    if _PEM_CERT not in data:
        raise CertificateFileError("no PEM certificate in the file (no -----BEGIN CERTIFICATE----- block)")
    # Only the CERTIFICATE blocks: a PEM file often carries the private key or other blocks too.
    blocks, rest = [], data
    while (start := rest.find(_PEM_CERT)) >= 0:
        end = rest.find(b"-----END CERTIFICATE-----", start)
        if end < 0:
            raise CertificateFileError("a PEM certificate block has no -----END CERTIFICATE----- line")
        end += len(b"-----END CERTIFICATE-----")
        blocks.append(rest[start:end])
        rest = rest[end:]
    try:
        return [_record(cert) for cert in x509.load_pem_x509_certificates(b"\n".join(blocks) + b"\n")]
    except ValueError as exc:
        raise CertificateFileError(f"invalid PEM certificate: {exc}") from None


def _der(data: bytes) -> list[Certificate]:
    try:
        return [_record(x509.load_der_x509_certificate(data))]
    except ValueError:
        raise CertificateFileError("not a DER certificate") from None


def _pkcs12(data: bytes, password: str | None) -> list[Certificate]:
    secret = password.encode("utf-8") if password else None
    try:
        store = pkcs12.load_pkcs12(data, secret)
    except ValueError:
        if not _looks_like_pkcs12(data):
            raise CertificateFileError("not a PKCS#12 file") from None
        if secret is None:
            reason = "it needs a password: set password_file"
        else:
            reason = "wrong password (password_file) or damaged file"
        if os.environ.get("CRYPTOGRAPHY_OPENSSL_NO_LEGACY"):
            reason += ("; CRYPTOGRAPHY_OPENSSL_NO_LEGACY is set, so files encrypted with legacy algorithms (RC2, "
                       "3DES: older keytool, orapki and openssl) cannot be read either")
        raise CertificateFileError(f"cannot open the PKCS#12 file: {reason}") from None
    except Exception as exc:  # noqa: BLE001 - e.g. UnsupportedAlgorithm: its text names the algorithm, never the password
        raise CertificateFileError(f"cannot open the PKCS#12 file: {type(exc).__name__}: {exc}") from None
    found = []
    if store.cert is not None:
        found.append(_record(store.cert.certificate, store.cert.friendly_name))
    found += [_record(c.certificate, c.friendly_name) for c in store.additional_certs]
    if not found:
        raise CertificateFileError("the PKCS#12 file holds no certificate")
    return found


def read_certificates(data: bytes, path: str, fmt: str = "auto", password: str | None = None) -> list[Certificate]:
    """Every certificate of a file's content, in file order.  ``fmt`` ``auto`` decides from the content: PEM when it
    has a CERTIFICATE block, PKCS#12 when its DER header is a PFX's, else DER."""
    name = os.path.basename(path).lower()
    if name.endswith(".sso"):
        raise CertificateFileError("an Oracle auto-login wallet (cwallet.sso) is Oracle's own format and cannot be "
                                   "read; configure the wallet's ewallet.p12 with a password_file instead")
    if data[:4] in (_JKS_MAGIC, _JCEKS_MAGIC):
        raise CertificateFileError("a Java keystore (JKS/JCEKS) cannot be read; convert it to PKCS#12 (keytool "
                                   "-importkeystore -deststoretype pkcs12) or configure a PKCS#12 keystore")
    if name.endswith((".kdb", ".sth")):
        raise CertificateFileError("an IBM CMS key database (.kdb) cannot be read; export a PKCS#12 copy or list it "
                                   "with runmqakm -cert -list")
    if fmt == "pem" or (fmt == "auto" and _PEM_CERT in data):
        return _pem(data)
    if fmt == "pkcs12" or (fmt == "auto" and _looks_like_pkcs12(data)):
        return _pkcs12(data, password)
    if fmt == "der":
        return _der(data)
    try:
        return _der(data)
    except CertificateFileError:
        raise CertificateFileError("not a PEM, DER or PKCS#12 certificate file") from None
