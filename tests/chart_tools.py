"""The Go tools and schemas the chart tests use.

kubeconform (strict manifest validation), helm-unittest (template unit tests), helm-docs (the chart README),
grafana/dashboard-linter (`lint --strict` on dashboards/, tests/alerting/test_dashboards.py), helm and promtool 3
(tests/promtool3.py) are built and cached by tools/gotools.py, which scripts/test runs first; a test that finds
one missing builds it under CI and skips elsewhere (:func:`cached`).

Schemas for kubeconform, offline: the Kubernetes ones come from the PyPI package kubernetes-validate (strict
variants, one file per kind, as kubeconform's ``{{ .ResourceKind }}{{ .KindSuffix }}.json`` layout expects; the
definitions each kind reaches are copied into its file), the Prometheus Operator CRDs from the Go module
github.com/prometheus-operator/prometheus-operator (example/prometheus-operator-crd), converted the way
kubeconform's openapi2jsonschema.py does (openAPIV3Schema of each served version, additionalProperties false on
every object without properties of its own declared open) - a few lines, so written here rather than vendored.
"""
from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from tools import gotools

CACHE = gotools.CACHE
BIN = gotools.BIN
PROMETHEUS_OPERATOR = ("github.com/prometheus-operator/prometheus-operator", "v0.85.0")
K8S_VERSIONS = ("1.29.0", "1.32.0")


def _module_dir(module: str, version: str) -> Path:
    try:
        return gotools.module_dir(module, version)
    except gotools.BuildError as exc:
        pytest.fail(f"{exc}; CI must provide go and the module proxy")


def cached(binary: Path, override_variable: str, build: Callable[[], Path]) -> Path:
    """A Go tool the tests run (also tests/promtool3.py, tests/mixtool.py): the path in ``override_variable`` if
    set, else the cached ``binary`` (scripts/test builds them first: tools/gotools.py); missing, it is built under
    CI (``CI`` set) and skips the test elsewhere."""
    override = os.environ.get(override_variable)
    if override:
        return Path(override)
    if binary.exists():
        return binary
    if not os.environ.get("CI"):
        pytest.skip(f"{binary.name} not built (scripts/build-tools builds it; or set "
                    f"{override_variable})")
    try:
        return build()
    except gotools.BuildError as exc:
        pytest.fail(str(exc))


def go_build(source: Path, package: str, binary: Path, *, static: bool = True) -> Path:
    try:
        return gotools.go_build(source, package, binary, static=static)
    except gotools.BuildError as exc:
        pytest.fail(str(exc))


def tool(name: str) -> Path:
    """One of tools/gotools.py's tools (override: MWE_<NAME>, e.g. MWE_HELM_UNITTEST)."""
    return cached(gotools.path(name), f"MWE_{name.upper().replace('-', '_')}", lambda: gotools.build(name))


def kubeconform() -> Path:
    return tool("kubeconform")


def helm_docs() -> Path:
    return tool("helm-docs")


def helm_unittest() -> Path:
    return tool("helm-unittest")


def dashboard_linter() -> Path:
    return tool("dashboard-linter")


# The kinds the chart (and the ci/ and example values' extraManifests) render; a kind missing here fails the
# kubeconform tests with "could not find schema", which says to add it.
K8S_KINDS = ("configmap-v1", "secret-v1", "service-v1", "serviceaccount-v1", "deployment-apps-v1",
             "daemonset-apps-v1", "networkpolicy-networking-v1", "poddisruptionbudget-policy-v1")
_REF = re.compile(r'"\$ref": "(?:/api/_definitions\.json)?#/\$defs/([^"]+)"')


def k8s_schema_dir(version: str) -> Path:
    """kubernetes-validate's strict schemas of K8S_KINDS for `version`, each made self-contained (cached).

    The package's files `$ref` a shared `_definitions.json` whose `$id` kubeconform's compiler does not resolve
    (every schema then "could not be found"), so the definitions each kind reaches are copied into its file."""
    kubernetes_validate = pytest.importorskip("kubernetes_validate")
    target = CACHE / "schemas" / f"kubernetes-validate-{kubernetes_validate.__version__}" / f"v{version}-strict"
    if all((target / f"{kind}.json").exists() for kind in K8S_KINDS):
        return target
    source = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema" / f"v{version}-local-strict"
    if not source.is_dir():
        pytest.fail(f"kubernetes-validate {kubernetes_validate.__version__} has no schemas for {version}")
    definitions = json.loads((source / "_definitions.json").read_text())["$defs"]
    target.mkdir(parents=True, exist_ok=True)
    for kind in K8S_KINDS:
        text = (source / f"{kind}.json").read_text()
        needed: dict[str, object] = {}
        pending = _REF.findall(text)
        while pending:
            name = pending.pop()
            if name not in needed:
                needed[name] = definitions[name]
                pending.extend(_REF.findall(json.dumps(definitions[name])))
        schema = json.loads(_REF.sub(lambda m: f'"$ref": "#/$defs/{m.group(1)}"', text))
        schema["$defs"] = {name: json.loads(_REF.sub(lambda m: f'"$ref": "#/$defs/{m.group(1)}"',
                                                      json.dumps(value))) for name, value in needed.items()}
        tmp = target / f"{kind}.json.tmp"
        tmp.write_text(json.dumps(schema))
        tmp.rename(target / f"{kind}.json")
    return target


def _strict(schema: object) -> object:
    """openapi2jsonschema's strict conversion: close every object that declares properties."""
    if isinstance(schema, dict):
        out = {k: _strict(v) for k, v in schema.items()}
        open_object = out.get("x-kubernetes-preserve-unknown-fields")
        if "properties" in out and "additionalProperties" not in out and not open_object:
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [_strict(v) for v in schema]
    return schema


class YamlLoader(yaml.SafeLoader):
    """SafeLoader without YAML 1.1's `=` value tag (the CRDs and helm's toYaml write a bare `=`, e.g. matchType)."""


YamlLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:value"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def crd_schema_dir() -> Path:
    """The Prometheus Operator CRDs as kubeconform schemas: <kind>_<version>.json (cached)."""
    module, version = PROMETHEUS_OPERATOR
    target = CACHE / "schemas" / f"prometheus-operator-{version}"
    if (target / "prometheusrule_v1.json").exists():
        return target
    crds = _module_dir(module, version) / "example" / "prometheus-operator-crd"
    tmp = target.with_name(target.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for path in sorted(crds.glob("*.yaml")):
        crd = yaml.load(path.read_text(), Loader=YamlLoader)  # noqa: S506 - a SafeLoader
        kind = crd["spec"]["names"]["kind"].lower()
        for served in crd["spec"]["versions"]:
            schema = _strict(served["schema"]["openAPIV3Schema"])
            (tmp / f"{kind}_{served['name']}.json").write_text(json.dumps(schema))
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)
    return target
