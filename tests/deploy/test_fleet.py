"""The fleet test on real parts, all on loopback (issue 37, item 5): simulated hosts on one real sshd
(tests/fleet.py), the exporter reading them, Debian's Prometheus in agent mode remote-writing to VictoriaMetrics,
vmalert evaluating the project's alerts/*.yml and notifying Alertmanager, which posts to a webhook
(tests/stack.py).

Here rather than in tests/estate/: a tests/estate package would shadow tests/estate.py (the fixture estate the
advisor tests import).

- The fleet itself: a host answers with its genuine capture, a hung host hangs, a refusing host refuses, and a
  hostile command line runs nothing (tests/fakehost.sh, and tests/fakehost.py for slow and hung hosts, match the
  command word and never execute anything; both entry points are tried with the same hostile lines).
- vmalert accepts every rule file of alerts/ (MetricsQL is mostly PromQL; a file it refuses is named with why).
- Today: one ordinary exporter reading one host through ``ssh -F <fleet config> hpux000``; when that host hangs,
  MiddlewareExporterTargetDown reaches the webhook through vmalert and Alertmanager.  The rule reads
  ``avg_over_time(middleware_target_up[10m]) < 0.5`` for 5m; the rules run here are copies with every duration
  divided by 30 (20 s window, ``for: 10s``; scrape and evaluation every 2 s), the same expression and threshold
  on a shorter clock, so the test ends in about a minute.
- Two shards reading the fleet through /sd and /probe; every host's figures equal its capture's, each host read
  by exactly one shard, the hung host pages.
"""

from __future__ import annotations

import os
import pwd
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from exporter.machine.remote import prefixed

from ..fleet import (
    COMMANDS,
    ENTRIES,
    EXPECTED,
    Fleet,
    capture,
    forced_command,
    inventory,
    plan,
    shard_config,
    single_host_config,
    write_platforms,
    write_state,
)
from ..stack import REPO, Stack, check_rules, rule, rule_files, scaled_rules
from ..support import free_port, http_get, naming, stop_process

FACTOR = 30  # the rules' clock, shortened
INTERVAL = 2.0  # scrape and evaluation interval (s)
# the exporter's run: every 4 s, each ssh command killed after 3 s (a handshake and a Python start take 0.7 s on
# a loaded 2-core machine, and a run starts its commands at once)
RUN, COMMAND_TIMEOUT = 4.0, 3.0
PROBE_TIMEOUT = 10.0  # the shards' module timeout (its collectors get a second less, each command two less)
BACKSTOP = 150.0  # the longest any wait here may take on a loaded machine before the test gives up


# ---- the forced command on its own (no sshd: quick) ------------------------------------------------------------
CAPTURE = b"captured sar\r\n\tcolumns  and spaces\n\xe9 no newline at the end"
# Lines a client might send to make the host run something; ``canary`` is a file name relative to the command's
# working directory, so a line is refused for its shell syntax, not for the slash of a path.
HOSTILE = [
    "sar; touch canary", "sar;touch canary", "sar $(touch canary)", "$(touch canary)", "sar `touch canary`",
    "`touch canary`", "sar -d 5 1 && touch canary", "sar -d 5 1 || touch canary", "sar -d 5 1 | touch canary",
    "sar -d 5 1 & touch canary", "sar > canary", "sar < canary", "sar '-d;touch canary'", 'sar "$(touch canary)"',
    "sar\ntouch canary", "sar\n-d", "sar\r\ntouch canary", "sar\t-d", "sar 'unterminated", "sar '-d'",
    "sar \\-d", "sar${IFS}-d", "sar $IFS", "sar ~", "sar *", "*", "sa?", "s[a]r", "sar {a,b}",
    "touch canary", "exec touch canary", "PATH=. sar", "sh -c touch", "/usr/bin/sar -d", "./sar", "../sar",
    "sar ../../canary", "sar -d /etc/passwd", ".", "..", "platforms", "SAR", "mount", "sar -d " + "5" * 65,
    "s" * 100_000, "sar " + "-d " * 20_000 + "x" * 65, "sar " + "-d " * 300 + "x" * 65,
    "-d sar", "--help", "-", "sär", "sar é", "", "   ", None,
]


