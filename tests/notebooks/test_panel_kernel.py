"""The panel link against a real ipykernel, speaking the Jupyter protocol as JupyterLab does: a Studio
rebuild pushes a comm_open to the panel's target; a sync request replays the latest code; a malformed
sync request gets nothing back."""

from __future__ import annotations

import time
import uuid

import pytest
from jupyter_client.manager import start_new_kernel

from kernelstudio.notebook.messages import PUSH_TARGET, SYNC_TARGET, why_invalid

CELL = '''%%ascend_kernel linked
x = placeholder((64, 256), "float16", name="x")
w = placeholder((128, 256), "float16", name="w")
out = relu(matmul(x, w, transpose_b=True), name="out")
s = create_schedule(out)
s[out].split("m", knob("tile_m", 16, [16, 32, 64]))
'''


@pytest.fixture(scope="module")
def kernel():
    km, kc = start_new_kernel(kernel_name="python3", startup_timeout=120)
    yield kc
    kc.stop_channels()
    km.shutdown_kernel(now=True)


def _execute(kc, code: str) -> list[dict]:
    """Run `code`; every iopub message it caused, up to its idle status."""
    msg_id = kc.execute(code)
    seen = []
    while True:
        msg = kc.get_iopub_msg(timeout=120)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        seen.append(msg)
        if msg["msg_type"] == "error":
            raise AssertionError("\n".join(msg["content"]["traceback"]))
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return seen


def _pushes(kc, code: str, n: int) -> list[dict]:
    """Run `code` and collect the first `n` messages pushed to the panel's target (a Studio rebuilds
    on the kernel's event loop, so a push may come after the execution went idle)."""
    found = [m["content"]["data"] for m in _execute(kc, code)
             if m["msg_type"] == "comm_open" and m["content"]["target_name"] == PUSH_TARGET]
    deadline = time.monotonic() + 60
    while len(found) < n and time.monotonic() < deadline:
        m = kc.get_iopub_msg(timeout=60)
        if m["msg_type"] == "comm_open" and m["content"]["target_name"] == PUSH_TARGET:
            found.append(m["content"]["data"])
    return found


def _sync(kc, data) -> list[dict]:
    """Open a comm to the kernel's sync target with `data`, as the front end does; the replies on it."""
    comm_id = uuid.uuid4().hex
    msg = kc.session.msg("comm_open", {"comm_id": comm_id, "target_name": SYNC_TARGET, "data": data})
    kc.shell_channel.send(msg)
    replies, deadline = [], time.monotonic() + 60
    while time.monotonic() < deadline:
        m = kc.get_iopub_msg(timeout=60)
        if m["content"].get("comm_id") != comm_id:
            continue
        if m["msg_type"] == "comm_close":
            return replies
        if m["msg_type"] == "comm_msg":
            replies.append(m["content"]["data"])
    raise AssertionError("the kernel never closed the sync comm")


def test_push_on_rebuild_and_replay_on_sync(kernel):
    _execute(kernel, "%load_ext kernelstudio")
    [first] = _pushes(kernel, CELL, 1)
    assert why_invalid(first) is None and first["design"] == "linked" and first["knobs"] == {"tile_m": 16}

    moved = _pushes(
        kernel, "get_ipython().magics_manager.registry['AscendKernelMagics'].studios['linked'].set_knobs(tile_m=64)", 1)
    assert [m["knobs"] for m in moved] == [{"tile_m": 64}] and moved[0]["seq"] > first["seq"]

    replay = _sync(kernel, {"version": 2, "kind": "sync"})
    assert replay == moved, "a (re)connected front end gets the latest code of every design"
    assert _sync(kernel, {"version": 2, "kind": "sync", "code": "import os"}) == []
    assert _sync(kernel, {"version": 99, "kind": "sync"}) == []

    withdrawn = _pushes(kernel, CELL.replace("linked", "linked --no-panel", 1), 1)
    assert [(m["kind"], m["design"]) for m in withdrawn] == [("withdraw", "linked")]
    assert _sync(kernel, {"version": 2, "kind": "sync"}) == []
