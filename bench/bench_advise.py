"""Benchmark: the advisor's greedy rounds against ks.tune, and the advisor's latency. Prints numbers.

    .venv/bin/python bench/bench_advise.py

For MlaProlog-lite and Conv+Bias+ReLU at the reference sizes (tests/reference_kernels.py) and three other
sizes, each with the knobs of bench/bench_tune.py (tile_m, tile_n, tile_k, l1_k_steps, double_buffer), and
FlashAttention at S = 512 and 2048 (D = 128, one head) with the fused kernel's s1 / s2 blocks and slots (the
knobs ks.tune adds for it: 48 and 96 configurations), on ascend910b2: the time at the knobs' defaults;
`ks.advise_greedy` (<= 5 rounds, in this process) simulating every proposal of a round ("all"), or only
`per_round` proposals at a time, those whose evidence names the most idle time, going on to the next ones while
none saves time, at most `patience` batches a round ("2x1", "2x2"), each with its best time, its evaluations
(distinct configurations simulated, the default included) and its ratio to ks.tune's best (<= 1.05 is within
5 %); `ks.tune` (evolutionary, budget 64, seed 0, executor="inline", db=False) with its best and evaluations;
and the wall time of `d.advise()` on the design at its defaults (a fresh design, nothing cached). Goal: within
5 % of ks.tune's best with at most 1/5 of its evaluations, advice under 1 s.

    .venv/bin/python bench/bench_advise.py --markdown

prints the README's table instead (the 2x1 and 2x2 settings and ks.tune: deterministic numbers, no timings).

    .venv/bin/python bench/bench_advise.py --notebooks

prints, for the design of every `%%ascend_kernel` cell of the reference notebooks (notebooks/*.ipynb, at the
cell's knob defaults, as its Studio opens), the Advice strip's time: `advise(d, session.build,
knobs=session.knobs)`, cold (the first call in a fresh process, right after the Studio's build: nothing of
the advisor cached) and warm (the same cell built again in a new session, so a new design: the lowering and
simulation memos warm), wall and CPU seconds, the moves simulated and how many save time. Each design runs in
its own process. Goal: under 1 s. A multi-device design (ks.multi) gets no advice and is listed as such.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import kernelstudio as ks  # noqa: E402
from kernelstudio.tune.evaluate import run_build_fn  # noqa: E402
from tests import reference_kernels as reference  # noqa: E402

TARGET = "ascend910b2"
BUDGET = 64


def _knobbed(out_fn, label: str, tm: tuple, tn: tuple, tk: tuple):
    """A ks.tune build function: `out_fn()`'s graph with the tile, L1-step and double-buffer knobs."""
    def build():
        out = out_fn()
        s = ks.create_schedule(out)
        st = s[out]
        st.split("m", ks.knob("tile_m", tm[0], list(tm[1])))
        st.split("n", ks.knob("tile_n", tn[0], list(tn[1])))
        st.split("k", ks.knob("tile_k", tk[0], list(tk[1])))
        st.l1_k_steps(ks.knob("l1_k_steps", 1, [1, 2, 4]))
        st.double_buffer(ks.knob("double_buffer", True, [False, True]))
        return s
    build.__name__ = label
    return build


MLA = ((16, 32, 64), (64, 128, 256, 512), (32, 64, 128, 256))
CONV = ((16, 32, 64), (128, 256, 512, 1024), (32, 64, 128, 256))


def _d(default: int, choices: tuple) -> tuple:
    return default, choices


def _attention(s: int):
    """A ks.tune build function declaring no knobs: FlashAttention (B = N = 1, S_q = S_kv = s, D = 128, float16)
    as one fused kernel, whose s1 / s2 blocks and slots the tuner adds (tune/attention_knobs.py)."""
    def build():
        q, k, v = (ks.placeholder((1, 1, s, 128), "float16", name=n) for n in ("query", "key", "value"))
        return ks.ops.flash_attention(q, k, v)
    build.__name__ = f"attention_{s}"
    return build


