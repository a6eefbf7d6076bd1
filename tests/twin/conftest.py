"""Shared fixtures for twin tests: one compile cache per test session, bundles from kernels/."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelstudio.codegen import CodeBundle, TensorSpec

KERNELS = Path(__file__).parent / "kernels"


def load_bundle(
    name: str, inputs: tuple[TensorSpec, ...], outputs: tuple[TensorSpec, ...], workspace_bytes: int = 0
) -> CodeBundle:
    """A CodeBundle of every file under kernels/<name>/."""
    root = KERNELS / name
    files = {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}
    return CodeBundle(name=name, files=files, inputs=inputs, outputs=outputs, workspace_bytes=workspace_bytes)


@pytest.fixture(scope="session")
def twin_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A compile cache shared by the whole session, so each bundle compiles once."""
    return tmp_path_factory.mktemp("twin-cache")
