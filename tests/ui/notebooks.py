"""Notebooks the browser tests open: a minimal live design (an ipywidgets slider that rebuilds
MlaProlog-lite and publishes its code to the side panel), the same link the Studio uses."""

from __future__ import annotations

SLIDER_DESIGN = '''\
import ipywidgets as W
import kernelstudio as ks
from kernelstudio.notebook import panel
from kernelstudio.notebook.messages import message_from_design

panel.install(get_ipython())

def build_{name}(tile_m, double_buffer=True):
    x = ks.placeholder((1, 64, 256), "float16", name="x")
    w = ks.placeholder(({n}, 256), "float16", name="w")
    b = ks.placeholder(({n},), "float16", name="b")
    out = ks.gelu(ks.layer_norm(ks.matmul(x, w, transpose_b=True), axis=-1) + b, name="{kernel}")
    s = ks.create_schedule(out)
    s[out].split("m", tile_m).double_buffer(double_buffer)
    return ks.build(out, schedule=s)

slider_{name} = W.SelectionSlider(options=[16, 32, 64], value=16, description="tile_m")

def rebuild_{name}(change=None):
    knobs = {{"tile_m": slider_{name}.value, "double_buffer": True}}
    panel.publish(message_from_design("{name}", build_{name}(**knobs), knobs))

slider_{name}.observe(rebuild_{name}, "value")
rebuild_{name}()
slider_{name}
'''


def slider_notebook(name: str = "mla_prolog_lite", kernel: str = "mla_out", n: int = 512) -> list[str]:
    """Cells of a notebook whose slider `tile_m` rebuilds design `name` and publishes it."""
    return [SLIDER_DESIGN.format(name=name, kernel=kernel, n=n)]
