"""The host collector's text back-end: ``sar``, ``vmstat``, ``iostat`` and ``uptime`` run as commands, locally or
through a command prefix (``ssh -o BatchMode=yes host``), and their text parsed (``textparse.py``); the memory
commands ``svmon``, ``lsps``, ``swapinfo``, ``swap -s`` and ``lparstat``, when configured, the same way
(``memparse.py``).  For hosts where the
exporter's Python cannot run or psutil has no port (HP-UX 11i, old Solaris) and for the guides' own figures:
scan rate, ``avserv``/``svc_t`` service time, CPU idle and I/O wait.

The tools print rates and shares over their sample interval, so these are gauges with names of their own
(``middleware_host_cpu_mode_ratio``, ``..._page_scans_per_second``, ``..._disk_service_time_seconds``, ...), never
counters made up from them; ``alerts/recording.yml`` turns them into the same recorded series the /proc counters
give.  Every command is a source with its own success, duration and error text; the commands run at the same time
(each takes its sample interval), each under its own deadline inside the collector's timeout
(``core/sources.SourceSet``, as the filesystem text back-end runs df), through ``machine/runner.py`` (no shell,
``command_timeout``, the process group killed); a command still stuck is not started again while it hangs.  A figure
no tool printed is absent, never 0.  An output the runner cut at its 4 MiB cap, or one so long that its last
report (sar's Average block) is not in the part parsed (``textparse.TAIL_LINES``), fails its source with that
said: the figures of an interval in the middle are never reported as the last ones.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from ...core.metrics import MetricBatch
from ...core.sources import Source, SourceSet
from ...core.targets import local_target
from ...machine.remote import prefixed
from ...machine.runner import DEFAULT_MAX_OUTPUT, CommandError, run_command
from ...machine.textlines import first_line
from .metrics import (
    CPU_MODE_RATIO,
    DISK_AWAIT,
    DISK_QUEUE,
    DISK_SERVICE_TIME,
    DISK_TRANSFERS,
    DISK_UTIL,
    LOAD1,
    LOAD5,
    LOAD15,
    LPAR_ENTITLED_CORES,
    LPAR_ENTITLEMENT_CONSUMED,
    LPAR_INFO,
    LPAR_PHYSICAL_CORES,
    MEMORY_ACTIVE_VIRTUAL,
    MEMORY_AVAILABLE,
    MEMORY_BUFFERS,
    MEMORY_CACHED,
    MEMORY_FREE,
    MEMORY_TOTAL,
    PAGE_SCANS_PER_SECOND,
    PLATFORM,
    RUN_QUEUE,
    RUN_QUEUE_OCCUPIED,
    SWAP_TOTAL,
    SWAP_USED,
    TEXT_SOURCES,
    VIRTUAL_SWAP_AVAILABLE,
    VIRTUAL_SWAP_TOTAL,
)
from .settings import COMMANDS, TextSettings

if TYPE_CHECKING:
    from . import textparse

TOOLS = COMMANDS  # also the order in which a figure printed by two tools is taken (svmon, exact, before lsps)
MEMORY_TOOLS = frozenset({"svmon", "lsps", "swapinfo", "swap", "lparstat"})  # read by memparse.py
MEMORY_FIELDS = (("total", MEMORY_TOTAL), ("free", MEMORY_FREE), ("available", MEMORY_AVAILABLE),
                 ("buffers", MEMORY_BUFFERS), ("cached", MEMORY_CACHED))
LPAR_FIELDS = (("entitled_cores", LPAR_ENTITLED_CORES), ("physical_cores", LPAR_PHYSICAL_CORES),
               ("entitlement_consumed", LPAR_ENTITLEMENT_CONSUMED))
DISK_FIELDS = (("service_time", DISK_SERVICE_TIME), ("await", DISK_AWAIT), ("util", DISK_UTIL),
               ("iops", DISK_TRANSFERS), ("queue", DISK_QUEUE))

_ENV = {"LC_ALL": "C", "LANG": "C", "S_TIME_FORMAT": "ISO"}  # one spelling of numbers and times (sysstat: 24 h)


def _textparse():
    """The parsers, imported with the text back-end's first run: a host read from /proc never needs them
    (docs/footprint.md)."""
    from . import textparse

    return textparse


def _parse(tool: str, text: str, platform: str | None) -> textparse.Reading:
    if tool not in MEMORY_TOOLS:
        return _textparse().parse(tool, text, platform)
    from . import memparse  # with the text back-end's first run of a memory command

    parser = {"svmon": memparse.parse_svmon, "lsps": memparse.parse_lsps, "swapinfo": memparse.parse_swapinfo,
              "swap": memparse.parse_swap, "lparstat": memparse.parse_lparstat}[tool]
    return parser(text, platform)


def command_environment() -> dict[str, str]:
    """The exporter's environment with the C locale (decimal points, 24-hour times); ssh passes none of it on."""
    return {**os.environ, **_ENV}


