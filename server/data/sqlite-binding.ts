import fs from "node:fs";
import path from "node:path";

/**
 * Which compiled better-sqlite3 this process loads. better-sqlite3 is built against one
 * runtime's ABI: node_modules holds Node's build (for `npm start`, `npm test`, the worker),
 * and the desktop app needs a separate build for Electron's ABI that
 * `npm run rebuild:electron` makes in electron-native/ (never in place). Every opener of
 * SQLite (the TypeORM data source, the collection index and its writer thread) passes this
 * as better-sqlite3's `nativeBinding`.
 */

/** Set by the Electron shell (main/) for the server process: the Electron build's .node file. */
export const ELECTRON_SQLITE_BINDING_ENV = "SLUICE_ELECTRON_SQLITE_BINDING";
/** The command that makes the Electron build. */
const REBUILD_COMMAND = "npm run rebuild:electron";
/** Written beside the .node by the rebuild script: what it was built for. */
const BUILD_INFO_FILE = "build-info.json";

export interface Runtime {
  env: NodeJS.ProcessEnv;
  /** process.versions: `electron` is there only inside Electron; `modules` is the ABI. */
  versions: { electron?: string; modules: string };
}

export class SqliteBindingError extends Error {}

/**
 * undefined under Node (better-sqlite3's own build in node_modules); under Electron, the
 * path of the Electron build, checked to exist and to match this Electron's ABI so a missing
 * or stale build fails at start-up with the command to run, not deep inside TypeORM.
 */
export function sqliteNativeBinding(runtime: Runtime = { env: process.env, versions: process.versions }): string | undefined {
  const electron = runtime.versions.electron;
  if (!electron) return undefined;
  const file = runtime.env[ELECTRON_SQLITE_BINDING_ENV];
  if (!file) {
    throw new SqliteBindingError(
      `Running under Electron ${electron} without ${ELECTRON_SQLITE_BINDING_ENV}: start the desktop app with \`npm run app\` (its shell points the server at the Electron build of better-sqlite3)`,
    );
  }
  if (!fs.existsSync(file)) {
    throw new SqliteBindingError(`No better-sqlite3 build for Electron at ${file}: run \`${REBUILD_COMMAND}\` (it builds one for Electron's ABI into electron-native/)`);
  }
  const builtFor = readBuildInfo(path.join(path.dirname(file), BUILD_INFO_FILE));
  if (builtFor.modules !== runtime.versions.modules) {
    throw new SqliteBindingError(
      `The better-sqlite3 build at ${file} is for Electron ${builtFor.electron ?? "?"} (ABI ${builtFor.modules ?? "?"}), this is Electron ${electron} (ABI ${runtime.versions.modules}): run \`${REBUILD_COMMAND}\``,
    );
  }
  return file;
}

function readBuildInfo(file: string): { electron?: string; modules?: string } {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8")) as { electron?: string; modules?: string };
  } catch {
    return {};
  }
}
