"""The forced command of one simulated host of tests/fleet.py: ``python fakehost.py <host> <fleet dir>``.

sshd runs it instead of whatever the client asked for (``command="..."`` in authorized_keys) and puts the
client's command line in ``SSH_ORIGINAL_COMMAND``.  Nothing of that line is ever executed: it is split as a
POSIX shell would split it (no expansion), its first word must be one of the host's tools (sar, vmstat, iostat,
uptime, df, bdf, mount) and every argument a plain token; then the genuine capture the fleet mapped to that
tool on the host's platform is printed.  Anything else (``sar; touch x``, ``$(...)``, a path) is refused with
exit status 127, as a restricted remote account refuses it.

The host's behaviour is read at every call from ``<fleet dir>/hosts/<host>.json`` so a test can change it while
the fleet runs: ``healthy`` prints at once, ``slow`` after ``delay`` seconds, ``hung`` never answers (it waits
while the client still holds the session, and ends when the session is gone so nothing outlives the fleet).
A refusing host never gets here: its key is left out of authorized_keys.

Only the standard library, started with ``-I -S``: hundreds of these run a minute.
"""

import json
import os
import re
import select
import shlex
import sys
import time

_TOKEN = re.compile(r"[A-Za-z0-9_.,:=+-]{1,64}")


def _refuse(message: str) -> None:
    sys.stderr.write(f"fakehost: {message}\n")
    sys.exit(127)


def _hang() -> None:
    """Never answer, but end when the client is gone (the read end of stdout closed: POLLERR)."""
    poller = select.poll()
    poller.register(sys.stdout.fileno(), select.POLLERR | select.POLLHUP)
    give_up = time.monotonic() + 3600  # a backstop; the fleet's teardown kills what is left anyway
    while time.monotonic() < give_up:
        if poller.poll(500):
            return
    return


def main() -> None:
    host, fleet = sys.argv[1], sys.argv[2]
    with open(os.path.join(fleet, "hosts", host + ".json")) as handle:
        state = json.load(handle)
    with open(os.path.join(fleet, "platforms.json")) as handle:
        table = json.load(handle)[state["platform"]]
    line = os.environ.get("SSH_ORIGINAL_COMMAND", "")
    try:
        words = shlex.split(line)
    except ValueError:
        _refuse(f"unparsable command {line[:80]!r}")
    if not words:
        _refuse("no interactive login here")
    if words[0] not in table:
        _refuse(f"{words[0][:40]!r}: not allowed")
    for word in words[1:]:
        if not _TOKEN.fullmatch(word):
            _refuse(f"argument {word[:40]!r}: not allowed")
    behaviour = state["behaviour"]
    if behaviour == "hung":
        _hang()
        sys.exit(1)
    if behaviour == "slow":
        time.sleep(float(state.get("delay", 3)))
    with open(table[words[0]], "rb") as handle:
        sys.stdout.buffer.write(handle.read())


if __name__ == "__main__":
    main()