def _fakehost(tmp_path: Path, line: str | None, entry: str = "sh", behaviour: str = "healthy",
              platform: str = "hpux") -> subprocess.CompletedProcess:
    """Host h1's forced command as sshd runs it: the authorized_keys command line through the account's shell,
    the client's line in SSH_ORIGINAL_COMMAND (unset when the client sends none)."""
    capture_file = tmp_path / "sar.txt"
    if not capture_file.exists():
        capture_file.write_bytes(CAPTURE)
        write_platforms(tmp_path, {platform: {"sar": capture_file}})
    write_state(tmp_path, "h1", platform, behaviour, delay=0)
    env = {"PATH": os.environ["PATH"]} | ({} if line is None else {"SSH_ORIGINAL_COMMAND": line})
    shell = pwd.getpwuid(os.getuid()).pw_shell or "/bin/sh"
    return subprocess.run([shell, "-c", forced_command(entry, "h1", tmp_path)], capture_output=True, env=env,
                          cwd=tmp_path, timeout=30)


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("behaviour", ["healthy", "slow"])
def test_fakehost_prints_the_capture_for_a_known_tool(tmp_path, entry, behaviour):
    result = _fakehost(tmp_path, "sar -u -d  5 1 ", entry, behaviour)  # a slow host: fakehost.sh hands it on
    assert (result.returncode, result.stdout, result.stderr) == (0, CAPTURE, b"")


# the commands the settings' descriptions offer besides the fleet's (a fleet platform could map any of them)
DOCUMENTED = [["sar", "-u", "-d", "5", "1"], ["sar", "-d", "-g", "-q", "-r", "5", "1"], ["iostat", "-xn", "5", "2"],
              ["iostat", "-D", "5", "2"], ["df", "-k"], ["df", "-kP"], ["df", "-g"], ["df", "-m"], ["mount"],
              ["mount", "-p"], ["mount", "-v"], ["svmon", "-G"], ["lsps", "-s"], ["swapinfo", "-tam"],
              ["lparstat", "5", "1"]]


@pytest.mark.parametrize("entry", ENTRIES)
def test_fakehost_accepts_what_the_exporter_sends(tmp_path, entry):
    """The fleet's commands and the documented ones as the exporter's ssh prefix sends them (remote.prefixed:
    each argument quoted for the remote shell; ssh joins the words with spaces) print the capture."""
    capture_file = tmp_path / "capture.txt"
    capture_file.write_bytes(CAPTURE)
    commands = [argv for table in COMMANDS.values() for argv in table.values()] + DOCUMENTED
    write_platforms(tmp_path, {"hpux": {argv[0]: capture_file for argv in commands}})
    write_state(tmp_path, "h1", "hpux", "healthy")
    for argv in commands:
        line = " ".join(prefixed(["ssh", "h1"], argv)[2:])
        result = subprocess.run(["/bin/sh", "-c", forced_command(entry, "h1", tmp_path)], capture_output=True,
                                env={"PATH": os.environ["PATH"], "SSH_ORIGINAL_COMMAND": line}, timeout=30)
        assert (result.returncode, result.stdout) == (0, CAPTURE), (line, result.stderr)


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("line", HOSTILE, ids=lambda line: repr(line)[:40])
def test_fakehost_runs_nothing_it_is_sent(tmp_path, line, entry):
    result = _fakehost(tmp_path, line, entry)
    assert result.returncode == 127 and result.stdout == b"", result
    assert b"not allowed" in result.stderr or b"no interactive login" in result.stderr, result
    assert not (tmp_path / "canary").exists()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["hosts", "platforms", "sar.txt"]


def test_plan_mixes_platforms_and_spreads_behaviours():
    hosts = plan(300, hung=0.1, slow=0.05, refusing=0.02)
    assert {h.platform for h in hosts} == {"hpux", "aix", "solaris", "linux"}
    counts = {b: sum(h.behaviour == b for h in hosts) for b in ("hung", "slow", "refusing")}
    assert counts == {"hung": 30, "slow": 15, "refusing": 6}
    assert len({h.name for h in hosts}) == 300


