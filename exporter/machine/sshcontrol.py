"""The ssh command line of a probed host (issue 37, docs/estate.md): one connection master per host, in a private
directory, and nothing left behind.

A module with an ``ssh`` section reads each of its targets through ``ssh ... -- <host>``.  This module builds that
prefix from the module's settings and a checked target (``core.inventory.target_problem`` has refused whitespace,
metacharacters and a leading ``-`` before anything gets here; the host still goes after ``--`` so that ssh can
never read it as an option).  BatchMode is always on: no prompt ever, for a password, a passphrase or an unknown
host key; host keys are checked as the operator's ssh configuration (``config_file``, ``options``) says.

Connection reuse: ``ControlMaster=auto`` with a ``ControlPath`` in a directory this process creates (mode 0700,
:class:`ControlDirectory`), one socket per target and connection settings (a hash of them: ssh's own ``%C`` hashes
the host name after the configuration's ``HostName``, so two aliases of one address would share a master and
read each other's host), so the first command to a host leaves a master that the host's later commands share,
and no other user can reach those sockets.  The masters are the runner's kept ssh processes
(machine/runner.py, ``KEPT_PROGRAMS``): ended when ``ControlPersist`` runs out, at shutdown, or by the watchdog when
the exporter is killed; :meth:`ControlDirectory.close` removes the directory.

Options that make ssh run a local command or load code (``ProxyCommand``, ``LocalCommand``, ``KnownHostsCommand``,
``Match exec``, ...) are refused in ``options``: a module's options say how to connect, never what to run.  They
stay possible in the operator's own ssh configuration file, which is the operator's to write.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import tempfile

# -o options a module may not set: they run a local command or load a library, or are this module's to set
REFUSED_OPTIONS = frozenset(name.lower() for name in (
    "ProxyCommand", "LocalCommand", "PermitLocalCommand", "KnownHostsCommand", "RemoteCommand", "Match", "Include",
    "PKCS11Provider", "SecurityKeyProvider", "SmartcardDevice", "ControlMaster", "ControlPath", "ControlPersist",
    "BatchMode", "EscapeChar", "Tunnel", "TunnelDevice", "LocalForward", "RemoteForward", "DynamicForward",
    "ForwardAgent", "ForwardX11", "ForwardX11Trusted", "PermitRemoteOpen", "StdinNull", "ForkAfterAuthentication",
    "SessionType", "RequestTTY"))
_OPTION_RE = re.compile(r"([A-Za-z][A-Za-z0-9]*)=([\x21-\x7e]+)")
# sun_path holds 108 bytes; ssh adds a 17-character random suffix while it creates the socket
_SOCKET_NAME = 24  # hex characters of the hash naming a socket
_MAX_DIRECTORY = 108 - 1 - _SOCKET_NAME - 17 - 2


def option_problem(option: str) -> str | None:
    """Why ``option`` (one ``-o`` value, ``Name=value``) is refused, or None."""
    match = _OPTION_RE.fullmatch(option)
    if not match:
        return "an option is Name=value, printable characters without spaces"
    if match.group(1).lower() in REFUSED_OPTIONS:
        return f"{match.group(1)} is not allowed here (it runs a command, forwards, or is set by the exporter)"
    return None


def split_target(target: str) -> tuple[str, int | None]:
    """The host and port of a checked target: ``host``, ``host:port``, ``[v6]``, ``[v6]:port`` or a bare IPv6."""
    if target.startswith("["):
        close = target.index("]")
        port = target[close + 2:]
        return target[1:close], int(port) if port else None
    if target.count(":") == 1:
        host, port = target.split(":")
        return host, int(port)
    return target, None


class ControlDirectory:
    """A private directory (0700) for the connection masters' sockets, made on first use and removed by
    :meth:`close`."""

    def __init__(self, parent: str | None = None) -> None:
        self._parent = parent
        self._path: str | None = None

    @property
    def path(self) -> str:
        if self._path is None:
            path = tempfile.mkdtemp(prefix="mwx-ssh-", dir=self._parent)  # 0700, a fresh name
            if len(path) > _MAX_DIRECTORY:
                shutil.rmtree(path, ignore_errors=True)
                path = tempfile.mkdtemp(prefix="mwx-ssh-", dir="/tmp")
            self._path = path
        return self._path

    def close(self) -> None:
        if self._path is not None:
            shutil.rmtree(self._path, ignore_errors=True)
            self._path = None


def ssh_prefix(target: str, *, user: str = "", port: int | None = None, identity_file: str = "",
               config_file: str = "", options: tuple[str, ...] = (), connect_timeout: float = 5.0,
               control: ControlDirectory | None = None, control_persist: int = 0,
               program: str = "ssh") -> list[str]:
    """The argument list before a remote command on ``target`` (checked by the caller)."""
    host, target_port = split_target(target)
    connection = []
    for option in options:
        connection += ["-o", option]
    if identity_file:
        connection += ["-i", identity_file]
    if user:
        connection += ["-l", user]
    if target_port or port:
        connection += ["-p", str(target_port or port)]
    argv = [program]
    if config_file:
        argv += ["-F", config_file]
    argv += ["-o", "BatchMode=yes", "-o", f"ConnectTimeout={max(1, int(connect_timeout))}"]
    if control is not None and control_persist > 0:
        name = hashlib.sha256("\0".join([config_file, *connection, host]).encode()).hexdigest()[:_SOCKET_NAME]
        argv += ["-o", "ControlMaster=auto", "-o", f"ControlPath={control.path}/{name}",
                 "-o", f"ControlPersist={int(control_persist)}"]
    return [*argv, *connection, "--", host]
