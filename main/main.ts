import { execFile, spawn } from "node:child_process";
import path from "node:path";
import { app, BrowserWindow, dialog, ipcMain, Menu, nativeImage, session, shell, Tray, utilityProcess, type IpcMainInvokeEvent, type UtilityProcess } from "electron";
import { ELECTRON_SQLITE_BINDING_ENV } from "../server/data/sqlite-binding";
import { CONTENT_SECURITY_POLICY } from "../server/http/security-headers";
import { SERVER_NODE_FLAGS } from "../server/worker-script";
import { lanUrls } from "./lan-addresses";
import { openRotatingLog, type RotatingLog } from "./log-file";
import { electronSqliteBinding } from "./native-binding";
import { isExistingFile, openTarget, pageOpenCommand } from "./open-location";
import { isOwnServerCertificate, serverTls, type ServerTls } from "./server-certificate";
import { stopServer, waitForListening } from "./server-process";
import { readSettings, serverBinding, writeSettings, type ShellSettings } from "./settings";
import { isAppUrl, isExternalWebUrl, isTrustedIpcSender, withContentSecurityPolicy } from "./url-guards";

/**
 * The desktop shell: runs the headless server (dist/server/main.js) as a utility process,
 * opens a locked-down window on it, and offers a tray with "Allow LAN access". Everything
 * the product does lives in server/; this file only manages processes and windows.
 */

const SERVER_ENTRY = path.join(__dirname, "..", "server", "main.js");
/** The same backup code as `npm run backup` (server/backup/backup-cli.ts). */
const BACKUP_ENTRY = path.join(__dirname, "..", "server", "backup", "backup-cli.js");
const PRELOAD = path.join(__dirname, "preload.js");
/** dist/main/ -> the checkout (used only when not packaged). */
const CHECKOUT_ROOT = path.join(__dirname, "..", "..");

let server: UtilityProcess | null = null;
let serverUrl = "";
/** How the running server speaks TLS; null: plain HTTP on loopback. */
let tls: ServerTls | null = null;
let settings: ShellSettings;
let window: BrowserWindow | null = null;
let tray: Tray | null = null;
let quitting = false;

let log: Promise<RotatingLog> | undefined;

/** userData/logs, rotated by size; one for the app's lifetime, so a restarted server writes on into it. */
function desktopLog(): Promise<RotatingLog> {
  log ??= openRotatingLog(path.join(app.getPath("userData"), "logs"));
  return log;
}

/** DATA_DIR and the Electron build of better-sqlite3, for every process main/ starts on the data. */
function serverEnv(): Record<string, string> {
  return {
    DATA_DIR: process.env.DATA_DIR ?? app.getPath("userData"),
    // The server loads better-sqlite3 built for Electron's ABI, not node_modules' build for Node.
    [ELECTRON_SQLITE_BINDING_ENV]: electronSqliteBinding(app.isPackaged, process.resourcesPath, CHECKOUT_ROOT),
  };
}

/** Tray "Back up data…": a folder from the user, then the backup CLI on it while the server runs on. */
async function backUp(): Promise<void> {
  const chosen = await dialog.showOpenDialog({ title: "Back up Sluice's data to a new or empty folder", properties: ["openDirectory", "createDirectory"] });
  if (chosen.canceled || chosen.filePaths.length === 0) return;
  const child = utilityProcess.fork(BACKUP_ENTRY, ["backup", chosen.filePaths[0]], { stdio: "pipe", serviceName: "Sluice backup", env: { ...process.env, ...serverEnv() } });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk));
  const code = await new Promise<number>((resolve) => child.once("exit", resolve));
  await dialog.showMessageBox({ type: code === 0 ? "info" : "error", message: code === 0 ? "Backup complete" : "Backup failed", detail: output.trim() });
}

