import { execFileSync, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { unzipSync } from "fflate";
import { startSamba } from "../fixtures/samba";
import { startSluice, tempDir } from "../fixtures/sluice-server";
import { addSmbSource, client, createGroup, signUp, type Request } from "../fixtures/http-client";
import { startPostgres, type PostgresCluster } from "../fixtures/postgres";
import { formatOf, isSupported } from "../../server/ingest/parse/file-types";
import { capPerDocument } from "../../server/search/query";
import { GlueTally, gluedWords, tokens } from "./glue-measure";
import { CORES, cpuSeconds, mgetSeconds, peakRssMb, runWatched, sambaCpuSeconds, stageLine, treeCpuSeconds, verdict } from "./measure";

/**
 * `npm run bench -- --real DIR [--limit N] [--glue-report]`: ingests a folder of real documents (e.g. the one
 * scripts/real-corpus.js builds) from a test Samba share into a fresh Sluice on SQLite, and
 * prints where the time went and how well the files can be found again (issue 14):
 * time, CPU and core use; files/s and MB/s; the job's stage seconds; time by file type; stalls;
 * peak RSS; failures grouped by message; a no-change re-run; the ratio to smbclient's mget of
 * the share and to pdftotext over the corpus's PDFs on one core; the probe test (each indexed
 * file searched for by 3 words rare in the corpus that it holds); words glued to a neighbour
 * against a reference extraction (and apart, each kind that is not glue: glue-measure.ts); files with text that were not indexed; files skipped as
 * unsupported by extension. `--limit N` ingests an evenly spread subset of N files; `--glue-report`
 * lists every run-together word of every file. The comparison alone, without ingesting: glue.bench.ts.
 *
 * `--pg`: the server on PostgreSQL (a cluster of the bench's own), the same table.
 * `--probe-only`: only the ingestion and the probe test, with what explains each miss (below):
 * no smbclient mget, no no-change re-run, no glue comparison, and pdftotext runs on every core
 * (its text is the probe words' reference, its time is not measured), so a run costs the
 * ingestion and the searches.
 */

export interface RealBenchOptions {
  dir: string;
  limit?: number;
  /** List every run-together word of every file, not five examples of each kind. */
  glueReport?: boolean;
  /** The server's back end: SQLite (default) or PostgreSQL. */
  engine?: "sqlite" | "postgres";
  /** Only the ingestion and the probe test (see above). */
  probeOnly?: boolean;
}

const SHARE = "corpus";
/** A file whose reference text has at least this many words "has text". */
const HAS_TEXT_WORDS = 20;
const PROBES_PER_FILE = 3;
const PROBE_TOP_K = 10;
const STALL_SECONDS = 5;

export interface CorpusFile {
  /** Path relative to the corpus root, with "/" separators. */
  rel: string;
  full: string;
  size: number;
  type: string;
}

function typeOf(name: string): string {
  const base = name.split("/").pop() ?? name;
  const dot = base.lastIndexOf(".");
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : "none";
}

export function listFiles(root: string, rel = ""): CorpusFile[] {
  const out: CorpusFile[] = [];
  for (const entry of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
    const r = rel ? `${rel}/${entry.name}` : entry.name;
    const full = path.join(root, r);
    if (entry.isDirectory()) out.push(...listFiles(root, r));
    else if (entry.isFile()) out.push({ rel: r, full, size: fs.statSync(full).size, type: typeOf(entry.name) });
  }
  return out;
}

/** N files spread evenly over the sorted list (so every part of the tree, and most types, are in), hard-linked (or copied) into a new folder. */
function subset(files: CorpusFile[], limit: number): { dir: string; files: CorpusFile[] } {
  const dir = tempDir("sluice-real-subset-");
  fs.chmodSync(dir, 0o755);
  const step = files.length / limit;
  const picked = Array.from({ length: Math.min(limit, files.length) }, (_, i) => files[Math.floor(i * step)]);
  const out: CorpusFile[] = [];
  for (const f of picked) {
    const full = path.join(dir, f.rel);
    fs.mkdirSync(path.dirname(full), { recursive: true });
    try {
      fs.linkSync(f.full, full);
    } catch {
      fs.copyFileSync(f.full, full);
    }
    out.push({ ...f, full });
  }
  return { dir, files: out };
}

// ---------------------------------------------------------------- reference text

const BLOCK_TAGS =
  "p|div|br|li|ul|ol|dl|dt|dd|td|th|tr|table|thead|tbody|tfoot|caption|h[1-6]|pre|blockquote|section|article|header|footer|nav|aside|main|hr|title|head|body|html|form|option|figure|figcaption|address|center|img";
const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " ", mdash: "—", ndash: "–", hellip: "…", copy: "©" };

