"""HCL (formerly IBM/Lotus) Domino server statistics from the server console command ``show stat``.

Requirements: ``../shared/guide-thresholds.md`` rows DOM-* and the Domino CPU scalability article
(``004_071aa8098d0b1a50.txt``): it measured users, NotesMark transactions per minute and mail delivery, next to the
host's CPU, paging and disk service time (those come from the host collector).  The statistics the article and
SREs watch get their own gauges (users, transactions per minute, mail waiting and dead); every numeric statistic
that passes ``include``/``exclude`` is exposed as ``middleware_domino_statistic{name}``.

One *source*, ``show_stat``: the configured ``command`` (an argument list, no shell), e.g.
``["/usr/bin/env", "-C", "/local/notesdata", "/opt/hcl/domino/bin/server", "-c", "show stat"]`` (``server -c``
must run as the server's user from its data directory; see :mod:`exporter.domino_text` for what is known of its
output), or a site script printing the output of ``show stat``.  No command configured, or a binary that is not
there, reports ``middleware_domino_source_present 0`` quietly.  A command that times out, fails without printing
statistics or prints no statistics gives ``middleware_domino_source_success 0`` and the error in
/api/v1/collectors; the collector itself only fails on a bug.

Label cardinality is bounded: statistic names pass the include/exclude globs (case-insensitive, since Domino
prints some facilities in upper case, ``MAIL.*``), at most :data:`MAX_STATISTICS` are exposed, and text values
become labels only for a few fixed names (version, server name, start time).
"""

from __future__ import annotations

import os
import re
import shutil
from fnmatch import translate
from typing import Callable

from pydantic import Field, field_validator, model_validator

from ..collector import Collector, CollectorSettings, Context, Duration
from ..metrics import NAMESPACE, MetricBatch, MetricSpec
from ..runner import CommandError, run_command
from ..sources import check_command_timeout, run_source, source_specs

P = f"{NAMESPACE}_domino"
SOURCE = "show_stat"

# At most this many statistics are exposed per run (a runaway output or a too-wide include cannot flood Prometheus).
MAX_STATISTICS = 5000

# Text values longer than this are cut in the info label.
MAX_TEXT_VALUE = 200

DEFAULT_INCLUDE = ["Server.*", "Mail.*", "Mem.*", "Database.*", "Disk.*", "Platform.*", "Replica.*", "Agent.*",
                   "Http.*", "NET.*"]

# Text statistics exposed as info labels (only these: text labels must stay bounded).
INFO_NAMES = ["Server.Version.*", "Server.Name", "Server.Time.Start"]

# Convenience gauges: metric suffix, statistic name, help.
CONVENIENCE = [
    ("users", "Server.Users", "Users with sessions open on the server (Server.Users)."),
    ("mail_waiting", "Mail.Waiting", "Mail messages waiting to be routed (Mail.Waiting)."),
    ("mail_dead", "Mail.Dead", "Undeliverable (dead) mail messages held in MAIL.BOX (Mail.Dead)."),
    ("transactions_per_minute", "Server.Trans.PerMinute",
     "Transactions in the last minute (Server.Trans.PerMinute; the article's NotesMark throughput)."),
]


def _globs(patterns: list[str]) -> re.Pattern[str]:
    """One case-insensitive regex matching any of the glob patterns (none: matches nothing)."""
    return re.compile("|".join(translate(p) for p in patterns) or r"(?!)", re.IGNORECASE)


