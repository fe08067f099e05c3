import fs from "node:fs";
import path from "node:path";
import { seeded } from "./corpus";

/**
 * The bench's second corpus (issue 36 item 2), of another shape than corpus.ts's: a vocabulary
 * of ~30,000 made-up words of letter-level shapes (3 to 13 letters; every word carries one of
 * k, q, x, z, which no PostgreSQL English stop word does, so both engines keep every word
 * asked for) drawn with a steep Zipf-Mandelbrot skew (the commonest word ~6 % of the text, the
 * rarest few times in the whole corpus), each folder with words of its own it uses often; short
 * files and long ones (a few hundred bytes to ~450 KB); text, Markdown, CSV and JSON; ~1,700
 * files and ~39 MB in 40 folders at scale 1. Queries: 1-3 words, each half the time one of the
 * 300 commonest and half the time any word of the vocabulary (so mostly rare).
 */

/** The generator's and the queries' seeds: not corpus.ts's (42, 7). */
const CORPUS_SEED = 3600;
const QUERY_SEED = 3601;
const VOCABULARY_SIZE = 30_000;
/** p(rank r) ∝ 1 / (r + ZIPF_OFFSET)^ZIPF_EXPONENT: with 3 and 1.2 the first word is ~6 % of the words, one at rank 15,000 ~3 per million. */
const ZIPF_EXPONENT = 1.2;
const ZIPF_OFFSET = 3;
/** The share of a file's words drawn from its folder's own words instead of the whole vocabulary. */
const FOLDER_WORD_SHARE = 0.15;
const FOLDER_WORDS = 150;
const TOP_WORDS = 300;

export interface SkewedCorpus {
  dir: string;
  files: number;
  bytes: number;
  folders: number;
  /** The vocabulary, commonest first. */
  words: string[];
}

const ONSETS = ["b", "br", "d", "dr", "f", "g", "gl", "h", "k", "kr", "l", "m", "n", "p", "pl", "qu", "r", "s", "st", "t", "tr", "v", "w", "x", "z", "zh", "sk", "th"];
const VOWELS = ["a", "e", "i", "o", "u", "y", "ae", "ou", "ei"];
const CODAS = ["", "", "", "k", "x", "z", "n", "m", "r", "l", "s", "nd", "rk", "st", "q"];
const MARKED = /[kqxz]/;

/** Letter-level made-up words: 1-4 syllables of onset, vowel and coda; each with one of k, q, x, z somewhere. */
function letterWords(size: number, random: () => number): string[] {
  const pick = <T>(list: T[]) => list[Math.floor(random() * list.length)];
  const words = new Set<string>();
  while (words.size < size) {
    const syllables = 1 + Math.floor(random() * random() * 4.5);
    let word = "";
    for (let s = 0; s < syllables; s++) word += pick(ONSETS) + pick(VOWELS) + (s === syllables - 1 || random() < 0.3 ? pick(CODAS) : "");
    if (!MARKED.test(word)) word += pick(["k", "x", "z", "q"]);
    if (word.length >= 3 && word.length <= 13) words.add(word);
  }
  return [...words];
}