/**
 * The text of an HTML page with every block boundary kept as a line break and inline tags
 * removed: the reference a converter's output is compared with for glued words.
 */
function htmlReference(html: string): string {
  return html
    .replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, " ")
    .replace(/<!--[\s\S]*?-->/g, " ")
    .replace(new RegExp(`</?(?:${BLOCK_TAGS})\\b[^>]*>`, "gi"), "\n")
    .replace(/<[^>]*>/g, "")
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
      if (name[0] === "#") {
        const code = name[1].toLowerCase() === "x" ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
        return Number.isFinite(code) && code <= 0x10ffff ? String.fromCodePoint(code) : " ";
      }
      return ENTITIES[name.toLowerCase()] ?? whole;
    });
}

/** A DOCX's body text with a line break at every paragraph, tab and break. */
function docxReference(bytes: Uint8Array): string {
  const xml = new TextDecoder().decode(unzipSync(bytes, { filter: (f) => f.name === "word/document.xml" })["word/document.xml"]);
  return htmlReference(xml.replace(/<\/w:p>|<w:tab\/>|<w:br\/>/g, "\n"));
}

/**
 * pdftotext over every PDF, `parallel` at a time (1: one after another, on one core, the
 * reference time): the seconds they took (summed over the runs), and each file's text; then,
 * untimed and only with `raw`, each file's raw reading (`-raw`, content order, every line end as
 * drawn), which the glue measure consults for line-end hyphens.
 */