class DominoSettings(CollectorSettings):
    enabled: bool = Field(False, description="Run this collector (on a Domino server).")
    interval: Duration = Field(60.0, description="Seconds between collections.")
    timeout: Duration = Field(30.0, description="Seconds before a collection counts as failed.")
    command: list[str] | None = Field(
        None, description="Command printing `show stat` output, as an argument list (no shell), e.g. "
        "[/usr/bin/env, -C, /local/notesdata, /opt/hcl/domino/bin/server, -c, show stat]. null: do not run.")
    command_timeout: Duration = Field(20.0, description="Timeout of the command, seconds (shorter than timeout).")
    include: list[str] = Field(default_factory=lambda: list(DEFAULT_INCLUDE),
                               description="Statistic name patterns to expose (glob, case-insensitive).")
    exclude: list[str] = Field(default_factory=list,
                               description="Statistic name patterns to leave out (glob; applied after include).")

    @field_validator("command")
    @classmethod
    def _argv(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and (not value or not value[0].strip()):
            raise ValueError("must be a non-empty argument list, e.g. [/opt/hcl/domino/bin/server, -c, show stat]")
        return value

    @field_validator("include", "exclude")
    @classmethod
    def _patterns(cls, value: list[str]) -> list[str]:
        if any(not pattern.strip() for pattern in value):
            raise ValueError("patterns must not be empty")
        return value

    @model_validator(mode="after")
    def _command_timeout_fits(self) -> "DominoSettings":
        check_command_timeout(self.command_timeout, self.timeout)
        return self


def _spec(name: str, type_: str, help_: str, labels: tuple[str, ...] = (), note: str = "") -> MetricSpec:
    return MetricSpec(f"{P}_{name}", type_, help_, labels, note)


SPECS = [
    *source_specs(P, "1 if the source is configured and its command exists here, 0 if it is skipped."),
    _spec("statistic", "gauge", "A numeric Domino statistic from `show stat`, as printed (thousands separators "
          "removed, no unit conversion: the unit is the one the statistic's name implies).", ("name",),
          "name is the statistic (Server.Users, Mem.Allocated, ...); filtered by include/exclude"),
    _spec("statistic_info", "info", "A text Domino statistic (only Server.Version.*, Server.Name, "
          "Server.Time.Start); the text is the value label.", ("name",)),
    *[_spec(metric, "gauge", help_) for metric, _, help_ in CONVENIENCE],
    _spec("statistics", "gauge", "Statistics exposed in the last run (statistic plus statistic_info series), "
          f"at most {MAX_STATISTICS}.", ()),
]


class DominoCollector(Collector):
    name = "domino"
    description = "Domino server statistics from the console (show stat)."
    Settings = DominoSettings

    def __init__(self, settings: DominoSettings, context: Context) -> None:
        super().__init__(settings, context)
        self.settings: DominoSettings = settings
        self._include = _globs(settings.include)
        self._exclude = _globs(settings.exclude)
        self._info = _globs(INFO_NAMES)

    @classmethod
    def reference_settings(cls) -> DominoSettings:
        return DominoSettings(command=["/opt/hcl/domino/bin/server", "-c", "show stat"])

    def specs(self) -> list[MetricSpec]:
        return list(SPECS)

    # ---- helpers -----------------------------------------------------------------------------------------
    @staticmethod
    def _available(argv: list[str] | None) -> bool:
        if not argv:
            return False
        program = argv[0]
        if "/" in program:
            return os.path.isfile(program) and os.access(program, os.X_OK)
        return shutil.which(program) is not None

    def _wanted(self, name: str) -> bool:
        return bool(self._include.fullmatch(name)) and not self._exclude.fullmatch(name)

    # ---- collection --------------------------------------------------------------------------------------
    def collect(self, batch: MetricBatch) -> None:
        command = self.settings.command
        run_source(batch, P, SOURCE, self._available(command), lambda: self._show_stat(batch, command or []))

    def _run(self, argv: list[str]) -> tuple[str, int, str]:
        result = run_command(argv, timeout=self.settings.command_timeout)
        first = (result.stderr.strip().splitlines() or result.stdout.strip().splitlines() or [""])[0][:200]
        return result.stdout, result.returncode, first

    def _show_stat(self, batch: MetricBatch, argv: list[str]) -> Callable[[], None]:
        output, status, first_line = self._run(argv)
        from .. import domino_text  # imported on first use (idle RSS on hosts without Domino)

        stats = domino_text.parse_show_stat(output)
        program = os.path.basename(argv[0])
        if not stats:
            if status != 0:
                raise CommandError(f"{program}: exit status {status}: {first_line}")
            raise ValueError(f"no statistics in the output of {program} ({len(output)} characters)")
        numeric: list[tuple[str, float]] = []
        text: list[tuple[str, str]] = []
        for name in sorted(stats):
            if not self._wanted(name):
                continue
            value = stats[name]
            if isinstance(value, float):
                numeric.append((name, value))
            elif self._info.fullmatch(name):
                text.append((name, value[:MAX_TEXT_VALUE]))
        exposed = len(numeric) + len(text)
        if exposed > MAX_STATISTICS:
            # Keep the first statistics by name (a stable set from run to run), numeric ones first.
            numeric = numeric[:MAX_STATISTICS]
            text = text[:MAX_STATISTICS - len(numeric)]
            batch.note_error(SOURCE, f"{exposed} statistics pass include/exclude; only the first {MAX_STATISTICS} "
                             "by name are exposed (narrow include or add exclude patterns)")
        convenience = []
        lowered = {name.lower(): name for name in stats}  # Mail.Dead and MAIL.Dead: the one first printed later
        for metric, stat, _ in CONVENIENCE:
            name = lowered.get(stat.lower())
            value = stats[name] if name is not None else None
            if isinstance(value, float):
                convenience.append((metric, value))

        def emit() -> None:
            for name, number in numeric:
                batch.add(f"{P}_statistic", number, name=name)
            for name, value in text:
                batch.add_info(f"{P}_statistic_info", {"value": value}, name=name)
            for metric, number in convenience:
                batch.add(f"{P}_{metric}", number)
            batch.add(f"{P}_statistics", len(numeric) + len(text))
        return emit
