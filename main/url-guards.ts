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

/** What an IPC handler knows of the frame that sent the message (Electron's senderFrame, null once it is gone). */
export interface SenderFrame {
  url: string;
  /** The window's top frame, not an iframe inside it. */
  isMainFrame: boolean;
}

/**
 * IPC is for the app's own page only: the top frame of the window, showing the app's origin.
 * An iframe or any page the window might end up on (a navigation guard bypassed) is refused.
 */
export function isTrustedIpcSender(frame: SenderFrame | null, appUrl: string): boolean {
  return frame?.isMainFrame === true && isAppUrl(frame.url, appUrl);
}

/**
 * Response headers with the app's Content-Security-Policy in force, whatever was sent (any
 * spelling of the header replaced), so the window is held to the same policy as a browser.
 */
export function withContentSecurityPolicy(headers: Record<string, string | string[]> | undefined, policy: string): Record<string, string | string[]> {
  const result: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (name.toLowerCase() !== "content-security-policy") result[name] = value;
  }
  result["Content-Security-Policy"] = [policy];
  return result;
}
