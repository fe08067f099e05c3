import type { DocumentLocation } from "./api";

/** The search result's "Open" the desktop app's preload exposes; absent in a browser. */
interface OpenBridge {
  /** Main checks the location (main/open-location.ts) and opens the file, at `page` where its viewer takes one; answers an error to show, or null. */
  openLocation(location: DocumentLocation, page?: number | null): Promise<string | null>;
}

/** The tray's "Allow LAN access", as main/main.ts answers it: the https addresses colleagues use, and the certificate's fingerprint. */
export interface LanAccess {
  enabled: boolean;
  urls: string[];
  certificateSha256: string | null;
}

/** The LAN switch the preload exposes; setting it restarts the server and reloads the window. */
interface LanBridge {
  getLanAccess(): Promise<LanAccess>;
  setLanAccess(enabled: boolean): Promise<LanAccess>;
}

/** What the desktop app's preload exposes (main/preload.ts), read only here; undefined in a LAN browser. */
interface DesktopBridge extends Partial<OpenBridge>, Partial<LanBridge> {
  /** Opens a URL in the system browser (Google's consent page). */
  openExternal?(url: string): Promise<void>;
}

const bridge = (): DesktopBridge | undefined => (window as unknown as { sluiceDesktop?: DesktopBridge }).sluiceDesktop;

/**
 * The desktop app is run by the person who can start the model server and change its settings;
 * a browser on a LAN server is not (docs/decisions/0145-model-server-status-and-words.md).
 */
export const isDesktopApp = (): boolean => bridge() !== undefined;

/** The desktop app's "open in the system browser", or undefined where there is none (a browser). */
export function desktopBrowserOpener(): ((url: string) => Promise<void>) | undefined {
  return bridge()?.openExternal;
}

/** The desktop app's "Open" on a document, or undefined where there is none (a browser, an older shell). */
export function desktopOpener(): OpenBridge | undefined {
  const found = bridge();
  return typeof found?.openLocation === "function" ? (found as OpenBridge) : undefined;
}

/** The desktop app's LAN switch, or undefined where there is none (a browser, an older shell). */
export function desktopLanAccess(): LanBridge | undefined {
  const found = bridge();
  return typeof found?.getLanAccess === "function" && typeof found.setLanAccess === "function" ? (found as LanBridge) : undefined;
}
