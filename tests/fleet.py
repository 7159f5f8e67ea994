"""A simulated fleet of remote Unix hosts on ONE real loopback sshd (Debian's openssh-server, tests/sshd.py), for
tests/deploy/test_fleet.py, tests/web/test_probe_endpoint.py, bench/fleet.py and bench/fakehost_cost.py (issue 37,
item 5): the project's one simulated estate.

Each host is a name the client's ssh configuration (``Fleet.ssh_config``) maps to the sshd: ``Host hpux017`` ->
HostName 127.0.0.1, the port, the user, its own ed25519 key ``keys/hpux017``, the sshd's host key in a strict
known-hosts file, BatchMode.  Its key's authorized_keys line forces ``/bin/sh tests/fakehost.sh hpux017 <fleet
dir> <python>``, which prints that host's genuine captures for sar/vmstat/iostat/uptime/df/bdf (never executing
what it is sent) and hands a slow or hung host to tests/fakehost.py; sh because a Python start per command, a few
hundred a minute, cost more CPU than the exporters the fleet is there to measure (bench/fakehost_cost.py;
``entry="python"`` forces fakehost.py for every command, the old way).  A refusing host's key is not in
authorized_keys at all, so ssh fails as it does against a host that does not trust the monitoring key.
Platforms rotate HP-UX, AIX, Solaris, Linux; behaviours are healthy, slow, hung, refusing and can be changed while
the fleet runs (``set_behaviour``).

``PLATFORMS`` says which capture answers which tool on which platform, ``EXPECTED`` the figures a person reads
off those captures (what an exporter reading the host must report), ``probe_modules``/``inventory`` the shards'
modules and inventory (docs/estate.md).

    python -m tests.fleet --hosts 12 --hung 0.25    # start a fleet, print its ssh configuration, wait for ^C
"""

from __future__ import annotations

import functools
import os
import shlex
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from .sshd import LoopbackSshd
from .support import REPO, naming

FAKEHOST = Path(__file__).resolve().parent / "fakehost.py"
FAKEHOST_SH = Path(__file__).resolve().parent / "fakehost.sh"
ENTRIES = ("sh", "python")  # the forced command: fakehost.sh (slow and hung hosts to fakehost.py), or fakehost.py
BEHAVIOURS = ("healthy", "slow", "hung", "refusing")


HOST_TEXT = REPO / "tests" / "systems" / "host" / "fixtures" / "real"  # genuine captures, SOURCE.md beside them
FILESYSTEM = REPO / "tests" / "systems" / "filesystem" / "fixtures" / "real"

