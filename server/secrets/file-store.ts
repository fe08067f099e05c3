import { randomBytes } from "node:crypto";
import { promises as fsp } from "node:fs";
import * as path from "node:path";
import { SecretStoreError, type SecretStore } from "./secret-store";
import { SEAL_KEY_BYTES, seal, unseal } from "./seal";

export const SECRETS_FILE_NAME = "secrets.enc.json";
export const KEY_FILE_NAME = "secret.key";

const KEY_BYTES = SEAL_KEY_BYTES;
const FILE_VERSION = 1;

interface EncryptedEntry {
  iv: string;
  tag: string;
  data: string;
}

interface SecretsFile {
  version: number;
  entries: Record<string, EncryptedEntry>;
}

// One write queue per secrets file, shared by every store instance in this process,
// so concurrent read-modify-write cycles never overwrite each other; each cycle also holds
// a lock file, for the other processes sharing DATA_DIR (team mode with SQLite: API
// processes and workers on one machine).
const writeQueues = new Map<string, Promise<unknown>>();

function serialize<T>(file: string, work: () => Promise<T>): Promise<T> {
  const previous = writeQueues.get(file) ?? Promise.resolve();
  const locked = () => withLockFile(`${file}.lock`, work);
  const next = previous.then(locked, locked);
  const tail = next.then(
    () => undefined,
    () => undefined,
  );
  writeQueues.set(file, tail);
  void tail.then(() => {
    if (writeQueues.get(file) === tail) writeQueues.delete(file);
  });
  return next;
}

/** A lock older than this was left by a process that died mid-write (a write takes milliseconds). */
const STALE_LOCK_MS = 30_000;
const LOCK_WAIT_MS = 10_000;

/** Runs `work` while holding `lockPath`, created exclusively; waits for another holder. */
async function withLockFile<T>(lockPath: string, work: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      await (await fsp.open(lockPath, "wx", 0o600)).close();
      break;
    } catch (err) {
      if (!isErrno(err, "EEXIST")) throw new SecretStoreError(`Cannot create ${lockPath}: ${(err as Error).message}`, { cause: err });
    }
    const held = await fsp.stat(lockPath).catch(() => null);
    if (held && Date.now() - held.mtimeMs > STALE_LOCK_MS) {
      await fsp.rm(lockPath, { force: true });
      continue;
    }
    if (Date.now() > deadline) throw new SecretStoreError(`Timed out waiting for ${lockPath}: another Sluice process is writing secrets`);
    await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 10));
  }
  try {
    return await work();
  } finally {
    await fsp.rm(lockPath, { force: true });
  }
}

function isErrno(err: unknown, code: string): boolean {
  return typeof err === "object" && err !== null && (err as NodeJS.ErrnoException).code === code;
}

function assertKey(key: string): void {
  if (typeof key !== "string" || key.length === 0) {
    throw new SecretStoreError("Secret key must be a non-empty string");
  }
}

/**
 * Secrets kept in one JSON file under the data dir, each value sealed with
 * AES-256-GCM under a random key kept next to it in `secret.key` (both 0600).
 */
export class FileSecretStore implements SecretStore {
  readonly kind = "file" as const;

  private constructor(
    readonly filePath: string,
    readonly keyPath: string,
    private readonly key: Buffer,
  ) {}

  static async open(dataDir: string): Promise<FileSecretStore> {
    const dir = path.resolve(dataDir);
    await fsp.mkdir(dir, { recursive: true, mode: 0o700 });
    const filePath = path.join(dir, SECRETS_FILE_NAME);
    const keyPath = path.join(dir, KEY_FILE_NAME);
    const key = await loadOrCreateKey(keyPath, filePath);
    const store = new FileSecretStore(filePath, keyPath, key);
    // Fail at open, not at first use, if the file is unreadable.
    const existing = await store.readFile();
    if (Object.keys(existing.entries).length > 0) await fsp.chmod(filePath, 0o600);
    return store;
  }

  async get(key: string): Promise<string | null> {
    assertKey(key);
    const file = await this.readFile();
    const entry = Object.hasOwn(file.entries, key) ? file.entries[key] : undefined;
    return entry ? this.decrypt(key, entry) : null;
  }

  async set(key: string, value: string): Promise<void> {
    assertKey(key);
    if (typeof value !== "string") throw new SecretStoreError(`Secret "${key}" must be a string`);
    await serialize(this.filePath, async () => {
      const file = await this.readFile();
      file.entries[key] = this.encrypt(key, value);
      await this.writeFile(file);
    });
  }

  async getOrCreate(key: string, make: () => string): Promise<string> {
    assertKey(key);
    return serialize(this.filePath, async () => {
      const file = await this.readFile();
      if (Object.hasOwn(file.entries, key)) return this.decrypt(key, file.entries[key]);
      const value = make();
      file.entries[key] = this.encrypt(key, value);
      await this.writeFile(file);
      return value;
    });
  }

