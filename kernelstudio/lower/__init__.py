"""The named pass pipeline from a Schedule to a TileIR Program (pipeline.py), with per-family lowering: vector
kernels (families.py, vector_body.py), layout kernels (layout.py) and cube kernels (cube/).

Stage 6. It may import core/, hw/, ir/, fusion/, schedule/ and tileir/.
"""
