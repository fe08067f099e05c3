import path from "node:path";

/**
 * Where the Electron build of better-sqlite3 is (server/data/sqlite-binding.ts loads it):
 * packaged, in resources/electron-native/ (electron-builder's extraResources); from a
 * checkout (`npm run app`), in electron-native/ beside package.json, where
 * `npm run rebuild:electron` puts it.
 */
export function electronSqliteBinding(isPackaged: boolean, resourcesPath: string, checkoutRoot: string): string {
  return path.join(isPackaged ? resourcesPath : checkoutRoot, "electron-native", "better_sqlite3.node");
}
