import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import Database from "better-sqlite3";
import { SAMBA_TIMEOUT_MS, startSamba, type SambaServer } from "../fixtures/samba";
import { startSluice, tempDir, type SluiceServer } from "../fixtures/sluice-server";
import { addSmbSource, client, createGroup, GOOD_PASSWORD, signUp, waitForJobEnd, type Request } from "../fixtures/http-client";
import { waitFor } from "../fixtures/wait-for";

/** The checkout: dist/test/integration -> the root. */
const ROOT = path.resolve(__dirname, "..", "..", "..");
const CLI = path.join(ROOT, "dist", "server", "backup", "backup-cli.js");

/** `npm run backup|restore -- DIR` as the user runs it (the compiled CLI, DATA_DIR from the environment). */
function runCli(command: "backup" | "restore", dir: string, dataDir: string, options: { passphrase?: string; args?: string[] } = {}): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, DATABASE_URL: "" };
    if (options.passphrase) env.BACKUP_PASSPHRASE = options.passphrase;
    else delete env.BACKUP_PASSPHRASE;
    const child = spawn(process.execPath, [CLI, command, dir, ...(options.args ?? [])], { env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.once("exit", (code) => resolve({ code, output }));
  });
}

const FILES = 1500;
/** A word only the small share's files hold, to look for in a sealed backup's bytes. */
const OSPREY = "ospreyq7kestrel";
let samba: SambaServer;

/** The mode bits of a path, as octal text ("700"). */
const modeOf = (p: string) => (fs.statSync(p).mode & 0o777).toString(8);
/** Every file below a folder. */
const filesUnder = (dir: string): string[] => fs.readdirSync(dir, { recursive: true, encoding: "utf8" }).map((f) => path.join(dir, f)).filter((f) => fs.statSync(f).isFile());

before(async () => {
  const share = tempDir("sluice-kestrel-");
  for (let i = 0; i < FILES; i++) {
    fs.writeFileSync(path.join(share, `report-${i}.txt`), `Report ${i}: kestrel${i}q sightings. ${"Counts by hide and hour, checked twice. ".repeat(300)}`);
  }
  fs.chmodSync(share, 0o755);
  samba = await startSamba({ extraShares: { kestrel: share } });
});
after(async () => {
  await samba?.stop();
});

