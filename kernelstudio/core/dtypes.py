"""How kernelstudio dtypes live in NumPy.

NumPy has no bfloat16 of its own; a bfloat16 tensor is an array of `ml_dtypes.bfloat16` (the NumPy
dtype JAX and ONNX use). `numpy_dtype` is the dtype of the arrays
`random_inputs`, `evaluate`, `run_tiled` and `twin.run` take and return. The engines compute on
bfloat16 values in float32 (`compute_dtype`): upcasting is exact, and `round_to` rounds results back
to nearest even. A float32 array whose values are bfloat16-exact (the holder older code passes) is
still accepted: rounding it is the identity. On the wire (binary files for the CPU twin) a bfloat16
element is the upper 16 bits of the float32 pattern, which is what `a.view(np.uint16)` gives.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from .errors import DTypeError

__all__ = ["DTYPES", "FLOAT_DTYPES", "BLOCK_BYTES", "REPEAT_BYTES", "itemsize", "block_elems", "repeat_elems",
           "block_bytes",
           "numpy_dtype", "storage_dtype", "compute_dtype", "is_float", "round_to", "to_bf16_bits", "from_bf16_bits",
           "check_dtype", "BFLOAT16"]

DTYPES: tuple[str, ...] = ("float16", "bfloat16", "float32", "int8", "int32", "int64")  # int64: index data only
FLOAT_DTYPES: tuple[str, ...] = ("float16", "bfloat16", "float32")
_ITEMSIZE = {"float16": 2, "bfloat16": 2, "float32": 4, "int8": 1, "int32": 4, "int64": 8}
BLOCK_BYTES = 32  # one data block: the unit of every UB/L1 move and of a vector instruction's stride
REPEAT_BYTES = 256  # one vector repeat: 8 blocks


def itemsize(dtype: str) -> int:
    """Bytes per element of a kernelstudio dtype name."""
    return _ITEMSIZE[dtype]


def block_bytes(nbytes: int) -> int:
    """`nbytes` rounded up to whole 32-byte blocks (on-chip buffers and moves are made of them)."""
    return -(-nbytes // BLOCK_BYTES) * BLOCK_BYTES


def block_elems(dtype: str) -> int:
    """Elements of `dtype` in one 32-byte block."""
    return BLOCK_BYTES // _ITEMSIZE[dtype]


def repeat_elems(dtype: str) -> int:
    """Elements of `dtype` in one 256-byte vector repeat."""
    return REPEAT_BYTES // _ITEMSIZE[dtype]


BFLOAT16: np.dtype = np.dtype(ml_dtypes.bfloat16)

_NUMPY = {
    "float16": np.float16,
    "bfloat16": ml_dtypes.bfloat16,
    "float32": np.float32,
    "int8": np.int8,
    "int32": np.int32,
    "int64": np.int64,
}


def check_dtype(dtype: object, what: str = "dtype") -> str:
    """Return `dtype` as a kernelstudio dtype name, or raise a DTypeError listing the valid ones."""
    if isinstance(dtype, np.dtype) or (isinstance(dtype, type) and issubclass(dtype, np.generic)):
        dtype = np.dtype(dtype).name
    if not isinstance(dtype, str) or dtype not in DTYPES:
        raise DTypeError(f"{what} {dtype!r} is not supported; use one of {', '.join(DTYPES)}")
    return dtype


def is_float(dt: np.dtype) -> bool:
    """Whether arrays of NumPy dtype `dt` hold floats: NumPy's own (kind 'f') or an ml_dtypes float
    (bfloat16, the float8s), which NumPy reports as kind 'V'."""
    if dt.kind == "f":
        return True
    if dt.kind != "V" or dt.names is not None:
        return False
    try:
        ml_dtypes.finfo(dt)
    except (TypeError, ValueError):
        return False
    return True


def numpy_dtype(dtype: str) -> np.dtype:
    """The NumPy dtype of arrays of this kernelstudio dtype (`ml_dtypes.bfloat16` for bfloat16)."""
    return np.dtype(_NUMPY[dtype])


def storage_dtype(dtype: str) -> np.dtype:
    """The NumPy dtype of this dtype's raw bytes in GM and in the twin's files: its `numpy_dtype`
    (a bfloat16 element's 2 bytes are the upper half of the float32 pattern; `.view(np.uint16)`)."""
    return numpy_dtype(dtype)


def compute_dtype(dtype: str) -> np.dtype:
    """The NumPy dtype the engines compute this dtype in: float32 for bfloat16 (exact), else its own."""
    return np.dtype(np.float32) if dtype == "bfloat16" else numpy_dtype(dtype)


def to_bf16_bits(a: np.ndarray) -> np.ndarray:
    """Values -> bfloat16 bit patterns (uint16), rounding float32 to nearest even; NaN stays NaN."""
    return round_to("bfloat16", a).view(np.uint16)


def from_bf16_bits(bits: np.ndarray) -> np.ndarray:
    """bfloat16 bit patterns (uint16) -> float32."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def round_to(dtype: str, a: np.ndarray | float) -> np.ndarray:
    """Round values to `dtype` and return them as an array of its `numpy_dtype`.

    Floats round to nearest even (bfloat16 from the value's float32, as the hardware casts it);
    integers truncate toward zero and wrap like a C cast. Out-of-range floats become +-inf.
    """
    arr = np.asarray(a)
    if dtype == "bfloat16" and arr.dtype == BFLOAT16:
        return arr.copy()
    if arr.dtype.kind == "V" and is_float(arr.dtype):
        arr = arr.astype(np.float32)  # bfloat16 (or another ml_dtypes float) upcasts exactly
    if dtype == "bfloat16":
        with np.errstate(invalid="ignore", over="ignore"):  # NaN stays NaN, overflow becomes inf
            return arr.astype(np.float32).astype(BFLOAT16)
    target = numpy_dtype(dtype)
    if target.kind == "i" and arr.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            return np.trunc(arr).astype(np.int64).astype(target)
    with np.errstate(over="ignore"):  # out-of-range floats become +-inf, as a hardware cast does
        return arr.astype(target)
