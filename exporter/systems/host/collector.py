"""Host collector: the figures vmstat, iostat and sar show, as raw counters in base units.

The collector chooses the back-end and leaves the reading to it: ``procfs.py`` reads Linux's /proc and /sys once
per run; where /proc is not Linux's (AIX, Solaris, Windows, macOS, FreeBSD) the same metrics come from psutil
(``psutil.py``, which also holds the table of what each platform gives); ``backend: text`` runs sar, vmstat and
iostat instead, locally or through ssh, and exports their interval figures as gauges of their own (``text.py``).
Rates, percentages and iostat's derived columns are PromQL over the counters (the README maps each column), so
nothing here depends on the time between two runs.  The metrics are declared in ``metrics.py``.
"""

from __future__ import annotations

import os
import re
import sys
import time

from ...core.collector import Collector, Context
from ...core.metrics import ConfiguredLabels, MetricBatch, MetricSpec
from ...machine.procfs import choose_backend
from . import DESCRIPTION, NAME
from .metrics import SPECS, TEXT_SPECS
from .procfs import ProcfsHost
from .settings import HostSettings


class HostCollector(Collector):
    name = NAME
    description = DESCRIPTION
    Settings = HostSettings
    clock = staticmethod(time.monotonic)  # when the kernel parameters were read (tests set their own)

    def __init__(self, settings: HostSettings, context: Context) -> None:
        super().__init__(settings, context)
        self._disk_exclude = re.compile(settings.disk_exclude) if settings.disk_exclude else None
        self._net_exclude = re.compile(settings.netdev_exclude) if settings.netdev_exclude else None
        self._psutil = None  # the psutil back-end, once chosen
        self._text = None
        if settings.backend == "text":
            from .text import TextHost  # the commands' back-end, imported only where it is chosen

            self._text = TextHost(settings.text, settings.timeout, self._disk_exclude)
        self._procfs = ProcfsHost(context.procfs, context.sysfs, self._disk_exclude, self._net_exclude,
                                  lambda: self.clock())

    @property
    def backend(self) -> str:
        """``procfs``, ``psutil`` or ``text``: the back-end this collector reads with."""
        return choose_backend(self.settings.backend, self.context.procfs)

    def specs(self) -> list[MetricSpec]:
        return SPECS + TEXT_SPECS

    def targets(self) -> list[str]:
        return [self._text.target] if self._text is not None else []

    def const_labels(self) -> dict[str, str]:
        """The text back-end's ``target`` on the series that /proc also gives (load1, ...) and on its sources, as
        the filesystem collector's text back-end does; the text back-end's own gauges declare it."""
        target = self.settings.text.target if self._text is not None else ""
        return {"target": target} if target else {}

    def static_labels(self) -> list[ConfiguredLabels]:
        """The text back-end's host: its labels on every series (the other back-ends read this host: the
        exporter's labels are its)."""
        if self._text is None:
            return []
        return [ConfiguredLabels(self._text.target, "collectors.host.text.labels", self.settings.text.labels)]

    def collect(self, batch: MetricBatch) -> None:
        if self._text is not None:
            self._text.collect(batch)
            return
        if self._psutil is None and self.backend == "psutil":
            if sys.platform.startswith("linux") and os.path.realpath(self.context.procfs) != "/proc":
                raise ValueError(f"the psutil back-end reads /proc, not paths.procfs={self.context.procfs}; "
                                 "use backend: procfs")
            from .psutil import PsutilHost  # psutil is imported only where it is the back-end

            self._psutil = PsutilHost(self._disk_exclude, self._net_exclude)
        if self._psutil is not None:
            self._psutil.collect(batch)
            return
        self._procfs.collect(batch)
