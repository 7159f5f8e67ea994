"""IBM MQ through ``dspmq`` and ``runmqsc``, for an exporter running on the queue manager's host.

One snapshot is two commands, never through a shell: ``dspmq -n -m QMGR`` for the queue manager's status and,
only when that says ``Running``, one ``runmqsc -e QMGR`` with the DISPLAY commands of MQSC_COMMANDS on its
stdin.  Any other status (``Running as standby``, ``Running elsewhere``, ``Replica``, ``Ended normally``, ...)
is the snapshot, mapped through the shared table of :mod:`.states`.  The text is parsed by :mod:`.parse` and
mapped to the model by :mod:`.mqscmap` (shared with the REST back-end); this module runs the
commands and turns their failures into clear errors.

Put/get counts come from IBM's ``amqsrua`` sample (the queue manager's resource-statistics publications, as
text), run in a worker thread of its own (:class:`.statistics.AmqsruaStats`) so that a snapshot never waits for
the next publication.
"""

from __future__ import annotations

import os
import time

from ...machine.remote import UnsafeArgument, prefixed
from ...machine.runner import CommandError, CommandNotFound, CommandResult, CommandTimeout, run_command
from ...machine.textlines import iter_lines
from . import mqscmap
from .model import Backend, BackendError, BackendNotAvailable, QmgrSnapshot, Throughput
from .parse import (
    CHSTATUS_ID,
    ChannelStatusAnswer,
    channel_status_from_mqsc,
    parse_dspmq_records,
    queues_from_mqsc,
    read_mqsc,
)
from .states import qmgr_state
from .statistics import AmqsruaStats

# What one snapshot asks runmqsc for, in one session.  The last three are optional sources: when their answer is
# missing (an old queue manager, a syntax error, no authority) the snapshot stands and the source's error is in
# ``QmgrSnapshot.source_errors``.
MQSC_COMMANDS: tuple[str, ...] = (
    "DISPLAY QSTATUS(*) TYPE(QUEUE) ALL",
    "DISPLAY QLOCAL(*) MAXDEPTH USAGE DESCR",
    "DISPLAY CHSTATUS(*) ALL",
    "DISPLAY CHANNEL(*) CHLTYPE MAXINST MAXINSTC DESCR XMITQ",
    "DISPLAY QMSTATUS ALL",
    "DISPLAY QMGR VERSION CMDLEVEL QMID PLATFORM DEADQ MAXHANDS",
    # issue 39: Native HA (MQ 9.2 and later; elsewhere an error message, and no Native HA series)
    "DISPLAY QMSTATUS TYPE(NATIVEHA) ALL",
)

# Messages meaning the session as a whole failed (no DISPLAY could have run).
_FATAL_IDS = {
    "AMQ8118": "queue manager does not exist",
    "AMQ8146": "queue manager not available",
    "AMQ8135": "not authorized",
    "AMQ8145": "connection broken",
    "AMQ8156": "queue manager quiescing",
}


# Messages that are answers, not failures (nothing matched a generic DISPLAY).
_BENIGN_IDS = ("AMQ8147", "AMQ8420")


def _first_line(text: str, limit: int = 200) -> str:
    for line in iter_lines(text):
        if line.strip():
            return line.strip()[:limit]
    return ""


