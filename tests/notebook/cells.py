"""The MlaProlog-lite design cell the magic tests run, and a way to reach a design's Studio."""

from __future__ import annotations

MLA_CELL = '''
x = placeholder((64, 256), "float16", name="x")
w = placeholder((512, 256), "float16", name="w")
b = placeholder((512,), "float16", name="bias")
y = matmul(x, w, transpose_b=True)
y = layer_norm(y, axis=-1, eps=1e-5)
out = gelu(y + b, name="out")
s = create_schedule(out)
s[out].split("m", knob("tile_m", 16, [16, 32, 64]))
s[out].split("n", knob("tile_n", 256, [128, 256, 512]))
s[out].split("k", knob("tile_k", 64, [32, 64, 128]))
s[out].double_buffer(knob("double_buffer", True, [False, True]))
'''


def studio_of(sh, name: str):
    return sh.magics_manager.registry["AscendKernelMagics"].studios[name]


def open_studio(sh, line: str, body: str = MLA_CELL):
    """Run `%%ascend_kernel LINE` with `body` (output captured), check it ran, and return its Studio."""
    from IPython.utils.capture import capture_output

    with capture_output():
        res = sh.run_cell(f"%%ascend_kernel {line}\n{body}")
    assert res.success, res.error_in_exec
    return studio_of(sh, line.split()[0])
