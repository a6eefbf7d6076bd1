"""Every Python example in the README runs exactly as written, one after another."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.twin  # the README's example runs its kernel on the twin


def test_readme_examples_run_as_written(tmp_path, monkeypatch):
    """Every python block runs, in order; a ```text block right after one is exactly what it printed."""
    text = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```\n(?:```text\n(.*?)```\n)?", text, flags=re.S)
    monkeypatch.chdir(tmp_path)  # the examples write a trace file
    (tmp_path / "tests").symlink_to(Path(__file__).resolve().parents[1])  # and read the repository's test kernels
    ns: dict = {}
    printed, compared = [], 0
    for block, shown in blocks:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block, "README.md", "exec"), ns)  # noqa: S102 - our own documentation
        printed.append(out.getvalue())
        if shown:
            assert out.getvalue() == shown, f"the README shows other output than its block prints:\n{block}"
            compared += 1
    assert compared >= 1
    assert "speedup from fusion" in "".join(printed)
    assert len(ns["d"].program.outputs) == 1  # so twin.run returns one array, as evaluate does
    np.testing.assert_allclose(ns["twin"].astype(np.float32), ns["result"].astype(np.float32), atol=2e-2,
                               rtol=2e-2)
    assert ns["result"].shape == (64, 512) and ns["result"].dtype == np.float16
    np.testing.assert_allclose(ns["tiled"].astype(np.float32), ns["result"].astype(np.float32), atol=2e-2, rtol=2e-2)
