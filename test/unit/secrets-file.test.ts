import { after, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";
import { KEY_FILE_NAME, SECRETS_FILE_NAME, SecretStoreError, openSecretStore } from "../../server/secrets/secrets";

const execFileAsync = promisify(execFile);

const tempDirs: string[] = [];
after(() => {
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

function tempDataDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sluice-secrets-"));
  tempDirs.push(dir);
  return dir;
}

function recordingLogger(): { warn(msg: string): void; warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, warn: (msg: string) => void warnings.push(msg) };
}

async function openFileStore(dataDir: string, logger = recordingLogger()) {
  const store = await openSecretStore({ dataDir, logger, preferKeychain: false });
  assert.equal(store.kind, "file");
  return store;
}

test("set, get and delete round trip", async () => {
  const dataDir = tempDataDir();
  const logger = recordingLogger();
  const store = await openFileStore(dataDir, logger);
  assert.equal(await store.get("jwt"), null);
  await store.set("jwt", "s3cret-value");
  assert.equal(await store.get("jwt"), "s3cret-value");
  await store.set("jwt", "replaced ✓ unicode");
  assert.equal(await store.get("jwt"), "replaced ✓ unicode");
  await store.set("empty", "");
  assert.equal(await store.get("empty"), "");
  await store.delete("jwt");
  assert.equal(await store.get("jwt"), null);
  await store.delete("never-set");
  assert.equal(await store.get("empty"), "");
  assert.deepEqual(logger.warnings, [], "choosing the file store on purpose is not a warning");
});

test("secrets persist across reopen", async () => {
  const dataDir = tempDataDir();
  const first = await openFileStore(dataDir);
  await first.set("smb:source-1", "pa55word");
  await first.set("oauth:drive", JSON.stringify({ refresh_token: "r-token" }));
  const second = await openFileStore(dataDir);
  assert.equal(await second.get("smb:source-1"), "pa55word");
  assert.deepEqual(JSON.parse((await second.get("oauth:drive")) ?? "null"), { refresh_token: "r-token" });
});

test("key file and secrets file are mode 0600 and the file holds no plaintext", async () => {
  const dataDir = tempDataDir();
  const store = await openFileStore(dataDir);
  const plaintext = "plain-text-needle-8d1f";
  await store.set("needle", plaintext);
  const keyPath = path.join(dataDir, KEY_FILE_NAME);
  const filePath = path.join(dataDir, SECRETS_FILE_NAME);
  assert.equal(fs.statSync(keyPath).mode & 0o777, 0o600);
  assert.equal(fs.statSync(filePath).mode & 0o777, 0o600);
  assert.equal(fs.readFileSync(keyPath).length, 32);
  const content = fs.readFileSync(filePath, "utf8");
  assert.ok(!content.includes(plaintext), "secrets file contains the plaintext");
  assert.ok(!content.includes(Buffer.from(plaintext).toString("base64")), "secrets file contains the base64 plaintext");
  assert.ok(content.includes('"needle"'), "key names are stored in clear, values are not");
  // No temp files left behind by the atomic write.
  assert.deepEqual(fs.readdirSync(dataDir).sort(), [KEY_FILE_NAME, SECRETS_FILE_NAME].sort());
});

test("each value gets its own IV", async () => {
  const dataDir = tempDataDir();
  const store = await openFileStore(dataDir);
  await store.set("a", "same value");
  await store.set("b", "same value");
  const { entries } = JSON.parse(fs.readFileSync(path.join(dataDir, SECRETS_FILE_NAME), "utf8"));
  assert.notEqual(entries.a.iv, entries.b.iv);
  assert.notEqual(entries.a.data, entries.b.data);
});

test("a tampered ciphertext is rejected with a clear error", async () => {
  const dataDir = tempDataDir();
  const store = await openFileStore(dataDir);
  await store.set("jwt", "signing-secret-value");
  await store.set("other", "other-value");
  const filePath = path.join(dataDir, SECRETS_FILE_NAME);
  const file = JSON.parse(fs.readFileSync(filePath, "utf8"));
  const data = Buffer.from(file.entries.jwt.data, "base64");
  data[0] ^= 0x01;
  file.entries.jwt.data = data.toString("base64");
  fs.writeFileSync(filePath, JSON.stringify(file));

  const reopened = await openFileStore(dataDir);
  await assert.rejects(reopened.get("jwt"), (err: unknown) => {
    assert.ok(err instanceof SecretStoreError);
    assert.match(err.message, /"jwt".*failed integrity check/);
    assert.ok(!err.message.includes("signing-secret-value"));
    return true;
  });
  assert.equal(await reopened.get("other"), "other-value", "untouched entries still decrypt");

  // A ciphertext moved under another name is rejected too (the name is authenticated).
  file.entries.moved = file.entries.other;
  fs.writeFileSync(filePath, JSON.stringify(file));
  await assert.rejects(reopened.get("moved"), /"moved".*failed integrity check/);
});

test("a corrupted secrets file or a lost key fails loudly", async () => {
  const dataDir = tempDataDir();
  const store = await openFileStore(dataDir);
  await store.set("jwt", "value");
  const filePath = path.join(dataDir, SECRETS_FILE_NAME);
  const keyPath = path.join(dataDir, KEY_FILE_NAME);

  fs.renameSync(keyPath, `${keyPath}.bak`);
  await assert.rejects(openFileStore(dataDir), /secret\.key is missing but .* holds secrets/);
  fs.renameSync(`${keyPath}.bak`, keyPath);

  fs.writeFileSync(keyPath, Buffer.alloc(32, 7));
  await assert.rejects((await openFileStore(dataDir)).get("jwt"), /failed integrity check/);

  fs.writeFileSync(filePath, "{not json");
  await assert.rejects(openFileStore(dataDir), /not valid JSON/);
});

test("many concurrent sets are all persisted", async () => {
  const dataDir = tempDataDir();
  const a = await openFileStore(dataDir);
  const b = await openFileStore(dataDir); // a second instance on the same dir shares the write queue
  const n = 100;
  await Promise.all(
    Array.from({ length: n }, (_, i) => (i % 2 === 0 ? a : b).set(`key-${i}`, `value-${i}`)),
  );
  const reopened = await openFileStore(dataDir);
  for (let i = 0; i < n; i++) assert.equal(await reopened.get(`key-${i}`), `value-${i}`);
  await Promise.all(Array.from({ length: n / 2 }, (_, i) => a.delete(`key-${i * 2}`)));
  for (let i = 0; i < n; i++) assert.equal(await reopened.get(`key-${i}`), i % 2 === 0 ? null : `value-${i}`);
});

test("processes sharing a DATA_DIR lose no secret and agree on getOrCreate", async () => {
  const dataDir = tempDataDir();
  await openFileStore(dataDir); // creates the key once, as the first process on a DATA_DIR does
  const script = `
    const { FileSecretStore } = require(${JSON.stringify(require.resolve("../../server/secrets/secrets"))});
    (async () => {
      const store = await FileSecretStore.open(process.argv[1]);
      const who = process.argv[2];
      await Promise.all(Array.from({ length: 40 }, (_, i) => store.set(who + "-" + i, "value-" + who + "-" + i)));
      const shared = await store.getOrCreate("shared", () => "made-by-" + who);
      process.stdout.write(shared);
    })().catch((err) => { console.error(err); process.exit(1); });
  `;
  const args = (who: string) => [...(__filename.endsWith(".ts") ? ["--import", "tsx"] : []), "-e", script, dataDir, who];
  const results = await Promise.all(["a", "b", "c"].map((who) => execFileAsync(process.execPath, args(who), { timeout: 60_000 })));
  const store = await openFileStore(dataDir);
  for (const who of ["a", "b", "c"]) {
    for (let i = 0; i < 40; i++) assert.equal(await store.get(`${who}-${i}`), `value-${who}-${i}`, `${who}-${i}`);
  }
  const agreed = results.map((r) => r.stdout);
  assert.equal(new Set(agreed).size, 1, `every process got the same value: ${agreed}`);
  assert.equal(await store.get("shared"), agreed[0]);
  assert.ok(!fs.existsSync(path.join(dataDir, `${SECRETS_FILE_NAME}.lock`)), "the lock is gone");
});

interface ChildResult {
  kind: string;
  warnings: string[];
  ok: boolean;
}

// openSecretStore in a child process, so the environment (the D-Bus address) can differ from ours.
async function openInChild(dataDir: string, secret: string, env: NodeJS.ProcessEnv): Promise<ChildResult> {
  const script = `
    const { openSecretStore } = require(${JSON.stringify(require.resolve("../../server/secrets/secrets"))});
    (async () => {
      const warnings = [];
      const logger = { warn: (m) => warnings.push(m) };
      const store = await openSecretStore({ dataDir: process.argv[1], logger });
      await store.set("jwt", process.argv[2]);
      const readBack = await store.get("jwt");
      process.stdout.write(JSON.stringify({ kind: store.kind, warnings, ok: readBack === process.argv[2] }));
    })().catch((err) => { console.error(err); process.exit(1); });
  `;
  const { stdout } = await execFileAsync(process.execPath, [...(__filename.endsWith(".ts") ? ["--import", "tsx"] : []), "-e", script, dataDir, secret], {
    env,
    timeout: 30_000,
  });
  return JSON.parse(stdout) as ChildResult;
}

function assertFellBack(result: ChildResult, dataDir: string, secret: string, reason: RegExp): void {
  assert.equal(result.kind, "file");
  assert.equal(result.ok, true);
  assert.equal(result.warnings.length, 1, `expected one warning, got ${JSON.stringify(result.warnings)}`);
  const [warning] = result.warnings;
  assert.match(warning, /^No OS keychain available \(.+\); secrets are stored encrypted in /);
  assert.match(warning, reason);
  assert.ok(warning.includes(path.join(dataDir, SECRETS_FILE_NAME)));
  assert.ok(!warning.includes(secret), "the warning must not contain the secret");
  assert.ok(fs.existsSync(path.join(dataDir, SECRETS_FILE_NAME)));
}

test("without a keychain it falls back to the file and warns exactly once, without the secret", async () => {
  const dataDir = tempDataDir();
  const secret = "fallback-secret-3f9a";
  const env = { ...process.env };
  delete env.DBUS_SESSION_BUS_ADDRESS; // no Secret Service reachable in the child
  const started = Date.now();
  const result = await openInChild(dataDir, secret, env);
  assertFellBack(result, dataDir, secret, /./);
  assert.ok(Date.now() - started < 20_000, "the keychain probe must not hang");
});

test("a D-Bus that never answers does not hang startup", { skip: process.platform !== "linux" && "D-Bus is Linux only" }, async () => {
  const dataDir = tempDataDir();
  const socketPath = path.join(dataDir, "silent-bus.sock");
  const sockets: net.Socket[] = [];
  const server = net.createServer((socket) => void sockets.push(socket)); // accepts, never speaks
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  try {
    const secret = "silent-bus-secret-77c1";
    const started = Date.now();
    const result = await openInChild(dataDir, secret, { ...process.env, DBUS_SESSION_BUS_ADDRESS: `unix:path=${socketPath}` });
    assertFellBack(result, dataDir, secret, /did not answer within/);
    assert.ok(Date.now() - started < 20_000, "the keychain probe must not hang");
  } finally {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  }
});
