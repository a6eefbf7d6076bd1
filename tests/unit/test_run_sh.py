"""`./run.sh` refuses an interpreter older than the package needs, before it creates anything."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_run_sh_refuses_an_old_python_and_says_how_to_pick_another(tmp_path):
    old = tmp_path / "python3.10"
    old.write_text("#!/bin/sh\nif [ \"$1\" = -V ]; then echo 'Python 3.10.12'; exit 0; fi\nexit 1\n")
    old.chmod(0o755)
    proc = subprocess.run(["bash", str(ROOT / "run.sh")], env={"PYTHON": str(old), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 1
    assert "needs Python >= 3.11" in proc.stderr and "Python 3.10.12" in proc.stderr
    assert "PYTHON=python3.11 ./run.sh" in proc.stderr


def test_run_sh_passes_its_arguments_to_jupyterlab():
    text = (ROOT / "run.sh").read_text()
    last = text.strip().splitlines()[-1]
    assert last.startswith("exec .venv/bin/jupyter lab") and last.endswith('"$@"')
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'requires-python = ">=3.11"' in pyproject and "(3, 11)" in text  # one version, in both places
