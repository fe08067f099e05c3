import type { ChunkLocation } from "../../search/search-index";
import type { TextSegment } from "./parse-types";

export interface Chunk extends ChunkLocation {
  chunkIndex: number;
  text: string;
}

/** A chunk and where its text starts in the normalised text pushed so far. */
interface PlacedChunk {
  chunk: Chunk;
  start: number;
}

export interface ChunkOptions {
  /** Longest chunk, in UTF-16 code units. Default 1000. */
  size?: number;
  /** Roughly how much of the end of one chunk the next one repeats. Default 150. */
  overlap?: number;
}

/**
 * Collapses runs of spaces and tabs to one space, keeps single line breaks, and turns any run of
 * blank lines into one paragraph break ("\n\n").
 */
export function normaliseWhitespace(text: string): string {
  return collapseWhitespace(text).trim();
}

/**
 * normaliseWhitespace without the trim: each whitespace run becomes " ", "\n" or "\n\n".
 * The patterns match only what changes (a lone space or line break is left alone): replacing
 * every space of a text by itself made this three quarters of the chunker's time.
 */
function collapseWhitespace(text: string): string {
  const unixBreaks = text.includes("\r") ? text.replace(/\r\n?/g, "\n") : text;
  return unixBreaks
    .replace(/[^\S\n ][^\S\n]*| [^\S\n]+/g, " ")
    .replace(/ \n ?|\n /g, "\n")
    .replace(/\n{3,}/g, "\n\n");
}