def test_scaled_rules_shorten_for_and_ranges_and_keep_the_rest(tmp_path):
    [copy] = scaled_rules(tmp_path, FACTOR, [REPO / "alerts" / "exporter.yml"])
    scaled = rule("MiddlewareExporterTargetDown", [copy])
    original = rule("MiddlewareExporterTargetDown")
    assert original["for"] == "5m" and "[10m]" in original["expr"]  # what the scaling below assumes
    assert scaled["for"] == "10s"
    assert scaled["expr"] == original["expr"].replace("[10m]", "[20s]")
    assert scaled["labels"] == original["labels"]


# ---- on the real sshd --------------------------------------------------------------------------------------------
@pytest.fixture
def fleet(tmp_path):
    hosts = plan(8)
    hosts[3].behaviour = "hung"
    hosts[2].behaviour = "refusing"
    with Fleet(tmp_path / "fleet", hosts) as running:
        yield running
    assert not running.leftovers()


@pytest.mark.integration
def test_each_host_answers_with_its_platforms_capture(fleet):
    for name, host in fleet.hosts.items():
        if host.behaviour != "healthy":
            continue
        tool = {"aix": "iostat"}.get(host.platform, "sar")
        result = fleet.ssh(name, tool, "-d", "5", "1")
        assert result.returncode == 0, result.stderr
        assert result.stdout == capture(host.platform, tool)


@pytest.mark.integration
def test_a_hung_host_hangs_a_refusing_host_refuses_and_nothing_hostile_runs(fleet, tmp_path):
    hung, refusing = "linux003", "sol002"
    assert fleet.hosts[hung].behaviour == "hung" and fleet.hosts[refusing].behaviour == "refusing"
    with pytest.raises(subprocess.TimeoutExpired):
        fleet.ssh(hung, "vmstat", "1", "3", timeout=3)
    result = fleet.ssh(refusing, "sar", "-d", "5", "1")
    assert result.returncode == 255 and "Permission denied" in result.stderr
    canary = tmp_path / "canary"
    for line in (f"sar; touch {canary}", f"$(touch {canary})", f"sar -d 5 1 | touch {canary}"):
        result = fleet.ssh("hpux000", line)
        assert result.returncode == 127 and "not allowed" in result.stderr
    assert not canary.exists()
    fleet.set_behaviour(refusing, "healthy")  # authorized_keys rewritten while sshd runs
    assert fleet.ssh(refusing, "sar", "-d", "5", "1").returncode == 0
    fleet.set_behaviour("hpux000", "refusing")
    assert fleet.ssh("hpux000", "sar", "-d", "5", "1").returncode == 255


@pytest.mark.integration
def test_a_hung_command_is_seen_as_running_and_ended_with_the_fleet(tmp_path):
    hosts = plan(4)
    hosts[1].behaviour = "hung"
    fleet = Fleet(tmp_path / "fleet", hosts).start()
    config = tmp_path / "client_config"  # outside the fleet's directory: the fleet must find its own processes
    config.symlink_to(fleet.ssh_config)
    client = subprocess.Popen(["ssh", "-F", str(config), hosts[1].name, "iostat", "-d", "5", "1"],
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        for _ in range(600):  # a backstop: the forced command starts in milliseconds
            if naming(f"fakehost.py {hosts[1].name} "):
                break
            time.sleep(0.1)
        assert naming(f"fakehost.py {hosts[1].name} "), "the hung host's forced command never started"
        assert any("fakehost.py" in line for line in fleet.leftovers()), fleet.leftovers()
        fleet.stop()  # with the client still connected: the fleet ends its sessions' commands itself
        assert not fleet.leftovers() and not naming(f"fakehost.py {hosts[1].name} ")
    finally:
        fleet.stop()
        client.kill()
        client.communicate()


@pytest.mark.integration
def test_three_hundred_hosts_are_built_and_answer(tmp_path):
    with Fleet(tmp_path / "fleet", plan(300)) as fleet:
        names = list(fleet.hosts)
        for name in (names[0], names[149], names[299]):
            assert fleet.ssh(name, "df" if fleet.hosts[name].platform in ("aix", "solaris") else
                             {"hpux": "bdf", "linux": "uptime"}[fleet.hosts[name].platform]).returncode == 0


# ---- the stack -----------------------------------------------------------------------------------------------------
@pytest.mark.integration
def test_vmalert_accepts_every_rule_file():
    files = rule_files() + rule_files(REPO / "alerts" / "variants" / "node_exporter")
    assert len(files) > 10
    assert check_rules(files) == {}


def _wait(condition, message, stack, limit=BACKSTOP):
    deadline = time.monotonic() + limit
    while True:
        found = condition()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"{message} not seen within {limit} s\n{stack.logs()}")
        time.sleep(0.5)


