import type { Router } from "express";
import type { Redis } from "ioredis";
import type { DataSource } from "typeorm";
import { DATABASE_RETRY_AFTER_SECONDS } from "./errors";
import { documentedRouter } from "./routing/documented-router";

/** A check not answered within this counts as unreachable: a load balancer's probe must not hang. */
const CHECK_TIMEOUT_MS = 2_000;

export type CheckResult = "ok" | "unreachable";

export interface ReadinessDeps {
  db: DataSource;
  /** The process's Redis connection in team mode, else null (no check). */
  redis: Redis | null;
  /** OLLAMA_HOST: reported, but it does not make the instance unready (search and ingestion do not need it). */
  ollamaHost: string;
}

export interface Readiness {
  ready: boolean;
  checks: { database: CheckResult; redis?: CheckResult; model_server: CheckResult };
}

function withTimeout<T>(work: Promise<T>): Promise<T> {
  return Promise.race([work, new Promise<never>((_, reject) => setTimeout(() => reject(new Error("timed out")), CHECK_TIMEOUT_MS).unref())]);
}

async function check(probe: () => Promise<unknown>): Promise<CheckResult> {
  try {
    await withTimeout(probe());
    return "ok";
  } catch {
    return "unreachable";
  }
}

/** Whether this process can serve: the database (and Redis, in team mode) answer; the model server is reported alongside. */
async function readiness({ db, redis, ollamaHost }: ReadinessDeps): Promise<Readiness> {
  const [database, redisResult, modelServer] = await Promise.all([
    check(() => db.query("SELECT 1")),
    redis
      ? check(async () => {
          // A disconnected ioredis queues commands until its own timeout: ask only a ready connection.
          if (redis.status !== "ready") throw new Error(redis.status);
          await redis.ping();
        })
      : Promise.resolve(undefined),
    check(async () => {
      const res = await fetch(`${ollamaHost}/api/version`, { signal: AbortSignal.timeout(CHECK_TIMEOUT_MS) });
      await res.body?.cancel();
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
    }),
  ]);
  const checks: Readiness["checks"] = { database, ...(redisResult ? { redis: redisResult } : {}), model_server: modelServer };
  return { ready: database === "ok" && (redisResult ?? "ok") === "ok", checks };
}

/**
 * GET /health/ready (no authentication, like /health): 200 when the instance can serve, else 503
 * with a detail and Retry-After. /health itself stays the liveness answer (the process is up).
 */
export function readinessRoutes(deps: ReadinessDeps): Router {
  const routes = documentedRouter("Service");
  const description = {
    summary: "Whether this instance can serve (readiness, for load balancers and watchdogs)",
    returns: '`{"status": "ok", "checks": {"database": "ok", "redis": "ok", "model_server": "ok" | "unreachable"}}` (`redis` in team mode only; the model server is reported, not required)',
    errors: { 503: "The database (or Redis, in team mode) is unreachable: the same body with `status` `unavailable`, a `detail` and `Retry-After`" },
    public: true,
  };
  routes.get("/health/ready", description, async (_input, _req, res) => {
    const { ready, checks } = await readiness(deps);
    if (ready) return void res.json({ status: "ok", checks });
    const down = Object.entries(checks)
      .filter(([name, result]) => result !== "ok" && name !== "model_server")
      .map(([name]) => (name === "database" ? "the database" : "Redis"));
    res.setHeader("Retry-After", String(DATABASE_RETRY_AFTER_SECONDS));
    res.status(503).json({ status: "unavailable", detail: `Not ready: ${down.join(" and ")} ${down.length > 1 ? "are" : "is"} unreachable`, checks });
  });
  return routes.router;
}
