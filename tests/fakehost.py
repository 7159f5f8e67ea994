"""The forced command of one simulated host of tests/fleet.py: ``python -I -S fakehost.py <host> <fleet dir>``.

sshd runs it instead of whatever the client asked for (``command="..."`` in authorized_keys) and puts the
client's command line in ``SSH_ORIGINAL_COMMAND``.  Nothing of that line is ever executed: it may hold only
plain tokens (``[A-Za-z0-9_.,:=+-]``, at most 64 each) separated by spaces, so it splits as a POSIX shell would
split it with nothing to expand or unquote; its first word must be one of the host's tools (sar, vmstat, iostat,
uptime, df, bdf, as the fleet maps them); then the genuine capture the fleet mapped to that tool on the host's
platform is printed (``<fleet dir>/platforms/<platform>/<tool>``, a link to the capture).  Anything else
(``sar; touch x``, ``$(...)``, a path, a quote, a tab or a line break) is refused with exit status 127 and
nothing on stdout, as a restricted remote account refuses it.  What the exporter sends passes: its arguments are
plain tokens, which ``machine/remote.shell_word`` leaves unquoted, and ssh joins them with spaces.

The host's behaviour is read at every call from ``<fleet dir>/hosts/<host>.state`` (``<platform> <behaviour>
<delay>``, replaced by a rename) so a test can change it while the fleet runs: ``healthy`` prints at once,
``slow`` after ``delay`` seconds, ``hung`` never answers (it waits while the client still holds the session, and
ends when the session is gone so nothing outlives the fleet).  A refusing host never gets here: its key is left
out of authorized_keys.

The fleet's hosts run tests/fakehost.sh, the same rules in sh at a fraction of the cost (a Python start per
command saturated the machine bench/fleet.py runs 300 hosts on); it hands slow and hung hosts to this script.
``Fleet(..., entry="python")`` forces this script for every command (bench/fakehost_cost.py's reference).
Only the standard library, started with ``-I -S``.
"""

import os
import re
import select
import sys
import time

_LINE = re.compile(r"[A-Za-z0-9_.,:=+ -]*")  # token characters and spaces: nothing a shell would expand
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
    with open(os.path.join(fleet, "hosts", host + ".state")) as handle:
        platform, behaviour, delay = handle.read().split()
    tools = os.path.join(fleet, "platforms", platform)
    table = os.listdir(tools)
    line = os.environ.get("SSH_ORIGINAL_COMMAND", "")
    if len(line) > 1024:  # as fakehost.sh
        _refuse(f"a command line of {len(line)} characters: not allowed")
    if not _LINE.fullmatch(line):
        _refuse("a character outside [A-Za-z0-9_.,:=+-] and space: not allowed")
    words = line.split()
    if not words:
        _refuse("no interactive login here")
    if words[0] not in table:
        _refuse(f"{words[0][:40]!r}: not allowed")
    for word in words[1:]:
        if not _TOKEN.fullmatch(word):
            _refuse(f"argument {word[:40]!r}: not allowed")
    if behaviour == "hung":
        _hang()
        sys.exit(1)
    if behaviour == "slow":
        time.sleep(float(delay))
    with open(os.path.join(tools, words[0]), "rb") as handle:
        sys.stdout.buffer.write(handle.read())


if __name__ == "__main__":
    main()
