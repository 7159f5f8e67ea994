"""pytest's hooks and fixtures for the whole suite; the helpers the tests import live in tests/support.py."""

from __future__ import annotations

import os
import re

import pytest

from .support import exporter_starter, spawner


def pytest_addoption(parser):
    parser.addoption("--network", action="store_true",
                     help="also run the tests marked `network` (package index, GitHub); docs/testing.md")


def pytest_collection_modifyitems(config, items):
    """A test that starts the exporter as a real process (the `start_exporter` fixture) is an integration test:
    the quick loop, ``-m "not integration"``, leaves it out.  Tests marked `network` are opt-in: left out unless
    --network, MWE_NETWORK=1 or a -m naming `network` selects them, so that the default suite gives the same
    answer on a machine without the network."""
    for item in items:
        if "start_exporter" in getattr(item, "fixturenames", ()) and item.get_closest_marker("integration") is None:
            item.add_marker(pytest.mark.integration)
    if config.getoption("--network") or os.environ.get("MWE_NETWORK") == "1" or "network" in config.option.markexpr:
        return
    kept = [item for item in items if item.get_closest_marker("network") is None]
    if len(kept) != len(items):
        config.hook.pytest_deselected(items=[item for item in items if item.get_closest_marker("network")])
        items[:] = kept


def _skip_kind(reason: str) -> str:
    """A skip's reason, shortened to its kind for the closing count (``set MWE_TEST_...`` is an opt-in real-system
    test; numbers and paths are left out so that one cause counts once)."""
    reason = reason.removeprefix("Skipped: ")
    if "MWE_TEST_" in reason or reason.startswith("set MWE_"):
        return "opt-in test for a real system (set MWE_TEST_*)"
    reason = re.sub(r"\s*\([^()]*\)", "", reason).split(";")[0]  # the details in parentheses, then the cause
    return re.sub(r"(?<!\S)/\S+|\d+", "#", reason)[:80]


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """One closing line counting the skips by reason, so that a run shows at a glance what it did not check."""
    kinds: dict[str, int] = {}
    for report in terminalreporter.stats.get("skipped", []):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        kind = _skip_kind(str(reason))
        kinds[kind] = kinds.get(kind, 0) + 1
    if kinds:
        parts = [f"{count} {kind}" for kind, count in sorted(kinds.items(), key=lambda item: (-item[1], item[0]))]
        terminalreporter.write_line("skips by reason: " + "; ".join(parts))
    else:
        terminalreporter.write_line("skips by reason: none")


@pytest.fixture
def start_exporter(tmp_path):
    """Start ``python -m exporter run`` as a real process on a loopback port; stopped after the test."""
    yield from exporter_starter(tmp_path)


@pytest.fixture
def spawn(tmp_path):
    """Start a harmless program under a chosen process name (a copy of sleep, or a symlink to Python)."""
    yield from spawner(tmp_path)
