"""One generated operator for a DynamicKernel: each bucket's kernel under `TILING_KEY_IS(key)`, and a
TilingFunc that picks the key from the run-time row count (`DynamicKernel.codegen`).

It covers designs that lower to one kernel taking its rows at run time (`Kernel.runtime_rows`): a row-tiled
vector kernel (softmax, layer_norm, rms_norm, elementwise chains), a matmul kernel with or without its
epilogue (M at run time) or a conv kernel (its batch; see the README's limits), swept along the dimension that
is the kernel's row count, with the build function's other dimensions fixed. Each bucket keeps its own tuned
configuration (tiles, L1 steps, cores, double buffering, ...): its kernel class lives in a namespace of its
own in `op_kernel/<op>.cpp`, TilingFunc maps row ranges to keys and fills each key's tiling (a matmul's
TCubeTiling and workspace included); the tiling struct holds every bucket's fields. The ranges come from the
buckets' predicates evaluated at every row count from 1 to `probe` (65,536 by default); past it, the last
range goes on.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.errors import UnsupportedError
from .errors import TuneError

if TYPE_CHECKING:
    from ..codegen.bundle import CodeBundle
    from ..tileir.program import Kernel, Program

__all__ = ["KeyRange", "row_ranges", "dynamic_bundle", "dynamic_parts", "PROBE", "MAX_PROBE"]

PROBE = 1 << 16
MAX_PROBE = 1 << 20  # predicate calls codegen makes at most (one per row count)
MAX_RANGES = 64
UNTUNED = "untuned (the knobs' defaults)"


@dataclass(frozen=True)
class KeyRange:
    """Rows `lo..hi` (inclusive) run bucket `bucket`, whose kernel is under TILING_KEY_IS(`key`)."""

    bucket: str
    key: int
    lo: int
    hi: int


def row_ranges(dk: Any, dim: str, fixed: Mapping[str, int], probe: int = PROBE) -> list[KeyRange]:
    """The buckets along `dim` = 1..probe with the other dimensions `fixed`, as ranges with their keys (one
    key per bucket, in the order the buckets are listed). `dk` is a DynamicKernel (typed loosely: dynamic.py
    calls this module)."""
    order = {b.name: i for i, b in enumerate(dk.buckets)}
    ranges: list[list[Any]] = []
    for r in range(1, probe + 1):
        b = dk.bucket_of(**{**fixed, dim: r})
        if ranges and ranges[-1][0] == b:
            ranges[-1][2] = r
        else:
            ranges.append([b, r, r])
    return [KeyRange(b, order[b], lo, hi) for b, lo, hi in ranges]


def _kernel(prog: Program, bucket: str, shape: Mapping[str, int]) -> Kernel:
    from ..codegen.scope import runtime_rows

    if runtime_rows(prog) is None:
        what = (f"{len(prog.kernels)} kernels" if len(prog.kernels) != 1 else
                f"kernel {prog.kernels[0].name} ({prog.kernels[0].family}), which holds its rows as literals")
        raise UnsupportedError(
            f"DynamicKernel.codegen: bucket {bucket} at {dict(shape)} lowers to {what}; one generated kernel "
            "with tiling keys covers designs of one kernel that takes its rows at run time (a row-tiled vector "
            "kernel, a matmul with its epilogue whose rows are A's, or a conv along its batch; see the README's "
            "limits); build the other buckets' designs with dk.design(...) instead")
    return prog.kernels[0]


def dynamic_bundle(dk: Any, dim: str, fixed: Mapping[str, int], probe: int = PROBE) -> CodeBundle:
    """See `DynamicKernel.codegen`."""
    return dynamic_parts(dk, dim, fixed, probe)[1]


def dynamic_parts(dk: Any, dim: str, fixed: Mapping[str, int],
                  probe: int = PROBE) -> tuple[Program, CodeBundle, list[str]]:
    """`dynamic_bundle`'s bundle with the first bucket's program (the operator's interface) and one line per
    key (its bucket, row ranges and configuration)."""
    from ..codegen import codegen
    from ..codegen.bundle import CodeBundle
    from ..codegen.kernel import kernel_text, launch_lines
    from ..codegen.naming import names_of
    from ..codegen.tiling_func import cube_fill, host_source, tile_lines, workspace_expr
    from ..codegen.tiling_header import tiling_header, tiling_values
    from ..codegen.writer import camel

    if dim not in dk.dims:
        raise TuneError(f"DynamicKernel.codegen: {dim!r} is not a dimension of {dk.name} (it has {list(dk.dims)})")
    rest = [d for d in dk.dims if d != dim]
    missing = [d for d in rest if d not in fixed]
    unknown = sorted(set(fixed) - set(rest))
    if missing or unknown:
        raise TuneError(f"DynamicKernel.codegen: give every dimension but {dim!r} a value ("
                        + (f"missing {missing}" if missing else f"{unknown} are not fixed dimensions") + "), e.g. "
                        + ", ".join(f"{d}=64" for d in rest))
    fixed = {d: v for d, v in dk._shape({**fixed, dim: 1}, "DynamicKernel.codegen").items() if d != dim}
    ranges = row_ranges(dk, dim, fixed, probe)
    if len(ranges) > MAX_RANGES:
        raise UnsupportedError(f"DynamicKernel.codegen: the buckets change {len(ranges) - 1} times along {dim} = "
                               f"1..{probe}; one operator picks its key from at most {MAX_RANGES} ranges of rows, so "
                               "give buckets that hold ranges of the row count (e.g. lambda **d: d['m'] <= 64)")
    designs: dict[str, Any] = {}
    for r in ranges:
        if r.bucket in designs:
            continue
        ex = dk.examples.get(r.bucket)  # built at its tuning example, else at its range's row count nearest 64
        at = ex[dim] if ex and all(ex[d] == fixed[d] for d in rest) and r.lo <= ex[dim] <= r.hi else \
            min(r.hi, max(r.lo, 64))
        shape = {**fixed, dim: at}
        d = dk.design(**shape)
        k = _kernel(d.program, r.bucket, shape)
        assert k.runtime_rows is not None
        # the row count must follow the swept dim (checked at two values: one may match by chance)
        nxt = dk.design_with(dk.configs.get(r.bucket, {}), **{**shape, dim: at + 1}).program.kernels[0]
        got = (dict(k.tiling)[k.runtime_rows.rows], dict(nxt.tiling).get(k.runtime_rows.rows))
        if got != (at, at + 1):
            raise UnsupportedError(f"DynamicKernel.codegen: at {dim}={at} and {at + 1} the kernel has {got[0]} and "
                                   f"{got[1]} rows; the swept dimension must be the kernel's row count")
        designs[r.bucket] = d
    first = designs[ranges[0].bucket]
    prog0, k0 = first.program, first.program.kernels[0]
    for b, d in designs.items():
        k = d.program.kernels[0]
        same = (k.params == k0.params and k.kernel_type == k0.kernel_type
                and k.runtime_rows.rows == k0.runtime_rows.rows  # type: ignore[union-attr]
                and names_of(d.program, k).op_type == names_of(prog0, k0).op_type
                and [(t.name, t.dtype) for t in d.program.tensors] == [(t.name, t.dtype) for t in prog0.tensors])
        if not same:
            raise UnsupportedError(f"DynamicKernel.codegen: bucket {b}'s kernel has other parameters or another kernel "
                                   f"type than bucket {ranges[0].bucket}'s; one operator needs the same interface")
    # one tiling struct for every key: the first bucket's fields, then any other bucket's own (a key leaves
    # the fields of other buckets at 0)
    merged = dict(k0.tiling)
    for d in designs.values():
        for f, v in d.program.kernels[0].tiling:
            merged.setdefault(f, v)
    names = names_of(prog0, k0)
    texts = {b: kernel_text(d.program, d.program.kernels[0]) for b, d in designs.items()}
    span = {b: [f"{r.lo}..{r.hi}" + ("+" if r.hi == probe else "") for r in ranges if r.bucket == b] for b in designs}
    lines = [f"// {names.op_type}: {dk.name} over {dim} at run time ({', '.join(f'{k}={v}' for k, v in fixed.items())}"
             f"), one kernel class per shape bucket, chosen by the tiling key.",
             *(f"//   key {_key(ranges, b)}: bucket {b}, {dim} in {', '.join(span[b])}, configuration "
               f"{dk.configs.get(b, UNTUNED)}" for b in designs)]
    head = texts[ranges[0].bucket].head
    head = "\n".join(lines) + "\n" + head[head.index("\n#") + 1:]  # its defines and includes
    body = "".join(f"namespace ks_{b} {{  // bucket {b}\n{texts[b].body}}}  // namespace ks_{b}\n\n" for b in designs)
    entry = texts[ranges[0].bucket].entry.splitlines()
    start = next(i for i, line in enumerate(entry) if line.strip().startswith(f"{names.cls} op;"))
    branches = []
    for i, b in enumerate(designs):
        branches.append(f"    {'if' if i == 0 else '} else if'} (TILING_KEY_IS({_key(ranges, b)})) {{  // {b}: "
                        f"{dim} in {', '.join(span[b])}")
        branches += [f"        {line}" for line in launch_lines(designs[b].program, designs[b].program.kernels[0],
                                                               f"ks_{b}::{names.cls}")]
    branches.append("    }")
    kernel_file = "\n".join([*entry[:start], *branches, *entry[start + 3:]]) + "\n"

    def keyed(w: Any, var: str) -> None:
        w("uint64_t key = 0;", *(["uint32_t rowTiles = 0;"] if k0.runtime_rows.row_tiles else []),  # type: ignore
          "uint32_t tiles = 0;", "uint32_t blockDim = 0;", "size_t wsBytes = 0;")
        for i, r in enumerate(ranges):
            p = designs[r.bucket].program
            k = p.kernels[0]
            rt = k.runtime_rows
            assert rt is not None
            last = i == len(ranges) - 1
            w(f"{'} else ' if i else ''}{'' if last else f'if (rows <= {r.hi}) '}{{  // bucket {r.bucket}: "
              f"{dim} {r.lo}..{r.hi}" + ("+" if last else ""))
            with w.indented():
                w(f"key = {r.key};", *tile_lines("", dict(k.tiling).get(rt.tile, 1), rt.cores, rt))
                w(f"wsBytes = {workspace_expr(p, k, rt)};")
                for f, v in k.tiling:
                    if f not in rt.names:
                        w(f"{var}.set_{camel(f)}({v});")
                cube = tiling_values(p, k)[1]
                if cube:
                    cube_fill(w, var, p, k, cube, runtime=True)
        w("}")

    bundle = codegen(prog0)
    files = dict(bundle.files)
    files[names.kernel_file] = head + body + kernel_file
    files[names.host_file] = host_source(prog0, k0, keyed=keyed)
    files[names.tiling_file] = tiling_header(prog0, dataclasses.replace(k0, tiling=tuple(merged.items())))
    return prog0, CodeBundle(name=bundle.name, files=files, inputs=bundle.inputs, outputs=bundle.outputs,
                             target=bundle.target, profile=bundle.profile,
                             workspace_bytes=bundle.workspace_bytes), [line.removeprefix("//   ") for line in lines[1:]]


def _key(ranges: list[KeyRange], bucket: str) -> int:
    return next(r.key for r in ranges if r.bucket == bucket)
