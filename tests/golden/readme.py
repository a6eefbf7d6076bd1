"""The README's sections and their examples, for the tests that check one section's example prints what its
```text block shows (tests/golden/test_readme_runs.py runs every block, on the twin too)."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import re
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def section(heading: str) -> str:
    """The README's text under `heading`, up to the next heading of any level."""
    text = (ROOT / "README.md").read_text()
    assert heading in text, f"README.md has no {heading!r} section"
    return re.split(r"\n##+ ", text.split(heading, 1)[1], maxsplit=1)[0]


def example(heading: str) -> tuple[str, str, str]:
    """(code, what it prints run as written, the text the README shows) of the section's first python block
    followed by a text block."""
    m = re.search(r"```python\n(.*?)```\n```text\n(.*?)```\n", section(heading), flags=re.S)
    assert m, f"{heading!r} has a python block followed by the text it prints"
    code, shown = m.groups()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})  # noqa: S102 - our own documentation
    return code, out.getvalue(), shown


def generated_block(name: str) -> str:
    """The text of the README's generated ```text block between `<!-- name ... -->` and `<!-- /name -->`."""
    text = (ROOT / "README.md").read_text()
    m = re.search(rf"<!-- {name}[^\n]*-->\n```text\n(.*?)\n```\n<!-- /{name} -->", text, re.S)
    assert m, f"README has no {name} block"
    return m.group(1)


def rebinds(code: str, names: str) -> bool:
    """Whether `code` assigns one of `names` ("x|y|d") at the top level: README blocks share one namespace."""
    return bool(re.search(rf"^({names}) = ", code, flags=re.M))


def bench(name: str) -> ModuleType:
    """The script `bench/{name}.py` as a module (registered in `sys.modules`: its dataclasses look it up)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod
