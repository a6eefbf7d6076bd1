"""The package's import graph points one way: every stage imports only the stages below it, the three
readers of the TileIR never import one another, and no modules import each other in a circle.

Every import counts: module level, inside functions (lazy) and under `if TYPE_CHECKING:`.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import kernelstudio

PKG = Path(kernelstudio.__file__).parent

# Stage of each top-level part of the package, lowest first; a module may import its own stage and the
# stages with a smaller number. Parts that share a number are siblings and may not import each other.
STAGES: dict[str, float] = {
    "core": 0,
    "hw": 1,
    "ir": 2,
    "dsl": 3, "fusion": 3,
    "ops": 3.5,  # CANN operators written with the DSL: above dsl, below schedule
    "schedule": 4,
    "tileir": 5,
    "lower": 6,
    "interp": 7, "sim": 7, "codegen": 7,  # the three readers of the TileIR
    "plan": 8,
    "twin": 9,
    "multi": 10,  # multi-device designs: the single-chip flow per device plus a communication timeline
    "ascendc": 10,  # a user's own Ascend C run on the twin, and the sync checker of its call log
    "tune": 11,
    "notebook": 12,
    "__init__": 13,  # the public API composes everything below
    "cli": 14,  # the command line runs design files against the public API
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PKG.rglob("*.py"))}


def _imports(name: str, path: Path, known: set[str]) -> list[tuple[str, int]]:
    """(imported kernelstudio module, line) for every import statement in the file."""
    is_pkg = path.name == "__init__.py"
    out: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names if a.name.split(".")[0] == "kernelstudio"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target.split(".")[0] != "kernelstudio":
                continue
            for alias in node.names:  # `from pkg import module` imports that module
                sub = f"{target}.{alias.name}"
                out.append((sub if sub in known else target, node.lineno))
    return list(dict.fromkeys((t, line) for t, line in out if t in known and t != name))


def _part(module: str) -> str:
    parts = module.split(".")
    return "__init__" if len(parts) == 1 else parts[1]


def _graph() -> dict[str, list[tuple[str, int]]]:
    mods = _modules()
    known = set(mods)
    return {m: _imports(m, p, known) for m, p in mods.items()}


def _where(module: str) -> str:
    return str(_modules()[module].relative_to(PKG.parent))


def test_every_part_of_the_package_has_a_stage():
    parts = {_part(m) for m in _modules()}
    assert parts - set(STAGES) == set(), "give the new part a stage in STAGES (and say in its docstring why)"
    assert set(STAGES) - parts == set(), "a stage with no modules: remove it from STAGES"


def test_imports_point_down():
    bad = []
    for m, targets in _graph().items():
        a = _part(m)
        for t, line in targets:
            b = _part(t)
            if a == b:
                continue
            if STAGES[b] > STAGES[a]:
                bad.append(f"{_where(m)}:{line} imports {_where(t)}: stage {a} ({STAGES[a]}) may not import the "
                           f"higher stage {b} ({STAGES[b]})")
            elif STAGES[b] == STAGES[a]:
                bad.append(f"{_where(m)}:{line} imports {_where(t)}: {a} and {b} are sibling stages "
                           f"({STAGES[a]}) and may not import each other")
    assert not bad, "\n".join(bad)


def _cycles(graph: dict[str, list[tuple[str, int]]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w, _ in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles():
    graph = _graph()
    msgs = []
    for comp in _cycles(graph):
        inside = set(comp)
        edges = [f"    {_where(m)}:{line} imports {_where(t)}" for m in comp for t, line in graph[m] if t in inside]
        msgs.append(f"a circle of {len(comp)} modules: " + ", ".join(comp) + "\n" + "\n".join(edges))
    assert not msgs, "\n".join(msgs)


@pytest.mark.parametrize("part", sorted(p for p in STAGES if p not in ("cli", "__init__")))
def test_each_stage_says_what_it_may_import(part):
    doc = ast.get_docstring(ast.parse((PKG / part / "__init__.py").read_text())) or ""
    assert "may import" in doc, f"kernelstudio/{part}/__init__.py: its docstring must say what the stage may import"


def test_the_rule_catches_a_bad_import(tmp_path):
    """The checker itself: an upward import, a reader importing a reader and a circle are all found."""
    known = {"kernelstudio.core.a", "kernelstudio.sim.b", "kernelstudio.codegen.c"}
    src = tmp_path / "b.py"
    src.write_text("def f():\n    from ..codegen.c import x\n")
    assert _imports("kernelstudio.sim.b", src, known) == [("kernelstudio.codegen.c", 2)]
    graph = {"kernelstudio.core.a": [("kernelstudio.sim.b", 1)], "kernelstudio.sim.b": [("kernelstudio.core.a", 1)],
             "kernelstudio.codegen.c": []}
    assert _cycles(graph) == [["kernelstudio.core.a", "kernelstudio.sim.b"]]


def test_the_vector_cores_row_share_has_one_owner():
    """A C tile's rows split over the two vector cores of a block: only lower/cube/shape.py writes that out
    (`-(-x // 2)` or `ceil_div(x, 2)`); the tiling, the capacity probes, the directive checks and the
    epilogue call its aiv_rows / aiv_rows_expr / sync_rows_per_aiv."""
    import re

    pattern = re.compile(r"-\(-\s*\w+\s*//\s*2\)|ceil_div\([^()]*,\s*2\)")
    owner = PKG / "lower" / "cube" / "shape.py"
    found = [f"{p.relative_to(PKG.parent)}:{i}: {line.strip()}" for p in sorted((PKG / "lower").rglob("*.py"))
             if p != owner for i, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line)]
    assert not found, "\n".join(found)
    assert pattern.search(owner.read_text()) is None  # the owner names AIV_PER_BLOCK, not a bare 2


def _code_lines(path: Path) -> list[tuple[int, str]]:
    """(line number, text) of the lines of `path` that are code, not docstrings or comments."""
    tree = ast.parse(path.read_text())
    doc_lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            doc_lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return [(i, line) for i, line in enumerate(path.read_text().splitlines(), 1)
            if i not in doc_lines and not line.lstrip().startswith("#")]


def test_the_default_target_is_written_once():
    owner = PKG / "core" / "config.py"
    found = [f"{p.relative_to(PKG.parent)}:{i}" for p in sorted(PKG.rglob("*.py")) if p != owner
             for i, line in _code_lines(p) if '"ascend910b2"' in line.split("#")[0]]
    assert not found, "use core.config.DEFAULT_TARGET: " + ", ".join(found)


def test_environment_variables_are_read_in_core_config_only():
    """Settings come from core/config.py; passing the environment on to a child process is not reading it."""
    import re

    owner = PKG / "core" / "config.py"
    read = re.compile(r"os\.environ\.get\(|os\.getenv\(|os\.environ\[")
    found = [f"{p.relative_to(PKG.parent)}:{i}: {line.strip()}" for p in sorted(PKG.rglob("*.py")) if p != owner
             for i, line in _code_lines(p) if read.search(line)]
    assert not found, "\n".join(found)


def test_no_chip_size_is_written_in_pass_or_reader_code():
    """On-chip sizes come from the hardware profile (hw/profiles/*.toml), never a literal of one chip."""
    import re

    sizes = re.compile(r"\b(131072|196608|524288|65536)\b")
    found = [f"{p.relative_to(PKG.parent)}:{i}: {line.strip()}" for p in sorted(PKG.rglob("*.py"))
             if p.parts[-2] != "hw" for i, line in _code_lines(p) if sizes.search(line)]
    assert not found, "\n".join(found)


def test_block_and_repeat_sizes_and_dtype_widths_live_in_core_dtypes():
    """The 32-byte block, the 256-byte repeat and the bytes of a dtype are core/dtypes.py's: no other module
    divides by them or keeps a table of dtype widths."""
    import re

    owner = PKG / "core" / "dtypes.py"
    literal = re.compile(r"\b32\s*//|//\s*32\b|\+\s*31\)\s*//|\b256\s*//|//\s*256\b|[\"']float16[\"']\s*:\s*2\b")
    found = [f"{p.relative_to(PKG.parent)}:{i}: {line.strip()}" for p in sorted(PKG.rglob("*.py")) if p != owner
             for i, line in _code_lines(p) if literal.search(line)]
    assert not found, "\n".join(found)


def test_the_readers_read_only_the_tileir():
    """The interpreter, the simulator and the code generator see a program through tileir/ (with hw/ for the
    chip and core/ for errors and dtypes), never the graph, the fusion plan, the schedule or the lowering."""
    allowed = {"core", "hw", "tileir"}
    bad = [f"{_where(m)}:{line} imports {_where(t)}: a reader of the TileIR may import only core/, hw/, tileir/"
           for m, targets in _graph().items() if _part(m) in ("interp", "sim", "codegen")
           for t, line in targets if _part(t) != _part(m) and _part(t) not in allowed]
    assert not bad, "\n".join(bad)
