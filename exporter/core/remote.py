"""Running a collector's commands on another host: a command prefix (``ssh -o BatchMode=yes host``) and the
``target`` label that says which host the series describe.

A collector that runs commands (HPOM, Domino, the MQ runmqsc back-end) puts the prefix in front of every argument
list; no shell is involved on this side, and timeouts and the process-group kill of core/runner.py apply to the
whole ``ssh`` command.  With a prefix, the programs' paths are the remote host's, so their presence is not checked
locally: a missing program shows as that source failing with the remote shell's error.

Connection sharing is the operator's ssh configuration's to decide: with ``ControlMaster auto`` and
``ControlPersist`` (in ``~/.ssh/config`` or as ``-o`` options in the prefix) ssh leaves a master process that later
commands to the same host reuse without a new handshake.  The serving exporter keeps such a master (core/runner.py,
``KEPT_PROGRAMS``) instead of killing it as an escaped child, and ends it when it stops.
"""

from __future__ import annotations

import os
import shutil

from pydantic import BaseModel, Field


class RemoteCommands(BaseModel):
    """Settings mixed into the collectors that run commands."""

    command_prefix: list[str] = Field(
        default_factory=list,
        description="Put in front of every command this collector runs, e.g. [ssh, -o, BatchMode=yes, -o, "
                    "ConnectTimeout=5, hpom1]: the commands then run on that host (docs/deploy-server.md). "
                    "Files the collector reads itself (such as HPOM's queue directory) stay local.")
    target: str = Field("", description="Value of a `target` label added to every series of this collector "
                                        "(the host the commands run on); empty: no such label.")


def prefixed(prefix: list[str], argv: list[str]) -> list[str]:
    return [*prefix, *argv] if prefix else list(argv)


def program_available(prefix: list[str], program: str | None) -> bool:
    """Whether to run ``program``: locally, an executable file (or on PATH); through a prefix, configured."""
    if not program:
        return False
    if prefix:
        return True
    if "/" in program:
        return os.path.isfile(program) and os.access(program, os.X_OK)
    return shutil.which(program) is not None


def target_labels(settings: RemoteCommands) -> dict[str, str]:
    return {"target": settings.target} if settings.target else {}
