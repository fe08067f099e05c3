import type { CertificateSummary } from "../tls/tls-credentials";
import { isoNoZone } from "../time";

/** The certificate this server serves HTTPS with (TLS_CERT), so a person can compare its fingerprint with the one their browser shows. */
function presentCertificate(certificate: CertificateSummary) {
  return {
    certificate_sha256: certificate.fingerprintSha256,
    self_signed: certificate.selfSigned,
    expires_at: isoNoZone(certificate.notAfter) as string,
  };
}

/** GET /instance: what the caller may do with this instance's settings, whether instance-wide actions are an administrator's, and the certificate served (null over plain HTTP). */
export function presentInstance(canChangeSettings: boolean, administratorsOnly: boolean, tls: CertificateSummary | null) {
  return { can_change_settings: canChangeSettings, administrators_only: administratorsOnly, tls: tls ? presentCertificate(tls) : null };
}
