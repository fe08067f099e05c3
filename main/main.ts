import path from "node:path";
import { app, BrowserWindow, shell, utilityProcess, type UtilityProcess } from "electron";

/**
 * The desktop shell: runs the headless server (dist/server/main.js) as a utility
 * process on 127.0.0.1 and opens a locked-down window on it. Everything the
 * product does lives in server/; this file only manages the process and window.
 */

const SERVER_ENTRY = path.join(__dirname, "..", "server", "main.js");
let server: UtilityProcess | null = null;

function startServer(): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = utilityProcess.fork(SERVER_ENTRY, [], {
      stdio: "pipe",
      env: { ...process.env, HOST: "127.0.0.1", PORT: process.env.PORT ?? "0", DATA_DIR: process.env.DATA_DIR ?? app.getPath("userData") },
    });
    server = child;
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) resolve(match[1]);
    });
    child.once("exit", (code) => reject(new Error(`server exited with code ${code}`)));
  });
}

function isAppUrl(target: string, appUrl: string): boolean {
  try {
    return new URL(target).origin === new URL(appUrl).origin;
  } catch {
    return false;
  }
}

async function openWindow(appUrl: string): Promise<void> {
  const window = new BrowserWindow({
    width: 1280,
    height: 820,
    webPreferences: { contextIsolation: true, sandbox: true, nodeIntegration: false },
  });
  window.webContents.on("will-navigate", (event, target) => {
    if (!isAppUrl(target, appUrl)) event.preventDefault();
  });
  window.webContents.setWindowOpenHandler(({ url }) => {
    if (url.startsWith("https:")) void shell.openExternal(url);
    return { action: "deny" };
  });
  await window.loadURL(appUrl);
}

if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  app.on("window-all-closed", () => app.quit());
  app.on("before-quit", () => server?.kill());
  void app.whenReady().then(async () => openWindow(await startServer()));
}
