"""Memory footprint (issue 30, docs/footprint.md): what a default start must not import.

The resident-memory figures themselves are measured by bench/memory_bench.py against node_exporter; this test
guards the laziness that keeps them down without measuring anything: a fresh interpreter builds the default app
exactly as ``run`` does (configuration, collectors, scheduler, one collection, the HTTP app behind its gate) and
lists the modules it loaded.  A web configuration with TLS and basic auth does not import cryptography either
(bcrypt comes with the first login)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from typing import Any

import pytest

from ..support import REPO, require_binary

# jinja2: only /advice renders HTML with it; cryptography: only a client_allowed_sans check or the healthcheck's
# TLS probe; bcrypt: only basic_auth_users; psutil: only the psutil back-end; uvicorn's optional speed-ups are
# not used (http=h11, ws=none); the advisor and the status page: on their first request; yaml: only with a
# configuration file, a MIDDLEWARE_EXPORTER_ variable or a web configuration; prometheus_client: only for its own
# objects (families(): tests, /advice, collect-once) and what the fast writer leaves to it; the web configuration's
# module: only with --web.config.file; the inventory (core/inventory.py): only with an inventory file
NEVER_AT_DEFAULT_START = ("jinja2", "cryptography", "bcrypt", "psutil", "uvloop", "httptools", "websockets",
                          "email_validator", "exporter.advisor", "exporter.web.statuspage", "yaml", "prometheus_client",
                          "exporter.web.webconfig", "exporter.core.inventory")
# collectors that are off by default and not configured: nothing of theirs is imported at start, not even their
# settings (exporter/registry.py, Dormant); the collector modules, parsers, checks and clients come with the
# collector's first use, the settings with a configuration that gives the section
DISABLED_COLLECTOR_MODULES = tuple(f"exporter.systems.{system}.{module}" for system, modules in (
    ("oracle", ("settings", "client", "collector", "checks", "heapwarnings", "alertlog", "parse", "querymetrics",
                "tomlmetrics")),
    ("hpom", ("settings", "collector", "checks", "parse")),
    ("ibmmq", ("collector", "model", "mqscmap", "rest", "pcf", "runmqsc")),
    ("vhi", ("settings", "collector", "parse")),
    ("domino", ("settings", "collector", "parse", "locales")),
    ("certificates", ("settings", "collector", "parse"))) for module in modules)

BUILD_APP = textwrap.dedent("""
    import json, sys
    from exporter import cli
    from exporter.core.scheduler import Scheduler
    from exporter.web.gate import WebGate
    from exporter.web.server import create_app
    import uvicorn  # _serve imports it before building the app

    live = None
    if len(sys.argv) > 1:  # as _serve: the web configuration's module only with one
        from exporter.web.webconfig import LiveWebConfig, load_web_config
        live = LiveWebConfig(load_web_config(sys.argv[1]))
    config = cli.load(None)
    scheduler = Scheduler(cli.build_collectors(config), labels=config.labels)
    app = WebGate(create_app(scheduler, {c.name: c.description for c in cli.COLLECTORS}, settings=config),
                  live=live, open_paths=frozenset(), max_requests=4)
    scheduler.run_once()
    scheduler.render()
    print(json.dumps(sorted(sys.modules)))