const SENTENCE_END = /[.!?…。！？]["'”’)\]]*(?=\s)|[。！？]/g;
/** A held-back whitespace run longer than this is collapsed, so a file of blanks cannot grow it. */
const MAX_HELD_WHITESPACE = 64;

/**
 * Splits text into overlapping chunks for the search index. Each chunk is at most `size` long;
 * breaks fall, by preference, at a paragraph break, then a sentence end, then between words, and
 * only mid-word when a single "word" is longer than the chunk. The next chunk starts at a word
 * boundary about `overlap` characters before the previous break. Deterministic.
 */
export function chunkText(text: string, opts: ChunkOptions = {}): Chunk[] {
  const chunker = new TextChunker(opts);
  return [...chunker.push(text), ...chunker.end()];
}

/**
 * chunkText over a paged document's parts, in order. Pages of text (a PDF's text layer) run on
 * into each other, as the text does: consecutive pages are cut as one text (a paragraph break
 * between two, so the chunks are those of the joined text), and each chunk keeps the page its
 * text starts on (a passage over two pages gives the first). A scanned page (read by OCR) is cut
 * on its own, as slides and sheets are: a chunk never mixes two of them, so every word of a
 * scan is found on its own page (docs/decisions/0493-scanned-pages-stand-alone.md). Chunk numbers run on.
 */
export function chunkSegments(segments: TextSegment[], opts: ChunkOptions = {}): Chunk[] {
  const parts = segments.map((segment) => ({ segment, text: normaliseWhitespace(segment.text) })).filter((part) => part.text.length > 0);
  const runsOn = (segment: TextSegment) => !segment.scanned && (segment.location === null || segment.location.startsWith("page "));
  const groups: Array<typeof parts> = [];
  for (const part of parts) {
    const last = groups.at(-1);
    if (last && runsOn(last[0].segment) && runsOn(part.segment)) last.push(part);
    else groups.push([part]);
  }
  const chunks: Chunk[] = [];
  for (const group of groups) {
    for (const chunk of chunkGroup(group, opts)) chunks.push({ ...chunk, chunkIndex: chunks.length });
  }
  return chunks;
}

/** One run of parts cut as one text, each chunk with the place of the part it starts in. */
function chunkGroup(parts: Array<{ segment: TextSegment; text: string }>, opts: ChunkOptions): Chunk[] {
  const starts: number[] = [];
  let length = 0;
  for (const part of parts) {
    starts.push(length === 0 ? 0 : length + 2);
    length += (length === 0 ? 0 : 2) + part.text.length;
  }
  const chunker = new TextChunker(opts);
  const placed = [...chunker.place(parts.map((part) => part.text).join("\n\n")), ...chunker.placeEnd()];
  let part = 0;
  return placed.map(({ chunk, start }) => {
    while (part + 1 < starts.length && starts[part + 1] <= start) part++;
    const { page, location, scanned } = parts[part].segment;
    return { ...chunk, page, location, scanned };
  });
}

/**
 * chunkText over text that arrives in pieces (a file streamed from its source): push() each
 * piece as it comes, then end(). The chunks are the same as chunkText of the whole text,
 * wherever the pieces were cut; only about one chunk's worth of text is held at a time.
 */
export class TextChunker {
  private readonly size: number;
  private readonly overlap: number;
  /** Normalised text from the start of the next chunk on. */
  private buffer = "";
  /** The whitespace at the end of what was pushed: it may go on in the next piece, or be the end (trimmed). */
  private heldWhitespace = "";
  private emittedText = false;
  private nextIndex = 0;
  /** Normalised characters cut off the buffer's front so far: where the buffer starts in the whole text. */
  private consumed = 0;

  constructor(opts: ChunkOptions = {}) {
    this.size = Math.max(20, Math.floor(opts.size ?? 1000));
    this.overlap = Math.min(Math.max(0, Math.floor(opts.overlap ?? 150)), Math.floor(this.size / 3));
  }

  /** The chunks this piece completes (possibly none). */
  push(piece: string): Chunk[] {
    return this.place(piece).map((placed) => placed.chunk);
  }

  /** push(), with where each chunk starts in the normalised text. */
  place(piece: string): PlacedChunk[] {
    const text = this.heldWhitespace + piece;
    const lastWord = lastNonWhitespace(text);
    if (lastWord < 0) {
      this.heldWhitespace = text.length > MAX_HELD_WHITESPACE ? compactWhitespace(text) : text;
      return [];
    }
    // Every whitespace run up to the last word is complete, so collapsing it here gives what
    // collapsing the whole text would; the run after it waits for the next piece.
    this.heldWhitespace = text.slice(lastWord + 1);
    let normalised = collapseWhitespace(text.slice(0, lastWord + 1));
    if (!this.emittedText) normalised = normalised.trimStart();
    this.emittedText = true;
    this.buffer += normalised;
    return this.cut(false);
  }

  /** Characters held between calls; for tests (it stays near one chunk's size whatever the text's). */
  get held(): number {
    return this.buffer.length + this.heldWhitespace.length;
  }

  /** The last chunks; trailing whitespace is dropped, as normaliseWhitespace trims it. */
  end(): Chunk[] {
    return this.placeEnd().map((placed) => placed.chunk);
  }

  /** end(), with where each chunk starts. */
  placeEnd(): PlacedChunk[] {
    this.heldWhitespace = "";
    return this.cut(true);
  }

  /**
   * Takes every chunk whose end is decided: a break and the next start look at most one
   * character past the chunk's size, and the buffer always ends in a word (trailing whitespace
   * is held back), so more than `size` characters decide a chunk as the whole text would.
   */
  private cut(final: boolean): PlacedChunk[] {
    const chunks: PlacedChunk[] = [];
    const source = this.buffer;
    let start = 0;
    while (start < source.length) {
      const remaining = source.length - start;
      if (final && remaining <= this.size) {
        this.emit(chunks, source.slice(start), start);
        start = source.length;
        break;
      }
      if (!final && remaining <= this.size) break;
      const end = breakPoint(source, start, this.size, this.overlap);
      this.emit(chunks, source.slice(start, end), start);
      start = nextStart(source, start, end, this.overlap);
    }
    this.buffer = source.slice(start);
    this.consumed += start;
    return chunks;
  }

  private emit(chunks: PlacedChunk[], text: string, from: number): void {
    const trimmed = text.trim();
    const leading = text.length - text.trimStart().length;
    if (trimmed.length > 0) chunks.push({ chunk: { chunkIndex: this.nextIndex++, text: trimmed }, start: this.consumed + from + leading });
  }
}

function lastNonWhitespace(text: string): number {
  for (let i = text.length - 1; i >= 0; i--) if (!/\s/.test(text[i])) return i;
  return -1;
}

/**
 * A whitespace run with the same effect as `run` when more text follows: its line breaks
 * counted up to two, and a trailing "\r" kept raw, since an "\n" next would join it as one break.
 */
function compactWhitespace(run: string): string {
  const cr = run.endsWith("\r");
  const body = cr ? run.slice(0, -1) : run;
  const breaks = (body.replace(/\r\n?/g, "\n").match(/\n/g) ?? []).length;
  return (breaks === 0 ? " " : breaks === 1 ? "\n" : "\n\n") + (cr ? "\r" : "");
}

/** Where the chunk starting at `start` ends (exclusive). Always > start + overlap, so chunking advances. */
function breakPoint(source: string, start: number, size: number, overlap: number): number {
  const limit = start + size;
  const window = source.slice(start, limit + 1); // +1: a break right after the limit still counts
  const half = Math.floor(size / 2);

  const paragraph = window.lastIndexOf("\n\n");
  if (paragraph >= half) return start + paragraph;

  let sentence = -1;
  for (const match of window.matchAll(SENTENCE_END)) {
    const after = (match.index ?? 0) + match[0].length;
    if (after <= size) sentence = after;
  }
  if (sentence >= half) return start + sentence;

  for (let i = Math.min(size, window.length - 1); i > overlap; i--) {
    if (/\s/.test(window[i])) return start + i;
  }
  // One unbroken run longer than the chunk: cut it, but never between the halves of a surrogate pair.
  const cut = limit;
  return isLowSurrogate(source.charCodeAt(cut)) ? cut - 1 : cut;
}

/** The start of the next chunk: the first word start at or after end - overlap, and after start. */
function nextStart(source: string, start: number, end: number, overlap: number): number {
  if (overlap > 0) {
    const from = Math.max(start + 1, end - overlap);
    for (let i = from; i < end; i++) {
      if (/\s/.test(source[i - 1]) && !/\s/.test(source[i])) return i;
    }
  }
  let i = end;
  while (i < source.length && /\s/.test(source[i])) i++;
  return i;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
