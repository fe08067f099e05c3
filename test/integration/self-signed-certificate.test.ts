// npm test: once
// Why: the certificate files under DATA_DIR/tls and the HTTPS listener do not touch the database or the queue.
/**
 * The desktop's self-signed certificate for LAN access (server/tls/self-signed-certificate.ts):
 * made once under DATA_DIR/tls with private modes, naming the machine, read back by openssl with
 * the same fingerprint; reused while it has time left; made anew when it is ending, expired,
 * damaged or half replaced; and served by the real server to a client that trusts only it.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { X509Certificate } from "node:crypto";
import { describe, it } from "node:test";
import { ensureSelfSignedCertificate, machineCertificateNames } from "../../server/tls/self-signed-certificate";
import { httpsRequest } from "../fixtures/https-client";
import { startSluice, tempDir } from "../fixtures/sluice-server";
import { opensslFingerprint, opensslNotAfter, opensslSubjectAltNames } from "../fixtures/test-ca";

const DAY_MS = 86_400_000;
const NAMES = { dns: ["localhost", "box", "box.local"], ips: ["127.0.0.1", "::1", "192.0.2.10"] };
const mode = (file: string) => fs.statSync(file).mode & 0o777;

describe("the desktop's self-signed certificate", () => {
  it("is made on first use under DATA_DIR/tls (folder 0700, files 0600), names the machine, and its fingerprint is openssl's", async () => {
    const dataDir = tempDir();
    const made = await ensureSelfSignedCertificate(dataDir, { names: NAMES });
    assert.equal(made.outcome, "made");
    assert.equal(made.files.certFile, path.join(dataDir, "tls", "lan-certificate.pem"));
    assert.equal(mode(path.join(dataDir, "tls")), 0o700);
    assert.equal(mode(made.files.keyFile), 0o600);
    assert.equal(mode(made.files.certFile), 0o600);
    assert.match(made.certificate.fingerprintSha256, /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    assert.equal(made.certificate.fingerprintSha256, opensslFingerprint(made.files.certFile));
    assert.equal(made.certificate.selfSigned, true);
    assert.deepEqual(opensslSubjectAltNames(made.files.certFile).sort(), ["DNS:box", "DNS:box.local", "DNS:localhost", "IP Address:0:0:0:0:0:0:0:1", "IP Address:127.0.0.1", "IP Address:192.0.2.10"]);
    const days = (opensslNotAfter(made.files.certFile).getTime() - Date.now()) / DAY_MS;
    assert.ok(days > 364 && days <= 365, `valid for a year, not more (Apple refuses longer): ${days}`);
    const certificate = new X509Certificate(fs.readFileSync(made.files.certFile));
    assert.equal(certificate.ca, false, "a server certificate, not a CA");
    assert.match(certificate.keyUsage?.join(",") ?? "", /1\.3\.6\.1\.5\.5\.7\.3\.1/, "for TLS servers (extKeyUsage serverAuth)");
  });

  it("is reused on later starts while more than 30 days remain, and made anew when fewer remain or it has expired", async () => {
    const dataDir = tempDir();
    const first = await ensureSelfSignedCertificate(dataDir, { names: NAMES });
    const again = await ensureSelfSignedCertificate(dataDir, { names: { dns: ["other"], ips: ["127.0.0.1"] } });
    assert.equal(again.outcome, "reused");
    assert.equal(again.certificate.fingerprintSha256, first.certificate.fingerprintSha256, "the fingerprint colleagues compared stays");
    const later = await ensureSelfSignedCertificate(dataDir, { names: NAMES, now: new Date(Date.now() + 300 * DAY_MS) });
    assert.equal(later.outcome, "reused", "300 days on, 65 remain");

    const ending = await ensureSelfSignedCertificate(dataDir, { names: NAMES, now: new Date(Date.now() + 340 * DAY_MS) });
    assert.equal(ending.outcome, "renewed");
    assert.notEqual(ending.certificate.fingerprintSha256, first.certificate.fingerprintSha256);
    assert.equal(ending.certificate.fingerprintSha256, opensslFingerprint(ending.files.certFile));
    assert.ok(ending.certificate.notAfter.getTime() > Date.now() + 700 * DAY_MS, "a year from the renewal");

    const expired = await ensureSelfSignedCertificate(dataDir, { names: NAMES, now: new Date(Date.now() + 2000 * DAY_MS) });
    assert.equal(expired.outcome, "renewed");
    assert.equal(mode(expired.files.keyFile), 0o600);
  });

  it("is made anew when its files are damaged, or the key is of another pair (a crash between the two renames)", async () => {
    const dataDir = tempDir();
    const first = await ensureSelfSignedCertificate(dataDir, { names: NAMES });
    fs.writeFileSync(first.files.certFile, "not a certificate");
    const damaged = await ensureSelfSignedCertificate(dataDir, { names: NAMES });
    assert.equal(damaged.outcome, "renewed");

    const other = await ensureSelfSignedCertificate(tempDir(), { names: NAMES });
    fs.copyFileSync(other.files.keyFile, damaged.files.keyFile);
    const mismatched = await ensureSelfSignedCertificate(dataDir, { names: NAMES });
    assert.equal(mismatched.outcome, "renewed");
    assert.notEqual(mismatched.certificate.fingerprintSha256, damaged.certificate.fingerprintSha256);
  });

  it("names this machine: localhost, its host name, short name and .local, loopback and interface addresses but link-local ones", () => {
    const names = machineCertificateNames(
      {
        lo: [{ address: "127.0.0.1", family: "IPv4", internal: true, netmask: "255.0.0.0", mac: "00:00:00:00:00:00", cidr: null }],
        eth0: [
          { address: "192.0.2.10", family: "IPv4", internal: false, netmask: "255.255.255.0", mac: "02:00:00:00:00:01", cidr: null },
          { address: "fe80::1", family: "IPv6", internal: false, netmask: "ffff::", mac: "02:00:00:00:00:01", cidr: null, scopeid: 2 },
          { address: "2001:db8::10", family: "IPv6", internal: false, netmask: "ffff::", mac: "02:00:00:00:00:01", cidr: null, scopeid: 0 },
        ],
      },
      "Box.corp.example",
    );
    assert.deepEqual(names, { dns: ["localhost", "box.corp.example", "box", "box.local"], ips: ["127.0.0.1", "::1", "192.0.2.10", "2001:db8::10"] });
    assert.deepEqual(machineCertificateNames({}, "under_score").dns, ["localhost"], "a name no certificate can carry is left out");
  });

  it("is served by the real server to a client that trusts only it, by 127.0.0.1 and localhost", async () => {
    const dataDir = tempDir();
    const made = await ensureSelfSignedCertificate(dataDir, { names: NAMES });
    const sluice = await startSluice({ dataDir, env: { TLS_CERT: made.files.certFile, TLS_KEY: made.files.keyFile } });
    try {
      const ca = fs.readFileSync(made.files.certFile);
      for (const url of [sluice.url, sluice.url.replace("127.0.0.1", "localhost")]) {
        const res = await httpsRequest(`${url}/api/health`, { ca });
        assert.equal(res.status, 200, url);
        assert.equal(res.peerFingerprint, made.certificate.fingerprintSha256);
      }
      const signUp = await httpsRequest(`${sluice.url}/api/signup`, { ca, method: "POST", body: { email: `self-${process.pid}@example.com`, password: "correct-horse-42" } });
      assert.equal(signUp.status, 201);
      const instance = await httpsRequest(`${sluice.url}/api/instance`, { ca, headers: { authorization: `Bearer ${signUp.body.access_token}` } });
      assert.equal(instance.body.tls.certificate_sha256, opensslFingerprint(made.files.certFile));
      assert.equal(instance.body.tls.self_signed, true);
    } finally {
      await sluice.stop();
    }
  });
});
