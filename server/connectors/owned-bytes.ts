import { MessageChannel } from "node:worker_threads";

/**
 * A closed port: a message posted on it goes nowhere, and the ArrayBuffers it lists for transfer
 * are detached here and their memory freed on the spot (measured: 25 x 1 MB posted, 25 MB less
 * in `process.memoryUsage().arrayBuffers` before the next line ran).
 */
const sink = new MessageChannel().port1;
sink.close();

/**
 * Gives a file's bytes back now rather than at V8's next full collection. A buffer that lived
 * through a file's read and parse has been promoted to the old generation, and V8 frees a dead
 * one there only at a full collection, which it starts once ~64 MB of them have piled up: a job
 * reading thousands of files kept 30-70 MB of finished files' bytes on its thread, and only a
 * long job reached that (docs/decisions/0196-bytes-freed-once-parsed.md). Handing the buffer to V8 as garbage
 * (dropping it, or a transfer to a new unreferenced one) waits for a collection either way; a
 * transfer to the closed port frees it at once. The caller's view is left empty. Only a view
 * spanning its whole ArrayBuffer is released (one made for this file alone: nothing else can be
 * looking at that memory); anything else (a view of a bigger read) is left to the collector.
 */
export function releaseBytes(bytes: Uint8Array): void {
  if (bytes.byteLength === 0 || !spansItsBuffer(bytes)) return;
  try {
    sink.postMessage(null, [bytes.buffer as ArrayBuffer]);
  } catch {
    // Not transferable: the collector frees it in its own time, as before.
  }
}

/**
 * The chunks of a read as one buffer of the file's own (an ArrayBuffer of exactly its size, never
 * Node's shared pool), so it can be moved to a parser thread or released once parsed. The
 * chunks themselves (views of network frames or disk reads) are dropped at once, before they
 * could be promoted.
 */
export function ownedCopy(chunks: Uint8Array[], total: number): Buffer {
  const out = Buffer.allocUnsafeSlow(total);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

/** Whether a view covers the whole of its ArrayBuffer (and so is the only way to that memory its maker handed out). */
export function spansItsBuffer(bytes: Uint8Array): boolean {
  return bytes.buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
}
