"""An in-process IPython shell with the extension loaded."""

from __future__ import annotations

import pytest
from IPython.core.interactiveshell import InteractiveShell


@pytest.fixture
def shell():
    sh = InteractiveShell.instance()
    sh.run_line_magic("load_ext", "kernelstudio")
    for name in ("mla", "conv", "bad", "vec"):
        sh.user_ns.pop(name, None)
    yield sh
    sh.magics_manager.registry["AscendKernelMagics"].studios.clear()
