"""The CV-fusion article's two claims, measured with the simulator (prints numbers).

    .venv/bin/python bench/article_claims.py

1. Conv+Bias+ReLU on [1,64,112,112] fp16 (3x3, 64 -> 64 channels): the GM traffic fusion saves
   (the article claims 20 MB).
2. MlaProlog-lite (x 1x64x256, w 512x256, bias 512): the share of GM accesses fusion removes
   (the article claims ~40%)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import kernelstudio as ks  # noqa: E402
from kernelstudio.sim import report_table, simulate  # noqa: E402
from kernelstudio.sim.report import comparison  # noqa: E402


def conv_bias_relu():
    x = ks.placeholder((1, 64, 112, 112), "float16", name="x")
    w = ks.placeholder((64, 64, 3, 3), "float16", name="w")
    b = ks.placeholder((64, 1, 1), "float16", name="bias")
    return ks.relu(ks.conv2d(x, w, padding="SAME") + b)


def mla_prolog_lite():
    x = ks.placeholder((1, 64, 256), "float16", name="x")
    w = ks.placeholder((512, 256), "float16", name="w")
    b = ks.placeholder((512,), "float16", name="bias")
    y = ks.layer_norm(ks.matmul(x, w, transpose_b=True), axis=-1, eps=1e-5)
    return ks.gelu(y + b, name="out")


def measure(name: str, out, target: str = "ascend910b2") -> dict:
    fused = ks.lower(ks.create_schedule(out), target)
    unfused = ks.lower(ks.create_schedule(out, fuse=False), target)
    rf, ru = simulate(fused), simulate(unfused)
    print(report_table(rf, ru, fused, unfused))
    c = comparison(rf, ru)
    inter = [t for t in unfused.tensors if t.role == "intermediate"]
    c["intermediate_bytes"] = sum(t.nbytes for t in inter)
    c["workspace_bytes"] = sum(t.nbytes for t in fused.tensors if t.role == "workspace")
    c["fused_hbm"], c["unfused_hbm"] = rf.metrics["hbm_bytes"], ru.metrics["hbm_bytes"]
    print(f"{name}: unfused intermediates {len(inter)} x = {c['intermediate_bytes']:,} B; fused workspace "
          f"{c['workspace_bytes']:,} B; GM bytes fused {c['fused_gm_bytes']:,} vs unfused "
          f"{c['unfused_gm_bytes']:,} ({c['gm_bytes_saved']:+,} B saved, {c['gm_share_removed']:+.1%}); "
          f"HBM bytes fused {c['fused_hbm']:,} vs unfused {c['unfused_hbm']:,} "
          f"({(c['unfused_hbm'] - c['fused_hbm']) / c['unfused_hbm']:+.1%} removed)\n")
    return c


def main() -> None:
    measure("Conv+Bias+ReLU [1,64,112,112]", conv_bias_relu())
    measure("MlaProlog-lite", mla_prolog_lite())


if __name__ == "__main__":
    main()
