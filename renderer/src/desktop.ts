import type { DocumentLocation } from "./api";

/** The search result's "Open" the desktop app's preload exposes (main/preload.ts); absent in a browser. */
interface OpenBridge {
  /** Main checks the location (main/open-location.ts) and opens the file, at `page` where its viewer takes one; answers an error to show, or null. */
  openLocation(location: DocumentLocation, page?: number | null): Promise<string | null>;
}

/** The desktop app's "Open" on a document, or undefined where there is none (a browser, an older shell). */
export function desktopOpener(): OpenBridge | undefined {
  const bridge = (window as unknown as { sluiceDesktop?: Partial<OpenBridge> }).sluiceDesktop;
  return typeof bridge?.openLocation === "function" ? (bridge as OpenBridge) : undefined;
}
