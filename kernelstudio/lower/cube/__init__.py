"""Cube lowering: a matmul/conv-rooted kernel (cube or cube_vector) as TileIR. `CubeShape` (shape.py) is the
matmul view every part reads, with a C tile's row share over the vector cores; plan.py decides tiles, grid,
L1 level and buffers; k_loop.py writes one C tile's k loop, groups.py the L1-resident C-tile groups;
kernel.py walks the tiles and hands C to GM, a sync_all workspace or the AIV epilogue (epilogue.py).

Part of lower/ (stage 6): it may import core/, hw/, ir/, fusion/, schedule/, tileir/ and lower/.
"""
