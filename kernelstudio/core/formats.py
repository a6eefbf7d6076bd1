"""Storage formats of a GM tensor: ND (row-major) and FRACTAL_NZ, the cube's fractal layout of a weight matrix.

CANN stores a [K, N] matrix in FRACTAL_NZ as N/16 column bands, each band K rows of 16 elements in
a row (a run of 16 x 16 fractals down the band): storage shape (N/16, K/16, 16, 16), element (k, n) at
flat offset ``(n // 16) * K * 16 + k * 16 + n % 16`` (CANN's TransData docs give the 2-D form as
[n1, m1m0, n0] with n0 = m0 = 16 for float16/bfloat16). A tensor keeps its LOGICAL shape (K, N) in
the DSL, the golden model and the interpreter; only the bytes in GM are in the fractal order, which
`to_nz` / `from_nz` convert to and from.
"""

from __future__ import annotations

import numpy as np

from .errors import DTypeError, ShapeError

__all__ = ["FORMATS", "NZ_FRACTAL", "NZ_DTYPES", "check_format", "check_nz", "to_nz", "from_nz"]

FORMATS = ("ND", "NZ")
NZ_FRACTAL = 16  # rows and columns of one fractal of a 2-byte dtype (16 x 16 elements, 512 bytes)
NZ_DTYPES = ("float16", "bfloat16")


def check_format(what: str, fmt: object) -> str:
    """`fmt` as "ND" or "NZ" (case-insensitive; "FRACTAL_NZ" is "NZ")."""
    key = fmt.upper() if isinstance(fmt, str) else fmt
    if key == "FRACTAL_NZ":
        key = "NZ"
    if key not in FORMATS:
        raise ShapeError(f"{what}: format {fmt!r} is not one of {', '.join(map(repr, FORMATS))}; "
                         "'ND' is row-major, 'NZ' the cube's FRACTAL_NZ weight layout")
    return str(key)


def check_nz(what: str, shape: tuple[int, ...], dtype: str) -> None:
    """Raise unless a tensor of `shape` and `dtype` can be stored in FRACTAL_NZ here: a 2-D [K, N]
    float16/bfloat16 matrix whose K and N are multiples of 16."""
    if dtype not in NZ_DTYPES:
        raise DTypeError(f"{what} is {dtype}: FRACTAL_NZ tensors are {' or '.join(NZ_DTYPES)} here (16 x 16 "
                         "fractals of 2-byte elements); use format='ND' or a 2-byte dtype")
    if len(shape) != 2:
        raise ShapeError(f"{what} has shape {list(shape)}: a FRACTAL_NZ tensor is one [K, N] matrix; use "
                         "format='ND' for other ranks")
    bad = [f"{ax}={d}" for ax, d in zip(("K", "N"), shape, strict=True) if d % NZ_FRACTAL]
    if bad:
        pad = [-(-d // NZ_FRACTAL) * NZ_FRACTAL for d in shape]
        raise ShapeError(f"{what} has shape {list(shape)}: FRACTAL_NZ needs K and N multiples of {NZ_FRACTAL} "
                         f"({', '.join(bad)} is not); pad the matrix to {pad} with zeros or use format='ND'")


def to_nz(matrix: np.ndarray) -> np.ndarray:
    """A [K, N] matrix (K, N multiples of 16) in FRACTAL_NZ order: shape (N/16, K/16, 16, 16)."""
    a = np.asarray(matrix)
    check_nz("to_nz: the matrix", tuple(a.shape), "float16")  # shape rules only: any dtype converts
    k, n = a.shape
    f = NZ_FRACTAL
    return np.ascontiguousarray(a.reshape(k, n // f, f).transpose(1, 0, 2)).reshape(n // f, k // f, f, f)


def from_nz(nz: np.ndarray) -> np.ndarray:
    """The [K, N] matrix of a FRACTAL_NZ array of shape (N/16, K/16, 16, 16) (the inverse of `to_nz`)."""
    a = np.asarray(nz)
    f = NZ_FRACTAL
    if a.ndim != 4 or a.shape[2:] != (f, f):
        raise ShapeError(f"from_nz: shape {list(a.shape)} is not FRACTAL_NZ storage (N/16, K/16, 16, 16); pass "
                         "what to_nz returned")
    n1, k1 = a.shape[:2]
    return np.ascontiguousarray(a.reshape(n1, k1 * f, f).transpose(1, 0, 2)).reshape(k1 * f, n1 * f)
