import assert from "node:assert/strict";
import http from "node:http";
import { after, before, describe, it } from "node:test";
import { startFakeGoogle, type FakeGoogle } from "../fixtures/fake-google";
import { startRoundRobinProxy, type RoundRobinProxy } from "../fixtures/round-robin-proxy";
import { startSluice, type SluiceServer, storedText, tempDir } from "../fixtures/sluice-server";
import { client, createGroup, signUp, waitForJobEnd, type ApiResponse, type Request } from "../fixtures/http-client";
import { useSluice } from "../fixtures/use-sluice";
import { freePort } from "../fixtures/free-port";

const DOC = "application/vnd.google-apps.document";
const SHEET = "application/vnd.google-apps.spreadsheet";
const SLIDES = "application/vnd.google-apps.presentation";
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}$/;

let google: FakeGoogle;
const responses: ApiResponse[] = [];

/** A port picked up front, so PUBLIC_URL (the OAuth redirect URI) can name it. */

const sluice = useSluice({
  env: async () => {
    google = await startFakeGoogle();
    const port = await freePort();
    return { ...google.env, PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` };
  },
});
after(async () => {
  await google.close();
});
// Keep every response so the last test can prove no refresh token ever appeared in one.
const request: Request = async (method, p, opts) => {
  const res = await sluice.request(method, p, opts);
  responses.push(res);
  return res;
};

/** Runs the browser's part of the consent: open auth_url, follow Google's redirect to our callback. */
async function consent(token: string, returnTo = "/settings/drive?tab=1") {
  const connect = await request("POST", `/integrations/cloud/drive/connect?return_to=${encodeURIComponent(returnTo)}`, { token });
  assert.equal(connect.status, 200, connect.text);
  const authorize = await fetch(connect.body.auth_url, { redirect: "manual" });
  assert.equal(authorize.status, 302);
  const callbackUrl = authorize.headers.get("location")!;
  const callback = await fetch(callbackUrl, { redirect: "manual" });
  return { authUrl: new URL(connect.body.auth_url), callbackUrl: new URL(callbackUrl), callback };
}

async function connectedUser(prefix = "drive") {
  const user = await signUp(request, prefix);
  const { callback } = await consent(user.token);
  assert.equal(callback.status, 302, await callback.text());
  return user;
}

function waitForJob(pipelineId: string, token: string) {
  return waitForJobEnd(request, token, pipelineId);
}

async function ingest(pipelineId: string, token: string) {
  const trigger = await request("POST", `/data_pipelines/${pipelineId}/ingest`, { token });
  assert.equal(trigger.status, 202, trigger.text);
  return waitForJob(pipelineId, token);
}

async function search(collectionId: string, q: string, token: string) {
  const res = await request("GET", `/collections/${collectionId}/search?q=${encodeURIComponent(q)}`, { token });
  assert.equal(res.status, 200, res.text);
  return res.body.results as Array<{ path: string; title: string; snippet: string }>;
}

describe("without an OAuth client configured", () => {
  const bare = useSluice();

  it("every drive endpoint answers 503 with a detail naming the settings", async () => {
    const req = bare.request;
    const user = await signUp(req);
    const group = await createGroup(req, user.token);
    const calls: Array<[string, string, unknown?]> = [
      ["GET", "/integrations/cloud/drive"],
      ["POST", "/integrations/cloud/drive/connect?return_to=/"],
      ["DELETE", "/integrations/cloud/drive"],
      ["GET", "/data_sources/drive/picker_token"],
      ["POST", "/data_sources/drive/", { data_source: { data_source_name: "Drive", owner_group_id: group } }],
    ];
    for (const [method, p, body] of calls) {
      const res = await req(method, p, { token: user.token, body });
      assert.equal(res.status, 503, `${method} ${p}: ${res.text}`);
      assert.match(res.body.detail, /GOOGLE_CLIENT_ID/);
    }
    const callback = await req("GET", "/integrations/cloud/drive/callback?state=x&code=y");
    assert.equal(callback.status, 503);
  });
});

describe("connecting Google Drive", () => {
  it("connect answers an auth_url for the code flow with PKCE, offline access and drive.file", async () => {
    const user = await signUp(request);
    const res = await request("POST", "/integrations/cloud/drive/connect?return_to=/settings", { token: user.token });
    assert.equal(res.status, 200, res.text);
    const url = new URL(res.body.auth_url);
    assert.equal(`${url.origin}${url.pathname}`, google.env.GOOGLE_AUTH_URL);
    const p = url.searchParams;
    assert.equal(p.get("client_id"), google.clientId);
    assert.equal(p.get("response_type"), "code");
    assert.equal(p.get("access_type"), "offline");
    assert.equal(p.get("scope"), "https://www.googleapis.com/auth/drive.file");
    assert.equal(p.get("code_challenge_method"), "S256");
    assert.match(p.get("code_challenge")!, /^[A-Za-z0-9_-]{43}$/);
    assert.ok((p.get("state") ?? "").length >= 32);
    assert.equal(p.get("redirect_uri"), `${sluice.server.url}/api/integrations/cloud/drive/callback`);
  });

  it("the callback needs no bearer token, stores the grant and redirects to return_to", async () => {
    const user = await signUp(request);
    const before = await request("GET", "/integrations/cloud/drive", { token: user.token });
    assert.equal(before.status, 200);
    assert.equal(before.body.connected, false);

    const { callback } = await consent(user.token, "/settings/drive?tab=1");
    assert.equal(callback.status, 302, await callback.text());
    assert.equal(callback.headers.get("location"), "/settings/drive?tab=1");

    const status = await request("GET", "/integrations/cloud/drive", { token: user.token });
    assert.equal(status.status, 200);
    assert.equal(status.body.connected, true);
    assert.equal(status.body.provider_subject, google.account.subject);
    assert.equal(status.body.email, google.account.email);
    assert.deepEqual(status.body.scopes, ["https://www.googleapis.com/auth/drive.file"]);
    assert.match(status.body.connected_at, TIMESTAMP);
    assert.ok(!JSON.stringify(status.body).includes("ya29."), "no token in the status");
  });

  it("a tampered, replayed or unknown state answers 400 and stores nothing", async () => {
    const user = await signUp(request);
    const connect = await request("POST", "/integrations/cloud/drive/connect?return_to=/", { token: user.token });
    const authorize = await fetch(connect.body.auth_url, { redirect: "manual" });
    const good = new URL(authorize.headers.get("location")!);

    const tampered = new URL(good);
    tampered.searchParams.set("state", `${good.searchParams.get("state")}x`);
    const bad = await fetch(tampered, { redirect: "manual" });
    assert.equal(bad.status, 400);
    assert.match(((await bad.json()) as { detail: string }).detail, /state/i);

    const missing = await fetch(`${sluice.server.api}/integrations/cloud/drive/callback?code=abc`, { redirect: "manual" });
    assert.equal(missing.status, 400);

    assert.equal((await request("GET", "/integrations/cloud/drive", { token: user.token })).body.connected, false);

    // The real state still works once, then never again.
    const first = await fetch(good, { redirect: "manual" });
    assert.equal(first.status, 302);
    const replay = await fetch(good, { redirect: "manual" });
    assert.equal(replay.status, 400);
  });

  it("a state is bound to the user who started: the callback connects that user only", async () => {
    const starter = await signUp(request);
    const other = await signUp(request);
    const { callback } = await consent(starter.token);
    assert.equal(callback.status, 302);
    assert.equal((await request("GET", "/integrations/cloud/drive", { token: starter.token })).body.connected, true);
    assert.equal((await request("GET", "/integrations/cloud/drive", { token: other.token })).body.connected, false);
  });

  it("a return_to outside this server is refused (no open redirect)", async () => {
    const user = await signUp(request);
    // "/..//evil.example" normalises to "//evil.example": the callback used to answer Location: //evil.example (issue 15).
    for (const target of ["https://evil.example/x", "//evil.example/x", "/\\evil.example", "javascript:alert(1)", "settings", "/..//evil.example", "/a/../..//evil.example/x"]) {
      const res = await request("POST", `/integrations/cloud/drive/connect?return_to=${encodeURIComponent(target)}`, { token: user.token });
      assert.equal(res.status, 400, `${target}: ${res.text}`);
      assert.match(res.body.detail, /return_to/);
    }
  });

  it("a consent the user declines redirects back with drive_error and stores nothing", async () => {
    const user = await signUp(request);
    const connect = await request("POST", "/integrations/cloud/drive/connect?return_to=/settings", { token: user.token });
    const state = new URL(connect.body.auth_url).searchParams.get("state")!;
    const res = await fetch(`${sluice.server.api}/integrations/cloud/drive/callback?error=access_denied&state=${encodeURIComponent(state)}`, { redirect: "manual" });
    assert.equal(res.status, 302);
    assert.equal(res.headers.get("location"), "/settings?drive_error=access_denied");
    assert.equal((await request("GET", "/integrations/cloud/drive", { token: user.token })).body.connected, false);
  });

  it("needs a signed-in caller for everything but the callback", async () => {
    assert.equal((await request("GET", "/integrations/cloud/drive")).status, 401);
    assert.equal((await request("POST", "/integrations/cloud/drive/connect?return_to=/")).status, 401);
    assert.equal((await request("GET", "/data_sources/drive/picker_token")).status, 401);
  });
});

/**
 * A browser as far as the consent needs one: it sends its cookies and follows nothing, and it
 * reaches the server's PUBLIC_URL name (sluice.test, which only this test resolves) at the
 * address it really listens on, as DNS would.
 */
async function browserGet(target: URL, opts: { reach: string; cookies?: string[]; accept?: string }) {
  const via = new URL(opts.reach);
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }>((resolve, reject) => {
    const req = http.request(
      {
        host: via.hostname,
        port: via.port,
        path: `${target.pathname}${target.search}`,
        headers: { host: target.host, accept: opts.accept ?? "text/html,application/xhtml+xml", ...(opts.cookies?.length ? { cookie: opts.cookies.join("; ") } : {}) },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

/** `name=value` of a Set-Cookie the response carries. */
function cookieFrom(res: { headers: Headers }, name: string): string {
  const line = res.headers.getSetCookie().find((c) => c.startsWith(`${name}=`));
  assert.ok(line, `no ${name} cookie in ${JSON.stringify(res.headers.getSetCookie())}`);
  return line.split(";")[0];
}

describe("consent bound to the browser that started it (issue 15)", () => {
  // Reached under a name, as on a LAN or behind a proxy: Google sends the browser back to sluice.test.
  let publicOrigin: string;
  const named = useSluice({
    env: async () => {
      const port = await freePort();
      publicOrigin = `http://sluice.test:${port}`;
      return { ...google.env, PORT: String(port), PUBLIC_URL: publicOrigin };
    },
  });
  const api = named.request;

  /** POST connect as the app's page does (signed in by cookie); the answer's auth_url and binding cookie. */
  async function startConnecting(accessCookie: string) {
    const res = await api("POST", "/integrations/cloud/drive/connect?return_to=/%23/sources", { headers: { cookie: accessCookie, origin: publicOrigin } });
    assert.equal(res.status, 200, res.text);
    return { authUrl: res.body.auth_url as string, binding: cookieFrom(res, "sluice_drive_consent") };
  }

  async function signedInBrowser(prefix: string) {
    const user = await signUp(api, prefix);
    const signin = await api("POST", "/signin", { body: { email: user.email, password: "correct-horse-42" } });
    return { ...user, cookie: cookieFrom(signin, "access_token") };
  }

  /** Google's consent in some browser: the callback URL Google sends that browser to. */
  async function consentAtGoogle(authUrl: string): Promise<URL> {
    const authorize = await fetch(authUrl, { redirect: "manual" });
    assert.equal(authorize.status, 302);
    const callback = new URL(authorize.headers.get("location")!);
    assert.equal(callback.host, new URL(named.server.url).host.replace("127.0.0.1", "sluice.test"));
    return callback;
  }

  it("someone else's consent link connects nothing: the victim's browser gets a page saying so", async () => {
    const attacker = await signedInBrowser("attacker");
    const victim = await signedInBrowser("victim");
    const { authUrl } = await startConnecting(attacker.cookie);
    // The victim opens the attacker's link, consents with their own Google account and comes back.
    const callback = await consentAtGoogle(authUrl);
    const page = await browserGet(callback, { reach: named.server.url, cookies: [victim.cookie] });
    assert.equal(page.status, 403, page.text);
    assert.match(String(page.headers["content-type"]), /text\/html/);
    assert.match(page.text, /Google Drive was not connected/);
    assert.match(page.text, /started in another browser, or by another Sluice user/);
    assert.doesNotMatch(page.text, /<script/i);
    for (const who of [attacker, victim]) {
      assert.equal((await api("GET", "/integrations/cloud/drive", { token: who.token })).body.connected, false, who.email);
    }
    // An API client is told the same in JSON.
    const json = await browserGet(await consentAtGoogle(authUrl), { reach: named.server.url, accept: "application/json" });
    assert.equal(json.status, 403);
    assert.match(JSON.parse(json.text).detail, /another browser or by another Sluice user/);
  });

  it("the browser that started finishes it, and its binding cookie is then cleared", async () => {
    const user = await signedInBrowser("starter");
    const { authUrl, binding } = await startConnecting(user.cookie);
    const back = await browserGet(await consentAtGoogle(authUrl), { reach: named.server.url, cookies: [user.cookie, binding] });
    assert.equal(back.status, 302, back.text);
    assert.equal(back.headers.location, "/#/sources");
    assert.ok(String(back.headers["set-cookie"]).startsWith("sluice_drive_consent=;"), String(back.headers["set-cookie"]));
    assert.equal((await api("GET", "/integrations/cloud/drive", { token: user.token })).body.connected, true);
  });

  it("a binding cookie from another connect does not fit this consent", async () => {
    const attacker = await signedInBrowser("attacker");
    const victim = await signedInBrowser("victim");
    const { authUrl } = await startConnecting(attacker.cookie);
    // The victim had started connecting their own Drive too: their cookie belongs to their own state.
    const own = await startConnecting(victim.cookie);
    const page = await browserGet(await consentAtGoogle(authUrl), { reach: named.server.url, cookies: [victim.cookie, own.binding] });
    assert.equal(page.status, 403);
    assert.equal((await api("GET", "/integrations/cloud/drive", { token: attacker.token })).body.connected, false);
  });

  it("the binding cookie is HttpOnly, SameSite=Lax, sent only to the callback and lives as long as the state", async () => {
    const user = await signedInBrowser("cookie");
    const res = await api("POST", "/integrations/cloud/drive/connect?return_to=/", { headers: { cookie: user.cookie } });
    const line = res.headers.getSetCookie().find((c) => c.startsWith("sluice_drive_consent="))!;
    assert.match(line, /; Max-Age=600;/);
    assert.match(line, /; Path=\/api\/integrations\/cloud\/drive\/callback;/);
    assert.match(line, /; HttpOnly/);
    assert.match(line, /; SameSite=Lax/);
  });
});

