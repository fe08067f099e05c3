import os from "node:os";

/**
 * The parser pool's OCR allowance, shared by all its threads through one SharedArrayBuffer
 * (docs/decisions/0494-pages-of-a-file-ocred-at-once.md, 0495-tesseract-js-memory-bounded.md):
 * - `native`: how many `tesseract` processes the whole pool may run at once (the cores its
 *   threads may use). Each thread writes how many it runs into a cell of its own, so a thread
 *   the pool replaces (hung, crashed) stops counting when the pool clears its cell.
 * - the tesseract.js worker: at most one in the process at a time; the cell holds the owner's
 *   cell number + 1 (0: none), so the pool can give it back for a thread it ended.
 */
export interface OcrAllowanceData {
  buffer: SharedArrayBuffer;
  /** This thread's cell (the pool numbers its threads' cells from 0). */
  cell: number;
  native: number;
}

/** Cells for threads; the last one is the tesseract.js worker's owner. */
export const ALLOWANCE_CELLS = 33;
const WASM_OWNER = ALLOWANCE_CELLS - 1;

export function allowanceBuffer(): SharedArrayBuffer {
  return new SharedArrayBuffer(ALLOWANCE_CELLS * Int32Array.BYTES_PER_ELEMENT);
}

/** Outside a pool (tests, a parse on the calling thread): a pool of its own, one cell, the machine's cores. */
let allowance: { cells: Int32Array; cell: number; native: number } = { cells: new Int32Array(allowanceBuffer()), cell: 0, native: os.availableParallelism() };

export function configureAllowance(data: OcrAllowanceData): void {
  allowance = { cells: new Int32Array(data.buffer), cell: data.cell, native: Math.max(1, data.native) };
}

/** How many `tesseract` processes the pool runs now. */
export function nativeRunning(): number {
  let sum = 0;
  for (let i = 0; i < WASM_OWNER; i++) sum += Atomics.load(allowance.cells, i);
  return sum;
}

/**
 * Takes a place for one more `tesseract` process of this thread. A thread's first always has
 * one (as when pages were read one after another: a thread never waits on another's scans);
 * more only while the pool runs fewer than its allowance. Two threads asking at the same
 * instant may both get the last place: at most one process over, for one page.
 */
export function takeNative(first: boolean): boolean {
  if (!first && nativeRunning() >= allowance.native) return false;
  Atomics.add(allowance.cells, allowance.cell, 1);
  return true;
}

export function giveBackNative(): void {
  Atomics.sub(allowance.cells, allowance.cell, 1);
}

/** Whether this thread holds the process's tesseract.js worker, taking it if no thread does. */
export function takeWasmWorker(): boolean {
  const me = allowance.cell + 1;
  const owner = Atomics.compareExchange(allowance.cells, WASM_OWNER, 0, me);
  return owner === 0 || owner === me;
}

/** Waits (without blocking the thread) until the tesseract.js worker may be free, at most `ms`. */
export async function wasmWorkerChange(ms: number): Promise<void> {
  const owner = Atomics.load(allowance.cells, WASM_OWNER);
  if (owner === 0) return;
  const waited = (Atomics as unknown as AtomicsWaitAsync).waitAsync(allowance.cells, WASM_OWNER, owner, ms);
  if (waited.async) await waited.value;
}

/** ES2024's Atomics.waitAsync (in Node since 16), which the project's TypeScript library does not declare. */
interface AtomicsWaitAsync {
  waitAsync(cells: Int32Array, index: number, value: number, timeoutMs: number): { async: false; value: string } | { async: true; value: Promise<string> };
}

/** Whether some thread of the pool holds the tesseract.js worker now. */
export function wasmWorkerHeld(): boolean {
  return Atomics.load(allowance.cells, WASM_OWNER) !== 0;
}

export function giveBackWasmWorker(): void {
  if (Atomics.compareExchange(allowance.cells, WASM_OWNER, allowance.cell + 1, 0) === allowance.cell + 1) Atomics.notify(allowance.cells, WASM_OWNER);
}

/** The pool's side, once a thread is gone: what it counted stops counting. */
export function releaseThreadCell(buffer: SharedArrayBuffer, cell: number): void {
  const cells = new Int32Array(buffer);
  Atomics.store(cells, cell, 0);
  if (Atomics.compareExchange(cells, WASM_OWNER, cell + 1, 0) === cell + 1) Atomics.notify(cells, WASM_OWNER);
}