""")


def _loaded(*args: str) -> set[str]:
    env_clean = {k: v for k, v in os.environ.items() if not k.startswith("MIDDLEWARE_EXPORTER_")}
    result = subprocess.run([sys.executable, "-c", BUILD_APP, *args], cwd=REPO, capture_output=True, text=True,
                            timeout=120, env=env_clean)
    assert result.returncode == 0, result.stderr
    return set(json.loads(result.stdout))


def _present(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return [name for name in names if any(m == name or m.startswith(name + ".") for m in modules)]


def test_default_start_imports_nothing_it_does_not_use():
    modules = _loaded()
    assert "fastapi" in modules and "exporter.systems.host.collector" in modules  # the app really was built
    assert _present(modules, NEVER_AT_DEFAULT_START) == []


def test_default_start_does_not_import_the_collectors_that_are_off():
    """Before: their settings modules were imported to validate the configuration (IBM MQ's whole collector, where
    its settings live), about 2.8 MB of the 8 over the stack floor."""
    modules = _loaded()
    assert "exporter.systems.host.settings" in modules and "exporter.systems.oracle" in modules  # names only
    assert _present(modules, DISABLED_COLLECTOR_MODULES) == []


def test_registry_entries_match_their_collectors():
    """The registry names each collector, its description and its settings class without importing it; loading
    the entry gives the class that says the same (tools/docs.py documents the collectors' own attributes)."""
    from exporter import registry

    for entry in registry.COLLECTORS:
        cls = entry.load()
        assert (cls.name, cls.description, cls.Settings) == (entry.name, entry.description, entry.Settings)
        field = registry.CollectorsSettings.model_fields[entry.name]
        assert field.description == entry.description
        assert field.annotation is (Any if entry.dormant else entry.Settings)


def test_an_unconfigured_collector_that_is_off_is_dormant_and_a_configured_one_is_validated():
    """What the configuration does not mention of a collector that is off is a Dormant stand-in (its settings class
    not imported); given, the section is validated by that class, errors at their place; reading a setting of a
    dormant one (the advisor, check-config's listing) gives the defaults."""
    from exporter import registry
    from exporter.core.config import ConfigError, masked_dump

    config = registry.load(None, environ={})
    assert isinstance(config.collectors.oracle, registry.Dormant) and config.collectors.oracle.enabled is False
    assert config.collectors.hpom.server_version is None  # the default, read through the stand-in
    assert masked_dump(config)["collectors"]["vhi"]["sessions_per_cpu_limit"] == 250
    enabled = registry.load(None, environ={"MIDDLEWARE_EXPORTER_COLLECTORS__VHI__ENABLED": "true"})
    assert type(enabled.collectors.vhi).__name__ == "VhiSettings" and enabled.collectors.vhi.enabled
    with pytest.raises(ConfigError, match=r"collectors\.vhi\.sessions_per_cpu_limit: .*integer"):
        registry.load(None, environ={"MIDDLEWARE_EXPORTER_COLLECTORS__VHI__SESSIONS_PER_CPU_LIMIT": "many"})
    with pytest.raises(ConfigError, match=r"collectors\.domino\.no_such_key: "):
        registry.load(None, environ={"MIDDLEWARE_EXPORTER_COLLECTORS__DOMINO__NO_SUCH_KEY": "1"})


def test_hpom_default_count_pattern_is_valid_without_being_checked_at_start():
    """HpomSettings skips the parser for its built-in queue_count_pattern (so that a default start need not import
    it); the built-in pattern is one the parser accepts."""
    from exporter.systems.hpom.parse import compile_count_pattern
    from exporter.systems.hpom.settings import DEFAULT_COUNT_PATTERN

    compile_count_pattern(DEFAULT_COUNT_PATTERN)


def test_tls_and_basic_auth_start_does_not_import_cryptography(tmp_path):
    subprocess.run([require_binary("openssl"), "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                    "-nodes", "-keyout", "tls.key", "-out", "tls.crt", "-days", "2", "-subj", "/CN=localhost"],
                   cwd=tmp_path, check=True, capture_output=True)
    # an invented bcrypt hash of cost 4 (format only: nobody logs in here)
    digest = "$2b$04$" + "a" * 53
    web = tmp_path / "web.yml"
    web.write_text(f"tls_server_config:\n  cert_file: {tmp_path / 'tls.crt'}\n  key_file: {tmp_path / 'tls.key'}\n"
                   f"basic_auth_users:\n  prometheus: '{digest}'\n")
    modules = _loaded(str(web))
    assert "ssl" in modules
    assert _present(modules, ("cryptography", "jinja2", "exporter.advisor", "exporter.web.statuspage")) == []


def test_certificate_validity_reads_the_dates_cryptography_reads(tmp_path):
    """webconfig.certificate_validity replaces cryptography.x509 at start: same dates for UTCTime (before 2050)
    and GeneralizedTime (2050 on) validity, RSA and EC keys; a PEM without a certificate is a ValueError."""
    import pytest
    from cryptography import x509

    from exporter.web.webconfig import certificate_validity

    openssl = require_binary("openssl")
    for name, key, days in (("rsa", ["rsa:2048"], "1"), ("ec", ["ec", "-pkeyopt", "ec_paramgen_curve:P-256"], "30000")):
        subprocess.run([openssl, "req", "-x509", "-newkey", *key, "-nodes", "-keyout", f"{name}.key", "-out",
                        f"{name}.crt", "-days", days, "-subj", f"/CN={name}"], cwd=tmp_path, check=True,
                       capture_output=True)
        pem = (tmp_path / f"{name}.crt").read_bytes()
        leaf = x509.load_pem_x509_certificate(pem)
        assert certificate_validity(pem + pem) == (leaf.not_valid_before_utc, leaf.not_valid_after_utc)
    with pytest.raises(ValueError):
        certificate_validity(b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
    with pytest.raises(ValueError):
        certificate_validity((tmp_path / "ec.key").read_bytes())