async function startServer(): Promise<void> {
  const { host, port } = serverBinding(settings);
  const serverLog = await desktopLog();
  // LAN access is HTTPS with the desktop's own certificate, made on first use and kept in DATA_DIR.
  tls = await serverTls(settings.allowLanAccess, serverEnv().DATA_DIR, process.env);
  const child = utilityProcess.fork(SERVER_ENTRY, [], {
    stdio: "pipe",
    serviceName: "Sluice server",
    // The server's own Node flags (its main thread's young generation), as `npm start` gives them.
    execArgv: SERVER_NODE_FLAGS,
    env: {
      ...process.env,
      HOST: host,
      PORT: String(port),
      ...serverEnv(),
      ...tls?.env,
    },
  });
  if (child.stdout) serverLog.attach(child.stdout);
  if (child.stderr) serverLog.attach(child.stderr);
  server = child;
  const url = await waitForListening(child);
  // The window always talks to the server over loopback, whatever address it binds.
  serverUrl = url.replace("//0.0.0.0:", "//127.0.0.1:");
  child.once("exit", () => {
    if (!quitting && server === child) app.quit();
  });
}

async function restartServer(): Promise<void> {
  const old = server;
  server = null;
  if (old) await stopServer(old);
  await startServer();
  await window?.loadURL(serverUrl);
  refreshTray();
}

function lanState() {
  const url = new URL(serverUrl);
  const urls = settings.allowLanAccess ? lanUrls(Number(url.port), undefined, url.protocol === "https:" ? "https" : "http") : [];
  return { enabled: settings.allowLanAccess, urls, certificateSha256: tls?.fingerprintSha256 ?? null };
}

async function setLanAccess(enabled: boolean) {
  settings = { ...settings, allowLanAccess: enabled };
  writeSettings(app.getPath("userData"), settings);
  await restartServer();
  return lanState();
}

/** contextIsolation + sandbox, no Node in the page, and guards on every navigation and new window. */
function openWindow(): void {
  if (window) {
    window.show();
    window.focus();
    return;
  }
  window = new BrowserWindow({
    width: 1280,
    height: 820,
    title: "Sluice",
    webPreferences: { contextIsolation: true, sandbox: true, nodeIntegration: false, preload: PRELOAD },
  });
  // A redirect is a navigation too: a page of the app answering 302 elsewhere must not take the window along.
  const guardNavigation = (event: { url: string; preventDefault(): void }) => {
    if (!isAppUrl(event.url, serverUrl)) {
      event.preventDefault();
      if (isExternalWebUrl(event.url)) void shell.openExternal(event.url);
    }
  };
  window.webContents.on("will-navigate", guardNavigation);
  window.webContents.on("will-redirect", guardNavigation);
  window.webContents.setWindowOpenHandler(({ url }) => {
    // OAuth consent pages and other links go to the system browser, never a new app window.
    if (isExternalWebUrl(url)) void shell.openExternal(url);
    return { action: "deny" };
  });
  window.on("closed", () => {
    window = null;
  });
  void window.loadURL(serverUrl);
}

function refreshTray(): void {
  if (!tray) return;
  const { enabled, urls, certificateSha256 } = lanState();
  tray.setToolTip(enabled && urls.length ? `Sluice: ${urls[0]}` : "Sluice");
  tray.setContextMenu(
    Menu.buildFromTemplate([
      { label: "Open Sluice", click: openWindow },
      { type: "separator" },
      { label: "Allow LAN access", type: "checkbox", checked: enabled, click: (item) => void setLanAccess(item.checked) },
      ...urls.map((url) => ({ label: `Reachable at ${url}`, enabled: false })),
      // What a colleague compares with the certificate their browser shows (also on the Account screen).
      ...(enabled && certificateSha256 ? [{ label: `Certificate SHA-256: ${certificateSha256}`, enabled: false }] : []),
      { type: "separator" },
      { label: "Back up data…", click: () => void backUp() },
      { label: "Quit", click: () => app.quit() },
    ]),
  );
}

