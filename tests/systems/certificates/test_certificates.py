"""The certificates collector: PEM (single and bundle, with a key block), DER, PKCS#12 with a password file (an
Oracle-style ewallet.p12), and the failures each reported on its own file (target) with a clear text that never
holds the password: wrong or missing password, missing file, garbage, JKS, cwallet.sso, a FIFO.  Then one real
exporter process (metric, status API and log agree), and the exporter's own TLS certificate from the web config.

Every certificate is made here with cryptography (invented: fixed dates, so nothing depends on today's date)."""

from __future__ import annotations

import datetime
import json
import os
import ssl
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID
from prometheus_client.parser import text_string_to_metric_families

from exporter.core.collector import Context
from exporter.systems.certificates.collector import CertificatesCollector
from exporter.systems.certificates.settings import CertificatesSettings

from ...fusehang import hung_file
from ...support import REPO, collect
from ...web.test_webconfig import Pki, https_get, pki, start_web, write_config  # noqa: F401 - fixtures

PASSWORD = "Wallet-Pa55word-xyz"
UTC = datetime.timezone.utc
T0 = datetime.datetime(2026, 1, 1, tzinfo=UTC)


def make_cert(cn: str, not_after: datetime.datetime, issuer: tuple[str, object] | None = None,
              serial: int = 0x1000, not_before: datetime.datetime = T0):
    """A certificate (and its key) for ``cn``, signed by ``issuer`` (cn, key) or self-signed."""
    key = ec.generate_private_key(ec.SECP256R1())
    issuer_cn, issuer_key = issuer or (cn, key)
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)]))
            .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer_cn)]))
            .public_key(key.public_key()).serial_number(serial)
            .not_valid_before(not_before).not_valid_after(not_after)
            .sign(issuer_key, hashes.SHA256()))
    return cert, key


def pem(cert) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


@pytest.fixture(scope="module")
def chain():
    ca, ca_key = make_cert("Invented Root CA", datetime.datetime(2036, 1, 1, tzinfo=UTC), serial=0x01)
    leaf, leaf_key = make_cert("db1.example.test", datetime.datetime(2026, 12, 31, tzinfo=UTC),
                               issuer=("Invented Root CA", ca_key), serial=0xABCDEF)
    return ca, leaf, leaf_key


def labels(file, cn, issuer, serial, alias=""):
    return tuple(sorted({"file": file, "subject_cn": cn, "issuer_cn": issuer, "serial": serial,
                         "alias": alias}.items()))


def run(files, **extra):
    settings = CertificatesSettings(files=files, **extra)
    return collect(CertificatesCollector(settings, Context()))


def write_wallet(path: Path, chain, password: str | None = PASSWORD) -> Path:
    ca, leaf, leaf_key = chain
    encryption = (serialization.BestAvailableEncryption(password.encode()) if password
                  else serialization.NoEncryption())
    path.write_bytes(pkcs12.serialize_key_and_certificates(b"orakey", leaf_key, leaf, [ca], encryption))
    return path


