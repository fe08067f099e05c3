import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { PassThrough } from "node:stream";
import { describe, it } from "node:test";
import { openRotatingLog } from "../../main/log-file";
import { stopServer, waitForListening } from "../../main/server-process";
import { serverEntryArgs, tempDir } from "../fixtures/sluice-server";
import { WAIT_LIMIT_MS, waitFor } from "../fixtures/wait-for";

/** The log files in dir, oldest first, with their sizes. */
function logFiles(dir: string): Array<{ name: string; size: number }> {
  return fs
    .readdirSync(dir)
    .map((name) => ({ name, size: fs.statSync(path.join(dir, name)).size, n: Number(/\.(\d+)\.log$/.exec(name)?.[1] ?? -1) }))
    .sort((a, b) => a.n - b.n)
    .map(({ name, size }) => ({ name, size }));
}

/** Lets readline deliver what was written to the stream. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

describe("the desktop log (rotating file)", () => {
  it("rolls over at the size limit, keeps only the newest files, and never splits a line", async () => {
    const dir = path.join(tempDir(), "logs");
    const log = await openRotatingLog(dir, { maxBytes: 1000, keep: 3 });
    const output = new PassThrough();
    log.attach(output);
    const line = (i: number) => `${String(i).padStart(4, "0")} ${"x".repeat(94)}\n`; // 100 bytes
    // 25 lines = 2,500 bytes: files of 1,000 bytes each; lines arrive in pieces, as from a pipe.
    for (let i = 0; i < 25; i++) {
      const text = line(i);
      output.write(text.slice(0, 30));
      output.write(text.slice(30));
      await settle();
    }
    await log.close();

    const files = logFiles(dir);
    assert.equal(files.length, 3, `keeps 3 files: ${JSON.stringify(files)}`);
    assert.deepEqual(files.map((f) => f.name), ["sluice.1.log", "sluice.2.log", "sluice.3.log"]);
    assert.deepEqual(files.map((f) => f.size), [1000, 1000, 500], "rolled at 1,000 bytes");
    const lines = files.flatMap((f) => fs.readFileSync(path.join(dir, f.name), "utf8").split("\n").filter(Boolean));
    assert.deepEqual(lines, Array.from({ length: 25 }, (_, i) => line(i).trimEnd()), "every line whole, in order");
  });

  it("goes on in the newest file after a restart, counts older runs' files, and retires the unrotated sluice.log", async () => {
    const dir = path.join(tempDir(), "logs");
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, "sluice.log"), "a log from before rotation\n".repeat(100));
    fs.writeFileSync(path.join(dir, "sluice.4.log"), `${"x".repeat(999)}\n`);
    fs.writeFileSync(path.join(dir, "sluice.5.log"), "older run\n");

    const log = await openRotatingLog(dir, { maxBytes: 1000, keep: 2 });
    const output = new PassThrough();
    log.attach(output);
    assert.ok(fs.existsSync(path.join(dir, "sluice.0.log")) && !fs.existsSync(path.join(dir, "sluice.log")), "sluice.log is now the oldest file");
    output.write("appended\n");
    await waitFor(() => fs.readFileSync(path.join(dir, "sluice.5.log"), "utf8") === "older run\nappended\n", "the newest file (sluice.5.log) to be written on");
    output.write(`${"y".repeat(1000)}\n`);
    await settle();
    await log.close();
    assert.deepEqual(logFiles(dir).map((f) => f.name), ["sluice.5.log", "sluice.6.log"], "two files in all, the other runs' files gone");
  });

  it("takes the real server's output, request lines with their request id, while the shell still sees `listening on`", async () => {
    const dir = path.join(tempDir(), "logs");
    const log = await openRotatingLog(dir);
    const child = spawn(process.execPath, serverEntryArgs(), {
      env: { ...process.env, PORT: "0", HOST: "127.0.0.1", DATA_DIR: tempDir(), SLUICE_SECRETS: "file", LOG_LEVEL: "info" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    log.attach(child.stdout);
    log.attach(child.stderr);
    const url = await waitForListening(child, WAIT_LIMIT_MS);
    assert.equal((await fetch(`${url}/api/health?probe=secret-query`)).status, 200);
    const exited = new Promise((resolve) => child.once("exit", resolve));
    await stopServer(child, 10_000);
    await exited;
    await settle();
    await log.close();

    const text = fs.readFileSync(path.join(dir, "sluice.1.log"), "utf8");
    assert.match(text, new RegExp(`^listening on ${url.replace(/[.:/]/g, "\\$&")}$`, "m"), "the runtime contract's line, unchanged");
    const events = text
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as { level: string; msg: string; reqId?: string; time: string; pid: number });
    const request = events.find((e) => e.msg.startsWith("GET /api/health 200 "));
    assert.ok(request, `a request line in:\n${text}`);
    assert.equal(request.level, "info");
    assert.match(request.reqId!, /^[0-9a-f-]{36}$/);
    assert.equal(request.pid, child.pid);
    assert.ok(!text.includes("secret-query"), "no query strings in the log");
    assert.ok(events.some((e) => e.msg === "SIGTERM received, shutting down"));
  });
});
