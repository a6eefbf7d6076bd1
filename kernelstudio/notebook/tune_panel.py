"""The Studio's Tune button: `ks.tune` over the cell's knobs, the results view, and "apply best".

`CellDesign` is the build function of a Studio cell: it runs the cell body with the knob values of the
tuner's context (so the search space is exactly the cell's knobs) and holds only the notebook names the
cell reads, so it can travel to the worker processes.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import ipywidgets as W

from ..core.errors import KernelStudioError
from ..schedule.knobs import knob
from .cell import dsl_namespace, run_cell

if TYPE_CHECKING:
    from ..tune.result import TuneResult

__all__ = ["CellDesign", "TunePanel"]

# the progress bar ks.tune draws (tqdm's HBox of text, bar, text) keeps a readable bar in a narrow Studio:
# the texts wrap around it instead of squeezing it to a square
_CSS = """<style>
.ks-tune .widget-hbox:has(> .widget-hprogress) { flex-wrap: wrap; max-width: 100%; }
.ks-tune .widget-hprogress { flex: 1 1 160px; min-width: 120px; max-width: 100%; }
.ks-tune .widget-hbox:has(> .widget-hprogress) > .widget-html { flex: 0 1 auto; min-width: 0; }
.ks-tune .widget-hbox:has(> .widget-hprogress) .widget-html-content { flex: 0 1 auto; min-width: 0;
  white-space: normal; }
</style>"""


def _names_read(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


@dataclass
class CellDesign:
    """A Studio cell as a build function for `ks.tune`."""

    source: str
    name: str
    user_ns: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, source: str, name: str, user_ns: Mapping[str, Any] | None) -> CellDesign:
        dsl = dsl_namespace()
        read = _names_read(source) - set(dsl) - {"out", "s"}  # run_cell never takes these from the notebook
        ns = {k: v for k, v in (user_ns or {}).items() if k in read and not k.startswith("_")}
        return cls(source, name, ns)

    def __call__(self) -> Any:
        # learn the cell's knobs, declare them in the tuner's context, and run with the values it sets
        first = run_cell(self.source, name=self.name, user_ns=self.user_ns, strict=False)
        values = {n: knob(n, k.default, list(k.choices)) for n, k in first.knobs.items()}
        res = first if values == first.values else run_cell(self.source, name=self.name, user_ns=self.user_ns,
                                                            values=values, strict=False)
        if res.multi is not None:
            return res.multi  # ks.tune times a multi-device design with its own model
        return res.schedule if res.schedule is not None else list(res.outputs)

    @property
    def __name__(self) -> str:  # what ks.tune calls the design
        return self.name


def _target(studio: Any) -> str:
    """The profile a Studio tunes on: its target control's, or a multi-device Studio's cluster chip."""
    fixed = getattr(studio, "tune_target", None)
    return fixed if isinstance(fixed, str) else studio.target.value


class TunePanel(W.VBox):
    """Strategy, budget, a Tune button, the results (summary, plot, feasibility map) and "apply best"."""

    def __init__(self, studio: Any) -> None:  # a Studio (typed loosely: studio.py opens this panel)
        self.studio = studio
        self.result: TuneResult | None = None
        size = 1
        for k in studio.session.knobs.values():
            size *= len(k.choices)
        fixed = {"width": "auto", "flex": "0 0 auto"}  # the row wraps; no control is squeezed to "..."
        self.strategy = W.Dropdown(options=["evolutionary", "random", "grid"], value="evolutionary",
                                   description="strategy", layout=W.Layout(**fixed))
        self.budget = W.BoundedIntText(value=min(32, max(size, 1)), min=1, max=max(size, 1), description="budget",
                                       layout=W.Layout(width="160px", flex="0 0 auto"))
        self.run_button = W.Button(description="Run", icon="play", button_style="primary", layout=W.Layout(**fixed))
        self.apply_button = W.Button(description="apply best", icon="check", disabled=True,
                                     layout=W.Layout(**fixed))
        self.run_button.on_click(lambda _: self.run())
        self.apply_button.on_click(lambda _: self.apply_best())
        self.out = W.Output(layout=W.Layout(max_width="100%"))
        self.views = W.Output(layout=W.Layout(max_width="100%"))
        self.text = ""
        row = W.HBox([self.strategy, self.budget, self.run_button, self.apply_button],
                     layout=W.Layout(align_items="center", flex_flow="row wrap"))
        super().__init__([W.HTML(_CSS, layout=W.Layout(display="none")), row, self.out, self.views])
        self.add_class("ks-tune")

    def run(self, *, executor: Any = None, seed: int | None = 0, db: Any = None,
            progress: bool = True) -> TuneResult | None:
        """Tune the cell's knobs on the Studio's target; the results replace the previous ones."""
        from ..tune import tune

        st = self.studio
        fn = CellDesign.of(st.session.source, st.session.name, st.session.user_ns)
        self.out.clear_output()
        self.views.clear_output()
        self.apply_button.disabled = True
        with self.out:
            try:
                self.result = tune(fn, target=_target(st), budget=int(self.budget.value),
                                   strategy=self.strategy.value, seed=seed, executor=executor, db=db,
                                   name=st.session.name, progress=progress)
            except KernelStudioError as e:
                self.text = f"tune failed: {e}"
                print(self.text)
                return None
            self.text = self.result.summary()
            print(self.text)
        self.apply_button.disabled = False
        self._show_views()
        return self.result

    def _show_views(self) -> None:
        r = self.result
        if r is None:
            return
        from IPython.display import display

        axes = [k.name for k in r.knobs if len(k.choices) > 1][:2]
        with self.views:
            try:
                display(r.plot())
                if len(axes) == 2:
                    display(r.feasibility_map(x=axes[0], y=axes[1]))  # says where the default is if not there
            except KernelStudioError as e:
                print(f"views not drawn: {e}")

    def clear(self, reason: str) -> None:
        """Forget the results (they no longer hold, e.g. for another target) and say why in the panel."""
        self.result = None
        self.apply_button.disabled = True
        self.out.outputs = ()
        self.views.outputs = ()
        self.text = reason
        self.out.append_stdout(reason + "\n")

    def apply_best(self) -> None:
        """Move the Studio's controls to the best configuration (one rebuild)."""
        r = self.result
        if r is None or not r.feasible:
            return
        target = _target(self.studio)
        if r.target != target:
            from ..tune.errors import TuneError

            raise TuneError(f"apply best: the results of {r.name} were tuned on {r.target}, the Studio is on "
                            f"{target}; press Run to tune on {target} (or switch the target back to {r.target})")
        sliders = {k: v for k, v in r.best.config.items() if k in self.studio.session.knobs}
        self.studio.set_knobs(**sliders)
        rest = {k: v for k, v in r.best.config.items() if k not in sliders}
        if rest:  # the fused attention kernels' blocks and slots the tuner added (tune/attention_knobs.py)
            from ..tune.attention_knobs import directives_text

            self.out.append_stdout(f"the cell has no controls for {', '.join(rest)}: to keep them, add "
                                   f"{directives_text(rest)} to the cell\n")