// The files under DATA_DIR are the desktop's data; a team server's is in PostgreSQL (docs/team-server.md: Backups shows pg_dump).
describe("backup and restore of DATA_DIR", { skip: process.env.SLUICE_TEST_BACKEND === "postgres" ? "a team server's data is in PostgreSQL (pg_dump)" : false }, () => {
  /** Every server a test started: each test starts its own, and whatever a failed test left running is stopped here. */
  const started: SluiceServer[] = [];
  const start = async (options: Parameters<typeof startSluice>[0] = {}) => {
    const s = await startSluice(options);
    started.push(s);
    return s;
  };
  after(async () => {
    for (const s of started) if (s.child.exitCode === null) await s.stop();
  });

  it("a backup taken during an ingestion restores into a fresh DATA_DIR where search finds every document it holds", async () => {
    const server = await start({ env: { SMB_TIMEOUT_MS: String(SAMBA_TIMEOUT_MS) } });
    const request: Request = client(server.api);
    const owner = await signUp(request, "backup");
    const group = await createGroup(request, owner.token);
    const source = await addSmbSource(request, owner.token, group, samba, "Kestrel");
    const collectionId = source.pipeline.collection_id;
    assert.equal((await request("POST", `/data_pipelines/${source.pipeline.id}/ingest`, { token: owner.token })).status, 202);

    // Wait until some documents are in the index (files_added: counted once their batch is
    // written; a skipped file counts as processed before any write), then back up while the job goes on.
    const status = await waitFor(async () => {
      const now = (await request("GET", `/data_pipelines/${source.pipeline.id}/ingest/status`, { token: owner.token })).body;
      return (now.files_added > 0 || now.status !== "processing") && (now as Record<string, any>);
    }, "the first documents in the index");
    assert.equal(status.status, "processing", "the backup must be taken while the ingestion runs");
    const backupDir = path.join(tempDir("sluice-backup-"), "copy");
    // The server is held still while the backup copies: on a busy machine the backup's own
    // start-up took long enough for the job to end first. Frozen, its job is mid-run (its index
    // file open for writing, some batches committed), which is what a backup during a run meets.
    server.child.kill("SIGSTOP");
    let backup: Awaited<ReturnType<typeof runCli>>;
    try {
      backup = await runCli("backup", backupDir, server.dataDir);
    } finally {
      server.child.kill("SIGCONT");
    }
    assert.equal(backup.code, 0, backup.output);
    assert.match(backup.output, /backed up .* 1 collection index\(es\), \d+ document\(s\)/);
    assert.equal((await waitForJobEnd(request, owner.token, source.pipeline.id)).status, "completed");
    await server.stop();

    const manifest = JSON.parse(fs.readFileSync(path.join(backupDir, "manifest.json"), "utf8"));
    assert.equal(manifest.format, 2);
    assert.equal(manifest.sealing, null);
    const indexEntry = manifest.files.find((f: { path: string }) => f.path === `indexes/${collectionId}.db`);
    assert.ok(indexEntry, JSON.stringify(manifest));
    assert.match(indexEntry.sha256, /^[0-9a-f]{64}$/);
    // Without a passphrase the secrets' key would open them for whoever holds the backup: both stay out, and the CLI says so.
    assert.equal(manifest.secrets, "left-out");
    assert.ok(!manifest.files.some((f: { kind: string }) => f.kind === "secrets"), JSON.stringify(manifest.files));
    assert.ok(!fs.existsSync(path.join(backupDir, "secret.key")));
    assert.match(backup.output, /Saved SMB passwords and Drive sign-ins kept in DATA_DIR were left out/);
    // The owner's alone: password hashes and every document's text are in there.
    assert.deepEqual([modeOf(backupDir), modeOf(path.join(backupDir, "indexes"))], ["700", "700"]);
    for (const file of filesUnder(backupDir)) assert.equal(modeOf(file), "600", file);
    const copy = new Database(path.join(backupDir, "indexes", `${collectionId}.db`), { readonly: true });
    const paths = copy.prepare("SELECT path FROM documents").pluck().all() as string[];
    copy.close();
    assert.equal(paths.length, indexEntry.counts.documents);
    assert.ok(paths.length > 0 && paths.length < FILES, `the backup holds ${paths.length} documents`);

    const refused = await runCli("restore", backupDir, server.dataDir);
    assert.equal(refused.code, 1);
    assert.match(refused.output, /DATA_DIR .* is not empty; restore only into an empty folder/);

    const fresh = path.join(tempDir("sluice-restored-"), "data");
    const restore = await runCli("restore", backupDir, fresh);
    assert.equal(restore.code, 0, restore.output);
    assert.equal(modeOf(fresh), "700");
    for (const file of filesUnder(fresh)) assert.equal(modeOf(file), "600", file);
    const restored = await start({ dataDir: fresh });
    const again = client(restored.api);
    const signin = await again("POST", "/signin", { body: { email: owner.email, password: GOOD_PASSWORD } });
    assert.equal(signin.status, 200, signin.text);
    const token = signin.body.access_token as string;
    const listed = (await again("GET", "/collections", { token })).body.find((c: { id: string }) => c.id === collectionId);
    assert.equal(listed.document_count, paths.length);
    for (const p of paths) {
      // A report by its own word; the share's other files by their names (paths are indexed too).
      const report = /report-(\d+)\.txt$/.exec(p);
      const q = report ? `kestrel${report[1]}q` : path.posix.basename(p).replace(/\.[^.]+$/, "");
      const res = await again("GET", `/collections/${collectionId}/search?q=${encodeURIComponent(q)}&top_k=50`, { token });
      assert.equal(res.status, 200);
      assert.ok(res.body.results.some((r: { path: string }) => r.path === p), `${p} not found after restore`);
    }
  });

  it("a backup sealed with a passphrase holds nothing readable, keeps the saved passwords, and opens only with that passphrase", async () => {
    const osprey = tempDir("sluice-osprey-");
    for (let i = 0; i < 3; i++) fs.writeFileSync(path.join(osprey, `nest-${i}.txt`), `Nest ${i}: ${OSPREY} seen at dawn.`);
    fs.chmodSync(osprey, 0o755);
    const small = await startSamba({ extraShares: { osprey } });
    try {
      await sealedBackupRoundTrip(small);
    } finally {
      await small.stop();
    }
  });

  /** The sealed test's body, with its own Samba serving only the small share. */
  async function sealedBackupRoundTrip(small: SambaServer): Promise<void> {
    const server = await start();
    const request: Request = client(server.api);
    const owner = await signUp(request, "sealed");
    const group = await createGroup(request, owner.token);
    const source = await addSmbSource(request, owner.token, group, small, "Osprey");
    const run = async (via: Request, token: string) => {
      assert.equal((await via("POST", `/data_pipelines/${source.pipeline.id}/ingest`, { token })).status, 202);
      return waitForJobEnd(via, token, source.pipeline.id);
    };
    assert.equal((await run(request, owner.token)).status, "completed");
    await server.stop();

    const passphrase = "kestrel osprey harrier";
    const sealedDir = path.join(tempDir("sluice-sealed-"), "copy");
    const backup = await runCli("backup", sealedDir, server.dataDir, { passphrase });
    assert.equal(backup.code, 0, backup.output);
    assert.match(backup.output, /sealed with the passphrase/);
    assert.doesNotMatch(backup.output, /left out/);
    const manifest = JSON.parse(fs.readFileSync(path.join(sealedDir, "manifest.json"), "utf8"));
    assert.equal(manifest.secrets, "included");
    assert.equal(manifest.sealing.cipher, "aes-256-gcm");
    assert.match(manifest.seal, /^[0-9a-f]{64}$/);
    assert.ok(manifest.files.some((f: { path: string }) => f.path === "secret.key"), "the key goes along, sealed");
    for (const file of filesUnder(sealedDir).filter((f) => !f.endsWith("manifest.json"))) {
      const bytes = fs.readFileSync(file);
      assert.equal(bytes.includes("SQLite format 3"), false, `${file} is a readable database`);
      assert.equal(bytes.includes(OSPREY), false, `${file} holds a document's words in clear`);
      assert.equal(modeOf(file), "600", file);
    }

    const wrong = path.join(tempDir("sluice-wrong-"), "data");
    const refused = await runCli("restore", sealedDir, wrong, { passphrase: "not the passphrase" });
    assert.equal(refused.code, 1);
    assert.match(refused.output, /The passphrase is wrong, or the backup's manifest was changed after it was written; nothing was restored/);
    assert.equal(fs.existsSync(wrong), false, "nothing written for a wrong passphrase");
    const none = await runCli("restore", sealedDir, wrong);
    assert.match(none.output, /This backup is sealed with a passphrase: give it/);

    // The passphrase from a file this time (its first line), as a script would give it.
    const passphraseFile = path.join(tempDir("sluice-pass-"), "passphrase");
    fs.writeFileSync(passphraseFile, `${passphrase}\n`, { mode: 0o600 });
    const fresh = path.join(tempDir("sluice-unsealed-"), "data");
    const restore = await runCli("restore", sealedDir, fresh, { args: ["--passphrase-file", passphraseFile] });
    assert.equal(restore.code, 0, restore.output);
    const restored = await start({ dataDir: fresh });
    const again = client(restored.api);
    const signin = await again("POST", "/signin", { body: { email: owner.email, password: GOOD_PASSWORD } });
    assert.equal(signin.status, 200, signin.text);
    const token = signin.body.access_token as string;
    // A new run logs in to the share with the SMB password the backup carried sealed.
    const rerun = await run(again, token);
    assert.equal(rerun.status, "completed", JSON.stringify(rerun));
    const hits = await again("GET", `/collections/${source.pipeline.collection_id}/search?q=${OSPREY}`, { token });
    assert.equal(hits.body.results.length, 3, hits.text);
    await restored.stop();

    // Changed after it was written: a sealed file, or the manifest, and nothing lands.
    const flipped = copyOf(sealedDir);
    const index = filesUnder(path.join(flipped, "indexes"))[0];
    const bytes = fs.readFileSync(index);
    bytes[bytes.length >> 1] ^= 0x01;
    fs.writeFileSync(index, bytes);
    const target = path.join(tempDir("sluice-flipped-"), "data");
    const changed = await runCli("restore", flipped, target, { passphrase });
    assert.equal(changed.code, 1);
    assert.match(changed.output, /The backup was changed after it was written: indexes\/.*\.db does not match its digest/);
    assert.equal(fs.existsSync(target), false);
    const edited = copyOf(sealedDir);
    const editedManifest = JSON.parse(fs.readFileSync(path.join(edited, "manifest.json"), "utf8"));
    editedManifest.files[0].counts.users = 99;
    fs.writeFileSync(path.join(edited, "manifest.json"), JSON.stringify(editedManifest));
    const sealBroken = await runCli("restore", edited, target, { passphrase });
    assert.match(sealBroken.output, /the backup's manifest was changed after it was written; nothing was restored/);
    assert.equal(fs.existsSync(target), false);
  }

  it("a plain backup whose file or manifest was changed is refused before anything is written, and no name leads out of DATA_DIR", async () => {
    const server = await start();
    await signUp(client(server.api), "plain");
    await server.stop();
    const plainBackup = path.join(tempDir("sluice-plain-"), "copy");
    const backup = await runCli("backup", plainBackup, server.dataDir);
    assert.equal(backup.code, 0, backup.output);
    const target = path.join(tempDir("sluice-refused-"), "data");
    const damaged = copyOf(plainBackup);
    const main = path.join(damaged, "sluice.db");
    const bytes = fs.readFileSync(main);
    bytes[bytes.length - 100] ^= 0x01;
    fs.writeFileSync(main, bytes);
    const changed = await runCli("restore", damaged, target);
    assert.equal(changed.code, 1);
    assert.match(changed.output, /The backup was changed after it was written: sluice\.db does not match its digest/);
    assert.equal(fs.existsSync(target), false);

    const outside = tempDir("sluice-outside-");
    const escaping = copyOf(plainBackup);
    const manifest = JSON.parse(fs.readFileSync(path.join(escaping, "manifest.json"), "utf8"));
    const escapeTo = path.relative(target, path.join(outside, "escaped.db")).split(path.sep).join("/");
    manifest.files.push({ path: escapeTo, kind: "index", bytes: 0 });
    // The name alone is refused, before any file is looked at: none needs to exist where it points.
    fs.writeFileSync(path.join(escaping, "manifest.json"), JSON.stringify(manifest));
    const refused = await runCli("restore", escaping, target);
    assert.equal(refused.code, 1);
    assert.match(refused.output, /The backup's manifest names a file a Sluice backup never holds \("\.\.\/.*escaped\.db"\); nothing was restored/);
    assert.deepEqual(fs.readdirSync(outside), []);
    assert.equal(fs.existsSync(target), false);
  });
});

/** A copy of a backup folder, to change. */
function copyOf(dir: string): string {
  const copy = path.join(tempDir("sluice-copy-"), "backup");
  fs.cpSync(dir, copy, { recursive: true });
  return copy;
}
