/** A CodeMirror 6 extension that marks a set of lines as "changed by the last rebuild". */

import { EditorState, RangeSetBuilder, StateEffect, StateField } from '@codemirror/state';
import { Decoration, DecorationSet, EditorView } from '@codemirror/view';

export const CHANGED_CLASS = 'ks-changed-line';

/** Replace the marked lines (0-based line numbers of the current document). */
export const setChangedLines = StateEffect.define<number[]>();

const changedLine = Decoration.line({ class: CHANGED_CLASS });

function decorate(state: EditorState, lines: number[]): DecorationSet {
  const builder = new RangeSetBuilder<Decoration>();
  for (const n of [...new Set(lines)].sort((x, y) => x - y)) {
    if (n >= 0 && n < state.doc.lines) {
      const from = state.doc.line(n + 1).from;
      builder.add(from, from, changedLine);
    }
  }
  return builder.finish();
}

export const changedLinesField = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(value, tr) {
    let next = value.map(tr.changes);
    for (const effect of tr.effects) {
      if (effect.is(setChangedLines)) {
        next = decorate(tr.state, effect.value);
      }
    }
    return next;
  },
  provide: field => EditorView.decorations.from(field)
});

/** Mark `lines` in `view` and, if `scroll`, bring the first of them near the top of the view. */
export function showChangedLines(view: EditorView, lines: number[], scroll: boolean): void {
  const effects: StateEffect<unknown>[] = [setChangedLines.of(lines)];
  if (scroll && lines.length > 0) {
    const first = Math.min(...lines);
    if (first < view.state.doc.lines) {
      const pos = view.state.doc.line(first + 1).from;
      effects.push(EditorView.scrollIntoView(pos, { y: 'start', yMargin: 48 }));
    }
  }
  view.dispatch({ effects });
}
