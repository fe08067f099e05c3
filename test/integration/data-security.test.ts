import assert from "node:assert/strict";
import crypto from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { startSamba, type SambaServer } from "../fixtures/samba";
import { countRows, startSluice, tempDir, type SluiceServer } from "../fixtures/sluice-server";
import { client, createGroup, signUp, waitForJobEnd, type Request } from "../fixtures/http-client";

// Issue 15, the data side, probed as someone on the LAN would, against a running server:
// snippets, odd ids, SMB addresses and the data directory's permissions. Runs on SQLite and,
// in the team run, on PostgreSQL + Redis.

const posix = process.platform !== "win32";

let server: SluiceServer;
let request: Request;
let owner: { email: string; token: string };
let group: string;
const folderRoot = fs.realpathSync(tempDir("sluice-sec-folder-"));
const dataDir = tempDir("sluice-sec-data-");

/** Three documents of three ~900-character paragraphs, each opening with "heron" and a word naming its document and paragraph. */
const DOCUMENTS = ["alpha", "bravo", "charlie"];
const PARAGRAPHS = 3;
const filler = (seed: number) => Array.from({ length: 110 }, (_, i) => `lorem${(seed * 7 + i) % 13}`).join(" ");

/** What an earlier run (or an admin's cp -r) may have left readable by others, and a file that is not Sluice's. */
function loosenDataDir(): void {
  fs.chmodSync(dataDir, 0o755);
  fs.mkdirSync(path.join(dataDir, "indexes"), { mode: 0o777 });
  fs.chmodSync(path.join(dataDir, "indexes"), 0o777);
  fs.mkdirSync(path.join(dataDir, "logs"));
  fs.chmodSync(path.join(dataDir, "logs"), 0o755);
  fs.writeFileSync(path.join(dataDir, "logs", "sluice.0.log"), "{}\n", { mode: 0o644 });
  fs.writeFileSync(path.join(dataDir, "settings.json"), "{}", { mode: 0o644 });
  fs.writeFileSync(path.join(dataDir, "notes-not-sluice.txt"), "mine", { mode: 0o644 });
  fs.chmodSync(path.join(dataDir, "logs", "sluice.0.log"), 0o644);
  fs.chmodSync(path.join(dataDir, "settings.json"), 0o644);
  fs.chmodSync(path.join(dataDir, "notes-not-sluice.txt"), 0o644);
}

before(async () => {
  for (const name of DOCUMENTS) {
    const text = Array.from({ length: PARAGRAPHS }, (_, p) => `heron ${name}${p} ${filler(p)}.`).join("\n\n");
    fs.writeFileSync(path.join(folderRoot, `${name}.txt`), text);
  }
  if (posix) loosenDataDir();
  server = await startSluice({
    dataDir,
    env: {
      // The SMB connection limit's own test runs here: back to the default (blank).
      SMB_CONNECT_LIMIT_PER_MINUTE: "",
      FOLDER_SOURCE_ROOTS: folderRoot,
      // Drive configured (nothing is ever sent: no drive source exists), so its id routes reach their lookups.
      GOOGLE_CLIENT_ID: "test-client",
      GOOGLE_CLIENT_SECRET: "test-secret",
      GOOGLE_AUTH_URL: "http://127.0.0.1:1/auth",
      GOOGLE_TOKEN_URL: "http://127.0.0.1:1/token",
      GOOGLE_API_URL: "http://127.0.0.1:1",
    },
  });
  request = client(server.api);
  owner = await signUp(request, "sec-owner");
  group = await createGroup(request, owner.token);
});
after(async () => {
  if (server && server.child.exitCode === null) await server.stop();
  fs.rmSync(folderRoot, { recursive: true, force: true });
});

let collectionId = "";

