"""What code generation produces and the CPU twin runs: generated sources plus the tensors main.cpp reads
and writes."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from types import MappingProxyType
from typing import Any

from ..core.config import DEFAULT_TARGET
from ..core.dtypes import check_dtype
from ..core.errors import InputError

__all__ = ["TensorSpec", "CodeBundle"]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class TensorSpec:
    """One tensor main.cpp reads from or writes to `<name>.bin` (raw little-endian, C order)."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    runtime_dims: int = 0  # leading dimensions the code takes at run time (its rows); `shape` has the lowered ones
    format: str = "ND"  # "NZ": <name>.bin holds the logical [K, N] matrix in FRACTAL_NZ order (core/formats.py)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise InputError(f"tensor name {self.name!r} must be a C identifier (it names the file <name>.bin)")
        from ..core.checks import as_int

        dims = (self.shape,) if as_int(self.shape) is not None else self.shape
        try:
            shape = tuple(as_int(d) for d in dims)
        except TypeError:
            raise InputError(f"tensor {self.name!r}: shape {self.shape!r} must be a tuple of ints") from None
        if any(d is None for d in shape):
            raise InputError(f"tensor {self.name!r}: shape {tuple(dims)!r} must hold whole numbers (ints), "
                             "not floats or bools")
        if any(d < 0 for d in shape):
            raise InputError(f"tensor {self.name!r} has a negative dimension in shape {shape}")
        object.__setattr__(self, "shape", shape)
        if isinstance(self.runtime_dims, bool) or not isinstance(self.runtime_dims, int) or not (
                0 <= self.runtime_dims <= len(shape)):
            raise InputError(f"tensor {self.name!r}: runtime_dims {self.runtime_dims!r} must be an int from 0 to "
                             f"its {len(shape)} dimension(s)")
        object.__setattr__(self, "dtype", check_dtype(self.dtype, f"dtype of tensor {self.name!r}"))
        if self.format not in ("ND", "NZ"):
            raise InputError(f"tensor {self.name!r}: format {self.format!r} must be 'ND' or 'NZ' (FRACTAL_NZ)")


@dataclass(frozen=True)
class CodeBundle:
    """Generated Ascend C for one kernel: `files` maps relative paths to text and holds `main.cpp`.

    main.cpp declares the kernel entries it launches (each `op_kernel/*.cpp` is its own translation unit,
    linked with it), reads each input from `<name>.bin` in the working directory and writes each output
    to `<name>.bin`.
    """

    name: str
    files: Mapping[str, str]
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]
    target: str = DEFAULT_TARGET
    workspace_bytes: int = 0
    profile: Any = None  # the HardwareProfile lowered for (overrides included); else `target` is looked up

    def __post_init__(self) -> None:
        files = {}
        for path, text in self.files.items():
            p = PurePosixPath(path)
            if p.is_absolute() or ".." in p.parts or not p.parts:
                raise InputError(f"bundle {self.name!r}: file path {path!r} must be relative, inside the bundle")
            if not isinstance(text, str):
                raise InputError(f"bundle {self.name!r}: file {path!r} must be text, got {type(text).__name__}")
            files[str(p)] = text
        if "main.cpp" not in files:
            raise InputError(f"bundle {self.name!r} has no main.cpp; files are {sorted(files)}")
        # an output may be an input updated in place (the same tensor: main.cpp writes back what it read)
        inputs = {t.name: t for t in self.inputs}
        names = [t.name for t in self.inputs] + [t.name for t in self.outputs if inputs.get(t.name) != t]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise InputError(f"bundle {self.name!r}: tensor names {dup} are used more than once")
        from ..core.names import check_name

        check_name("CodeBundle", self.name)
        if isinstance(self.workspace_bytes, bool) or not isinstance(self.workspace_bytes, int):
            raise InputError(f"bundle {self.name!r}: workspace_bytes must be an int, got {self.workspace_bytes!r}")
        if self.workspace_bytes < 0:
            raise InputError(f"bundle {self.name!r}: workspace_bytes {self.workspace_bytes} is negative")
        object.__setattr__(self, "files", MappingProxyType(files))
        object.__setattr__(self, "inputs", tuple(self.inputs))
        object.__setattr__(self, "outputs", tuple(self.outputs))