class RunmqscBackend(Backend):
    """One local queue manager through ``dspmq`` and ``runmqsc`` (no MQ client library needed).

    ``timeout`` bounds the whole snapshot (both commands); ``env`` holds extra environment variables for the
    commands, added to the exporter's own environment (e.g. ``{"LANG": "C"}``).
    """

    name = "runmqsc"

    def __init__(self, qmgr: str, runmqsc: str = "/opt/mqm/bin/runmqsc", dspmq: str = "/opt/mqm/bin/dspmq",
                 timeout: float = 10.0, env: dict[str, str] | None = None,
                 command_prefix: list[str] | None = None, amqsrua: str | None = None, monitor_interval: float = 10.0,
                 statistics_ticks: int = 3, statistics_max_queues: int = 49) -> None:
        self.qmgr = qmgr
        self.stats = AmqsruaStats(qmgr, amqsrua, command_prefix, monitor_interval, statistics_ticks,
                                  statistics_max_queues, env) if amqsrua else None
        self.command_prefix = list(command_prefix or [])  # e.g. ssh to the queue manager's host
        self.runmqsc = runmqsc
        self.dspmq = dspmq
        self.timeout = timeout
        self.env = env
        self.last_messages: list[str] = []  # AMQ messages of the last runmqsc session, for diagnostics
        self._chstatus = ChannelStatusAnswer()  # the DISPLAY CHSTATUS answer of the last session

    def snapshot(self) -> QmgrSnapshot:
        """The queue manager's status and, when it is running, its queues and channel instances."""
        deadline = time.monotonic() + self.timeout
        status = self._qmgr_status(deadline)
        if not qmgr_state(status).running:
            self.last_messages = []
            return QmgrSnapshot(qmgr=self.qmgr, status=status)
        blocks = self._display(deadline)
        snap = QmgrSnapshot(qmgr=self.qmgr, status=status, queues=queues_from_mqsc(blocks),
                            channels=self._chstatus.channels)
        if self._chstatus.error:  # an answer that cannot be read is not "no channel running"
            snap.source_errors["chstatus"] = self._chstatus.error
        self._optional_sources(snap, blocks)
        if self.stats is not None and self.stats.present:
            snap.throughput = self._statistics(snap)
        return snap

    def _optional_sources(self, snap: QmgrSnapshot, blocks: list[dict[str, str]]) -> None:
        """Channel definitions and queue-manager health.  runmqsc -e echoes no command, so an answer is told by its
        attributes; a source with no answer at all gets an error naming the session's messages (e.g. AMQ8405I
        syntax error on a queue manager older than the command)."""
        hint = "; ".join(m for m in self.last_messages if not m.startswith(_BENIGN_IDS))[:300]
        why = f" ({hint})" if hint else ""
        definitions = mqscmap.channel_definitions(blocks)
        if definitions:  # every queue manager has SYSTEM.DEF.* channels: none at all means the command failed
            snap.channel_definitions = definitions
        else:
            snap.source_errors["channel"] = f"DISPLAY CHANNEL: no answer{why}"
        qmstatus = [b for b in blocks if mqscmap.is_queue_manager(b) and ("CONNS" in b or "CMDSERV" in b)]
        qmgr = [b for b in blocks if mqscmap.is_queue_manager(b) and ("QMID" in b or "CMDLEVEL" in b)]
        if not qmstatus:
            snap.source_errors["qmstatus"] = f"DISPLAY QMSTATUS: no answer{why}"
        if not qmgr:
            snap.source_errors["qmgr"] = f"DISPLAY QMGR: no answer{why}"
        snap.health = mqscmap.health(blocks)
        self._native_ha(snap, blocks, why)

    @staticmethod
    def _native_ha(snap: QmgrSnapshot, blocks: list[dict[str, str]], why: str) -> None:
        """Native HA instances (issue 39).  No answer is normal on a queue manager that is not Native HA; it is an
        error only where QMSTATUS names a Native HA instance (INSTANCE(...), MQ 9.4 and later)."""
        snap.native_ha = mqscmap.native_ha(blocks)
        configured = any(mqscmap.text(b.get("INSTANCE")) for b in blocks if mqscmap.is_queue_manager(b))
        if snap.native_ha is None and configured:
            snap.source_errors["nativeha"] = f"DISPLAY QMSTATUS TYPE(NATIVEHA): no answer{why}"

    def _statistics(self, snap: QmgrSnapshot) -> Throughput | None:
        """What amqsrua's worker has read since the last snapshot (never waits); None before its first command
        ended.  Its failure is its own: the snapshot's other figures stand."""
        assert self.stats is not None
        try:
            return self.stats.read([q.name for q in snap.queues if self.wanted(q.name)])
        except Exception as exc:  # noqa: BLE001 - a bug here must not cost the depths
            return Throughput(source=self.stats.source, error=f"{type(exc).__name__}: {exc}"[:300])

    def close(self) -> None:
        if self.stats is not None:
            self.stats.stop()

    def _qmgr_status(self, deadline: float) -> str:
        """The state name (:mod:`.states`) of the queue manager as ``dspmq`` sees it from this host."""
        result = self._run(self.dspmq, ["-n", "-m", self.qmgr], deadline)
        records = [r for r in parse_dspmq_records(result.stdout) if r.qmgr == self.qmgr]
        if records:
            return records[-1].state.name
        hint = _first_line(result.stdout) or _first_line(result.stderr) or "no output"
        if "AMQ7048" in result.stdout + result.stderr:
            raise BackendError(f"dspmq: queue manager {self.qmgr} is not known on this host ({hint})")
        raise BackendError(f"dspmq -m {self.qmgr}: no status for the queue manager "
                           f"(exit status {result.returncode}: {hint})")

    def _display(self, deadline: float) -> list[dict[str, str]]:
        stdin = "".join(command + "\n" for command in MQSC_COMMANDS)
        result = self._run(self.runmqsc, ["-e", self.qmgr], deadline, input_text=stdin)
        report = read_mqsc(result.stdout, track=(CHSTATUS_ID,))
        blocks, messages = report.blocks, report.messages
        self.last_messages = messages
        self._chstatus = channel_status_from_mqsc(report)
        fatal = [m for m in messages if m[:7] in _FATAL_IDS]
        if fatal:
            reason = _FATAL_IDS[fatal[0][:7]]
            raise BackendError(f"runmqsc {self.qmgr}: {reason} ({fatal[0]})")
        if blocks:
            return blocks
        hint = (messages[0] if messages else "") or _first_line(result.stderr) or _first_line(result.stdout)
        if result.returncode != 0:
            raise BackendError(f"runmqsc {self.qmgr}: exit status {result.returncode} and no usable output"
                               + (f" ({hint!r})" if hint else ""))
        raise BackendError(f"runmqsc {self.qmgr}: no recognisable MQSC output"
                           + (f" (starts {hint[:80]!r})" if hint else " (empty)"))

    def _run(self, binary: str, args: list[str], deadline: float, input_text: str | None = None) -> CommandResult:
        tool = os.path.basename(binary) or binary
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise BackendError(f"{tool}: no time left of the {self.timeout:g}s timeout")
        env = {**os.environ, **self.env} if self.env is not None else None
        try:
            return run_command(prefixed(self.command_prefix, [binary, *args]), timeout=remaining, env=env,
                               input_text=input_text)
        except CommandNotFound:
            raise BackendNotAvailable(f"{tool} not found at {binary} (IBM MQ is not installed on this host, "
                                      "or the path is wrong)") from None
        except CommandTimeout:
            raise BackendError(f"{tool} {' '.join(args)}: timed out after {remaining:.3g}s") from None
        except CommandError as exc:
            raise BackendError(f"{tool}: {exc}") from None
        except UnsafeArgument as exc:
            raise BackendError(f"{tool}: {exc}") from None
        except OSError as exc:  # e.g. exec format error on a broken binary
            raise BackendError(f"{tool} at {binary} could not be run: {exc}") from None

