"""The Oracle collector with two databases served by the DB-API stand-in (tests/fakes/oracledb): rows with the
real column names and types, NULLs, empty results, slow queries, ORA errors, dropped and hanging connections;
and the real python-oracledb driver against a closed port.  No Oracle server can run on these machines."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from exporter.core.collector import Context
from exporter.core.fanout import target_limit
from exporter.machine.procfs import Mount, parse_mounts
from exporter.systems.oracle import checks
from exporter.systems.oracle.collector import OracleCollector
from exporter.systems.oracle.parse import int_option, mount_of, parse_options
from exporter.systems.oracle.settings import GuideThresholds, OracleCollectorSettings

from ...support import REPO, collect, install_fake_oracledb, require_binary

FIX = Path(__file__).parent / "fixtures"
FAKES = REPO / "tests" / "fakes"
OPCDB = "opcdb.example:1521/openview"
ERP = "erp.example:1521/erp"


@pytest.fixture
def fake_db(monkeypatch, tmp_path):
    fixture = tmp_path / "db.yaml"
    shutil.copy(FIX / "db.yaml", fixture)
    monkeypatch.setenv("ORA_MONITOR_PW", "Tiger-Tiger-42")
    install_fake_oracledb(monkeypatch, fixture, tmp_path / "connects.log")
    yield fixture
    sys.modules.pop("oracledb", None)


def _settings(**overrides) -> dict:
    settings = {
        "enabled": True,
        "databases": [
            {"name": "opcdb", "dsn": OPCDB, "user": "monitor", "password_env": "ORA_MONITOR_PW", "hpom": True},
            {"name": "erp", "dsn": ERP, "user": "monitor", "password_env": "ORA_MONITOR_PW",
             "dedicated_host": True},
        ],
    }
    settings.update(overrides)
    return settings


def _collector(settings: dict) -> OracleCollector:
    return OracleCollector(OracleCollectorSettings.model_validate(settings), Context(procfs=str(FIX / "proc")))


_collect = collect


def _v(samples: dict, name: str, /, **labels) -> float:
    return samples[(f"middleware_oracle_{name}", tuple(sorted(labels.items())))]


def _edit(fixture, dsn: str, match: str, **entry) -> None:
    data = yaml.safe_load(fixture.read_text())
    queries = data["databases"][dsn]["queries"]
    for index, query in enumerate(queries):
        if query["match"] == match:
            queries[index] = {"match": match, **entry}
    fixture.write_text(yaml.safe_dump(data))


def test_two_databases_every_figure_labelled(fake_db):
    samples, batch = _collect(_collector(_settings()))
    assert batch.errors == {}
    for db in ("opcdb", "erp"):
        assert _v(samples, "up", database=db) == 1
        assert _v(samples, "collect_success", database=db) == 1
        for query in ("redo_sequence", "redo_switches_last_hour", "redo_groups", "redo_group_status",
                      "log_file_switch_waits", "log_file_switch_sessions", "parameters", "resource_limits", "host"):
            assert _v(samples, "query_success", database=db, query=query) == 1, (db, query)
    # redo switches: a counter per thread, and the last hour (idle RAC thread 2 reports 0)
    assert _v(samples, "redo_log_switches_total", database="opcdb", thread="1") == 48213
    assert _v(samples, "redo_log_switches_total", database="erp", thread="2") == 17
    assert _v(samples, "redo_log_switches_last_hour", database="opcdb", thread="1") == 38
    assert _v(samples, "redo_log_switches_last_hour", database="erp", thread="2") == 0
    # redo layout
    assert _v(samples, "redo_group_size_bytes", database="opcdb", thread="1", log_group="3") == 20971520
    assert _v(samples, "redo_group_members", database="erp", thread="2", log_group="25") == 2
    assert _v(samples, "redo_groups", database="opcdb", status="ACTIVE") == 2
    assert _v(samples, "redo_groups", database="opcdb", status="UNUSED") == 0  # zero-filled
    # waits (Decimal seconds; the ERP database has none: empty result, no series, query still fine)
    assert _v(samples, "log_file_switch_waits_total", inst_id="1", database="opcdb",
              event="log file switch (checkpoint incomplete)") == 1534
    assert _v(samples, "log_file_switch_wait_seconds_total", inst_id="1", database="opcdb",
              event="log file switch (checkpoint incomplete)") == pytest.approx(912.345678)
    assert not any(k[0] == "middleware_oracle_log_file_switch_waits_total" and ("database", "erp") in k[1]
                   for k in samples)
    assert _v(samples, "sessions_waiting_log_file_switch", inst_id="1", database="opcdb",
              event="log file switch (checkpoint incomplete)") == 7
    assert _v(samples, "sessions_waiting_log_file_switch", inst_id="1", database="erp",
              event="log file switch (archiving needed)") == 0
    # parameters: numbers as gauges, text as info (NULL numeric value: no gauge)
    assert _v(samples, "parameter_value", inst_id="1", database="opcdb", name="log_buffer") == 65536
    assert ("middleware_oracle_parameter_value", (("database", "opcdb"), ("inst_id", "1"),
                                                  ("name", "filesystemio_options"))) not in samples
    assert _v(samples, "parameter_info", inst_id="1", database="opcdb", name="filesystemio_options", value="none",
              isdefault="TRUE") == 1
    # limits, NULL limit (unlimited) gives no limit series
    assert _v(samples, "resource_current_utilization", inst_id="1", database="erp", resource="processes") == 412
    assert _v(samples, "resource_limit", inst_id="1", database="opcdb", resource="sessions") == 170
    assert ("middleware_oracle_resource_limit", (("database", "erp"), ("inst_id", "1"), ("resource", "sessions"))) \
        not in samples
    # the guide checks
    ok = lambda db, check: _v(samples, "follows_guide", database=db, check=check)  # noqa: E731
    assert ok("opcdb", "redo_groups_per_thread") == 0 and ok("erp", "redo_groups_per_thread") == 1
    assert _v(samples, "guide_observed", database="opcdb", check="redo_groups_per_thread") == 3
    assert ok("opcdb", "redo_group_size") == 0 and ok("erp", "redo_group_size") == 1
    assert ok("opcdb", "log_buffer") == 0 and ok("erp", "log_buffer") == 1
    assert ok("opcdb", "hpom_sga_target") == 0
    assert _v(samples, "guide_threshold", database="opcdb", check="hpom_sga_target") == 350 * 2**20
    assert ok("opcdb", "hpom_processes") == 0 and ok("opcdb", "hpom_multiblock_read_count") == 0
    assert ok("opcdb", "db_writer_processes") == 0 and ok("erp", "db_writer_processes") == 0  # 4 writers, 8 cores
    assert _v(samples, "guide_threshold", database="erp", check="db_writer_processes") == 8
    assert ok("erp", "sga_share_of_memory") == 1
    assert _v(samples, "guide_observed", database="erp", check="sga_share_of_memory") == pytest.approx(0.625)
    assert ("middleware_oracle_follows_guide", (("check", "sga_share_of_memory"), ("database", "opcdb"))) \
        not in samples  # not a dedicated host
    assert ("middleware_oracle_follows_guide", (("check", "hpom_sga_target"), ("database", "erp"))) not in samples


def test_nfs_mounts_of_local_database_files(fake_db):
    samples, _ = _collect(_collector(_settings()))
    nfs = lambda point, option: _v(samples, "nfs_mount_follows_guide", database="opcdb",  # noqa: E731
                                   mountpoint=point, option=option)
    for option in ("hard", "proto_tcp", "vers", "rsize", "wsize", "timeo"):
        assert nfs("/u01/oradata", option) == 1, option
    assert nfs("/u01/oradata", "direct_io") == 0  # filesystemio_options=none and no forcedirectio
    assert nfs("/u02/redo", "hard") == 0 and nfs("/u02/redo", "vers") == 0 and nfs("/u02/redo", "timeo") == 0
    assert nfs("/u02/redo", "rsize") == 1
    info = [dict(labels) for (name, labels), _ in samples.items() if name == "middleware_oracle_file_system_info"]
    points = {i["mountpoint"]: i for i in info if i["database"] == "opcdb"}
    assert set(points) == {"/u01/oradata", "/u02/redo", "/u03/arch log"}
    assert points["/u01/oradata"]["fstype"] == "nfs" and points["/u03/arch log"]["fstype"] == "xfs"
    # the ERP database runs on another host: its files are not looked up on this one
    assert not any(i["database"] == "erp" for i in info)


def test_direct_io_through_filesystemio_options(fake_db):
    _edit(fake_db, OPCDB, "FROM v$parameter", columns=["NAME", "VALUE", "ISDEFAULT", "NUMERIC_VALUE"],
          rows=[["filesystemio_options", "directio", "FALSE", None]])
    samples, _ = _collect(_collector(_settings()))
    assert _v(samples, "nfs_mount_follows_guide", database="opcdb", mountpoint="/u01/oradata", option="direct_io") == 1


@pytest.mark.integration  # waits out a hanging or slow stand-in database
def test_hanging_database_leaves_the_other_intact(fake_db):
    data = yaml.safe_load(fake_db.read_text())
    data["databases"][ERP]["hang_connect"] = 30
    fake_db.write_text(yaml.safe_dump(data))
    settings = _settings()
    settings["databases"][1]["connect_timeout"] = "1s"
    started = time.monotonic()
    samples, batch = _collect(_collector(settings))
    assert time.monotonic() - started < 25  # the 1 s connect timeout, not the 30 s hang (margin for a loaded machine)
    assert _v(samples, "up", database="erp") == 0
    assert _v(samples, "collect_success", database="erp") == 0
    assert _v(samples, "query_success", database="erp", query="redo_sequence") == 0
    assert "timed out" in batch.errors["erp"]
    assert _v(samples, "up", database="opcdb") == 1
    assert _v(samples, "redo_log_switches_total", database="opcdb", thread="1") == 48213


@pytest.mark.integration  # waits out a hanging or slow stand-in database
def test_ora_error_mid_scrape_and_dropped_connection_reconnect(fake_db, tmp_path):
    _edit(fake_db, OPCDB, "FROM v$resource_limit", error="ORA-00942: table or view does not exist")
    _edit(fake_db, OPCDB, "FROM v$session", error="ORA-03113: end-of-file on communication channel", drop=True)
    collector = _collector(_settings())
    samples, batch = _collect(collector)
    assert _v(samples, "query_success", database="opcdb", query="resource_limits") == 0
    assert _v(samples, "query_success", database="opcdb", query="log_file_switch_sessions") == 0
    assert "ORA-00942" in batch.errors["opcdb:resource_limits"]
    assert "ORA-03113" in batch.errors["opcdb:log_file_switch_sessions"]
    # the queries after the dropped session ran on a fresh one
    assert _v(samples, "query_success", database="opcdb", query="parameters") == 1
    assert _v(samples, "up", database="opcdb") == 1
    assert collector.databases[0].client.dropped == 1
    connects = lambda: sum(1 for line in (tmp_path / "connects.log").read_text().splitlines()  # noqa: E731
                           if OPCDB in line)
    first = connects()
    assert first == 2  # the first session, and a new one after the drop
    # the database is fine again: the next scrape reuses the pooled session and every query succeeds
    shutil.copy(FIX / "db.yaml", fake_db)
    samples, batch = _collect(collector)
    assert _v(samples, "query_success", database="opcdb", query="log_file_switch_sessions") == 1
    assert _v(samples, "resource_limit", inst_id="1", database="opcdb", resource="processes") == 150
    assert not any(key.startswith("opcdb") for key in batch.errors)


@pytest.mark.integration  # waits out a hanging or slow stand-in database
def test_slow_query_times_out_alone(fake_db):
    _edit(fake_db, ERP, "FROM v$system_event", sleep=5)
    settings = _settings()
    settings["databases"][1]["query_timeout"] = "1s"
    samples, batch = _collect(_collector(settings))
    assert _v(samples, "query_success", database="erp", query="log_file_switch_waits") == 0
    assert "timed out after 1s" in batch.errors["erp:log_file_switch_waits"]
    assert _v(samples, "query_success", database="erp", query="parameters") == 1
    assert _v(samples, "collect_success", database="erp") == 1


def test_locked_account_backs_off(fake_db, tmp_path):
    data = yaml.safe_load(fake_db.read_text())
    data["databases"][ERP]["login_error"] = "ORA-28000: The account is locked."
    fake_db.write_text(yaml.safe_dump(data))
    collector = _collector(_settings())
    for _ in range(3):
        samples, batch = _collect(collector)
    erp_connects = [line for line in (tmp_path / "connects.log").read_text().splitlines() if ERP in line]
    assert len(erp_connects) == 1
    assert _v(samples, "backoff_seconds", database="erp") > 250
    assert "Tiger-Tiger-42" not in repr(batch.errors)
    assert _v(samples, "up", database="opcdb") == 1


def test_real_driver_refused_connection():
    pytest.importorskip("oracledb")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    settings = {"enabled": True, "databases": [{"name": "gone", "dsn": f"127.0.0.1:{port}/orcl", "user": "monitor",
                                                "password": "Tiger-Tiger-42", "connect_timeout": "2s"}]}
    samples, batch = _collect(_collector(settings))
    assert _v(samples, "up", database="gone") == 0
    assert _v(samples, "query_success", database="gone", query="redo_sequence") == 0
    assert "DPY-6005" in batch.errors["gone"]
    assert "Tiger-Tiger-42" not in repr(batch.errors)


def test_configuration_errors():
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="database names must be unique"):
        OracleCollectorSettings.model_validate(_settings(databases=[_settings()["databases"][0]] * 2))
    with pytest.raises(ValidationError, match="no databases are configured"):
        OracleCollectorSettings.model_validate({"enabled": True})
    with pytest.raises(ValidationError, match="sga_share_min must be below"):
        OracleCollectorSettings.model_validate(_settings(guide={"sga_share_min": 0.8, "sga_share_max": 0.7}))


def test_extra_queries_are_added(fake_db, tmp_path):
    extra = tmp_path / "extra.yaml"
    extra.write_text(yaml.safe_dump({"queries": [{
        "name": "archive_dest", "sql": "SELECT COUNT(*) AS errors FROM v$archive_dest WHERE status = 'ERROR'",
        "metrics": [{"name": "middleware_oracle_archive_dest_errors", "help": "Archive destinations in error.",
                     "value": "errors"}]}]}))
    data = yaml.safe_load(fake_db.read_text())
    data["databases"][OPCDB]["queries"].append({"match": "v$archive_dest", "columns": ["ERRORS"], "rows": [[1]]})
    fake_db.write_text(yaml.safe_dump(data))
    samples, _ = _collect(_collector(_settings(extra_queries_file=str(extra))))
    assert _v(samples, "archive_dest_errors", database="opcdb") == 1
    assert _v(samples, "query_success", database="erp", query="archive_dest") == 0  # ERP has no such rows


def test_mount_lookup():
    mounts = [Mount(*m) for m in [("/dev/root", "/", "ext4", "rw"), ("f:/a", "/u01", "nfs", "hard"),
                                  ("f:/b", "/u01/data", "nfs", "soft"), ("f:/c", "/u011", "nfs", "hard")]]
    assert mount_of("/u01/data/x", mounts)[1] == "/u01/data"
    assert mount_of("/u01/other", mounts)[1] == "/u01"
    assert mount_of("/u011/x", mounts)[1] == "/u011"
    assert mount_of("/var/tmp", mounts)[1] == "/"


GOLDEN = FIX / "oracle_two_databases.prom"
VOLATILE = re.compile(r"^(middleware_oracle_(?:query_duration_seconds|collect_duration_seconds|source_duration_seconds)"
                      r"\{[^}]*\}) .*$", re.M)


def _config(tmp_path) -> str:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({"paths": {"procfs": str(FIX / "proc")},
                                    "collectors": {"host": {"enabled": False}, "process": {"enabled": False},
                                                   "filesystem": {"enabled": False}, "oracle": _settings()}}))
    return str(path)


def test_golden_exposition(fake_db, tmp_path, capsysbinary):
    from exporter.cli import main

    assert main(["collect-once", "--config", _config(tmp_path), "--no-self-metrics"]) == 0
    text = VOLATILE.sub(r"\1 <duration>", capsysbinary.readouterr().out.decode())
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.write_text(text)
    assert text == GOLDEN.read_text(), "exposition changed; if intended, regenerate with UPDATE_GOLDEN=1"


@pytest.mark.integration
def test_exporter_process_with_two_databases(start_exporter, tmp_path):
    fixture = tmp_path / "db.yaml"
    shutil.copy(FIX / "db.yaml", fixture)
    env = {"PYTHONPATH": str(FAKES), "FAKE_ORACLEDB_FIXTURE": str(fixture), "ORA_MONITOR_PW": "Tiger-Tiger-42"}
    exporter = start_exporter("--config", _config(tmp_path), env=env)
    status, _, body = exporter.get("/metrics")
    assert status == 200
    text = body.decode()
    assert 'middleware_scrape_collector_success{collector="oracle"} 1.0' in text
    assert 'middleware_oracle_redo_log_switches_total{database="erp",thread="1"} 902211.0' in text
    assert 'middleware_oracle_redo_log_switches_total{database="opcdb",thread="1"} 48213.0' in text
    assert ('middleware_oracle_log_file_switch_waits_total{database="opcdb",event="log file switch completion",'
            'inst_id="1"} 220.0') in text
    # the host's mount table (proc/1/mounts), not the exporter's own (proc/mounts)
    assert "middleware_oracle_mount_table_success 1.0" in text
    assert ('middleware_oracle_nfs_mount_follows_guide{database="opcdb",mountpoint="/u01/oradata",option="hard"} '
            '1.0') in text
    result = subprocess.run([require_binary("promtool"), "check", "metrics"], input=body, capture_output=True,
                            timeout=60)
    assert result.returncode == 0 and not result.stdout.strip(), result.stdout.decode() + result.stderr.decode()
    assert "Tiger-Tiger-42" not in exporter.log()


@pytest.mark.integration
def test_exporter_process_degraded_while_queries_fail(start_exporter, tmp_path):
    """Issue 38, item 5: a database that answers but refuses its queries (ORA-00942: the monitoring account lacks
    the grants) read as success 1 with the errors only under source_errors.  The database stays up (it answers),
    but the run is degraded in the metric, the API, the status page and the log, naming the failed queries."""
    fixture = tmp_path / "db.yaml"
    data = yaml.safe_load((FIX / "db.yaml").read_text())
    data["databases"][ERP]["queries"] = []  # the fake answers ORA-00942 to a statement no entry matches
    fixture.write_text(yaml.safe_dump(data))
    env = {"PYTHONPATH": str(FAKES), "FAKE_ORACLEDB_FIXTURE": str(fixture), "ORA_MONITOR_PW": "Tiger-Tiger-42"}
    exporter = start_exporter("--config", _config(tmp_path), env=env)
    oracle = next(c for c in json.loads(exporter.get("/api/v1/collectors")[2]) if c["name"] == "oracle")
    failed = {source: error for source, error in oracle["source_errors"].items() if source.startswith("erp:")}
    assert len(failed) >= 20 and all("ORA-00942" in error for error in failed.values()), oracle["source_errors"]
    assert not any(source.startswith("opcdb") for source in oracle["source_errors"]), oracle["source_errors"]
    targets = {t["name"]: t for t in oracle["targets"]}
    assert targets["erp"]["state"] == "up" and targets["opcdb"]["state"] == "up"  # the database answers
    assert oracle["state"] == "degraded" and oracle["last_success"] is False, oracle
    # one line for all of them: the count, a few names per error text, each text once
    last_error = oracle["last_error"]
    assert last_error.startswith(f"{len(oracle['source_errors'])} sources failed: "), last_error
    shared = [source for source, error in failed.items() if error == "ORA-00942: table or view does not exist"]
    assert len(shared) >= 20
    assert re.search(rf"(erp:\w+, ){{3}}erp:\w+ and {len(shared) - 4} more: ORA-00942: table or view does not "
                     "exist", last_error), last_error
    assert sum(bool(re.search(rf"{re.escape(name)}\b", last_error)) for name in shared) == 4, last_error

    text = exporter.get("/metrics")[2].decode()
    assert 'middleware_scrape_collector_success{collector="oracle"} 0.0' in text
    assert 'middleware_target_up{collector="oracle",target="erp"} 1.0' in text
    assert 'middleware_oracle_up{database="erp"} 1.0' in text
    query = next(iter(failed)).split(":", 1)[1]
    assert f'middleware_oracle_query_success{{database="erp",query="{query}"}} 0.0' in text  # per-query series
    assert 'middleware_oracle_redo_log_switches_total{database="opcdb",thread="1"} 48213.0' in text

    page = exporter.get("/")[2].decode()
    section = page[page.index('id="collector-oracle"') - 40:]
    section = section[:section.index("</section>")]
    assert 'class="collector degraded"' in section and html.escape(oracle["last_error"]) in section
    status, _, body = exporter.get("/readyz")
    assert status == 200 and json.loads(body)["status"] == "degraded"
    log = exporter.log()
    assert re.search(r"collector=oracle sources=erp:[^\n]* msg='\d+ sources failed; collector degraded' "
                     r"error='ORA-00942", log), log


@pytest.mark.skipif(not os.environ.get("MWE_TEST_ORACLE_DSN"),
                    reason="set MWE_TEST_ORACLE_DSN, MWE_TEST_ORACLE_USER and MWE_TEST_ORACLE_PASSWORD to run against "
                           "a real Oracle database (not run on these machines)")
def test_real_oracle_database():
    settings = {"enabled": True, "databases": [{
        "name": "real", "dsn": os.environ["MWE_TEST_ORACLE_DSN"], "user": os.environ["MWE_TEST_ORACLE_USER"],
        "password_env": "MWE_TEST_ORACLE_PASSWORD",
        "thick_mode": bool(os.environ.get("MWE_TEST_ORACLE_THICK"))}]}
    samples, batch = _collect(OracleCollector(OracleCollectorSettings.model_validate(settings), Context()))
    assert _v(samples, "up", database="real") == 1, batch.errors
    failed = {k: v for k, v in batch.errors.items() if k.startswith("real:")}
    assert not failed, failed
    # every shipped query ran (or was skipped for the server's version, saying why): the issue 29 health figures
    # (sessions, tablespaces, wait classes, activity, instances, database, FRA, archive destinations, backups,
    # Data Guard, ASM, containers) included
    from exporter.systems.oracle.querymetrics import load_queries

    shipped = {q.name for q in load_queries(REPO / "exporter/systems/oracle/queries.yaml")}
    sources = batch.reports.targets["real"].sources
    assert shipped <= set(sources), shipped - set(sources)
    assert all(sources[name].ok for name in shipped), {n: sources[n].error for n in shipped if not sources[n].ok}
    print({name: sources[name].note for name in sorted(shipped) if sources[name].note})  # the skipped ones


def test_missing_mount_table_skips_only_the_file_system_checks(fake_db, tmp_path):
    empty = tmp_path / "proc"
    empty.mkdir()
    collector = OracleCollector(OracleCollectorSettings.model_validate(_settings()), Context(procfs=str(empty)))
    samples, batch = _collect(collector)
    assert "cannot read the mount table" in batch.errors["mounts"]
    assert _v(samples, "mount_table_success") == 0
    assert _v(samples, "up", database="opcdb") == 1
    assert not any(name == "middleware_oracle_nfs_mount_follows_guide" for name, _ in samples)


def _file_systems(samples: dict, database: str = "opcdb") -> set[str]:
    return {dict(labels)["mountpoint"] for (name, labels), _ in samples.items()
            if name == "middleware_oracle_file_system_info" and dict(labels)["database"] == database}


ALL_FILE_SYSTEMS = {"/u01/oradata", "/u02/redo", "/u03/arch log"}


@pytest.mark.integration  # waits out a hanging or slow stand-in database
def test_file_checks_run_at_the_first_collection_on_a_young_clock(fake_db):
    """time.monotonic() counts from boot: on a host, container or CI machine up for less than the 10-minute refresh
    the file locations are looked up at the first run all the same, then again every 10 minutes."""
    collector = _collector(_settings())
    clock = [30.0]  # 30 s after boot
    for db in collector.databases:
        db.clock = lambda: clock[0]
    samples, batch = _collect(collector)
    assert _v(samples, "nfs_mount_follows_guide", database="opcdb", mountpoint="/u01/oradata", option="hard") == 1
    assert _file_systems(samples) == ALL_FILE_SYSTEMS
    # the files move: not looked up again within the 10 minutes, looked up once they have passed
    _edit(fake_db, OPCDB, "FROM v$datafile", columns=["DIRECTORY"], rows=[["/u02/redo/OPCDB"]])
    clock[0] = 30.0 + 599
    samples, _ = _collect(collector)
    assert _file_systems(samples) == ALL_FILE_SYSTEMS
    clock[0] = 30.0 + 600
    samples, _ = _collect(collector)
    assert _file_systems(samples) == {"/u02/redo"}


def test_nfs_checks_read_the_hosts_mount_table_not_the_exporters_own(fake_db, tmp_path):
    """The chart's DaemonSet mounts the node's /proc at /host/proc: /host/proc/mounts is a link to self/mounts, the
    exporter container's own mount table (tests/systems/oracle/fixtures/proc/mounts: overlay root, no NFS). PID 1's
    table
    (proc/1/mounts) is the host's."""
    samples, batch = _collect(_collector(_settings()))
    assert "mounts" not in batch.errors
    assert _v(samples, "mount_table_success") == 1
    assert _file_systems(samples) == ALL_FILE_SYSTEMS
    assert _v(samples, "nfs_mount_follows_guide", database="opcdb", mountpoint="/u02/redo", option="hard") == 0
    # PID 1's table unreadable (a /proc mounted with hidepid): the exporter's own is used, and that is said
    own = tmp_path / "proc"
    own.mkdir()
    shutil.copy(FIX / "proc" / "mounts", own / "mounts")
    collector = OracleCollector(OracleCollectorSettings.model_validate(_settings()), Context(procfs=str(own)))
    samples, batch = _collect(collector)
    assert _v(samples, "mount_table_success") == 0
    assert batch.errors["mounts"].startswith(f"cannot read the host's mount table {own}/1/mounts: ")
    assert f"read the exporter's own mount table {own}/mounts instead" in batch.errors["mounts"]
    assert _file_systems(samples) == {"/"}
    assert not any(name == "middleware_oracle_nfs_mount_follows_guide" for name, _ in samples)
    assert _v(samples, "up", database="opcdb") == 1


