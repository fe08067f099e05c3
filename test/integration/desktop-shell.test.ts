import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { lanUrls } from "../../main/lan-addresses";
import { isOwnServerCertificate, serverTls } from "../../main/server-certificate";
import { isExistingFile, openablePath, openableSmbUrl, openTarget } from "../../main/open-location";
import { stopServer, waitForListening } from "../../main/server-process";
import { readSettings, serverBinding, writeSettings } from "../../main/settings";
import { isAppUrl, isExternalWebUrl, isTrustedIpcSender, withContentSecurityPolicy } from "../../main/url-guards";
import { CONTENT_SECURITY_POLICY } from "../../server/http/security-headers";
import { httpsRequest } from "../fixtures/https-client";
import { serverEntryArgs, tempDir } from "../fixtures/sluice-server";
import { makeTestCa, opensslFingerprint } from "../fixtures/test-ca";
import { WAIT_LIMIT_MS } from "../fixtures/wait-for";

describe("URL guards", () => {
  const app = "http://127.0.0.1:8420";
  it("lets the window show only the app's own origin", () => {
    assert.equal(isAppUrl("http://127.0.0.1:8420/collections?x=1", app), true);
    for (const target of [
      "http://127.0.0.1:8421/",
      "https://127.0.0.1:8420/",
      "http://127.0.0.1:8420.evil.example/",
      "http://localhost:8420/",
      "file:///etc/passwd",
      "javascript:alert(1)",
      "not a url",
    ]) {
      assert.equal(isAppUrl(target, app), false, target);
    }
  });

  it("sends only http(s) links to the system browser", () => {
    assert.equal(isExternalWebUrl("https://accounts.google.com/o/oauth2/v2/auth?x=1"), true);
    assert.equal(isExternalWebUrl("http://example.com"), true);
    for (const target of ["file:///etc/passwd", "javascript:alert(1)", "smb://server/share", "data:text/html,hi", "", "https://"]) {
      assert.equal(isExternalWebUrl(target), false, target);
    }
  });
});

describe("IPC sender check", () => {
  const app = "http://127.0.0.1:8420";
  it("answers only the app's page in the window's top frame", () => {
    assert.equal(isTrustedIpcSender({ url: "http://127.0.0.1:8420/#/sources", isMainFrame: true }, app), true);
    assert.equal(isTrustedIpcSender({ url: "http://127.0.0.1:8420/", isMainFrame: false }, app), false, "an iframe");
    assert.equal(isTrustedIpcSender({ url: "https://evil.example/", isMainFrame: true }, app), false);
    assert.equal(isTrustedIpcSender({ url: "http://127.0.0.1:8420.evil.example/", isMainFrame: true }, app), false);
    assert.equal(isTrustedIpcSender({ url: "about:blank", isMainFrame: true }, app), false);
    assert.equal(isTrustedIpcSender(null, app), false, "a frame that is gone");
  });
});

