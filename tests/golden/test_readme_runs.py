"""The README's first Python example runs exactly as written."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np


def test_readme_first_example_runs_as_written():
    text = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    first = re.findall(r"```python\n(.*?)```", text, flags=re.S)[0]
    ns: dict = {}
    exec(compile(first, "README.md", "exec"), ns)  # noqa: S102 - our own documentation
    assert ns["result"].shape == (64, 512) and ns["result"].dtype == np.float16
    np.testing.assert_allclose(ns["tiled"].astype(np.float32), ns["result"].astype(np.float32), atol=2e-2, rtol=2e-2)