def _per_instance(samples: dict, metric: str, database: str = "opcdb") -> dict[tuple[str, str], float]:
    return {(dict(labels)["inst_id"], dict(labels)["event"]): value for (name, labels), value in samples.items()
            if name == f"middleware_oracle_{metric}" and dict(labels)["database"] == database}


@pytest.mark.integration  # waits out a hanging or slow stand-in database
def test_a_reconnect_to_another_rac_instance_starts_new_series(fake_db):
    """Through a RAC SCAN address a new session may land on another instance. V$SYSTEM_EVENT (like V$SESSION,
    V$PARAMETER, V$RESOURCE_LIMIT, V$OSSTAT) describes that instance only and counts since it started: its series
    carry inst_id, looked up on the query's own session, so the switch starts new series instead of making the old
    ones jump (which rate() reads as a reset or a leap), and the old instance's series go."""
    data = yaml.safe_load(fake_db.read_text())
    # instance 2 started later and has waited less; its rows answer only sessions on instance 2
    data["databases"][OPCDB]["queries"].insert(0, {
        "match": "FROM v$system_event", "instance": 2, "columns": ["EVENT", "TOTAL_WAITS", "SECONDS_WAITED"],
        "rows": [["log file switch (checkpoint incomplete)", 40, "decimal:12.5"]]})
    fake_db.write_text(yaml.safe_dump(data))
    collector = _collector(_settings())
    samples, _ = _collect(collector)
    assert _per_instance(samples, "log_file_switch_waits_total") == {
        ("1", "log file switch (checkpoint incomplete)"): 1534, ("1", "log file switch completion"): 220}
    # instance 1 goes away mid-run: its session breaks at the v$session query, the next session lands on instance 2
    data = yaml.safe_load(fake_db.read_text())
    data["databases"][OPCDB]["instance"] = 2
    fake_db.write_text(yaml.safe_dump(data))
    _edit(fake_db, OPCDB, "FROM v$session", error="ORA-03113: end-of-file on communication channel", drop=True)
    samples, _ = _collect(collector)
    assert _per_instance(samples, "log_file_switch_waits_total") == {  # read before the break, on instance 1
        ("1", "log file switch (checkpoint incomplete)"): 1534, ("1", "log file switch completion"): 220}
    assert _v(samples, "query_success", database="opcdb", query="log_file_switch_sessions") == 0
    assert _v(samples, "parameter_value", inst_id="2", database="opcdb", name="log_buffer") == 65536  # after it
    assert _v(samples, "host_cpus", inst_id="2", database="opcdb") == 4
    # every query on instance 2 now: instance 1's series are gone, instance 2's are new series
    _edit(fake_db, OPCDB, "FROM v$session", columns=["EVENT", "SESSIONS"], rows=[])
    samples, batch = _collect(collector)
    assert not any(key.startswith("opcdb") for key in batch.errors)
    assert _per_instance(samples, "log_file_switch_waits_total") == {
        ("2", "log file switch (checkpoint incomplete)"): 40}
    assert _per_instance(samples, "log_file_switch_wait_seconds_total") == {
        ("2", "log file switch (checkpoint incomplete)"): 12.5}
    assert set(_per_instance(samples, "sessions_waiting_log_file_switch").values()) == {0}
    assert {inst for inst, _ in _per_instance(samples, "sessions_waiting_log_file_switch")} == {"2"}
    # (the GV$ queries' rows name every instance by INST_ID whichever instance answers: not per_instance)
    per_instance = {m.name for q in collector.databases[0].runner.queries if q.per_instance for m in q.metrics}
    assert not any(("inst_id", "1") in labels and ("database", "opcdb") in labels for name, labels in samples
                   if name in per_instance)
    # the database-wide series (v$thread, v$log) and the guide checks are not per instance and carry on unchanged
    assert _v(samples, "redo_log_switches_total", database="opcdb", thread="1") == 48213
    assert _v(samples, "follows_guide", database="opcdb", check="log_buffer") == 0


