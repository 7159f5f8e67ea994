#!/usr/bin/env python3
"""The fleet benchmark (issue 37, item 5): N simulated remote Unix hosts (tests/fleet.py: one loopback sshd, a
forced command per host printing genuine sar/vmstat/iostat/df captures) read at a 60 s cadence, in one run:

(i)   two shards (``/sd?shard=I&shards=2``) reading every host through ``/probe``: CPU seconds per 100 hosts per
      minute and resident memory per shard, the probes' p50/p99 for healthy hosts, then the same with 10 % of
      the hosts hung (the cost of hung hosts to the others).  The bench itself is the scraper here, as Prometheus
      is: each host probed once a minute at its own offset in the minute, without a break from the shards' start,
      the latency measured at the client.  The first two minutes are a warm-up, printed but not measured against
      the goals: a target's first probe waits for its first collection, and from its second on the shard knows
      the cadence and reads the target ahead of its next probe.
(ii)  the reference, measured in the same run: one exporter process per host (single-host mode,
      ``collectors.host.text.command_prefix: [ssh, -F, <fleet config>, <host>]``) for a sample of hosts
      (--reference, default 20), scraped once a minute; RSS and CPU per host, extrapolated to 100 hosts (said so
      in the output).
(iii) the time from a hang to its page: Prometheus in agent mode -> VictoriaMetrics -> vmalert (alerts/*.yml
      with every duration divided by --rule-scale, 30 by default: ``MiddlewareExporterTargetDown``'s 10m window
      and 5m ``for:`` become 20 s and 10 s) -> Alertmanager -> a webhook (tests/stack.py); scrape and evaluation
      every 2 s, through the shards.

The fleet stands for 300 other machines, but runs on this one: its sshd (and so every session and forced command
it starts) runs at ``--fleet-nice`` (19 by default), so that the hosts' work waits for the CPU the exporters would
have to themselves on their own machine, instead of delaying their answers as no real remote host could.  The
exporters, the ssh clients they start and the scraper run at the normal priority.

CPU is utime+stime+cutime+cstime of each exporter (its waited-for ssh clients included) plus, for the shards,
the ssh master connections they keep (detached processes, counted from /proc and split evenly between shards).
Prints ratios against the reference and the issue's goals; exits 1 when a goal is missed.

    python bench/fleet.py [--hosts 300] [--minutes 2] [--reference 20] [--hung 0.1] [--rule-scale 30]
                          [--fleet-nice 19] [--json F]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import sys
import tempfile
import threading
import time
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO))
from _common import free_port, stop_process  # noqa: E402

from tests.fleet import Fleet, inventory, plan, shard_config, single_host_config  # noqa: E402
from tests.stack import Stack, rule, scaled_rules  # noqa: E402

CADENCE = 60.0
GOALS = {"shard_core": 0.25, "shard_rss_mb": 150.0, "healthy_p99_ms_while_hung": 50.0}
CLK_TCK = os.sysconf("SC_CLK_TCK")


# ---- processes -------------------------------------------------------------------------------------------------
class Exporter:
    """``python -m exporter run`` on a free loopback port with ``config``; its log in ``work``."""

    def __init__(self, work: Path, name: str, config: dict) -> None:
        import subprocess

        self.port = free_port()
        path = work / f"{name}.yaml"
        path.write_text(yaml.safe_dump(config))
        self.log = work / f"{name}.log"
        env = {k: v for k, v in os.environ.items() if not k.startswith("MIDDLEWARE_EXPORTER_")}
        env["PYTHONPATH"] = str(REPO)
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen([sys.executable, "-m", "exporter", "run", "--config", str(path),
                                          "--web.listen-address", f"127.0.0.1:{self.port}"], cwd=REPO, env=env,
                                         stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)

    def wait_ready(self, limit: float = 90) -> None:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"exporter exited with {self.proc.returncode}:\n{self.log.read_text()[-2000:]}")
            try:
                if get(self.port, "/healthz", 2)[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise SystemExit(f"exporter not answering within {limit} s:\n{self.log.read_text()[-2000:]}")

    def stop(self) -> None:
        stop_process(self.proc)


def get(port: int, path: str, timeout: float = 30) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / CLK_TCK


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def ssh_masters() -> dict[int, float]:
    """pid -> CPU seconds of the ssh master connections alive now (``ssh: <control path> [mux]``): detached
    from the exporter that started them, so not in its cutime."""
    found = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            if cmdline.startswith("ssh: ") and "[mux]" in cmdline:
                found[int(pid)] = cpu_seconds(int(pid))
        except OSError:
            continue
    return found


def quantile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# ---- the scraper: each target once per cadence, at its own offset ---------------------------------------------
def scrape_for(targets: list[tuple[str, int, str]], seconds: float, cadence: float = CADENCE) -> dict[str, list]:
    """Scrape every (name, port, path) once per ``cadence`` at a stable offset for ``seconds``; per name the list
    of (latency s, status, when the request started on the monotonic clock)."""
    results: dict[str, list] = {name: [] for name, _, _ in targets}
    lock = threading.Lock()
    start = time.monotonic()
    end = start + seconds
    schedule = sorted(((zlib.crc32(name.encode()) % int(cadence * 1000)) / 1000, name, port, path)
                      for name, port, path in targets)

    def one(name: str, port: int, path: str) -> None:
        began = time.monotonic()
        try:
            status, _ = get(port, path, timeout=cadence)
        except OSError:
            status = 0
        with lock:
            results[name].append((time.monotonic() - began, status, began))

    with ThreadPoolExecutor(64) as pool:
        cycle = 0
        while True:
            for offset, name, port, path in schedule:
                due = start + cycle * cadence + offset
                if due >= end:
                    break
                time.sleep(max(0.0, due - time.monotonic()))
                pool.submit(one, name, port, path)
            cycle += 1
            if start + cycle * cadence >= end:
                break
        time.sleep(max(0.0, end - time.monotonic()))
    return results


# ---- the parts ---------------------------------------------------------------------------------------------------
def reference(fleet: Fleet, work: Path, sample: int, minutes: float) -> dict:
    names = [name for name, host in fleet.hosts.items() if host.behaviour == "healthy"]
    chosen = names[:: max(1, len(names) // sample)][:sample]
    exporters = {name: Exporter(work, f"single-{name}", single_host_config(fleet, name, interval=CADENCE, timeout=20,
                                                                            command_timeout=15))
                 for name in chosen}
    try:
        for exporter in exporters.values():
            exporter.wait_ready()
        time.sleep(10)  # the first runs (they start at once) out of the window
        before = {name: cpu_seconds(e.proc.pid) for name, e in exporters.items()}
        began = time.monotonic()
        latencies = scrape_for([(name, e.port, "/metrics") for name, e in exporters.items()], minutes * 60)
        elapsed = time.monotonic() - began
        cpu = {name: cpu_seconds(e.proc.pid) - before[name] for name, e in exporters.items()}
        rss = {name: rss_mb(e.proc.pid) for name, e in exporters.items()}
    finally:
        for exporter in exporters.values():
            exporter.stop()
    per_host_cpu_min = statistics.mean(cpu.values()) / (elapsed / 60)
    per_host_rss = statistics.mean(rss.values())
    times = [t for values in latencies.values() for t, status, _ in values if status == 200]
    return {"hosts_sampled": len(chosen), "cpu_s_per_host_per_min": per_host_cpu_min,
            "cpu_s_per_100_per_min": per_host_cpu_min * 100, "rss_mb_per_host": per_host_rss,
            "rss_mb_per_100": per_host_rss * 100, "scrape_p50_ms": quantile(times, 0.5) * 1000,
            "scrape_p99_ms": quantile(times, 0.99) * 1000}


def _usage(shards: list[Exporter], preexisting: set[int]) -> tuple[float, dict[int, float], dict[int, float]]:
    """Now, each shard's CPU seconds, and the CPU seconds of the ssh masters the shards keep."""
    masters = {pid: cpu for pid, cpu in ssh_masters().items() if pid not in preexisting}
    return time.monotonic(), {s.proc.pid: cpu_seconds(s.proc.pid) for s in shards}, masters


