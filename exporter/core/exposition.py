"""The rendered exposition: the exporter's own metrics plus every collector's last samples, rendered at most once
per snapshot generation and format (text or OpenMetrics, plain or gzip) and then served from memory.

Each collector's part is rendered once per result of that collector, so a queue manager with 10,000 queues is
not rendered again because the host collector produced new figures.
"""

from __future__ import annotations

import gzip
import threading
from typing import TYPE_CHECKING, Iterable

from prometheus_client import CollectorRegistry
from prometheus_client import generate_latest as generate_text
from prometheus_client.core import Metric
from prometheus_client.openmetrics.exposition import generate_latest as generate_openmetrics

if TYPE_CHECKING:
    from .scheduler import Scheduler

_EOF = b"# EOF\n"


class _Families:
    def __init__(self, families: Iterable[Metric]) -> None:
        self.families = families

    def collect(self) -> Iterable[Metric]:
        return self.families


def render_families(families: Iterable[Metric], openmetrics: bool, eof: bool = True) -> bytes:
    """Families in the text or OpenMetrics format (``eof=False`` leaves out OpenMetrics' closing line)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Families(families))
    body = (generate_openmetrics if openmetrics else generate_text)(registry)
    return body[: -len(_EOF)] if openmetrics and not eof and body.endswith(_EOF) else body


class Exposition:
    """Render cache over a scheduler's snapshot."""

    def __init__(self, scheduler: "Scheduler") -> None:
        self._scheduler = scheduler
        self._cache: dict[tuple[bool, bool], tuple[int, bytes]] = {}
        self._part_cache: dict[tuple[str, bool], tuple[int, bytes]] = {}
        self._render_lock = threading.Lock()
        self.last_format: tuple[bool, bool] | None = None  # what the last scrape asked for

    def _render_part(self, name: str, openmetrics: bool) -> bytes:
        key = (name, openmetrics)
        version, families = self._scheduler.families_of(name)
        cached = self._part_cache.get(key)
        if cached is not None and cached[0] == version:
            return cached[1]
        body = render_families(families, openmetrics, eof=False) if families else b""
        self._part_cache[key] = (version, body)
        return body

    def prerender(self) -> None:
        """Render the new snapshot in the format the scrapers use, in the collector's thread, so that a scrape
        right after a collection does not pay for rendering thousands of series."""
        if self.last_format is not None:
            try:
                self.render(*self.last_format, remember=False)
            except Exception:  # noqa: BLE001 - the scrape will render (and report) it
                pass

    def render(self, openmetrics: bool = False, compress: bool = False, remember: bool = True) -> bytes:
        """The exposition for the current snapshot, rendered once per generation and format.

        A scrape never waits for a render in progress when an earlier body of the same format exists: it gets
        that one (at most one collection older), while the collector thread finishes the new one."""
        key = (openmetrics, compress)
        if remember:
            self.last_format = key
        cached = self._cache.get(key)
        generation = self._scheduler.generation
        if cached is not None and cached[0] == generation:
            return cached[1]
        if cached is not None and not self._render_lock.acquire(blocking=False):
            return cached[1]
        if cached is None:
            self._render_lock.acquire()
        try:
            generation = self._scheduler.generation
            cached = self._cache.get(key)
            if cached is not None and cached[0] == generation:
                return cached[1]
            plain_key = (openmetrics, False)
            plain = self._cache.get(plain_key)
            if plain is None or plain[0] != generation:
                parts = [render_families(self._scheduler.self_metrics.collect(), openmetrics, eof=False)]
                parts += [self._render_part(name, openmetrics) for name in self._scheduler.states]
                if openmetrics:
                    parts.append(_EOF)
                body = b"".join(parts)
                self._cache[plain_key] = (generation, body)
            else:
                body = plain[1]
            if compress:
                # level 1 for large bodies: a fraction of the CPU of level 6 for a few percent more bytes
                body = gzip.compress(body, compresslevel=6 if len(body) < 1 << 20 else 1, mtime=0)
                self._cache[key] = (generation, body)
            return body
        finally:
            self._render_lock.release()