/** An IPC handler that answers only the app's own page in the top frame of the window. */
function fromAppPage<A extends unknown[], R>(handler: (...args: A) => R) {
  return (event: IpcMainInvokeEvent, ...args: A): R => {
    const frame = event.senderFrame;
    if (!isTrustedIpcSender(frame ? { url: frame.url, isMainFrame: frame.parent === null } : null, serverUrl)) {
      throw new Error("Refused: only the Sluice window may ask this");
    }
    return handler(...args);
  };
}

function registerIpc(): void {
  ipcMain.handle("sluice:get-lan-access", fromAppPage(() => lanState()));
  ipcMain.handle("sluice:set-lan-access", fromAppPage((enabled: unknown) => setLanAccess(enabled === true)));
  ipcMain.handle(
    "sluice:open-external",
    fromAppPage((url: unknown) => {
      if (typeof url === "string" && isExternalWebUrl(url)) return shell.openExternal(url);
    }),
  );
  // A search result's "Open": only a document location that passes open-location.ts, never a program or a web page.
  ipcMain.handle("sluice:open-location", fromAppPage((location: unknown, page: unknown) => openLocation(location, page)));
}

/** Opens a search result's document with the system's default app (a PDF at `page` where its viewer takes one); answers the error to show, or null. */
async function openLocation(location: unknown, page: unknown): Promise<string | null> {
  const target = openTarget(location, process.platform);
  if (target.kind === "refused") return target.reason;
  if (target.kind === "url") {
    await shell.openExternal(target.url);
    return null;
  }
  if (!(await isExistingFile(target.path))) return "This computer cannot reach that file. Check that the share or folder is available, or copy its location.";
  if (process.platform === "linux" && (await openAtPage(target.path, page))) return null;
  // openPath answers "" on success, else the system's error message.
  return (await shell.openPath(target.path)) || null;
}

/** Linux: the default PDF viewer (xdg-mime) started at the page, where it is one that takes a page; false to open the file as usual. */
function openAtPage(file: string, page: unknown): Promise<boolean> {
  return new Promise((resolve) => {
    execFile("xdg-mime", ["query", "default", "application/pdf"], { timeout: 5000 }, (error, entry) => {
      const command = error ? null : pageOpenCommand(entry, file, page);
      if (!command) return resolve(false);
      const viewer = spawn(command.command, command.args, { detached: true, stdio: "ignore" });
      viewer.once("error", () => resolve(false));
      viewer.once("spawn", () => {
        viewer.unref();
        resolve(true);
      });
    });
  });
}

/** The window's session: every permission request (camera, location, notifications...) denied, as the app needs none; the server's CSP always. */
function lockDownSession(): void {
  session.defaultSession.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
  session.defaultSession.setPermissionCheckHandler(() => false);
  // With LAN access the server speaks HTTPS with its own certificate: the window trusts that one on loopback, nothing more.
  session.defaultSession.setCertificateVerifyProc((request, callback) => callback(isOwnServerCertificate(request, tls?.fingerprintSha256 ?? null) ? 0 : -3));
  session.defaultSession.webRequest.onHeadersReceived((details, callback) => {
    callback({ responseHeaders: withContentSecurityPolicy(details.responseHeaders, CONTENT_SECURITY_POLICY) });
  });
}

if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  app.on("second-instance", openWindow);
  app.on("window-all-closed", () => {
    // The tray keeps the server running for LAN users; quit from the tray.
    if (!tray) app.quit();
  });
  app.on("before-quit", (event) => {
    if (quitting || !server) return;
    // Stop the server cleanly first: it fails its running job durably and closes the database.
    event.preventDefault();
    quitting = true;
    void stopServer(server).then(() => app.quit());
  });
  void app.whenReady().then(async () => {
    // The app-data folder holds the database, secrets and logs: what the shell writes there (settings,
    // logs) is the user's alone too; the server does the same for its own (docs/decisions/0025-private-data-directory.md).
    if (process.platform !== "win32") process.umask(0o077);
    settings = readSettings(app.getPath("userData"));
    lockDownSession();
    registerIpc();
    await startServer();
    tray = new Tray(nativeImage.createEmpty());
    refreshTray();
    openWindow();
  });
}
