"""Operator names: CamelCase op types, CANN's snake spelling, built-in clashes, odd user names, and
unique readable names for the kernels of one program."""

from __future__ import annotations

import pytest

import kernelstudio as ks
from kernelstudio.codegen import op_names
from kernelstudio.core.names import CANN_BUILTIN_OPS, cann_snake, is_builtin_op, op_name, pascal_case, sanitize
from kernelstudio.lower.pipeline import default_name, describe


@pytest.mark.parametrize(("name", "snake", "op_type"), [
    ("mla_prolog_lite", "mla_prolog_lite", "MlaPrologLite"),
    ("attn_prolog", "attn_prolog", "AttnProlog"),
    ("AttnProlog", "attn_prolog", "AttnProlog"),
    ("my-op 2", "my_op2", "MyOp2"),          # odd user names become identifiers
    ("  Fancy  Kernel!! ", "fancy_kernel", "FancyKernel"),
    ("2x", "op2x", "Op2x"),                   # never starts with a digit
    ("--", "kernel", "Kernel"),               # nothing usable: a readable default
    ("layer_norm2", "layer_norm2", "LayerNorm2"),
])
def test_pascal_case_and_snake(name: str, snake: str, op_type: str) -> None:
    assert op_name(name) == (snake, op_type, False)


def test_snake_is_what_cann_derives_from_the_op_type() -> None:
    # msOpGen's lower_with_under rule: add_custom.cpp for AddCustom
    assert cann_snake("AddCustom") == "add_custom"
    assert cann_snake("ABCDef") == "abc_def" and cann_snake("Abc2DEf") == "abc2d_ef"
    for name in ("mla_prolog_lite", "my-op 2", "gelu_mul_2", "x"):
        snake, op_type, _ = op_name(name)
        assert cann_snake(op_type) == snake


@pytest.mark.parametrize(("name", "snake", "op_type"), [
    ("relu", "relu_custom", "ReluCustom"),
    ("add", "add_custom", "AddCustom"),
    ("matmul", "matmul_custom", "MatmulCustom"),   # MatMul up to case
    ("layer_norm", "layer_norm_custom", "LayerNormCustom"),
    ("gelu_mul", "gelu_mul_custom", "GeluMulCustom"),
    ("softmax", "softmax_custom", "SoftmaxCustom"),
    ("exp", "exp_custom", "ExpCustom"),
    ("printf", "printf_custom", "PrintfCustom"),    # not an op, but a C symbol the kernel function would hide
])
def test_builtin_and_symbol_clashes_get_the_custom_suffix(name: str, snake: str, op_type: str) -> None:
    assert op_name(name) == (snake, op_type, True)
    assert not is_builtin_op(op_type)


def test_the_builtin_list_holds_the_common_cann_ops() -> None:
    for op in ("Add", "Mul", "Relu", "Gelu", "MatMul", "MatMulV2", "BatchMatMul", "LayerNorm", "Softmax",
               "SoftmaxV2", "Cast", "Conv2D", "Transpose", "Reshape", "RmsNorm", "TopK", "GatherV2"):
        assert op in CANN_BUILTIN_OPS and is_builtin_op(op.upper())
    assert not is_builtin_op("MlaPrologLite")


def test_sanitize_and_pascal_case() -> None:
    assert sanitize("my-op 2") == "my_op_2" and sanitize("HTTPServer") == "http_server"
    assert sanitize("é") == "kernel" and len(sanitize("a" * 200)) == 64
    assert pascal_case("mla_prolog_lite") == "MlaPrologLite"


def test_describe_names_what_nodes_compute_without_graph_numbering() -> None:
    x = ks.placeholder((64, 256), "float16", name="x")
    w = ks.placeholder((512, 256), "float16", name="w")
    out = ks.gelu(ks.layer_norm(ks.matmul(x, w, transpose_b=True)) + 1.0)
    sched = ks.create_schedule(out)
    assert describe(sched.graph.nodes) == "matmul_layer_norm_gelu"
    assert default_name(sched) == "matmul_layer_norm_gelu"  # the output has no name of the user's
    assert default_name(ks.create_schedule(ks.relu(x, name="act"))) == "act"
    assert describe(ks.create_schedule(ks.leaky_relu(ks.matmul(x, w, transpose_b=True), 0.1)).graph.nodes) == \
        "matmul_leaky_relu"


def _unfused_attn():
    x = ks.placeholder((64, 256), "float16", name="x")
    w = ks.placeholder((512, 256), "float16", name="w")
    b = ks.placeholder((512,), "float16", name="b")
    return ks.gelu(ks.layer_norm(ks.matmul(x, w, transpose_b=True)) + b)


def test_kernels_of_one_program_get_unique_readable_names() -> None:
    prog = ks.lower(ks.create_schedule(_unfused_attn(), fuse=False), name="attn")
    names = list(op_names(prog).values())
    assert [n.snake for n in names] == ["attn_matmul", "attn_layer_norm", "attn_add", "attn_gelu"]
    assert [n.op_type for n in names] == ["AttnMatmul", "AttnLayerNorm", "AttnAdd", "AttnGelu"]
    assert len({n.op_type.lower() for n in names}) == len(names)


def test_two_kernels_that_do_the_same_are_numbered() -> None:
    x = ks.placeholder((64, 64), "float16", name="x")
    prog = ks.lower(ks.create_schedule(ks.relu(ks.relu(x) * 2.0), fuse=False), name="twice")
    snakes = [n.snake for n in op_names(prog).values()]
    assert len(snakes) == len(set(snakes)) == 3
    assert snakes[0] == "twice_relu" and "twice_relu2" in snakes  # `twice_relu_2` in CANN's spelling


def test_a_single_kernel_takes_the_design_name_and_clashes_are_explained() -> None:
    x = ks.placeholder((8, 32), "float16", name="x")
    [n] = op_names(ks.lower(ks.create_schedule(ks.relu(x)))).values()  # unnamed output: named after what it does
    assert (n.snake, n.op_type, n.renamed) == ("relu_custom", "ReluCustom", True)
    assert "CANN built-in" in n.note() and "'Custom' was appended" in n.note()
    [n] = op_names(ks.lower(ks.create_schedule(ks.relu(x, name="clipped")))).values()
    assert (n.snake, n.op_type, n.note()) == ("clipped", "Clipped", None)
