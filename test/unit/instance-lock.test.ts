import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { acquireInstanceLock, InstanceLockedError, LOCK_FILE_NAME } from "../../server/instance-lock";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "sluice-lock-"));
after(() => fs.rmSync(root, { recursive: true, force: true }));
const dir = (name: string) => path.join(root, name);

/** A lock file as another server would have written it. */
function holderFile(dataDir: string, holder: object): void {
  fs.mkdirSync(dataDir, { recursive: true });
  fs.writeFileSync(path.join(dataDir, LOCK_FILE_NAME), JSON.stringify(holder));
}

describe("the DATA_DIR instance lock", () => {
  it("a live holder refuses the lock with its pid and address", () => {
    // The parent of this test process is alive for as long as the test runs.
    holderFile(dir("live"), { pid: process.ppid, url: "http://127.0.0.1:8420", startedAt: new Date().toISOString(), procStart: null });
    assert.throws(() => acquireInstanceLock(dir("live")), (error: Error) => {
      assert.ok(error instanceof InstanceLockedError);
      assert.equal(error.message, `Another Sluice server is already using DATA_DIR ${dir("live")} (pid ${process.ppid}, http://127.0.0.1:8420); stop it first or set DATA_DIR`);
      return true;
    });
  });

  it("a dead holder's lock is taken over; release removes only our own", () => {
    const exited = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
    holderFile(dir("dead"), { pid: Number(exited.stdout), url: null, startedAt: new Date().toISOString(), procStart: null });
    const lock = acquireInstanceLock(dir("dead"));
    lock.setUrl("http://127.0.0.1:9999");
    const held = JSON.parse(fs.readFileSync(path.join(dir("dead"), LOCK_FILE_NAME), "utf8"));
    assert.equal(held.pid, process.pid);
    assert.equal(held.url, "http://127.0.0.1:9999");
    lock.release();
    assert.equal(fs.existsSync(path.join(dir("dead"), LOCK_FILE_NAME)), false);
  });

  it("a live pid that started at another time (a reused pid) is stale, where /proc tells start times", { skip: !fs.existsSync("/proc/self/stat") && "no /proc here" }, () => {
    holderFile(dir("reused"), { pid: process.ppid, url: "http://127.0.0.1:8420", startedAt: new Date().toISOString(), procStart: "1" });
    const lock = acquireInstanceLock(dir("reused"));
    lock.release();
  });

  it("a lock file that is not ours to read (garbage) is stale", () => {
    fs.mkdirSync(dir("garbage"), { recursive: true });
    fs.writeFileSync(path.join(dir("garbage"), LOCK_FILE_NAME), "not json");
    acquireInstanceLock(dir("garbage")).release();
  });
});
