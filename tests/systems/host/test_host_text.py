"""The host collector's text back-end: sar, vmstat and iostat text of HP-UX, Solaris, AIX and Linux.

Every number asserted below was read off the fixture by eye (tests/systems/host/fixtures/real/SOURCE.md says where
each one comes from; tests/systems/host/fixtures/text/ holds the invented awkward cases).
"""

from __future__ import annotations

import json
import stat
import sys
import time
from pathlib import Path

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from exporter.core.collector import Context
from exporter.machine.deadline import BoundedCall, Overdue
from exporter.systems.host import textparse as tp
from exporter.systems.host.collector import HostCollector
from exporter.systems.host.settings import HostSettings
from tests.support import collect, running_under, shell_script

FIXTURES = Path(__file__).parent / "fixtures"

REAL = FIXTURES / "real"
INVENTED = FIXTURES / "text"


def read(path: Path) -> str:
    return path.read_text()


def approx(value: float) -> object:
    return pytest.approx(value, rel=1e-9, abs=1e-12)


# ---- HP-UX ------------------------------------------------------------------------------------------------------
def test_hpux_sar_d_last_row_per_device_with_continuation_lines_and_an_empty_interval():
    r = tp.parse_sar(read(REAL / "hpux_sar_d.txt"))
    assert (r.platform, r.release) == ("hpux", "B.11.23")
    # 02:40:02   c0t2d0    0.50    0.50       0       8    0.01    8.80
    assert r.disks["c0t2d0"] == {"util": approx(0.005), "queue": 0.5, "iops": 0.0,
                                 "service_time": approx(0.0088), "await": approx(0.0088 + 0.00001)}
    # its last row is the continuation line under 02:39:58:  c0t0d0  0.50  0.50  0  8  0.00  6.79
    assert r.disks["c0t0d0"]["service_time"] == approx(0.00679)
    assert set(r.disks) == {"c0t2d0", "c0t0d0"}
    assert r.cpu == {} and r.page_scan_rate is None  # sar -d prints neither: absent, not 0


def test_hpux_sar_d_keeps_the_395_ms_interval_when_cut_there():
    text = read(REAL / "hpux_sar_d.txt")
    cut = text[:text.index("02:39:52")]
    r = tp.parse_sar(cut)
    # 02:39:50   c0t2d0   28.00    0.50       4      64    0.00  395.25
    assert r.disks["c0t2d0"]["service_time"] == approx(0.39525)
    assert r.disks["c0t2d0"]["util"] == approx(0.28)
    assert r.disks["c0t2d0"]["iops"] == 4


def test_hpux_vmstat_last_row_sr_and_cpu():
    r = tp.parse_vmstat(read(REAL / "hpux_vmstat.txt"))
    assert r.platform == "hpux" and r.samples == 4 and not r.since_boot_only
    # last row: ... sr 3 ... us 0 sy 0 id 100
    assert r.page_scan_rate == 3
    assert r.cpu == {"user": 0.0, "system": 0.0, "idle": 1.0}
    assert "iowait" not in r.cpu  # HP-UX vmstat prints no wa column


# ---- Solaris ----------------------------------------------------------------------------------------------------
def test_solaris_sar_d_avserv_avwait_and_comma_device_names():
    r = tp.parse_sar(read(REAL / "solaris_sar_d.txt"))
    assert (r.platform, r.release) == ("solaris", "5.10")
    # 12:40:01   dad1   15   0.7   26   399   18.1   10.0
    assert r.disks["dad1"] == {"util": approx(0.15), "queue": 0.7, "iops": 26.0, "service_time": approx(0.010),
                               "await": approx(0.0281)}
    assert r.disks["nfs5"]["service_time"] == approx(0.0571)
    assert r.disks["ohci0,in"]["iops"] == 7
    assert len(r.disks) == 19


def test_solaris_sar_g_average_pgscan():
    r = tp.parse_sar(read(REAL / "solaris_sar_g.txt"))
    assert r.page_scan_rate == approx(1.97)  # Average ... pgscan/s 1.97 (the last interval said 33.80)


def test_solaris_vmstat_sr_is_not_confused_with_the_second_sy():
    r = tp.parse_vmstat(read(REAL / "solaris_vmstat.txt"))
    assert r.platform == "solaris"
    # last row: ... de 0  sr 4  s0 26 ... in 412 sy 108 cs 247 us 0 sy 7 id 93
    assert r.page_scan_rate == 4
    assert r.cpu == {"user": 0.0, "system": approx(0.07), "idle": approx(0.93)}


