import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import path from "node:path";
import { createInterface, type Interface } from "node:readline";
import Database from "better-sqlite3";

/**
 * The engines' own time on a query (issue 36 item 1): what an expert would ask the engine for
 * the same search, without Sluice around it. For each query, the same attempts a search box
 * makes, each one statement, stopping at the first that finds rows: every word; then every
 * word with the last as a prefix (an unfinished word, as Sluice takes a last word of 3 or more
 * letters); then any word. Each statement ranks the matches, keeps the best `limit` and marks a
 * snippet for those only: the core of a keyword search, minus Sluice's exact-word tier, rank
 * window, per-document spread, permission filter, documents' paths, JSON and HTTP.
 *
 * Queries are words of letters only (the bench's own), so they go into the statements as they are.
 */

export interface EngineTimer {
  /** The query's time in ms (all attempts it took) and the rows the answering attempt found. */
  time(query: string): Promise<{ ms: number; rows: number }>;
  close(): Promise<void>;
}

/** The attempts as word lists and joiners: all, all with the last word a prefix, any. */
function attempts(query: string): Array<{ words: string[]; all: boolean; prefix: boolean }> {
  const words = query.split(/\s+/).filter(Boolean);
  const out = [{ words, all: true, prefix: false }];
  if (words.at(-1)!.length >= 3) out.push({ words, all: true, prefix: true });
  if (words.length > 1) out.push({ words, all: false, prefix: false });
  return out;
}

/**
 * SQLite: the collection's FTS5 file opened read-only beside the server, and FTS5's own ranked
 * query on its stemmed table: `MATCH` with `ORDER BY rank` (bm25 with the same column weights
 * as Sluice: title 5, path 2, body 1), which FTS5 sorts itself, so snippet() runs only for the
 * rows the LIMIT keeps.
 */
export function sqliteEngine(indexFile: string, limit: number): EngineTimer {
  const db = new Database(indexFile, { readonly: true, fileMustExist: true });
  const ranked = db.prepare(
    `SELECT rowid, rank, snippet(chunks_fts, 2, '[', ']', '…', 20) AS snippet FROM chunks_fts
     WHERE chunks_fts MATCH ? AND rank MATCH 'bm25(5.0, 2.0, 1.0)' ORDER BY rank LIMIT ?`,
  );
  const match = (a: { words: string[]; all: boolean; prefix: boolean }) =>
    a.words.map((w, i) => `"${w}"${a.prefix && i === a.words.length - 1 ? "*" : ""}`).join(a.all ? " " : " OR ");
  return {
    async time(query) {
      const start = performance.now();
      let rows = 0;
      for (const attempt of attempts(query)) {
        rows = ranked.all(match(attempt), limit).length;
        if (rows > 0) break;
      }
      return { ms: performance.now() - start, rows };
    },
    async close() {
      db.close();
    },
  };
}

/**
 * PostgreSQL: the ranking an expert would write on Sluice's tables, through one `psql` session
 * with `\timing` (each statement's round trip as psql sees it: parse, plan, execute, rows back):
 * the collection's chunks whose `tsv` matches the tsquery (the GIN index), ranked by ts_rank with
 * the same weights as Sluice, the best `limit`, with ts_headline (which PostgreSQL computes after
 * the sort and limit, for the rows kept only; its length is printed, to keep the output short).
 */
export async function postgresEngine(psqlBinDir: string, databaseUrl: string, collectionId: string, limit: number): Promise<EngineTimer> {
  const psql: ChildProcessWithoutNullStreams = spawn(path.join(psqlBinDir, "psql"), [databaseUrl, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=0"], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let failure = "";
  psql.stderr.on("data", (chunk: Buffer) => {
    failure += chunk.toString();
  });
  const lines: Interface = createInterface({ input: psql.stdout });
  const waiting: Array<(line: string) => void> = [];
  const early: string[] = [];
  lines.on("line", (line) => {
    const next = waiting.shift();
    if (next) next(line);
    else early.push(line);
  });
  const readLine = () => new Promise<string>((resolve, reject) => {
    const line = early.shift();
    if (line !== undefined) return resolve(line);
    if (psql.exitCode !== null) return reject(new Error(`psql ended: ${failure}`));
    waiting.push(resolve);
  });
  const END = "__statement_end__";
  /** One statement: the rows it printed and psql's "Time: N ms". */
  const run = async (sql: string): Promise<{ ms: number; rows: number }> => {
    psql.stdin.write(`${sql};\n\\echo ${END}\n`);
    let rows = 0;
    let ms = Number.NaN;
    for (;;) {
      const line = await readLine();
      if (line === END) break;
      const time = /^Time: ([\d.]+) ms/.exec(line);
      if (time) ms = Number(time[1]);
      else if (line.trim() !== "") rows += 1;
    }
    if (Number.isNaN(ms)) throw new Error(`psql printed no time for ${sql}: ${failure}`);
    return { ms, rows };
  };
  psql.stdin.write("\\timing on\n");
  const tsquery = (a: { words: string[]; all: boolean; prefix: boolean }) =>
    a.words.map((w, i) => `${w}${a.prefix && i === a.words.length - 1 ? ":*" : ""}`).join(a.all ? " & " : " | ");
  const statement = (q: string) =>
    `SELECT c.id, ts_rank('{0.1, 0.2, 0.4, 1.0}', c.tsv, q) AS score, length(ts_headline('sluice_search', c.body, q)) AS snippet
     FROM search_chunks c, to_tsquery('sluice_search', '${q}') q
     WHERE c.collection_id = '${collectionId}' AND c.tsv @@ q ORDER BY score DESC LIMIT ${limit}`.replace(/\s+/g, " ");
  return {
    async time(query) {
      let ms = 0;
      let rows = 0;
      for (const attempt of attempts(query)) {
        const r = await run(statement(tsquery(attempt)));
        ms += r.ms;
        rows = r.rows;
        if (rows > 0) break;
      }
      return { ms, rows };
    },
    async close() {
      psql.stdin.end();
      await new Promise((resolve) => (psql.exitCode !== null ? resolve(null) : psql.once("exit", resolve)));
    },
  };
}
