"""No directive is silently ignored: on every kind of kernel, each directive either changes the lowered
program or raises ScheduleError naming the kernel and the directive (and what the kernel takes)."""

from __future__ import annotations

import pytest

import kernelstudio as ks
from kernelstudio.tileir.printer import format_program
from tests.reference_kernels import REFERENCE


def _matmul_bias_gelu():
    x = ks.placeholder((64, 256), "float16", name="x")
    w = ks.placeholder((512, 256), "float16", name="w")
    b = ks.placeholder((512,), "float16", name="b")
    return ks.gelu(ks.matmul(x, w, transpose_b=True) + b)


def _matmul():
    return ks.matmul(ks.placeholder((256, 512), "float16", name="x"), ks.placeholder((512, 384), "float16", name="w"))


def _transpose():
    return ks.transpose(ks.placeholder((64, 96), "float16", name="x"), (1, 0))


def _axis_reduce():
    return ks.reduce_sum(ks.placeholder((8, 64, 32), "float32", name="x"), axis=1)


def _attention():
    q, k, v = (ks.placeholder((1, 2, 200, 64), "float16", name=n) for n in ("query", "key", "value"))
    return ks.ops.flash_attention(q, k, v)


DESIGNS = {
    "attention": _attention,
    "cube_vector, row reduction": REFERENCE["mla_prolog_lite"],
    "cube_vector, elementwise": _matmul_bias_gelu,
    "cube": _matmul,
    "conv cube_vector": REFERENCE["conv_bias_relu"],
    "vector, row reduction": REFERENCE["softmax"],
    "vector, elementwise": REFERENCE["elementwise_chain"],
    "layout": _transpose,
    "axis reduction": _axis_reduce,
}

# each directive with two values: if neither changes the program, it was ignored
DIRECTIVES = {
    "split m": ("split", "m", (16, 32)), "split n": ("split", "n", (32, 64)), "split k": ("split", "k", (32, 64)),
    "split 0": ("split", 0, (2, 8)), "split -1": ("split", -1, (32, 64)),
    "vectorize -1": ("vectorize", -1, (32, 64)), "vectorize 0": ("vectorize", 0, (1, 4)),
    "reorder n m": ("reorder", ("n", "m"), (None,)), "reorder -1 0": ("reorder", (-1, 0), (None,)),
    "parallel n": ("parallel", "n", (None,)), "parallel -1": ("parallel", -1, (None,)),
    "parallel cores": ("parallel", None, (3, 1)), "double_buffer": ("double_buffer", None, (False,)),
    "compute_dtype": ("compute_dtype", None, ("float32", "float16")),
    "l1_k_steps": ("l1_k_steps", None, ((2, 2), (4, 4))), "l1_depth": ("l1_depth", None, ((1, 1), (2, 2))),
    "swizzle m": ("swizzle", "m", (2, 1)), "swizzle n": ("swizzle", "n", (2, 1)),
    "l1_c_steps": ("l1_c_steps", None, ((1, 1), (2, 1), (1, 2))),
    "sync_all": ("sync_all", None, (True,)),
    "split s1": ("split", "s1", (32, 64)), "split s2": ("split", "s2", (64, 128)),
    "slots": ("slots", None, (1, 2)), "split kv": ("split", "kv", (2, 1)),
}


def _lowered(build, kernel: str | None, directive: ks.Directive | None) -> str:
    out = build()
    s = ks.create_schedule(out, fuse=True)
    if directive is not None:
        s.apply(ks.Directive(directive.kind, kernel, directive.axis, directive.value))
    return format_program(ks.lower(s, "ascend910b2"))


@pytest.mark.parametrize("design", list(DESIGNS))
@pytest.mark.parametrize("directive", list(DIRECTIVES))
def test_every_directive_acts_or_says_why(design, directive):
    build = DESIGNS[design]
    base = _lowered(build, None, None)
    kind, axis, values = DIRECTIVES[directive]
    for kernel in ks.create_schedule(build(), fuse=True).kernels:
        outcomes = []
        for v in values:
            d = ks.Directive(kind, kernel.name, axis, v)
            try:
                outcomes.append(_lowered(build, kernel.name, d) != base)
            except ks.ScheduleError as e:
                assert kernel.name in str(e)
                outcomes.append(True)
        assert any(outcomes), f"{directive} on kernel {kernel.name} ({kernel.family}) changed nothing"


@pytest.mark.parametrize(("build", "directive", "fragments"), [
    (_matmul, ("vectorize", -1, 64), ("vectorize(-1, 64) cannot apply", "no vector work", "l1_k_steps")),
    (_matmul, ("compute_dtype", None, "float32"), ("compute_dtype('float32') cannot apply",)),
    (_transpose, ("compute_dtype", None, "float32"), ("moves data only",)),
    (_transpose, ("reorder", (-1, 0), None), ("reorder(-1, 0) cannot apply", "parallel(cores=...)")),
    (_axis_reduce, ("split", 0, 2), ("split(0, 2) cannot apply", "outer dim (8)")),
    (_matmul_bias_gelu, ("vectorize", -1, 4096), ("vectorize(-1, 4096) cannot apply", "tile_n", "split('n'")),
    (_matmul_bias_gelu, ("vectorize", "m", 64), ("half of the", "vectorize('m', ...) of at most")),
    (_matmul_bias_gelu, ("l1_k_steps", None, (16, 16)), ("l1_k_steps(16, 16) cannot apply", "K=256")),
    (_matmul_bias_gelu, ("swizzle", "m", 4), ("swizzle(group=4, direction='m') cannot apply",
                                                      "only 2 tile rows (M=64 in tiles of 32)", "at most 2")),
    (REFERENCE["mla_prolog_lite"], ("swizzle", "m", 2), ("row-reduction epilogue", "keep_out")),
    (_matmul_bias_gelu, ("l1_c_steps", None, (1, 2)), ("l1_c_steps(1, 2) cannot apply", "one C tile per hand-off",
                                                       "split('m'/'n', ...)")),
    (REFERENCE["mla_prolog_lite"], ("l1_c_steps", None, (2, 1)), ("l1_c_steps(2, 1) cannot apply", "row block",
                                                                  "l1_c_steps(1, n) with n <= ")),
    (_matmul, ("l1_c_steps", None, (1, 64)), ("l1_c_steps(1, 64) cannot apply", "C tile(s) along n (N=384 in tiles",
                                               "split('n', ...)")),
])
def test_the_message_names_the_numbers_and_the_way_out(build, directive, fragments):
    out = build()
    s = ks.create_schedule(out, fuse=True)
    kind, axis, value = directive
    s.apply(ks.Directive(kind, s.kernels[0].name, axis, value))
    with pytest.raises(ks.ScheduleError) as e:
        ks.lower(s, "ascend910b2")
    for f in fragments:
        assert f in str(e.value)