def _value(stack: Stack, expr: str) -> float | None:
    result = stack.query(expr)
    return float(result[0]["value"][1]) if result else None


def _figure(stack: Stack, expr: str) -> float:
    """The value of ``expr`` once VictoriaMetrics has it (0 included)."""
    return float(_wait(lambda: stack.query(expr), expr, stack)[0]["value"][1])


def _pages(stack: Stack, host: str) -> list[dict]:
    return [a for a in stack.notifications() if a["labels"].get("alertname") == "MiddlewareExporterTargetDown"
            and a["labels"].get("target") == host and a["status"] == "firing"]


@pytest.mark.integration
def test_a_hung_host_pages_through_vmalert_today(tmp_path, start_exporter):
    hosts = plan(4)
    host = "hpux000"
    with Fleet(tmp_path / "fleet", hosts) as fleet, \
            Stack(tmp_path / "stack", scaled_rules(tmp_path, FACTOR), f"{INTERVAL:g}s") as stack:
        config = single_host_config(fleet, host, interval=RUN, timeout=RUN - 0.5, command_timeout=COMMAND_TIMEOUT)
        exporter = start_exporter(config=yaml.safe_dump(config))
        stack.add_agent([{"job_name": "middleware-fleet",
                          "static_configs": [{"targets": [f"127.0.0.1:{exporter.port}"]}]}], f"{INTERVAL:g}s")
        up = f'middleware_target_up{{job="middleware-fleet",collector="host",target="{host}"}}'
        _wait(lambda: _value(stack, up) == 1, "the host read and its target_up 1 in VictoriaMetrics", stack)
        # the capture's figures arrived unchanged through ssh, the exporter, the agent and remote_write
        for metric, labels, value in EXPECTED["hpux"]:
            selector = ",".join([f'target="{host}"', *(f'{k}="{v}"' for k, v in labels.items())])
            found = _figure(stack, f"{metric}{{{selector}}}")
            assert found == pytest.approx(value), metric
        scaled = rule("MiddlewareExporterTargetDown", [tmp_path / "rules" / "exporter.yml"])
        window = float(scaled["expr"].split("[")[1].split("s]")[0])
        hold = float(scaled["for"].rstrip("s"))
        time.sleep(window)  # a full window of healthy samples, as a host that was fine before it hung has
        assert not _pages(stack, host)

        fleet.set_behaviour(host, "hung")
        hung_at = time.monotonic()
        _wait(lambda: _value(stack, up) == 0, "target_up 0 for the hung host", stack)
        noticed = time.monotonic() - hung_at
        _wait(lambda: _pages(stack, host), "MiddlewareExporterTargetDown at the webhook", stack)
        paged = time.monotonic() - hung_at
        # due: the exporter notices (a run plus command_timeout), half the window of zeros, the rule's for:, then
        # two evaluation intervals; plus the delivery path (a scrape, the agent's 1 s send deadline, Alertmanager's
        # 1 s group_wait)
        due = (RUN + COMMAND_TIMEOUT) + window / 2 + hold + 2 * INTERVAL + (INTERVAL + 1 + 1)
        page = _pages(stack, host)[0]
        assert paged <= due + 2 * INTERVAL, (f"paged {paged:.1f} s after the hang (noticed after {noticed:.1f} s); "
                                             f"due within {due:.1f} s\n{stack.logs()}")
        assert page["labels"]["severity"] == "warning" and page["receiver"] == "ticket"
        assert page["labels"]["instance"] == f"127.0.0.1:{exporter.port}"
        stop_process(exporter.proc)  # while the fleet still runs: its commands end with it
    assert not fleet.leftovers()


