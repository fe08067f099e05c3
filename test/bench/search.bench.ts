import crypto from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { DataSource } from "typeorm";
import { SqliteFtsIndex } from "../../server/search/sqlite";
import { PostgresFtsIndex } from "../../server/search/postgres";
import type { SearchIndex } from "../../server/search/search-index";
import { openDatabase } from "../../server/data/data-source";
import { retrievePassages } from "../../server/ask/retrieval";
import { DocumentPermissions } from "../../server/access/document-permissions";
import { CollectionRetrieval } from "../../server/collections/collection-retrieval";
import type { VectorStore } from "../../server/search/vector-store";
import type { Embedder } from "../../server/search/embed-collection";
import { buildGroundedPrompt } from "../../server/ask/grounded-prompt";
import { startPostgres, type PostgresCluster } from "../fixtures/postgres";

/** Who asks in the bench: no linked account (the product's default, which reads the collection's ACL version per ask). */
const BENCH_ACTOR = { userId: "00000000-0000-4000-8000-000000000001", email: "bench@example.com" };

/**
 * Search latency on a synthetic collection, straight against the index (no HTTP): chunks of
 * ~1,000 characters drawn from a skewed vocabulary of ~20,000 made-up words, loaded through
 * the production upsertDocument path, then 1-3 term queries drawn with the same skew.
 * Run directly: `node --import tsx test/bench/search.bench.ts [chunks] [queries] [--postgres]`.
 */

export interface SearchBenchOptions {
  chunks: number;
  queries: number;
  /** Chunks per document (one upsert each); 10 by default. */
  chunksPerDocument?: number;
  /** Run FTS5 'optimize' after the load (default true); ingestion may not. */
  optimize?: boolean;
  /** Keep the index directory instead of deleting it afterwards. */
  keep?: boolean;
  /**
   * Build into this directory and keep it (SQLite: the collection file; PostgreSQL: the
   * cluster's data directory), with `bench.json` naming the collection, for `reuseDir`.
   */
  keepDir?: string;
  /** Search an index kept by `keepDir` instead of building one (`chunks` is then what it holds). */
  reuseDir?: string;
  /** How many of the slowest queries to list (`slowest` in the result). */
  slowest?: number;
  /** SQLite FTS5 (default) or PostgreSQL full-text on a throwaway local cluster. */
  engine?: "sqlite" | "postgres";
  /** Also time an ask's own work before its first byte goes to the model server: retrieval (top 5) + the grounded prompt. */
  ask?: boolean;
}

export interface SearchBenchResult {
  p50: number;
  p95: number;
  p99: number;
  max: number;
  /** Mean hits per query and how many queries found nothing. */
  meanHits: number;
  emptyQueries: number;
  buildSeconds: number;
  optimizeSeconds: number;
  indexBytes: number;
  chunks: number;
  queries: number;
  dir: string;
  /** With `ask`: retrieval + prompt per question, keyword retrieval (ms). */
  ask: { p50: number; p95: number } | null;
  /** The slowest queries, slowest first, with their hit count. */
  slowest: Array<{ query: string; ms: number; hits: number }>;
  engine: "sqlite" | "postgres";
}

/** What `keepDir` writes beside the kept index, so `reuseDir` can search it again. */
interface KeptIndex {
  engine: "sqlite" | "postgres";
  chunks: number;
  collection: string;
  /** PostgreSQL: the database's name in the kept cluster. */
  database: string | null;
}

const VOCABULARY_SIZE = 20_000;
const CHUNK_CHARS = 1000;
const SYLLABLES = ["ka", "lo", "mi", "ra", "ten", "vo", "qui", "sel", "dan", "por", "ux", "bel", "tor", "fen", "gal", "rin"];

/** Deterministic generator (LCG), so every run indexes the same corpus and asks the same queries. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function vocabulary(size: number, random: () => number): string[] {
  const words = new Set<string>();
  while (words.size < size) {
    const n = 2 + Math.floor(random() * 4);
    words.add(Array.from({ length: n }, () => SYLLABLES[Math.floor(random() * SYLLABLES.length)]).join(""));
  }
  return [...words];
}

/** Skewed draw: low indexes are common (the first word is ~4% of all words), most are rare. */
function skewedWord(words: string[], random: () => number): string {
  return words[Math.floor(words.length * random() ** 3)];
}

