"""Notebooks the browser tests open: the tour, and small `%%ascend_kernel` designs."""

from __future__ import annotations

import shutil
from pathlib import Path

TOUR = Path(__file__).resolve().parents[2] / "notebooks" / "00_tour.ipynb"

DESIGN = '''\
%%ascend_kernel {name} {flags}
x = placeholder((64, 256), "float16", name="x")
w = placeholder(({n}, 256), "float16", name="w")
b = placeholder(({n},), "float16", name="bias")
out = gelu(layer_norm(matmul(x, w, transpose_b=True), axis=-1) + b, name="{kernel}")
s = create_schedule(out)
s[out].split("m", knob("tile_m", 16, [16, 32, 64])).double_buffer(knob("double_buffer", True, [False, True]))
'''


def design_cell(name: str, *, kernel: str = "out", n: int = 512, flags: str = "") -> str:
    """An `%%ascend_kernel` cell: MlaProlog-lite with n output columns and knobs tile_m, double_buffer."""
    return DESIGN.format(name=name, kernel=kernel, n=n, flags=flags)


def studio_notebook(*designs: str) -> list[str]:
    """Cells: load the extension, then one design cell per entry of `designs`."""
    return ["%load_ext kernelstudio", *designs]


def copy_tour(root: Path, name: str = "tour.ipynb") -> str:
    shutil.copy(TOUR, root / name)
    return name


def tour_design_cell() -> str:
    """The tour's `%%ascend_kernel` cell."""
    import nbformat

    nb = nbformat.read(TOUR, as_version=4)
    return next(c.source for c in nb.cells if c.source.startswith("%%ascend_kernel"))


def kernel_code(cell: str, values: dict, path: str) -> str:
    """The file `path` the Studio generates for this design cell and these knob values."""
    from kernelstudio.notebook.session import StudioSession

    first, _, body = cell.partition("\n")
    name = first.split()[1]
    return StudioSession(name, body).rebuild(values).code.files[path]


def run_tour_page(page, url: str) -> None:
    """Open the tour at `url`, run every cell, wait until the last has printed and the Studio (scrolled into
    view: JupyterLab renders the cells in view) has drawn its DAG."""
    page.goto(url)
    page.wait_for_function("() => window.jupyterapp?.shell?.currentWidget?.sessionContext?.session?.kernel",
                           timeout=90_000)
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_function("() => document.body.innerText.includes('--- plan_memory')", timeout=300_000)
    page.wait_for_selector(".ks-studio", state="attached", timeout=60_000)
    page.query_selector(".ks-studio").scroll_into_view_if_needed()
    page.wait_for_selector(".ks-studio .ks-dag svg", state="attached", timeout=120_000)

