"""Run an MC2 design's tiles and its collectives' steps on data, in NumPy: what the timeline times, done.

Each tile's matmul runs on every rank; its collective runs step by step as the chosen algorithm does
(mesh: every rank sends chunk j to rank j, then every reduced chunk to every rank; ring: p - 1 steps to
the next rank per phase). The result must equal the reference (golden.py), and the bytes each step puts
on a link must equal what the timeline charges for it (algorithms.py): a test keeps both so.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.dtypes import itemsize, round_to

__all__ = ["run_tiled", "reduce_scatter", "all_gather"]


def reduce_scatter(chunks: list[list[np.ndarray]], algorithm: str,
                   itemsize: int = 4) -> tuple[list[np.ndarray], list[int]]:
    """chunks[r][j]: rank r's part j. Returns rank j's sum over ranks of part j (float32) and the bytes
    one link carries in each step (elements x `itemsize`: the dtype on the wire)."""
    p = len(chunks)
    if p == 1:
        return [chunks[0][0].astype(np.float32)], []
    acc = [[c.astype(np.float32) for c in row] for row in chunks]
    if algorithm == "mesh":  # one step: rank r sends part j to rank j, which adds them up
        out = [sum((acc[r][j] for r in range(p)), np.zeros_like(acc[0][j])) for j in range(p)]
        return out, [max(c.size for row in chunks for c in row) * itemsize]
    steps = []
    for s in range(p - 1):  # rank r passes its running part (r - s - 1) mod p to rank r + 1
        sends = [(r, (r - s - 1) % p, acc[r][(r - s - 1) % p]) for r in range(p)]
        steps.append(max(chunks[r][j].size for r, j, _ in sends) * itemsize)
        for r, j, data in sends:
            dst = (r + 1) % p
            acc[dst][j] = data + acc[dst][j]
    return [acc[j][j] for j in range(p)], steps


def all_gather(parts: list[np.ndarray], algorithm: str,
               itemsize: int = 4) -> tuple[list[list[np.ndarray]], list[int]]:
    """parts[r]: rank r's part. Returns every rank's list of all parts (rank order) and the bytes one
    link carries in each step (elements x `itemsize`)."""
    p = len(parts)
    have: list[dict[int, np.ndarray]] = [{r: parts[r]} for r in range(p)]
    if p == 1:
        return [[parts[0]]], []
    if algorithm == "mesh":  # one step: every rank sends its part to every other rank
        for r in range(p):
            have[r].update({j: parts[j] for j in range(p)})
        steps = [max(x.size for x in parts) * itemsize]
    else:
        steps = []
        for s in range(p - 1):  # rank r passes part (r - s) mod p, which it holds by now, to rank r + 1
            sends = [(r, (r - s) % p) for r in range(p)]
            steps.append(max(have[r][j].size for r, j in sends) * itemsize)
            for r, j in sends:
                have[(r + 1) % p][j] = have[r][j]
    return [[have[r][j] for j in range(p)] for r in range(p)], steps


def _rows(design: Any) -> list[tuple[int, int]]:
    out, r0 = [], 0
    for rows in design.tile_rows:
        out.append((r0, rows))
        r0 += rows
    return out


def run_tiled(design: Any, inputs: dict[str, np.ndarray]) -> tuple[object, list[list[int]]]:
    """The outputs of `design` (an Mc2Design; the form its `evaluate` returns) computed tile by tile
    through the algorithm's steps, and the bytes per link of every step of every tile's collective."""
    arr = {k: np.asarray(v) for k, v in inputs.items()}
    d, dt, p = design, design.dtype, design.cluster.devices
    isz = itemsize(dt)
    x = arr[d.x.name].reshape(p, d.m, d.k).astype(np.float32)
    w = arr[d.w.name].astype(np.float32)
    bias = arr[d.bias.name].astype(np.float32) if d.bias is not None else None
    alg = d.schedule.algorithm
    traffic: list[list[int]] = []

    def stored(a: np.ndarray) -> np.ndarray:  # what a rank writes to GM in the operator's dtype
        return round_to(dt, a).astype(np.float32)

    if d.kind == "all_gather_matmul":
        gathered = np.zeros((p, p * d.m, d.k), np.float32)
        for r in range(p):
            gathered[r, r * d.m:(r + 1) * d.m] = x[r]
        for r0, rows in _rows(d):
            got, steps = all_gather([x[r, r0:r0 + rows] for r in range(p)], alg, isz)
            traffic.append(steps)
            for r in range(p):
                for j, part in enumerate(got[r]):
                    gathered[r, j * d.m + r0:j * d.m + r0 + rows] = part
        out = np.matmul(gathered, w)
        if bias is not None:
            out = out + bias
        return (round_to(dt, out), round_to(dt, gathered)), traffic

    blocks = p if d.kind == "matmul_reduce_scatter" else 1
    span = d.m // blocks
    result = np.zeros((p, d.m, d.n), np.float32)
    for r0, rows in _rows(d):
        idx = np.concatenate([np.arange(b * span + r0, b * span + r0 + rows) for b in range(blocks)])
        partial = [stored(x[r, idx] @ w[r]) for r in range(p)]  # (blocks x rows, n) per rank
        if d.kind == "matmul_reduce_scatter":
            parts = [list(pr.reshape(p, rows, d.n)) for pr in partial]
            summed, steps = reduce_scatter(parts, alg, isz)
            for j in range(p):
                result[j, j * span + r0:j * span + r0 + rows] = summed[j]
        else:
            parts = [np.array_split(pr.reshape(-1), p) for pr in partial]
            summed, rs = reduce_scatter(parts, alg, isz)
            full, ag = all_gather(summed, alg, isz)
            steps = rs + ag
            for r in range(p):
                result[r, r0:r0 + rows] = np.concatenate(full[r]).reshape(rows, d.n)
        traffic.append(steps)
    if bias is not None:
        result = result + bias
    result = stored(result)
    if d.kind == "matmul_reduce_scatter":
        return round_to(dt, np.stack([result[j, j * span:(j + 1) * span] for j in range(p)])), traffic
    y = result
    if d.add is not None:
        y = stored(y + arr[d.add.name].reshape(d.m, d.n).astype(np.float32))
    if d.norm:
        y = y / np.sqrt(np.mean(y * y, axis=-1, keepdims=True, dtype=np.float32) + np.float32(d.eps))
        if d.gamma is not None:
            y = y * arr[d.gamma.name].astype(np.float32)
    return round_to(dt, y).reshape(p, *d.out_shape), traffic
