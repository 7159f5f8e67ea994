"""The exporter-toolkit web configuration (--web.config.file): TLS with certificates made by openssl here, basic auth
with bcrypt hashes, the headers section, the probes' exemption, certificate rotation, and Debian's Prometheus
scraping over https with basic_auth. exporter-toolkit's own test files (tests/web/fixtures/webconfig, see SOURCE.md)
must be accepted or refused as exporter-toolkit does."""

from __future__ import annotations

import asyncio
import base64
import http.client
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import bcrypt
import pytest
from cryptography import x509

from exporter.core.config import ConfigError
from exporter.web import webconfig
from exporter.web.gate import WebGate
from exporter.web.webconfig import BasicAuth, load_web_config

from ..fakes.guessers import basic, flood
from ..support import REPO, free_port, http_get, require_binary, stop_process

TOOLKIT = Path(__file__).parent / "fixtures" / "webconfig"
PASSWORD = "s3cret-scrape"


# ------------------------------------------------------------------------------------------ certificates


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run([require_binary("openssl"), *args], cwd=cwd, check=True, capture_output=True)


class Pki:
    """A CA and certificates signed by it, made with the openssl command line (EC P-256 keys: quick to make)."""

    def __init__(self, root: Path, name: str = "ca") -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.name = name
        _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                 "-keyout", f"{name}.key", "-out", f"{name}.crt", "-days", "2", "-subj", f"/CN={name}", cwd=root)
        self.crt = root / f"{name}.crt"

    def issue(self, name: str, days: int = 2, san: str = "DNS:localhost,IP:127.0.0.1",
              usage: str = "serverAuth") -> tuple[Path, Path]:
        """``days=-1`` makes a certificate that expired yesterday."""
        (self.root / f"{name}.ext").write_text(f"subjectAltName={san}\nextendedKeyUsage={usage}\n")
        _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", f"{name}.key",
                 "-out", f"{name}.csr", "-subj", f"/CN={name}", cwd=self.root)
        _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", self.crt.name, "-CAkey", f"{self.name}.key",
                 "-CAcreateserial", "-out", f"{name}.crt", "-days", str(days), "-extfile", f"{name}.ext",
                 cwd=self.root)
        os.chmod(self.root / f"{name}.key", 0o600)
        return self.root / f"{name}.crt", self.root / f"{name}.key"


def bcrypt_hash(password: str, cost: int = 4) -> str:
    return bcrypt.hashpw(password.encode(), bcrypt.gensalt(cost)).decode()


# ----------------------------------------------------------------------------------------------- clients


def client_context(ca: Path | None, cert: tuple[Path, Path] | None = None) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(ca) if ca else None)
    if cert:
        ctx.load_cert_chain(str(cert[0]), str(cert[1]))
    return ctx


def https_get(port: int, path: str, ctx: ssl.SSLContext, user: str | None = None, password: str | None = None,
              host: str = "127.0.0.1") -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPSConnection(host, port, context=ctx, timeout=10)
    headers = {}
    if user is not None:
        headers["Authorization"] = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
    try:
        conn.request("GET", path, headers=headers)
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def peer_certificate(port: int, ctx: ssl.SSLContext) -> x509.Certificate:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        with ctx.wrap_socket(raw, server_hostname="localhost") as tls:
            return x509.load_der_x509_certificate(tls.getpeercert(binary_form=True))


class Exporter:
    def __init__(self, proc: subprocess.Popen, port: int, log: Path) -> None:
        self.proc, self.port, self.log_path = proc, port, log

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


