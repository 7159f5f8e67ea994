"""Drop-in migration from Oracle's exporter (oracle-db-appdev-monitoring) and iamseth's oracledb_exporter: their
published custom-metrics TOML files (tests/systems/oracle/fixtures/real/toml, SOURCE.md there) read as they are and run
through the DB-API stand-in (tests/fakes/oracledb) with rows shaped like each statement's columns; the series names
are those docs/notes/oracle-health-design.md (sections 1-3) lists.  The rows are invented; the SQL is the
published one.  The stand-in type-checks every statement against tests/fakes/oracledb/schema.yaml: the views of
these files that it does not list (gv$..., dba_tablespace_usage_metrics) are unknown to it and never a type
error, so no opt-out and no schema addition is needed.  Also: several wallets in one process (thin-mode connect
arguments per database) and the thick-mode refusal."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from exporter.core.collector import Context
from exporter.systems.oracle.collector import OracleCollector
from exporter.systems.oracle.settings import OracleCollectorSettings
from exporter.systems.oracle.tomlmetrics import clean_name, load_metric_files, load_toml, parse_go_duration

from ...support import REPO, collect, install_fake_oracledb, require_binary

FIXTURES = Path(__file__).parent / "fixtures"

TOML = FIXTURES / "real" / "toml"
FAKES = REPO / "tests" / "fakes"
PROC = FIXTURES / "proc"
OPCDB = "opcdb.example:1521/openview"
ERP = "erp.example:1521/erp"

# Rows in the columns of Oracle's default-metrics.toml statements (invented values; "match" picks the statement).
ORACLE_ROWS = [
    {"match": "'CON_ID'", "columns": ["DBTYPE"], "rows": [["0"]]},
    {"match": "from gv$session", "columns": ["INST_ID", "STATUS", "TYPE", "VALUE"],
     "rows": [[1, "ACTIVE", "USER", 5], [1, "INACTIVE", "BACKGROUND", 40]]},
    {"match": "gv$resource_limit", "columns": ["INST_ID", "RESOURCE_NAME", "CURRENT_UTILIZATION", "LIMIT_VALUE"],
     "rows": [[1, "processes", 80, "300"], [1, "sessions", 90, "-1"]]},
    {"match": "gv$asm_diskgroup_stat", "columns": ["INST_ID", "NAME", "TOTAL", "FREE"],
     "rows": [[1, "DATA", 1099511627776, 429496729600]]},
    {"match": "gv$sysstat", "columns": ["INST_ID", "NAME", "VALUE"],
     "rows": [[1, "parse count (total)", 1200], [1, "execute count", 5000], [1, "user commits", 300],
              [1, "user rollbacks", 2]]},
    {"match": "gv$process", "columns": ["INST_ID", "COUNT"], "rows": [[1, 57]]},
    {"match": "gv$system_wait_class", "columns": ["INST_ID", "WAIT_CLASS", "TIME_WAITED_SEC_TOTAL", "CON_ID"],
     "rows": [[1, "User I/O", 12.5, 0], [1, "System I/O", 30.25, 0], [1, "Commit", 1.5, 0],
              [1, "Concurrency", None, 0]]},
    {"match": "dba_tablespace_usage_metrics",
     "columns": ["TABLESPACE", "TYPE", "BYTES", "MAX_BYTES", "FREE", "USED_PERCENT"],
     "rows": [["SYSTEM", "PERMANENT", 838860800, 34359721984, 33520861184, 2.44],
              ["TEMP", "TEMPORARY", 7340032, 22020096, 14680064, 0.33]]},
    {"match": "gv$parameter", "columns": ["INST_ID", "NAME", "VALUE"],
     "rows": [[1, "cpu_count", "4"], [1, "sga_max_size", "1610612736"], [1, "pga_aggregate_limit", "2147483648"]]},
    {"match": "gv$database", "columns": ["INST_ID", "PLATFORM_NAME", "VALUE"], "rows": [[1, "Linux x86 64-bit", 1]]},
    {"match": "gv$sqlstats", "columns": ["INST_ID", "SQL_ID", "ELAPSED", "SQL_TEXT"],
     "rows": [[1, "9babjv8yq8ru3", 12.3, "BEGIN DBMS_OUTPUT.GET_LINES(:LINES, :NUMLINES); END;"]]},
    {"match": "gv$con_sysmetric", "columns": ["INST_ID", "CACHE_HIT_TYPE", "VALUE"],
     "rows": [[1, "Buffer Cache Hit Ratio", 99.1], [1, "Cursor Cache Hit Ratio", 140.2]]},
]
# The series the note (section 3) lists for Oracle's default file, with these rows.
ORACLE_NAMES = {
    "oracledb_dbtype", "oracledb_sessions_value", "oracledb_resource_current_utilization",
    "oracledb_resource_limit_value", "oracledb_asm_diskgroup_total", "oracledb_asm_diskgroup_free",
    "oracledb_activity_parse_count_total", "oracledb_activity_execute_count", "oracledb_activity_user_commits",
    "oracledb_activity_user_rollbacks", "oracledb_process_count", "oracledb_wait_time_user_io",
    "oracledb_wait_time_system_io", "oracledb_wait_time_commit", "oracledb_wait_time_concurrency",
    "oracledb_tablespace_bytes", "oracledb_tablespace_max_bytes", "oracledb_tablespace_free",
    "oracledb_tablespace_used_percent", "oracledb_db_system_value", "oracledb_db_platform_value",
    "oracledb_top_sql_elapsed", "oracledb_cache_hit_ratio_value",
}
IAMSETH_ROWS = [
    {"match": "from v$session", "columns": ["STATUS", "TYPE", "VALUE"], "rows": [["ACTIVE", "USER", 5]]},
    {"match": "from v$resource_limit", "columns": ["RESOURCE_NAME", "CURRENT_UTILIZATION", "LIMIT_VALUE"],
     "rows": [["processes", 80, "300"]]},
    {"match": "from v$asm_diskgroup_stat", "columns": ["NAME", "TOTAL", "FREE"], "rows": [["DATA", 1000, 400]]},
    {"match": "from v$sysstat", "columns": ["NAME", "VALUE"],
     "rows": [["parse count (total)", 1200], ["execute count", 5000], ["user commits", 300],
              ["user rollbacks", None]]},
    {"match": "from v$process", "columns": ["COUNT"], "rows": [[57]]},
    {"match": "v$waitclassmetric", "columns": ["WAIT_CLASS", "VALUE"],
     "rows": [["User I/O", 0.012], ["Network", 0.001]]},
    {"match": "dba_tablespace_usage_metrics",
     "columns": ["TABLESPACE", "TYPE", "BYTES", "MAX_BYTES", "FREE_BYTES", "USED_PERCENT"],
     "rows": [["SYSTEM", "PERMANENT", 838860800, 34359721984, 33520861184, 2.44]]},
]
# iamseth's default file (note, section 3); user_rollbacks is NULL above: skipped by its rules.
IAMSETH_NAMES = {
    "oracledb_sessions_value", "oracledb_resource_current_utilization", "oracledb_resource_limit_value",
    "oracledb_asm_diskgroup_total", "oracledb_asm_diskgroup_free", "oracledb_activity_parse_count_total",
    "oracledb_activity_execute_count", "oracledb_activity_user_commits", "oracledb_process_count",
    "oracledb_wait_time_user_io", "oracledb_wait_time_network", "oracledb_tablespace_bytes",
    "oracledb_tablespace_max_bytes", "oracledb_tablespace_free_bytes", "oracledb_tablespace_used_percent",
}


@pytest.fixture
def fake_db(monkeypatch, tmp_path):
    fixture = tmp_path / "db.yaml"
    fixture.write_text(yaml.safe_dump({"queries": ORACLE_ROWS}))
    monkeypatch.setenv("ORA_MONITOR_PW", "Tiger-Tiger-42")
    install_fake_oracledb(monkeypatch, fixture, tmp_path / "connects.log")
    yield fixture
    sys.modules.pop("oracledb", None)


def _serve(fixture, rows: list[dict], dsn_rows: dict[str, list[dict]] | None = None) -> None:
    data: dict = {"queries": rows}
    if dsn_rows:
        data["databases"] = {dsn: {"queries": entries} for dsn, entries in dsn_rows.items()}
    fixture.write_text(yaml.safe_dump(data))


def _db(name: str, dsn: str, **extra) -> dict:
    return {"name": name, "dsn": dsn, "user": "monitor", "password_env": "ORA_MONITOR_PW", **extra}


def _collector(**settings) -> OracleCollector:
    settings = {"enabled": True, "databases": [_db("opcdb", OPCDB)], **settings}
    return OracleCollector(OracleCollectorSettings.model_validate(settings), Context(procfs=str(PROC)))


def _toml_series(samples: dict) -> dict[str, list[tuple[dict, float]]]:
    series: dict[str, list[tuple[dict, float]]] = {}
    for (name, labels), value in samples.items():
        if name.startswith("oracledb_"):
            series.setdefault(name, []).append((dict(labels), value))
    return series


def _success(samples: dict, query: str, database: str = "opcdb") -> float:
    return samples[("middleware_oracle_query_success", (("database", database), ("query", query)))]


# ---- the reader -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("flavour", ["oracle", "oracledb_exporter"])
@pytest.mark.parametrize("path", sorted(TOML.glob("*.toml")), ids=lambda p: p.name)
def test_every_published_file_loads(path, flavour):
    queries = load_metric_files([str(path)], flavour, defaults=False)
    assert queries and all(q.name.startswith("toml_") for q in queries)
    assert len({q.name for q in queries}) == len(queries)


def test_static_names_of_the_published_examples():
    def names(file: str) -> set[str]:
        return {n for q in load_metric_files([str(TOML / file)], "oracle", defaults=False) for n in q.static_names()}

    assert names("custom-metrics-example_metric-dual-example.toml") == {"oracledb_test_value_1",
                                                                        "oracledb_test_value_2"}
    assert names("custom-metrics-example_multi-metric-dual-example-labels.toml") == {
        "oracledb_context_no_label_value_1", "oracledb_context_no_label_value_2",
        "oracledb_context_with_labels_value_1", "oracledb_context_with_labels_value_2"}
    assert names("custom-metrics-example_metric-histogram-example.toml") == {
        "oracledb_test_histo_data_bucket", "oracledb_test_histo_data_sum", "oracledb_test_histo_data_count"}
    # the same context three times, each metricsdesc key its own metric and query
    custom = load_metric_files([str(TOML / "oracle-db-appdev-monitoring_custom-metrics.toml")], "oracle", False)
    assert [q.name for q in custom if q.context == "size_user_segments_top100"] == [
        "toml_size_user_segments_top100_table_bytes", "toml_size_user_segments_top100_table_partition_bytes",
        "toml_size_user_segments_top100_cluster_bytes"]
    top_sql = next(q for q in load_metric_files([], "oracle", True) if q.context == "top_sql")
    assert top_sql.timeout == 10.0 and top_sql.interval is None  # querytimeout = "10s", scrapeinterval commented


def test_go_durations_and_clean_names():
    assert parse_go_duration("10s") == 10.0 and parse_go_duration("300ms") == 0.3
    assert parse_go_duration("1h30m") == 5400.0 and parse_go_duration("0.5h") == 1800.0
    for bad in ("10", "10 s", "s", "1d"):
        with pytest.raises(ValueError):
            parse_go_duration(bad)
    assert clean_name("parse count (total)", "oracle") == "parse_count_total"
    assert clean_name("User I/O", "oracle") == "user_io"
    assert clean_name("a-b.c%", "oracledb_exporter") == "a_b_c_"


def test_a_later_file_replaces_a_metric_of_the_same_context_and_columns(tmp_path):
    site = tmp_path / "site.toml"
    site.write_text('[[metric]]\ncontext = "process"\nlabels = ["inst_id"]\nmetricsdesc = { count = "mine" }\n'
                    'request = "select inst_id, count(*) as count from gv$process where background is null '
                    'group by inst_id"\n')
    queries = load_metric_files([str(site)], "oracle", defaults=True)
    process = [q for q in queries if q.context == "process"]
    assert len(process) == 1 and "background is null" in process[0].sql


MALFORMED = [
    ("not toml", "[[metric]\ncontext = 'x'", "is not valid TOML"),
    ("no metric", "[other]\nx = 1\n", "no [[metric]] tables"),
    ("no request", '[[metric]]\ncontext = "a"\nmetricsdesc = { v = "h" }\n', "#1 (context 'a'): request"),
    ("no metricsdesc", '[[metric]]\ncontext = "a"\nrequest = "select 1 as v from dual"\n', "metricsdesc"),
    ("no context", '[[metric]]\nrequest = "select 1 as v from dual"\nmetricsdesc = { v = "h" }\n',
     "#1: context is missing"),
    ("histogram without buckets", '[[metric]]\ncontext = "ok"\nrequest = "select 1 as v from dual"\n'
     'metricsdesc = { v = "h" }\n\n[[metric]]\ncontext = "h"\nrequest = "select 1 as v, 1 as count from dual"\n'
     'metricsdesc = { v = "h" }\nmetricstype = { v = "histogram" }\n', "#2 (context 'h'): histogram v needs"),
    ("bad timeout", '[[metric]]\ncontext = "a"\nrequest = "select 1 as v from dual"\nmetricsdesc = { v = "h" }\n'
     'querytimeout = "10"\n', "querytimeout: '10' is not a Go duration"),
    ("bad label", '[[metric]]\ncontext = "a"\nrequest = "select 1 as v from dual"\nmetricsdesc = { v = "h" }\n'
     'labels = ["my-label"]\n', "label column 'my-label'"),
    ("bad context", '[[metric]]\ncontext = "a.b"\nrequest = "select 1 as v from dual"\nmetricsdesc = { v = "h" }\n',
     "context must consist"),
]


@pytest.mark.parametrize("text, reason", [(t, r) for _, t, r in MALFORMED], ids=[c for c, _, _ in MALFORMED])
def test_a_malformed_file_is_refused_naming_file_metric_and_reason(tmp_path, text, reason):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ValueError) as caught:
        load_toml(path)
    assert str(path) in str(caught.value) and reason in str(caught.value)


def test_an_unknown_metricstype_is_a_gauge_for_oracle_and_an_error_for_oracledb_exporter(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text('[[metric]]\ncontext = "a"\nrequest = "select 1 as v from dual"\nmetricsdesc = { v = "h" }\n'
                    'metricstype = { v = "summary" }\n')
    assert load_toml(path, "oracle")[0].columns[0].kind == "gauge"
    with pytest.raises(ValueError, match=r"#1 \(context 'a'\): metricstype 'summary'"):
        load_toml(path, "oracledb_exporter")


def test_check_config_fails_at_start_naming_the_file_and_metric(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[[metric]]\ncontext = "fine"\nrequest = "select 1 as v from dual"\nmetricsdesc = { v = "h" }\n'
                   '\n[[metric]]\ncontext = "broken"\nmetricsdesc = { v = "h" }\n')
    config = tmp_path / "check.yaml"
    config.write_text(yaml.safe_dump({"collectors": {"host": {"enabled": False}, "process": {"enabled": False},
                                                     "oracle": {"enabled": True, "custom_metrics": [str(bad)],
                                                                "databases": [_db("opcdb", OPCDB)]}}}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MIDDLEWARE_EXPORTER_")}
    env["ORA_MONITOR_PW"] = "Tiger-Tiger-42"
    result = subprocess.run([sys.executable, "-m", "exporter", "check-config", "--config", str(config)], cwd=REPO,
                            env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stderr
    assert f"custom metrics file {bad}: [[metric]] #2 (context 'broken'): request (the SQL) is missing" in \
        result.stderr


# ---- through the collector and the stand-in driver ---------------------------------------------------------------
def test_compatibility_names_oracle_gives_the_names_of_its_default_file(fake_db):
    samples, _ = collect(_collector(compatibility_names="oracle"))
    series = _toml_series(samples)
    assert set(series) == ORACLE_NAMES | {"oracledb_up"}
    assert series["oracledb_up"] == [({"database": "opcdb"}, 1.0)]
    # fieldtoappend: the wait class is the name; its column leaves the labels (Oracle's), NULL counts as 0
    assert series["oracledb_wait_time_user_io"] == [({"con_id": "0", "database": "opcdb", "inst_id": "1"}, 12.5)]
    assert series["oracledb_wait_time_concurrency"][0][1] == 0.0
    assert series["oracledb_activity_parse_count_total"] == [({"database": "opcdb", "inst_id": "1"}, 1200.0)]
    assert ({"database": "opcdb", "inst_id": "1", "resource_name": "sessions"}, -1.0) in \
        series["oracledb_resource_limit_value"]
    assert series["oracledb_dbtype"] == [({"database": "opcdb"}, 0.0)]
    assert _success(samples, "toml_sessions") == 1.0


def test_compatibility_names_oracledb_exporter_gives_the_names_of_its_default_file(fake_db):
    _serve(fake_db, IAMSETH_ROWS)
    samples, _ = collect(_collector(compatibility_names="oracledb_exporter"))
    series = _toml_series(samples)
    assert set(series) == IAMSETH_NAMES | {"oracledb_up"}
    # its fieldtoappend path drops the labels; a NULL value is skipped (user_rollbacks above)
    assert series["oracledb_wait_time_user_io"] == [({"database": "opcdb"}, 0.012)]
    assert "oracledb_activity_user_rollbacks" not in series


def test_custom_examples_histogram_counter_and_labels(fake_db, tmp_path):
    _serve(fake_db, [
        {"match": "as le_20", "columns": ["LABEL1", "LABEL2", "LE_20", "LE_40", "LE_60", "LE_80", "COUNT", "DATA"],
         "rows": [["firstlabel", "secondlabel", 3, 19, 31, 40, 45, "decimal:123.45"]]},
        {"match": "'first label' as label_1", "columns": ["VALUE_1", "VALUE_2", "LABEL_1", "LABEL_2"],
         "rows": [[1, 2, "First label", "Second label"]]},
        {"match": "select 1 as value_1, 2 as value_2 from dual", "columns": ["VALUE_1", "VALUE_2"], "rows": [[1, 2]]},
    ])
    files = [str(TOML / f) for f in ("custom-metrics-example_metric-histogram-example.toml",
                                     "custom-metrics-example_multi-metric-dual-example-labels.toml")]
    samples, _ = collect(_collector(custom_metrics=files))
    series = _toml_series(samples)
    labels = {"database": "opcdb", "label1": "firstlabel", "label2": "secondlabel"}
    buckets = {s[0]["le"]: s[1] for s in series["oracledb_test_histo_data_bucket"]}
    assert buckets == {"20": 3.0, "40": 19.0, "60": 31.0, "80": 40.0, "+Inf": 45.0}  # the fixture's own comment
    assert series["oracledb_test_histo_data_sum"] == [(labels, 123.45)]
    assert series["oracledb_test_histo_data_count"] == [(labels, 45.0)]
    assert series["oracledb_context_no_label_value_2"] == [({"database": "opcdb"}, 2.0)]
    assert series["oracledb_context_with_labels_value_1"] == [
        ({"database": "opcdb", "label_1": "First label", "label_2": "Second label"}, 1.0)]
    assert "oracledb_up" not in series  # only with compatibility_names


def test_a_counter_keeps_its_name(fake_db):
    _serve(fake_db, [{"match": "'first label' as label_1", "columns": ["VALUE_1", "VALUE_2", "LABEL_1", "LABEL_2"],
                      "rows": [[1, 2, "First label", "Second label"]]}])
    collector = _collector(custom_metrics=[str(TOML / "custom-metrics-example_metric-dual-example.toml")])
    samples, batch = collect(collector)
    assert samples[("oracledb_test_value_1", (("database", "opcdb"),))] == 1.0
    family = next(f for f in batch.families() if f.name == "oracledb_test_value_1")
    assert family.type == "gauge"  # a counter not ending in _total keeps the exporters' exact name as a gauge


def test_ignorezeroresult_and_a_zero_result(fake_db):
    _serve(fake_db, [{"match": "from gv$sql", "columns": ["INST_ID", "P95_TIME_USECS", "P99_TIME_USECS"],
                      "rows": []},
                     {"match": "user_segments", "columns": ["SEGMENT_NAME", "TABLE_BYTES"], "rows": []}])
    collector = _collector(custom_metrics=[str(TOML / "oracle-db-appdev-monitoring_custom-metrics.toml")])
    samples, batch = collect(collector)
    assert _success(samples, "toml_slow_queries") == 0.0  # no ignorezeroresult: zero series is an error
    assert "zero result" in batch.errors["opcdb:toml_slow_queries"]
    assert _success(samples, "toml_size_user_segments_top100_table_bytes") == 1.0  # ignorezeroresult = true
    assert samples[("middleware_oracle_collect_success", (("database", "opcdb"),))] == 1.0


def test_databases_limits_a_metric_and_new_fieldtoappend_names_appear(fake_db, tmp_path):
    site = tmp_path / "site.toml"  # invented
    site.write_text(
        '[[metric]]\ncontext = "everywhere"\nrequest = "select 1 as v from dual where 1 = 1"\n'
        'metricsdesc = { v = "h" }\n\n'
        '[[metric]]\ncontext = "erp_only"\nrequest = "select 2 as v from dual where 2 = 2"\n'
        'metricsdesc = { v = "h" }\ndatabases = ["erp"]\n\n'
        '[[metric]]\ncontext = "nowhere"\nrequest = "select 3 as v from dual where 3 = 3"\n'
        'metricsdesc = { v = "h" }\ndatabases = []\n\n'
        '[[metric]]\ncontext = "ev"\nlabels = ["inst_id", "event"]\nfieldtoappend = "event"\n'
        'request = "select inst_id, event, waits from my_events"\nmetricsdesc = { waits = "h" }\n')
    rows = [{"match": "where 1 = 1", "columns": ["V"], "rows": [[1]]},
            {"match": "where 2 = 2", "columns": ["V"], "rows": [[2]]},
            {"match": "where 3 = 3", "columns": ["V"], "rows": [[3]]},
            {"match": "my_events", "columns": ["INST_ID", "EVENT", "WAITS"], "rows": [[1, "db file.read", 7]]}]
    _serve(fake_db, rows)
    collector = _collector(custom_metrics=[str(site)], databases=[_db("opcdb", OPCDB), _db("erp", ERP)])
    samples, _ = collect(collector)
    series = _toml_series(samples)
    assert {s[0]["database"] for s in series["oracledb_everywhere_v"]} == {"opcdb", "erp"}
    assert series["oracledb_erp_only_v"] == [({"database": "erp"}, 2.0)]
    assert "oracledb_nowhere_v" not in series
    assert {s[0]["database"] for s in series["oracledb_ev_db_file_read"]} == {"opcdb", "erp"}
    # a wait event seen for the first time in a later collection is a new series name, declared as it comes
    rows[3]["rows"].append([1, "log file sync", 3])
    _serve(fake_db, rows)
    samples, _ = collect(collector)
    assert samples[("oracledb_ev_log_file_sync", (("database", "erp"), ("inst_id", "1")))] == 3.0


def test_two_metrics_giving_one_series_fail_that_query_not_the_collector(fake_db, tmp_path):
    site = tmp_path / "site.toml"  # invented: "a" + fieldtoappend value "b_c" and "a_b" + column "c"
    site.write_text('[[metric]]\ncontext = "a"\nfieldtoappend = "n"\nrequest = "select n, v from t1"\n'
                    'metricsdesc = { v = "h" }\n\n[[metric]]\ncontext = "a_b"\nrequest = "select c from t2"\n'
                    'metricsdesc = { c = "h" }\n')
    _serve(fake_db, [{"match": "from t1", "columns": ["N", "V"], "rows": [["b c", 1]]},
                     {"match": "from t2", "columns": ["C"], "rows": [[2]]}])
    samples, batch = collect(_collector(custom_metrics=[str(site)]))
    assert samples[("oracledb_a_b_c", (("database", "opcdb"),))] == 2.0
    assert _success(samples, "toml_a") == 0.0
    assert "already produced by query toml_a_b" in batch.errors["opcdb:toml_a"]


def _builtin_series(fake_db) -> int:
    """The series of one run without custom metrics (the built-in queries against the fixture)."""
    _, batch = collect(_collector())
    return batch.series


def test_a_custom_metric_over_max_series_is_refused_alone_naming_it(fake_db, tmp_path):
    """Issue 38, item 7: one custom metric with more series than max_series failed the whole collector, the
    built-in series included; now that metric alone is refused (success 0, its error names it and max_series)."""
    site = tmp_path / "site.toml"  # invented
    site.write_text('[[metric]]\ncontext = "huge"\nlabels = ["n"]\nrequest = "select n, v from huge_table"\n'
                    'metricsdesc = { v = "h" }\n\n[[metric]]\ncontext = "small"\n'
                    'request = "select v from small_table"\nmetricsdesc = { v = "h" }\n')
    builtin = _builtin_series(fake_db)
    limit = builtin + 50
    _serve(fake_db, ORACLE_ROWS + [
        {"match": "from huge_table", "columns": ["N", "V"], "rows": [[str(i), i] for i in range(limit + 10)]},
        {"match": "from small_table", "columns": ["V"], "rows": [[7]]}])
    samples, batch = collect(_collector(custom_metrics=[str(site)], max_series=limit))
    assert samples[("middleware_oracle_up", (("database", "opcdb"),))] == 1.0
    assert samples[("middleware_oracle_collect_success", (("database", "opcdb"),))] == 1.0
    assert samples[("oracledb_small_v", (("database", "opcdb"),))] == 7.0
    assert not [key for key in samples if key[0] == "oracledb_huge_v"]
    assert _success(samples, "toml_huge") == 0.0 and _success(samples, "toml_small") == 1.0
    error = batch.errors["opcdb:toml_huge"]
    assert "context 'huge'" in error and f"max_series ({limit})" in error, error
    assert batch.reports.targets["opcdb"].sources["toml_huge"].ok is False
    assert batch.series <= limit


def test_a_custom_metric_that_does_not_fit_beside_the_built_in_series_is_refused_alone(fake_db, tmp_path):
    """Under max_series alone but not with the built-in series of this run (nor of a second database): the custom
    metric is refused, never the built-in series, which are added first."""
    site = tmp_path / "site.toml"  # invented
    site.write_text('[[metric]]\ncontext = "wide"\nlabels = ["n"]\nrequest = "select n, v from wide_table"\n'
                    'metricsdesc = { v = "h" }\n')
    builtin = _builtin_series(fake_db)
    limit = builtin + 20
    _serve(fake_db, ORACLE_ROWS + [
        {"match": "from wide_table", "columns": ["N", "V"], "rows": [[str(i), i] for i in range(limit - 5)]}])
    samples, batch = collect(_collector(custom_metrics=[str(site)], max_series=limit))
    assert samples[("middleware_oracle_collect_success", (("database", "opcdb"),))] == 1.0
    assert not [key for key in samples if key[0] == "oracledb_wide_v"]
    assert _success(samples, "toml_wide") == 0.0
    assert "max_series" in batch.errors["opcdb:toml_wide"] and "context 'wide'" in batch.errors["opcdb:toml_wide"]
    assert batch.series <= limit


# ---- wallets -----------------------------------------------------------------------------------------------------
def test_two_databases_with_two_wallets_get_their_own_connect_arguments(fake_db, tmp_path):
    _serve(fake_db, [{"match": "'CON_ID'", "columns": ["DBTYPE"], "rows": [["0"]]}])
    secret = tmp_path / "wallet-pw"
    secret.write_text("Wallet-Secret-77\n")
    databases = [_db("opcdb", OPCDB, config_dir="/etc/ora/opc", wallet_location="/etc/ora/opc/wallet",
                     wallet_password_file=str(secret)),
                 _db("erp", ERP, wallet_location="/etc/ora/erp/wallet")]
    fake = sys.modules["oracledb"]
    fake.CONNECTS.clear()
    collect(_collector(databases=databases))
    seen = {c["dsn"]: {k: v for k, v in c.items() if k in ("config_dir", "wallet_location", "wallet_password")}
            for c in fake.CONNECTS}
    assert seen == {OPCDB: {"config_dir": "/etc/ora/opc", "wallet_location": "/etc/ora/opc/wallet",
                            "wallet_password": "Wallet-Secret-77"},
                    ERP: {"wallet_location": "/etc/ora/erp/wallet"}}


def test_wallet_settings_are_refused_with_thick_mode():
    with pytest.raises(ValueError, match="wallet_location: per-connection wallet settings need thin mode"):
        _collector(databases=[_db("opcdb", OPCDB, thick_mode=True, wallet_location="/w")])


def test_wallet_settings_with_a_driver_without_thin_mode_fail_that_database_only(tmp_path):
    from exporter.systems.oracle.client import DatabaseUnavailable, OracleClient, OracleSettings

    class NoThinDriver:  # cx_Oracle-like: no ConnectParams
        @staticmethod
        def connect(**kwargs):
            raise AssertionError("must not connect without the wallet")

    client = OracleClient("db", OracleSettings(dsn="db:1521/x", user="u", password="p", wallet_location="/w"),
                          driver=NoThinDriver)
    with pytest.raises(DatabaseUnavailable, match="wallet_location need python-oracledb in thin mode"):
        with client.session():
            pass


# ---- a real exporter process ---------------------------------------------------------------------------------------
@pytest.mark.integration
def test_exporter_process_with_oracles_default_metrics_file_as_custom_metrics(start_exporter, tmp_path):
    fixture = tmp_path / "db.yaml"
    shutil.copy(TOML / "oracle-db-appdev-monitoring_default-metrics.toml", tmp_path / "default-metrics.toml")
    fixture.write_text(yaml.safe_dump({"queries": ORACLE_ROWS}))
    config = {"paths": {"procfs": str(PROC)},
              "collectors": {"host": {"enabled": False}, "process": {"enabled": False},
                             "filesystem": {"enabled": False},
                             "oracle": {"enabled": True, "custom_metrics": [str(tmp_path / "default-metrics.toml")],
                                        "databases": [_db("opcdb", OPCDB, labels={"env": "prod"})]}}}
    env = {"PYTHONPATH": str(FAKES), "FAKE_ORACLEDB_FIXTURE": str(fixture), "ORA_MONITOR_PW": "Tiger-Tiger-42"}
    exporter = start_exporter(config=yaml.safe_dump(config), env=env)
    status, _, body = exporter.get("/metrics")
    assert status == 200
    text = body.decode()
    names = {line.split("{")[0].split(" ")[0] for line in text.splitlines()
             if line.startswith("oracledb_")}
    assert names == ORACLE_NAMES  # oracledb_up only with compatibility_names
    # the database's static labels reach the TOML series too
    assert 'oracledb_activity_execute_count{database="opcdb",env="prod",inst_id="1"} 5000.0' in text
    assert 'oracledb_wait_time_user_io{con_id="0",database="opcdb",env="prod",inst_id="1"} 12.5' in text
    assert 'middleware_oracle_query_success{database="opcdb",env="prod",query="toml_top_sql"} 1.0' in text
    result = subprocess.run([require_binary("promtool"), "check", "metrics"], input=body, capture_output=True,
                            timeout=60)
    # the exposition parses (exit 1 otherwise); the only lint findings (exit 3) are the naming conventions the
    # exporters' own names break (oracledb_process_count as a gauge, ...), kept on purpose for their dashboards
    findings = [line for line in result.stderr.decode().splitlines() if line.strip()]
    assert result.returncode in (0, 3), result.stderr.decode()
    assert all(line.startswith("oracledb_") and "should not have" in line for line in findings), findings
