"""CPU twin of the Ascend C API: compile generated kernels with g++ and run them on the CPU."""

from __future__ import annotations

from .bundle import CodeBundle, TensorSpec
from .runner import CompileResult, compile, compile_bundle, is_cached, run

__all__ = ["run", "CodeBundle", "TensorSpec", "compile", "compile_bundle", "is_cached", "CompileResult"]