DESIGNS = [
    ("MlaProlog-lite 64x256x512", _knobbed(reference.mla_prolog_lite, "mla_64x256x512", _d(16, MLA[0]),
                                           _d(256, MLA[1]), _d(64, MLA[2]))),
    ("Conv+Bias+ReLU [1,16,20,20]->32", _knobbed(reference.conv_bias_relu, "conv_16x20x20", _d(16, (16, 32)),
                                                 _d(128, (64, 128, 256)), _d(64, (32, 64, 128)))),
    ("MlaProlog-lite 256x1024x1024", _knobbed(lambda: reference.mla_prolog_lite(256, 1024, 1024), "mla_256x1024x1024",
                                              _d(16, MLA[0]), _d(256, MLA[1]), _d(64, MLA[2]))),
    ("Conv+Bias+ReLU [1,64,56,56]->64", _knobbed(lambda: reference.conv_bias_relu(1, 64, 56, 64), "conv_64x56x56",
                                                 _d(64, CONV[0]), _d(256, CONV[1]), _d(64, CONV[2]))),
    ("Conv+Bias+ReLU [1,64,112,112]->64", _knobbed(lambda: reference.conv_bias_relu(1, 64, 112, 64),
                                                   "conv_64x112x112", _d(64, CONV[0]), _d(256, CONV[1]),
                                                   _d(64, CONV[2]))),
    ("FlashAttention S=512 D=128", _attention(512)),
    ("FlashAttention S=2048 D=128", _attention(2048)),
]


def advice_latency(fn) -> tuple[float, int]:
    """Seconds of `d.advise()` on a freshly built design at the knobs' defaults, and the moves it returns."""
    _, sched, _ = run_build_fn(fn, {}, TARGET)
    prog = ks.lower(sched, TARGET)
    d = ks.Design(sched, prog, ks.simulate(prog))
    t0 = time.perf_counter()
    moves = d.advise()
    return time.perf_counter() - t0, len(moves)


SETTINGS = [(None, None), (2, 1), (2, 2)]  # (per_round, patience) of the greedy rounds; None, None: every proposal


def _setting(per_round: int | None, patience: int | None) -> str:
    return "all" if per_round is None else f"{per_round}x{patience}"


def greedy_rows(settings: list = SETTINGS) -> list[dict]:
    """Per design: its default time, ks.tune's best and evaluations, and per setting of the greedy rounds their
    best time, evaluations, ratio to ks.tune's best and the moves taken (all deterministic: seeded, inline)."""
    rows = []
    for label, fn in DESIGNS:
        r = ks.tune(fn, TARGET, budget=BUDGET, strategy="evolutionary", seed=0, executor="inline", db=False,
                    progress=False)
        row: dict = {"design": label, "default": r.default.time_us, "tune": r.best_time_us,
                     "tune_evals": len(r.history), "fn": fn}
        for per_round, patience in settings:
            g = ks.advise_greedy(fn, TARGET, rounds=5, executor="inline", per_round=per_round, patience=patience)
            row[_setting(per_round, patience)] = {"time": g.time_us, "evals": g.evaluations,
                                                  "ratio": g.time_us / r.best_time_us,
                                                  "moves": "; ".join(a.move for a in g.steps) or "none"}
        rows.append(row)
    return rows


README_SETTINGS = [(2, 1), (2, 2)]


def table(rows: list[dict], settings: list = README_SETTINGS) -> str:
    """The README's table: per design the default, each greedy setting (best us / evaluations / ratio to
    ks.tune's best) and ks.tune's best / evaluations, then a line per setting saying where the goal holds."""
    names = [_setting(*st) for st in settings]
    out = ["| design | default us | " + " | ".join(f"greedy {n}" for n in names) + " | ks.tune |",
           "|---|---:|" + "---:|" * len(names) + "---:|"]
    for r in rows:
        cells = " | ".join(f"{r[n]['time']:.2f} / {r[n]['evals']} / {r[n]['ratio']:.3f}" for n in names)
        out.append(f"| {r['design']} | {r['default']:.2f} | {cells} | {r['tune']:.2f} / {r['tune_evals']} |")
    out.append("")
    for n in names:
        met = [r for r in rows if r[n]["ratio"] <= 1.05 and r[n]["evals"] * 5 <= r["tune_evals"]]
        worst = max(r[n]["ratio"] for r in rows)
        evals = [r[n]["evals"] for r in rows]
        out.append(f"- greedy {n}: within 5 % of ks.tune's best with at most 1/5 of its evaluations on {len(met)} of "
                   f"{len(rows)} designs (at most {100 * (worst - 1):.1f} % slower, {min(evals)}-{max(evals)} "
                   "evaluations)")
    return "\n".join(out)


NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def notebook_cells() -> list[tuple[str, str, str]]:
    """(notebook, design name, cell body) for every `%%ascend_kernel` cell of the reference notebooks."""
    import nbformat

    out = []
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        for c in nbformat.read(path, as_version=4).cells:
            if c.cell_type == "code" and c.source.startswith("%%ascend_kernel"):
                line, body = c.source.split("\n", 1)
                out.append((path.name, line.split()[1], body))
    return out


