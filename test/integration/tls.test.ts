// npm test: once
// Why: HTTPS, certificates, Secure cookies and HSTS sit before any storage; PostgreSQL sessions, pulls and SSE are re-run by accounts, sessions and models.
/**
 * HTTPS end to end (TLS_CERT, TLS_KEY): the real server over real sockets with a certificate a
 * test CA made with the openssl command signed, and a client that trusts only that CA. Secure
 * cookies and HSTS over HTTPS; neither over plain HTTP on loopback; both behind a TLS proxy that
 * TRUST_PROXY trusts; bad settings stop the start with one sentence that names the variable.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import { after, before, describe, it } from "node:test";
import { ConfigError } from "../../server/config";
import { readTlsCredentials } from "../../server/tls/tls-credentials";
import { startFakeOllama, type FakeOllama } from "../fixtures/fake-ollama";
import { client, GOOD_PASSWORD, uniqueEmail } from "../fixtures/http-client";
import { httpsRequest, sseEvents } from "../fixtures/https-client";
import { serverEntryArgs, startSluice, tempDir, type SluiceServer } from "../fixtures/sluice-server";
import { makeTestCa, opensslFingerprint, opensslNotAfter, type TestCa } from "../fixtures/test-ca";

let ca: TestCa;
let caPem: Buffer;
let fake: FakeOllama;
let secure: SluiceServer;
let plain: SluiceServer;
let proxied: SluiceServer;

before(async () => {
  ca = makeTestCa();
  caPem = fs.readFileSync(ca.caFile);
  fake = await startFakeOllama();
  [secure, plain, proxied] = await Promise.all([
    startSluice({ env: { TLS_CERT: ca.certFile, TLS_KEY: ca.keyFile, OLLAMA_HOST: fake.url, SLUICE_PULL_RETRY_DELAY_MS: "10" } }),
    startSluice(),
    // A TLS-terminating proxy on this machine in front of a plain-HTTP server.
    startSluice({ env: { TRUST_PROXY: "loopback" } }),
  ]);
});

after(async () => {
  await Promise.all([secure?.stop(), plain?.stop(), proxied?.stop()]);
  await fake?.close();
});

const overTls = (path: string, opts: Omit<Parameters<typeof httpsRequest>[1], "ca"> = {}) => httpsRequest(`${secure.url}${path}`, { ca: caPem, ...opts });

function cookieOf(headers: Record<string, string | string[] | undefined>): string {
  const set = headers["set-cookie"];
  const cookie = (Array.isArray(set) ? set : [set ?? ""]).find((c) => c.startsWith("access_token="));
  assert.ok(cookie, "an access_token cookie is set");
  return cookie;
}

async function signUpOverTls(): Promise<{ token: string; cookie: string }> {
  const res = await overTls("/api/signup", { method: "POST", body: { email: uniqueEmail("tls"), password: GOOD_PASSWORD } });
  assert.equal(res.status, 201, res.text);
  return { token: res.body.access_token, cookie: cookieOf(res.headers) };
}

describe("HTTPS with TLS_CERT and TLS_KEY", () => {
  it("listens on https://, serves the API and the UI's files with the given certificate, which a client checks against its CA", async () => {
    assert.match(secure.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const health = await overTls("/api/health");
    assert.equal(health.status, 200);
    assert.equal(health.body.status, "ok");
    assert.equal(health.peerFingerprint, opensslFingerprint(ca.certFile), "the certificate served is TLS_CERT's");
    const page = await overTls("/");
    assert.equal(page.status, 200);
    assert.match(String(page.headers["content-type"]), /text\/html/);
    assert.match(page.text, /<script type="module"/);
    // By the name the certificate also carries.
    assert.equal((await httpsRequest(`${secure.url.replace("127.0.0.1", "localhost")}/api/health`, { ca: caPem })).status, 200);
    // A client that trusts only the usual CAs refuses it, as a browser would.
    await assert.rejects(httpsRequest(`${secure.url}/api/health`, {}), /certificate|verify/i);
    assert.match(secure.output(), /serving HTTPS with the certificate in TLS_CERT; its SHA-256 fingerprint is ([0-9A-F]{2}:){31}[0-9A-F]{2}/);
    assert.doesNotMatch(secure.output(), /plain HTTP/);
  });

  it("marks the session cookie Secure and sends Strict-Transport-Security; the app's own https page passes the cross-site check", async () => {
    const { token, cookie } = await signUpOverTls();
    assert.match(cookie, /; Secure/);
    assert.match(cookie, /HttpOnly/);
    const me = await overTls("/api/users/me", { headers: { cookie: cookie.split(";")[0] } });
    assert.equal(me.status, 200);
    assert.equal(me.headers["strict-transport-security"], "max-age=31536000", "a year, without includeSubDomains");

    // A state-changing request with the cookie from the app's own page (Origin https://...) is let through; from the http:// origin it is not.
    const group = { group_name: `tls-${process.pid}-${Date.now()}`, group_permission: "read" };
    const own = await overTls("/api/user_groups", { method: "POST", body: group, headers: { cookie: cookie.split(";")[0], origin: secure.url } });
    assert.equal(own.status, 201, own.text);
    const other = await overTls("/api/user_groups", { method: "POST", body: { ...group, group_name: `${group.group_name}b` }, headers: { cookie: cookie.split(";")[0], origin: secure.url.replace("https:", "http:") } });
    assert.equal(other.status, 403);

    const signOut = await overTls("/api/signout", { method: "POST", headers: { authorization: `Bearer ${token}` } });
    assert.equal(signOut.status, 200);
    assert.match(cookieOf(signOut.headers), /; Secure/, "the cookie that clears it is Secure too");
  });

  it("GET /instance gives the certificate's fingerprint as openssl shows it, its end and that a CA signed it; 401 signed out", async () => {
    const { token } = await signUpOverTls();
    const res = await overTls("/api/instance", { headers: { authorization: `Bearer ${token}` } });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.tls, {
      certificate_sha256: opensslFingerprint(ca.certFile),
      self_signed: false,
      expires_at: opensslNotAfter(ca.certFile).toISOString().replace(/Z$/, ""),
    });
    assert.equal((await overTls("/api/instance")).status, 401);
  });

  it("streams Server-Sent Events over HTTPS (a model pull, to its completed event)", async () => {
    const { token } = await signUpOverTls();
    const statuses: string[] = [];
    const res = await overTls("/api/models", {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
      body: { model_name: "smollm2:135m" },
      onChunk: (text) => statuses.push(...sseEvents(text).map((e) => e.status)),
    });
    assert.equal(res.status, 200);
    assert.match(String(res.headers["content-type"]), /text\/event-stream/);
    const events = sseEvents(res.text);
    assert.ok(events.some((e) => String(e.status).startsWith("pulling")), res.text);
    assert.equal(events.at(-1)?.status, "completed", res.text);
    assert.ok(statuses.length > 0);
  });
});

describe("plain HTTP and a TLS-terminating proxy", () => {
  it("plain HTTP on loopback is unchanged: no HSTS, no Secure cookie, no certificate in GET /instance", async () => {
    const request = client(plain.api);
    const res = await request("POST", "/signup", { body: { email: uniqueEmail("plain"), password: GOOD_PASSWORD } });
    assert.equal(res.status, 201);
    assert.equal(res.headers.get("strict-transport-security"), null);
    assert.doesNotMatch(res.headers.get("set-cookie") ?? "", /Secure/);
    assert.match(res.headers.get("set-cookie") ?? "", /^access_token=/);
    assert.equal((await request("GET", "/instance", { token: res.body.access_token })).body.tls, null);
    // A forwarded scheme from a peer nobody said to trust changes nothing.
    const forged = await request("POST", "/signup", { body: { email: uniqueEmail("plain"), password: GOOD_PASSWORD }, headers: { "x-forwarded-proto": "https" } });
    assert.equal(forged.status, 201);
    assert.equal(forged.headers.get("strict-transport-security"), null);
    assert.doesNotMatch(forged.headers.get("set-cookie") ?? "", /Secure/);
  });

  it("behind a proxy TRUST_PROXY trusts, X-Forwarded-Proto: https means the browser saw HTTPS: Secure cookie, HSTS, the https origin accepted", async () => {
    const request = client(proxied.api);
    const viaTls = { "x-forwarded-proto": "https" };
    const res = await request("POST", "/signup", { body: { email: uniqueEmail("proxied"), password: GOOD_PASSWORD }, headers: viaTls });
    assert.equal(res.status, 201);
    assert.match(res.headers.get("set-cookie") ?? "", /; Secure/);
    assert.equal(res.headers.get("strict-transport-security"), "max-age=31536000");
    const cookie = (res.headers.get("set-cookie") ?? "").split(";")[0];
    const host = new URL(proxied.url).host;
    const group = await request("POST", "/user_groups", { body: { group_name: `proxied-${process.pid}-${Date.now()}`, group_permission: "read" }, headers: { ...viaTls, cookie, origin: `https://${host}` } });
    assert.equal(group.status, 201, group.text);
    // The proxy's plain-HTTP hop alone (no forwarded scheme) is plain HTTP.
    const bare = await request("GET", "/health");
    assert.equal(bare.headers.get("strict-transport-security"), null);
  });
});

/** Starts the server on these settings and waits for it to exit: the exit code and everything it printed. */
async function failedStart(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, serverEntryArgs(), {
    env: { ...process.env, PORT: "0", HOST: "127.0.0.1", DATA_DIR: tempDir(), SLUICE_SECRETS: "file", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  child.stderr.on("data", (chunk) => (output += chunk));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  return { code, output };
}

/** The base64 lines of a PEM file: none may appear in a message. */
function pemBody(file: string): string[] {
  return fs.readFileSync(file, "utf8").split("\n").filter((line) => line && !line.startsWith("-----"));
}

describe("bad TLS settings", () => {
  it("stop the start with one sentence naming the variable, and no key material: a key of another pair, a certificate without its key", async () => {
    const mismatch = await failedStart({ TLS_CERT: ca.certFile, TLS_KEY: ca.otherKeyFile });
    assert.equal(mismatch.code, 1, mismatch.output);
    assert.match(mismatch.output, /configuration error: TLS_KEY is not the private key of the certificate in TLS_CERT: \S+other\.key does not match \S+server\.pem/);
    assert.doesNotMatch(mismatch.output, /listening on/);
    for (const line of [...pemBody(ca.otherKeyFile), ...pemBody(ca.keyFile)]) assert.ok(!mismatch.output.includes(line), "no line of a key in the output");

    const alone = await failedStart({ TLS_CERT: ca.certFile });
    assert.equal(alone.code, 1, alone.output);
    assert.match(alone.output, /configuration error: TLS_KEY must be set when TLS_CERT is \(the path of the private key of that certificate\): HTTPS needs both/);
  });

  it("a file that cannot be read, is not PEM, is encrypted or is not a key: one ConfigError sentence each, with the path and never the text", () => {
    const notPem = `${ca.dir}/notes.txt`;
    fs.writeFileSync(notPem, "hello\n");
    const cases: Array<[{ certFile: string; keyFile: string }, RegExp]> = [
      [{ certFile: `${ca.dir}/missing.pem`, keyFile: ca.keyFile }, /^TLS_CERT cannot be read: \S+missing\.pem \(there is no such file\)$/],
      [{ certFile: ca.certFile, keyFile: ca.dir }, /^TLS_KEY cannot be read: \S+ \(it is a folder\)$/],
      [{ certFile: ca.derCertFile, keyFile: ca.keyFile }, /^TLS_CERT must be a PEM certificate file \(beginning -----BEGIN CERTIFICATE-----\), and \S+server\.der is not one$/],
      [{ certFile: notPem, keyFile: ca.keyFile }, /^TLS_CERT must be a PEM certificate file/],
      [{ certFile: ca.certFile, keyFile: ca.certFile }, /^TLS_KEY must be an unencrypted PEM private key file \(beginning -----BEGIN PRIVATE KEY-----\), and \S+server\.pem is not one$/],
      [{ certFile: ca.certFile, keyFile: ca.encryptedKeyFile }, /^TLS_KEY is encrypted with a passphrase, which Sluice cannot ask for: write it unencrypted \(openssl pkey -in \S+encrypted\.key -out PLAIN\.pem\)/],
      [{ certFile: ca.keyFile, keyFile: ca.keyFile }, /^TLS_CERT must be a PEM certificate file/],
    ];
    const secrets = [...pemBody(ca.keyFile), ...pemBody(ca.encryptedKeyFile)];
    for (const [files, expected] of cases) {
      assert.throws(
        () => readTlsCredentials(files),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError, String(error));
          assert.equal(error.problems.length, 1);
          assert.match(error.message, expected);
          assert.doesNotMatch(error.message, /\n/);
          for (const line of secrets) assert.ok(!error.message.includes(line), `no key text in: ${error.message}`);
          return true;
        },
        JSON.stringify(files),
      );
    }
    // The good pair reads, with openssl's fingerprint; a key others may read is only worth a warning.
    fs.chmodSync(ca.keyFile, 0o600);
    const good = readTlsCredentials({ certFile: ca.certFile, keyFile: ca.keyFile });
    assert.equal(good.certificate.fingerprintSha256, opensslFingerprint(ca.certFile));
    assert.equal(good.keyOpenToOthers, false);
    fs.chmodSync(ca.keyFile, 0o644);
    assert.equal(readTlsCredentials({ certFile: ca.certFile, keyFile: ca.keyFile }).keyOpenToOthers, process.platform !== "win32");
    fs.chmodSync(ca.keyFile, 0o600);
  });
});