def test_smartos_iostat_xzn_single_report_is_read_but_marked_since_boot():
    r = tp.parse_iostat(read(REAL / "smartos_iostat_xzn.txt"))
    assert r.platform == "solaris" and r.since_boot_only
    # 129.2  356.0  356.3 5038.1  0.0  2.3    0.0    4.8   0  57 c0t18d0
    assert r.disks["c0t18d0"] == {"util": approx(0.57), "iops": approx(485.2), "queue": approx(2.3),
                                  "service_time": approx(0.0048), "await": approx(0.0048)}
    # 212.2 13.0 ... wait 0.1 actv 0.1 wsvc_t 0.4 asvc_t 0.4 %w 3 %b 6 c2d0
    assert r.disks["c2d0"]["await"] == approx(0.0008) and r.disks["c2d0"]["queue"] == approx(0.2)


def test_smartos_vmstat_with_an_overflowing_disk_column_is_refused_not_misread():
    r = tp.parse_vmstat(read(REAL / "smartos_vmstat_overflow.txt"))
    assert r.samples == 0 and r.cpu == {} and r.page_scan_rate is None


# ---- AIX --------------------------------------------------------------------------------------------------------
def test_aix_sar_d_average_rows_blank_lines_and_indented_devices():
    r = tp.parse_sar(read(REAL / "aix_sar_d.txt"))
    assert (r.platform, r.release) == ("aix", "4.3")
    assert set(r.disks) == {"hdisk0", "hdisk1", "cd0"}
    # Average hdisk0 0 0.0 0 3 0.0 0.0 (the 12:09:59 row said %busy 1, r+w/s 1)
    assert r.disks["hdisk0"]["util"] == 0 and r.disks["hdisk0"]["iops"] == 0


def test_aix_sar_d_without_the_average_block_gives_each_device_its_last_row():
    text = read(REAL / "aix_sar_d.txt")
    r = tp.parse_sar(text[:text.index("Average")])
    assert r.disks["hdisk0"]["util"] == approx(0.01) and r.disks["hdisk0"]["iops"] == 1


def test_aix_vmstat_since_boot_line_is_read_but_marked():
    r = tp.parse_vmstat(read(REAL / "aix_vmstat_since_boot.txt"))
    assert r.platform == "aix" and r.since_boot_only and r.samples == 1
    # 2 1 669941 89605 0 0 0 3 12 0 12 531 240 0 0 99 0 0.02 0.5
    assert r.page_scan_rate == 12
    assert r.cpu == {"user": 0.0, "system": 0.0, "idle": approx(0.99), "iowait": 0.0}


def test_aix_iostat_D_blocks_suffixes_and_the_last_report():
    text = read(REAL / "aix_iostat_D.txt")
    r = tp.parse_iostat(text)
    assert r.platform == "aix" and r.samples == 3 and not r.since_boot_only
    # third report: %tm_act 0.0, tps 0.0, no reads or writes: no service time to speak of (absent)
    assert r.disks["hdisk6"] == {"util": 0.0, "iops": 0.0, "queue": 0.0}
    # the second report alone: %tm_act 9.6, bps 16.4K, tps 4.0, rps 4.0 avgserv 4.9, avgtime 0.0
    second = text[:text.index("hdisk6", text.index("hdisk6", text.index("hdisk6") + 1) + 1)]
    r2 = tp.parse_iostat(second)
    assert r2.disks["hdisk6"] == {"util": approx(0.096), "iops": 4.0, "queue": 0.0,
                                  "service_time": approx(0.0049), "await": approx(0.0049)}


def test_aix_iostat_DRTl_one_row_per_disk_two_header_lines_and_the_time_last():
    """AIX ``iostat -DRTl`` (long listing): the column names stand over two lines ("%tm" over "act", "avg" over
    "serv"), a row per disk with the time last; was "nothing recognised"."""
    r = tp.parse_iostat(read(REAL / "aix_iostat_DRTl.txt"))
    assert r.platform == "aix" and r.samples == 2 and not r.since_boot_only and r.problem is None
    # second report: hdisk1  79.0 164.1M 626.0 164.1M 0.0 | rps 626.0 avgserv 1.3 ... | wps 0.0 avgserv 0.0 ...
    #                | avgtime 0.0 ... avgwqsz 0.0 avgsqsz 0.0 sqfull 0.0 | 11:44:32
    assert r.disks["hdisk1"] == {"util": approx(0.79), "iops": 626.0, "service_time": approx(0.0013),
                                 "await": approx(0.0013), "queue": 0.0}
    assert r.disks["hdisk0"] == {"util": 0.0, "iops": 0.0, "queue": 0.0}  # idle: no service time to speak of
    columns = tp._aix_long_header(*read(REAL / "aix_iostat_DRTl.txt").splitlines()[2:4])
    assert columns[:2] == ["xfer.%tm_act", "xfer.bps"] and columns[6] == "read.avgserv"
    assert columns[-6:] == ["queue.avgtime", "queue.mintime", "queue.maxtime", "queue.avgwqsz", "queue.avgsqsz",
                            "queue.sqfull"]
    first = tp.parse_iostat("\n".join(read(REAL / "aix_iostat_DRTl.txt").splitlines()[:8]))
    assert first.since_boot_only and first.disks["hdisk1"]["util"] == approx(0.60)  # the first report alone


