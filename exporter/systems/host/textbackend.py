"""The host collector's text back-end: ``sar``, ``vmstat`` and ``iostat`` run as commands, locally or through a
command prefix (``ssh -o BatchMode=yes host``), and their text parsed (``textparse.py``).  For hosts where the
exporter's Python cannot run or psutil has no port (HP-UX 11i, old Solaris) and for the guides' own figures:
scan rate, ``avserv``/``svc_t`` service time, CPU idle and I/O wait.

The tools print rates and shares over their sample interval, so these are gauges with names of their own
(``middleware_host_cpu_mode_ratio``, ``..._page_scans_per_second``, ``..._disk_service_time_seconds``, ...), never
counters made up from them; ``alerts/recording.yml`` turns them into the same recorded series the /proc counters
give.  Every command is a source with its own success and duration; the commands run at the same time (each
takes its sample interval), through ``machine/runner.py`` (no shell, timeout, the process group killed).  A figure
no tool printed is absent, never 0.  An output the runner cut at its 4 MiB cap, or one so long that its last
report (sar's Average block) is not in the part parsed (``textparse.TAIL_LINES``), fails its source with that
said: the figures of an interval in the middle are never reported as the last ones.
"""

from __future__ import annotations

import os
import re
import threading
from typing import TYPE_CHECKING

from ...core.metrics import NAMESPACE, MetricBatch, MetricSpec
from ...core.sources import SourceMetrics
from ...core.targets import local_target
from ...machine.remote import prefixed
from ...machine.runner import DEFAULT_MAX_OUTPUT, CommandError, CommandResult, run_command
from ...machine.textlines import first_line
from .settings import TextSettings  # noqa: F401 (moved; re-exported)

if TYPE_CHECKING:
    from . import textparse

P = f"{NAMESPACE}_host"
TOOLS = ("sar", "iostat", "vmstat")  # also the order in which a figure printed by two tools is taken


def _g(name: str, help_: str, labels: tuple[str, ...], note: str = "") -> MetricSpec:
    return MetricSpec(f"{P}_{name}", "gauge", help_, labels, note)


T = ("target",)
TD = ("target", "device")
CPU_MODE_RATIO = _g("cpu_mode_ratio",
                    "Share (0-1) of all CPU time in the mode over the tool's last sample interval (text back-end: "
                    "sar -u %usr/%sys/%wio/%idle, vmstat us/sy/id/wa, iostat's CPU line).", ("target", "mode"),
                    "vmstat id / 100; recorded as instance:middleware_host_cpu_idle:ratio5m")
PAGE_SCANS_PER_SECOND = _g("page_scans_per_second",
                           "Pages scanned per second over the tool's last sample interval (text back-end: vmstat sr, "
                           "sar -g pgscan/s, sysstat sar -B pgscank/s + pgscand/s).", T,
                           "vmstat sr; recorded as instance:middleware_host_page_scans:rate5m")
DISK_SERVICE_TIME = _g("disk_service_time_seconds",
                       "Average time the device took per transfer, without queueing (text back-end: sar -d avserv, "
                       "iostat -xn asvc_t, AIX iostat -D / -Dl avgserv, sysstat svctm).", TD,
                       "sar -d avserv / 1000; recorded as instance_device:middleware_host_disk_service_time:seconds5m")
DISK_AWAIT = _g("disk_await_seconds",
                "Average time per transfer including the queue (text back-end: sysstat await, Solaris svc_t or "
                "wsvc_t + asvc_t, sar -d avwait + avserv).", TD,
                "iostat await / 1000; recorded as instance_device:middleware_host_disk_await:seconds5m")
DISK_UTIL = _g("disk_util_ratio", "Share (0-1) of the interval the device was busy (text back-end: sar -d %busy, "
                                  "iostat %util / %b / %tm_act).", TD,
               "iostat %util / 100; recorded as instance_device:middleware_host_disk_util:ratio5m")
DISK_TRANSFERS = _g("disk_transfers_per_second", "Reads and writes per second (text back-end: sar -d r+w/s or tps, "
                                                 "iostat r/s + w/s or tps).", TD, "iostat r/s + w/s")
DISK_QUEUE = _g("disk_queue_length", "Average requests queued or in service (text back-end: sar -d avque, iostat "
                                     "aqu-sz, Solaris wait + actv, AIX avgwqsz + avgsqsz).", TD,
                "iostat aqu-sz; recorded as instance_device:middleware_host_disk_queue_size:avg5m")
PLATFORM = _g("text_platform", "1 for the platform and release the text back-end recognised in the output.",
              ("target", "platform", "release"))
