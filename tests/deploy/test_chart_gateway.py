"""The chart's gateway mode (mode: gateway, issue 37 item 6, docs/estate.md "Kubernetes: gateway mode"): N shards,
each its own Deployment, Service, ScrapeConfig and (HA pairs) PodDisruptionBudget, all rendered from
helm/middleware-exporter/ci/gateway-values.yaml. Beyond the shapes (helm-unittest: tests/gateway_test.yaml;
kubeconform -strict and helm lint --strict run on every ci/ values file in tests/deploy/test_chart_tools.py), the
wiring is checked against a real exporter: the rendered configuration and inventory ConfigMap start one, and the
/sd URL of every ScrapeConfig, asked of it, gives each inventory target to exactly one shard. The plain
scrape_configs the chart README gives users without the Prometheus Operator pass promtool 3's check config."""
from __future__ import annotations

import re
import subprocess
import sys
import time
import urllib.parse

import pytest
import yaml

from ..promtool3 import promtool3
from ..support import REPO
from .test_helm import CHART, by_kind, helm_binary, run_helm

pytestmark = pytest.mark.integration

GATEWAY_VALUES = CHART / "ci" / "gateway-values.yaml"
CRDS = ("--api-versions", "monitoring.coreos.com/v1", "--api-versions", "monitoring.coreos.com/v1alpha1")
SHARD_LABEL = "middleware-exporter/shard"


@pytest.fixture(scope="module")
def helm() -> str:
    return helm_binary()


def render(helm: str, *args: str) -> list[dict]:
    out = run_helm(helm, "template", "mw", str(CHART), "--namespace", "monitoring", *CRDS, "-f",
                   str(GATEWAY_VALUES), *args).stdout
    return [doc for doc in yaml.safe_load_all(out) if doc]


@pytest.fixture(scope="module")
def docs(helm) -> list[dict]:
    return render(helm)


def values() -> dict:
    return yaml.safe_load(GATEWAY_VALUES.read_text())


def config_and_inventory(docs: list[dict]) -> tuple[dict, str]:
    (config_map,) = [cm for cm in by_kind(docs, "ConfigMap") if "config.yaml" in cm["data"]]
    (inventory_map,) = [cm for cm in by_kind(docs, "ConfigMap") if cm["metadata"]["name"].endswith("-inventory")]
    return yaml.safe_load(config_map["data"]["config.yaml"]), inventory_map["data"]["targets.yml"]


def test_one_deployment_service_scrapeconfig_and_pdb_per_shard(docs):
    shards = values()["gateway"]["shards"]
    names = [f"mw-middleware-exporter-shard-{i}" for i in range(shards)]
    for kind in ("Deployment", "Service", "ScrapeConfig", "PodDisruptionBudget"):
        assert [d["metadata"]["name"] for d in by_kind(docs, kind)] == names, kind
    assert not by_kind(docs, "DaemonSet") and not by_kind(docs, "Secret")

    deployments, services = by_kind(docs, "Deployment"), by_kind(docs, "Service")
    for i, (deployment, service, pdb) in enumerate(zip(deployments, services, by_kind(docs, "PodDisruptionBudget"),
                                                       strict=True)):
        assert deployment["spec"]["replicas"] == values()["gateway"]["replicas"]
        pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
        assert pod_labels[SHARD_LABEL] == str(i)
        # each Service and PDB selects its shard's pods and no other shard's
        for selector in (service["spec"]["selector"], pdb["spec"]["selector"]["matchLabels"]):
            matched = [d["metadata"]["name"] for d in deployments
                       if selector.items() <= d["spec"]["template"]["metadata"]["labels"].items()]
            assert matched == [deployment["metadata"]["name"]]
    # the shards differ by their labels only: every pod holds the same configuration and inventory (so one
    # exporter process below stands for any of them)
    def without_shard(deployment: dict) -> dict:
        dumped = yaml.safe_dump(deployment)
        return yaml.safe_load(re.sub(r"(shard-|middleware-exporter/shard: ')\d+", r"\1N", dumped))
    assert all(without_shard(d) == without_shard(deployments[0]) for d in deployments)

    # the exporters' own /metrics: one ServiceMonitor selecting every shard's Service
    (monitor,) = by_kind(docs, "ServiceMonitor")
    selector = monitor["spec"]["selector"]["matchLabels"]
    assert all(selector.items() <= s["metadata"]["labels"].items() for s in services)