// Only a team server (REDIS_URL) runs several API processes on one storage; the desktop refuses a
// second server on its DATA_DIR. The suite's team run covers this.
const teamOnly = process.env.SLUICE_TEST_REDIS === "1" ? false : "several API processes share storage only on a team server (the team run covers this)";

describe("several API processes behind one port", { skip: teamOnly }, () => {
  // A team server: a state sealed by one process is opened by the other (shared secret store).
  let processes: SluiceServer[] = [];
  let proxy: RoundRobinProxy;

  before(async () => {
    const shared = tempDir();
    const env = { ...google.env, PUBLIC_URL: "http://sluice.test" };
    processes = [await startSluice({ dataDir: shared, env }), await startSluice({ dataDir: shared, env })];
    proxy = await startRoundRobinProxy(processes.map((p) => p.url));
  });
  after(async () => {
    await proxy?.close();
    for (const p of processes) await p.stop();
  });

  it("connect on one process, the callback on the other", async () => {
    const viaPort = client(`${proxy.url}/api`);
    const user = await signUp(viaPort, "two-processes");
    const connects = [0, 1].map(() => viaPort("POST", "/integrations/cloud/drive/connect?return_to=/", { token: user.token }));
    // Two connects in a row: the round robin sends the second callback to the process that did not issue its state.
    for (const connect of await Promise.all(connects)) {
      assert.equal(connect.status, 200, connect.text);
      const authorize = await fetch(connect.body.auth_url, { redirect: "manual" });
      const callback = new URL(authorize.headers.get("location")!);
      const back = await browserGet(callback, { reach: proxy.url, cookies: [cookieFrom(connect, "sluice_drive_consent")] });
      assert.equal(back.status, 302, back.text);
    }
    assert.ok([...proxy.served.values()].every((n) => n >= 2), JSON.stringify([...proxy.served]));
    assert.equal((await viaPort("GET", "/integrations/cloud/drive", { token: user.token })).body.connected, true);
  });
});

