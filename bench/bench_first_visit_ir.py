"""Benchmark: the exact cost of a Studio first visit, in machine instructions (needs valgrind). Prints numbers.

The same moves as `bench_studio.py`'s first-visit line through the Studio widget (MlaProlog-lite, Passes tab
open, to the views in sight drawn; `--passes-off`: the Timeline tab open instead): a fresh process builds the
cell's default setting and one warm-up move, then moves to N settings it has not built (those that fit), under
callgrind with instrumentation switched on for those moves only. Instruction counts do not move with the
machine's load, so two versions of the code compare exactly where wall time on a shared 2-core machine does not.

    python bench/bench_first_visit_ir.py [N] [--passes-off] [--keep]      (N = 24 moves, about a minute)
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def _fitting() -> list[dict]:
    """The first-visit settings whose buffers fit (found apart, so the measured process builds none of them)."""
    import bench_studio as b

    from kernelstudio.core.errors import KernelStudioError
    from kernelstudio.notebook.session import StudioSession
    from tests.notebook.cells import MLA_CELL

    ses = StudioSession("mla_prolog_lite", MLA_CELL)
    ses.rebuild()
    out = []
    for values in b._unseen(ses):
        try:
            ses.build(values)
        except KernelStudioError:
            continue
        out.append(values)
    return out


def _measured(n: int, tab: str) -> None:
    """Runs under callgrind: n first visits with instrumentation on for those moves only."""
    import bench_studio as b

    from kernelstudio.notebook.session import StudioSession
    from kernelstudio.notebook.studio import Studio
    from tests.notebook.cells import MLA_CELL

    todo = b._fresh(_fitting)[:n]
    ses = StudioSession("mla_prolog_lite", MLA_CELL)
    ses.rebuild()
    st = Studio(ses)
    st.tabs.selected_index = st.tabs.titles.index(tab)
    st._later = lambda: None
    b.move(st, b.WARM)
    st._settle()
    control = ["callgrind_control", "-i"]
    subprocess.run([*control, "on", str(os.getpid())], capture_output=True, check=True)
    for values in todo:
        b.move(st, values)
    subprocess.run([*control, "off", str(os.getpid())], capture_output=True, check=True)


def main() -> None:
    n = next((int(a) for a in sys.argv[1:] if a.isdigit()), 24)
    tab = "Timeline" if "--passes-off" in sys.argv else "Passes"
    if os.environ.get("KS_IR_INNER") == "1":
        _measured(n, tab)
        return
    out = f"/tmp/ks-first-visit.{os.getpid()}.callgrind"
    subprocess.run(["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
                    sys.executable, __file__, *sys.argv[1:]], env=dict(os.environ, KS_IR_INNER="1"), check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(out) as f:
        ir = next(int(line.split()[1]) for line in f if line.startswith("totals:"))
    print(f"first visit -> the Studio widget's views in sight ({tab} tab open), MlaProlog-lite: "
          f"{ir / n / 1e6:.2f} M instructions per move ({n} moves)")
    if "--keep" in sys.argv:
        print(f"callgrind file: {out}")
    else:
        os.remove(out)


if __name__ == "__main__":
    main()
