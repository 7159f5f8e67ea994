"""Generate the reference sections of the docs from the code (developer tooling; not shipped in the package).

    python -m tools.docs            # rewrite every generated section
    python -m tools.docs --check    # exit 1 if any is stale (the test suite runs this)

Generated: ``docs/metrics.md`` (every metric), ``docs/configuration.md`` (every key), the metrics and
configuration sections of each ``exporter/systems/<system>/README.md``, the thresholds table of
``alerts/README.md``, and the psutil back-end's platform and tolerance tables in ``docs/platforms.md``.  Each
file holds ``<!-- BEGIN GENERATED <section> (python -m tools.docs) -->`` and ``<!-- END GENERATED <section> -->``
markers; the text between them is replaced, the rest is written by hand.
"""

from __future__ import annotations

import argparse
import sys
import typing
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import yaml
from pydantic import BaseModel

from exporter.core.collector import Collector, Context
from exporter.core.config import InventorySettings, LogSettings, PathSettings, WebSettings
from exporter.core.metrics import MetricSpec
from exporter.core.selfmetrics import SPECS as SELF_SPECS
from exporter.registry import COLLECTORS as REGISTERED
from exporter.registry import Config
from exporter.systems.host import psutil as host_psutil

ROOT = Path(__file__).resolve().parent.parent
METRICS_DOC = ROOT / "docs" / "metrics.md"
CONFIG_DOC = ROOT / "docs" / "configuration.md"
ALERTS_README = ROOT / "alerts" / "README.md"
PLATFORMS_DOC = ROOT / "docs" / "platforms.md"
SYSTEMS = ROOT / "exporter" / "systems"
# every collector class (the registry imports a collector only when it is enabled; the reference needs them all)
COLLECTORS: tuple[type[Collector], ...] = tuple(entry.load() for entry in REGISTERED)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def reference_specs(cls: type[Collector]) -> list[MetricSpec]:
    """Every metric a collector can emit (under its reference settings)."""
    return cls(cls.reference_settings(), Context()).specs()


def metrics_table(specs: list[MetricSpec]) -> str:
    lines = ["| metric | type | labels | meaning | PromQL / use |", "|---|---|---|---|---|"]
    for spec in specs:
        labels = ", ".join(f"`{label}`" for label in spec.labels) or "-"
        lines.append(f"| `{spec.name}` | {spec.type} | {labels} | {_cell(spec.help)} | {_cell(spec.unit_note)} |")
    return "\n".join(lines)


def metrics_reference() -> str:
    from exporter.core.probe import OWN_SPECS, PROBE_SPECS

    lines = ["#### `exporter`: The exporter itself (always on).\n", metrics_table(SELF_SPECS), "",
             "#### `probe`: Each answer of `GET /probe` (docs/estate.md), beside its target's series.\n",
             metrics_table(PROBE_SPECS), "",
             "#### `probes`: The exporter's probes and inventory, on `/metrics` (with `modules:` or an inventory file)."
             "\n", metrics_table(OWN_SPECS), ""]
    for cls in COLLECTORS:
        lines += [f"#### `{cls.name}`: {cls.description}\n", metrics_table(reference_specs(cls)), ""]
    lines.append("The exporter also serves `process_*` metrics about itself (CPU, resident memory, open files).")
    return "\n".join(lines)


def _default(field) -> str | None:
    """The default as shown in the table, or None for a nested section."""
    if field.is_required():
        return "(required)"
    value = field.default_factory() if field.default_factory is not None else field.default
    if isinstance(value, BaseModel):
        return None
    if isinstance(value, list):
        return f"{len(value)} built-in entries" if value else "`[]`"
    return f"`{_cell(repr(value))}`"


def _nested_model(annotation: Any) -> type[BaseModel] | None:
    """The model inside an optional section such as ``OracleSettings | None``."""
    for arg in (annotation, *typing.get_args(annotation)):
        if isinstance(arg, type) and issubclass(arg, BaseModel):
            return arg
    return None


def _rows(prefix: str, model: type[BaseModel]) -> list[str]:
    rows = []
    for name, field in model.model_fields.items():
        shown = _default(field)
        if shown is not None:
            rows.append(f"| `{prefix}{name}` | {shown} | {_cell(field.description or '')} |")
        nested = _nested_model(field.annotation)
        if nested is not None and nested is not model:
            rows += _rows(f"{prefix}{name}.", nested)
    return rows


_CONFIG_HEAD = ["| key | default | meaning |", "|---|---|---|"]


def collector_config(cls: type[Collector]) -> str:
    return "\n".join(_CONFIG_HEAD + _rows(f"collectors.{cls.name}.", cls.Settings))


