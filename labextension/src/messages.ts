/**
 * The messages between the kernel and the "Ascend C" panel. Mirrors
 * kernelstudio/notebook/messages.py: change both together and bump VERSION.
 */

export const VERSION = 2;
/** Comm target the front end registers; the kernel pushes messages to it. */
export const PUSH_TARGET = 'kernelstudio.codegen';
/** Comm target the kernel registers; the front end asks it to replay. */
export const SYNC_TARGET = 'kernelstudio.sync';
/** Messages larger than this (JSON characters) are dropped unread. */
export const MAX_MESSAGE_CHARS = 2_000_000;
/** A program of about 170 kernels (3 files each); MAX_MESSAGE_CHARS is the real guard. */
export const MAX_FILES = 512;
export const MAX_NAME_CHARS = 200;
/** The error line of a stale message is at most this long. */
export const MAX_ERROR_CHARS = 300;

/** The generated code of one design after one rebuild. */
export interface CodeMessage {
  version: number;
  kind: 'code';
  design: string;
  cell: string;
  seq: number;
  target: string;
  kernels: string[];
  time_us: number;
  knobs: Record<string, string | number | boolean | null>;
  files: Record<string, string>;
  /** '' when the code is of the Studio's current setting; else the first line of the error that
   * keeps the Studio at this, its last valid setting. */
  error: string;
}

/** Drop a design from the panel (a `--no-panel` re-run). */
export interface WithdrawMessage {
  version: number;
  kind: 'withdraw';
  design: string;
  seq: number;
}

/** Front end -> kernel: send me the latest code of every design again. */
export interface SyncRequest {
  version: number;
  kind: 'sync';
}

export type PanelMessage = CodeMessage | WithdrawMessage;

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function isName(x: unknown): x is string {
  return typeof x === 'string' && x.length > 0 && x.length <= MAX_NAME_CHARS;
}

function isScalar(x: unknown): boolean {
  return (
    x === null ||
    typeof x === 'string' ||
    typeof x === 'boolean' ||
    (typeof x === 'number' && Number.isFinite(x))
  );
}

/**
 * Return the reason `data` is not a message the panel accepts, or null when
 * it is one. Nothing in a message is ever evaluated; this only checks shapes.
 */
export function whyInvalid(data: unknown): string | null {
  if (!isRecord(data)) {
    return 'not an object';
  }
  let size: number;
  try {
    size = JSON.stringify(data).length;
  } catch {
    return 'not serialisable';
  }
  if (size > MAX_MESSAGE_CHARS) {
    return `${size} characters, more than the ${MAX_MESSAGE_CHARS} allowed`;
  }
  if (data.version !== VERSION) {
    return `version ${String(data.version)}, expected ${VERSION}`;
  }
  if (!isName(data.design)) {
    return 'design is not a non-empty string';
  }
  if (typeof data.seq !== 'number' || !Number.isInteger(data.seq) || data.seq < 0) {
    return 'seq is not a non-negative integer';
  }
  if (data.kind === 'withdraw') {
    return null;
  }
  if (data.kind !== 'code') {
    return `unknown kind ${JSON.stringify(data.kind)}`;
  }
  if (typeof data.cell !== 'string' || !isName(data.target)) {
    return 'cell or target is not a string';
  }
  if (!Array.isArray(data.kernels) || data.kernels.length === 0 || !data.kernels.every(isName)) {
    return 'kernels is not a list of names';
  }
  if (typeof data.time_us !== 'number' || !Number.isFinite(data.time_us) || data.time_us < 0) {
    return 'time_us is not a non-negative number';
  }
  if (!isRecord(data.knobs) || !Object.values(data.knobs).every(isScalar)) {
    return 'knobs is not a mapping of names to plain values';
  }
  if (!isRecord(data.files)) {
    return 'files is not a mapping';
  }
  const names = Object.keys(data.files);
  if (names.length === 0 || names.length > MAX_FILES) {
    return `${names.length} files (expected 1 to ${MAX_FILES})`;
  }
  for (const name of names) {
    if (!isName(name) || typeof data.files[name] !== 'string') {
      return `file ${JSON.stringify(name).slice(0, 80)} is not path -> text`;
    }
  }
  const error = data.error;
  if (typeof error !== 'string' || error.length > MAX_ERROR_CHARS || error.includes('\n')) {
    return `error is not one line of at most ${MAX_ERROR_CHARS} characters`;
  }
  return null;
}

/** The message, or null after a console warning naming why it was dropped. */
export function parseMessage(data: unknown, origin: string): PanelMessage | null {
  const why = whyInvalid(data);
  if (why !== null) {
    console.warn(`kernelstudio: dropped a malformed message from ${origin}: ${why}`);
    return null;
  }
  return data as unknown as PanelMessage;
}
