import assert from "node:assert/strict";
import diagnostics from "node:diagnostics_channel";
import type { ClientRequest } from "node:http";
import net from "node:net";
import { Readable } from "node:stream";
import { after, before, beforeEach, describe, it } from "node:test";
import { DriveApi, DriveApiError, DriveAuthError, DriveFileNotFoundError } from "../../server/connectors/gdrive/drive-api";
import { GoogleUnavailableError } from "../../server/connectors/gdrive/google-http";
import { GoogleOAuthClient, InvalidGrantError, OAuthError, pkcePair, type GoogleClientConfig } from "../../server/connectors/gdrive/google-oauth";
import { startFakeGoogle, type FakeGoogle } from "../fixtures/fake-google";

const DOC = "application/vnd.google-apps.document";
const REDIRECT = "http://127.0.0.1:8420/api/integrations/cloud/drive/callback";

let google: FakeGoogle;
let config: GoogleClientConfig;
let oauth: GoogleOAuthClient;
/** Every HTTP request this process starts, by host: the clients must never leave the fake. */
const hosts: string[] = [];
const recordHost = (message: unknown) => hosts.push(String((message as { request: ClientRequest }).request.getHeader("host")));

before(async () => {
  diagnostics.subscribe("http.client.request.start", recordHost);
  google = await startFakeGoogle();
  config = {
    clientId: google.env.GOOGLE_CLIENT_ID,
    clientSecret: google.env.GOOGLE_CLIENT_SECRET,
    authUrl: google.env.GOOGLE_AUTH_URL,
    tokenUrl: google.env.GOOGLE_TOKEN_URL,
    apiUrl: google.env.GOOGLE_API_URL,
  };
  oauth = new GoogleOAuthClient(config);
});
after(async () => {
  diagnostics.unsubscribe("http.client.request.start", recordHost);
  await google.close();
  assert.ok(hosts.length > 0);
  assert.deepEqual([...new Set(hosts)], [new URL(google.base).host], "every request went to the fake");
});
beforeEach(() => {
  google.failNext(0);
  google.failNext(0, 429, { endpoint: "token" });
  google.files.clear();
});

/** The browser's part of the consent: the fake approves and redirects back with a code. */
async function authorizationCode(challenge: string): Promise<string> {
  const url = oauth.authorizationUrl({ redirectUri: REDIRECT, state: "s", codeChallenge: challenge });
  const res = await fetch(url, { redirect: "manual" });
  assert.equal(res.status, 302);
  return new URL(res.headers.get("location")!).searchParams.get("code")!;
}

async function grant() {
  const { verifier, challenge } = pkcePair();
  return oauth.exchangeCode(await authorizationCode(challenge), verifier, REDIRECT);
}

const paths = (since: number) => google.requests.slice(since).map((r) => `${r.method} ${r.url.split("?")[0]}`);

