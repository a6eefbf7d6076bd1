"""The core library never imports the notebook stack (DESIGN.md section 1)."""

from __future__ import annotations

import subprocess
import sys


def test_import_kernelstudio_pulls_in_no_front_end():
    code = ("import sys, kernelstudio as ks\n"
            "d = ks.build(ks.relu(ks.placeholder((8, 64), 'float16', name='x')))\n"
            "d.code\n"
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('IPython', 'ipywidgets', 'plotly',"
            " 'kernelstudio.notebook') or m.startswith('kernelstudio.notebook'))\n"
            "print(bad)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_views_need_no_widgets():
    code = ("import sys, kernelstudio as ks\n"
            "from kernelstudio.notebook import views\n"
            "d = ks.build(ks.relu(ks.placeholder((8, 64), 'float16', name='x')))\n"
            "views.studio_data(d)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('ipywidgets', 'plotly')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
