"""Linux's process events connector: which processes forked, exec'd, renamed themselves or ended since the last pass.

The process table (``procfs.ProcessTable``) re-reads a process's name only when it may have changed: an exec keeps
the pid and the start time and changes only the name, so without this every name is re-read on every pass (about
15 ms of system calls at 2,000 processes), and /proc listed (about 3 ms more).  With a listener subscribed to the
kernel's proc connector (netlink ``NETLINK_CONNECTOR``, ``CN_IDX_PROC``; needs CAP_NET_ADMIN in the initial user
namespace), a pass reads only the names of pids that forked, exec'd or changed their name since the pass before,
checks that the processes a thread of which ended are still there, and does not list /proc.

Whenever the events cannot be trusted the pass reads every name as before: the kernel dropped events (ENOBUFS),
the socket failed, more than :data:`MAX_DIRTY` pids changed between two passes, or the listener is not (yet)
verified.  The listener verifies itself at start: it renames its own thread to the name it already has and waits
for that COMM event with its own pid, which proves both the subscription and that the kernel's pids are the ones
this /proc shows (not so in a child pid namespace).

Hand-written on the stdlib ``socket`` module: no maintained Python library reads the proc connector (PyPI has
none; the known ones are Rust crates and unmaintained gists), and the protocol is four fixed structs.
"""

from __future__ import annotations

import errno
import logging
import os
import select
import socket
import struct
import sys
import threading
import time

log = logging.getLogger(__name__)

NETLINK_CONNECTOR = 11
CN_IDX_PROC = 1
CN_VAL_PROC = 1
NLMSG_DONE = 3
PROC_CN_MCAST_LISTEN = 1
PROC_CN_MCAST_IGNORE = 2
PROC_EVENT_FORK = 0x00000001
PROC_EVENT_EXEC = 0x00000002
PROC_EVENT_COMM = 0x00000200
PROC_EVENT_EXIT = 0x80000000

# struct nlmsghdr (16 bytes) + struct cn_msg (20 bytes), then struct proc_event: what, cpu, timestamp_ns (8 bytes),
# event_data at byte 16 of it; all in the host's byte order.
_NLMSGHDR = struct.Struct("=IHHII")
_CN_MSG = struct.Struct("=IIIIHH")
_EVENT_AT = _NLMSGHDR.size + _CN_MSG.size
_WHAT = struct.Struct("=I")
_DATA_AT = _EVENT_AT + 16
_TWO = struct.Struct("=II")  # exec, comm, exit: process_pid, process_tgid
_FOUR = struct.Struct("=IIII")  # fork: parent_pid, parent_tgid, child_pid, child_tgid

MAX_DIRTY = 4096  # pids changed between two passes above which a pass reads every name (memory stays bounded)
RECV_BYTES = 65536
VERIFY_SECONDS = 2.0
RCVBUF_BYTES = 4 << 20  # room for a few thousand events between two reads


def available(procfs: str) -> bool:
    """Whether the connector may serve this table: Linux and the live /proc (not a recorded tree, not the host's
    /proc mounted elsewhere, whose pids the events might not name)."""
    return sys.platform.startswith("linux") and hasattr(socket, "AF_NETLINK") and os.path.realpath(procfs) == "/proc"


