"""Run an MC2 design's generated code on the CPU twin: every device a process, joined by the twin's
in-memory HCCL, each computing its tiles on real data (ks.multi.run_twin)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..core.checks import check_inputs
from ..core.errors import InputError
from .codegen import Mc2Code, codegen
from .design import Mc2Design

__all__ = ["run_twin"]


def _stacked(design: Mc2Design, inputs: Any) -> dict[str, np.ndarray]:
    """The inputs as `evaluate` takes them (x and w with a leading device axis), from that form or from a
    list of one dict per rank."""
    p = design.cluster.devices
    if isinstance(inputs, Mapping):
        return design._checked(inputs, "run_twin")
    if not isinstance(inputs, Sequence) or isinstance(inputs, (str, bytes)):
        raise InputError(f"ks.multi.run_twin: inputs must be a dict (x and w with a leading axis of {p} devices, "
                         f"as evaluate takes them) or a list of {p} dicts, one per rank; got {type(inputs).__name__}")
    if len(inputs) != p:
        raise InputError(f"ks.multi.run_twin: {len(inputs)} per-rank input dict(s) for a cluster of {p} devices; "
                         f"pass one dict per rank ({design.x.name} {list(design.x.shape)}, {design.w.name} "
                         f"{list(design.w.shape)}{_side_text(design)}), in rank order, or one dict with a leading "
                         "device axis")
    spec = [(t.name, t.shape, design.dtype) for t in (design.x, design.w, design.bias, design.add, design.gamma)
            if t is not None]
    ranks = []
    for r, rank_inputs in enumerate(inputs):
        try:
            ranks.append(check_inputs(f"ks.multi.run_twin (rank {r})", spec, rank_inputs))
        except InputError as e:
            raise InputError(f"{e}; rank {r}'s dict holds that rank's tensors") from None
    out = {n: np.stack([a[n] for a in ranks]) for n, _, _ in spec[:2]}
    for n, _, _ in spec[2:]:  # bias, add, gamma: one tensor for all ranks (evaluate's form); rank 0's is taken
        if any(not np.array_equal(a[n], ranks[0][n]) for a in ranks):
            raise InputError(f"ks.multi.run_twin: {n} differs between the ranks' dicts; it is one tensor for every "
                             "device (as evaluate takes it): pass the same array to each rank")
        out[n] = ranks[0][n]
    return out


def _side_text(design: Mc2Design) -> str:
    return "".join(f", {t.name} {list(t.shape)}" for t in (design.bias, design.add, design.gamma) if t is not None)


def run_twin(design: Mc2Design, inputs: Any, *, code: Mc2Code | None = None, keep_dir: str | None = None,
             cache_dir: str | os.PathLike[str] | None = None, timeout_s: float = 120.0,
             hccl_timeout_s: float = 30.0) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Compile the design's generated code (`ks.multi.codegen`, or `code`) with the twin and run one process
    per device on the twin's in-memory HCCL. Returns what `design.evaluate` returns, from the twin: the
    outputs of every rank with a leading device axis (AllGatherMatmul: (y, gathered x)). `inputs` as
    `evaluate` takes them, or a list of one dict per rank."""
    from ..twin.ranks import run_ranks

    if not isinstance(design, Mc2Design):
        from ..core.errors import StageError

        raise StageError(f"ks.multi.run_twin takes an MC2 design (ks.multi.matmul_allreduce, ...), got "
                         f"{type(design).__name__}")
    arr = _stacked(design, inputs)
    code = codegen(design) if code is None else code
    if not isinstance(code, Mc2Code) or code.devices != design.cluster.devices:
        raise InputError(f"ks.multi.run_twin: code must be ks.multi.codegen of this design ({design.cluster.devices} "
                         "devices)")
    p, d = design.cluster.devices, design
    sides = {t.name: arr[t.name].reshape(d.m, d.n) if t is d.add else arr[t.name]
             for t in (d.bias, d.add, d.gamma) if t is not None}
    per_rank = [{d.x.name: arr[d.x.name][r].reshape(d.m, d.k), d.w.name: arr[d.w.name][r], **sides}
                for r in range(p)]
    outs = run_ranks(code, per_rank, keep_dir=keep_dir, cache_dir=cache_dir, timeout_s=timeout_s,
                     hccl_timeout_s=hccl_timeout_s)
    y = np.stack([o["y"] for o in outs])
    if d.kind == "all_gather_matmul":
        return y, np.stack([o["gather_out"] for o in outs])
    return y.reshape(p, *d.out_shape)
