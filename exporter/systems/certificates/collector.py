"""Certificate expiry of the files the operator names: PEM (bundles too), DER and PKCS#12 keystores (Oracle's
``ewallet.p12``, an IBM MQ mqweb keystore of type PKCS12) with the password from ``password_file``.

Each file is a target (``middleware_target_up{collector="certificates",target=<name>}``): up when it was read and
held at least one certificate, down with the reason (missing, wrong password, JKS, Oracle ``cwallet.sso``,
garbage) on the status page, /api/v1/collectors and the log.  Every certificate of a file gets its not-after and
not-before as Unix seconds (ssl_exporter's and x509-certificate-exporter's convention; days left is PromQL).
``cryptography`` is imported only when the collector runs.  Method and limits: README.md.

Each file (its bytes, its password file, the parse) is read in its own bounded call (``core.fanout``): a file on a
hung NFS or FUSE mount, or a FIFO named as the password file, costs that file's target ("timed out"), never the
others or the run, and while its read still hangs it is not started again (one thread per hanging file).
"""

from __future__ import annotations

import os
import stat

from ...core.collector import Collector, Context
from ...core.fanout import Target, fan_out
from ...core.metrics import MetricBatch, MetricSpec
from ...core.secrets import SecretUnavailable
from ...machine.deadline import Overdue
from . import DESCRIPTION, NAME
from .metrics import (
    FILE_CERTIFICATES,
    NOT_AFTER,
    NOT_BEFORE,
    SPECS,
)
from .settings import CertificateFile, CertificatesSettings

MAX_FILE_BYTES = 4 * 1024 * 1024  # far above any keystore; a wrong path to a large file is refused, not read


def read_file(path: str) -> bytes:
    """The file's bytes; a FIFO, device or directory is refused without blocking on it, a file over
    MAX_FILE_BYTES is refused."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(0, "not a regular file")
        if info.st_size > MAX_FILE_BYTES:
            raise OSError(0, f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB: not a certificate file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(MAX_FILE_BYTES + 1)
    finally:
        os.close(fd)


class CertificatesCollector(Collector):
    name = NAME
    description = DESCRIPTION
    Settings = CertificatesSettings

    def __init__(self, settings: CertificatesSettings, context: Context) -> None:
        super().__init__(settings, context)
        self.settings: CertificatesSettings = settings
        self._files: dict[str, Target] = {}

    def specs(self) -> list[MetricSpec]:
        return SPECS

    def targets(self) -> list[str]:
        return [f.target for f in self.settings.files]

    def _file(self, entry: CertificateFile) -> Target:
        """The bounded call of one file, kept from run to run (a read still hanging is not started again)."""
        target = self._files.get(entry.target)
        if target is None:
            target = self._files[entry.target] = Target(self.name, entry.target, self.settings.timeout,
                                                        self.settings.timeout)
        return target

    def collect(self, batch: MetricBatch) -> None:
        from .parse import CertificateFileError, read_certificates  # cryptography only when the collector runs

        def read(entry: CertificateFile) -> list:
            return read_certificates(read_file(entry.path), entry.path, entry.format, entry.read_password())

        calls = {entry.target: self._file(entry) for entry in self.settings.files}
        entries = {entry.target: entry for entry in self.settings.files}
        fan_out(list(calls.values()), lambda call: read(entries[call.name]))
        for entry in self.settings.files:
            target = entry.target
            outcome = calls[target].outcome
            exc = outcome.error
            if exc is not None:
                if isinstance(exc, OSError):
                    error = f"cannot read {entry.path}: {exc.strerror or exc}"
                elif isinstance(exc, Overdue):  # hung (a dead NFS server, a FIFO): this file alone
                    error = f"{entry.path}: not read: {exc}"
                elif isinstance(exc, (SecretUnavailable, CertificateFileError)):
                    error = f"{entry.path}: {exc}"
                else:
                    raise exc  # a bug, not a bad file: the run fails as before
                batch.report_target(target, False, error)
                continue
            certificates = outcome.value
            batch.report_target(target, True)
            FILE_CERTIFICATES.add(batch, len(certificates), file=target)
            unique = {}
            for cert in certificates:  # the same certificate twice in a bundle is one series
                unique.setdefault((cert.subject_cn, cert.issuer_cn, cert.serial, cert.alias), cert)
            chosen = list(unique.values())
            if len(chosen) > self.settings.max_certificates_per_file:
                chosen = sorted(chosen, key=lambda c: c.not_after)[: self.settings.max_certificates_per_file]
            for cert in chosen:
                labels = {"file": target, "subject_cn": cert.subject_cn, "issuer_cn": cert.issuer_cn,
                          "serial": cert.serial, "alias": cert.alias}
                NOT_AFTER.add(batch, cert.not_after, **labels)
                NOT_BEFORE.add(batch, cert.not_before, **labels)