describe("search snippets", () => {
  it("each hit's snippet comes from its own chunk, with several matching chunks per document and per collection", async () => {
    const created = await request("POST", `/data_sources/folder/${group}`, {
      token: owner.token,
      body: { data_source: { data_source_name: "Snippets" }, folder_source: { path: folderRoot } },
    });
    assert.equal(created.status, 201, created.text);
    collectionId = created.body.pipeline.collection_id;
    assert.equal((await request("POST", `/data_pipelines/${created.body.pipeline.id}/ingest`, { token: owner.token })).status, 202);
    const done = await waitForJobEnd(request, owner.token, created.body.pipeline.id);
    assert.equal(done.status, "completed", JSON.stringify(done));

    const res = await request("GET", `/collections/${collectionId}/search?q=heron&top_k=50`, { token: owner.token });
    assert.equal(res.status, 200, res.text);
    const hits = res.body.results as Array<{ path: string; chunk_index: number; snippet: string }>;
    assert.equal(hits.length, DOCUMENTS.length * PARAGRAPHS, JSON.stringify(hits));
    for (const name of DOCUMENTS) {
      const own = hits.filter((h) => h.path === `${name}.txt`).sort((a, b) => a.chunk_index - b.chunk_index);
      assert.equal(own.length, PARAGRAPHS, name);
      // Chunk k of a document holds its paragraph k: the snippet must name that one, and no other.
      own.forEach((hit, p) => {
        const named = hit.snippet.match(/\b(alpha|bravo|charlie)\d\b/g);
        assert.deepEqual(named, [`${name}${p}`], `${hit.path}#${hit.chunk_index}: ${hit.snippet}`);
        assert.ok(hit.snippet.includes(`<mark>heron</mark> ${name}${p}`), hit.snippet);
      });
    }
  });
});