# platform -> (host-name prefix, tool -> (captures directory, file)); SOURCE.md beside each file says where it
# was published.  A tool a platform has no usable capture for is absent (its module does not run it).
PLATFORMS: dict[str, tuple[str, dict[str, tuple[Path, str]]]] = {
    "hpux": ("hpux", {"sar": (HOST_TEXT, "hpux_sar_d.txt"), "vmstat": (HOST_TEXT, "hpux_vmstat.txt"),
                      "bdf": (FILESYSTEM, "hpux_bdf_hpux1-vxfs.txt")}),
    "aix": ("aix", {"iostat": (HOST_TEXT, "aix_iostat_DRTl.txt"), "df": (FILESYSTEM, "generic_df_aix.txt")}),
    "solaris": ("sol", {"sar": (HOST_TEXT, "solaris_sar_d.txt"), "vmstat": (HOST_TEXT, "solaris_vmstat.txt"),
                        "df": (FILESYSTEM, "generic_df_solaris.txt")}),
    "linux": ("linux", {"sar": (HOST_TEXT, "linux_sysstat_sar_udB.txt"),
                        "iostat": (HOST_TEXT, "linux_sysstat_iostat_x.txt"),
                        "vmstat": (HOST_TEXT, "linux_procps_vmstat.txt"),
                        "uptime": (HOST_TEXT, "linux_procps_uptime.txt")}),
}
# The commands an exporter runs on each platform (collectors.host.text / collectors.filesystem.text).
COMMANDS: dict[str, dict[str, list[str]]] = {
    "hpux": {"sar": ["sar", "-d", "5", "1"], "vmstat": ["vmstat", "5", "2"], "df": ["bdf"]},
    "aix": {"iostat": ["iostat", "-DRTl", "5", "2"], "df": ["df", "-kP"]},
    "solaris": {"sar": ["sar", "-d", "5", "1"], "vmstat": ["vmstat", "5", "2"], "df": ["df", "-k"]},
    "linux": {"sar": ["sar", "-u", "-d", "-B", "1", "3"], "iostat": ["iostat", "-x", "1", "2"],
              "vmstat": ["vmstat", "1", "3"], "uptime": ["uptime"]},
}
# Figures read off the captures by eye (the same rows tests/systems/host/test_host_text.py and
# tests/systems/filesystem/test_filesystem_text.py quote): (metric, labels besides target, value).
EXPECTED: dict[str, list[tuple[str, dict[str, str], float]]] = {
    "hpux": [  # sar -d: 02:40:02 c0t2d0 0.50 0.50 0 8 0.01 8.80; vmstat last row: sr 3 ... us 0 sy 0 id 100
        ("middleware_host_disk_service_time_seconds", {"device": "c0t2d0"}, 0.0088),
        ("middleware_host_page_scans_per_second", {}, 3.0),
        ("middleware_host_cpu_mode_ratio", {"mode": "idle"}, 1.0),
        # bdf: /dev/vg00/lvol3 2097152 339960 1743512 16% /
        ("middleware_filesystem_avail_bytes", {"mountpoint": "/"}, 1743512 * 1024.0)],
    "aix": [  # iostat -DRTl second report: hdisk1 79.0 164.1M 626.0 ... rps 626.0 avgserv 1.3
        ("middleware_host_disk_util_ratio", {"device": "hdisk1"}, 0.79),
        ("middleware_host_disk_transfers_per_second", {"device": "hdisk1"}, 626.0),
        ("middleware_host_disk_service_time_seconds", {"device": "hdisk1"}, 0.0013),
        # df -kP: /dev/hd4 2097152 1005632 1091520 48% /
        ("middleware_filesystem_size_bytes", {"mountpoint": "/"}, 2097152 * 1024.0)],
    "solaris": [  # sar -d: 12:40:01 dad1 15 0.7 26 399 18.1 10.0; vmstat last row: sr 4 ... us 0 sy 7 id 93
        ("middleware_host_disk_service_time_seconds", {"device": "dad1"}, 0.010),
        ("middleware_host_page_scans_per_second", {}, 4.0),
        ("middleware_host_cpu_mode_ratio", {"mode": "system"}, 0.07),
        # df -k: /dev/vx/dsk/bootdg/rootvol 16525754 5423501 10936996 34% /
        ("middleware_filesystem_avail_bytes", {"mountpoint": "/"}, 10936996 * 1024.0)],
    "linux": [  # sar Average: all 24.17 0.00 1.67 0.00 0.67 73.50; vda 13.33 tps; load average: 0.94, 0.98, 1.65
        ("middleware_host_cpu_mode_ratio", {"mode": "user"}, 0.2417),
        ("middleware_host_disk_transfers_per_second", {"device": "vda"}, 13.33),
        ("middleware_host_load1", {}, 0.94), ("middleware_host_load5", {}, 0.98),
        ("middleware_host_load15", {}, 1.65)],
}


@dataclass
class Host:
    name: str
    platform: str
    behaviour: str = "healthy"
    delay: float = 3.0  # seconds a slow host takes


def plan(count: int, hung: float = 0.0, slow: float = 0.0, refusing: float = 0.0) -> list[Host]:
    """``count`` hosts, platforms in rotation, the given shares hung/slow/refusing spread evenly (deterministic:
    host i is hung when ``floor((i+1)*hung)`` steps up; then slow, then refusing among the others)."""
    names = list(PLATFORMS)
    hosts = []
    for i in range(count):
        platform = names[i % len(names)]
        host = Host(f"{PLATFORMS[platform][0]}{i:03d}", platform)
        for behaviour, share in (("hung", hung), ("slow", slow), ("refusing", refusing)):
            offset = {"hung": 0.0, "slow": 0.34, "refusing": 0.67}[behaviour]  # not the same hosts
            if share and int((i + 1) * share + offset) > int(i * share + offset) and host.behaviour == "healthy":
                host.behaviour = behaviour
        hosts.append(host)
    return hosts


