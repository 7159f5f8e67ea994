"""Static labels (issue 27): ``labels:`` of the exporter and of each target, added to every series of a real
exporter process, refused with the key and the reason when they break Prometheus' rules or collide with a label
the series already have, and no change at all to the exposition when none are configured.

The Oracle databases are served by the DB-API stand-in (tests/fakes/oracledb, invented rows), the remote host's
sar and vmstat are real HP-UX output (tests/systems/host/fixtures/real/SOURCE.md) printed by ``cat``, and the queue
manager's REST port is closed (nothing listens there): it is down, and its series still carry its labels.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from prometheus_client.openmetrics.parser import text_string_to_metric_families as openmetrics_families
from prometheus_client.parser import text_string_to_metric_families

from ..support import REPO, free_port, system_fixtures
from .test_golden import GOLDEN, _collect

FAKES = REPO / "tests" / "fakes"
REAL_TEXT = system_fixtures("host") / "real"
OPENMETRICS = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"


def _config() -> dict:
    databases = [{"name": "opcdb", "dsn": "opcdb.example:1521/openview", "user": "monitor",
                  "password_env": "ORA_MONITOR_PW", "hpom": True, "labels": {"app": "hpom", "env": "test"}},
                 {"name": "erp", "dsn": "erp.example:1521/erp", "user": "monitor", "password_env": "ORA_MONITOR_PW",
                  "labels": {"app": "erp", "env": ""}}]  # an empty value drops the exporter's env for erp
    qmgr = {"name": "QM1", "url": f"http://127.0.0.1:{free_port()}/ibmmq/rest/v2", "timeout": "2s",
            "labels": {"app": "payments", "owner": "Zoë \"MQ\" team\\n"}}  # any UTF-8, escaped in the exposition
    host_text = {"sar": ["cat", str(REAL_TEXT / "hpux_sar_d.txt")],
                 "vmstat": ["cat", str(REAL_TEXT / "hpux_vmstat.txt")], "target": "hpux1", "command_timeout": "15s",
                 "labels": {"site": "ber2", "app": "billing"}}
    return {"labels": {"env": "prod", "site": "fra1"},
            "paths": {"procfs": str(system_fixtures("oracle") / "proc")},
            "collectors": {"process": {"enabled": False}, "filesystem": {"enabled": False},
                           "host": {"backend": "text", "interval": "60s", "timeout": "20s", "text": host_text},
                           "oracle": {"enabled": True, "interval": "60s", "timeout": "20s", "databases": databases},
                           "ibmmq": {"enabled": True, "interval": "60s", "timeout": "20s", "queue_managers": [qmgr]}}}


EXPORTER = {"env": "prod", "site": "fra1", "rollout": "1.10"}  # rollout: from the environment, a string as given
TARGETS = {("oracle", "opcdb"): {**EXPORTER, "app": "hpom", "env": "test"},
           ("oracle", "erp"): {"site": "fra1", "rollout": "1.10", "app": "erp"},
           ("ibmmq", "QM1"): {**EXPORTER, "app": "payments", "owner": 'Zoë "MQ" team\\n'},
           ("host", "hpux1"): {**EXPORTER, "site": "ber2", "app": "billing"}}
STATIC = {"env", "site", "rollout", "app", "owner"}


def _expected(name: str, labels: dict[str, str]) -> tuple[str, dict[str, str]]:
    """Which labels a series must carry, and why (what ties it to a target)."""
    if "collector" in labels and "target" in labels:
        return "target's own series", TARGETS[(labels["collector"], labels["target"])]
    if name.startswith("middleware_oracle_") and "database" in labels:
        return "oracle database", TARGETS[("oracle", labels["database"])]
    if name.startswith("ibmmq_") or (name.startswith("middleware_ibmmq_") and "qmgr" in labels):
        return "queue manager", TARGETS[("ibmmq", labels["qmgr"])]
    if name.startswith("middleware_host_"):
        return "remote host", TARGETS[("host", "hpux1")]
    return "exporter", EXPORTER


def _check(samples) -> dict[str, int]:
    kinds: dict[str, int] = {}
    for sample in samples:
        kind, expected = _expected(sample.name, sample.labels)
        static = {k: v for k, v in sample.labels.items() if k in STATIC}
        assert static == expected, (kind, sample)
        kinds[kind] = kinds.get(kind, 0) + 1
    return kinds


@pytest.mark.integration
def test_exporter_and_target_labels_on_every_series_of_a_real_exporter(tmp_path, start_exporter):
    env = {"PYTHONPATH": str(FAKES), "FAKE_ORACLEDB_FIXTURE": str(system_fixtures("oracle") / "db.yaml"),
           "ORA_MONITOR_PW": "Tiger-Tiger-42", "MIDDLEWARE_EXPORTER_LABELS__ROLLOUT": "1.10"}
    exporter = start_exporter(config=yaml.safe_dump(_config()), env=env)
    status, _, body = exporter.get("/metrics")
    assert status == 200
    text = body.decode()
    samples = [s for family in text_string_to_metric_families(text) for s in family.samples]
    kinds = _check(samples)
    assert kinds["oracle database"] > 20 and kinds["remote host"] > 5 and kinds["queue manager"] >= 2, kinds
    assert kinds["target's own series"] >= 4 and kinds["exporter"] > 10, kinds
    names = {s.name for s in samples if _expected(s.name, s.labels)[0] == "exporter"}
    # the build info, the process figures and the collectors' own series carry the exporter's labels only
    assert {"middleware_exporter_build_info", "process_resident_memory_bytes",
            "middleware_scrape_collector_success"} <= names
    assert 'middleware_target_up{app="hpom",collector="oracle",env="test",rollout="1.10",site="fra1",' \
           'target="opcdb"} 1.0' in text.splitlines()
    assert 'owner="Zoë \\"MQ\\" team\\\\n"' in text  # escaped as the text format wants
    # the same in OpenMetrics, which Prometheus asks for
    status, headers, body = exporter.get("/metrics", {"Accept": OPENMETRICS})
    assert headers["content-type"].startswith("application/openmetrics-text")
    assert _check(s for family in openmetrics_families(body.decode()) for s in family.samples) == kinds
    check = subprocess.run(["promtool", "check", "metrics"], input=text.encode(), capture_output=True, timeout=60) \
        if Path("/usr/bin/promtool").exists() else None
    assert check is None or check.returncode == 0, check.stdout + check.stderr


def _check_config(tmp_path: Path, config: dict) -> subprocess.CompletedProcess:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True))
    return subprocess.run([sys.executable, "-m", "exporter", "check-config", "--no-password-sources", "--config",
                           str(path)], cwd=REPO, capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin"})


def test_label_rules_refused_at_start_naming_key_and_reason(tmp_path):
    config = {"labels": {"env": 1.10, "__name": "x-secret-value-1", "9lives": "b", "job": "c", "team-a": "d",
                         "": "e"},
              "collectors": {"hpom": {"labels": {"collector": "f", "ok": "g"}},
                             "domino": {"labels": {"target": "h"}}, "vhi": {"labels": {"instance": "i"}}}}
    result = _check_config(tmp_path, config)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    for key, reason in [("labels.env", "valid string (put it in quotes)"),
                        ("labels.__name", "starting with __ are reserved"),
                        ("labels.9lives", "[a-zA-Z_][a-zA-Z0-9_]*"),
                        ("labels.team-a", "[a-zA-Z_][a-zA-Z0-9_]*"),
                        ('labels.""', "must not be empty"),
                        ("labels.job", "Prometheus sets it when scraping"),
                        ("collectors.hpom.labels.collector", "reserved: a label of the exporter's own series"),
                        ("collectors.domino.labels.target", "reserved"),
                        ("collectors.vhi.labels.instance", "Prometheus sets it when scraping")]:
        assert any(line.strip().startswith(f"{key}: ") and reason in line for line in lines), (key, result.stderr)
    assert "x-secret-value-1" not in result.stderr + result.stdout  # the values given are never shown
    assert not any("labels.ok" in line for line in lines)


def test_labels_a_series_already_has_are_refused_naming_key_and_series(tmp_path):
    databases = [{"name": "erp", "dsn": "erp.example:1521/erp", "user": "monitor", "password_env": "X",
                  "labels": {"database": "a", "app": "erp"}}]
    qmgrs = [{"name": "QM1", "url": "http://127.0.0.1:1/ibmmq/rest/v2", "labels": {"queue": "b"}}]
    config = {"labels": {"version": "x", "device": "y", "env": "prod"},
              "collectors": {"host": {"backend": "text", "text": {"labels": {"mode": "z"}}},
                             "oracle": {"enabled": True, "databases": databases},
                             "ibmmq": {"enabled": True, "queue_managers": qmgrs}}}
    result = _check_config(tmp_path, config)
    assert result.returncode == 2, result.stderr
    lines = [line.strip() for line in result.stderr.splitlines()]
    for key, reason in [("labels.version", "collides with the label version of middleware_exporter_build_info"),
                        ("labels.device", "collides with the label device of middleware_host_"),
                        ("collectors.host.text.labels.mode", "collides with the label mode of middleware_host_"),
                        ("collectors.oracle.databases.0.labels.database",
                         "collides with the label database of middleware_oracle_up"),
                        ("collectors.ibmmq.queue_managers.0.labels.queue", "collides with the label queue of ")]:
        assert any(line.startswith(f"{key}: ") and reason in line for line in lines), (key, result.stderr)
    assert not any(line.startswith(("labels.env", "collectors.oracle.databases.0.labels.app")) for line in lines)
    config["labels"], config["collectors"]["host"]["text"]["labels"] = {"env": "prod"}, {}
    databases[0]["labels"], qmgrs[0]["labels"] = {"app": "erp"}, {"app": "mq"}
    fixed = _check_config(tmp_path, config)
    assert fixed.returncode == 0, fixed.stderr


def test_no_labels_leave_the_exposition_unchanged_and_one_label_only_adds_itself(tmp_path):
    """Golden: with ``labels: {}`` the exposition of the recorded host is the golden file byte for byte; with one
    exporter label it is the golden file with that label on every series and nothing else changed."""
    empty = tmp_path / "empty.yaml"
    empty.write_text("labels: {}\ncollectors:\n  vhi:\n    labels: {}\n")
    code, text = _collect("--config", str(empty))
    assert code == 0
    assert _recorded(text) == _recorded(GOLDEN.read_text())
    one = tmp_path / "one.yaml"
    one.write_text("labels:\n  env: prod\n")
    code, labelled = _collect("--config", str(one))
    assert code == 0
    golden = [(s.name, tuple(sorted({**s.labels, "env": "prod"}.items())), s.value)
              for family in text_string_to_metric_families(_recorded(GOLDEN.read_text())) for s in family.samples]
    got = [(s.name, tuple(sorted(s.labels.items())), s.value)
           for family in text_string_to_metric_families(_recorded(labelled)) for s in family.samples]
    assert got == golden and len(got) > 300
    comments = [line for line in labelled.splitlines() if line.startswith("#")]
    assert comments == [line for line in GOLDEN.read_text().splitlines() if line.startswith("#")]


def _recorded(text: str) -> str:
    """The exposition without the filesystem collector's figures, which statvfs reads from this machine's own file
    systems (free space changes between two runs); test_golden covers them."""
    return "".join(line for line in text.splitlines(keepends=True) if "middleware_filesystem_" not in line)


def test_target_labels_override_exporter_labels_and_own_labels_are_never_replaced():
    from exporter.core.metrics import MetricBatch, MetricSpec, StaticLabels

    spec = MetricSpec("x_info", "info", "x", ("database",))
    batch = MetricBatch([spec], static_labels=StaticLabels({"env": "prod", "site": "a"}, ("database",),
                                                           {("erp",): {"env": "test", "site": ""}}))
    spec.add_info(batch, {"version": "19c", "env": "own"}, database="erp")
    spec.add_info(batch, {"version": "12c"}, database="hr")
    assert [s.labels for family in batch.families() for s in family.samples] == [
        {"database": "erp", "version": "19c", "env": "own"},  # an info label of its own wins; site dropped by ""
        {"database": "hr", "version": "12c", "env": "prod", "site": "a"}]


def test_filesystem_text_host_labels_on_its_series(tmp_path):
    """The filesystem collector's text back-end reads one remote host: its labels on all its series (collect-once,
    a real process; the df output is OpenIndiana's, tests/systems/filesystem/fixtures/real/SOURCE.md)."""
    df = system_fixtures("filesystem") / "real" / "solaris_df_oi-2021.10.txt"
    config = {"labels": {"env": "prod"},
              "collectors": {"host": {"enabled": False}, "process": {"enabled": False},
                             "filesystem": {"backend": "text", "text": {
                                 "df": ["cat", str(df)], "platform": "solaris", "target": "sol1",
                                 "labels": {"site": "ber2", "env": "test"}}}}}
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    result = subprocess.run([sys.executable, "-m", "exporter", "collect-once", "--config", str(path)], cwd=REPO,
                            capture_output=True, text=True, timeout=60)
    samples = [s for family in text_string_to_metric_families(result.stdout) for s in family.samples]
    mine = [s for s in samples if s.name.startswith("middleware_filesystem_") or s.labels.get("target") == "sol1"]
    assert len(mine) > 10, result.stderr
    assert all(s.labels["site"] == "ber2" and s.labels["env"] == "test" for s in mine)
    others = [s for s in samples if s not in mine]
    assert others and all(s.labels["env"] == "prod" and "site" not in s.labels for s in others)