describe("odd ids", () => {
  /** Every route that takes an id (or another key) in its path, as the server's OpenAPI document lists them. */
  async function declaredRoutes(): Promise<string[]> {
    const res = await request("GET", "/openapi.json", { token: owner.token });
    assert.equal(res.status, 200, res.text);
    const routes: string[] = [];
    for (const [route, operations] of Object.entries(res.body.paths as Record<string, Record<string, unknown>>)) {
      if (!route.includes("{")) continue;
      for (const method of Object.keys(operations)) {
        if (["get", "post", "put", "delete"].includes(method)) routes.push(`${method.toUpperCase()} ${route.replace(/^\/api/, "").replace(/\{([^}]+)\}/g, ":$1")}`);
      }
    }
    return routes.sort();
  }

  interface Route {
    route: string;
    /** The path with `{odd}` where the odd value goes; other params filled with real ids. */
    path: (odd: string) => string;
    param: string;
    body?: unknown;
  }

  let routes: Route[] = [];
  before(async () => {
    const listed = await request("GET", "/data_pipelines", { token: owner.token });
    const pipeline = listed.body[0];
    const q = (route: string, param: string, p: (odd: string) => string, body?: unknown): Route => ({ route, param, path: p, body });
    routes = [
      q("GET /users/:id/user_groups", "id", (o) => `/users/${o}/user_groups`),
      q("PUT /user_groups/:id/members/:email", "id", (o) => `/user_groups/${o}/members/${owner.email}`),
      q("PUT /user_groups/:id/members/:email", "email", (o) => `/user_groups/${group}/members/${o}`),
      q("DELETE /user_groups/:id/members/:email", "id", (o) => `/user_groups/${o}/members/${owner.email}`),
      q("DELETE /user_groups/:id/members/:email", "email", (o) => `/user_groups/${group}/members/${o}`),
      q("PUT /user_groups/:id/parent", "id", (o) => `/user_groups/${o}/parent`, { parent_group_id: null }),
      q("DELETE /user_groups/:id", "id", (o) => `/user_groups/${o}`),
      q("DELETE /users/me/smb_accounts/:id", "id", (o) => `/users/me/smb_accounts/${o}`),
      q("DELETE /users/me/api_keys/:id", "id", (o) => `/users/me/api_keys/${o}`),
      q("DELETE /users/:id", "id", (o) => `/users/${o}`),
      q("GET /collections/:id/search", "id", (o) => `/collections/${o}/search?q=heron`),
      q("GET /collections/:id/documents", "id", (o) => `/collections/${o}/documents`),
      q("PUT /collections/:id/embedding", "id", (o) => `/collections/${o}/embedding`, { model: null }),
      q("DELETE /collections/:id", "id", (o) => `/collections/${o}`),
      q("POST /collections/:id/ask", "id", (o) => `/collections/${o}/ask`, { question: "heron?", model: "llama3.2" }),
      q("GET /collections/:id/conversations", "id", (o) => `/collections/${o}/conversations`),
      q("GET /conversations/:id", "id", (o) => `/conversations/${o}`),
      q("DELETE /conversations/:id", "id", (o) => `/conversations/${o}`),
      q("DELETE /data_sources/:id", "id", (o) => `/data_sources/${o}`),
      q("POST /data_sources/smb/:group_id", "group_id", (o) => `/data_sources/smb/${o}`, {
        data_source: { data_source_name: "Odd" },
        smb_source: { remote_system_username: "u", remote_smb_password: "p", remote_system_name: "localhost", default_ip: "127.0.0.1", port: 1 },
      }),
      q("GET /data_sources/smb/list/:id", "id", (o) => `/data_sources/smb/list/${o}`),
      q("POST /data_sources/folder/:group_id", "group_id", (o) => `/data_sources/folder/${o}`, {
        data_source: { data_source_name: "Odd" },
        folder_source: { path: folderRoot },
      }),
      q("POST /data_sources/drive/:id/files", "id", (o) => `/data_sources/drive/${o}/files`, { file_ids: ["abc"] }),
      q("POST /data_sources/drive/:id/ingest_all", "id", (o) => `/data_sources/drive/${o}/ingest_all`),
      q("GET /data_pipelines/:id", "id", (o) => `/data_pipelines/${o}`),
      q("GET /data_pipelines/:id/jobs", "id", (o) => `/data_pipelines/${o}/jobs`),
      q("POST /data_pipelines/:id/ingest", "id", (o) => `/data_pipelines/${o}/ingest`),
      q("GET /data_pipelines/:id/ingest/status", "id", (o) => `/data_pipelines/${o}/ingest/status`),
      q("POST /data_pipelines/:id/ingest/cancel", "id", (o) => `/data_pipelines/${o}/ingest/cancel`),
      q("PUT /data_pipelines/:id/schedule", "id", (o) => `/data_pipelines/${o}/schedule`, { every_minutes: 60 }),
      q("DELETE /data_pipelines/:id/schedule", "id", (o) => `/data_pipelines/${o}/schedule`),
      q("POST /data_sources/:id/schedules/pause", "id", (o) => `/data_sources/${o}/schedules/pause`),
      q("POST /data_sources/:id/schedules/resume", "id", (o) => `/data_sources/${o}/schedules/resume`),
      q("DELETE /models/:id", "id", (o) => `/models/${o}`),
      q("DELETE /models/my/:record_id", "record_id", (o) => `/models/my/${o}`),
      q("DELETE /invitations/:id", "id", (o) => `/invitations/${o}`),
    ];
    assert.ok(pipeline, "the snippet test's pipeline exists");
  });

  // NUL in the id: PostgreSQL refuses the query outright, so it must never get that far.
  const WITH_NUL = ["%00", "a%00b", `${crypto.randomUUID()}%00`, "%00%00%00"];
  // Not UTF-8 once percent-decoded: the router cannot decode them.
  const UNDECODABLE = ["%FF", "%C0%80", "%ED%A0%80", "%E2%28%A1"];
  const OTHER_ODD = [
    "not-an-id",
    "00000000-0000-0000-0000-000000000000",
    crypto.randomUUID().toUpperCase(),
    "x".repeat(3000),
    "%E2%80%AE%F0%9F%99%82",
    "'%20OR%201%3D1--",
    "%25",
    "%20",
    "..%2F..%2Fetc%2Fpasswd",
  ];

  /** SMB routes allow 10 connection attempts a minute per user: walk them as a fresh user every few requests. */
  let walker = { token: "", uses: Infinity };
  async function tokenFor(route: Route): Promise<string> {
    if (!route.route.includes("/smb/")) return owner.token;
    if (walker.uses >= 8) walker = { token: (await signUp(request, "sec-walker")).token, uses: 0 };
    walker.uses += 1;
    return walker.token;
  }

  it("walks every route that takes an id in its path", async () => {
    assert.deepEqual([...new Set(routes.map((r) => r.route))].sort(), await declaredRoutes());
  });

  it("a NUL in a path id answers 422 naming the parameter, on every route and both back ends", async () => {
    for (const route of routes) {
      for (const odd of WITH_NUL) {
        const method = route.route.split(" ")[0];
        const res = await request(method, route.path(odd), { token: await tokenFor(route), body: route.body });
        assert.equal(res.status, 422, `${method} ${route.path(odd)}: ${res.status} ${res.text}`);
        assert.deepEqual(res.body.errors, [{ field: route.param, message: "must not contain NUL characters" }], route.route);
      }
    }
  });

  it("an id that cannot be percent-decoded answers 404, like any unknown id", async () => {
    for (const route of routes) {
      for (const odd of UNDECODABLE) {
        const method = route.route.split(" ")[0];
        const res = await request(method, route.path(odd), { token: await tokenFor(route), body: route.body });
        assert.equal(res.status, 404, `${method} ${route.path(odd)}: ${res.status} ${res.text}`);
        assert.equal(res.body.detail, "Not found");
      }
    }
  });

  it("any other odd id answers 404 or 422 with a detail, never a 500", async () => {
    for (const route of routes) {
      for (const odd of OTHER_ODD) {
        const method = route.route.split(" ")[0];
        const res = await request(method, route.path(odd), { token: await tokenFor(route), body: route.body });
        assert.ok([404, 422].includes(res.status), `${method} ${route.path(odd).slice(0, 120)}: ${res.status} ${res.text}`);
        assert.equal(typeof res.body.detail, "string");
      }
    }
  });

  it("a NUL in an id or key in a body answers 422 too, and changes nothing", async () => {
    const before = await countRows(server, "collections");
    const cases: Array<[string, string, unknown, string]> = [
      ["POST", "/collections", { name: "nul_owner", owner_group_id: `${group}\u0000` }, "owner_group_id"],
      ["POST", "/data_pipelines", { name: "p", description: "", data_source_id: "\u0000", collection_id: collectionId }, "data_source_id"],
      ["PUT", `/user_groups/${group}/parent`, { parent_group_id: "\u0000" }, "parent_group_id"],
      ["POST", "/data_sources/drive", { data_source: { data_source_name: "d", owner_group_id: "\u0000" } }, "data_source.owner_group_id"],
      ["POST", "/signin", { email: `${owner.email}\u0000`, password: "whatever-1" }, "email"],
    ];
    for (const [method, p, body, field] of cases) {
      const res = await request(method, p, { token: owner.token, body });
      assert.equal(res.status, 422, `${method} ${p}: ${res.text}`);
      assert.deepEqual(res.body.errors, [{ field, message: "must not contain NUL characters" }]);
    }
    assert.equal(await countRows(server, "collections"), before);
  });

  it("no request of the walk failed inside the server", () => {
    assert.doesNotMatch(server.output(), /"level":"error"/);
    assert.doesNotMatch(server.output(), /Internal error/);
  });
});

