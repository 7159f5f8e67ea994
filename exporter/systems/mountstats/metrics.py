"""The mountstats collector's metrics: node_exporter's ``node_mountstats_nfs_*`` under our prefix, with one more
label, ``mountpoint`` (two mounts of one export stay two series).  Declarations only (``collector.py`` adds the
samples)."""

from __future__ import annotations

from ...core.metrics import NAMESPACE, MetricSpec

P = f"{NAMESPACE}_mountstats_nfs"
NE = "node_exporter: node_mountstats_nfs_"
MOUNT = ("export", "protocol", "mountaddr", "mountpoint")
OP = (*MOUNT, "operation")
XPRT = (*MOUNT, "transport")


def _origin(name: str) -> str:
    return f"{NE}{name} (plus our `mountpoint` label: two mounts of one export stay two series)"


def _spec(name: str, kind: str, text: str, labels: tuple[str, ...] = MOUNT) -> MetricSpec:
    return MetricSpec(f"{P}_{name}", kind, text, labels, _origin(name))


AGE = _spec("age_seconds_total", "counter", "Seconds since the NFS mount was made (age:).")
BYTES = {
    "read": _spec("read_bytes_total", "counter", "Bytes read by applications with read() (bytes: field 1)."),
    "write": _spec("write_bytes_total", "counter", "Bytes written by applications with write() (bytes: field 2)."),
    "direct_read": _spec("direct_read_bytes_total", "counter", "Bytes read with O_DIRECT (bytes: field 3)."),
    "direct_write": _spec("direct_write_bytes_total", "counter", "Bytes written with O_DIRECT (bytes: field 4)."),
    "total_read": _spec("total_read_bytes_total", "counter", "Bytes read from the NFS server in all, by READ "
                        "requests (bytes: field 5)."),
    "total_write": _spec("total_write_bytes_total", "counter", "Bytes written to the NFS server in all, by WRITE "
                         "requests (bytes: field 6)."),
    "read_pages": _spec("read_pages_total", "counter", "Pages read through mmap() or readpage(s) (bytes: field 7)."),
    "write_pages": _spec("write_pages_total", "counter", "Pages written through mmap() or writepage(s) "
                         "(bytes: field 8)."),
}
_EVENT_HELP = {
    "inode_revalidate": "Times cached inode attributes were revalidated from the server.",
    "dnode_revalidate": "Times cached directory entries were revalidated from the server.",
    "data_invalidate": "Times an inode's data cache was invalidated.",
    "attribute_invalidate": "Times cached inode attributes were invalidated.",
    "vfs_open": "Times files or directories were opened.",
    "vfs_lookup": "Directory lookups.",
    "vfs_access": "Permission checks (access()).",
    "vfs_update_page": "Page updates (and potential writes).",
    "vfs_read_page": "Single pages read (readpage()).",
    "vfs_read_pages": "Groups of pages read (readpages()).",
    "vfs_write_page": "Single pages written (writepage()).",
    "vfs_write_pages": "Groups of pages written (writepages()).",
    "vfs_getdents": "Directory reads (getdents()).",
    "vfs_setattr": "Attribute changes (setattr()).",
    "vfs_flush": "Pending writes flushed to the server (close of a written file).",
    "vfs_fsync": "fsync() calls on files and directories.",
    "vfs_lock": "Lock attempts on files.",
    "vfs_file_release": "Files closed and released.",
    "truncation": "Files truncated.",
    "write_extension": "Writes that extended a file beyond its end.",
    "silly_rename": "Files removed while still open (renamed to .nfsXXXX).",
    "short_read": "Reads where the server returned less data than asked.",
    "short_write": "Writes where the server wrote less data than asked.",
    "jukebox_delay": "Times the server answered EJUKEBOX (data on offline storage; the client retries later).",
    "pnfs_read": "pNFS reads (NFS v4.1+).",
    "pnfs_write": "pNFS writes (NFS v4.1+).",
}
EVENTS = {key: _spec(f"event_{key}_total", "counter", f"{text} (events:)") for key, text in _EVENT_HELP.items()}
TRANSPORT = {  # xprt: field -> spec; per xprt: line (several with nconnect), label `transport` = its index
    "bind": _spec("transport_bind_total", "counter", "Times the client bound a new connection to the server.",
                  XPRT),
    "connect": _spec("transport_connect_total", "counter", "Times the client connected to the server (TCP, RDMA; "
                     "absent for UDP).", XPRT),
    "idle_time": _spec("transport_idle_time_seconds", "gauge", "Seconds since the transport last carried an RPC "
                       "(0 while not connected; absent for UDP).", XPRT),
    "sends": _spec("transport_sends_total", "counter", "RPC requests sent to the server.", XPRT),
    "receives": _spec("transport_receives_total", "counter", "RPC replies received from the server.", XPRT),
    "bad_xids": _spec("transport_bad_transaction_ids_total", "counter", "Replies with a transaction id the client "
                      "did not know.", XPRT),
    "backlog": _spec("transport_backlog_queue_total", "counter", "Sum of the backlog queue length at each request "
                     "(divide its rate by the sends' rate for the mean).", XPRT),
    "max_slots": _spec("transport_maximum_rpc_slots", "gauge", "Most RPC slots in use at once (statvers 1.1; "
                       "absent over RDMA, where node_exporter shows 0).", XPRT),
    "sending_queue": _spec("transport_sending_queue_total", "counter", "Sum of the sending queue length at each "
                           "request (statvers 1.1; absent over RDMA).", XPRT),
    "pending_queue": _spec("transport_pending_queue_total", "counter", "Sum of the pending queue length at each "
                           "request (statvers 1.1; absent over RDMA).", XPRT),
}
OPS_REQUESTS = _spec("operations_requests_total", "counter", "Requests of the operation (per-op field 1).", OP)
OPS_TRANSMISSIONS = _spec("operations_transmissions_total", "counter", "Transmissions of the operation, retries "
                          "included (per-op field 2).", OP)
