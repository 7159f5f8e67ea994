"""Settings primitives shared by every collector: strict models, durations, regex checks, and the options every
collector has (enabled, interval, timeout, max_series).  Validation messages say what is wrong, never the value
given (it could be a misplaced password); ``core.config`` adds the key and where the value came from."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")
_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}


def parse_duration(value: Any) -> Any:
    """Accept seconds as a number or a string such as ``500ms``, ``15s``, ``2m``, ``1h``."""
    if isinstance(value, str):
        match = _DURATION_RE.match(value)
        if not match:
            raise ValueError("not a duration: use seconds, or a number with ms, s, m or h")
        return float(match.group(1)) * _UNIT[match.group(2)]
    return value


def check_regex(value: str) -> str:
    """Validator helper: the value must compile as a Python regular expression."""
    try:
        re.compile(value)
    except re.error as exc:
        raise ValueError(f"invalid regular expression: {exc}") from None
    return value


Duration = Annotated[float, BeforeValidator(parse_duration), Field(gt=0)]
DurationOrZero = Annotated[float, BeforeValidator(parse_duration), Field(ge=0)]  # 0 turns the behaviour off


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_default=True)


class CollectorSettings(StrictModel):
    """Options every collector has."""

    enabled: bool = Field(True, description="Run this collector.")
    interval: Duration = Field(15.0, description="Seconds between collections (a cached snapshot is served in "
                                                 "between).")
    timeout: Duration = Field(10.0, description="A collection still running after this many seconds counts as failed.")
    max_series: int = Field(20000, ge=1, description="A collection producing more series than this is refused.")

    @model_validator(mode="after")
    def _timeout_within_interval(self) -> "CollectorSettings":
        if self.timeout > self.interval:
            raise ValueError(f"timeout ({self.timeout:g}s) must not exceed interval ({self.interval:g}s)")
        return self
