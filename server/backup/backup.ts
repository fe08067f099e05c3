import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { sqliteNativeBinding } from "../data/sqlite-binding";
import { KEY_FILE_NAME, SECRETS_FILE_NAME } from "../secrets/file-store";
import { type BackupKeys, type BackupSealing, backupKeys, fileDigest, manifestSeal, newBackupKeys, openSealedFile, sealFile, sealMatches } from "./backup-crypto";

/** What a backup holds, written last as `manifest.json`: a backup without it is incomplete. */
export interface BackupManifest {
  /** 2: digests, sealing, the key left out unless sealed; 1 (before): none of these. */
  format: 1 | 2;
  sluiceVersion: string;
  createdAt: string;
  /** null: files as they are (the secrets' key left out); else how each file is sealed. */
  sealing?: BackupSealing | null;
  /** The secrets DATA_DIR keeps in a file (when there is no OS keychain): in the backup with their key (sealed backups only), left out, or none to keep. */
  secrets?: "included" | "left-out" | "none";
  files: BackupFile[];
  /** With sealing: the HMAC over the rest of the manifest. */
  seal?: string;
}

export interface BackupFile {
  /** Relative to DATA_DIR, with "/" separators. */
  path: string;
  kind: "database" | "index" | "secrets";
  /** Its size once restored. */
  bytes: number;
  /** format 2: SHA-256 of the file as stored in the backup (sealed, when sealed). */
  sha256?: string;
  /** database: the last migration applied; index: FTS schema version (user_version). */
  schema?: string | number;
  /** database: rows of its main tables; index: documents and chunks. */
  counts?: Record<string, number>;
}

export interface BackupOptions {
  /** Seal every file with this passphrase (and keep the secrets' key in the backup); none: plain files, key left out. */
  passphrase?: string;
}

const MANIFEST = "manifest.json";
const MAIN_DATABASE = "sluice.db";
const INDEX_FILE = /^[0-9a-f-]{36}\.db$/;
/** Main tables counted into the manifest, so a restore can be checked at a glance. */
const COUNTED_TABLES = ["users", "user_groups", "collections", "data_sources", "pipelines", "ingest_jobs"];
/** The only names a backup may hold, each with its kind: a manifest naming anything else (`../x`) is refused. */
const ALLOWED_FILES: ReadonlyArray<{ allows(name: string): boolean; kind: BackupFile["kind"] }> = [
  { allows: (name) => name === MAIN_DATABASE, kind: "database" },
  { allows: (name) => /^indexes\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.db$/.test(name), kind: "index" },
  { allows: (name) => name === SECRETS_FILE_NAME || name === KEY_FILE_NAME, kind: "secrets" },
];
/** Folders and files of a backup, and of a restored DATA_DIR: the owner's alone (password hashes, every document's text). */
const PRIVATE_DIR = 0o700;
const PRIVATE_FILE = 0o600;

/**
 * Copies everything of DATA_DIR worth keeping into `dest` while a server may be running:
 * each SQLite file through SQLite's online backup API, copied in one step so the copy is one
 * consistent snapshot (a copy in small steps restarts whenever the server writes). With a
 * passphrase every file is sealed, and the file-kept secrets go too with their key; without one
 * they stay out (their key next to them would open them for whoever holds the backup), which the
 * manifest (`secrets`) and the CLI say. Secrets in the OS keychain are never in a backup.
 */
