import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { unzipSync } from "fflate";
import { startSamba } from "../fixtures/samba";
import { startSluice, tempDir } from "../fixtures/sluice-server";
import { addSmbSource, client, createGroup, signUp, type Request } from "../fixtures/http-client";
import { formatOf, isSupported } from "../../server/ingest/parse/file-types";
import { GlueTally, gluedWords, tokens } from "./glue-measure";
import { CORES, cpuSeconds, mgetSeconds, peakRssMb, runWatched, sambaCpuSeconds, stageLine, verdict } from "./measure";

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
 */

export interface RealBenchOptions {
  dir: string;
  limit?: number;
  /** List every run-together word of every file, not five examples of each kind. */
  glueReport?: boolean;
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

export function typeOf(name: string): string {
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
export function htmlReference(html: string): string {
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
 * pdftotext over every PDF, one after another (one core): seconds, and each file's text; then,
 * untimed, each file's raw reading (`-raw`, content order, every line end as drawn), which the
 * glue measure consults for line-end hyphens.
 */
function pdftotextAll(files: CorpusFile[]): { seconds: number; texts: Map<string, string>; rawTexts: Map<string, string>; failed: number } {
  const out = tempDir("sluice-pdftotext-");
  const texts = new Map<string, string>();
  const rawTexts = new Map<string, string>();
  let seconds = 0;
  let failed = 0;
  try {
    files.forEach((f, i) => {
      const target = path.join(out, `${i}.txt`);
      const start = performance.now();
      const run = spawnSync("pdftotext", ["-q", "-enc", "UTF-8", f.full, target], { stdio: "ignore" });
      seconds += (performance.now() - start) / 1000;
      if (run.status === 0 && fs.existsSync(target)) texts.set(f.rel, fs.readFileSync(target, "utf8"));
      else failed++;
    });
    files.forEach((f, i) => {
      const target = path.join(out, `${i}.raw.txt`);
      const run = spawnSync("pdftotext", ["-q", "-raw", "-enc", "UTF-8", f.full, target], { stdio: "ignore" });
      if (run.status === 0 && fs.existsSync(target)) rawTexts.set(f.rel, fs.readFileSync(target, "utf8"));
    });
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

/** Indexed body text per share-relative path, read from the collection's SQLite index file. */
function indexedTexts(dataDir: string, collectionId: string): Map<string, string> {
  const db = new Database(path.join(dataDir, "indexes", `${collectionId.toLowerCase()}.db`), { readonly: true, fileMustExist: true });
  const texts = new Map<string, string[]>();
  try {
    const rows = db
      .prepare(
        `SELECT d.path AS path, f.body AS body FROM chunks c JOIN documents d ON d.id = c.document_id
         JOIN chunks_fts f ON f.rowid = c.rowid ORDER BY d.path, c.chunk_index`,
      )
      .iterate() as Iterable<{ path: string; body: string }>;
    for (const row of rows) {
      if (!row.path.startsWith(`${SHARE}/`)) continue; // the test Samba's own `docs` share
      const rel = row.path.slice(SHARE.length + 1);
      const parts = texts.get(rel) ?? [];
      parts.push(row.body);
      texts.set(rel, parts);
    }
  } finally {
    db.close();
  }
  return new Map([...texts].map(([rel, parts]) => [rel, parts.join("\n")]));
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

async function probeTest(
  request: Request,
  token: string,
  collectionId: string,
  indexed: CorpusFile[],
  words: Map<string, Set<string>>,
): Promise<{
  found: number;
  probed: number;
  rare: { found: number; probed: number };
  /** The rare-word files counted the way the search screen shows results: top 10 documents (group_by=document). */
  rareByDocument: { found: number; probed: number };
  byType: Map<string, { found: number; probed: number }>;
  missed: string[];
}> {
  const documentFrequency = new Map<string, number>();
  for (const set of words.values()) for (const w of set) documentFrequency.set(w, (documentFrequency.get(w) ?? 0) + 1);
  const byType = new Map<string, { found: number; probed: number }>();
  const missed: string[] = [];
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
  for (const file of indexed) {
    const probes = rareWords(words.get(file.rel) ?? new Set(), documentFrequency, file.rel, PROBES_PER_FILE);
    if (probes.length < PROBES_PER_FILE) continue; // too few words of its own to probe
    const isRare = probes.every((w) => documentFrequency.get(w)! <= PROBE_TOP_K);
    const own = `${SHARE}/${file.rel}`;
    let hits = 0;
    let documentHits = 0;
    for (const word of probes) {
      const url = `/collections/${collectionId}/search?q=${encodeURIComponent(word)}&top_k=${PROBE_TOP_K}`;
      if (((await search(url)).results as Array<{ path: string }>).some((r) => r.path === own)) hits++;
      // The search screen asks for documents: one long document's many chunks cannot crowd the others out there.
      if (isRare && ((await search(`${url}&group_by=document`)).documents as Array<{ path: string }>).some((d) => d.path === own)) documentHits++;
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
    } else if (isRare && missed.length < 10) missed.push(`${file.rel} (${probes.map((w) => `${w} in ${documentFrequency.get(w)} files`).join(", ")}: ${hits}/3)`);
    byType.set(file.type, t);
  }
  return { found, probed, rare, rareByDocument, byType, missed };
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
  process.stdout.write(`real corpus: ${root}${opts.limit ? ` (subset of ${files.length})` : ""}\n${files.length} files, ${mb(totalBytes)}, ${pdfs.length} PDFs (${mb(pdfs.reduce((n, f) => n + f.size, 0))})\n`);

  process.stdout.write("pdftotext over the PDFs, one after another (one core)...\n");
  const poppler = pdftotextAll(pdfs);

  const samba = await startSamba({ extraShares: { [SHARE]: shareDir } });
  const server = await startSluice({ env: { SMB_TIMEOUT_MS: "30000" } });
  try {
    // Samba's RPC service starts on the first share enumeration; not part of either figure.
    execFileSync("smbclient", ["-L", "//127.0.0.1", "-p", String(samba.port), "-U", `${samba.username}%${samba.password}`], { stdio: "ignore" });
    process.stdout.write("smbclient recursive mget of the share...\n");
    const mget = mgetSeconds(samba, SHARE);

    const request = client(server.api);
    const user = await signUp(request, "realbench");
    const group = await createGroup(request, user.token, "realbench");
    const { pipeline } = await addSmbSource(request, user.token, group, samba, "Real documents");

    process.stdout.write("full ingestion...\n");
    const cpuBefore = cpuSeconds(server.child.pid!);
    const smbdBefore = sambaCpuSeconds(samba);
    const full = await runWatched(request, user.token, pipeline.id, { everyMs: 250, stallSeconds: STALL_SECONDS });
    const serverCpu = cpuSeconds(server.child.pid!) - cpuBefore;
    const smbdCpu = sambaCpuSeconds(samba) - smbdBefore;
    const rss = peakRssMb(server.child.pid!);
    const job = full.job;
    if (job.status !== "completed") process.stdout.write(`the ingestion ended ${job.status}: ${job.error_message}\n`);

    process.stdout.write("no-change re-run...\n");
    const rerun = await runWatched(request, user.token, pipeline.id, { everyMs: 50, stallSeconds: STALL_SECONDS });

    // What the index holds against each file's reference extraction.
    process.stdout.write("comparing the index with the reference extraction...\n");
    const indexed = indexedTexts(server.dataDir, pipeline.collection_id);
    const words = new Map<string, Set<string>>();
    const tally = new GlueTally();
    const notIndexed = new Map<string, string[]>();
    const errorsByPath = new Map((job.errors as Array<{ entity: string; message: string }>).map((e) => [e.entity, e.message]));
    for (const file of files) {
      const reference = referenceText(file, poppler.texts);
      const referenceWords = reference === null ? null : tokens(reference);
      const text = indexed.get(file.rel);
      const indexedWords = text === undefined ? null : new Set(tokens(text));
      // Probe words come from the reference where there is one, so what extraction lost is missed.
      const own = referenceWords ? new Set(referenceWords) : indexedWords;
      if (own) words.set(file.rel, own);
      if (reference !== null && indexedWords) tally.add(file, gluedWords(reference, indexedWords, poppler.rawTexts.get(file.rel)));
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
      files.filter((f) => indexed.has(f.rel)),
      words,
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
    const coreUse = (serverCpu + smbdCpu) / (full.seconds * CORES);
    const probeShare = probes.probed ? probes.found / probes.probed : NaN;
    const rareShare = probes.rare.probed ? probes.rare.found / probes.rare.probed : NaN;
    const documentShare = probes.rareByDocument.probed ? probes.rareByDocument.found / probes.rareByDocument.probed : NaN;
    const notIndexedTotal = [...notIndexed.values()].reduce((n, l) => n + l.length, 0);
    const unsupported = [...corpusByType].filter(([type]) => !isSupported(`x.${type}`));
    const unsupportedFiles = unsupported.reduce((n, [, t]) => n + t.files, 0);

    table(
      ["measure", "value", "target", ""],
      [
        [
          "files",
          `${files.length} in the corpus; the job: ${job.entities_discovered} discovered (the test Samba's own docs share included), ${job.entities_failed} failed, ${job.entities_skipped} skipped`,
          "",
          "",
        ],
        ["full ingestion", `${full.seconds.toFixed(1)} s, ${(files.length / full.seconds).toFixed(1)} files/s, ${ingestMbps.toFixed(1)} MB/s`, "", ""],
        ["server CPU", `${serverCpu.toFixed(1)} s; smbd ${smbdCpu.toFixed(1)} s; cores used ${(coreUse * 100).toFixed(0)} % of ${CORES}`, "", ""],
        ["smbclient recursive mget", `${mget.toFixed(1)} s, ${mgetMbps.toFixed(1)} MB/s (ingestion / mget throughput ${(ingestMbps / mgetMbps).toFixed(2)}x)`, "", ""],
        [
          "pdftotext over the PDFs, one core",
          `${poppler.seconds.toFixed(1)} s for ${pdfs.length} PDFs (${poppler.failed} unreadable); whole ingestion / that: ${popplerRatio.toFixed(2)}x`,
          "<= 0.8x",
          verdict(popplerRatio <= 0.8),
        ],
        ["peak RSS of the server", `${rss.toFixed(0)} MB`, "< 400 MB", verdict(rss < 400)],
        ["stalls (>= 5 s with no file finished)", `${full.stalls.length}${full.stalls.length ? `, longest ${Math.max(...full.stalls.map((s) => s.seconds)).toFixed(1)} s` : ""}`, "", ""],
        ["no-change re-run", `${rerun.seconds.toFixed(2)} s (${rerun.job.bytes_processed} bytes read)`, "", ""],
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
        [
          "files found by their 3 rarest words, however common (every probed file)",
          `${(probeShare * 100).toFixed(1)} % of ${probes.probed}`,
          "",
          "",
        ],
        ...tally.rows().map(([measure, value]) => [measure, value, "", ""]),
        ["files with text but not indexed", String(notIndexedTotal), "", ""],
        ["files skipped as unsupported by extension", `${unsupportedFiles} (${unsupported.length} types)`, "", ""],
      ],
    );

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
            type === "pdf" ? poppler.seconds.toFixed(1) : "",
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
    if (unsupported.length) {
      const top = unsupported.sort((a, b) => b[1].files - a[1].files).slice(0, 12);
      process.stdout.write(`\nunsupported by extension (most files first): ${top.map(([t, c]) => `.${t} ${c.files}`).join(", ")}\n`);
    }
  } catch (error) {
    // What the server said last is usually why (it stopped, a thread failed).
    process.stdout.write(`\nthe server: exit code ${server.child.exitCode}, signal ${server.child.signalCode}`);
    process.stdout.write(`\nthe server's last output:\n${server.output().split("\n").slice(-40).join("\n")}\n`);
    throw error;
  } finally {
    await server.stop();
    await samba.stop();
    cleanup();
  }
}
