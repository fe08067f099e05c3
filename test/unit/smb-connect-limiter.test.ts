import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import type http from "node:http";
import { after, before, describe, it } from "node:test";
import express from "express";
import { smbConnectAttempts, smbConnectLimiter } from "../../server/connectors/smb/smb-connect-limiter";
import { errorHandler } from "../../server/http/error.middleware";
import { createLogger } from "../../server/logger";

// The limiter as the SMB routes mount it, behind a stand-in for the auth middleware (the
// signed-in user comes from a header here) and in front of the real error middleware.
let server: http.Server;
let base: string;

before(async () => {
  const app = express();
  app.use((req, res, next) => {
    res.locals.actor = { userId: String(req.headers["x-user"]), email: "x@example.com" };
    next();
  });
  const limited = smbConnectLimiter({ limit: 3, windowMs: 1500 });
  app.get("/connect", limited, (_req, res) => void res.json({ ok: true }));
  app.get("/list", limited, (_req, res) => void res.json({ ok: true }));
  app.use(errorHandler(createLogger("silent")));
  server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

const call = (path: string, user: string) => fetch(base + path, { headers: { "x-user": user } });

describe("smbConnectLimiter", () => {
  it("lets a user make `limit` attempts across both routes, then answers 429 with detail and Retry-After, other users unaffected", async () => {
    assert.equal((await call("/connect", "ada")).status, 200);
    assert.equal((await call("/list", "ada")).status, 200);
    assert.equal((await call("/connect", "ada")).status, 200);
    const blocked = await call("/list", "ada");
    assert.equal(blocked.status, 429);
    const retryAfter = Number(blocked.headers.get("retry-after"));
    assert.ok(retryAfter >= 1 && retryAfter <= 2, `Retry-After ${retryAfter}`);
    assert.equal(((await blocked.json()) as { detail: string }).detail, `Too many SMB connection attempts; try again in ${retryAfter} seconds`);
    assert.equal(blocked.headers.get("ratelimit"), null, "no RateLimit headers");
    assert.equal((await call("/connect", "grace")).status, 200, "counted per user");
  });

  it("lets the user in again once the window is over", async () => {
    assert.equal((await call("/connect", "ada")).status, 429);
    await new Promise((resolve) => setTimeout(resolve, 1600));
    assert.equal((await call("/connect", "ada")).status, 200);
  });

  it("smbConnectAttempts(null) (SMB_CONNECT_LIMIT_PER_MINUTE=0) lets every attempt through", async () => {
    const open = smbConnectAttempts(null);
    let passed = 0;
    for (let i = 0; i < 50; i++) open({} as express.Request, {} as express.Response, () => void passed++);
    assert.equal(passed, 50);
  });
});
