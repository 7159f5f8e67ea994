"""The Helm chart (helm/middleware-exporter): lint, render, offline schema validation and the rule/secret wiring.

The chart reads the repository's alerts/*.yml and dashboards/*.json through the symlinks
helm/middleware-exporter/files/{alerts,dashboards} (Helm 3 follows symlinks in a chart directory when loading
and packaging it, with a "found symbolic link in path" warning), so the rendered PrometheusRule must carry
exactly the groups of the rule files. The rules and dashboards come with a daemonset release by default
(monitoringContent), and the Prometheus Operator objects only with its CRDs, so the renders here pass
`--api-versions monitoring.coreos.com/v1`. The community value names, the two-release layout in a real Prometheus
and the rule rewrites: tests/deploy/test_chart_values.py; kubeconform, helm-unittest and helm-docs:
tests/deploy/test_chart_tools.py.

Needs helm (v3.16, built and cached by tools/gotools.py, which scripts/test runs; under CI a test builds it when
missing), kubernetes-validate (Kubernetes OpenAPI schemas,
offline) and jsonschema (the minimal Prometheus Operator CRD schemas in helm/middleware-exporter/ci/schemas).
"""
from __future__ import annotations

import base64
import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from ..chart_tools import tool

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "helm" / "middleware-exporter"
FULL_VALUES = CHART / "ci" / "full-values.yaml"
CRD_SCHEMAS = {
    "ServiceMonitor": CHART / "ci" / "schemas" / "servicemonitor-monitoring-v1.json",
    "PrometheusRule": CHART / "ci" / "schemas" / "prometheusrule-monitoring-v1.json",
}
# Oldest and newest Kubernetes versions whose schemas kubernetes-validate ships (checked in strict mode).
K8S_VERSIONS = ("1.25.0", None)
THRESHOLD_PREFIX = "middleware:threshold:"


@pytest.fixture(scope="module")
def helm() -> str:
    return helm_binary()


def helm_binary() -> str:
    """helm (tools/gotools.py's pinned build; override MWE_HELM), built under CI when missing (a plain function:
    tests/test_chart_*.py use it for their fixture)."""
    return str(tool("helm"))


