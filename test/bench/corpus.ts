import fs from "node:fs";
import path from "node:path";
import { makeDocx, makePdf } from "../fixtures/documents";

/** A deterministic pseudo-random generator, so every benchmark run indexes the same corpus. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const SYLLABLES = ["ka", "lo", "mi", "ra", "ten", "vo", "qui", "sel", "dan", "por", "ux", "bel", "tor", "fen", "gal", "rin"];

/** A vocabulary of made-up words, drawn with a Zipf-like skew so some are common and most are rare. */
export function vocabulary(size: number, random: () => number): string[] {
  const words = new Set<string>();
  while (words.size < size) {
    const n = 2 + Math.floor(random() * 3);
    words.add(Array.from({ length: n }, () => SYLLABLES[Math.floor(random() * SYLLABLES.length)]).join(""));
  }
  return [...words];
}

export function zipfWord(words: string[], random: () => number): string {
  return words[Math.floor(words.length * random() ** 3)];
}

export function prose(words: string[], random: () => number, bytes: number): string {
  const out: string[] = [];
  let length = 0;
  while (length < bytes) {
    const sentence = Array.from({ length: 8 + Math.floor(random() * 10) }, () => zipfWord(words, random)).join(" ");
    out.push(`${sentence.charAt(0).toUpperCase() + sentence.slice(1)}.`);
    length += sentence.length + 2;
  }
  return out.join(" ");
}

export interface Corpus {
  dir: string;
  files: number;
  bytes: number;
  words: string[];
}

/**
 * 2,000 text/Markdown files of ~10 KB in 20 folders, plus 10 PDFs and 10 DOCX of ~1 MB
 * each: ~25 KB of text and an embedded ~1 MB figure, the way real reports get that big.
 */
export async function writeCorpus(dir: string, opts = { textFiles: 2000, binaryFiles: 20 }): Promise<Corpus> {
  const random = seeded(42);
  const words = vocabulary(20_000, random);
  let bytes = 0;
  for (let i = 0; i < opts.textFiles; i++) {
    const folder = path.join(dir, `dept-${i % 20}`);
    fs.mkdirSync(folder, { recursive: true });
    const ext = i % 2 ? "md" : "txt";
    const body = (ext === "md" ? `# Memo ${i}\n\n` : "") + prose(words, random, 10_000);
    fs.writeFileSync(path.join(folder, `memo-${i}.${ext}`), body);
    bytes += Buffer.byteLength(body);
  }
  fs.mkdirSync(path.join(dir, "reports"), { recursive: true });
  for (let i = 0; i < opts.binaryFiles; i++) {
    const paragraphs = Array.from({ length: 40 }, () => prose(words, random, 600));
    const data = i % 2 ? await makeDocx(paragraphs, { imageBytes: 1_000_000 }) : await makePdf(paragraphs, { imageBytes: 1_000_000 });
    const file = path.join(dir, "reports", `report-${i}.${i % 2 ? "docx" : "pdf"}`);
    fs.writeFileSync(file, data);
    bytes += data.length;
  }
  return { dir, files: opts.textFiles + opts.binaryFiles, bytes, words };
}

/** One text file of `bytes` bytes of prose, written a block at a time (a big log or export). */
export function writeBigTextFile(file: string, bytes: number, words: string[], random: () => number): number {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const fd = fs.openSync(file, "w");
  let written = 0;
  try {
    for (let line = 0; written < bytes; line++) {
      const block = `${line}: ${prose(words, random, Math.min(1 << 20, bytes - written))}\n`;
      fs.writeSync(fd, block);
      written += Buffer.byteLength(block);
    }
  } finally {
    fs.closeSync(fd);
  }
  return written;
}
