/**
 * Keep every plotly figure of a kernelstudio Studio (`.ks-studio`) as wide as its container.
 *
 * plotly's FigureWidget (an anywidget) sizes itself once, when it is drawn: at plotly's default 700 px
 * when drawn in a hidden tab, and it is never told later that its cell got narrower or wider (the side
 * panel opened, the window or a sidebar resized, its Studio tab shown). A ResizeObserver on each figure
 * is: when the width plotly laid out differs from the element's, we call the figure's own autosize (the
 * handler plotly installs for a `responsive` figure; the Studio's figures are made responsive in Python).
 * The Studio never sets a figure's width, but plotly.js pins it: a relayout of the height from Python (the
 * timeline grows with its lanes) also fixes the width at its value then (plotly's `relayout`), and plotly's
 * autosize leaves a figure with both alone. So a Studio figure that does not fit loses that pinned width.
 */

/** The parts of a plotly graph div this module reads. */
interface PlotlyDiv extends HTMLElement {
  layout?: { width?: number | null; height?: number | null };
  _fullLayout?: { width?: number; height?: number };
  _responsiveChartHandler?: () => void;
}

/** Studio elements carry this class (kernelstudio/notebook/studio.py). */
export const STUDIO_SELECTOR = '.ks-studio';
/** plotly marks a drawn graph div with this class. */
const PLOT_SELECTOR = '.js-plotly-plot';
/** plotly's FigureWidget dispatches this on `document` after it drew a figure. */
const AFTER_RENDER = 'plotlywidget-after-render';
/** Wait this long after the last size change before autosizing (a dragged splitter sends many). */
const DEBOUNCE_MS = 120;
/** A figure this close to its element's width is left alone. */
const TOLERANCE_PX = 1.5;

/** How far, in px, the figure's laid-out width is from its element's (0 when it fits or is hidden). */
export function misfit(plot: PlotlyDiv): number {
  const drawn = plot._fullLayout?.width;
  const width = plot.clientWidth;
  if (drawn === undefined || width === 0 || !plot.isConnected) {
    return 0; // not drawn yet, or hidden (a tab not shown): plotly cannot measure it now
  }
  return Math.abs(drawn - width);
}

export class FigureFitter {
  constructor() {
    this._observer = new ResizeObserver(() => this._schedule());
    this._onRender = (event: Event) => {
      const element = (event as CustomEvent<{ element?: Element }>).detail?.element;
      if (element instanceof HTMLElement) {
        this._watch(element);
      }
      this._schedule();
    };
    document.addEventListener(AFTER_RENDER, this._onRender);
    this.scan(document.body);
  }

  /** Watch the figures of every Studio under `root` (figures drawn before this loaded). */
  scan(root: ParentNode): void {
    root.querySelectorAll<HTMLElement>(`${STUDIO_SELECTOR} ${PLOT_SELECTOR}`).forEach(p => this._watch(p));
    this._schedule();
  }

  /** Autosize every watched figure that does not fit its element now; returns how many it resized. */
  fit(): number {
    let resized = 0;
    for (const plot of [...this._plots]) {
      if (!plot.isConnected) {
        this._observer.unobserve(plot);
        this._plots.delete(plot);
        continue;
      }
      if (plot.closest(STUDIO_SELECTOR) !== null && misfit(plot) > TOLERANCE_PX) {
        if (plot.layout?.width != null && plot.layout?.height != null) {
          delete plot.layout.width; // pinned by plotly, not by the Studio (see above)
        }
        plot._responsiveChartHandler?.();
        resized += 1;
      }
    }
    return resized;
  }

  dispose(): void {
    document.removeEventListener(AFTER_RENDER, this._onRender);
    this._observer.disconnect();
    this._plots.clear();
    window.clearTimeout(this._timer);
  }

  private _watch(plot: HTMLElement): void {
    if (!this._plots.has(plot)) {
      this._plots.add(plot);
      this._observer.observe(plot);
    }
  }

  private _schedule(): void {
    window.clearTimeout(this._timer);
    this._timer = window.setTimeout(() => this.fit(), DEBOUNCE_MS);
  }

  private _observer: ResizeObserver;
  private _onRender: (event: Event) => void;
  private _plots = new Set<PlotlyDiv>();
  private _timer = 0;
}
