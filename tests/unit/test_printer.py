"""Graph text and DOT printers: content, colours by unit, clusters, determinism."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import kernelstudio.dsl as ks
from kernelstudio.core.errors import InputError
from kernelstudio.ir import UNIT_COLORS, Unit, format_graph, to_dot


def build():
    x = ks.placeholder((64, 256), "float16", name="x")
    w = ks.placeholder((512, 256), "float16", name="w")
    b = ks.placeholder((512,), "float16", name="b")
    y = ks.matmul(x, w, transpose_b=True)
    y = ks.layer_norm(y, axis=-1, eps=1e-5)
    return ks.gelu(y + b), y


SMALL_TEXT = """\
%x = placeholder() : [4,8] float32
%input = placeholder() : [8] float32
%add = add(%x, %input) : [4,8] float32
%r = reshape(%add) : [32] float32
%silu_sigmoid = sigmoid(%r) : [32] float32  # silu#0
%silu_mul = mul(%r, %silu_sigmoid) : [32] float32  # silu#0
%reduce_max = reduce_max(%silu_mul) : [] float32  {axes=(0,), keepdims=False}
return %reduce_max, %silu_mul
"""


def small():
    x = ks.placeholder((4, 8), "float32", name="x")
    h = ks.silu(ks.reshape(x + ks.placeholder((8,), "float32"), (32,), name="r"))
    return ks.reduce_max(h), h


def test_format_graph_golden_text():
    assert format_graph(small()) == SMALL_TEXT


def test_format_graph_contents():
    out, _ = build()
    text = format_graph(out)
    lines = text.splitlines()
    assert lines[0] == "%x = placeholder() : [64,256] float16"
    assert "%matmul = matmul(%x, %w) : [64,512] float16  {transpose_a=False, transpose_b=True}" in lines
    assert ("%layer_norm_reduce_mean = reduce_mean(%matmul) : [64,1] float16  {axes=(1,), keepdims=True}"
            "  # layer_norm#0") in lines
    assert "%layer_norm_const = const() : [] float16  {value=1e-05}  # layer_norm#0" in lines
    assert "%add = add(%layer_norm_mul, %b) : [64,512] float16" in lines
    assert sum(line.endswith("# gelu#0") for line in lines) == 8
    assert lines[-1] == "return %gelu_mul_2"
    assert len(lines) == 22


def test_printers_are_deterministic_across_rebuilds():
    a, b = build()[0], build()[0]
    assert a.node.composite != b.node.composite  # fresh composite ids ...
    assert format_graph(a) == format_graph(b)  # ... but the same text
    assert to_dot(a) == to_dot(b)
    u1 = ks.exp(ks.placeholder((2,), "float32"))
    u2 = ks.exp(ks.placeholder((2,), "float32"))
    assert u1.node != u2.node and format_graph(u1) == format_graph(u2)
    assert "uid" not in format_graph(u1) and "uid" not in to_dot(u1)


def test_composites_numbered_per_name():
    x = ks.placeholder((4, 8), "float32", name="x")
    text = format_graph(ks.gelu(ks.gelu(ks.softmax(x))))
    assert "# softmax#0" in text and "# gelu#0" in text and "# gelu#1" in text
    assert "# gelu#2" not in text


def _node_attrs(dot: str, name: str) -> str:
    m = re.search(rf'^\s*"{re.escape(name)}" \[(.*)\];$', dot, re.M)
    assert m, f"node {name} not in DOT"
    return m.group(1)


def test_dot_nodes_labels_and_unit_colours():
    out, _ = build()
    r = ks.reshape(out, (-1,), name="flat")
    dot = to_dot(r)
    assert dot.startswith("digraph kernelstudio {") and dot.rstrip().endswith("}")
    mm = _node_attrs(dot, "matmul")
    assert 'label="matmul\\n[64,512] float16"' in mm and f'fillcolor="{UNIT_COLORS[Unit.CUBE]}"' in mm
    assert f'fillcolor="{UNIT_COLORS[Unit.VECTOR]}"' in _node_attrs(dot, "add")
    flat = _node_attrs(dot, "flat")
    assert 'label="flat\\nreshape\\n[32768] float16"' in flat
    assert f'fillcolor="{UNIT_COLORS[Unit.SCALAR]}"' in flat and "penwidth" in flat
    assert f'fillcolor="{UNIT_COLORS[Unit.NONE]}"' in _node_attrs(dot, "x")
    assert 'label="1e-05\\nfloat16"' in _node_attrs(dot, "layer_norm_const")
    assert "penwidth" not in _node_attrs(dot, "add")
    assert '"x" -> "matmul";' in dot and '"w" -> "matmul";' in dot and '"b" -> "add";' in dot
    assert len(set(UNIT_COLORS.values())) == 4
    assert all(re.fullmatch(r"#[0-9A-F]{6}", c) for c in UNIT_COLORS.values())
    for unit in ("cube", "vector", "scalar", "leaf"):
        assert f'"legend:{unit}" [label="{unit}"' in dot


def test_dot_composite_clusters_dashed():
    out, _ = build()
    dot = to_dot(out)
    for comp in ("layer_norm", "gelu"):
        m = re.search(rf'subgraph "cluster_{comp}_0" {{\n\s*label="{comp}#0"; style="dashed,rounded"', dot)
        assert m, comp
    block = dot.split('subgraph "cluster_gelu_0" {')[1].split("}")[0]
    assert '"gelu_erf"' in block and '"matmul"' not in block


def test_dot_kernel_clusters_nest_composites():
    out, ln = build()
    epilogue = [n for n in _nodes(out) if n.composite is not None or n.op.value == "add"]
    mm = ln.node.inputs[0].inputs[0]  # the matmul feeding layer_norm's sub
    assert mm.op.value == "matmul"
    dot = to_dot(out, clusters=[("mm_kernel", [mm]), ('ep"ilogue', epilogue)])
    k0 = dot.index('subgraph "cluster_kernel_0"')
    k1 = dot.index('subgraph "cluster_kernel_1"')
    assert 'label="kernel mm_kernel"' in dot and 'label="kernel ep\\"ilogue"' in dot
    assert '"matmul" [' in dot[k0:k1]
    kernel1 = dot[k1:dot.index('\n  "x" [')]
    assert 'subgraph "cluster_k1_layer_norm_0"' in kernel1 and 'subgraph "cluster_k1_gelu_0"' in kernel1
    assert '"gelu_mul_2" [' in kernel1 and '"add" [' in kernel1
    assert dot.count('"layer_norm_sub" [') == 1
    assert to_dot(out, clusters=[("mm_kernel", [mm]), ('ep"ilogue', epilogue)]) == dot


def _nodes(t):
    from kernelstudio.ir import Graph

    return list(Graph(t.node))


def test_dot_cluster_errors():
    out, ln = build()
    stranger = ks.exp(ks.placeholder((3,), "float32", name="z"))
    with pytest.raises(InputError, match="cluster 'k' lists exp \\[3\\], which is not a node of this graph"):
        to_dot(out, clusters=[("k", [stranger.node])])
    with pytest.raises(InputError, match="node layer_norm_mul is in both clusters 'a' and 'b'"):
        to_dot(out, clusters=[("a", [ln.node]), ("b", [ln])])
    with pytest.raises(InputError, match="cluster 'k' lists 'oops'"):
        to_dot(out, clusters=[("k", ["oops"])])


def test_dot_renders_with_graphviz_pure(tmp_path):
    exe = Path(sys.executable).parent / "graphviz-pure"
    if not exe.exists():
        pytest.skip("graphviz-pure is not installed in this environment")
    out, ln = build()
    src = tmp_path / "g.dot"
    src.write_text(to_dot(out, clusters=[("k", [ln.node])]))
    res = subprocess.run([str(exe), "-Tsvg", str(src)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert "<svg" in res.stdout and "gelu#0" in res.stdout


def test_repeated_user_names_stay_distinct():
    h = ks.placeholder((4,), "float32", name="x")
    for _ in range(3):
        h = ks.relu(h * 2.0, name="h")
    text = format_graph(h)
    assert "%h = relu(%mul) : [4] float32" in text
    assert "%h_1 = relu(%mul_1) : [4] float32" in text and "%h_2 = relu(%mul_2)" in text
    dot = to_dot(h)
    assert '"h" -> "mul_1";' in dot and '"h_1" -> "mul_2";' in dot
