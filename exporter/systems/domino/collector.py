"""HCL (formerly IBM/Lotus) Domino server statistics from the server console command ``show stat``.

One *source*, ``show_stat``: the configured ``command`` (an argument list, no shell), e.g. ``server -c "show stat"``
run as the server's user from its data directory, or a site script printing the same text.  Every numeric
statistic that passes ``include``/``exclude`` becomes ``middleware_domino_statistic{name}``, and the few that
operators and the guide watch get their own gauges.  No command configured, or a binary that is not there,
reports ``middleware_domino_source_present 0`` quietly; a command that fails or prints no numeric statistic gives
``middleware_domino_source_success 0`` and the error in /api/v1/collectors.  Numbers are read in the server's
locale (``locale``, ``thousands_separator``, ``decimal_separator``; see parse.py): a number whose separators
cannot be decided is exposed as text, counted in ``middleware_domino_undecided_numbers`` and named in the source
error, never guessed.  Label cardinality is bounded (include/exclude, :data:`MAX_STATISTICS`, text values only for
a few fixed names and the undecided numbers).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from fnmatch import translate

from ...core.collector import Collector, Context
from ...core.metrics import NAMESPACE, ConfiguredLabels, MetricBatch, MetricSpec
from ...core.sources import SourceMetrics, run_source
from ...core.targets import local_target
from ...machine.remote import prefixed, program_available, target_labels
from ...machine.runner import CommandError, run_command
from ...machine.textlines import first_line
from .parse import read_show_stat
from .settings import _THOUSANDS, DEFAULT_INCLUDE, DESCRIPTION, DominoSettings  # noqa: F401 (moved; re-exported)

P = f"{NAMESPACE}_domino"
SOURCE = "show_stat"

# At most this many statistics are exposed per run (a runaway output or a too-wide include cannot flood Prometheus).
MAX_STATISTICS = 5000

# Text values longer than this are cut in the info label.
MAX_TEXT_VALUE = 200

# Text statistics exposed as info labels (only these, and numbers whose reading is undecided: text labels must stay
# bounded).
INFO_NAMES = ["Server.Version.*", "Server.Name", "Server.Time.Start"]

# How many undecided numbers the source error names as examples.
MAX_EXAMPLES = 3


def _globs(patterns: list[str]) -> re.Pattern[str]:
    """One case-insensitive regex matching any of the glob patterns (none: matches nothing)."""
    return re.compile("|".join(translate(p) for p in patterns) or r"(?!)", re.IGNORECASE)


SOURCE_METRICS = SourceMetrics.declare(
    P, "1 if the source is configured and its command exists here, 0 if it is skipped.")
STATISTIC = MetricSpec(
    "middleware_domino_statistic", "gauge", "A numeric Domino statistic from `show stat`, as printed (thousands "
    "separators removed, no unit conversion: the unit is the one the statistic's name implies).", ("name",),
    "name is the statistic (Server.Users, Mem.Allocated, ...); filtered by include/exclude")
STATISTIC_INFO = MetricSpec(
    "middleware_domino_statistic_info", "info", "A text Domino statistic (only Server.Version.*, Server.Name, "
    "Server.Time.Start, and numbers whose digit grouping could not be decided, see "
    "middleware_domino_undecided_numbers); the text is the value label.", ("name",))
UNDECIDED_NUMBERS = MetricSpec(
    "middleware_domino_undecided_numbers", "gauge", "Statistics printed as numbers that were kept as text "
    "(statistic_info) because their separators could not be decided (2.978: 2978 or 2.978?) or do not fit the "
    "configured locale/thousands_separator/decimal_separator (those passing include/exclude or feeding a gauge of "
    "their own); 0 when every number was read.", (),
    "> 0: set collectors.domino.locale (or the separators); the source error names examples")
USERS = MetricSpec("middleware_domino_users", "gauge", "Users with sessions open on the server (Server.Users).")
MAIL_WAITING = MetricSpec(
    "middleware_domino_mail_waiting", "gauge", "Mail messages waiting to be routed (Mail.Waiting).")
MAIL_DEAD = MetricSpec(
    "middleware_domino_mail_dead", "gauge", "Undeliverable (dead) mail messages held in MAIL.BOX (Mail.Dead).")
TRANSACTIONS_PER_MINUTE = MetricSpec(
    "middleware_domino_transactions_per_minute", "gauge", "Transactions in the last minute "
    "(Server.Trans.PerMinute; the article's NotesMark throughput).")
STATISTICS = MetricSpec(
    "middleware_domino_statistics", "gauge", "Statistics exposed in the last run (statistic plus statistic_info "
    f"series), at most {MAX_STATISTICS}.")

# The statistics with a gauge of their own (matched case-insensitively: Domino prints MAIL.Dead and Mail.Dead).
CONVENIENCE = ((USERS, "Server.Users"), (MAIL_WAITING, "Mail.Waiting"), (MAIL_DEAD, "Mail.Dead"),
               (TRANSACTIONS_PER_MINUTE, "Server.Trans.PerMinute"))

SPECS = [*SOURCE_METRICS.specs(), STATISTIC, STATISTIC_INFO, USERS, MAIL_WAITING, MAIL_DEAD,
         TRANSACTIONS_PER_MINUTE, STATISTICS, UNDECIDED_NUMBERS]


class DominoCollector(Collector):
    name = "domino"
    description = DESCRIPTION
    Settings = DominoSettings

    def __init__(self, settings: DominoSettings, context: Context) -> None:
        super().__init__(settings, context)
        self.settings: DominoSettings = settings
        self._include = _globs(settings.include)
        self._exclude = _globs(settings.exclude)
        self._info = _globs(INFO_NAMES)
        self._format = settings.number_format()

    @classmethod
    def reference_settings(cls) -> DominoSettings:
        return DominoSettings(command=["/opt/hcl/domino/bin/server", "-c", "show stat"])

    def specs(self) -> list[MetricSpec]:
        return list(SPECS)

    # ---- helpers -----------------------------------------------------------------------------------------
    def _available(self, argv: list[str] | None) -> bool:
        return bool(argv) and program_available(self.settings.command_prefix, argv[0])

    def const_labels(self) -> dict[str, str]:
        return target_labels(self.settings)

    def targets(self) -> list[str]:
        return [local_target(self.settings.target)]  # the server whose console `show stat` reads

    def static_labels(self) -> list[ConfiguredLabels]:
        return [ConfiguredLabels(self.targets()[0], "collectors.domino.labels", self.settings.labels)]

    def _wanted(self, name: str) -> bool:
        return bool(self._include.fullmatch(name)) and not self._exclude.fullmatch(name)

    # ---- collection --------------------------------------------------------------------------------------
    def collect(self, batch: MetricBatch) -> None:
        command = self.settings.command
        run_source(batch, SOURCE_METRICS, SOURCE, self._available(command),
                   lambda: self._show_stat(batch, command or []), target=self.targets()[0])

    def _run(self, argv: list[str]) -> tuple[bytes, int, str]:
        """The raw output (the parser decodes it line by line: UTF-8, else Windows-1252), exit status, first line."""
        result = run_command(prefixed(self.settings.command_prefix, argv), timeout=self.settings.command_timeout)
        first = first_line(result.stderr) or first_line(result.stdout)
        return result.stdout_bytes, result.returncode, first

    def _show_stat(self, batch: MetricBatch, argv: list[str]) -> Callable[[], None]:
        output, status, first_line = self._run(argv)
        show = read_show_stat(output, self._format)
        stats = show.values
        program = os.path.basename(argv[0])
        if not show.unresolved and not any(isinstance(value, float) for value in stats.values()):
            # `show stat` always prints numbers; text alone (or a garbled line) is not a reading
            if status != 0:
                raise CommandError(f"{program}: exit status {status}: {first_line}")
            raise ValueError(f"no numeric statistics in the output of {program} ({len(output)} bytes)")
        numeric: list[tuple[str, float]] = []
        text: list[tuple[str, str]] = []
        for name in sorted(stats):
            if not self._wanted(name):
                continue
            value = stats[name]
            if isinstance(value, float):
                numeric.append((name, value))
            elif name in show.unresolved or self._info.fullmatch(name):
                text.append((name, value[:MAX_TEXT_VALUE]))
        problems = []
        exposed = len(numeric) + len(text)
        if exposed > MAX_STATISTICS:
            # Keep the first statistics by name (a stable set from run to run), numeric ones first.
            numeric = numeric[:MAX_STATISTICS]
            text = text[:MAX_STATISTICS - len(numeric)]
            problems.append(f"{exposed} statistics pass include/exclude; only the first {MAX_STATISTICS} by name "
                            "are exposed (narrow include or add exclude patterns)")
        # undecided numbers that matter here: exposed ones, and those a convenience gauge would show
        gauged = {stat.lower() for _, stat in CONVENIENCE}
        undecided = {name: why for name, why in show.unresolved.items() if self._wanted(name) or name.lower() in gauged}
        if undecided:
            problems.append(self._undecided_message(undecided, stats))
        if problems:
            batch.note_error(SOURCE, "; ".join(problems))
        convenience = []
        lowered = {name.lower(): name for name in stats}  # Mail.Dead and MAIL.Dead: the one first printed later
        for spec, stat in CONVENIENCE:
            name = lowered.get(stat.lower())
            value = stats[name] if name is not None else None
            if isinstance(value, float):
                convenience.append((spec, value))

        def emit() -> None:
            for name, number in numeric:
                STATISTIC.add(batch, number, name=name)
            for name, value in text:
                STATISTIC_INFO.add_info(batch, {"value": value}, name=name)
            for spec, number in convenience:
                spec.add(batch, number)
            STATISTICS.add(batch, len(numeric) + len(text))
            UNDECIDED_NUMBERS.add(batch, len(undecided))
        return emit

    def _undecided_message(self, undecided: dict[str, str], stats: dict[str, float | str]) -> str:
        """What the source error says about numbers kept as text."""
        parts = []
        for reason, what in (("ambiguous", "ambiguous separators"),
                             ("separators", f"do not fit the configured {self._format.describe()}")):
            names = [name for name, why in undecided.items() if why == reason]
            if names:
                examples = ", ".join(f"{name} = {stats[name]}" for name in names[:MAX_EXAMPLES])
                more = f" and {len(names) - MAX_EXAMPLES} more" if len(names) > MAX_EXAMPLES else ""
                parts.append(f"{len(names)} number(s) kept as text, {what} ({examples}{more})")
        return "; ".join(parts) + ": set collectors.domino.locale or thousands_separator/decimal_separator"
