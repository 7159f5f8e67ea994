"""The collectors this exporter ships and the typed configuration that lists them.

This is the one module that knows every source system; ``exporter.cli`` and the reference generator import it,
nothing in ``exporter.core`` does.  Each system is declared once, in :data:`SYSTEMS`: adding one means a package
``exporter/systems/<name>/`` (its ``__init__.py`` holding ``NAME`` and ``DESCRIPTION``, ``settings.py``,
``metrics.py``, ``collector.py``; CONTRIBUTING.md walks it) and one line there.  Its section of the configuration
(``collectors.<name>``, a field of :class:`CollectorsSettings`), its place in the exposition and its command-line
flag follow from that line.

Registration is lazy (issue 30, docs/footprint.md): a collector's module (its metric tables, parsers and clients)
is imported by :meth:`Registered.load` only when the collector is enabled, and the settings class of a collector
that is off by default only when the configuration gives its section (:class:`Dormant` otherwise).
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from typing import Any, Mapping

from pydantic import (
    Field,
    SerializationInfo,
    ValidationError,
    ValidationInfo,
    create_model,
    field_serializer,
    field_validator,
)

from .core.collector import Collector, Context
from .core.config import (
    InventorySettings,
    LogSettings,
    PathSettings,
    StaticLabelMap,
    WebSettings,
    labels_field,
    load_config,
)
from .core.probeconfig import ModuleSettings, check_module_name, substitute
from .core.settings import CollectorSettings, StrictModel

ON, OFF = True, False

# Every system, once, in exposition order: its name (the package exporter.systems.<name>), its settings class and
# its collector class ("module:Class" in that package), and whether it is on by default.  The settings class of
# one that is off is imported only when the configuration gives its section (Dormant below).
SYSTEMS: tuple[tuple[str, str, str, bool], ...] = (
    ("host", "settings:HostSettings", "collector:HostCollector", ON),
    ("filesystem", "settings:FilesystemSettings", "collector:FilesystemCollector", ON),
    ("mountstats", "settings:MountstatsSettings", "collector:MountstatsCollector", ON),
    ("process", "settings:ProcessSettings", "collector:ProcessCollector", ON),
    ("hpom", "settings:HpomSettings", "collector:HpomCollector", OFF),
    ("oracle", "settings:OracleCollectorSettings", "collector:OracleCollector", OFF),
    ("ibmmq", "settings:IbmmqSettings", "collector:IbmmqCollector", OFF),
    ("vhi", "settings:VhiSettings", "collector:VhiCollector", OFF),
    ("domino", "settings:DominoSettings", "collector:DominoCollector", OFF),
    ("certificates", "settings:CertificatesSettings", "collector:CertificatesCollector", OFF),
)


def _import(path: str) -> Any:
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(module), attr)


@dataclass(frozen=True)
class Registered:
    """A collector known by name and description; its settings class and its collector class are imported on
    first use (``Settings``, :meth:`load`)."""

    name: str
    description: str
    settings_path: str  # "module:Class"
    path: str  # "module:Class"
    dormant: bool  # off by default: its settings are a Dormant until the configuration gives its section

    @property
    def Settings(self) -> type[CollectorSettings]:  # noqa: N802 - the name the collector classes use
        return _import(self.settings_path)

    def load(self) -> type[Collector]:
        return _import(self.path)  # tests/project/test_footprint.py: matches this entry

    @classmethod
    def declare(cls, name: str, settings: str, collector: str, on: bool) -> "Registered":
        """One line of :data:`SYSTEMS`; the description is the package's (its ``__init__`` imports nothing)."""
        package = f"{__package__}.systems.{name}"
        description = importlib.import_module(package).DESCRIPTION
        return cls(name, description, f"{package}.{settings}", f"{package}.{collector}", not on)


COLLECTORS: tuple[Registered, ...] = tuple(Registered.declare(*system) for system in SYSTEMS)
# Off by default: a section the configuration does not give is a Dormant stand-in, and its settings class (with
# the pydantic validators it builds, about 2 MB resident for the six) is never imported (docs/footprint.md).
DORMANT_WHEN_ABSENT = tuple(entry for entry in COLLECTORS if entry.dormant)
_BY_NAME = {entry.name: entry for entry in COLLECTORS}