def _keygen(path: Path) -> None:
    if not path.exists():
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", path.name, "-f", str(path)],
                       check=True, stdin=subprocess.DEVNULL)


class Fleet:
    """The fleet's directory (``work``): sshd's files (sshd/), one key per host (keys/, or ``key_cache`` shared
    between fleets of a session), the ssh configuration (ssh_config), the hosts' states (hosts/<host>.state) and
    the capture table (platforms/<platform>/<tool>, links to the captures) that the forced command reads;
    ``entry`` chooses that command (``ENTRIES``), ``account_rc`` lets the account's bash read ~/.bashrc for each
    command as it did before (off: the machine's rc files are no part of a simulated host)."""

    def __init__(self, work: Path, hosts: list[Host], key_cache: Path | None = None, entry: str = "sh",
                 account_rc: bool = False) -> None:
        assert entry in ENTRIES, entry
        self.work = work
        self.entry = entry
        self.hosts = {host.name: host for host in hosts}
        self.keys = key_cache or work / "keys"
        self.keys.mkdir(parents=True, exist_ok=True)
        # MaxStartups: hundreds of handshakes at once (the default 10:30:100 drops connections from the 11th);
        # MaxSessions: sessions multiplexed over one kept master connection (ControlMaster).
        # SHLVL=1: the account's bash reads ~/.bashrc for a command from sshd only at shell level 1, and this
        # account's runs ``pyenv init`` (100 ms of CPU a command here), a cost of the machine the fleet runs on, not
        # of a monitored host (``account_rc=True`` keeps it: how the fleet ran before)
        self.sshd = LoopbackSshd(work / "sshd", environment=None if account_rc else {"SHLVL": "1"},
                                 options="MaxStartups 1000\nMaxSessions 100\nLoginGraceTime 30\n")
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(_keygen, (self.keys / name for name in self.hosts)))
        write_platforms(work, {platform: {tool: folder / name for tool, (folder, name) in tools.items()}
                               for platform, (_, tools) in PLATFORMS.items()})
        for host in hosts:
            self._write_state(host)
        self._write_authorized_keys()
        self.ssh_config = work / "ssh_config"
        self.ssh_config.write_text("".join(f"""Host {name}
  HostName 127.0.0.1
  Port {self.sshd.port}
  User {self.sshd.user}
  IdentityFile {self.keys / name}
  IdentitiesOnly yes
  UserKnownHostsFile {self.sshd.work / "known_hosts"}
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  BatchMode yes
  ConnectTimeout 5
  LogLevel ERROR
""" for name in self.hosts))

    def _write_state(self, host: Host) -> None:
        write_state(self.work, host.name, host.platform, host.behaviour, host.delay)

    def _write_authorized_keys(self) -> None:
        lines = []
        for name, host in self.hosts.items():
            if host.behaviour == "refusing":
                continue
            command = forced_command(self.entry, name, self.work)
            key = (self.keys / f"{name}.pub").read_text().split()
            lines.append(f'restrict,command="{command}" {key[0]} {key[1]} {name}\n')
        path = self.sshd.work / "authorized_keys"
        temporary = path.with_suffix(".tmp")
        temporary.write_text("".join(lines))
        temporary.replace(path)  # sshd reads the file at each authentication

    def set_behaviour(self, name: str, behaviour: str, delay: float | None = None) -> None:
        assert behaviour in BEHAVIOURS, behaviour
        host = self.hosts[name]
        refusing_changed = (host.behaviour == "refusing") != (behaviour == "refusing")
        host.behaviour = behaviour
        if delay is not None:
            host.delay = delay
        self._write_state(host)
        if refusing_changed:
            self._write_authorized_keys()

    def start(self) -> Fleet:
        self.sshd.start()
        return self

    def _processes(self) -> list[str]:
        """What runs for this fleet: a file under its directory on the command line, or the directory itself as
        an argument (the forced commands get ``<fleet dir>`` with no slash after it)."""
        return naming(f"{self.work}/", f" {self.work} ")  # one look through /proc for both

    def stop(self) -> None:
        self.sshd.stop()
        # sshd's session processes outlive the listener; end what any session of this fleet still runs, until none
        # is listed: a SIGKILL takes effect after kill() returns, and the killed process was still listed by a
        # leftovers() right after (test_a_hung_command_is_seen_as_running_and_ended_with_the_fleet, 2 runs in 6)
        give_up = time.monotonic() + 10  # a bound on a loaded machine, not a timing assertion
        while True:
            pids = [pid for pid in (int(line.split(":", 1)[0]) for line in self._processes()) if pid != os.getpid()]
            if not pids or time.monotonic() > give_up:
                return
            for pid in pids:
                try:
                    os.kill(pid, 9)
                except ProcessLookupError:
                    pass
            time.sleep(0.02)

    def leftovers(self) -> list[str]:
        return self._processes()

    def __enter__(self) -> Fleet:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def ssh(self, name: str, *argv: str, timeout: float = 20) -> subprocess.CompletedProcess:
        """Run ``argv`` on host ``name`` as an operator would: ``ssh -F ssh_config name argv...``."""
        return subprocess.run(["ssh", "-F", str(self.ssh_config), name, *argv], capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)

    def prefix(self, name: str) -> list[str]:
        """collectors.*.text.command_prefix reading host ``name`` (single-host mode)."""
        return ["ssh", "-F", str(self.ssh_config), name]

    def by_behaviour(self, behaviour: str) -> list[str]:
        return [name for name, host in self.hosts.items() if host.behaviour == behaviour]


