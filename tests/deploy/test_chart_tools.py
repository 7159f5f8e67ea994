"""The chart under the community's tools: kubeconform -strict against the Kubernetes 1.29 and 1.32 schemas and the
Prometheus Operator CRDs for every values file, helm lint --strict, the helm-unittest suites in
helm/middleware-exporter/tests, and the helm-docs README being fresh. The tools are built from their module
source and cached by tests/chart_tools.py (locally a missing tool skips; under CI it is built)."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from .. import chart_tools
from ..support import REPO
from .test_helm import CHART, helm_binary, run_helm

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def helm() -> str:
    return helm_binary()

VALUES_FILES = [None, *sorted((CHART / "ci").glob("*.yaml")), *sorted((REPO / "examples" / "helm").glob("*.yaml"))]
IDS = ["default" if p is None else p.relative_to(REPO).as_posix() for p in VALUES_FILES]
CRDS = ("--api-versions", "monitoring.coreos.com/v1", "--api-versions", "monitoring.coreos.com/v1alpha1")


def _template(helm: str, values: Path | None, *extra: str) -> str:
    args = ["template", "mw", str(CHART), "--namespace", "monitoring", *CRDS, *extra]
    if values is not None:
        args += ["-f", str(values)]
    return run_helm(helm, *args).stdout


def _kubeconform(manifests: str, version: str) -> subprocess.CompletedProcess:
    k8s = chart_tools.k8s_schema_dir(version)
    crds = chart_tools.crd_schema_dir()
    return subprocess.run(
        [str(chart_tools.kubeconform()), "-strict", "-summary", "-output", "text",
         "-schema-location", str(k8s / "{{ .ResourceKind }}{{ .KindSuffix }}.json"),
         "-schema-location", str(crds / "{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json"), "-"],
        input=manifests, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("version", chart_tools.K8S_VERSIONS)
@pytest.mark.parametrize("values", VALUES_FILES, ids=IDS)
def test_kubeconform_strict(helm, values, version):
    manifests = _template(helm, values)
    result = _kubeconform(manifests, version)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Invalid: 0, Errors: 0, Skipped: 0" in result.stdout, result.stdout


def test_kubeconform_rejects_an_unknown_field(helm):
    """Control: the schemas are strict and really loaded (a missing schema is an error too, not a skip)."""
    manifests = _template(helm, None, "--set", "mode=daemonset").replace(
        "  revisionHistoryLimit: 10", "  revisionHistoryLimit: 10\n  bogusField: 1", 1)
    result = _kubeconform(manifests, chart_tools.K8S_VERSIONS[0])
    assert result.returncode != 0 and "bogusField" in result.stdout, result.stdout
    rule = _template(helm, None, "--set", "mode=daemonset").replace(
        "      - alert:", "      - bogus: 1\n        alert:", 1)
    result = _kubeconform(rule, chart_tools.K8S_VERSIONS[-1])
    assert result.returncode != 0 and "PrometheusRule" in result.stdout, result.stdout


@pytest.mark.parametrize("values", VALUES_FILES, ids=IDS)
def test_lint_strict(helm, values):
    args = ["lint", "--strict", str(CHART), *(["-f", str(values)] if values else [])]
    assert "0 chart(s) failed" in run_helm(helm, *args).stdout


def test_helm_unittest_suites():
    suites = sorted((CHART / "tests").glob("*_test.yaml"))
    assert suites
    result = subprocess.run([str(chart_tools.helm_unittest()), str(CHART)], capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert f"Test Suites: {len(suites)} passed" in result.stdout, result.stdout[-2000:]


def test_chart_readme_is_fresh():
    result = subprocess.run([str(chart_tools.helm_docs()), "--chart-search-root", str(CHART.parent), "--dry-run"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    readme = (CHART / "README.md").read_text()
    assert result.stdout.strip() == readme.strip(), (
        "helm/middleware-exporter/README.md is stale: run helm-docs --chart-search-root helm")
    for key in ("extraVolumes", "networkPolicy.podSelector", "serviceMonitor.attachMetadata",
                "monitoringContent.enabled", "prometheusRule.runbookUrlBase"):
        assert f"| {key} |" in readme, key
