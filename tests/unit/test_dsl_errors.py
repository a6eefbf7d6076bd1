"""Every user mistake in the DSL raises a KernelStudioError naming the op, tensors and numbers."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import kernelstudio.dsl as ks
from kernelstudio.core.errors import DTypeError, KernelStudioError, ShapeError, UnsupportedError
from kernelstudio.dsl import ops as dsl_ops


@contextlib.contextmanager
def raises(exc, *fragments):
    with pytest.raises(exc) as info:
        yield
    assert isinstance(info.value, KernelStudioError)
    msg = str(info.value)
    for f in fragments:
        assert f in msg, f"{f!r} not in {msg!r}"


def ph(shape, dtype="float16", name=None):
    return ks.placeholder(shape, dtype, name=name)


# --- placeholder, names, dtypes ---------------------------------------------------------------------


def test_unknown_dtype_lists_valid_ones():
    with raises(DTypeError, "placeholder 'x'", "'float64'", "float16, bfloat16, float32, int8, int32"):
        ph((2,), "float64", name="x")
    with raises(DTypeError, "cast of x[2] float16", "'fp8'", "bfloat16"):
        ks.cast(ph((2,), name="x"), "fp8")
    with raises(DTypeError, "None"):
        ph((2,), None)


@pytest.mark.parametrize(
    ("shape", "frag"),
    [((2, 0), "dimension 0"), ((2, -1), "dimension -1"), ((2.0, 3), "dimension 2.0"), ((True,), "True"),
     ("ab", "'ab'"), (None, "None")],
)
def test_placeholder_bad_shape(shape, frag):
    with raises(ShapeError, "placeholder 'x'", frag, "int", ">= 1"):
        ph(shape, name="x")


def test_bad_names():
    with raises(UnsupportedError, "placeholder", "'my x'", "identifier"):
        ph((2,), name="my x")
    with raises(UnsupportedError, "add", "'1st'"):
        ks.add(ph((2,)), 1, name="1st")
    with raises(DTypeError, "relu", "name must be a str", "int 3"):
        ks.relu(ph((2,)), name=3)


# --- operands -------------------------------------------------------------------------------------


def test_non_tensor_arguments():
    x = ph((2, 3), name="x")
    with raises(DTypeError, "add", "b is a numpy.ndarray", "pass a Tensor"):
        ks.add(x, np.ones((2, 3)))
    with raises(DTypeError, "mul", "a is a builtins.list"):
        [1, 2] * x  # noqa: B018 - the operator under test
    with raises(DTypeError, "exp", "x is a builtins.str"):
        ks.exp("x")
    with raises(DTypeError, "add", "numpy.ndarray"):
        np.ones((2, 3)) + x  # numpy defers to Tensor.__radd__
    with raises(DTypeError, "matmul", "b is the scalar 2"):
        ks.matmul(x, 2)
    with raises(DTypeError, "reduce_sum", "x is the scalar 1.5", "needs a Tensor"):
        ks.reduce_sum(1.5)
    with raises(DTypeError, "add", "only Python scalars", "(1, 2)"):
        ks.add(1, 2)


def test_bool_and_complex_scalars():
    x = ph((2,), name="x")
    with raises(DTypeError, "add", "b is the bool True", "use 1 or 0"):
        x + True
    with raises(DTypeError, "mul", "np.True_"):
        ks.mul(x, np.bool_(True))
    with raises(DTypeError, "sub", "complex", "(1+2j)"):
        x - (1 + 2j)
    with raises(DTypeError, "where", "a is the bool False"):
        ks.where(x, False, 1.0)


def test_float_scalar_with_int_tensor_suggests_cast():
    i = ph((4,), "int32", name="idx")
    with raises(DTypeError, "add", "float scalar 0.5", "idx[4] int32", "cast(x, 'float32')"):
        i + 0.5
    with raises(DTypeError, "where", "float scalar 1.5", "int8"):
        ks.where(i, ph((4,), "int8", name="m"), 1.5)


def test_scalar_out_of_range():
    with raises(DTypeError, "add: b", "300", "int8", "-128..127", "other operand: q[2] int8"):
        ph((2,), "int8", name="q") + 300
    with raises(DTypeError, "mul: b", "100000.0", "float16", "65504", "h[2] float16"):
        ph((2,), "float16", name="h") * 1e5
    with raises(DTypeError, "float scalar 0.5", "int32"):
        dsl_ops.const(0.5, "int32")
    ph((2,), "float16") * float("inf")  # explicit infinities are fine (masks)


def test_broadcast_mismatch_names_tensors():
    a, b = ph((64, 512), name="a"), ph((64, 256), name="b")
    with raises(ShapeError, "add", "a[64,512] float16 and b[64,256] float16", "512 vs 256", "equal or 1"):
        a + b
    with raises(ShapeError, "where", "c[3]", "a[64,512]"):
        ks.where(ph((3,), name="c"), a, 0.0)
    with raises(ShapeError, "maximum", "x[2,3]", "y[4,1,2]"):
        ks.maximum(ph((2, 3), name="x"), ph((4, 1, 2), name="y"))


def test_unnamed_tensors_use_graph_names_in_messages():
    x = ph((4, 3), name="x")
    with raises(ShapeError, "exp[4,3] float16", "add[5] float16"):
        ks.exp(x) + (ph((5,), name="y") + 1)


# --- dtypes per op ------------------------------------------------------------------------------


@pytest.mark.parametrize("fn", [ks.exp, ks.log, ks.sqrt, ks.rsqrt, ks.reciprocal, ks.erf, ks.tanh,
                                ks.sigmoid, ks.leaky_relu, ks.reduce_mean, ks.softmax, ks.layer_norm,
                                ks.rms_norm, ks.gelu, ks.silu])
def test_float_only_ops_reject_ints(fn):
    with raises(DTypeError, fn.__name__, "q[3,4] int8", "float", "cast(x, 'float32')"):
        fn(ph((3, 4), "int8", name="q"))


def test_integer_division():
    with raises(DTypeError, "div", "a[3] int32", "b[3] int8", "float"):
        ks.div(ph((3,), "int32", name="a"), ph((3,), "int8", name="b"))


def test_leaky_relu_alpha():
    for bad in ("0.1", None, True, [0.1]):
        with raises(DTypeError, "leaky_relu", "alpha", repr(bad)):
            ks.leaky_relu(ph((2,)), alpha=bad)


def test_flags_must_be_bool():
    with raises(DTypeError, "reduce_sum", "keepdims", "'yes'"):
        ks.reduce_sum(ph((2, 3)), 0, keepdims="yes")
    with raises(DTypeError, "matmul", "transpose_b", "1"):
        ks.matmul(ph((2, 3)), ph((2, 3)), transpose_b=1)


# --- axes -----------------------------------------------------------------------------------------


def test_axis_errors():
    x = ph((2, 3), name="x")
    with raises(ShapeError, "reduce_max", "axis 2", "x[2,3] float16", "2 dims", "[-2, 1]"):
        ks.reduce_max(x, 2)
    with raises(ShapeError, "reduce_sum", "axis -3"):
        ks.reduce_sum(x, (0, -3))
    with raises(ShapeError, "reduce_sum", "same dimension twice", "(1, -1)"):
        ks.reduce_sum(x, (1, -1))
    with raises(ShapeError, "reduce_mean", "must be an int", "1.0"):
        ks.reduce_mean(x, 1.0)
    with raises(ShapeError, "softmax", "axis 5"):
        ks.softmax(x, axis=5)
    with raises(ShapeError, "layer_norm", "axis -3"):
        ks.layer_norm(x, axis=-3)
    with raises(ShapeError, "topk", "0-d"):
        ks.topk(ph((), name="s"), 1)
    with raises(ShapeError, "gather", "axis 2", "x[2,3]"):
        ks.gather(x, ph((4,), "int32"), axis=2)


# --- matmul --------------------------------------------------------------------------------------


def test_matmul_errors():
    x, w = ph((64, 256), name="x"), ph((512, 255), name="w")
    with raises(ShapeError, "matmul: inner dimensions differ: x[64,256] @ w[512,255]^T needs "
                            "x.shape[-1] == w.shape[-1] (256 != 255)"):
        ks.matmul(x, w, transpose_b=True)
    with raises(ShapeError, "x[64,256]^T @ w[512,255]", "x.shape[-2] == w.shape[-2] (64 != 512)"):
        ks.matmul(x, w, transpose_a=True)
    with raises(ShapeError, "x[64,256] @ w[512,255] needs x.shape[-1] == w.shape[-2] (256 != 512)"):
        x @ w
    with raises(ShapeError, "matmul", "v[256] has 1 dims", ">= 2"):
        ks.matmul(x, ph((256,), name="v"))
    with raises(ShapeError, "matmul (batch dims)", "a[2,4,8]", "b[3,8,4]", "2 vs 3"):
        ks.matmul(ph((2, 4, 8), name="a"), ph((3, 8, 4), name="b"))


# --- conv2d ------------------------------------------------------------------------------------------


def test_conv2d_errors():
    x, w = ph((1, 3, 8, 8), name="x"), ph((4, 3, 3, 3), name="w")
    with raises(ShapeError, "conv2d", "channel mismatch", "x[1,3,8,8]", "C=3", "w[4,2,3,3]", "I=2"):
        ks.conv2d(x, ph((4, 2, 3, 3), name="w"))
    with raises(ShapeError, "conv2d", "x[3,8,8] has 3 dims", "NCHW"):
        ks.conv2d(ph((3, 8, 8), name="x"), w)
    with raises(ShapeError, "conv2d", "w[3,3,3] has 3 dims", "OIHW"):
        ks.conv2d(x, ph((3, 3, 3), name="w"))
    with raises(ShapeError, "conv2d", "kernel 9x9", "larger than the padded input 8x8", "x[1,3,8,8]"):
        ks.conv2d(x, ph((4, 3, 9, 9), name="k"))
    with raises(ShapeError, "kernel 11x9", "padded input 10x10", "(1, 1, 1, 1)"):
        ks.conv2d(x, ph((4, 3, 11, 9), name="k"), padding=1)
    with raises(ShapeError, "conv2d", "stride (0, 1)", ">= 1"):
        ks.conv2d(x, w, stride=(0, 1))
    with raises(ShapeError, "conv2d", "stride", "(1, 2, 3)"):
        ks.conv2d(x, w, stride=(1, 2, 3))
    with raises(ShapeError, "conv2d", "stride", "1.5"):
        ks.conv2d(x, w, stride=1.5)
    with raises(ShapeError, "conv2d", "padding 'FULL'", "'SAME' or 'VALID'"):
        ks.conv2d(x, w, padding="FULL")
    with raises(ShapeError, "conv2d", "padding (1, 2, 3)", "(pt, pb, pl, pr)"):
        ks.conv2d(x, w, padding=(1, 2, 3))
    with raises(ShapeError, "conv2d", "padding (1, 1, 1, 'a')", "ints"):
        ks.conv2d(x, w, padding=(1, 1, 1, "a"))
    with raises(ShapeError, "conv2d", "padding (0, -1, 0, 0)", ">= 0"):
        ks.conv2d(x, w, padding=(0, -1, 0, 0))


# --- layout ---------------------------------------------------------------------------------------


def test_reshape_errors():
    x = ph((64, 256), name="x")
    with raises(ShapeError, "reshape", "x[64,256] float16 (16384 elements)", "[100,-1]",
                "not divisible by 100"):
        ks.reshape(x, (100, -1))
    with raises(ShapeError, "reshape", "(16384 elements)", "[3,5] (15 elements)"):
        ks.reshape(x, (3, 5))
    with raises(ShapeError, "reshape", "more than one -1"):
        ks.reshape(x, (-1, -1))
    with raises(ShapeError, "reshape", "dimension 0"):
        ks.reshape(x, (0, 16384))


def test_transpose_errors():
    x = ph((2, 3, 4), name="x")
    with raises(ShapeError, "transpose", "perm (0, 0, 1)", "permutation of (0, 1, 2)", "x[2,3,4]"):
        ks.transpose(x, (0, 0, 1))
    with raises(ShapeError, "transpose", "perm (1, 0)", "3 dims"):
        ks.transpose(x, (1, 0))
    with raises(ShapeError, "transpose", "perm (0, 1, 3)"):
        ks.transpose(x, (0, 1, 3))
    with raises(ShapeError, "transpose", "tuple of ints", "'abc'"):
        ks.transpose(x, "abc")


def test_broadcast_to_errors():
    with raises(ShapeError, "broadcast_to", "x[3,2] float16", "[3,4]", "equal the target dim or be 1"):
        ks.broadcast_to(ph((3, 2), name="x"), (3, 4))
    with raises(ShapeError, "broadcast_to", "[4]", "at least 2 dims"):
        ks.broadcast_to(ph((1, 4), name="x"), (4,))


# --- index ------------------------------------------------------------------------------------------


def test_topk_errors():
    x = ph((4, 10), name="x")
    with raises(ShapeError, "topk", "k=11", "x[4,10] float16", "axis 1 of size 10", "1..10"):
        ks.topk(x, 11)
    with raises(ShapeError, "topk", "k=0", "1..4"):
        ks.topk(x, 0, axis=0)
    with raises(ShapeError, "topk", "k=2.0"):
        ks.topk(x, 2.0)


def test_gather_errors():
    x = ph((8, 3), name="table")
    with raises(DTypeError, "gather", "indices idx[5] float16", "int32 or int8", "cast(indices, 'int32')"):
        ks.gather(x, ph((5,), "float16", name="idx"))
    with raises(DTypeError, "gather", "indices is the scalar 3"):
        ks.gather(x, 3)


def test_where_cond_must_be_tensor():
    with raises(DTypeError, "where", "cond is the scalar 1"):
        ks.where(1, ph((2,)), 0.0)


# --- composites --------------------------------------------------------------------------------------


def test_composite_parameter_errors():
    x = ph((4, 8), name="x")
    with raises(UnsupportedError, "gelu", "approximate='fast'", "'none', 'tanh'"):
        ks.gelu(x, approximate="fast")
    with raises(DTypeError, "layer_norm", "eps", "'small'"):
        ks.layer_norm(x, eps="small")
    with raises(UnsupportedError, "rms_norm", "eps=-1e-06", ">= 0"):
        ks.rms_norm(x, eps=-1e-6)
    with raises(ShapeError, "layer_norm", "gamma g[4] float16", "x[4,8] float16", "x.shape[axis:]"):
        ks.layer_norm(x, ph((4,), name="g"))
    with raises(ShapeError, "layer_norm", "beta b[2,4,8]"):
        ks.layer_norm(x, beta=ph((2, 4, 8), name="b"))
    with raises(ShapeError, "rms_norm", "gamma g[3]"):
        ks.rms_norm(x, ph((3,), name="g"))
    with raises(DTypeError, "rms_norm", "gamma", "int32"):
        ks.rms_norm(x, ph((8,), "int32", name="g"))
    with raises(DTypeError, "layer_norm", "gamma is a numpy.ndarray"):
        ks.layer_norm(x, np.ones(8))


# --- int8 cube dtypes and dequantizing casts ----------------------------------------------------------


def test_int8_matmul_refuses_a_quantized_output_and_names_the_way_out():
    a, b = ph((4, 64), "int8", "qa"), ph((64, 8), "int8", "qb")
    with raises(DTypeError, "matmul", "out_dtype='int8'", "qa[4,64] int8", "qb[64,8] int8", "int32",
                "out_dtype='int32'", "cast(y, 'float16', scale="):
        ks.matmul(a, b, out_dtype="int8")
    with raises(DTypeError, "matmul", "out_dtype='float16'", "int32", "cast(y, 'float16', scale=0.01)"):
        ks.matmul(a, b, out_dtype="float16")
    with raises(DTypeError, "conv2d", "out_dtype='float32'", "int8", "cast(y, 'float32', scale="):
        ks.conv2d(ph((1, 2, 5, 5), "int8", "qx"), ph((3, 2, 3, 3), "int8", "qw"), out_dtype="float32")


def test_float_matmul_refuses_an_integer_output():
    with raises(DTypeError, "matmul", "out_dtype='int32'", "float16 inputs", "float32", "cast(y, 'int32') after"):
        ks.matmul(ph((4, 8), name="fa"), ph((8, 2), name="fb"), out_dtype="int32")
    with raises(DTypeError, "matmul: out_dtype", "'float64'", "float16, bfloat16, float32, int8, int32"):
        ks.matmul(ph((4, 8)), ph((8, 2)), out_dtype="float64")


def test_int32_matmul_is_refused_with_the_cube_dtypes():
    with raises(DTypeError, "matmul", "ia[4,8] int32", "meet in int32", "float16, bfloat16, float32, int8",
                "cast the operands to int8"):
        ks.matmul(ph((4, 8), "int32", "ia"), ph((8, 2), "int8", "ib"))


def test_scaled_cast_errors_name_the_scale_and_the_way_out():
    y = ph((4, 8), "int32", "acc")
    with raises(DTypeError, "cast of acc[4,8] int32 to int8 with scale", "cast(y, 'int8')"):
        ks.cast(y, "int8", scale=0.5)
    with raises(DTypeError, "scale 1e+300", "finite float32", "3.40282e+38"):
        ks.cast(y, "float16", scale=1e300)
    with raises(DTypeError, "cast: scale is the bool True"):
        ks.cast(y, "float16", scale=True)
    with raises(DTypeError, "scale s[8] int32", "float tensor", "cast(scale, 'float32')"):
        ks.cast(y, "float16", scale=ph((8,), "int32", "s"))
    with raises(ShapeError, "scale v[2,4,8] float32", "[2,4,8]", "x's shape [4,8]"):
        ks.cast(y, "float16", scale=ph((2, 4, 8), "float32", "v"))
    with raises(ShapeError, "cast", "v[3] float32", "dimension -1 is 8 vs 3"):
        ks.cast(y, "float16", scale=ph((3,), "float32", "v"))