export async function backupDataDir(dataDir: string, dest: string, options: BackupOptions = {}): Promise<BackupManifest> {
  if (!fs.existsSync(path.join(dataDir, MAIN_DATABASE))) throw new Error(`${dataDir} holds no Sluice database (${MAIN_DATABASE}) to back up`);
  if (fs.existsSync(dest) && fs.readdirSync(dest).length > 0) throw new Error(`The backup folder ${dest} is not empty; choose a new or empty folder`);
  fs.mkdirSync(path.join(dest, "indexes"), { recursive: true, mode: PRIVATE_DIR });
  for (const dir of [dest, path.join(dest, "indexes")]) fs.chmodSync(dir, PRIVATE_DIR);
  const keys = options.passphrase ? newBackupKeys(options.passphrase) : null;
  // Plain copies are made in place; sealed ones go through a private staging folder, removed after.
  const staging = keys ? fs.mkdtempSync(path.join(dest, ".staging-")) : null;
  const files: BackupFile[] = [];
  const store = async (name: string, kind: BackupFile["kind"], plain: string, described: Omit<BackupFile, "path" | "kind" | "sha256">) => {
    const target = path.join(dest, ...name.split("/"));
    if (keys) await sealFile(keys, name, plain, target);
    else if (plain !== target) fs.copyFileSync(plain, target);
    fs.chmodSync(target, PRIVATE_FILE);
    files.push({ path: name, kind, ...described, sha256: await fileDigest(target) });
  };
  try {
    const copyPlace = (name: string) => (staging ? path.join(staging, path.basename(name)) : path.join(dest, ...name.split("/")));
    const databases: Array<{ name: string; kind: BackupFile["kind"]; describe: typeof describeMain }> = [{ name: MAIN_DATABASE, kind: "database", describe: describeMain }];
    const indexDir = path.join(dataDir, "indexes");
    const indexes = fs.existsSync(indexDir) ? fs.readdirSync(indexDir).filter((name) => INDEX_FILE.test(name)).sort() : [];
    for (const name of indexes) databases.push({ name: `indexes/${name}`, kind: "index", describe: describeIndex });
    for (const { name, kind, describe } of databases) {
      const copy = copyPlace(name);
      const described = await copyDatabase(path.join(dataDir, ...name.split("/")), copy, describe);
      await store(name, kind, copy, described);
      if (staging) fs.rmSync(copy);
    }
    // Without a passphrase the key stays out, and the secrets with it: a secrets file without its
    // key would only stop the restored server from starting (it refuses to orphan secrets).
    for (const name of keys ? [SECRETS_FILE_NAME, KEY_FILE_NAME] : []) {
      const source = path.join(dataDir, name);
      if (fs.existsSync(source)) await store(name, "secrets", source, { bytes: fs.statSync(source).size });
    }
  } finally {
    if (staging) fs.rmSync(staging, { recursive: true, force: true });
  }
  const secretsKept = fs.existsSync(path.join(dataDir, SECRETS_FILE_NAME));
  const secrets = !secretsKept ? "none" : keys ? "included" : "left-out";
  const unsealed: BackupManifest = { format: 2, sluiceVersion: packageVersion(), createdAt: new Date().toISOString(), sealing: keys?.sealing ?? null, secrets, files };
  const manifest = keys ? { ...unsealed, seal: manifestSeal(keys, unsealed) } : unsealed;
  fs.writeFileSync(path.join(dest, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`, { mode: PRIVATE_FILE });
  return manifest;
}

/**
 * Brings a backup back into an empty (or missing) DATA_DIR. Everything is checked before
 * anything lands there: the manifest's names (only those a backup may hold), its seal, each
 * file's digest, size and seal, each database's quick_check, in a private staging folder inside
 * DATA_DIR; only then do the files take their places. A refused backup leaves DATA_DIR as it was.
 */
export async function restoreDataDir(backup: string, dataDir: string, options: BackupOptions = {}): Promise<BackupManifest> {
  const manifestPath = path.join(backup, MANIFEST);
  if (!fs.existsSync(manifestPath)) throw new Error(`${backup} is not a complete Sluice backup (no ${MANIFEST})`);
  if (fs.existsSync(dataDir) && fs.readdirSync(dataDir).length > 0) {
    throw new Error(`DATA_DIR ${dataDir} is not empty; restore only into an empty folder, so nothing is overwritten`);
  }
  const manifest = readManifest(manifestPath);
  const keys = openingKeys(manifest, options.passphrase);
  const createdDataDir = !fs.existsSync(dataDir);
  fs.mkdirSync(dataDir, { recursive: true, mode: PRIVATE_DIR });
  const staging = fs.mkdtempSync(path.join(dataDir, ".restoring-"));
  try {
    for (const file of manifest.files) {
      const stored = path.join(backup, ...file.path.split("/"));
      if (!fs.existsSync(stored) || !fs.statSync(stored).isFile()) throw new Error(`The backup is damaged: ${file.path} is missing`);
      if (file.sha256 !== undefined && (await fileDigest(stored)) !== file.sha256) {
        throw new Error(`The backup was changed after it was written: ${file.path} does not match its digest`);
      }
      const staged = path.join(staging, stagedName(file.path));
      if (keys) await openSealedFile(keys, file.path, stored, staged);
      else fs.copyFileSync(stored, staged);
      if (fs.statSync(staged).size !== file.bytes) throw new Error(`The backup is damaged: ${file.path} has the wrong size`);
      if (file.kind !== "secrets") checkDatabase(staged, file.path);
    }
    fs.mkdirSync(path.join(dataDir, "indexes"), { mode: PRIVATE_DIR });
    for (const file of manifest.files) {
      const target = path.join(dataDir, ...file.path.split("/"));
      fs.renameSync(path.join(staging, stagedName(file.path)), target);
      fs.chmodSync(target, PRIVATE_FILE);
    }
  } catch (error) {
    fs.rmSync(staging, { recursive: true, force: true });
    if (createdDataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  fs.rmSync(staging, { recursive: true, force: true });
  fs.chmodSync(dataDir, PRIVATE_DIR);
  return manifest;
}

/** The manifest, refused unless it is one this version reads and names only files a backup may hold, each once. */
function readManifest(manifestPath: string): BackupManifest {
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(fs.readFileSync(manifestPath, "utf8")) as BackupManifest;
  } catch {
    throw new Error(`The backup is damaged: ${MANIFEST} is not valid JSON`);
  }
  if (manifest?.format !== 1 && manifest?.format !== 2) throw new Error(`This backup's format (${String(manifest?.format)}) is not one this version can restore`);
  if (!Array.isArray(manifest.files)) throw new Error(`The backup is damaged: ${MANIFEST} lists no files`);
  const seen = new Set<string>();
  for (const file of manifest.files) {
    const allowed = typeof file?.path === "string" && ALLOWED_FILES.some((a) => a.kind === file.kind && a.allows(file.path));
    if (!allowed || seen.has(file.path)) throw new Error(`The backup's manifest names a file a Sluice backup never holds (${JSON.stringify(file?.path)}); nothing was restored`);
    if (!Number.isSafeInteger(file.bytes) || file.bytes < 0) throw new Error(`The backup is damaged: ${file.path} has no size`);
    seen.add(file.path);
  }
  if (!seen.has(MAIN_DATABASE)) throw new Error(`The backup is damaged: it holds no ${MAIN_DATABASE}`);
  return manifest;
}

/** The keys of a sealed backup (its seal checked), or null for a plain one; a passphrase is needed exactly when it is sealed. */
function openingKeys(manifest: BackupManifest, passphrase: string | undefined): BackupKeys | null {
  const { seal, ...unsealed } = manifest;
  if (!manifest.sealing) {
    if (passphrase) throw new Error("This backup is not sealed with a passphrase; restore it without one");
    return null;
  }
  if (!passphrase) throw new Error("This backup is sealed with a passphrase: give it (BACKUP_PASSPHRASE or --passphrase-file)");
  const keys = backupKeys(passphrase, manifest.sealing);
  if (!sealMatches(keys, unsealed, seal)) throw new Error("The passphrase is wrong, or the backup's manifest was changed after it was written; nothing was restored");
  return keys;
}

function checkDatabase(file: string, name: string): void {
  const db = new Database(file, { readonly: true, fileMustExist: true, nativeBinding: sqliteNativeBinding() });
  try {
    if (db.pragma("quick_check", { simple: true }) !== "ok") throw new Error(`The backup is damaged: ${name} fails SQLite's quick_check`);
  } finally {
    db.close();
  }
}

/** A file's name in the staging folder: flat, and already known to be one of the allowed names. */
function stagedName(name: string): string {
  return name.replace("/", "__");
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
