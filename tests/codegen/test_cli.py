"""The `kernelstudio` command line."""

from __future__ import annotations

import re

from kernelstudio.cli import main

DESIGN = """
import kernelstudio as ks
x = ks.placeholder((16, 64), "float16", name="x")
out = ks.softmax(x)
"""


def test_targets_lists_profiles(capsys) -> None:
    assert main(["targets"]) == 0
    assert "ascend910b2" in capsys.readouterr().out.split()


def test_build_writes_project_and_report(tmp_path, capsys) -> None:
    design = tmp_path / "design.py"
    design.write_text(DESIGN)
    assert main(["build", str(design), "--target", "ascend910b2", "--out", str(tmp_path / "out")]) == 0
    out = tmp_path / "out"
    assert (out / "main.cpp").is_file() and (out / "CMakeLists.txt").is_file()
    report = (out / "report.txt").read_text()
    assert "kernel softmax_div (operator SoftmaxCustom, op_kernel/softmax_custom.cpp)" in report
    assert "simulated time" in report or "simulation: skipped" in report


def test_build_function_convention(tmp_path) -> None:
    design = tmp_path / "design.py"
    design.write_text("import kernelstudio as ks\ndef build():\n    return ks.relu(ks.placeholder((8, 32), "
                      "'float16', name='x'))\n")
    assert main(["build", str(design), "--out", str(tmp_path / "o"), "--no-fuse"]) == 0


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith("kernelstudio: error:") and "\n" not in err, err
    return err


def test_bad_arguments_give_one_line_errors(tmp_path, capsys) -> None:
    assert main([]) == 2
    _one_line_error(capsys)
    assert main(["build", "x.py"]) == 2  # --out missing
    _one_line_error(capsys)
    assert main(["build", str(tmp_path / "missing.py"), "--out", str(tmp_path)]) == 1
    assert "does not exist" in _one_line_error(capsys)
    design = tmp_path / "d.py"
    design.write_text(DESIGN)
    assert main(["build", str(design), "--target", "nochip", "--out", str(tmp_path / "o")]) == 1
    assert "nochip" in _one_line_error(capsys)
    empty = tmp_path / "e.py"
    empty.write_text("y = 1\n")
    assert main(["build", str(empty), "--out", str(tmp_path / "o2")]) == 1
    assert "`out`" in _one_line_error(capsys)


def _operators(report: str) -> list[str]:
    return re.findall(r"^kernel \w+ \(operator (\w+)", report, flags=re.M)


SCHEDULED = """
import kernelstudio as ks
def build():
    x = ks.placeholder((64, 128), "float16", name="x")
    w = ks.placeholder((256, 128), "float16", name="w")
    out = ks.relu(ks.matmul(x, w, transpose_b=True), name="act")
    s = ks.create_schedule(out)
    s[out].split("m", 32).double_buffer(False)
    return s
"""


def test_no_fuse_replaces_a_design_schedule_and_says_what_was_dropped(tmp_path, capsys) -> None:
    design = tmp_path / "sched.py"
    design.write_text(SCHEDULED)
    assert main(["build", str(design), "--out", str(tmp_path / "fused")]) == 0
    fused_out = capsys.readouterr().out
    assert "note:" not in fused_out
    fused = (tmp_path / "fused" / "report.txt").read_text()
    assert "(fused)" in fused and len(_operators(fused)) == 1

    assert main(["build", str(design), "--out", str(tmp_path / "unfused"), "--no-fuse"]) == 0
    out = capsys.readouterr().out
    note = next(line for line in out.splitlines() if line.startswith("kernelstudio: note:"))
    for piece in ("--no-fuse", "unfused baseline of act", "2 kernel(s)", "2 directive(s) (double_buffer, split)",
                  "its fusion (1 kernel(s))", "without --no-fuse"):
        assert piece in note, piece
    report = (tmp_path / "unfused" / "report.txt").read_text()
    assert "(unfused)" in report and len(_operators(report)) == 2 and "note: --no-fuse" in report
    # one operator per kernel, named after the output (`act`) and what each kernel does
    assert "operator ActMatmul, op_kernel/act_matmul.cpp" in report
    assert "operator ActRelu, op_kernel/act_relu.cpp" in report
    assert (tmp_path / "unfused" / "op_kernel" / "act_relu.cpp").is_file()


def test_no_fuse_keeps_an_unfused_design_schedule_as_it_is(tmp_path, capsys) -> None:
    design = tmp_path / "plain.py"
    design.write_text("import kernelstudio as ks\ndef build():\n    x = ks.placeholder((8, 32), 'float16', "
                      "name='x')\n    return ks.create_schedule(ks.exp(ks.relu(x)), fuse=False)\n")
    assert main(["build", str(design), "--out", str(tmp_path / "o"), "--no-fuse"]) == 0
    assert "note:" not in capsys.readouterr().out
    assert "note:" not in (tmp_path / "o" / "report.txt").read_text()


def test_name_option_names_the_operator(tmp_path, capsys) -> None:
    design = tmp_path / "design.py"
    design.write_text(DESIGN)
    assert main(["build", str(design), "--out", str(tmp_path / "o"), "--name", "row_softmax"]) == 0
    out = tmp_path / "o"
    assert (out / "op_kernel" / "row_softmax.cpp").is_file() and (out / "row_softmax.json").is_file()
    assert "OP_ADD(RowSoftmax);" in (out / "op_host" / "row_softmax.cpp").read_text()
    assert main(["build", str(design), "--out", str(tmp_path / "o2"), "--name", "row softmax"]) == 1
    assert "not a C identifier" in capsys.readouterr().err


SPLIT = """
import kernelstudio as ks
x = ks.placeholder((64, 1024), "float16", name="x")
w = ks.placeholder((1024, 1024), "float16", name="w")
out = ks.layer_norm(ks.matmul(x, w, transpose_b=True), axis=-1)
"""


def test_build_picks_fused_or_split_by_cost_and_reports_why(tmp_path, capsys) -> None:
    design = tmp_path / "design.py"
    design.write_text(SPLIT)
    assert main(["build", str(design), "--target", "ascend910b1", "--out", str(tmp_path / "out")]) == 0
    report = (tmp_path / "out" / "report.txt").read_text()
    assert len(re.findall(r"^kernel \w+ \(operator ", report, re.M)) == 2  # the matmul and the layer_norm, kept apart
    (line,) = [ln for ln in report.splitlines() if ln.startswith("fusion: ")]
    assert "kept apart on ascend910b1" in line and "split" in line and "fused" in line
