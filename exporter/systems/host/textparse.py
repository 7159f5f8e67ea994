"""Parsers for the text of ``sar``, ``vmstat`` and ``iostat`` as HP-UX, Solaris, AIX and Linux (sysstat, procps)
print it: pure functions from text to :class:`Reading` (shares, rates and times in base units).

Columns are found by their header names, never by position alone: a data row counts only when it has as many
fields as its header and every non-label field is a number.  ``sar`` with several options prints its headers
stacked (SysV: "all headers are printed together") or one block per option (sysstat); both are read by keeping the
latest run of header lines and walking it in order for the rows of each interval.  Figures a tool does not print
stay absent (``None`` / missing keys), never 0.  Hand-written because no maintained library reads these four
dialects (jc parses Linux's only).

Robustness: no regular expressions, at most :data:`MAX_LINES` lines of at most :data:`MAX_LINE` characters and
:data:`MAX_TOKENS` fields each; a line that fits nothing is skipped, so one bad line loses nothing else; no input
makes these functions raise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import islice

from ...core.textlines import iter_lines

MAX_LINES = 20_000
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
    samples: int = 0  # data rows (vmstat) or reports (iostat) seen
    since_boot_only: bool = False  # vmstat/iostat printed only their first report: averages since boot
    since_boot_disks: set[str] = field(default_factory=set)  # devices only in iostat's first (since-boot) report
    sections: list[str] = field(default_factory=list)  # what was recognised, for error messages


# ---- small helpers -----------------------------------------------------------------------------------------
def _lines(text: object) -> list[str]:
    if not isinstance(text, str):
        return []
    lines = list(islice(iter_lines(text), MAX_LINES))
    return [line[:MAX_LINE] for line in lines]


def _tokens(line: str) -> list[str] | None:
    toks = line.split()
    return toks if len(toks) <= MAX_TOKENS else None


_NUMBER_CHARS = str.maketrans("", "", "0123456789.-+")  # deleting these leaves nothing of a plain number


def number(token: str) -> float | None:
    """A plain decimal number (``-0``, ``12``, ``0.53``); None for anything else (no ``nan``, ``1e5``, ``1_0``)."""
    if not token or len(token) > MAX_NUMBER or token.translate(_NUMBER_CHARS) or not token.strip(".-+"):
        return None
    try:
        value = float(token)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


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
    return minor.isdigit() and int(minor) < 10


def _drop_unmeasured(reading: Reading) -> Reading:
    # Solaris 10 and later no longer measure wait I/O: %wio / wt are always 0 there, so they are left out.
    if reading.platform == "solaris" and not _solaris_release_before_10(reading.release):
        reading.cpu.pop("iowait", None)
    return reading


def _is_header(rest: list[str]) -> bool:
    if not rest or any(number(t) is not None for t in rest):
        return False
    return any(("%" in t or "/" in t or t in LABEL_COLUMNS) for t in rest)


@dataclass
class _Section:
    columns: list[str]
    labels: frozenset[int]

    @classmethod
    def of(cls, columns: list[str]) -> "_Section":
        return cls(columns, frozenset(i for i, c in enumerate(columns) if c in LABEL_COLUMNS))

    @property
    def multi(self) -> bool:
        return bool(self.labels)

    def fit(self, rest: list[str]) -> dict[str, float | str] | None:
        if len(rest) != len(self.columns):
            return None
        row: dict[str, float | str] = {}
        for i, (name, token) in enumerate(zip(self.columns, rest, strict=True)):
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
    Average row where sar printed one, else its last row; the same for the CPU and paging rows."""
    reading = Reading(platform=platform)
    sections: list[_Section] = []
    cursor = 0
    after_header = in_average = False
    widths: set[int] = set()
    cpu: dict[bool, dict[str, float]] = {}
    scans: dict[bool, float] = {}
    disks: dict[str, dict[bool, dict[str, float]]] = {}
    seen: set[str] = set()
    for line in _lines(text):
        toks = _tokens(line)
        if not toks:
            continue
        banner = _banner(toks)
        if banner is not None:
            if reading.release is None:
                reading.platform = reading.platform or banner[0]
                reading.release = banner[1]
            continue
        kind, rest = _split_prefix(toks)
        if _is_header(rest):
            if not after_header:
                sections = []
            if len(sections) < MAX_SECTIONS and (not sections or sections[-1].columns != rest):
                sections.append(_Section.of(rest))
                widths = {len(sec.columns) for sec in sections}
            after_header, cursor = True, 0
            continue
        after_header = False
        if kind is not None:
            cursor, in_average = 0, kind == "avg"
        if not rest or len(rest) not in widths:
            continue
        average = in_average  # rows without a time stamp continue the block above them
        for i in range(cursor, len(sections)):
            row = sections[i].fit(rest)
            if row is None:
                continue
            cursor = i if sections[i].multi else i + 1
            _take_sar_row(row, average, cpu, scans, disks, seen)
            break
    for is_avg in (False, True):  # Average rows win over interval rows
        reading.cpu.update(cpu.get(is_avg, {}))
        if is_avg in scans:
            reading.page_scan_rate = scans[is_avg]
    for device, rows in disks.items():
        reading.disks[device] = rows.get(True) or rows[False]
    reading.sections = sorted(seen)
    return _drop_unmeasured(reading)


