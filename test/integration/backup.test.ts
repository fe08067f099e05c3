import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import Database from "better-sqlite3";
import { startSamba, type SambaServer } from "../fixtures/samba";
import { startSluice, tempDir, type SluiceServer } from "../fixtures/sluice-server";
import { addSmbSource, client, createGroup, GOOD_PASSWORD, signUp, waitForJobEnd, type Request } from "../fixtures/http-client";
import { waitFor } from "../fixtures/wait-for";

/** The checkout: dist/test/integration -> the root. */
const ROOT = path.resolve(__dirname, "..", "..", "..");
const CLI = path.join(ROOT, "dist", "server", "backup", "backup-cli.js");

/** `npm run backup|restore -- DIR` as the user runs it (the compiled CLI, DATA_DIR from the environment). */
function runCli(command: "backup" | "restore", dir: string, dataDir: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, command, dir], { env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: "" }, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.once("exit", (code) => resolve({ code, output }));
  });
}

const FILES = 1500;
let samba: SambaServer;

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
  let server: SluiceServer | undefined;
  let restored: SluiceServer | undefined;
  after(async () => {
    for (const s of [server, restored]) if (s && s.child.exitCode === null) await s.stop();
  });

  it("a backup taken during an ingestion restores into a fresh DATA_DIR where search finds every document it holds", async () => {
    server = await startSluice({ env: { SMB_TIMEOUT_MS: "5000" } });
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
    const backup = await runCli("backup", backupDir, server.dataDir);
    assert.equal(backup.code, 0, backup.output);
    assert.match(backup.output, /backed up .* 1 collection index\(es\), \d+ document\(s\)/);
    assert.equal((await waitForJobEnd(request, owner.token, source.pipeline.id, 120_000)).status, "completed");
    await server.stop();

    const manifest = JSON.parse(fs.readFileSync(path.join(backupDir, "manifest.json"), "utf8"));
    assert.equal(manifest.format, 1);
    const indexEntry = manifest.files.find((f: { path: string }) => f.path === `indexes/${collectionId}.db`);
    assert.ok(indexEntry, JSON.stringify(manifest));
    assert.ok(manifest.files.some((f: { kind: string }) => f.kind === "secrets"), "the sealed secrets file is in the backup");
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
    restored = await startSluice({ dataDir: fresh });
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
});