def _textparse():
    """The parsers, imported with the text back-end's first run: the collector declares this module's metrics
    (SPECS) whatever its back-end, and a host read from /proc never needs the parsers (docs/footprint.md)."""
    from . import textparse

    return textparse


SOURCES = SourceMetrics.declare(f"{P}_text", "1 if the command is configured (sources sar, vmstat, iostat).")
SPECS = [CPU_MODE_RATIO, PAGE_SCANS_PER_SECOND, DISK_SERVICE_TIME, DISK_AWAIT, DISK_UTIL, DISK_TRANSFERS,
         DISK_QUEUE, PLATFORM, *SOURCES.specs()]
DISK_FIELDS = (("service_time", DISK_SERVICE_TIME), ("await", DISK_AWAIT), ("util", DISK_UTIL),
               ("iops", DISK_TRANSFERS), ("queue", DISK_QUEUE))

_ENV = {"LC_ALL": "C", "LANG": "C", "S_TIME_FORMAT": "ISO"}  # one spelling of numbers and times (sysstat: 24 h)


def command_environment() -> dict[str, str]:
    """The exporter's environment with the C locale (decimal points, 24-hour times); ssh passes none of it on."""
    return {**os.environ, **_ENV}


class TextHost:
    """One run of the host collector through sar, vmstat and iostat."""

    def __init__(self, settings: TextSettings, disk_exclude: re.Pattern[str] | None) -> None:
        self.settings = settings
        self._disk_exclude = disk_exclude

    @property
    def target(self) -> str:
        """The host's name on the status page and in middleware_target_up (core/targets.py)."""
        return local_target(self.settings.target)

    def _argv(self, tool: str) -> list[str]:
        command = getattr(self.settings, tool)
        return prefixed(self.settings.command_prefix, command) if command else []

    def collect(self, batch: MetricBatch) -> None:
        platform = None if self.settings.platform == "auto" else self.settings.platform
        results: dict[str, CommandResult | Exception] = {}

        def run(tool: str, argv: list[str]) -> None:
            try:
                results[tool] = run_command(argv, self.settings.command_timeout, env=command_environment(),
                                            check=True)
            except Exception as exc:  # noqa: BLE001 - reported as this source's error
                results[tool] = exc

        threads = []
        for tool in TOOLS:
            argv = self._argv(tool)
            if argv:
                thread = threading.Thread(target=run, args=(tool, argv), name=f"host-text-{tool}", daemon=True)
                thread.start()
                threads.append(thread)
        for thread in threads:
            thread.join()  # run_command returns within command_timeout (plus the kill)
        readings = []
        for tool in TOOLS:
            present = bool(self._argv(tool))
            SOURCES.present.add(batch, 1 if present else 0, source=tool)
            if not present:
                continue
            outcome = results.get(tool)
            reading, error = self._read(tool, outcome, platform)
            if error is not None:
                batch.note_error(tool, error)
            else:
                readings.append(reading)
            batch.report_source(self.target, tool, error is None, error)
            SOURCES.success.add(batch, 0 if error else 1, source=tool)
            duration = outcome.duration if isinstance(outcome, CommandResult) else self.settings.command_timeout
            SOURCES.duration.add(batch, duration, source=tool)
        self._emit(batch, _textparse().merge(readings))

    def _read(self, tool: str, outcome: object, platform: str | None) -> tuple[textparse.Reading, str | None]:
        textparse = _textparse()
        empty = textparse.Reading()
        if isinstance(outcome, CommandError):
            return empty, str(outcome)
        if not isinstance(outcome, CommandResult):
            return empty, f"{type(outcome).__name__}: {outcome}"
        if outcome.truncated and len(outcome.stdout_bytes) >= DEFAULT_MAX_OUTPUT:  # stdout, not stderr, was cut:
            # the runner kept its start; the last report and the Average block are what it lost
            return empty, (f"{tool}: the output was longer than the {DEFAULT_MAX_OUTPUT // (1 << 20)} MiB kept and "
                           "was cut, so its last report (and sar's Average block) was not read; use a smaller count "
                           "(or fewer devices)")
        reading = textparse.parse(tool, outcome.stdout, platform)
        if reading.problem is not None:
            return empty, reading.problem
        if not reading.sections:
            first = first_line(outcome.stdout, 120)
            return empty, f"{tool}: nothing recognised in the output (first line: {first!r})"
        if tool != "sar" and reading.since_boot_only:
            return empty, (f"{tool}: only the first report, the average since boot, was printed; give an interval "
                           "and a count of 2 or more")
        return reading, None

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
        if reading.platform:
            PLATFORM.add(batch, 1, target=target, platform=reading.platform, release=reading.release or "")
