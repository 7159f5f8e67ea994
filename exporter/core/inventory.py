"""The inventory: the targets of an estate in a file of Prometheus' file_sd shape, re-read when it changes, and
split into shards by a stable hash (issue 37, docs/estate.md).

The file is a list of groups, each ``{targets: [...], labels: {...}}``, YAML or JSON (``.json`` is read as JSON,
anything else as YAML), exactly what a ``file_sd_configs`` file holds, so the same file serves both.  A group's
module is its label ``__param_module``: file_sd's own spelling, which Prometheus turns into the ``module`` URL
parameter of every scrape of the group's targets without any relabelling.

Every target string is checked before it is kept: targets later reach ssh command lines and DSNs, so only a host
name, an IPv4 or IPv6 literal, or either with ``:port`` (``[v6]:port``) is accepted; whitespace, control
characters, shell metacharacters, quotes and a leading ``-`` (``-oProxyCommand=...``) are refused with an error
naming the file, the group and the value.

:class:`InventoryFile` keeps the last good inventory: a broken new version is reported (``error``, ``status()``,
a log line) and the previous one stays served, as Prometheus itself keeps its last target list when an SD source
fails.  The file is read through :func:`core.configfiles.read_file` (regular files only, under a deadline) by a
small watcher thread that looks at the file's inode, size and modification time every ``interval`` seconds, so no
request ever waits on a hung mount.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import logging
import os
import re
import threading
from dataclasses import dataclass, field
from typing import Any

from .configfiles import NESTED_TOO_DEEPLY, UnreadableFile, check_shape, read_file
from .metrics import LABEL_NAME_RE

MODULE_LABEL = "__param_module"
MAX_TARGET_LENGTH = 253  # a DNS name's limit
MAX_SHARDS = 1024
# a host name: dot-separated labels of letters, digits, '_' and '-', no label starting or ending with '-'
_HOST_RE = re.compile(r"(?:[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)"
                      r"(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\.?")
_MODULE_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,62}")
log = logging.getLogger("middleware_exporter")


class InventoryError(ValueError):
    """A broken inventory file; the message names the file, the group (by index) and the bad value."""


def _is_ip(text: str, version: int) -> bool:
    try:
        return ipaddress.ip_address(text).version == version
    except ValueError:
        return False


def target_problem(target: Any) -> str | None:
    """Why ``target`` is not an acceptable target string, or None when it is one."""
    if not isinstance(target, str):
        return f"a target must be a string, not {type(target).__name__}"
    if not target:
        return "a target must not be empty"
    if len(target) > MAX_TARGET_LENGTH:
        return f"longer than {MAX_TARGET_LENGTH} characters"
    if target.startswith("-"):
        return "starts with '-' (it would be read as a command-line option)"
    host, port = target, None
    if target.startswith("["):  # [v6]:port or [v6]
        close = target.find("]")
        rest = target[close + 1:] if close > 0 else ""
        if close < 0 or (rest and not rest.startswith(":")):
            return "not a host name, an IP address or host:port"
        host, port = target[1:close], rest[1:] if rest else None
        if not _is_ip(host, 6):
            return "not an IPv6 address between the brackets"
    elif target.count(":") > 1:  # a bare IPv6 literal
        if not _is_ip(target, 6):
            return "not a host name, an IP address or host:port"
        return None
    elif ":" in target:
        host, port = target.split(":")
    if port is not None and not (port.isascii() and port.isdigit() and 0 < int(port) <= 65535):
        return "the port must be a number from 1 to 65535"
    if target.startswith("["):
        return None
    if not host.isascii() or not (_HOST_RE.fullmatch(host) or _is_ip(host, 4)):
        return "not a host name, an IP address or host:port (letters, digits, '.', '-' and '_' only)"
    return None


def _label_problem(name: Any, value: Any) -> str | None:
    if not isinstance(name, str) or not LABEL_NAME_RE.fullmatch(name):
        return "label names are [a-zA-Z_][a-zA-Z0-9_]*"
    if not isinstance(value, str):
        return f"a label value must be a string, not {type(value).__name__} (put it in quotes)"
    if "\x00" in value:
        return "a label value must not contain a NUL character"
    if name == MODULE_LABEL and not _MODULE_RE.fullmatch(value):
        return "a module name is letters, digits, '.', '-' and '_', not starting with '-' or '.'"
    return None


@dataclass(frozen=True)
class Group:
    """One group of the file: its targets and their labels (the module among them, as ``__param_module``)."""

    targets: tuple[str, ...]
    labels: dict[str, str] = field(default_factory=dict)

    @property
    def module(self) -> str | None:
        return self.labels.get(MODULE_LABEL)

    def as_sd(self) -> dict[str, Any]:
        return {"targets": list(self.targets), "labels": dict(self.labels)}


@dataclass(frozen=True)
class Inventory:
    groups: tuple[Group, ...] = ()

    def targets(self) -> list[str]:
        return [target for group in self.groups for target in group.targets]

    def as_sd(self) -> list[dict[str, Any]]:
        """The http_sd (and file_sd) JSON of the inventory: ``[]`` when empty."""
        return [group.as_sd() for group in self.groups]


def parse(data: Any, where: str) -> Inventory:
    """The inventory from the parsed file ``data``; :class:`InventoryError` naming ``where`` (the file), the group
    index and the bad value (targets and label names are checked strings; no secret lives in this file)."""
    if data is None:
        return Inventory()
    if not isinstance(data, list):
        raise InventoryError(f"inventory file {where}: the top level must be a list of groups ({{targets: [...], "
                             f"labels: {{...}}}}), not {type(data).__name__}")
    groups = []
    for index, entry in enumerate(data):
        at = f"inventory file {where}: group {index}"
        if not isinstance(entry, dict):
            raise InventoryError(f"{at}: must be a mapping with targets and labels, not {type(entry).__name__}")
        unknown = sorted(str(key) for key in entry if key not in ("targets", "labels"))
        if unknown:
            raise InventoryError(f"{at}: unknown key {unknown[0]!r} (a group has targets and labels; the module is "
                                 f"the label {MODULE_LABEL})")
        targets = entry.get("targets")
        if not isinstance(targets, list):
            raise InventoryError(f"{at}: targets must be a list of strings")
        for target in targets:
            problem = target_problem(target)
            if problem:
                raise InventoryError(f"{at}: target {json.dumps(target)[:300]} refused: {problem}")
        labels = entry.get("labels") or {}
        if not isinstance(labels, dict):
            raise InventoryError(f"{at}: labels must be a mapping of label names to strings")
        for name, value in labels.items():
            problem = _label_problem(name, value)
            if problem:
                raise InventoryError(f"{at}: label {json.dumps(name)[:100]} refused: {problem}")
        groups.append(Group(tuple(targets), dict(labels)))
    return Inventory(tuple(groups))


def load(path: str) -> Inventory:
    """Read and check the inventory file at ``path`` (through ``read_file``: a FIFO or a hung mount is refused)."""
    try:
        raw = read_file(path, "inventory file")
    except UnreadableFile as exc:
        raise InventoryError(str(exc)) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InventoryError(f"inventory file {path} is not UTF-8") from None
    where = f"inventory file {path}"
    if not path.endswith(".json"):
        from .config import parse_yaml  # the configuration's strict loader: a repeated key fails

        try:
            data = parse_yaml(text, where)
        except ValueError as exc:
            raise InventoryError(str(exc)) from None
        return parse(data, path)
    try:
        data = json.loads(text)
    except RecursionError:
        raise InventoryError(f"{where}: {NESTED_TOO_DEEPLY}") from None
    except ValueError as exc:  # json.JSONDecodeError
        raise InventoryError(f"{where} is not valid: {exc}") from None
    try:
        check_shape(data, where)
    except ValueError as exc:
        raise InventoryError(str(exc)) from None
    return parse(data, path)


def shard(target: str, shards: int) -> int:
    """The shard (0 .. shards-1) of ``target``: the first 8 bytes of the SHA-256 of its UTF-8 text, modulo
    ``shards``.  The same in every process and on every machine (Python's ``hash()`` is salted per process), so N
    replicas agree on who reads what.  A target's every group lands on the same shard."""
    return int.from_bytes(hashlib.sha256(target.encode("utf-8")).digest()[:8], "big") % shards


def select(inventory: Inventory, index: int, shards: int) -> Inventory:
    """The groups of ``inventory`` restricted to the targets of shard ``index`` of ``shards``; empty groups left
    out."""
    if not 0 <= index < shards <= MAX_SHARDS:
        raise ValueError(f"need 0 <= shard < shards <= {MAX_SHARDS}")
    groups = []
    for group in inventory.groups:
        targets = tuple(t for t in group.targets if shard(t, shards) == index)
        if targets:
            groups.append(Group(targets, group.labels))
    return Inventory(tuple(groups))


def _signature(path: str) -> tuple[int, int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


class InventoryFile:
    """The inventory file at ``path``, loaded at once (a broken file at start raises :class:`InventoryError`)
    and re-read by :meth:`start`'s watcher thread when its inode, size or modification time changes.  A broken
    new version leaves the last good inventory in place; ``error`` says why until a good version is read."""

    def __init__(self, path: str, interval: float = 5.0) -> None:
        self.path = path
        self.interval = interval
        self._signature = _signature(path)
        self.inventory = load(path)
        self.error: str | None = None
        self.reloads = 0
        self.failures = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.on_change: Any = None  # called after a re-read, good or not (the exporter's own series changed)

    def check(self) -> bool:
        """Re-read the file if it changed since the last look; True when a new inventory was taken."""
        signature = _signature(self.path)
        if signature == self._signature and (signature is not None or self.error is not None):
            return False
        self._signature = signature
        try:
            inventory = load(self.path)
        except InventoryError as exc:
            if self.error != str(exc):
                log.warning("msg=%s error=%s", json.dumps("inventory file not reloaded; keeping the last good one"),
                            json.dumps(str(exc)))
            self.error = str(exc)
            self.failures += 1
            return False
        self.inventory, self.error = inventory, None
        self.reloads += 1
        log.info("msg=%s file=%s targets=%d", json.dumps("inventory reloaded"), json.dumps(self.path),
                 len(inventory.targets()))
        return True

    def _watch(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                before = (self.reloads, self.failures)
                self.check()
                if self.on_change is not None and (self.reloads, self.failures) != before:
                    self.on_change()
            except Exception:  # never let the watcher die: the last good inventory stays served
                log.exception("msg=%s", json.dumps("inventory watcher"))

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._watch, name="inventory-watch", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def status(self) -> dict[str, Any]:
        """What the status API shows: the file, what is served, and the error of a broken newer version."""
        return {"file": self.path, "groups": len(self.inventory.groups), "targets": len(self.inventory.targets()),
                "reloads": self.reloads, "failed_reloads": self.failures, "error": self.error}

