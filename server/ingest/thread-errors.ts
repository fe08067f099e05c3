import { IndexDamagedError } from "../search/index-damage";
import { JobInterrupted } from "./job-interrupted";

/** An error as it crosses between threads: its words and what tells it apart (a code, a class name). */
export interface WireError {
  message: string;
  name?: string;
  code?: string;
}

export function toWire(error: unknown): WireError {
  const e = error as { message?: unknown; name?: unknown; code?: unknown } | null;
  return {
    message: typeof e?.message === "string" ? e.message : String(error),
    name: typeof e?.name === "string" ? e.name : undefined,
    code: typeof e?.code === "string" ? e.code : undefined,
  };
}

/**
 * The error again on this side: a damaged index and an interrupted job as their own classes
 * (callers test with instanceof); anything else keeps its code, so a full disk (SQLITE_FULL,
 * ENOSPC, SLUICE_DISK_FULL) is still told apart by isDiskFull.
 */
export function fromWire(wire: WireError): Error {
  if (wire.code === "SLUICE_INDEX_DAMAGED") return new IndexDamagedError();
  if (wire.name === "JobInterrupted") return new JobInterrupted();
  const error = new Error(wire.message);
  if (wire.name) error.name = wire.name;
  return wire.code ? Object.assign(error, { code: wire.code }) : error;
}
