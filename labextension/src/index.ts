/**
 * kernelstudio's JupyterLab extension: the "Ascend C" side panel and its link
 * to the kernels of open notebooks.
 *
 * Push: on every kernel connection we register PUSH_TARGET; the kernel opens a
 * comm to it with a message on each rebuild. Pull: after every (re)connection
 * we open a comm to the kernel's SYNC_TARGET and it replays the latest code,
 * because after a page reload or kernel switch the push comms of before are
 * unknown here.
 */

import { ILabShell, ILayoutRestorer, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { IEditorServices } from '@jupyterlab/codeeditor';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { Kernel, KernelMessage } from '@jupyterlab/services';

import { PUSH_TARGET, SYNC_TARGET, SyncRequest, VERSION, parseMessage } from './messages';
import { FigureFitter } from './fit';
import { AscendCodePanel } from './panel';
import { PanelStore } from './store';

const OPEN_COMMAND = 'kernelstudio:open-ascend-c';
/** Below this the notebook is too narrow for a Studio: opening the panel collapses the left sidebar. */
const COMFORTABLE_NOTEBOOK_PX = 700;
/** Below this, even with the left sidebar collapsed, the panel does not open by itself. */
const MIN_NOTEBOOK_PX = 560;

/**
 * Open the panel by itself, for the first code of a page session, without squeezing the notebook: when
 * the notebook would be narrower than COMFORTABLE_NOTEBOOK_PX, collapse the left sidebar first (the user
 * can reopen it); when it would still be narrower than MIN_NOTEBOOK_PX, leave the panel closed (its icon
 * in the right bar opens it, and the Studio's own Ascend C tab shows the code).
 */
function revealPanel(app: JupyterFrontEnd, panel: AscendCodePanel, labShell: ILabShell | null): void {
  const main = labShell?.currentWidget?.node ?? document.querySelector<HTMLElement>('#jp-main-dock-panel');
  if (labShell === null || main === null || main === undefined) {
    app.shell.activateById(panel.id);
    return;
  }
  const rightOpen = !labShell.rightCollapsed;
  // the panel's width once open: what it had before, else its CSS minimum
  const panelWidth = Math.max(panel.node.offsetWidth, parseFloat(getComputedStyle(panel.node).minWidth) || 0);
  const rightNow = rightOpen ? (document.querySelector<HTMLElement>('#jp-right-stack')?.offsetWidth ?? 0) : 0;
  const notebook = main.offsetWidth + rightNow - panelWidth;
  if (notebook < COMFORTABLE_NOTEBOOK_PX && !labShell.leftCollapsed) {
    const left = document.querySelector<HTMLElement>('#jp-left-stack')?.offsetWidth ?? 0;
    if (notebook + left < MIN_NOTEBOOK_PX) {
      return;
    }
    labShell.collapseLeft();
  } else if (notebook < MIN_NOTEBOOK_PX) {
    return;
  }
  app.shell.activateById(panel.id);
}

/** Connects every notebook's kernel to the store; one instance per page. */
class KernelLink {
  constructor(store: PanelStore, onMessage: () => void) {
    this._store = store;
    this._onMessage = onMessage;
  }

  /** Follow `panel`'s kernel now and whenever it changes. */
  watch(panel: NotebookPanel): void {
    if (this._watched.has(panel)) {
      return;
    }
    this._watched.add(panel);
    const session = panel.sessionContext;
    session.kernelChanged.connect((_, change) => this._attach(panel, change.newValue));
    session.statusChanged.connect((_, status) => {
      // After a restart the kernel is new: ask it again once it is up.
      if (status === 'idle' && this._needSync.has(panel.id)) {
        this._needSync.delete(panel.id);
        this._sync(panel, session.session?.kernel ?? null);
      } else if (status === 'restarting' || status === 'autorestarting') {
        this._needSync.add(panel.id);
      }
    });
    panel.disposed.connect(() => this._store.drop(panel.id));
    void session.ready.then(() => this._attach(panel, session.session?.kernel ?? null));
  }

  private _attach(panel: NotebookPanel, kernel: Kernel.IKernelConnection | null): void {
    if (kernel === null || kernel.isDisposed) {
      return;
    }
    if (!this._kernels.has(kernel)) {
      this._kernels.add(kernel);
      kernel.registerCommTarget(PUSH_TARGET, (comm, msg) => {
        this._receive(panel, msg.content.data, 'a kernel push');
        comm.onMsg = (m: KernelMessage.ICommMsgMsg) => this._receive(panel, m.content.data, 'a kernel push');
      });
    }
    this._sync(panel, kernel);
  }

  private _sync(panel: NotebookPanel, kernel: Kernel.IKernelConnection | null): void {
    if (kernel === null || kernel.isDisposed) {
      return;
    }
    const comm = kernel.createComm(SYNC_TARGET);
    comm.onMsg = msg => this._receive(panel, msg.content.data, 'a kernel replay');
    const request: SyncRequest = { version: VERSION, kind: 'sync' };
    try {
      comm.open({ ...request });
    } catch (reason) {
      console.warn('kernelstudio: could not ask the kernel for its latest code', reason);
    }
  }

  private _receive(panel: NotebookPanel, data: unknown, origin: string): void {
    const message = parseMessage(data, origin);
    if (message !== null && !panel.isDisposed) {
      this._store.apply(panel.id, message);
      if (message.kind === 'code') {
        this._onMessage();
      }
    }
  }

  private _store: PanelStore;
  private _onMessage: () => void;
  private _watched = new WeakSet<NotebookPanel>();
  private _kernels = new WeakSet<Kernel.IKernelConnection>();
  private _needSync = new Set<string>();
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'kernelstudio:ascend-c-panel',
  description: 'The "Ascend C" side panel: generated code of the last kernelstudio Studio touched.',
  autoStart: true,
  requires: [INotebookTracker, IEditorServices],
  optional: [ILayoutRestorer, ILabShell],
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    editorServices: IEditorServices,
    restorer: ILayoutRestorer | null,
    labShell: ILabShell | null
  ) => {
    // The Studio's figures follow their cell's width (side panel, window, sidebars, tabs).
    new FigureFitter();
    const store = new PanelStore();
    const revealCell = (notebook: string, cell: string): boolean => {
      const nb = tracker.find(w => w.id === notebook);
      const index = nb?.content.widgets.findIndex(c => c.model.id === cell) ?? -1;
      if (nb === undefined || index < 0) {
        return false;
      }
      app.shell.activateById(nb.id);
      nb.content.activeCellIndex = index;
      void nb.content.scrollToCell(nb.content.widgets[index], 'start');
      return true;
    };
    const panel = new AscendCodePanel(store, editorServices, revealCell);
    app.shell.add(panel, 'right', { rank: 650 });
    restorer?.add(panel, panel.id);
    app.commands.addCommand(OPEN_COMMAND, {
      label: 'Show the Ascend C panel',
      execute: () => app.shell.activateById(panel.id)
    });

    let revealed = false;
    const link = new KernelLink(store, () => {
      // The first code of a page session opens the panel; after that the user decides.
      if (!revealed) {
        revealed = true;
        if (!panel.isVisible) {
          revealPanel(app, panel, labShell);
        }
      }
    });
    const follow = (nb: NotebookPanel | null) =>
      panel.follow(nb?.id ?? null, nb?.title.label ?? '');
    tracker.forEach(nb => link.watch(nb));
    tracker.widgetAdded.connect((_, nb) => link.watch(nb));
    tracker.currentChanged.connect((_, nb) => follow(nb));
    follow(tracker.currentWidget);
  }
};

export default plugin;
