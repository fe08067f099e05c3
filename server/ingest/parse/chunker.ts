export interface Chunk {
  chunkIndex: number;
  text: string;
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
  return text
    .replace(/\r\n?/g, "\n")
    .replace(/[^\S\n]+/g, " ")
    .replace(/ ?\n ?/g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

const SENTENCE_END = /[.!?…。！？]["'”’)\]]*(?=\s)|[。！？]/g;

/**
 * Splits text into overlapping chunks for the search index. Each chunk is at most `size` long;
 * breaks fall, by preference, at a paragraph break, then a sentence end, then between words, and
 * only mid-word when a single "word" is longer than the chunk. The next chunk starts at a word
 * boundary about `overlap` characters before the previous break. Deterministic.
 */
export function chunkText(text: string, opts: ChunkOptions = {}): Chunk[] {
  const size = Math.max(20, Math.floor(opts.size ?? 1000));
  const overlap = Math.min(Math.max(0, Math.floor(opts.overlap ?? 150)), Math.floor(size / 3));
  const source = normaliseWhitespace(text);
  const chunks: Chunk[] = [];
  let start = 0;
  while (start < source.length) {
    if (source.length - start <= size) {
      chunks.push({ chunkIndex: chunks.length, text: source.slice(start).trim() });
      break;
    }
    const end = breakPoint(source, start, size, overlap);
    chunks.push({ chunkIndex: chunks.length, text: source.slice(start, end).trim() });
    start = nextStart(source, start, end, overlap);
  }
  return chunks.filter((c) => c.text.length > 0).map((c, i) => ({ chunkIndex: i, text: c.text }));
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