def forced_command(entry: str, name: str, work: Path) -> str:
    """The ``command="..."`` of host ``name``'s authorized_keys line (a shell command line: sshd runs it with the
    account's shell, ``-c``)."""
    python = os.path.realpath(sys.executable)
    if entry == "sh":
        argv = ["/bin/sh", str(FAKEHOST_SH), name, str(work), python]
    else:
        argv = [python, "-I", "-S", str(FAKEHOST), name, str(work)]
    command = " ".join(shlex.quote(part) for part in argv)
    assert '"' not in command and "\\" not in command, command  # sshd's option syntax ends it at a quote
    return command


def write_state(work: Path, name: str, platform: str, behaviour: str, delay: float = 3.0) -> None:
    """``hosts/<name>.state``: ``<platform> <behaviour> <delay>``, the one line the forced command reads at every
    call, replaced by a rename (a command starting now reads the old state or the new, never half of one)."""
    assert behaviour in BEHAVIOURS and platform.isalnum(), (platform, behaviour)
    path = work / "hosts" / f"{name}.state"
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(f"{platform} {behaviour} {float(delay)!r}\n")
    temporary.replace(path)


def write_platforms(work: Path, table: dict[str, dict[str, Path]]) -> None:
    """``platforms/<platform>/<tool>``: a link to the capture the tool prints on that platform."""
    for platform, tools in table.items():
        folder = work / "platforms" / platform
        folder.mkdir(parents=True, exist_ok=True)
        for tool, path in tools.items():
            assert tool.isascii() and tool.isalpha() and tool.islower(), tool  # what fakehost.sh accepts
            (folder / tool).symlink_to(path.resolve())


def capture(platform: str, tool: str) -> str:
    folder, name = PLATFORMS[platform][1][tool]
    return (folder / name).read_text()