def config_reference() -> str:
    lines = list(_CONFIG_HEAD)
    lines += _rows("web.", WebSettings)
    lines += _rows("paths.", PathSettings)
    lines += _rows("log.", LogSettings)
    lines += _rows("inventory.", InventorySettings)
    lines += [row for row in _rows("", Config) if row.startswith("| `labels`")]
    for cls in COLLECTORS:
        lines += _rows(f"collectors.{cls.name}.", cls.Settings)
    return "\n".join(lines)


def thresholds_reference() -> str:
    """The alert thresholds (recording rules middleware:threshold:*) of alerts/*.yml."""
    lines = ["| threshold | default | guide row | file |", "|---|---|---|---|"]
    for path in sorted((ROOT / "alerts").glob("*.yml")):
        data = yaml.safe_load(path.read_text()) or {}
        for group in data.get("groups", []) or []:
            if not str(group.get("name", "")).endswith("-thresholds"):
                continue
            for rule in group.get("rules", []):
                value = str(rule.get("expr", "")).strip()
                value = value[len("vector("):-1] if value.startswith("vector(") else value
                lines.append(f"| `{rule['record']}` | {value} | {rule.get('labels', {}).get('guide_row', '')} | "
                             f"`{path.name}` |")
    return "\n".join(lines)


def _platforms_table(platforms: Sequence[str], rows: Iterable[tuple[str, Any]]) -> str:
    """A psutil platform table: per (series, row), psutil's source, the platforms where it is given, and why not."""
    head = " | ".join(host_psutil.PLATFORM_TITLES[p] for p in platforms)
    lines = [f"| series | psutil | {head} | where absent, why |", "|---|---|" + "---|" * len(platforms) + "---|"]
    for series, row in rows:
        marks = " | ".join("yes" if p in row.platforms else "-" for p in platforms)
        source = f"`{row.source}`" if row.source != "-" else "-"
        lines.append(f"| `{_cell(series)}` | {source} | {marks} | {_cell(row.note)} |")
    return "\n".join(lines)


def host_platforms_reference() -> str:
    """The host collector's psutil back-end: per series, the platforms where psutil gives it (host_psutil.ROWS)."""
    return _platforms_table(host_psutil.PLATFORMS, ((row.key, row) for row in host_psutil.ROWS))


def process_platforms_reference() -> str:
    """The process groups' extra figures through psutil: per reading, the platforms (psutil_procs.EXTRA_ROWS)."""
    from exporter.machine import psutil_procs

    return _platforms_table(psutil_procs.EXTRA_PLATFORMS, ((row.series, row) for row in psutil_procs.EXTRA_ROWS))


def tolerances_reference() -> str:
    lines = ["| tolerance | value | what it bounds |", "|---|---|---|"]
    for tol in host_psutil.TOLERANCES:
        lines.append(f"| `{tol.name}` | {tol.value:g} | {_cell(tol.rule)} |")
    return "\n".join(lines)


def replace_sections(text: str, generated: dict[str, str], name: str) -> str:
    for section, body in generated.items():
        begin = f"<!-- BEGIN GENERATED {section} (python -m tools.docs) -->"
        end = f"<!-- END GENERATED {section} -->"
        if begin not in text or end not in text:
            raise SystemExit(f"{name} lacks the markers for the generated {section} section")
        head, rest = text.split(begin, 1)
        _, tail = rest.split(end, 1)
        text = f"{head}{begin}\n{body}\n{end}{tail}"
    return text


def targets() -> list[tuple[Path, Callable[[], dict[str, str]]]]:
    """Every generated file with the sections it holds."""
    result: list[tuple[Path, Callable[[], dict[str, str]]]] = [
        (METRICS_DOC, lambda: {"metrics": metrics_reference()}),
        (CONFIG_DOC, lambda: {"config": config_reference()}),
        (ALERTS_README, lambda: {"thresholds": thresholds_reference()}),
        (PLATFORMS_DOC, lambda: {"host-platforms": host_platforms_reference(),
                                 "process-platforms": process_platforms_reference(),
                                 "tolerances": tolerances_reference()}),
    ]
    for cls in COLLECTORS:
        result.append((SYSTEMS / cls.name / "README.md",
                       lambda cls=cls: {"metrics": metrics_table(reference_specs(cls)),
                                        "config": collector_config(cls)}))
    return result


def render(path: Path, sections: Callable[[], dict[str, str]]) -> str:
    return replace_sections(path.read_text(), sections(), str(path.relative_to(ROOT)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail if a generated section is stale")
    args = parser.parse_args(argv)
    stale = []
    for path, sections in targets():
        current = path.read_text()
        wanted = render(path, sections)
        if current != wanted:
            stale.append(str(path.relative_to(ROOT)))
            if not args.check:
                path.write_text(wanted)
    if args.check and stale:
        print(f"stale: {', '.join(stale)}; run `python -m tools.docs`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
