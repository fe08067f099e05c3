import { contextBridge, ipcRenderer } from "electron";

/**
 * The few named functions the UI may call in the desktop app; never a generic invoke.
 * In a LAN browser `window.sluiceDesktop` is undefined and the UI hides these controls.
 */
contextBridge.exposeInMainWorld("sluiceDesktop", {
  getLanAccess: (): Promise<{ enabled: boolean; urls: string[]; certificateSha256: string | null }> => ipcRenderer.invoke("sluice:get-lan-access"),
  setLanAccess: (enabled: boolean): Promise<{ enabled: boolean; urls: string[]; certificateSha256: string | null }> => ipcRenderer.invoke("sluice:set-lan-access", enabled === true),
  openExternal: (url: string): Promise<void> => ipcRenderer.invoke("sluice:open-external", String(url)),
  /** A search result's document (its `location` as the API answered it), at a PDF page where the viewer takes one; main checks it and answers an error to show, or null. */
  openLocation: (location: { path: string | null; url: string | null }, page?: number | null): Promise<string | null> =>
    ipcRenderer.invoke("sluice:open-location", { path: location?.path ?? null, url: location?.url ?? null }, Number.isInteger(page) ? page : null),
});