def single_host_config(fleet: Fleet, name: str, interval: float = 60, timeout: float = 10,
                       command_timeout: float = 8) -> dict:
    """An ordinary exporter's configuration reading host ``name`` through ssh (collectors.host text back-end, and
    the filesystem text back-end where the platform has a df capture): what one-process-per-host means today."""
    platform = fleet.hosts[name].platform
    commands = COMMANDS[platform]
    text = {tool: commands.get(tool, []) for tool in ("sar", "vmstat", "iostat", "uptime")}
    collectors: dict = {
        "host": {"backend": "text", "interval": interval, "timeout": timeout,
                 "text": {**text, "command_prefix": fleet.prefix(name), "target": name, "platform": platform,
                          "command_timeout": command_timeout}},
        "filesystem": {"enabled": False},
    }
    if "df" in commands:
        collectors["filesystem"] = {"backend": "text", "interval": interval, "timeout": timeout,
                                    "statfs_timeout": timeout / 2,  # statfs is not used by the text back-end
                                    "text": {"command_prefix": fleet.prefix(name), "target": name,
                                             "platform": platform, "df": commands["df"],
                                             "command_timeout": command_timeout}}
    for other in ("process", "hpom", "oracle", "ibmmq", "vhi", "domino", "certificates", "mountstats"):
        collectors[other] = {"enabled": False}
    return {"collectors": collectors}


# ---- the /probe side (issue 37 items 1-3; PROBE.md): every guess about its configuration is here ----------------
def probe_modules(fleet: Fleet, timeout: float = 20, freshness: float = 30, concurrency: int = 16,
                  command_timeout: float = 8, allow: str = "") -> dict:
    """``modules:`` of a shard reading the fleet: one module per platform (its commands), ssh through the fleet's
    configuration (host keys, aliases, keys), connections kept between probes; ``allow``: each module's pattern of
    targets accepted outside the inventory (empty: none)."""
    modules = {}
    for platform, commands in COMMANDS.items():
        text = {tool: commands.get(tool, []) for tool in ("sar", "vmstat", "iostat", "uptime")}
        collectors: dict = {"host": {"backend": "text", "text": {**text, "platform": platform,
                                                                 "command_timeout": command_timeout}}}
        if "df" in commands:
            collectors["filesystem"] = {"backend": "text", "text": {"df": commands["df"], "platform": platform,
                                                                    "command_timeout": command_timeout}}
        modules[platform] = {"ssh": {"config_file": str(fleet.ssh_config), "control_persist": 120},
                             "collectors": collectors, "timeout": timeout, "freshness": freshness,
                             "concurrency": concurrency}
        if allow:
            modules[platform]["allow"] = allow
    return modules


def inventory(fleet: Fleet, names: list[str] | None = None) -> list[dict]:
    """The fleet (or only its hosts ``names``) as a file_sd inventory: one group per platform that has hosts in
    it, its module in ``__param_module``."""
    chosen = list(fleet.hosts) if names is None else names
    groups = []
    for platform in COMMANDS:
        targets = [name for name in chosen if fleet.hosts[name].platform == platform]
        if targets:
            groups.append({"targets": targets, "labels": {"__param_module": platform, "platform": platform}})
    return groups


def shard_config(fleet: Fleet, inventory_file: Path, **module_options) -> dict:
    """A shard's whole configuration: the inventory, the modules, and no local collector."""
    collectors = {name: {"enabled": False} for name in ("host", "filesystem", "process", "hpom", "oracle", "ibmmq",
                                                         "vhi", "domino", "certificates", "mountstats")}
    return {"inventory": {"file": str(inventory_file)}, "modules": probe_modules(fleet, **module_options),
            "collectors": collectors}


@functools.lru_cache(maxsize=1)
def main() -> None:
    import argparse
    import signal

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=12)
    parser.add_argument("--hung", type=float, default=0.0)
    parser.add_argument("--slow", type=float, default=0.0)
    parser.add_argument("--refusing", type=float, default=0.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fleet-") as tmp, \
            Fleet(Path(tmp), plan(args.hosts, args.hung, args.slow, args.refusing)) as fleet:
        for name, host in fleet.hosts.items():
            print(f"{name:10} {host.platform:8} {host.behaviour}")
        print(f"\nssh -F {fleet.ssh_config} {next(iter(fleet.hosts))} sar -d 5 1     (^C ends the fleet)")
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        try:
            signal.pause()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