describe("picker token", () => {
  it("hands out an access token, refreshes it when due, and answers 401 once Google refuses the grant", async () => {
    google.accessTokenTtl = 30; // inside the refresh margin: every request refreshes
    let user: { token: string };
    try {
      user = await connectedUser();
      const first = await request("GET", "/data_sources/drive/picker_token", { token: user.token });
      assert.equal(first.status, 200, first.text);
      assert.match(first.body.access_token, /^ya29\./);
      assert.match(first.body.expires_at, TIMESTAMP);
      assert.deepEqual(Object.keys(first.body).sort(), ["access_token", "expires_at"]);
      const second = await request("GET", "/data_sources/drive/picker_token", { token: user.token });
      assert.equal(second.status, 200);
      assert.notEqual(second.body.access_token, first.body.access_token, "refreshed");

      google.refuseRefresh = true;
      const dead = await request("GET", "/data_sources/drive/picker_token", { token: user.token });
      assert.equal(dead.status, 401, dead.text);
      assert.match(dead.body.detail, /reconnect/i);
    } finally {
      google.refuseRefresh = false;
      google.accessTokenTtl = 3599;
    }
    // Reconnecting brings it back.
    await consent(user.token);
    assert.equal((await request("GET", "/data_sources/drive/picker_token", { token: user.token })).status, 200);
  });

  it("a cached token is reused while it is fresh", async () => {
    const user = await connectedUser();
    const a = await request("GET", "/data_sources/drive/picker_token", { token: user.token });
    const b = await request("GET", "/data_sources/drive/picker_token", { token: user.token });
    assert.equal(a.body.access_token, b.body.access_token);
  });

  it("answers 409 before the drive is connected", async () => {
    const user = await signUp(request);
    const res = await request("GET", "/data_sources/drive/picker_token", { token: user.token });
    assert.equal(res.status, 409);
    assert.match(res.body.detail, /connect/i);
  });
});

