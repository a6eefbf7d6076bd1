"""Test-wide settings: hypothesis runs a fixed, reproducible set of examples in CI; one twin compile cache
for the whole session; every test that compiles on the twin (needs g++) carries the `twin` marker."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

TWIN_CACHE_ENV = "KS_TEST_TWIN_CACHE"
DEFAULT_TWIN_CACHE = Path.home() / ".cache" / "kernelstudio" / "twin-tests"


@pytest.fixture(scope="session")
def twin_cache() -> Path:
    """The twin's compile cache, kept across runs: `$KS_TEST_TWIN_CACHE`, else
    `~/.cache/kernelstudio/twin-tests`. Entries are keyed by a hash of sources, flags and twin headers, so a
    stale one cannot be hit; a test that checks cache hits or misses uses its own `tmp_path` instead."""
    path = Path(os.environ.get(TWIN_CACHE_ENV) or DEFAULT_TWIN_CACHE)
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark `twin` every test that asks for `twin_cache`, directly or through another fixture (modules that
    compile without it carry `pytestmark = pytest.mark.twin`). When the suite runs on several workers
    (`pytest -n 2 --dist loadgroup`, as ./test.sh does), keep a file's tests on one worker if they share a
    module- or class-scoped fixture (a JupyterLab server, a built design), so it is set up once."""
    for item in items:
        if "twin_cache" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.twin)
        if _shares_fixture(item):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))


def _shares_fixture(item: pytest.Item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(d.scope in ("module", "class", "package") for defs in info.name2fixturedefs.values() for d in defs)
