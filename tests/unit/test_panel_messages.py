"""Side-panel messages: built from a design, validated (same rules as the .ts mirror), published and
replayed in-process; the magic publishes every Studio rebuild and `--no-panel` withdraws."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio.codegen import names_of
from kernelstudio.notebook import messages as M
from kernelstudio.notebook import panel
from tests.notebook.cells import MLA_CELL
from tests.reference_kernels import mla_prolog_lite

TS = Path(__file__).resolve().parents[2] / "labextension" / "src" / "messages.ts"


@pytest.fixture(scope="module")
def design():
    out = mla_prolog_lite()
    s = ks.create_schedule(out)
    s[out].split("m", 32).double_buffer(True)
    return ks.build(out, schedule=s)


@pytest.fixture
def message(design):
    return M.message_from_design("mla", design, {"tile_m": np.int64(32), "double_buffer": True, "shape": (2, 3)},
                                 cell="c-1")


@pytest.fixture(autouse=True)
def _clean_panel():
    panel._latest.clear()
    yield
    panel._latest.clear()


def test_message_from_design_carries_code_kernels_target_time_and_knobs(design, message):
    k = names_of(design.program, design.program.kernels[0]).snake
    assert M.why_invalid(message) is None
    assert message["version"] == M.VERSION and message["kind"] == "code" and message["cell"] == "c-1"
    assert message["kernels"] == [k] and message["target"] == "ascend910b2" and message["error"] == ""
    assert message["time_us"] == pytest.approx(design.sim.time_us)
    assert list(message["files"]) == [f"op_kernel/{k}.cpp", f"op_host/{k}_tiling.h", f"op_host/{k}.cpp", "main.cpp"]
    assert message["files"][f"op_host/{k}.cpp"] == design.code.files[f"op_host/{k}.cpp"]
    # knob values become JSON scalars: NumPy ints become ints, other objects their text
    assert message["knobs"] == {"tile_m": 32, "double_buffer": True, "shape": "(2, 3)"}
    assert type(message["knobs"]["tile_m"]) is int


BAD = [
    ("not a dict", "not a mapping"),
    ({"version": 1}, "version 1, expected 2"),
    ({"error": None}, "error is not one line"),
    ({"error": "first\nsecond"}, "error is not one line"),
    ({"error": "x" * 301}, "error is not one line of at most 300 characters"),
    ({"design": ""}, "design is not"),
    ({"design": "x" * 201}, "design is not"),
    ({"seq": -1}, "seq is not"),
    ({"seq": True}, "seq is not"),
    ({"kind": "eval"}, "unknown kind 'eval'"),
    ({"kernels": []}, "kernels is not"),
    ({"kernels": [3]}, "kernels is not"),
    ({"time_us": float("nan")}, "not JSON-serialisable"),
    ({"time_us": -1.0}, "time_us is not"),
    ({"knobs": {"tile_m": [16, 32]}}, "knobs is not"),
    ({"files": {}}, "0 files"),
    ({"files": {"main.cpp": 3}}, "is not path -> text"),
    ({"files": {f"f{i}.cpp": "" for i in range(513)}}, "513 files"),
    ({"files": {"main.cpp": "x" * 2_000_001}}, "more than the 2,000,000 allowed"),
    ({"cell": None}, "cell or target"),
    ({"design": "x" * 201}, "at most 200 characters (201)"),
    ({"time_us": float("nan")}, "field 'time_us': NaN or infinity"),
    ({"files": {"main.cpp": b"x"}}, "field 'files'"),
    ({"files": {"main.cpp": ""}, "cell": 3}, "cell or target"),
]


def _nested(levels: int) -> dict:
    out: dict = {}
    cur = out
    for _ in range(levels):
        cur["a"] = {}
        cur = cur["a"]
    return out


def _circular() -> dict:
    c: dict = {}
    c["c"] = c
    return c


@pytest.mark.parametrize(("patch", "reason"), [
    ({"knobs": _nested(100_000)}, "field 'knobs': nested too deep"),
    ({"cell": _circular()}, "field 'cell': a circular reference"),
], ids=["nested_100000", "circular"])
def test_unserialisable_messages_name_the_field(message, patch, reason):
    bad = {**message, **patch}
    assert reason in (M.why_invalid(bad) or "")
    with pytest.raises(M.PanelMessageError, match=re.escape(reason)):
        M.check_message(bad)


@pytest.mark.parametrize("content", ["sync", None, 3, {"data": "x"}])
def test_a_sync_open_with_malformed_content_is_ignored_and_closed(content):
    class Channel:
        closed, sent = False, []

        def send(self, m):
            self.sent.append(m)

        def close(self):
            self.closed = True

    ch = Channel()
    panel._on_sync(ch, {"content": content})
    assert ch.closed and ch.sent == []



@pytest.mark.parametrize(("patch", "reason"), BAD, ids=[r for _, r in BAD])
def test_malformed_messages_are_named_and_refused(message, patch, reason):
    bad = patch if isinstance(patch, str) else {**message, **patch}
    assert reason in (M.why_invalid(bad) or "")
    with pytest.raises(M.PanelMessageError, match=re.escape(reason)) as info:
        M.check_message(bad)
    assert isinstance(info.value, ks.KernelStudioError) and "message_from_design" in str(info.value)
    if "seq" not in patch:  # publish numbers messages itself
        with pytest.raises(M.PanelMessageError):
            panel.publish(bad)  # type: ignore[arg-type]
    assert panel.latest() == []


def test_error_line_is_the_first_line_cut_short():
    assert M.error_line(None) == "" and M.error_line("") == ""
    assert M.error_line("\n  tile_m=64: UB needs 204,800 B of 196,608 B\n  lower tile_m") == (
        "tile_m=64: UB needs 204,800 B of 196,608 B")
    long = M.error_line("x" * 1000)
    assert len(long) == M.MAX_ERROR_CHARS and long.endswith("\u2026")


def test_a_failed_setting_resends_the_last_good_code_with_its_error_and_a_good_one_clears_it():
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "kernelstudio")
    with capture_output():
        shell.run_cell_magic("ascend_kernel", "staled", MLA_CELL)
    studio = shell.magics_manager.registry["AscendKernelMagics"].studios["staled"]
    [good] = panel.latest()
    with capture_output():
        studio.set_knobs(tile_k=128)  # double-buffered 256x128 tiles overflow L0B: the Studio shows a banner
    assert studio.error and "L0B needs 131,072 B" in studio.error
    [stale] = panel.latest()
    assert stale["seq"] > good["seq"] and stale["error"] == M.error_line(studio.error) != ""
    assert stale["files"] == good["files"] and stale["knobs"] == good["knobs"] and good["knobs"]["tile_k"] == 64
    assert M.why_invalid(stale) is None
    with capture_output():
        studio.set_knobs(double_buffer=False)  # now it fits: the mark clears
    [fresh] = panel.latest()
    assert studio.error is None and fresh["error"] == ""
    assert (fresh["knobs"]["tile_k"], fresh["knobs"]["double_buffer"]) == (128, False)


def test_withdraw_and_sync_request_shapes():
    assert M.why_invalid(M.withdraw_message("mla", 3)) is None
    assert M.is_sync_request({"version": 2, "kind": "sync"})
    for bad in ({"version": 1, "kind": "sync"}, {"version": 2, "kind": "code"}, None, "sync",
                {"version": 2, "kind": "sync", "exec": "import os"}):
        assert not M.is_sync_request(bad)


def test_publish_numbers_messages_and_keeps_the_latest_per_design(message):
    panel.publish(message)  # no front end here: nothing listens and nothing fails
    panel.publish({**message, "design": "other"})
    panel.publish({**message, "knobs": {"tile_m": 64}})
    latest = panel.latest()
    assert [m["design"] for m in latest] == ["other", "mla"]  # oldest first: replay order
    assert latest[0]["seq"] < latest[1]["seq"] and latest[1]["knobs"] == {"tile_m": 64}
    assert message["seq"] == 0, "publish must not change the caller's message"
    panel.withdraw("mla")
    assert [m["design"] for m in panel.latest()] == ["other"]
    panel.withdraw("never-published")  # harmless


def test_sync_replays_latest_and_ignores_malformed_requests(message):
    class Channel:  # the comm a front end opened to the sync target, as ipykernel hands it over
        def __init__(self):
            self.sent, self.closed = [], False

        def send(self, data):
            self.sent.append(data)

        def close(self):
            self.closed = True

    panel.publish(message)
    panel.publish({**message, "design": "second"})
    good = Channel()
    panel._on_sync(good, {"content": {"data": {"version": 2, "kind": "sync"}}})
    assert [m["design"] for m in good.sent] == ["mla", "second"] and good.closed
    assert all(M.why_invalid(m) is None for m in good.sent)
    for data in ({"version": 9, "kind": "sync"}, {"kind": "sync"}, "sync", None):
        bad = Channel()
        panel._on_sync(bad, {"content": {"data": data}})
        assert bad.sent == [] and bad.closed


def test_ts_mirror_has_the_same_constants_and_fields():
    ts = TS.read_text()
    for name, value in [("VERSION", M.VERSION), ("PUSH_TARGET", M.PUSH_TARGET), ("SYNC_TARGET", M.SYNC_TARGET),
                        ("MAX_MESSAGE_CHARS", M.MAX_MESSAGE_CHARS), ("MAX_FILES", M.MAX_FILES),
                        ("MAX_NAME_CHARS", M.MAX_NAME_CHARS), ("MAX_ERROR_CHARS", M.MAX_ERROR_CHARS)]:
        found = re.search(rf"export const {name} = ([^;]+);", ts)
        assert found, name
        assert found.group(1).strip("'").replace("_", "") == str(value).replace("_", ""), name
    for cls, iface in [(M.CodeMessage, "CodeMessage"), (M.WithdrawMessage, "WithdrawMessage"),
                       (M.SyncRequest, "SyncRequest")]:
        body = re.search(rf"export interface {iface} \{{(.*?)\n\}}", ts, re.S).group(1)
        fields = re.findall(r"^\s+(\w+):", body, re.M)
        assert fields == list(cls.__annotations__), iface


DESIGN_CELL = """\
x = placeholder((64, 256), "float16", name="x")
w = placeholder((128, 256), "float16", name="w")
out = relu(matmul(x, w, transpose_b=True), name="out")
s = create_schedule(out)
s[out].split("m", knob("tile_m", 16, [16, 32, 64]))
"""


def test_magic_publishes_every_rebuild_and_no_panel_withdraws():
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "kernelstudio")
    with capture_output():
        shell.run_cell_magic("ascend_kernel", "panelled", DESIGN_CELL)
    [first] = panel.latest()
    assert first["design"] == "panelled" and first["knobs"] == {"tile_m": 16} and first["kernels"] == ["panelled"]
    studio = shell.magics_manager.registry["AscendKernelMagics"].studios["panelled"]
    with capture_output():
        studio.set_knobs(tile_m=32)
    [moved] = panel.latest()
    assert moved["seq"] > first["seq"] and moved["knobs"] == {"tile_m": 32}
    assert moved["files"]["op_host/panelled.cpp"] != first["files"]["op_host/panelled.cpp"]
    with capture_output():
        shell.run_cell_magic("ascend_kernel", "panelled --no-panel", DESIGN_CELL)
    assert panel.latest() == []