describe("drive data sources and ingestion", () => {
  let owner: { email: string; token: string };
  let group: string;
  let created: { data_source: { id: string; kind: string }; pipeline: { id: string; collection_id: string } };
  const ids: Record<string, string> = {};

  before(async () => {
    owner = await connectedUser("owner");
    group = await createGroup(request, owner.token);
  });

  it("creation needs a connected drive (409) and membership of the group (404)", async () => {
    const stranger = await signUp(request);
    const res = await request("POST", "/data_sources/drive/", {
      token: stranger.token,
      body: { data_source: { data_source_name: "Nope", owner_group_id: await createGroup(request, stranger.token) } },
    });
    assert.equal(res.status, 409);
    const outsider = await connectedUser();
    const denied = await request("POST", "/data_sources/drive/", { token: outsider.token, body: { data_source: { data_source_name: "X", owner_group_id: group } } });
    assert.equal(denied.status, 404);
    const invalid = await request("POST", "/data_sources/drive/", { token: owner.token, body: { data_source: { data_source_name: "X" } } });
    assert.equal(invalid.status, 422);
  });

  it("creates the source with its collection and pipeline (201)", async () => {
    const res = await request("POST", "/data_sources/drive/", { token: owner.token, body: { data_source: { data_source_name: "Team Drive", owner_group_id: group } } });
    assert.equal(res.status, 201, res.text);
    created = res.body;
    assert.equal(res.body.data_source.kind, "drive");
    assert.equal(res.body.data_source.owner_group_id, group);
    assert.equal(res.body.pipeline.data_source_id, res.body.data_source.id);
    assert.equal(res.body.pipeline.status, "inactive");
    assert.match(res.body.pipeline.collection_id, /^[0-9a-f-]{36}$/);
    const collections = await request("GET", "/collections", { token: owner.token });
    assert.ok(collections.body.some((c: { id: string; name: string }) => c.id === res.body.pipeline.collection_id && /^team_drive_[0-9a-f]{8}$/.test(c.name)));
  });

  it("ingest_all answers 409 when the grant covers no files", async () => {
    assert.equal(google.files.size, 0);
    const res = await request("POST", `/data_sources/drive/${created.data_source.id}/ingest_all`, { token: owner.token });
    assert.equal(res.status, 409, res.text);
    assert.match(res.body.detail, /no files/);
  });

  it("registers file ids after checking them against Drive; unknown ids are refused", async () => {
    ids.notes = google.addFile("notes.txt", "text/plain", "The albatross inventory is kept in the cellar.").id;
    ids.doc = google.addFile("Strategy", DOC, "Our strategy relies on the pangolin partnership.").id;
    ids.sheet = google.addFile("Budget", SHEET, "item,cost\nwombat feed,120\n").id;
    ids.slides = google.addFile("Kickoff", SLIDES, "Slide one: the narwhal roadmap.").id;
    ids.image = google.addFile("photo.heic", "image/heic", Buffer.from([0x00, 0x00, 0x00, 0x18])).id;

    const unknown = await request("POST", `/data_sources/drive/${created.data_source.id}/files`, { token: owner.token, body: { file_ids: [ids.notes, "doesNotExist123"] } });
    assert.equal(unknown.status, 422, unknown.text);
    assert.equal(unknown.body.errors[0].field, "file_ids.1");

    const res = await request("POST", `/data_sources/drive/${created.data_source.id}/files`, { token: owner.token, body: { file_ids: [ids.notes, ids.doc] } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.added, 2);
    assert.deepEqual(res.body.files.map((f: { file_id: string }) => f.file_id).sort(), [ids.notes, ids.doc].sort());

    const again = await request("POST", `/data_sources/drive/${created.data_source.id}/files`, { token: owner.token, body: { file_ids: [ids.notes] } });
    assert.equal(again.body.added, 0, "registering twice is harmless");
  });

  it("only members reach the source (404) and only its owner registers files (409)", async () => {
    const outsider = await connectedUser();
    const res = await request("POST", `/data_sources/drive/${created.data_source.id}/files`, { token: outsider.token, body: { file_ids: [ids.notes] } });
    assert.equal(res.status, 404);
    const member = await connectedUser();
    assert.equal((await request("PUT", `/user_groups/${group}/members/${encodeURIComponent(member.email)}`, { token: owner.token })).status, 204);
    const notOwner = await request("POST", `/data_sources/drive/${created.data_source.id}/ingest_all`, { token: member.token });
    assert.equal(notOwner.status, 409);
  });

  it("ingest_all registers every file the grant covers, across pages", async () => {
    const res = await request("POST", `/data_sources/drive/${created.data_source.id}/ingest_all`, { token: owner.token });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.files.length, 5);
    assert.equal(res.body.added, 3);
    assert.ok(google.requests.some((r) => r.url.includes("pageToken=")), "followed nextPageToken");
  });

  it("ingests binary files and exported Google documents, through 429s, and makes them searchable", async () => {
    google.failNext(3, 429);
    const job = await ingest(created.pipeline.id, owner.token);
    assert.equal(job.status, "completed", JSON.stringify(job));
    assert.equal(job.entities_discovered, 5);
    assert.equal(job.entities_skipped, 1, "the image is skipped");
    assert.equal(job.entities_failed, 0, JSON.stringify(job.errors));
    const collection = created.pipeline.collection_id;
    assert.equal((await search(collection, "albatross", owner.token))[0].path, ids.notes);
    assert.equal((await search(collection, "pangolin", owner.token))[0].path, ids.doc);
    assert.equal((await search(collection, "wombat", owner.token))[0].path, ids.sheet);
    assert.equal((await search(collection, "narwhal", owner.token))[0].path, ids.slides);
    assert.ok(google.requests.some((r) => r.url.startsWith(`/drive/v3/files/${ids.doc}/export?mimeType=text%2Fplain`)));
    assert.ok(google.requests.some((r) => r.url.startsWith(`/drive/v3/files/${ids.sheet}/export?mimeType=text%2Fcsv`)));
    assert.ok(google.requests.some((r) => r.url.includes(`/drive/v3/files/${ids.notes}?alt=media`)));
  });

  it("a re-run reads only changed files and removes trashed and vanished ones", async () => {
    const downloads = () => google.requests.filter((r) => /alt=media|\/export\?/.test(r.url)).length;
    let before = downloads();
    const unchanged = await ingest(created.pipeline.id, owner.token);
    assert.equal(unchanged.status, "completed");
    assert.equal(downloads(), before, "nothing re-read when no version changed");

    google.updateFile(ids.doc, "Our strategy now relies on the axolotl partnership.");
    google.files.get(ids.notes)!.trashed = true;
    google.files.delete(ids.slides);
    before = downloads();
    const changed = await ingest(created.pipeline.id, owner.token);
    assert.equal(changed.status, "completed", JSON.stringify(changed));
    assert.equal(downloads(), before + 1, "only the changed document is read");
    const collection = created.pipeline.collection_id;
    assert.equal((await search(collection, "axolotl", owner.token))[0].path, ids.doc);
    assert.equal((await search(collection, "pangolin", owner.token)).length, 0);
    assert.equal((await search(collection, "albatross", owner.token)).length, 0, "trashed file removed");
    assert.equal((await search(collection, "narwhal", owner.token)).length, 0, "deleted file removed");
    assert.equal((await search(collection, "wombat", owner.token)).length, 1);
  });

  it("a job fails with a clear message when Google keeps failing", async () => {
    google.failNext(50, 503);
    try {
      const job = await ingest(created.pipeline.id, owner.token);
      assert.equal(job.status, "failed");
      assert.match(job.error_message, /unreachable|unavailable/i);
    } finally {
      google.failNext(0);
    }
    const recovered = await ingest(created.pipeline.id, owner.token);
    assert.equal(recovered.status, "completed");
    assert.equal((await search(created.pipeline.collection_id, "wombat", owner.token)).length, 1, "nothing removed by the failed run");
  });

  it("deleting the source removes its registrations with it", async () => {
    const extra = await request("POST", "/data_sources/drive/", { token: owner.token, body: { data_source: { data_source_name: "Scratch", owner_group_id: group } } });
    await request("POST", `/data_sources/drive/${extra.body.data_source.id}/files`, { token: owner.token, body: { file_ids: [ids.sheet] } });
    assert.equal((await request("DELETE", `/data_sources/${extra.body.data_source.id}`, { token: owner.token })).status, 204);
    const again = await request("POST", `/data_sources/drive/${extra.body.data_source.id}/files`, { token: owner.token, body: { file_ids: [ids.sheet] } });
    assert.equal(again.status, 404);
  });

  it("disconnecting revokes the grant at Google and forgets it; the source's next run fails", async () => {
    const refresh = google.refreshTokensIssued();
    const res = await request("DELETE", "/integrations/cloud/drive", { token: owner.token });
    assert.equal(res.status, 204);
    assert.ok(google.revoked().some((t) => refresh.includes(t)), "refresh token revoked at Google");
    assert.equal((await request("GET", "/integrations/cloud/drive", { token: owner.token })).body.connected, false);
    assert.equal((await request("GET", "/data_sources/drive/picker_token", { token: owner.token })).status, 409);
    const job = await ingest(created.pipeline.id, owner.token);
    assert.equal(job.status, "failed");
    assert.match(job.error_message, /disconnected|reconnect/i);
  });
});