def test_pem_der_bundle_and_pkcs12_are_read(tmp_path, chain):
    ca, leaf, leaf_key = chain
    (tmp_path / "leaf.pem").write_bytes(pem(leaf))
    # a bundle with the key block in front and the CA twice (the same certificate is one series)
    key_pem = leaf_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                     serialization.NoEncryption())
    (tmp_path / "bundle.pem").write_bytes(key_pem + pem(leaf) + b"\n" + pem(ca) + pem(ca))
    (tmp_path / "leaf.der").write_bytes(leaf.public_bytes(serialization.Encoding.DER))
    write_wallet(tmp_path / "ewallet.p12", chain)
    (tmp_path / "pw").write_text(PASSWORD + "\n")
    samples, batch = run([{"path": str(tmp_path / "leaf.pem"), "name": "leaf"},
                          {"path": str(tmp_path / "bundle.pem"), "name": "bundle"},
                          {"path": str(tmp_path / "leaf.der"), "name": "der"},
                          {"path": str(tmp_path / "ewallet.p12"), "name": "wallet",
                           "password_file": str(tmp_path / "pw")}])
    leaf_after = datetime.datetime(2026, 12, 31, tzinfo=UTC).timestamp()
    ca_after = datetime.datetime(2036, 1, 1, tzinfo=UTC).timestamp()
    na = "middleware_certificate_not_after_seconds"
    for name in ("leaf", "bundle", "der"):
        assert samples[(na, labels(name, "db1.example.test", "Invented Root CA", "abcdef"))] == leaf_after
        assert samples[("middleware_certificate_not_before_seconds",
                        labels(name, "db1.example.test", "Invented Root CA", "abcdef"))] == T0.timestamp()
    assert samples[(na, labels("bundle", "Invented Root CA", "Invented Root CA", "1"))] == ca_after
    assert samples[(na, labels("wallet", "db1.example.test", "Invented Root CA", "abcdef", "orakey"))] == leaf_after
    assert samples[(na, labels("wallet", "Invented Root CA", "Invented Root CA", "1"))] == ca_after
    files = {dict(k[1])["file"]: v for k, v in samples.items() if k[0] == "middleware_certificate_file_certificates"}
    assert files == {"leaf": 1, "bundle": 3, "der": 1, "wallet": 2}
    assert sum(1 for k in samples if k[0] == na) == 1 + 2 + 1 + 2
    assert {n: t.up for n, t in batch.reports.targets.items()} == dict.fromkeys(("leaf", "bundle", "der", "wallet"),
                                                                                True)


def test_each_broken_file_fails_alone_with_a_clear_error_and_no_password(tmp_path, chain):
    write_wallet(tmp_path / "ewallet.p12", chain)
    (tmp_path / "wrong").write_text("not-the-Wallet-password\n")
    (tmp_path / "good.pem").write_bytes(pem(chain[1]))
    (tmp_path / "garbage.crt").write_bytes(os.urandom(16) + b"\x00 certainly not a certificate")
    (tmp_path / "keystore.jks").write_bytes(b"\xfe\xed\xfe\xed\x00\x00\x00\x02" + b"\x00" * 40)
    (tmp_path / "cwallet.sso").write_bytes(b"\xa1\xf8\x4e\x36" + os.urandom(60))
    (tmp_path / "truncated.pem").write_bytes(pem(chain[1])[:200])
    os.mkfifo(tmp_path / "fifo.pem")  # opened without blocking and refused
    files = [{"path": str(tmp_path / "good.pem"), "name": "good"},
             {"path": str(tmp_path / "ewallet.p12"), "name": "wrong_password",
              "password_file": str(tmp_path / "wrong")},
             {"path": str(tmp_path / "ewallet.p12"), "name": "no_password"},
             {"path": str(tmp_path / "ewallet.p12"), "name": "no_password_file",
              "password_file": str(tmp_path / "absent-pw")},
             {"path": str(tmp_path / "vanished.pem"), "name": "missing"},
             {"path": str(tmp_path / "garbage.crt"), "name": "garbage"},
             {"path": str(tmp_path / "keystore.jks"), "name": "jks"},
             {"path": str(tmp_path / "cwallet.sso"), "name": "sso"},
             {"path": str(tmp_path / "truncated.pem"), "name": "truncated"},
             {"path": str(tmp_path / "fifo.pem"), "name": "fifo"}]
    samples, batch = run(files)
    targets = batch.reports.targets
    assert targets["good"].up is True
    errors = {name: t.error for name, t in targets.items() if name != "good"}
    assert all(targets[name].up is False for name in errors)
    assert "wrong password" in errors["wrong_password"]
    assert "needs a password: set password_file" in errors["no_password"]
    assert "cannot read password_file" in errors["no_password_file"]
    assert errors["missing"] == f"cannot read {tmp_path / 'vanished.pem'}: No such file or directory"
    assert "not a PEM, DER or PKCS#12 certificate file" in errors["garbage"]
    assert "Java keystore (JKS/JCEKS) cannot be read" in errors["jks"]
    assert "Oracle auto-login wallet (cwallet.sso)" in errors["sso"] and "ewallet.p12" in errors["sso"]
    assert "END CERTIFICATE" in errors["truncated"]
    assert "not a regular file" in errors["fifo"]
    assert not any(PASSWORD in e or "not-the-Wallet" in e for e in errors.values())
    # only the good file has series
    assert {dict(k[1])["file"] for k in samples} == {"good"}


