"""Where a password comes from: the configuration, a file (read at each use, so rotation works) or an environment
variable.  Shared by every collector that logs in (Oracle, IBM MQ); the value is never logged."""

from __future__ import annotations

import os
from typing import ClassVar

from pydantic import Field, SecretStr, model_validator

from .settings import StrictModel


class SecretUnavailable(Exception):
    """The configured password source cannot be read (the message names the source, never the secret)."""


class PasswordSettings(StrictModel):
    password_required: ClassVar[bool] = False

    password: SecretStr | None = Field(None, description="The password (prefer password_file or password_env).")
    password_file: str | None = Field(None, description="File holding the password (read at each connect).")
    password_env: str | None = Field(None, description="Environment variable holding the password.")

    @model_validator(mode="after")
    def _password_sources(self) -> "PasswordSettings":
        given = [n for n in ("password", "password_file", "password_env") if getattr(self, n)]
        if self.password_required and len(given) != 1:
            raise ValueError("give exactly one of password, password_file, password_env")
        if len(given) > 1:
            raise ValueError("give at most one of password, password_file, password_env")
        return self

    def read_password(self) -> str | None:
        if self.password is not None:
            return self.password.get_secret_value()
        if self.password_file:
            try:
                with open(self.password_file, encoding="utf-8") as handle:
                    return handle.read().strip()
            except OSError as exc:
                raise SecretUnavailable(f"cannot read password_file {self.password_file}: "
                                        f"{exc.strerror or exc}") from None
        if self.password_env:
            value = os.environ.get(self.password_env)
            if not value:
                raise SecretUnavailable(f"environment variable {self.password_env} is not set")
            return value
        return None
