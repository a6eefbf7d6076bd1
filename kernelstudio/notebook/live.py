"""What every Studio widget does with its controls: read them, move them from code, coalesce a burst of moves
into one rebuild, and open the Tune panel. The single-chip Studio and the multi-device one both take it; each
says how to rebuild (`_rebuild`) and how to show a design."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from ..core.errors import KernelStudioError, KnobError

__all__ = ["LiveControls"]


class LiveControls:
    """Mixin (listed before the widget class) of a Studio widget with `session`, `_knob_widgets`, `_seq`,
    `_hold`, `_scheduled`, `tune_panel`, `tune_box`, a `_rebuild()` with `knob_values()`, `_show(design)`,
    `_fail(message, overflow)`, `_build_controls()` and a `summary()`."""

    session: Any
    _knob_widgets: dict[str, Any]
    _seq: int
    _hold: bool
    _scheduled: bool
    _done: int  # the move the views show
    tune_panel: Any
    tune_box: Any
    _rebuild: Callable[[], Any]  # each Studio's build with knob_values(); a refusal raises KernelStudioError
    _show: Callable[[Any], None]  # each Studio's drawing of a design
    _build_controls: Callable[[], None]
    _fail: Callable[[str, Any], None]  # each Studio's banner (message, overflow bar or None) over its last views
    summary: Callable[[], str]  # each Studio's text for consoles

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        """The widget, and its summary() as the text a console or a notebook run without widgets shows."""
        bundle = super()._repr_mimebundle_(**kwargs) or {}  # type: ignore[misc]
        bundle["text/plain"] = self.summary()
        return bundle

    def knob_values(self) -> dict[str, Any]:
        """The value every control shows now."""
        return {n: w.value for n, w in self._knob_widgets.items()}

    def set_knobs(self, **values: Any) -> None:
        """Move controls from code, as a user would: one rebuild for all of them, done on return."""
        unknown = [n for n in values if n not in self._knob_widgets]
        if unknown:
            raise KernelStudioError(f"design {self.session.name} has no knob {unknown[0]!r}; its knobs are "
                                    f"{', '.join(self._knob_widgets) or 'none'}")
        for n, v in values.items():
            choices = self.session.knobs[n].choices
            if not any(type(v) is type(c) and v == c or v is c for c in choices) and not (
                    isinstance(v, (int, float)) and not isinstance(v, bool) and v in choices):
                raise KnobError(f"design {self.session.name}: knob {n} = {v!r} is not among its choices "
                                f"{list(choices)}; pick one of them (the controls are unchanged)")
        self._hold = True
        try:
            for n, v in values.items():
                self._knob_widgets[n].value = v
        finally:
            self._hold = False
        self._seq += 1
        self._flush()
        self._settle()

    def _flush(self) -> None:
        """Rebuild with the controls' values and show the design; a refusal (or an internal error) shows its
        message over the last good views; a result older than the latest move is dropped."""
        self._scheduled = False
        seq = self._seq
        try:
            d = self._rebuild()
        except KernelStudioError as e:
            self._fail(*self._refusal(e))
            return
        except Exception as e:  # noqa: BLE001 - an internal error must not lose the views either
            self._fail(f"internal error ({type(e).__name__}: {e}); please report it with the cell", None)
            return
        if seq != self._seq:
            return  # a newer move arrived while this one built: its own build is queued
        if set(self.session.knobs) != set(self._knob_widgets):
            self._build_controls()
        self._show(d)
        self._done = seq

    def _refusal(self, e: KernelStudioError) -> tuple[str, Any]:
        """The banner's message and overflow bar (or None) for a refused setting."""
        return str(e), None

    def _settle(self) -> None:
        """Draw now the views a Studio put off after a move (hidden tabs wait for the controls to rest): a move
        from code is done on return. Nothing is put off by default."""

    def open_tune(self) -> Any:
        """Show the Tune panel (strategy, budget, run, results, apply best) under the controls."""
        if self.tune_panel is None:
            from .tune_panel import TunePanel

            self.tune_panel = TunePanel(self)
            self.tune_box.children = [self.tune_panel]
        return self.tune_panel

    def tune(self, **kwargs: Any) -> Any:
        """Run ks.tune over this cell's knobs from code (as the Tune panel's Run button); returns the result."""
        return self.open_tune().run(**kwargs)

    def request(self) -> None:
        """A control moved: build with the current values, coalescing a burst of moves into one build."""
        self._seq += 1
        if self._hold or self._scheduled:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is None:
            self._flush()
            return
        self._scheduled = True
        loop.call_soon(self._flush)