def test_a_per_instance_query_cannot_name_a_column_inst_id(tmp_path):
    from exporter.systems.oracle.querymetrics import load_queries

    path = tmp_path / "site.yaml"
    path.write_text(yaml.safe_dump({"queries": [{
        "name": "waits", "per_instance": True, "sql": "SELECT inst_id, event, total_waits FROM gv$system_event",
        "metrics": [{"name": "middleware_oracle_site_waits", "help": "Waits.", "value": "total_waits",
                     "labels": ["inst_id", "event"]}]}]}))
    with pytest.raises(ValueError, match="cannot have a column label 'inst_id'; per_instance adds it"):
        load_queries(path)


# ---- pure parsing (parse.py) --------------------------------------------------------------------------------------
def test_mount_table_decodes_escapes_and_skips_short_lines():
    text = "/dev/sdb1 /u03/arch\\040log xfs rw,relatime 0 0\nbroken line\nf:/v\\134x /u01 nfs hard,vers=3 0 0\n"
    assert parse_mounts(text) == [Mount("/dev/sdb1", "/u03/arch log", "xfs", "rw,relatime"),
                                  Mount("f:/v\\x", "/u01", "nfs", "hard,vers=3")]
    assert parse_mounts((FIX / "proc" / "1" / "mounts").read_text())[2].mountpoint == "/u01/oradata"


