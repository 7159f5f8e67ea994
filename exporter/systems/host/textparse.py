"""Parsers for the text of ``sar``, ``vmstat``, ``iostat`` and ``uptime`` as HP-UX, Solaris, AIX and Linux (sysstat,
procps) print it: pure functions from text to :class:`Reading` (shares, rates and times in base units).

Columns are found by their header names, never by position alone: a data row counts only when it has as many
fields as its header and every non-label field is a number.  ``sar`` with several options prints its headers
stacked (SysV: "all headers are printed together") or one block per option (sysstat); both are read by keeping the
latest run of header lines and walking it in order for the rows of each interval.  Figures a tool does not print
stay absent (``None`` / missing keys), never 0.  Hand-written because no maintained library reads these four
dialects (jc parses Linux's only).

Robustness: no regular expressions, at most :data:`MAX_LINES` lines of at most :data:`MAX_LINE` characters and
:data:`MAX_TOKENS` fields each; a line that fits nothing is skipped, so one bad line loses nothing else; no input
makes these functions raise.  What matters of a long output is its top (the banner, sar's stacked headers) and its
end (the last report, sar's Average block), so a longer output is read as its first :data:`HEAD_LINES` and its
last :data:`TAIL_LINES` lines; the intervals in between are skipped, never taken for the last one.  When the end
kept does not hold a whole last report (or Average block), the reading says so in ``problem`` and the back-end
fails the source with that text instead of reporting a middle interval.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from itertools import islice

from ...machine.numbers import decimal
from ...machine.textlines import iter_lines

# How much of a long output is parsed: enough for thousands of devices in the last report, and few enough that a
# 4 MiB output (the runner's cap) parses within bench/fuzz.py's 100 ms budget.
HEAD_LINES = 500  # the top of a long output: the banner and the headers sar prints once
TAIL_LINES = 5_500  # its end: the last reports and the Average block
MAX_LINES = HEAD_LINES + TAIL_LINES
MAX_LINE = 512
MAX_TOKENS = 48
MAX_NUMBER = 32  # characters of one number
MAX_SECTIONS = 32  # stacked sar headers kept (sar -A prints about 15): rows are matched against these in turn

PLATFORMS = ("hpux", "solaris", "aix", "linux")
BANNERS = {"HP-UX": "hpux", "SunOS": "solaris", "AIX": "aix", "Linux": "linux"}

# Column names that hold a name, not a number (the device, the CPU, ...).
LABEL_COLUMNS = frozenset({"device", "DEV", "Device", "Device:", "Disks:", "CPU", "cpu", "IFACE", "INTR", "TTY",
                           "FILESYSTEM", "MOUNTPOINT", "ctlr", "pset"})
CPU_MODES = {"%usr": "user", "%user": "user", "%nice": "nice", "%sys": "system", "%system": "system",
             "%wio": "iowait", "%iowait": "iowait", "%steal": "steal", "%idle": "idle", "%irq": "irq",
             "%soft": "softirq", "%guest": "guest", "%gnice": "guest_nice"}
CPU_ALL = frozenset({"all", "system"})  # the all-CPU row of Linux sar -P / HP-UX sar -M


@dataclass
class Reading:
    """What one tool's output says: CPU shares (0-1) by mode, the page-scan rate (pages/s) and per-device disk
    figures (``service_time`` and ``await`` in seconds, ``util`` 0-1, ``iops`` transfers/s, ``queue`` requests)."""

    platform: str | None = None
    release: str | None = None
    cpu: dict[str, float] = field(default_factory=dict)
    page_scan_rate: float | None = None
    disks: dict[str, dict[str, float]] = field(default_factory=dict)
    load: tuple[float, float, float] | None = None  # uptime's 1-, 5- and 15-minute load averages
    run_queue: float | None = None  # sar -q runq-sz: threads waiting for a CPU while the queue was occupied
    run_queue_occupied: float | None = None  # sar -q %runocc / 100: share of the interval it was occupied
    memory: dict[str, float] = field(default_factory=dict)  # bytes: total, free, available, buffers, cached,
    # active_virtual (AIX/HP-UX vmstat avm)
    swap: dict[str, float] = field(default_factory=dict)  # paging space on disk, bytes: total, used
    virtual_swap: dict[str, float] = field(default_factory=dict)  # what reservations draw on (HP-UX swapinfo total,
    # Solaris swap -s, sar -r freeswap, vmstat swap), bytes: total, available
    lpar: dict[str, float] = field(default_factory=dict)  # AIX lparstat: entitled_cores, physical_cores (cores),
    # entitlement_consumed (share, above 1 when an uncapped LPAR borrows)
    lpar_info: dict[str, str] = field(default_factory=dict)  # lparstat's type, mode, smt
    samples: int = 0  # data rows (vmstat) or reports (iostat) seen
    since_boot_only: bool = False  # vmstat/iostat printed only their first report: averages since boot
    since_boot_disks: set[str] = field(default_factory=set)  # devices only in iostat's first (since-boot) report
    sections: list[str] = field(default_factory=list)  # what was recognised, for error messages
    problem: str | None = None  # why the figures cannot be trusted (a long output cut where it matters)


# ---- small helpers -----------------------------------------------------------------------------------------
@dataclass
class _Text:
    """The lines read of an output: all of them, or the first HEAD_LINES and the last TAIL_LINES with ``join``
    the index where the tail begins (the lines in between were skipped)."""

    lines: list[str]
    join: int | None = None

    def dropped(self, tool: str, what: str) -> str:
        return (f"{tool}: the output has more than {MAX_LINES:,} lines and {what} does not begin in the last "
                f"{TAIL_LINES:,} read; the figures would come from an interval in the middle: use a smaller count "
                "(or fewer devices)")


def _lines(text: object) -> _Text:
    if not isinstance(text, str):
        return _Text([])
    lines = list(islice(iter_lines(text), MAX_LINES + 1))
    if len(lines) <= MAX_LINES:
        return _Text([line[:MAX_LINE] for line in lines])
    # The tail starts after the (TAIL_LINES + 1)-th newline from the end, found without splitting the middle; the
    # other line breaks str.splitlines knows (\r, \x0b, ...) only add lines, so it holds at least TAIL_LINES.
    start = len(text)
    for _ in range(TAIL_LINES + 1):
        start = text.rfind("\n", 0, start)
        if start < 0:
            break
    tail = text[start + 1:].splitlines()[-TAIL_LINES:]
    return _Text([line[:MAX_LINE] for line in lines[:HEAD_LINES] + tail], join=HEAD_LINES)


def _tokens(line: str) -> list[str] | None:
    toks = line.split()
    return toks if len(toks) <= MAX_TOKENS else None


def number(token: str) -> float | None:
    """A plain decimal number (``-0``, ``+12``, ``0.53``, ``.5``); None for anything else (no ``nan``, ``1e5``,
    ``1_0``): the strict reader (machine/numbers.py) with the signs and bare points sar, vmstat and iostat print."""
    return None if not token or len(token) > MAX_NUMBER else _number(token)


@lru_cache(maxsize=4096)  # the same few spellings ("0.0", "0", "100") fill most columns: at most 4,096 x 32 chars
def _number(token: str) -> float | None:
    return decimal(token, "+-", bare_point=True, max_length=MAX_NUMBER)


def _is_time(token: str) -> bool:
    if not 4 <= len(token) <= 8 or token[-3] != ":" or not token.isascii():
        return False
    parts = token.split(":")
    return len(parts) in (2, 3) and "".join(parts).isdigit() and len(parts[0]) <= 2 and len(parts[1]) == 2


def _split_prefix(toks: list[str]) -> tuple[str | None, list[str]]:
    """('time' | 'avg' | None, the fields after a leading time stamp (with AM/PM) or "Average")."""
    if toks and _is_time(toks[0]):
        rest = toks[1:]
        if rest and rest[0].upper() in ("AM", "PM"):
            rest = rest[1:]
        return "time", rest
    if toks and toks[0].rstrip(":") in ("Average", "Summary"):
        return "avg", toks[1:]
    return None, toks


def _banner(toks: list[str]) -> tuple[str, str | None] | None:
    """(platform, release) from the first line sar and iostat print ("HP-UX host B.11.23 U ia64 04/01/11")."""
    if len(toks) < 3 or toks[0] not in BANNERS:
        return None
    platform = BANNERS[toks[0]]
    if platform == "linux":
        return platform, toks[1]
    if platform == "aix" and len(toks) >= 4:
        return platform, f"{toks[3]}.{toks[2]}"  # "AIX konark 3 4 ..." is AIX 4.3
    return platform, toks[2]


def _solaris_release_before_10(release: str | None) -> bool:
    """SunOS 5.x before 5.10: the releases that still measured wait I/O."""
    if not release or not release.startswith("5."):
        return False
    minor = release[2:].split(".")[0]
    return minor.isascii() and minor.isdigit() and int(minor) < 10  # "²".isdigit() is true, int("²") raises


def _drop_unmeasured(reading: Reading) -> Reading:
    # Solaris 10 and later no longer measure wait I/O: %wio / wt are always 0 there, so they are left out.
    if reading.platform == "solaris" and not _solaris_release_before_10(reading.release):
        reading.cpu.pop("iowait", None)
    return reading


def _is_header(rest: list[str]) -> bool:
    if not rest or any(number(t) is not None for t in rest):
        return False
    return any(("%" in t or "/" in t or t in LABEL_COLUMNS) for t in rest) or rest[0] in _PLAIN_HEADERS


# sar headers without a % or / in them: sysstat -q, SysV -r ("freemem freeswap").
_PLAIN_HEADERS = frozenset({"runq-sz", "freemem"})

# SysV sar -q leaves the swap-queue columns blank while that queue was empty ("1.3  38" under four names).
_SHORT_ROWS = {("runq-sz", "%runocc"): 2}


@dataclass
class _Section:
    columns: list[str]
    labels: frozenset[int]
    fewest: int = 0  # the fewest fields a row may have (the leading columns); 0: all of them

    @classmethod
    def of(cls, columns: list[str]) -> "_Section":
        return cls(columns, frozenset(i for i, c in enumerate(columns) if c in LABEL_COLUMNS),
                   _SHORT_ROWS.get(tuple(columns[:2]), 0))

    @property
    def multi(self) -> bool:
        return bool(self.labels)

    @cached_property
    def widths(self) -> frozenset[int]:
        return frozenset(range(self.fewest or len(self.columns), len(self.columns) + 1))

    def fit(self, rest: list[str]) -> dict[str, float | str] | None:
        if len(rest) not in self.widths:
            return None
        row: dict[str, float | str] = {}
        for i, (name, token) in enumerate(zip(self.columns, rest, strict=False)):
            if i in self.labels:
                if number(token) is not None and not name.lower().startswith("cpu"):
                    return None
                row.setdefault(name, token)
                continue
            value = number(token)
            if value is None:
                return None
            row.setdefault(name, value)  # a repeated column name keeps its first value
        return row


def _f(row: dict[str, float | str], *names: str) -> float | None:
    for name in names:
        value = row.get(name)
        if isinstance(value, float):
            return value
    return None


def _label(row: dict[str, float | str], *names: str) -> str | None:
    for name in names:
        value = row.get(name)
        if isinstance(value, str):
            return value
    return None


def _cpu_from_row(row: dict[str, float | str]) -> dict[str, float]:
    if "%idle" not in row:
        return {}  # every CPU row has it (checked first: most rows are disk rows)
    cpu = _label(row, "CPU", "cpu")
    if cpu is not None and cpu not in CPU_ALL:
        return {}
    shares: dict[str, float] = {}
    for column, mode in CPU_MODES.items():
        value = _f(row, column)
        if value is None or mode in shares:
            continue
        if not 0 <= value <= 100:
            return {}  # not a CPU row after all: all of it or nothing
        shares[mode] = value / 100
    return shares if "idle" in shares else {}


def _disk_from_row(row: dict[str, float | str]) -> tuple[str, dict[str, float]] | None:
    device = _label(row, "device", "DEV", "Device", "Device:", "Disks:")
    if device is None:
        return None
    disk: dict[str, float] = {}
    util = _f(row, "%busy", "%util", "%b", "%tm_act")
    if util is not None:
        disk["util"] = util / 100
    iops = _f(row, "r+w/s", "tps")
    reads, writes = _f(row, "r/s"), _f(row, "w/s")
    if iops is None and reads is not None and writes is not None:
        iops = reads + writes
    if iops is not None:
        disk["iops"] = iops
    queue = _f(row, "avque", "aqu-sz", "avgqu-sz")
    wait, actv = _f(row, "wait"), _f(row, "actv")
    if queue is None and wait is not None and actv is not None:
        queue = wait + actv  # Solaris iostat -x: queued + active
    if queue is not None:
        disk["queue"] = queue
    service = _f(row, "avserv", "asvc_t", "svctm")  # milliseconds; svctm: sysstat before 12.x
    if service is not None:
        disk["service_time"] = service / 1000
    await_ms = _f(row, "await", "svc_t")  # svc_t of Solaris iostat -x (without -n) is the response time
    avwait, wsvc = _f(row, "avwait"), _f(row, "wsvc_t")
    if await_ms is None and service is not None and (avwait is not None or wsvc is not None):
        await_ms = (avwait if avwait is not None else wsvc or 0.0) + service
    if await_ms is None:
        r_await, w_await = _f(row, "r_await"), _f(row, "w_await")
        if None not in (r_await, w_await, reads, writes) and reads + writes > 0:  # type: ignore[operator]
            await_ms = (reads * r_await + writes * w_await) / (reads + writes)  # type: ignore[operator]
    if await_ms is not None:
        disk["await"] = await_ms / 1000
    return (device, disk) if disk else None


# ---- sar ------------------------------------------------------------------------------------------------------
def parse_sar(text: object, platform: str | None = None) -> Reading:
    """``sar -u``, ``-d``, ``-g`` (HP-UX, Solaris, AIX) and sysstat's ``-u``, ``-d``, ``-B``: each device's
    Average row where sar printed one, else its last row; the same for the CPU and paging rows.  Of an output
    longer than MAX_LINES the Average block must begin in the last TAIL_LINES (else ``problem`` says so)."""
    reading = Reading(platform=platform)
    read = _lines(text)
    sections: list[_Section] = []
    cursor = 0
    after_header = in_average = skipping = False
    widths: set[int] = set()
    cpu: dict[bool, dict[str, float]] = {}
    scans: dict[bool, float] = {}
    queues: dict[bool, tuple[float, float | None, tuple[float, float, float] | None]] = {}
    disks: dict[str, dict[bool, dict[str, float]]] = {}
    seen: set[str] = set()
    average_from: int | None = None  # where the last Average block began
    memory: dict[bool, tuple[dict[str, float], dict[str, float], dict[str, float]]] = {}
    page_size: int | None = None  # Solaris sar -r counts freemem in pages: 8 KiB on SPARC, 4 KiB on x86
    for index, line in enumerate(read.lines):
        if index == read.join:  # the middle was skipped: what the head said of the intervals is stale
            memory.pop(False, None)
            cpu.pop(False, None)
            scans.pop(False, None)
            queues.pop(False, None)
            for rows in disks.values():
                rows.pop(False, None)
            cursor, after_header, in_average, skipping = 0, False, False, True
        toks = _tokens(line)
        if not toks:
            continue
        banner = _banner(toks)
        if banner is not None:
            if reading.release is None:
                reading.platform = reading.platform or banner[0]
                reading.release = banner[1]
            if banner[0] == "solaris":
                page_size = _solaris_page_size(toks) or page_size
            continue
        kind, rest = _split_prefix(toks)
        if _is_header(rest):
            if not after_header:
                sections = []
            if len(sections) < MAX_SECTIONS and (not sections or sections[-1].columns != rest):
                sections.append(_Section.of(rest))
                widths = set().union(*(sec.widths for sec in sections))
            after_header, cursor, skipping = True, 0, False
            continue
        after_header = False
        if kind is not None:
            if kind == "avg" and not in_average:
                average_from = index
            cursor, in_average, skipping = 0, kind == "avg", False
        if skipping or not rest or len(rest) not in widths:
            continue  # (skipping: rows cut from the interval they continue, just after the join)
        average = in_average  # rows without a time stamp continue the block above them
        for i in range(cursor, len(sections)):
            row = sections[i].fit(rest)
            if row is None:
                continue
            cursor = i if sections[i].multi else i + 1
            if not _take_sar_memory(row, average, memory, page_size, seen):
                _take_sar_row(row, average, cpu, scans, disks, seen, queues)
            break
    for is_avg in (False, True):  # Average rows win over interval rows
        reading.cpu.update(cpu.get(is_avg, {}))
        if is_avg in scans:
            reading.page_scan_rate = scans[is_avg]
        if is_avg in queues:
            reading.run_queue, reading.run_queue_occupied, reading.load = queues[is_avg]
        if is_avg in memory:
            reading.memory, reading.swap, reading.virtual_swap = (dict(d) for d in memory[is_avg])
    for device, rows in disks.items():
        figures = rows.get(True) or rows.get(False)
        if figures:
            reading.disks[device] = figures
    reading.sections = sorted(seen)
    if read.join is not None and (average_from is None or average_from < read.join):
        reading.problem = read.dropped("sar", "its Average block")
    return _drop_unmeasured(reading)


def _solaris_page_size(banner: list[str]) -> int | None:
    """The page size of a Solaris banner's machine ("SunOS host 5.10 Generic sun4u 03/18/2004"): 8 KiB on
    SPARC (sun4u, sun4v), 4 KiB on x86 (i86pc)."""
    for tok in banner[2:]:
        if tok.startswith("sun4"):
            return 8192
        if tok == "i86pc":
            return 4096
    return None


def _take_sar_memory(row, average: bool, memory, page_size: int | None, seen: set[str]) -> bool:
    """sar -r (SysV: freemem in pages, freeswap in 512-byte blocks; sysstat: kbmemfree, kbavail, kbbuffers in
    KiB) and sysstat's sar -S (kbswpfree, kbswpused); True if the row was one of them.  A sysstat -r row and a
    -S row of the same interval add to one reading."""
    names = ("freemem", "freeswap", "kbmemfree", "kbswpfree")
    if not any(isinstance(row.get(n), float) for n in names):
        return False
    mem, swap, virtual = memory.setdefault(average, ({}, {}, {}))
    freemem, freeswap = _f(row, "freemem"), _f(row, "freeswap")
    if freemem is not None and page_size is not None:
        mem["free"] = freemem * page_size
    if freeswap is not None:
        virtual["available"] = freeswap * 512
    for column, figure in (("kbmemfree", "free"), ("kbavail", "available"), ("kbbuffers", "buffers")):
        value = _f(row, column)
        if value is not None:
            mem[figure] = value * 1024
    swpfree, swpused = _f(row, "kbswpfree"), _f(row, "kbswpused")
    if swpfree is not None and swpused is not None:
        swap.update(total=(swpfree + swpused) * 1024, used=swpused * 1024)
    seen.add("memory")
    return True


def _take_sar_row(row, average, cpu, scans, disks, seen, queues) -> None:
    runq = _f(row, "runq-sz")
    if runq is not None:  # sar -q: SysV prints %runocc (a share), sysstat the load averages ldavg-1/5/15
        occupied = _f(row, "%runocc")
        loads = [_f(row, f"ldavg-{m}") for m in (1, 5, 15)]
        load = (loads[0], loads[1], loads[2]) if None not in loads else None
        queues[average] = (runq, occupied / 100 if occupied is not None and 0 <= occupied <= 100 else None, load)
        seen.add("queue")
        return
    shares = _cpu_from_row(row)
    if shares:
        cpu[average] = shares
        seen.add("cpu")
        return
    if _disk_row(row, average, disks):
        seen.add("disk")
        return
    pgscan = _f(row, "pgscan/s")
    kswapd, direct = _f(row, "pgscank/s"), _f(row, "pgscand/s")
    if pgscan is None and kswapd is not None and direct is not None:
        pgscan = kswapd + direct
    if pgscan is not None:
        scans[average] = pgscan
        seen.add("paging")


def _disk_row(row, average: bool, disks) -> bool:
    disk = _disk_from_row(row)
    if disk is None:
        return False
    device, figures = disk
    disks.setdefault(device, {})[average] = figures  # an Average row apart; interval rows replace each other
    return True


# ---- vmstat ---------------------------------------------------------------------------------------------------
def _vmstat_platform(header: list[str]) -> str | None:
    names = set(header)
    if "swpd" in names:
        return "linux"
    if "avm" in names and "fre" in names:
        return "aix"
    if "avm" in names and "at" in names:
        return "hpux"
    if "swap" in names and "mf" in names:
        return "solaris"
    return None


def _vmstat_cpu_index(header: list[str]) -> int | None:
    """Where ``us sy id`` starts: ``sy`` also heads the system-call column of faults, so the CPU block is found
    as the three names in a row."""
    for i in range(len(header) - 2):
        if header[i:i + 3] == ["us", "sy", "id"]:
            return i
    return None


def parse_vmstat(text: object, platform: str | None = None) -> Reading:
    """vmstat of the four platforms: the last data row (the first is the average since boot), CPU shares
    (us, sy, id and wa where printed) and the scan rate ``sr`` (pages/s; Linux's vmstat has none)."""
    reading = Reading(platform=platform)
    read = _lines(text)
    header: list[str] | None = None
    last: list[float] | None = None
    last_header: list[str] | None = None
    configured: float | None = None  # AIX: "System configuration: lcpu=16 mem=25920MB"
    for index, line in enumerate(read.lines):
        if index == read.join:
            last = last_header = None  # a row of the head is a middle interval
        toks = _tokens(line)
        if not toks:
            continue
        if toks[:2] == ["System", "configuration:"]:
            for pair in toks[2:]:
                if pair.startswith("mem=") and pair.endswith("MB"):
                    mib = number(pair[4:-2])
                    configured = mib * 1024 * 1024 if mib is not None and mib > 0 else None
            continue
        if all(number(t) is None for t in toks):
            if "us" in toks and "id" in toks and "r" in toks:
                header = toks
                reading.platform = reading.platform or _vmstat_platform(toks)
            continue
        if header is None or len(toks) != len(header):
            continue
        values = [number(t) for t in toks]
        if any(v is None for v in values):
            continue
        start = _vmstat_cpu_index(header)
        if start is not None and not all(0 <= v <= 100 for v in values[start:start + 3]):  # type: ignore[operator]
            continue
        reading.samples += 1
        last, last_header = values, header  # type: ignore[assignment]
    if last is None or last_header is None:
        if read.join is not None and reading.samples:
            reading.problem = read.dropped("vmstat", "a data row")
        return reading
    reading.since_boot_only = reading.samples < 2
    start = _vmstat_cpu_index(last_header)
    if start is not None:
        shares = {"user": last[start], "system": last[start + 1], "idle": last[start + 2]}
        for name, mode in (("wa", "iowait"), ("st", "steal")):
            if name in last_header[start + 3:]:
                shares[mode] = last[last_header.index(name, start + 3)]
        if all(0 <= v <= 100 for v in shares.values()):
            reading.cpu = {mode: v / 100 for mode, v in shares.items()}
        else:  # wa or st out of range: the three columns every platform prints
            reading.cpu = {mode: shares[mode] / 100 for mode in ("user", "system", "idle")}
        reading.sections.append("cpu")
    if "sr" in last_header:
        reading.page_scan_rate = last[last_header.index("sr")]
        reading.sections.append("paging")
    _vmstat_memory(reading, dict(zip(last_header, last, strict=True)), configured)
    return _drop_unmeasured(reading)


# vmstat's memory columns by platform: (column, figure, bytes per unit).  procps and Solaris print KiB; AIX and
# HP-UX count 4 KiB pages (AIX's vmstat reports in 4 KiB units whatever page sizes are in use).
_VMSTAT_MEMORY = {
    "linux": (("free", "free", 1024), ("buff", "buffers", 1024), ("cache", "cached", 1024)),
    "solaris": (("free", "free", 1024),),
    "aix": (("fre", "free", 4096), ("avm", "active_virtual", 4096)),
    "hpux": (("free", "free", 4096), ("avm", "active_virtual", 4096)),
}


def _vmstat_memory(reading: Reading, row: dict[str, float], configured: float | None) -> None:
    """The memory figures of vmstat's last row (snapshots, not interval averages), in bytes."""
    platform = reading.platform or ""
    for column, figure, unit in _VMSTAT_MEMORY.get(platform, ()):
        if column in row and row[column] >= 0:
            reading.memory[figure] = row[column] * unit
    if platform == "linux" and row.get("swpd", -1) >= 0:
        reading.swap["used"] = row["swpd"] * 1024
    if platform == "solaris" and row.get("swap", -1) >= 0:  # virtual swap available, KiB
        reading.virtual_swap["available"] = row["swap"] * 1024
    if platform == "aix" and configured is not None:
        reading.memory["total"] = configured
    if reading.memory or reading.swap or reading.virtual_swap:
        reading.sections.append("memory")


# ---- uptime --------------------------------------------------------------------------------------------------
def parse_uptime(text: object, platform: str | None = None) -> Reading:
    """``uptime`` of every Unix: the three load averages after "load average:" (HP-UX, AIX, Solaris, Linux,
    "load averages:" on macOS and BSD), separated by commas or, on macOS, by spaces.  The last such line counts;
    a line with anything but three non-negative numbers there is passed over."""
    reading = Reading(platform=platform)
    for line in _lines(text).lines:
        at = line.find("load average")
        if at < 0:
            continue
        rest = line[at + len("load average"):].lstrip("s").lstrip()
        if not rest.startswith(":"):
            continue
        fields = rest[1:].replace(",", " ").split()
        values = [number(t) for t in fields]
        if len(values) != 3 or any(v is None or v < 0 for v in values):
            continue
        reading.load = (values[0], values[1], values[2])  # type: ignore[assignment]
    if reading.load is not None:
        reading.sections.append("load")
        reading.samples = 1
    return reading


# ---- iostat ---------------------------------------------------------------------------------------------------
_AIX_UNITS = {"K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_AIX_TIMES = {"S": 1e3, "H": 3.6e6}  # AIX iostat -D prints long times as 1.2S or 2.0H; the base unit is ms


def _aix_number(token: str, time: bool) -> float | None:
    value = number(token)
    if value is not None or not token:
        return value
    scale = (_AIX_TIMES if time else _AIX_UNITS).get(token[-1])
    base = number(token[:-1]) if scale else None
    return None if base is None else base * scale  # type: ignore[operator]


def _aix_times(names: list[str]) -> list[bool]:
    """Which columns hold times (``avgserv``, ``avgtime``: the S and H suffixes) rather than sizes (K, M, ...)."""
    return ["serv" in n or "time" in n for n in names]


def _aix_values(toks: list[str], times: list[bool]) -> list[float] | None:
    values = [_aix_number(t, time) for t, time in zip(toks, times, strict=True)]
    return None if None in values else values  # type: ignore[return-value]


def _aix_figures(b: dict[str, float]) -> dict[str, float]:
    """A disk's figures from AIX's extended statistics (``iostat -D`` blocks and ``iostat -Dl`` rows), named
    ``group.column``: ``xfer.%tm_act``, ``read.rps``, ``read.avgserv``, ``queue.avgtime``, ..."""
    disk: dict[str, float] = {}
    if "xfer.%tm_act" in b:
        disk["util"] = b["xfer.%tm_act"] / 100
    if "xfer.tps" in b:
        disk["iops"] = b["xfer.tps"]
    rps, wps = b.get("read.rps"), b.get("write.wps")
    rserv, wserv = b.get("read.avgserv"), b.get("write.avgserv")
    if None not in (rps, wps, rserv, wserv) and rps + wps > 0:  # type: ignore[operator]
        service = (rps * rserv + wps * wserv) / (rps + wps)  # type: ignore[operator]
        disk["service_time"] = service / 1000
        if "queue.avgtime" in b:
            disk["await"] = (service + b["queue.avgtime"]) / 1000
    if "queue.avgwqsz" in b and "queue.avgsqsz" in b:
        disk["queue"] = b["queue.avgwqsz"] + b["queue.avgsqsz"]
    return disk


def _iostat_header(toks: list[str]) -> list[str]:
    """Header names as columns: AIX splits "% tm_act" and "% user" into two fields, and names groups with a
    colon ("tty:", "avg-cpu:") that heads no column; a device column keeps its colon ("Device:", "Disks:")."""
    columns: list[str] = []
    join = False
    for tok in toks:
        if tok == "%":
            join = True
            continue
        if join:
            tok, join = "%" + tok, False
        if tok.endswith(":") and tok not in LABEL_COLUMNS:
            continue
        columns.append(tok)
    return columns


def _finish_aix(reading: Reading, latest: dict[str, tuple[int, int, dict[str, float]]], reports: int,
                read: _Text, last_start: int | None, tool: str) -> Reading:
    """The AIX readings' common end: each disk's latest report (``latest``: device -> (report, first line,
    figures by column)); a disk only in the since-boot report is marked; with the middle of a long output skipped,
    the last report must begin in the tail, and a disk last seen before it is left out."""
    reading.samples = reports
    reading.since_boot_only = reports < 2
    if read.join is not None and (last_start is None or last_start < read.join):
        reading.problem = read.dropped(tool, "its last report")
    for device, (report, start, columns) in latest.items():
        if read.join is not None and start < read.join:
            continue
        disk = _aix_figures(columns)
        if not disk:
            continue
        reading.disks[device] = disk
        if report == 1 and reports > 1:
            reading.since_boot_disks.add(device)
    if reading.disks:
        reading.sections.append("disk")
    return reading


def _parse_iostat_aix_d(read: _Text, reading: Reading) -> Reading:
    """AIX ``iostat -D``: per disk a block of xfer/read/write/queue header lines each followed by its values."""
    latest: dict[str, tuple[int, int, dict[str, float]]] = {}
    current: dict[str, tuple[int, int, dict[str, float]]] = {}  # the block being read, per device
    counts: dict[str, int] = {}  # blocks per device: its n-th block belongs to the n-th report
    device: str | None = None
    group: str | None = None
    names: list[str] = []
    report_from: dict[int, int] = {}  # report -> the line its first block begins on
    for index, line in enumerate(read.lines):
        if index == read.join:
            device = group = None  # a block cut in two at the join is not read
        toks = _tokens(line)
        if not toks or toks[0].startswith("---"):
            continue
        if len(toks) >= 2 and toks[1] == "xfer:" and not line[:1].isspace():
            device, group, names = toks[0], "xfer", toks[2:]
            counts[device] = counts.get(device, 0) + 1
            report_from.setdefault(counts[device], index)
            current[device] = (counts[device], index, {})
            continue
        if toks[0] in ("read:", "write:", "queue:"):
            group, names = toks[0][:-1], toks[1:]
            continue
        if device is None or group is None or len(toks) != len(names):
            continue
        values = _aix_values(toks, _aix_times(names))
        if values is None:
            continue
        block = latest[device] = current[device]  # the latest block with figures (a garbled one is passed over)
        for name, value in zip(names, values, strict=True):
            block[2].setdefault(f"{group}.{name}", value)
        group = None
    reports = max(counts.values(), default=0)
    return _finish_aix(reading, latest, reports, read, report_from.get(reports), "iostat")


# AIX iostat -l: the two header lines joined by column ("%tm" over "act"), named as the -D blocks name them.
_AIX_LONG_ALIASES = {"xfer.%tmact": "xfer.%tm_act", "queue.servqfull": "queue.sqfull"}


def _spans(line: str) -> list[tuple[int, int, str]]:
    """(start, end, field) of each blank-separated field (columns are right-aligned under each other)."""
    spans, pos = [], 0
    for tok in line.split()[:MAX_TOKENS]:
        start = line.find(tok, pos)
        pos = start + len(tok)
        spans.append((start, pos, tok))
    return spans


def _aix_long_header(upper: str, lower: str) -> list[str] | None:
    """The columns of AIX ``iostat -Dl``: ``%tm bps tps bread bwrtn rps avg ...`` over ``act serv ... qfull``.
    Each field of the lower line ends where the field above it ends; the groups (xfer, read, write, queue)
    follow from the columns that start them (``rps``, ``wps``, and what follows the write group's ``fail``)."""
    tops, bottoms = _spans(upper), _spans(lower)
    if not bottoms or bottoms[0][2] != "act":
        return None
    under: dict[int, str] = {}
    for start, end, tok in bottoms:
        above = [i for i, (s, e, _) in enumerate(tops) if e == end] or \
                [i for i, (s, e, _) in enumerate(tops) if s < end and start < e]
        if not above or above[0] in under:
            return None  # not stacked the way iostat stacks them
        under[above[0]] = tok
    columns, group = [], "xfer"
    for i, (_, _, tok) in enumerate(tops):
        if tok == "rps" and group == "xfer":
            group = "read"
        elif tok == "wps" and group == "read":
            group = "write"
        elif group == "write" and columns and columns[-1] == "write.fail":
            group = "queue"
        name = f"{group}.{tok}{under.get(i, '')}"
        columns.append(_AIX_LONG_ALIASES.get(name, name))
    return columns


def _is_aix_long_top(toks: list[str] | None) -> bool:
    return bool(toks) and toks[0] == "%tm" and "bps" in toks and "tps" in toks  # type: ignore[index]


def _parse_iostat_aix_long(read: _Text, reading: Reading) -> Reading:
    """AIX ``iostat -Dl`` (``-l``: long listing): one row per disk and report, the column names over two header
    lines, and with ``-T`` the time last; the first report is the average since boot."""
    lines = read.lines
    columns: list[str] | None = None
    times: list[bool] = []
    rows: dict[str, tuple[int, int, list[str], list[float]]] = {}  # device -> its latest row
    in_report: set[str] = set()
    reports = 0
    last_start: int | None = None
    for index, line in enumerate(lines):  # (the join needs nothing: a report cut there began before it)
        toks = _tokens(line)
        if not toks:
            continue
        if _is_aix_long_top(toks):
            found = _aix_long_header(line, lines[index + 1] if index + 1 < len(lines) else "")
            if found is not None:
                columns, times, in_report = found, _aix_times(found), set()
            continue
        if columns is None:
            continue
        width = len(columns)
        if len(toks) == width + 2 and _is_time(toks[-1]):
            toks = toks[:-1]  # -T: the time of the report
        if len(toks) != width + 1 or number(toks[0]) is not None:
            continue
        values = _aix_values(toks[1:], times)
        if values is None:
            continue
        device = toks[0]
        if device in in_report or not in_report:  # a disk seen again (or the first row): the next report
            reports, in_report, last_start = reports + 1, set(), index
        in_report.add(device)
        rows[device] = (reports, index, columns, values)
    if columns is None:
        return reading
    latest = {device: (report, start, dict(zip(names, values, strict=True)))
              for device, (report, start, names, values) in rows.items()}
    return _finish_aix(reading, latest, reports, read, last_start, "iostat")


def parse_iostat(text: object, platform: str | None = None) -> Reading:
    """``iostat -x`` (sysstat, old and new column names), Solaris ``iostat -xn`` / ``-x``, AIX ``iostat``,
    ``iostat -D`` and ``iostat -Dl``: the last report (the first is the average since boot); a device missing
    from the last report (``-z`` leaves idle ones out) keeps its latest later report, never the since-boot one.
    Of an output longer than MAX_LINES the last report must begin in the last TAIL_LINES (else ``problem``)."""
    read = _lines(text)
    reading = _parse_iostat_columns(read, Reading(platform=platform))
    for present, parser in ((any(" xfer:" in line for line in read.lines), _parse_iostat_aix_d),
                            (any("%tm" in line and _is_aix_long_top(_tokens(line)) for line in read.lines),
                             _parse_iostat_aix_long)):
        if not present:
            continue
        aix = parser(read, Reading(platform=platform or "aix"))
        if not aix.disks and aix.problem is None:
            continue
        only_aix = not reading.sections
        reading.platform = reading.platform or aix.platform
        for device, figures in aix.disks.items():
            reading.disks.setdefault(device, figures)
        reading.since_boot_disks |= aix.since_boot_disks
        reading.sections = sorted(set(reading.sections) | set(aix.sections))
        reading.samples = max(reading.samples, aix.samples)
        reading.since_boot_only = aix.since_boot_only and (only_aix or reading.since_boot_only)
        reading.problem = reading.problem or aix.problem
    return reading


def _parse_iostat_columns(read: _Text, reading: Reading) -> Reading:
    """iostat whose devices are rows under one header (all but AIX -D and -Dl)."""
    report = 0
    report_from: int | None = None  # the line where the last report began
    kinds: set[str] = set()  # the kinds of header seen in the current report; a repeated kind starts the next
    header: _Section | None = None
    cpu_header: _Section | None = None
    cpu_by_report: dict[int, tuple[int, dict[str, float]]] = {}
    disks: dict[str, tuple[int, int, dict[str, float]]] = {}

    def begin(kind: str, index: int) -> None:
        nonlocal report, kinds, report_from
        if kind in kinds or not kinds:
            report, kinds, report_from = report + 1, set(), index
        kinds.add(kind)

    for index, line in enumerate(read.lines):
        if index == read.join:  # rows cut from their header by the skipped middle are not read
            header = cpu_header = None
            kinds = set()
        toks = _tokens(line)
        if not toks:
            continue
        banner = _banner(toks)
        if banner is not None:
            reading.platform = reading.platform or banner[0]
            reading.release = reading.release or banner[1]
            continue
        if toks[:3] == ["extended", "device", "statistics"]:
            begin("title", index)  # Solaris prints it before every report
            reading.platform = reading.platform or "solaris"
            continue
        if all(number(t) is None for t in toks):
            columns = _iostat_header(toks)
            if any(c in LABEL_COLUMNS for c in columns) and len(columns) > 1:
                begin("device", index)
                header = _Section.of(columns)
                if columns[-1] == "device":
                    reading.platform = reading.platform or "solaris"  # iostat -xn names the device last
            elif "%idle" in columns or "idle" in columns:
                begin("cpu", index)
                cpu_header = _Section.of(columns)
            continue
        if cpu_header is not None:
            row = cpu_header.fit(toks)
            cpu_header = None
            if row is not None:
                shares = _cpu_from_row(row)
                if shares:
                    cpu_by_report[report] = (index, shares)
                continue
        if header is None:
            continue
        row = header.fit(toks)
        if row is None:
            continue
        disk = _disk_from_row(row)
        if disk is not None:
            disks[disk[0]] = (report, index, disk[1])
    reading.samples = report
    reading.since_boot_only = report < 2
    first = 1  # the since-boot report
    stale = read.join if read.join is not None else -1  # rows before it are middle intervals
    if cpu_by_report and cpu_by_report[max(cpu_by_report)][0] > stale:
        reading.cpu = cpu_by_report[max(cpu_by_report)][1]
        reading.sections.append("cpu")
    for device, (at, index, figures) in disks.items():
        if index < stale:
            continue
        reading.disks[device] = figures
        if at <= first and report >= 2:  # only in the since-boot report (-z leaves idle devices out later)
            reading.since_boot_disks.add(device)
    if reading.disks:
        reading.sections.append("disk")
    if read.join is not None and (cpu_by_report or disks) and (report_from is None or report_from < read.join):
        reading.problem = read.dropped("iostat", "its last report")
    return _drop_unmeasured(reading)


def parse(tool: str, text: object, platform: str | None = None) -> Reading:
    """One tool's output ("sar", "vmstat", "iostat" or "uptime"; memparse.parse for the memory commands)."""
    parser = {"sar": parse_sar, "vmstat": parse_vmstat, "iostat": parse_iostat, "uptime": parse_uptime}.get(tool)
    return parser(text, platform) if parser else Reading(platform=platform)


def merge(readings: list[Reading]) -> Reading:
    """Several tools' readings, earlier ones first: the first that printed a figure gives it."""
    out = Reading()
    for r in readings:
        out.platform = out.platform or r.platform
        out.release = out.release or r.release
        if not out.cpu and r.cpu:
            out.cpu = dict(r.cpu)
        if out.page_scan_rate is None:
            out.page_scan_rate = r.page_scan_rate
        if out.load is None:
            out.load = r.load
        if out.run_queue is None and r.run_queue is not None:
            out.run_queue, out.run_queue_occupied = r.run_queue, r.run_queue_occupied
        for device, figures in r.disks.items():
            if device in r.since_boot_disks:
                continue
            mine = out.disks.setdefault(device, {})
            for key, value in figures.items():
                mine.setdefault(key, value)
        for key, value in r.memory.items():
            out.memory.setdefault(key, value)
        for key, value in r.lpar.items():
            out.lpar.setdefault(key, value)
        for key, value in r.lpar_info.items():
            out.lpar_info.setdefault(key, value)
    # a total and its used/available part come from one tool (one moment): the first tool that gave both, else
    # the first that gave any (vmstat and sar -r print only what is available)
    for name, pair in (("swap", {"total", "used"}), ("virtual_swap", {"total", "available"})):
        given = [getattr(r, name) for r in readings if getattr(r, name)]
        whole = [d for d in given if pair <= d.keys()]
        setattr(out, name, dict((whole or given or [{}])[0]))
    return out
