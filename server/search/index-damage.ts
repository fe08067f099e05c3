import { HttpError } from "../errors";
import type { ErrorKinds } from "../threads/wire-error";

/** What a damaged collection index answers, and why re-running helps (docs/user-guide.md: When things go wrong). */
const INDEX_DAMAGED =
  "The index of this collection is damaged (its file cannot be read); re-run the collection's pipeline to rebuild it. The damaged file is kept beside it.";

/**
 * A collection index file SQLite cannot read (truncated, overwritten, a bad copy). 503: the
 * request was fine and the server is up, this collection's index is not until it is rebuilt.
 */
export class IndexDamagedError extends HttpError {
  readonly code = "SLUICE_INDEX_DAMAGED";
  constructor() {
    super(503, INDEX_DAMAGED);
  }
}

/** The index's errors a caller tells apart by class, rebuilt as such when they cross from a thread. */
export const INDEX_ERROR_KINDS: ErrorKinds = { SLUICE_INDEX_DAMAGED: () => new IndexDamagedError() };

/** SQLite's answers for a file that is not (or no longer) a sound database. */
export function isCorruption(error: unknown): boolean {
  const code = String((error as { code?: unknown })?.code ?? "");
  return code.startsWith("SQLITE_CORRUPT") || code === "SQLITE_NOTADB" || code === "SQLITE_IOERR_SHORT_READ";
}