def _window(fleet: Fleet, shards: list[Exporter], before: tuple, after: tuple, latencies: dict[str, list],
            read: list[str]) -> dict:
    """One measured window: the shards' share of a core (the masters' CPU split evenly), RSS, and the latency of
    the probes of healthy hosts that started in it."""
    began, cpu_before, masters_before = before
    ended, cpu_after, masters_after = after
    elapsed = ended - began
    masters = sum(cpu - masters_before.get(pid, 0.0) for pid, cpu in masters_after.items())
    cores = [(cpu_after[s.proc.pid] - cpu_before[s.proc.pid] + masters / len(shards)) / elapsed for s in shards]
    healthy = [t for name, values in latencies.items() if fleet.hosts[name].behaviour == "healthy"
               for t, status, at in values if status == 200 and began <= at < ended]
    return {"hosts": len(set(read)), "read_twice": len(read) - len(set(read)),
            "missed": sorted(set(fleet.hosts) - set(read)), "shard_core": cores,
            "shard_rss_mb": [rss_mb(s.proc.pid) for s in shards],
            "cpu_s_per_100_per_min": sum(cores) * 60 / (len(fleet.hosts) / 100),
            "healthy_p50_ms": quantile(healthy, 0.5) * 1000, "healthy_p99_ms": quantile(healthy, 0.99) * 1000,
            "probes": len(healthy)}


