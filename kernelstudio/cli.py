"""`kernelstudio` command line: build a kernel design file into Ascend C, tune its knobs, list hardware targets.

    kernelstudio build FILE.py --target ascend910b2 --out DIR [--no-fuse] [--name NAME] [--high-level]
    kernelstudio tune FILE.py [--target T] [--budget N] [--strategy S] [--seed N] [--db F] [--save NAME]
                              [--out DIR]
    kernelstudio targets

FILE.py defines the graph with the DSL (``import kernelstudio as ks``) and either sets a
module-level ``out`` tensor or defines ``build()`` returning the output tensor (or a Schedule, to
choose tiles and cores). ``--no-fuse`` builds the unfused baseline (one kernel per op); for a design
that returns a Schedule it re-creates the unfused schedule of the same outputs, drops the design's
directives and fusion choices, and says so (on stdout and in report.txt). ``--high-level`` writes
kernels that are one softmax, layer_norm or rms_norm over whole rows with the Ascend C high-level API
(``ks.codegen(prog, high_level=True)``; other kernels keep basic instructions). `build` writes the CANN
project (op_host/, op_kernel/, main.cpp, CMake, msOpGen JSON, README; the operators are named after
``--name``, else the output tensor, see kernelstudio.codegen.naming), ``report.txt`` (program,
kernels and their operators, simulated time when the simulator is installed) and ``trace.json``
(Chrome trace) when the simulator is available. Re-running into the same directory replaces the
files an earlier build wrote there and refuses to touch any other.
A build that fails writes nothing: every file is computed first and written all together (see
`kernelstudio.core.files.write_tree`), and an output directory the command created is removed again.

Exit codes: 0 done; 1 the design or its build failed (the message says why, with FILE:LINE for an
error raised by the design file itself); 2 the command could not run (usage, an output path that
cannot be written, an unexpected internal error). No traceback is printed.
"""

from __future__ import annotations

import argparse
import json
import runpy
import sys
from pathlib import Path
from typing import Any

from .core.config import DEFAULT_TARGET
from .core.errors import InputError, KernelStudioError

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
    b.add_argument("--target", default=DEFAULT_TARGET, help="hardware profile (see `kernelstudio targets`)")
    b.add_argument("--out", required=True, help="output directory")
    b.add_argument("--no-fuse", action="store_true",
                   help="build the unfused baseline (one kernel per op); a design's own Schedule is replaced "
                        "by the unfused one of its outputs, its directives dropped")
    b.add_argument("--name", default=None,
                   help="the design's name: names the operator(s) and files (default: the output tensor's name)")
    b.add_argument("--high-level", action="store_true",
                   help="write kernels that are one softmax, layer_norm or rms_norm over whole rows with the Ascend C "
                        "high-level API (SoftMax, LayerNorm, RmsNorm) instead of basic vector instructions")
    t = sub.add_parser("tune", help="search the knobs a design file declares (ks.knob) for the fastest "
                                    "predicted time")
    t.add_argument("file", help="Python file that sets `out` or defines build(), declaring knobs with ks.knob")
    t.add_argument("--target", default=DEFAULT_TARGET, help="hardware profile (see `kernelstudio targets`)")
    t.add_argument("--budget", type=int, default=64, help="configurations to evaluate (default 64)")
    t.add_argument("--strategy", default="evolutionary", help="grid, random or evolutionary (default)")
    t.add_argument("--seed", type=int, default=0, help="seed of the random and evolutionary searches")
    t.add_argument("--db", default=None, help="design database file (default: $KS_DESIGN_DB, else "
                                              "~/.cache/kernelstudio/designs.sqlite)")
    t.add_argument("--save", default=None, metavar="NAME", help="save the best design in the database under NAME")
    t.add_argument("--out", default=None, help="also write the best configuration's Ascend C project here")
    sub.add_parser("targets", help="list the hardware profiles")
    return p


def design_of(file: str) -> Any:
    """The design file's output tensor or Schedule, the file run afresh (so its ks.knob calls take the
    values of the surrounding knob context): the build function `kernelstudio tune` searches."""
    return load_design(Path(file))