function chunkText(words: string[], random: () => number): string {
  const sentences: string[] = [];
  let length = 0;
  while (length < CHUNK_CHARS) {
    const sentence = Array.from({ length: 8 + Math.floor(random() * 10) }, () => skewedWord(words, random)).join(" ");
    sentences.push(`${sentence.charAt(0).toUpperCase() + sentence.slice(1)}.`);
    length += sentence.length + 2;
  }
  return sentences.join(" ");
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function dirBytes(dir: string): number {
  return fs.readdirSync(dir).reduce((sum, f) => sum + fs.statSync(path.join(dir, f)).size, 0);
}

export async function runSearchBench(options: SearchBenchOptions): Promise<SearchBenchResult> {
  const perDocument = options.chunksPerDocument ?? 10;
  const keptDir = options.keepDir ?? options.reuseDir;
  const kept: KeptIndex | null = options.reuseDir ? (JSON.parse(fs.readFileSync(path.join(options.reuseDir, "bench.json"), "utf8")) as KeptIndex) : null;
  const engine = kept?.engine ?? options.engine ?? "sqlite";
  const chunkCount = kept?.chunks ?? options.chunks;
  if (keptDir) fs.mkdirSync(keptDir, { recursive: true });
  const root = keptDir ? path.resolve(keptDir) : fs.mkdtempSync(path.join(os.tmpdir(), "sluice-search-bench-"));
  const dir = path.join(root, "indexes");
  let cluster: PostgresCluster | null = null;
  let db: DataSource | null = null;
  let index: SearchIndex & { optimize?(collectionId: string): Promise<void> };
  let database = kept?.database ?? null;
  if (engine === "postgres") {
    cluster = await startPostgres(keptDir ? { keepDir: path.join(root, "postgres") } : {});
    const url = database ? `postgres://sluice@127.0.0.1:${cluster.port}/${database}` : await cluster.createDatabase();
    database = new URL(url).pathname.slice(1);
    db = await openDatabase({ dataDir: root, databaseUrl: url });
    index = new PostgresFtsIndex(db);
  } else {
    index = new SqliteFtsIndex({ dir });
  }
  const collection = kept?.collection ?? crypto.randomUUID();
  const sourceId = crypto.randomUUID();
  const random = seeded(42);
  const words = vocabulary(VOCABULARY_SIZE, random);
  try {
    const buildStart = performance.now();
    for (let d = 0, written = kept ? chunkCount : 0; written < chunkCount; d++) {
      const count = Math.min(perDocument, chunkCount - written);
      const chunks = Array.from({ length: count }, (_, i) => ({ chunkIndex: i, text: chunkText(words, random) }));
      const folder = `folder-${d % 100}`;
      await index.upsertDocument(collection, {
        sourceId,
        path: `${folder}/${skewedWord(words, random)}-${d}.txt`,
        title: `${skewedWord(words, random)} ${skewedWord(words, random)} ${d}`,
        size: chunks.reduce((sum, c) => sum + c.text.length, 0),
        modifiedAt: new Date(1_700_000_000_000 + d * 1000),
        version: null,
        chunks,
      });
      written += count;
    }
    const buildSeconds = (performance.now() - buildStart) / 1000;
    const optimizeStart = performance.now();
    if (!kept && (options.optimize ?? true)) {
      if (db) await db.query("VACUUM ANALYZE search_chunks"); // merges GIN's pending list, as FTS5's optimize merges segments
      else await index.optimize!(collection);
    }
    const optimizeSeconds = (performance.now() - optimizeStart) / 1000;
    if (options.keepDir) {
      const record: KeptIndex = { engine, chunks: chunkCount, collection, database };
      fs.writeFileSync(path.join(root, "bench.json"), `${JSON.stringify(record, null, 2)}\n`);
    }

    const queryRandom = seeded(7);
    const queries = Array.from({ length: options.queries }, () =>
      Array.from({ length: 1 + Math.floor(queryRandom() * 3) }, () => skewedWord(words, queryRandom)).join(" "),
    );
    for (const q of queries.slice(0, 20)) await index.search(collection, q, 10); // warm the page cache
    const latencies: number[] = [];
    const timed: SearchBenchResult["slowest"] = [];
    let hits = 0;
    let emptyQueries = 0;
    for (const q of queries) {
      const t = performance.now();
      const found = await index.search(collection, q, 10);
      const ms = performance.now() - t;
      latencies.push(ms);
      timed.push({ query: q, ms, hits: found.length });
      hits += found.length;
      if (found.length === 0) emptyQueries++;
    }
    latencies.sort((a, b) => a - b);
    const slowest = timed.sort((a, b) => b.ms - a.ms).slice(0, options.slowest ?? 0);
    let ask: SearchBenchResult["ask"] = null;
    if (options.ask) {
      // The context length is remembered per model, so an ask's own time is retrieval + prompt (an 8k-token window).
      // A collection without an embedding model: its asks never reach the vector store or an embedder.
      const keywordRetrieval = new CollectionRetrieval(index, {} as VectorStore, {} as Embedder);
      const permissions = new DocumentPermissions(index);
      const askLatencies: number[] = [];
      for (const q of queries) {
        const t = performance.now();
        buildGroundedPrompt(q, await retrievePassages(keywordRetrieval, permissions, BENCH_ACTOR, { collectionId: collection, embeddingModel: null, query: q, topK: 5 }), [], 8192);
        askLatencies.push(performance.now() - t);
      }
      askLatencies.sort((a, b) => a - b);
      ask = { p50: percentile(askLatencies, 50), p95: percentile(askLatencies, 95) };
    }
    await index.close();
    return {
      p50: percentile(latencies, 50),
      p95: percentile(latencies, 95),
      p99: percentile(latencies, 99),
      max: latencies[latencies.length - 1],
      meanHits: hits / queries.length,
      emptyQueries,
      buildSeconds,
      optimizeSeconds,
      indexBytes: db
        ? Number(((await db.query("SELECT pg_total_relation_size('search_chunks') + pg_total_relation_size('search_documents') AS n")) as { n: number }[])[0].n)
        : dirBytes(dir),
      chunks: chunkCount,
      queries: options.queries,
      dir,
      ask,
      slowest,
      engine,
    };
  } finally {
    await index.close();
    if (db?.isInitialized) await db.destroy();
    await cluster?.stop();
    if (!options.keep && !keptDir) fs.rmSync(root, { recursive: true, force: true });
  }
}

if (require.main === module) {
  const chunks = Number(process.argv[2] ?? 100_000);
  const queries = Number(process.argv[3] ?? 1000);
  const engine = process.argv.includes("--postgres") ? "postgres" : "sqlite";
  runSearchBench({ chunks, queries, optimize: !process.argv.includes("--no-optimize"), engine, ask: true })
    .then((r) => {
      process.stdout.write(
        [
          `search bench (${engine}): ${r.chunks} chunks, ${r.queries} queries`,
          `  build (upsertDocument, ${Math.ceil(r.chunks / 10)} documents): ${r.buildSeconds.toFixed(1)} s, optimize ${r.optimizeSeconds.toFixed(1)} s`,
          `  index size: ${(r.indexBytes / 1024 / 1024).toFixed(1)} MB`,
          `  latency: p50 ${r.p50.toFixed(2)} ms, p95 ${r.p95.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, max ${r.max.toFixed(2)} ms`,
          `  mean hits ${r.meanHits.toFixed(1)}, queries with no hit ${r.emptyQueries}`,
          `  target p95 < 20 ms: ${r.p95 < 20 ? "ok" : "MISSED"}`,
          `  ask before the first byte to Ollama (keyword retrieval + prompt): p50 ${r.ask!.p50.toFixed(2)} ms, p95 ${r.ask!.p95.toFixed(2)} ms`,
          "",
        ].join("\n"),
      );
    })
    .catch((error: unknown) => {
      process.stderr.write(`search bench failed: ${(error as Error).stack ?? error}\n`);
      process.exit(1);
    });
}