def test_mount_options():
    options = parse_options("rw,vers=4.1,rsize=1048576,soft,timeo=x")
    assert options == {"rw": "", "vers": "4.1", "rsize": "1048576", "soft": "", "timeo": "x"}
    assert int_option(options, "rsize") == 1048576
    assert int_option(options, "timeo") == 0 and int_option(options, "wsize") == 0  # not a number, absent


def test_nfs_findings_option_by_option():
    guide = GuideThresholds()
    good = "rw,bg,hard,nointr,forcedirectio,proto=tcp,vers=3,rsize=32768,wsize=32768,timeo=600"
    assert all(checks.nfs_findings(good, False, guide).values())
    bad = checks.nfs_findings("rw,soft,proto=udp,nfsvers=4,rsize=8192,wsize=8192,timeo=60", False, guide)
    assert not any(bad.values())
    assert checks.nfs_findings("rw,soft", True, guide)["direct_io"]  # filesystemio_options=directio/setall
    assert checks.nfs_findings("rw,nfsvers=3.0", False, guide)["vers"]


# ---- the checks declare what they read (checks.py) ---------------------------------------------------------------
class _Results:
    """Stands in for a QueryRunner's last samples."""

    def __init__(self, samples: dict[str, list]) -> None:
        self._samples = samples

    def samples(self, metric: str) -> list:
        return self._samples.get(metric, [])


