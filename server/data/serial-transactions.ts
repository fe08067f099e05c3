import type { DataSource } from "typeorm";

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