def test_aix_time_suffixes():
    assert tp._aix_number("1.5S", time=True) == 1500.0
    assert tp._aix_number("16.4K", time=False) == approx(16400.0)
    assert tp._aix_number("4.0Q", time=True) is None


# ---- Linux (sysstat 12.6.1 and procps 4.0.2, captured here) ----------------------------------------------------
def test_linux_sysstat_sar_average_blocks():
    r = tp.parse_sar(read(REAL / "linux_sysstat_sar_udB.txt"))
    assert r.platform == "linux"
    # Average:  all  24.17  0.00  1.67  0.00  0.67  73.50
    assert r.cpu == {"user": approx(0.2417), "nice": 0.0, "system": approx(0.0167), "iowait": 0.0,
                     "steal": approx(0.0067), "idle": approx(0.735)}
    # Average: ... pgscank/s 0.00 pgscand/s 0.00
    assert r.page_scan_rate == 0.0
    # Average:  vda  13.33  73.33  0.00  0.00  5.50  0.01  0.53  0.00 (no svctm in sysstat 12: absent)
    assert r.disks["vda"] == {"iops": approx(13.33), "queue": approx(0.01), "await": approx(0.00053), "util": 0.0}


def test_linux_sysstat_iostat_x_new_columns_weighted_await():
    r = tp.parse_iostat(read(REAL / "linux_sysstat_iostat_x.txt"))
    assert r.samples == 2 and not r.since_boot_only
    # second report: r/s 1.00 r_await 2.00, w/s 4.00 w_await 0.25, aqu-sz 0.00, %util 0.40
    vda = r.disks["vda"]
    assert vda["await"] == approx((1 * 2.00 + 4 * 0.25) / 5 / 1000)
    assert vda["iops"] == 5 and vda["util"] == approx(0.004)
    assert "service_time" not in vda
    # avg-cpu of the second report: 21.95 0.00 6.83 0.00 6.83 64.39
    assert r.cpu["idle"] == approx(0.6439) and r.cpu["steal"] == approx(0.0683)


def test_linux_procps_vmstat_has_no_scan_rate():
    r = tp.parse_vmstat(read(REAL / "linux_procps_vmstat.txt"))
    assert r.platform == "linux" and r.page_scan_rate is None
    # last row: us 48 sy 2 id 49 wa 0 st 1
    assert r.cpu == {"user": approx(0.48), "system": approx(0.02), "idle": approx(0.49), "iowait": 0.0,
                     "steal": approx(0.01)}


# ---- invented awkward cases (tests/systems/host/fixtures/text, labelled invented in SOURCE.md)
# -------------------------
def test_invented_solaris9_stacked_headers_of_three_options():
    r = tp.parse_sar(read(INVENTED / "solaris9_sar_udg_stacked.txt"))
    assert r.release == "5.9"
    assert r.cpu == {"user": approx(0.33), "system": approx(0.13), "iowait": approx(0.39), "idle": approx(0.15)}
    assert r.page_scan_rate == approx(226.5)
    assert r.disks["sd0"]["service_time"] == approx(0.0332) and r.disks["sd0"]["await"] == approx(0.0559)
    assert r.disks["nfs1"]["util"] == 0


def test_solaris10_wio_is_left_out():
    text = read(INVENTED / "solaris9_sar_udg_stacked.txt").replace("5.9 Generic", "5.10 Generic")
    r = tp.parse_sar(text)
    assert "iowait" not in r.cpu and r.cpu["idle"] == approx(0.15)


def test_invented_sysstat10_am_pm_dev_names_svctm_and_sar_B():
    r = tp.parse_sar(read(INVENTED / "linux_sysstat10_sar_ampm.txt"))
    assert r.cpu["iowait"] == approx(0.09)
    assert r.page_scan_rate == approx(530.0)  # Average pgscank/s 460 + pgscand/s 70
    assert r.disks["dev8-0"] == {"iops": approx(88.1), "queue": approx(0.97), "service_time": approx(0.00415),
                                 "await": approx(0.01095), "util": approx(0.3657)}


