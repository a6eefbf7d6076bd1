"""ks.scatter's generated kernel: a paged-cache update in place, golden == run_tiled == twin bit for bit (PA_BSND
and PA_NZ, rows that are not whole 32-byte blocks, bfloat16, several tokens per tile), every case in one twin
binary; the code reads each slot on the scalar and writes one row (PA_NZ: one chunk per c0) to the cache."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio import twin
from kernelstudio.codegen import codegen, generate_files, op_names

from .merge import merge
from .reference import outputs

Case = Callable[[], tuple[ks.Tensor, ks.Schedule]]


def _case(shape, tokens, row_shape, dtype, layout="PA_BSND", tile=None):
    def build():
        cache = ks.placeholder(shape, dtype, name="cache")
        idx = ks.placeholder((tokens,), "int32", name="slots")
        v = ks.placeholder((tokens, *row_shape), dtype, name="v")
        out = ks.scatter(cache, idx, v, layout=layout)
        s = ks.create_schedule(out)
        if tile:
            s[out].split(0, tile[0]).split(-1, tile[1])
        return out, s
    return build


CASES: dict[str, Case] = {
    "bsnd_kv": _case((6, 16, 1, 64), 21, (1, 64), "float16", tile=(4, 64)),
    "bsnd_unaligned_row": _case((4, 8, 1, 35), 9, (1, 35), "float16", tile=(3, 16)),
    "bsnd_bf16_rope_cache": _case((5, 16, 1, 64), 40, (1, 64), "bfloat16"),
    "nz_fp16": _case((3, 8, 16, 16), 17, (128,), "float16", layout="PA_NZ", tile=(5, 48)),
    "nz_fp32": _case((2, 3, 8, 8), 11, (24,), "float32", layout="PA_NZ"),
}


def test_scatter_kernels_golden_run_tiled_and_twin_agree_bit_for_bit(twin_cache) -> None:
    progs, golden, inputs = [], [], {}
    for i, build in enumerate(CASES.values()):
        out, s = build()
        prog = ks.lower(s, target="ascend910b2")
        inp = ks.random_inputs(out, seed=i)
        want = outputs(prog, (ks.evaluate(out, inp),))
        got = outputs(prog, (ks.run_tiled(prog, inp),))
        np.testing.assert_array_equal(got["cache"], want["cache"], err_msg=list(CASES)[i])
        progs.append(prog)
        golden.append(want)
        inputs.update({f"c{i}_{n}": v for n, v in inp.items()})
    got = twin.run(codegen(merge(progs)), inputs, cache_dir=twin_cache, by_name=True)
    for i, name in enumerate(CASES):
        np.testing.assert_array_equal(np.asarray(got[f"c{i}_cache"], np.float32),
                                      np.asarray(golden[i]["cache"], np.float32), err_msg=f"{name} twin")
        untouched = np.asarray(inputs[f"c{i}_cache"], np.float32) == np.asarray(got[f"c{i}_cache"], np.float32)
        assert untouched.sum() >= untouched.size - inputs[f"c{i}_v"].size  # only the tokens' rows changed


def _src(name: str) -> str:
    _, s = CASES[name]()
    prog = ks.lower(s, target="ascend910b2")
    files = generate_files(prog)
    return "\n".join(files[n.kernel_file] for n in op_names(prog).values())


@pytest.mark.parametrize(("name", "copy"), [
    ("bsnd_kv", "AscendC::DataCopy(cacheGm[(s * 64) + c0], vLocal[r * 64], clen);"),  # 128 B: whole blocks
    # a row of 35 float16 (70 bytes) is not whole blocks: DataCopyPad
    ("bsnd_unaligned_row", "AscendC::DataCopyPad(cacheGm[(s * 35) + c0], vLocal[r * 16], copyParams);"),
    # 48 of a slot's 128 elements: 3 chunks of 16, block_size x 16 = 256 apart, at row s % 16 of block s / 16
    ("nz_fp16", "AscendC::DataCopy(cacheGm[(((s / 16) * 2048) + ((c0 / 16) * 256)) + ((s % 16) * 16)], "
                "vLocal[r * 48], copyParams);"),
])
def test_the_code_reads_each_slot_and_writes_its_row_into_the_cache(name: str, copy: str) -> None:
    src = _src(name)
    assert "slotsLocal.GetValue(r)" in src and "MTE2_S" in src and "MTE3_MTE2" in src
    lines = [line.strip() for line in src.splitlines() if "cacheGm[" in line and "Local[" in line]
    # whole 32-byte blocks may go by DataCopy or (for a run-time length) DataCopyPad: both write the row
    padded = copy.replace("AscendC::DataCopy(", "AscendC::DataCopyPad(").replace(", clen);", ", copyParams);")
    assert lines in ([copy], [padded]), lines
    assert "GM_ADDR cache, GM_ADDR slots, GM_ADDR v," in src  # the cache is a parameter once, updated in place
