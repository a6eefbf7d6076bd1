/**
 * What the panel knows: per notebook, the latest code of each design and the
 * design touched last; per file, the lines the last rebuild changed.
 */

import { Signal, ISignal } from '@lumino/signaling';

import { changedLines } from './diff';
import { CodeMessage, PanelMessage } from './messages';

export interface Entry {
  message: CodeMessage;
  /** 0-based changed line numbers per file path, against the previous version. */
  changed: Record<string, number[]>;
  /** How many versions of this design the panel has seen. */
  version: number;
}

interface NotebookState {
  designs: Map<string, Entry>;
  last: string | null;
}

function sameCode(a: CodeMessage, b: CodeMessage): boolean {
  const fa = Object.keys(a.files);
  const fb = Object.keys(b.files);
  return (
    fa.length === fb.length &&
    fa.every(p => a.files[p] === b.files[p]) &&
    JSON.stringify(a.knobs) === JSON.stringify(b.knobs)
  );
}

export class PanelStore {
  private _notebooks = new Map<string, NotebookState>();
  private _changed = new Signal<this, string>(this);

  /** Emits the id of the notebook whose entries changed. */
  get changed(): ISignal<this, string> {
    return this._changed;
  }

  /** Apply a validated message from the kernel of notebook `notebook`. */
  apply(notebook: string, message: PanelMessage): void {
    let state = this._notebooks.get(notebook);
    if (state === undefined) {
      state = { designs: new Map(), last: null };
      this._notebooks.set(notebook, state);
    }
    if (message.kind === 'withdraw') {
      if (!state.designs.delete(message.design)) {
        return;
      }
      if (state.last === message.design) {
        const rest = [...state.designs.values()].sort((x, y) => y.message.seq - x.message.seq);
        state.last = rest.length > 0 ? rest[0].message.design : null;
      }
      this._changed.emit(notebook);
      return;
    }
    const old = state.designs.get(message.design);
    if (old !== undefined && old.message.seq === message.seq && sameCode(old.message, message)) {
      state.last = message.design; // a replay of what is shown: keep its highlight
      this._changed.emit(notebook);
      return;
    }
    if (old !== undefined && old.message.error !== message.error && sameCode(old.message, message)) {
      // the same code, now (or no longer) the last valid setting: keep the highlight of its last change
      state.designs.set(message.design, { ...old, message });
      state.last = message.design;
      this._changed.emit(notebook);
      return;
    }
    const changed: Record<string, number[]> = {};
    for (const [path, text] of Object.entries(message.files)) {
      changed[path] = changedLines(old?.message.files[path], text);
    }
    state.designs.set(message.design, { message, changed, version: (old?.version ?? 0) + 1 });
    state.last = message.design;
    this._changed.emit(notebook);
  }

  /** The designs of a notebook, most recent first. */
  designs(notebook: string): Entry[] {
    const state = this._notebooks.get(notebook);
    return state ? [...state.designs.values()].sort((x, y) => y.message.seq - x.message.seq) : [];
  }

  entry(notebook: string, design: string | null): Entry | null {
    const state = this._notebooks.get(notebook);
    const name = design ?? state?.last ?? null;
    return (name !== null && state?.designs.get(name)) || null;
  }

  /** Forget a closed notebook. */
  drop(notebook: string): void {
    if (this._notebooks.delete(notebook)) {
      this._changed.emit(notebook);
    }
  }
}
