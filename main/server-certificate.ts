import fs from "node:fs";
import { isLoopbackAddress } from "../server/net/local-addresses";
import { ensureSelfSignedCertificate } from "../server/tls/self-signed-certificate";
import { sha256Fingerprint } from "../server/tls/tls-credentials";

/**
 * How the desktop's server speaks TLS (docs/decisions/0462-desktop-lan-all-https.md): with LAN
 * access on, HTTPS on every address, with the certificate TLS_CERT names when the person set one,
 * else the desktop's own self-signed one (made and kept by server/tls/self-signed-certificate.ts).
 * Loopback only, plain HTTP as before.
 */
export interface ServerTls {
  /** TLS_CERT and TLS_KEY for the server's process. */
  env: { TLS_CERT: string; TLS_KEY: string };
  /** The served certificate's SHA-256 fingerprint: shown in the tray, and the one certificate the window trusts on loopback. */
  fingerprintSha256: string;
}

export async function serverTls(allowLanAccess: boolean, dataDir: string, env: NodeJS.ProcessEnv): Promise<ServerTls | null> {
  if (env.TLS_CERT && env.TLS_KEY) {
    // The person's own certificate (the server checks the pair at start-up and refuses a bad one).
    let fingerprintSha256 = "";
    try {
      fingerprintSha256 = sha256Fingerprint(fs.readFileSync(env.TLS_CERT));
    } catch {
      // Unreadable or not a certificate: the server's start-up says which, in its log.
    }
    return { env: { TLS_CERT: env.TLS_CERT, TLS_KEY: env.TLS_KEY }, fingerprintSha256 };
  }
  if (!allowLanAccess) return null;
  const made = await ensureSelfSignedCertificate(dataDir);
  return { env: { TLS_CERT: made.files.certFile, TLS_KEY: made.files.keyFile }, fingerprintSha256: made.certificate.fingerprintSha256 };
}

/** What Electron's certificate check is asked (setCertificateVerifyProc's request): the host and the certificate's PEM. */
export interface CertificateCheck {
  hostname: string;
  certificate: { data: string };
}

/**
 * The window trusts the server's own certificate, which no CA signed, only on loopback and only
 * that exact certificate (by its SHA-256); everything else gets Chromium's own verdict.
 */
export function isOwnServerCertificate(check: CertificateCheck, fingerprintSha256: string | null): boolean {
  if (!fingerprintSha256) return false;
  if (!(check.hostname.toLowerCase() === "localhost" || isLoopbackAddress(check.hostname))) return false;
  try {
    return sha256Fingerprint(check.certificate.data) === fingerprintSha256;
  } catch {
    return false;
  }
}