def test_scrapeconfigs_discover_and_probe_their_own_shard(docs):
    shards = values()["gateway"]["shards"]
    for i, scrape in enumerate(by_kind(docs, "ScrapeConfig")):
        spec = scrape["spec"]
        address = f"mw-middleware-exporter-shard-{i}.monitoring.svc:19462"
        ((sd,),) = [spec["httpSDConfigs"]]
        url = urllib.parse.urlsplit(sd["url"])
        assert (url.scheme, url.netloc, url.path) == ("http", address, "/sd")
        assert urllib.parse.parse_qs(url.query) == {"shard": [str(i)], "shards": [str(shards)]}
        assert spec["metricsPath"] == "/probe"
        assert spec["jobName"].startswith("middleware")  # the rules select job=~"middleware.*"
        assert spec["relabelings"] == [
            {"sourceLabels": ["__address__"], "targetLabel": "__param_target"},
            {"sourceLabels": ["__param_target"], "targetLabel": "instance"},
            {"targetLabel": "__address__", "replacement": address},
        ]
        assert scrape["metadata"]["labels"]["release"] == "kube-prometheus-stack"


def test_secrets_and_ssh_keys_stay_out_of_configmaps(helm):
    password = "gw-s3cret-Pq4"  # noqa: S105 - a test value that must not leak
    docs = render(helm, "--set", f"secrets.oracle-password={password}")
    (secret,) = by_kind(docs, "Secret")  # the `secrets` Secret; the ssh one is the user's (existingSecret)
    assert set(secret["data"]) == {"oracle-password"}
    for doc in docs:
        if doc["kind"] != "Secret":
            assert password not in yaml.safe_dump(doc), doc["kind"]
    for deployment in by_kind(docs, "Deployment"):
        volumes = {v["name"]: v for v in deployment["spec"]["template"]["spec"]["volumes"]}
        assert volumes["ssh"]["secret"]["secretName"] == "estate-ssh"
        assert volumes["secrets"]["secret"]["secretName"] == secret["metadata"]["name"]
    key = "-----BEGIN OPENSSH PRIVATE KEY-----"
    result = run_helm(helm, "template", "mw", str(CHART), "-f", str(GATEWAY_VALUES),
                      "--set-string", f"gateway.modules.unix.ssh.identity_file={key}", check=False)
    assert result.returncode != 0 and "private key is inlined" in result.stderr, result.stderr


def test_rendered_shards_split_the_inventory_in_a_real_exporter(docs, tmp_path, start_exporter):
    """Each ScrapeConfig's /sd URL, asked of an exporter started from the rendered ConfigMaps, gives its shard;
    together the shards hold every inventory target exactly once, with its module."""
    config, inventory = config_and_inventory(docs)
    assert config["inventory"]["file"] == "/etc/middleware-exporter/inventory/targets.yml"
    inventory_file = tmp_path / "targets.yml"
    inventory_file.write_text(inventory)
    config["inventory"]["file"] = str(inventory_file)
    config.pop("modules")  # probing is not this test's subject (test_rendered_modules_pass_check_config)
    config["paths"] = {}
    exporter = start_exporter(config=yaml.safe_dump(config))

    seen: dict[str, int] = {}
    for i, scrape in enumerate(by_kind(docs, "ScrapeConfig")):
        url = urllib.parse.urlsplit(scrape["spec"]["httpSDConfigs"][0]["url"])
        status, _, body = exporter.get(f"{url.path}?{url.query}")
        assert status == 200, body
        for group in yaml.safe_load(body):
            assert group["labels"]["__param_module"] == "unix"
            for target in group["targets"]:
                assert target not in seen, f"{target} in shards {seen[target]} and {i}"
                seen[target] = i
    expected = [t for group in values()["gateway"]["inventory"] for t in group["targets"]]
    assert sorted(seen) == sorted(expected)


