import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chunkText } from "../../server/ingest/parse/chunker";
import { extractText } from "../../server/ingest/parse/extract-text";
import { formatOf } from "../../server/ingest/parse/file-types";
import { GlueTally, gluedWords, tokens } from "./glue-measure";
import { type CorpusFile, listFiles, referenceText } from "./real.bench";

/**
 * `npm run bench -- --real DIR --parse-only [--files LIST] [--glue-report]`: the real bench's
 * comparison with the reference extraction without ingesting anything: each file is parsed here
 * by the parser module (extractText, then chunked as the parser threads do) and its words are
 * compared with pdftotext's (or the type's reference), so an iteration on the PDF extraction
 * takes seconds. Every PDF of DIR by default; `--files LIST` takes the files named in LIST (one
 * path relative to DIR a line, any type with a reference). pdftotext's texts are kept under
 * ~/.cache/sluice-glue-reference (keyed by path, size and mtime; the -raw reading the glue
 * measure consults beside them too), so only the first run pays for them. Prints the parse time (one thread, this process) and the run-together words by kind;
 * `--glue-report` lists them all.
 */

export interface GlueBenchOptions {
  dir: string;
  /** A file listing the paths (relative to dir) to compare; every PDF when absent. */
  list?: string;
  glueReport?: boolean;
}

const CACHE = path.join(os.homedir(), ".cache", "sluice-glue-reference");

/** pdftotext's text of one PDF (UTF-8; its default reading order, or with `raw` its -raw one), from the cache when the file is unchanged; null when it fails. */
function pdftotextCached(file: CorpusFile, raw = false): string | null {
  const stat = fs.statSync(file.full);
  const key = createHash("sha1").update(`${file.full}\0${stat.size}\0${stat.mtimeMs}`).digest("hex");
  const cached = path.join(CACHE, `${key}${raw ? ".raw" : ""}.txt`);
  if (fs.existsSync(cached)) return fs.readFileSync(cached, "utf8");
  fs.mkdirSync(CACHE, { recursive: true });
  const run = spawnSync("pdftotext", ["-q", ...(raw ? ["-raw"] : []), "-enc", "UTF-8", file.full, `${cached}.tmp`], { stdio: "ignore" });
  if (run.status !== 0 || !fs.existsSync(`${cached}.tmp`)) return null;
  fs.renameSync(`${cached}.tmp`, cached);
  return fs.readFileSync(cached, "utf8");
}

function selectFiles(root: string, list: string | undefined): CorpusFile[] {
  const all = listFiles(root);
  if (!list) return all.filter((f) => formatOf(f.rel) === "pdf");
  const wanted = fs
    .readFileSync(list, "utf8")
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean);
  const byRel = new Map(all.map((f) => [f.rel, f]));
  const missing = wanted.filter((rel) => !byRel.has(rel));
  if (missing.length) throw new Error(`--files: not in ${root}: ${missing.slice(0, 5).join(", ")}${missing.length > 5 ? ", ..." : ""}`);
  return wanted.map((rel) => byRel.get(rel)!);
}

export async function runGlueBench(opts: GlueBenchOptions): Promise<void> {
  const root = path.resolve(opts.dir);
  if (!fs.existsSync(root) || !fs.statSync(root).isDirectory()) throw new Error(`--real: ${root} is not a directory (build one with node scripts/real-corpus.js)`);
  if (spawnSync("sh", ["-c", "command -v pdftotext"]).status !== 0) throw new Error("--parse-only needs pdftotext for its reference (apt-get install poppler-utils)");
  const files = selectFiles(root, opts.list);
  process.stdout.write(`parse-only comparison: ${files.length} files of ${root}\n`);
  const pdfTexts = new Map<string, string>();
  const rawTexts = new Map<string, string>();
  for (const f of files) {
    if (formatOf(f.rel) !== "pdf") continue;
    const text = pdftotextCached(f);
    if (text !== null) pdfTexts.set(f.rel, text);
    const raw = pdftotextCached(f, true);
    if (raw !== null) rawTexts.set(f.rel, raw);
  }
  const tally = new GlueTally();
  const failed: string[] = [];
  let noReference = 0;
  let cpuMicros = 0;
  let wallMs = 0;
  for (const file of files) {
    const reference = referenceText(file, pdfTexts);
    if (reference === null) noReference++;
    const bytes = fs.readFileSync(file.full);
    const cpu = process.cpuUsage();
    const start = performance.now();
    let text: string;
    try {
      // As a parser thread does: extract, then chunk (the index holds the chunks).
      text = chunkText((await extractText(file.rel, bytes)).text)
        .map((c) => c.text)
        .join("\n");
    } catch (error) {
      failed.push(`${file.rel}: ${(error as Error).message}`);
      continue;
    } finally {
      wallMs += performance.now() - start;
      const used = process.cpuUsage(cpu);
      cpuMicros += used.user + used.system;
    }
    if (reference !== null) tally.add(file, gluedWords(reference, new Set(tokens(text)), rawTexts.get(file.rel)));
  }
  process.stdout.write(`\nparse (extract + chunk), one thread: ${(cpuMicros / 1e6).toFixed(2)} s CPU, ${(wallMs / 1000).toFixed(2)} s wall\n`);
  process.stdout.write(`files without a reference: ${noReference}; failed to parse: ${failed.length}\n`);
  for (const f of failed) process.stdout.write(`  ${f}\n`);
  for (const [measure, value] of tally.rows()) process.stdout.write(`${measure}: ${value}\n`);
  tally.print(process.stdout, opts.glueReport ?? false);
}
