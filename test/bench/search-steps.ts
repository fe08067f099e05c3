import type Database from "better-sqlite3";

/**
 * Where a SQLite search's time goes, step by step (issue 36 item 3): a read-only connection
 * whose statements are timed, each under the name of the step of sqlite-fts-search.ts that
 * prepares it, so Sluice's own search code can run on the collection's file in the bench's
 * process with every statement's time (and its preparation's) counted per step.
 */

/** The step a statement belongs to, by its text (sqlite-fts-ranking.ts, sqlite-fts-snippets.ts, sqlite-fts-search.ts). */
function stepOf(sql: string): string {
  if (sql.includes("snippet(")) return "snippets";
  if (sql.startsWith("SELECT body FROM chunks_fts")) return "chunk text";
  if (sql.includes("JOIN documents d ON d.id = c.document_id WHERE c.rowid = ?")) return "documents of the page";
  if (sql.startsWith("SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT 1")) return "prefix check";
  if (sql.startsWith("SELECT max(rowid) FROM chunks")) return "rank plan";
  if (sql.startsWith("SELECT count(*) AS n, min(rowid)")) return "rank plan";
  if (sql.includes("LIMIT @enough")) return "stemmed tier: more matches?";
  if (sql.includes("LIMIT @window + 1")) return "common words: count";
  if (sql.startsWith("WITH k AS")) return "common words: ranking";
  if (/MATCH \? AND rowid = \?$/.test(sql)) return "common words: check per row";
  const table = /FROM (chunks_exact|chunks_fts)/.exec(sql)?.[1];
  if (sql.startsWith("WITH")) return table === "chunks_exact" ? "exact tier ranking" : "stemmed tier ranking";
  return "other";
}

export class StepTimes {
  /** ms per step, summed over the queries. */
  readonly total = new Map<string, number>();
  /** Statements run per step. */
  readonly statements = new Map<string, number>();
  /** ms per step of the query being timed (reset by begin()). */
  current = new Map<string, number>();

  begin(): void {
    this.current = new Map();
  }

  add(step: string, ms: number, statement: boolean): void {
    this.total.set(step, (this.total.get(step) ?? 0) + ms);
    this.current.set(step, (this.current.get(step) ?? 0) + ms);
    if (statement) this.statements.set(step, (this.statements.get(step) ?? 0) + 1);
  }
}

/** `db` with every prepare and every statement run timed into `times` under its step ("prepare" counted apart). */
export function timedDatabase(db: Database.Database, times: StepTimes): Database.Database {
  const timed = (statement: Database.Statement, step: string): Database.Statement =>
    new Proxy(statement, {
      get(target, property) {
        const value = Reflect.get(target, property, target);
        if (typeof value !== "function") return value;
        if (property === "pluck" || property === "raw" || property === "expand" || property === "safeIntegers") {
          return (...args: unknown[]) => {
            value.apply(target, args);
            return timed(target, step);
          };
        }
        if (property !== "all" && property !== "get" && property !== "run") return value.bind(target);
        return (...args: unknown[]) => {
          const start = performance.now();
          try {
            return value.apply(target, args);
          } finally {
            times.add(step, performance.now() - start, true);
          }
        };
      },
    });
  return new Proxy(db, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (property !== "prepare") return typeof value === "function" ? value.bind(target) : value;
      return (sql: string) => {
        const start = performance.now();
        const statement = target.prepare(sql);
        times.add("preparing statements", performance.now() - start, false);
        return timed(statement, stepOf(sql));
      };
    },
  });
}
