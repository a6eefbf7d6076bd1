"""Names of the generated operators: each kernel's op type, files, class and kernel function, and the
names of its kernel parameters.

A program's operators are named after the design (`Program.name`: the `%%ascend_kernel` NAME, the
`name=` of ks.build / ks.lower, else the output's name, else what the graph computes). A program of
one kernel is one operator of that name; several kernels get the design name plus what each computes
(`attn_matmul`, `attn_layer_norm`, then `attn_add`, `attn_add_2` when two do the same). The op type is
the CamelCase of that (`AttnLayerNorm`), never a CANN built-in op type (`Relu` -> `ReluCustom`, see
`kernelstudio.core.names.op_name`); files and the kernel function use the snake name CANN derives from the
op type (`attn_layer_norm`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.names import CUSTOM_SUFFIX, op_name
from ..tileir.program import Kernel, Program
from .scope import local_name

__all__ = ["OpNames", "op_names", "names_of", "param_names", "naming_text"]


@dataclass(frozen=True, slots=True)
class OpNames:
    """How one kernel appears in the generated code and project."""

    kernel: str  # the TileIR kernel's name
    base: str  # the name the op was derived from (design name, plus what the kernel does)
    snake: str  # op_kernel/<snake>.cpp, op_host/<snake>.cpp, the extern "C" kernel function
    op_type: str  # CamelCase operator type: OpDef class, OP_ADD, the msOpGen JSON, aclnn<OpType>
    renamed: bool  # the op type got the "Custom" suffix because it is a CANN built-in name

    @property
    def cls(self) -> str:
        """The device class (`KernelAttnProlog`)."""
        return f"Kernel{self.op_type}"

    @property
    def tiling(self) -> str:
        """The tiling struct (`AttnPrologTilingData`)."""
        return f"{self.op_type}TilingData"

    @property
    def kernel_file(self) -> str:
        return f"op_kernel/{self.snake}.cpp"

    @property
    def host_file(self) -> str:
        return f"op_host/{self.snake}.cpp"

    @property
    def tiling_file(self) -> str:
        return f"op_host/{self.snake}_tiling.h"

    def note(self) -> str | None:
        """The comment that explains a "Custom" suffix, or None."""
        if not self.renamed:
            return None
        plain = self.op_type.removesuffix(CUSTOM_SUFFIX)
        return (f"op type {self.op_type}: {plain} (from {self.base!r}) is a CANN built-in operator or a "
                f"C++/Ascend C symbol, so '{CUSTOM_SUFFIX}' was appended")


_LAST: list = []  # [(program, names)]: every file of one program asks for its names many times


def op_names(prog: Program) -> dict[str, OpNames]:
    """OpNames of every kernel of `prog`, by kernel name, in launch order; op types are unique."""
    for p, names in _LAST:
        if p is prog:
            return dict(names)
    names = _op_names(prog)
    _LAST[:] = [*_LAST[-3:], (prog, names)]
    return dict(names)


def _op_names(prog: Program) -> dict[str, OpNames]:
    multi = len(prog.kernels) > 1
    taken: set[str] = set()
    out: dict[str, OpNames] = {}
    for k in prog.kernels:
        base = f"{prog.name}_{k.does or k.name}" if multi else prog.name
        cand, i = base, 1
        while True:
            snake, op_type, renamed = op_name(cand)
            if op_type.lower() not in taken and snake not in taken:
                break
            i += 1
            cand = f"{base}_{i}"
        taken |= {op_type.lower(), snake}
        out[k.name] = OpNames(k.name, cand, snake, op_type, renamed)
    return out


def names_of(prog: Program, k: Kernel) -> OpNames:
    """OpNames of kernel `k` of `prog`."""
    return op_names(prog)[k.name]


def param_names(prog: Program, k: Kernel, params: list[str]) -> dict[str, str]:
    """C++ names of the kernel's GM parameters (`GM_ADDR x`): the tensor's name, with `_gm` appended
    when it would equal the kernel function, the op type, the class or the tiling struct (or hide a
    C++ / Ascend C name, see `scope.local_name`)."""
    n = names_of(prog, k)
    avoid = {n.snake, n.op_type, n.cls, n.tiling}
    out: dict[str, str] = {}
    for p in params:
        name = local_name(p)
        while name in avoid or name in out.values():
            name += "_gm"
        out[p] = name
    return out


def naming_text(prog: Program) -> str:
    """Each kernel's operator: its op type, class, tiling struct and files (and why a name got a suffix)."""
    out = []
    for k in prog.kernels:
        n = names_of(prog, k)
        out.append(f"kernel {k.name} -> {n.op_type}  ({n.kernel_file}, {n.host_file}, {n.tiling_file}; class "
                   f"{n.cls}, struct {n.tiling})")
        if n.note():
            out.append(f"  {n.note()}")
    return "\n".join(out) + "\n"
