"""Merge several programs into one (names prefixed), so many random cases share one twin binary."""

from __future__ import annotations

import dataclasses

from kernelstudio.tileir.program import GmTensor, Program, Region


def _rename(obj: object, names: dict[str, str]) -> object:
    if isinstance(obj, Region):
        return dataclasses.replace(obj, buf=names[obj.buf]) if obj.gm else obj
    if isinstance(obj, tuple):
        return tuple(_rename(x, names) for x in obj)
    if dataclasses.is_dataclass(obj) and type(obj).__module__.startswith("kernelstudio.tileir"):
        changes = {f.name: _rename(getattr(obj, f.name), names) for f in dataclasses.fields(obj)
                   if isinstance(getattr(obj, f.name), (tuple, Region)) or dataclasses.is_dataclass(
                       getattr(obj, f.name))}
        return dataclasses.replace(obj, **changes)
    return obj


def prefixed(prog: Program, prefix: str) -> Program:
    """`prog` with every GM tensor and kernel name prefixed."""
    names = {t.name: prefix + t.name for t in prog.tensors}
    tensors = tuple(GmTensor(names[t.name], t.shape, t.dtype, t.role, t.format) for t in prog.tensors)
    kernels = []
    for k in prog.kernels:
        kernels.append(dataclasses.replace(
            k, name=prefix + k.name, params=tuple(names[p] for p in k.params),
            aic=_rename(k.aic, names), aiv=_rename(k.aiv, names)))
    return Program(prefix + prog.name, prog.target, tensors, tuple(kernels),
                   tuple(names[n] for n in prog.inputs), tuple(names[n] for n in prog.outputs), prog.fused)


def merge(progs: list[Program], name: str = "cases") -> Program:
    """One program launching every kernel of `progs` in order (case i's names start with `c<i>_`)."""
    parts = [prefixed(p, f"c{i}_") for i, p in enumerate(progs)]
    return Program(name, parts[0].target, tuple(t for p in parts for t in p.tensors),
                   tuple(k for p in parts for k in p.kernels), tuple(n for p in parts for n in p.inputs),
                   tuple(n for p in parts for n in p.outputs), fused=False)

