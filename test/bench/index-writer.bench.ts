import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { GROUP_COMMIT, PARALLEL_BATCHES } from "../../server/ingest/batched-index-writer";
import { chunkText } from "../../server/ingest/parse/chunker";
import type { DocumentInput } from "../../server/search/search-index";
import { SqliteFtsIndex } from "../../server/search/sqlite";
import { prose, seeded, vocabulary } from "./corpus";
import { median } from "./measure";

/**
 * The SQLite index writer alone (issue 18): the bench corpus's 2,000 text files, already
 * chunked, written through SqliteFtsIndex.upsertDocuments in batches of PARALLEL_BATCHES'
 * size and of GROUP_COMMIT's cap, interleaved three times each. CPU seconds of this thread
 * (the writer thread's work in a job) are the figure: on a shared machine they move less than
 * wall time. `npm run bench -- --writer` (about half a minute).
 */

export interface WriterBenchRow {
  batch: number;
  cpuSeconds: number;
  wallSeconds: number;
  /** The file and its WAL after the load. */
  megabytes: number;
}

/** The bench corpus's text files (corpus.ts: same generator, same seed) as parsed documents. */
function corpusDocuments(files: number): DocumentInput[] {
  const random = seeded(42);
  const words = vocabulary(20_000, random);
  return Array.from({ length: files }, (_, i) => {
    const ext = i % 2 ? "md" : "txt";
    const body = (ext === "md" ? `# Memo ${i}\n\n` : "") + prose(words, random, 10_000);
    return {
      sourceId: "bench",
      path: `corpus/dept-${i % 20}/memo-${i}.${ext}`,
      title: ext === "md" ? `Memo ${i}` : `memo-${i}`,
      size: body.length,
      modifiedAt: new Date(0),
      version: null,
      chunks: chunkText(body).map((chunk, chunkIndex) => ({ chunkIndex, text: chunk.text })),
    };
  });
}

async function writeAll(docs: DocumentInput[], batch: number): Promise<WriterBenchRow> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sluice-writer-bench-"));
  const index = new SqliteFtsIndex({ dir });
  const collection = crypto.randomUUID();
  try {
    // The file and its schema first, as a job's first write finds them.
    await index.upsertDocuments(collection, docs.slice(0, 1));
    const cpu = process.cpuUsage();
    const start = performance.now();
    for (let i = 1; i < docs.length; i += batch) await index.upsertDocuments(collection, docs.slice(i, i + batch));
    const used = process.cpuUsage(cpu);
    const wallSeconds = (performance.now() - start) / 1000;
    const file = index.filePath(collection);
    const bytes = [file, `${file}-wal`].reduce((sum, f) => sum + (fs.statSync(f, { throwIfNoEntry: false })?.size ?? 0), 0);
    return { batch, cpuSeconds: (used.user + used.system) / 1e6, wallSeconds, megabytes: bytes / 1024 / 1024 };
  } finally {
    await index.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export async function runWriterBench(files = 2000): Promise<WriterBenchRow[]> {
  const docs = corpusDocuments(files);
  const sizes = [PARALLEL_BATCHES.maxDocuments, GROUP_COMMIT.maxDocuments];
  const runs = new Map<number, WriterBenchRow[]>(sizes.map((size) => [size, []]));
  for (let round = 0; round < 3; round++) for (const size of sizes) runs.get(size)!.push(await writeAll(docs, size));
  return sizes.map((batch) => {
    const rows = runs.get(batch)!;
    return {
      batch,
      cpuSeconds: median(rows.map((r) => r.cpuSeconds)),
      wallSeconds: median(rows.map((r) => r.wallSeconds)),
      megabytes: median(rows.map((r) => r.megabytes)),
    };
  });
}
