"""A real OpenSSH server on loopback (Debian's openssh-server) for tests of commands run through an ssh prefix.

One ``sshd`` per test, started from its own configuration in the test's directory: a fresh host key and client
key, public-key authentication only, the account of the user running the tests, ``127.0.0.1`` and a free port.
The client side is the real ``ssh`` with no user configuration (``-F none``), ``BatchMode`` and a known-hosts file
holding the server's key, so nothing prompts and no key is trusted on first use.  The remote side is what a
monitored host runs: sshd hands the joined command line to the account's login shell.

``environment`` is set in every session (sshd's ``SetEnv``), e.g. a canary path that hostile names would touch;
``options`` are further sshd_config lines (tests/fleet.py raises MaxStartups for hundreds of simulated hosts).
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

from .support import free_port, require_binary, stop_process

SSHD = "/usr/sbin/sshd"


class LoopbackSshd:
    def __init__(self, work: Path, environment: dict[str, str] | None = None, options: str = "") -> None:
        self.work = work
        self.work.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.user = os.environ.get("USER") or _whoami()
        self.proc: subprocess.Popen | None = None
        keygen = require_binary("ssh-keygen", package="openssh-client")
        for name in ("host_key", "client_key"):
            subprocess.run([keygen, "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(work / name)],
                           check=True)
        (work / "authorized_keys").write_text((work / "client_key.pub").read_text())
        host_key = (work / "host_key.pub").read_text().split()
        (work / "known_hosts").write_text(f"[127.0.0.1]:{self.port} {host_key[0]} {host_key[1]}\n")
        setenv = "".join(f"SetEnv {key}={value}\n" for key, value in (environment or {}).items())
        (work / "sshd_config").write_text(f"""Port {self.port}
ListenAddress 127.0.0.1
HostKey {work / "host_key"}
PidFile {work / "sshd.pid"}
AuthorizedKeysFile {work / "authorized_keys"}
StrictModes no
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PermitRootLogin prohibit-password
PrintMotd no
LogLevel ERROR
{setenv}{options}""")

    def start(self) -> LoopbackSshd:
        if not os.path.exists(SSHD):
            require_binary("sshd-not-installed", package="openssh-server")  # skips here, fails in CI
        if os.geteuid() == 0:
            os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # its privilege separation directory
        self.proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(self.work / "sshd_config")],
                                     stdout=subprocess.DEVNULL, stderr=open(self.work / "sshd.log", "wb"))
        give_up = time.monotonic() + 30  # a bound on sshd starting, not a timing assertion
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > give_up:
                    raise RuntimeError(f"sshd did not start: {(self.work / 'sshd.log').read_text()}") from None
                time.sleep(0.05)

    def prefix(self) -> list[str]:
        """The command prefix that runs a command on this server, as an operator would configure it."""
        return ["ssh", "-F", "none", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
                "-o", f"UserKnownHostsFile={self.work / 'known_hosts'}", "-o", "IdentitiesOnly=yes",
                "-o", "LogLevel=ERROR", "-i", str(self.work / "client_key"), "-p", str(self.port),
                f"{self.user}@127.0.0.1"]

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc)
            self.proc = None


def _whoami() -> str:
    import pwd

    return pwd.getpwuid(os.geteuid()).pw_name
