import type { QueryRunner } from "typeorm";

/**
 * Chunk bodies' tsvectors built here, from what PostgreSQL's own `to_tsvector` made of each of
 * their words once, so the database no longer parses and stems every word of every chunk.
 *
 * Why: on a team server the database's CPU is what bounds ingestion, and computing the
 * tsvectors in the INSERT was most of it (docs/decisions.md, "PostgreSQL ingestion"). Text
 * repeats its words, so a cache of what each word became leaves the database a few hundred new
 * words per batch to analyse.
 *
 * How it stays exactly PostgreSQL's: the text is cut only at ASCII whitespace, which never
 * belongs to a token of PostgreSQL's parser (a no-break or ideographic space does: it is taken
 * into the word beside it), so each piece ("segment": a word, "e-mail,", "don't") is parsed alone
 * just as it is inside the text. For each segment the database answers its lexemes with their
 * positions under the stemming configuration, how many positions it takes (a hyphenated word
 * takes three: the compound and its parts), and its lexemes under the exact configuration. A
 * body's tsvector is its segments' lexemes at their positions offset by the positions before
 * them, kept as `to_tsvector` keeps them: positions clamped at 16,383, at most 255 distinct ones
 * per lexeme, the first ones. Tests compare the result with `to_tsvector` on awkward text.
 *
 * This runs on the API's thread of a team server for every word ingested, so it is written not
 * to allocate per word: segments are found in the cache by a hash of the text's characters
 * (no substring made for a known one), and the literals are written as UTF-8 bytes straight into
 * the text of the statement's array parameter.
 */

/** PostgreSQL's MAXENTRYPOS - 1: positions past it are stored as it. */
const MAX_POSITION = 16_383;
/** PostgreSQL's MAXNUMPOS - 1: a lexeme keeps at most this many positions, its first ones. */
const MAX_POSITIONS_PER_LEXEME = 255;
/**
 * Segments remembered per process (all forgotten when full): a real corpus of 5,500
 * documents has ~150,000 distinct ones; an entry costs ~150 bytes of the API thread's heap.
 */
const MAX_SEGMENTS = 100_000;
/** A word no text is expected to hold, put after a segment to read how many positions the segment took. */
const SENTINEL = "zqsluicesentinelqz";
/** New segments analysed per statement. */
const SEGMENTS_PER_QUERY = 5_000;

/** The tsvectors of a list of bodies, each as the text of a PostgreSQL `text[]` of tsvector literals. */
export interface BodyVectorArrays {
  stemmed: string;
  exact: string;
}

/** ASCII whitespace: where segments end. */
function isBlank(code: number): boolean {
  return code === 32 || (code >= 9 && code <= 13);
}

export class PostgresLexemes {
  // The segments: their text, what they hold (stemmed lexeme ids and positions, in pairs; exact
  // lexeme ids) and the positions they take; found by an open-addressing table of their hashes.
  private segmentText: string[] = [];
  private segmentStemmed: number[][] = [];
  private segmentExact: number[][] = [];
  private segmentSpan: number[] = [];
  private slots = new Int32Array(1 << 18);
  // The lexemes: each one's bytes as written inside the array literal, and ids by lexeme.
  private lexemeBytes: Uint8Array[] = [];
  private lexemeIds = new Map<string, number>();
  // Per lexeme id, for the body being written: the body it was last seen in (a stamp, so nothing
  // is cleared between bodies), its first and last occurrence.
  private seenIn = new Int32Array(1024);
  private exactSeenIn = new Int32Array(1024);
  private firstOccurrence = new Int32Array(1024);
  private lastOccurrence = new Int32Array(1024);
  private stamp = 0;
  // A body's occurrences: position and the next occurrence of the same lexeme.
  private occurrencePosition = new Int32Array(4096);
  private occurrenceNext = new Int32Array(4096);
  private out = Buffer.allocUnsafe(1 << 20);
  private at = 0;

