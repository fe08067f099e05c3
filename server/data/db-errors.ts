/** True for a unique-constraint violation on either engine (SQLite's message, PostgreSQL's SQLSTATE 23505). */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: unknown; driverError?: { code?: unknown }; message?: unknown };
  const code = e?.driverError?.code ?? e?.code;
  return code === "23505" || code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY" || String(e?.message).includes("UNIQUE");
}

/** SQLSTATEs that mean the server is going away or not taking connections (class 08 is matched whole). */
const UNREACHABLE_SQLSTATES = new Set(["57P01", "57P02", "57P03"]);
/** Socket errors of a connection that could not be made or was cut. */
const UNREACHABLE_SOCKET_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN"]);
/** What `pg` and its pool throw without a code when a connection dies or cannot be had in time. */
const UNREACHABLE_MESSAGES = /Connection terminated|connection error and is not queryable|timeout exceeded when trying to connect/i;

/**
 * True when an error means the database server cannot be reached (PostgreSQL stopped,
 * restarting, or the network between): the one place that recognises it, for the 503 of a
 * request and for the ingestion job's retries. TypeORM wraps driver errors, so the driver's
 * own error (`driverError`, `cause`) is looked at too. SQLite never raises these.
 */
export function isDatabaseUnreachable(error: unknown): boolean {
  for (let e = error as { code?: unknown; message?: unknown; driverError?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 4; depth++) {
    const code = typeof e.code === "string" ? e.code : "";
    if (UNREACHABLE_SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code) || UNREACHABLE_SOCKET_CODES.has(code)) return true;
    if (typeof e.message === "string" && UNREACHABLE_MESSAGES.test(e.message)) return true;
    e = (e.driverError ?? e.cause) as typeof e;
  }
  return false;
}
