"""A notebook that runs a kernel on the CPU twin (a `twin.run(` / `twin.compile(` / `ascendc.load(` call or an
`%%ascend_c` cell) makes its `test_notebook_runs` case a `twin` test: it needs g++."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

_TWIN_CALL = re.compile(r"\btwin\.(?:run|compile|compile_bundle)\(|\bascendc\.load\(|^%%ascend_c\b", re.M)


def _runs_on_the_twin(path: Path) -> bool:
    cells = json.loads(path.read_text())["cells"]
    return any(_TWIN_CALL.search("".join(c["source"])) for c in cells if c["cell_type"] == "code")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        callspec = getattr(item, "callspec", None)
        path = callspec.params.get("path") if callspec is not None else None
        if isinstance(path, Path) and path.suffix == ".ipynb" and _runs_on_the_twin(path):
            item.add_marker(pytest.mark.twin)