def _kubelet_publish(directory, version: str, files: dict[str, str]) -> None:
    """Write a ConfigMap volume's files as the kubelet does (kubernetes pkg/volume/util/atomic_writer.go): the
    files in a new timestamped directory, the symlink ``..data`` replaced by a rename, and each visible name a
    symlink into ``..data``."""
    target = directory / f"..{version}"
    target.mkdir()
    for name, text in files.items():
        (target / name).write_text(text)
    tmp_link = directory / "..data_tmp"
    tmp_link.symlink_to(target.name)
    tmp_link.rename(directory / "..data")
    for name in files:
        if not (directory / name).is_symlink():
            (directory / name).symlink_to(f"..data/{name}")


def test_inventory_configmap_update_reaches_a_running_exporter(docs, tmp_path, start_exporter):
    """The inventory is mounted as a directory (not a subPath, which the kubelet never updates): an edited
    ConfigMap is swapped in by the kubelet's symlink rename, and the running exporter serves it without a restart."""
    (deployment, *_) = by_kind(docs, "Deployment")
    (mount,) = [m for m in deployment["spec"]["template"]["spec"]["containers"][0]["volumeMounts"]
                if m["name"] == "inventory"]
    assert "subPath" not in mount and mount["mountPath"] == "/etc/middleware-exporter/inventory"
    config, inventory = config_and_inventory(docs)
    volume = tmp_path / "inventory"
    volume.mkdir()
    _kubelet_publish(volume, "2026_12_06_05_00_00.1", {"targets.yml": inventory})
    config["inventory"] = {"file": str(volume / "targets.yml"), "refresh_interval": 0.2}
    config.pop("modules")
    config["paths"] = {}
    exporter = start_exporter(config=yaml.safe_dump(config))

    def served() -> set[str]:
        status, _, body = exporter.get("/sd")
        assert status == 200, body
        return {t for group in yaml.safe_load(body) for t in group["targets"]}

    before = served()
    assert "hpux01.example.com" in before
    edited = yaml.safe_load(inventory) + [{"targets": ["hpux99.example.com"], "labels": {"__param_module": "unix"}}]
    _kubelet_publish(volume, "2026_12_06_05_01_00.2", {"targets.yml": yaml.safe_dump(edited)})
    deadline = time.monotonic() + 30  # a bound on the wait, not a measurement
    while "hpux99.example.com" not in served() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert served() == before | {"hpux99.example.com"}


def test_rendered_modules_pass_check_config(docs, tmp_path):
    from exporter import registry

    if "modules" not in registry.Config.model_fields:
        pytest.skip("this exporter has no `modules:` yet (issue 37 items 1-3, the /probe work)")
    config, inventory = config_and_inventory(docs)
    (tmp_path / "targets.yml").write_text(inventory)
    config["inventory"]["file"] = str(tmp_path / "targets.yml")
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    result = subprocess.run([sys.executable, "-m", "exporter", "check-config", "--no-password-sources", "--config",
                             str(path)], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert result.returncode == 0, result.stdout + result.stderr


def readme_scrape_configs() -> str:
    """The plain scrape_configs in the chart README's gateway section (README.md.gotmpl, for users without the
    Prometheus Operator)."""
    text = (CHART / "README.md.gotmpl").read_text()
    section = text[text.index("## Gateway mode"):]
    match = re.search(r"```yaml\n(scrape_configs:.*?)```", section, re.S)
    assert match, "no scrape_configs block in the README's gateway section"
    return match.group(1)


def test_readme_scrape_configs_pass_promtool(tmp_path):
    snippet = readme_scrape_configs()
    config = yaml.safe_load(snippet)
    jobs = config["scrape_configs"]
    assert [job["http_sd_configs"][0]["url"].split("?")[1] for job in jobs] == ["shard=0&shards=2",
                                                                                "shard=1&shards=2"]
    for job in jobs:
        assert job["metrics_path"] == "/probe"
        host = urllib.parse.urlsplit(job["http_sd_configs"][0]["url"]).netloc
        assert {"target_label": "__address__", "replacement": host} in job["relabel_configs"]
    path = tmp_path / "prometheus.yml"
    path.write_text(snippet)
    result = subprocess.run([promtool3(), "check", "config", str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