def test_invented_sysstat9_iostat_old_columns_and_idle_device():
    r = tp.parse_iostat(read(INVENTED / "linux_sysstat9_iostat_x_old.txt"))
    assert r.disks["sda"] == {"util": approx(0.76), "iops": 80.0, "queue": approx(2.4),
                              "service_time": approx(0.0095), "await": approx(0.030)}
    assert r.cpu["iowait"] == approx(0.315)
    assert "sdb" in r.disks and "sdb" not in r.since_boot_disks


def test_invented_solaris_iostat_x_svc_t_is_the_response_time():
    r = tp.parse_iostat(read(INVENTED / "solaris8_iostat_x_two_reports.txt"))
    assert r.platform == "solaris" and r.samples == 2
    assert r.disks["sd0"] == {"util": approx(0.71), "iops": 120.0, "queue": approx(4.0), "await": approx(0.0333)}
    assert "service_time" not in r.disks["sd0"]  # svc_t includes the queue: not a service time
    assert r.since_boot_disks == {"nfs1"}  # only in the since-boot report
    assert "nfs1" not in tp.merge([r]).disks


def test_invented_garbage_keeps_the_one_good_row():
    r = tp.parse_sar(read(INVENTED / "garbage_and_errors.txt"))
    assert set(r.disks) == {"disk7"}  # nan, 1e400, too few and too many fields are refused
    assert r.disks["disk7"]["service_time"] == approx(0.004)
    v = tp.parse_vmstat(read(INVENTED / "garbage_and_errors.txt"))
    assert v.samples == 0  # "--" is not a number; us 150 is not a share


# ---- long outputs: the end is what matters -----------------------------------------------------------------------
def _long_sar(repeats: int, average: bool = True) -> str:
    """The genuine sysstat capture with its first interval (CPU, paging and disk blocks) repeated ``repeats`` times
    before the other two and the Average blocks: the output of a long ``sar -u -d -B 1 N``."""
    text = read(REAL / "linux_sysstat_sar_udB.txt")
    first = text.index("02:47:35        CPU")
    second = text.index("02:47:36        CPU")
    averages = text.index("Average:")
    return text[:first] + text[first:second] * repeats + text[second:averages] + (text[averages:] if average else "")


def test_a_long_sar_is_read_from_its_average_block_not_from_a_middle_interval():
    text = _long_sar(2500)  # 22,500 lines: the Average block was past the lines kept, a middle interval was read
    assert text.count("\n") > 20_000
    r = tp.parse_sar(text)
    # Average:  all  24.17  0.00  1.67  0.00  0.67  73.50 (the repeated first interval has %user 0.00)
    assert r.cpu["user"] == approx(0.2417) and r.cpu["idle"] == approx(0.735)
    assert r.disks["vda"] == {"iops": approx(13.33), "queue": approx(0.01), "await": approx(0.00053), "util": 0.0}
    assert r.page_scan_rate == 0.0 and r.problem is None


def test_a_long_sar_without_its_average_block_in_the_part_read_says_so():
    r = tp.parse_sar(_long_sar(2500, average=False))
    assert r.problem is not None and "Average block" in r.problem and "smaller count" in r.problem
    short = tp.parse_sar(_long_sar(3, average=False))  # all of it read: its last interval is the reading
    assert short.problem is None and short.cpu["user"] == approx(0.485)


def test_a_long_iostat_and_vmstat_are_read_from_their_last_report():
    text = read(REAL / "linux_sysstat_iostat_x.txt")
    second = text.index("avg-cpu", text.index("avg-cpu") + 1)
    long_iostat = text[:second] * 1000 + text[second:]  # the since-boot report 1,000 times, then the last one
    r = tp.parse_iostat(long_iostat)
    assert r.problem is None and r.cpu["idle"] == approx(0.6439) and r.disks["vda"]["iops"] == 5
    vda = next(line for line in text.splitlines() if line.startswith("vda"))
    many = [vda.replace("vda", f"vd{i}", 1) for i in range(tp.TAIL_LINES)]  # a last report longer than the tail
    cut = tp.parse_iostat(text[:second] * 100 + text[second:] + "\n".join(many) + "\n")
    assert cut.problem is not None and "last report" in cut.problem  # said, not a guess from a partial report
    vmstat = read(REAL / "linux_procps_vmstat.txt").splitlines()
    r = tp.parse_vmstat("\n".join(vmstat[:3] + vmstat[2:3] * 30000 + vmstat[3:]))
    assert r.cpu["user"] == approx(0.48) and r.problem is None  # the genuine last row, after 30,000 others