OPS_MAJOR_TIMEOUTS = _spec("operations_major_timeouts_total", "counter", "Major timeouts of the operation (the "
                           "client gave up waiting and logged 'server not responding'; per-op field 3).", OP)
OPS_SENT = _spec("operations_sent_bytes_total", "counter", "Bytes sent for the operation, RPC headers included "
                 "(per-op field 4).", OP)
OPS_RECEIVED = _spec("operations_received_bytes_total", "counter", "Bytes received for the operation, RPC headers "
                     "included (per-op field 5).", OP)
OPS_QUEUE = _spec("operations_queue_time_seconds_total", "counter", "Seconds the operation's requests waited "
                  "before being sent (per-op field 6, milliseconds).", OP)
OPS_RESPONSE = _spec("operations_response_time_seconds_total", "counter", "Seconds from sending to the reply (RTT) "
                     "over the operation's requests (per-op field 7, milliseconds); rate() of it over rate() of "
                     "requests is the mean RTT.", OP)
OPS_REQUEST = _spec("operations_request_time_seconds_total", "counter", "Seconds from queueing to the end of the "
                    "reply over the operation's requests (per-op field 8, milliseconds).", OP)
OPS_ERRORS = MetricSpec(f"{P}_operations_errors_total", "counter", "Requests of the operation that ended with an "
                        "error status (per-op field 9; absent on kernels that print 8 fields).", OP,
                        "ours: procfs parses this field, node_exporter does not export it")
SPECS = [AGE, *BYTES.values(), *EVENTS.values(), *TRANSPORT.values(), OPS_REQUESTS, OPS_TRANSMISSIONS,
         OPS_MAJOR_TIMEOUTS, OPS_SENT, OPS_RECEIVED, OPS_QUEUE, OPS_RESPONSE, OPS_REQUEST, OPS_ERRORS]
