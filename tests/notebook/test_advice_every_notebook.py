"""The Advice strip on every `%%ascend_kernel` cell of the reference notebooks, read out of the .ipynb files.

For each cell: the Studio opens, Advice lists the moves ranked by simulated gain, every move it lists that fits
saves time (or the strip says that no move helps, and why), a move that does not fit names the buffer and its
bytes, and applying the top move changes the design's time by the stated gain: the "what changed" strip prints
the advice's number. A multi-device design's strip says that it gets no advice instead.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from kernelstudio.notebook.advice_view import AdviceStrip
from kernelstudio.notebook.multi_studio import MultiStudio
from kernelstudio.plan.advise import SAVES_US
from tests.notebook.cells import studio_of

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
MAGIC = "%%ascend_kernel"


def _cells() -> list[tuple[str, int, list[str], str]]:
    """(notebook, cell index, the line-magic setup cells before it, the cell) for every design cell."""
    out = []
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        setup: list[str] = []
        for i, c in enumerate(nb.cells):
            if c.cell_type != "code":
                continue
            if c.source.startswith(MAGIC):
                out.append((path.name, i, list(setup), c.source))
            elif c.source.strip().startswith("%load_ext"):
                setup.append(c.source)
    return out


CELLS = _cells()


def test_every_reference_notebook_with_a_design_cell_is_covered():
    assert {nb[:2] for nb, *_ in CELLS} == {"00", "01", "02", "05", "06", "07", "08", "10"}


@pytest.fixture(scope="module")
def sh():
    shell = InteractiveShell.instance()
    yield shell
    shell.magics_manager.registry["AscendKernelMagics"].studios.clear()


def _open(sh, setup: list[str], source: str):
    with capture_output():
        for s in setup:
            assert sh.run_cell(s).success
        res = sh.run_cell(source)
    assert res.success, res.error_in_exec
    return studio_of(sh, source.split()[1])


def _printed_gain(row_html: str) -> str:
    m = re.search(r"\(([+-][\d,.]+) us\)</span>", row_html)
    assert m, row_html
    return m.group(1).replace(",", "")


def _changed(st) -> str:
    m = re.search(r">([+-][\d,.]+) us<", st.changed.value)
    assert m, st.changed.value
    return m.group(1).replace(",", "")


@pytest.mark.parametrize("nb,index,setup,source", CELLS, ids=[f"{nb[:2]}-cell{i}" for nb, i, *_ in CELLS])
def test_the_advice_strip_ranks_simulated_moves_and_apply_gives_the_stated_gain(sh, nb, index, setup, source):
    st = _open(sh, setup, source)
    st.advice_button.click()
    strip = st.advice_strip
    assert isinstance(strip, AdviceStrip) and st.insight_box.children[0] is strip
    moves = strip.simulated
    if isinstance(st, MultiStudio):
        assert moves == [] and strip.rows.children == ()
        assert "no advice for a multi-device design" in strip.status.value and "Tile sweep" in strip.status.value
        return
    fits = [a for a in moves if a.fits]
    assert moves == fits + [a for a in moves if not a.fits], "moves that fit come first"
    assert [a.gain_us for a in fits] == sorted((a.gain_us for a in fits), reverse=True), "ranked by simulated gain"
    before = st.session.design.sim.time_us
    assert all(a.before_us == before and a.time_us == pytest.approx(before - a.gain_us, abs=1e-9) for a in fits)
    for a in moves:
        if not a.fits:  # the buffer (or tier) and the bytes
            assert re.search(r"\b(UB|L1|L0A|L0B|L0C)\b needs [\d,]+ B but has [\d,]+ B", a.why_not), a.why_not
    listed = [a for a in strip.moves if a.fits]
    assert all(a.gain_us >= SAVES_US for a in listed), "every move listed that fits saves time"
    assert len(strip.rows.children) == len(strip.moves)
    if not listed:
        assert strip.status.value.startswith("no move helps") and "-bound" in strip.status.value
        assert not any(a.saves for a in moves)
        return
    top = listed[0]
    assert top is fits[0]
    button, text = strip.rows.children[0].children
    assert not button.disabled
    button.click()
    assert st.error is None
    assert st.session.design.sim.time_us == pytest.approx(top.time_us, abs=1e-9)
    assert _changed(st) == _printed_gain(text.value) == f"{-top.gain_us:+.2f}"
    strip.clear()  # the cell as it was (knob moves stay: they are the controls)
    assert st.session.directives == () and st.session.keep_out == ()
