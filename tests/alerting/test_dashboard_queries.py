"""Every dashboard panel query, evaluated by Debian's real Prometheus that has scraped the real exporter fed by
fixtures for every collector (a recorded /proc with HPOM, MQ, MQSI, Oracle, VHI and Domino processes; a fixture
HPOM and two Oracle databases through the DB-API stand-in; a fake mqweb and a stand-in ibmmq publishing resource
statistics; a stand-in Domino console), with the
project's recording rules loaded, and probed (/probe, docs/estate.md) at a working and a refused queue manager.
Each query must parse and return data.  Grafana's variables are replaced the
way Grafana would expand them for "All": $job -> middleware.* and $instance -> .+ (their allValue),
$qmgr/$database -> .*, $__rate_interval -> 30s."""

from __future__ import annotations

import datetime
import json
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.parse
from typing import Callable

import pytest
import yaml

from ..support import FIXTURES, REPO, free_port, http_get, require_binary, stop_process, system_fixtures
from ..support import shell_script as _script

pytestmark = pytest.mark.integration
pytest.importorskip("grafana_foundation_sdk")

SUBSTITUTIONS = [
    (re.compile(r"\$\{?__rate_interval\}?"), "30s"),
    (re.compile(r"\$\{?__interval\}?"), "5s"),
    (re.compile(r"\$\{?__range\}?"), "5m"),
    # the job and instance variables' allValue ("All" is the mixin's job selector; the test scrapes job "middleware")
    (re.compile(r"\$\{?job(:[a-z]+)?\}?"), "middleware.*"),
    (re.compile(r"\$\{?instance(:[a-z]+)?\}?"), ".+"),
    (re.compile(r"\$\{?(instance|qmgr|database|queue|device|job|nfs_operation)(:[a-z]+)?\}?"), ".*"),
]
# Panel queries that may return nothing here, each with its reason (the query must still parse):
# (dashboard uid, panel title, a part of the expression) -> why.
NO_DATA_ALLOWED = {
    ("middleware-host", "Stuck, failing and read-only mounts", "middleware_filesystem_stuck_seconds"):
        "the stuck-for column exists only while a statvfs hangs, which needs a FUSE server (root, /dev/fuse, "
        "libfuse3): tests/systems/filesystem/test_filesystem_fuse.py checks that series in a real exporter; the "
        "state column of the "
        "same panel returns the fixture's read-only and failing mounts here",
    ("middleware-oracle", "Data Guard lag (standby)", "middleware_oracle_dataguard_lag_seconds"):
        "both fixture databases are primaries, where v$dataguard_stats has no rows; the standby's series are "
        "checked by tests/systems/oracle/test_oracle_health.py::"
        "test_standby_lag_in_seconds_and_11g_skips_the_12c_queries and the "
        "alert by tests/rules/oracle_health.test.yml",
    ("middleware-oracle", "Internal errors in the alert log (ORA-00600 / ORA-07445)",
     "middleware_oracle_alert_errors_total"):
        "the fixture's alert-log rows are a heap warning without ORA- codes (a code's series appears only once the "
        "code is seen); the counter is checked by tests/systems/oracle/test_oracle_alertlog.py and the alert by "
        "tests/rules/oracle_health.test.yml",
}
# Invented mount-table lines (/proc/<pid>/mounts format) added to the recorded host1 table for the file-system
# panels: a read-only mount, and one whose mount point is missing under paths.rootfs (statvfs fails: device error).
EXTRA_MOUNTS = ("/dev/sdc1 /u04/readonly ext4 ro,relatime 0 0\n"
                "/dev/sdd1 /u05/gone xfs rw,relatime,attr2,inode64,noquota 0 0\n")
# Genuine capture (tests/systems/mountstats/fixtures/real/SOURCE.md) whose per-operation counters the test advances by 1
# % of their recorded values every half second, so that rate() sees the capture's own round-trip times and
# retransmission share.
MOUNTSTATS = system_fixtures("mountstats") / "real" / "procfs-extendedOpsExampleMountstats.txt"
_PER_OP = re.compile(r"^(\s*[A-Z][A-Z0-9_]*:)((?:\s+\d+)+)\s*$")


