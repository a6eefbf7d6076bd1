"""The Passes view prints an analysis of the final program only when its entry is read (the picker lists
analyses by name): what it prints then is what printing at once gave, for the program it was made from."""

from __future__ import annotations

import pytest

import kernelstudio as ks
from kernelstudio.notebook import views as V
from tests.reference_kernels import mla_prolog_lite


def _design(tile_n: int) -> ks.Design:
    out = mla_prolog_lite()
    s = ks.create_schedule(out)
    s[out].split("n", tile_n)
    return ks.build(out, schedule=s, compare=False)


def test_an_analysis_is_printed_when_read_and_reads_its_own_program(monkeypatch):
    a, b = _design(256), _design(128)
    calls: list[str] = []
    def counted(name, fn):
        def run(program):
            calls.append(name)
            return fn(program)
        return run

    analyses = [(name, what, counted(name, fn)) for name, what, fn in ks.ANALYSES]
    monkeypatch.setattr("kernelstudio.notebook.views.passes.ANALYSES", analyses)
    pa, pb = V.passes_data(a.program), V.passes_data(b.program)
    assert calls == []  # nothing printed yet
    by_a = {p["name"]: p for p in pa}
    by_b = {p["name"]: p for p in pb}
    name, what, fn = ks.ANALYSES[0]
    text_b = by_b[name]["text"]  # read b first: a's entry still prints a's program
    assert by_a[name]["text"] == f"# {name}: {what}\n" + fn(a.program)
    assert text_b == f"# {name}: {what}\n" + fn(b.program) and text_b != by_a[name]["text"]
    assert calls == [name, name]
    assert by_a[name]["diff"] == [(" ", line) for line in by_a[name]["text"].splitlines()] and calls == [name, name]
    assert by_a[name]["added"] == 0 and by_a[name]["kind"] == "analysis"
    with pytest.raises(KeyError):
        by_a[name]["nothing"]


def test_a_pass_counts_lines_at_once_and_builds_its_diff_when_read(monkeypatch):
    prog = _design(256).program
    built: list[int] = []
    real = V.pass_diff
    def counted(before, after):
        built.append(1)
        return real(before, after)

    monkeypatch.setattr("kernelstudio.notebook.views.passes.pass_diff", counted)
    entries = [p for p in V.passes_data(prog) if p["kind"] == "pass"]
    assert built == [] and len(entries) == len(prog.passes)
    prev = ""
    for p, (name, text) in zip(entries, prog.passes, strict=True):
        diff = real(prev, text)  # the counts are those of the diff the picked pass shows
        assert (p["added"], p["removed"]) == (sum(k == "+" for k, _ in diff), sum(k == "-" for k, _ in diff))
        assert p["diff"] == diff and p["name"] == name
        prev = text
    assert len(built) == len(entries)
    assert any(a == b for (_, a), (_, b) in zip(prog.passes, prog.passes[1:], strict=False))  # one pass changed nothing
    assert real("a\nb\n", "a\nb\n") == [(" ", "a"), (" ", "b")] and real("", "") == []
    with pytest.raises(KeyError):
        entries[0]["nothing"]
