/**
 * The "Ascend C" side panel: header, one tab per generated file, a read-only C++ editor. A program of several
 * kernels shows a kernel picker and the tabs of the picked kernel's files (plus the files no kernel owns).
 */

import { Clipboard } from '@jupyterlab/apputils';
import { CodeEditor, CodeEditorWrapper, IEditorServices } from '@jupyterlab/codeeditor';
import { CodeMirrorEditor } from '@jupyterlab/codemirror';
import { copyIcon, downloadIcon, LabIcon } from '@jupyterlab/ui-components';
import { PanelLayout, Widget } from '@lumino/widgets';

import { changedLinesField, showChangedLines } from './highlight';
import { Entry, PanelStore } from './store';

const ICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16">' +
  '<path class="jp-icon3" fill="#616161" d="M3 2h10a1 1 0 0 1 1 1v10a1 1 0 0 1-1 1H3a1 1 0 0 1-1-1V3a1 1 0 0 1 1-1zm' +
  '1.2 3.2v5.6h1.4V9.3h1.6v1.5h1.4V5.2H4.2zm1.4 1.3h1.6v1.6H5.6V6.5zm5.9-1.4c-1.3 0-2.1.9-2.1 2.9s.8 2.9 2.1 2.9' +
  'c.5 0 .9-.1 1.2-.3V9.5c-.3.2-.6.3-.9.3-.6 0-1-.5-1-1.8s.4-1.8 1-1.8c.3 0 .6.1.9.3V5.4c-.3-.2-.7-.3-1.2-.3z"/></svg>';

export const ascendIcon = new LabIcon({ name: 'kernelstudio:ascend-c', svgstr: ICON_SVG });

const CPP_MIME = 'text/x-c++src';

function baseName(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash < 0 ? path : path.slice(slash + 1);
}

/** The files of kernel `k`, by what they are. */
function kernelFiles(k: string): [string, string][] {
  return [
    [`op_kernel/${k}.cpp`, 'kernel'],
    [`op_host/${k}_tiling.h`, 'tiling.h'],
    [`op_host/${k}.cpp`, 'host']
  ];
}

/** The kernel whose file `path` is, or null for a file of the whole program (main.cpp). */
export function kernelOf(path: string, kernels: string[]): string | null {
  for (const k of kernels) {
    if (kernelFiles(k).some(([p]) => p === path)) {
      return k;
    }
  }
  return null;
}

/** A short tab label: what the file is (the kernel picker names the kernel). */
function fileLabel(path: string, kernels: string[]): string {
  const k = kernelOf(path, kernels);
  const found = k === null ? undefined : kernelFiles(k).find(([p]) => p === path);
  return found === undefined ? baseName(path) : found[1];
}

function formatKnob(value: unknown): string {
  if (value === true) {
    return 'on';
  }
  if (value === false) {
    return 'off';
  }
  return String(value);
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls: string, text = ''): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = cls;
  node.textContent = text;
  return node;
}

/** Bring the cell with this id of notebook `notebook` into view; false when it is not there. */
export type RevealCell = (notebook: string, cell: string) => boolean;

export class AscendCodePanel extends Widget {
  constructor(store: PanelStore, editorServices: IEditorServices, revealCell: RevealCell) {
    super();
    this._store = store;
    this._revealCell = revealCell;
    this.id = 'kernelstudio-ascend-c';
    this.addClass('ks-panel');
    this.title.icon = ascendIcon;
    this.title.caption = 'Ascend C: the generated code of the last Studio touched';

    const layout = new PanelLayout();
    this.layout = layout;
    this._header = new Widget({ node: el('div', 'ks-panel-header') });
    this._tabs = new Widget({ node: el('div', 'ks-panel-tabs') });
    this._tabs.node.setAttribute('role', 'tablist');
    this._model = new CodeEditor.Model({ mimeType: CPP_MIME });
    this._editor = new CodeEditorWrapper({
      factory: editorServices.factoryService.newDocumentEditor,
      model: this._model,
      editorOptions: { config: { readOnly: true, lineNumbers: true, lineWrap: false } }
    });
    this._editor.addClass('ks-panel-editor');
    (this._editor.editor as CodeMirrorEditor).injectExtension(changedLinesField);
    this._empty = new Widget({ node: el('div', 'ks-panel-empty') });
    for (const w of [this._header, this._tabs, this._editor, this._empty]) {
      layout.addWidget(w);
    }
    store.changed.connect((_, notebook) => {
      if (notebook === this._notebook) {
        this._design = null; // follow the design touched last
        this._render();
      }
    });
    this._render();
  }

