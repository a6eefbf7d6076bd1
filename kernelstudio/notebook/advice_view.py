"""The Studio's Advice strip: the advisor's simulated moves for the design on show, each with an Apply button.

`AdviceStrip(studio)` reads `studio.session.design`, asks `kernelstudio.plan.advise.advise` for its moves
(knob moves through the session's `build`, so they are the cell's own knobs) and lists them: the move, the
time before and after, the evidence, and for a move that does not fit the reason. Apply moves the knob
controls (`studio.set_knobs`) or, for schedule moves, adds the directives to the session's replayed
`directives` and rebuilds; a rebuild the Studio refuses leaves the session's directives as they were.
Advice is computed when asked (`refresh()`, the Advise button) or, with `auto=True`, after every rebuild.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as W

from ..core.errors import KernelStudioError
from ..plan.advise import Advice, advise
from ..plan.build import Design

__all__ = ["AdviceStrip"]


def _row_html(a: Advice) -> str:
    move = f"<code>{html.escape(a.move)}</code>"
    if not a.fits:
        return (f"<div class='ks-advice ks-advice-no'>{move} <b>does not fit</b>: "
                f"<span>{html.escape(a.why_not)}</span></div>")
    sign = "ks-advice-gain" if a.gain_us > 0 else "ks-advice-loss"
    return (f"<div class='ks-advice'>{move} <span class='{sign}'>{a.before_us:.2f} &rarr; {a.time_us:.2f} us "
            f"({-a.gain_us:+.2f} us)</span><br><small>{html.escape(a.cause)}</small></div>")


class AdviceStrip(W.VBox):
    """A list of the advisor's moves for `studio`'s design, the best first, each with an Apply button."""

    def __init__(self, studio: Any, *, top: int = 8, auto: bool = False) -> None:
        self.studio, self.top, self.auto = studio, top, auto
        self.moves: list[Advice] = []
        self.status = W.HTML()
        self.advise_button = W.Button(description="Advise", tooltip="simulate the advisor's moves for this design")
        self.advise_button.on_click(lambda _: self.refresh())
        self.clear_button = W.Button(description="Clear applied", tooltip="drop the schedule moves applied so far")
        self.clear_button.on_click(lambda _: self.clear())
        self.rows = W.VBox()
        super().__init__([W.HBox([self.advise_button, self.clear_button, self.status]), self.rows])
        self.add_class("ks-advice-strip")
        listeners = getattr(studio, "listeners", None)
        if isinstance(listeners, list):
            listeners.append(self._design_changed)
        self._sync_clear()

    # --- advice -------------------------------------------------------------------------------------
    def refresh(self) -> list[Advice]:
        """Advise on the design the Studio shows now and list the moves."""
        session = self.studio.session
        d = session.design
        if not isinstance(d, Design):
            self._list([], "advice is for single-chip designs" if d is not None else "no design built yet")
            return []
        build = session.build if session.knobs else None
        try:
            moves = advise(d, build, knobs=session.knobs if build else None)
        except KernelStudioError as e:
            self._list([], f"no advice: {html.escape(str(e))}")
            return []
        shown = moves[: self.top]
        good = sum(1 for a in moves if a.fits and a.gain_us > 0)
        self._list(shown, f"{len(moves)} moves simulated for {html.escape(session.name)} "
                          f"({d.sim.time_us:.2f} us); {good} save time")
        return moves

    def _list(self, moves: list[Advice], status: str) -> None:
        self.moves = moves
        self.status.value = status
        rows = []
        for a in moves:
            tip = (a.why_not if not a.fits else f"write {a.move} in the cell (the session replays directives only)"
                   if a.keep_out else f"apply {a.move}")
            button = W.Button(description="Apply", disabled=not a.fits or bool(a.keep_out), tooltip=tip,
                              layout=W.Layout(width="auto", flex="0 0 auto"))
            button.on_click(lambda _, a=a: self.apply(a))
            text = W.HTML(_row_html(a), layout=W.Layout(flex="1 1 0", min_width="0"))
            rows.append(W.HBox([button, text], layout=W.Layout(align_items="flex-start")))
        self.rows.children = rows

    def _design_changed(self, studio: Any) -> None:
        self._sync_clear()
        if self.auto and studio.error is None:
            self.refresh()
        elif self.moves:
            self.status.value = "the design changed: press Advise for moves from this one"

    # --- applying -----------------------------------------------------------------------------------
    def apply(self, a: Advice) -> None:
        """Apply one move to the Studio: knob moves move the controls, schedule moves are replayed on the cell's
        schedule. A move the rebuild refuses shows the Studio's error and leaves the session as it was."""
        session = self.studio.session
        if not a.fits:
            raise KernelStudioError(f"{a.move} does not fit ({a.why_not}); pick a move that fits")
        if a.keep_out:
            raise KernelStudioError(f"{a.move} re-plans the fusion, which the Studio session does not replay; write "
                                    "it in the cell after create_schedule")
        if a.knobs:
            self.studio.set_knobs(**a.knobs)
        if a.directives:
            before = tuple(session.directives)
            session.directives = (*before, *a.directives)
            self.studio.set_knobs()  # one rebuild with the current controls and the new directives
            if self.studio.error is not None:
                session.directives = before
        self._sync_clear()

    def clear(self) -> None:
        """Drop every applied schedule move and rebuild."""
        session = self.studio.session
        if session.directives:
            session.directives = ()
            self.studio.set_knobs()
        self._sync_clear()

    def _sync_clear(self) -> None:
        n = len(getattr(self.studio.session, "directives", ()))
        self.clear_button.disabled = n == 0
        self.clear_button.description = f"Clear applied ({n})" if n else "Clear applied"