def test_a_large_bundle_exports_the_certificates_expiring_first(tmp_path):
    _, key = make_cert("CA", datetime.datetime(2030, 1, 1, tzinfo=UTC))
    certs = [make_cert(f"c{i}", datetime.datetime(2027, 1, 1 + i, tzinfo=UTC), issuer=("CA", key), serial=i + 1)[0]
             for i in range(6)]
    (tmp_path / "ca-bundle.pem").write_bytes(b"".join(pem(c) for c in reversed(certs)))
    samples, _ = run([{"path": str(tmp_path / "ca-bundle.pem")}], max_certificates_per_file=2)
    cns = {dict(k[1])["subject_cn"] for k in samples if k[0] == "middleware_certificate_not_after_seconds"}
    assert cns == {"c0", "c1"}
    assert samples[("middleware_certificate_file_certificates", (("file", str(tmp_path / "ca-bundle.pem")),))] == 6


def test_enabled_only_when_files_are_listed_and_names_are_unique():
    assert CertificatesSettings().enabled is False
    assert CertificatesSettings(files=[{"path": "/etc/a.pem"}]).enabled is True
    assert CertificatesSettings(files=[{"path": "/etc/a.pem"}], enabled=False).enabled is False
    with pytest.raises(ValueError, match="same name"):
        CertificatesSettings(files=[{"path": "/etc/a.pem"}, {"path": "/etc/b.pem", "name": "/etc/a.pem"}])


def test_cryptography_is_imported_only_when_the_collector_runs(tmp_path):
    code = ("import sys\nfrom exporter.cli import build_collectors\nfrom exporter.registry import load\n"
            "cs = build_collectors(load(sys.argv[1]))\n"
            "print(sorted(c.name for c in cs), 'cryptography' in sys.modules)\n")
    off, on = tmp_path / "off.yaml", tmp_path / "on.yaml"
    off.write_text("collectors:\n  host: {enabled: false}\n  process: {enabled: false}\n")
    on.write_text(off.read_text() + f"  certificates:\n    files: [{{path: {tmp_path / 'x.pem'}}}]\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MIDDLEWARE_EXPORTER_")}
    for config, expected in ((off, "False"), (on, "False")):
        out = subprocess.run([sys.executable, "-c", code, str(config)], cwd=REPO, env=env, capture_output=True,
                             text=True, check=True).stdout
        assert out.split()[-1] == expected, out
    assert "'certificates'" in out


def _samples(body: bytes) -> dict:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(body.decode()) for s in family.samples}


