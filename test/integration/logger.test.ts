import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import express from "express";
import { errorHandler } from "../../server/http/error.middleware";
import { requestLog } from "../../server/http/request-log.middleware";
import { stopServer, waitForListening } from "../../main/server-process";
import { createLogger } from "../../server/logger";
import { serverEntryArgs, tempDir } from "../fixtures/sluice-server";
import { WAIT_LIMIT_MS, waitFor } from "../fixtures/wait-for";

/** A destination that keeps each written line, parsed. */
function memory() {
  const lines: Array<Record<string, unknown>> = [];
  return { lines, write: (chunk: string) => void lines.push(...chunk.split("\n").filter(Boolean).map((line) => JSON.parse(line))) };
}

function logAtEveryLevel(level: Parameters<typeof createLogger>[0]) {
  const out = memory();
  const err = memory();
  const logger = createLogger(level, { out, err });
  logger.trace("a trace");
  logger.debug("a debug");
  logger.info("an info");
  logger.warn("a warning");
  logger.error({ reqId: "r-1" }, "an error");
  return { out: out.lines.map((l) => l.msg), err: err.lines.map((l) => l.msg), all: [...out.lines, ...err.lines] };
}

describe("the server's logger", () => {
  it("writes one JSON line per event: level as a word, ISO time, pid, message and fields", () => {
    const out = memory();
    const logger = createLogger("info", { out, err: memory() });
    logger.info({ reqId: "0b6f", status: 200 }, "GET /api/health 200 0.4ms");
    assert.equal(out.lines.length, 1);
    const [line] = out.lines;
    assert.equal(line.level, "info");
    assert.equal(line.msg, "GET /api/health 200 0.4ms");
    assert.equal(line.reqId, "0b6f");
    assert.equal(line.status, 200);
    assert.equal(line.pid, process.pid);
    assert.match(String(line.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it("drops what is below LOG_LEVEL; info and below go to stdout, warnings and errors to stderr only", () => {
    const info = logAtEveryLevel("info");
    assert.deepEqual(info.out, ["an info"]);
    assert.deepEqual(info.err, ["a warning", "an error"]);
    assert.deepEqual(logAtEveryLevel("debug").out, ["a debug", "an info"]);
    assert.deepEqual(logAtEveryLevel("trace").out, ["a trace", "a debug", "an info"]);
    const warn = logAtEveryLevel("warn");
    assert.deepEqual(warn.out, []);
    assert.deepEqual(warn.err, ["a warning", "an error"]);
    assert.deepEqual(logAtEveryLevel("error").err, ["an error"]);
    assert.deepEqual(logAtEveryLevel("silent").all, []);
  });

  it("LOG_LEVEL=warn on the real server: no request lines, the `listening on` line all the same", async () => {
    const child = spawn(process.execPath, serverEntryArgs(), {
      env: { ...process.env, PORT: "0", HOST: "127.0.0.1", DATA_DIR: tempDir(), SLUICE_SECRETS: "file", LOG_LEVEL: "warn" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    const url = await waitForListening(child, WAIT_LIMIT_MS);
    assert.equal((await fetch(`${url}/api/health`)).status, 200);
    const exited = new Promise((resolve) => child.once("exit", resolve));
    await stopServer(child, 10_000);
    await exited;
    assert.equal(output.trim(), `listening on ${url}`, "nothing below warn was logged");
  });

  it("a configuration error is logged whatever LOG_LEVEL says, listing every bad variable, and the server exits 1", async () => {
    const child = spawn(process.execPath, serverEntryArgs(), {
      env: { ...process.env, PORT: "eighty", LOG_LEVEL: "loud", DATA_DIR: tempDir() },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const code = await new Promise((resolve) => child.once("exit", resolve));
    assert.equal(code, 1);
    const line = JSON.parse(stderr.trim()) as { level: string; msg: string };
    assert.equal(line.level, "error");
    assert.equal(line.msg, 'configuration error: PORT must be an integer from 0 to 65535, got "eighty"; LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"');
  });

  it("an unexpected error: its log line and the 500's detail carry the id of the request's own line", async () => {
    const out = memory();
    const err = memory();
    const logger = createLogger("info", { out, err });
    const app = express();
    app.use(requestLog(logger));
    app.get("/boom", () => {
      throw new TypeError("cannot read the thing");
    });
    app.use(errorHandler(logger));
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/boom?token=abc`, { headers: { authorization: "Bearer secret-token" } });
      assert.equal(res.status, 500);
      const { detail } = (await res.json()) as { detail: string };
      const id = /^Internal error \(request id ([0-9a-f-]{36})\)$/.exec(detail)?.[1];
      assert.ok(id, detail);
      await waitFor(() => err.lines.length > 0 && out.lines.length > 0, "the error and the request line to be logged");
      assert.deepEqual(err.lines.map((l) => [l.level, l.reqId, l.msg]), [["error", id, "GET /boom failed: TypeError: cannot read the thing"]]);
      assert.equal(out.lines.length, 1);
      assert.equal(out.lines[0].reqId, id);
      assert.match(String(out.lines[0].msg), /^GET \/boom 500 \d+\.\dms$/);
      const everything = JSON.stringify([...out.lines, ...err.lines]);
      for (const leak of ["secret-token", "token=abc", "    at "]) assert.ok(!everything.includes(leak), leak);
    } finally {
      server.close();
    }
  });
});

describe("the logger's redaction", () => {
  it("blanks authorization, cookie and password fields wherever a caller passes them", () => {
    const out = memory();
    const logger = createLogger("info", { out, err: memory() });
    const fields = {
      req: { headers: { authorization: "Bearer secret-token-1", cookie: "access_token=secret-token-2" }, body: { password: "secret-pw-3", new_password: "secret-pw-4" } },
      password: "secret-pw-5",
      authorization: "Bearer secret-token-6",
    };
    (logger as unknown as { info(fields: unknown, message: string): void }).info(fields, "a request");
    const line = JSON.stringify(out.lines[0]);
    assert.match(line, /a request/);
    assert.doesNotMatch(line, /secret-/);
    assert.match(line, /\[redacted\]/);
  });
});
