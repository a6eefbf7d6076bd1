"""The kernel side of the JupyterLab "Ascend C" side panel.

Push: `publish` opens a comm to the front end's `PUSH_TARGET` with the message as its data, so a panel
that is listening shows it at once. Pull: `install` registers `SYNC_TARGET`; after a page reload,
kernel switch or a second tab the front end opens a comm to it and the kernel replays the latest
message of every design. Where no front end listens (nbclient, plain IPython, VS Code, Notebook 7
without the extension) the comm goes nowhere and nothing fails; the Studio's own Ascend C tab is
the fallback view.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from .messages import (
    PUSH_TARGET,
    SYNC_TARGET,
    CodeMessage,
    PanelMessageError,
    WithdrawMessage,
    check_message,
    is_sync_request,
    message_from_design,
    withdraw_message,
)

__all__ = ["install", "publish", "withdraw", "latest", "frontend_seen", "studio_listener", "cell_id",
           "message_from_design"]

_log = logging.getLogger("kernelstudio.panel")

_latest: dict[str, CodeMessage] = {}   # design -> its latest message, replayed on sync
_state = {"seq": 0, "installed": False, "synced": 0}


def _comm_module() -> Any:
    """The `comm` package (ipykernel swaps in its own `create_comm` and manager), or None."""
    try:
        import comm
    except ImportError:
        return None
    return comm


def _next_seq() -> int:
    _state["seq"] += 1
    return _state["seq"]


def _push(message: CodeMessage | WithdrawMessage) -> None:
    comm = _comm_module()
    if comm is None:
        return
    channel = comm.create_comm(target_name=PUSH_TARGET, data=dict(message))
    channel.close()


def _on_sync(channel: Any, open_msg: dict[str, Any]) -> None:
    """A front end (re)connected: send it the latest message of every design, oldest first."""
    content = open_msg.get("content") if isinstance(open_msg, dict) else None
    data = content.get("data") if isinstance(content, dict) else None  # a str or None content is malformed too
    if not is_sync_request(data):
        _log.warning("kernelstudio: ignored a malformed side-panel sync request: %.200r", data)
        channel.close()
        return
    _state["synced"] += 1
    for message in latest():
        channel.send(dict(message))
    channel.close()


def install(ipython: Any = None) -> None:
    """Register the sync comm target so a (re)connected front end can ask for the latest code.

    Called from `kernelstudio.load_ipython_extension`; calling it again does nothing."""
    if _state["installed"]:
        return
    comm = _comm_module()
    if comm is None:
        return
    comm.get_comm_manager().register_target(SYNC_TARGET, _on_sync)
    _state["installed"] = True


def publish(message: CodeMessage) -> None:
    """Remember `message` as the latest of its design and push it to the side panel, if one listens.

    The message gets the next sequence number (see `latest()`). Raises
    PanelMessageError for a malformed or oversized message; never raises for want of a front end."""
    if not isinstance(message, dict):
        check_message(message)  # raises, naming what it got
    sent = CodeMessage(**{**message, "seq": _next_seq()})  # type: ignore[typeddict-item]
    check_message(sent)
    _latest.pop(sent["design"], None)  # re-insert: dict order is replay order
    _latest[sent["design"]] = sent
    _push(sent)


def withdraw(design: str) -> None:
    """Drop `design` from the panel (a `--no-panel` re-run) and from the replay."""
    _latest.pop(design, None)
    message = withdraw_message(design, _next_seq())
    check_message(message)
    _push(message)


def latest() -> list[CodeMessage]:
    """The latest message of every design, oldest first (what a sync replays)."""
    return sorted(_latest.values(), key=lambda m: m["seq"])


def frontend_seen() -> bool:
    """True once a JupyterLab front end with the side panel has asked this kernel for a replay."""
    return _state["synced"] > 0


def studio_listener(design: str, cell: str = "") -> Callable[[Any], None]:
    """A Studio listener that publishes the Studio's design after every rebuild, good or bad.

    After a setting that did not build (`studio.error` set) it re-sends the last good design's code with
    the error, so the panel marks that code "last valid setting"; the next good build clears the mark.
    A design too large for the panel is logged and skipped: the Studio's own Ascend C tab shows it."""

    def listener(studio: Any) -> None:
        d = studio.session.design
        if d is None:
            return
        try:
            publish(message_from_design(design, d, dict(d.knobs), cell, error=getattr(studio, "error", None)))
        except PanelMessageError as e:
            _log.warning("%s", e)

    return listener


def cell_id(shell: Any) -> str:
    """The id of the notebook cell being executed (JupyterLab sends it), or "" when unknown."""
    kernel = getattr(shell, "kernel", None)
    get_parent = getattr(kernel, "get_parent", None)
    if get_parent is None:
        return ""
    try:
        parent = get_parent("shell")
    except TypeError:  # older ipykernel: no channel argument
        parent = get_parent()
    cid = (parent or {}).get("metadata", {}).get("cellId")
    return cid if isinstance(cid, str) else ""