def tune(file: str, target: str, budget: int, strategy: str, seed: int, db: str | None = None,
         save: str | None = None, out_dir: str | None = None) -> Any:
    """Run ks.tune over the design file's knobs; print the summary; optionally save / write the best."""
    import functools

    import kernelstudio as ks

    load_design(Path(file))  # a broken file fails here, once, with FILE:LINE
    r = ks.tune(functools.partial(design_of, file), target, budget=budget, strategy=strategy, seed=seed,
                db=db, name=Path(file).stem, progress=sys.stderr.isatty())
    print(r.summary())
    if not r.feasible:
        raise InputError(f"no configuration of {file} is legal on {target} ({', '.join(r.pruned)}); widen the "
                         "knobs' choices (ks.knob(name, default, choices))")
    if save:
        r.save(save, db=db)
        print(f"saved the best design as {save!r}")
    if out_dir:
        from kernelstudio.codegen import generate_files
        from kernelstudio.codegen.project import write_project

        d = r.best.design
        report = r.summary() + "\n\n" + ks.format_program(d.program) + "\n"
        written = write_project(d.program, Path(out_dir), generate_files(d.program), overwrite=True,
                                extra={"report.txt": report})
        print(f"wrote {written}")
    return r


def _where(path: Path, e: BaseException) -> str:
    """`FILE:LINE` of the innermost frame of `e` inside the design file, else the file name."""
    if isinstance(e, SyntaxError) and e.lineno is not None:
        return f"{path}:{e.lineno}"
    line = None
    tb = e.__traceback__
    target = str(path.resolve())
    while tb is not None:
        try:
            same = str(Path(tb.tb_frame.f_code.co_filename).resolve()) == target
        except OSError:
            same = False
        if same:
            line = tb.tb_lineno
        tb = tb.tb_next
    return f"{path}:{line}" if line is not None else str(path)


def load_design(path: Path) -> Any:
    """The output tensor (or Schedule) a design file defines."""
    if path.is_dir():
        raise InputError(f"design file {path} is a directory; pass the Python file that sets `out` or defines build()")
    if not path.is_file():
        raise InputError(f"design file {path} does not exist")
    try:
        ns = runpy.run_path(str(path), run_name="__kernelstudio__")
        design = ns["build"]() if callable(ns.get("build")) else None
    except SystemExit as e:
        raise InputError(f"{_where(path, e)}: the design file called sys.exit({e.code!r}) while being loaded; "
                         "a design file should define `out` or build(), not exit") from None
    except KernelStudioError as e:
        raise type(e)(f"{_where(path, e)}: {e}") from e
    except Exception as e:  # the user's file: report it in one line, with its line number
        raise InputError(f"{_where(path, e)}: {type(e).__name__}: {e}") from e
    if design is not None:
        return design
    if "out" in ns:
        return ns["out"]
    raise InputError(f"{path} defines neither `out` nor build(); set `out = <output tensor>` at module level")


def _schedule(design: Any, fuse: bool, target: str = DEFAULT_TARGET) -> tuple[Any, str | None]:
    """The Schedule to lower and, when --no-fuse replaced the design's own Schedule, a note saying what
    was dropped."""
    import kernelstudio as ks

    if isinstance(design, ks.Schedule):
        if fuse or (design.fuse is False and not design.directives and not design.keep_out):
            return design, None
        g = design.graph
        outs = ", ".join(g.names[o] for o in g.outputs)
        base = ks.create_schedule(list(g.outputs), fuse=False)
        dropped = [f"{len(design.directives)} directive(s) ({', '.join(sorted({d.kind for d in design.directives}))})"
                   if design.directives else "",
                   f"keep_out of {len(design.keep_out)} tensor(s)" if design.keep_out else "",
                   "" if design.fuse is False else f"its fusion ({len(design.kernels)} kernel(s))"]
        what = "; ".join(d for d in dropped if d)
        return base, (f"--no-fuse: built the unfused baseline of {outs} ({len(base.kernels)} kernel(s), "
                      f"default tiles); the design's schedule was dropped: {what}. Build without --no-fuse "
                      "to keep them")
    if isinstance(design, ks.Tensor):  # fused or split per matmul by simulated cost on the target
        return ks.create_schedule(design, fuse=None if fuse else False, target=target), None
    raise InputError(f"the design gave a {type(design).__name__}; expected a kernelstudio Tensor or Schedule")