async function pdftotextAll(files: CorpusFile[], options: { parallel: number; raw: boolean }): Promise<{ seconds: number; texts: Map<string, string>; rawTexts: Map<string, string>; failed: number }> {
  const out = tempDir("sluice-pdftotext-");
  const texts = new Map<string, string>();
  const rawTexts = new Map<string, string>();
  let seconds = 0;
  let failed = 0;
  let next = 0;
  const run = (source: string, target: string) =>
    new Promise<number | null>((resolve) => {
      const child = spawn("pdftotext", ["-q", "-enc", "UTF-8", source, target], { stdio: "ignore" });
      child.once("error", () => resolve(null));
      child.once("close", (code) => resolve(code));
    });
  const worker = async () => {
    while (next < files.length) {
      const i = next++;
      const target = path.join(out, `${i}.txt`);
      const start = performance.now();
      const status = await run(files[i].full, target);
      seconds += (performance.now() - start) / 1000;
      if (status === 0 && fs.existsSync(target)) texts.set(files[i].rel, fs.readFileSync(target, "utf8"));
      else failed++;
    }
  };
  try {
    await Promise.all(Array.from({ length: options.parallel }, worker));
    if (options.raw) {
      files.forEach((f, i) => {
        const target = path.join(out, `${i}.raw.txt`);
        const raw = spawnSync("pdftotext", ["-q", "-raw", "-enc", "UTF-8", f.full, target], { stdio: "ignore" });
        if (raw.status === 0 && fs.existsSync(target)) rawTexts.set(f.rel, fs.readFileSync(target, "utf8"));
      });
    }
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
  return { seconds, texts, rawTexts, failed };
}

/** A file's reference text, or null when there is no independent extraction for its type. */
export function referenceText(file: CorpusFile, pdfTexts: Map<string, string>): string | null {
  const format = formatOf(file.rel);
  try {
    if (format === "pdf") return pdfTexts.get(file.rel) ?? null;
    if (format === "html") return htmlReference(fs.readFileSync(file.full, "utf8"));
    if (format === "text" || format === "json") return fs.readFileSync(file.full, "utf8");
    if (format === "docx") return docxReference(fs.readFileSync(file.full));
  } catch {
    return null;
  }
  return null;
}

// ---------------------------------------------------------------- what the index holds

/** Where the server keeps its index: the data directory (SQLite files) or its PostgreSQL database. */
type IndexStore = { engine: "sqlite"; dataDir: string } | { engine: "postgres"; cluster: PostgresCluster; databaseUrl: string };

/** Indexed chunk texts per share-relative path, by chunk index, read from the collection's index (its SQLite file or the PostgreSQL tables). */
async function indexedChunks(store: IndexStore, collectionId: string): Promise<Map<string, string[]>> {
  const chunks = new Map<string, string[]>();
  const add = (row: { path: string; chunk_index: number; body: string }) => {
    if (!row.path.startsWith(`${SHARE}/`)) return; // the test Samba's own `docs` share
    const rel = row.path.slice(SHARE.length + 1);
    const parts = chunks.get(rel) ?? [];
    parts[row.chunk_index] = row.body;
    chunks.set(rel, parts);
  };
  if (store.engine === "postgres") {
    const rows = await store.cluster.query<{ path: string; chunk_index: number; body: string }>(
      store.databaseUrl,
      `SELECT d.path, c.chunk_index, c.body FROM search_chunks c JOIN search_documents d ON d.id = c.document_id WHERE c.collection_id = $1`,
      [collectionId.toLowerCase()],
    );
    for (const row of rows) add(row);
    return chunks;
  }
  const db = new Database(path.join(store.dataDir, "indexes", `${collectionId.toLowerCase()}.db`), { readonly: true, fileMustExist: true });
  try {
    const rows = db
      .prepare(`SELECT d.path AS path, c.chunk_index AS chunk_index, f.body AS body FROM chunks c JOIN documents d ON d.id = c.document_id JOIN chunks_fts f ON f.rowid = c.rowid`)
      .iterate() as Iterable<{ path: string; chunk_index: number; body: string }>;
    for (const row of rows) add(row);
  } finally {
    db.close();
  }
  return chunks;
}

/** A stable pseudo-random rank for tie-breaking, so the same corpus gets the same probes. */
function hash(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

/** The `count` words of a file rarest in the corpus (fewest files), letters only, 4+ characters. */
function rareWords(words: Set<string>, documentFrequency: Map<string, number>, seed: string, count: number): string[] {
  return [...words]
    .filter((w) => w.length >= 4 && /^\p{L}+$/u.test(w))
    .sort((a, b) => documentFrequency.get(a)! - documentFrequency.get(b)! || hash(seed + a) - hash(seed + b))
    .slice(0, count);
}

/** A search result as the probe reads it. */
interface ProbeHit {
  path: string;
  chunk_index: number;
  score: number;
  exact: boolean;
}

/** How deep a missed probe's results are read to explain the miss. */
const DIAGNOSE_TOP_K = 100;
/** Chunks-per-document caps whose effect on the misses is worked out (capPerDocument over the deeper results). */
const CAPS = [1, 2, 3];
/** Misses printed with their whole top 10. */
const DETAILED_MISSES = 5;

/** Why one probe word did not have its file in the top 10. */
interface WordMiss {
  word: string;
  files: number;
  /** Rank (0-based) of the file's best chunk among the top DIAGNOSE_TOP_K, and that chunk; null when not there. */
  ownRank: number | null;
  ownHit: ProbeHit | null;
  /** No chunk of the file matched at all: the search found fewer than DIAGNOSE_TOP_K chunks, none of the file. */
  unmatched: boolean;
  /** The caps of CAPS that put the file in the top 10 (a smaller cap never ranks it lower). */
  caps: number[];
  top: ProbeHit[];
}

/** What the misses come from (rare-word files only), for choosing a fix by evidence. */
export interface MissReport {
  /** Missed probe words by cause. */
  words: { crowded: number; belowTop: number; unmatched: number };
  /** Per cap: missed files that cap would have found (>= 2 of 3 words then in the top 10). */
  rescuedByCap: Map<number, number>;
  /** Documents holding 3 or more of a missed probe's top 10 chunks: how often. */
  crowders: Map<string, number>;
  detailed: string[];
}

/** A probe word's own rank among the deeper results, and what each cap would make of it. */
function diagnose(word: string, files: number, own: string, deeper: ProbeHit[]): WordMiss {
  const first = deeper.findIndex((h) => h.path === own);
  const caps = CAPS.filter((c) => {
    const rank = capPerDocument(deeper, c, (h) => h.path).findIndex((h) => h.path === own);
    return rank !== -1 && rank < PROBE_TOP_K;
  });
  return { word, files, ownRank: first === -1 ? null : first, ownHit: deeper[first] ?? null, unmatched: first === -1 && deeper.length < DIAGNOSE_TOP_K, caps, top: deeper.slice(0, PROBE_TOP_K) };
}

/** One chunk as a miss's detail shows it: where, score, tier, how often the word is in it and its length. */
function describeChunk(hit: ProbeHit, word: string, chunkText: (path: string, chunk: number) => string | undefined): string {
  const text = chunkText(hit.path, hit.chunk_index);
  const count = text === undefined ? "?" : String(tokens(text).filter((t) => t === word).length);
  return `${hit.path}#${hit.chunk_index} score ${hit.score.toPrecision(3)}${hit.exact ? " exact" : ""}, x${count} in ${text?.length ?? "?"} chars`;
}

async function probeTest(
  request: Request,
  token: string,
  collectionId: string,
  indexed: CorpusFile[],
  words: Map<string, Set<string>>,
  chunkText: (path: string, chunk: number) => string | undefined,
): Promise<{
  found: number;
  probed: number;
  rare: { found: number; probed: number };
  /** The rare-word files counted the way the search screen shows results: top 10 documents (group_by=document). */
  rareByDocument: { found: number; probed: number };
  byType: Map<string, { found: number; probed: number }>;
  missed: string[];
  misses: MissReport;
}> {
  const documentFrequency = new Map<string, number>();
  for (const set of words.values()) for (const w of set) documentFrequency.set(w, (documentFrequency.get(w) ?? 0) + 1);
  const byType = new Map<string, { found: number; probed: number }>();
  const missed: string[] = [];
  const misses: MissReport = { words: { crowded: 0, belowTop: 0, unmatched: 0 }, rescuedByCap: new Map(CAPS.map((c) => [c, 0])), crowders: new Map(), detailed: [] };
  let found = 0;
  let probed = 0;
  // Files whose 3 probe words are each in at most PROBE_TOP_K files: rare enough that a ranking
  // can put this file in the top 10 for each. A word in 50 files cannot have all 50 there, so
  // files without such words measure the probe's luck as much as the ranking (shown apart).
  const rare = { found: 0, probed: 0 };
  const rareByDocument = { found: 0, probed: 0 };
  const search = async (url: string): Promise<Record<string, unknown>> => {
    // A keep-alive socket the server closed while this process was busy comparing (seconds of
    // synchronous work) is found closed only on use: a GET is safe to send once more.
    const res = await request("GET", url, { token })
      .catch(() => request("GET", url, { token }))
      .catch((error: Error) => {
        throw new Error(`search ${url} failed: ${error.message} (${String(error.cause)})`);
      });
    if (res.status !== 200) throw new Error(`search failed: ${res.text}`);
    return res.body;
  };
  const url = (word: string, topK: number) => `/collections/${collectionId}/search?q=${encodeURIComponent(word)}&top_k=${topK}`;
  for (const file of indexed) {
    const probes = rareWords(words.get(file.rel) ?? new Set(), documentFrequency, file.rel, PROBES_PER_FILE);
    if (probes.length < PROBES_PER_FILE) continue; // too few words of its own to probe
    const isRare = probes.every((w) => documentFrequency.get(w)! <= PROBE_TOP_K);
    const own = `${SHARE}/${file.rel}`;
    let hits = 0;
    let documentHits = 0;
    const missedWords: string[] = [];
    for (const word of probes) {
      if (((await search(url(word, PROBE_TOP_K))).results as ProbeHit[]).some((r) => r.path === own)) hits++;
      else missedWords.push(word);
      // The search screen asks for documents: one long document's many chunks cannot crowd the others out there.
      if (isRare && ((await search(`${url(word, PROBE_TOP_K)}&group_by=document`)).documents as Array<{ path: string }>).some((d) => d.path === own)) documentHits++;
    }
    const t = byType.get(file.type) ?? { found: 0, probed: 0 };
    t.probed++;
    probed++;
    if (isRare) {
      rare.probed++;
      rareByDocument.probed++;
      if (documentHits >= 2) rareByDocument.found++;
    }
    if (hits >= 2) {
      t.found++;
      found++;
      if (isRare) rare.found++;
    } else if (isRare) {
      if (missed.length < 10) missed.push(`${file.rel} (${probes.map((w) => `${w} in ${documentFrequency.get(w)} files`).join(", ")}: ${hits}/3)`);
      const diagnosed: WordMiss[] = [];
      for (const word of missedWords) diagnosed.push(diagnose(word, documentFrequency.get(word)!, own, (await search(url(word, DIAGNOSE_TOP_K))).results as ProbeHit[]));
      for (const d of diagnosed) {
        if (d.unmatched) misses.words.unmatched++;
        else if (d.ownRank === null) misses.words.belowTop++;
        else misses.words.crowded++;
        const perDocument = new Map<string, number>();
        for (const h of d.top) perDocument.set(h.path, (perDocument.get(h.path) ?? 0) + 1);
        for (const [p, n] of perDocument) if (n >= 3) misses.crowders.set(p, (misses.crowders.get(p) ?? 0) + 1);
      }
      // Capping never lowers the file's own best chunk: a word found uncapped stays found.
      for (const c of CAPS) if (hits + diagnosed.filter((d) => d.caps.includes(c)).length >= 2) misses.rescuedByCap.set(c, misses.rescuedByCap.get(c)! + 1);
      if (misses.detailed.length < DETAILED_MISSES) {
        const lines = [`${file.rel} (${hits}/3 found)`];
        for (const d of diagnosed) {
          const where = d.unmatched
            ? "no chunk of the file matches"
            : d.ownHit
              ? `its best chunk ranks ${d.ownRank! + 1}: ${describeChunk(d.ownHit, d.word, chunkText)}`
              : `not in the top ${DIAGNOSE_TOP_K}`;
          lines.push(`  "${d.word}" (in ${d.files} files): ${where}`);
          for (const [i, h] of d.top.entries()) lines.push(`    ${i + 1}. ${describeChunk(h, d.word, chunkText)}`);
        }
        misses.detailed.push(lines.join("\n"));
      }
    }
    byType.set(file.type, t);
  }
  return { found, probed, rare, rareByDocument, byType, missed, misses };
}

// ---------------------------------------------------------------- the run

function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** Messages with their file-specific parts (numbers, quoted names) made alike, so similar failures group together. */
function messageGroup(message: string): string {
  return message.replace(/"[^"]*"|'[^']*'/g, '"…"').replace(/\d+(\.\d+)?/g, "#");
}

function table(header: string[], rows: Array<Array<string | number>>): void {
  process.stdout.write(`\n| ${header.join(" | ")} |\n|${header.map(() => "---|").join("")}\n`);
  for (const row of rows) process.stdout.write(`| ${row.join(" | ")} |\n`);
}

/** What the rare-word misses come from: each missed word's cause, what a per-document cap would find, who crowds, a few in full. */
function reportMisses(misses: MissReport, rare: { found: number; probed: number }): void {
  const { crowded, belowTop, unmatched } = misses.words;
  if (crowded + belowTop + unmatched === 0) return;
  process.stdout.write(
    `\nmissed probe words (rare-word files): ${crowded} with the file ranked 11-${DIAGNOSE_TOP_K}, ${belowTop} with it below the top ${DIAGNOSE_TOP_K}, ${unmatched} with no chunk of the file matching\n`,
  );
  for (const [cap, rescued] of misses.rescuedByCap) {
    process.stdout.write(`  at most ${cap} chunk${cap > 1 ? "s" : ""} per document in the top 10: ${rescued} more files found, ${(((rare.found + rescued) / rare.probed) * 100).toFixed(1)} %\n`);
  }
  const crowders = [...misses.crowders].sort((a, b) => b[1] - a[1]).slice(0, 10);
  if (crowders.length) process.stdout.write(`  documents with 3+ chunks in a missed word's top 10 (times): ${crowders.map(([p, n]) => `${p} (${n})`).join(", ")}\n`);
  if (misses.detailed.length) process.stdout.write(`\nthe first ${misses.detailed.length} misses in full (x: the word's occurrences in the chunk):\n${misses.detailed.join("\n")}\n`);
}

export async function runRealBench(opts: RealBenchOptions): Promise<void> {
  const root = path.resolve(opts.dir);
  if (!fs.existsSync(root) || !fs.statSync(root).isDirectory()) throw new Error(`--real: ${root} is not a directory (build one with node scripts/real-corpus.js)`);
  if (spawnSync("sh", ["-c", "command -v pdftotext"]).status !== 0) throw new Error("--real needs pdftotext for its reference (apt-get install poppler-utils)");
  let files = listFiles(root);
  let shareDir = root;
  let cleanup: () => void = () => {};
  if (opts.limit && opts.limit < files.length) {
    const sub = subset(files, opts.limit);
    files = sub.files;
    shareDir = sub.dir;
    cleanup = () => fs.rmSync(sub.dir, { recursive: true, force: true });
  }
  const totalBytes = files.reduce((n, f) => n + f.size, 0);
  const pdfs = files.filter((f) => formatOf(f.rel) === "pdf");
  const engine = opts.engine ?? "sqlite";
  const probeOnly = opts.probeOnly ?? false;
  process.stdout.write(
    `real corpus on ${engine === "postgres" ? "PostgreSQL" : "SQLite"}${probeOnly ? " (probe only)" : ""}: ${root}${opts.limit ? ` (subset of ${files.length})` : ""}\n` +
      `${files.length} files, ${mb(totalBytes)}, ${pdfs.length} PDFs (${mb(pdfs.reduce((n, f) => n + f.size, 0))})\n`,
  );

  // Probe-only: the text is the reference, its time is not measured, so every core runs it.
  process.stdout.write(probeOnly ? "pdftotext over the PDFs (every core)...\n" : "pdftotext over the PDFs, one after another (one core)...\n");
  const poppler = await pdftotextAll(pdfs, { parallel: probeOnly ? CORES : 1, raw: !probeOnly });

  const postgres = engine === "postgres" ? await startPostgres() : null;
  let samba: Awaited<ReturnType<typeof startSamba>> | null = null;
  let server: Awaited<ReturnType<typeof startSluice>> | null = null;
  try {
    const databaseUrl = postgres ? await postgres.createDatabase() : null;
    samba = await startSamba({ extraShares: { [SHARE]: shareDir } });
    server = await startSluice({ env: { SMB_TIMEOUT_MS: "30000", ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) } });
    const store: IndexStore = postgres && databaseUrl ? { engine: "postgres", cluster: postgres, databaseUrl } : { engine: "sqlite", dataDir: server.dataDir };
    // Samba's RPC service starts on the first share enumeration; not part of either figure.
    execFileSync("smbclient", ["-L", "//127.0.0.1", "-p", String(samba.port), "-U", `${samba.username}%${samba.password}`], { stdio: "ignore" });
    let mget = NaN;
    if (!probeOnly) {
      process.stdout.write("smbclient recursive mget of the share...\n");
      mget = mgetSeconds(samba, SHARE);
    }

    const request = client(server.api);
    const user = await signUp(request, "realbench");
    const group = await createGroup(request, user.token, "realbench");
    const { pipeline } = await addSmbSource(request, user.token, group, samba, "Real documents");

    process.stdout.write("full ingestion...\n");
    const cpuBefore = cpuSeconds(server.child.pid!);
    const smbdBefore = sambaCpuSeconds(samba);
    const postgresBefore = postgres ? treeCpuSeconds(postgres.pid()) : 0;
    const full = await runWatched(request, user.token, pipeline.id, { everyMs: 250, stallSeconds: STALL_SECONDS });
    const serverCpu = cpuSeconds(server.child.pid!) - cpuBefore;
    const smbdCpu = sambaCpuSeconds(samba) - smbdBefore;
    const postgresCpu = postgres ? treeCpuSeconds(postgres.pid()) - postgresBefore : 0;
    const rss = peakRssMb(server.child.pid!);
    const job = full.job;
    if (job.status !== "completed") process.stdout.write(`the ingestion ended ${job.status}: ${job.error_message}\n`);

    let rerun: Awaited<ReturnType<typeof runWatched>> | null = null;
    if (!probeOnly) {
      process.stdout.write("no-change re-run...\n");
      rerun = await runWatched(request, user.token, pipeline.id, { everyMs: 50, stallSeconds: STALL_SECONDS });
    }

    // What the index holds against each file's reference extraction.
    process.stdout.write("comparing the index with the reference extraction...\n");
    const chunks = await indexedChunks(store, pipeline.collection_id);
    const words = new Map<string, Set<string>>();
    const tally = new GlueTally();
    const notIndexed = new Map<string, string[]>();
    const errorsByPath = new Map((job.errors as Array<{ entity: string; message: string }>).map((e) => [e.entity, e.message]));
    for (const file of files) {
      const reference = referenceText(file, poppler.texts);
      const referenceWords = reference === null ? null : tokens(reference);
      const text = chunks.get(file.rel)?.join("\n");
      const indexedWords = text === undefined ? null : new Set(tokens(text));
      // Probe words come from the reference where there is one, so what extraction lost is missed.
      const own = referenceWords ? new Set(referenceWords) : indexedWords;
      if (own) words.set(file.rel, own);
      if (!probeOnly && reference !== null && indexedWords) tally.add(file, gluedWords(reference, indexedWords, poppler.rawTexts.get(file.rel)));
      if (!indexedWords && referenceWords && referenceWords.length >= HAS_TEXT_WORDS) {
        const list = notIndexed.get(file.type) ?? [];
        list.push(`${file.rel}${errorsByPath.has(`${SHARE}/${file.rel}`) ? `: ${errorsByPath.get(`${SHARE}/${file.rel}`)}` : ""}`);
        notIndexed.set(file.type, list);
      }
    }
    process.stdout.write("probe test: each indexed file searched by 3 of its rarest words...\n");
    const probes = await probeTest(
      request,
      user.token,
      pipeline.collection_id,
      files.filter((f) => chunks.has(f.rel)),
      words,
      (p, chunk) => (p.startsWith(`${SHARE}/`) ? chunks.get(p.slice(SHARE.length + 1))?.[chunk] : undefined),
    );

    // ------------------------------------------------------------ the report
    const byTypeJob = (job.by_type ?? {}) as Record<string, { files: number; bytes: number; failed: number; parse_s: number }>;
    const corpusByType = new Map<string, { files: number; bytes: number }>();
    for (const f of files) {
      const t = corpusByType.get(f.type) ?? { files: 0, bytes: 0 };
      t.files++;
      t.bytes += f.size;
      corpusByType.set(f.type, t);
    }
    const ingestMbps = totalBytes / 1024 / 1024 / full.seconds;
    const mgetMbps = totalBytes / 1024 / 1024 / mget;
    const popplerRatio = poppler.seconds > 0 ? full.seconds / poppler.seconds : NaN;
    const coreUse = (serverCpu + smbdCpu + postgresCpu) / (full.seconds * CORES);
    const probeShare = probes.probed ? probes.found / probes.probed : NaN;
    const rareShare = probes.rare.probed ? probes.rare.found / probes.rare.probed : NaN;
    const documentShare = probes.rareByDocument.probed ? probes.rareByDocument.found / probes.rareByDocument.probed : NaN;
    const notIndexedTotal = [...notIndexed.values()].reduce((n, l) => n + l.length, 0);
    const unsupported = [...corpusByType].filter(([type]) => !isSupported(`x.${type}`));
    const unsupportedFiles = unsupported.reduce((n, [, t]) => n + t.files, 0);

    const probeRows: Array<Array<string | number>> = [
      [
        `files found by their own rare words (>= 2 of 3 probes in the top 10; each word in <= ${PROBE_TOP_K} files)`,
        `${(rareShare * 100).toFixed(1)} % of ${probes.rare.probed}`,
        ">= 98 %",
        verdict(rareShare >= 0.98),
      ],
      [
        "the same files, top 10 documents as the search screen shows them (group_by=document)",
        `${(documentShare * 100).toFixed(1)} % of ${probes.rareByDocument.probed}`,
        ">= 98 %",
        verdict(documentShare >= 0.98),
      ],
      ["files found by their 3 rarest words, however common (every probed file)", `${(probeShare * 100).toFixed(1)} % of ${probes.probed}`, "", ""],
    ];
    const cpuLine = `${serverCpu.toFixed(1)} s; smbd ${smbdCpu.toFixed(1)} s${postgres ? `; PostgreSQL ${postgresCpu.toFixed(1)} s` : ""}; cores used ${(coreUse * 100).toFixed(0)} % of ${CORES}`;
    table(["measure", "value", "target", ""], [
      [
        "files",
        `${files.length} in the corpus; the job: ${job.entities_discovered} discovered (the test Samba's own docs share included), ${job.entities_failed} failed, ${job.entities_skipped} skipped`,
        "",
        "",
      ],
      ["full ingestion", `${full.seconds.toFixed(1)} s, ${(files.length / full.seconds).toFixed(1)} files/s, ${ingestMbps.toFixed(1)} MB/s`, "", ""],
      ["server CPU", cpuLine, "", ""],
      ...(probeOnly
        ? probeRows
        : [
            ["smbclient recursive mget", `${mget.toFixed(1)} s, ${mgetMbps.toFixed(1)} MB/s (ingestion / mget throughput ${(ingestMbps / mgetMbps).toFixed(2)}x)`, "", ""],
            [
              "pdftotext over the PDFs, one core",
              `${poppler.seconds.toFixed(1)} s for ${pdfs.length} PDFs (${poppler.failed} unreadable); whole ingestion / that: ${popplerRatio.toFixed(2)}x`,
              "<= 0.8x",
              verdict(popplerRatio <= 0.8),
            ],
            ["peak RSS of the server", `${rss.toFixed(0)} MB`, "< 400 MB", verdict(rss < 400)],
            ["stalls (>= 5 s with no file finished)", `${full.stalls.length}${full.stalls.length ? `, longest ${Math.max(...full.stalls.map((s) => s.seconds)).toFixed(1)} s` : ""}`, "", ""],
            ["no-change re-run", rerun ? `${rerun.seconds.toFixed(2)} s (${rerun.job.bytes_processed} bytes read)` : "", "", ""],
            ...probeRows,
            ...tally.rows().map(([measure, value]) => [measure, value, "", ""]),
            ["files with text but not indexed", String(notIndexedTotal), "", ""],
            ["files skipped as unsupported by extension", `${unsupportedFiles} (${unsupported.length} types)`, "", ""],
          ]),
    ]);

    process.stdout.write(`\nwhere the time went (the job's record; busy seconds, stages overlap): ${stageLine(job.timings)}\n`);
    table(
      ["type", "files", "MB", "failed", "parser s", "pdftotext s", "probes found"],
      [...corpusByType]
        .filter(([type]) => isSupported(`x.${type}`))
        .sort((a, b) => b[1].bytes - a[1].bytes)
        .map(([type, c]) => {
          const j = byTypeJob[type];
          const p = probes.byType.get(type);
          return [
            type,
            c.files,
            (c.bytes / 1024 / 1024).toFixed(1),
            j?.failed ?? 0,
            (j?.parse_s ?? 0).toFixed(1),
            type === "pdf" && !probeOnly ? poppler.seconds.toFixed(1) : "",
            p ? `${p.found}/${p.probed}` : "",
          ];
        }),
    );

    if (full.stalls.length) {
      process.stdout.write("\nstalls:\n");
      for (const s of full.stalls) process.stdout.write(`  at ${s.at.toFixed(1)} s for ${s.seconds.toFixed(1)} s: ${s.current}\n`);
    }
    const groups = new Map<string, { count: number; example: string }>();
    for (const e of job.errors as Array<{ entity: string; message: string }>) {
      const key = messageGroup(e.message);
      const g = groups.get(key) ?? { count: 0, example: e.entity };
      g.count++;
      groups.set(key, g);
    }
    if (groups.size) {
      const listed = (job.errors as unknown[]).length;
      process.stdout.write(`\nfailures grouped by message${job.entities_failed > listed ? ` (the job lists the first ${listed} of ${job.entities_failed})` : ""}:\n`);
      for (const [message, g] of [...groups].sort((a, b) => b[1].count - a[1].count)) process.stdout.write(`  ${g.count} x ${message} (e.g. ${g.example})\n`);
    }
    tally.print(process.stdout, opts.glueReport ?? false);
    if (notIndexed.size) {
      process.stdout.write("\nfiles with text but not indexed:\n");
      for (const [type, list] of notIndexed) process.stdout.write(`  ${type}: ${list.length}, e.g. ${list.slice(0, 5).join("; ")}\n`);
    }
    if (probes.missed.length) process.stdout.write(`\nfiles not found by their rare probes (first ${probes.missed.length}):\n${probes.missed.map((m) => `  ${m}`).join("\n")}\n`);
    reportMisses(probes.misses, probes.rare);
    if (unsupported.length) {
      const top = unsupported.sort((a, b) => b[1].files - a[1].files).slice(0, 12);
      process.stdout.write(`\nunsupported by extension (most files first): ${top.map(([t, c]) => `.${t} ${c.files}`).join(", ")}\n`);
    }
  } catch (error) {
    // What the server said last is usually why (it stopped, a thread failed).
    if (server) {
      process.stdout.write(`\nthe server: exit code ${server.child.exitCode}, signal ${server.child.signalCode}`);
      process.stdout.write(`\nthe server's last output:\n${server.output().split("\n").slice(-40).join("\n")}\n`);
    }
    throw error;
  } finally {
    await server?.stop();
    await samba?.stop();
    await postgres?.stop();
    cleanup();
  }
}
