#!/usr/bin/env bash
# Create .venv if missing, install kernelstudio into it, open JupyterLab on the tour notebook.
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e .
args=()
[ "$(id -u)" = "0" ] && args+=(--allow-root)
exec .venv/bin/jupyter lab notebooks/00_tour.ipynb "${args[@]}" "$@"
