"""Reader hints: facts about a kernel the lowering records next to its statements, so a reader need
not recover them from the instructions. `Kernel.tile_walk` (a `TileWalk` of `Panel`s) is the order a
cube kernel deals out its C tiles and what each reads (the simulator's L2 model, l2_walk.py);
`Kernel.runtime_rows` (`RuntimeRows`) says a kernel's code can take another row count (the code
generator's TilingFunc); `Kernel.row_composite` (`RowComposite`) says a vector kernel is one
softmax, layer_norm or rms_norm over whole rows (the high-level API code). The instructions stay
what they are: the hints add no semantics.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .expr import Const, Expr

__all__ = ["Panel", "TileWalk", "RuntimeRows", "RowComposite"]


@dataclass(frozen=True, slots=True)
class Panel:
    """The GM data one tile of a cube kernel reads from one operand: `key` names it (equal keys are
    the same bytes), `nbytes` its size, `reads` how often the tile reads it (expressions of the
    walk's Lets)."""

    tensor: str
    key: Expr
    nbytes: Expr
    reads: Expr = Const(1)


@dataclass(frozen=True, slots=True)
class TileWalk:
    """How a cube kernel deals out its `tiles` (C tiles, or row blocks): `lets` map the tile index
    `t` to its coordinates, as in the kernel body; `panels` are what each tile reads, in `slices`
    GM loads one after another (L1 slabs of k tiles, times the n tiles of a row block). Tile t runs
    on block t % block_dim in wave t // block_dim. The simulator's L2 model reads it."""

    tiles: int
    lets: tuple[Any, ...]  # program.Let statements (program.py imports this module, not the other way)
    panels: tuple[Panel, ...]
    slices: int = 1


@dataclass(frozen=True, slots=True)
class RuntimeRows:
    """A kernel that takes its row count at run time: each tensor in `tensors` holds `rows` rows, the product
    of its first `dims` dimensions (the same for all of them); its other dimensions are fixed. The generated
    TilingFunc computes the row count, the tile counts and `block_dim` (at most `cores`) from the input shapes,
    and the kernel reads them from its tiling.

    A row-tiled vector kernel keeps its row count in the tiling value "rows" (tiles of "tile_rows"); a matmul
    kernel keeps it in "M" (the rows of A and C, tiles of "tile_m"), and its tiles are the "m_tiles" row
    tiles times `per_row_tile` (its C tiles along n, or 1 for a row block); a conv kernel's "rows" are its
    images ("batch", `tile` "": one image per row tile, `per_row_tile` C tiles each). A mixed kernel's
    workspace holds one slot block per core (`ws_per_core` bytes), sized by the run's block_dim."""

    dims: int
    tensors: tuple[str, ...]
    cores: int
    rows: str = "rows"  # the tiling value that holds the row count
    tile: str = "tile_rows"  # the tiling value of rows per row tile ("": one row each)
    row_tiles: str = ""  # the tiling value that counts the row tiles, when it is not "tiles" itself
    per_row_tile: int = 1  # tiles per row tile
    ws_per_core: int = 0  # workspace bytes per core (mixed kernels)

    @property
    def names(self) -> tuple[str, ...]:
        """The tiling values set at run time."""
        return (self.rows, *((self.row_tiles,) if self.row_tiles else ()), "tiles", "block_dim")


@dataclass(frozen=True, slots=True)
class RowComposite:
    """What a vector kernel computes when it is exactly one softmax, layer_norm or rms_norm over whole rows
    (each tile holds whole rows in UB): `x` [rows, cols] in GM to `out`, with the GM row vectors `gamma` and
    `beta` ("" when absent) and `eps`. Set by the lowering from the fusion graph, so the code generator can
    write the composite as the Ascend C high-level API call (`codegen(prog, high_level=True)`) without
    reading it back from the instructions; the instructions in `aiv` stay what the simulator prices."""

    name: str  # "softmax" | "layer_norm" | "rms_norm"
    x: str
    out: str
    gamma: str = ""
    beta: str = ""
    eps: float = 0.0
