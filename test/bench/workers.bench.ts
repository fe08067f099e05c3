import fs from "node:fs";
import path from "node:path";
import { client, createGroup, signUp } from "../fixtures/http-client";
import { startPostgres } from "../fixtures/postgres";
import { redisMissingReason, startRedis } from "../fixtures/redis";
import { startSluice, tempDir } from "../fixtures/sluice-server";
import { startWorker, type SluiceWorker } from "../fixtures/sluice-worker";
import { writeCorpus } from "./corpus";

export interface WorkersBenchOptions {
  /** Text files in each of the two pipelines' folders. */
  files: number;
  /** PDF and DOCX reports (~1 MB each) in each folder. */
  binaryFiles: number;
  concurrencies: number[];
}

export interface WorkersBenchResult {
  concurrency: number;
  files: number;
  seconds: number;
  filesPerSecond: number;
}

/**
 * `npm run bench -- --workers`: a team server as it is deployed (PostgreSQL, Redis, an API process
 * that takes no jobs and two `npm run worker` processes) ingesting two folder pipelines triggered
 * together, once per INGEST_CONCURRENCY; the aggregate files/s from the first trigger to the end
 * of the last job. Each run starts on a fresh database, Redis and DATA_DIR, so neither run finds
 * the other's documents indexed.
 */
export async function runWorkersBench(options: WorkersBenchOptions, log: (line: string) => void): Promise<WorkersBenchResult[]> {
  const missing = redisMissingReason();
  if (missing) throw new Error(`the workers benchmark needs Redis: ${missing}`);
  const root = fs.realpathSync(tempDir("sluice-workers-bench-"));
  const folders = ["first", "second"].map((name) => path.join(root, name));
  for (const folder of folders) await writeCorpus(folder, { textFiles: options.files, binaryFiles: options.binaryFiles });
  const postgres = await startPostgres();
  const results: WorkersBenchResult[] = [];
  try {
    for (const concurrency of options.concurrencies) {
      const redis = await startRedis();
      const dataDir = tempDir();
      const env = { DATABASE_URL: await postgres.createDatabase(), REDIS_URL: redis.url, FOLDER_SOURCE_ROOTS: root, INGEST_CONCURRENCY: String(concurrency) };
      const api = await startSluice({ dataDir, env: { ...env, SLUICE_WORKER: "0" } });
      const workers: SluiceWorker[] = [startWorker({ ...env, DATA_DIR: dataDir }), startWorker({ ...env, DATA_DIR: dataDir })];
      try {
        await Promise.all(workers.map((worker) => waitUntil(() => worker.output().includes("worker ready"), 60_000, () => `a worker did not start:\n${worker.output()}`)));
        const request = client(api.api);
        const { token } = await signUp(request, "bench-workers");
        const group = await createGroup(request, token, "bench-workers");
        const pipelines: string[] = [];
        for (const folder of folders) {
          const body = { data_source: { data_source_name: `Bench ${path.basename(folder)}` }, folder_source: { path: folder } };
          const created = await request("POST", `/data_sources/folder/${group}`, { token, body });
          if (created.status !== 201) throw new Error(`source creation failed: ${created.text}`);
          pipelines.push(created.body.pipeline.id);
        }
        const start = performance.now();
        for (const id of pipelines) {
          const trigger = await request("POST", `/data_pipelines/${id}/ingest`, { token });
          if (trigger.status !== 202) throw new Error(`trigger failed: ${trigger.text}`);
        }
        let files = 0;
        for (const id of pipelines) {
          let status: Record<string, any>;
          do {
            await new Promise((r) => setTimeout(r, 50));
            status = (await request("GET", `/data_pipelines/${id}/ingest/status`, { token })).body;
          } while (status.status === "processing");
          if (status.status !== "completed") throw new Error(`ingestion failed: ${JSON.stringify(status)}`);
          files += status.entities_processed;
        }
        const seconds = (performance.now() - start) / 1000;
        const result = { concurrency, files, seconds, filesPerSecond: files / seconds };
        log(`INGEST_CONCURRENCY=${concurrency}: ${files} files of two pipelines in ${seconds.toFixed(1)} s, ${result.filesPerSecond.toFixed(0)} files/s`);
        results.push(result);
      } finally {
        for (const worker of workers) await worker.stop();
        await api.stop();
        await redis.stop();
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    }
  } finally {
    await postgres.stop();
    fs.rmSync(root, { recursive: true, force: true });
  }
  return results;
}

async function waitUntil(check: () => boolean, ms: number, failure: () => string): Promise<void> {
  for (const deadline = Date.now() + ms; !check(); ) {
    if (Date.now() > deadline) throw new Error(failure());
    await new Promise((r) => setTimeout(r, 50));
  }
}
