import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { generate } from "selfsigned";
import { ConfigError, type TlsFiles } from "../config";
import { readTlsCredentials, type CertificateSummary } from "./tls-credentials";

/**
 * The desktop's certificate for "Allow LAN access" (docs/decisions/0461-desktop-self-signed-certificate.md):
 * made on first use, kept under DATA_DIR/tls (the folder 0700, both files 0600), reused on later
 * starts so its fingerprint stays the one colleagues compared, and made anew only when it is
 * missing, damaged, or within RENEW_WITHIN_DAYS of its end.
 */

/** Under DATA_DIR. */
const CERTIFICATE_DIR = "tls";
const CERT_FILE = "lan-certificate.pem";
const KEY_FILE = "lan-key.pem";
/** 397 days at most: Apple's platforms refuse longer-lived server certificates even once trusted by hand. */
const VALID_DAYS = 365;
const RENEW_WITHIN_DAYS = 30;
const DAY_MS = 86_400_000;

/** The names a certificate is valid for (subjectAltName). */
export interface CertificateNames {
  dns: string[];
  ips: string[];
}

export interface SelfSignedCertificate {
  files: TlsFiles;
  certificate: CertificateSummary;
  /** made: there was none; renewed: the old one was ending, damaged or not ours; reused: the one on disk. */
  outcome: "made" | "renewed" | "reused";
}

/** A DNS name a certificate can carry: letters, digits, hyphens, dots. */
const DNS_NAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;

/**
 * This machine's names and addresses as a certificate carries them: localhost, the host name, its
 * short form and `.local` (mDNS), loopback, and every interface address but IPv6 link-local ones
 * (their zone cannot be written in a URL).
 */
export function machineCertificateNames(interfaces = os.networkInterfaces(), hostname = os.hostname()): CertificateNames {
  const dns = new Set(["localhost"]);
  const full = hostname.toLowerCase().replace(/\.$/, "");
  if (full) {
    const short = full.split(".")[0];
    for (const name of [full, short, `${short}.local`]) if (DNS_NAME.test(name)) dns.add(name);
  }
  const ips = new Set(["127.0.0.1", "::1"]);
  for (const list of Object.values(interfaces)) {
    for (const entry of list ?? []) {
      const address = entry.address.split("%")[0].toLowerCase();
      if (net.isIP(address) === 0 || /^fe[89ab]/.test(address)) continue;
      ips.add(address);
    }
  }
  return { dns: [...dns], ips: [...ips] };
}

function filesIn(dataDir: string): TlsFiles {
  const dir = path.join(dataDir, CERTIFICATE_DIR);
  return { certFile: path.join(dir, CERT_FILE), keyFile: path.join(dir, KEY_FILE) };
}

/** The certificate on disk if it can be served on for a while yet; null when a new one is needed. */
function usable(files: TlsFiles, now: Date): CertificateSummary | null {
  try {
    const { certificate } = readTlsCredentials(files);
    if (!certificate.selfSigned) return null;
    return certificate.notAfter.getTime() - now.getTime() > RENEW_WITHIN_DAYS * DAY_MS ? certificate : null;
  } catch (error) {
    // Missing, unreadable, not PEM, or a key from another pair (a crash between the two renames): make a new one.
    if (error instanceof ConfigError) return null;
    throw error;
  }
}

/** Written beside the target and renamed over it, 0600, so a reader never sees half a file. */
function writePrivate(file: string, text: string): void {
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, text, { mode: 0o600 });
  fs.renameSync(temp, file);
  fs.chmodSync(file, 0o600);
}

async function make(files: TlsFiles, names: CertificateNames, now: Date): Promise<void> {
  const pems = await generate([{ name: "commonName", value: names.dns.find((name) => name !== "localhost") ?? "localhost" }, { name: "organizationName", value: "Sluice (self-signed)" }], {
    // P-256 ECDSA: every browser takes it, and it is made in milliseconds where an RSA key takes a second.
    keyType: "ec",
    curve: "P-256",
    algorithm: "sha256",
    notBeforeDate: new Date(now.getTime() - 60_000),
    notAfterDate: new Date(now.getTime() + VALID_DAYS * DAY_MS),
    extensions: [
      { name: "basicConstraints", cA: false, critical: true },
      { name: "keyUsage", digitalSignature: true, critical: true },
      { name: "extKeyUsage", serverAuth: true },
      { name: "subjectAltName", altNames: [...names.dns.map((value) => ({ type: 2 as const, value })), ...names.ips.map((ip) => ({ type: 7 as const, ip }))] },
    ],
  });
  // The key first: a crash between the renames leaves a pair that does not match, which the next start replaces.
  writePrivate(files.keyFile, pems.private);
  writePrivate(files.certFile, pems.cert);
}

/**
 * The desktop's self-signed certificate for LAN access: the one under DATA_DIR/tls while it has
 * more than RENEW_WITHIN_DAYS to run, else a new one naming `names` (default: this machine's).
 */
export async function ensureSelfSignedCertificate(dataDir: string, opts: { names?: CertificateNames; now?: Date } = {}): Promise<SelfSignedCertificate> {
  const now = opts.now ?? new Date();
  const files = filesIn(dataDir);
  fs.mkdirSync(path.dirname(files.certFile), { recursive: true, mode: 0o700 });
  fs.chmodSync(path.dirname(files.certFile), 0o700);
  const existing = fs.existsSync(files.certFile) || fs.existsSync(files.keyFile);
  const kept = usable(files, now);
  if (kept) return { files, certificate: kept, outcome: "reused" };
  await make(files, opts.names ?? machineCertificateNames(), now);
  return { files, certificate: readTlsCredentials(files).certificate, outcome: existing ? "renewed" : "made" };
}
