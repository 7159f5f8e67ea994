"""The certificates collector's configuration, apart from the collector so that validating a configuration does
not import it (exporter.registry imports this module at start; the collector only when it is enabled)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from ...core.secrets import PasswordSettings
from ...core.settings import CollectorSettings, Duration


class CertificateFile(PasswordSettings):
    path: str = Field(..., min_length=1, description="The certificate file: PEM (one certificate or a bundle), DER, "
                                                     "or PKCS#12 (.p12/.pfx, Oracle ewallet.p12).")
    name: str = Field("", description="Target name and `file` label (default: the path).")
    format: Literal["auto", "pem", "der", "pkcs12"] = Field(
        "auto", description="auto decides from the content: PEM when it holds a CERTIFICATE block, PKCS#12 when it "
                            "is a PFX, else DER.")

    @property
    def target(self) -> str:
        return self.name or self.path


class CertificatesSettings(CollectorSettings):
    enabled: bool = Field(False, description="Run this collector; on by itself when `files` lists a file.")
    interval: Duration = Field(300.0, description="Seconds between collections (certificates change rarely).")
    timeout: Duration = Field(10.0, description="Seconds before a collection counts as failed.")
    files: list[CertificateFile] = Field(default_factory=list,
                                         description="The certificate files (path, optional name, format and "
                                                     "password_file / password_env for PKCS#12).")
    max_certificates_per_file: int = Field(
        100, ge=1, description="At most this many certificates of one file are exported (those expiring first); "
                               "middleware_certificate_file_certificates counts them all.")

    @model_validator(mode="after")
    def _files(self) -> "CertificatesSettings":
        if "enabled" not in self.model_fields_set and self.files:
            self.enabled = True
        names = [f.target for f in self.files]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"two files have the same name (give each a distinct name): {', '.join(duplicates)}")
        return self
