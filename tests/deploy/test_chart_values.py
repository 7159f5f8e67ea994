"""The chart's values as users of prometheus-node-exporter / prometheus-postgres-exporter type them, the CRD guard,
the rules-and-dashboards-once-per-cluster default (two releases loaded into a real Prometheus), and the rule
rewrites (runbookUrlBase, additionalRuleLabels, per-alert disable, hostMetricsSource)."""
from __future__ import annotations

import json
import time
import urllib.parse
from collections import Counter
from pathlib import Path

import pytest
import yaml

from ..chart_tools import YamlLoader
from ..support import REPO, free_port, http_get, require_binary
from .test_helm import CHART, by_kind, helm_binary, run_helm

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def helm() -> str:
    return helm_binary()

CI = CHART / "ci"
NODE_EXPORTER_STYLE = CI / "node-exporter-style-values.yaml"
CRDS = ("--api-versions", "monitoring.coreos.com/v1", "--api-versions", "monitoring.coreos.com/v1alpha1")


def render(helm: str, *args: str, name: str = "mw") -> list[dict]:
    out = run_helm(helm, "template", name, str(CHART), "--namespace", "monitoring", *args).stdout
    return [doc for doc in yaml.load_all(out, Loader=YamlLoader) if doc]  # noqa: S506 - a SafeLoader


def fails(helm: str, *args: str) -> str:
    result = run_helm(helm, "template", "mw", str(CHART), *args, check=False)
    assert result.returncode != 0, result.stdout[:500]
    return result.stderr


def pod_of(docs: list[dict]) -> dict:
    (workload,) = [d for d in docs if d["kind"] in ("Deployment", "DaemonSet")]
    return workload["spec"]["template"]["spec"]


def exporter_config(docs: list[dict]) -> dict:
    cm = next(cm for cm in by_kind(docs, "ConfigMap") if "config.yaml" in cm["data"])
    return yaml.safe_load(cm["data"]["config.yaml"])


def alerts(rule: dict) -> list[dict]:
    return [r for g in rule["spec"]["groups"] for r in g["rules"] if "alert" in r]


# --- community value names -------------------------------------------------------------------------------------

