"""`kernelstudio` command line: build a kernel design file into Ascend C, list hardware targets.

    kernelstudio build FILE.py --target ascend910b2 --out DIR [--no-fuse]
    kernelstudio targets

FILE.py defines the graph with the DSL (``import kernelstudio as ks``) and either sets a
module-level ``out`` tensor or defines ``build()`` returning the output tensor (or a Schedule, to
choose tiles and cores). `build` writes the CANN project (op_host/, op_kernel/, main.cpp, CMake,
msOpGen JSON, README), ``report.txt`` (program, kernels, simulated time when the simulator is
installed) and ``trace.json`` (Chrome trace) when the simulator is available.
"""

from __future__ import annotations

import argparse
import runpy
import sys
from pathlib import Path
from typing import Any

from .errors import InputError, KernelStudioError

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, no usage dump
        raise _UsageError(message)


class _UsageError(Exception):
    pass


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="kernelstudio", description="Design fused Cube+Vector operators for Ascend NPUs.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    b = sub.add_parser("build", help="lower a design file and write its Ascend C project")
    b.add_argument("file", help="Python file that sets `out` or defines build()")
    b.add_argument("--target", default="ascend910b2", help="hardware profile (see `kernelstudio targets`)")
    b.add_argument("--out", required=True, help="output directory")
    b.add_argument("--no-fuse", action="store_true", help="build the unfused baseline (one kernel per op)")
    sub.add_parser("targets", help="list the hardware profiles")
    return p


def load_design(path: Path) -> Any:
    """The output tensor (or Schedule) a design file defines."""
    if not path.is_file():
        raise InputError(f"design file {path} does not exist")
    try:
        ns = runpy.run_path(str(path), run_name="__kernelstudio__")
        design = ns["build"]() if callable(ns.get("build")) else None
    except KernelStudioError:
        raise
    except Exception as e:  # the user's file: report it in one line
        raise InputError(f"{path} failed: {type(e).__name__}: {e}") from e
    if design is not None:
        return design
    if "out" in ns:
        return ns["out"]
    raise InputError(f"{path} defines neither `out` nor build(); set `out = <output tensor>` at module level")


def _schedule(design: Any, fuse: bool) -> Any:
    import kernelstudio as ks

    if isinstance(design, ks.Schedule):
        return design
    if isinstance(design, ks.Tensor):
        return ks.create_schedule(design, fuse=fuse)
    raise InputError(f"the design gave a {type(design).__name__}; expected a kernelstudio Tensor or Schedule")


def _simulate(prog: Any, out: Path) -> list[str]:
    """Simulated time and a Chrome trace when the simulator is installed; a note otherwise."""
    try:
        import kernelstudio as ks

        simulate = ks.simulate
    except (ImportError, AttributeError):
        return ["simulation: skipped (the simulator is not available in this installation)"]
    sim = simulate(prog)
    sim.to_chrome_trace(str(out / "trace.json"))
    return [f"simulated time: {sim.time_us:.2f} us", "trace: trace.json (open in Perfetto or chrome://tracing)"]


def build(file: str, target: str, out_dir: str, fuse: bool = True) -> Path:
    """Lower the design in `file` for `target` and write code, report and trace into `out_dir`."""
    import kernelstudio as ks
    from kernelstudio.codegen import export_project

    sched = _schedule(load_design(Path(file)), fuse)
    prog = ks.lower(sched, target=target)
    out = export_project(prog, out_dir)
    lines = [f"kernelstudio build of {prog.name} for {target} ({'fused' if prog.fused else 'unfused'})", ""]
    for k in prog.kernels:
        lines.append(f"kernel {k.name}: {k.family}, {k.kernel_type}, block_dim {k.block_dim}, "
                     f"ops {', '.join(k.ops) or '-'}")
    lines += ["", *_simulate(prog, out), "", ks.format_program(prog)]
    (out / "report.txt").write_text("\n".join(lines) + "\n")
    return out


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `kernelstudio` script; returns the exit code."""
    try:
        args = _parser().parse_args(argv)
    except _UsageError as e:
        print(f"kernelstudio: error: {e}", file=sys.stderr)
        return 2
    try:
        if args.command == "targets":
            from . import hw

            for name in hw.names():
                print(name)
            return 0
        out = build(args.file, args.target, args.out, fuse=not args.no_fuse)
        print(f"wrote {out}")
        return 0
    except KernelStudioError as e:
        print(f"kernelstudio: error: {str(e).splitlines()[0]}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