def _advanced_mountstats(text: str, step: int) -> str:
    """The capture with every per-operation counter at (100 + step) % of its recorded value."""
    lines = []
    for line in text.split("\n"):
        match = _PER_OP.match(line)
        if match:
            values = [int(v) * (100 + step) // 100 for v in match.group(2).split()]
            line = match.group(1) + " " + " ".join(map(str, values))
        lines.append(line)
    return "\n".join(lines)


def _allowed_empty(uid: str, title: str, expr: str) -> bool:
    return any(uid == u and title == t and part in expr for (u, t, part) in NO_DATA_ALLOWED)


def _expand(expr: str) -> str:
    for pattern, value in SUBSTITUTIONS:
        expr = pattern.sub(value, expr)
    return expr


def _queries() -> list[tuple[str, str, str]]:
    sys.path.insert(0, str(REPO / "dashboards"))
    try:
        import build  # noqa: PLC0415 - dashboards/build.py
    finally:
        sys.path.pop(0)
    return build.all_queries()



@pytest.fixture
def prometheus_with_fixtures(tmp_path, start_exporter):
    from ..fakes.mqweb import FakeChannel, FakeMqweb, FakeQmgr, generate_queues, with_health
    from ..systems.certificates.test_certificates import make_cert, pem
    from ..systems.mountstats.test_mountstats import _mountinfo

    require_binary("prometheus")
    procs: list[subprocess.Popen] = []
    stop = threading.Event()
    # channel, queue-activity and queue-manager health (issue 28): the 9.4.2 captures' QMSTATUS/QMGR values,
    # a SVRCONN channel with two instances of its MAXINST 10 and a defined sender without status (inactive)
    mqweb = FakeMqweb(with_health(FakeQmgr(
        "QM1", "running", generate_queues(30, "APP.Q."),
        [FakeChannel("QM1.TO.QM2", "RUNNING", "SENDER", "qm2(1414)", {"indoubt": "NO", "rqmname": "QM2"}),
         FakeChannel("QM2.TO.QM1", "STOPPED", "RCVR", ""),
         FakeChannel("APP.SVRCONN", "RUNNING", "SVRCONN", "10.0.0.7", {"curshcnv": 1}),
         FakeChannel("APP.SVRCONN", "RUNNING", "SVRCONN", "10.0.0.8", {"curshcnv": 2})],
        definitions=[{"channel": "QM1.TO.QM2", "chltype": "SDR", "xmitq": "XQ.QM1"},
                     {"channel": "QM2.TO.QM1", "chltype": "RCVR"},
                     {"channel": "APP.SVRCONN", "chltype": "SVRCONN", "maxinst": 10, "maxinstc": 999999999},
                     {"channel": "QM1.TO.QM3", "chltype": "SDR", "xmitq": "QM3"}]))).start()
    try:
        # HPOM: queue files, stand-in commands, database rows
        queues = tmp_path / "mgmt_sv"
        queues.mkdir()
        for name, size in {"msgmgrq": 2_000_000, "actreqq": 512, "dispq0": 4096, "dispq1": 4096}.items():
            (queues / name).write_bytes(b"\0" * size)
        history = {"count": 2_345_678}
        # The recorded host1 tree, copied to add the file-system and NFS fixtures: EXTRA_MOUNTS (with the read-only
        # mount's directory under the root), and self/mountstats (advanced by drain()) with its mountinfo.
        proc, root = tmp_path / "proc", tmp_path / "root"
        shutil.copytree(FIXTURES / "host1" / "proc", proc, symlinks=True)
        shutil.copytree(FIXTURES / "host1" / "root", root, symlinks=True)
        (root / "u04" / "readonly").mkdir(parents=True)
        with open(proc / "1" / "mounts", "a", encoding="utf-8") as handle:
            handle.write(EXTRA_MOUNTS)
        (proc / "self").mkdir()
        mountstats = MOUNTSTATS.read_text()
        (proc / "self" / "mountstats").write_text(mountstats)
        # invented, see tests/systems/mountstats/test_mountstats.py
        (proc / "self" / "mountinfo").write_text(_mountinfo(mountstats))
        nfs = {"step": 0}
        # a certificate file for the certificates collector (generated: 40 days left)
        cert, _key = make_cert("mqweb.example", datetime.datetime.now(datetime.timezone.utc)
                               + datetime.timedelta(days=40))
        (tmp_path / "mqweb.pem").write_bytes(pem(cert))

        def drain():
            """opcmsgm working off a backlog; a history download under way (both shrink over time)."""
            msgmgrq = queues / "msgmgrq"
            while not stop.wait(0.5):
                size = msgmgrq.stat().st_size
                if size > 512 * 100:
                    with open(msgmgrq, "r+b") as handle:
                        handle.truncate(size - 512 * 20)
                history["count"] -= 250
                nfs["step"] += 1
                (proc / "self" / "mountstats.new").write_text(_advanced_mountstats(mountstats, nfs["step"]))
                (proc / "self" / "mountstats.new").replace(proc / "self" / "mountstats")
                data = yaml.safe_load(db.read_text())
                for entry in data["queries"]:
                    if entry["match"] == "opc_hist_messages":
                        entry["rows"] = [[history["count"]]]
                db.write_text(yaml.safe_dump(data))
        bindir = tmp_path / "bin"
        bindir.mkdir()
        server = system_fixtures("hpom") / "server"
        db = tmp_path / "db.yaml"
        data = yaml.safe_load((system_fixtures("oracle") / "db.yaml").read_text())
        data["queries"] = yaml.safe_load((server / "db.yaml").read_text())["queries"]
        db.write_text(yaml.safe_dump(data))
        threading.Thread(target=drain, daemon=True).start()
        # the shipped HPOM queries, with the history count run every time (it runs every 5 minutes by default)
        hpom_queries = yaml.safe_load((REPO / "exporter" / "systems" / "hpom" / "queries.yaml").read_text())
        for entry in hpom_queries["queries"]:
            entry.pop("interval", None)
        (tmp_path / "hpom-queries.yaml").write_text(yaml.safe_dump(hpom_queries))
        oracle = {"user": "monitor", "password_env": "DB_PASSWORD", "connect_timeout": 0.5, "query_timeout": 0.5}
        config = {
            "paths": {"procfs": str(proc), "sysfs": str(FIXTURES / "host1" / "sys"), "rootfs": str(root)},
            "collectors": {
                "filesystem": {"interval": 2, "timeout": 2, "statfs_timeout": 0.5},
                "mountstats": {"interval": 1, "timeout": 1},
                "certificates": {"interval": 1, "timeout": 1,
                                 "files": [{"path": str(tmp_path / "mqweb.pem"), "name": "mqweb keystore"}]},
                "host": {"interval": 1, "timeout": 1},
                "process": {"interval": 1, "timeout": 1},
                "hpom": {"enabled": True, "interval": 2, "timeout": 2, "command_timeout": 0.5,
                         "queue_dir": str(queues),
                         "opcsv": _script(bindir / "opcsv", f'cat "{server / "opcsv_status.txt"}"\n'),
                         "ovc": _script(bindir / "ovc", f'cat "{server / "ovc_status.txt"}"\n'),
                         "ovconfget": _script(bindir / "ovconfget", f'cat "{server / "ovconfget_server_opc.txt"}"\n'),
                         "msi_programs": ["opcmsgm"],
                         "queries_file": str(tmp_path / "hpom-queries.yaml"),
                         "queue_count_command": [_script(bindir / "qcount", 'echo "$(( $(wc -c < "$1") / 512 ))"\n'),
                                                 "{path}"],
                         "database": {"dsn": "hpomdb:1521/openview", **oracle}},
                "oracle": {"enabled": True, "interval": 1, "timeout": 1, "databases": [
                    {"name": "opcdb", "dsn": "opcdb.example:1521/openview", "hpom": True, **oracle},
                    {"name": "erp", "dsn": "erp.example:1521/erp", "dedicated_host": True, **oracle}]},
                "ibmmq": {"enabled": True, "interval": 1, "timeout": 1, "queue_managers": [
                    {"name": "QM1", "url": mqweb.base_url, "timeout": 0.5},
                    # put/get counts: a PCF queue manager served by the stand-in ibmmq (tests/fakes/ibmmq)
                    {"name": "QM2", "backend": "pcf", "channel": "MONITOR.SVRCONN", "conn_name": "127.0.0.1(1414)",
                     "timeout": 0.5, "monitor_interval": 1}]},
                "vhi": {"enabled": True, "interval": 1, "timeout": 1},
                "domino": {"enabled": True, "interval": 1, "timeout": 1, "command_timeout": 0.5,
                           "command": [_script(bindir / "showstat",
                                               f'cat "{system_fixtures("domino") / "show_stat.txt"}"\n')]},
            },
        }
        # the estate row (docs/estate.md): a module reading queue managers through mqweb, probed at two targets of
        # the inventory, the fake mqweb (works) and a port where nothing listens (refused: fails, backs off)
        refused = f"127.0.0.1:{free_port()}"
        probed = [f"127.0.0.1:{mqweb.port}", refused]
        (tmp_path / "inventory.yaml").write_text(yaml.safe_dump(
            [{"targets": probed, "labels": {"__param_module": "mq"}}]))
        config["inventory"] = {"file": str(tmp_path / "inventory.yaml"), "refresh_interval": 1}
        config["modules"] = {"mq": {"freshness": 0.5, "collectors": {"ibmmq": {"queue_managers": [
            {"name": "QM1", "url": "http://{target}", "timeout": 0.5}]}}}}
        path = tmp_path / "exporter.yaml"
        path.write_text(yaml.safe_dump(config))
        (tmp_path / "mq-scenario.json").write_text(json.dumps({
            "qmgr": "QM2", "monint": 1.0, "gets": [[0, 215]],
            "queues": [{"name": "RULESIN", "depth": 150, "max_depth": 5000, "share": 1.0}]}))
        exporter = start_exporter("--config", str(path), env={
            "PYTHONPATH": str(REPO / "tests" / "fakes"), "FAKE_ORACLEDB_FIXTURE": str(db), "DB_PASSWORD": "x",
            "FAKE_IBMMQ_SCENARIO": str(tmp_path / "mq-scenario.json")})
        # Debian's node_exporter for the host dashboard's node_exporter variant (page scans need the vmstat
        # fields the variant reads, as mixin/README.md says)
        node_port = free_port()
        procs.append(subprocess.Popen(
            [require_binary("prometheus-node-exporter", "node_exporter", package="prometheus-node-exporter"),
             f"--web.listen-address=127.0.0.1:{node_port}",
             "--collector.vmstat.fields=^(oom_kill|pgpg|pswp|pg.*fault|pgscan_.*).*"],
            stdout=open(tmp_path / "node-exporter.log", "wb"), stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL))
        # a second node_exporter, file systems only, on the same fixture tree as the exporter (its read-only and
        # failing mounts for the variant's mount-state table; this machine's own mounts may have neither)
        node_fs_port = free_port()
        procs.append(subprocess.Popen(
            [require_binary("prometheus-node-exporter", "node_exporter", package="prometheus-node-exporter"),
             f"--web.listen-address=127.0.0.1:{node_fs_port}", "--collector.disable-defaults",
             "--collector.filesystem", f"--path.procfs={proc}", f"--path.rootfs={root}"],
            stdout=open(tmp_path / "node-exporter-fs.log", "wb"), stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL))
        port = free_port()
        # panels read recording rules, forecasts and the middleware:threshold:* series of the alert files
        rules = [tmp_path / path.name for path in sorted((REPO / "alerts").glob("*.yml"))
                 if path.name != "alertmanager.yml"]
        for rule_file in rules:
            shutil.copy(REPO / "alerts" / rule_file.name, rule_file)
        (tmp_path / "prometheus.yml").write_text(yaml.safe_dump({
            "global": {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
            "rule_files": [str(r) for r in rules],
            "scrape_configs": [{"job_name": "middleware", "static_configs": [
                {"targets": [f"127.0.0.1:{exporter.port}"]}]},
                               {"job_name": "node-exporter", "static_configs": [
                                   {"targets": [f"127.0.0.1:{node_port}", f"127.0.0.1:{node_fs_port}"]}]},
                               # the probe job, relabelled as docs/estate.md says (instance = the target)
                               {"job_name": "middleware-probe", "metrics_path": "/probe",
                                "params": {"module": ["mq"]}, "static_configs": [{"targets": probed}],
                                "relabel_configs": [
                                    {"source_labels": ["__address__"], "target_label": "__param_target"},
                                    {"source_labels": ["__param_target"], "target_label": "instance"},
                                    {"target_label": "__address__", "replacement": f"127.0.0.1:{exporter.port}"}]}],
        }))
        log = open(tmp_path / "prometheus.log", "wb")
        procs.append(subprocess.Popen(
            [require_binary("prometheus"), f"--config.file={tmp_path / 'prometheus.yml'}",
             f"--storage.tsdb.path={tmp_path / 'tsdb'}", f"--web.listen-address=127.0.0.1:{port}"],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL))
        base = f"http://127.0.0.1:{port}"

        def query(expr: str) -> tuple[str, list]:
            try:
                status, _, body = http_get(f"{base}/api/v1/query?query={urllib.parse.quote(expr)}", timeout=10)
            except OSError as exc:
                return f"no answer: {exc}", []
            payload = json.loads(body)
            if status != 200:
                return payload.get("error", f"HTTP {status}"), []
            result = payload["data"]["result"]
            return "", result if isinstance(result, list) else [result]

        deadline = time.monotonic() + 60
        wanted = ["middleware_hpom_cma_max_per_message", "ibmmq_queue_depth", "middleware_oracle_up",
                  "middleware_domino_users", "middleware_vhi_sessions_per_cpu", "middleware_host_cpus",
                  "ibmmq_qmgr_interval_destructive_get_total_count_total", "node_cpu_seconds_total",
                  "middleware_filesystem_readonly", "middleware_mountstats_nfs_operations_requests_total",
                  "middleware_certificate_not_after_seconds", "node_filesystem_device_error",
                  "middleware_probe_success == 1", "middleware_probe_success == 0"]
        while time.monotonic() < deadline and not all(query(w)[1] for w in wanted):
            time.sleep(1)
        assert all(query(w)[1] for w in wanted), [w for w in wanted if not query(w)[1]]
        yield query
    finally:
        stop.set()
        for proc in procs:
            stop_process(proc)
        mqweb.stop()


def _until_no_failures(check: Callable[[], list[str]], limit: float = 120.0) -> list[str]:
    """``check()`` again each second until it reports nothing, or the backstop passes: rate() over 30 s windows
    and the recording rules need a few scrapes and evaluations, which take longer on a loaded machine (a fixed
    sleep failed there). The failures of the last try."""
    deadline = time.monotonic() + limit
    while True:
        failures = check()
        if not failures or time.monotonic() >= deadline:
            return failures
        time.sleep(1)


def test_every_panel_query_returns_data(prometheus_with_fixtures):
    query = prometheus_with_fixtures
    queries = _queries()
    assert len(queries) > 40
    for key in NO_DATA_ALLOWED:  # an entry no panel query matches any more is stale
        assert any(_allowed_empty(uid, title, expr) and key[2] in expr for uid, title, expr in queries), key

    def check() -> list[str]:
        failures = []
        for uid, title, expr in queries:
            error, result = query(_expand(expr))
            if error:
                failures.append(f"{uid} / {title}: {error}: {expr}")
            elif not result and not _allowed_empty(uid, title, expr):
                failures.append(f"{uid} / {title}: no data: {expr}")
        return failures

    failures = _until_no_failures(check)
    assert not failures, "\n".join(failures)


def test_every_query_of_the_node_exporter_variant_returns_data(prometheus_with_fixtures):
    """The host dashboard as the mixin renders it for hostMetricsSource 'node_exporter'
    (dashboards/variants/node_exporter/), its Job variable's All on node_exporter's job and the Domino panels on the
    exporter's, against Debian's node_exporter scraped beside the exporter."""
    query = prometheus_with_fixtures
    variant = json.loads((REPO / "dashboards" / "variants" / "node_exporter" / "middleware-host.json").read_text())
    job = next(v for v in variant["templating"]["list"] if v["name"] == "job")
    assert job["allValue"] == "node-exporter" and "node_uname_info" in job["query"]
    checked = 0

    def check() -> list[str]:
        nonlocal checked
        failures, checked = [], 0
        for panel in variant["panels"]:
            for target in panel.get("targets", []):
                expr = re.sub(r"\$\{?job\}?", job["allValue"], target["expr"])
                assert "middleware_host_" not in expr, (panel["title"], expr)
                error, result = query(_expand(expr))
                checked += 1
                if error or not result:
                    failures.append(f"{panel['title']}: {error or 'no data'}: {expr}")
        return failures

    failures = _until_no_failures(check)
    assert checked > 25 and not failures, "\n".join(failures)
