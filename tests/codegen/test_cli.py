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
    from kernelstudio.errors import UnsupportedError

    def fail(prog, extra):
        raise UnsupportedError("simulate: no model for this kernel; build with fuse=False")

    monkeypatch.setattr(cli, "_simulate", fail)  # fails after lowering and code generation
    assert main(["build", str(design), "--out", str(out)]) == 1
    assert "no model for this kernel" in _one_line_error(capsys)
    assert not (tmp_path / "new").exists()


def test_a_write_that_fails_midway_changes_nothing(tmp_path, capsys, monkeypatch) -> None:
    import kernelstudio.files as files

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
