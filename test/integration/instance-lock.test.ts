import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, describe, it } from "node:test";
import { startSluice, tempDir, type SluiceServer } from "../fixtures/sluice-server";

const teamMode = process.env.SLUICE_TEST_REDIS === "1";
const running: SluiceServer[] = [];
after(async () => {
  for (const server of running) if (server.child.exitCode === null) await server.stop();
});

async function start(dataDir: string): Promise<SluiceServer> {
  const server = await startSluice({ dataDir });
  running.push(server);
  return server;
}

describe("one server per DATA_DIR", () => {
  it("a second server on the same DATA_DIR refuses to start and names the first (pid, address)", { skip: teamMode && "team mode shares storage on purpose" }, async () => {
    const dataDir = tempDir();
    const first = await start(dataDir);
    const refusal = await start(dataDir).then(
      () => assert.fail("the second server started"),
      (error: Error) => error.message,
    );
    assert.match(refusal, /exited with 1 before listening/);
    assert.ok(
      refusal.includes(`Another Sluice server is already using DATA_DIR ${dataDir} (pid ${first.child.pid}, ${first.url}); stop it first or set DATA_DIR`),
      refusal,
    );
    assert.equal((await fetch(`${first.api}/health`)).status, 200, "the first one serves on");
    await first.stop();
    assert.equal(fs.existsSync(path.join(dataDir, "sluice.lock")), false, "a clean stop removes the lock");
  });

  it("a crashed server's lock does not stay stuck: the next start takes it over", { skip: teamMode && "team mode takes no lock" }, async () => {
    const dataDir = tempDir();
    const crashed = await start(dataDir);
    await crashed.kill();
    assert.ok(fs.existsSync(path.join(dataDir, "sluice.lock")), "SIGKILL leaves the file behind");
    const next = await start(dataDir);
    assert.equal((await fetch(`${next.api}/health`)).status, 200);
    const holder = JSON.parse(fs.readFileSync(path.join(dataDir, "sluice.lock"), "utf8"));
    assert.equal(holder.pid, next.child.pid);
    assert.equal(holder.url, next.url);
  });

  it("team mode (REDIS_URL): several servers share one DATA_DIR on purpose and all start", { skip: !teamMode && "runs in the team-server run (Redis)" }, async () => {
    const dataDir = tempDir();
    const [a, b] = [await start(dataDir), await start(dataDir)];
    assert.equal((await fetch(`${a.api}/health`)).status, 200);
    assert.equal((await fetch(`${b.api}/health`)).status, 200);
    assert.equal(fs.existsSync(path.join(dataDir, "sluice.lock")), false);
  });
});
