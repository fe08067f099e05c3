import type { NextFunction, Request, Response } from "express";
import type { Logger } from "../logger";

/** One line per request: method, path without its query string (it may carry OAuth codes), status, time. */
export function requestLog(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    res.on("finish", () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      logger.info(`${req.method} ${req.originalUrl.split("?")[0]} ${res.statusCode} ${ms.toFixed(1)}ms`);
    });
    next();
  };
}
