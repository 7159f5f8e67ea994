"""NFS client statistics per mount from ``<procfs>/self/mountstats`` (node_exporter's ``mountstats`` collector).

One read of that file per run (the kernel prints counters it keeps in memory: no statfs, no request to the NFS
server, so a hung server cannot block it) and, when there is an NFS mount, one of ``<procfs>/self/mountinfo`` for
the server address.  A host without NFS mounts gets no series at all, and such a run counts neither way for
readiness (``note_nothing_to_read``).  Names are node_exporter's (``node_mountstats_nfs_*`` ->
``middleware_mountstats_nfs_*``) with one more label, ``mountpoint``; see README.md.
"""

from __future__ import annotations

import os
import re

from ...core.collector import Collector, Context
from ...core.metrics import MetricBatch, MetricSpec
from . import DESCRIPTION, NAME
from .metrics import (
    AGE,
    BYTES,
    EVENTS,
    OPS_ERRORS,
    OPS_MAJOR_TIMEOUTS,
    OPS_QUEUE,
    OPS_RECEIVED,
    OPS_REQUEST,
    OPS_REQUESTS,
    OPS_RESPONSE,
    OPS_SENT,
    OPS_TRANSMISSIONS,
    SPECS,
    TRANSPORT,
)
from .settings import MountstatsSettings

MAX_FILE_BYTES = 32 * 1024 * 1024  # about 5,000 NFS mounts; a larger file is refused, not read on
# node_exporter wraps millisecond counters at 2^53 (the integers a float64 holds exactly) before dividing; the same
# here, so both give the same figure and the counter resets (rate() copes) instead of losing precision.
FLOAT64_MANTISSA = 2**53


def _ms(value: int) -> float:
    return (value % FLOAT64_MANTISSA) / 1000.0


class MountstatsCollector(Collector):
    name = NAME
    description = DESCRIPTION
    Settings = MountstatsSettings

    def __init__(self, settings: MountstatsSettings, context: Context) -> None:
        super().__init__(settings, context)
        self.settings: MountstatsSettings = settings
        self._parse = None  # parse.py, imported at the first NFS mount (issue 30: a host without one never loads it)
        self._operations = re.compile(settings.operations)
        self.path = os.path.join(context.procfs, "self", "mountstats")
        self.info_path = os.path.join(context.procfs, "self", "mountinfo")

    def specs(self) -> list[MetricSpec]:
        return list(SPECS)

    def _read(self, path: str) -> str:
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise ValueError(f"{path} is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB; not read")
        return data.decode("utf-8", "replace")

    def collect(self, batch: MetricBatch) -> None:
        try:
            text = self._read(self.path)
        except (FileNotFoundError, NotADirectoryError):
            # no mountstats (not Linux, or a recorded tree without it): no NFS statistics to report, and no proof
            # that the exporter can read anything (readiness leaves the run out)
            batch.note_nothing_to_read(f"{self.path} not found")
            return
        if "fstype nfs" not in text:
            # no NFS mount (every mount has a "device ... with fstype ..." line; nfs and nfs4 alike)
            batch.note_nothing_to_read("no NFS mount")
            return
        if self._parse is None:
            from . import parse

            self._parse = parse
        parsed = self._parse.parse_mountstats(text)
        if parsed.notes:
            batch.note_error("mountstats", f"{self.path}: {parsed.summary()}")
        if not parsed.mounts:
            return
        try:
            infos = self._parse.parse_mountinfo(self._read(self.info_path))
        except (OSError, ValueError) as exc:
            infos = []
            batch.note_error("mountinfo", f"{exc}; mountaddr left empty")
        seen: set[tuple[str, str, str, str]] = set()
        for mount in parsed.mounts:
            labels = {"export": mount.device, "protocol": mount.protocol,
                      "mountaddr": self._parse.mount_address(mount, infos), "mountpoint": mount.mountpoint}
            key = (labels["export"], labels["protocol"], labels["mountaddr"], labels["mountpoint"])
            if key in seen:
                continue  # the same export mounted twice on one mount point: the first entry, as node_exporter
            seen.add(key)
            self._emit(batch, mount, labels)

    def _emit(self, batch: MetricBatch, mount, labels: dict[str, str]) -> None:
        if mount.age is not None:
            AGE.add(batch, mount.age, **labels)
        for key, value in (mount.bytes or {}).items():
            BYTES[key].add(batch, value, **labels)
        for key, value in (mount.events or {}).items():
            spec = EVENTS.get(key)
            if spec is not None:
                spec.add(batch, value, **labels)
        for index, transport in enumerate(mount.transports):
            for key, value in transport.fields.items():
                spec = TRANSPORT.get(key)
                if spec is not None:
                    spec.add(batch, value, **labels, transport=str(index))
        for op in mount.operations:
            if not self._operations.fullmatch(op.name):
                continue
            op_labels = {**labels, "operation": op.name}
            OPS_REQUESTS.add(batch, op.requests, **op_labels)
            OPS_TRANSMISSIONS.add(batch, op.transmissions, **op_labels)
            OPS_MAJOR_TIMEOUTS.add(batch, op.major_timeouts, **op_labels)
            OPS_SENT.add(batch, op.sent_bytes, **op_labels)
            OPS_RECEIVED.add(batch, op.received_bytes, **op_labels)
            OPS_QUEUE.add(batch, _ms(op.queue_ms), **op_labels)
            OPS_RESPONSE.add(batch, _ms(op.response_ms), **op_labels)
            OPS_REQUEST.add(batch, _ms(op.request_ms), **op_labels)
            if op.errors is not None:
                OPS_ERRORS.add(batch, op.errors, **op_labels)