describe("Open on a search result", () => {
  it("opens a UNC or drive path on Windows, only to a document type Sluice indexes", () => {
    assert.deepEqual(openTarget({ path: "\\\\fs01\\docs\\minutes\\board q3.pdf", url: "smb://fs01/docs/minutes/board%20q3.pdf" }, "win32"), {
      kind: "path",
      path: "\\\\fs01\\docs\\minutes\\board q3.pdf",
    });
    assert.equal(openablePath("C:\\Users\\ada\\notes\\plan.docx", "win32"), "C:\\Users\\ada\\notes\\plan.docx");
    for (const path of [
      "\\\\fs01\\docs\\setup.exe",
      "\\\\fs01\\docs\\run.bat",
      "\\\\fs01\\docs\\start.lnk",
      "\\\\fs01\\docs\\minutes",
      "\\\\fs01\\docs\\..\\..\\evil\\x.pdf",
      "\\\\?\\C:\\x.pdf",
      "\\\\.\\pipe\\x.txt",
      "\\\\fs01\\x.pdf",
      "C:\\Windows\\System32\\calc.exe",
      "C:x.pdf",
      "relative\\x.pdf",
      "https://evil.example/x.pdf",
      "\\\\fs01\\docs\\a.pdf\u0000.exe",
      `\\\\fs01\\docs\\${"a".repeat(5000)}.pdf`,
    ]) {
      assert.equal(openablePath(path, "win32"), null, path);
    }
    assert.equal(openTarget({ path: null, url: "smb://fs01/docs/x.pdf" }, "win32").kind, "refused", "Windows opens SMB documents by their UNC path");
  });

  it("opens an absolute local path elsewhere, and an smb:// URL where there is no local path", () => {
    assert.deepEqual(openTarget({ path: "/srv/notes/harbour log.txt", url: "file:///srv/notes/harbour%20log.txt" }, "linux"), { kind: "path", path: "/srv/notes/harbour log.txt" });
    assert.deepEqual(openTarget({ path: "\\\\fs01\\docs\\a b.pdf", url: "smb://fs01:4455/docs/a%20b.pdf" }, "darwin"), { kind: "url", url: "smb://fs01:4455/docs/a%20b.pdf" });
    for (const path of ["/usr/bin/xterm", "/home/ada/run.sh", "/home/ada/app.desktop", "/srv/../etc/x.txt", "/srv//x.txt", "srv/x.txt", "/srv/notes", "\\\\fs01\\docs\\a.pdf"]) {
      assert.equal(openablePath(path, "linux"), null, path);
    }
    for (const url of [
      "file:///srv/notes/a.txt",
      "https://evil.example/a.pdf",
      "javascript:alert(1)//a.pdf",
      "smb://fs01/docs/setup.exe",
      "smb://fs01/docs",
      "smb://fs01/a.pdf",
      "smb://user:pw@fs01/docs/a.pdf",
      "smb://fs01/docs/a.pdf?x=1",
      "smb://fs01/docs/a.pdf#x",
      "smb://fs01/docs/a%2F..%2Fb.pdf",
      "smb://fs01/docs/%E0%A4%A.pdf",
      "not a url",
    ]) {
      assert.equal(openableSmbUrl(url), null, url);
    }
    assert.equal(openableSmbUrl("smb://fs01/docs/minutes/board%20q3.txt"), "smb://fs01/docs/minutes/board%20q3.txt");
  });

  it("refuses what is not a location at all, saying what to do instead", () => {
    for (const location of [null, undefined, "\\\\fs01\\docs\\a.pdf", 42, {}, { path: 42, url: ["smb://fs01/docs/a.pdf"] }]) {
      const target = openTarget(location, "linux");
      assert.equal(target.kind, "refused", JSON.stringify(location));
      assert.match(target.kind === "refused" ? target.reason : "", /cannot be opened from here|Not a document location/);
    }
  });

  it("opens a path only when it names an existing file, not a folder", async () => {
    const dir = tempDir();
    const file = path.join(dir, "plan.txt");
    fs.writeFileSync(file, "plan\n");
    assert.equal(await isExistingFile(file), true);
    assert.equal(await isExistingFile(dir), false);
    assert.equal(await isExistingFile(path.join(dir, "gone.txt")), false);
  });
});

describe("window CSP", () => {
  it("the server's policy replaces whatever a response carried, in any spelling", () => {
    const headers = withContentSecurityPolicy({ "content-security-policy": ["default-src *"], "Content-Type": ["text/html"] }, CONTENT_SECURITY_POLICY);
    assert.deepEqual(headers, { "Content-Type": ["text/html"], "Content-Security-Policy": [CONTENT_SECURITY_POLICY] });
    assert.deepEqual(withContentSecurityPolicy(undefined, CONTENT_SECURITY_POLICY), { "Content-Security-Policy": [CONTENT_SECURITY_POLICY] });
  });
});

describe("shell settings", () => {
  it("defaults, round-trips and ignores invalid values", () => {
    const dir = tempDir();
    assert.deepEqual(readSettings(dir), { allowLanAccess: false, port: 0 });
    writeSettings(dir, { allowLanAccess: true, port: 9000 });
    assert.deepEqual(readSettings(dir), { allowLanAccess: true, port: 9000 });
    fs.writeFileSync(path.join(dir, "settings.json"), JSON.stringify({ allowLanAccess: "yes", port: 70000 }));
    assert.deepEqual(readSettings(dir), { allowLanAccess: false, port: 0 });
    fs.writeFileSync(path.join(dir, "settings.json"), "{broken");
    assert.deepEqual(readSettings(dir), { allowLanAccess: false, port: 0 });
  });

  it("binds to loopback unless LAN access is allowed, and then to a fixed port", () => {
    assert.deepEqual(serverBinding({ allowLanAccess: false, port: 0 }), { host: "127.0.0.1", port: 0 });
    assert.deepEqual(serverBinding({ allowLanAccess: true, port: 0 }), { host: "0.0.0.0", port: 8420 });
    assert.deepEqual(serverBinding({ allowLanAccess: true, port: 9001 }), { host: "0.0.0.0", port: 9001 });
  });

  it("lists external IPv4 addresses as LAN URLs, https unless told otherwise", () => {
    const urls = lanUrls(8420, {
      lo: [{ address: "127.0.0.1", family: "IPv4", internal: true, netmask: "255.0.0.0", mac: "00:00:00:00:00:00", cidr: null }],
      eth0: [
        { address: "192.0.2.10", family: "IPv4", internal: false, netmask: "255.255.255.0", mac: "02:00:00:00:00:01", cidr: null },
        { address: "fe80::1", family: "IPv6", internal: false, netmask: "ffff::", mac: "02:00:00:00:00:01", cidr: null, scopeid: 2 },
      ],
    });
    assert.deepEqual(urls, ["https://192.0.2.10:8420/"]);
    assert.deepEqual(lanUrls(8420, { eth0: [{ address: "192.0.2.10", family: "IPv4", internal: false, netmask: "255.255.255.0", mac: "02:00:00:00:00:01", cidr: null }] }, "http"), ["http://192.0.2.10:8420/"]);
  });
});