def test_configured_labels_by_two_target_labels_and_by_a_label_the_series_lack():
    """``Rows.series`` adds the configured labels (the one place): a target picked by two labels' values, the
    common labels for a series of no configured target or for a metric without the target labels, a series' own
    label kept; the exposition writes the same labels (sorted) as the library's objects carry."""
    from exporter.core.exposition import render_batch
    from exporter.core.metrics import MetricBatch, MetricSpec, StaticLabels

    pair = MetricSpec("x_depth", "gauge", "x", ("qmgr", "queue", "env"))
    lone = MetricSpec("x_up", "gauge", "x", ("host",))
    static = StaticLabels({"env": "prod", "site": "a"}, ("qmgr", "queue"), {("QM1", "Q1"): {"app": "pay"}})
    batch = MetricBatch([pair, lone], static_labels=static)
    pair.add(batch, 1, qmgr="QM1", queue="Q1", env="own")
    pair.add(batch, 2, qmgr="QM1", queue="Q2", env="own")
    lone.add(batch, 1, host="h1")
    assert [s.labels for family in batch.families() for s in family.samples] == [
        {"qmgr": "QM1", "queue": "Q1", "env": "own", "site": "a", "app": "pay"},
        {"qmgr": "QM1", "queue": "Q2", "env": "own", "site": "a"},
        {"host": "h1", "env": "prod", "site": "a"}]
    assert render_batch(batch, False).decode().splitlines()[2:] == [
        'x_depth{app="pay",env="own",qmgr="QM1",queue="Q1",site="a"} 1.0',
        'x_depth{env="own",qmgr="QM1",queue="Q2",site="a"} 2.0',
        "# HELP x_up x", "# TYPE x_up gauge", 'x_up{env="prod",host="h1",site="a"} 1.0']