def test_node_exporter_style_values_render_unchanged(helm):
    values = yaml.safe_load(NODE_EXPORTER_STYLE.read_text())
    docs = render(helm, "-f", str(NODE_EXPORTER_STYLE), *CRDS)
    pod = pod_of(docs)
    assert pod["tolerations"] == values["tolerations"]
    assert pod["affinity"] == values["affinity"]
    assert pod["nodeSelector"] == {"kubernetes.io/os": "linux"}
    assert pod["priorityClassName"] == "system-node-critical"
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["extra-volume"] == values["extraVolumes"][0]
    assert volumes["textfile-dir"]["hostPath"]["path"] == "/var/lib/node-exporter"
    mounts = {m["name"]: m for m in pod["containers"][0]["volumeMounts"]}
    assert mounts["extra-volume"] == values["extraVolumeMounts"][0]
    assert mounts["textfile-dir"] == {"name": "textfile-dir", "mountPath": "/host/textfile", "readOnly": True,
                                      "mountPropagation": "HostToContainer"}
    assert {"name": "TZ", "value": "UTC"} in pod["containers"][0]["env"]
    assert pod["containers"][0]["image"] == "registry.example.com/monitoring/middleware-exporter:0.1.0"
    (monitor,) = by_kind(docs, "ServiceMonitor")
    assert monitor["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    assert monitor["spec"]["attachMetadata"] == {"node": False}
    endpoint = monitor["spec"]["endpoints"][0]
    assert endpoint["relabelings"] == values["prometheus"]["monitor"]["relabelings"]
    assert monitor["spec"]["jobLabel"] == "app.kubernetes.io/name"  # "" keeps the chart's (job=~"middleware.*")
    assert endpoint["scrapeTimeout"] == "10s" and endpoint["interval"] == "30s"  # "" keeps the chart's
    for doc in docs:  # commonLabels everywhere, extraManifests rendered through tpl
        if doc["metadata"]["name"] != "prometheus-extra":
            assert doc["metadata"]["labels"]["team"] == "platform", doc["kind"]
    extra = next(d for d in docs if d["metadata"]["name"] == "prometheus-extra")
    assert extra["metadata"]["namespace"] == "monitoring"
    (daemonset,) = by_kind(docs, "DaemonSet")
    assert daemonset["spec"]["revisionHistoryLimit"] == 10
    assert daemonset["spec"]["updateStrategy"] == values["updateStrategy"]


def test_postgres_exporter_style_keys(helm):
    sidecar = {"name": "sidecar", "image": "busybox:1.36", "args": ["sleep", "infinity"]}
    init = {"name": "init", "image": "busybox:1.36", "command": ["true"]}
    docs = render(helm, "-f", str(CI / "deployment-values.yaml"), *CRDS,
                  "--set-json", f"extraContainers=[{json.dumps(sidecar)}]",
                  "--set-json", f"initContainers=[{json.dumps(init)}]",
                  "--set", "namespaceOverride=middleware")
    pod = pod_of(docs)
    assert [c["name"] for c in pod["containers"]] == ["exporter", "sidecar"]
    assert pod["initContainers"] == [init]
    assert pod["containers"][0]["image"] == ("registry.example.com/monitoring/middleware-exporter@sha256:"
                                             "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
    (pdb,) = by_kind(docs, "PodDisruptionBudget")
    assert pdb["spec"]["minAvailable"] == 1 and "maxUnavailable" not in pdb["spec"]
    (podmonitor,) = by_kind(docs, "PodMonitor")
    assert podmonitor["spec"]["sampleLimit"] == 20000
    assert podmonitor["spec"]["podTargetLabels"] == ["app.kubernetes.io/instance"]
    assert by_kind(docs, "AlertmanagerConfig")
    for doc in docs:
        assert doc["metadata"]["namespace"] == "middleware", doc["kind"]


def test_servicemonitor_scrape_options(helm):
    docs = render(helm, *CRDS, "--set", "serviceMonitor.enabled=true", "--set", "serviceMonitor.scheme=https",
                  "--set", "serviceMonitor.sampleLimit=5000", "--set", "serviceMonitor.targetLabels[0]=team",
                  "--set", "serviceMonitor.podTargetLabels[0]=tier",
                  "--set", "serviceMonitor.tlsConfig.insecureSkipVerify=true")
    (monitor,) = by_kind(docs, "ServiceMonitor")
    assert monitor["spec"]["sampleLimit"] == 5000
    assert monitor["spec"]["targetLabels"] == ["team"] and monitor["spec"]["podTargetLabels"] == ["tier"]
    assert monitor["spec"]["endpoints"][0]["scheme"] == "https"
    assert monitor["spec"]["endpoints"][0]["tlsConfig"] == {"insecureSkipVerify": True}


@pytest.mark.parametrize("setting", ["serviceMonitor.bogus=1", "extraVolumes=notalist", "networkPolicy.bogus=1",
                                     "image.digest=latest", "hostMetricsSource=prometheus"])
def test_schema_stays_strict(helm, setting):
    assert "schema" in fails(helm, "--set", setting).lower()


def test_networkpolicy_admits_only_prometheus(helm):
    (policy,) = by_kind(render(helm, "--set", "networkPolicy.enabled=true"), "NetworkPolicy")
    assert policy["spec"]["policyTypes"] == ["Ingress"]
    (rule,) = policy["spec"]["ingress"]
    assert rule["from"] == [{"podSelector": {"matchLabels": {"app.kubernetes.io/name": "prometheus"}},
                             "namespaceSelector": {}}]
    assert rule["ports"] == [{"port": "metrics", "protocol": "TCP"}]


def test_placeholder_image_fails_with_a_clear_message(helm):
    err = fails(helm, "--set", "image.repository=ghcr.io/example/middleware-exporter")
    assert "placeholder" in err and "image.registry" in err


# --- modes ------------------------------------------------------------------------------------------------------

def test_daemonset_defaults_like_node_exporter(helm):
    docs = render(helm, "--set", "mode=daemonset")
    pod = pod_of(docs)
    assert pod["hostNetwork"] is True and pod["dnsPolicy"] == "ClusterFirstWithHostNet"
    assert pod["tolerations"] == [{"operator": "Exists"}]
    assert pod["nodeSelector"] == {"kubernetes.io/os": "linux"}
    config = exporter_config(docs)
    assert "collectors" not in config  # host and process stay at the exporter's defaults (on)


def test_deployment_turns_host_and_process_off(helm):
    docs = render(helm)
    pod = pod_of(docs)
    assert "hostNetwork" not in pod and "tolerations" not in pod
    assert exporter_config(docs)["collectors"] == {"host": {"enabled": False}, "process": {"enabled": False},
                                                   "filesystem": {"enabled": False}}  # the pod's own mounts
    on = render(helm, "--set", "config.collectors.host.enabled=true")
    assert exporter_config(on)["collectors"]["host"] == {"enabled": True}


# --- CRD guard ----------------------------------------------------------------------------------------------------

def test_operator_objects_only_with_the_crds(helm):
    args = ("--set", "mode=daemonset", "--set", "serviceMonitor.enabled=true", "--set", "podMonitor.enabled=true",
            "--set", "alertmanagerConfig.enabled=true")
    operator_kinds = {"PrometheusRule", "ServiceMonitor", "PodMonitor", "AlertmanagerConfig"}
    without = {d["kind"] for d in render(helm, *args)}
    assert not without & operator_kinds
    assert {d["kind"] for d in render(helm, *args, *CRDS)} >= operator_kinds
    assert {d["kind"] for d in render(helm, *args, "--set", "forceMonitoringCRDs=true")} >= operator_kinds
    # NOTES.txt (its warnings) is checked by the helm-unittest suite tests/notes_test.yaml


# --- rules and dashboards once per cluster ------------------------------------------------------------------------

def _two_releases(helm: str, *daemonset_args: str, deployment_args: tuple[str, ...] = ()) -> list[list[dict]]:
    hosts = render(helm, "--set", "mode=daemonset", *CRDS, *daemonset_args, name="mw-hosts")
    databases = render(helm, *CRDS, *deployment_args, name="mw-db")
    return [hosts, databases]


def test_two_default_releases_carry_one_copy(helm):
    hosts, databases = _two_releases(helm)
    assert len(by_kind(hosts, "PrometheusRule")) == 1 and not by_kind(databases, "PrometheusRule")
    dashboards = [cm for docs in (hosts, databases) for cm in by_kind(docs, "ConfigMap")
                  if "grafana_dashboard" in cm["metadata"]["labels"]]
    uids = [json.loads(text)["uid"] for cm in dashboards for text in cm["data"].values()]
    assert uids and len(uids) == len(set(uids))
    # NOTES.txt says which release carries them: helm-unittest suite tests/notes_test.yaml


def test_threshold_override_in_a_release_without_rules_fails(helm):
    assert "does not carry the rules" in fails(helm, "--set", "thresholds.hpom_ack_bulk=4000")


class _Prometheus:
    """Debian's Prometheus evaluating rule files every second (no scrape targets)."""

    def __init__(self, tmp_path: Path, rule_files: list[Path]) -> None:
        import subprocess

        port = free_port()
        config = {"global": {"evaluation_interval": "1s"}, "rule_files": [str(p) for p in rule_files]}
        (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(config))
        self.url = f"http://127.0.0.1:{port}"
        self.log = tmp_path / "prometheus.log"
        self.proc = subprocess.Popen(
            [require_binary("prometheus"), f"--config.file={tmp_path / 'prometheus.yml'}",
             f"--storage.tsdb.path={tmp_path / 'tsdb'}", f"--web.listen-address=127.0.0.1:{port}"],
            stdout=self.log.open("wb"), stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def api(self, path: str) -> dict | None:
        try:
            status, _, body = http_get(self.url + path)
        except OSError:
            return None
        return json.loads(body)["data"] if status == 200 else None

    def query(self, expr: str) -> list:
        return (self.api("/api/v1/query?query=" + urllib.parse.quote(expr)) or {}).get("result", [])

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


def _load(tmp_path: Path, releases: list[list[dict]]) -> tuple[_Prometheus, list[str]]:
    files = []
    for i, docs in enumerate(releases):
        for rule in by_kind(docs, "PrometheusRule"):
            path = tmp_path / f"release{i}.yml"
            path.write_text(yaml.safe_dump({"groups": rule["spec"]["groups"]}))
            files.append(path)
    prometheus = _Prometheus(tmp_path, files)
    deadline = time.monotonic() + 60
    names: list[str] = []
    while time.monotonic() < deadline:
        data = prometheus.api("/api/v1/rules")
        groups = data["groups"] if data else []
        if groups and all(g.get("lastEvaluation", "").startswith("20") for g in groups):
            names = [r["name"] for g in groups for r in g["rules"] if r["type"] == "alerting"]
            break
        time.sleep(0.5)
    assert names, prometheus.log.read_text()[-2000:]
    return prometheus, names


def _threshold_values(prometheus: _Prometheus) -> dict[str, set[str]]:
    """Every value each middleware:threshold:* series took in the last 20 s, after 8 s of evaluations; the series
    of one name from two releases are the same series (same labels), so their samples interleave."""
    time.sleep(8)
    result = prometheus.query('{__name__=~"middleware:threshold:.+"}[20s]')
    values: dict[str, set[str]] = {}
    for series in result:
        assert len(series["values"]) >= 4, series
        values.setdefault(series["metric"]["__name__"], set()).update(v for _, v in series["values"])
    return values


def test_two_default_releases_in_one_prometheus(helm, tmp_path):
    releases = _two_releases(helm, "--set", "thresholds.hpom_ack_bulk=4000")
    prometheus, names = _load(tmp_path, releases)
    try:
        # once each (an alert name may have several rules in one file, e.g. one per server variable)
        assert Counter(names) == Counter(a["alert"] for a in alerts(by_kind(releases[0], "PrometheusRule")[0]))
        values = _threshold_values(prometheus)
        assert values and all(len(v) == 1 for v in values.values()), {k: v for k, v in values.items() if len(v) > 1}
        assert values["middleware:threshold:hpom_ack_bulk"] == {"4000"}
    finally:
        prometheus.close()


def test_control_two_releases_forced_on_duplicate_and_flap(helm, tmp_path):
    """The check above can fail: both releases forced to carry the rules, one with an override."""
    releases = _two_releases(helm, "--set", "thresholds.hpom_ack_bulk=4000",
                             deployment_args=("--set", "monitoringContent.enabled=true"))
    prometheus, names = _load(tmp_path, releases)
    try:
        single = Counter(a["alert"] for a in alerts(by_kind(releases[0], "PrometheusRule")[0]))
        assert Counter(names) == single + single
        assert _threshold_values(prometheus)["middleware:threshold:hpom_ack_bulk"] == {"4000", "5000"}
    finally:
        prometheus.close()


# --- rule rewrites ------------------------------------------------------------------------------------------------

def _rule(helm: str, *args: str) -> dict:
    (rule,) = by_kind(render(helm, "--set", "mode=daemonset", *CRDS, *args), "PrometheusRule")
    return rule


def test_runbook_base_labels_and_disable(helm):
    base = _rule(helm)
    rule = _rule(helm, "--set", "prometheusRule.runbookUrlBase=https://wiki.example.com/rb/",
                 "--set", "prometheusRule.additionalRuleLabels.team=middleware",
                 "--set", "prometheusRule.disabled[0]=MiddlewareHpomCustomAttributesOverLimit")
    before = {a["alert"]: a for a in alerts(base)}
    after = {a["alert"]: a for a in alerts(rule)}
    assert set(before) - set(after) == {"MiddlewareHpomCustomAttributesOverLimit"}
    for name, alert in after.items():
        old = before[name]["annotations"]["runbook_url"]
        assert alert["annotations"]["runbook_url"] == "https://wiki.example.com/rb/" + old.rsplit("/", 1)[1]
        assert alert["labels"] == {**before[name]["labels"], "team": "middleware"}
    # recording rules untouched
    records = [r for g in rule["spec"]["groups"] for r in g["rules"] if "record" in r]
    assert records == [r for g in base["spec"]["groups"] for r in g["rules"] if "record" in r]
    # kube-prometheus-stack's map shape, and an unknown name
    mapped = _rule(helm, "--set", "prometheusRule.disabled.MiddlewareHpomCustomAttributesOverLimit=true")
    assert {a["alert"] for a in alerts(mapped)} == set(after)
    assert "NoSuchAlert" in fails(helm, "--set", "mode=daemonset", *CRDS,
                                  "--set", "prometheusRule.disabled[0]=NoSuchAlert")


def test_host_metrics_from_node_exporter(helm):
    variants = REPO / "alerts" / "variants" / "node_exporter"
    if not variants.is_dir():
        pytest.skip("no alerts/variants/node_exporter")
    docs = render(helm, "--set", "mode=daemonset", "--set", "hostMetricsSource=node_exporter", *CRDS)
    groups = {g["name"]: g for g in by_kind(docs, "PrometheusRule")[0]["spec"]["groups"]}
    for path in sorted(variants.glob("*.yml")):
        for group in yaml.safe_load(path.read_text())["groups"]:
            assert groups[group["name"]] == group, (path.name, group["name"])
    assert exporter_config(docs)["collectors"] == {"host": {"enabled": False}, "filesystem": {"enabled": False}}
    dashboard_variants = REPO / "dashboards" / "variants" / "node_exporter"
    for path in sorted(dashboard_variants.glob("*.json")) if dashboard_variants.is_dir() else []:
        cm = next(cm for cm in by_kind(docs, "ConfigMap") if path.name in cm["data"])
        assert json.loads(cm["data"][path.name]) == json.loads(path.read_text())