/** A Zipf-Mandelbrot draw over `size` ranks: the cumulative weights, searched by bisection. */
function zipfSampler(size: number, random: () => number): () => number {
  const cumulative = new Float64Array(size);
  let total = 0;
  for (let r = 0; r < size; r++) cumulative[r] = total += 1 / (r + 1 + ZIPF_OFFSET) ** ZIPF_EXPONENT;
  return () => {
    const x = random() * total;
    let lo = 0;
    let hi = size - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

/** One file's shape: its format and its size in bytes (short, middling or long). */
function fileShape(random: () => number): { ext: "txt" | "md" | "csv" | "json"; bytes: number } {
  const ext = (["txt", "md", "md", "txt", "csv", "json"] as const)[Math.floor(random() * 6)];
  const size = random();
  // Log-uniform within each band: 55 % short (0.3-4 KB), 40 % middling (9-46 KB), 5 % long (140-450 KB).
  const band = size < 0.55 ? [300, 4_000] : size < 0.95 ? [9_000, 46_000] : [140_000, 450_000];
  return { ext, bytes: Math.round(band[0] * (band[1] / band[0]) ** random()) };
}

/**
 * Writes the corpus under `dir`: `files` files in 40 folders (25 at the top, 15 of them with an
 * `archive` below). Deterministic: the same files every run for the same `files`.
 */
export function writeSkewedCorpus(dir: string, files = 1700): SkewedCorpus {
  const random = seeded(CORPUS_SEED);
  const words = letterWords(VOCABULARY_SIZE, random);
  const rank = zipfSampler(words.length, random);
  const folders = Array.from({ length: 25 }, (_, i) => `unit-${String(i).padStart(2, "0")}`).flatMap((top, i) => (i < 15 ? [top, `${top}/archive`] : [top]));
  // Each folder's own words: drawn from the middle and the tail, so a rare word is common in one place.
  const folderWords = folders.map(() => Array.from({ length: FOLDER_WORDS }, () => words[TOP_WORDS + Math.floor(random() * (words.length - TOP_WORDS))]));
  let bytes = 0;
  for (let i = 0; i < files; i++) {
    const f = i % folders.length;
    const own = folderWords[f];
    const word = () => (random() < FOLDER_WORD_SHARE ? own[Math.floor(random() * own.length)] : words[rank()]);
    const { ext, bytes: size } = fileShape(random);
    const folder = path.join(dir, folders[f]);
    fs.mkdirSync(folder, { recursive: true });
    const body = FORMATS[ext](word, random, size, i);
    fs.writeFileSync(path.join(folder, `${word()}-${i}.${ext}`), body);
    bytes += Buffer.byteLength(body);
  }
  return { dir, files, bytes, folders: folders.length, words };
}

type Word = () => string;

function sentence(word: Word, random: () => number): string {
  const text = Array.from({ length: 5 + Math.floor(random() * 14) }, word).join(" ");
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

function paragraphs(word: Word, random: () => number, bytes: number, between: () => string = () => "\n\n"): string {
  const out: string[] = [];
  let length = 0;
  while (length < bytes) {
    const paragraph = Array.from({ length: 2 + Math.floor(random() * 6) }, () => sentence(word, random)).join(" ");
    out.push(paragraph);
    length += paragraph.length + 2;
  }
  return out.map((p, i) => (i ? between() : "") + p).join("");
}

const FORMATS: Record<"txt" | "md" | "csv" | "json", (word: Word, random: () => number, bytes: number, n: number) => string> = {
  txt: (word, random, bytes) => paragraphs(word, random, bytes),
  md: (word, random, bytes) =>
    `# ${word()} ${word()} ${word()}\n\n` +
    paragraphs(word, random, bytes, () => (random() < 0.2 ? `\n\n## ${word()} ${word()}\n\n` : random() < 0.2 ? `\n\n- ${word()} ${word()}\n- ${word()}\n\n` : "\n\n")),
  csv: (word, random, bytes, n) => {
    const lines = ["id,code,name,amount,note"];
    let length = 0;
    for (let row = 0; length < bytes; row++) {
      const line = `${n}-${row},${word()},${word()} ${word()},${(random() * 10_000).toFixed(2)},"${Array.from({ length: 3 + Math.floor(random() * 10) }, word).join(" ")}"`;
      lines.push(line);
      length += line.length + 1;
    }
    return `${lines.join("\n")}\n`;
  },
  json: (word, random, bytes, n) => {
    const records: object[] = [];
    let length = 0;
    for (let row = 0; length < bytes; row++) {
      const record = { id: `${n}-${row}`, name: `${word()} ${word()}`, tags: Array.from({ length: 1 + Math.floor(random() * 4) }, word), note: sentence(word, random) };
      records.push(record);
      length += JSON.stringify(record).length + 4;
    }
    return JSON.stringify({ records }, null, 2);
  },
};

/** `count` queries of 1-3 words, each word half the time one of the TOP_WORDS commonest, else any of the vocabulary; the same every run. */
export function skewedQueries(words: string[], count = 500): string[] {
  const random = seeded(QUERY_SEED);
  const word = () => (random() < 0.5 ? words[Math.floor(random() * TOP_WORDS)] : words[Math.floor(random() * words.length)]);
  return Array.from({ length: count }, () => Array.from({ length: 1 + Math.floor(random() * 3) }, word).join(" "));
}
