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
    # one kernel: the matmul + layer_norm fused with sync_all, faster than its row blocks and the split pair
    assert len(re.findall(r"^kernel \w+ \(operator ", report, re.M)) == 1
    (line,) = [ln for ln in report.splitlines() if ln.startswith("fusion: ")]
    assert "fusion pays on ascend910b1" in line and "with sync_all (row blocks:" in line and "vs split" in line


INT8_DESIGN = """
import kernelstudio as ks
a = ks.placeholder((50, 256), "int8", name="a")
b = ks.placeholder((256, 37), "int8", name="b")
s = ks.placeholder((37,), "float32", name="s")
acc = ks.matmul(a, b)
out = ks.relu(ks.cast(acc, "float16", scale=0.01) + ks.cast(ks.cast(acc, "float16", scale=s), "float16"))
"""


def test_build_of_an_int8_design_writes_a_project(tmp_path, capsys) -> None:
    design = tmp_path / "int8.py"
    design.write_text(INT8_DESIGN)
    out = tmp_path / "out"
    assert main(["build", str(design), "--out", str(out)]) == 0, capsys.readouterr().err
    report = (out / "report.txt").read_text()
    assert "simulated time" in report and "cube_vector" in report
    kernel = next((out / "op_kernel").glob("*.cpp")).read_text()
    assert "int8_t" in kernel and "int32_t>;" in kernel  # int8 A/B, an int32 C type
    assert not [p for p in out.iterdir() if p.name.startswith(".kernelstudio-staging")]


def _tree(root) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_failing_build_leaves_no_directory(tmp_path, capsys, monkeypatch) -> None:
    design = tmp_path / "d.py"
    design.write_text(DESIGN)
    out = tmp_path / "new" / "deeper"
    assert main(["build", str(design), "--target", "nochip", "--out", str(out)]) == 1
    assert "nochip" in _one_line_error(capsys)
    assert not (tmp_path / "new").exists()

    import kernelstudio.cli as cli
    from kernelstudio.core.errors import UnsupportedError

    def fail(prog, extra):
        raise UnsupportedError("simulate: no model for this kernel; build with fuse=False")

    monkeypatch.setattr(cli, "_simulate", fail)  # fails after lowering and code generation
    assert main(["build", str(design), "--out", str(out)]) == 1
    assert "no model for this kernel" in _one_line_error(capsys)
    assert not (tmp_path / "new").exists()


def test_a_write_that_fails_midway_changes_nothing(tmp_path, capsys, monkeypatch) -> None:
    import kernelstudio.core.files as files

    design = tmp_path / "d.py"
    design.write_text(DESIGN)
    out = tmp_path / "out"
    assert main(["build", str(design), "--out", str(out)]) == 0
    before = _tree(out)
    real, calls = files.write_text, []

    def flaky(path, text):
        calls.append(path)
        if len(calls) == 4:
            raise files.os_error(OSError(28, "No space left on device"), path, "write")
        return real(path, text)

    monkeypatch.setattr(files, "write_text", flaky)
    design.write_text(DESIGN.replace("(16, 64)", "(32, 64)"))  # every file's text changes
    assert main(["build", str(design), "--out", str(out)]) == 1
    assert "No space left on device" in _one_line_error(capsys)
    assert len(calls) == 4 and _tree(out) == before  # the earlier build is intact, no staging left over
    calls.clear()
    assert main(["build", str(design), "--out", str(tmp_path / "fresh")]) == 1
    _one_line_error(capsys)
    assert not (tmp_path / "fresh").exists()


def test_an_int8_conv_build_is_refused_cleanly(tmp_path, capsys) -> None:
    design = tmp_path / "conv8.py"
    design.write_text("import kernelstudio as ks\n"
                      "x = ks.placeholder((1, 16, 10, 10), 'int8', name='x')\n"
                      "w = ks.placeholder((32, 16, 3, 3), 'int8', name='w')\n"
                      "out = ks.cast(ks.conv2d(x, w, padding=1), 'float16', scale=0.01)\n")
    out = tmp_path / "o"
    assert main(["build", str(design), "--out", str(out)]) == 1
    err = _one_line_error(capsys)
    assert "int8" in err and "float16" in err  # the documented limit, with the dtypes to use instead
    assert not out.exists()


KNOBBED = """
import kernelstudio as ks
def build():
    x = ks.placeholder((64, 256), "float16", name="x")
    w = ks.placeholder((512, 256), "float16", name="w")
    out = ks.relu(ks.matmul(x, w, transpose_b=True), name="act")
    s = ks.create_schedule(out, fuse=True)
    s[out].split("n", ks.knob("tile_n", 128, [64, 128, 256])).double_buffer(ks.knob("db", True, [False, True]))
    return s
"""


def test_tune_searches_the_knobs_saves_and_writes_the_best(tmp_path, capsys) -> None:
    import kernelstudio as ks

    design = tmp_path / "knobbed.py"
    design.write_text(KNOBBED)
    db = tmp_path / "designs.sqlite"
    assert main(["tune", str(design), "--strategy", "grid", "--budget", "6", "--db", str(db),
                 "--save", "act_best", "--out", str(tmp_path / "best")]) == 0
    out = capsys.readouterr().out
    assert "tune knobbed on ascend910b2: grid, budget 6" in out and "space 6 configurations" in out
    best = re.search(r"best +([\d.]+) us +(\{.*?\})", out)
    assert best is not None
    (rec,) = ks.designs(db=db)
    assert rec.name == "act_best" and abs(rec.time_us - float(best.group(1))) < 0.01
    report = (tmp_path / "best" / "report.txt").read_text()
    assert report.startswith("tune knobbed") and (tmp_path / "best" / "main.cpp").is_file()
    # a second tune of the same design is all cache hits
    assert main(["tune", str(design), "--strategy", "grid", "--budget", "6", "--db", str(db)]) == 0
    assert "(0 built, 6 cache hits)" in capsys.readouterr().out


def test_tune_of_a_design_without_knobs_says_how(tmp_path, capsys) -> None:
    design = tmp_path / "plain.py"
    design.write_text(DESIGN)
    assert main(["tune", str(design), "--budget", "4", "--db", str(tmp_path / "d.sqlite")]) == 1
    err = _one_line_error(capsys)
    assert "knob" in err
