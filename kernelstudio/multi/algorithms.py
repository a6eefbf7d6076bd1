"""The steps of HCCL's collectives per algorithm (hicann/hccl coll_algo_intro), on a Link.

A collective over p devices of n bytes (the tensor every rank holds for an AllReduce, the gathered
output for an AllGather, every rank's input for a ReduceScatter) is a list of steps; every step costs
alpha + (bytes on one link) x beta + (bytes reduced) x gamma. Summed, they are HCCL's formulas:
mesh AllReduce 2a + (2/p) n b + ((p-1)/p) n g; ring AllReduce 2(p-1) a + 2((p-1)/p) n b + ((p-1)/p) n g.
"""

from __future__ import annotations

from dataclasses import dataclass

from .link import Link

__all__ = ["Step", "COLLECTIVES", "collective_steps"]

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter")


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a collective: its phase, the bytes each link carries and the bytes this rank reduces."""

    phase: str  # "reduce_scatter" | "all_gather"
    link_bytes: float
    reduce_bytes: float
    us: float


def _step(phase: str, link_bytes: float, reduce_bytes: float, abg: tuple[float, float, float]) -> Step:
    alpha, beta, gamma = abg
    return Step(phase, link_bytes, reduce_bytes, alpha + link_bytes * beta + reduce_bytes * gamma)


def collective_steps(kind: str, algorithm: str, nbytes: float, devices: int, link: Link) -> tuple[Step, ...]:
    """The steps of collective `kind` of `nbytes` over `devices` ranks (none on one device)."""
    p = devices
    if p == 1 or nbytes <= 0:
        return ()
    abg = link.params(algorithm)
    chunk = nbytes / p
    if algorithm == "mesh":  # every peer at once: one step per phase
        rs = _step("reduce_scatter", chunk, (p - 1) * chunk, abg)
        ag = _step("all_gather", chunk, 0.0, abg)
        phases = {"all_reduce": (rs, ag), "reduce_scatter": (rs,), "all_gather": (ag,)}
        return phases[kind]
    rs = _step("reduce_scatter", chunk, chunk, abg)  # ring: p-1 steps per phase, one chunk each
    ag = _step("all_gather", chunk, 0.0, abg)
    phases = {"all_reduce": (rs,) * (p - 1) + (ag,) * (p - 1), "reduce_scatter": (rs,) * (p - 1),
              "all_gather": (ag,) * (p - 1)}
    return phases[kind]