def _simulate(prog: Any, extra: dict[str, str]) -> list[str]:
    """Simulated time and a Chrome trace when the simulator is installed; a note otherwise."""
    try:
        import kernelstudio as ks

        simulate = ks.simulate
    except (ImportError, AttributeError):
        return ["simulation: skipped (the simulator is not available in this installation)"]
    sim = simulate(prog)
    extra["trace.json"] = json.dumps(sim.to_chrome_trace())
    return [f"simulated time: {sim.time_us:.2f} us", "trace: trace.json (open in Perfetto or chrome://tracing)"]


def build(file: str, target: str, out_dir: str, fuse: bool = True, *, notes: list[str] | None = None,
          name: str | None = None, high_level: bool = False) -> Path:
    """Lower the design in `file` for `target` and write code, report and trace into `out_dir`.

    Notes the user should see (e.g. what --no-fuse dropped) are appended to `notes` when given."""
    import kernelstudio as ks
    from kernelstudio.codegen import generate_files, op_names
    from kernelstudio.codegen.project import write_project

    sched, note = _schedule(load_design(Path(file)), fuse, target)
    prog = ks.lower(sched, target=target, name=name)
    out = Path(out_dir)
    extra = {}
    lines = [f"kernelstudio build of {prog.name} for {target} ({'fused' if prog.fused else 'unfused'})", ""]
    if note:
        lines[1:1] = [f"note: {note}"]
        if notes is not None:
            notes.append(note)
    names = op_names(prog)
    for k in prog.kernels:
        n = names[k.name]
        lines.append(f"kernel {k.name} (operator {n.op_type}, {n.kernel_file}): {k.family}, {k.kernel_type}, "
                     f"block_dim {k.block_dim}, ops {', '.join(k.ops) or '-'}")
    lines += [f"fusion: {c.note()}" for c in getattr(sched, "choices", ())]
    lines += ["", *_simulate(prog, extra), "", ks.format_program(prog)]
    extra["report.txt"] = "\n".join(lines) + "\n"
    return write_project(prog, out, generate_files(prog, high_level=high_level), overwrite=True, extra=extra)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `kernelstudio` script; returns the exit code."""
    try:
        args = _parser().parse_args(argv)
    except _UsageError as e:
        msg = str(e)
        if "required: command" in msg:
            msg = ("no command given; use `kernelstudio build FILE.py --out DIR`, `kernelstudio tune FILE.py` or "
                   "`kernelstudio targets` "
                   "(kernelstudio build --help for the options)")
        print(f"kernelstudio: error: {msg}", file=sys.stderr)
        return 2
    try:
        if args.command == "targets":
            from . import hw

            for name in hw.names():
                print(name)
            return 0
        if args.command == "tune":
            tune(args.file, args.target, args.budget, args.strategy, args.seed, args.db, args.save, args.out)
            return 0
        from .core.files import make_dirs, remove_dirs

        try:
            created = make_dirs(args.out)
        except OSError as e:
            print(f"kernelstudio: error: cannot create the output directory {args.out}: {e.strerror or e}; "
                  "pass --out a directory you can write to", file=sys.stderr)
            return 2
        notes: list[str] = []
        try:
            out = build(args.file, args.target, args.out, fuse=not args.no_fuse, notes=notes, name=args.name,
                        high_level=args.high_level)
        except BaseException:
            remove_dirs(created)  # a failed build leaves no directory behind it
            raise
        for note in notes:
            print(f"kernelstudio: note: {note}")
        print(f"wrote {out}")
        return 0
    except KernelStudioError as e:
        print(f"kernelstudio: error: {str(e).splitlines()[0]}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"kernelstudio: error: {e.filename or ''}: {e.strerror or e}", file=sys.stderr)
        return 2
    except Exception as e:  # noqa: BLE001 - never a traceback on the command line
        print(f"kernelstudio: internal error: {type(e).__name__}: {e}; please report it with the design file",
              file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