def shards_run(fleet: Fleet, shards: list[Exporter], minutes: float, hung_share: float,
               preexisting: set[int], warm: float = 2 * CADENCE + 5) -> tuple[dict, dict, dict]:
    """Probe every host once a minute without a break, as Prometheus does: a warm-up of two cadences (the first
    probe of a target waits for its first collection, the second teaches the shard the cadence it reads ahead
    for), then a measured window with every host healthy, then one with ``hung_share`` of them hung.  Returns the
    warm-up's latencies and the two windows."""
    targets = []
    for index, shard in enumerate(shards):
        status, body = get(shard.port, f"/sd?shard={index}&shards={len(shards)}")
        assert status == 200, body
        for group in json.loads(body):
            module = group["labels"].get("__param_module", "")
            targets += [(name, shard.port, f"/probe?target={name}&module={module}") for name in group["targets"]]
    read = [name for name, _, _ in targets]
    latencies: dict[str, list] = {}
    start = time.monotonic()
    scraper = threading.Thread(target=lambda: latencies.update(scrape_for(targets, warm + 2 * minutes * 60)))
    scraper.start()
    time.sleep(max(0.0, start + warm - time.monotonic()))
    first = _usage(shards, preexisting)
    time.sleep(minutes * 60)
    second = _usage(shards, preexisting)
    for name in plan(len(fleet.hosts), hung=hung_share):
        if name.behaviour == "hung":
            fleet.set_behaviour(name.name, "hung")
    time.sleep(minutes * 60)
    third = _usage(shards, preexisting)
    scraper.join()
    warm_up = [t for values in latencies.values() for t, status, at in values if status == 200 and at < first[0]]
    return ({"probes": len(warm_up), "p50_ms": quantile(warm_up, 0.5) * 1000,
             "p99_ms": quantile(warm_up, 0.99) * 1000},
            _window(fleet, shards, first, second, latencies, read), _window(fleet, shards, second, third, latencies,
                                                                            read))


def page_time(fleet: Fleet, work: Path, scale: float, shards: list[Exporter] | None) -> dict:
    """Seconds from a hang to MiddlewareExporterTargetDown at the webhook, and the bound: half the scaled window
    (the expression's earliest truth), the scaled for:, two evaluation intervals, Alertmanager's 1 s group_wait,
    counted from the moment VictoriaMetrics has the host's first target_up 0."""
    interval = 2.0
    rules = scaled_rules(work, scale)
    scaled = rule("MiddlewareExporterTargetDown", [work / "rules" / "exporter.yml"])
    window = float(scaled["expr"].split("[")[1].split("s]")[0])
    hold = float(scaled["for"].rstrip("s"))
    host = next(name for name, h in fleet.hosts.items() if h.behaviour == "healthy" and h.platform == "hpux")
    started: list[Exporter] = []
    with Stack(work / "stack", rules, f"{interval:g}s") as stack:
        if shards:
            configs = [{"job_name": f"middleware-probe-{i}", "metrics_path": "/probe",
                        "http_sd_configs": [{"url": f"http://127.0.0.1:{s.port}/sd?shard={i}&shards={len(shards)}",
                                             "refresh_interval": "5s"}],
                        "relabel_configs": [
                            # the hung host only: every 2 s for the whole fleet would be 150 times its cadence
                            {"source_labels": ["__address__"], "regex": host, "action": "keep"},
                            {"source_labels": ["__address__"], "target_label": "__param_target"},
                            {"source_labels": ["__param_target"], "target_label": "instance"},
                            {"target_label": "__address__", "replacement": f"127.0.0.1:{s.port}"}]}
                       for i, s in enumerate(shards)]
            up = f'min(middleware_target_up{{instance="{host}"}})'
        else:
            single = Exporter(work, "page-single", single_host_config(fleet, host, interval=4, timeout=3.5,
                                                                       command_timeout=3))
            started.append(single)
            single.wait_ready()
            configs = [{"job_name": "middleware-fleet", "static_configs": [{"targets": [f"127.0.0.1:{single.port}"]}]}]
            up = f'min(middleware_target_up{{target="{host}"}})'
        try:
            stack.add_agent(configs, f"{interval:g}s")

            def value() -> float | None:
                result = stack.query(up)
                return float(result[0]["value"][1]) if result else None

            def wait(condition, what: str, limit: float = 300) -> None:
                deadline = time.monotonic() + limit
                while not condition():
                    if time.monotonic() > deadline:
                        raise SystemExit(f"{what} not seen within {limit} s\n{stack.logs()}")
                    time.sleep(0.25)

            wait(lambda: value() == 1, f"{host} up")
            time.sleep(window)
            fleet.set_behaviour(host, "hung")
            hung_at = time.monotonic()
            wait(lambda: value() == 0, f"{host} target_up 0")
            noticed = time.monotonic() - hung_at
            wait(lambda: any(a["labels"].get("alertname") == "MiddlewareExporterTargetDown"
                             and host in (a["labels"].get("target"), a["labels"].get("instance"))
                             and a["status"] == "firing" for a in stack.notifications()), "the page")
            paged = time.monotonic() - hung_at
        finally:
            for exporter in started:
                exporter.stop()
            fleet.set_behaviour(host, "healthy")
    bound = window / 2 + hold + 2 * interval + 1
    return {"host": host, "noticed_s": noticed, "paged_s": paged, "after_noticed_s": paged - noticed,
            "bound_after_noticed_s": bound, "window_s": window, "for_s": hold, "rule_scale": scale}


