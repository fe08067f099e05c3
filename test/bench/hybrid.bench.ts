import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { DataSource } from "typeorm";
import { openDatabase } from "../../server/data/data-source";
import { embedCollection, EMBED_BATCH } from "../../server/search/embed-collection";
import { hybridSearch } from "../../server/search/hybrid";
import { CollectionRetrieval } from "../../server/collections/collection-retrieval";
import { retrievePassages } from "../../server/ask/retrieval";
import { DocumentPermissions } from "../../server/access/document-permissions";
import { buildGroundedPrompt } from "../../server/ask/grounded-prompt";
import { PostgresFtsIndex } from "../../server/search/postgres";
import { PostgresVectorStore } from "../../server/search/postgres";
import type { SearchIndex } from "../../server/search/search-index";
import { SqliteFtsIndex } from "../../server/search/sqlite";
import { SqliteVecStore } from "../../server/search/sqlite";
import { normalise, type VectorStore } from "../../server/search/vector-store";
import { startPostgres, type PostgresCluster } from "../fixtures/postgres";
import { prose, seeded, vocabulary, zipfWord } from "./corpus";

/** Who asks in the bench: no linked account (the product's default, which reads the collection's ACL version per ask). */
const BENCH_ACTOR = { userId: "00000000-0000-4000-8000-000000000001", email: "bench@example.com" };

/**
 * Hybrid retrieval on a synthetic collection, straight against the index and the vector store
 * (no HTTP, no model server): the embedding stage's own cost (its run time less the simulated
 * model latency), then hybrid queries (BM25 + vector search + fusion; embedding the query is
 * the model server's time and not counted), then an ask's own time before its first byte goes
 * to the model server (retrieval as the ask does it, whole chunk texts, and the grounded
 * prompt), keyword and hybrid. Vectors are random unit vectors of `dimensions` (768:
 * nomic-embed-text's size). Run directly:
 * `node dist/test/bench/hybrid.bench.js [chunks] [queries] [--postgres]`.
 */
export interface HybridBenchOptions {
  chunks: number;
  queries: number;
  dimensions?: number;
  engine?: "sqlite" | "postgres";
  /** Simulated model latency per /api/embed batch, in ms. */
  modelLatencyMs?: number;
}

export interface HybridBenchResult {
  p50: number;
  p95: number;
  /** Vector search alone (the PostgreSQL fallback's exact similarity is the part that grows). */
  vectorP95: number;
  /** The embedding stage's time with the simulated model latency subtracted, per 1,000 chunks. */
  stageOverheadMsPer1000: number;
  /** An ask's own time before its first byte to the model server (retrieval of 5 passages + prompt), per retrieval. */
  ask: { keyword: Percentiles; hybrid: Percentiles };
  /** The vector search in use ("sqlite-vec", "pgvector", "exact similarity in SQL"). */
  vectorEngine: string;
  chunks: number;
}

export interface Percentiles {
  p50: number;
  p95: number;
}

