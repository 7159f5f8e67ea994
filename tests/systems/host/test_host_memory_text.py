"""The host collector's text back-end: memory, paging space, virtual swap and the AIX LPAR, read from vmstat,
sar -r / -S, svmon -G, lsps -s, swapinfo, swap -s and lparstat of AIX, HP-UX, Solaris and Linux.

Every figure asserted below was computed by hand from the capture quoted beside it (fixtures/real/SOURCE.md says
where each capture comes from).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from exporter.core.collector import Context
from exporter.systems.host import memparse as mp
from exporter.systems.host import textparse as tp
from exporter.systems.host.collector import HostCollector
from exporter.systems.host.settings import HostSettings
from tests.support import collect

REAL = Path(__file__).parent / "fixtures" / "real"
OLDER = REAL  # the sar/vmstat captures test_host_text.py reads too

KIB, MIB = 1024, 1024 ** 2
NO_TARGET = (("target", ""),)  # the text back-end's own gauges declare the label; /proc's names take it when set


def read(name: str, where: Path = REAL) -> str:
    return (where / name).read_text()


def approx(value: float) -> object:
    return pytest.approx(value, rel=1e-12)


# ---- AIX ----------------------------------------------------------------------------------------------------------
def test_aix_svmon_G_memory_and_paging_space_in_4k_frames():
    r = mp.parse_svmon(read("aix_svmon_G.txt"))
    # memory 1048576 1039740 8836 ...; pg space 917504 2574 (frames of 4096 bytes)
    assert r.memory == {"total": 1048576 * 4096, "free": 8836 * 4096}  # 4 GiB, 36,192,256 bytes
    assert r.swap == {"total": 917504 * 4096, "used": 2574 * 4096}  # 3.5 GiB, 10,543,104 bytes
    assert r.sections == ["memory"] and r.platform == "aix"


def test_aix_svmon_unit_line_and_available_column():
    # svmon -G -O unit=MB: the layout of AIX 6.1 and later (INVENTED values, the published layout)
    text = ("Unit: MB\n" + "-" * 40 + "\n"
            "               size       inuse        free         pin     virtual  available   mmode\n"
            "memory      6144.00     1780.05     4363.95     1130.36     1229.83    4701.70     Ded\n"
            "pg space     512.00        7.46\n")
    r = mp.parse_svmon(text)
    assert r.memory == {"total": approx(6144 * MIB), "free": approx(4363.95 * MIB),
                        "available": approx(4701.70 * MIB)}
    assert r.swap == {"total": approx(512 * MIB), "used": approx(7.46 * MIB)}
    assert mp.parse_svmon(text.replace("Unit: MB", "Unit: QB")).sections == []  # an unknown unit: nothing


def test_aix_lsps_s_total_and_whole_percentage():
    r = mp.parse_lsps(read("aix_lsps_s.txt"))
    # 45568MB 17%
    assert r.swap == {"total": 45568 * MIB, "used": approx(45568 * MIB * 0.17)}  # 47,781,511,168; 8,122,856,898.56


def test_aix_vmstat_fre_avm_in_4k_pages_and_mem_from_the_configuration_line():
    r = tp.parse_vmstat(read("aix_vmstat_config.txt"))
    # System configuration: lcpu=16 mem=25920MB; r b avm 4986615 fre 96970 ...
    assert r.memory == {"free": 96970 * 4096, "active_virtual": 4986615 * 4096, "total": 25920 * MIB}
    assert r.since_boot_only  # (the collector refuses this vmstat: it printed only the since-boot row)


def test_aix_lparstat_shared_uncapped_consumes_more_than_its_entitlement():
    r = mp.parse_lparstat(read("aix_lparstat_shared_uncapped.txt"))
    # type=Shared mode=Uncapped smt=4 lcpu=12 mem=24576MB psize=5 ent=0.30; physc 0.96 %entc 320.0
    assert r.lpar == {"entitled_cores": 0.30, "physical_cores": 0.96, "entitlement_consumed": approx(3.2)}
    assert r.lpar_info == {"type": "Shared", "mode": "Uncapped", "smt": "4"}
    assert r.memory == {"total": 24576 * MIB}
    # the CPU shares say 28 % idle; the LPAR used 3.2 times what it is guaranteed


def test_aix_lparstat_last_interval_row_and_a_memory_size_without_unit():
    r = mp.parse_lparstat(read("aix_lparstat_intervals.txt"))
    # last row: 0.1 2.0 0.0 97.9 physc 0.02 %entc 4.4 ...; ent=0.50; mem=4096 names no unit
    assert r.lpar == {"entitled_cores": 0.5, "physical_cores": 0.02, "entitlement_consumed": approx(0.044)}
    assert r.lpar_info == {"type": "Shared", "mode": "Uncapped", "smt": "On"}
    assert r.memory == {}


def test_aix_lparstat_dedicated_has_no_entitlement_figures():
    r = mp.parse_lparstat(read("aix_lparstat_dedicated.txt"))
    assert r.lpar == {} and r.lpar_info == {"type": "Dedicated", "mode": "Capped", "smt": "4"}
    assert r.memory == {"total": 16384 * MIB} and r.sections == ["lpar"]


# ---- HP-UX --------------------------------------------------------------------------------------------------------
def test_hpux_swapinfo_mt_paging_areas_and_virtual_swap_from_the_total_row():
    r = mp.parse_swapinfo(read("hpux_swapinfo_mt.txt"))
    # dev 8192 0; localfs 64 0 (MiB); total 257352 124326 133026
    assert r.swap == {"total": (8192 + 64) * MIB, "used": 0}
    assert r.virtual_swap == {"total": 257352 * MIB, "available": 133026 * MIB}  # 257352 - 124326


def test_hpux_swapinfo_t_in_kib_and_rows_summed_without_the_total_row():
    text = read("hpux_swapinfo_t.txt")
    r = mp.parse_swapinfo(text)
    # dev 4194304 560688; total 6271128 2100492 4170636 (KiB)
    assert r.swap == {"total": 4194304 * KIB, "used": 560688 * KIB}
    assert r.virtual_swap == {"total": 6271128 * KIB, "available": 4170636 * KIB}
    without_total = "\n".join(line for line in text.splitlines() if not line.startswith("total"))
    # dev + memory AVAIL 4194304 + 2076824; USED 560688 + 577736 (reserve) + 962068: the same as the total row
    assert mp.parse_swapinfo(without_total).virtual_swap == r.virtual_swap


# ---- Solaris ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("name", "used", "available"), [
    ("solaris9_swap_s.txt", 982080, 6014528),
    ("solaris10_swap_s.txt", 91784, 33816648),
])
def test_solaris_swap_s_virtual_swap_in_kib(name, used, available):
    r = mp.parse_swap(read(name))
    assert r.virtual_swap == {"total": (used + available) * KIB, "available": available * KIB}
    assert r.swap == {}  # swap -s says nothing of the disk swap alone (swap -l does)


def test_solaris10_vmstat_swap_and_free_in_kib():
    r = tp.parse_vmstat(read("solaris10_vmstat_memory.txt"))
    # last row: swap 33815328 free 25780520
    assert r.memory == {"free": 25780520 * KIB} and r.virtual_swap == {"available": 33815328 * KIB}


def test_solaris11_sar_r_freemem_in_pages_of_the_banners_machine_and_freeswap_in_blocks():
    r = tp.parse_sar(read("solaris11_sar_r.txt"))
    # Average 632436 5876480; i86pc: 4 KiB pages (pagesize printed 4096)
    assert r.memory == {"free": 632436 * 4096} and r.virtual_swap == {"available": 5876480 * 512}
    sparc = read("solaris11_sar_r.txt").replace("i86pc", "sun4u")
    assert tp.parse_sar(sparc).memory == {"free": 632436 * 8192}
    nameless = "\n".join(read("solaris11_sar_r.txt").splitlines()[1:])  # no banner: the page size is unknown
    assert tp.parse_sar(nameless).memory == {} and tp.parse_sar(nameless).virtual_swap


def test_older_solaris_vmstat_fixture_gains_its_memory_columns():
    r = tp.parse_vmstat(read("solaris_vmstat.txt", OLDER))
    last = read("solaris_vmstat.txt", OLDER).split("\n")
    row = [line for line in last if line.strip()][-1].split()
    assert r.memory["free"] == int(row[4]) * KIB and r.virtual_swap["available"] == int(row[3]) * KIB


# ---- Linux --------------------------------------------------------------------------------------------------------
def test_sysstat10_sar_r_last_interval_and_the_annotation_line_ignored():
    r = tp.parse_sar(read("linux_sysstat10_sar_r.txt"))
    # 16:40:01 kbmemfree 62124 ... kbbuffers 0 (no Average block in the excerpt; no kbavail in sysstat 10)
    assert r.memory == {"free": 62124 * KIB, "buffers": 0}


def test_sysstat_sar_S_swap_total_is_free_plus_used():
    text = ("Linux 6.1.0 (host) \t11/23/2026 \t_x86_64_\t(2 CPU)\n\n"
            "02:47:01 AM kbswpfree kbswpused  %swpused  kbswpcad   %swpcad\n"
            "02:47:02 AM   1048572         4      0.00         0      0.00\n"
            "Average:      1048572         4      0.00         0      0.00\n")  # INVENTED (sysstat 12 layout)
    assert tp.parse_sar(text).swap == {"total": 1048576 * KIB, "used": 4 * KIB}


def test_procps_vmstat_memory_columns():
    r = tp.parse_vmstat(read("linux_procps_vmstat.txt", OLDER))
    row = [line for line in read("linux_procps_vmstat.txt", OLDER).splitlines() if line.strip()][-1].split()
    # r b swpd free buff cache ...
    assert r.swap == {"used": int(row[2]) * KIB}
    assert r.memory == {"free": int(row[3]) * KIB, "buffers": int(row[4]) * KIB, "cached": int(row[5]) * KIB}


# ---- wrong or garbled output ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(("parser", "text"), [
    (mp.parse_svmon, "svmon: 3004-801 You must be root or have the SystemAdmin role\n"),
    (mp.parse_svmon, "              size       inuse        free\nmemory      x1048576     1039740        8836\n"),
    (mp.parse_lsps, "Total Paging Space   Percent Used\n      45568MB              170%\n"),
    (mp.parse_lsps, "Total Paging Space   Percent Used\n      45568XB              17%\n"),
    (mp.parse_swapinfo, "swapinfo: Permission denied\n"),
    (mp.parse_swapinfo, "             Mb      Mb      Mb   PCT  START/      Mb\n"
                        "TYPE      AVAIL    USED    FREE  USED   LIMIT RESERVE  PRI  NAME\n"
                        "dev        8x92       0    8192    0%       0       -    1  /dev/vg00/lvol2\n"),
    (mp.parse_swap, "total: 85.8M allocated + 3.9M reserved = 89.6M used, 32G available\n"),  # swap -s -h
    (mp.parse_swap, "total: 87832k bytes allocated + 3952k reserved = 91784k used\n"),
    (mp.parse_lparstat, "lparstat: 0551-004 This command is not supported on this partition\n"),
])
def test_wrong_or_garbled_output_gives_nothing(parser, text):
    r = parser(text)
    assert r.sections == [] and not (r.memory or r.swap or r.virtual_swap or r.lpar)


def test_nothing_raises_on_junk():
    for junk in (None, 12, b"bytes", "\n" * 30000, "x" * 100000, "\x00\xff", "total: " * 1000,
                 "System configuration: " + "ent=" * 200, "Unit: " * 3):
        for parser in (mp.parse_svmon, mp.parse_lsps, mp.parse_swapinfo, mp.parse_swap, mp.parse_lparstat):
            parser(junk)  # type: ignore[arg-type]


def test_a_garbled_row_loses_only_itself():
    text = read("aix_lparstat_intervals.txt") + "0.1   2.0    0.0   97.9  nan   4.4    5.0   693     0\n"
    assert mp.parse_lparstat(text).lpar["physical_cores"] == 0.02  # the last good row


# ---- the collector ------------------------------------------------------------------------------------------------
def _collector(tmp_path: Path, **text) -> HostCollector:
    text.setdefault("command_timeout", 4)
    text.setdefault("sar", [])
    text.setdefault("vmstat", [])
    settings = HostSettings(backend="text", timeout=5, interval=15, text=text)
    return HostCollector(settings, Context(procfs=str(tmp_path / "no-proc")))


def _cat(name: str, where: Path = REAL) -> list[str]:
    return ["cat", str(where / name)]


def test_memory_commands_are_off_by_default():
    settings = HostSettings(backend="text").text
    assert (settings.svmon, settings.lsps, settings.swapinfo, settings.swap, settings.lparstat) == ([],) * 5


def test_collector_aix_memory_paging_space_and_lpar(tmp_path):
    c = _collector(tmp_path, svmon=_cat("aix_svmon_G.txt"), lsps=_cat("aix_lsps_s.txt"),
                   lparstat=_cat("aix_lparstat_shared_uncapped.txt"), target="aix1")
    samples, batch = collect(c)
    assert batch.errors == {}
    t = ("target", "aix1")
    assert samples[("middleware_host_memory_total_bytes", (t,))] == 1048576 * 4096  # svmon (before lparstat)
    assert samples[("middleware_host_memory_free_bytes", (t,))] == 8836 * 4096
    # svmon's exact pair, not lsps's whole percentage of another host's capture
    assert samples[("middleware_host_swap_total_bytes", (t,))] == 917504 * 4096
    assert samples[("middleware_host_swap_used_bytes", (t,))] == 2574 * 4096
    assert samples[("middleware_host_lpar_entitled_cores", (t,))] == 0.30
    assert samples[("middleware_host_lpar_physical_cores", (t,))] == 0.96
    assert samples[("middleware_host_lpar_entitlement_consumed_ratio", (t,))] == approx(3.2)
    assert samples[("middleware_host_lpar_info", (("mode", "Uncapped"), ("smt", "4"), t, ("type", "Shared")))] == 1
    for source in ("svmon", "lsps", "lparstat"):
        assert samples[("middleware_host_text_source_success", (("source", source), t))] == 1


def test_collector_hpux_swapinfo_beside_vmstat(tmp_path):
    c = _collector(tmp_path, vmstat=_cat("hpux_vmstat.txt", OLDER), swapinfo=_cat("hpux_swapinfo_mt.txt"))
    samples, batch = collect(c)
    assert batch.errors == {}
    assert samples[("middleware_host_swap_total_bytes", ())] == 8256 * MIB
    assert samples[("middleware_host_swap_used_bytes", ())] == 0
    assert samples[("middleware_host_virtual_swap_total_bytes", NO_TARGET)] == 257352 * MIB
    assert samples[("middleware_host_virtual_swap_available_bytes", NO_TARGET)] == 133026 * MIB
    row = [line for line in read("hpux_vmstat.txt", OLDER).splitlines() if line.strip()][-1].split()
    assert samples[("middleware_host_memory_free_bytes", ())] == int(row[4]) * 4096  # r b w avm free
    assert samples[("middleware_host_memory_active_virtual_bytes", NO_TARGET)] == int(row[3]) * 4096


def test_collector_solaris_swap_s_wins_over_vmstats_lone_available(tmp_path):
    c = _collector(tmp_path, vmstat=_cat("solaris10_vmstat_memory.txt"), swap=_cat("solaris10_swap_s.txt"))
    samples, batch = collect(c)
    assert batch.errors == {}
    assert samples[("middleware_host_memory_free_bytes", ())] == 25780520 * KIB
    # swap -s gave total and available together: both from it, not vmstat's 33815328 KiB of another moment
    assert samples[("middleware_host_virtual_swap_total_bytes", NO_TARGET)] == (91784 + 33816648) * KIB
    assert samples[("middleware_host_virtual_swap_available_bytes", NO_TARGET)] == 33816648 * KIB


def test_collector_a_garbled_memory_command_fails_its_source_and_loses_nothing_else(tmp_path):
    c = _collector(tmp_path, vmstat=_cat("solaris10_vmstat_memory.txt"),
                   swap=["echo", "swap: cannot open /dev/kmem"],
                   lparstat=["sh", "-c", "echo 'lparstat: not found' >&2; exit 127"])
    samples, batch = collect(c)
    ok = {dict(labels)["source"]: v for (name, labels), v in samples.items()
          if name == "middleware_host_text_source_success"}
    assert ok["vmstat"] == 1 and ok["swap"] == 0 and ok["lparstat"] == 0
    assert "swap: nothing recognised" in batch.errors["swap"] and "/dev/kmem" in batch.errors["swap"]
    assert "not found" in batch.errors["lparstat"]
    assert samples[("middleware_host_memory_free_bytes", ())] == 25780520 * KIB  # vmstat's figures stay
    assert samples[("middleware_host_virtual_swap_available_bytes", NO_TARGET)] == 33815328 * KIB
    assert ("middleware_host_virtual_swap_total_bytes", NO_TARGET) not in samples  # swap -s gave nothing: absent
    assert not any(name.startswith("middleware_host_lpar") for name, _ in samples)


def test_memory_commands_pass_the_remote_argument_check():
    with pytest.raises(ValueError, match="lparstat"):
        HostSettings(backend="text", text={"command_prefix": ["ssh", "h"], "lparstat": ["lparstat", "5\n1"]})