describe("data directory", { skip: posix ? false : "POSIX modes only; Windows keeps the app-data folder private by its ACL" }, () => {
  /** Every entry under DATA_DIR with its mode, links left out. */
  function modes(): Map<string, number> {
    const out = new Map<string, number>();
    const walk = (relative: string) => {
      const stat = fs.lstatSync(path.join(dataDir, relative));
      if (stat.isSymbolicLink()) return;
      out.set(relative, stat.mode & 0o777);
      if (stat.isDirectory()) for (const name of fs.readdirSync(path.join(dataDir, relative))) walk(path.join(relative, name));
    };
    walk(".");
    return out;
  }

  it("after a start and an ingestion, DATA_DIR and everything Sluice wrote in it are private (0700 folders, 0600 files)", async () => {
    assert.ok(collectionId, "the snippet test ingested a collection");
    const found = modes();
    const expected = ["secrets.enc.json", "secret.key", ...(server.databaseUrl ? [] : ["sluice.db", "sluice.db-wal", `indexes/${collectionId}.db`])];
    for (const name of expected) assert.ok(found.has(path.normalize(name)), `${name} exists: ${[...found.keys()].join(", ")}`);
    for (const [name, mode] of found) {
      if (name === "notes-not-sluice.txt") continue;
      const isDir = fs.lstatSync(path.join(dataDir, name)).isDirectory();
      assert.equal(mode.toString(8), (isDir ? 0o700 : 0o600).toString(8), name);
    }
  });

  it("tightened what an earlier run left open at start, said so in the log, and left other files alone", () => {
    assert.equal(fs.statSync(path.join(dataDir, "notes-not-sluice.txt")).mode & 0o777, 0o644);
    const line = server.output().split("\n").find((l) => l.includes("was open to other users"));
    assert.ok(line, server.output());
    for (const name of [".", "indexes", "logs", path.join("logs", "sluice.0.log"), "settings.json"]) assert.ok(line.includes(name), `${name} in ${line}`);
    assert.ok(!line.includes("notes-not-sluice.txt"));
  });

  it("a DATA_DIR that does not exist yet is created 0700, its files 0600, and nothing is logged as tightened", async () => {
    const fresh = path.join(tempDir("sluice-sec-fresh-"), "nested", "Sluice");
    const other = await startSluice({ dataDir: fresh });
    try {
      await signUp(client(other.api), "sec-fresh");
      assert.equal(fs.statSync(fresh).mode & 0o777, 0o700);
      for (const name of fs.readdirSync(fresh)) {
        const stat = fs.lstatSync(path.join(fresh, name));
        assert.equal(stat.mode & 0o777, stat.isDirectory() ? 0o700 : 0o600, name);
      }
      assert.doesNotMatch(other.output(), /was open to other users/);
    } finally {
      await other.stop();
    }
  });
});