class Dormant:
    """The settings of a collector that is off and that the configuration does not mention.  ``enabled`` is False
    without importing anything; reading any other setting (the advisor, check-config's listing) builds the
    collector's default settings then."""

    enabled = False

    def __init__(self, entry: Registered) -> None:
        self._entry = entry
        self._settings: CollectorSettings | None = None

    @property
    def settings(self) -> CollectorSettings:
        if self._settings is None:
            self._settings = self._entry.Settings()
        return self._settings

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # never through the settings (copy, pickle, and the attributes above)
            raise AttributeError(name)
        return getattr(self.settings, name)

    def __repr__(self) -> str:
        return f"Dormant({self._entry.name})"


def _field(entry: Registered) -> tuple[Any, Any]:
    """A section of :class:`CollectorsSettings`: the settings class (imported now: the collector is on by default),
    or a :class:`Dormant` until the configuration gives it."""
    if entry.dormant:
        return Any, Field(default_factory=lambda: Dormant(entry), description=entry.description)
    return entry.Settings, Field(default_factory=entry.Settings, description=entry.description)


class _Sections(StrictModel):
    """The validation of the sections of the collectors that are off by default: with their settings class when
    given (``_configured``), a :class:`Dormant` otherwise."""

    @field_validator(*(entry.name for entry in DORMANT_WHEN_ABSENT), mode="before", check_fields=False)
    @classmethod
    def _configured(cls, value: Any, info: ValidationInfo) -> Any:
        if isinstance(value, Dormant):
            return value
        return _BY_NAME[info.field_name].Settings.model_validate(value)  # errors keep their place (oracle.x.y)

    @field_serializer(*(entry.name for entry in DORMANT_WHEN_ABSENT), check_fields=False)
    def _dump(self, value: Any, info: SerializationInfo) -> Any:
        settings = value.settings if isinstance(value, Dormant) else value
        return settings.model_dump(mode=info.mode)

    def collectors(self) -> list[tuple[Registered, CollectorSettings | Dormant]]:
        """Every registered collector with its settings (a :class:`Dormant` for one that is off and not
        configured), in exposition order (``Registered.load()`` imports the collector's class)."""
        return [(entry, getattr(self, entry.name)) for entry in COLLECTORS]


CollectorsSettings = create_model(
    "CollectorsSettings", __base__=_Sections, __module__=__name__,
    __doc__="One section per collector (``collectors.<name>`` in the YAML file), one per line of SYSTEMS.",
    **{entry.name: _field(entry) for entry in COLLECTORS})


class Config(StrictModel):
    """The whole configuration file."""

    web: WebSettings = Field(default_factory=WebSettings)
    paths: PathSettings = Field(default_factory=PathSettings)
    log: LogSettings = Field(default_factory=LogSettings)
    inventory: InventorySettings = Field(default_factory=InventorySettings)
    labels: StaticLabelMap = labels_field(
        "Labels added to every series this exporter exposes (e.g. env: prod, site: fra1), its own included; a "
        "target's labels of the same name override them (docs/configuration.md, Static labels).")
    collectors: CollectorsSettings = Field(default_factory=CollectorsSettings)
    modules: dict[str, ModuleSettings] = Field(
        default_factory=dict,
        description="Modules of GET /probe (docs/estate.md): what to read of a target and how; none by default.")

    @field_validator("modules")
    @classmethod
    def _modules_build(cls, modules: dict[str, ModuleSettings]) -> dict[str, ModuleSettings]:
        """Every module builds for a sample target, so that a module that cannot read any target fails at start
        with its key, not at its first probe."""
        for name, module in modules.items():
            problem = check_module_name(name)
            if problem:
                raise ValueError(f"{name[:60]!r}: {problem}")
            for system in module.collectors:
                if system not in PROBED_SYSTEMS:
                    raise ValueError(f"modules.{name}.collectors.{system}: not a collector that reads a target "
                                     f"(one of {', '.join(PROBED_SYSTEMS)})")
            module_settings(name, module, SAMPLE_TARGET)
        return modules


# The systems a module may read: those whose collector reads another machine.  host and filesystem only through
# their text back-end (procfs and psutil read the exporter's own host).
PROBED_SYSTEMS = ("host", "filesystem", "oracle", "ibmmq", "hpom", "domino")
_TEXT_BACKEND = ("host", "filesystem")
SAMPLE_TARGET = "sample-target.invalid:1"


