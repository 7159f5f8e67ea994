"""Generate the README's metrics and configuration references from the code.

    python -m exporter.docs            # rewrite the generated sections of README.md
    python -m exporter.docs --check    # exit 1 if README.md is stale (the test suite runs this)
"""

from __future__ import annotations

import argparse
import sys
import typing
from pathlib import Path
from typing import Any
from pydantic import BaseModel

from .collector import Context
from .collectors import REGISTRY
from .config import LogSettings, PathSettings, WebSettings
from .scheduler import SELF_SPECS

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
ALERTS_README = ROOT / "alerts" / "README.md"
SECTIONS = ("metrics", "config")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def metrics_reference() -> str:
    lines = []
    groups: list[tuple[str, str, list]] = [("exporter", "The exporter itself (always on).", SELF_SPECS)]
    for name, cls in REGISTRY.items():
        collector = cls(cls.reference_settings(), Context())
        groups.append((name, cls.description, collector.specs()))
    for name, description, specs in groups:
        lines.append(f"#### `{name}`: {description}\n")
        lines.append("| metric | type | labels | meaning | PromQL / use |")
        lines.append("|---|---|---|---|---|")
        for spec in specs:
            labels = ", ".join(f"`{label}`" for label in spec.labels) or "-"
            lines.append(f"| `{spec.name}` | {spec.type} | {labels} | {_cell(spec.help)} | {_cell(spec.unit_note)} |")
        lines.append("")
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


def config_reference() -> str:
    lines = ["| key | default | meaning |", "|---|---|---|"]
    lines += _rows("web.", WebSettings)
    lines += _rows("paths.", PathSettings)
    lines += _rows("log.", LogSettings)
    for name, cls in REGISTRY.items():
        lines += _rows(f"collectors.{name}.", cls.Settings)
    return "\n".join(lines)


def thresholds_reference() -> str:
    """The alert thresholds (recording rules middleware:threshold:*) of alerts/*.yml."""
    import yaml

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


def _replace_sections(text: str, generated: dict[str, str], name: str) -> str:
    for section, body in generated.items():
        begin = f"<!-- BEGIN GENERATED {section} (python -m exporter.docs) -->"
        end = f"<!-- END GENERATED {section} -->"
        if begin not in text or end not in text:
            raise SystemExit(f"{name} lacks the markers for the generated {section} section")
        head, rest = text.split(begin, 1)
        _, tail = rest.split(end, 1)
        text = f"{head}{begin}\n{body}\n{end}{tail}"
    return text


def render_alerts_readme(text: str) -> str:
    return _replace_sections(text, {"thresholds": thresholds_reference()}, "alerts/README.md")


def render_readme(text: str) -> str:
    generated = {"metrics": metrics_reference(), "config": config_reference()}
    return _replace_sections(text, generated, "README.md")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail if README.md is not up to date")
    args = parser.parse_args(argv)
    stale = []
    for path, render in ((README, render_readme), (ALERTS_README, render_alerts_readme)):
        current = path.read_text()
        wanted = render(current)
        if current != wanted:
            stale.append(path.name)
            if not args.check:
                path.write_text(wanted)
    if args.check and stale:
        print(f"{', '.join(stale)} stale: run `python -m exporter.docs`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