const CHUNKS_PER_DOCUMENT = 10;
/** An ask's defaults: 5 passages, and an 8k-token context window. */
const ASK_TOP_K = 5;
const ASK_CONTEXT_TOKENS = 8192;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export async function runHybridBench(options: HybridBenchOptions): Promise<HybridBenchResult> {
  const dimensions = options.dimensions ?? 768;
  const latency = options.modelLatencyMs ?? 5;
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "sluice-hybrid-bench-"));
  let cluster: PostgresCluster | null = null;
  let db: DataSource | null = null;
  let index: SearchIndex;
  let vectors: VectorStore;
  if (options.engine === "postgres") {
    cluster = await startPostgres();
    db = await openDatabase({ dataDir: root, databaseUrl: await cluster.createDatabase() });
    index = new PostgresFtsIndex(db);
    // pgvector where this PostgreSQL has it (as the server chooses), else the exact-similarity fallback.
    vectors = await PostgresVectorStore.open(db);
  } else {
    index = new SqliteFtsIndex({ dir: path.join(root, "indexes") });
    vectors = new SqliteVecStore(path.join(root, "vectors"));
  }
  const random = seeded(7);
  const words = vocabulary(20_000, random);
  const randomVector = () => Array.from({ length: dimensions }, () => random() * 2 - 1);
  const collection = crypto.randomUUID();
  try {
    for (let d = 0, written = 0; written < options.chunks; d++) {
      const count = Math.min(CHUNKS_PER_DOCUMENT, options.chunks - written);
      const chunks = Array.from({ length: count }, (_, i) => ({ chunkIndex: i, text: prose(words, random, 1000) }));
      await index.upsertDocument(collection, { sourceId: "bench", path: `doc-${d}.txt`, title: `doc ${d}`, size: 1, modifiedAt: new Date(0), version: null, chunks });
      written += count;
    }
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    let batches = 0;
    const embedder = {
      embed: async (_model: string, inputs: string[]) => {
        batches += 1;
        await sleep(latency);
        return inputs.map(() => randomVector());
      },
    };
    const stageStart = performance.now();
    await embedCollection({ index, vectors, embedder }, collection, "bench-model", () => undefined);
    const stageMs = performance.now() - stageStart - batches * latency;
    if (batches < options.chunks / EMBED_BATCH) throw new Error("the stage embedded fewer chunks than were indexed");

    const times: number[] = [];
    const vectorTimes: number[] = [];
    for (let q = 0; q < options.queries; q++) {
      const query = [zipfWord(words, random), zipfWord(words, random)].join(" ");
      const vector = normalise(randomVector());
      const start = performance.now();
      await hybridSearch((k) => index.search(collection, query, k), async (k) => {
        const vectorStart = performance.now();
        const hits = await vectors.search(collection, vector, k);
        vectorTimes.push(performance.now() - vectorStart);
        return hits;
      }, 10);
      times.push(performance.now() - start);
    }
    times.sort((a, b) => a - b);
    vectorTimes.sort((a, b) => a - b);

    // Asks, as AskService does them once the context length is known (it is remembered per
    // model): the same CollectionRetrieval as the server, without and with an embedding model.
    // The query's embedding is the model server's time: here it is a precomputed vector.
    const queryVectors = Array.from({ length: options.queries }, () => randomVector());
    let asked = 0;
    const retrieval = new CollectionRetrieval(index, vectors, { embed: async () => [queryVectors[asked % queryVectors.length]] });
    const permissions = new DocumentPermissions(index);
    const askTimes = async (embeddingModel: string | null): Promise<Percentiles> => {
      const askRandom = seeded(11);
      const latencies: number[] = [];
      for (asked = 0; asked < options.queries; asked++) {
        const question = [zipfWord(words, askRandom), zipfWord(words, askRandom)].join(" ");
        const start = performance.now();
        buildGroundedPrompt(question, await retrievePassages(retrieval, permissions, BENCH_ACTOR, { collectionId: collection, embeddingModel, query: question, topK: ASK_TOP_K }), [], ASK_CONTEXT_TOKENS);
        latencies.push(performance.now() - start);
      }
      latencies.sort((a, b) => a - b);
      return { p50: percentile(latencies, 50), p95: percentile(latencies, 95) };
    };
    const ask = { keyword: await askTimes(null), hybrid: await askTimes("bench-model") };
    return {
      ask,
      vectorEngine: vectors.engine,
      p50: percentile(times, 50),
      p95: percentile(times, 95),
      vectorP95: percentile(vectorTimes, 95),
      stageOverheadMsPer1000: (stageMs / options.chunks) * 1000,
      chunks: options.chunks,
    };
  } finally {
    await index.close();
    await vectors.close();
    await db?.destroy();
    await cluster?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  }
}

if (require.main === module) {
  const [chunks = "10000", queries = "200"] = process.argv.slice(2).filter((a) => !a.startsWith("--"));
  const engine = process.argv.includes("--postgres") ? "postgres" : "sqlite";
  void runHybridBench({ chunks: Number(chunks), queries: Number(queries), engine }).then((r) => {
    const goal = engine === "postgres" ? 60 : 30;
    const line = (what: string, t: Percentiles) => `  ask, Sluice's time before the first byte to Ollama, ${what} (retrieval + prompt): p50 ${t.p50.toFixed(2)} ms, p95 ${t.p95.toFixed(2)} ms (goal p95 < ${goal} ms: ${t.p95 < goal ? "ok" : "MISSED"})\n`;
    process.stdout.write(
      `${engine} (${r.vectorEngine}), ${r.chunks} chunks: hybrid search p50 ${r.p50.toFixed(1)} ms, p95 ${r.p95.toFixed(1)} ms; vector search p95 ${r.vectorP95.toFixed(1)} ms\n` +
        `  embedding stage's own time (model latency subtracted): ${r.stageOverheadMsPer1000.toFixed(0)} ms per 1,000 chunks\n` +
        line("keyword", r.ask.keyword) +
        line("hybrid", r.ask.hybrid),
    );
  });
}
