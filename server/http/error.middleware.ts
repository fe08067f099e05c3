import type { NextFunction, Request, Response } from "express";
import { isDatabaseUnreachable } from "../data/db-errors";
import { DatabaseUnreachableError, HttpError, ServiceUnavailableError, TooManyRequestsError } from "../errors";
import type { Logger } from "../logger";
import { requestIdOf } from "./request-log.middleware";
import { isDiskFull } from "../disk/disk-space";

/** Unknown routes under /api answer JSON, never Express's HTML page. */
export function notFound(_req: Request, res: Response): void {
  res.status(404).json({ detail: "Not found" });
}

/**
 * The one mapping from thrown errors to responses. Known errors become their status
 * and {detail}; anything else is logged (name and message only, with the request's id,
 * which its request line carries too) and answered as a generic 500, so no stack trace or internal text reaches a client.
 */
export function errorHandler(logger: Logger) {
  return (thrown: unknown, req: Request, res: Response, _next: NextFunction): void => {
    // A lost database is the server's state, not a bug: 503 and when to retry, not a 500.
    const error = isDatabaseUnreachable(thrown) ? new DatabaseUnreachableError() : thrown;
    if (error instanceof HttpError) {
      const retryAfter = error instanceof TooManyRequestsError || error instanceof ServiceUnavailableError ? error.retryAfterSeconds : null;
      if (retryAfter !== null) res.setHeader("Retry-After", String(retryAfter));
      res.status(error.status).json({ detail: error.detail, ...error.extra });
      return;
    }
    // body-parser's errors carry a `type` and a client status.
    const bodyError = error as { type?: string; status?: number };
    if (bodyError.type === "entity.parse.failed") {
      res.status(400).json({ detail: "Malformed JSON in request body" });
      return;
    }
    if (bodyError.type === "entity.too.large") {
      res.status(413).json({ detail: "Request body is larger than the 1 MB limit" });
      return;
    }
    if (bodyError.type && bodyError.status && bodyError.status >= 400 && bodyError.status < 500) {
      res.status(bodyError.status).json({ detail: "The request body could not be read" });
      return;
    }
    // The router could not percent-decode a path parameter (`%FF`): such a path names nothing,
    // so it answers as any unknown id does (docs/decisions/0007-http-rules.md).
    if (error instanceof URIError && bodyError.status === 400) {
      res.status(404).json({ detail: "Not found" });
      return;
    }
    if (isDiskFull(error)) {
      // 507 Insufficient Storage (RFC 4918): nothing was saved, and the user can act on it.
      logger.error(`${req.method} ${req.path} failed: the disk holding DATA_DIR is full`);
      res.status(507).json({ detail: "Not enough disk space in DATA_DIR to save this change; free some space and try again" });
      return;
    }
    const requestId = requestIdOf(res);
    const err = error as Error;
    logger.error({ reqId: requestId }, `${req.method} ${req.path} failed: ${err?.name ?? "Error"}: ${err?.message ?? String(error)}`);
    res.status(500).json({ detail: `Internal error (request id ${requestId})` });
  };
}