def test_a_real_exporter_reports_each_file_as_a_target(tmp_path, chain, start_exporter):
    write_wallet(tmp_path / "ewallet.p12", chain)
    (tmp_path / "pw").write_text(PASSWORD)
    (tmp_path / "bad-pw").write_text("Wrong-Secret-123")
    config = f"""collectors:
  host: {{enabled: false}}
  process: {{enabled: false}}
  certificates:
    files:
      - {{path: {tmp_path / 'ewallet.p12'}, name: erp-wallet, password_file: {tmp_path / 'pw'}}}
      - {{path: {tmp_path / 'ewallet.p12'}, name: mqweb, password_file: {tmp_path / 'bad-pw'}}}
"""
    exporter = start_exporter(config=config)
    samples = _samples(exporter.get("/metrics")[2])
    up = {dict(k[1])["target"]: v for k, v in samples.items() if k[0] == "middleware_target_up"}
    assert up == {"erp-wallet": 1, "mqweb": 0}
    assert samples[("middleware_scrape_collector_success", (("collector", "certificates"),))] == 0
    leaf = labels("erp-wallet", "db1.example.test", "Invented Root CA", "abcdef", "orakey")
    assert samples[("middleware_certificate_not_after_seconds", leaf)] == \
        datetime.datetime(2026, 12, 31, tzinfo=UTC).timestamp()
    api = next(c for c in json.loads(exporter.get("/api/v1/collectors")[2]) if c["name"] == "certificates")
    mqweb = next(t for t in api["targets"] if t["name"] == "mqweb")
    assert "wrong password" in mqweb["last_error"]
    log = exporter.log()
    assert mqweb["last_error"] in log.replace('\\"', '"')
    for secret in (PASSWORD, "Wrong-Secret-123"):
        assert secret not in log and secret not in json.dumps(api)


def test_the_exporters_own_tls_certificate_expiry_is_exported(tmp_path, pki, start_web):  # noqa: F811
    crt, key = pki.issue("server", days=2)
    leaf = x509.load_pem_x509_certificate(crt.read_bytes())
    config = write_config(tmp_path / "web.yml", f"tls_server_config:\n  cert_file: {crt}\n  key_file: {key}\n")
    ctx = ssl.create_default_context(cafile=str(pki.crt))
    exporter = start_web(config, ctx, "--no-collector.process")
    deadline = time.monotonic() + 30
    while True:
        samples = _samples(https_get(exporter.port, "/metrics", ctx)[2])
        if any(k[0] == "middleware_scrape_collector_success" for k in samples) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert samples[("middleware_exporter_tls_certificate_not_after_seconds", (("file", str(crt)),))] == \
        leaf.not_valid_after_utc.timestamp()
    assert samples[("middleware_exporter_tls_certificate_not_before_seconds", (("file", str(crt)),))] == \
        leaf.not_valid_before_utc.timestamp()


@pytest.mark.integration  # waits out a hang or a timeout
def test_a_file_whose_read_hangs_costs_only_its_own_target_and_is_not_read_again(tmp_path, chain, monkeypatch):
    """A wallet's password_file whose read never answers (a hung NFS or FUSE mount; here the read is held in the
    reader of core.configfiles): the other files still come, the hung one is down with a deadline error, and while
    its read hangs it is not read again (one thread, not one per run).  A FIFO is no stand-in for a hang since
    issue 38: it is refused at once (below)."""
    from exporter.core import configfiles

    write_wallet(tmp_path / "ewallet.p12", chain)
    (tmp_path / "good.pem").write_bytes(pem(chain[1]))
    secret = tmp_path / "pw"
    secret.write_text(PASSWORD + "\n")
    hang = threading.Event()
    real_read = configfiles._read

    def held(path: str, max_bytes: int):
        if path == str(secret):
            hang.wait(60)
        return real_read(path, max_bytes)

    monkeypatch.setattr(configfiles, "_read", held)
    collector = CertificatesCollector(CertificatesSettings(files=[
        {"path": str(tmp_path / "good.pem"), "name": "good"},
        {"path": str(tmp_path / "ewallet.p12"), "name": "hung", "password_file": str(secret)}], timeout=3), Context())

    def collect_in_time():  # the run in a thread of its own: a run that hangs fails the test instead of hanging it
        result = []
        thread = threading.Thread(target=lambda: result.append(collect(collector)), daemon=True)
        thread.start()
        thread.join(60)  # the read's deadline is 2.4 s; the bug hangs for good
        assert result, "the run hangs in the password file's read"
        return result[0]

    try:
        errors = []
        for _ in range(3):
            samples, batch = collect_in_time()
            targets = batch.reports.targets
            assert targets["good"].up is True and targets["hung"].up is False
            assert samples[("middleware_certificate_file_certificates", (("file", "good"),))] == 1
            errors.append(targets["hung"].error)
        # the target's deadline or the read's (the same instant: the read never outlives the run's deadline)
        assert errors[0].startswith(f"{tmp_path / 'ewallet.p12'}: not read: timed out after") or \
            "no answer within" in errors[0], errors
        assert all(("previous run still running" in e and "not started again" in e)
                   or ("an earlier read has not returned" in e and "not read again" in e) for e in errors[1:]), errors
    finally:
        hang.set()