def test_a_long_aix_iostat_DRTl_keeps_the_last_report():
    lines = read(REAL / "aix_iostat_DRTl.txt").splitlines()
    text = "\n".join(lines[:8] + lines[4:8] * 4000 + lines[7:])  # 4,000 more reports like the first, then the last
    r = tp.parse_iostat(text)
    assert r.problem is None and r.disks["hdisk1"]["util"] == approx(0.79) and not r.since_boot_only
    many = [lines[9].replace("hdisk1", f"hdisk{i}", 1) for i in range(2, tp.MAX_LINES + 2)]
    cut = tp.parse_iostat("\n".join(lines + many))  # a last report longer than the tail
    assert cut.problem is not None and "last report" in cut.problem


def test_one_bad_line_loses_nothing_and_nothing_raises():
    base = read(REAL / "solaris_sar_d.txt")
    alone = tp.parse_sar(base)
    for bad in ("", "\x00\xff", "12:40:01 dad1 15 0.7 26", "%busy " * 60, "9" * 5000, "Average", "  -- -- --"):
        mixed = tp.parse_sar(base + bad + "\n")
        assert set(alone.disks) <= set(mixed.disks)
    for junk in (None, 12, b"bytes", "\n" * 30000, "x" * 100000):
        for tool in ("sar", "vmstat", "iostat", "uptime"):
            tp.parse(tool, junk)  # type: ignore[arg-type]


# ---- load: sar -q and uptime -----------------------------------------------------------------------------------
def test_solaris10_sar_q_average_run_queue_and_occupancy():
    r = tp.parse_sar(read(REAL / "solaris_sar_q.txt"))
    assert (r.platform, r.release) == ("solaris", "5.10") and r.sections == ["queue"]
    # Average      1.0       7     0.0       0  (the 05:00:00 row said %runocc 6)
    assert r.run_queue == 1.0 and r.run_queue_occupied == approx(0.07)
    assert r.load is None and r.cpu == {} and r.disks == {}  # SysV sar -q prints no load average


def test_solaris9_sar_q_average_wins_over_the_last_interval():
    r = tp.parse_sar(read(REAL / "solaris9_sar_q.txt"))
    # Average 1.6 1 (the last interval, 11:20:01, said 1.6 0)
    assert r.run_queue == approx(1.6) and r.run_queue_occupied == approx(0.01)


def test_solaris26_sar_q_rows_without_the_swap_queue_columns_are_read():
    r = tp.parse_sar(read(REAL / "solaris26_sar_q_sparse.txt"))
    # Average 1.2 43: two fields under four names (the swap queue was empty); before, only 14:29:12 fitted
    assert r.run_queue == approx(1.2) and r.run_queue_occupied == approx(0.43)
    cut = read(REAL / "solaris26_sar_q_sparse.txt").split("Average")[0]
    assert tp.parse_sar(cut).run_queue == approx(1.1)  # no Average: the last interval (14:31:12 1.1 37)


def test_sysstat_sar_q_gives_the_load_averages():
    text = ("Linux 6.1.0 (host) \t11/23/2026 \t_x86_64_\t(2 CPU)\n\n"
            "02:47:01 AM   runq-sz  plist-sz   ldavg-1   ldavg-5  ldavg-15   blocked\n"
            "02:47:02 AM         3       312      0.41      0.52      0.60         0\n"
            "Average:            3       312      0.41      0.52      0.60         0\n")  # INVENTED (sysstat layout)
    r = tp.parse_sar(text)
    assert r.load == (0.41, 0.52, 0.60) and r.run_queue == 3 and r.run_queue_occupied is None


@pytest.mark.parametrize(("name", "load"), [
    ("coreutils_uptime.txt", (1.39, 1.15, 1.04)),
    ("riscos_uptime.txt", (1.03, 0.50, 0.00)),
    ("linux_procps_uptime.txt", (0.94, 0.98, 1.65)),
])
def test_uptime_load_averages(name, load):
    r = tp.parse_uptime(read(REAL / name))
    assert r.load == load and r.sections == ["load"]


def test_uptime_spellings_and_garbage():
    # macOS and the BSDs: "load averages:" separated by spaces (INVENTED, the layout of their uptime(1))
    assert tp.parse_uptime("10:00  up 2 days, 3 users, load averages: 1.39 1.15 1.04\n").load == (1.39, 1.15, 1.04)
    for bad in ("", "uptime: not found", "load average: 1.0, 2.0", "load average: -1, 2, 3",
                "load average: nan, 1, 2", "load average 1, 2, 3", "x" * 100000, None, b"load average: 1, 2, 3"):
        r = tp.parse_uptime(bad)
        assert r.load is None and r.sections == []


