"""The vector instruction vocabulary, reduction sequences and composite sequences, as data tables.

`vector_cycles(op, dtype, count)` looks an op up here:
- an instruction (INSTRUCTIONS): timed by its measured msKPP curve, e.g. "add" -> VADD, over
  ceil(count x dtype bytes / 256) repeats (for brcb, count is the elements written);
- a reduction (REDUCTIONS): a whole-row reduction = level after level of a repeat-reducing
  instruction (VCADD / VCMAX turn each 256-byte repeat into one value) until one value per row is
  left, as the Ascend C WholeReduceSum/WholeReduceMax loop does (assumed sequence);
- a cast between dtypes with no measured VCONV curve (int8 -> float32, int8 -> int32, int32 ->
  float16, ...): the shortest chain of measured casts (`cast_route`), e.g. int8 -> float16 ->
  float32, each step a VCONV over all elements (assumed: one Ascend C Cast may do it directly);
- a composite (COMPOSITES): an assumed instruction sequence used by a high-level API that is not
  one instruction. Each entry is (op, passes): that op runs `passes` times over all `count`
  elements, each pass a separate instruction paying its own start-up. Entries may name other
  composites; `expand()` flattens them.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..core.dtypes import REPEAT_BYTES
from ..core.errors import UnsupportedError

__all__ = [
    "INSTRUCTIONS", "BIT_PATTERN_OPS", "REDUCTIONS", "COMPOSITES", "DTYPE_TAGS", "DTYPE_BYTES",
    "REPEAT_BYTES", "expand", "reduction_levels", "all_ops", "cast_route",
]

# op -> msKPP instruction name of the measured curve.
INSTRUCTIONS: dict[str, str] = {
    # binary, vector x vector
    "add": "VADD", "sub": "VSUB", "mul": "VMUL", "div": "VDIV", "max": "VMAX", "min": "VMIN",
    # binary, vector x scalar
    "adds": "VADDS", "muls": "VMULS", "maxs": "VMAXS", "mins": "VMINS",
    # unary math
    "exp": "VEXP", "ln": "VLN", "sqrt": "VSQRT", "rsqrt": "VRSQRT", "reciprocal": "VREC",
    "abs": "VABS", "relu": "VRELU", "leaky_relu": "VLRELU",
    # data
    "duplicate": "VECTORDUP", "cast": "VCONV", "copy": "VCOPY", "brcb": "VBRCB",
    # predicates: compare writes a bit mask (VCMPV), select picks by mask (VSEL)
    "compare": "VCMPV", "select": "VSEL",
}
# Ops that move bit patterns: a float dtype may use the integer curve of the same width.
BIT_PATTERN_OPS = frozenset({"copy", "brcb"})

REDUCTIONS: dict[str, str] = {"reduce_sum": "VCADD", "reduce_max": "VCMAX"}

COMPOSITES: dict[str, tuple[tuple[str, int], ...]] = {
    "square": (("mul", 1),),  # x * x
    "neg": (("muls", 1),),  # x * -1
    "where": (("compare", 1), ("select", 1)),  # mask = cond; select(mask, a, b)
    "transpose": (("copy", 1),),  # Transpose moves every element once; no measured curve: VCOPY rate
    # 1 / (1 + exp(-x))
    "sigmoid": (("muls", 1), ("exp", 1), ("adds", 1), ("reciprocal", 1)),
    # x * sigmoid(x)
    "silu": (("sigmoid", 1), ("mul", 1)),
    # clamp, then (e^2x - 1) / (e^2x + 1)
    "tanh": (("mins", 1), ("maxs", 1), ("muls", 1), ("exp", 1), ("adds", 2), ("div", 1)),
    # clamp; x2 = x*x; rational approximation x*P(x2)/Q(x2) by Horner: P degree 5, Q degree 4
    "erf": (("mins", 1), ("maxs", 1), ("mul", 11), ("adds", 9), ("div", 1)),
    # 0.5 * x * (1 + erf(x / sqrt(2)))
    "gelu": (("muls", 1), ("erf", 1), ("adds", 1), ("mul", 1), ("muls", 1)),
    # 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))
    "gelu_tanh": (("mul", 2), ("muls", 2), ("add", 1), ("tanh", 1), ("adds", 1), ("mul", 1), ("muls", 1)),
}

# kernelstudio dtype name -> msKPP dtype tag, and its size in bytes.
DTYPE_TAGS: dict[str, str] = {
    "float16": "FP16", "bfloat16": "BF16", "float32": "FP32", "int4": "INT4", "int8": "INT8",
    "uint8": "UINT8", "int16": "INT16", "uint16": "UINT16", "int32": "INT32", "uint32": "UINT32",
    "int64": "INT64",
}
DTYPE_BYTES: dict[str, float] = {
    "FP16": 2, "BF16": 2, "FP32": 4, "INT4": 0.5, "INT8": 1, "UINT8": 1, "INT16": 2, "UINT16": 2,
    "INT32": 4, "UINT32": 4, "INT64": 8,
}


def all_ops() -> tuple[str, ...]:
    """Every op name vector_cycles accepts."""
    return (*INSTRUCTIONS, *REDUCTIONS, *COMPOSITES)


def cast_route(src: str, dst: str, measured: Iterable[str]) -> tuple[str, ...] | None:
    """The shortest chain of measured casts from tag `src` to tag `dst` (keys "SRC_DST", e.g.
    ("INT8_FP16", "FP16_FP32") for INT8 -> FP32), or None when no chain exists. Ties go to the
    alphabetically first chain, so the route is stable."""
    edges: dict[str, list[str]] = {}
    for key in sorted(measured):
        a, b = key.split("_")
        edges.setdefault(a, []).append(b)
    prev: dict[str, str] = {src: ""}
    frontier = [src]
    while frontier and dst not in prev:
        nxt = []
        for a in frontier:
            for b in edges.get(a, ()):
                if b not in prev:
                    prev[b] = a
                    nxt.append(b)
        frontier = nxt
    if dst not in prev or src == dst:
        return None
    chain, at = [], dst
    while at != src:
        chain.append(f"{prev[at]}_{at}")
        at = prev[at]
    return tuple(reversed(chain))


def expand(op: str) -> tuple[tuple[str, int], ...]:
    """A composite as (instruction, passes) pairs, nested composites flattened and merged in order."""
    if op not in COMPOSITES:
        raise UnsupportedError(f"{op!r} is not a composite; composites: {', '.join(COMPOSITES)}")
    out: dict[str, int] = {}
    for sub, passes in COMPOSITES[op]:
        parts = expand(sub) if sub in COMPOSITES else ((sub, 1),)
        for instr, p in parts:
            out[instr] = out.get(instr, 0) + p * passes
    return tuple(out.items())


def reduction_levels(count: int, elems_per_repeat: int, rows: int = 1) -> tuple[int, ...]:
    """Repeats issued at each level of a row reduction of `rows` rows of count/rows elements.

    Each level reduces every 256-byte repeat to one value, so a row of L values needs
    ceil(L / elems_per_repeat) repeats and leaves that many values; levels go on until one is left.
    """
    if rows < 1 or count % rows:
        raise UnsupportedError(f"reduction of {count} elements over {rows} rows: rows must divide count")
    length, levels = count // rows, []
    while True:
        reps = -(-length // elems_per_repeat)
        levels.append(reps * rows)
        if reps == 1:
            return tuple(levels)
        length = reps
