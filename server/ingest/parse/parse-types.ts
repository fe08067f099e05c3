/** What parsing one file yields. Runs in worker threads (see parser-pool.ts). */
export type ParseResult = (
  | { kind: "indexed"; title: string; chunks: Array<{ chunkIndex: number; text: string }> }
  /** A file type we do not index, or a file with no text: counted as skipped, not failed. */
  | { kind: "skipped"; reason: string }
) & { timing?: ParseTiming };

/** Seconds the parser thread spent on one file: extracting its text, then cutting it into chunks (the job's stage times). */
export interface ParseTiming {
  parseSeconds: number;
  chunkSeconds: number;
}

/** A file that could not be parsed (corrupt, parser crash, timeout, out of memory): counted as failed. */
export class ParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ParseError";
  }
}
