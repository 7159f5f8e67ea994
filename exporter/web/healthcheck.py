"""``middleware-exporter healthcheck``: ask the serving exporter for /healthz the way its own configuration says.

A container's HEALTHCHECK command runs next to the server without the server's arguments, so a fixed URL
(http://127.0.0.1:19462/healthz) is wrong as soon as the web config turns TLS on, basic auth protects /healthz, the
configuration file moves the port or the server listens on one address only. Instead the check reads the serving
process's command line, environment and working directory from /proc/<pid> (PID 1 in the image, whose ENTRYPOINT is
the exporter; else the one exporter process of this user in this mount namespace, e.g. behind ``docker run
--init``), loads its configuration as ``run`` does (``exporter.cli``) and probes the address it listens on:

- https when its web config has TLS, accepting exactly the certificate that web config names (compared byte for
  byte: no CA bundle is needed, and nothing else is accepted); with client certificates required (the check has
  none to offer) the handshake completed with that certificate, or the server's TLS 1.2 alert, is the answer;
- a 401 carrying the exporter's own ``WWW-Authenticate`` realm (basic auth without ``--web.auth-exempt-path
  /healthz``), a 429 of the rate limit or a 503 of the request bound are answers too: the server is alive.

Exit status 0 (healthy) or 1 (unhealthy), one line on stdout saying which and why, as Docker expects.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import os
import socket
import ssl
from dataclasses import dataclass
from pathlib import Path

from .gate import REALM
from .webconfig import TLS_VERSIONS, WebConfig

PROC = Path("/proc")
# The gate's answers that prove the server is serving although /healthz itself was not run.
ALIVE_REFUSALS = {401: "needs basic auth", 429: "rate limited", 503: "busy"}


class NotFound(Exception):
    """No serving exporter process to ask, or its command line cannot be read."""


@dataclass
class ServerProcess:
    pid: int
    args: list[str]  # the exporter's own arguments (after the program name)
    environ: dict[str, str]
    cwd: Path


def exporter_args(cmdline: list[str]) -> list[str] | None:
    """The exporter's arguments in a process's command line (``middleware-exporter ...``, the console script run
    by its interpreter, or ``python -m exporter ...``), or None when the process is something else."""
    if not cmdline:
        return None
    program = os.path.basename(cmdline[0])
    if program == "middleware-exporter":
        return cmdline[1:]
    if not program.startswith("python"):
        return None
    index = 1
    while index < len(cmdline) and cmdline[index].startswith("-") and cmdline[index] != "-m":
        index += 2 if cmdline[index] in ("-X", "-W") else 1  # interpreter options, some with an argument
    rest = cmdline[index:]
    if len(rest) >= 2 and rest[0] == "-m" and rest[1] == "exporter":
        return rest[2:]
    if rest and os.path.basename(rest[0]) == "middleware-exporter":
        return rest[1:]
    return None


def _cmdline(pid: int | str, proc: Path) -> list[str]:
    raw = (proc / str(pid) / "cmdline").read_bytes()
    return [os.fsdecode(part) for part in raw.split(b"\0")[:-1]] if raw else []


def find_server(is_serving, proc: Path = PROC) -> int:
    """PID 1 when it is a serving exporter (the image's ENTRYPOINT); else the only serving exporter of this user in
    this mount namespace. ``is_serving(args)`` says whether exporter arguments start the server."""
    def serving(pid: int | str) -> bool:
        try:
            args = exporter_args(_cmdline(pid, proc))
        except OSError:
            return False
        return args is not None and is_serving(args)

    if serving(1):
        return 1
    try:
        namespace = os.readlink(proc / "self" / "ns" / "mnt")
    except OSError:
        namespace = None
    found = []
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) in (1, os.getpid()):
            continue
        try:
            if entry.stat().st_uid != os.getuid():
                continue
            if namespace is not None and os.readlink(entry / "ns" / "mnt") != namespace:
                continue
        except OSError:
            continue
        if serving(entry.name):
            found.append(int(entry.name))
    if len(found) == 1:
        return found[0]
    if not found:
        raise NotFound("no serving middleware-exporter process found (PID 1 is not one); give --pid")
    raise NotFound(f"{len(found)} serving middleware-exporter processes ({', '.join(map(str, sorted(found)))}); "
                   "give --pid")


def server_process(pid: int, proc: Path = PROC) -> ServerProcess:
    """What the server was started with: its arguments, environment (this process's own when the server's cannot
    be read) and working directory (relative --config and --web.config.file paths are relative to it)."""
    base = proc / str(pid)
    try:
        args = exporter_args(_cmdline(pid, proc))
    except FileNotFoundError:
        raise NotFound(f"no process {pid}") from None
    except OSError as exc:
        raise NotFound(f"process {pid}: {exc.strerror or exc}") from None
    if args is None:
        raise NotFound(f"process {pid} is not middleware-exporter")
    try:
        raw = (base / "environ").read_bytes()
        environ = dict(os.fsdecode(item).partition("=")[::2] for item in raw.split(b"\0") if b"=" in item)
    except OSError:
        environ = dict(os.environ)
    return ServerProcess(pid=pid, args=args, environ=environ, cwd=base / "cwd")


def probe_address(host: str, port: int) -> tuple[str, int]:
    """Where a client here reaches a server listening on ``host`` (as ``run`` resolves it): the address itself, or
    loopback of the same family for an all-interfaces address."""
    infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    family, _, _, _, address = infos[0]
    target = address[0]
    if ipaddress.ip_address(target.split("%", 1)[0]).is_unspecified:
        target = "::1" if family == socket.AF_INET6 else "127.0.0.1"
    return target, port


def _served_certificate(config: WebConfig) -> bytes:
    """The DER of the first certificate the web config names (what the server presents)."""
    from cryptography import x509  # only a TLS probe needs it (docs/footprint.md)
    from cryptography.hazmat.primitives.serialization import Encoding

    tls = config.tls
    if tls.cert_file:
        path = Path(tls.cert_file)
        pem = (path if path.is_absolute() else config.path.resolve().parent / path).read_bytes()
    else:
        pem = tls.cert.encode()
    return x509.load_pem_x509_certificates(pem)[0].public_bytes(Encoding.DER)


def _client_context(config: WebConfig) -> ssl.SSLContext:
    # The server's certificate is compared with the configured one after the handshake; no CA is involved.
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.minimum_version = TLS_VERSIONS[config.tls.min_version]
    ctx.maximum_version = TLS_VERSIONS[config.tls.max_version]
    return ctx


def probe(host: str, port: int, web_config: WebConfig | None, timeout: float) -> tuple[bool, str]:
    """GET /healthz of the server listening on host:port; (healthy, what was seen)."""
    target, port = probe_address(host, port)
    tls = web_config is not None and web_config.ssl_context is not None
    shown = f"[{target}]" if ":" in target else target
    url = f"{'https' if tls else 'http'}://{shown}:{port}/healthz"
    if tls:
        conn: http.client.HTTPConnection = http.client.HTTPSConnection(target, port, timeout=timeout,
                                                                       context=_client_context(web_config))
    else:
        conn = http.client.HTTPConnection(target, port, timeout=timeout)
    try:
        conn.connect()
        if tls:
            served = conn.sock.getpeercert(binary_form=True)
            if served != _served_certificate(web_config):
                return False, f"{url}: the server presents a certificate other than the one its web config names"
            if web_config.tls.client_auth_type == "RequireAndVerifyClientCert":
                # no client certificate to offer: the handshake the server completed with its own is the answer
                return True, f"{url}: TLS handshake with the configured certificate (client certificates required)"
        conn.request("GET", "/healthz", headers={"User-Agent": "middleware-exporter-healthcheck"})
        response = conn.getresponse()
        body = response.read(4096)
    except ssl.SSLError as exc:
        if tls and web_config.tls.client_auth_type == "RequireAndVerifyClientCert" and "ALERT" in str(exc).upper():
            # TLS 1.2: the server's alert refusing the missing client certificate is its answer
            return True, f"{url}: TLS alert from the server (client certificates required)"
        return False, f"{url}: TLS: {exc.reason or exc}"
    except (OSError, http.client.HTTPException) as exc:
        return False, f"{url}: {getattr(exc, 'strerror', None) or exc or type(exc).__name__}"
    except ValueError as exc:  # the configured certificate cannot be read back
        return False, f"{url}: {exc}"
    finally:
        conn.close()
    if response.status == 200:
        try:
            ok = json.loads(body).get("status") == "ok"
        except (ValueError, AttributeError):
            ok = False
        return (True, f"{url}: 200") if ok else (False, f"{url}: 200 but not the exporter's answer")
    if response.status == 401 and REALM in (response.getheader("WWW-Authenticate") or ""):
        return True, f"{url}: 401 ({ALIVE_REFUSALS[401]}: the server answers)"
    if response.status in (429, 503):
        return True, f"{url}: {response.status} ({ALIVE_REFUSALS[response.status]}: the server answers)"
    return False, f"{url}: HTTP {response.status}"
