"""HCL (formerly IBM/Lotus) Domino server statistics from the server console command ``show stat``.

One *source*, ``show_stat``: the configured ``command`` (an argument list, no shell), e.g. ``server -c "show stat"``
run as the server's user from its data directory, or a site script printing the same text.  Every numeric
statistic that passes ``include``/``exclude`` becomes ``middleware_domino_statistic{name}``, and the few that
operators and the guide watch get their own gauges.  No command configured, or a binary that is not there,
reports ``middleware_domino_source_present 0`` quietly; a command that fails or prints no numeric statistic gives
``middleware_domino_source_success 0`` and the error in /api/v1/collectors.  The command runs under
``core/sources.SourceSet``, as every command-running source does: its own deadline inside ``timeout``, and while
a command still hangs the next run does not start it again.  Numbers are read in the server's
locale (``locale``, ``thousands_separator``, ``decimal_separator``; see parse.py): a number whose separators
cannot be decided is exposed as text, counted in ``middleware_domino_undecided_numbers`` and named in the source
error, never guessed.  Label cardinality is bounded (include/exclude, ``metrics.MAX_STATISTICS``, text values only
for a few fixed names and the undecided numbers).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from fnmatch import translate

from ...core.collector import Collector, Context
from ...core.metrics import ConfiguredLabels, MetricBatch, MetricSpec
from ...core.sources import Source, SourceSet
from ...core.targets import local_target
from ...machine.remote import prefixed, program_available, target_labels
from ...machine.runner import CommandError, run_command
from ...machine.textlines import first_line
from . import DESCRIPTION, NAME
from .metrics import (
    CONVENIENCE,
    MAX_STATISTICS,
    SOURCE_METRICS,
    SPECS,
    STATISTIC,
    STATISTIC_INFO,
    STATISTICS,
    UNDECIDED_NUMBERS,
)
from .parse import read_show_stat
from .settings import DominoSettings

SOURCE = "show_stat"

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




class DominoCollector(Collector):
    name = NAME
    description = DESCRIPTION
    Settings = DominoSettings

    def __init__(self, settings: DominoSettings, context: Context) -> None:
        super().__init__(settings, context)
        self.settings: DominoSettings = settings
        self._include = _globs(settings.include)
        self._exclude = _globs(settings.exclude)
        self._info = _globs(INFO_NAMES)
        self._format = settings.number_format()
        # the console command as a source: its own deadline inside the timeout, not started again while it hangs
        self.sources = SourceSet("domino", SOURCE_METRICS, settings.timeout)

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
        show_stat = Source(SOURCE, self._available(command), lambda: self._show_stat(batch, command or []))
        self.sources.run(batch, [show_stat], target=self.targets()[0])

    def _run(self, argv: list[str]) -> tuple[bytes, int, str]:
        """The raw output (the parser decodes it line by line: UTF-8, else Windows-1252), exit status, first line."""
        result = run_command(prefixed(self.settings.command_prefix, argv), timeout=self.settings.command_timeout)
        first = first_line(result.stderr) or first_line(result.stdout)
        return result.stdout_bytes, result.returncode, first

    def _show_stat(self, batch: MetricBatch, argv: list[str]) -> Callable[[], None]:
        """Run the command and read its output (in the source's own thread); returns what adds the samples."""
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
        convenience = []
        lowered = {name.lower(): name for name in stats}  # Mail.Dead and MAIL.Dead: the one first printed later
        for spec, stat in CONVENIENCE:
            name = lowered.get(stat.lower())
            value = stats[name] if name is not None else None
            if isinstance(value, float):
                convenience.append((spec, value))

        def emit() -> None:
            if problems:  # read, but not all of it exposed: said beside the samples
                batch.note_error(SOURCE, "; ".join(problems))
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
