"""The inventory file (exporter/core/inventory.py, issue 37 item 2): file_sd-shaped groups, strict target and
label checks, reloads that keep the last good version, and the stable shards N replicas split an estate by."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exporter.core.inventory import (
    Group,
    Inventory,
    InventoryError,
    InventoryFile,
    load,
    parse,
    select,
    shard,
    target_problem,
)

from ..support import REPO

GOOD_TARGETS = ["hpux01", "aix-02.example.com", "db_3.corp.", "10.0.0.1", "10.0.0.1:22", "::1", "fe80::1",
                "[::1]:1521", "[2001:db8::5]", "host:65535", "a" * 63]
HOSTILE_TARGETS = ["-oProxyCommand=touch /tmp/x", "host;id", "$(id)", "`id`", "host name", "host\nother", "'h'",
                   '"h"', "h|x", "h&x", "h>x", "host:0", "host:70000", "host:22:33", "host:", "a" * 254, "",
                   "h\x00", "h\t", "[::1", "[host]:22", "[::1]x", "-host", "h/x", "h@x", "ünïcode", "h:22x",
                   "a" * 64 + ".com", "h..x", "-", "host%eth0"]


@pytest.mark.parametrize("target", GOOD_TARGETS)
def test_targets_accepted(target):
    assert target_problem(target) is None


@pytest.mark.parametrize("target", HOSTILE_TARGETS)
def test_hostile_targets_refused(target):
    assert target_problem(target) is not None


def test_error_names_file_group_and_value():
    data = [{"targets": ["ok1"]}, {"targets": ["ok2", "-oProxyCommand=sh"], "labels": {"env": "prod"}}]
    with pytest.raises(InventoryError, match=r"inventory file f\.yml: group 1: target \"-oProxyCommand=sh\" "
                                             r"refused: starts with '-'"):
        parse(data, "f.yml")


@pytest.mark.parametrize("data, message", [
    ({"targets": []}, "top level must be a list"),
    (["x"], "group 0: must be a mapping"),
    ([{"targets": "h"}], "group 0: targets must be a list"),
    ([{"targets": ["h"], "module": "m"}], "group 0: unknown key 'module'.*__param_module"),
    ([{"targets": ["h"], "labels": {"1x": "v"}}], 'group 0: label "1x" refused'),
    ([{"targets": ["h"], "labels": {"env": 1}}], 'label "env" refused: .*not int'),
    ([{"targets": ["h"], "labels": {"env": "a\x00b"}}], "NUL"),
    ([{"targets": ["h"], "labels": {"__param_module": "-x"}}], "module name"),
])
def test_structure_refused(data, message):
    with pytest.raises(InventoryError, match=message):
        parse(data, "f.yml")


def test_module_label_and_sd_json(tmp_path):
    path = tmp_path / "targets.yml"
    path.write_text("- targets: [hpux01, 'hpux02:22']\n  labels: {__param_module: hpux_ssh, site: fra1, note: 'é x'}\n"
                    "- targets: []\n")
    inventory = load(str(path))
    assert inventory.groups[0].module == "hpux_ssh"
    assert inventory.as_sd() == [{"targets": ["hpux01", "hpux02:22"],
                                  "labels": {"__param_module": "hpux_ssh", "site": "fra1", "note": "é x"}},
                                 {"targets": [], "labels": {}}]
    (tmp_path / "t.json").write_text(json.dumps(inventory.as_sd()))
    assert load(str(tmp_path / "t.json")) == inventory
    (tmp_path / "empty.yml").write_text("")
    assert load(str(tmp_path / "empty.yml")).as_sd() == []


def test_unreadable_and_invalid_files(tmp_path):
    with pytest.raises(InventoryError, match="cannot read inventory file .*missing.yml"):
        load(str(tmp_path / "missing.yml"))
    fifo = tmp_path / "fifo.yml"
    os.mkfifo(fifo)
    with pytest.raises(InventoryError, match="FIFO"):
        load(str(fifo))
    (tmp_path / "dup.yml").write_text("- targets: [a]\n  targets: [b]\n")
    with pytest.raises(InventoryError, match="dup.yml.*given twice"):
        load(str(tmp_path / "dup.yml"))
    (tmp_path / "bad.yml").write_text("- targets: [a\n")
    with pytest.raises(InventoryError, match="bad.yml is not valid YAML at line"):
        load(str(tmp_path / "bad.yml"))
    (tmp_path / "bad.json").write_text("[{")
    with pytest.raises(InventoryError, match="bad.json is not valid"):
        load(str(tmp_path / "bad.json"))


def test_reload_keeps_last_good_and_reports(tmp_path):
    path = tmp_path / "targets.yml"
    path.write_text("- targets: [a, b]\n")
    watched = InventoryFile(str(path), interval=60)
    assert watched.inventory.targets() == ["a", "b"] and not watched.check()  # unchanged: not read again
    path.write_text("- targets: [a, 'b;reboot']\n")
    assert not watched.check()
    assert watched.inventory.targets() == ["a", "b"]
    assert "group 0: target \"b;reboot\" refused" in watched.status()["error"]
    path.write_text("- targets: [a, b, c]\n")
    assert watched.check()
    assert watched.inventory.targets() == ["a", "b", "c"] and watched.status()["error"] is None
    path.unlink()
    assert not watched.check() and "cannot read" in watched.error
    assert watched.inventory.targets() == ["a", "b", "c"]
    path.write_text("- targets: [d]\n")  # back again
    assert watched.check() and watched.inventory.targets() == ["d"]


_targets = st.from_regex(r"[a-z][a-z0-9-]{0,10}[a-z0-9](\.[a-z]{1,5})?(:[1-9][0-9]{0,3})?", fullmatch=True)
_inventories = st.lists(st.builds(Group, st.lists(_targets, max_size=8).map(tuple),
                                  st.dictionaries(st.sampled_from(["env", "site", "__param_module"]),
                                                  st.text(max_size=5))), max_size=6).map(tuple).map(Inventory)


@settings(max_examples=200, deadline=None)
@given(_inventories, st.integers(1, 16))
def test_shards_disjoint_and_complete(inventory, shards):
    parts = [select(inventory, index, shards) for index in range(shards)]
    seen = sorted((target, json.dumps(group.labels, sort_keys=True)) for part in parts for group in part.groups
                  for target in group.targets)
    whole = sorted((target, json.dumps(group.labels, sort_keys=True)) for group in inventory.groups
                   for target in group.targets)
    assert seen == whole  # union is the whole, nothing twice
    owners = {}
    for index, part in enumerate(parts):
        assert all(group.targets for group in part.groups)  # empty groups left out
        for target in part.targets():
            assert owners.setdefault(target, index) == index  # a target's every group on one shard


def test_shard_stable_across_processes():
    targets = [f"host{i}.example.com" for i in range(200)]
    here = [shard(t, n) for t in targets for n in (1, 2, 3, 7, 16, 1024)]
    code = ("import json, sys; from exporter.core.inventory import shard; "
            "print(json.dumps([shard(t, n) for t in json.loads(sys.argv[1]) for n in (1, 2, 3, 7, 16, 1024)]))")
    for seed in ("1", "2"):
        result = subprocess.run([sys.executable, "-c", code, json.dumps(targets)], cwd=REPO, capture_output=True,
                                text=True, timeout=60, env={**os.environ, "PYTHONHASHSEED": seed}, check=True)
        assert json.loads(result.stdout) == here
    assert len(set(shard(t, 2) for t in targets)) == 2  # both shards get some
    assert shard("host0.example.com", 1024) == int.from_bytes(
        __import__("hashlib").sha256(b"host0.example.com").digest()[:8], "big") % 1024


def test_select_rejects_bad_shards():
    for index, shards in ((0, 0), (2, 2), (-1, 2), (0, 1025)):
        with pytest.raises(ValueError):
            select(Inventory(), index, shards)
