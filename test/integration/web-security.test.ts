import assert from "node:assert/strict";
import http from "node:http";
import { after, before, describe, it } from "node:test";
import { client, createGroup, signUp, type Request } from "../fixtures/http-client";
import { startSluice, type SluiceServer } from "../fixtures/sluice-server";

let server: SluiceServer;
let request: Request;

before(async () => {
  server = await startSluice({ env: { PUBLIC_URL: "" } });
  request = client(server.api);
});
after(async () => {
  await server?.stop();
});

/** A request with a Host header of our choosing (fetch does not let one be set), at the server's real address. */
function withHost(host: string, path: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path, headers: { host } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** A signed-in browser's cookie, as sign-in sets it. */
async function sessionCookie(): Promise<{ cookie: string; token: string }> {
  const user = await signUp(request, "csrf");
  const res = await request("POST", "/signin", { body: { email: user.email, password: "correct-horse-42" } });
  const line = res.headers.getSetCookie().find((c) => c.startsWith("access_token="))!;
  return { cookie: line.split(";")[0], token: user.token };
}

describe("DNS rebinding: the Host header", () => {
  it("a name that is not this server's is refused before any route, with a detail that says what to do", async () => {
    const port = new URL(server.url).port;
    for (const path of ["/api/health", "/", "/api/users/me"]) {
      const res = await withHost(`evil.example:${port}`, path);
      assert.equal(res.status, 403, `${path}: ${res.text}`);
      assert.equal(JSON.parse(res.text).detail, `Host 'evil.example:${port}' is not an address of this server; set PUBLIC_URL if you reach it under another name`);
    }
  });

  it("loopback names are answered", async () => {
    const port = new URL(server.url).port;
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]) {
      assert.equal((await withHost(host, "/api/health")).status, 200, host);
    }
  });

  it("the PUBLIC_URL name is answered (a reverse proxy passing Host)", async () => {
    const named = await startSluice({ env: { PUBLIC_URL: "https://sluice.example.lan" } });
    try {
      const url = new URL(named.url);
      const get = (host: string) =>
        new Promise<number>((resolve, reject) => {
          http.get({ host: url.hostname, port: url.port, path: "/api/health", headers: { host } }, (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          }).on("error", reject);
        });
      assert.equal(await get("sluice.example.lan"), 200);
      assert.equal(await get("other.example.lan"), 403);
    } finally {
      await named.stop();
    }
  });
});

describe("cross-site requests with the cookie", () => {
  const EVIL = "http://evil.example";

  it("a cross-site form post to /signout changes nothing; the app's own page signs out", async () => {
    const { cookie } = await sessionCookie();
    const forged = await request("POST", "/signout", { headers: { cookie, origin: EVIL, "content-type": "application/x-www-form-urlencoded" } });
    assert.equal(forged.status, 403, forged.text);
    assert.match(forged.body.detail, /^Cross-site request refused: it came from a page at http:\/\/evil\.example/);
    assert.equal(forged.headers.getSetCookie().length, 0, "the cookie is not cleared");
    const own = await request("POST", "/signout", { headers: { cookie, origin: server.url } });
    assert.equal(own.status, 200, own.text);
    assert.match(own.headers.getSetCookie()[0], /^access_token=;/);
  });

  it("body-less POSTs (ingest, ingest_all, drive connect, library refresh) and deletes are refused cross-site", async () => {
    const { cookie, token } = await sessionCookie();
    const groupId = await createGroup(request, token);
    const id = "00000000-0000-4000-8000-000000000000";
    for (const [method, path] of [
      ["POST", `/data_pipelines/${id}/ingest`],
      ["POST", `/data_sources/drive/${id}/ingest_all`],
      ["POST", "/integrations/cloud/drive/connect?return_to=/"],
      ["POST", "/models/library/refresh"],
      ["DELETE", `/user_groups/${groupId}`],
    ]) {
      const res = await request(method, path, { headers: { cookie, origin: EVIL } });
      assert.equal(res.status, 403, `${method} ${path}: ${res.text}`);
      const meta = await request(method, path, { headers: { cookie, "sec-fetch-site": "cross-site" } });
      assert.equal(meta.status, 403, `${method} ${path} (Sec-Fetch-Site): ${meta.text}`);
    }
    const groups = await request("GET", "/user_groups", { headers: { cookie } });
    assert.ok(groups.body.some((g: { id: string }) => g.id === groupId), "the group is still there");
    // The same delete from the app's own page goes through.
    assert.equal((await request("DELETE", `/user_groups/${groupId}`, { headers: { cookie, origin: server.url, "sec-fetch-site": "same-origin" } })).status, 204);
  });

  it("another port of this host is another origin (SameSite=Lax would send the cookie)", async () => {
    const { cookie } = await sessionCookie();
    const port = Number(new URL(server.url).port);
    const res = await request("POST", "/signout", { headers: { cookie, origin: `http://127.0.0.1:${port === 65535 ? 1 : port + 1}`, "sec-fetch-site": "same-site" } });
    assert.equal(res.status, 403, res.text);
  });

  it("bearer-token clients and clients that send no Origin are unaffected", async () => {
    const { cookie, token } = await sessionCookie();
    assert.equal((await request("POST", "/user_groups", { token, headers: { origin: EVIL }, body: { group_name: `bearer-${Date.now()}`, group_permission: "read" } })).status, 201);
    assert.equal((await request("POST", "/signout", { headers: { cookie } })).status, 200);
  });
});

describe("headers on the UI and the API", () => {
  it("a strict Content-Security-Policy (no inline script), no framing", async () => {
    for (const path of ["/", "/api/health"]) {
      const res = await fetch(server.url + path);
      assert.equal(res.status, 200, path);
      const csp = res.headers.get("content-security-policy") ?? "";
      assert.match(csp, /script-src 'self'(;|$)/, path);
      assert.match(csp, /frame-ancestors 'none'/, path);
      assert.equal(res.headers.get("x-frame-options"), "DENY", path);
    }
  });

  it("API answers are not to be stored and carry no ETag; the UI's files keep theirs for revalidation", async () => {
    const api = await fetch(`${server.url}/api/health`);
    assert.equal(api.status, 200);
    assert.equal(api.headers.get("cache-control"), "no-store");
    assert.equal(api.headers.get("etag"), null);
    const page = await fetch(`${server.url}/`);
    assert.equal(page.status, 200);
    assert.ok(page.headers.get("etag"), "index.html has an ETag");
  });

  it("the built UI has no inline script or style that the policy would block", async () => {
    const html = await (await fetch(`${server.url}/`)).text();
    assert.match(html, /<div id="root">/);
    const inlineScripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)].filter(([, attrs, body]) => !/\bsrc=/.test(attrs) || body.trim() !== "");
    assert.deepEqual(inlineScripts, []);
    assert.doesNotMatch(html, /<style\b|\sstyle=|\son[a-z]+=/i);
  });
});