def _collector_timeout(module: ModuleSettings) -> float:
    """A module's collectors' default timeout: a second under the probe's deadline (half of it, for short ones),
    so that a collection usually ends before its probe has to answer."""
    return max(module.timeout - 1.0, module.timeout / 2)


def _seconds(value: Any) -> float | None:
    """A configured duration (a number or ``15s``, read by the settings' own parse_duration) in seconds, or None."""
    from .core.settings import parse_duration

    try:
        seconds = parse_duration(value)
    except ValueError:
        return None
    return float(seconds) if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) else None


def module_settings(name: str, module: ModuleSettings, target: str,
                    ssh_prefix: Any = None) -> list[tuple[Registered, CollectorSettings]]:
    """The settings of each collector of module ``name`` for ``target`` (checked by the caller): its section with
    the target put in, the text back-end's ssh prefix (``ssh_prefix(target)``; by default one without connection
    reuse) and the probe's timeouts.  ValueError naming the key when a section does not validate."""
    from .machine.sshcontrol import split_target

    host, port = split_target(target)
    result = []
    for system, section in module.collectors.items():
        entry = _BY_NAME[system]
        at = f"modules.{name}.collectors.{system}"
        raw = dict(substitute(section, target, host, port))
        raw.setdefault("timeout", _collector_timeout(module))
        timeout = _seconds(raw["timeout"])  # None: not a duration, which the settings' validation reports
        raw.setdefault("interval", max(timeout or 0.0, module.timeout, 15.0))
        raw["enabled"] = True
        if system == "filesystem" and "statfs_timeout" not in raw and timeout is not None:
            # its stuck-mount prober's limit must leave half the run: at most half a short probe's timeout
            raw["statfs_timeout"] = min(entry.Settings.model_fields["statfs_timeout"].default, timeout / 2)
        if system in _TEXT_BACKEND:
            raw.setdefault("backend", "text")
            if raw["backend"] != "text":
                raise ValueError(f"{at}.backend: a module reads a host through the text back-end only")
            text = dict(raw.get("text") or {})
            if module.ssh is not None:
                if text.get("command_prefix"):
                    raise ValueError(f"{at}.text.command_prefix: give either modules.{name}.ssh or a command "
                                     f"prefix, not both")
                text["command_prefix"] = (ssh_prefix or ssh_prefix_of(module))(target)
            text.setdefault("target", target)
            if "command_timeout" not in text and timeout is not None:
                text["command_timeout"] = max(timeout * 0.8, 0.5)
            raw["text"] = text
        try:
            result.append((entry, entry.Settings.model_validate(raw)))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise ValueError(f"{at}{'.' + where if where else ''}: {first['msg']}") from None
    return result


def ssh_prefix_of(module: ModuleSettings, control: Any = None) -> Any:
    """``prefix(target)``: the ssh command prefix of ``module``'s targets (None without ``ssh``), with connection
    masters in ``control`` (a machine.sshcontrol.ControlDirectory; None: a connection per command)."""
    from .machine.sshcontrol import ssh_prefix

    ssh = module.ssh
    if ssh is None:
        return None
    return lambda target: ssh_prefix(target, user=ssh.user, port=ssh.port, identity_file=ssh.identity_file,
                                     config_file=ssh.config_file, options=tuple(ssh.options),
                                     connect_timeout=ssh.connect_timeout, control=control,
                                     control_persist=ssh.control_persist)


def module_builder(config: "Config", context: Context, control: Any = None) -> Any:
    """``build(module, target)``: the collectors of a checked target (core/probe.py, Prober), their connection
    masters' sockets in ``control`` (a machine.sshcontrol.ControlDirectory; None: no connection reuse)."""
    def build(name: str, target: str) -> list[Collector]:
        module = config.modules[name]
        return [entry.load()(settings, context)
                for entry, settings in module_settings(name, module, target, ssh_prefix_of(module, control))]

    return build


def load(path: str | os.PathLike[str] | None = None, environ: Mapping[str, str] | None = None,
         overrides: dict[tuple[str, ...], Any] | None = None) -> Config:
    """Read and validate the configuration (file, then environment, then flags); see ``core.config``."""
    return load_config(Config, path, environ, overrides)
