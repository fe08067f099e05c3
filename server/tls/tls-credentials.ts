import crypto, { X509Certificate, type KeyObject } from "node:crypto";
import fs from "node:fs";
import { ConfigError, type TlsFiles } from "../config";

/** What the UI and the log say of the certificate served (GET /api/instance `tls`). */
export interface CertificateSummary {
  /** SHA-256 of the certificate (its DER bytes) as browsers and `openssl x509 -fingerprint -sha256` show it: upper-case hex pairs joined by colons. */
  fingerprintSha256: string;
  notAfter: Date;
  /** Its own issuer: browsers warn until it is trusted, so the fingerprint is what a colleague compares. */
  selfSigned: boolean;
}

/** The certificate and key node:https serves, read and checked once at start-up. */
export interface TlsCredentials {
  /** TLS_CERT's PEM text as given (a chain after the certificate is served too). */
  cert: Buffer;
  key: Buffer;
  certificate: CertificateSummary;
  /** TLS_KEY's file can be read by other users of this machine (POSIX group or other bits): worth a warning, not a refusal. */
  keyOpenToOthers: boolean;
}

const PEM_CERTIFICATE = "-----BEGIN CERTIFICATE-----";
const PEM_PRIVATE_KEY = /-----BEGIN (?:RSA |EC |ENCRYPTED )?PRIVATE KEY-----/;

/** The common reasons a file cannot be read, in words; else the system's code. */
const READ_FAILURES: Record<string, string> = {
  ENOENT: "there is no such file",
  EACCES: "this user may not read it",
  EPERM: "this user may not read it",
  EISDIR: "it is a folder",
};

/** The colon-separated SHA-256 fingerprint of a PEM (or DER) certificate; for a chain, of its first certificate. */
export function sha256Fingerprint(certificate: string | Buffer): string {
  return new X509Certificate(certificate).fingerprint256;
}

function summarise(certificate: X509Certificate): CertificateSummary {
  return {
    fingerprintSha256: certificate.fingerprint256,
    notAfter: new Date(certificate.validTo),
    // Signed by its own key (checkIssued would also ask for a CA's key usage, which a server certificate lacks).
    selfSigned: certificate.subject === certificate.issuer && certificate.verify(certificate.publicKey),
  };
}

function readFile(name: "TLS_CERT" | "TLS_KEY", file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "unknown error";
    throw new ConfigError(`${name} cannot be read: ${file} (${READ_FAILURES[code] ?? code})`);
  }
}

function parseCertificate(file: string, text: Buffer): X509Certificate {
  const problem = `TLS_CERT must be a PEM certificate file (beginning ${PEM_CERTIFICATE}), and ${file} is not one`;
  if (!text.includes(PEM_CERTIFICATE)) throw new ConfigError(problem);
  try {
    return new X509Certificate(text);
  } catch {
    throw new ConfigError(problem);
  }
}

function parseKey(file: string, text: Buffer): KeyObject {
  // The parser's own message is not repeated: nothing of the key's text may reach a log.
  const problem = `TLS_KEY must be an unencrypted PEM private key file (beginning -----BEGIN PRIVATE KEY-----), and ${file} is not one`;
  const pem = text.toString("latin1");
  if (!PEM_PRIVATE_KEY.test(pem)) throw new ConfigError(problem);
  // PKCS#8's encrypted form, or the traditional one's header (OpenSSL's error for either says nothing useful).
  if (/-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type: 4,ENCRYPTED/.test(pem)) {
    throw new ConfigError(`TLS_KEY is encrypted with a passphrase, which Sluice cannot ask for: write it unencrypted (openssl pkey -in ${file} -out PLAIN.pem) and keep that file readable by this user only`);
  }
  try {
    return crypto.createPrivateKey(text);
  } catch {
    throw new ConfigError(problem);
  }
}

/**
 * TLS_CERT and TLS_KEY read and checked: each must be readable and PEM, and the key must be the
 * certificate's. Every failure is one ConfigError sentence naming the variable and the path,
 * never the files' contents, so start-up stops with a message that is safe to log.
 */
export function readTlsCredentials(files: TlsFiles): TlsCredentials {
  const cert = readFile("TLS_CERT", files.certFile);
  const key = readFile("TLS_KEY", files.keyFile);
  const certificate = parseCertificate(files.certFile, cert);
  const privateKey = parseKey(files.keyFile, key);
  if (!certificate.checkPrivateKey(privateKey)) {
    throw new ConfigError(`TLS_KEY is not the private key of the certificate in TLS_CERT: ${files.keyFile} does not match ${files.certFile}`);
  }
  const keyOpenToOthers = process.platform !== "win32" && (fs.statSync(files.keyFile).mode & 0o077) !== 0;
  return { cert, key, certificate: summarise(certificate), keyOpenToOthers };
}
