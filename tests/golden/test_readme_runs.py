"""Every Python example in the README runs exactly as written, one after another."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.twin  # the README's example runs its kernel on the twin


def test_readme_examples_run_as_written(tmp_path, monkeypatch, capsys):
    text = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    monkeypatch.chdir(tmp_path)  # the examples write a trace file
    ns: dict = {}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), ns)  # noqa: S102 - our own documentation
    assert "speedup from fusion" in capsys.readouterr().out
    assert len(ns["d"].program.outputs) == 1  # so twin.run returns one array, as evaluate does
    np.testing.assert_allclose(ns["twin"].astype(np.float32), ns["result"].astype(np.float32), atol=2e-2,
                               rtol=2e-2)
    assert ns["result"].shape == (64, 512) and ns["result"].dtype == np.float16
    np.testing.assert_allclose(ns["tiled"].astype(np.float32), ns["result"].astype(np.float32), atol=2e-2, rtol=2e-2)