def _take_sar_row(row, average, cpu, scans, disks, seen) -> None:
    shares = _cpu_from_row(row)
    if shares:
        cpu[average] = shares
        seen.add("cpu")
        return
    pgscan = _f(row, "pgscan/s")
    kswapd, direct = _f(row, "pgscank/s"), _f(row, "pgscand/s")
    if pgscan is None and kswapd is not None and direct is not None:
        pgscan = kswapd + direct
    if pgscan is not None:
        scans[average] = pgscan
        seen.add("paging")
        return
    disk = _disk_from_row(row)
    if disk is not None:
        device, figures = disk
        if not average:  # only a device's Average row on its own; interval rows replace each other
            disks.setdefault(device, {})[False] = figures
        else:
            disks.setdefault(device, {False: figures})[True] = figures
        seen.add("disk")


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
    header: list[str] | None = None
    last: list[float] | None = None
    last_header: list[str] | None = None
    for line in _lines(text):
        toks = _tokens(line)
        if not toks:
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
    return _drop_unmeasured(reading)


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


def _parse_iostat_aix_d(lines: list[str], reading: Reading) -> Reading:
    """AIX ``iostat -D``: per disk a block of xfer/read/write/queue header lines each followed by its values."""
    reports: dict[str, list[dict[str, float]]] = {}
    device: str | None = None
    group: str | None = None
    names: list[str] = []
    for line in lines:
        toks = _tokens(line)
        if not toks or toks[0].startswith("---"):
            continue
        if len(toks) >= 2 and toks[1] == "xfer:" and not line[:1].isspace():
            device, group, names = toks[0], "xfer", toks[2:]
            reports.setdefault(device, []).append({})
            continue
        if toks[0] in ("read:", "write:", "queue:"):
            group, names = toks[0][:-1], toks[1:]
            continue
        if device is None or group is None or len(toks) != len(names):
            continue
        values = [_aix_number(t, time="serv" in n or "time" in n) for t, n in zip(toks, names, strict=True)]
        if any(v is None for v in values):
            continue
        block = reports[device][-1]
        for name, value in zip(names, values, strict=True):
            block.setdefault(f"{group}.{name}", value)  # type: ignore[arg-type]
        group = None
    reading.samples = max((len(r) for r in reports.values()), default=0)
    reading.since_boot_only = reading.samples < 2
    for device, blocks in reports.items():
        filled = [i for i, blk in enumerate(blocks) if blk]
        if not filled:
            continue
        b = blocks[filled[-1]]
        if filled[-1] == 0 and len(blocks) > 1:
            reading.since_boot_disks.add(device)
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
        if disk:
            reading.disks[device] = disk
    if reading.disks:
        reading.sections.append("disk")
    return reading


