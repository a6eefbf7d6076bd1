"""Every notebook runs top to bottom in a fresh kernel."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path):
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = "".join(o.get("text", "") + o.get("data", {}).get("text/plain", "") for o in outputs)
    for expected in EXPECTED[path.name]:
        assert expected in text, expected


EXPECTED = {
    "00_tour.ipynb": ["max |golden - tiled|", "max |golden - twin|", "speedup from fusion", "tile_n 256 -> 128",
                      "tile_m=16 of [16, 32, 64]"],
    "01_conv_bias_relu.ipynb": ["intermediates in GM", "device time only", "launch_overhead_us = ",
                                "max |golden - twin|", "fused vs unfused"],
    "02_mla_prolog_lite.ipynb": ["L0B needs 131,072 B", "best:", "idle", "released by", "back to the best",
                                 "speedup from fusion"],
    "03_dynamic_shapes.ipynb": ["bucket small", "-> tall_skinny", "speedup", "own bucket's config fastest",
                                "bucket wide", "tail eff.", "designs cached", "UnsupportedError",
                                "3 TILING_KEY_IS branches", "every bucket matches the golden model: True"],
    "09_bring_your_own.ipynb": ["max |reference - twin| = 0.0", "sync findings: 0", "VECTOR idle", "[race]",
                               "add_flags.cpp:", "[lost-signal]", "designed, 8 cores",
                               "mmad_custom: max |reference - twin| = 0.0;", "busy us: MTE2", "M 0.",
                               "bare_mix: max |reference - twin| = 0.0;", "[hang]", "bare_mix.cpp:",
                               "GM race between cores: AIC of block 0 writes", "AIV0 of block 0's call #",
                               "copy_pad: max |reference - twin| = 0.0;",
                               "add_broadcast: max |reference - twin| = 0.0;", "Broadcast x2"],
    "05_mla_prolog.ipynb": ["decode T=1: fused 21 kernels", "rms_norm_mul_1: matmul [new_kernel]", "MTE3 row writes",
                            "prefill T=1024: fused 21 kernels", "same kernels, same rules as decode: True",
                            "longest kernels, prefill: matmul_1", "PA_NZ, T=1024: [(8, 32, 128, 16)",
                            "back to decode: 218.0 us"],
    "04_schedules.ipynb": ["cube_epilogue", "cluster", "double_buffer", "cores=4 tile_m=16", "CapacityError",
                           "multiple of 16", "multi-pass", "full rows"],
    "06_autotune.ipynb": ["pruned: CapacityError: L0B", "speedup", "evolutionary within 1% of it: True",
                          "L0B over by", "auto tiles, double_buffer", "cache hits of 20, 0 built",
                          "mla_prolog_lite_tuned", "applied: {'tile_m': ",
                          "the sliders are at the best configuration: True"],
    "07_moe.ipynb": ["== one_hot: rows per expert (256, 18,", "imbalance cost:", "idle", "waiting for the last core",
                     "max |golden - tiled|", "the data routes as the timeline plans: True"],
    "10_flash_attention.ipynb": ["1 kernel(s): attention_out (family 'attention')", "MIX_AIC_1_2",
                                 "'s2_block': 512", "the others wait longest for ", "run at once for ",
                                 "bmm1 of block 1 starts before vec1 of block 0 ends: True",
                                 "the Timeline's stage strip: core0.cubecore0 bmm1 (8 bars), core0.cubecore0 bmm2 "
                                 "(8 bars), core0.veccore0 vec1 (8 bars), core0.veccore0 vec2 (8 bars)",
                                 "the cube idles ", "released by MTE1: copy b2 <- kv1",
                                 "fused below the two-kernel plan: True",
                                 "fused HBM traffic is Q, K and V read once (4.7 MB): True",
                                 "s1 128, s2 256, slots 3: 48 tasks,  8 S2 steps",
                                 "s1 128, s2 512, slots 1: 48 tasks,  4 S2 steps",
                                 "'ws_slots': 3, 'kv_splits': 4}",
                                 "us without the mask",
                                 "24 of 64 blocks per head fully masked; the kernel computed 120 blocks of 192 for 3 "
                                 "heads: 72 skipped",
                                 "decode: 3 heads x 4 parts = 12 tasks on 12 of 24 cores: ",
                                 "split below one part per head and below the two-kernel plan: True",
                                 "the auto choice (4 parts) is the fastest of 1 to 4: True",
                                 "timeline: bmm1 on 12 cube cores until ",
                                 "then the combine on ['core0.veccore0', 'core0.veccore1', 'core1.veccore0']",
                                 "S = 1024 and 2048 simulated again, as in the README: True",
                                 "1 kernel, family 'attention', on the twin",
                                 "twin == golden within float16 rounding: True"],
    "08_matmul_allreduce.ipynb": ["the claim holds here: True", "(shorter than the matmul: False); claim holds: False",
                                  "(shorter than the matmul: True); claim holds: True", "published   888 us",
                                  "published: 26% then 34%", "slower than unsplit from 16 tiles",
                                  "not applied: ks.multi.matmul_allreduce (M split",
                                  "the design is still the 4-tile one: True", "communication exposed: ",
                                  "notify_ = ASCEND_IS_AIV && AscendC::GetBlockIdx() == 0;",
                                  "commCores 8, epilogue lowered for 40 vector cores",
                                  "3 events (one per tile)"],
}