# ---- the collector ----------------------------------------------------------------------------------------------
def _collector(tmp_path: Path, **text) -> HostCollector:
    text.setdefault("command_timeout", 4)
    settings = HostSettings(backend="text", timeout=5, interval=15, text=text)
    return HostCollector(settings, Context(procfs=str(tmp_path / "no-proc")))


def _cat(name: str, where: Path = REAL) -> list[str]:
    return ["cat", str(where / name)]


def test_collector_hpux_through_collect(tmp_path):
    c = _collector(tmp_path, sar=_cat("hpux_sar_d.txt"), vmstat=_cat("hpux_vmstat.txt"), target="hpitan20")
    samples, batch = collect(c)
    t = ("target", "hpitan20")
    assert samples[("middleware_host_disk_service_time_seconds", (("device", "c0t2d0"), t))] == approx(0.0088)
    assert samples[("middleware_host_disk_util_ratio", (("device", "c0t2d0"), t))] == approx(0.005)
    assert samples[("middleware_host_page_scans_per_second", (t,))] == 3
    assert samples[("middleware_host_cpu_mode_ratio", (("mode", "idle"), t))] == 1.0
    assert ("middleware_host_cpu_mode_ratio", (("mode", "iowait"), t)) not in samples  # not printed: absent
    assert samples[("middleware_host_text_platform", (("platform", "hpux"), ("release", "B.11.23"), t))] == 1
    assert samples[("middleware_host_text_source_success", (("source", "sar"), t))] == 1  # the target's sources
    assert samples[("middleware_host_text_source_present", (("source", "iostat"), t))] == 0
    assert not any(name == "middleware_host_cpu_seconds_total" for name, _ in samples)  # no /proc, no counters
    assert batch.errors == {}


def test_collector_load_under_the_procfs_names_with_the_target_label(tmp_path):
    c = _collector(tmp_path, sar=_cat("solaris_sar_q.txt"), vmstat=[], uptime=_cat("coreutils_uptime.txt"),
                   target="sol1")
    samples, batch = collect(c)
    assert batch.errors == {}
    t = ("target", "sol1")
    assert samples[("middleware_host_load1", (t,))] == approx(1.39)
    assert samples[("middleware_host_load5", (t,))] == approx(1.15)
    assert samples[("middleware_host_load15", (t,))] == approx(1.04)
    assert samples[("middleware_host_run_queue_length", (t,))] == 1.0
    assert samples[("middleware_host_run_queue_occupied_ratio", (t,))] == approx(0.07)
    assert samples[("middleware_host_text_source_success", (("source", "uptime"), t))] == 1


def test_collector_uptime_off_by_default_and_its_garbage_fails_only_its_source(tmp_path):
    samples, _ = collect(_collector(tmp_path, sar=_cat("hpux_sar_d.txt"), vmstat=[]))
    assert samples[("middleware_host_text_source_present", (("source", "uptime"),))] == 0
    assert not any(name == "middleware_host_load1" for name, _ in samples)
    c = _collector(tmp_path, sar=_cat("hpux_sar_d.txt"), vmstat=[], uptime=["echo", "uptime: no utmp"])
    samples, batch = collect(c)
    assert samples[("middleware_host_text_source_success", (("source", "uptime"),))] == 0
    assert samples[("middleware_host_text_source_success", (("source", "sar"),))] == 1
    assert "uptime: nothing recognised" in batch.errors["uptime"] and "no utmp" in batch.errors["uptime"]
    assert not any(name == "middleware_host_load1" for name, _ in samples)


def test_collector_disk_exclude_applies(tmp_path):
    settings = HostSettings(backend="text", timeout=5, disk_exclude=",",
                            text={"sar": _cat("solaris_sar_d.txt"), "vmstat": [], "command_timeout": 4})
    samples, _ = collect(HostCollector(settings, Context()))
    devices = {dict(labels).get("device") for name, labels in samples if name == "middleware_host_disk_util_ratio"}
    assert "dad1" in devices and "dad1,a" not in devices


def test_collector_refuses_a_since_boot_only_vmstat(tmp_path):
    c = _collector(tmp_path, sar=[], vmstat=_cat("aix_vmstat_since_boot.txt"))
    samples, batch = collect(c)
    assert samples[("middleware_host_text_source_success", (("source", "vmstat"),))] == 0
    assert "average since boot" in batch.errors["vmstat"]
    assert not any(name == "middleware_host_page_scans_per_second" for name, _ in samples)


