/** True for a unique-constraint violation on either engine (SQLite's message, PostgreSQL's SQLSTATE 23505). */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: unknown; driverError?: { code?: unknown }; message?: unknown };
  const code = e?.driverError?.code ?? e?.code;
  return code === "23505" || code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY" || String(e?.message).includes("UNIQUE");
}
