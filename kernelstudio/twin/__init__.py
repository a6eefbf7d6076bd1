"""CPU twin of the Ascend C API: compile generated kernels with g++ and run them on the CPU.

It runs `kernelstudio.codegen.CodeBundle`s (what the code generator writes, or hand-written Ascend C).

Stage 9. It may import core/, hw/ and codegen/ (the CodeBundle it runs).
"""

from __future__ import annotations

from .calllog import Call, CallLog, Launch
from .runner import CompileResult, compile, compile_bundle, is_cached, run

__all__ = ["run", "compile", "compile_bundle", "is_cached", "CompileResult", "CallLog", "Call", "Launch"]
