"""The Studio's Advice strip: the advisor's simulated moves for the design on show, each with an Apply button.

`AdviceStrip(studio)` reads `studio.session.design`, asks `kernelstudio.plan.advise.advise` for its moves
(knob moves through the session's `build`, so they are the cell's own knobs) and lists them: the move, the
time before and after, the evidence, and for a move that does not fit the reason. It lists the moves that
save time, best first, and those that do not fit; the moves simulated slower (or no faster) are counted in
the status and listed only when "show slower" is ticked. When no move saves time the status says so and
why (the closest move, and what holds the design back). Apply moves the knob controls (`studio.set_knobs`)
or, for schedule moves, adds the directives (and ops kept out of fusion) to the session's replayed ones and
rebuilds; a rebuild the Studio refuses leaves the session as it was. A multi-device design (ks.multi) gets
no advice: the strip says so and points at the Tile sweep and Tune. Advice is computed when asked
(`refresh()`, the Advise button) or, with `auto=True`, after every rebuild.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as W

from ..core.errors import KernelStudioError
from ..plan.advise import Advice, advise
from ..plan.advise_evidence import gather
from ..plan.build import Design

__all__ = ["AdviceStrip"]


def _row_html(a: Advice) -> str:
    move = f"<code>{html.escape(a.move)}</code>"
    if not a.fits:
        return (f"<div class='ks-advice ks-advice-no'>{move} <b>does not fit</b>: "
                f"<span>{html.escape(a.why_not)}</span></div>")
    sign = "ks-advice-gain" if a.saves else "ks-advice-loss"
    return (f"<div class='ks-advice'>{move} <span class='{sign}'>{a.before_us:.2f} &rarr; {a.time_us:.2f} us "
            f"({-a.gain_us:+.2f} us)</span><br><small>{html.escape(a.cause)}</small></div>")


class AdviceStrip(W.VBox):
    """A list of the advisor's moves for `studio`'s design, the best first, each with an Apply button."""

    def __init__(self, studio: Any, *, top: int = 8, auto: bool = False) -> None:
        self.studio, self.top, self.auto = studio, top, auto
        self.moves: list[Advice] = []  # the moves listed
        self.simulated: list[Advice] = []  # every move of the last advice
        self.status = W.HTML()
        self.show_slower = W.Checkbox(value=False, description="show slower", indent=False,
                                      tooltip="list the moves simulated slower or no faster too",
                                      layout=W.Layout(width="auto"))
        self.show_slower.observe(lambda _: self._list(self.simulated, self.status.value), names="value")
        self.advise_button = W.Button(description="Advise", tooltip="simulate the advisor's moves for this design")
        self.advise_button.on_click(lambda _: self.refresh())
        self.clear_button = W.Button(description="Clear applied", tooltip="drop the schedule moves applied so far")
        self.clear_button.on_click(lambda _: self.clear())
        self.rows = W.VBox()
        super().__init__([W.HBox([self.advise_button, self.clear_button, self.show_slower, self.status]), self.rows])
        self.add_class("ks-advice-strip")
        listeners = getattr(studio, "listeners", None)
        if isinstance(listeners, list):
            listeners.append(self._design_changed)
        self._sync_clear()

    # --- advice -------------------------------------------------------------------------------------
    def refresh(self) -> list[Advice]:
        """Advise on the design the Studio shows now, list the moves and return every one simulated."""
        session = self.studio.session
        d = session.design
        if not isinstance(d, Design):
            self.simulated = []
            self._list([], _no_design(d))
            return []
        build = session.build if session.knobs else None
        try:
            moves = advise(d, build, knobs=session.knobs if build else None)
        except KernelStudioError as e:
            self.simulated = []
            self._list([], f"no advice: {html.escape(str(e))}")
            return []
        self.simulated = moves
        good = [a for a in moves if a.saves]
        slower = sum(1 for a in moves if a.fits and not a.saves)
        if good:
            status = (f"{len(moves)} moves simulated for {html.escape(session.name)} ({d.sim.time_us:.2f} us); "
                      f"{len(good)} save time" + (f", {slower} slower or no faster" if slower else ""))
        else:
            status = _none_helps(d, moves)
        self._list(moves, status)
        return moves

    def _list(self, moves: list[Advice], status: str) -> None:
        shown = [a for a in moves if a.saves or not a.fits or self.show_slower.value]
        shown = ([a for a in shown if a.fits] + [a for a in shown if not a.fits])[: self.top]
        self.moves = shown
        self.status.value = status
        rows = []
        for a in shown:
            tip = a.why_not if not a.fits else f"apply {a.move}"
            button = W.Button(description="Apply", disabled=not a.fits, tooltip=tip,
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
        if a.knobs:
            self.studio.set_knobs(**a.knobs)
        if a.directives or a.keep_out:
            before = (tuple(session.directives), tuple(session.keep_out))
            session.directives = (*before[0], *a.directives)
            session.keep_out = (*before[1], *a.keep_out)
            self.studio.set_knobs()  # one rebuild with the current controls and the new directives
            if self.studio.error is not None:
                session.directives, session.keep_out = before
        self._sync_clear()

    def clear(self) -> None:
        """Drop every applied schedule move and rebuild."""
        session = self.studio.session
        if session.directives or session.keep_out:
            session.directives, session.keep_out = (), ()
            self.studio.set_knobs()
        self._sync_clear()

    def _sync_clear(self) -> None:
        session = self.studio.session
        n = len(getattr(session, "directives", ())) + len(getattr(session, "keep_out", ()))
        self.clear_button.disabled = n == 0
        self.clear_button.description = f"Clear applied ({n})" if n else "Clear applied"


def _no_design(d: Any) -> str:
    """Why there is no advice for what the Studio shows."""
    if d is None:
        return "no design built yet"
    what = type(d).__name__
    return (f"no advice for a multi-device design ({html.escape(what)}): the advisor reads one chip's simulation "
            "(its pipes' idle time, capacity and plan) and this design is timed by the multi-device model; the "
            "Tile sweep tab ranks the tile counts and Tune searches the cell's knobs")


def _none_helps(d: Design, moves: list[Advice]) -> str:
    """The status when no move saves time: how many were tried, the closest one and what holds the design."""
    tried = [a for a in moves if a.fits]
    closest = min(tried, key=lambda a: -a.gain_us, default=None)
    out = f"no move helps {html.escape(d.name or 'this design')} ({d.sim.time_us:.2f} us): "
    if not moves:
        out += "the advisor found no move to try"
    else:
        out += (f"the {len(tried)} moves simulated are slower or no faster" if tried else "no move simulated")
        if len(moves) > len(tried):
            n = len(moves) - len(tried)
            out += f", {n} {'does' if n == 1 else 'do'} not fit"
        if closest is not None:
            out += f" (closest: <code>{html.escape(closest.move)}</code>, {-closest.gain_us:+.2f} us)"
    ev = max(gather(d), key=lambda e: e.span_us, default=None)
    if ev is not None:
        w = ev.top(("fill", "slot", "flag", "sync", "tail"))
        out += (f"; kernel {html.escape(ev.name)} is {html.escape(ev.limiter or 'compute')}-bound at "
                f"{100 * ev.efficiency:.0f} % of its roof" + (f", {html.escape(w.text())}" if w else ""))
    return out