  constructor(
    private readonly stemConfig: string,
    private readonly exactConfig: string,
    private readonly maxSegments = MAX_SEGMENTS,
  ) {}

  /**
   * The bodies' tsvectors, asking the database (on `q`, inside the caller's transaction) only
   * for segments not seen before. `bodies` are the words as the INSERT would have given them to
   * `to_tsvector` (separators already spaces).
   */
  async vectors(q: QueryRunner, bodies: string[]): Promise<BodyVectorArrays> {
    let found = this.find(bodies);
    if (found.unknown.size > 0) {
      // A full cache starts afresh (lexeme ids with it): simpler than ageing entries, and a
      // corpus's common words come back with the next batch.
      if (this.segmentText.length + found.unknown.size > this.maxSegments) {
        this.clear();
        found = this.find(bodies);
      }
      const fresh = [...found.unknown];
      for (let start = 0; start < fresh.length; start += SEGMENTS_PER_QUERY) await this.analyse(q, fresh.slice(start, start + SEGMENTS_PER_QUERY));
      found = this.find(bodies);
    }
    return this.write(found.segments);
  }

  /** Each body's segments as indexes into the cache, and the segments not in it (-1 in the lists). */
  private find(bodies: string[]): { segments: number[][]; unknown: Set<string> } {
    const unknown = new Set<string>();
    const segments = bodies.map((body) => {
      const list: number[] = [];
      let i = 0;
      while (i < body.length) {
        while (i < body.length && isBlank(body.charCodeAt(i))) i++;
        if (i >= body.length) break;
        const start = i;
        let hash = 0x811c9dc5;
        while (i < body.length) {
          const code = body.charCodeAt(i);
          if (isBlank(code)) break;
          hash = Math.imul(hash ^ code, 16777619);
          i++;
        }
        const index = this.lookup(body, start, i, hash);
        if (index < 0) unknown.add(body.slice(start, i));
        list.push(index);
      }
      return list;
    });
    return { segments, unknown };
  }

