"""statvfs of every mount without ever hanging a run: the stuck-mount prober.

A statvfs of a hard NFS mount whose server is gone, or of a FUSE file system whose daemon does not answer, blocks
in the kernel for as long as that lasts; Python cannot interrupt it.  So:

* All mounts of a run are asked one after another by one *walker*, a ``machine.deadline.BoundedCall`` (one short
  thread per run, not one per mount: a healthy statvfs takes microseconds).  Before each call the walker records
  which mount it is on.
* When the walker has not finished within ``statfs_timeout``, the mount it is on is **stuck**: that call (and its
  thread, blocked in the kernel) is handed over to the mount, and a fresh walker goes on with the mounts after it
  within what the run has left.  Mounts the run had no time for are "not checked" and asked first next run.
* A later run does not ask a stuck mount while its call is still ``busy``; the mount costs exactly the one
  thread that hangs.  When that call returns (server back, FUSE daemon gone), the mount is asked again normally.

Threads: one per run, plus one per mount hanging right now.  No pool (hand-written rather than
``concurrent.futures``: a pool's worker stuck in the kernel would be reused or replaced without bound).
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from typing import Callable, Sequence

from ...machine.deadline import BoundedCall, Overdue


@dataclass(frozen=True)
class Result:
    """The outcome for one mount point: ``stat`` (an ``os.statvfs_result``) or ``error`` (errno text) or
    ``stuck_seconds`` (its call hangs since then) or none of them (not checked: no time left in this run)."""

    stat: os.statvfs_result | None = None
    error: str | None = None
    stuck_seconds: float | None = None

    @property
    def stuck(self) -> bool:
        return self.stuck_seconds is not None


class _Walk:
    """What one walker thread does; the caller reads ``position`` when it gives up on it."""

    def __init__(self, paths: Sequence[str], statfs: Callable[[str], os.statvfs_result]) -> None:
        self.paths = paths
        self.statfs = statfs
        self.position = 0
        self.since = time.monotonic()  # when the statvfs of ``position`` began
        self.results: dict[str, Result] = {}
        self.abandoned = False

    def __call__(self) -> None:
        for index, path in enumerate(self.paths):
            if self.abandoned:  # the caller gave up on us while this statvfs hung: ask nothing more
                return
            self.since = time.monotonic()
            self.position = index
            try:
                result = Result(stat=self.statfs(path))
            except OSError as exc:
                result = Result(error=exc.strerror or str(exc))
            if not self.abandoned:
                self.results[path] = result


class StatfsProber:
    """Keeps the stuck mounts between runs; ``probe`` is called by one collector run at a time."""

    def __init__(self, name: str = "filesystem", statfs: Callable[[str], os.statvfs_result] = os.statvfs) -> None:
        self.name = name
        self._statfs = statfs
        self._walker = BoundedCall(f"{name}-statfs")
        self._stuck: dict[str, tuple[BoundedCall, float]] = {}  # path -> (the hanging call, when it started)
        self._unchecked: set[str] = set()
        self._lock = threading.Lock()
        self.walks = 0  # walker threads started, for the tests (never one per mount)

    def stuck_paths(self) -> list[str]:
        return sorted(self._stuck)

    def probe(self, paths: Sequence[str], statfs_timeout: float, budget: float) -> dict[str, Result]:
        """One result per path (stuck, error or figures; absent when not checked).  Waits at most ``budget``
        seconds in all, at most ``statfs_timeout`` for one mount."""
        with self._lock:
            return self._probe(paths, statfs_timeout, budget)

    def _probe(self, paths: Sequence[str], statfs_timeout: float, budget: float) -> dict[str, Result]:
        now = time.monotonic()
        results: dict[str, Result] = {}
        wanted = set(paths)
        for path, (call, since) in list(self._stuck.items()):
            if call.busy:
                if path in wanted:
                    results[path] = Result(stuck_seconds=now - since)
            else:
                del self._stuck[path]  # its call came back: ask it again below
        # Mounts not reached last time first, then the rest in table order.
        unique = list(dict.fromkeys(paths))
        todo = [p for p in unique if p not in results and p in self._unchecked]
        todo += [p for p in unique if p not in results and p not in self._unchecked]
        deadline = now + budget
        while todo:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            walk = _Walk(todo, self._statfs)
            walker = self._walker
            self.walks += 1
            try:
                walker(walk, min(statfs_timeout, left))
                results.update(dict(walk.results))
                todo = []
                break
            except Overdue:
                walk.abandoned = True  # the thread asks nothing more once its current statvfs returns
                results.update(dict(walk.results))
                self._walker = BoundedCall(f"{self.name}-statfs")
                hung = todo[walk.position]
                todo = todo[walk.position + 1:]
                if hung in walk.results:  # it finished that mount just as we gave up: nothing hangs
                    continue
                # The thread hangs in this mount's statvfs: it now belongs to the mount, which is not asked again
                # while it hangs.  Stuck once that one call has had its full statfs_timeout; cut short (by the
                # walk's deadline after slow mounts before it, or by the end of the run) it is only "not checked"
                # now, and stuck next run if it still hangs.
                started = walk.since
                self._stuck[hung] = (walker, started)
                if time.monotonic() - started >= statfs_timeout * 0.99:
                    results[hung] = Result(stuck_seconds=time.monotonic() - started)
        self._unchecked = set(todo)
        return results