def _stand_in_ssh(tmp_path: Path) -> tuple[Path, Path]:
    """A stand-in for ssh: records its arguments and prints the fixture for the remote command it was given."""
    log = tmp_path / "ssh-argv.txt"
    script = tmp_path / "ssh"
    script.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        f"open({str(log)!r}, 'a').write(repr(sys.argv[1:]) + '\\n')\n"
        "tool = sys.argv[sys.argv.index('hpux1') + 1]\n"
        f"fixtures = {{'sar': {str(REAL / 'hpux_sar_d.txt')!r}, 'vmstat': {str(REAL / 'hpux_vmstat.txt')!r}}}\n"
        "sys.stdout.write(open(fixtures[tool]).read())\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script, log


def test_command_prefix_runs_each_tool_through_ssh(tmp_path):
    ssh, log = _stand_in_ssh(tmp_path)
    prefix = [str(ssh), "-o", "BatchMode=yes", "hpux1"]
    c = _collector(tmp_path, command_prefix=prefix, sar=["sar", "-u", "-d", "5", "1"], vmstat=["vmstat", "5", "2"],
                   platform="hpux", target="hpux1")
    samples, batch = collect(c)
    calls = sorted(eval(line) for line in log.read_text().splitlines())  # noqa: S307 - our own repr() lines
    assert calls == [["-o", "BatchMode=yes", "hpux1", "sar", "-u", "-d", "5", "1"],
                     ["-o", "BatchMode=yes", "hpux1", "vmstat", "5", "2"]]
    t = ("target", "hpux1")
    assert samples[("middleware_host_disk_service_time_seconds", (("device", "c0t0d0"), t))] == approx(0.00679)
    assert samples[("middleware_host_page_scans_per_second", (t,))] == 3
    assert batch.errors == {}


def test_hanging_and_failing_commands_are_isolated(tmp_path):
    c = _collector(tmp_path, sar=["sleep", "30"], vmstat=["sh", "-c", "echo 'vmstat: not found' >&2; exit 127"],
                   iostat=_cat("solaris8_iostat_x_two_reports.txt", INVENTED), command_timeout=0.5)
    samples, batch = collect(c)
    ok = {dict(labels)["source"]: v for (name, labels), v in samples.items()
          if name == "middleware_host_text_source_success"}
    assert ok == {"sar": 0, "vmstat": 0, "iostat": 1}
    assert "timed out after 0.5s" in batch.errors["sar"]
    assert "exit status 127" in batch.errors["vmstat"] and "vmstat: not found" in batch.errors["vmstat"]
    assert samples[("middleware_host_disk_util_ratio", (("device", "sd0"), ("target", "")))] == approx(0.71)



@pytest.mark.integration  # waits out a hang or a timeout
def test_the_commands_never_outlive_the_callers_deadline(tmp_path):
    """The tools run as sources of a SourceSet (core/sources.py, as df, HPOM's commands and Domino's show stat do),
    tied to the bounded call the collection runs in: with less time left there than command_timeout, the hung
    tools are killed at the caller's deadline instead of running on unowned for command_timeout.  Before: threads
    of its own, joined without a deadline, so the tools slept on for their whole command_timeout."""
    bindir = tmp_path / "hung"
    bindir.mkdir()
    sar = shell_script(bindir / "sar", "sleep 600\n")
    vmstat = shell_script(bindir / "vmstat", "sleep 600\n")
    settings = HostSettings(backend="text", interval=30, timeout=25,
                            text={"sar": [sar], "vmstat": [vmstat], "command_timeout": 20})
    collector = HostCollector(settings, Context(procfs=str(tmp_path / "no-proc")))
    try:
        samples, batch = BoundedCall("caller")(lambda: collect(collector), 1.5)
    except Overdue:
        pass  # the sources end at the caller's deadline: the caller may give up just before collect() returns
    else:
        for tool in ("sar", "vmstat"):
            assert samples[("middleware_host_text_source_success", (("source", tool),))] == 0
            assert tool in batch.errors  # timed out, or killed or not started at the deadline of the run
    for _ in range(50):  # killed and reaped before the run returns; the wait only absorbs a slow /proc
        if not running_under(bindir):
            break
        time.sleep(0.1)
    assert running_under(bindir) == []


def test_output_nothing_recognised_is_an_error(tmp_path):
    c = _collector(tmp_path, sar=["echo", "sar: can't open /var/adm/sa/sa23"], vmstat=[])
    samples, batch = collect(c)
    assert samples[("middleware_host_text_source_success", (("source", "sar"),))] == 0
    assert "nothing recognised" in batch.errors["sar"] and "can't open" in batch.errors["sar"]


