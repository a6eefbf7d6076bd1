#!/usr/bin/env bash
# Install the test extras (and the system tools the tests need, when root: graphviz, g++, and chromium for
# the real-browser tests), then run every test tier. `pip install` also builds the JupyterLab extension.
# With no arguments the suite runs in two steps: every tier but the browser tests on all cores (pytest-xdist;
# $KS_TEST_WORKERS sets the count), then the browser tests alone, so their timing never competes with g++.
# Arguments go to one plain pytest run: `./test.sh -m "not twin"` skips the tests that compile with g++,
# `./test.sh tests/ui` runs the browser tests.
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
  missing=()
  command -v dot >/dev/null || missing+=(graphviz)
  command -v g++ >/dev/null || missing+=(g++)
  [ -x /usr/bin/chromium ] || missing+=(chromium)
  if [ ${#missing[@]} -gt 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
  fi
fi
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".[test]"
.venv/bin/ruff check kernelstudio tests bench
if [ $# -gt 0 ]; then
  exec .venv/bin/python -m pytest -q "$@"
fi
rc=0
.venv/bin/python -m pytest -q -n "${KS_TEST_WORKERS:-auto}" --dist loadgroup --ignore=tests/ui || rc=$?
.venv/bin/python -m pytest -q tests/ui || rc=$?
exit "$rc"
