import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { storedText } from "../fixtures/sluice-server";
import { GOOD_PASSWORD, signUp, uniqueEmail } from "../fixtures/http-client";
import { useSluice } from "../fixtures/use-sluice";

// The last test stops the server on purpose; the fixture stops it only if it still runs.
const sluice = useSluice();
const { request } = sluice;

describe("robustness", () => {
  it("GET /api/health answers 200 {status: ok} without authentication", async () => {
    const res = await request("GET", "/health");
    assert.equal(res.status, 200);
    assert.equal(res.body.status, "ok");
    // Beside it, DATA_DIR's free space (docs/user-guide.md: When things go wrong).
    assert.deepEqual(Object.keys(res.body.disk).sort(), ["free_bytes", "low", "total_bytes"]);
    assert.ok(res.body.disk.free_bytes > 0 && res.body.disk.free_bytes <= res.body.disk.total_bytes);
  });

  it("malformed JSON answers 400 with a detail and no stack trace", async () => {
    const res = await request("POST", "/signup", { rawBody: '{"email": "a@b.c", "password": ' });
    assert.equal(res.status, 400);
    assert.match(res.body.detail, /Malformed JSON/);
    assert.doesNotMatch(res.text, /at .*\.js|SyntaxError|node_modules/);
  });

  it("a body over 1 MB answers 413 and changes nothing", async () => {
    const email = uniqueEmail();
    const res = await request("POST", "/signup", { body: { email, password: GOOD_PASSWORD, filler: "x".repeat(1_100_000) } });
    assert.equal(res.status, 413);
    assert.equal(typeof res.body.detail, "string");
    assert.equal((await request("POST", "/signin", { body: { email, password: GOOD_PASSWORD } })).status, 401);
  });

  it("validation errors answer 422 with detail and errors[{field, message}]", async () => {
    const res = await request("POST", "/signup", { body: { email: 5 } });
    assert.equal(res.status, 422);
    assert.equal(typeof res.body.detail, "string");
    assert.deepEqual(res.body.errors.map((e: { field: string }) => e.field).sort(), ["email", "password"]);
    for (const e of res.body.errors) assert.equal(typeof e.message, "string");
    const noBody = await request("POST", "/signin");
    assert.equal(noBody.status, 422);
  });

  it("unknown routes answer 404 JSON when signed in, 401 JSON when not", async () => {
    const { server } = sluice;
    const { token } = await signUp(request);
    const res = await request("GET", "/no-such-thing", { token });
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { detail: "Not found" });
    assert.match(res.headers.get("content-type")!, /application\/json/);
    assert.equal((await request("GET", "/no-such-thing")).status, 401);
    const outside = await fetch(`${server.url}/definitely/not/here.txt`);
    assert.equal(outside.status, 404);
    assert.deepEqual(await outside.json(), { detail: "Not found" });
  });

  it("concurrent writes all land: 20 parallel sign-ups and group creations", async () => {
    const users = await Promise.all(Array.from({ length: 20 }, () => signUp(request, "parallel")));
    const created = await Promise.all(
      users.map((u, i) => request("POST", "/user_groups", { token: u.token, body: { group_name: `parallel-${process.pid}-${i}`, group_permission: "read" } })),
    );
    assert.deepEqual(created.map((r) => r.status), Array(20).fill(201));
    const list = await request("GET", "/user_groups", { token: users[0].token });
    assert.equal(list.body.filter((g: { group_name: string }) => g.group_name.startsWith(`parallel-${process.pid}-`)).length, 20);
  });

  it("no password, hash or token ever reaches a response or a log line; SIGTERM closes the database cleanly", async () => {
    const { server } = sluice;
    const email = uniqueEmail();
    const password = "Sekrit-password-77";
    const signup = await request("POST", "/signup", { body: { email, password } });
    const token = signup.body.access_token as string;
    await request("POST", "/signin", { body: { email, password } });
    await request("POST", "/signin", { body: { email, password: "Wrong-password-99" } });
    await request("GET", "/users/me", { token });
    await request("GET", "/users", { token });
    await request("POST", "/signup", { body: { email, password } });

    const code = await server.stop();
    assert.equal(code, 0, "clean exit on SIGTERM");
    const log = server.output();
    assert.match(log, /POST \/api\/signup 201/, "requests are logged");
    assert.match(log, /SIGTERM received/);
    for (const secret of [password, "Wrong-password-99", token, token.split(".")[2]]) assert.ok(!log.includes(secret), "secret in log");
    assert.doesNotMatch(log, /\$2[aby]\$\d\d\$/, "no bcrypt hash in the log");
    assert.doesNotMatch(log, /\n\s+at /, "no stack trace in the log");

    if (server.databaseUrl) {
      // PostgreSQL: its own WAL is the server's business; the data is in the database.
      const stored = await storedText(server);
      assert.ok(stored.includes(email), "the data reached the database");
      assert.ok(!stored.includes(password), "no clear password in PostgreSQL");
    } else {
      // A clean close checkpoints the write-ahead log into the database file and removes it.
      const wal = path.join(server.dataDir, "sluice.db-wal");
      assert.ok(!fs.existsSync(wal) || fs.statSync(wal).size === 0, "WAL left behind");
      const db = fs.readFileSync(path.join(server.dataDir, "sluice.db"));
      assert.ok(db.includes(Buffer.from(email)), "the data reached the database file");
      assert.ok(!db.includes(Buffer.from(password)), "no clear password in SQLite");
    }
  });
});
