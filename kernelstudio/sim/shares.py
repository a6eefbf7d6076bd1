"""Memory shares of one kernel's run: the time-averaged number of same-memory moves in flight during each
static GM move, per wave and over all its executions (multicore.py's module doc says how they price moves).

Kernels run one after another, so a kernel's shares read its own run alone: multicore.py computes them once
per run (and memories of its GM moves) and places them at the program's sids.
"""

from __future__ import annotations

import numpy as np

from .events import EVENT_COLUMNS

__all__ = ["MEMORY_CODES", "kernel_shares", "round_share"]

MEMORY_CODES = {"hbm": 1, "l2": 2, "l2w": 3}  # costs.memory_kind -> the code `kernel_shares` reads in its lut


def round_share(x: float) -> float:
    """A share to 9 significant digits: waves whose shares differ only by rounding noise of the
    time integrals (far below the 1% convergence tolerance) price identically and share a class."""
    return float(f"{x:.9g}")


def kernel_shares(ks, lut: np.ndarray) -> tuple[dict[tuple[int, int], float], dict[int, float]]:
    """For a kernel's run `ks` (multicore._KernelSim) and `lut` (its sid -> MEMORY_CODES value, 0 for no GM move):
    the share of each (sid, wave) and of each sid over all its executions. Blocks of one class starting at the
    same time have identical moves: they count once, weighted."""
    per_wave: dict[tuple[int, int], float] = {}
    overall: dict[int, float] = {}
    groups: dict[tuple[int, float, int], int] = {}
    for b, rep in enumerate(ks.rep_of):
        key = (rep, ks.starts[b], ks.waves[b])
        groups[key] = groups.get(key, 0) + 1
    nwaves = max(ks.waves, default=0) + 1
    gm_rows = {}
    present: set[int] = set()  # the memories some move with a duration is on
    for rep, (_, arrays, _, _) in ks.sim.items():
        parts = [a[lut[a[:, 3].astype(np.int64)] > 0] for a in arrays if len(a)]
        a = np.concatenate(parts) if parts else np.empty((0, len(EVENT_COLUMNS)))
        code = lut[a[:, 3].astype(np.int64)]
        timed = a[:, 1] > a[:, 0]
        present.update(np.unique(code[timed]).tolist())
        gm_rows[rep] = (a, code, timed)
    for kind in (1, 2, 3):
        if kind not in present:
            continue
        ss, ee, ids, ws = [], [], [], []
        for (rep, start, wave), count in groups.items():
            a, code, timed = gm_rows[rep]
            m = (code == kind) & timed
            if m.any():
                ss.append(a[m, 0] + start)
                ee.append(a[m, 1] + start)
                ids.append(a[m, 3].astype(np.int64) * nwaves + wave)
                ws.append(np.full(int(m.sum()), float(count)))
        if not ss:
            continue
        s, e, idx, w = (np.concatenate(x) for x in (ss, ee, ids, ws))
        b = np.concatenate([s, e])
        d = np.concatenate([w, -w])
        order = np.argsort(b, kind="stable")
        b, d = b[order], d[order]
        cover = np.cumsum(d)
        f = np.concatenate([[0.0], np.cumsum(cover[:-1] * np.diff(b))])
        integral = np.interp(e, b, f) - np.interp(s, b, f)
        num = np.bincount(idx, weights=integral * w)
        den = np.bincount(idx, weights=(e - s) * w)
        for i in np.nonzero(den)[0]:
            per_wave[(int(i) // nwaves, int(i) % nwaves)] = max(1.0, round_share(num[i] / den[i]))
        sid = idx // nwaves
        num_s = np.bincount(sid, weights=integral * w)
        den_s = np.bincount(sid, weights=(e - s) * w)
        for i in np.nonzero(den_s)[0]:
            overall[int(i)] = max(1.0, float(num_s[i] / den_s[i]))
    return per_wave, overall