describe("SMB addresses", () => {
  let samba: SambaServer;
  before(async () => {
    samba = await startSamba();
  });
  after(async () => {
    await samba.stop();
  });

  function smbBody(name: string, overrides: Record<string, unknown> = {}) {
    return {
      data_source: { data_source_name: name },
      smb_source: {
        remote_system_username: samba.username,
        remote_smb_password: samba.password,
        remote_system_name: "localhost",
        local_system_name: "SLUICE-TEST",
        default_ip: "127.0.0.1",
        port: samba.port,
        ...overrides,
      },
    };
  }

  it("creation and share listing together allow 10 attempts a minute per user, then 429 with detail and Retry-After", async () => {
    const a = await signUp(request, "sec-limit");
    const groupA = await createGroup(request, a.token);
    const made = await request("POST", `/data_sources/smb/${groupA}`, { token: a.token, body: smbBody("Limited") });
    assert.equal(made.status, 201, made.text);
    for (let i = 0; i < 4; i++) {
      assert.equal((await request("GET", `/data_sources/smb/list/${made.body.data_source.id}`, { token: a.token })).status, 200);
    }
    for (let i = 0; i < 5; i++) {
      const closed = await request("POST", `/data_sources/smb/${groupA}`, { token: a.token, body: smbBody("Closed", { port: 1 }) });
      assert.equal(closed.status, 400);
    }
    const sources = await countRows(server, "data_sources");
    for (const blocked of [
      await request("POST", `/data_sources/smb/${groupA}`, { token: a.token, body: smbBody("Blocked") }),
      await request("GET", `/data_sources/smb/list/${made.body.data_source.id}`, { token: a.token }),
    ]) {
      assert.equal(blocked.status, 429, blocked.text);
      const retryAfter = Number(blocked.headers.get("retry-after"));
      assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
      assert.match(blocked.body.detail, /^Too many SMB connection attempts; try again in \d+ seconds$/);
    }
    assert.equal(await countRows(server, "data_sources"), sources, "nothing created while blocked");
    // Another user is not held up by this one.
    const b = await signUp(request, "sec-limit-other");
    assert.equal((await request("POST", `/data_sources/smb/${await createGroup(request, b.token)}`, { token: b.token, body: smbBody("Other") })).status, 201);
  });

  it("share listing gives a closed port and a silent one the same answer", async () => {
    const own = await startSamba();
    const a = await signUp(request, "sec-silent");
    const made = await request("POST", `/data_sources/smb/${await createGroup(request, a.token)}`, {
      token: a.token,
      body: smbBody("Goes quiet", { port: own.port, remote_smb_password: own.password, remote_system_username: own.username }),
    });
    assert.equal(made.status, 201, made.text);
    const listing = `/data_sources/smb/list/${made.body.data_source.id}`;
    await own.stop();
    const closed = await request("GET", listing, { token: a.token });
    // The same port now accepts connections and never answers.
    const silent = net.createServer((socket) => socket.on("error", () => undefined));
    const sockets = new Set<net.Socket>();
    silent.on("connection", (s) => sockets.add(s));
    await new Promise<void>((resolve) => silent.listen(own.port, "127.0.0.1", resolve));
    try {
      const quiet = await request("GET", listing, { token: a.token });
      assert.deepEqual([closed.status, closed.body], [503, { detail: "SMB server unreachable" }]);
      assert.deepEqual([quiet.status, quiet.body], [503, { detail: "SMB server unreachable" }]);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it("SMB_ALLOWED_NETWORKS: creation, listing and ingestion only reach allowed addresses; a name is checked by what it resolves to", async () => {
    // A listener that counts connections: a refused address must not even be dialled.
    let dialled = 0;
    const counter = net.createServer((socket) => {
      dialled += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => counter.listen(0, "127.0.0.1", resolve));
    const counterPort = (counter.address() as net.AddressInfo).port;
    const allowedDir = tempDir("sluice-sec-allowed-");
    let restricted = await startSluice({ dataDir: allowedDir, env: { SMB_ALLOWED_NETWORKS: "127.0.0.0/8, fd00::/8" } });
    try {
      const api = client(restricted.api);
      const a = await signUp(api, "sec-allowed");
      const groupA = await createGroup(api, a.token);
      // Allowed: a name resolving into 127.0.0.0/8 (no default_ip), dialled at the address checked.
      const made = await api("POST", `/data_sources/smb/${groupA}`, { token: a.token, body: smbBody("Allowed", { default_ip: null }) });
      assert.equal(made.status, 201, made.text);
      assert.equal((await api("GET", `/data_sources/smb/list/${made.body.data_source.id}`, { token: a.token })).status, 200);
      await restricted.stop();

      // The administrator narrows the list: the stored source is now out of bounds everywhere.
      restricted = await startSluice({ dataDir: allowedDir, env: { SMB_ALLOWED_NETWORKS: "10.99.0.0/16" } });
      const narrowed = client(restricted.api);
      const token = (await narrowed("POST", "/signin", { body: { email: a.email, password: "correct-horse-42" } })).body.access_token;
      const before = await countRows(restricted, "data_sources");
      for (const overrides of [{ port: counterPort }, { port: counterPort, default_ip: null }]) {
        const refused = await narrowed("POST", `/data_sources/smb/${groupA}`, { token, body: smbBody("Refused", overrides) });
        assert.equal(refused.status, 400, refused.text);
        assert.match(refused.body.detail, /outside the networks Sluice may connect to \(SMB_ALLOWED_NETWORKS\)/);
      }
      assert.equal(await countRows(restricted, "data_sources"), before, "nothing created");
      assert.equal(dialled, 0, "a refused address is never dialled");
      const listing = await narrowed("GET", `/data_sources/smb/list/${made.body.data_source.id}`, { token });
      assert.equal(listing.status, 400, listing.text);
      assert.match(listing.body.detail, /SMB_ALLOWED_NETWORKS/);
      assert.equal((await narrowed("POST", `/data_pipelines/${made.body.pipeline.id}/ingest`, { token })).status, 202);
      const job = await waitForJobEnd(narrowed, token, made.body.pipeline.id);
      assert.equal(job.status, "failed", JSON.stringify(job));
      assert.match(job.error_message, /outside the networks Sluice may connect to \(SMB_ALLOWED_NETWORKS\)/);
    } finally {
      await restricted.stop();
      await new Promise<void>((resolve) => counter.close(() => resolve()));
    }
  });
});