def test_a_fifo_as_password_file_is_refused_at_once_naming_the_key(tmp_path, chain):
    write_wallet(tmp_path / "ewallet.p12", chain)
    fifo = tmp_path / "pw.fifo"
    os.mkfifo(fifo)
    samples, batch = run([{"path": str(tmp_path / "ewallet.p12"), "name": "fifo", "password_file": str(fifo)}])
    assert batch.reports.targets["fifo"].error == \
        f"{tmp_path / 'ewallet.p12'}: cannot read password_file {fifo}: a FIFO (named pipe), not a regular file"


def _threads(pid: int) -> int:
    """The process's threads, least of a few looks (a run's short-lived read threads come and go)."""
    counts = []
    for _ in range(10):
        status = Path(f"/proc/{pid}/status").read_text()
        counts.append(int(next(line.split()[1] for line in status.splitlines() if line.startswith("Threads:"))))
        time.sleep(0.05)
    return min(counts)


@pytest.mark.integration
def test_a_real_exporter_keeps_reporting_the_other_files_while_one_read_hangs(tmp_path, chain, start_exporter):
    """A password_file on a mount whose reads never answer (tests/fusehang.py): the start gives up on it after its
    deadline and goes on, the other file keeps coming, the thread count stays flat.  (A FIFO there, which stood for
    a hang before issue 38, now fails the start naming the key: tests/core/test_config_files.py.)"""
    write_wallet(tmp_path / "ewallet.p12", chain)
    (tmp_path / "good.pem").write_bytes(pem(chain[1]))
    with hung_file(tmp_path) as (secret, release):
        config = f"""collectors:
  host: {{enabled: false}}
  process: {{enabled: false}}
  certificates:
    interval: 1s
    timeout: 1s
    files:
      - {{path: {tmp_path / 'good.pem'}, name: good}}
      - {{path: {tmp_path / 'ewallet.p12'}, name: hung, password_file: {secret}}}
"""
        exporter = start_exporter(config=config)
        try:
            def state():
                samples = _samples(exporter.get("/metrics")[2])
                runs = samples.get(("middleware_scrape_collector_runs_total", (("collector", "certificates"),)), 0)
                return samples, runs

            deadline = time.monotonic() + 60
            while (runs := state()[1]) < 3 and time.monotonic() < deadline:
                time.sleep(0.2)
            threads = _threads(exporter.proc.pid)
            while state()[1] < runs + 5 and time.monotonic() < deadline:
                time.sleep(0.2)
            assert state()[1] >= runs + 5, "five more runs within 60 s"
            samples = state()[0]
            assert _threads(exporter.proc.pid) <= threads  # no thread added per run: the hung read is not restarted
            up = {dict(k[1])["target"]: v for k, v in samples.items() if k[0] == "middleware_target_up"}
            assert up == {"good": 1, "hung": 0}
            leaf = labels("good", "db1.example.test", "Invented Root CA", "abcdef")
            assert samples[("middleware_certificate_not_after_seconds", leaf)] == \
                datetime.datetime(2026, 12, 31, tzinfo=UTC).timestamp()
            api = next(c for c in json.loads(exporter.get("/api/v1/collectors")[2]) if c["name"] == "certificates")
            hung = next(t for t in api["targets"] if t["name"] == "hung")
            assert "an earlier read has not returned" in hung["last_error"] and "not read again" in hung["last_error"]
            assert exporter.proc.poll() is None
        finally:
            release()  # before the exporter is stopped: a thread blocked in the read cannot be killed until then
