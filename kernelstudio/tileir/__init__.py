"""The TileIR, the one contract between the front half and the three readers: the program's statements and buffers
(program.py), the hints the lowering leaves for the readers (hints.py), index expressions (expr.py), the
printer, and analyses of a program that more than one reader needs (vector-call expansion, scratch sizing, the
L2 tile walk).

Stage 5. It may import core/, hw/ and ir/.
"""