  /** Show the designs of the notebook with this id (null: no notebook open). */
  follow(notebook: string | null, label: string): void {
    if (notebook === this._notebook) {
      return;
    }
    this._notebook = notebook;
    this._notebookLabel = label;
    this._design = null;
    this._kernel = null;
    this._shown = null;
    this._render();
  }

  dispose(): void {
    this._model.dispose();
    super.dispose();
  }

  private _entry(): Entry | null {
    return this._notebook === null ? null : this._store.entry(this._notebook, this._design);
  }

  private _render(): void {
    const entry = this._entry();
    const node = this.node;
    if (entry === null) {
      node.dataset.design = '';
      node.dataset.seq = '';
      node.dataset.stale = 'false';
      this._header.hide();
      this._tabs.hide();
      this._editor.hide();
      this._empty.show();
      this._empty.node.textContent =
        this._notebook === null
          ? 'Open a notebook and run an %%ascend_kernel cell: its generated Ascend C appears here.'
          : `No Studio in ${this._notebookLabel} yet. Run an %%ascend_kernel cell; the code of the last ` +
            'Studio you touch appears here.';
      this._shown = null;
      return;
    }
    this._empty.hide();
    this._header.show();
    this._tabs.show();
    this._editor.show();
    const message = entry.message;
    const sameDesign = this._shown !== null && this._shown.message.design === message.design;
    if (!sameDesign || this._file === null || !(this._file in message.files)) {
      this._kernel = null;
      this._file = Object.keys(message.files)[0];
    }
    const fresh = this._shown !== entry;
    this._shown = entry;
    this._renderHeader(entry);
    this._renderTabs(entry);
    if (fresh) {
      this._showFile(entry, true);
    }
    node.dataset.design = message.design;
    node.dataset.seq = String(message.seq);
    node.dataset.stale = String(message.error !== '');
  }

  private _renderHeader(entry: Entry): void {
    const message = entry.message;
    const header = this._header.node;
    header.replaceChildren();
    const top = el('div', 'ks-panel-title');
    const designs = this._notebook === null ? [] : this._store.designs(this._notebook);
    if (designs.length > 1) {
      const select = el('select', 'ks-panel-design');
      select.title = 'Designs in this notebook, most recently touched first';
      for (const d of designs) {
        const option = el('option', '', d.message.design);
        option.value = d.message.design;
        option.selected = d.message.design === message.design;
        select.appendChild(option);
      }
      select.onchange = () => {
        this._design = select.value;
        this._render();
      };
      top.appendChild(select);
    } else {
      top.appendChild(el('span', 'ks-panel-design', message.design));
    }
    if (message.cell !== '' && this._notebook !== null) {
      const notebook = this._notebook;
      const go = el('button', 'ks-panel-button ks-panel-goto', '\u2197');
      go.title = 'Go to the Studio cell of this design';
      go.onclick = () => {
        if (!this._revealCell(notebook, message.cell)) {
          go.title = 'The cell of this design is no longer in the notebook';
        }
      };
      top.appendChild(go);
    }
    top.appendChild(el('span', 'ks-panel-time', `${message.time_us.toFixed(2)} us`));
    top.appendChild(this._actions(entry));
    header.appendChild(top);
    // A few kernels are named; more are counted (the kernel picker below names each).
    const n = message.kernels.length;
    const kernels = n === 1 ? 'kernel' : 'kernels';
    const meta = n <= 3 ? `${kernels} ${message.kernels.join(', ')}` : `${n} kernels`;
    const metaLine = el('div', 'ks-panel-meta', `${message.target} · ${meta}`);
    metaLine.title = message.kernels.join(', ');
    header.appendChild(metaLine);
    const knobs = el('div', 'ks-panel-knobs');
    const entries = Object.entries(message.knobs);
    if (entries.length === 0) {
      knobs.appendChild(el('span', 'ks-panel-knob ks-panel-none', 'no knobs'));
    }
    for (const [name, value] of entries) {
      const knob = el('span', 'ks-panel-knob');
      knob.appendChild(el('span', 'ks-panel-knob-name', `${name}=`));
      knob.appendChild(el('span', 'ks-panel-knob-value', formatKnob(value)));
      knobs.appendChild(knob);
    }
    header.appendChild(knobs);
    if (message.error !== '') {
      // The Studio shows an error banner: this code is of the setting before the one that failed.
      const stale = el('div', 'ks-panel-stale');
      stale.setAttribute('role', 'status');
      stale.title = 'The Studio could not build its current setting; this is the code of the last setting that built';
      stale.appendChild(el('span', 'ks-panel-stale-label', 'last valid setting'));
      stale.appendChild(el('span', 'ks-panel-stale-error', message.error));
      header.appendChild(stale);
    }
    header.classList.toggle('ks-panel-header-stale', message.error !== '');
  }

