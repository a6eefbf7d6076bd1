"""The NumPy interpreter of TileIR: the numerics back end."""

from .run import run_tiled

__all__ = ["run_tiled"]
