"""`%%ascend_c`: a user's own Ascend C in a cell, run on the twin, with its Studio (timeline, idle causes, sync
findings, source with the findings' lines marked). The magic line's mistakes are MagicUsageErrors that name
the option; a kernel that fails to compile or match its reference is one short AscendCCellError."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kernelstudio.notebook.ascendc_magic import AscendCCellError, parse_ascend_c_args
from kernelstudio.notebook.ascendc_view import AscendCStudio, findings_html, same_chip_targets, source_html
from kernelstudio.notebook.magic import MagicUsageError

FLAGS = Path(__file__).parents[1] / "ascendc" / "kernels" / "add_flags"
SOURCE = (FLAGS / "add_flags.cpp").read_text()
LINE = ("--block-dim 2 --args 'x, y, ks.ascendc.out(4096, \"float16\")' "
        "--tiling 'dict(blockLength=2048, tileLength=512)' ")


def _line(header: str, extra: str = "") -> str:
    return "add_flags " + LINE + f"--files {header} " + extra


@pytest.fixture
def ns(shell, tmp_path, twin_cache):  # twin_cache: marks the tests `twin`
    (tmp_path / "add_flags_tiling.h").write_text((FLAGS / "add_flags_tiling.h").read_text())
    shell.user_ns.pop("add_flags", None)
    rng = np.random.default_rng(0)
    shell.user_ns.update(x=rng.standard_normal(4096).astype(np.float16),
                         y=rng.standard_normal(4096).astype(np.float16))
    shell.run_cell("import kernelstudio as ks")
    return shell, str(tmp_path / "add_flags_tiling.h")


def test_parse_reads_every_option():
    a = parse_ascend_c_args("add --kernel add_k --block-dim 8 --target ascend910b4 --args 'x, y' "
                            "--tiling=t --reference ref --files a.h,b.h")
    assert (a.name, a.kernel, a.block_dim, a.target, a.args, a.tiling, a.reference, a.files) == \
        ("add", "add_k", 8, "ascend910b4", "x, y", "t", "ref", ("a.h", "b.h"))


@pytest.mark.parametrize(("line", "match"), [
    ("", "needs a name"), ("1add", "Python identifier"), ("add --block-dim 0", "--block-dim"),
    ("add --block-dim x", "--block-dim"), ("add --target tpu", "unknown target"), ("add --args", "needs a value"),
    ("add --bogus 1", "unknown option"), ("add b", "one kernel name"), ("add --args 'x", "cannot read"),
])
def test_bad_lines_name_the_option(line, match):
    with pytest.raises(MagicUsageError, match=match):
        parse_ascend_c_args(line)


def test_the_cell_runs_on_the_twin_and_shows_its_studio(ns):
    shell, header = ns
    shell.run_cell_magic("ascend_c", _line(header, "--reference 'lambda x, y: x + y'"),
                         SOURCE)
    k = shell.user_ns["add_flags"]
    np.testing.assert_array_equal(k.output, shell.user_ns["x"] + shell.user_ns["y"])
    studio = shell.magics_manager.registry["AscendKernelMagics"].studios["add_flags"]
    assert isinstance(studio, AscendCStudio) and studio.checked
    assert studio.sim.time_us > 0 and studio.tabs.titles == ("Timeline", "Roofline", "Sync check", "Source")
    # the capacity bar: the three 1 KiB TBufs the kernel's InitBuffer calls reserve in UB
    cap = studio.capacity.value
    assert "(3&nbsp;/&nbsp;192&nbsp;KiB)" in cap and 'title="3,072 / 196,608 B"' in cap
    assert studio.roofline.data and studio.roofline.data[-1].x[0] > 0  # the run's point: flops per byte
    assert "No sync findings" in studio.sync_view.value
    assert "outputs match the reference" in studio.header.value
    lanes = {lane["pipe"] for lane in studio.timeline_view.tl["lanes"]}
    assert {"MTE2", "VECTOR", "MTE3"} <= lanes
    assert "add_flags.cpp" in studio.source_view.value and "add_flags_tiling.h" in studio.source_view.value


def test_a_seeded_race_is_listed_and_its_lines_marked(ns):
    shell, header = ns
    racy = SOURCE.replace("            WaitFlag<HardEvent::MTE2_V>(0);\n", "", 1)
    shell.run_cell_magic("ascend_c", _line(header), racy)
    studio = shell.magics_manager.registry["AscendKernelMagics"].studios["add_flags"]
    kinds = {f.kind for f in studio.findings}
    assert "race" in kinds
    add_line = next(i for i, t in enumerate(racy.splitlines(), 1) if "Add(z, x, y" in t)
    assert f"add_flags.cpp:{add_line}" in studio.sync_view.value
    marked = [chunk for chunk in studio.source_view.value.split('class="ks-src-line"') if "#fff3bf" in chunk[:80]]
    assert any(f"{add_line:4d} " in chunk for chunk in marked)
    assert "race" in studio.summary()


def test_l2_and_target_retime_the_same_log_and_a_refusal_keeps_the_views(ns):
    shell, header = ns
    shell.run_cell_magic("ascend_c", _line(header), SOURCE)
    studio = shell.magics_manager.registry["AscendKernelMagics"].studios["add_flags"]
    cold = studio.sim.time_us
    studio.l2.value = "warm"
    assert studio.sim.metrics["l2_start"] == "warm" and studio.sim.time_us <= cold
    assert studio.kernel.target in same_chip_targets(studio.kernel.target)
    before = studio.sim
    studio.kernel = _Refusing(studio.kernel)
    studio.retime()
    assert studio.sim is before and "TraceError" in studio.banner.value


def test_a_kernel_that_does_not_match_its_reference_is_one_short_error(ns):
    shell, header = ns
    with pytest.raises(AscendCCellError, match="MismatchError"):
        shell.run_cell_magic("ascend_c", _line(header, "--reference 'lambda x, y: x - y'"),
                             SOURCE)
    assert "add_flags" not in shell.user_ns


def test_a_bad_expression_names_the_option(ns):
    shell, header = ns
    with pytest.raises(MagicUsageError, match="--args .*NameError"):
        shell.run_cell_magic("ascend_c", "add_flags --args 'nope, y'", SOURCE)
    with pytest.raises(MagicUsageError, match="--files 'missing.h'"):
        shell.run_cell_magic("ascend_c", "add_flags --files missing.h", SOURCE)


def test_the_html_of_no_findings_and_of_a_source_without_findings():
    assert "No sync findings" in findings_html([])
    html_ = source_html({"k.cpp": "int a;\nint b;"}, [])
    assert "#fff3bf" not in html_ and "   2 " in html_


class _Refusing:
    """A kernel whose re-timing is refused, as a target of another chip would be."""

    def __init__(self, k):
        self._k = k

    def __getattr__(self, name):
        return getattr(self._k, name)

    def simulate(self, target=None, *, l2="cold"):
        from kernelstudio.ascendc import TraceError

        raise TraceError("target 'x': another chip")
