import type { DataSource, EntityManager } from "typeorm";

/**
 * better-sqlite3 gives TypeORM ONE connection. Two overlapping `transaction()` calls then
 * fail ("cannot start a transaction within a transaction"), and any write issued while a
 * transaction is open silently joins it (and is rolled back with it). So every
 * transaction waits for the previous one, and writes outside a transaction go through
 * `db.transaction` too (see the services). Call inside a transaction only `tx`, never `db`.
 */
export function serializeTransactions(db: DataSource): void {
  let tail: Promise<unknown> = Promise.resolve();
  const original = db.transaction.bind(db) as (...args: unknown[]) => Promise<unknown>;
  db.transaction = ((...args: unknown[]) => {
    const run = tail.then(
      () => original(...args),
      () => original(...args),
    );
    tail = run.catch(() => undefined);
    return run;
  }) as DataSource["transaction"];
}

/** Any fixed key: the one advisory lock that stands for "the database's writer". */
const WRITER_LOCK_KEY = 0x51c3;

/**
 * PostgreSQL has a pool, so transactions could overlap; but the services' transactions are
 * check-then-write (a name is free, no job is queued, ...) and were written against SQLite's
 * single writer. Each transaction first takes one transaction-scoped advisory lock, so they
 * keep that meaning, across every process sharing the database (API and workers). Reads
 * outside transactions still run in parallel.
 */
export function lockTransactions(db: DataSource): void {
  const original = db.transaction.bind(db) as (...args: unknown[]) => Promise<unknown>;
  unlocked.set(db, original as DataSource["transaction"]);
  db.transaction = ((...args: unknown[]) => {
    const fn = args.at(-1) as (tx: EntityManager) => Promise<unknown>;
    const locked = async (tx: EntityManager) => {
      await tx.query("SELECT pg_advisory_xact_lock($1)", [WRITER_LOCK_KEY]);
      return fn(tx);
    };
    return original(...args.slice(0, -1), locked);
  }) as DataSource["transaction"];
}

/** PostgreSQL's transaction without the writer lock, by data source (set by lockTransactions). */
const unlocked = new WeakMap<DataSource, DataSource["transaction"]>();

/**
 * A write that no check-then-write transaction depends on: on PostgreSQL it does not take the
 * writer lock, so it neither waits for API transactions nor holds them up; row locks still
 * order it against other writes of the same rows. Ingestion's progress rows are such writes:
 * only their job writes them, and the checks that read jobs (409 rules) look at run states
 * this does not move between "active" and "done". On SQLite (one connection) it is an ordinary
 * serialized transaction.
 */
export function independentWrite<T>(db: DataSource, work: (tx: EntityManager) => Promise<T>): Promise<T> {
  const transaction = unlocked.get(db);
  return transaction ? (transaction as (run: typeof work) => Promise<T>)(work) : db.transaction(work);
}
