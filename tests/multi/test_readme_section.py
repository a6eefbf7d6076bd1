"""The README's "Across devices" section: its example prints exactly what the README shows, and the
numbers its prose quotes are the model's (not retyped)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

import kernelstudio as ks

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()
CODE_HEADING = "\n### The code, run on the CPU\n"


@pytest.fixture(scope="module")
def section() -> str:
    m = re.search(r"## Across devices \(`ks\.multi`\)\n(.*?)\n## ", README, flags=re.S)
    assert m, "README: the section '## Across devices (`ks.multi`)' is missing"
    return m.group(1)


def test_the_examples_print_what_the_readme_shows(section):
    """The model's example and the Studio's (the same cell built as the Studio builds it)."""
    model = section.split(CODE_HEADING)[0]  # the generated code's example runs on the twin (below)
    blocks = re.findall(r"```python\n(.*?)```\n```text\n(.*?)```\n", model, flags=re.S)
    assert len(blocks) == 2
    for code, shown in blocks:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, "README.md", "exec"), {})  # noqa: S102 - our own documentation
        assert out.getvalue() == shown


def test_the_studio_cell_is_the_one_the_example_builds_and_its_refused_count_is_refused(section):
    cell = re.search(r"```\n%%ascend_kernel tp_allreduce\n(.*?)```\n", section, flags=re.S)
    assert cell, "README: the Studio's %%ascend_kernel cell is missing"
    from kernelstudio.notebook.session import StudioSession

    d = StudioSession("tp_allreduce", cell.group(1)).rebuild({"tiles": 4})
    assert isinstance(d, ks.multi.Mc2Design) and d.schedule.tiles == 4 and d.cluster.devices == 8
    assert "(9 tiles of 4,096 rows)" in section and d.m == 4096 and 9 not in d.feasible_tiles()


def test_the_prose_quotes_the_models_numbers(section):
    x = ks.placeholder((4096, 4096), "float16", name="x")
    w = ks.placeholder((4096, 8192), "float16", name="w")
    d = ks.multi.matmul_allreduce(x, w, cluster=ks.multi.Cluster(8), tiles=1)
    best = max(d.sweep(), key=lambda s: s.gain)
    assert f"({(d.compute_us / 888 - 1):+.0%} against 888 us)".replace("%", " %") in section
    assert f"({(d.comm_us / 1025 - 1):+.0%} against\n1025 us)".replace("%", " %") in section
    assert f"best split saves {best.gain:.0%}".replace("%", " %") in section
    assert f"derived {d.cluster.link.mesh_link_bytes_per_s / 1e9:.1f} GB/s" in section
    assert "at 16 tiles the\nper-tile step and issue costs outweigh the overlap" in section
    assert d.with_schedule(tiles=16).gain < 0


def test_the_small_message_caveat_quotes_the_model_and_the_fit(section):
    """ops-transformer's fit below 8 MiB is a parabola, -0.9698 S^2 + 27.062 S + 14.769 us (hccl_performance.cpp)."""
    link = ks.multi.get_link("hccs_910b")
    model = link.aicpu_issue_us + sum(s.us for s in ks.multi.collective_steps("all_reduce", "mesh", 2**20, 8, link))
    fit = 1.15 * (-0.9698202 + 27.0622573 + 14.769)
    assert f"(an AllReduce of 1 MiB: the\nmodel {model:.0f} us, the fit {fit:.0f} us)" in section
    big = link.aicpu_issue_us + sum(s.us for s in ks.multi.collective_steps("all_reduce", "mesh", 8 * 2**20, 8, link))
    assert big == pytest.approx(1.15 * (13.58491263 * 8 + 61.508333))  # exact at the line's end


def test_the_code_example_prints_what_the_readme_shows(section, twin_cache, monkeypatch):
    """The generated MC2 code's example: its excerpt is the generator's, and its twin run (4 ranks) is golden."""
    assert CODE_HEADING in section
    code, shown = re.findall(r"```python\n(.*?)```\n```text\n(.*?)```\n", section.split(CODE_HEADING)[1],
                             flags=re.S)[0]
    monkeypatch.setattr("kernelstudio.twin.runner.default_cache_dir", lambda: twin_cache)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})  # noqa: S102 - our own documentation
    assert out.getvalue() == shown
    assert shown.rstrip().endswith("bit-equal to golden: True")