def run_helm(helm: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run([helm, *args], capture_output=True, text=True, timeout=300, cwd=REPO)
    if check and result.returncode != 0:
        pytest.fail(f"helm {' '.join(args)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result


# As if the Prometheus Operator's CRDs were installed (the chart renders its objects only then).
CRDS = ("--api-versions", "monitoring.coreos.com/v1")


def render(helm: str, *args: str) -> list[dict]:
    out = run_helm(helm, "template", "mw", str(CHART), "--namespace", "monitoring", *CRDS, *args).stdout
    return [doc for doc in yaml.safe_load_all(out) if doc]


def by_kind(docs: list[dict], kind: str) -> list[dict]:
    return [doc for doc in docs if doc.get("kind") == kind]


def rule_files() -> list[Path]:
    """alerts/*.yml that are Prometheus rule files (alertmanager.yml is an Alertmanager configuration)."""
    return [p for p in sorted((REPO / "alerts").glob("*.yml")) if p.name != "alertmanager.yml"]


def alert_groups() -> list[dict]:
    groups: list[dict] = []
    for path in rule_files():
        groups.extend(yaml.safe_load(path.read_text())["groups"])
    return groups


def sorted_by_name(groups: list[dict]) -> list[dict]:
    return sorted(groups, key=lambda g: g["name"])


def the_rule(docs: list[dict]) -> dict:
    rules = by_kind(docs, "PrometheusRule")
    assert len(rules) == 1, [d["kind"] for d in docs]
    return rules[0]


@pytest.fixture(scope="module")
def default_docs(helm) -> list[dict]:
    return render(helm)


@pytest.fixture(scope="module")
def daemonset_docs(helm) -> list[dict]:
    """The release that carries the rules and dashboards by default (monitoringContent.enabled: null)."""
    return render(helm, "--set", "mode=daemonset")


@pytest.fixture(scope="module")
def full_docs(helm) -> list[dict]:
    return render(helm, "-f", str(FULL_VALUES))


def test_symlinks_point_at_the_repository_sources():
    for name in ("alerts", "dashboards"):
        link = CHART / "files" / name
        assert link.is_symlink(), f"{link} must be a symlink to ../../../{name} (single source of truth)"
        assert link.resolve() == (REPO / name).resolve()


@pytest.mark.parametrize("values", [None, FULL_VALUES], ids=["default", "full"])
def test_lint_strict(helm, values):
    args = ["lint", "--strict", str(CHART)] + (["-f", str(values)] if values else [])
    result = run_helm(helm, *args)
    assert "0 chart(s) failed" in result.stdout


def test_default_render(default_docs, daemonset_docs):
    kinds = sorted(d["kind"] for d in default_docs)
    assert kinds.count("Deployment") == 1 and "DaemonSet" not in kinds
    assert {"Service", "ServiceAccount", "ConfigMap"} <= set(kinds)
    assert "PrometheusRule" not in kinds  # a deployment release leaves rules and dashboards to the daemonset one
    assert "ServiceMonitor" not in kinds
    assert "Secret" not in kinds  # no credentials by default

    (service,) = by_kind(default_docs, "Service")
    assert service["spec"]["ports"] == [{"name": "metrics", "port": 19462, "targetPort": "metrics", "protocol": "TCP"}]

    (deployment,) = by_kind(default_docs, "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["args"][:3] == ["run", "--config", "/etc/middleware-exporter/config.yaml"]
    assert container["ports"][0]["containerPort"] == 19462
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["resources"] == {"requests": {"cpu": "50m", "memory": "64Mi"},
                                      "limits": {"cpu": "500m", "memory": "256Mi"}}
    sc = container["securityContext"]
    assert sc["runAsNonRoot"] is True and sc["runAsUser"] == 10001
    assert sc["readOnlyRootFilesystem"] is True and sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"] == {"drop": ["ALL"]}
    assert sc["seccompProfile"] == {"type": "RuntimeDefault"}
    assert pod["hostPID"] is False
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    assert "/etc/middleware-exporter/config.yaml" in mounts

    config_map = next(cm for cm in by_kind(default_docs, "ConfigMap") if "config.yaml" in cm["data"])
    config = yaml.safe_load(config_map["data"]["config.yaml"])
    assert config["web"]["listen_address"] == ":19462"
    assert config["paths"] == {"procfs": "/proc", "sysfs": "/sys"}
    assert config["collectors"] == {"host": {"enabled": False}, "process": {"enabled": False},
                                    "filesystem": {"enabled": False}}
    assert not [cm for cm in by_kind(default_docs, "ConfigMap") if cm["metadata"]["labels"].get("grafana_dashboard")]

    dashboards = [cm for cm in by_kind(daemonset_docs, "ConfigMap")
                  if cm["metadata"]["labels"].get("grafana_dashboard")]
    expected = sorted(p.name for p in (REPO / "dashboards").glob("*.json"))
    assert sorted(name for cm in dashboards for name in cm["data"]) == expected
    for cm in dashboards:
        assert cm["metadata"]["labels"]["grafana_dashboard"] == "1"
        ((name, text),) = cm["data"].items()
        assert json.loads(text) == json.loads((REPO / "dashboards" / name).read_text())


def test_full_render(full_docs):
    kinds = [d["kind"] for d in full_docs]
    assert "DaemonSet" in kinds and "Deployment" not in kinds
    assert kinds.count("ServiceMonitor") == 1 and kinds.count("Secret") == 1


def _validate_core(doc: dict) -> None:
    import kubernetes_validate

    for version in K8S_VERSIONS:
        kubernetes_validate.validate(doc, version or kubernetes_validate.latest_version(), strict=True)


def _validate_crd(doc: dict) -> None:
    import jsonschema

    schema = json.loads(CRD_SCHEMAS[doc["kind"]].read_text())
    jsonschema.Draft7Validator.check_schema(schema)
    jsonschema.validate(doc, schema, cls=jsonschema.Draft7Validator)


@pytest.mark.parametrize("values", [None, FULL_VALUES], ids=["default", "full"])
def test_rendered_manifests_validate_offline(helm, values):
    # kubeconform -strict on 1.29/1.32 with the real CRD schemas: tests/deploy/test_chart_tools.py
    pytest.importorskip("kubernetes_validate")
    pytest.importorskip("jsonschema")
    docs = render(helm, *(["-f", str(values)] if values else []))
    assert docs
    for doc in docs:
        kind = doc["kind"]
        try:
            if kind in CRD_SCHEMAS:
                _validate_crd(doc)
            else:
                _validate_core(doc)
        except Exception as exc:  # noqa: BLE001 - name the manifest in the failure
            pytest.fail(f"{kind}/{doc['metadata']['name']} does not validate: {exc}")


def test_crd_schemas_reject_wrong_manifests():
    jsonschema = pytest.importorskip("jsonschema")
    bad_rule = {"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule", "metadata": {"name": "x"},
                "spec": {"groups": [{"name": "g", "rules": [{"record": "r", "expr": "1", "bogus": 1}]}]}}
    with pytest.raises(jsonschema.ValidationError):
        _validate_crd(bad_rule)
    bad_monitor = {"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor", "metadata": {"name": "x"},
                   "spec": {"endpoints": [{"port": "metrics"}]}}  # selector is required
    with pytest.raises(jsonschema.ValidationError):
        _validate_crd(bad_monitor)


def test_prometheusrule_carries_exactly_the_alert_files(daemonset_docs):
    groups = the_rule(daemonset_docs)["spec"]["groups"]
    names = [g["name"] for g in groups]
    assert len(names) == len(set(names)), "duplicate group names"
    assert sorted_by_name(groups) == sorted_by_name(alert_groups())


def test_threshold_override_changes_exactly_one_rule(helm):
    groups = sorted_by_name(the_rule(render(helm, "--set", "mode=daemonset", "--set",
                                            "thresholds.hpom_ack_bulk=4000"))["spec"]["groups"])
    original = sorted_by_name(alert_groups())
    assert [g["name"] for g in groups] == [g["name"] for g in original]
    changed = []
    for got, want in zip(groups, original, strict=True):
        assert {k: v for k, v in got.items() if k != "rules"} == {k: v for k, v in want.items() if k != "rules"}
        assert len(got["rules"]) == len(want["rules"])
        for got_rule, want_rule in zip(got["rules"], want["rules"], strict=True):
            if got_rule != want_rule:
                changed.append((want_rule, got_rule))
    assert len(changed) == 1, changed
    want_rule, got_rule = changed[0]
    assert want_rule["record"] == THRESHOLD_PREFIX + "hpom_ack_bulk"
    assert got_rule["expr"] == "vector(4000)"
    assert {k: v for k, v in got_rule.items() if k != "expr"} == {k: v for k, v in want_rule.items() if k != "expr"}


def test_threshold_override_of_unknown_name_fails(helm):
    result = run_helm(helm, "template", "mw", str(CHART), *CRDS, "--set", "mode=daemonset",
                      "--set", "thresholds.no_such_threshold=1", check=False)
    assert result.returncode != 0
    assert "no_such_threshold" in result.stderr


def test_every_system_file_has_a_thresholds_group():
    for path in rule_files():
        groups = yaml.safe_load(path.read_text())["groups"]
        for group in groups:
            if group["name"].endswith("-thresholds"):
                for rule in group["rules"]:
                    assert rule["record"].startswith(THRESHOLD_PREFIX), (path.name, rule)
                    assert rule["expr"].strip().startswith("vector("), (path.name, rule)


def _secret_values() -> dict[str, str]:
    return {k: str(v) for k, v in yaml.safe_load(FULL_VALUES.read_text())["secrets"].items()}


def test_secrets_stay_out_of_configmaps(full_docs):
    secrets = _secret_values()
    assert secrets
    for cm in by_kind(full_docs, "ConfigMap"):
        text = yaml.safe_dump(cm)
        for value in secrets.values():
            assert value not in text, f"secret value in ConfigMap {cm['metadata']['name']}"
    (secret,) = by_kind(full_docs, "Secret")
    assert {k: base64.b64decode(v).decode() for k, v in secret["data"].items()} == secrets

    config_map = next(cm for cm in by_kind(full_docs, "ConfigMap") if "config.yaml" in cm["data"])
    config = yaml.safe_load(config_map["data"]["config.yaml"])
    assert config["collectors"]["hpom"]["database"]["password_file"] == \
        "/etc/middleware-exporter/secrets/hpom-db-password"
    (daemonset,) = by_kind(full_docs, "DaemonSet")
    pod = daemonset["spec"]["template"]["spec"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["secrets"]["secret"]["secretName"] == secret["metadata"]["name"]
    mounts = {m["mountPath"]: m for m in pod["containers"][0]["volumeMounts"]}
    assert mounts["/etc/middleware-exporter/secrets"]["readOnly"] is True
    # Nothing else references the secret values either (e.g. env or args).
    for doc in full_docs:
        if doc["kind"] != "Secret":
            dumped = yaml.safe_dump(doc)
            assert not any(value in dumped for value in secrets.values()), doc["kind"]


def test_existing_secret_renders_no_secret(helm):
    docs = render(helm, "-f", str(FULL_VALUES), "--set", "existingSecret=site-credentials")
    assert not by_kind(docs, "Secret")
    (daemonset,) = by_kind(docs, "DaemonSet")
    volumes = {v["name"]: v for v in daemonset["spec"]["template"]["spec"]["volumes"]}
    assert volumes["secrets"]["secret"]["secretName"] == "site-credentials"
    for doc in docs:
        dumped = yaml.safe_dump(doc)
        assert not any(value in dumped for value in _secret_values().values())


def test_inline_password_in_config_is_refused(helm):
    result = run_helm(helm, "template", "mw", str(CHART),
                      "--set", "config.collectors.oracle.databases[0].password=hunter2", check=False)
    assert result.returncode != 0
    assert "password_file" in result.stderr


def test_daemonset_mode(helm):
    docs = render(helm, "--set", "mode=daemonset")
    assert not by_kind(docs, "Deployment")
    (daemonset,) = by_kind(docs, "DaemonSet")
    pod = daemonset["spec"]["template"]["spec"]
    assert pod["hostPID"] is False
    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["mountPath"]: m for m in pod["containers"][0]["volumeMounts"]}
    for host_path, mount_path in (("/proc", "/host/proc"), ("/sys", "/host/sys"), ("/", "/host/root")):
        mount = mounts[mount_path]
        assert mount["readOnly"] is True
        assert volumes[mount["name"]]["hostPath"]["path"] == host_path
    assert mounts["/host/root"]["mountPropagation"] == "HostToContainer"  # NFS mounts made later appear too
    config_map = next(cm for cm in by_kind(docs, "ConfigMap") if "config.yaml" in cm["data"])
    config = yaml.safe_load(config_map["data"]["config.yaml"])
    assert config["paths"] == {"procfs": "/host/proc", "sysfs": "/host/sys", "rootfs": "/host/root"}
    assert "filesystem" not in config.get("collectors", {})  # on (the default): the node's mounts under /host/root


def test_servicemonitor_only_when_enabled(helm, default_docs):
    assert not by_kind(default_docs, "ServiceMonitor")
    docs = render(helm, "--set", "serviceMonitor.enabled=true")
    (monitor,) = by_kind(docs, "ServiceMonitor")
    (service,) = by_kind(docs, "Service")
    assert monitor["spec"]["endpoints"][0]["port"] == "metrics"
    selector = monitor["spec"]["selector"]["matchLabels"]
    assert selector.items() <= service["metadata"]["labels"].items()
    # The job label comes from a Service label whose value starts with "middleware" (rules: job=~"middleware.*").
    assert service["metadata"]["labels"][monitor["spec"]["jobLabel"]].startswith("middleware")


def test_prometheusrule_can_be_disabled(helm):
    assert by_kind(render(helm, "--set", "mode=daemonset"), "PrometheusRule")
    assert not by_kind(render(helm, "--set", "mode=daemonset", "--set", "prometheusRule.enabled=false"),
                       "PrometheusRule")


@pytest.mark.parametrize("setting, field", [
    ("mode=sideways", "mode"),
    ("serviceMonitor.enabled=notabool", "serviceMonitor.enabled"),
    ("thresholds.hpom_ack_bulk=lots", "thresholds.hpom_ack_bulk"),
    ("gateway.shards=0", "gateway.shards"),
    ("gateway.shards=1025", "gateway.shards"),  # the exporter's /sd takes shards <= 1024
])
def test_values_schema_rejects_wrong_types(helm, setting, field):
    result = run_helm(helm, "template", "mw", str(CHART), "--set", setting, check=False)
    assert result.returncode != 0
    assert "schema" in result.stderr.lower() and field in result.stderr, result.stderr


@pytest.mark.parametrize("values", [None, FULL_VALUES], ids=["default", "full"])
def test_rendered_config_passes_check_config(helm, tmp_path, values):
    import sys

    docs = render(helm, *(["-f", str(values)] if values else []))
    config_map = next(cm for cm in by_kind(docs, "ConfigMap") if "config.yaml" in cm["data"])
    path = tmp_path / "config.yaml"
    path.write_text(config_map["data"]["config.yaml"])
    env = {k: v for k, v in os.environ.items() if not k.startswith("MIDDLEWARE_EXPORTER_")}
    # the chart mounts the password files from Secrets on the node: here only the configuration is checked
    result = subprocess.run([sys.executable, "-m", "exporter", "check-config", "--no-password-sources", "--config",
                             str(path)], capture_output=True, text=True, timeout=60, cwd=REPO, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    if values:  # without the flag, the missing password files are named (and nothing else is printed of them)
        strict = subprocess.run([sys.executable, "-m", "exporter", "check-config", "--config", str(path)],
                                capture_output=True, text=True, timeout=60, cwd=REPO, env=env)
        assert strict.returncode == 2 and "password_file" in strict.stderr, strict.stderr


def test_package_contains_the_rule_files_and_dashboards(helm, tmp_path):
    import tarfile

    run_helm(helm, "package", str(CHART), "--destination", str(tmp_path))
    (archive,) = tmp_path.glob("middleware-exporter-*.tgz")
    with tarfile.open(archive) as tar:
        members = {m.name: m for m in tar.getmembers()}
        for source in [*rule_files(), *sorted((REPO / "dashboards").glob("*.json"))]:
            name = f"middleware-exporter/files/{source.parent.name}/{source.name}"
            assert name in members, name
            assert tar.extractfile(members[name]).read() == source.read_bytes(), name
        assert not any(name.endswith("alertmanager.yml") for name in members)


def _service_link_env(services: list[dict]) -> dict[str, str]:
    """What the kubelet gives a pod for each Service of its namespace when service links are on (the rules of
    kubernetes/kubernetes pkg/kubelet/envvars/envvars.go; the cluster IPs are invented)."""
    env: dict[str, str] = {}
    for index, service in enumerate(services):
        name = service["metadata"]["name"].upper().replace("-", "_").replace(".", "_")
        ip = f"10.101.0.{index + 10}"
        ports = service["spec"]["ports"]
        env[f"{name}_SERVICE_HOST"] = ip
        env[f"{name}_SERVICE_PORT"] = str(ports[0]["port"])
        for port in ports:
            if port.get("name"):
                env[f"{name}_SERVICE_PORT_{port['name'].upper().replace('-', '_')}"] = str(port["port"])
            proto = port.get("protocol", "TCP")
            url = f"{proto.lower()}://{ip}:{port['port']}"
            env.setdefault(f"{name}_PORT", url)
            prefix = f"{name}_PORT_{port['port']}_{proto}"
            env.update({prefix: url, f"{prefix}_PROTO": proto.lower(), f"{prefix}_PORT": str(port["port"]),
                        f"{prefix}_ADDR": ip})
    return env


def test_release_named_middleware_exporter_runs_with_service_links(helm, default_docs, full_docs, start_exporter):
    """Issue 25: the release middleware-exporter makes a Service middleware-exporter, whose links are
    MIDDLEWARE_EXPORTER_SERVICE_HOST and friends. The chart turns service links off, and the exporter starts with
    them anyway (another release, or a pod that turns them on): the rendered configuration, the environment the
    kubelet would give, a real process serving /metrics."""
    out = run_helm(helm, "template", "middleware-exporter", str(CHART), "--namespace", "monitoring", *CRDS,
                   "--set", "mode=daemonset").stdout
    docs = [doc for doc in yaml.safe_load_all(out) if doc]
    services = by_kind(docs, "Service")
    assert "middleware-exporter" in [s["metadata"]["name"] for s in services]
    for doc in docs + default_docs + full_docs:
        if doc["kind"] in ("DaemonSet", "Deployment"):
            assert doc["spec"]["template"]["spec"]["enableServiceLinks"] is False
    other = render(helm, "--set", "fullnameOverride=middleware-exporter-xyz")
    env = _service_link_env(services + by_kind(other, "Service"))
    assert "MIDDLEWARE_EXPORTER_SERVICE_HOST" in env and "MIDDLEWARE_EXPORTER_XYZ_PORT_19462_TCP_ADDR" in env
    config_map = next(cm for cm in by_kind(docs, "ConfigMap") if "config.yaml" in cm["data"])
    config = yaml.safe_load(config_map["data"]["config.yaml"])
    config["paths"] = {}  # the host's /proc and /sys mounts of the DaemonSet are this machine's own here
    exporter = start_exporter(config=yaml.safe_dump(config), env=env)
    status, _, body = exporter.get("/metrics")
    assert status == 200 and b"middleware_host_cpus" in body
