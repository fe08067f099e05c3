// Needs a reachable Secret Service; CI runs it as:
//   bash test/fixtures/with-keyring.sh node --import tsx --test test/unit/secrets-keychain.test.ts
import { after, test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { findCredentialsAsync } from "@napi-rs/keyring";
import {
  KEY_FILE_NAME,
  SECRETS_FILE_NAME,
  keychainAccount,
  keychainNamespace,
  openSecretStore,
  probeKeychain,
  type SecretStore,
} from "../../server/secrets/secrets";

const SKIP_REASON = "no Secret Service: run under test/fixtures/with-keyring.sh";
// A service name of its own per run, so nothing here meets another run's items.
const SERVICE = `SluiceTest-${randomBytes(4).toString("hex")}`;

const tempDirs: string[] = [];
after(() => {
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

function tempDataDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sluice-keychain-"));
  tempDirs.push(dir);
  return dir;
}

let reachable: Promise<boolean> | undefined;
function keychainReachable(): Promise<boolean> {
  reachable ??= probeKeychain(SERVICE, os.tmpdir()).then((r) => r.ok);
  return reachable;
}

async function openKeychain(t: TestContext, dataDir: string): Promise<SecretStore | null> {
  if (!(await keychainReachable())) {
    t.skip(SKIP_REASON);
    return null;
  }
  const warnings: string[] = [];
  const store = await openSecretStore({ dataDir, service: SERVICE, logger: { warn: (m) => void warnings.push(m) } });
  assert.equal(store.kind, "keychain");
  assert.deepEqual(warnings, [], "no fallback warning when the keychain works");
  return store;
}

test("uses the keychain and round-trips a secret without touching the data dir's secret files", async (t) => {
  const dataDir = tempDataDir();
  const store = await openKeychain(t, dataDir);
  if (!store) return;

  assert.equal(await store.get("jwt"), null);
  await store.set("jwt", "keychain-secret ✓");
  assert.equal(await store.get("jwt"), "keychain-secret ✓");
  await store.set("jwt", "replaced");
  assert.equal(await store.get("jwt"), "replaced");

  const accounts = (await findCredentialsAsync(SERVICE)).map((c) => c.account);
  assert.ok(accounts.includes(keychainAccount("jwt", dataDir)), `accounts: ${JSON.stringify(accounts)}`);
  assert.equal(keychainAccount("jwt", dataDir), `jwt@${keychainNamespace(dataDir)}`);
  assert.ok(!accounts.some((a) => a.includes("__probe__")), "the probe item was deleted");

  await store.delete("jwt");
  assert.equal(await store.get("jwt"), null);
  await store.delete("jwt"); // deleting a missing key is not an error

  assert.ok(!fs.existsSync(path.join(dataDir, SECRETS_FILE_NAME)), "secrets file was written");
  assert.ok(!fs.existsSync(path.join(dataDir, KEY_FILE_NAME)), "key file was written");
  assert.deepEqual(fs.readdirSync(dataDir), []);
});

test("two data dirs do not see each other's secrets", async (t) => {
  const dirA = tempDataDir();
  const dirB = tempDataDir();
  const a = await openKeychain(t, dirA);
  const b = await openKeychain(t, dirB);
  if (!a || !b) return;

  assert.notEqual(keychainNamespace(dirA), keychainNamespace(dirB));
  await a.set("smb:1", "password-a");
  assert.equal(await b.get("smb:1"), null);
  await b.set("smb:1", "password-b");
  assert.equal(await a.get("smb:1"), "password-a");
  assert.equal(await b.get("smb:1"), "password-b");

  await a.delete("smb:1");
  assert.equal(await a.get("smb:1"), null);
  assert.equal(await b.get("smb:1"), "password-b");

  // The same dir opened again sees its secrets.
  const bAgain = await openKeychain(t, dirB);
  assert.equal(await bAgain?.get("smb:1"), "password-b");
  await b.delete("smb:1");
});