describe("GoogleOAuthClient on google-auth-library", () => {
  it("builds the consent URL on GOOGLE_AUTH_URL with PKCE S256, offline access and drive.file", () => {
    const url = new URL(oauth.authorizationUrl({ redirectUri: REDIRECT, state: "st", codeChallenge: "ch" }));
    assert.equal(`${url.origin}${url.pathname}`, config.authUrl);
    const p = url.searchParams;
    assert.equal(p.get("client_id"), config.clientId);
    assert.equal(p.get("redirect_uri"), REDIRECT);
    assert.equal(p.get("response_type"), "code");
    assert.equal(p.get("scope"), "https://www.googleapis.com/auth/drive.file");
    assert.equal(p.get("access_type"), "offline");
    assert.equal(p.get("prompt"), "consent");
    assert.equal(p.get("state"), "st");
    assert.equal(p.get("code_challenge"), "ch");
    assert.equal(p.get("code_challenge_method"), "S256");
  });

  it("exchanges a code, refreshes and revokes at the overridden token and revocation endpoints", async () => {
    const since = google.requests.length;
    const first = await grant();
    assert.match(first.accessToken, /^ya29\./);
    assert.match(first.refreshToken!, /^1\/\//);
    assert.deepEqual(first.scopes, ["https://www.googleapis.com/auth/drive.file"]);
    assert.ok(Math.abs(first.expiresAt.getTime() - (Date.now() + google.accessTokenTtl * 1000)) < 5_000);

    const refreshed = await oauth.refresh(first.refreshToken!);
    assert.notEqual(refreshed.accessToken, first.accessToken);
    assert.equal(refreshed.refreshToken, null, "Google does not send the refresh token again");

    await oauth.revoke(first.refreshToken!);
    assert.deepEqual(google.revoked(), [first.refreshToken]);
    await assert.rejects(oauth.refresh(first.refreshToken!), InvalidGrantError);
    assert.deepEqual(paths(since), ["GET /o/oauth2/v2/auth", "POST /token", "POST /token", "POST /revoke", "POST /token"]);
  });

  it("a token Google no longer knows counts as revoked", async () => {
    await oauth.revoke("1//unknown");
  });

  it("invalid_grant (bad code, bad verifier, dead refresh token) is InvalidGrantError", async () => {
    await assert.rejects(oauth.refresh("1//never-issued"), (e: Error) => e instanceof InvalidGrantError && /expired or revoked/.test(e.message));
    await assert.rejects(oauth.exchangeCode("4/never-issued", pkcePair().verifier, REDIRECT), InvalidGrantError);
    const { challenge } = pkcePair();
    await assert.rejects(oauth.exchangeCode(await authorizationCode(challenge), pkcePair().verifier, REDIRECT), InvalidGrantError);
  });

  it("other refusals of the token endpoint are OAuthError with Google's code", async () => {
    const wrong = new GoogleOAuthClient({ ...config, clientSecret: "not-the-secret" });
    await assert.rejects(wrong.refresh("1//x"), (e: Error) => e instanceof OAuthError && e.code === "invalid_client");
  });

  it("retries the token endpoint through 503s; an outage past the budget is GoogleUnavailableError", async () => {
    const { refreshToken } = await grant();
    google.failNext(2, 503, { endpoint: "token" });
    assert.match((await oauth.refresh(refreshToken!)).accessToken, /^ya29\./);
    google.failNext(50, 503, { endpoint: "token" });
    const since = google.requests.length;
    try {
      await assert.rejects(oauth.refresh(refreshToken!), (e: Error) => e instanceof GoogleUnavailableError && /answered 503/.test(e.message));
    } finally {
      google.failNext(0, 429, { endpoint: "token" });
    }
    assert.equal(paths(since).length, 5, "one request and four retries");
  });
});

describe("DriveApi on the Drive v3 client", () => {
  let token: string;
  let refreshToken: string;
  let api: DriveApi;
  const forced: boolean[] = [];

  before(async () => {
    const g = await grant();
    token = g.accessToken;
    refreshToken = g.refreshToken!;
    api = new DriveApi(config.apiUrl, async () => token);
  });

  it("about.get names the grant's account", async () => {
    assert.deepEqual(await api.about(), { permissionId: google.account.subject, emailAddress: google.account.email });
  });

  it("lists every file across several pages, following nextPageToken", async () => {
    const added = ["a", "b", "c", "d", "e"].map((n) => google.addFile(`${n}.txt`, "text/plain", n).id);
    google.files.get(added[4])!.trashed = true;
    const since = google.requests.length;
    const files = await api.listAll();
    assert.deepEqual(files.map((f) => f.id).sort(), added.slice(0, 4).sort());
    const lists = google.requests.slice(since);
    assert.equal(lists.length, 2, "two pages of two");
    assert.ok(!lists[0].url.includes("pageToken="));
    assert.ok(lists[1].url.includes("pageToken="));
    const q = new URL(lists[0].url, google.base).searchParams;
    assert.equal(q.get("q"), "trashed = false");
    assert.equal(q.get("fields"), "nextPageToken,files(id,name,mimeType,size,modifiedTime,version,trashed)");
    assert.deepEqual(files.find((f) => f.id === added[0]), {
      id: added[0],
      name: "a.txt",
      mimeType: "text/plain",
      size: "1",
      modifiedTime: google.files.get(added[0])!.modifiedTime,
      version: "1",
      trashed: false,
    });
  });

  it("downloads a file's bytes as a stream, in more than one piece when it is large", async () => {
    const content = Buffer.alloc(4 * 1024 * 1024, "x");
    const file = google.addFile("big.bin", "application/octet-stream", content);
    const stream = await api.download(file);
    assert.ok(stream instanceof Readable);
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    assert.ok(chunks.length > 1, "not handed over as one buffered body");
    assert.ok(Buffer.concat(chunks).equals(content));
    assert.match(google.requests.at(-1)!.url, new RegExp(`^/drive/v3/files/${file.id}\\?alt=media`));
  });

  it("exports a Google document as a stream in the export format", async () => {
    const doc = google.addFile("Plan", DOC, "The plan is the heron.");
    const stream = await api.download(doc);
    assert.ok(stream instanceof Readable);
    assert.equal(Buffer.concat(await stream.toArray()).toString(), "The plan is the heron.");
    assert.equal(google.requests.at(-1)!.url, `/drive/v3/files/${doc.id}/export?mimeType=text%2Fplain`);
  });

  it("retries 503 and 429 with backoff, then succeeds", async () => {
    const file = google.addFile("r.txt", "text/plain", "r");
    google.failNext(3, 503);
    const since = google.requests.length;
    assert.equal((await api.get(file.id)).name, "r.txt");
    assert.equal(google.requests.length - since, 4);
  });

  it("waits as long as Retry-After says", async () => {
    const file = google.addFile("w.txt", "text/plain", "w");
    google.failNext(1, 429, { retryAfter: 1 });
    const started = Date.now();
    await api.get(file.id);
    assert.ok(Date.now() - started >= 1000, "the default first wait is 200 ms");
  });

  it("an outage past the retry budget is GoogleUnavailableError", async () => {
    google.failNext(50, 503);
    try {
      await assert.rejects(api.listAll(), (e: Error) => e instanceof GoogleUnavailableError && e.message === "Google Drive answered 503");
    } finally {
      google.failNext(0);
    }
  });

  it("an unreachable Google is GoogleUnavailableError without the URL", async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    // The host check after all tests expects only the fake: this one request is to a closed local port.
    const unreachable = new DriveApi(`http://127.0.0.1:${port}`, async () => token);
    await assert.rejects(unreachable.about(), (e: Error) => e instanceof GoogleUnavailableError && /could not be reached \(ECONNREFUSED\)/.test(e.message));
    hosts.splice(0, hosts.length, ...hosts.filter((h) => h !== `127.0.0.1:${port}`));
  });

  it("a 401 gets one forced refresh of the token; a second 401 is DriveAuthError", async () => {
    const refreshing = new DriveApi(config.apiUrl, async (force) => {
      forced.push(force);
      return force ? (await oauth.refresh(refreshToken)).accessToken : "ya29.stale";
    });
    assert.equal((await refreshing.about()).permissionId, google.account.subject);
    assert.deepEqual(forced, [false, true]);
    const dead = new DriveApi(config.apiUrl, async () => "ya29.stale");
    await assert.rejects(dead.about(), DriveAuthError);
  });

  it("the token source's own errors pass through untouched", async () => {
    const failing = new DriveApi(config.apiUrl, async () => {
      throw new InvalidGrantError();
    });
    await assert.rejects(failing.listAll(), InvalidGrantError);
  });

  it("404 is DriveFileNotFoundError; other refusals are DriveApiError with Google's message", async () => {
    await assert.rejects(api.get("missing123"), (e: Error) => e instanceof DriveFileNotFoundError && e.fileId === "missing123");
    const doc = google.addFile("Doc", DOC, "x");
    // A Google document has no bytes: Drive refuses alt=media with 403 fileNotDownloadable.
    await assert.rejects(api.download({ id: doc.id, mimeType: "text/plain" }), (e: Error) => {
      return e instanceof DriveApiError && e.status === 403 && /Only files with binary content can be downloaded/.test(e.message);
    });
  });

  it("connects directly, as before, even with HTTP(S)_PROXY set", async () => {
    const saved = { HTTPS_PROXY: process.env.HTTPS_PROXY, HTTP_PROXY: process.env.HTTP_PROXY };
    // A proxy nobody listens on: a client that followed it would fail.
    process.env.HTTPS_PROXY = process.env.HTTP_PROXY = "http://127.0.0.1:9";
    try {
      const fresh = await oauth.refresh(refreshToken);
      assert.equal((await new DriveApi(config.apiUrl, async () => fresh.accessToken).about()).permissionId, google.account.subject);
    } finally {
      for (const [key, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    }
  });

  it("keeps a path in GOOGLE_API_URL", async () => {
    const prefixed = new DriveApi(`${config.apiUrl}/google`, async () => token);
    // The fake serves no /google prefix: its JSON 404 comes back with Google's message.
    await assert.rejects(prefixed.about(), (e: Error) => e instanceof DriveApiError && e.message === "Google Drive answered 404: Not Found");
    assert.equal(google.requests.at(-1)!.url, "/google/drive/v3/about?fields=user");
  });
});