  private _renderTabs(entry: Entry): void {
    const tabs = this._tabs.node;
    tabs.replaceChildren();
    const message = entry.message;
    const kernels = message.kernels;
    const paths = Object.keys(message.files);
    const current = this._file === null ? null : kernelOf(this._file, kernels);
    // Several kernels: pick one, then its files; the program's own files (main.cpp) are always there.
    const picked = kernels.length > 1 ? (current ?? this._kernel ?? kernels[0]) : null;
    if (picked !== null) {
      this._kernel = picked;
      const select = el('select', 'ks-panel-kernel');
      select.title = `${kernels.length} kernels in launch order; pick one to see its files`;
      kernels.forEach((k, i) => {
        const n = kernelFiles(k).reduce((sum, [p]) => sum + (entry.changed[p]?.length ?? 0), 0);
        const option = el('option', '', `${i + 1}/${kernels.length} ${k}${n > 0 ? ` (${n} changed)` : ''}`);
        option.value = k;
        option.selected = k === picked;
        select.appendChild(option);
      });
      select.onchange = () => {
        this._kernel = select.value;
        const first = kernelFiles(select.value).find(([p]) => p in message.files);
        if (first !== undefined) {
          this._file = first[0];
        }
        this._renderTabs(entry);
        this._showFile(entry, true);
      };
      tabs.appendChild(select);
    }
    const list = el('div', 'ks-panel-tablist');
    for (const path of paths) {
      const owner = kernelOf(path, kernels);
      if (picked !== null && owner !== null && owner !== picked) {
        continue;
      }
      const tab = el('button', 'ks-panel-tab', fileLabel(path, kernels));
      tab.title = path;
      tab.dataset.path = path;
      tab.setAttribute('role', 'tab');
      tab.setAttribute('aria-selected', String(path === this._file));
      const n = entry.changed[path]?.length ?? 0;
      if (n > 0) {
        const badge = el('span', 'ks-panel-badge', String(n));
        badge.title = `${n} line${n === 1 ? '' : 's'} changed by the last rebuild`;
        tab.appendChild(badge);
      }
      tab.onclick = () => {
        this._file = path;
        this._renderTabs(entry);
        this._showFile(entry, true);
      };
      list.appendChild(tab);
    }
    tabs.appendChild(list);
    this.node.dataset.kernel = picked ?? '';
  }

  /** Copy and download buttons for the file on screen. */
  private _actions(entry: Entry): HTMLElement {
    const actions = el('div', 'ks-panel-actions');
    const copy = el('button', 'ks-panel-button ks-panel-copy');
    copy.title = 'Copy this file to the clipboard';
    copy.appendChild(copyIcon.element({ tag: 'span' }));
    copy.onclick = () => {
      if (this._file !== null) {
        Clipboard.copyToSystem(entry.message.files[this._file]);
        copy.classList.add('ks-panel-done');
        window.setTimeout(() => copy.classList.remove('ks-panel-done'), 1200);
      }
    };
    const download = el('button', 'ks-panel-button ks-panel-download');
    download.title = 'Download this file';
    download.appendChild(downloadIcon.element({ tag: 'span' }));
    download.onclick = () => {
      if (this._file !== null) {
        const blob = new Blob([entry.message.files[this._file]], { type: 'text/x-c++src' });
        const url = URL.createObjectURL(blob);
        const a = document.createElement('a');
        a.href = url;
        a.download = baseName(this._file);
        document.body.appendChild(a);
        a.click();
        a.remove();
        window.setTimeout(() => URL.revokeObjectURL(url), 1000);
      }
    };
    actions.append(copy, download);
    return actions;
  }

  private _showFile(entry: Entry, scroll: boolean): void {
    if (this._file === null) {
      return;
    }
    const text = entry.message.files[this._file];
    const view = (this._editor.editor as CodeMirrorEditor).editor;
    const top = view.scrollDOM.scrollTop;
    if (this._model.sharedModel.getSource() !== text) {
      this._model.sharedModel.setSource(text);
    }
    const lines = entry.changed[this._file] ?? [];
    showChangedLines(view, lines, scroll);
    if (lines.length === 0 || !scroll) {
      view.scrollDOM.scrollTop = top;
    }
    this.node.dataset.file = this._file;
    this.node.dataset.changed = String(lines.length);
  }

  private _store: PanelStore;
  private _revealCell: RevealCell;
  private _header: Widget;
  private _tabs: Widget;
  private _editor: CodeEditorWrapper;
  private _empty: Widget;
  private _model: CodeEditor.Model;
  private _notebook: string | null = null;
  private _notebookLabel = '';
  private _design: string | null = null;
  private _file: string | null = null;
  private _kernel: string | null = null;
  private _shown: Entry | null = null;
}