class ProcEvents:
    """The subscription and the set of pids whose name may have changed since the last :meth:`take`.

    A short thread verifies the subscription at start and ends; after that the socket is read only by
    :meth:`take`, which drains every event the kernel queued before the pass (under one lock), so there is no
    wake-up at all between passes.  ``connected`` is True while the events are trusted.
    """

    def __init__(self, max_dirty: int = MAX_DIRTY) -> None:
        self.max_dirty = max_dirty
        self.connected = False
        self.error: str | None = None  # why the listener is not connected (None: not started, or connected)
        self.overflows = 0  # ENOBUFS or more than max_dirty pids between two passes
        self._lock = threading.Lock()
        self._dirty: set[int] = set()
        self._exited: set[int] = set()  # processes a thread of which ended: maybe gone (checked by the pass)
        self._full = True  # the next take() must answer None (read every name)
        # a pass has read every name since the subscription and since events were last lost: the verification
        # then needs no second one (before, a first pass that came before the verification was followed by
        # another full pass, about 26 ms at 2,000 processes, in the first minutes or whenever it came)
        self._fresh = False
        self._sock: socket.socket | None = None
        self._wake_r = self._wake_w = -1
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._verify: tuple[int, int] | None = None  # (tgid, tid) of the COMM event that proves the subscription
        self._verified = threading.Event()

    # ---- lifecycle -------------------------------------------------------------------------------------------
    def start(self) -> bool:
        """Open and subscribe; the thread verifies the subscription.  False (and ``error`` set) when the socket
        cannot be opened or subscribed: no privilege, no connector, another network namespace."""
        try:
            sock = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_CONNECTOR)
        except (OSError, AttributeError) as exc:
            self.error = f"cannot open the process events connector: {exc}"
            return False
        try:
            try:  # root (CAP_NET_ADMIN) may go past net.core.rmem_max
                sock.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_RCVBUFFORCE", 33), RCVBUF_BYTES)
            except OSError:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RCVBUF_BYTES)  # capped by rmem_max
            sock.bind((0, CN_IDX_PROC))  # port id 0: the kernel picks one
            self._send(sock, PROC_CN_MCAST_LISTEN)
        except OSError as exc:
            sock.close()
            self.error = f"cannot subscribe to process events (CAP_NET_ADMIN needed): {exc}"
            return False
        self._sock = sock
        self._wake_r, self._wake_w = os.pipe()
        self._thread = threading.Thread(target=self._run, name="proc-events", daemon=True)
        self._thread.start()
        return True

    def wait_verified(self, timeout: float) -> bool:
        """For the tests: wait until the subscription is verified (or has failed)."""
        self._verified.wait(timeout)
        return self.connected

    def stop(self) -> None:
        self._stopping = True
        if self._wake_w >= 0:
            try:
                os.write(self._wake_w, b"x")
            except OSError:
                pass
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(2.0)
        with self._lock:
            self.connected = False
            self._close()

    def _close(self) -> None:
        if self._sock is not None:
            try:
                self._send(self._sock, PROC_CN_MCAST_IGNORE)
            except OSError:
                pass
            self._sock.close()
            self._sock = None
        for fd in (self._wake_r, self._wake_w):
            if fd >= 0:
                os.close(fd)
        self._wake_r = self._wake_w = -1

    @staticmethod
    def _send(sock: socket.socket, op: int) -> None:
        payload = struct.pack("=I", op)
        cn = _CN_MSG.pack(CN_IDX_PROC, CN_VAL_PROC, 0, 0, len(payload), 0)
        header = _NLMSGHDR.pack(_NLMSGHDR.size + len(cn) + len(payload), NLMSG_DONE, 0, 0, 0)
        sock.sendto(header + cn + payload, (0, 0))  # to the kernel

    # ---- what a pass asks ------------------------------------------------------------------------------------
    def take(self) -> set[int] | None:
        """The pids whose name may have changed since the last call (drained from the socket first); None: read
        every name (not connected, events lost, too many changes)."""
        changes = self.take_changes()
        return None if changes is None else changes[0]

    def take_changes(self) -> tuple[set[int], set[int]] | None:
        """``(changed, exited)`` since the last call: the pids whose name may have changed (new, exec'd, renamed)
        and the processes one of whose threads ended (gone, or only that thread: the pass checks); None: list
        /proc and read every name (not connected, events lost, too many changes)."""
        with self._lock:
            if self.connected:
                self._drain()
            if not self.connected or self._full:
                self._full = not self.connected
                self._fresh = True
                self._drop_pending()
                return None
            dirty, self._dirty = self._dirty, set()
            exited, self._exited = self._exited, set()
            return dirty, exited

    def _drop_pending(self) -> None:
        """Forget the pids noted since the last pass (a full pass reads every name anyway); the lock is held."""
        self._dirty, self._exited = set(), set()

    def force_full(self) -> None:
        """The next take() answers None (the periodic full pass)."""
        with self._lock:
            self._full = True
            self._drop_pending()

    # ---- the socket ------------------------------------------------------------------------------------------
    def _run(self) -> None:
        """Verify the subscription, then end: nothing listens between passes.  The kernel queues the events in the
        socket's receive buffer and the next pass drains them (:meth:`take`), so an exporter nobody scrapes spends
        nothing on them; a buffer that overflowed meanwhile (ENOBUFS) means one pass that reads every name."""
        try:
            self._verify_subscription()
        except Exception as exc:  # noqa: BLE001 - a broken subscription means full passes, never a crash
            self._fail(f"process events listener failed: {exc}")
        finally:
            self._verified.set()
            if not self.connected and not self._stopping:  # failed: nothing will drain it
                with self._lock:
                    self._full = True
                    if self._sock is not None:
                        self._sock.close()
                        self._sock = None

    def _verify_subscription(self) -> None:
        tid = threading.get_native_id()
        path = f"/proc/self/task/{tid}/comm"
        with open(path, "rb") as handle:
            name = handle.read().rstrip(b"\n")
        self._verify = (os.getpid(), tid)
        with open(path, "wb") as handle:  # the same name again: only the COMM event matters
            handle.write(name)
        deadline = time.monotonic() + VERIFY_SECONDS
        while not self.connected:
            left = deadline - time.monotonic()
            if left <= 0 or self._stopping:
                self._fail("process events are not delivered here (another pid or network namespace?)")
                return
            ready, _, _ = select.select([self._sock, self._wake_r], [], [], left)
            if self._sock in ready:
                with self._lock:
                    self._drain()
        self._verified.set()
        log.info("process events connector: names are re-read only for processes that forked, exec'd or renamed")

    def _fail(self, message: str) -> None:
        if self._stopping or (not self.connected and self.error == message):
            return
        log.warning("%s; every pass re-reads every process name", message)
        with self._lock:
            self.connected = False
            self.error = message
            self._full = True

    def _drain(self) -> None:
        """Read every queued message without blocking (the lock is held)."""
        sock = self._sock
        if sock is None:
            return
        while True:
            try:
                data = sock.recv(RECV_BYTES, socket.MSG_DONTWAIT)
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                if exc.errno == errno.ENOBUFS:  # the kernel dropped events: this pass reads every name
                    self.overflows += 1
                    self._full = True
                    self._fresh = False
                    self._drop_pending()
                    continue
                self.connected = False
                self.error = f"process events socket failed: {exc}"
                self._full = True
                log.warning("%s; every pass re-reads every process name", self.error)
                return
            self.feed(data)

    def feed(self, data: bytes) -> None:
        """Apply one datagram (one or more netlink messages) to the dirty set; the lock is held."""
        offset = 0
        while offset + _DATA_AT <= len(data):
            length = _NLMSGHDR.unpack_from(data, offset)[0]
            if length < _NLMSGHDR.size:
                break
            self._event(data, offset)
            offset += (length + 3) & ~3
        if len(self._dirty) > self.max_dirty or len(self._exited) > self.max_dirty:
            self.overflows += 1
            self._full = True
            self._fresh = False
            self._drop_pending()

    def _event(self, data: bytes, at: int) -> None:
        what = _WHAT.unpack_from(data, at + _EVENT_AT)[0]
        base = at + _DATA_AT
        if what == PROC_EVENT_FORK:
            if base + _FOUR.size <= len(data):
                _, _, pid, tgid = _FOUR.unpack_from(data, base)
                if pid == tgid:  # a new process (a new thread keeps its process's name)
                    self._dirty.add(tgid)
        elif what in (PROC_EVENT_EXEC, PROC_EVENT_COMM, PROC_EVENT_EXIT):
            if base + _TWO.size > len(data):
                return
            pid, tgid = _TWO.unpack_from(data, base)
            if what == PROC_EVENT_EXEC:
                self._dirty.add(tgid)
            elif what == PROC_EVENT_COMM:
                if self._verify is not None and (tgid, pid) == self._verify and not self.connected:
                    self._verify = None
                    self.connected = True
                    # events before the subscription are unknown: one full pass first, unless a pass has read
                    # every name since the subscription (what changed after it is in the dirty set)
                    self._full = not self._fresh
                    self.error = None
                if pid == tgid:  # /proc/<pid>/comm is the main thread's name
                    self._dirty.add(tgid)
            else:
                # A thread ended; the process may be gone (the pass checks that /proc/<tgid> is still there: its
                # main thread may end before the others, and the last thread to end need not be the main one)
                self._exited.add(tgid)