_ALL_INPUTS = {
    checks.PARAMETER_VALUE.name: [(v, {"name": n}) for n, v in [
        ("log_buffer", 65536), ("db_writer_processes", 4), ("sga_target", 2**30), ("sga_max_size", 2**30),
        ("processes", 150), ("db_file_multiblock_read_count", 16), ("memory_target", 0)]],
    checks.PARAMETER_INFO.name: [(1, {"name": "filesystemio_options", "value": "setall", "isdefault": "FALSE"})],
    checks.REDO_GROUP_SIZE.name: [(20 * 2**20, {"thread": "1", "log_group": str(g)}) for g in (1, 2, 3)],
    checks.HOST_CPUS.name: [(16, {})], checks.HOST_CPU_CORES.name: [(8, {})], checks.HOST_MEMORY.name: [(2**31, {})],
}
_EVERY_CHECK = SimpleNamespace(name="db", hpom=True, dedicated_host=True, local_files="auto")


def _finding(check, samples: dict):
    return check.evaluate(checks.Inputs.read(_Results(samples)), GuideThresholds())


@pytest.mark.parametrize("check", checks.CHECKS, ids=lambda c: c.name)
def test_a_check_reads_exactly_what_it_declares(check):
    declared = {m.name for need in check.needs for m in (need if isinstance(need, tuple) else (need,))}
    only_declared = {name: rows for name, rows in _ALL_INPUTS.items() if name in declared}
    assert _finding(check, only_declared) is not None  # nothing undeclared is needed
    for need in check.needs:  # and every declared input is needed
        group = {m.name for m in (need if isinstance(need, tuple) else (need,))}
        assert _finding(check, {k: v for k, v in only_declared.items() if k not in group}) is None, need