def parse_iostat(text: object, platform: str | None = None) -> Reading:
    """``iostat -x`` (sysstat, old and new column names), Solaris ``iostat -xn`` / ``-x``, AIX ``iostat`` and
    ``iostat -D``: the last report (the first is the average since boot); a device missing from the last
    report (``-z`` leaves idle ones out) keeps its latest later report, never the since-boot one."""
    lines = _lines(text)
    reading = _parse_iostat_columns(lines, Reading(platform=platform))
    if any(" xfer:" in line for line in lines):
        aix = _parse_iostat_aix_d(lines, Reading(platform=platform or "aix"))
        if aix.disks:
            only_aix = not reading.sections
            reading.platform = reading.platform or aix.platform
            for device, figures in aix.disks.items():
                reading.disks.setdefault(device, figures)
            reading.since_boot_disks |= aix.since_boot_disks
            reading.sections = sorted(set(reading.sections) | set(aix.sections))
            reading.samples = max(reading.samples, aix.samples)
            reading.since_boot_only = aix.since_boot_only and (only_aix or reading.since_boot_only)
    return reading


def _parse_iostat_columns(lines: list[str], reading: Reading) -> Reading:
    """iostat whose devices are rows under one header (all but AIX -D)."""
    report = 0
    kinds: set[str] = set()  # the kinds of header seen in the current report; a repeated kind starts the next
    header: _Section | None = None
    cpu_header: _Section | None = None
    cpu_by_report: dict[int, dict[str, float]] = {}
    disks: dict[str, tuple[int, dict[str, float]]] = {}

    def begin(kind: str) -> None:
        nonlocal report, kinds
        if kind in kinds or not kinds:
            report, kinds = report + 1, set()
        kinds.add(kind)

    for line in lines:
        toks = _tokens(line)
        if not toks:
            continue
        banner = _banner(toks)
        if banner is not None:
            reading.platform = reading.platform or banner[0]
            reading.release = reading.release or banner[1]
            continue
        if toks[:3] == ["extended", "device", "statistics"]:
            begin("title")  # Solaris prints it before every report
            reading.platform = reading.platform or "solaris"
            continue
        if all(number(t) is None for t in toks):
            columns = _iostat_header(toks)
            if any(c in LABEL_COLUMNS for c in columns) and len(columns) > 1:
                begin("device")
                header = _Section.of(columns)
                if columns[-1] == "device":
                    reading.platform = reading.platform or "solaris"  # iostat -xn names the device last
            elif "%idle" in columns or "idle" in columns:
                begin("cpu")
                cpu_header = _Section.of(columns)
            continue
        if cpu_header is not None:
            row = cpu_header.fit(toks)
            cpu_header = None
            if row is not None:
                shares = _cpu_from_row(row)
                if shares:
                    cpu_by_report[report] = shares
                continue
        if header is None:
            continue
        row = header.fit(toks)
        if row is None:
            continue
        disk = _disk_from_row(row)
        if disk is not None:
            disks[disk[0]] = (report, disk[1])
    reading.samples = report
    reading.since_boot_only = report < 2
    first = 1  # the since-boot report
    if cpu_by_report:
        reading.cpu = cpu_by_report[max(cpu_by_report)]
        reading.sections.append("cpu")
    for device, (at, figures) in disks.items():
        reading.disks[device] = figures
        if at <= first and report >= 2:  # only in the since-boot report (-z leaves idle devices out later)
            reading.since_boot_disks.add(device)
    if reading.disks:
        reading.sections.append("disk")
    return _drop_unmeasured(reading)


def parse(tool: str, text: object, platform: str | None = None) -> Reading:
    """One tool's output ("sar", "vmstat" or "iostat")."""
    parser = {"sar": parse_sar, "vmstat": parse_vmstat, "iostat": parse_iostat}.get(tool)
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
        for device, figures in r.disks.items():
            if device in r.since_boot_disks:
                continue
            mine = out.disks.setdefault(device, {})
            for key, value in figures.items():
                mine.setdefault(key, value)
    return out
