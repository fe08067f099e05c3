import assert from "node:assert/strict";
import net from "node:net";
import { after, before, describe, it } from "node:test";
import { startFakeGoogle, type FakeGoogle } from "../fixtures/fake-google";
import { storedText } from "../fixtures/sluice-server";
import { createGroup, signUp, type ApiResponse, type Request } from "../fixtures/http-client";
import { useSluice } from "../fixtures/use-sluice";

const DOC = "application/vnd.google-apps.document";
const SHEET = "application/vnd.google-apps.spreadsheet";
const SLIDES = "application/vnd.google-apps.presentation";
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}$/;

let google: FakeGoogle;
const responses: ApiResponse[] = [];

/** A port picked up front, so PUBLIC_URL (the OAuth redirect URI) can name it. */
async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

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

async function waitForJob(pipelineId: string, token: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await request("GET", `/data_pipelines/${pipelineId}/ingest/status`, { token });
    if (res.status === 200 && res.body.status !== "processing") return res.body;
    if (Date.now() > deadline) throw new Error(`job did not finish: ${res.text}`);
    await new Promise((r) => setTimeout(r, 100));
  }
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
    for (const target of ["https://evil.example/x", "//evil.example/x", "/\\evil.example", "javascript:alert(1)", "settings"]) {
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
    ids.image = google.addFile("photo.png", "image/png", Buffer.from([0x89, 0x50, 0x4e, 0x47])).id;

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