def test_collector_fails_the_source_of_a_long_sar_without_its_average_block(tmp_path):
    whole, cut = tmp_path / "sar-whole.txt", tmp_path / "sar-cut.txt"
    whole.write_text(_long_sar(2500))
    cut.write_text(_long_sar(2500, average=False))
    samples, batch = collect(_collector(tmp_path, sar=["cat", str(whole)], vmstat=[]))
    assert samples[("middleware_host_text_source_success", (("source", "sar"),))] == 1
    assert samples[("middleware_host_cpu_mode_ratio", (("mode", "user"), ("target", "")))] == approx(0.2417)
    samples, batch = collect(_collector(tmp_path, sar=["cat", str(cut)], vmstat=[]))
    assert samples[("middleware_host_text_source_success", (("source", "sar"),))] == 0
    assert "Average block" in batch.errors["sar"]
    assert not any(name == "middleware_host_cpu_mode_ratio" for name, _ in samples)  # no middle interval instead


def test_collector_fails_the_source_of_an_output_cut_at_the_runner_cap(tmp_path):
    flood = tmp_path / "sar-flood.txt"
    flood.write_text(_long_sar(8000))  # over the 4 MiB the runner keeps: the Average block is in what it dropped
    assert flood.stat().st_size > 4 * 1024 * 1024
    samples, batch = collect(_collector(tmp_path, sar=["cat", str(flood)], vmstat=[]))
    assert samples[("middleware_host_text_source_success", (("source", "sar"),))] == 0
    assert "4 MiB" in batch.errors["sar"] and "was cut" in batch.errors["sar"]
    assert not any(name == "middleware_host_cpu_mode_ratio" for name, _ in samples)


def test_collector_reads_aix_iostat_DRTl(tmp_path):
    c = _collector(tmp_path, sar=[], vmstat=[], iostat=_cat("aix_iostat_DRTl.txt"), target="aix1")
    samples, batch = collect(c)
    assert batch.errors == {}
    t = ("target", "aix1")
    assert samples[("middleware_host_text_source_success", (("source", "iostat"), t))] == 1
    assert samples[("middleware_host_disk_util_ratio", (("device", "hdisk1"), t))] == approx(0.79)
    assert samples[("middleware_host_disk_service_time_seconds", (("device", "hdisk1"), t))] == approx(0.0013)


@pytest.mark.integration
def test_exporter_process_reports_the_average_of_a_long_sar_and_fails_a_cut_one(tmp_path, start_exporter):
    whole, cut = tmp_path / "sar-whole.txt", tmp_path / "sar-cut.txt"
    whole.write_text(_long_sar(2500))
    cut.write_text(_long_sar(2500, average=False))
    for path, expected in ((whole, 1.0), (cut, 0.0)):
        config = yaml.safe_dump({"collectors": {"process": {"enabled": False}, "host": {
            "backend": "text", "interval": "60s", "timeout": "20s",
            "text": {"sar": ["cat", str(path)], "vmstat": [], "command_timeout": "15s"}}}})
        exporter = start_exporter(config=config, wait_ready=False)  # a failing only source: never ready
        deadline = time.monotonic() + 60  # a backstop: the first run takes well under a second
        samples: dict = {}
        while ("middleware_host_text_source_success", (("source", "sar"),)) not in samples:
            assert time.monotonic() < deadline, exporter.log()
            time.sleep(0.1)
            status, _, body = exporter.get("/metrics")
            assert status == 200
            samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
                       for family in text_string_to_metric_families(body.decode()) for s in family.samples}
        assert samples[("middleware_host_text_source_success", (("source", "sar"),))] == expected
        user = samples.get(("middleware_host_cpu_mode_ratio", (("mode", "user"), ("target", ""))))
        assert user == (approx(0.2417) if expected else None)  # the Average, or nothing: never a middle interval
        host = next(c for c in json.loads(exporter.get("/api/v1/collectors")[2]) if c["name"] == "host")
        if expected:
            assert host["source_errors"] == {}
        else:  # the metric, the status API and the log agree, and say why
            assert "Average block" in host["source_errors"]["sar"]
            assert host["source_errors"]["sar"] in exporter.log()


def test_command_timeout_must_be_shorter_than_timeout():
    with pytest.raises(ValueError, match="command_timeout"):
        HostSettings(backend="text", timeout=5, text={"command_timeout": 6})
    HostSettings(backend="procfs", timeout=5, text={"command_timeout": 6})  # not checked unless used
