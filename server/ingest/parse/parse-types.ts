import type { ChunkInput } from "../../search/search-index";

/** Where a passage of a paged document is (search-index.ts ChunkLocation), with its text: what the chunker cuts page by page. */
export interface TextSegment {
  text: string;
  /** 1-based page (PDF page, TIFF frame) or slide; null for a sheet or an unpaged picture. */
  page: number | null;
  /** "page 7", "slide 3", "sheet Budget"; null where the document has no parts. */
  location: string | null;
  /** Read by OCR from a picture. */
  scanned: boolean;
}

/** What parsing one file yields. Runs in worker threads (see parser-pool.ts). */
export type ParseResult = (
  | { kind: "indexed"; title: string; chunks: ChunkInput[] }
  /** A file type we do not index, or a file with no text: counted as skipped, not failed. */
  | { kind: "skipped"; reason: string }
) & { timing?: ParseTiming };

/** Seconds the parser thread spent on one file: extracting its text (OCR apart), OCR, then cutting it into chunks (the job's stage times). */
export interface ParseTiming {
  parseSeconds: number;
  chunkSeconds: number;
  /** Rendering pages and reading pictures; 0 for a file without any. */
  ocrSeconds?: number;
}

/** A file that could not be parsed (corrupt, parser crash, timeout, out of memory): counted as failed. */
export class ParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ParseError";
  }
}
