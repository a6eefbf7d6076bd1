"""How kernelstudio dtypes live in NumPy.

NumPy has no bfloat16, and we take no extra dependency for it: a bfloat16 tensor is held in a
float32 array whose values are exactly representable in bfloat16 (`round_to("bfloat16", a)` makes
them so, rounding to nearest even). On the wire (binary files for the CPU twin) bfloat16 is the
upper 16 bits of the float32 pattern.
"""

from __future__ import annotations

import numpy as np

from .errors import DTypeError

__all__ = ["DTYPES", "FLOAT_DTYPES", "BLOCK_BYTES", "REPEAT_BYTES", "itemsize", "block_elems", "repeat_elems",
           "block_bytes",
           "numpy_dtype", "storage_dtype", "round_to", "to_bf16_bits", "from_bf16_bits", "check_dtype"]

DTYPES: tuple[str, ...] = ("float16", "bfloat16", "float32", "int8", "int32")
FLOAT_DTYPES: tuple[str, ...] = ("float16", "bfloat16", "float32")
_ITEMSIZE = {"float16": 2, "bfloat16": 2, "float32": 4, "int8": 1, "int32": 4}
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


_NUMPY = {
    "float16": np.float16,
    "bfloat16": np.float32,  # values rounded to bfloat16, see module doc
    "float32": np.float32,
    "int8": np.int8,
    "int32": np.int32,
}


def check_dtype(dtype: object, what: str = "dtype") -> str:
    """Return `dtype` as a kernelstudio dtype name, or raise a DTypeError listing the valid ones."""
    if isinstance(dtype, np.dtype) or (isinstance(dtype, type) and issubclass(dtype, np.generic)):
        dtype = np.dtype(dtype).name
    if not isinstance(dtype, str) or dtype not in DTYPES:
        raise DTypeError(f"{what} {dtype!r} is not supported; use one of {', '.join(DTYPES)}")
    return dtype


def numpy_dtype(dtype: str) -> np.dtype:
    """The NumPy dtype arrays of this kernelstudio dtype are held in."""
    return np.dtype(_NUMPY[dtype])


def storage_dtype(dtype: str) -> np.dtype:
    """The NumPy dtype of this dtype's raw bytes (uint16 for bfloat16)."""
    return np.dtype(np.uint16) if dtype == "bfloat16" else numpy_dtype(dtype)


def to_bf16_bits(a: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 bit patterns (uint16), round to nearest even; NaN stays NaN."""
    f = np.ascontiguousarray(a, dtype=np.float32)
    u = f.view(np.uint32).astype(np.uint64)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(f)
    if nan.any():
        rounded = np.where(nan, ((u >> 16) | 0x40).astype(np.uint16), rounded)
    return rounded


def from_bf16_bits(bits: np.ndarray) -> np.ndarray:
    """bfloat16 bit patterns (uint16) -> float32."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def round_to(dtype: str, a: np.ndarray | float) -> np.ndarray:
    """Round values to `dtype` and return them in its NumPy holding dtype.

    Floats round to nearest even; integers truncate toward zero and wrap like a C cast.
    """
    arr = np.asarray(a)
    if dtype == "bfloat16":
        return from_bf16_bits(to_bf16_bits(arr.astype(np.float32)))
    target = numpy_dtype(dtype)
    if target.kind == "i" and arr.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            return np.trunc(arr).astype(np.int64).astype(target)
    with np.errstate(over="ignore"):  # out-of-range floats become +-inf, as a hardware cast does
        return arr.astype(target)
