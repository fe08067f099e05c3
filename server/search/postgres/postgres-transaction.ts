import type { DataSource, QueryRunner } from "typeorm";

/** Runs work in one transaction on a pooled connection of its own: committed when it resolves, rolled back when it throws. */
export async function inTransaction(db: DataSource, work: (q: QueryRunner) => Promise<void>): Promise<void> {
  const q = db.createQueryRunner();
  try {
    await q.connect();
    await q.startTransaction();
    try {
      await work(q);
      await q.commitTransaction();
    } catch (error) {
      await q.rollbackTransaction();
      throw error;
    }
  } finally {
    await q.release();
  }
}
