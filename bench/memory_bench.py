#!/usr/bin/env python3
"""Memory benchmark (issue 30): the exporter's resident memory at rest against node_exporter's, in one run.

Starts the real exporter in a fresh process (default configuration; then with TLS and basic auth from a web
configuration generated in a temporary directory), waits until it is ready, scrapes it a few times, lets it settle
and reads VmRSS / VmHWM from /proc/<pid>/status.  Debian's node_exporter is started and read the same way as the
reference.  To keep the figure explained it also prints the import cost of each top-level dependency, each
measured in a fresh interpreter (VmRSS just before and just after the import), and the modules a default start
loaded that it should not have.

Exits 1 when a figure is over its goal (default start at most 48 MB, TLS + basic auth at most 52 MB).

    python bench/memory_bench.py [--scrapes 5] [--settle 3] [--node-exporter PATH] [--json FILE]
"""

from __future__ import annotations

import argparse
import base64
import compileall
import http.client
import json
import os
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import free_port, node_exporter_binary, stop_process

REPO = Path(__file__).resolve().parent.parent
GOALS_MB = {"default": 48.0, "tls+basic_auth": 52.0}
# top-level dependencies, each imported alone in a fresh interpreter; "stack floor" is the design's named stack
IMPORTS = [
    ("prometheus_client", "import prometheus_client"),
    ("pydantic", "import pydantic"),
    ("fastapi", "import fastapi"),
    ("uvicorn", "import uvicorn"),
    ("yaml", "import yaml"),
    ("jinja2", "import jinja2"),
    ("cryptography.x509", "from cryptography import x509"),
    ("bcrypt", "import bcrypt"),
    ("psutil", "import psutil"),
    ("stack floor (prometheus_client+pydantic+fastapi+uvicorn)",
     "import prometheus_client, pydantic, fastapi, uvicorn"),
    ("exporter + the stack (everything `run` imports)",
     "import exporter.cli, exporter.web.server, exporter.web.webconfig, exporter.web.limits, uvicorn"),
]
# modules a default start has no use for; listed when they are loaded anyway
NOT_AT_DEFAULT_START = ("jinja2", "cryptography", "bcrypt", "psutil", "uvloop", "httptools", "websockets",
                        "email_validator", "exporter.advisor", "exporter.web.statuspage")
PROBE = r"""
import sys
def rss():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
before = rss()
exec(sys.argv[1])
print(before, rss())
"""
LOADED = r"""
import json, sys
from exporter import cli
from exporter.core.scheduler import Scheduler
from exporter.web.gate import WebGate
from exporter.web.server import create_app
import uvicorn
config = cli.load(None)
scheduler = Scheduler(cli.build_collectors(config), labels=config.labels)
app = WebGate(create_app(scheduler, {c.name: c.description for c in cli.COLLECTORS}, settings=config),
              live=None, open_paths=frozenset(), max_requests=4)
scheduler.run_once()
scheduler.render()
print(json.dumps(sorted(sys.modules)))
"""


def status_kb(pid: int) -> dict[str, int]:
    values = {}
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
                values[key] = int(rest.split()[0])
    return values


