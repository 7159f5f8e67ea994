"""Go tools and schemas the chart tests use, built from their module source and cached like tests/promtool3.py.

kubeconform (strict manifest validation), helm-unittest (template unit tests), helm-docs (the chart README) and
grafana/dashboard-linter (`lint --strict` on dashboards/, tests/test_dashboards.py)
are built with the Go toolchain through the module proxy into ~/.cache/middleware-exporter/bin when missing;
locally a missing tool skips, under CI (``CI`` set) it is built. Cold builds on this busy 2-core machine: kubeconform
14-84 s, helm-docs 22-24 s, helm-unittest 4 min 1 s, dashboard-linter 4 min 3 s (empty Go build cache; its
modules were already downloaded), the schemas 9 s (with module downloads; each tool is built
in place with `go build` in its downloaded module, since `go install pkg@version` refuses a go.mod with replace
directives).

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
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "middleware-exporter"
BIN = CACHE / "bin"
KUBECONFORM = ("github.com/yannh/kubeconform", "v0.7.0", "./cmd/kubeconform")
HELM_DOCS = ("github.com/norwoodj/helm-docs", "v1.14.2", "./cmd/helm-docs")
HELM_UNITTEST = ("github.com/helm-unittest/helm-unittest", "v1.1.2", "./cmd/helm-unittest")
# main of 2024-12-16: the newest version the module proxy serves whole. It refuses the tags v0.1.0 and v0.1.1 (403),
# and v0.2.0 (2026-06-18) needs a grafana/apps/dashboard pseudo-version it refuses; v0.2.0 only adds the v2
# dashboard schema (these dashboards are v1) - its rules are the same as this commit's.
DASHBOARD_LINTER = ("github.com/grafana/dashboard-linter", "v0.0.0-20241216132922-9479ff4bfa35", ".")
PROMETHEUS_OPERATOR = ("github.com/prometheus-operator/prometheus-operator", "v0.85.0")
K8S_VERSIONS = ("1.29.0", "1.32.0")


def _go() -> str | None:
    return shutil.which("go") or ("/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else None)


def _module_dir(module: str, version: str) -> Path:
    go = _go()
    if go is None:
        pytest.fail(f"{module} is needed and go is not installed to fetch it; CI must provide go")
    env = {**os.environ, "GOWORK": "off", "GOFLAGS": "-mod=mod"}
    info = subprocess.run([go, "mod", "download", "-json", f"{module}@{version}"], capture_output=True, text=True,
                          timeout=1800, env=env)
    if info.returncode != 0:
        pytest.fail(f"go mod download {module}@{version} failed:\n{info.stderr[-3000:]}")
    return Path(json.loads(info.stdout)["Dir"])


def cached(binary: Path, override_variable: str, build: Callable[[], Path]) -> Path:
    """A Go tool the tests run (also tests/promtool3.py, tests/mixtool.py): the path in ``override_variable`` if
    set, else the cached ``binary``; missing, it is built under CI (``CI`` set) and skips the test locally."""
    override = os.environ.get(override_variable)
    if override:
        return Path(override)
    if binary.exists():
        return binary
    if not os.environ.get("CI"):
        pytest.skip(f"{binary.name} not built (CI builds it into {BIN}; or set {override_variable})")
    return build()


def go_build(source: Path, package: str, binary: Path, *, static: bool = True) -> Path:
    """``go build`` of ``package`` in the module checked out at ``source`` into ``binary``."""
    BIN.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "GOWORK": "off", "GOFLAGS": "-mod=mod", **({"CGO_ENABLED": "0"} if static else {})}
    result = subprocess.run([_go(), "build", "-o", str(binary), package], cwd=source, capture_output=True,
                            text=True, timeout=3600, env=env)
    if result.returncode != 0 or not binary.exists():
        pytest.fail(f"building {binary.name} failed:\n{result.stderr[-3000:]}")
    return binary


def _build(spec: tuple[str, str, str], name: str) -> Path:
    module, version, package = spec
    binary = BIN / f"{name}-{version}"
    return cached(binary, f"MWE_{name.upper().replace('-', '_')}",
                  lambda: go_build(_module_dir(module, version), package, binary))


def kubeconform() -> Path:
    return _build(KUBECONFORM, "kubeconform")


def helm_docs() -> Path:
    return _build(HELM_DOCS, "helm-docs")


def helm_unittest() -> Path:
    return _build(HELM_UNITTEST, "helm-unittest")


def dashboard_linter() -> Path:
    return _build(DASHBOARD_LINTER, "dashboard-linter")


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
