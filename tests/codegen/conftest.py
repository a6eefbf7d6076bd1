"""Shared fixtures of the code generator tests: one twin binary cache for the whole session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def twin_cache() -> Path:
    """Compiled binaries, shared across runs (sources are hashed, so stale entries cannot be hit)."""
    base = os.environ.get("KS_TEST_TWIN_CACHE") or str(Path.home() / ".cache" / "kernelstudio" / "twin-tests")
    path = Path(base)
    path.mkdir(parents=True, exist_ok=True)
    return path
