"""How MC2 splits M into tiles (ops-transformer mc2/common/inc/tiling/, hccl_formulaic_tiling.h):
at most 16 tiles, long tiles aligned to 128 rows, at least 64 KB per communication, and the short
tile last when the matmul bounds the time ("back"), first when the communication does ("front")."""

from __future__ import annotations

from ..core.checks import as_int
from .errors import TilingError

__all__ = ["MAX_TILES", "ALIGN_ROWS", "MIN_COMM_BYTES", "TAILS", "tile_rows", "feasible_tiles"]

MAX_TILES = 16  # [ops-transformer] hccl_formulaic_tiling.h MAX_TILE_CNT
ALIGN_ROWS = 128  # [ops-transformer] mAlignLen of the M split = BASE_BLOCK_M = 128 (mc2 tiling headers)
MIN_COMM_BYTES = 64 * 1024  # [ops-transformer] hccl_performance.h HCCL_MIN_TILE_LEN = 64 KB
TAILS = ("auto", "back", "front")


def _split(rows: int, tiles: int) -> tuple[int, int]:
    """(long, short) rows of a split into `tiles` tiles: the long ones rows/tiles rounded up to whole
    128-row blocks, the short one the rest (not positive when the long ones already cover the rows)."""
    if tiles == 1:
        return rows, rows
    long = -(-rows // tiles)
    long = -(-long // ALIGN_ROWS) * ALIGN_ROWS
    return long, rows - (tiles - 1) * long


def feasible_tiles(rows: int, comm_bytes_per_row: int) -> tuple[int, ...]:
    """Every tile count the rules allow for `rows` rows that move `comm_bytes_per_row` bytes each."""
    out = []
    for t in range(1, MAX_TILES + 1):
        long, short = _split(rows, t)
        if short > 0 and (t == 1 or short * comm_bytes_per_row >= MIN_COMM_BYTES):
            out.append(t)
    return tuple(out)


def tile_rows(rows: int, tiles: int, tail: str, comm_bytes_per_row: int, *, what: str) -> tuple[int, ...]:
    """The rows of each tile, in order. `what` names the split in errors (e.g. "matmul_allreduce: M")."""
    count = as_int(tiles)
    if count is None or not 1 <= count <= MAX_TILES:
        raise TilingError(f"{what}: tiles={tiles!r}; CANN's MC2 splits into 1 to {MAX_TILES} tiles "
                          f"(MAX_TILE_CNT); use a whole number in 1..{MAX_TILES}")
    tiles = int(count)
    if tail not in ("back", "front"):
        raise TilingError(f"{what}: tail={tail!r}; the short tile goes 'back' (last: compute-bound) or 'front' "
                          "(first: communication-bound)")
    ok = feasible_tiles(rows, comm_bytes_per_row)
    long, short = _split(rows, tiles)
    if short <= 0:
        raise TilingError(f"{what}: {rows:,} rows do not split into {tiles} tiles of whole {ALIGN_ROWS}-row "
                          f"blocks and a shorter one ({tiles - 1} x {long:,} rows already cover {rows:,}); "
                          f"tile counts that work here: {_list(ok)}")
    if tiles > 1 and short * comm_bytes_per_row < MIN_COMM_BYTES:
        raise TilingError(f"{what}: tiles={tiles} leaves a tile of {short:,} rows that communicates "
                          f"{short * comm_bytes_per_row:,} B, under HCCL's minimum of {MIN_COMM_BYTES:,} B per "
                          f"communication; use fewer tiles ({_list(ok)} work here)")
    if tiles == 1:
        return (rows,)
    out = [long] * (tiles - 1)
    return tuple([short, *out] if tail == "front" else [*out, short])


def _list(ts: tuple[int, ...]) -> str:
    return ", ".join(map(str, ts)) if ts else "none"
