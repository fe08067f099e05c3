import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import shipped from "./model-library.json";

import { libraryEntrySchema, type LibraryEntry } from "./library-entry";

export type { LibraryEntry } from "./library-entry";

/** A catalog file: `{models: [...]}` (what ships) or a bare array. */
const catalogFileSchema = z.union([
  z.object({ models: z.array(libraryEntrySchema).min(1).max(20_000) }).transform((file) => file.models),
  z.array(libraryEntrySchema).min(1).max(20_000),
]);

export function parseCatalog(raw: unknown): LibraryEntry[] {
  const result = catalogFileSchema.safeParse(raw);
  if (!result.success) throw new Error(`not a model catalog: ${result.error.issues[0]?.message ?? "invalid"}`);
  return result.data;
}

export function shippedCatalog(): LibraryEntry[] {
  return parseCatalog(shipped);
}

/** Precomputed per entry at load, so a search only compares short strings. */
interface Indexed {
  entry: LibraryEntry;
  name: string;
  /** The name without its punctuation: "qwen2.5-coder" -> "qwen25coder". */
  compact: string;
  /** Name parts and their letter stems: "qwen2.5-coder" -> qwen2.5, coder, qwen. */
  tokens: string[];
  descWords: string[];
  /** How many dash-separated parts the name has. */
  parts: number;
  popularity: number;
}

const NAME_SPLIT = /[-_:/\s]+/;

function nameTokens(name: string): string[] {
  const tokens = new Set<string>();
  for (const part of name.split(NAME_SPLIT)) {
    if (!part) continue;
    tokens.add(part);
    for (const piece of part.match(/[a-z]+|[0-9][0-9.]*/g) ?? []) if (piece.length >= 2 || /[0-9]/.test(piece)) tokens.add(piece);
  }
  return [...tokens];
}

function compactOf(text: string): string {
  return text.replace(/[^a-z0-9]/g, "");
}

/** Optimal-string-alignment (Damerau-Levenshtein with adjacent swaps) distance, giving up above `max`. */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  const width = b.length + 1;
  // Three rolling rows: two back for the swap case.
  let prev2 = new Int32Array(width);
  let prev = new Int32Array(width);
  let cur = new Int32Array(width);
  for (let j = 0; j < width; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    let rowMin = i;
    for (let j = 1; j < width; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      let d = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
      if (i > 1 && j > 1 && a.charCodeAt(i - 1) === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === b.charCodeAt(j - 1)) d = Math.min(d, prev2[j - 2] + 1);
      cur[j] = d;
      if (d < rowMin) rowMin = d;
    }
    if (rowMin > max) return max + 1;
    const spare = prev2;
    prev2 = prev;
    prev = cur;
    cur = spare;
  }
  return prev[b.length];
}

/** Typos allowed for a query word of this length: none below 4 letters, one up to 7, then two. */
function allowedTypos(length: number): number {
  if (length < 4) return 0;
  return length <= 7 ? 1 : 2;
}

/** How well one query word matches one name token, 0..1. */
function wordScore(word: string, token: string): number {
  if (word === token) return 1;
  if (token.startsWith(word)) return 0.9 - Math.min(0.2, (token.length - word.length) * 0.02);
  if (word.length >= 3 && token.includes(word)) return 0.7;
  const typos = allowedTypos(word.length);
  if (typos > 0) {
    const distance = editDistance(word, token, typos);
    if (distance <= typos) return 0.8 - 0.15 * distance;
    // A typo in a prefix: "mistrl" against "mistralai".
    if (token.length > word.length && editDistance(word, token.slice(0, word.length + 1), typos) <= typos) return 0.55;
  }
  return 0;
}

/**
 * Fuzzy search over the library. Order of strength: the exact name, then a name
 * prefix, then every query word found in the name (exact, prefix, substring or
 * within a typo or two), then words found only in the description. Popularity
 * breaks ties.
 */
export class ModelLibrary {
  private indexed: Indexed[] = [];
  private loadedAt = new Date();

  constructor(entries: LibraryEntry[]) {
    this.replace(entries);
  }

  get size(): number {
    return this.indexed.length;
  }

  get refreshedAt(): Date {
    return this.loadedAt;
  }