def import_cost(statement: str) -> float:
    """MB of VmRSS that ``statement`` adds to a fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", PROBE, statement], cwd=REPO, capture_output=True, text=True,
                         check=True).stdout.split()
    return (int(out[1]) - int(out[0])) / 1024


def interpreter_rss() -> float:
    out = subprocess.run([sys.executable, "-c", PROBE, "pass"], cwd=REPO, capture_output=True, text=True,
                         check=True).stdout.split()
    return int(out[1]) / 1024


def make_web_config(root: Path) -> tuple[Path, str, str]:
    """A self-signed certificate (openssl) and one bcrypt user; returns (web.yml, user, password)."""
    import bcrypt  # the bench's process, not the exporter's

    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", "tls.key", "-out", "tls.crt", "-days", "2", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"], cwd=root, check=True,
                   capture_output=True)
    user, password = "prometheus", "bench-password"
    digest = bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=4)).decode()
    web = root / "web.yml"
    web.write_text(f"tls_server_config:\n  cert_file: {root / 'tls.crt'}\n  key_file: {root / 'tls.key'}\n"
                   f"basic_auth_users:\n  {user}: '{digest}'\n")
    return web, user, password


class Server:
    def __init__(self, name: str, argv: list[str], port: int, tls: bool = False,
                 auth: tuple[str, str] | None = None) -> None:
        self.name, self.port, self.tls = name, port, tls
        self.headers = {"Accept-Encoding": "gzip"}
        if auth:
            self.headers["Authorization"] = "Basic " + base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
        self.log = tempfile.TemporaryFile()
        env = {k: v for k, v in os.environ.items() if not k.startswith("MIDDLEWARE_EXPORTER_")}
        self.proc = subprocess.Popen(argv, cwd=REPO, stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=subprocess.STDOUT, env=env, start_new_session=True)

    def get(self, path: str) -> int:
        if self.tls:
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
            conn: http.client.HTTPConnection = http.client.HTTPSConnection("127.0.0.1", self.port, timeout=10,
                                                                            context=context)
        else:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request("GET", path, headers=self.headers)
            response = conn.getresponse()
            response.read()
            return response.status
        finally:
            conn.close()

    def ready(self, path: str, deadline_s: float = 60.0) -> None:
        deadline = time.monotonic() + deadline_s
        while True:
            if self.proc.poll() is not None:
                self.log.seek(0)
                raise RuntimeError(f"{self.name} exited: {self.log.read()[-2000:].decode(errors='replace')}")
            try:
                if self.get(path) == 200:
                    return
            except (OSError, http.client.HTTPException):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name}: {path} not 200 within {deadline_s:g}s")
            time.sleep(0.2)

    def measure(self, ready_path: str, scrapes: int, settle: float) -> dict[str, float]:
        try:
            self.ready(ready_path)
            for _ in range(scrapes):
                if self.get("/metrics") != 200:
                    raise RuntimeError(f"{self.name}: /metrics not 200")
            time.sleep(settle)
            return {k: v / 1024 for k, v in status_kb(self.proc.pid).items()}
        finally:
            stop_process(self.proc)
            self.log.close()


def loaded_extras() -> list[str]:
    out = subprocess.run([sys.executable, "-c", LOADED], cwd=REPO, capture_output=True, text=True, check=True)
    modules = json.loads(out.stdout)
    return sorted(bad for bad in NOT_AT_DEFAULT_START if any(m == bad or m.startswith(bad + ".") for m in modules))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scrapes", type=int, default=5)
    parser.add_argument("--settle", type=float, default=3.0, help="seconds at rest after the scrapes")
    parser.add_argument("--node-exporter", metavar="PATH")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    node = node_exporter_binary(args.node_exporter)
    if not node:
        print("node_exporter not found (apt-get install prometheus-node-exporter, or --node-exporter)", file=sys.stderr)
        return 2

    # An installed package is byte-compiled (pip writes the .pyc files); a source tree run with
    # PYTHONDONTWRITEBYTECODE compiles every changed module again at each start, and the compiler's garbage stays
    # in the heap (about 1 MB here).  Measure what an installation runs.
    compileall.compile_dir(str(REPO / "exporter"), quiet=1)
    print(f"python {sys.version.split()[0]}; interpreter alone: {interpreter_rss():.1f} MB VmRSS; exporter/ "
          "byte-compiled first, as pip install does")
    print("import cost (fresh interpreter each, VmRSS after - before):")
    costs = {}
    for name, statement in IMPORTS:
        costs[name] = import_cost(statement)
        print(f"  {name:<58} +{costs[name]:5.1f} MB")
    extras = loaded_extras()
    print("loaded by building the default app and one collection, though a default start has no use for them: "
          + (", ".join(extras) if extras else "none"))

    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="memory-bench-") as tmp:
        web, user, password = make_web_config(Path(tmp))
        runs = [
            ("default", [], False, None),
            ("tls+basic_auth", ["--web.config.file", str(web)], True, (user, password)),
        ]
        for name, extra, tls, auth in runs:
            port = free_port()
            argv_ = [sys.executable, "-m", "exporter", "run", "--web.listen-address", f"127.0.0.1:{port}", *extra]
            results[name] = Server(name, argv_, port, tls, auth).measure("/readyz", args.scrapes, args.settle)
        port = free_port()
        results["node_exporter"] = Server("node_exporter", [node, f"--web.listen-address=127.0.0.1:{port}"],
                                          port).measure("/metrics", args.scrapes, args.settle)

    reference = results["node_exporter"]["VmRSS"]
    print(f"\n{'process':<16} {'VmRSS MB':>9} {'VmHWM MB':>9} {'anon MB':>8} {'file MB':>8} {'x node':>7}  goal")
    failed = []
    for name, r in results.items():
        goal = GOALS_MB.get(name)
        verdict = "" if goal is None else (f"<= {goal:g} MB " + ("met" if r["VmRSS"] <= goal else "MISSED"))
        if goal is not None and r["VmRSS"] > goal:
            failed.append(name)
        print(f"{name:<16} {r['VmRSS']:9.1f} {r['VmHWM']:9.1f} {r.get('RssAnon', 0):8.1f} {r.get('RssFile', 0):8.1f} "
              f"{r['VmRSS'] / reference:6.2f}x  {verdict}")
    floor = costs["stack floor (prometheus_client+pydantic+fastapi+uvicorn)"] + interpreter_rss()
    print(f"stack floor (interpreter + prometheus_client, pydantic, fastapi, uvicorn): {floor:.1f} MB; default start "
          f"is {results['default']['VmRSS'] - floor:+.1f} MB over it")
    if args.json:
        Path(args.json).write_text(json.dumps({"import_cost_mb": costs, "results_mb": results,
                                               "unneeded_modules": extras, "goals_mb": GOALS_MB}, indent=2))
    if failed:
        print("memory_bench: over the goal: " + ", ".join(failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
