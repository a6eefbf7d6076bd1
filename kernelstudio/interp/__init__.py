"""The NumPy interpreter of TileIR: the numerics back end.

Stage 7, one of the three readers of the TileIR. It may import core/, hw/ and tileir/, never sim/ or codegen/.
"""

from .run import run_tiled

__all__ = ["run_tiled"]
