"""The `kernelstudio` command line."""

from __future__ import annotations

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
    assert "kernel softmax_div" in report and ("simulated time" in report or "simulation: skipped" in report)


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
