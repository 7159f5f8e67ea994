"""The exporter-toolkit web configuration (``--web.config.file``, the file node_exporter reads): TLS, basic auth
with bcrypt hashes, extra response headers and a request rate limit, applied to every route.

The file is validated at start (exit 2 naming the key and the reason; a hash or key material is never echoed)
and re-checked at most once a second: when it or a file it names (certificate, key, client CA) changes, it is
read and validated again and the new TLS context serves the next connections, so certificates rotate without a
restart. A change that does not validate is logged and the last valid configuration stays in force (a
half-written rotation must not take scraping down). Python's ssl module cannot honour every Go option; those
are rejected with the reason (see docs/security.md). Hand-written because no Python package reads this format.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import functools
import hashlib
import hmac
import logging
import os
import re
import secrets
import ssl
import stat
import threading
import time
from collections import OrderedDict, deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

from ..core.config import ConfigError
from ..core.configfiles import NESTED_TOO_DEEPLY, UnreadableFile, check_shape, read_file

log = logging.getLogger("middleware_exporter.web")

# Go's tls.CipherSuites() names (what exporter-toolkit accepts) and their OpenSSL names. The TLS 1.3 suites are
# accepted and, as in Go, not configurable: OpenSSL's defaults apply to TLS 1.3.
TLS13_SUITES = ("TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256")
CIPHERS = {
    "TLS_RSA_WITH_AES_128_CBC_SHA": "AES128-SHA",
    "TLS_RSA_WITH_AES_256_CBC_SHA": "AES256-SHA",
    "TLS_RSA_WITH_AES_128_GCM_SHA256": "AES128-GCM-SHA256",
    "TLS_RSA_WITH_AES_256_GCM_SHA384": "AES256-GCM-SHA384",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA": "ECDHE-ECDSA-AES128-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA": "ECDHE-ECDSA-AES256-SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA": "ECDHE-RSA-AES128-SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA": "ECDHE-RSA-AES256-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256": "ECDHE-ECDSA-AES128-GCM-SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384": "ECDHE-ECDSA-AES256-GCM-SHA384",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256": "ECDHE-RSA-AES128-GCM-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384": "ECDHE-RSA-AES256-GCM-SHA384",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-ECDSA-CHACHA20-POLY1305",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-RSA-CHACHA20-POLY1305",
}
CURVES = {"CurveP256": "prime256v1", "CurveP384": "secp384r1", "CurveP521": "secp521r1", "X25519": "X25519"}
TLS_VERSIONS = {"TLS10": ssl.TLSVersion.TLSv1, "TLS11": ssl.TLSVersion.TLSv1_1, "TLS12": ssl.TLSVersion.TLSv1_2,
                "TLS13": ssl.TLSVersion.TLSv1_3}
CLIENT_AUTH = {"NoClientCert": ssl.CERT_NONE, "VerifyClientCertIfGiven": ssl.CERT_OPTIONAL,
               "RequireAndVerifyClientCert": ssl.CERT_REQUIRED}
# Go asks for a certificate without verifying it; Python's ssl module verifies every certificate it asks for.
UNVERIFIED_CLIENT_AUTH = ("RequestClientCert", "RequireAnyClientCert", "RequireClientCert")
# The headers exporter-toolkit lets a site set, with the values it accepts (None: any value).
HEADERS: dict[str, tuple[str, ...] | None] = {
    "Strict-Transport-Security": None,
    "X-Content-Type-Options": ("nosniff",),
    "X-Frame-Options": ("deny", "sameorigin"),
    "X-XSS-Protection": None,
    "Content-Security-Policy": None,
}
BCRYPT_RE = re.compile(r"^\$2[aby]\$(\d\d)\$[./A-Za-z0-9]{53}$")
_GO_DURATION_RE = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_GO_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
RELOAD_CHECK_SECONDS = 1.0
# The basic-auth realm of every 401 (`middleware-exporter healthcheck` recognises the exporter's refusal by it).


# --------------------------------------------------------------------------------------------- file format


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _go_duration(value: Any) -> float:
    """Seconds from a Go duration string (``1s``, ``500ms``, ``1m30s``) or ``0``."""
    if isinstance(value, bool):
        raise ValueError("not a duration")
    if isinstance(value, (int, float)):
        if value == 0:
            return 0.0
        raise ValueError("a duration needs a unit, e.g. 1s or 500ms")
    text = str(value).strip()
    if text in ("0", ""):
        return 0.0
    pos, total = 0, 0.0
    for match in _GO_DURATION_RE.finditer(text):
        if match.start() != pos:
            break
        total += float(match.group(1)) * _GO_UNITS[match.group(2)]
        pos = match.end()
    if pos != len(text):
        raise ValueError(f"{text!r} is not a duration (e.g. 1s, 500ms, 1m30s)")
    return total


class TLSServerConfig(_Strict):
    cert: str | None = None
    key: SecretStr | None = None
    client_ca: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    client_auth_type: str | None = None
    client_ca_file: str | None = None
    client_allowed_sans: list[str] | None = None
    min_version: str = "TLS12"
    max_version: str = "TLS13"
    cipher_suites: list[str] = Field(default_factory=list)
    prefer_server_cipher_suites: bool = True
    curve_preferences: list[str] = Field(default_factory=list)

    def enabled(self) -> bool:
        """As exporter-toolkit: TLS is on when any certificate, key, client CA or client auth field is set."""
        return any((self.cert, self.key and self.key.get_secret_value(), self.client_ca, self.cert_file,
                    self.key_file, self.client_auth_type, self.client_ca_file))


class HTTPServerConfig(_Strict):
    http2: bool = True
    headers: dict[str, str] | None = None

    @field_validator("headers", mode="before")
    @classmethod
    def _scalars_as_text(cls, value: Any) -> Any:
        # Go's YAML decoder reads `X-XSS-Protection: 1` into a string; so do we
        if isinstance(value, dict):
            return {k: ("" if v is None else str(v).lower() if isinstance(v, bool) else str(v)
                        if isinstance(v, (int, float)) else v) for k, v in value.items()}
        return value


class RateLimitConfig(_Strict):
    interval: float = 0.0
    burst: int = 0

    @field_validator("interval", mode="before")
    @classmethod
    def _interval(cls, value: Any) -> float:
        return _go_duration(value)


class WebConfigFile(_Strict):
    tls_server_config: TLSServerConfig | None = None
    http_server_config: HTTPServerConfig | None = None
    basic_auth_users: dict[str, SecretStr] | None = None
    rate_limit: RateLimitConfig | None = None


@functools.cache
def _no_duplicates_loader() -> type:
    """A repeated key is an error, as in exporter-toolkit's strict YAML decoding (PyYAML keeps the last one).
    Built on first use, so that a start without a web configuration never imports yaml."""
    import yaml

    class NoDuplicatesLoader(yaml.SafeLoader):
        def construct_mapping(self, node, deep=False):
            seen = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                if key in seen:
                    raise yaml.constructor.ConstructorError(None, None, f"key {key!r} is repeated",
                                                            key_node.start_mark)
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    return NoDuplicatesLoader


# ------------------------------------------------------------------------------------------ loaded config


@dataclass
class WebConfig:
    """A validated web configuration with its TLS context built."""

    path: Path
    tls: TLSServerConfig | None
    ssl_context: ssl.SSLContext | None
    users: dict[str, bytes]
    headers: list[tuple[bytes, bytes]]
    rate_interval: float
    rate_burst: int
    allowed_sans: frozenset[str] | None
    watched: tuple[Path, ...]
    warnings: list[str] = field(default_factory=list)
    # The server certificate's validity (Unix seconds) and where it came from, exported by core/selfmetrics.py
    cert_validity: tuple[str, float, float] | None = None


def _fail(path: Path, key: str, reason: str) -> ConfigError:
    return ConfigError(f"web config file {path}: {key}: {reason}")


def _pydantic_error(path: Path, exc: ValidationError) -> ConfigError:
    lines = []
    for err in exc.errors(include_url=False):
        key = ".".join(str(p) for p in err["loc"]) or "(top level)"
        if err["type"] == "extra_forbidden":
            msg = "unknown key"
        elif err["type"] == "missing":
            msg = "required key is missing"
        else:
            msg = err["msg"]  # pydantic's message; the value itself is never shown (it may be a hash or a key)
        lines.append(f"  {key}: {msg}")
    return ConfigError(f"invalid web config file {path}:\n" + "\n".join(lines))


def _resolve(base: Path, name: str) -> Path:
    path = Path(name)
    return path if path.is_absolute() else base / path


def _memfd_path(name: str, data: bytes) -> tuple[int, str]:
    """Inline PEM for load_cert_chain, which only reads files: an anonymous in-memory file, never on disk."""
    fd = os.memfd_create(name, os.MFD_CLOEXEC)
    os.write(fd, data)
    return fd, f"/proc/self/fd/{fd}"


def _build_ssl_context(path: Path, tls: TLSServerConfig, base: Path) -> tuple[ssl.SSLContext, list[str],
                                                                             tuple[str, float, float] | None]:
    warnings: list[str] = []
    validity = None
    prefix = "tls_server_config"
    if tls.cert and tls.cert_file:
        raise _fail(path, f"{prefix}.cert", "set cert or cert_file, not both")
    if tls.key and tls.key_file:
        raise _fail(path, f"{prefix}.key", "set key or key_file, not both")
    if tls.client_ca and tls.client_ca_file:
        raise _fail(path, f"{prefix}.client_ca", "set client_ca or client_ca_file, not both")
    if not (tls.cert or tls.cert_file):
        raise _fail(path, prefix, "missing one of cert or cert_file")
    if not ((tls.key and tls.key.get_secret_value()) or tls.key_file):
        raise _fail(path, prefix, "missing one of key or key_file")
    for key in ("min_version", "max_version"):
        if getattr(tls, key) not in TLS_VERSIONS:
            raise _fail(path, f"{prefix}.{key}", f"unknown TLS version (one of {', '.join(TLS_VERSIONS)})")
    minimum, maximum = TLS_VERSIONS[tls.min_version], TLS_VERSIONS[tls.max_version]
    if minimum > maximum:
        raise _fail(path, f"{prefix}.min_version", "is above max_version")

    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version, ctx.maximum_version = minimum, maximum
    if tls.prefer_server_cipher_suites:
        ctx.options |= ssl.OP_CIPHER_SERVER_PREFERENCE
    else:
        ctx.options &= ~ssl.OP_CIPHER_SERVER_PREFERENCE
    # Only HTTP/1.1 is served (uvicorn's h11 protocol); http2 in the file is accepted and has no effect.
    ctx.set_alpn_protocols(["http/1.1"])

    names = []
    for i, suite in enumerate(tls.cipher_suites):
        if suite in TLS13_SUITES:
            continue
        if suite not in CIPHERS:
            raise _fail(path, f"{prefix}.cipher_suites[{i}]", f"unknown cipher suite {suite!r}")
        names.append(CIPHERS[suite])
    if names:
        try:
            ctx.set_ciphers(":".join(names))
        except ssl.SSLError:
            raise _fail(path, f"{prefix}.cipher_suites", "none of these suites is available in this OpenSSL") from None
    for i, curve in enumerate(tls.curve_preferences):
        if curve not in CURVES:
            raise _fail(path, f"{prefix}.curve_preferences[{i}]", f"unknown curve {curve!r} "
                                                                    f"(one of {', '.join(CURVES)})")
    # Python's ssl module sets one curve or leaves OpenSSL's default groups (which offer all four); a list of
    # two or three curves cannot be honoured and is refused rather than silently widened.
    chosen = set(tls.curve_preferences)
    if len(chosen) == 1:
        ctx.set_ecdh_curve(CURVES[tls.curve_preferences[0]])
    elif chosen and chosen != set(CURVES):
        raise _fail(path, f"{prefix}.curve_preferences", "Python's ssl module can restrict the handshake to one "
                                                           "curve or offer all four, not a subset of two or three")

    cert_path = _resolve(base, tls.cert_file) if tls.cert_file else None
    key_path = _resolve(base, tls.key_file) if tls.key_file else None
    fds = []
    try:
        if cert_path is None:
            fd, name = _memfd_path("cert", tls.cert.encode())
            fds.append(fd)
            cert_arg = name
        else:
            cert_arg = str(cert_path)
        if key_path is None:
            fd, name = _memfd_path("key", tls.key.get_secret_value().encode())
            fds.append(fd)
            key_arg = name
        else:
            key_arg = str(key_path)
        read: dict[str, bytes] = {}
        for key, p in (("cert_file", cert_path), ("key_file", key_path)):
            if p is not None:  # OpenSSL would block on a FIFO or a hung mount: refused or bounded first
                try:
                    read[key] = read_file(p, key)
                except UnreadableFile as exc:
                    raise _fail(path, f"{prefix}.{key}", f"cannot read {p}: {exc.problem}") from None
        try:
            ctx.load_cert_chain(cert_arg, key_arg)
        except ssl.SSLError as exc:
            # OpenSSL's reason (e.g. KEY_VALUES_MISMATCH, PEM lib) never contains the key itself
            raise _fail(path, f"{prefix}.cert_file/key_file",
                        f"cannot load the certificate and key: {exc.reason or exc.strerror or 'invalid'}") from None
        except OSError as exc:
            raise _fail(path, f"{prefix}.cert_file/key_file", f"cannot read: {exc.strerror or exc}") from None
        cert_pem = read["cert_file"] if cert_path else tls.cert.encode()
    finally:
        for fd in fds:
            os.close(fd)
    try:
        not_before, not_after = certificate_validity(cert_pem)
        validity = (str(cert_path) if cert_path else "cert", not_before.timestamp(), not_after.timestamp())
        if not_after.timestamp() < time.time():
            warnings.append(f"the server certificate expired at {not_after.isoformat()}; "
                            "clients that verify it refuse to connect")
    except ValueError:
        pass
    if key_path is not None and key_path.stat().st_mode & stat.S_IROTH:
        warnings.append(f"key_file {key_path} is readable by every user; chmod o-r it")

    auth = tls.client_auth_type or "NoClientCert"
    if auth in UNVERIFIED_CLIENT_AUTH:
        raise _fail(path, f"{prefix}.client_auth_type",
                    f"{auth} is not supported: Python's ssl module verifies every client certificate it asks for; "
                    "use VerifyClientCertIfGiven or RequireAndVerifyClientCert")
    if auth not in CLIENT_AUTH:
        raise _fail(path, f"{prefix}.client_auth_type", f"invalid value {auth!r} (one of {', '.join(CLIENT_AUTH)})")
    has_ca = bool(tls.client_ca or tls.client_ca_file)
    if has_ca and auth == "NoClientCert":
        raise _fail(path, f"{prefix}.client_auth_type", "client CA's have been configured without a client auth "
                                                          "policy (set VerifyClientCertIfGiven or "
                                                          "RequireAndVerifyClientCert)")
    ctx.verify_mode = CLIENT_AUTH[auth]
    if auth != "NoClientCert":
        try:
            if tls.client_ca_file:
                ca_path = _resolve(base, tls.client_ca_file)
                try:
                    read_file(ca_path, "client_ca_file")  # as cert_file above
                except UnreadableFile as exc:
                    raise _fail(path, f"{prefix}.client_ca_file", f"cannot read {ca_path}: {exc.problem}") from None
                ctx.load_verify_locations(cafile=str(ca_path))
            elif tls.client_ca:
                ctx.load_verify_locations(cadata=tls.client_ca)
            else:
                ctx.load_default_certs(ssl.Purpose.CLIENT_AUTH)
        except (ssl.SSLError, OSError) as exc:
            key = "client_ca_file" if tls.client_ca_file else "client_ca"
            reason = getattr(exc, "reason", None) or getattr(exc, "strerror", None) or str(exc)
            raise _fail(path, f"{prefix}.{key}", f"cannot load the client CA: {reason}") from None
    return ctx, warnings, validity


def _der_item(data: bytes, pos: int) -> tuple[int, int, int]:
    """(tag, start of content, end of content) of the DER item at ``pos``."""
    tag, length = data[pos], data[pos + 1]
    pos += 2
    if length & 0x80:
        count = length & 0x7F
        if not 1 <= count <= 4:
            raise ValueError("unsupported DER length")
        length = int.from_bytes(data[pos:pos + count], "big")
        pos += count
    if pos + length > len(data):
        raise ValueError("truncated DER")
    return tag, pos, pos + length


def _der_time(data: bytes, tag: int) -> datetime:
    text = data.decode("ascii")
    if tag == 0x17:  # UTCTime, YYMMDDHHMMSSZ; RFC 5280 4.1.2.5.1: YY >= 50 is 19YY
        text = ("19" if int(text[:2]) >= 50 else "20") + text
    elif tag != 0x18:  # GeneralizedTime, YYYYMMDDHHMMSSZ
        raise ValueError("not a time")
    return datetime.strptime(text, "%Y%m%d%H%M%SZ").replace(tzinfo=timezone.utc)


def certificate_validity(pem: bytes) -> tuple[datetime, datetime]:
    """notBefore and notAfter of the first certificate in ``pem``; ValueError when it cannot be read.

    Hand-written (RFC 5280 4.1: Certificate, tbsCertificate, [version], serial, signature, issuer, validity) rather
    than cryptography.x509, whose import costs about 8 MB of resident memory for two dates (docs/footprint.md)."""
    text = pem.decode("ascii", "replace")
    begin, end = "-----BEGIN CERTIFICATE-----", "-----END CERTIFICATE-----"
    start = text.find(begin)
    stop = text.find(end, start)
    if start < 0 or stop < 0:
        raise ValueError("no PEM certificate")
    try:
        der = ssl.PEM_cert_to_DER_cert(text[start:stop + len(end)])
        _, pos, _ = _der_item(der, 0)  # Certificate
        _, pos, _ = _der_item(der, pos)  # tbsCertificate
        tag, _, after = _der_item(der, pos)
        if tag == 0xA0:  # [0] version
            pos = after
        for _ in range(3):  # serialNumber, signature, issuer
            pos = _der_item(der, pos)[2]
        tag, pos, _ = _der_item(der, pos)  # validity
        if tag != 0x30:
            raise ValueError("no validity")
        tag, start_, end_ = _der_item(der, pos)
        not_before = _der_time(der[start_:end_], tag)
        tag, start_, end_ = _der_item(der, end_)
        return not_before, _der_time(der[start_:end_], tag)
    except (IndexError, UnicodeDecodeError, binascii.Error) as exc:
        raise ValueError(f"unreadable certificate: {exc}") from None


def load_web_config(path: str | os.PathLike[str]) -> WebConfig:
    """Read and validate a web configuration file; ConfigError names the key and the reason."""
    path = Path(path)
    try:  # a FIFO or a file on a hung mount fails naming the file instead of hanging (core.configfiles)
        text = read_file(path, "web config file").decode("utf-8")
    except UnreadableFile as exc:
        raise ConfigError(str(exc)) from None
    except UnicodeDecodeError:
        raise ConfigError(f"web config file {path} is not UTF-8") from None
    import yaml

    try:
        data = yaml.load(text, Loader=_no_duplicates_loader())  # noqa: S506 - a SafeLoader subclass
        check_shape(data, f"web config file {path}")
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "syntax error"
        raise ConfigError(f"web config file {path} is not valid YAML{where}: {problem}") from None
    except RecursionError:
        raise ConfigError(f"web config file {path} is not valid YAML: {NESTED_TOO_DEEPLY}") from None
    except ValueError as exc:  # check_shape
        raise ConfigError(str(exc)) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"web config file {path}: the top level must be a mapping")
    try:
        parsed = WebConfigFile.model_validate(data)
    except ValidationError as exc:
        raise _pydantic_error(path, exc) from None

    base = path.resolve().parent
    users: dict[str, bytes] = {}
    for name, hashed in (parsed.basic_auth_users or {}).items():
        value = hashed.get_secret_value() if hashed is not None else ""
        match = BCRYPT_RE.match(value or "")
        if not match or not 4 <= int(match.group(1)) <= 31:
            raise _fail(path, f"basic_auth_users.{name}", "not a bcrypt hash (make one with htpasswd -nBC 10 \"\" "
                                                          "or Python's bcrypt.hashpw; see docs/security.md)")
        users[str(name)] = value.encode()

    headers: list[tuple[bytes, bytes]] = []
    http_cfg = parsed.http_server_config or HTTPServerConfig()
    for name, value in (http_cfg.headers or {}).items():
        if name not in HEADERS:
            raise _fail(path, f"http_server_config.headers.{name}", "this HTTP header can not be configured (one of "
                                                                   f"{', '.join(HEADERS)})")
        allowed = HEADERS[name]
        value = "" if value is None else str(value)
        if allowed is not None and value not in allowed:
            raise _fail(path, f"http_server_config.headers.{name}", f"invalid value {value!r} (one of "
                                                                   f"{', '.join(allowed)})")
        if any(c in value for c in "\r\n\0"):
            raise _fail(path, f"http_server_config.headers.{name}", "the value contains a line break")
        if value:  # blank: unset
            headers.append((name.lower().encode(), value.encode("latin-1", "replace")))

    rate = parsed.rate_limit or RateLimitConfig()
    if rate.interval < 0:
        raise _fail(path, "rate_limit.interval", "must not be negative")
    if rate.interval > 0 and rate.burst < 1:
        raise _fail(path, "rate_limit.burst", "must be at least 1 when rate_limit.interval is set (0 would refuse "
                                              "every request)")

    tls = parsed.tls_server_config
    ssl_context = None
    warnings: list[str] = []
    costs = sorted({int(value[4:6]) for value in users.values()})
    if len(costs) > 1:  # BasicAuth tops every check up to the costliest hash's work
        warnings.append(f"basic_auth_users: the bcrypt hashes have different costs ({', '.join(map(str, costs))}); "
                        f"every check costs as much as one at cost {costs[-1]}, so that timing does not tell the "
                        "users apart: make them all with the same cost")
    watched = [path]
    allowed_sans = None
    validity = None
    if tls is not None and tls.enabled():
        ssl_context, tls_warnings, validity = _build_ssl_context(path, tls, base)
        warnings += tls_warnings
        watched += [_resolve(base, p) for p in (tls.cert_file, tls.key_file, tls.client_ca_file) if p]
        if tls.client_allowed_sans is not None:
            if (tls.client_auth_type or "NoClientCert") == "NoClientCert":
                raise _fail(path, "tls_server_config.client_allowed_sans", "needs a client_auth_type that verifies "
                                                                          "client certificates")
            allowed_sans = frozenset(tls.client_allowed_sans)
    elif tls is not None and tls.client_allowed_sans:
        raise _fail(path, "tls_server_config.client_allowed_sans", "needs TLS (cert_file and key_file)")
    return WebConfig(path=path, tls=tls if ssl_context else None, ssl_context=ssl_context, users=users,
                     headers=headers, rate_interval=rate.interval, rate_burst=rate.burst, allowed_sans=allowed_sans,
                     watched=tuple(watched), warnings=warnings, cert_validity=validity)


def peer_allowed(config: WebConfig, ssl_object: ssl.SSLObject | None) -> bool:
    """client_allowed_sans: the client certificate must carry one of the listed SANs (DNS, IP, e-mail or URI)."""
    if config.allowed_sans is None:
        return True
    der = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
    if not der:
        return False
    from cryptography import x509  # only with client_allowed_sans (see _build_ssl_context)

    try:
        names = x509.load_der_x509_certificate(der).extensions.get_extension_for_class(
            x509.SubjectAlternativeName).value
    except (ValueError, x509.ExtensionNotFound):
        return False
    values = [str(v) for v in names.get_values_for_type(x509.DNSName)]
    values += [str(v) for v in names.get_values_for_type(x509.RFC822Name)]
    values += [str(v) for v in names.get_values_for_type(x509.IPAddress)]
    values += [str(v) for v in names.get_values_for_type(x509.UniformResourceIdentifier)]
    return any(v in config.allowed_sans for v in values)


# --------------------------------------------------------------------------------------------- live reload


def _fingerprint(paths: tuple[Path, ...]) -> tuple:
    result = []
    for p in paths:
        try:
            st = p.stat()  # follows symlinks: a Kubernetes secret volume swaps a symlink
            result.append((st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size))
        except OSError:
            result.append(None)
    return tuple(result)


class LiveWebConfig:
    """The web configuration in force; re-read when the file or a file it names changes."""

    def __init__(self, config: WebConfig, clock: Callable[[], float] = time.monotonic) -> None:
        self._config = config
        self._clock = clock
        self._checked = clock()
        self._fingerprint = _fingerprint(config.watched)
        self._failed_fingerprint: tuple | None = None
        self._lock = threading.Lock()
        for warning in config.warnings:
            log.warning("msg=%s", _q(f"web config: {warning}"))

    @property
    def tls(self) -> bool:
        return self._config.ssl_context is not None

    def certificate_validity(self) -> tuple[str, float, float] | None:
        """(file, not before, not after) of the server certificate in force (re-read when the file changes), for
        ``middleware_exporter_tls_certificate_not_after_seconds``; None without TLS."""
        return self.current().cert_validity

    def current(self) -> WebConfig:
        now = self._clock()
        if now - self._checked < RELOAD_CHECK_SECONDS:
            return self._config
        with self._lock:
            if now - self._checked < RELOAD_CHECK_SECONDS:
                return self._config
            self._checked = now
            fingerprint = _fingerprint(self._config.watched)
            if fingerprint != self._fingerprint and fingerprint != self._failed_fingerprint:
                self._reload(fingerprint)
        return self._config

    def _reload(self, fingerprint: tuple) -> None:
        try:
            config = load_web_config(self._config.path)
            if (config.ssl_context is None) != (self._config.ssl_context is None):
                raise ConfigError("switching TLS on or off needs a restart")
        except ConfigError as exc:
            self._failed_fingerprint = fingerprint
            log.error("msg=%s error=%s", _q("web config change not applied; the previous one stays in force"),
                      _q(str(exc)))
            return
        self._config = config
        self._fingerprint = _fingerprint(config.watched)
        self._failed_fingerprint = None
        log.info("msg=%s file=%s tls=%s users=%d", _q("web config reloaded"), _q(str(config.path)),
                 str(config.ssl_context is not None).lower(), len(config.users))
        for warning in config.warnings:
            log.warning("msg=%s", _q(f"web config: {warning}"))


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


# ---------------------------------------------------------------------------------------------- basic auth


class BasicAuth:
    """Checks ``Authorization: Basic`` against bcrypt hashes.

    bcrypt runs in one worker thread (at cost 10 it takes about 70 ms, and it must not block the event loop). The
    credentials it accepted are remembered under an HMAC of user, hash and password (a per-process key; the password
    itself is not kept), so a scrape with known-good credentials costs a dictionary lookup. Only successes enter that
    cache: a password-guessing flood cannot push the right credentials out of it. Refusals have a small cache of
    their own (a client repeating one wrong password costs a lookup too); checks of the same credentials that arrive
    together share one bcrypt run.

    The other checks wait in line: one line per client address, the lines served in turn, each first come first
    served. A check is not turned away because guesses hold the places: up to issue 38 at most 8 could wait and the
    9th got 503, so during a flood the guessers took every freed place back at once and the first check of the right
    credentials after a start (nothing cached yet) got 503 for as long as the flood lasted. Now it waits behind at
    most one check per other address and the checks already waiting from its own (one per connection: HTTP/1.1 asks
    one thing at a time, and the gate bounds the requests in progress); only beyond ``max_pending`` waiting checks is
    one refused (None: 503). After a refused check the thread rests as long as that check took: guessing keeps at
    most half a core busy, whatever the number of guessers.

    Timing does not tell which users exist: every check costs the bcrypt work of the costliest configured hash (cost
    M). A cheaper hash (cost c) is topped up with dummy checks, one at each cost from c to M - 1 (2^c + 2^c + ... +
    2^(M-1) = 2^M rounds); an unknown user is checked against a dummy hash of the cost of a configured user picked by
    its name (keyed, so the same each time), topped up the same way: the bcrypt calls of that user's check, in the
    same line and with the same caches. The dummy hashes are made without running bcrypt.
    """

    CACHE_SIZE = 128  # accepted credentials (a handful in practice: each needs a right password)
    REFUSED_CACHE_SIZE = 256
    _BCRYPT_ALPHABET = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

    def __init__(self, max_pending: int = 64, clock: Callable[[], float] = time.monotonic) -> None:
        self._key = secrets.token_bytes(32)
        self._cache: OrderedDict[bytes, bool] = OrderedDict()
        self._refused: OrderedDict[bytes, bool] = OrderedDict()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bcrypt")
        # client address -> its waiting checks (cache key, answer, password, hash, cost, top cost), in turn order
        self._lines: OrderedDict[str, deque[tuple]] = OrderedDict()
        self._checks: dict[bytes, asyncio.Future[bool]] = {}  # by cache key: waiting or running
        self._running = False
        self._max_pending = max_pending
        self._dummy: dict[int, bytes] = {}  # only the bcrypt thread reads and writes it
        self._clock = clock
        self._rest_until = 0.0  # only the bcrypt thread reads and writes it
        self.verifications = 0  # checks run by bcrypt (refused ones included), for tests and benchmarks

    def _cache_key(self, user: bytes, hashed: bytes, password: bytes) -> bytes:
        message = b"\0".join(base64.b64encode(p) for p in (user, hashed, password))
        return hmac.new(self._key, message, hashlib.sha256).digest()

    def _dummy_hash(self, cost: int) -> bytes:
        """A valid bcrypt hash of this cost that no password matches: a random salt and a random checksum (no
        bcrypt run, so the first unknown user costs what any other check does)."""
        import bcrypt  # here and in _verify, not at import: only a configuration with basic_auth_users needs it

        if cost not in self._dummy:
            checksum = "".join(secrets.choice(self._BCRYPT_ALPHABET) for _ in range(31)).encode()
            self._dummy[cost] = bcrypt.gensalt(cost) + checksum
        return self._dummy[cost]

    def _verify(self, password: bytes, hashed: bytes | None, cost: int, top: int) -> bool:
        rest = self._rest_until - self._clock()
        if rest > 0:
            time.sleep(rest)
        started = self._clock()
        self.verifications += 1
        import bcrypt

        ok = False
        for i, target in enumerate([hashed or self._dummy_hash(cost), *map(self._dummy_hash, range(cost, top))]):
            try:
                matched = bcrypt.checkpw(password, target)
            except ValueError:  # longer than 72 bytes, or a hash bcrypt refuses
                matched = False
            if i == 0:
                ok = matched and hashed is not None
        if not ok:
            now = self._clock()
            self._rest_until = now + (now - started)
        return ok

    async def check(self, users: dict[str, bytes], authorization: str | None, source: str = "") -> bool | None:
        """True: allowed; False: refused; None: too many checks waiting (answer 503). ``source``: the client's
        address, whose line the check waits in."""
        if not authorization or not users:
            return False
        scheme, _, encoded = authorization.strip().partition(" ")
        if scheme.lower() != "basic":
            return False
        try:
            decoded = base64.b64decode(encoded.strip(), validate=True)
        except (binascii.Error, ValueError):
            return False
        user, sep, password = decoded.partition(b":")
        if not sep:
            return False
        hashed = None
        for name, value in users.items():  # compare every name, in constant time, without an early exit
            if hmac.compare_digest(name.encode(), user):
                hashed = value
        hashes = list(users.values())
        pick = hmac.new(self._key, b"user\0" + user, hashlib.sha256).digest()  # for known users too: one path
        like = hashed if hashed is not None else hashes[int.from_bytes(pick[:8], "big") % len(hashes)]
        cost, top = int(like[4:6]), max(int(v[4:6]) for v in hashes)
        key = self._cache_key(user, hashed or b"", password)
        for cache in (self._cache, self._refused):
            if key in cache:
                cache.move_to_end(key)
                return cache[key]
        answer = self._checks.get(key)
        if answer is None:
            if len(self._checks) >= self._max_pending:
                return None
            answer = self._checks[key] = asyncio.get_running_loop().create_future()
            self._lines.setdefault(source, deque()).append((key, answer, password, hashed, cost, top))
            self._next()
        return await asyncio.shield(answer)  # a waiter that goes away does not take the check with it

    def _next(self) -> None:
        """Hand the next waiting check to the bcrypt thread: the first of the line whose turn it is."""
        if self._running or not self._lines:
            return
        source, line = next(iter(self._lines.items()))
        key, answer, *job = line.popleft()
        if line:
            self._lines.move_to_end(source)
        else:
            del self._lines[source]
        self._running = True
        done = asyncio.get_running_loop().run_in_executor(self._executor, self._verify, *job)
        done.add_done_callback(functools.partial(self._finish, key, answer))

    def _finish(self, key: bytes, answer: asyncio.Future[bool], done: asyncio.Future[bool]) -> None:
        self._running = False
        del self._checks[key]
        if done.cancelled() or done.exception() is not None:  # fails closed, not remembered
            log.error("msg=%s error=%s", _q("basic auth check failed"),
                      _q("cancelled" if done.cancelled() else repr(done.exception())))
            answer.set_result(False)
        else:
            ok = done.result()
            cache, size = (self._cache, self.CACHE_SIZE) if ok else (self._refused, self.REFUSED_CACHE_SIZE)
            cache[key] = ok
            while len(cache) > size:
                cache.popitem(last=False)
            answer.set_result(ok)
        self._next()


class _TokenBucket:
    """rate_limit: ``burst`` requests at once, then one per ``interval`` (golang.org/x/time/rate's semantics)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._tokens = 0.0
        self._stamp = clock()
        self._settings: tuple[float, int] | None = None

    def allow(self, interval: float, burst: int) -> bool:
        now = self._clock()
        if self._settings != (interval, burst):
            self._settings = (interval, burst)
            self._tokens, self._stamp = float(burst), now
        self._tokens = min(float(burst), self._tokens + (now - self._stamp) / interval)
        self._stamp = now
        if self._tokens >= 1:
            self._tokens -= 1
            return True
        return False

