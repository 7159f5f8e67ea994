"""Running a collector's commands on another host: a command prefix (``ssh -o BatchMode=yes host``) and the
``target`` label that says which host the series describe.

A collector that runs commands (HPOM, Domino, the MQ runmqsc back-end, the host and file-system text back-ends)
builds its argument lists with :func:`prefixed`; no shell is involved on this side, and timeouts and the
process-group kill of machine/runner.py apply to the whole ``ssh`` command.  With a prefix, the programs' paths are
the remote host's, so their presence is not checked locally: a missing program shows as that source failing with
the remote shell's error.

A remote-shell client (ssh, rsh, HP-UX's remsh) does not pass an argument list: it joins its arguments with spaces
and the remote sshd hands that line to the account's login shell.  Every argument placed after such a prefix is
therefore shell code on the remote host, and a name read from a system (a queue file, a queue) or a configured
value would be executed if it held ``;``, ``$(...)`` or a space.  :func:`prefixed` quotes each of them for a POSIX
shell (sh, ksh, bash, dash, zsh: the login shells of HP-UX, AIX, Solaris and Linux accounts), so the remote side
runs exactly the argument list this side built, and refuses what no quoting carries safely through every remote
shell and forced-command script (a NUL, a line break).

Connection sharing is the operator's ssh configuration's to decide: with ``ControlMaster auto`` and
``ControlPersist`` (in ``~/.ssh/config`` or as ``-o`` options in the prefix) ssh leaves a master process that later
commands to the same host reuse without a new handshake.  The serving exporter keeps such a master (machine/runner.py,
``KEPT_PROGRAMS``) instead of killing it as an escaped child, and ends it when it stops.
"""

from __future__ import annotations

import os
import shutil

from pydantic import BaseModel, Field

# Clients that hand the joined command line to the remote account's shell (OpenSSH and Dropbear's ssh, BSD rsh,
# HP-UX remsh).  A prefix that contains one of them (``[sudo, -u, mon, ssh, host]`` too) quotes what follows it.
REMOTE_SHELL_CLIENTS = frozenset({"ssh", "rsh", "remsh", "dbclient", "dbclient-ssh"})
# What no quoting carries through every remote shell: csh-family shells and the forced-command scripts that
# compare $SSH_ORIGINAL_COMMAND line by line end a command at a line break.
_UNQUOTABLE = ("\x00", "\n", "\r")


class UnsafeArgument(ValueError):
    """An argument that cannot be passed to the remote shell as one word; nothing is run."""


class RemoteCommands(BaseModel):
    """Settings mixed into the collectors that run commands."""

    command_prefix: list[str] = Field(
        default_factory=list,
        description="Put in front of every command this collector runs, e.g. [ssh, -o, BatchMode=yes, -o, "
                    "ConnectTimeout=5, hpom1]: the commands then run on that host (docs/deploy-server.md); "
                    "after an ssh prefix each argument is quoted for the remote shell. "
                    "Files the collector reads itself (such as HPOM's queue directory) stay local.")
    target: str = Field("", description="Value of a `target` label added to every series of this collector "
                                        "(the host the commands run on); empty: no such label.")


def through_remote_shell(prefix: list[str]) -> bool:
    """Whether the commands after ``prefix`` are read by a remote shell (the prefix runs ssh, rsh or remsh)."""
    return any(os.path.basename(arg) in REMOTE_SHELL_CLIENTS for arg in prefix)


def shell_word(arg: str) -> str:
    """``arg`` as one word of a POSIX shell command line (unchanged when it needs no quotes, as most do)."""
    if any(char in arg for char in _UNQUOTABLE):
        raise UnsafeArgument(f"argument {arg[:60]!r} holds a line break or NUL: not passed to the remote shell")
    import shlex  # here: host/settings.py imports this module at every start, and only a prefix needs it

    return shlex.quote(arg)


def check_remote_arguments(prefix: list[str], commands: dict[str, str | list[str] | None]) -> None:
    """For a settings validator: every configured argument (by key) can be passed through ``prefix``; a
    ValueError naming the key and the argument when one cannot, so a configuration is refused at load time."""
    if not through_remote_shell(prefix):
        return
    for key, command in commands.items():
        for arg in [command] if isinstance(command, str) else command or []:
            try:
                shell_word(arg)
            except UnsafeArgument as exc:
                raise ValueError(f"{key}: {exc}") from None


def prefixed(prefix: list[str], argv: list[str]) -> list[str]:
    """The argument list that runs ``argv`` through ``prefix``: after a remote-shell client each argument is
    quoted, so the remote host runs these arguments and nothing else (:class:`UnsafeArgument` when one cannot be)."""
    if not prefix:
        return list(argv)
    if through_remote_shell(prefix):
        return [*prefix, *(shell_word(arg) for arg in argv)]
    return [*prefix, *argv]


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