  async delete(key: string): Promise<void> {
    assertKey(key);
    await serialize(this.filePath, async () => {
      const file = await this.readFile();
      if (!Object.hasOwn(file.entries, key)) return;
      delete file.entries[key];
      await this.writeFile(file);
    });
  }

  private encrypt(name: string, value: string): EncryptedEntry {
    const sealed = seal(this.key, name, value);
    return { iv: sealed.iv.toString("base64"), tag: sealed.tag.toString("base64"), data: sealed.data.toString("base64") };
  }

  private decrypt(name: string, entry: EncryptedEntry): string {
    try {
      return unseal(this.key, name, { iv: Buffer.from(entry.iv, "base64"), tag: Buffer.from(entry.tag, "base64"), data: Buffer.from(entry.data, "base64") });
    } catch (err) {
      throw new SecretStoreError(
        `Secret "${name}" in ${this.filePath} failed integrity check: the file was modified or ${KEY_FILE_NAME} does not belong to it`,
        { cause: err },
      );
    }
  }

  private async readFile(): Promise<SecretsFile> {
    let text: string;
    try {
      text = await fsp.readFile(this.filePath, "utf8");
    } catch (err) {
      if (isErrno(err, "ENOENT")) return { version: FILE_VERSION, entries: {} };
      throw new SecretStoreError(`Cannot read ${this.filePath}: ${(err as Error).message}`, { cause: err });
    }
    return parseSecretsFile(text, this.filePath);
  }

  private async writeFile(file: SecretsFile): Promise<void> {
    const tmp = `${this.filePath}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
    try {
      const handle = await fsp.open(tmp, "wx", 0o600);
      try {
        await handle.writeFile(`${JSON.stringify(file, null, 2)}\n`, "utf8");
        await handle.sync();
      } finally {
        await handle.close();
      }
      await fsp.rename(tmp, this.filePath);
    } catch (err) {
      await fsp.rm(tmp, { force: true }).catch(() => undefined);
      throw new SecretStoreError(`Cannot write ${this.filePath}: ${(err as Error).message}`, { cause: err });
    }
  }
}

function parseSecretsFile(text: string, filePath: string): SecretsFile {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new SecretStoreError(`${filePath} is not valid JSON (corrupted or modified)`, { cause: err });
  }
  const file = parsed as Partial<SecretsFile> | null;
  if (!file || typeof file !== "object" || file.version !== FILE_VERSION || !file.entries || typeof file.entries !== "object") {
    throw new SecretStoreError(`${filePath} is not a version ${FILE_VERSION} secrets file (corrupted or modified)`);
  }
  for (const [name, entry] of Object.entries(file.entries)) {
    const e = entry as Partial<EncryptedEntry> | null;
    if (!e || typeof e.iv !== "string" || typeof e.tag !== "string" || typeof e.data !== "string") {
      throw new SecretStoreError(`Entry "${name}" in ${filePath} is malformed (corrupted or modified)`);
    }
  }
  return { version: FILE_VERSION, entries: file.entries };
}

async function loadOrCreateKey(keyPath: string, filePath: string): Promise<Buffer> {
  try {
    return await readKey(keyPath);
  } catch (err) {
    if (!isErrno(err, "ENOENT")) throw err;
  }
  // A new key would silently orphan every stored secret: refuse instead.
  const existing = await fsp.readFile(filePath, "utf8").catch((err: unknown) => {
    if (isErrno(err, "ENOENT")) return null;
    throw err;
  });
  if (existing !== null && Object.keys(parseSecretsFile(existing, filePath).entries).length > 0) {
    throw new SecretStoreError(
      `${keyPath} is missing but ${filePath} holds secrets that only it can decrypt; restore ${KEY_FILE_NAME} or remove ${SECRETS_FILE_NAME} to start over`,
    );
  }
  // Written in full under a temp name, then hard-linked into place: no reader ever
  // sees a partial key, and if another process won the race its key is used.
  const tmp = `${keyPath}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    const handle = await fsp.open(tmp, "wx", 0o600);
    try {
      await handle.writeFile(randomBytes(KEY_BYTES));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fsp.link(tmp, keyPath);
  } catch (err) {
    if (!isErrno(err, "EEXIST")) {
      throw new SecretStoreError(`Cannot create ${keyPath}: ${(err as Error).message}`, { cause: err });
    }
  } finally {
    await fsp.rm(tmp, { force: true }).catch(() => undefined);
  }
  return readKey(keyPath);
}

async function readKey(keyPath: string): Promise<Buffer> {
  const key = await fsp.readFile(keyPath);
  if (key.length !== KEY_BYTES) {
    throw new SecretStoreError(`${keyPath} is ${key.length} bytes, expected ${KEY_BYTES}: it is not a Sluice secret key`);
  }
  await fsp.chmod(keyPath, 0o600);
  return key;
}
