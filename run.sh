#!/usr/bin/env bash
# Create .venv if missing, install kernelstudio into it, open JupyterLab on the tour notebook.
# Arguments go to JupyterLab: `./run.sh --no-browser --ip=0.0.0.0 --port=8888`.
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "run.sh: kernelstudio needs Python >= 3.11; $PY is $("$PY" -V 2>&1 || echo missing)." >&2
  echo "        Install one and run PYTHON=python3.11 ./run.sh" >&2
  exit 1
fi
if ! command -v g++ >/dev/null; then
  echo "run.sh: g++ is not installed: the Studio works, but running generated Ascend C on the CPU twin" >&2
  echo "        (the tour's last cells, ks.twin.run) needs it: apt-get install g++" >&2
fi
if [ ! -x .venv/bin/python ]; then
  echo "run.sh: first run: creating .venv and building the JupyterLab extension (a few minutes)"
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e .
args=()
[ "$(id -u)" = "0" ] && args+=(--allow-root)
exec .venv/bin/jupyter lab notebooks/00_tour.ipynb "${args[@]}" "$@"