  replace(entries: LibraryEntry[]): void {
    const byName = new Map<string, LibraryEntry>();
    for (const entry of entries) byName.set(entry.name.toLowerCase(), entry);
    this.indexed = [...byName.values()].map((entry) => {
      const name = entry.name.toLowerCase();
      return {
        entry,
        name,
        compact: compactOf(name),
        tokens: nameTokens(name),
        descWords: [...new Set(entry.description.toLowerCase().match(/[a-z0-9][a-z0-9.+-]*[a-z0-9]|[a-z0-9]/g) ?? [])].filter((w) => w.length >= 3),
        parts: name.split(NAME_SPLIT).length,
        popularity: Math.log10(entry.pulls + 1) / 10,
      };
    });
    this.loadedAt = new Date();
  }

  search(query: string, topK: number): LibraryEntry[] {
    const q = query.trim().toLowerCase().replace(/:[^\s]*$/, "");
    if (!q) return [...this.indexed].sort((a, b) => b.entry.pulls - a.entry.pulls).slice(0, topK).map((i) => i.entry);
    const words = q.split(NAME_SPLIT).filter(Boolean);
    const compactQuery = compactOf(q);
    const scored: Array<{ item: Indexed; score: number }> = [];
    // Name tokens repeat across models ("llama", "coder"): score each (word, token) pair once per search.
    const memo = words.map(() => new Map<string, number>());
    for (const item of this.indexed) {
      const score = this.score(item, q, compactQuery, words, memo);
      if (score > 0) scored.push({ item, score });
    }
    scored.sort((a, b) => b.score - a.score || b.item.entry.pulls - a.item.entry.pulls);
    return scored.slice(0, topK).map((s) => s.item.entry);
  }

  private score(item: Indexed, q: string, compactQuery: string, words: string[], memo: Array<Map<string, number>>): number {
    if (item.name === q) return 1000 + item.popularity;
    let bonus = 0;
    if (compactQuery && item.compact === compactQuery) bonus += 500;
    else if (item.name.startsWith(q)) bonus += 40 - Math.min(20, item.name.length - q.length);
    else if (compactQuery.length >= 3 && item.compact.includes(compactQuery)) bonus += 15;
    else if (compactQuery.length >= 4 && editDistance(compactQuery, item.compact, allowedTypos(compactQuery.length)) <= allowedTypos(compactQuery.length)) bonus += 30;

    let nameTotal = 0;
    let descTotal = 0;
    let matchedTokens = 0;
    for (let w = 0; w < words.length; w++) {
      const word = words[w];
      let best = 0;
      for (const token of item.tokens) {
        let s = memo[w].get(token);
        if (s === undefined) {
          s = wordScore(word, token);
          memo[w].set(token, s);
        }
        if (s > best) best = s;
        if (best === 1) break;
      }
      if (best > 0) {
        nameTotal += best;
        matchedTokens++;
        continue;
      }
      if (word.length >= 3 && item.descWords.some((w) => w === word || (word.length >= 4 && w.startsWith(word)))) descTotal += 0.3;
    }
    if (nameTotal === 0 && descTotal === 0 && bonus === 0) return 0;
    // Fewer unmatched name tokens = a closer name ("mistral" over "mistral-openorca").
    const tightness = matchedTokens ? Math.min(1, matchedTokens / item.parts) : 0;
    return bonus + (nameTotal / words.length) * 20 + (descTotal / words.length) * 5 + tightness * 2 + item.popularity;
  }
}

/** Where a refreshed catalog is kept, so a restart keeps it. */
export function refreshedCatalogPath(dataDir: string): string {
  return path.join(dataDir, "model-library.json");
}

/** The refreshed copy under DATA_DIR when there is a valid one, else the catalog that ships with the app. */
export function loadLibrary(dataDir: string | null): ModelLibrary {
  if (dataDir) {
    try {
      return new ModelLibrary(parseCatalog(JSON.parse(fs.readFileSync(refreshedCatalogPath(dataDir), "utf8"))));
    } catch {
      // No refreshed copy (or a damaged one): the shipped catalog.
    }
  }
  return new ModelLibrary(shippedCatalog());
}
