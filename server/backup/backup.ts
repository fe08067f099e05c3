import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { sqliteNativeBinding } from "../data/sqlite-binding";
import { KEY_FILE_NAME, SECRETS_FILE_NAME } from "../secrets/file-store";

/** What a backup holds, written last as `manifest.json`: a backup without it is incomplete. */
export interface BackupManifest {
  format: 1;
  sluiceVersion: string;
  createdAt: string;
  files: BackupFile[];
}

export interface BackupFile {
  /** Relative to DATA_DIR, with "/" separators. */
  path: string;
  kind: "database" | "index" | "secrets";
  bytes: number;
  /** database: the last migration applied; index: FTS schema version (user_version). */
  schema?: string | number;
  /** database: rows of its main tables; index: documents and chunks. */
  counts?: Record<string, number>;
}

const MANIFEST = "manifest.json";
const MAIN_DATABASE = "sluice.db";
const INDEX_FILE = /^[0-9a-f-]{36}\.db$/;
/** Main tables counted into the manifest, so a restore can be checked at a glance. */
const COUNTED_TABLES = ["users", "user_groups", "collections", "data_sources", "pipelines", "ingest_jobs"];

/**
 * Copies everything of DATA_DIR worth keeping into `dest` while a server may be running:
 * each SQLite file through SQLite's online backup API, copied in one step so the copy is one
 * consistent snapshot (a copy in small steps restarts whenever the server writes); the
 * secrets file and its key (the encrypted-file store) as they are, still sealed.
 */
export async function backupDataDir(dataDir: string, dest: string): Promise<BackupManifest> {
  if (!fs.existsSync(path.join(dataDir, MAIN_DATABASE))) throw new Error(`${dataDir} holds no Sluice database (${MAIN_DATABASE}) to back up`);
  if (fs.existsSync(dest) && fs.readdirSync(dest).length > 0) throw new Error(`The backup folder ${dest} is not empty; choose a new or empty folder`);
  fs.mkdirSync(path.join(dest, "indexes"), { recursive: true });
  const files: BackupFile[] = [];

  files.push({ path: MAIN_DATABASE, kind: "database", ...(await copyDatabase(path.join(dataDir, MAIN_DATABASE), path.join(dest, MAIN_DATABASE), describeMain)) });
  const indexDir = path.join(dataDir, "indexes");
  const indexes = fs.existsSync(indexDir) ? fs.readdirSync(indexDir).filter((name) => INDEX_FILE.test(name)).sort() : [];
  for (const name of indexes) {
    files.push({ path: `indexes/${name}`, kind: "index", ...(await copyDatabase(path.join(indexDir, name), path.join(dest, "indexes", name), describeIndex)) });
  }
  for (const name of [SECRETS_FILE_NAME, KEY_FILE_NAME]) {
    const source = path.join(dataDir, name);
    if (!fs.existsSync(source)) continue;
    fs.copyFileSync(source, path.join(dest, name));
    fs.chmodSync(path.join(dest, name), 0o600);
    files.push({ path: name, kind: "secrets", bytes: fs.statSync(source).size });
  }
  const manifest: BackupManifest = { format: 1, sluiceVersion: packageVersion(), createdAt: new Date().toISOString(), files };
  fs.writeFileSync(path.join(dest, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

/** Brings a backup back into an empty (or missing) DATA_DIR, checking every file against the manifest and every database with quick_check. */
export function restoreDataDir(backup: string, dataDir: string): BackupManifest {
  const manifestPath = path.join(backup, MANIFEST);
  if (!fs.existsSync(manifestPath)) throw new Error(`${backup} is not a complete Sluice backup (no ${MANIFEST})`);
  if (fs.existsSync(dataDir) && fs.readdirSync(dataDir).length > 0) {
    throw new Error(`DATA_DIR ${dataDir} is not empty; restore only into an empty folder, so nothing is overwritten`);
  }
  const manifest = JSON.parse(fs.readFileSync(manifestPath, "utf8")) as BackupManifest;
  if (manifest.format !== 1) throw new Error(`This backup's format (${manifest.format}) is not one this version can restore`);
  for (const file of manifest.files) {
    const source = path.join(backup, ...file.path.split("/"));
    if (!fs.existsSync(source) || fs.statSync(source).size !== file.bytes) throw new Error(`The backup is damaged: ${file.path} is missing or has the wrong size`);
    if (file.kind !== "secrets") {
      const db = new Database(source, { readonly: true, fileMustExist: true, nativeBinding: sqliteNativeBinding() });
      try {
        if (db.pragma("quick_check", { simple: true }) !== "ok") throw new Error(`The backup is damaged: ${file.path} fails SQLite's quick_check`);
      } finally {
        db.close();
      }
    }
  }
  fs.mkdirSync(path.join(dataDir, "indexes"), { recursive: true });
  for (const file of manifest.files) {
    const target = path.join(dataDir, ...file.path.split("/"));
    fs.copyFileSync(path.join(backup, ...file.path.split("/")), target);
    if (file.kind === "secrets") fs.chmodSync(target, 0o600);
  }
  return manifest;
}

async function copyDatabase(
  source: string,
  target: string,
  describe: (db: Database.Database) => Pick<BackupFile, "schema" | "counts">,
): Promise<Omit<BackupFile, "path" | "kind">> {
  const db = new Database(source, { readonly: true, fileMustExist: true, nativeBinding: sqliteNativeBinding() });
  try {
    db.pragma("busy_timeout = 5000");
    // After the first (empty) step, every page in one step: one read transaction, one snapshot.
    await db.backup(target, { progress: () => 0x7fffffff });
  } finally {
    db.close();
  }
  const copy = new Database(target, { fileMustExist: true, nativeBinding: sqliteNativeBinding() });
  try {
    return { bytes: fs.statSync(target).size, ...describe(copy) };
  } finally {
    copy.close();
  }
}

function describeMain(db: Database.Database): Pick<BackupFile, "schema" | "counts"> {
  const schema = db.prepare("SELECT name FROM migrations ORDER BY id DESC LIMIT 1").pluck().get() as string | undefined;
  const counts: Record<string, number> = {};
  for (const table of COUNTED_TABLES) {
    const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table);
    if (exists) counts[table] = db.prepare(`SELECT count(*) FROM "${table}"`).pluck().get() as number;
  }
  return { schema, counts };
}

function describeIndex(db: Database.Database): Pick<BackupFile, "schema" | "counts"> {
  const row = db.prepare("SELECT count(*) AS documents, coalesce(sum(chunk_count), 0) AS chunks FROM documents").get() as { documents: number; chunks: number };
  return { schema: db.pragma("user_version", { simple: true }) as number, counts: row };
}

function packageVersion(): string {
  for (const up of ["../..", "../../.."]) {
    const file = path.resolve(__dirname, up, "package.json");
    if (fs.existsSync(file)) return (JSON.parse(fs.readFileSync(file, "utf8")) as { version: string }).version;
  }
  return "unknown";
}
