import pino from "pino";
import type { LogLevel } from "./settings";

/**
 * Fields a log line may carry beside its message: ids, methods, paths, numbers. Callers never
 * pass request bodies, headers or secrets, so no password or token can reach a log.
 */
export type LogFields = Record<string, string | number | boolean | null>;

interface LogMethod {
  (message: string): void;
  (fields: LogFields, message: string): void;
}

/** What the server's code logs through; pino's logger is one. */
export interface Logger {
  error: LogMethod;
  warn: LogMethod;
  info: LogMethod;
  debug: LogMethod;
}

/** Where lines go: info and below on `out`, warn and above on `err` (as before pino: stdout and stderr). */
export interface LogStreams {
  out: pino.DestinationStream;
  err: pino.DestinationStream;
}

/**
 * Fields pino blanks wherever a caller (or a library handed the logger) passes them anyway: the
 * request's credentials and every password field, at the top level and one or two levels down.
 */
export const REDACTED_PATHS = [
  "authorization",
  "cookie",
  "password",
  "current_password",
  "new_password",
  "key",
  "access_token",
  "*.authorization",
  "*.cookie",
  "*.password",
  "*.current_password",
  "*.new_password",
  "*.access_token",
  "*.headers.authorization",
  "*.headers.cookie",
  "*.headers[\"set-cookie\"]",
  "*.body.password",
  "*.body.current_password",
  "*.body.new_password",
];

/**
 * The server's logger: pino, one JSON line per event (`level` as a word, ISO `time`, `pid`,
 * `msg`, and fields such as `reqId`). Writes are synchronous, so the line explaining an exit
 * is out before process.exit, and in order with the `listening on` line on stdout.
 */
export function createLogger(level: LogLevel = "info", streams: LogStreams = standardStreams()): pino.Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
    },
    pino.multistream(
      [
        { level: "trace", stream: streams.out },
        { level: "warn", stream: streams.err },
      ],
      // Each line goes only to the stream of the highest level it reaches: warnings are not doubled on stdout.
      { dedupe: true },
    ),
  );
}

function standardStreams(): LogStreams {
  return { out: pino.destination({ dest: 1, sync: true }), err: pino.destination({ dest: 2, sync: true }) };
}