describe("the server's certificate in the desktop shell", () => {
  it("is none on loopback only; with LAN access, the self-signed one in DATA_DIR, made once and then the same", async () => {
    const dataDir = tempDir();
    assert.equal(await serverTls(false, dataDir, {}), null);
    assert.equal(fs.existsSync(path.join(dataDir, "tls")), false, "nothing made until LAN access is allowed");
    const first = await serverTls(true, dataDir, {});
    assert.ok(first);
    assert.equal(first.env.TLS_CERT, path.join(dataDir, "tls", "lan-certificate.pem"));
    assert.equal(first.env.TLS_KEY, path.join(dataDir, "tls", "lan-key.pem"));
    assert.equal(first.fingerprintSha256, opensslFingerprint(first.env.TLS_CERT));
    assert.equal((await serverTls(true, dataDir, {}))?.fingerprintSha256, first.fingerprintSha256);
  });

  it("is the person's own TLS_CERT when they set one (also without LAN access), and nothing is made", async () => {
    const ca = makeTestCa();
    const dataDir = tempDir();
    const own = await serverTls(false, dataDir, { TLS_CERT: ca.certFile, TLS_KEY: ca.keyFile });
    assert.deepEqual(own, { env: { TLS_CERT: ca.certFile, TLS_KEY: ca.keyFile }, fingerprintSha256: opensslFingerprint(ca.certFile) });
    assert.equal(fs.existsSync(path.join(dataDir, "tls")), false);
  });

  it("the window trusts only that certificate, only on loopback", async () => {
    const tls = await serverTls(true, tempDir(), {});
    assert.ok(tls);
    const pem = fs.readFileSync(tls.env.TLS_CERT, "utf8");
    const other = fs.readFileSync(makeTestCa().certFile, "utf8");
    for (const hostname of ["127.0.0.1", "localhost", "::1", "[::1]"]) assert.equal(isOwnServerCertificate({ hostname, certificate: { data: pem } }, tls.fingerprintSha256), true, hostname);
    assert.equal(isOwnServerCertificate({ hostname: "192.0.2.10", certificate: { data: pem } }, tls.fingerprintSha256), false, "a LAN name gets Chromium's own verdict");
    assert.equal(isOwnServerCertificate({ hostname: "127.0.0.1", certificate: { data: other } }, tls.fingerprintSha256), false, "another certificate on loopback");
    assert.equal(isOwnServerCertificate({ hostname: "127.0.0.1", certificate: { data: "garbage" } }, tls.fingerprintSha256), false);
    assert.equal(isOwnServerCertificate({ hostname: "127.0.0.1", certificate: { data: pem } }, null), false, "plain HTTP: nothing to trust");
  });
});

describe("server start/stop handshake", () => {
  it("waits for the real server's listening line, then stops it cleanly with SIGTERM", async () => {
    const child = spawn(process.execPath, serverEntryArgs(), {
      env: { ...process.env, PORT: "0", HOST: "127.0.0.1", DATA_DIR: tempDir(), SLUICE_SECRETS: "file" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const url = await waitForListening(child, WAIT_LIMIT_MS);
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const health = await fetch(`${url}/api/health`);
    assert.equal(health.status, 200);
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    await stopServer(child, 10_000);
    assert.equal(await exited, 0);
  });

  it("waits for an HTTPS server's listening line too (LAN access with the desktop's certificate)", async () => {
    const dataDir = tempDir();
    const tls = await serverTls(true, dataDir, {});
    assert.ok(tls);
    const child = spawn(process.execPath, serverEntryArgs(), {
      env: { ...process.env, PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, SLUICE_SECRETS: "file", ...tls.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const url = await waitForListening(child, WAIT_LIMIT_MS);
    assert.match(url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const health = await httpsRequest(`${url}/api/health`, { ca: fs.readFileSync(tls.env.TLS_CERT) });
    assert.equal(health.status, 200);
    assert.equal(health.peerFingerprint, tls.fingerprintSha256);
    await stopServer(child, 10_000);
  });

  it("rejects when the server exits during start-up or never says it is listening", async () => {
    const crashing = spawn(process.execPath, ["-e", "process.exit(3)"], { stdio: ["ignore", "pipe", "ignore"] });
    await assert.rejects(waitForListening(crashing, 5000), /exit code 3/);
    const silent = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: ["ignore", "pipe", "ignore"] });
    await assert.rejects(waitForListening(silent, 300), /did not start within/);
    await stopServer(silent, 5000);
    assert.notEqual(silent.exitCode ?? silent.signalCode, null);
  });
});