def _queries_without(*dropped: str) -> list:
    from exporter.systems.oracle.querymetrics import load_queries

    queries = load_queries(REPO / "exporter" / "systems" / "oracle" / "queries.yaml")
    return [q for q in queries if q.name not in dropped]


def test_the_built_in_queries_serve_every_check():
    checks.require_inputs(_queries_without(), [_EVERY_CHECK], "built-in")


def test_a_query_list_that_drops_a_check_input_is_refused_naming_the_check():
    with pytest.raises(ValueError) as info:
        checks.require_inputs(_queries_without("parameters"), [_EVERY_CHECK], "queries_file site.yaml")
    message = str(info.value)
    assert message.startswith("queries_file site.yaml: no query produces what these guide checks read")
    assert "log_buffer reads middleware_oracle_parameter_value{name}" in message
    assert "nfs_mounts reads middleware_oracle_parameter_info{name,value}" in message
    assert "redo_group" not in message
    with pytest.raises(ValueError, match=r"db_writer_processes reads middleware_oracle_host_cpu_cores or "
                                         r"middleware_oracle_host_cpus"):
        checks.require_inputs(_queries_without("host"), [_EVERY_CHECK], "q")


def test_only_the_checks_of_configured_databases_need_their_inputs():
    queries = _queries_without()
    host = next(q for q in queries if q.name == "host")
    host.metrics = [m for m in host.metrics if m.name != checks.HOST_MEMORY.name]  # cpus and cores only
    plain = SimpleNamespace(name="db", hpom=False, dedicated_host=False, local_files="no")
    checks.require_inputs(queries, [plain], "q")
    with pytest.raises(ValueError, match="sga_share_of_memory reads middleware_oracle_host_memory_bytes"):
        checks.require_inputs(queries, [plain, _EVERY_CHECK], "q")


