"""The reference kernels every tier checks: built fresh each call (graphs are values)."""

from __future__ import annotations

import kernelstudio as ks


def mla_prolog_lite(m: int = 64, k: int = 256, n: int = 512):
    x = ks.placeholder((1, m, k), "float16", name="x")
    w = ks.placeholder((n, k), "float16", name="w")
    b = ks.placeholder((n,), "float16", name="bias")
    y = ks.matmul(x, w, transpose_b=True)
    y = ks.layer_norm(y, axis=-1, eps=1e-5)
    return ks.gelu(y + b, name="out")


def conv_bias_relu(n: int = 1, cin: int = 16, hw: int = 20, cout: int = 32):
    x = ks.placeholder((n, cin, hw, hw), "float16", name="x")
    w = ks.placeholder((cout, cin, 3, 3), "float16", name="w")
    b = ks.placeholder((cout, 1, 1), "float16", name="bias")
    return ks.relu(ks.conv2d(x, w, padding="SAME") + b)


def softmax(rows: int = 100, cols: int = 300, dtype: str = "float16"):
    x = ks.placeholder((rows, cols), dtype, name="x")
    return ks.softmax(x, axis=-1)


def layer_norm(rows: int = 50, cols: int = 200, dtype: str = "float32"):
    x = ks.placeholder((rows, cols), dtype, name="x")
    g = ks.placeholder((cols,), dtype, name="gamma")
    b = ks.placeholder((cols,), dtype, name="beta")
    return ks.layer_norm(x, g, b)


def elementwise_chain(dtype: str = "float16"):
    x = ks.placeholder((4, 37, 129), dtype, name="x")
    y = ks.placeholder((129,), dtype, name="y")
    z = ks.placeholder((4, 37, 1), dtype, name="z")
    return ks.relu((x + y) * 0.5 - z) + ks.exp(-ks.abs(x))


REFERENCE = {
    "mla_prolog_lite": mla_prolog_lite,
    "conv_bias_relu": conv_bias_relu,
    "softmax": softmax,
    "layer_norm": layer_norm,
    "elementwise_chain": elementwise_chain,
}

TOL = {"float16": 2e-2, "bfloat16": 6e-2, "float32": 2e-3}
