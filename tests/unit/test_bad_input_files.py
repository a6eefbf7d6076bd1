"""Files and the command line: nothing is written outside its directory, a user's files are never
replaced, OS errors name the path, and the CLI answers every mistake with one line and no traceback."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest

import kernelstudio as ks
from kernelstudio.cli import main
from kernelstudio.core.errors import InputError, UnsupportedError
from kernelstudio.core.files import MANIFEST, write_tree
from kernelstudio.core.names import inside

UNWRITABLE = "/proc/ks-no-such-dir/x"  # /proc refuses new entries even for root


def _prog(name: str = "x"):
    x = ks.placeholder((64, 128), "float16", name=name)
    return ks.lower(ks.create_schedule(ks.exp(x)))


# --- export_project --------------------------------------------------------------------------------------
def test_export_refuses_a_non_empty_directory(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match=r"is not empty \(it holds notes.txt\).*overwrite=True"):
        ks.export_project(_prog(), tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_overwrite_never_replaces_a_file_kernelstudio_did_not_write(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("my readme")
    (tmp_path / "CMakeLists.txt").write_text("my cmake")
    with pytest.raises(InputError, match="already holds CMakeLists.txt, README.md, which kernelstudio did not write"):
        ks.export_project(_prog(), tmp_path, overwrite=True)
    assert (tmp_path / "README.md").read_text() == "my readme"
    assert not (tmp_path / "op_kernel").exists()  # nothing was written


def test_overwrite_replaces_what_an_earlier_export_wrote(tmp_path: Path) -> None:
    out = tmp_path / "proj"
    ks.export_project(_prog(), out)
    assert (out / MANIFEST).is_file()
    (out / "mine.txt").write_text("kept")
    ks.export_project(_prog(), out, overwrite=True)
    assert (out / "mine.txt").read_text() == "kept"
    (out / "README.md").write_text("edited by hand")
    with pytest.raises(InputError, match="README.md, which kernelstudio did not write \\(or which changed since\\)"):
        ks.export_project(_prog(), out, overwrite=True)
    assert (out / "README.md").read_text() == "edited by hand"


@pytest.mark.parametrize("bad", ["yes", 1, None])
def test_overwrite_must_be_a_bool(tmp_path: Path, bad) -> None:
    with pytest.raises(InputError, match="overwrite must be True or False"):
        ks.export_project(_prog(), tmp_path / "p", overwrite=bad)


def test_export_into_a_file_or_an_unwritable_path(tmp_path: Path) -> None:
    f = tmp_path / "file"
    f.write_text("")
    with pytest.raises(InputError, match="exists and is not a directory"):
        ks.export_project(_prog(), f)
    with pytest.raises(InputError, match=f"cannot create the directory {UNWRITABLE}"):
        ks.export_project(_prog(), UNWRITABLE)


@pytest.mark.parametrize("empty", ["", "  "])
def test_an_empty_directory_name_is_not_the_current_directory(tmp_path: Path, empty: str,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match="would mean the current directory; name a directory of its own"):
        ks.export_project(_prog(), empty)
    assert list(tmp_path.iterdir()) == []


def test_a_directory_under_a_file_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    with pytest.raises(InputError, match=f"cannot create {tmp_path / 'f' / 'p' / 'q'}: {tmp_path / 'f'} is a file"):
        ks.export_project(_prog(), tmp_path / "f" / "p" / "q")


def test_overwrite_with_another_program_leaves_none_of_the_old_ones_files(tmp_path: Path) -> None:
    out = tmp_path / "proj"
    first = ks.lower(ks.create_schedule(ks.exp(ks.placeholder((64, 128), "float16", name="x"))), name="alpha")
    second = ks.lower(ks.create_schedule(ks.exp(ks.placeholder((64, 128), "float16", name="x"))), name="beta")
    ks.export_project(first, out)
    (out / "notes.txt").write_text("mine")
    old = {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()} - {MANIFEST, "notes.txt"}
    ks.export_project(second, out, overwrite=True)
    now = {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()}
    assert not [f for f in old & now if "alpha" in f]
    assert not any("alpha" in f for f in now), sorted(now)
    assert "notes.txt" in now and any("beta" in f for f in now)
    assert set(json.loads((out / MANIFEST).read_text())) == now - {MANIFEST, "notes.txt"}


def test_an_edited_file_of_an_earlier_export_is_left_alone(tmp_path: Path) -> None:
    out = tmp_path / "proj"
    first = ks.lower(ks.create_schedule(ks.exp(ks.placeholder((64, 128), "float16", name="x"))), name="alpha")
    ks.export_project(first, out)
    edited = next(p for p in out.rglob("*.cpp") if "alpha" in p.name)
    edited.write_text("// mine now\n")
    second = ks.lower(ks.create_schedule(ks.exp(ks.placeholder((64, 128), "float16", name="x"))), name="beta")
    ks.export_project(second, out, overwrite=True)
    assert edited.read_text() == "// mine now\n"


@pytest.mark.parametrize("bad", ["no", 1, None])
def test_high_level_must_be_a_bool(tmp_path: Path, bad) -> None:
    with pytest.raises(InputError, match="high_level must be True or False"):
        ks.export_project(_prog(), tmp_path / "p", high_level=bad)
    with pytest.raises(InputError, match="codegen: high_level must be True or False"):
        ks.codegen(_prog(), high_level=bad)
    assert not (tmp_path / "p").exists()


def test_a_program_name_that_would_leave_the_directory_is_refused(tmp_path: Path) -> None:
    for name in ("../escape", "/tmp/abs", "x\n#error hi", "my op"):
        bad = dataclasses.replace(_prog(), name=name)
        with pytest.raises(UnsupportedError, match="not a C identifier"):
            ks.export_project(bad, tmp_path / "p")
    assert not (tmp_path / "escape.json").exists()
    assert list(tmp_path.iterdir()) == []


def test_every_written_file_is_proven_inside_its_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="outside"):
        inside(tmp_path, "../x.txt")
    with pytest.raises(InputError, match="outside"):
        inside(tmp_path, "/etc/passwd")
    (tmp_path / "link").symlink_to(tmp_path.parent)
    with pytest.raises(InputError, match="outside"):
        inside(tmp_path, "link/x.txt")
    with pytest.raises(InputError, match="outside"):
        write_tree(tmp_path / "t", {"a/../../b.txt": "x"})
    assert not (tmp_path / "b.txt").exists()
    assert inside(tmp_path, "a/b.txt") == tmp_path.resolve() / "a" / "b.txt"


def test_a_symlink_planted_in_an_export_is_not_followed(tmp_path: Path) -> None:
    out = tmp_path / "proj"
    ks.export_project(_prog(), out)
    target = tmp_path / "victim.txt"
    target.write_text("safe")
    (out / "README.md").unlink()
    (out / "README.md").symlink_to(target)
    with pytest.raises(InputError, match="outside"):
        ks.export_project(_prog(), out, overwrite=True)
    assert target.read_text() == "safe"


# --- other writers ---------------------------------------------------------------------------------------
def test_chrome_trace_path_errors_name_the_path(tmp_path: Path) -> None:
    sim = ks.simulate(_prog())
    with pytest.raises(InputError, match=f"cannot write {UNWRITABLE}/t.json"):
        sim.to_chrome_trace(f"{UNWRITABLE}/t.json")
    with pytest.raises(InputError, match="is a directory"):
        sim.to_chrome_trace(str(tmp_path))
    sim.to_chrome_trace(str(tmp_path / "deep" / "t.json"))
    assert (tmp_path / "deep" / "t.json").stat().st_size > 0


def test_twin_keep_dir_errors_name_the_path(tmp_path: Path, twin_cache: Path) -> None:
    x = ks.placeholder((16, 64), "float32", name="x")
    out = ks.relu(x)
    code = ks.codegen(ks.lower(ks.create_schedule(out)))
    f = tmp_path / "a_file"
    f.write_text("")
    with pytest.raises(InputError, match=f"cannot write the run's files in {f}"):
        ks.twin.run(code, ks.random_inputs(out), keep_dir=str(f), cache_dir=twin_cache)


# --- the command line --------------------------------------------------------------------------------------
DESIGN = 'import kernelstudio as ks\nx = ks.placeholder((64, 128), "float16", name="x")\nout = ks.exp(x)\n'


def _cli(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


@pytest.mark.parametrize("text,code,words", [
    ("import sys\nsys.exit(3)\n", 1, ("design.py:2:", "called sys.exit(3)")),
    ("import sys\nsys.exit()\n", 1, ("called sys.exit(None)",)),
    ("x = 1\n\n\ny = 1 / 0\n", 1, ("design.py:4:", "ZeroDivisionError")),
    ("def build():\n    return {}[1]\n", 1, ("design.py:2:", "KeyError")),
    ("import kernelstudio as ks\nx = ks.placeholder((4,), 'f16')\n", 1, ("design.py:2:", "dtype 'f16'")),
    ("def f(:\n", 1, ("design.py:1:", "SyntaxError")),
    ("x = 1\n", 1, ("defines neither `out` nor build()",)),
    ("out = 3\n", 1, ("the design gave a int",)),
], ids=["exit3", "exit_none", "zero_div", "build_raises", "ks_error", "syntax", "no_out", "not_tensor"])
def test_cli_design_file_errors_keep_file_and_line(tmp_path: Path, capsys, text, code, words) -> None:
    design = tmp_path / "design.py"
    design.write_text(text)
    rc, err = _cli(capsys, "build", str(design), "--out", str(tmp_path / "o"))
    assert rc == code
    assert err.startswith("kernelstudio: error: ") and err.count("\n") == 1
    for w in words:
        assert w in err


def test_cli_usage_errors_name_the_commands(capsys) -> None:
    rc, err = _cli(capsys)
    assert rc == 2 and "kernelstudio build FILE.py --out DIR" in err and "kernelstudio targets" in err
    rc, err = _cli(capsys, "nope")
    assert rc == 2 and "build" in err and "targets" in err


def test_cli_paths(tmp_path: Path, capsys) -> None:
    design = tmp_path / "d.py"
    design.write_text(DESIGN)
    rc, err = _cli(capsys, "build", str(design), "--out", UNWRITABLE)
    assert rc == 2 and f"cannot create the output directory {UNWRITABLE}" in err
    rc, err = _cli(capsys, "build", str(tmp_path), "--out", str(tmp_path / "o"))
    assert rc == 1 and "is a directory" in err
    rc, err = _cli(capsys, "build", str(tmp_path / "missing.py"), "--out", str(tmp_path / "o"))
    assert rc == 1 and "does not exist" in err


def test_cli_rebuilds_into_its_own_directory_but_keeps_user_files(tmp_path: Path, capsys) -> None:
    design = tmp_path / "d.py"
    design.write_text(DESIGN)
    out = tmp_path / "o"
    assert _cli(capsys, "build", str(design), "--out", str(out))[0] == 0
    assert _cli(capsys, "build", str(design), "--out", str(out))[0] == 0
    assert {"report.txt", "trace.json", "exp_custom.json", MANIFEST} <= set(os.listdir(out))
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "README.md").write_text("my project")
    rc, err = _cli(capsys, "build", str(design), "--out", str(mine))
    assert rc == 1 and "README.md, which kernelstudio did not write" in err
    assert (mine / "README.md").read_text() == "my project"
