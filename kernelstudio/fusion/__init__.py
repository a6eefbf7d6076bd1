"""The fusion pass: partition a graph into kernels of three families (vector, cube, cube_vector) by rules kept as
data (rules.py), and the precision facts of a fused kernel (precision.py).

Stage 3. It may import core/ and ir/; dsl/ is its sibling and neither imports the other.
"""
