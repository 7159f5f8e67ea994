"""Render the jsonnet mixin (mixin/) into the rule files of alerts/ and the dashboards of dashboards/, or check that
they are current.

`python -m tools.mixin` writes alerts/<system>.yml, alerts/recording.yml, alerts/forecasts.yml, the node_exporter
variants alerts/variants/node_exporter/*.yml and dashboards/<uid>.json; `--check` only compares and exits 1 naming
stale files.
Only the files of GENERATED are written: other rule files in alerts/ (and alertmanager.yml) are left alone.
Jsonnet runs through the `gojsonnet` Python bindings (go-jsonnet, the implementation jb and mixtool use; the
`test` extra), or google/jsonnet's C++ `jsonnet` bindings where only those are installed (same output, 4x slower).
The YAML is written by PyYAML with a fixed key order, since jsonnet sorts object keys.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
MIXIN = ROOT / "mixin"
ALERTS = ROOT / "alerts"
DASHBOARDS = ROOT / "dashboards"
SYSTEMS = ("certificates", "domino", "exporter", "filesystem", "host", "hpom", "ibmmq", "oracle", "process", "vhi")
VARIANT_DIR = "variants/node_exporter"
# The files whose rules change with hostMetricsSource: 'node_exporter' (the host recording rules, and the rules
# that read the recorded host series); the variant replaces them, every other file is the same in both.
VARIANT_FILES = ("filesystem.yml", "forecasts.yml", "host.yml", "ibmmq.yml", "recording.yml")
# alerts/<name>: every rule file this tool writes (paths relative to alerts/).
GENERATED = (tuple(f"{s}.yml" for s in SYSTEMS) + ("recording.yml", "forecasts.yml")
             + tuple(f"{VARIANT_DIR}/{name}" for name in VARIANT_FILES))
HEADER = "# generated from mixin/ by `python -m tools.mixin`; do not edit\n"
RULE_KEYS = ("record", "alert", "expr", "for", "keep_firing_for", "labels", "annotations")
LABEL_KEYS = ("severity", "system", "guide_row")
ANNOTATION_KEYS = ("summary", "description", "runbook_url", "source")


def _jsonnet_value(value: Any) -> str:
    """Jsonnet text for an override: objects merge into the defaults (`+:`), anything else replaces."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)}+: {_jsonnet_value(v)}" if isinstance(v, dict)
                               else f"{json.dumps(k)}: {_jsonnet_value(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def evaluate(config: dict[str, Any] | None = None, *, dashboards: bool = False) -> dict[str, Any]:
    """prometheusAlerts and prometheusRules (and grafanaDashboards) of mixin/mixin.libsonnet, with `config` merged
    into _config."""
    try:
        import _gojsonnet as _jsonnet  # the `gojsonnet` package (test extra)
    except ImportError:
        try:
            import _jsonnet  # google/jsonnet's bindings (the `jsonnet` package)
        except ImportError:
            raise SystemExit("tools.mixin needs go-jsonnet's Python bindings, from the test extra: "
                             ".venv/bin/pip install -q -e '.[test]'") from None

    snippet = ("local mixin = (import 'mixin.libsonnet') + { _config+:: %s };\n"
               "{ alerts: mixin.prometheusAlerts, rules: mixin.prometheusRules%s }") % (
        _jsonnet_value(config or {}), ", dashboards: mixin.grafanaDashboards" if dashboards else "")
    return json.loads(_jsonnet.evaluate_snippet(str(MIXIN / "render.jsonnet"), snippet))


def _ordered(mapping: dict, first: tuple[str, ...]) -> dict:
    return {**{k: mapping[k] for k in first if k in mapping}, **{k: mapping[k] for k in sorted(mapping)
                                                                 if k not in first}}


class _Expr(str):
    """An expression: a literal block when long (never folded, so that its lines stay as written)."""


def _rule(rule: dict) -> dict:
    rule = _ordered(rule, RULE_KEYS)
    rule["expr"] = _Expr(rule["expr"])
    if "labels" in rule:
        rule["labels"] = _ordered(rule["labels"], LABEL_KEYS)
    if "annotations" in rule:
        rule["annotations"] = _ordered(rule["annotations"], ANNOTATION_KEYS)
    return rule


