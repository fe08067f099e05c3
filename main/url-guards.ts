/**
 * Which URLs the window may show and which go to the system browser. Decisions are made
 * on parsed URLs (never string prefixes), so "http://127.0.0.1:8420.evil.example" and
 * "javascript:" tricks cannot pass.
 */

/** Same origin as the app's own server: the only pages the window navigates to. */
export function isAppUrl(target: string, appUrl: string): boolean {
  try {
    return new URL(target).origin === new URL(appUrl).origin;
  } catch {
    return false;
  }
}

/** http(s) links elsewhere (docs, an OAuth consent page) open in the system browser; nothing else opens at all. */
export function isExternalWebUrl(target: string): boolean {
  try {
    const url = new URL(target);
    return (url.protocol === "https:" || url.protocol === "http:") && url.hostname !== "";
  } catch {
    return false;
  }
}