# ---- with /probe ---------------------------------------------------------------------------------------------------
def _shard_scrape_configs(shards: list, shard_count: int, interval: str) -> list[dict]:
    """The probe jobs as docs/estate.md gives them: http_sd from each shard's /sd, the target into
    __param_target and instance, the exporter as __address__, metrics_path /probe; a shard label to count by."""
    configs = []
    for index, shard in enumerate(shards):
        address = f"127.0.0.1:{shard.port}"
        configs.append({
            "job_name": f"middleware-probe-{index}", "metrics_path": "/probe", "scrape_interval": interval,
            "scrape_timeout": interval,
            "http_sd_configs": [{"url": f"http://{address}/sd?shard={index}&shards={shard_count}",
                                 "refresh_interval": "5s"}],
            "relabel_configs": [
                {"source_labels": ["__address__"], "target_label": "__param_target"},
                {"source_labels": ["__param_target"], "target_label": "instance"},
                {"target_label": "__address__", "replacement": address},
                {"target_label": "shard", "replacement": str(index)}]})
    return configs


@pytest.mark.integration
def test_two_shards_read_the_fleet_through_probe(tmp_path, start_exporter):
    hosts = plan(16)
    hung = "aix005"
    hosts[5].behaviour = "hung"
    with Fleet(tmp_path / "fleet", hosts) as fleet, \
            Stack(tmp_path / "stack", scaled_rules(tmp_path, FACTOR), f"{INTERVAL:g}s") as stack:
        targets = tmp_path / "targets.yml"
        targets.write_text(yaml.safe_dump(inventory(fleet)))
        # generous limits: a shard reads every host back to back here (probes every 2 s), 16 hosts' commands at
        # once on a loaded machine; the probes are answered from the collections read ahead, not held by them
        config = yaml.safe_dump(shard_config(fleet, targets, timeout=PROBE_TIMEOUT, freshness=1,
                                             command_timeout=PROBE_TIMEOUT - 2))
        shards = [start_exporter(config=config), start_exporter(config=config)]
        # the shards' jobs must match the rules' job=~"middleware.*"
        stack.add_agent(_shard_scrape_configs(shards, 2, f"{INTERVAL:g}s"), f"{INTERVAL:g}s")
        count = 'count by (instance) (count by (instance, shard) (middleware_probe_success{job=~"middleware.*"}))'
        _wait(lambda: len(stack.query(count)) == len(hosts), "every host probed", stack)
        assert all(item["value"][1] == "1" for item in stack.query(count)), "a host read by both shards"
        by_shard = {item["metric"]["shard"]: float(item["value"][1]) for item in stack.query(
            'count by (shard) (middleware_probe_success{job=~"middleware.*"})')}
        assert set(by_shard) == {"0", "1"} and sum(by_shard.values()) == len(hosts)
        for name, host in fleet.hosts.items():
            if host.behaviour != "healthy":
                continue
            for metric, labels, value in EXPECTED[host.platform]:
                selector = ",".join([f'instance="{name}"', *(f'{k}="{v}"' for k, v in labels.items())])
                # from a probe whose collection read every source: a run with a source timed out on this loaded
                # machine takes a figure from the next tool (the CPU from iostat instead of sar), as it should
                found = _figure(stack, f'{metric}{{{selector}}} and on (instance) '
                                       f'(middleware_probe_success{{instance="{name}"}} == 1)')
                assert found == pytest.approx(value), (name, metric)
        assert _value(stack, f'middleware_probe_success{{instance="{hung}"}}') == 0
        _wait(lambda: _pages(stack, hung), f"MiddlewareExporterTargetDown for {hung} at the webhook", stack)
        for shard in shards:
            status, _, body = http_get(f"{shard.base}/probe?target=nothere-{free_port()}&module=hpux")
            assert status == 403, body
        for shard in shards:  # stopped while the fleet still runs: their commands and masters end with them
            stop_process(shard.proc)
    assert not fleet.leftovers()