def test_a_check_input_needs_the_labels_the_check_reads():
    queries = _queries_without()
    parameters = next(q for q in queries if q.name == "parameters")
    parameters.metrics[0].labels = ["parameter"]  # middleware_oracle_parameter_value{parameter}: no `name`
    with pytest.raises(ValueError, match=r"log_buffer reads middleware_oracle_parameter_value\{name\}"):
        checks.require_inputs(queries, [_EVERY_CHECK], "q")


def _site_queries(tmp_path, dropped: str) -> str:
    data = yaml.safe_load((REPO / "exporter" / "systems" / "oracle" / "queries.yaml").read_text())
    kept = [q for q in data["queries"] if q["name"] != dropped]
    path = tmp_path / f"without-{dropped}.yaml"
    path.write_text(yaml.safe_dump({"queries": kept}))
    restore = tmp_path / f"only-{dropped}.yaml"
    restore.write_text(yaml.safe_dump({"queries": [q for q in data["queries"] if q["name"] == dropped]}))
    return str(path), str(restore)


def _check_config(tmp_path, oracle: dict) -> subprocess.CompletedProcess:
    path = tmp_path / "check.yaml"
    path.write_text(yaml.safe_dump({"collectors": {"host": {"enabled": False}, "process": {"enabled": False},
                                                   "oracle": oracle}}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MIDDLEWARE_EXPORTER_")}
    env["ORA_MONITOR_PW"] = "Tiger-Tiger-42"  # check-config checks that every password_env is set
    return subprocess.run([sys.executable, "-m", "exporter", "check-config", "--config", str(path)], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=60)


def test_check_config_fails_naming_the_check_a_site_queries_file_drops(tmp_path):
    without, only = _site_queries(tmp_path, "redo_groups")
    result = _check_config(tmp_path, _settings(queries_file=without))
    assert result.returncode == 2, result.stderr
    assert f"collectors.oracle: cannot start: queries_file {without}" in result.stderr
    assert "redo_groups_per_thread reads middleware_oracle_redo_group_size_bytes{thread}" in result.stderr
    assert "redo_group_size reads" in result.stderr
    # the same query given back through extra_queries_file: the checks have their inputs again
    result = _check_config(tmp_path, _settings(queries_file=without, extra_queries_file=only))
    assert result.returncode == 0, result.stderr
    assert "configuration OK" in result.stderr


# ---- the per-database fan-out (core.fanout) ----------------------------------------------------------------------
def test_a_database_deadline_is_its_budget_capped_by_the_collector_timeout():
    # the budget: connect 10 s + 28 queries x 5 s (alternatives of one query count once) + 5 instance lookups x 5 s
    # (the per_instance queries) + 7 conditional queries x 2 x 5 s (the session's version, container and ASM use,
    # read once per session) + 2 x 5 s for the file-location lookup + 2 x 5 s for the heap warnings (the view's
    # start and its rows) = 265 s
    short = _collector(_settings(timeout="30s"))
    assert [db.deadline for db in short.databases] == [target_limit(30.0)] * 2 == [28.0, 28.0]
    long = _collector(_settings(interval="300s", timeout="300s"))
    assert [db.deadline for db in long.databases] == [265.0, 265.0]
