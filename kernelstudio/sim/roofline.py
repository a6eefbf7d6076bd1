"""The true roofline: what no schedule of a kernel can beat on its chip.

    bound = max(cube flops / cube peak, vector elements / vector peak, compulsory bytes / memory bandwidth)

Compulsory bytes read each GM input of the program once (in the first kernel that reads it) and
write each GM output once (in the kernel that writes it); intermediates and workspaces are not
compulsory (a better plan keeps them on chip or in L2). Peaks are the whole chip's: every AI core's
cube (profile.peak_flops) and every vector core at one 256-byte repeat per cycle. Efficiency is the
bound over the simulated time, so a schedule that moves more than it must shows as traffic
amplification (moved GM bytes / compulsory bytes), never as efficiency.

Memory bandwidth: compulsory bytes go through HBM, except those the run finds in L2 or leaves there
(a warm start's resident inputs, outputs the write-back L2 keeps; sim/l2.py): as many compulsory bytes
as the kernel moved through HBM count at HBM's rate, the rest at the chip's fastest L2 rate, the two
memories working side by side."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.dtypes import repeat_elems
from ..tileir.program import Copy, Program, walk

__all__ = ["KernelRoofline", "compulsory_bytes", "kernel_roofline"]


def compulsory_bytes(prog: Program) -> list[tuple[int, int]]:
    """Per kernel: (compulsory read bytes, compulsory write bytes)."""
    seen: set[str] = set()
    out = []
    for k in prog.kernels:
        read = written = 0
        reads, writes = _gm_tensors(k)
        for name in reads:
            t = prog.tensor(name)
            if t.role == "input" and name not in seen:
                seen.add(name)
                read += t.nbytes
        for name in writes:
            t = prog.tensor(name)
            if t.role == "output":
                written += t.nbytes
            elif t.role == "input" and name in prog.outputs:  # updated in place: the rows the kernel writes
                written += k.inplace_bytes
        out.append((read, written))
    return out


def _gm_tensors(kernel) -> tuple[list[str], list[str]]:
    reads: list[str] = []
    writes: list[str] = []
    for s in walk(kernel.aic + kernel.aiv):
        if isinstance(s, Copy):
            if s.src.gm and s.src.buf not in reads:
                reads.append(s.src.buf)
            if s.dst.gm and s.dst.buf not in writes:
                writes.append(s.dst.buf)
    return reads, writes


@dataclass(frozen=True, slots=True)
class KernelRoofline:
    """One kernel's bound and its three terms (us), and its compulsory bytes."""

    bound_us: float
    cube_us: float
    vector_us: float
    memory_us: float
    compulsory_bytes: int

    @property
    def limiter(self) -> str:
        """Which ceiling the bound is: "cube", "vector" or "memory"."""
        terms = {"cube": self.cube_us, "vector": self.vector_us, "memory": self.memory_us}
        return max(terms, key=terms.get)


def kernel_roofline(profile, per_sid: np.ndarray, kind: np.ndarray, dtypes: list[str],
                    compulsory: tuple[int, int], hbm_bytes: float | None = None) -> KernelRoofline:
    """Bound of one kernel from its per-instruction flops (column 1 of per_sid) and compulsory bytes;
    `hbm_bytes`: what the kernel moved through HBM (None: every compulsory byte did)."""
    cube_us = 0.0
    vec_elems_cycles = 0.0
    for sid in np.nonzero(per_sid[:, 1])[0]:
        work = float(per_sid[sid, 1])
        if kind[sid] == "mmad":
            cube_us += work / (profile.peak_flops(dtypes[sid]) / 1e6)
        elif kind[sid] in ("vec", "vcall", "reduce", "topk", "mrgsort"):
            vec_elems_cycles += work / (repeat_elems(dtypes[sid]))
    vector_us = vec_elems_cycles / max(profile.aiv_cores, 1) / profile.clock_mhz
    nbytes = compulsory[0] + compulsory[1]
    via_hbm = nbytes if hbm_bytes is None else min(float(nbytes), hbm_bytes)
    l2_rate = max(profile.l2_read_bytes_per_cycle, profile.l2_write_bytes_per_cycle) * profile.aic_cores \
        * profile.clock_hz
    memory_us = max(via_hbm / profile.hbm_bytes_per_s, (nbytes - via_hbm) / l2_rate) * 1e6
    return KernelRoofline(max(cube_us, vector_us, memory_us), cube_us, vector_us, memory_us, nbytes)