  private lookup(text: string, start: number, end: number, hash: number): number {
    const mask = this.slots.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const entry = this.slots[slot];
      if (entry === 0) return -1;
      const candidate = this.segmentText[entry - 1];
      if (candidate.length === end - start && text.startsWith(candidate, start)) return entry - 1;
    }
  }

  private async analyse(q: QueryRunner, segments: string[]): Promise<void> {
    const rows = (await q.query(
      `SELECT to_tsvector('${this.stemConfig}', s || ' ${SENTINEL}')::text AS stemmed, to_tsvector('${this.exactConfig}', s)::text AS exact
       FROM unnest($1::text[]) WITH ORDINALITY AS x(s, n) ORDER BY n`,
      [segments],
    )) as Array<{ stemmed: string; exact: string }>;
    rows.forEach((row, i) => {
      const lexemes = parseTsvector(row.stemmed);
      // The sentinel's first position follows the segment's last (a segment holding the
      // sentinel word itself has it at lower positions as well).
      let span = 0;
      for (const [lexeme, positions] of lexemes) if (lexeme === SENTINEL) span = Math.max(...positions) - 1;
      const stemmed: number[] = [];
      for (const [lexeme, positions] of lexemes) {
        for (const p of positions) if (lexeme !== SENTINEL || p <= span) stemmed.push(this.idOf(lexeme), p);
      }
      const exact = parseTsvector(row.exact).map(([lexeme]) => this.idOf(lexeme));
      this.add(segments[i], stemmed, exact, span);
    });
  }

  private add(text: string, stemmed: number[], exact: number[], span: number): void {
    if ((this.segmentText.length + 1) * 2 > this.slots.length) this.rehash(this.slots.length * 2);
    // A flat copy of the text: a piece sliced from a chunk would keep the whole chunk alive.
    this.segmentText.push(text.length < 13 ? text : Buffer.from(text, "utf8").toString("utf8"));
    this.segmentStemmed.push(stemmed);
    this.segmentExact.push(exact);
    this.segmentSpan.push(span);
    this.place(this.segmentText.length - 1);
  }

  private place(index: number): void {
    const text = this.segmentText[index];
    let hash = 0x811c9dc5;
    for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 16777619);
    const mask = this.slots.length - 1;
    let slot = hash & mask;
    while (this.slots[slot] !== 0) slot = (slot + 1) & mask;
    this.slots[slot] = index + 1;
  }

  private rehash(size: number): void {
    this.slots = new Int32Array(size);
    for (let i = 0; i < this.segmentText.length; i++) this.place(i);
  }

  private idOf(lexeme: string): number {
    let id = this.lexemeIds.get(lexeme);
    if (id === undefined) {
      id = this.lexemeBytes.length;
      this.lexemeBytes.push(new Uint8Array(Buffer.from(arrayElementText(tsvectorLexeme(lexeme)), "utf8")));
      this.lexemeIds.set(lexeme, id);
      if (id >= this.seenIn.length) {
        const size = this.seenIn.length * 2;
        this.seenIn = grown(this.seenIn, size);
        this.exactSeenIn = grown(this.exactSeenIn, size);
        this.firstOccurrence = grown(this.firstOccurrence, size);
        this.lastOccurrence = grown(this.lastOccurrence, size);
      }
    }
    return id;
  }

  private clear(): void {
    this.segmentText = [];
    this.segmentStemmed = [];
    this.segmentExact = [];
    this.segmentSpan = [];
    this.slots = new Int32Array(1 << 18);
    this.lexemeBytes = [];
    this.lexemeIds = new Map();
    this.seenIn.fill(0);
    this.exactSeenIn.fill(0);
  }

  /** The bodies' two array literals, every segment known. */
  private write(bodies: number[][]): BodyVectorArrays {
    this.at = 0;
    this.byte(0x7b); // {
    bodies.forEach((segments, i) => {
      if (i > 0) this.byte(0x2c); // ,
      this.writeStemmed(segments);
    });
    this.byte(0x7d); // }
    const stemmed = this.out.toString("utf8", 0, this.at);
    this.at = 0;
    this.byte(0x7b);
    bodies.forEach((segments, i) => {
      if (i > 0) this.byte(0x2c);
      this.writeExact(segments);
    });
    this.byte(0x7d);
    return { stemmed, exact: this.out.toString("utf8", 0, this.at) };
  }

  /** One body's stemmed tsvector as a quoted array element: `"'lexeme':1,4 'other':2"`. */
  private writeStemmed(segments: number[]): void {
    const stamp = ++this.stamp;
    const order: number[] = [];
    let occurrences = 0;
    let offset = 0;
    for (let s = 0; s < segments.length; s++) {
      const index = segments[s];
      const pairs = this.segmentStemmed[index];
      if (occurrences + pairs.length > this.occurrencePosition.length) {
        const size = Math.max(this.occurrencePosition.length * 2, occurrences + pairs.length);
        this.occurrencePosition = grown(this.occurrencePosition, size);
        this.occurrenceNext = grown(this.occurrenceNext, size);
      }
      for (let p = 0; p < pairs.length; p += 2) {
        const id = pairs[p];
        const occurrence = occurrences++;
        this.occurrencePosition[occurrence] = Math.min(offset + pairs[p + 1], MAX_POSITION);
        this.occurrenceNext[occurrence] = -1;
        if (this.seenIn[id] !== stamp) {
          this.seenIn[id] = stamp;
          this.firstOccurrence[id] = occurrence;
          order.push(id);
        } else {
          this.occurrenceNext[this.lastOccurrence[id]] = occurrence;
        }
        this.lastOccurrence[id] = occurrence;
      }
      offset += this.segmentSpan[index];
    }
    this.byte(0x22); // "
    for (let k = 0; k < order.length; k++) {
      const id = order[k];
      if (k > 0) this.byte(0x20);
      this.bytes(this.lexemeBytes[id]);
      this.byte(0x3a); // :
      // Positions ascend within a lexeme (segment by segment, each segment's in order); equal
      // ones (clamped at the end) are kept once, and at most MAX_POSITIONS_PER_LEXEME.
      let kept = 0;
      let last = -1;
      for (let o = this.firstOccurrence[id]; o !== -1 && kept < MAX_POSITIONS_PER_LEXEME; o = this.occurrenceNext[o]) {
        const position = this.occurrencePosition[o];
        if (position === last) continue;
        if (kept > 0) this.byte(0x2c);
        this.number(position);
        last = position;
        kept++;
      }
    }
    this.byte(0x22);
  }

  /** One body's exact lexemes as a quoted array element: `"'lexeme' 'other'"`. */
  private writeExact(segments: number[]): void {
    const stamp = ++this.stamp;
    let first = true;
    this.byte(0x22);
    for (let s = 0; s < segments.length; s++) {
      const ids = this.segmentExact[segments[s]];
      for (let e = 0; e < ids.length; e++) {
        const id = ids[e];
        if (this.exactSeenIn[id] === stamp) continue;
        this.exactSeenIn[id] = stamp;
        if (!first) this.byte(0x20);
        first = false;
        this.bytes(this.lexemeBytes[id]);
      }
    }
    this.byte(0x22);
  }

  private room(n: number): void {
    if (this.at + n <= this.out.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.out.length * 2, this.at + n));
    this.out.copy(next, 0, 0, this.at);
    this.out = next;
  }

  private byte(b: number): void {
    this.room(1);
    this.out[this.at++] = b;
  }

  private bytes(b: Uint8Array): void {
    const n = b.length;
    this.room(n);
    const out = this.out;
    let at = this.at;
    for (let i = 0; i < n; i++) out[at++] = b[i];
    this.at = at;
  }

  private number(n: number): void {
    this.room(5);
    if (n >= 10000) this.out[this.at++] = 0x30 + Math.floor(n / 10000);
    if (n >= 1000) this.out[this.at++] = 0x30 + (Math.floor(n / 1000) % 10);
    if (n >= 100) this.out[this.at++] = 0x30 + (Math.floor(n / 100) % 10);
    if (n >= 10) this.out[this.at++] = 0x30 + (Math.floor(n / 10) % 10);
    this.out[this.at++] = 0x30 + (n % 10);
  }
}

