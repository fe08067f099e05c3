import fs from "node:fs";
import path from "node:path";

/** The desktop shell's own settings, kept as JSON in the app-data folder. */
export interface ShellSettings {
  /** Serve on 0.0.0.0 so others on the LAN can use this instance. */
  allowLanAccess: boolean;
  /** Fixed port; 0 picks a free one at every start. */
  port: number;
}

const DEFAULTS: ShellSettings = { allowLanAccess: false, port: 0 };

export function readSettings(dir: string): ShellSettings {
  try {
    const raw = JSON.parse(fs.readFileSync(path.join(dir, "settings.json"), "utf8")) as Partial<ShellSettings>;
    return {
      allowLanAccess: typeof raw.allowLanAccess === "boolean" ? raw.allowLanAccess : DEFAULTS.allowLanAccess,
      port: Number.isInteger(raw.port) && raw.port! >= 0 && raw.port! <= 65535 ? raw.port! : DEFAULTS.port,
    };
  } catch {
    return { ...DEFAULTS };
  }
}

export function writeSettings(dir: string, settings: ShellSettings): void {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, "settings.json");
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(settings, null, 2));
  fs.renameSync(`${file}.tmp`, file);
}

/** Server bind settings: loopback only unless LAN access is allowed; a LAN server needs a fixed port people can reach. */
export function serverBinding(settings: ShellSettings): { host: string; port: number } {
  if (!settings.allowLanAccess) return { host: "127.0.0.1", port: settings.port };
  return { host: "0.0.0.0", port: settings.port || 8420 };
}