describe("Google failing behind the API", () => {
  let user: { token: string };
  let sourceId: string;

  before(async () => {
    user = await connectedUser("failing");
    const group = await createGroup(request, user.token);
    const res = await request("POST", "/data_sources/drive/", { token: user.token, body: { data_source: { data_source_name: "Flaky", owner_group_id: group } } });
    assert.equal(res.status, 201, res.text);
    sourceId = res.body.data_source.id;
  });

  it("Drive answering 503 past the retries answers 503; a few 503s are retried away", async () => {
    google.failNext(50, 503);
    try {
      const res = await request("POST", `/data_sources/drive/${sourceId}/ingest_all`, { token: user.token });
      assert.equal(res.status, 503, res.text);
      assert.match(res.body.detail, /Google Drive is unavailable/);
    } finally {
      google.failNext(0);
    }
    google.failNext(2, 503);
    const retried = await request("POST", `/data_sources/drive/${sourceId}/ingest_all`, { token: user.token });
    assert.equal(retried.status, 200, retried.text);
  });

  it("a refresh Google refuses with invalid_grant answers 409 reconnect", async () => {
    google.accessTokenTtl = 30; // inside the refresh margin: the next call refreshes
    try {
      await consent(user.token);
      google.refuseRefresh = true;
      const res = await request("POST", `/data_sources/drive/${sourceId}/ingest_all`, { token: user.token });
      assert.equal(res.status, 409, res.text);
      assert.match(res.body.detail, /reconnect/i);
    } finally {
      google.refuseRefresh = false;
      google.accessTokenTtl = 3599;
    }
  });
});

describe("token storage", () => {
  it("no OAuth token is in the database, the server's logs or any response other than the picker token", async () => {
    const dbBytes = await storedText(sluice.server);
    const logs = sluice.server.output();
    assert.ok(logs.length > 0);
    for (const token of [...google.refreshTokensIssued(), ...google.accessTokensIssued()]) {
      assert.ok(!dbBytes.includes(token), "token found in the database");
      assert.ok(!logs.includes(token), "token found in the server's logs");
    }
    for (const token of google.refreshTokensIssued()) {
      assert.ok(!responses.some((r) => r.text.includes(token)), "refresh token found in a response");
    }
    const pickerResponses = responses.filter((r) => r.body && typeof r.body === "object" && "expires_at" in r.body);
    for (const token of google.accessTokensIssued()) {
      assert.ok(!responses.some((r) => !pickerResponses.includes(r) && r.text.includes(token)), "access token outside a picker response");
    }
  });
});
