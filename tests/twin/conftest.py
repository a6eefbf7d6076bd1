"""Bundles of the twin tests, from kernels/ (the compile cache, `twin_cache`, is tests/conftest.py's)."""

from __future__ import annotations

from pathlib import Path

from kernelstudio.codegen import CodeBundle, TensorSpec

KERNELS = Path(__file__).parent / "kernels"


def load_bundle(
    name: str, inputs: tuple[TensorSpec, ...], outputs: tuple[TensorSpec, ...], workspace_bytes: int = 0
) -> CodeBundle:
    """A CodeBundle of every file under kernels/<name>/."""
    root = KERNELS / name
    files = {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}
    return CodeBundle(name=name, files=files, inputs=inputs, outputs=outputs, workspace_bytes=workspace_bytes)

