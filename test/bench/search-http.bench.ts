import fs from "node:fs";
import path from "node:path";
import { startSamba } from "../fixtures/samba";
import { startSluice, tempDir } from "../fixtures/sluice-server";
import { startPostgres, type PostgresCluster } from "../fixtures/postgres";
import { addSmbSource, client, createGroup, signUp, waitForJobEnd } from "../fixtures/http-client";
import { seeded, writeCorpus, zipfWord } from "./corpus";
import { percentile } from "./measure";

/**
 * The search-over-HTTP section of the main bench on its own, for one back end: a corpus of
 * `files` text files ingested once over SMB, then `queries` searches (the main bench's query
 * mix). On PostgreSQL it also counts the statements the database ran per search (its
 * committed transactions: every statement outside a transaction is one) and, with
 * `logStatements`, keeps a copy of the cluster's statement log (log_min_duration_statement = 0)
 * for reading; with `apiProbe`, the main bench's API probe during a second ingestion first.
 * Run: `npm run bench -- --search-http [--files N] [--queries N] [--ingestions N] [--sqlite] [--log] [--probe]`.
 */
export interface SearchHttpBenchOptions {
  files: number;
  queries: number;
  engine: "sqlite" | "postgres";
  logStatements?: boolean;
  /** Also time GET /collections every 5 ms during a second ingestion (of the same share into a collection of its own). */
  apiProbe?: boolean;
  /**
   * Collections ingested from the same share (default 1), the first searched: with more, the
   * main bench's shape (its three throughput runs and the probe run fill the same tables, then
   * the first collection is searched at once, without warm-up searches or a pause).
   */
  ingestions?: number;
}

export interface SearchHttpBenchResult {
  p50: number;
  p95: number;
  p99: number;
  /** PostgreSQL only: statements (transactions) the database committed per search, averaged. */
  statementsPerSearch: number | null;
  /** PostgreSQL with logStatements: a copy of the cluster's log. */
  log: string | null;
  /** With apiProbe: GET /collections latencies during the second ingestion. */
  api: { p50: number; p99: number; requests: number } | null;
  /** Searches slower than 25 ms: when each started (ISO time, to set beside the statement log) and how long it took. */
  slow: { at: string; ms: number; q: string }[];
}

