"""The HTTP server: uvicorn's ``Server``, and the one module that leans on more of it than its documented options.

uvicorn offers no hook for three things the exporter needs, so the server class here overrides them:

- ``main_loop`` (which calls ``on_tick``): uvicorn wakes up every 0.1 s to check for shutdown and to refresh its
  Date header, about 3 ms of CPU per second on an idle exporter, more than collecting host metrics (one wake-up a
  second still cost 0.35 ms/s).  This one sleeps until SIGTERM/SIGINT wakes it; the Date header is written per
  response by ``WebGate`` (``date=True``; uvicorn's own is off).
- ``handle_exit`` and ``_captured_signals``: uvicorn re-raises a signal once it has stopped; SIGTERM's default
  action would end the process before the commands are killed, SIGINT's would print a KeyboardInterrupt
  traceback.  The exporter stops on its own terms instead (``cli._Shutdown``), starting with the commands at once.
- ``startup``: the connection guard's log handling is installed on the server's event loop (web/limits.py).

These names are uvicorn's internals: tests/web/test_serving.py checks that they still exist with the signatures
relied on here and that the installed uvicorn is within :data:`UVICORN_TESTED`, so that an upgrade that changes
them fails that test loudly instead of the exporter quietly (a server that spins, or dies on SIGTERM with
commands still running).  Without ``main_loop``/``on_tick`` the server falls back to uvicorn's own loop
(:func:`quiet_supported`).
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

import uvicorn

from .limits import ConnectionGuard

# The uvicorn releases these overrides are meant for (inclusive; major.minor): from pyproject.toml's floor to the
# newest they were checked against.  A newer release is welcome once tests/web/test_serving.py,
# tests/machine/test_shutdown.py and tests/core/test_collect_on_demand.py pass with it and this bound is raised.
UVICORN_TESTED = ((0, 29), (0, 55))


def quiet_supported() -> bool:
    """Whether uvicorn has the loop this module replaces (else its own loop and Date header are used)."""
    return hasattr(uvicorn.Server, "on_tick") and hasattr(uvicorn.Server, "main_loop")


def server_class(guard: ConnectionGuard, on_exit: Callable[[], None], quiet: bool) -> type[uvicorn.Server]:
    """uvicorn's server class with the guard installed at start-up and, when ``quiet``, the loop that sleeps until
    a signal; ``on_exit`` runs (in the signal handler) on SIGTERM/SIGINT, which uvicorn does not raise again."""

    class GuardedServer(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            guard.install(asyncio.get_running_loop())
            await super().startup(sockets=sockets)

    if not quiet:
        return GuardedServer

    class QuietServer(GuardedServer):
        _wake: asyncio.Event | None = None
        _loop: asyncio.AbstractEventLoop | None = None

        async def main_loop(self) -> None:
            self._loop = asyncio.get_running_loop()
            self._wake = asyncio.Event()
            should_exit = await self.on_tick(0)
            while not should_exit:
                await self._wake.wait()
                self._wake.clear()
                should_exit = await self.on_tick(0)

        def handle_exit(self, sig: int, frame: Any) -> None:
            super().handle_exit(sig, frame)
            getattr(self, "_captured_signals", []).clear()  # not raised again once uvicorn has stopped
            on_exit()
            if self._loop is not None and self._wake is not None:
                self._loop.call_soon_threadsafe(self._wake.set)

    return QuietServer
