import crypto from "node:crypto";
import type { NextFunction, Request, Response } from "express";
import type { Logger } from "../logger";

/** The id of this request, shared by its log line and any error logged or answered for it. */
export function requestIdOf(res: Response): string {
  return (res.locals.requestId as string | undefined) ?? crypto.randomUUID();
}

/**
 * One line per request, at info: `reqId` as a field; method, path without its query string (it
 * may carry OAuth codes), status and time as the message. Nothing else of the request is logged.
 */
export function requestLog(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    const reqId = crypto.randomUUID();
    res.locals.requestId = reqId;
    res.on("finish", () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      logger.info({ reqId }, `${req.method} ${req.originalUrl.split("?")[0]} ${res.statusCode} ${ms.toFixed(1)}ms`);
    });
    next();
  };
}
