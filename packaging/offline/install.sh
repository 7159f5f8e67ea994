#!/bin/sh
# Installs middleware-exporter from this folder, with no package index: a virtual environment in PREFIX
# (default /opt/middleware-exporter) holding exactly the wheels of wheelhouse/, each checked against the
# sha256 in requirements.lock. Built for Python @PYVER@ (the wheels are for that minor version):
#
#   ./install.sh [PREFIX]                    as root for /opt; PYTHON=/usr/bin/python@PYVER@ to pick the interpreter
#
# An existing PREFIX is replaced (upgrade: stop the service first, then start it again).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
prefix=${1:-/opt/middleware-exporter}
python=${PYTHON:-python@PYVER@}

have=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])') || {
  echo "install.sh: no $python here: install Python @PYVER@ (and its venv module), or set PYTHON=" >&2; exit 1; }
if [ "$have" != "@PYVER@" ]; then
  echo "install.sh: $python is Python $have; this wheelhouse is for @PYVER@ (rebuild it with --python python$have)" >&2
  exit 1
fi
"$python" -m venv --clear "$prefix"
"$prefix/bin/python" -m pip install --quiet --disable-pip-version-check --no-index --find-links "$here/wheelhouse" \
  --require-hashes -r "$here/requirements.lock"
"$prefix/bin/middleware-exporter" --version
