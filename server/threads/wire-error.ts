/** An error as it crosses between threads: its words and what tells it apart (a code, a class name). */
export interface WireError {
  message: string;
  name?: string;
  code?: string;
}

/** Rebuilds, on the receiving side, the error classes its callers test with instanceof: by code, else by class name. */
export type ErrorKinds = Record<string, () => Error>;

export function toWire(error: unknown): WireError {
  const e = error as { message?: unknown; name?: unknown; code?: unknown } | null;
  return {
    message: typeof e?.message === "string" ? e.message : String(error),
    name: typeof e?.name === "string" ? e.name : undefined,
    code: typeof e?.code === "string" ? e.code : undefined,
  };
}

/**
 * The error again on this side: one of `kinds` when its code or name says so; anything else as
 * a plain Error that keeps its name and code, so a full disk (SQLITE_FULL, ENOSPC,
 * SLUICE_DISK_FULL) is still told apart by isDiskFull.
 */
export function fromWire(wire: WireError, kinds: ErrorKinds = {}): Error {
  const rebuild = (wire.code !== undefined && kinds[wire.code]) || (wire.name !== undefined && kinds[wire.name]);
  if (rebuild) return rebuild();
  const error = new Error(wire.message);
  if (wire.name) error.name = wire.name;
  return wire.code ? Object.assign(error, { code: wire.code }) : error;
}
