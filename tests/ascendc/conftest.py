"""Kernels of the ks.ascendc tests: the twin tests' official-sample-like kernels (tests/twin/kernels/) and
this folder's own (kernels/: add_flags with hand-placed pipe flags, add_prefetch with a two-deep queue),
copied with one edit for the seeded sync bugs."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

TWIN_KERNELS = Path(__file__).parents[1] / "twin" / "kernels"
KERNELS = Path(__file__).parent / "kernels"


def halves(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(n).astype(np.float16)


def seeded(tmp_path: Path, folder: Path, file: str, old: str, new: str) -> tuple[Path, str]:
    """A copy of `folder` in tmp_path with the first `old` in `file` replaced by `new`; returns the copied
    file's path and its new text."""
    dst = tmp_path / folder.name
    shutil.copytree(folder, dst)
    path = dst / file
    text = path.read_text()
    assert old in text, f"{old!r} not in {file}"
    text = text.replace(old, new, 1)
    path.write_text(text)
    return path, text


def line_of(text: str, snippet: str, nth: int = 0) -> int:
    """The 1-based line of the nth occurrence of `snippet` in `text`."""
    lines = [i for i, line in enumerate(text.splitlines(), 1) if snippet in line]
    return lines[nth]
