import type { Readable } from "node:stream";
import type { RemoteEntry } from "../connectors/connector";
import type { ChunkInput, StagedDocument } from "../search/search-index";
import { TextChunker } from "./parse/chunker";
import { formatOf, isPlainText } from "./parse/file-types";
import { NotUtf8Error, TextStreamDecoder } from "./parse/text-decoder";

/**
 * Text files bigger than this are streamed into the index (read, decoded and chunked piece by
 * piece) instead of parsed whole in a worker: the size the parser pool stops batching files at.
 * Smaller ones keep the batched worker path, the fast one for many small files.
 */
export const STREAM_TEXT_ABOVE_BYTES = 4 * 1024 * 1024;
/** Chunks written to the index at once for a streamed file: about 1 MB of text. */
const CHUNKS_PER_WRITE = 1000;

/**
 * Whether a file is streamed: plain text (txt, md, csv, log) over the threshold (its title is then the file name). JSON and HTML
 * are parsed as a whole document, so they keep the worker path and its memory limit.
 */
export function isStreamed(file: RemoteEntry): boolean {
  return isPlainText(formatOf(file.name)) && file.size > STREAM_TEXT_ABOVE_BYTES;
}

export interface StreamTextOptions {
  read(): Promise<Readable>;
  /** A new staged document for the file (one per attempt). */
  stage(): Promise<StagedDocument>;
  /** Bytes of the file, from its start, whose chunks are now written. */
  onWritten(bytes: number): void;
  /** Throws to stop (the job was interrupted). */
  checkAbort(): void;
}

/**
 * Streams a text file into a staged document, the chunks the same as parsing it whole
 * would give: at most one batch of chunks is written while the next is read, so memory does
 * not grow with the file. A file that turns out not to be UTF-8 is read again as latin1, as
 * decodeText would read it. Resolves with the staged document (to commit) and its chunk
 * count; on any error the staged document is discarded first.
 */
export async function streamTextFile(opts: StreamTextOptions): Promise<{ staged: StagedDocument; chunks: number }> {
  try {
    return await streamOnce(opts, false);
  } catch (error) {
    if (!(error instanceof NotUtf8Error)) throw error;
    return streamOnce(opts, true);
  }
}

async function streamOnce(opts: StreamTextOptions, latin1: boolean): Promise<{ staged: StagedDocument; chunks: number }> {
  const decoder = new TextStreamDecoder(latin1);
  const chunker = new TextChunker();
  const staged = await opts.stage();
  let pending: ChunkInput[] = [];
  let chunks = 0;
  let bytes = 0;
  let writing: Promise<void> = Promise.resolve();
  const write = async () => {
    await writing;
    const batch = pending;
    const upTo = bytes;
    pending = [];
    chunks += batch.length;
    writing = staged.addChunks(batch).then(() => opts.onWritten(upTo));
    writing.catch(() => undefined); // awaited at the next write or the end; never unhandled meanwhile
  };
  try {
    const stream = await opts.read();
    try {
      for await (const piece of stream as AsyncIterable<Buffer>) {
        opts.checkAbort();
        bytes += piece.length;
        pending.push(...chunker.push(decoder.write(piece)));
        if (pending.length >= CHUNKS_PER_WRITE) await write();
      }
    } finally {
      stream.destroy();
    }
    pending.push(...chunker.push(decoder.end()), ...chunker.end());
    await write();
    await writing;
    return { staged, chunks };
  } catch (error) {
    await writing.catch(() => undefined);
    await staged.discard().catch(() => undefined);
    throw error;
  }
}