class _Dumper(yaml.SafeDumper):
    """Multi-line strings as literal blocks, long ones folded: the layout the hand-written files had."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = None
    if "\n" in value or (isinstance(value, _Expr) and len(value) > 80):
        style = "|"
    elif len(value) > 100 and " " in value:  # prose; a long URL stays on one line
        style = ">"
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(value), style=style)


_Dumper.add_representer(str, _str)
_Dumper.add_representer(_Expr, _str)


def _dump(groups: list[dict], head: str) -> str:
    data = {"groups": [{"name": g["name"], "rules": [_rule(r) for r in g["rules"]]} for g in groups]}
    text = yaml.dump(data, Dumper=_Dumper, sort_keys=False, width=110, allow_unicode=True)
    if yaml.safe_load(text) != data:  # a style the loader reads back differently: plain PyYAML instead
        text = yaml.safe_dump(data, sort_keys=False, width=110, allow_unicode=True)
    return HEADER + head + text


def _files(rendered: dict[str, Any]) -> dict[str, list[dict]]:
    """Rule file name -> its groups: middleware-<system>-thresholds, middleware-<system>-recording and
    middleware-<system> go to <system>.yml, in this order; middleware-recording to recording.yml."""
    files: dict[str, list[dict]] = {}
    for group in rendered["rules"]["groups"] + rendered["alerts"]["groups"]:
        name = group["name"].removeprefix("middleware-")
        if name != "recording":
            name = name.removesuffix("-thresholds").removesuffix("-recording")
        files.setdefault(f"{name}.yml", []).append(group)
    for groups in files.values():
        groups.sort(key=lambda g: (not g["name"].endswith("-thresholds"), not g["name"].endswith("-recording")))
    return files


Evaluations = tuple[dict[str, Any], dict[str, Any]]


def _evaluations(config: dict[str, Any] | None, dashboards: bool) -> Evaluations:
    """The mixin evaluated for `config` and for its node_exporter variant."""
    config = config or {}
    return (evaluate(config, dashboards=dashboards),
            evaluate({**config, "hostMetricsSource": "node_exporter"}, dashboards=dashboards))


def render(config: dict[str, Any] | None = None, evaluations: Evaluations | None = None) -> dict[str, str]:
    """alerts/-relative path -> file text, for the default configuration merged with `config` (or from
    `evaluations` of it already made)."""
    main, variant = (_files(e) for e in evaluations or _evaluations(config, dashboards=False))
    out = {}
    for name in GENERATED:
        if name.startswith(VARIANT_DIR):
            base = name.rsplit("/", 1)[1]
            head = ("# Variant for hosts monitored by node_exporter (hostMetricsSource: 'node_exporter'): replaces\n"
                    f"# alerts/{base}; the host figures come from node_exporter's node_* series (mixin/README.md).\n")
            out[name] = _dump(variant[base], head)
        else:
            stem = name.removesuffix(".yml")
            sources = (f"mixin/rules/{stem}.libsonnet" if stem == "recording"
                       else "mixin/rules/forecasts.libsonnet (from exporter/advisor/forecasts.py)"
                       if stem == "forecasts"
                       else f"mixin/rules/{stem}.libsonnet (thresholds) and mixin/alerts/{stem}.libsonnet")
            out[name] = _dump(main[name], f"# Source: {sources}; settings: mixin/config.libsonnet.\n")
    unexpected = (set(main) | set(variant)) - {n.rsplit("/", 1)[-1] for n in GENERATED}
    if unexpected:
        raise SystemExit(f"mixin groups without an output file: {sorted(unexpected)} (add them to GENERATED)")
    differing = {name for name in main if main[name] != variant.get(name)}
    if differing != set(VARIANT_FILES):
        raise SystemExit(f"hostMetricsSource changes {sorted(differing)}; VARIANT_FILES says {list(VARIANT_FILES)}")
    return out


# The dashboards that change with hostMetricsSource: 'node_exporter' (dashboards/variants/node_exporter/ replaces
# them; the chart picks the variant with its node_exporter option).
VARIANT_DASHBOARDS = ("middleware-host.json",)


def render_dashboards(config: dict[str, Any] | None = None,
                      evaluations: Evaluations | None = None) -> dict[str, str]:
    """dashboards/-relative path -> JSON text (as dashboards/build.py formats JSON: sorted keys, indent 2): the
    dashboards of `config` (or of `evaluations` of it made with dashboards), and, where hostMetricsSource
    'node_exporter' changes them, their variant."""
    main, variant = ({name: json.dumps(board, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
                      for name, board in e["dashboards"].items()}
                     for e in evaluations or _evaluations(config, dashboards=True))
    differing = {name for name in main if main[name] != variant[name]}
    if differing != set(VARIANT_DASHBOARDS):
        raise SystemExit(f"hostMetricsSource changes {sorted(differing)}; VARIANT_DASHBOARDS says "
                         f"{list(VARIANT_DASHBOARDS)}")
    return {**main, **{f"{VARIANT_DIR}/{name}": variant[name] for name in VARIANT_DASHBOARDS}}


def _stale(directory: Path, rendered: dict[str, str]) -> list[str]:
    return [name for name, text in rendered.items()
            if not (directory / name).exists() or (directory / name).read_text(encoding="utf-8") != text]


def stale_dashboards(rendered: dict[str, str] | None = None) -> list[str]:
    return _stale(DASHBOARDS, rendered or render_dashboards())


def stale(rendered: dict[str, str] | None = None) -> list[str]:
    return _stale(ALERTS, rendered or render())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 when a file is stale")
    args = parser.parse_args(argv)
    evaluations = _evaluations({}, dashboards=True)  # rules and dashboards from the same two evaluations
    outputs = []
    for directory, rendered in ((ALERTS, render(evaluations=evaluations)),
                                (DASHBOARDS, render_dashboards(evaluations=evaluations))):
        outputs += [(directory / name, rendered[name]) for name in _stale(directory, rendered)]
    if args.check:
        for path, _ in outputs:
            print(f"{path.relative_to(ROOT)} differs from a fresh render of mixin/ (run python -m tools.mixin)",
                  file=sys.stderr)
        return 1 if outputs else 0
    for path, text in outputs:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
