import type Database from "better-sqlite3";

/**
 * Statements prepared once per connection and kept: a search prepared each of its 10-20
 * statements again on every request, and preparing them (FTS5's among them) was 13-24 % of the
 * SQLite search code's time on the second bench corpus (docs/decisions/0500-search-against-the-engine.md).
 * A statement's text varies only with a search's filters and, for a prefix's snippets, the
 * number of rows on the page, so a connection's set stays small; past MAX_PER_CONNECTION the
 * oldest goes. Statements are used one at a time (all/get/run, never an open iterate()), as every
 * connection here belongs to one thread.
 */
const MAX_PER_CONNECTION = 256;

const cache = new WeakMap<Database.Database, Map<string, Database.Statement>>();

/** The connection's statement for `sql`, prepared on first use; `pluck` set as asked (a kept statement keeps its mode otherwise). */
export function prepared(db: Database.Database, sql: string, pluck = false): Database.Statement {
  let statements = cache.get(db);
  if (!statements) {
    statements = new Map();
    cache.set(db, statements);
  }
  let statement = statements.get(sql);
  if (statement) {
    // Most recently used last, so the oldest is the first to go.
    statements.delete(sql);
  } else {
    statement = db.prepare(sql);
    if (statements.size >= MAX_PER_CONNECTION) statements.delete(statements.keys().next().value!);
  }
  statements.set(sql, statement);
  // pluck() on a statement that returns no data throws; only reads are kept here.
  return statement.reader ? statement.pluck(pluck) : statement;
}
