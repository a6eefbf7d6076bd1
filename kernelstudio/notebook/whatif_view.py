"""The Studio's hardware what-if: one control per profile field (`hw.whatif.WHATIF_FIELDS`), "reset to profile",
and the design side by side on ascend910b2 / 910b4 / 950.

Moving a control rebuilds the Studio's design on its target's profile with the changed fields
(`StudioSession.rebuild(..., overrides=...)`); a value `what_if` refuses, or a design that no longer fits
(a smaller UB), shows its error in the Studio's banner over the last good views, as a bad knob does.
Each control's tooltip holds the profile's value and its source.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

import ipywidgets as W

from ..core.errors import KernelStudioError, UnsupportedError
from ..hw import HardwareProfile
from ..hw import get as get_profile
from ..hw.whatif import WHATIF_FIELDS, format_value, what_if, whatif_field, whatif_table
from ..tune.whatif import DEFAULT_TARGETS
from .render.compare import comparison_figure, comparison_html
from .tune_panel import CellDesign

__all__ = ["WhatIfPanel"]

_GREY = "color:#868e96; font-size:11px;"


def _tooltip(row: dict[str, Any]) -> str:
    f = whatif_field(row["field"])
    note = f"\nnote: {row['note']}" if row["note"] else ""
    return (f"{row['label']}: the profile has {row['display']}\nsource: {row['source']}{note}\n"
            f"what_if accepts {f.display(row['lo'])} .. {f.display(row['hi'])} (slider stops: {row['range_source']})")


class WhatIfPanel(W.VBox):
    """What-if controls for a Studio (`studio.session` a StudioSession with `overrides`); `rebuild`
    replaces how a change is built (default: the session's rebuild with the overrides, shown in the Studio)."""

    def __init__(self, studio: Any, *, rebuild: Callable[[dict[str, Any]], Any] | None = None,
                 compare_targets: tuple[str, ...] = DEFAULT_TARGETS) -> None:
        session = studio.session
        if not hasattr(session, "overrides"):
            raise UnsupportedError(f"design {session.name}: this Studio's session keeps no hardware overrides "
                                   "(StudioSession.overrides); update kernelstudio")
        if getattr(session, "multi", False):
            raise UnsupportedError(f"design {session.name} is a multi-device design: its chip is its cluster's "
                                   "(ks.multi.Cluster(target=...)); change the cluster's profile in the cell")
        self.studio = studio
        self.error: str | None = None
        self.comparison: Any = None
        self.compare_with = tuple(compare_targets)
        self._rebuild = rebuild or self._session_rebuild
        self._hold = False  # controls moved together (reset, coupled cores): build once, after
        self.controls: dict[str, W.SelectionSlider] = {}
        self.status = W.HTML()
        self.reset_button = W.Button(description="reset to profile", icon="undo",
                                     tooltip="every field back to the target's profile value",
                                     layout=W.Layout(width="auto", flex="0 0 auto"))
        self.reset_button.on_click(lambda _: self.reset())
        self.compare_button = W.Button(description="side by side", icon="columns",
                                       tooltip=f"this design on {', '.join(self.compare_with)} (and the what-if)",
                                       layout=W.Layout(width="auto", flex="0 0 auto"))
        self.compare_button.on_click(lambda _: self.compare())
        self.compare_table = W.HTML()
        self.compare_box = W.VBox(layout=W.Layout(max_width="100%"))
        self.grid = W.Box(layout=W.Layout(display="flex", flex_flow="row wrap"))
        self._profile: HardwareProfile | None = None
        self._build_controls()
        studio.target.observe(lambda ch: self.refresh(), names="value")  # another chip: its values and sources
        super().__init__([W.HBox([W.HTML("<b>what if the chip were different</b>"), self.reset_button,
                                  self.compare_button], layout=W.Layout(align_items="center", flex_flow="row wrap")),
                          self.grid, self.status, self.compare_table, self.compare_box])
        self.add_class("ks-whatif")

    # --- controls ---------------------------------------------------------------------------------
    @property
    def profile(self) -> HardwareProfile:
        """The Studio's target's profile as shipped (the what-if changes apply on top of it)."""
        return get_profile(self.studio.target.value)

    def _build_controls(self) -> None:
        p = self.profile
        self._profile = p
        current = {**{f.name: getattr(p, f.name) for f in WHATIF_FIELDS}, **self.studio.session.overrides}
        self.controls = {}
        for row in whatif_table(p):
            f = row["field"]
            stops = sorted(set(row["choices"]) | {current[f]})
            opts = [(format_value(v / row["scale"]) + ("*" if v == row["value"] else ""), v) for v in stops]
            w = W.SelectionSlider(options=opts, value=current[f], description=f"{row['label']} ({row['unit']})",
                                  tooltip=_tooltip(row), continuous_update=False,
                                  style={"description_width": "initial"},
                                  layout=W.Layout(width="370px", max_width="100%"))
            w.observe(lambda ch, f=f: self._moved(f), names="value")
            self.controls[f] = w
        self.grid.children = list(self.controls.values())
        self._say(f'<span style="{_GREY}">{html.escape(p.name)}: * marks the profile\'s value; hover a control '
                  "for its source</span>")

    def values(self) -> dict[str, Any]:
        """The value every control shows, stored units (bytes, B/s, MHz, us)."""
        return {f: w.value for f, w in self.controls.items()}

    def overrides(self) -> dict[str, Any]:
        """The fields whose control differs from the profile's value."""
        p = self.profile
        return {f: v for f, v in self.values().items() if getattr(p, f) != v}

    def _moved(self, field: str) -> None:
        if self._hold:
            return
        per = self.profile.aiv_per_aic
        pair = {"aic_cores": ("aiv_cores", per), "aiv_cores": ("aic_cores", 1 / per)}.get(field)
        if pair is not None:  # cube and vector cores move together (aiv = aic x aiv_per_aic)
            other, factor = pair
            want = int(round(self.controls[field].value * factor))
            self._hold = True
            try:
                if want not in [v for _, v in self.controls[other].options]:
                    self.controls[other].options = sorted({*self.controls[other].options, (str(want), want)},
                                                          key=lambda o: o[1])
                self.controls[other].value = want
            finally:
                self._hold = False
        self.apply_current()

    def set(self, **values: Any) -> Any:
        """Move controls from code (stored units) and rebuild once; a value off the sliders' stops is added
        as a stop. Returns the new design, or None when the change was refused (see `error`)."""
        unknown = [k for k in values if k not in self.controls]
        if unknown:
            self._fail(f"what-if: no control {unknown[0]!r}; the fields are {', '.join(self.controls)}")
            return None
        try:
            what_if(self.profile, **values)  # refused before any control moves
        except KernelStudioError as e:
            self._fail(str(e))
            return None
        self._hold = True
        try:
            for k, v in values.items():
                w = self.controls[k]
                if v not in [o for _, o in w.options]:
                    w.options = sorted({*w.options, (format_value(v / _scale(k)), v)}, key=lambda o: o[1])
                w.value = v
        finally:
            self._hold = False
        return self.apply_current()

    def reset(self) -> Any:
        """Every control back to the profile's value, and a rebuild without overrides."""
        p = self.profile
        self._hold = True
        try:
            for f, w in self.controls.items():
                w.value = getattr(p, f)
        finally:
            self._hold = False
        return self.apply_current()

    def apply_current(self) -> Any:
        """Rebuild the Studio's design with the controls' overrides; on a KernelStudioError the Studio keeps its
        views and shows the error (and so does the panel)."""
        ov = self.overrides()
        try:
            what_if(self.profile, **ov)  # the panel's own check: field, value, range, a way out
            d = self._rebuild(ov)
        except KernelStudioError as e:
            from .views import overflow_bar

            self._fail(str(e), overflow_bar(e))
            return None
        self.error = None
        changed = ", ".join(f"{f}={self.controls[f].label}" for f in ov) or "none (the profile as shipped)"
        self._say(f'<span style="{_GREY}">what-if on {html.escape(self.profile.name)}: '
                  f"{html.escape(changed)}</span>")
        return d

    def _session_rebuild(self, overrides: dict[str, Any]) -> Any:
        st = self.studio
        st._seq += 1
        d = st.session.rebuild(st.knob_values(), target=st.target.value, compare=st.compare.value, strict=False,
                               l2=st.l2.value, overrides=overrides)
        st._show(d)
        st._done = st._seq
        return d

    def _fail(self, message: str, overflow: dict[str, Any] | None = None) -> None:
        self.error = message
        self._say(f'<span style="color:#c92a2a;">{html.escape(message)}</span>')
        fail = getattr(self.studio, "_fail", None)
        if fail is not None:
            fail(message, overflow)

    def _say(self, text: str) -> None:
        self.status.value = text

    def refresh(self) -> None:
        """Rebuild the controls for the Studio's current target (after the target changed)."""
        if self._profile is None or self._profile.name != self.studio.target.value:
            self._build_controls()

    # --- side by side -----------------------------------------------------------------------------
    def compare(self, *, figure: bool = True) -> Any:
        """This design (the Studio's knob values) on the comparison targets, and on the what-if profile when a
        field is changed: the table (with sources on hover) and the timelines on one time axis."""
        from ..tune.whatif import compare_targets

        st = self.studio
        fn = CellDesign.of(st.session.source, st.session.name, st.session.user_ns)
        targets: list[Any] = list(self.compare_with)
        ov = self.overrides()
        if ov:
            try:
                targets.insert(0, what_if(self.profile, **ov))
            except KernelStudioError as e:
                self._fail(str(e))
                return None
        try:
            cmp = compare_targets(fn, targets, l2=st.l2.value, config=st.knob_values(), name=st.session.name)
        except KernelStudioError as e:
            self._fail(f"side by side: {e}")
            return None
        self.comparison = cmp
        # the table scrolls sideways in a narrow notebook; the figure follows the cell's width (labextension fit.ts)
        self.compare_table.value = (f'<div class="ks-compare-table" style="max-width:100%; overflow-x:auto;">'
                                   f'{comparison_html(cmp)}</div>')
        if figure:
            cmp.figure = comparison_figure(cmp, widget=True)
            cmp.figure._config = {**cmp.figure._config, "responsive": True}
            self.compare_box.children = [cmp.figure]
        return cmp


def _scale(field: str) -> float:
    return whatif_field(field).scale