@pytest.fixture
def start_web(tmp_path):
    """Start ``python -m exporter run --web.config.file FILE``; wait until /healthz answers over TLS."""
    started: list[Exporter] = []

    def start(web_config: Path, ctx: ssl.SSLContext | None, *args: str) -> Exporter:
        port = free_port()
        log = tmp_path / f"exporter-{port}.log"
        env = {k: v for k, v in os.environ.items() if not k.startswith("MIDDLEWARE_EXPORTER_")}
        with open(log, "wb") as out:
            proc = subprocess.Popen([sys.executable, "-m", "exporter", "run", "--web.listen-address",
                                     f"127.0.0.1:{port}", "--web.config.file", str(web_config), *args],
                                    cwd=REPO, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
        running = Exporter(proc, port, log)
        started.append(running)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise AssertionError(f"exporter exited with {proc.returncode}:\n{running.log()}")
            try:
                if ctx is None:
                    http_get(f"http://127.0.0.1:{port}/healthz")
                else:
                    https_get(port, "/healthz", ctx)
                return running
            except OSError:
                time.sleep(0.1)
        raise AssertionError(f"exporter not answering within 30 s:\n{running.log()}")

    yield start
    for running in started:
        running.proc.terminate()
        try:
            running.proc.wait(10)
        except subprocess.TimeoutExpired:
            running.proc.kill()
            running.proc.wait()


@pytest.fixture
def pki(tmp_path) -> Pki:
    return Pki(tmp_path / "pki")


def write_config(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


# ------------------------------------------------------------------------------- the file format itself


def _toolkit_dir(tmp_path: Path, name: str) -> Path:
    """A copy of one exporter-toolkit test file next to the certificates it names, made here with openssl."""
    folder = tmp_path / "toolkit"
    if not folder.exists():
        pki = Pki(folder / "pki")
        crt, key = pki.issue("server")
        shutil.copy(crt, folder / "server.crt")
        shutil.copy(key, folder / "server.key")
        for ca_name in ("client_selfsigned", "client2_selfsigned"):
            shutil.copy(Pki(folder / ca_name, ca_name).crt, folder / f"{ca_name}.pem")
    shutil.copy(TOOLKIT / name, folder / name)
    return folder / name


GOOD = sorted(p.name for p in TOOLKIT.iterdir() if ".good." in p.name)
BAD = {
    "web_config_junk_key.yml": "tls_server_config.cert_filse: unknown key",
    "web_config_headers_extra_header.bad.yml": "http_server_config.headers.Content-Type",
    "web_config_headers_frame_options.bad.yml": "http_server_config.headers.X-Frame-Options: invalid value",
    "web_config_noAuth_wrongTLSVersion.bad.yml": "tls_server_config.min_version: unknown TLS version",
    "web_config_noAuth_inventedCiphers.bad.yml": "tls_server_config.cipher_suites[0]: unknown cipher suite",
    "web_config_auth_user_list_invalid.bad.yml": "basic_auth_users.john: not a bcrypt hash",
    "web_config_noAuth_certPath_empty.bad.yml": "missing one of cert or cert_file",
}


def test_every_toolkit_file_is_covered():
    assert len(GOOD) >= 9 and set(BAD) | set(GOOD) == {p.name for p in TOOLKIT.iterdir() if p.suffix != ".md"}


@pytest.mark.parametrize("name", GOOD)
def test_files_exporter_toolkit_accepts_are_accepted(tmp_path, name):
    config = load_web_config(_toolkit_dir(tmp_path, name))
    text = (TOOLKIT / name).read_text()
    assert (config.ssl_context is not None) == ("tls_server_config" in text)
    assert len(config.users) == text.count("$2y$")
    if "cipher_suites" in text and "TLS12" in text:
        assert config.ssl_context.maximum_version == ssl.TLSVersion.TLSv1_2
    if "client_allowed_sans" in text:
        assert config.allowed_sans == {"one", "test3", "two"}


@pytest.mark.parametrize("name", sorted(BAD))
def test_files_exporter_toolkit_refuses_are_refused_naming_the_key(tmp_path, name):
    with pytest.raises(ConfigError) as err:
        load_web_config(_toolkit_dir(tmp_path, name))
    assert BAD[name] in str(err.value)
    assert "doe" not in str(err.value)  # the bad "hash" of the user list file is never echoed


def test_a_bad_web_config_fails_at_start_with_exit_2_and_echoes_no_secret(tmp_path, pki):
    crt, key = pki.issue("server")
    hashed = bcrypt_hash(PASSWORD)
    bad = write_config(tmp_path / "web.yml", f"tls_server_config:\n  cert_file: {crt}\n  key_file: {key}\n"
                                             f"basic_auth_users:\n  alice: {hashed}\n  bob: {hashed[:-3]}\n")
    result = subprocess.run([sys.executable, "-m", "exporter", "check-config", "--web.config.file", str(bad)],
                            cwd=REPO, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "basic_auth_users.bob: not a bcrypt hash" in result.stderr
    assert hashed[7:] not in result.stderr and hashed[7:-3] not in result.stderr
    # inline key material that does not load: the reason is given, the key is not
    pem = key.read_text()
    inline = write_config(tmp_path / "inline.yml", "tls_server_config:\n  cert: |\n"
                          + "".join(f"    {line}\n" for line in crt.read_text().splitlines())
                          + "  key: |\n" + "".join(f"    {line}\n" for line in pem.splitlines()[:-2])
                          + "    -----END PRIVATE KEY-----\n")
    result = subprocess.run([sys.executable, "-m", "exporter", "run", "--web.config.file", str(inline)],
                            cwd=REPO, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stderr
    assert "tls_server_config" in result.stderr and "cannot load the certificate and key" in result.stderr
    body = "".join(pem.splitlines()[1:-1])
    assert body[:40] not in result.stderr and body[-40:] not in result.stderr
    # a repeated key, a misspelt section and an unsupported client auth type
    for text, expected in (("basic_auth_users:\n  a: x\nbasic_auth_users:\n  b: y\n", "is repeated"),
                           ("http_server_configs: {}\n", "http_server_configs: unknown key"),
                           (f"tls_server_config:\n  cert_file: {crt}\n  key_file: {key}\n"
                            "  client_auth_type: RequireAnyClientCert\n", "verifies every client certificate")):
        with pytest.raises(ConfigError, match=expected):
            load_web_config(write_config(tmp_path / "x.yml", text))


def test_cipher_names_match_openssls_own_table():
    """Each Go (IANA) cipher suite name maps to the OpenSSL name `openssl ciphers -stdname` pairs it with."""
    out = subprocess.run([require_binary("openssl"), "ciphers", "-stdname", "ALL:@SECLEVEL=0"], capture_output=True,
                         text=True, check=True).stdout
    pairs = dict(line.split(" - ")[:2] for line in out.splitlines() if " - " in line)
    pairs = {k.strip(): v.split()[0] for k, v in pairs.items()}
    for go_name, openssl_name in webconfig.CIPHERS.items():
        assert pairs.get(go_name) == openssl_name, go_name
    for suite in webconfig.TLS13_SUITES:
        assert suite in pairs


def test_the_shipped_example_loads(tmp_path, pki):
    crt, key = pki.issue("server")
    (tmp_path / "tls").mkdir()
    shutil.copy(crt, tmp_path / "tls" / "server.crt")
    shutil.copy(key, tmp_path / "tls" / "server.key")
    shutil.copy(REPO / "examples" / "web-config.yml", tmp_path / "web-config.yml")
    config = load_web_config(tmp_path / "web-config.yml")
    assert config.ssl_context is not None and len(config.headers) == 3
    assert bcrypt.checkpw(b"change-me", config.users["prometheus"])


def test_relative_paths_are_relative_to_the_web_config_file(tmp_path, pki):
    crt, key = pki.issue("server")
    config = load_web_config(write_config(pki.root / "web.yml", f"tls_server_config:\n  cert_file: {crt.name}\n"
                                                                 f"  key_file: {key.name}\n"))
    assert config.ssl_context is not None and crt in config.watched


# ---------------------------------------------------------------------------------- basic auth, headers


def test_basic_auth_caches_results_and_checks_unknown_users_with_bcrypt(monkeypatch):
    calls = []
    real = bcrypt.checkpw
    monkeypatch.setattr(bcrypt, "checkpw", lambda p, h: calls.append(h) or real(p, h))
    users = {"alice": bcrypt_hash(PASSWORD).encode()}
    auth = BasicAuth()

    def header(user: str, password: str) -> str:
        return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()

    async def run():
        assert await auth.check(users, header("alice", PASSWORD)) is True
        assert await auth.check(users, header("alice", PASSWORD)) is True
        assert len(calls) == 1  # the second scrape is served from the cache
        assert await auth.check(users, header("alice", "wrong")) is False
        assert await auth.check(users, header("mallory", PASSWORD)) is False
        assert len(calls) == 3 and calls[2] != users["alice"]  # a dummy hash, not skipped
        assert await auth.check(users, "Basic !!!") is False
        assert await auth.check(users, "Bearer abc") is False
        assert await auth.check(users, None) is False
        assert await auth.check(users, header("alice", "x" * 100)) is False  # over bcrypt's 72 bytes
        # a new hash for the same user invalidates the cached answer
        users["alice"] = bcrypt_hash("rotated").encode()
        assert await auth.check(users, header("alice", PASSWORD)) is False

    asyncio.run(run())


def test_request_bound_answers_503_beyond_max_requests():
    release = asyncio.Event()

    async def slow_app(scope, receive, send):
        await release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    gate = WebGate(slow_app, max_requests=2)

    async def request() -> int:
        sent = []

        async def send(message):
            sent.append(message)

        await gate({"type": "http", "path": "/metrics", "headers": []}, None, send)
        return sent[0]["status"]

    async def run():
        first = [asyncio.create_task(request()) for _ in range(2)]
        await asyncio.sleep(0)
        assert await request() == 503
        release.set()
        assert await asyncio.gather(*first) == [200, 200]
        assert await request() == 200

    asyncio.run(run())


# ------------------------------------------------------------------------------------ a running exporter


def _auth_config(tmp_path: Path, pki: Pki, extra: str = "") -> Path:
    crt, key = pki.issue("server")
    return write_config(tmp_path / "web.yml", f"""tls_server_config:
  cert_file: {crt}
  key_file: {key}
http_server_config:
  headers:
    X-Frame-Options: deny
    X-Content-Type-Options: nosniff
    Strict-Transport-Security: max-age=31536000
basic_auth_users:
  prometheus: {bcrypt_hash(PASSWORD, 10)}
{extra}""")


@pytest.mark.integration
def test_tls_and_basic_auth_protect_every_route(tmp_path, pki, start_web):
    ctx = client_context(pki.crt)
    exporter = start_web(_auth_config(tmp_path, pki), ctx)
    status, headers, _ = https_get(exporter.port, "/metrics", ctx)
    assert status == 401 and headers["www-authenticate"].startswith("Basic")
    assert headers["x-frame-options"] == "deny" and headers["strict-transport-security"] == "max-age=31536000"
    status, headers, body = https_get(exporter.port, "/metrics", ctx, "prometheus", PASSWORD)
    assert status == 200 and b"middleware_host_cpus" in body
    assert headers["x-content-type-options"] == "nosniff"
    assert https_get(exporter.port, "/metrics", ctx, "prometheus", "wrong")[0] == 401
    assert https_get(exporter.port, "/metrics", ctx, "grafana", PASSWORD)[0] == 401
    for path in ("/", "/healthz", "/readyz", "/api/v1/collectors", "/api/v1/openapi.json", "/nothing-here"):
        assert https_get(exporter.port, path, ctx)[0] == 401, path
    # plain HTTP on the TLS port: no HTTP answer at all
    with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
        http_get(f"http://127.0.0.1:{exporter.port}/metrics")
    # a client that does not trust the CA refuses the server
    with pytest.raises(ssl.SSLCertVerificationError):
        https_get(exporter.port, "/metrics", ssl.create_default_context())
    # the served certificate is the configured one (by name, with SNI)
    assert peer_certificate(exporter.port, ctx).subject.rfc4514_string() == "CN=server"
    assert exporter.proc.poll() is None
    assert PASSWORD not in exporter.log()


@pytest.mark.integration
def test_healthz_is_open_only_when_the_flag_says_so(tmp_path, pki, start_web):
    ctx = client_context(pki.crt)
    exporter = start_web(_auth_config(tmp_path, pki), ctx, "--web.auth-exempt-path", "/healthz")
    assert https_get(exporter.port, "/healthz", ctx)[0] == 200
    assert https_get(exporter.port, "/readyz", ctx)[0] == 401
    assert https_get(exporter.port, "/metrics", ctx)[0] == 401
    result = subprocess.run([sys.executable, "-m", "exporter", "run", "--web.auth-exempt-path", "/metrics"],
                            cwd=REPO, capture_output=True, text=True, timeout=60)  # a server flag: run's
    assert result.returncode == 2 and "invalid choice" in result.stderr


@pytest.mark.integration
def test_basic_auth_without_tls_and_rate_limit(tmp_path, start_web):
    config = write_config(tmp_path / "web.yml", f"basic_auth_users:\n  prometheus: {bcrypt_hash(PASSWORD)}\n"
                                                "rate_limit:\n  interval: 1m\n  burst: 3\n")
    exporter = start_web(config, None)  # the start-up probe spends one token
    url = f"http://127.0.0.1:{exporter.port}/metrics"
    token = base64.b64encode(f"prometheus:{PASSWORD}".encode()).decode()
    assert http_get(url)[0] == 401
    assert http_get(url, {"Authorization": f"Basic {token}"})[0] == 200
    assert http_get(url, {"Authorization": f"Basic {token}"})[0] == 429


@pytest.mark.integration
def test_mutual_tls(tmp_path, pki, start_web):
    crt, key = pki.issue("server")
    client = pki.issue("prometheus-client", usage="clientAuth", san="DNS:prometheus")
    expired = pki.issue("expired-client", days=-1, usage="clientAuth", san="DNS:prometheus")
    stranger = Pki(tmp_path / "other", "other-ca").issue("stranger", usage="clientAuth", san="DNS:prometheus")
    other_san = pki.issue("other-san", usage="clientAuth", san="DNS:grafana")
    config = write_config(tmp_path / "web.yml", f"tls_server_config:\n  cert_file: {crt}\n  key_file: {key}\n"
                          f"  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: {pki.crt}\n"
                          "  client_allowed_sans: [prometheus]\n")
    exporter = start_web(config, client_context(pki.crt, client))
    assert https_get(exporter.port, "/metrics", client_context(pki.crt, client))[0] == 200
    for who in (None, expired, stranger, other_san):
        with pytest.raises((ssl.SSLError, ConnectionError, http.client.RemoteDisconnected)):
            https_get(exporter.port, "/metrics", client_context(pki.crt, who))
    assert exporter.proc.poll() is None


@pytest.mark.integration
def test_expired_server_certificate_is_served_with_a_warning(tmp_path, pki, start_web):
    crt, key = pki.issue("server", days=-1)
    config = write_config(tmp_path / "web.yml", f"tls_server_config:\n  cert_file: {crt}\n  key_file: {key}\n")
    unverified = ssl.create_default_context()
    unverified.check_hostname, unverified.verify_mode = False, ssl.CERT_NONE
    exporter = start_web(config, unverified)
    with pytest.raises(ssl.SSLCertVerificationError, match="expired"):
        https_get(exporter.port, "/metrics", client_context(pki.crt))
    assert "the server certificate expired" in exporter.log()


@pytest.mark.integration
def test_certificate_rotation_is_picked_up_without_restart(tmp_path, pki, start_web):
    crt, key = pki.issue("server-2026")
    live_crt, live_key = tmp_path / "tls.crt", tmp_path / "tls.key"
    shutil.copy(crt, live_crt)
    shutil.copy(key, live_key)
    config = write_config(tmp_path / "web.yml", f"tls_server_config:\n  cert_file: {live_crt}\n"
                                                f"  key_file: {live_key}\n")
    ctx = client_context(pki.crt)
    exporter = start_web(config, ctx)
    assert peer_certificate(exporter.port, ctx).subject.rfc4514_string() == "CN=server-2026"
    new_crt, new_key = pki.issue("server-2027")
    # a broken half-rotation (new certificate, old key) is refused and the old pair keeps serving
    shutil.copy(new_crt, tmp_path / "tmp.crt")
    os.replace(tmp_path / "tmp.crt", live_crt)
    time.sleep(1.2)
    assert peer_certificate(exporter.port, ctx).subject.rfc4514_string() == "CN=server-2026"
    shutil.copy(new_key, tmp_path / "tmp.key")
    os.replace(tmp_path / "tmp.key", live_key)
    deadline, subject = time.monotonic() + 15, ""
    while time.monotonic() < deadline:
        subject = peer_certificate(exporter.port, ctx).subject.rfc4514_string()
        if subject == "CN=server-2027":
            break
        time.sleep(0.2)
    assert subject == "CN=server-2027"
    assert https_get(exporter.port, "/metrics", ctx)[0] == 200
    log = exporter.log()
    assert "web config change not applied" in log and "web config reloaded" in log
    assert new_key.read_text().splitlines()[1] not in log


@pytest.mark.integration
def test_prometheus_scrapes_over_https_with_basic_auth(tmp_path, pki, start_web):
    binary = require_binary("prometheus")
    ctx = client_context(pki.crt)
    exporter = start_web(_auth_config(tmp_path, pki), ctx)
    (tmp_path / "password").write_text(PASSWORD)
    port = free_port()
    prom_config = tmp_path / "prometheus.yml"
    prom_config.write_text(f"""global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: middleware
    scheme: https
    tls_config:
      ca_file: {pki.crt}
      server_name: localhost
    basic_auth:
      username: prometheus
      password_file: {tmp_path / 'password'}
    static_configs:
      - targets: ['127.0.0.1:{exporter.port}']
  - job_name: middleware-no-auth
    scheme: https
    tls_config:
      ca_file: {pki.crt}
      server_name: localhost
    static_configs:
      - targets: ['127.0.0.1:{exporter.port}']
""")
    with open(tmp_path / "prometheus.log", "wb") as log:
        proc = subprocess.Popen([binary, f"--config.file={prom_config}", f"--storage.tsdb.path={tmp_path / 'data'}",
                                 f"--web.listen-address=127.0.0.1:{port}"], stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
    try:
        deadline, targets = time.monotonic() + 60, {}
        while time.monotonic() < deadline:
            try:
                status, _, body = http_get(f"http://127.0.0.1:{port}/api/v1/targets")
                if status == 200:
                    targets = {t["labels"]["job"]: t for t in json.loads(body)["data"]["activeTargets"]}
                    if targets.get("middleware", {}).get("health") == "up" and \
                            targets.get("middleware-no-auth", {}).get("health") == "down":
                        break
            except OSError:
                pass
            time.sleep(0.5)
        assert targets["middleware"]["health"] == "up", targets
        assert targets["middleware"]["scrapeUrl"].startswith("https://")
        assert "401" in targets["middleware-no-auth"]["lastError"], targets
        query = urllib.parse.quote('middleware_host_cpus{job="middleware"}')
        _, _, body = http_get(f"http://127.0.0.1:{port}/api/v1/query?query={query}")
        assert json.loads(body)["data"]["result"]
    finally:
        proc.terminate()
        proc.wait(10)


# ------------------------------------------------------------------------------- the image's HEALTHCHECK


def _healthcheck_argv(pid: int) -> list[str]:
    """The exact command of the Dockerfile's HEALTHCHECK, its program found where the image's PATH would find it
    (this venv), pointed at ``pid`` (in the image the server is PID 1, which the command finds by itself)."""
    from ..deploy.test_dockerfile import DOCKERFILE, healthcheck_command, parse_dockerfile

    command = healthcheck_command(parse_dockerfile(DOCKERFILE.read_text()))
    program = Path(sys.executable).parent / command[0]
    return [str(program) if program.exists() else command[0], *command[1:], "--pid", str(pid)]


def _run_healthcheck(pid: int, env: dict[str, str]) -> subprocess.CompletedProcess:
    # Docker runs it with the container's environment (the server's), in the image's working directory (/)
    return subprocess.run(_healthcheck_argv(pid), cwd="/", env=env, capture_output=True, text=True, timeout=60)


def _non_loopback_address() -> str:
    """An address of this machine that is not loopback; 127.0.0.2 where there is none (the old check, fixed on
    127.0.0.1, misses both)."""
    import psutil

    for addresses in psutil.net_if_addrs().values():
        for address in addresses:
            if address.family == socket.AF_INET and not address.address.startswith("127."):
                try:
                    with socket.socket() as sock:
                        sock.bind((address.address, 0))
                    return address.address
                except OSError:
                    continue
    return "127.0.0.2"


def _start_plain(tmp_path: Path, argv: list[str], env: dict[str, str], url: str, cwd: Path,
                 ctx: ssl.SSLContext | None = None) -> subprocess.Popen:
    log = tmp_path / "exporter.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "exporter", "run", "--no-collector.process", *argv], cwd=cwd,
                                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"exporter exited with {proc.returncode}:\n{log.read_text(errors='replace')}")
        try:
            urllib.request.urlopen(url, timeout=2, context=ctx)
            return proc
        except urllib.error.HTTPError:
            return proc
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"exporter not answering within 30 s:\n{log.read_text(errors='replace')}")


@pytest.mark.integration
@pytest.mark.parametrize("case", ["tls", "basic-auth", "port-in-config-file", "non-loopback-address"])
def test_image_healthcheck_follows_the_configuration(tmp_path, pki, case):
    """Issue 25: the HEALTHCHECK probed http://127.0.0.1:<port>/healthz, so each of these left the container
    unhealthy for ever. The image's exact command, against a real exporter configured each way: healthy while it
    serves, unhealthy once it is gone."""
    port = free_port()
    workdir = tmp_path / "work"
    workdir.mkdir()
    # the port in the variable the old check read, so that only what each case is about can make it fail
    env = {k: v for k, v in os.environ.items() if not k.startswith("MIDDLEWARE_EXPORTER_")}
    env["PYTHONPATH"] = str(REPO)
    env["MIDDLEWARE_EXPORTER_WEB__LISTEN_ADDRESS"] = f"127.0.0.1:{port}"
    ctx, argv, url = None, [], f"http://127.0.0.1:{port}/healthz"
    if case == "tls":  # a certificate no CA bundle of the image trusts
        crt, key = pki.issue("server")
        write_config(workdir / "web.yml", f"tls_server_config:\n  cert_file: {crt}\n  key_file: {key}\n")
        argv = ["--web.config.file", "web.yml"]  # relative to the server's working directory
        ctx = client_context(pki.crt)
        url = f"https://127.0.0.1:{port}/healthz"
    elif case == "basic-auth":  # without --web.auth-exempt-path /healthz
        write_config(workdir / "web.yml", f"basic_auth_users:\n  prometheus: {bcrypt_hash(PASSWORD, 10)}\n")
        argv = ["--web.config.file", str(workdir / "web.yml")]
    elif case == "port-in-config-file":
        del env["MIDDLEWARE_EXPORTER_WEB__LISTEN_ADDRESS"]
        write_config(workdir / "config.yaml", f"web:\n  listen_address: 127.0.0.1:{port}\n")
        argv = ["--config", "config.yaml"]
    else:
        address = _non_loopback_address()
        env["MIDDLEWARE_EXPORTER_WEB__LISTEN_ADDRESS"] = f"{address}:{port}"
        url = f"http://{address}:{port}/healthz"
    proc = _start_plain(tmp_path, argv, env, url, workdir, ctx)
    try:
        result = _run_healthcheck(proc.pid, env)
        assert result.returncode == 0, f"unhealthy while serving:\n{result.stdout}{result.stderr}"
        assert result.stdout.startswith("healthy: "), result.stdout
    finally:
        stop_process(proc)
    result = _run_healthcheck(proc.pid, env)
    assert result.returncode == 1, result.stdout + result.stderr


@pytest.mark.integration
def test_image_healthcheck_with_everything_at_once(tmp_path, pki):
    """TLS, basic auth, mutual TLS and the port from the configuration file given by an environment variable of the
    server's (the check reads the server's environment, not its own)."""
    port = free_port()
    crt, key = pki.issue("server")
    client = pki.issue("prometheus-client", usage="clientAuth", san="DNS:prometheus")
    web = write_config(tmp_path / "web.yml", f"tls_server_config:\n  cert_file: {crt}\n  key_file: {key}\n"
                       f"  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: {pki.crt}\n"
                       f"basic_auth_users:\n  prometheus: {bcrypt_hash(PASSWORD, 10)}\n")
    config = write_config(tmp_path / "config.yaml", f"web:\n  listen_address: 127.0.0.1:{port}\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MIDDLEWARE_EXPORTER_")}
    log = tmp_path / "exporter.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "exporter", "--web.config.file", str(web)], cwd=REPO,
                                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env={**env, "MIDDLEWARE_EXPORTER_CONFIG": str(config)})
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text(errors="replace")
            try:
                https_get(port, "/healthz", client_context(pki.crt, client))
                break
            except OSError:
                time.sleep(0.1)
        result = _run_healthcheck(proc.pid, {**env, "MIDDLEWARE_EXPORTER_CONFIG": str(config)})
        assert result.returncode == 0, result.stdout + result.stderr
        assert "client certificates required" in result.stdout
    finally:
        stop_process(proc)


def _fake_proc(root: Path, processes: dict[int, list[str]]) -> Path:
    for pid, argv in processes.items():
        (root / str(pid)).mkdir(parents=True)
        (root / str(pid) / "cmdline").write_bytes(b"".join(a.encode() + b"\0" for a in argv))
    return root


def test_healthcheck_finds_the_server_as_the_image_runs_it(tmp_path):
    """PID 1 (the ENTRYPOINT, run by its interpreter through the console script's #! line); behind an init
    (docker run --init) the one serving exporter; never a check-config or another healthcheck."""
    from exporter.cli import _serving
    from exporter.web.healthcheck import NotFound, exporter_args, find_server

    image = ["/opt/venv/bin/python", "/opt/venv/bin/middleware-exporter", "run", "--config", "/etc/c.yaml"]
    assert exporter_args(image) == ["run", "--config", "/etc/c.yaml"]
    assert exporter_args(["/usr/bin/python3", "-u", "-X", "dev", "-m", "exporter", "--web.config.file", "w"]) == [
        "--web.config.file", "w"]
    assert exporter_args(["middleware-exporter"]) == []
    assert exporter_args(["/sbin/docker-init", "--", "middleware-exporter", "run"]) is None
    assert exporter_args(["/usr/bin/python3", "-m", "http.server"]) is None
    assert find_server(_serving, _fake_proc(tmp_path / "a", {1: image, 30: image})) == 1
    init = _fake_proc(tmp_path / "b", {1: ["/sbin/docker-init", "--", "middleware-exporter", "run"],
                                       7: ["middleware-exporter", "--path.procfs", "/host/proc"],
                                       9: ["middleware-exporter", "healthcheck"],
                                       12: ["middleware-exporter", "check-config"]})
    assert find_server(_serving, init) == 7
    with pytest.raises(NotFound, match="2 serving"):
        find_server(_serving, _fake_proc(tmp_path / "c", {3: image, 4: image}))
    with pytest.raises(NotFound, match="no serving"):
        find_server(_serving, _fake_proc(tmp_path / "d", {1: ["/sbin/init"]}))


# ------------------------------------------------------------------------------ basic auth under a guessing flood


def test_refused_guesses_never_push_accepted_credentials_out(monkeypatch):
    """Issue 25: refusals entered the one 128-entry cache and pushed the right credentials out, which then waited
    for bcrypt behind the guesses. Counted in bcrypt runs: after 300 wrong passwords the right ones cost none."""
    users = {"prometheus": bcrypt_hash(PASSWORD).encode()}
    auth = BasicAuth()

    async def run():
        assert await auth.check(users, basic("prometheus", PASSWORD)) is True
        assert auth.verifications == 1
        for i in range(300):
            assert await auth.check(users, basic("prometheus", f"guess-{i}")) is False
        assert auth.verifications == 301
        assert await auth.check(users, basic("prometheus", PASSWORD)) is True
        assert auth.verifications == 301  # still cached
        assert await auth.check(users, basic("prometheus", "guess-299")) is False
        assert auth.verifications == 301  # a repeated refusal is cached too

    asyncio.run(run())


def test_unknown_user_costs_one_bcrypt_like_a_known_one(monkeypatch):
    """The dummy hash of an unknown user used to be made with bcrypt.hashpw on the first check: twice the work of a
    known user's check. Counted in bcrypt calls."""
    calls: list[str] = []
    for name in ("hashpw", "checkpw", "gensalt"):
        real = getattr(bcrypt, name)
        monkeypatch.setattr(bcrypt, name, lambda *a, _real=real, _name=name: calls.append(_name) or _real(*a))
    users = {"prometheus": bcrypt_hash(PASSWORD, 5).encode()}
    calls.clear()
    auth = BasicAuth()

    async def run():
        assert await auth.check(users, basic("grafana", "anything")) is False
        expensive = [c for c in calls if c != "gensalt"]
        assert expensive == ["checkpw"], calls
        assert calls.count("gensalt") <= 1
        calls.clear()
        assert await auth.check(users, basic("prometheus", "wrong")) is False
        assert calls == ["checkpw"]

    asyncio.run(run())


def test_a_new_check_waits_its_turn_instead_of_being_turned_away(monkeypatch):
    """Issue 38.3: with 8 checks waiting a 9th was answered None (503), so the guessers, who ask again the moment
    they are answered, kept the right credentials out after a start. Now 20 guesses from one address and 20 from
    another are waiting when the right credentials arrive from a third: they are checked after one guess from
    each (the lines take turns; first come first served within one), never turned away; the same credentials asked
    twice at once share one check. Counted in bcrypt calls, in order."""
    order: list[bytes] = []
    real = bcrypt.checkpw
    monkeypatch.setattr(bcrypt, "checkpw", lambda p, h: order.append(p) or real(p, h))
    users = {"prometheus": bcrypt_hash(PASSWORD).encode()}
    auth = BasicAuth()

    async def run():
        guesses = [asyncio.create_task(auth.check(users, basic("prometheus", f"{who}-{i}"), who))
                   for i in range(20) for who in ("10.0.0.1", "10.0.0.2")]
        await asyncio.sleep(0)
        right = [asyncio.create_task(auth.check(users, basic("prometheus", PASSWORD), "10.0.0.3")) for _ in range(2)]
        assert await asyncio.gather(*right) == [True, True]
        assert await asyncio.gather(*guesses) == [False] * 40
        # the check running when it came, then one per other address: its turn came after 3 of the 40
        assert order[:4] == [b"10.0.0.1-0", b"10.0.0.2-0", b"10.0.0.1-1", PASSWORD.encode()]
        assert order.count(PASSWORD.encode()) == 1
        assert auth.verifications == 41
        full = BasicAuth(max_pending=2)
        waiting = [asyncio.create_task(full.check(users, basic("prometheus", f"g{i}"))) for i in range(2)]
        await asyncio.sleep(0)
        assert await full.check(users, basic("prometheus", "g3")) is None  # only beyond max_pending
        assert await asyncio.gather(*waiting) == [False, False]

    asyncio.run(run())


def test_known_and_unknown_users_cost_the_same_bcrypt_work_whatever_the_hashes_costs(monkeypatch, tmp_path):
    """Issue 38.4: with hashes of different costs (here 4 and 6), an unknown user was checked at the highest cost:
    four times a wrong password for the cost-4 user (an unknown user 180 ms, a known one 95 ms, at costs 11 and 10).
    Now every check costs the bcrypt work of the costliest hash (2^6 rounds), whoever the user, and repeating a
    wrong password costs nothing either way. Counted in bcrypt calls and the rounds of the hashes they were given."""
    calls: list[int] = []
    real = bcrypt.checkpw
    monkeypatch.setattr(bcrypt, "checkpw", lambda p, h: calls.append(int(h[4:6])) or real(p, h))
    users = {"cheap": bcrypt_hash(PASSWORD, 4).encode(), "dear": bcrypt_hash(PASSWORD, 6).encode()}
    auth = BasicAuth()

    async def work(user: str, password: str) -> tuple[bool | None, int]:
        calls.clear()
        ok = await auth.check(users, basic(user, password))
        return ok, sum(2 ** cost for cost in calls)

    async def run():
        figures = {}
        for user in ("cheap", "dear", "mallory", "nobody", "x" * 40):
            figures[user] = [await work(user, "wrong-1"), await work(user, "wrong-2"), await work(user, "wrong-1")]
        assert {u: [w for _, w in f] for u, f in figures.items()} == {u: [64, 64, 0] for u in figures}
        assert all(ok is False for f in figures.values() for ok, _ in f)
        assert await work("cheap", PASSWORD) == (True, 64)  # the right password too: no shortcut either way
        assert await work("cheap", PASSWORD) == (True, 0)  # then from the cache
        assert auth.verifications == 11

    asyncio.run(run())
    path = write_config(tmp_path / "web.yml", "basic_auth_users:\n" + "".join(
        f"  {name}: {value.decode()}\n" for name, value in users.items()))
    assert load_web_config(path).warnings == [
        "basic_auth_users: the bcrypt hashes have different costs (4, 6); every check costs as much as one at cost "
        "6, so that timing does not tell the users apart: make them all with the same cost"]


def test_one_cost_means_one_bcrypt_call_for_known_and_unknown_users(monkeypatch, tmp_path):
    """With one cost for all hashes (the usual case) nothing is topped up: one bcrypt call at that cost, known user
    or not."""
    calls: list[int] = []
    real = bcrypt.checkpw
    monkeypatch.setattr(bcrypt, "checkpw", lambda p, h: calls.append(int(h[4:6])) or real(p, h))
    users = {"prometheus": bcrypt_hash(PASSWORD, 5).encode(), "grafana": bcrypt_hash("other", 5).encode()}
    auth = BasicAuth()

    async def run():
        for user in ("prometheus", "grafana", "mallory"):
            calls.clear()
            assert await auth.check(users, basic(user, "wrong")) is False
            assert calls == [5], user

    asyncio.run(run())
    assert load_web_config(write_config(tmp_path / "web.yml", "basic_auth_users:\n" + "".join(
        f"  {name}: {value.decode()}\n" for name, value in users.items()))).warnings == []


@pytest.mark.integration
def test_right_credentials_keep_working_under_a_guessing_flood(tmp_path, start_web):
    """A real exporter with basic auth; 16 threads guess passwords as fast as it answers (bounded: until 200
    guesses were refused, then while 25 scrapes with the right credentials are made). Every one of those scrapes
    gets 200: the guesses are refused (401) or turned away (503), never at the scrape's expense."""
    import threading

    config = write_config(tmp_path / "web.yml", f"basic_auth_users:\n  prometheus: {bcrypt_hash(PASSWORD, 6)}\n")
    exporter = start_web(config, None)
    good = {"Authorization": basic("prometheus", PASSWORD)}
    url = f"http://127.0.0.1:{exporter.port}/metrics"
    assert http_get(url, good)[0] == 200  # Prometheus has scraped before the flood starts

    outcomes: dict[int, int] = {}
    stop = threading.Event()
    threads = flood(exporter.port, 16, stop, outcomes)
    scrapes: dict[int, int] = {}
    try:
        deadline = time.monotonic() + 120  # a bound for a broken run, not a measurement
        while outcomes.get(401, 0) < 200:  # far more refusals than the cache held
            assert time.monotonic() < deadline, f"the flood got only {outcomes} refused"
            time.sleep(0.05)
        for _ in range(25):
            status = http_get(url, good, timeout=30)[0]
            scrapes[status] = scrapes.get(status, 0) + 1
            time.sleep(0.05)
    finally:
        stop.set()
        for thread in threads:
            thread.join(60)
    assert scrapes == {200: 25}, f"right credentials during the flood: {scrapes}; guesses: {outcomes}"
    assert outcomes.get(200, 0) == 0 and exporter.proc.poll() is None
    assert PASSWORD not in exporter.log()


@pytest.mark.integration
def test_right_credentials_never_accepted_yet_get_200_under_a_guessing_flood(tmp_path, start_web):
    """Issue 38.3: a freshly started exporter (the right credentials not cached yet) while 16 threads guess the
    password back to back at bcrypt cost 10. The first scrape with the right credentials used to get 503 (the
    guesses held every verification slot, and a newcomer was turned away), so did the one an interval later; now
    it waits its turn in line and gets 200, within a scrape timeout (a bound for a broken run, not a measurement),
    and the next one is answered from the cache."""
    import threading

    config = write_config(tmp_path / "web.yml", f"basic_auth_users:\n  prometheus: {bcrypt_hash(PASSWORD, 10)}\n")
    exporter = start_web(config, None)
    good = {"Authorization": basic("prometheus", PASSWORD)}
    url = f"http://127.0.0.1:{exporter.port}/metrics"

    outcomes: dict[int, int] = {}
    stop = threading.Event()
    threads = flood(exporter.port, 16, stop, outcomes)
    scrapes = []
    try:
        deadline = time.monotonic() + 60
        while outcomes.get(401, 0) + outcomes.get(503, 0) < 32:  # the guesses are being answered
            assert time.monotonic() < deadline, f"the flood got only {outcomes}"
            time.sleep(0.05)
        for _ in range(2):  # the first check of these credentials, then the cached one
            scrapes.append(http_get(url, good, timeout=15)[0])
    finally:
        stop.set()
        for thread in threads:
            thread.join(60)
    assert scrapes == [200, 200], f"right credentials during the flood: {scrapes}; guesses: {outcomes}"
    assert outcomes.get(200, 0) == 0 and exporter.proc.poll() is None
