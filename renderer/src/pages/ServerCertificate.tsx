import { useQuery } from "@tanstack/react-query";
import { Fragment, useState } from "react";
import { queries } from "../api";
import { announce, copyText } from "../components";
import { isDesktopApp } from "../desktop";
import { formatTime } from "../format";

/**
 * The certificate this server speaks HTTPS with (GET /instance `tls`), so a person can check that
 * a browser on another computer reached this server and not an impostor: its SHA-256 fingerprint
 * in the form browsers show, to compare there (docs/decisions/0463-fingerprint-on-the-account-screen.md).
 * Nothing over plain HTTP.
 */
export function ServerCertificate() {
  const instance = useQuery(queries.instance()).data;
  const [copied, setCopied] = useState<boolean | null>(null);
  const tls = instance?.tls;
  if (!tls) return null;
  // Only the person at the server's machine sees the real fingerprint for sure: a page from an impostor would show the impostor's.
  const atTheMachine = isDesktopApp() || instance?.can_change_settings === true;
  const copy = async () => {
    const ok = await copyText(tls.certificate_sha256);
    setCopied(ok);
    announce(ok ? "Copied the certificate fingerprint." : "Could not copy. Select the fingerprint and press Ctrl+C.");
  };
  return (
    <section className="card" aria-labelledby="certificate-heading">
      <h2 id="certificate-heading">This server's certificate</h2>
      {atTheMachine ? (
        <p>
          {tls.self_signed ? "Sluice made this certificate itself, so browsers on other computers warn before they open this server. " : ""}
          On another computer, open the certificate the browser shows for this server and check that its SHA-256 fingerprint is this one. Give it to colleagues in
          person or by phone, not over the network you are checking.
        </p>
      ) : (
        <p>
          Your browser shows this server's certificate too. Its SHA-256 fingerprint must be the one the person at the server's computer sees there; compare
          with what they tell you, not only with this page, which an impostor would show with its own.
        </p>
      )}
      <dl className="certificate">
        <dt>SHA-256 fingerprint</dt>
        <dd>
          <code className="fingerprint" id="certificate-fingerprint">
            {/* Lines break only between pairs, so each pair reads whole at any width. */}
            {tls.certificate_sha256.split(":").map((pair, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: the pairs are a fixed sequence; a pair can repeat.
              <Fragment key={i}>
                {i > 0 && ":"}
                {i > 0 && <wbr />}
                {pair}
              </Fragment>
            ))}
          </code>
          <button type="button" className="small-button" aria-label="Copy the certificate fingerprint" onClick={() => void copy()}>
            Copy
          </button>
          {copied === true && <span className="copied">Copied</span>}
          {copied === false && <span className="field-error">Could not copy: select the fingerprint and press Ctrl+C.</span>}
        </dd>
        <dt>Valid until</dt>
        <dd>{formatTime(tls.expires_at)}</dd>
      </dl>
      <p className="hint">
        Where browsers show it: in Chrome or Edge, click “Not secure” or the padlock, then the certificate; in Firefox, “Advanced”, then “View Certificate”; in
        Safari, “Show Certificate”. Look for SHA-256 under Fingerprints.
      </p>
    </section>
  );
}
