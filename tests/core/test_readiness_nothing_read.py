"""A collector with nothing to read neither keeps readiness up nor brings it down (issue 38, item 9).

mountstats counted a missing /proc/self/mountstats (and a host without NFS mounts) as a success, so with every other
default collector failing /readyz still answered 200 "degraded": readiness could never say "failing" with the default
collectors.  Such a run now notes that it had nothing to read (MetricBatch.note_nothing_to_read) and readiness leaves
it out: failing when every other collector fails, ready when it is all there is, and a healthy host without NFS is
ready."""

from __future__ import annotations

import json
import time

import pytest

from exporter.core.collector import Collector, Context
from exporter.core.metrics import MetricSpec
from exporter.core.scheduler import Scheduler
from exporter.core.settings import CollectorSettings
from exporter.systems.mountstats.collector import MountstatsCollector, MountstatsSettings

from ..support import collect


class _Test(Collector):
    description = "test collector"

    def __init__(self, name: str, behaviour: str) -> None:
        super().__init__(CollectorSettings(interval=60, timeout=5), Context())
        self.name, self.behaviour = name, behaviour

    def specs(self):
        return [MetricSpec("test_value", "gauge", "A value.", ())]

    def collect(self, batch):
        if self.behaviour == "fails":
            raise OSError("cannot read")
        if self.behaviour == "nothing":
            batch.note_nothing_to_read("nothing here")
            return
        batch.add("test_value", 1)


def _readiness(*behaviours: str) -> dict:
    scheduler = Scheduler([_Test(f"c{i}", behaviour) for i, behaviour in enumerate(behaviours)])
    scheduler.run_once()
    return scheduler.readiness()


@pytest.mark.parametrize(("behaviours", "status"), [
    (("nothing", "fails", "fails"), "failing"),  # before: "degraded", ready
    (("nothing",), "ready"),
    (("nothing", "works"), "ready"),
    (("nothing", "works", "fails"), "degraded"),
    (("fails",), "failing"),
    (("works", "fails"), "degraded"),
])
def test_a_run_with_nothing_to_read_counts_neither_way(behaviours, status):
    readiness = _readiness(*behaviours)
    assert readiness["status"] == status
    assert readiness["ready"] is (status in ("ready", "degraded"))
    assert "c0" not in readiness["failing_collectors"] or behaviours[0] == "fails"


def test_mountstats_notes_that_it_had_nothing_to_read(tmp_path):
    (tmp_path / "proc" / "self").mkdir(parents=True)
    collector = MountstatsCollector(MountstatsSettings(), Context(procfs=str(tmp_path / "proc")))
    _, batch = collect(collector)
    assert batch.nothing_to_read == f"{tmp_path / 'proc' / 'self' / 'mountstats'} not found"
    (tmp_path / "proc" / "self" / "mountstats").write_text(
        "device proc mounted on /proc with fstype proc\ndevice /dev/sda1 mounted on / with fstype ext4\n")
    _, batch = collect(collector)
    assert batch.nothing_to_read == "no NFS mount"


@pytest.mark.integration
def test_readyz_says_failing_when_every_default_collector_but_mountstats_fails(start_exporter, tmp_path):
    """The default collectors over an empty procfs: host, filesystem and process fail, mountstats finds no
    mountstats file.  Before: 200 "degraded"; now 503 "failing".  And an exporter on this host's /proc is ready."""
    exporter = start_exporter(wait_ready=False, env={"MIDDLEWARE_EXPORTER_PATHS__PROCFS": str(tmp_path)})
    deadline = time.monotonic() + 30
    while json.loads(exporter.get("/readyz")[2])["status"] == "starting":
        assert time.monotonic() < deadline, exporter.log()
        time.sleep(0.1)
    status, _, body = exporter.get("/readyz")
    readiness = json.loads(body)
    assert (status, readiness["status"]) == (503, "failing"), readiness
    assert readiness["failing_collectors"] == ["filesystem", "host", "process"]
    collectors = {c["name"]: c for c in json.loads(exporter.get("/api/v1/collectors")[2])}
    assert collectors["mountstats"]["last_success"] is True  # its run worked; it only had nothing to read

    healthy = start_exporter()  # waits for /readyz 200
    assert json.loads(healthy.get("/readyz")[2])["status"] in ("ready", "degraded")