def print_phase(label: str, phase: dict, ref: dict, hosts: int) -> None:
    cpu, rss = phase["cpu_s_per_100_per_min"], sum(phase["shard_rss_mb"])
    ref_rss = ref["rss_mb_per_100"] * hosts / 100
    # a window shorter than the cadence may see no collection of a reference exporter: no ratio then
    ratio = f"{cpu / ref['cpu_s_per_100_per_min']:.3f}" if ref["cpu_s_per_100_per_min"] > 0 else "n/a: none measured"
    print(f"(i) two shards, {label}: CPU {', '.join(f'{c:.3f}' for c in phase['shard_core'])} of a core, "
          f"{cpu:.2f} s per 100 hosts per minute (ratio to the reference {ratio}); "
          f"RSS {', '.join(f'{r:.0f}' for r in phase['shard_rss_mb'])} MB (ratio to the reference's "
          f"{ref_rss:.0f} MB for {hosts} hosts: {rss / ref_rss if ref_rss else float('nan'):.3f}); "
          f"healthy probes p50 {phase['healthy_p50_ms']:.1f} ms, p99 {phase['healthy_p99_ms']:.1f} ms; "
          f"hosts read {phase['hosts']}, twice {phase['read_twice']}, missed {len(phase['missed'])}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=300)
    parser.add_argument("--minutes", type=float, default=2.0, help="length of each measured phase")
    parser.add_argument("--reference", type=int, default=20, help="single-host exporters in the reference sample")
    parser.add_argument("--hung", type=float, default=0.1, help="share of hosts hung in the second probe phase")
    parser.add_argument("--rule-scale", type=float, default=30.0)
    parser.add_argument("--warm-up", type=float, default=2 * CADENCE + 5,
                        help="seconds of probing before the measured windows (two cadences: the read-ahead is "
                             "learnt from the second probe on)")
    parser.add_argument("--fleet-nice", type=int, default=19,
                        help="niceness of the simulated hosts (their sshd and everything it starts); 0: as the "
                             "exporters")
    parser.add_argument("--json", help="write the figures here too")
    args = parser.parse_args()
    report: dict = {"hosts": args.hosts, "cadence_s": CADENCE, "minutes_per_phase": args.minutes,
                    "fleet_nice": args.fleet_nice}
    missed: list[str] = []
    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as tmp:
        work = Path(tmp)
        began = time.monotonic()
        with Fleet(work / "fleet", plan(args.hosts)) as fleet:
            if args.fleet_nice:
                os.setpriority(os.PRIO_PROCESS, fleet.sshd.proc.pid, args.fleet_nice)  # inherited by its sessions
            print(f"fleet: {args.hosts} hosts on one sshd (nice {args.fleet_nice}), built in "
                  f"{time.monotonic() - began:.1f} s")
            ref = report["reference"] = reference(fleet, work, args.reference, args.minutes)
            print(f"(ii) reference, one exporter per host, {ref['hosts_sampled']} hosts sampled and extrapolated to "
                  f"100: CPU {ref['cpu_s_per_100_per_min']:.2f} s per 100 hosts per minute, RSS "
                  f"{ref['rss_mb_per_host']:.1f} MB per host = {ref['rss_mb_per_100']:.0f} MB per 100 hosts; "
                  f"/metrics p50 {ref['scrape_p50_ms']:.1f} ms p99 {ref['scrape_p99_ms']:.1f} ms")
            shards: list[Exporter] = []
            targets = work / "targets.yml"
            targets.write_text(yaml.safe_dump(inventory(fleet)))
            config = shard_config(fleet, targets)
            preexisting = set(ssh_masters())  # other programs' masters on this machine are not the shards'
            shards = [Exporter(work, f"shard{i}", config) for i in range(2)]
            for shard in shards:
                shard.wait_ready()
            try:
                warm_up, healthy, hung = shards_run(fleet, shards, args.minutes, args.hung, preexisting,
                                                args.warm_up)
                report["shards_warm_up"], report["shards_healthy"], report["shards_hung"] = warm_up, healthy, hung
                print(f"(i) two shards, warm-up (the first two probes of each host after the shards start: the "
                      f"first waits for its collection): {warm_up['probes']} probes, p50 {warm_up['p50_ms']:.1f} "
                      f"ms, p99 {warm_up['p99_ms']:.1f} ms (not a goal)")
                for name in fleet.by_behaviour("hung"):
                    fleet.set_behaviour(name, "healthy")
                for label, phase in (("healthy", healthy), (f"{args.hung:.0%} hung", hung)):
                    print_phase(label, phase, ref, args.hosts)
                print(f"(i) cost of {args.hung:.0%} hung hosts to the others: healthy p99 x"
                      f"{hung['healthy_p99_ms'] / healthy['healthy_p99_ms']:.2f}")
                for phase in (healthy, hung):
                    if max(phase["shard_core"]) > GOALS["shard_core"]:
                        missed.append(f"a shard used {max(phase['shard_core']):.3f} of a core "
                                      f"(goal {GOALS['shard_core']})")
                    if max(phase["shard_rss_mb"]) > GOALS["shard_rss_mb"]:
                        missed.append(f"a shard's RSS {max(phase['shard_rss_mb']):.0f} MB "
                                      f"(goal {GOALS['shard_rss_mb']:.0f})")
                    if phase["read_twice"] or phase["missed"] or phase["hosts"] != args.hosts:
                        missed.append(f"hosts read twice {phase['read_twice']}, missed {len(phase['missed'])}")
                if hung["healthy_p99_ms"] > GOALS["healthy_p99_ms_while_hung"]:
                    missed.append(f"healthy probes' p99 {hung['healthy_p99_ms']:.1f} ms while "
                                  f"{args.hung:.0%} hang (goal {GOALS['healthy_p99_ms_while_hung']:.0f} ms)")
            except BaseException:
                for shard in shards:
                    shard.stop()
                raise
            try:
                page = report["page"] = page_time(fleet, work, args.rule_scale, shards or None)
            finally:
                for shard in shards:
                    shard.stop()
            print(f"(iii) hang -> page through vmalert ({'shards' if shards else 'one single-host exporter'}, rules' "
                  f"clock / {args.rule_scale:g}: window {page['window_s']:g} s, for {page['for_s']:g} s, scrape "
                  f"and evaluation 2 s): noticed {page['noticed_s']:.1f} s, paged {page['paged_s']:.1f} s after the "
                  f"hang, {page['after_noticed_s']:.1f} s after target_up 0 (goal: half the window + for + two "
                  f"intervals + 1 s group_wait = {page['bound_after_noticed_s']:.1f} s)")
            if page["after_noticed_s"] > page["bound_after_noticed_s"]:
                missed.append(f"page {page['after_noticed_s']:.1f} s after target_up 0 "
                              f"(goal {page['bound_after_noticed_s']:.1f} s)")
            leftovers = fleet.leftovers()
        if [line for line in leftovers if "sshd" not in line]:
            missed.append(f"processes left: {leftovers}")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2, default=str))
    for line in missed:
        print(f"goal missed: {line}")
    if missed:
        return 1
    print("result: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