class TextHost:
    """The host collector's sar, vmstat and iostat, kept from run to run (a stuck command is not started again
    while it hangs)."""

    def __init__(self, settings: TextSettings, timeout: float, disk_exclude: re.Pattern[str] | None) -> None:
        self.settings = settings
        self._disk_exclude = disk_exclude
        self.sources = SourceSet("host", TEXT_SOURCES, timeout)

    @property
    def target(self) -> str:
        """The host's name on the status page and in middleware_target_up (core/targets.py)."""
        return local_target(self.settings.target)

    def _argv(self, tool: str) -> list[str]:
        command = getattr(self.settings, tool)
        return prefixed(self.settings.command_prefix, command) if command else []

    def collect(self, batch: MetricBatch) -> None:
        platform = None if self.settings.platform == "auto" else self.settings.platform
        readings: list[textparse.Reading] = []  # in TOOLS order: the sources are added in list order

        def source(tool: str) -> Source:
            argv = self._argv(tool)

            def read():
                reading = self._read(tool, argv, platform)
                return lambda: readings.append(reading)
            return Source(tool, bool(argv), read)

        self.sources.run(batch, [source(tool) for tool in TOOLS], target=self.target)
        self._emit(batch, _textparse().merge(readings))

    def _read(self, tool: str, argv: list[str], platform: str | None) -> textparse.Reading:
        """Run one tool and parse its output; a CommandError (the tool's own words, as for a command that failed)
        when there is nothing to report."""
        result = run_command(argv, self.settings.command_timeout, env=command_environment(), check=True)
        if result.truncated and len(result.stdout_bytes) >= DEFAULT_MAX_OUTPUT:  # stdout, not stderr, was cut:
            # the runner kept its start; the last report and the Average block are what it lost
            raise CommandError(f"{tool}: the output was longer than the {DEFAULT_MAX_OUTPUT // (1 << 20)} MiB kept "
                               "and was cut, so its last report (and sar's Average block) was not read; use a "
                               "smaller count (or fewer devices)")
        reading = _parse(tool, result.stdout, platform)
        if reading.problem is not None:
            raise CommandError(reading.problem)
        if not reading.sections:
            first = first_line(result.stdout, 120)
            raise CommandError(f"{tool}: nothing recognised in the output (first line: {first!r})")
        if tool in ("iostat", "vmstat") and reading.since_boot_only:
            raise CommandError(f"{tool}: only the first report, the average since boot, was printed; give an "
                               "interval and a count of 2 or more")
        return reading

    def _emit(self, batch: MetricBatch, reading: textparse.Reading) -> None:
        target = self.settings.target
        for mode, share in sorted(reading.cpu.items()):
            CPU_MODE_RATIO.add(batch, share, target=target, mode=mode)
        if reading.page_scan_rate is not None:
            PAGE_SCANS_PER_SECOND.add(batch, reading.page_scan_rate, target=target)
        for device, figures in sorted(reading.disks.items()):
            if self._disk_exclude and self._disk_exclude.search(device):
                continue
            for key, spec in DISK_FIELDS:
                if key in figures:
                    spec.add(batch, figures[key], target=target, device=device)
        if reading.load is not None:  # node_exporter's names, as /proc gives them; `target` is the collector's
            for spec, value in zip((LOAD1, LOAD5, LOAD15), reading.load, strict=True):  # constant label here
                spec.add(batch, value)
        if reading.run_queue is not None:
            RUN_QUEUE.add(batch, reading.run_queue, target=target)
        if reading.run_queue_occupied is not None:
            RUN_QUEUE_OCCUPIED.add(batch, reading.run_queue_occupied, target=target)
        self._emit_memory(batch, reading)
        if reading.platform:
            PLATFORM.add(batch, 1, target=target, platform=reading.platform, release=reading.release or "")

    def _emit_memory(self, batch: MetricBatch, reading: textparse.Reading) -> None:
        """Memory and swap under the names /proc and psutil give them (``target`` is the collector's constant
        label there), the virtual swap and the LPAR under names of their own."""
        target = self.settings.target
        for key, spec in MEMORY_FIELDS:
            if key in reading.memory:
                spec.add(batch, reading.memory[key])
        for key, spec in (("total", SWAP_TOTAL), ("used", SWAP_USED)):
            if key in reading.swap:
                spec.add(batch, reading.swap[key])
        if "active_virtual" in reading.memory:
            MEMORY_ACTIVE_VIRTUAL.add(batch, reading.memory["active_virtual"], target=target)
        for key, spec in (("total", VIRTUAL_SWAP_TOTAL), ("available", VIRTUAL_SWAP_AVAILABLE)):
            if key in reading.virtual_swap:
                spec.add(batch, reading.virtual_swap[key], target=target)
        for key, spec in LPAR_FIELDS:
            if key in reading.lpar:
                spec.add(batch, reading.lpar[key], target=target)
        if reading.lpar_info:
            LPAR_INFO.add(batch, 1, target=target, **{k: reading.lpar_info.get(k, "") for k in ("type", "mode",
                                                                                                   "smt")})