def _advice_times(notebook: str, name: str) -> dict:
    """In this process: the cell's design as its Studio opens it, then advice cold and warm (see the module doc)."""
    from kernelstudio.multi.design import Mc2Design
    from kernelstudio.notebook.session import StudioSession
    from kernelstudio.plan.advise import advise

    body = next(b for nb, n, b in notebook_cells() if nb == notebook and n == name)

    def session() -> StudioSession:
        s = StudioSession(name=name, source=body, target=TARGET, compare=False, user_ns={"ks": ks})
        s.rebuild()
        return s

    s = session()
    if isinstance(s.design, Mc2Design):
        return {"multi": True, "time_us": s.design.time_us}
    row: dict = {"multi": False, "time_us": s.design.sim.time_us, "kernels": len(s.design.program.kernels)}
    for run in ("cold", "warm"):
        if run == "warm":
            s = session()
        w0, c0 = time.perf_counter(), time.process_time()
        moves = advise(s.design, s.build if s.knobs else None, knobs=s.knobs or None)
        row[run] = (time.perf_counter() - w0, time.process_time() - c0)
        row["moves"], row["saves"] = len(moves), sum(a.saves for a in moves)
    return row


def notebook_latency() -> None:
    print(f"{TARGET}; the Advice strip's advise() per reference notebook design, each in a fresh process: cold "
          "(first call) and warm (a new design of the same cell), wall / CPU seconds; goal < 1 s")
    print(f"{'notebook':26} {'design':16} {'kernels':>7} {'time us':>9} {'cold s':>13} {'warm s':>13} "
          f"{'moves':>5} {'save':>4}")
    for notebook, name, _ in notebook_cells():
        code = (f"import json, sys; sys.path.insert(0, {str(Path(__file__).resolve().parent)!r}); "
                f"import bench_advise as b; print(json.dumps(b._advice_times({notebook!r}, {name!r})))")
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        row = json.loads(res.stdout.strip().splitlines()[-1])
        if row["multi"]:
            print(f"{notebook:26} {name:16} {'':>7} {row['time_us']:9.2f}   multi-device design: no advice")
            continue
        cold, warm = (f"{row[r][0]:6.2f}/{row[r][1]:5.2f}" for r in ("cold", "warm"))
        print(f"{notebook:26} {name:16} {row['kernels']:7d} {row['time_us']:9.2f} {cold:>13} {warm:>13} "
              f"{row['moves']:5d} {row['saves']:4d}")


def main() -> None:
    if "--notebooks" in sys.argv:
        notebook_latency()
        return
    if "--markdown" in sys.argv:
        print(table(greedy_rows(README_SETTINGS)))
        return
    print(f"{TARGET}; greedy advisor <= 5 rounds: 'all' simulates every proposal of a round, 'PxQ' the P with the "
          f"most idle time named, the next P while none saves time, at most Q batches a round; ks.tune "
          f"evolutionary, budget {BUDGET}, seed 0, inline, db=False. Each cell: best us / evaluations "
          "(configurations simulated) / ratio to ks.tune's best")
    head = "".join(f" {'greedy ' + _setting(*st):>22}" for st in SETTINGS)
    print(f"{'design':34} {'default':>8}{head} {'ks.tune':>14} {'advice s':>8}")
    met = {st: 0 for st in SETTINGS}
    for row in greedy_rows():
        secs, _ = advice_latency(row["fn"])
        cells = []
        for st in SETTINGS:
            c = row[_setting(*st)]
            met[st] += c["ratio"] <= 1.05 and c["evals"] * 5 <= row["tune_evals"] and secs < 1.0
            cells.append(f"{c['time']:8.2f}/{c['evals']:3d}/{c['ratio']:5.3f}")
        print(f"{row['design']:34} {row['default']:8.2f}" + "".join(f" {c:>22}" for c in cells)
              + f" {row['tune']:8.2f}/{row['tune_evals']:3d}  {secs:8.3f}")
        print(f"{'':34} greedy {_setting(*SETTINGS[-1])} moves: {row[_setting(*SETTINGS[-1])]['moves']}")
    print("goal (within 5 % of ks.tune's best with <= 1/5 of its evaluations, advice < 1 s) met on: "
          + ", ".join(f"{_setting(*st)} {n} of {len(DESIGNS)}" for st, n in met.items()))


if __name__ == "__main__":
    main()
