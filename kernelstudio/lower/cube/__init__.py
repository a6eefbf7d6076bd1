"""Cube lowering: a matmul/conv-rooted kernel (cube or cube_vector) as TileIR. `CubeShape` (shape.py) is the
matmul view every part reads; kernel.py builds the kernel, groups.py its L1-resident C-tile groups and
k loops, epilogue.py the AIV epilogue of a mixed kernel."""
