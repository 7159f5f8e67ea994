"""GET /sd (issue 37 item 2, docs/estate.md): the inventory file served in Prometheus' http_sd format by a real
exporter process, split by ?shard=I&shards=N, re-read when the file changes, the last good version kept (and the
error shown at /api/v1/inventory) when a new one is broken."""

from __future__ import annotations

import json
import subprocess
import sys
import time

from ..support import REPO

TARGETS = [f"host{i:03d}.example.com" for i in range(40)]
INVENTORY = ("- targets: [" + ", ".join(TARGETS[:30]) + "]\n  labels: {__param_module: hpux_ssh, site: fra1}\n"
             "- targets: [" + ", ".join(TARGETS[30:]) + ", '[::1]:22']\n  labels: {__param_module: oracle}\n")


def _sd(exporter, query=""):
    status, headers, body = exporter.get("/sd" + query)
    return status, headers, body


def _wait(exporter, predicate, limit=15.0):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        status, _, body = exporter.get("/sd")
        if status == 200 and predicate(json.loads(body)):
            return
        time.sleep(0.1)
    raise AssertionError(f"not seen within {limit} s; log:\n{exporter.log()}")


def test_sd_serves_inventory_and_shards(start_exporter, tmp_path):
    path = tmp_path / "targets.yml"
    path.write_text(INVENTORY)
    exporter = start_exporter("--inventory.file", str(path))
    status, headers, body = _sd(exporter)
    assert status == 200 and headers["content-type"] == "application/json"
    groups = json.loads(body)
    assert groups == [{"targets": TARGETS[:30], "labels": {"__param_module": "hpux_ssh", "site": "fra1"}},
                      {"targets": [*TARGETS[30:], "[::1]:22"], "labels": {"__param_module": "oracle"}}]
    for shards in (1, 2, 3, 16):
        seen: list[tuple[str, str]] = []
        for index in range(shards):
            status, headers, body = _sd(exporter, f"?shard={index}&shards={shards}")
            assert status == 200 and headers["content-type"] == "application/json"
            seen += [(t, g["labels"]["__param_module"]) for g in json.loads(body) for t in g["targets"]]
            assert all(g["targets"] for g in json.loads(body))
        assert sorted(seen) == sorted((t, g["labels"]["__param_module"]) for g in groups for t in g["targets"])


def test_sd_parameters_refused_with_400_naming_them(start_exporter, tmp_path):
    path = tmp_path / "targets.yml"
    path.write_text(INVENTORY)
    exporter = start_exporter("--inventory.file", str(path))
    for query, name in (("?shard=0", "shards"), ("?shards=2", "shard"), ("?shard=2&shards=2", "shard"),
                        ("?shard=0&shards=0", "shards"), ("?shard=0&shards=1025", "shards"),
                        ("?shard=-1&shards=2", "shard"), ("?shard=x&shards=2", "shard"),
                        ("?shard=0&shards=2.5", "shards"), ("?shard=0&shard=1&shards=2", "shard")):
        status, _, body = _sd(exporter, query)
        assert status == 400, query
        assert body.decode().startswith(f"{name}: "), (query, body)


def test_sd_follows_file_and_keeps_last_good(start_exporter, tmp_path):
    path = tmp_path / "targets.yml"
    path.write_text("[]\n")
    config = "inventory:\n  file: " + str(path) + "\n  refresh_interval: 0.2\n"
    exporter = start_exporter(config=config)
    status, _, body = _sd(exporter)
    assert status == 200 and json.loads(body) == []
    path.write_text("- targets: [a1, a2]\n")
    _wait(exporter, lambda groups: groups == [{"targets": ["a1", "a2"], "labels": {}}])
    path.write_text("- targets: [a1, '-oProxyCommand=touch /tmp/pwned']\n")
    deadline = time.monotonic() + 15
    while json.loads(exporter.get("/api/v1/inventory")[2])["error"] is None:
        assert time.monotonic() < deadline, exporter.log()
        time.sleep(0.1)
    state = json.loads(exporter.get("/api/v1/inventory")[2])
    assert f"inventory file {path}: group 0: target \"-oProxyCommand=touch /tmp/pwned\" refused" in state["error"]
    assert state["targets"] == 2
    assert json.loads(_sd(exporter)[2]) == [{"targets": ["a1", "a2"], "labels": {}}]  # the last good one
    assert "keeping the last good one" in exporter.log()
    path.write_text("- targets: [b1]\n")
    _wait(exporter, lambda groups: groups == [{"targets": ["b1"], "labels": {}}])
    assert json.loads(exporter.get("/api/v1/inventory")[2])["error"] is None


def test_no_sd_without_inventory(start_exporter):
    exporter = start_exporter()
    assert exporter.get("/sd")[0] == 404


def test_broken_inventory_at_start_is_a_configuration_error(tmp_path):
    path = tmp_path / "targets.yml"
    path.write_text("- targets: ['h;reboot']\n")
    for command in ("run", "check-config"):
        result = subprocess.run([sys.executable, "-m", "exporter", command, "--inventory.file", str(path)],
                                cwd=REPO, capture_output=True, text=True, timeout=60)
        assert result.returncode == 2, result.stderr
        assert f"inventory file {path}: group 0: target \"h;reboot\" refused" in result.stderr