export async function runSearchHttpBench(options: SearchHttpBenchOptions): Promise<SearchHttpBenchResult> {
  const corpusDir = tempDir("sluice-corpus-");
  fs.chmodSync(corpusDir, 0o755);
  const corpus = await writeCorpus(corpusDir, { textFiles: options.files, binaryFiles: 0 });
  const samba = await startSamba({ extraShares: { corpus: corpusDir } });
  let postgres: PostgresCluster | null = null;
  let server: Awaited<ReturnType<typeof startSluice>> | null = null;
  try {
    postgres = options.engine === "postgres" ? await startPostgres() : null;
    const databaseUrl = postgres ? await postgres.createDatabase() : null;
    if (postgres && databaseUrl && options.logStatements) {
      // From the start: autovacuum's runs and any slow statement (a background ANALYZE), with
      // times, and the plan (EXPLAIN ANALYZE, BUFFERS) of any statement over 100 ms.
      const [{ db }] = await postgres.query<{ db: string }>(databaseUrl, "SELECT current_database() AS db");
      for (const sql of [
        "ALTER SYSTEM SET log_autovacuum_min_duration = 0",
        "ALTER SYSTEM SET log_min_duration_statement = 100",
        "ALTER SYSTEM SET log_line_prefix = '%m [%p] '",
        "SELECT pg_reload_conf()",
        `ALTER DATABASE "${db}" SET session_preload_libraries = 'auto_explain'`,
        `ALTER DATABASE "${db}" SET auto_explain.log_min_duration = 25`,
        `ALTER DATABASE "${db}" SET auto_explain.log_analyze = on`,
        `ALTER DATABASE "${db}" SET auto_explain.log_buffers = on`,
      ])
        await postgres.query(databaseUrl, sql);
    }
    server = await startSluice({ env: { SMB_TIMEOUT_MS: "15000", ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) } });
    const request = client(server.api);
    const user = await signUp(request, "bench");
    const group = await createGroup(request, user.token, "bench");
    const { pipeline } = await addSmbSource(request, user.token, group, samba, "Bench corpus");
    const trigger = await request("POST", `/data_pipelines/${pipeline.id}/ingest`, { token: user.token });
    if (trigger.status !== 202) throw new Error(`trigger failed: ${trigger.text}`);
    const job = await waitForJobEnd(request, user.token, pipeline.id, 600_000);
    if (job.status !== "completed") throw new Error(`ingestion failed: ${JSON.stringify(job)}`);
    const mainShape = (options.ingestions ?? 1) > 1;
    for (let i = 1; i < (options.ingestions ?? 1); i++) {
      const more = await addSmbSource(request, user.token, group, samba, `Bench corpus ${i + 1}`);
      const started = await request("POST", `/data_pipelines/${more.pipeline.id}/ingest`, { token: user.token });
      if (started.status !== 202) throw new Error(`trigger failed: ${started.text}`);
      const ended = await waitForJobEnd(request, user.token, more.pipeline.id, 600_000);
      if (ended.status !== "completed") throw new Error(`ingestion failed: ${JSON.stringify(ended)}`);
    }

    let log: string | null = null;
    if (postgres && databaseUrl && options.logStatements) {
      const [{ dir }] = await postgres.query<{ dir: string }>(databaseUrl, "SELECT current_setting('data_directory') AS dir");
      log = path.join(path.dirname(dir), "postgres.log");
      await postgres.query(databaseUrl, "ALTER SYSTEM SET log_min_duration_statement = 0");
      await postgres.query(databaseUrl, "SELECT pg_reload_conf()");
    }
    let api: SearchHttpBenchResult["api"] = null;
    if (options.apiProbe) {
      const probed = await addSmbSource(request, user.token, group, samba, "Bench corpus, API probe");
      const started = await request("POST", `/data_pipelines/${probed.pipeline.id}/ingest`, { token: user.token });
      if (started.status !== 202) throw new Error(`trigger failed: ${started.text}`);
      const latencies: number[] = [];
      for (;;) {
        const t = performance.now();
        const res = await request("GET", "/collections", { token: user.token });
        latencies.push(performance.now() - t);
        if (res.status !== 200) throw new Error(`GET /collections answered ${res.status}: ${res.text}`);
        const status = await request("GET", `/data_pipelines/${probed.pipeline.id}/ingest/status`, { token: user.token });
        if (status.body.status !== "processing") break;
        await new Promise((r) => setTimeout(r, 5));
      }
      latencies.sort((a, b) => a - b);
      api = { p50: percentile(latencies, 50), p99: percentile(latencies, 99), requests: latencies.length };
    }

    const random = seeded(7);
    const queries = Array.from({ length: options.queries }, () => Array.from({ length: 1 + Math.floor(random() * 3) }, () => zipfWord(corpus.words, random)).join(" "));
    const search = async (q: string) => {
      const res = await request("GET", `/collections/${pipeline.collection_id}/search?q=${encodeURIComponent(q)}`, { token: user.token });
      if (res.status !== 200) throw new Error(`search failed: ${res.text}`);
    };
    if (!mainShape) for (const q of queries.slice(0, 20)) await search(q); // warm caches, as the main bench's re-run does

    const committed = async () => {
      if (!postgres || !databaseUrl || mainShape) return 0;
      // Statistics reach pg_stat_database when a backend is idle for a moment (at most ~1 s).
      await new Promise((r) => setTimeout(r, 1500));
      const [row] = await postgres.query<{ n: string }>(databaseUrl, "SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()");
      return Number(row.n);
    };
    const before = await committed();
    const latencies: number[] = [];
    const slow: SearchHttpBenchResult["slow"] = [];
    for (const q of queries) {
      const at = new Date().toISOString();
      const t = performance.now();
      await search(q);
      const ms = performance.now() - t;
      latencies.push(ms);
      if (ms > 25) slow.push({ at, ms, q });
    }
    if (log) {
      // The cluster's directory goes with it: keep a copy of the log.
      const kept = path.join(tempDir("sluice-pg-log-"), "postgres.log");
      fs.copyFileSync(log, kept);
      log = kept;
    }
    // The statistics query itself is one transaction.
    const statementsPerSearch = postgres && !mainShape ? ((await committed()) - before - 1) / queries.length : null;
    latencies.sort((a, b) => a - b);
    return { p50: percentile(latencies, 50), p95: percentile(latencies, 95), p99: percentile(latencies, 99), statementsPerSearch, log, api, slow };
  } finally {
    await server?.stop();
    await postgres?.stop();
    await samba.stop();
    fs.rmSync(corpusDir, { recursive: true, force: true });
  }
}
