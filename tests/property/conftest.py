"""Fixtures of the property tests: the twin's compile cache, shared across runs like the code
generator tests' (sources are hashed, so a stale entry cannot be hit)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def twin_cache() -> Path:
    base = os.environ.get("KS_TEST_TWIN_CACHE") or str(Path.home() / ".cache" / "kernelstudio" / "twin-tests")
    path = Path(base)
    path.mkdir(parents=True, exist_ok=True)
    return path
