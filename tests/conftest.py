"""Test-wide settings: hypothesis runs a fixed, reproducible set of examples in CI."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(scope="session")
def twin_cache() -> Path:
    """The twin's compile cache, shared across runs (sources are hashed, so a stale entry cannot be hit);
    tests/twin and tests/codegen define their own."""
    base = os.environ.get("KS_TEST_TWIN_CACHE") or str(Path.home() / ".cache" / "kernelstudio" / "twin-tests")
    path = Path(base)
    path.mkdir(parents=True, exist_ok=True)
    return path