function grown(old: Int32Array, size: number): Int32Array<ArrayBuffer> {
  const next = new Int32Array(size);
  next.set(old);
  return next;
}

/** A lexeme as tsvector input: in single quotes, with quotes and backslashes doubled. */
function tsvectorLexeme(lexeme: string): string {
  return `'${lexeme.replace(/['\\]/g, "$&$&")}'`;
}

/** Text as it goes inside a double-quoted element of an array literal: double quotes and backslashes escaped. */
function arrayElementText(text: string): string {
  return text.replace(/["\\]/g, "\\$&");
}

/** tsvector output (`'word':1,3 'other':2`, weights never set here) as lexemes with their positions. */
export function parseTsvector(text: string): Array<[string, number[]]> {
  const out: Array<[string, number[]]> = [];
  let i = 0;
  while (i < text.length) {
    if (text[i] === " ") {
      i++;
      continue;
    }
    // tsvector_out always quotes, doubling ' and \ inside.
    let lexeme = "";
    i++;
    for (;;) {
      const c = text[i];
      if ((c === "'" || c === "\\") && text[i + 1] === c) {
        lexeme += c;
        i += 2;
      } else if (c === "'") {
        i++;
        break;
      } else {
        lexeme += c;
        i++;
      }
    }
    const positions: number[] = [];
    if (text[i] === ":") {
      i++;
      let n = 0;
      for (; i < text.length && text[i] !== " "; i++) {
        const c = text.charCodeAt(i);
        if (c >= 48 && c <= 57) n = n * 10 + (c - 48);
        else if (text[i] === ",") {
          positions.push(n);
          n = 0;
        }
      }
      positions.push(n);
    }
    out.push([lexeme, positions]);
  }
  return out;
}
