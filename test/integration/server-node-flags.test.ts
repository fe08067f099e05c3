import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { MAIN_THREAD_OLD_GENERATION_MB, MAIN_THREAD_SEMI_SPACE_MB, SERVER_NODE_FLAGS } from "../../server/worker-script";
import { tempDir } from "../fixtures/sluice-server";
import { WAIT_LIMIT_MS, waitFor } from "../fixtures/wait-for";

const ROOT = path.resolve(__dirname, __filename.endsWith(".ts") ? "../.." : "../../..");
const scripts = (JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;

/** The Node flags a package.json script gives before its script file: `node --a --b scripts/x.js` -> ["--a", "--b"]. */
function nodeFlagsOf(script: string): string[] {
  const words = script.split(/\s+/);
  assert.equal(words[0], "node", script);
  return words.slice(1, words.findIndex((w) => w.endsWith(".js")));
}

interface TraceLine {
  t: number;
  thread: string;
  newSpace: number;
  rss?: number;
}

describe("the server's Node flags (its main thread's young generation and heap ceiling)", () => {
  it("are given by npm start, npm run worker and the desktop shell's server process", () => {
    assert.deepEqual(nodeFlagsOf(scripts.start), SERVER_NODE_FLAGS);
    assert.deepEqual(nodeFlagsOf(scripts.worker), SERVER_NODE_FLAGS);
    // Electron cannot run here: its source is checked to hand the same list to the utility process.
    const shell = fs.readFileSync(path.join(ROOT, "main", "main.ts"), "utf8");
    assert.match(shell, /utilityProcess\.fork\(SERVER_ENTRY, \[\], \{[^}]*execArgv: SERVER_NODE_FLAGS,/s);
  });

  it("size only the main thread: once the server has started, a worker thread's own resourceLimits hold again", () => {
    // A child started with the server's flags: a thread asking for an 8 MB nursery (as the parsers do) and one asking for
    // nothing, before and after the entry points' call.
    const probe = (release: boolean) => {
      const script = `
        const { Worker } = require("node:worker_threads");
        const v8 = require("node:v8");
        const newSpace = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space").space_size;
        ${release ? `require(${JSON.stringify(path.join(ROOT, "dist", "server", "worker-script.js"))}).keepHeapFlagsToMainThread();` : ""}
        const churn = "let a = []; for (let i = 0; i < 3e6; i++) { a.push({ i }); if (a.length > 1e5) a = []; }";
        eval(churn);
        const report = "require('node:worker_threads').parentPort.postMessage({ newSpace: require('node:v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size, limit: require('node:v8').getHeapStatistics().heap_size_limit })";
        const nursery = new Worker(churn + ";" + report, { eval: true, resourceLimits: { maxYoungGenerationSizeMb: 8 } });
        nursery.once("message", (worker) => {
          nursery.terminate();
          const plain = new Worker(report, { eval: true });
          plain.once("message", (plainWorker) => {
            plain.terminate();
            console.log(JSON.stringify({ main: newSpace(), mainLimit: v8.getHeapStatistics().heap_size_limit, worker: worker.newSpace, workerLimit: plainWorker.limit }));
          });
        });
      `;
      const run = spawnSync(process.execPath, [...SERVER_NODE_FLAGS, "-e", script], { encoding: "utf8" });
      assert.equal(run.status, 0, run.stderr);
      return JSON.parse(run.stdout) as { main: number; mainLimit: number; worker: number; workerLimit: number };
    };
    const MB = 1024 * 1024;
    const ceiling = MAIN_THREAD_OLD_GENERATION_MB * MB;
    const released = probe(true);
    // The main thread's nursery: two semi-spaces of at most MAIN_THREAD_SEMI_SPACE_MB, not V8's 16 MB each.
    assert.ok(released.main <= 2 * MAIN_THREAD_SEMI_SPACE_MB * MB, `main thread's new space ${released.main}`);
    // The heap limit is the old generation's ceiling plus the young generation's room.
    assert.ok(released.mainLimit >= ceiling && released.mainLimit < ceiling + 64 * MB, `main thread's heap limit ${released.mainLimit}`);
    assert.equal(released.worker, 8 * MB, "the worker's own nursery applies");
    assert.ok(released.workerLimit > ceiling + 64 * MB, `a worker asking for nothing has V8's default ceiling, not the main thread's (${released.workerLimit})`);
    // Without the call, V8 prefers the flags to the worker's own limits.
    const held = probe(false);
    assert.equal(held.worker, 2 * MAIN_THREAD_SEMI_SPACE_MB * MB);
    assert.ok(held.workerLimit < ceiling + 64 * MB, `without the call a worker gets the main thread's ceiling (${held.workerLimit})`);
  });

  it("hold the main thread's young generation to two MAIN_THREAD_SEMI_SPACE_MB semi-spaces in a server started with npm start's flags, as the heap trace shows", async () => {
    const trace = path.join(tempDir(), "trace.jsonl");
    const child = spawn(process.execPath, [...nodeFlagsOf(scripts.start), path.join(ROOT, "dist", "server", "main.js")], {
      cwd: ROOT,
      env: { ...process.env, PORT: "0", HOST: "127.0.0.1", DATA_DIR: tempDir(), SLUICE_SECRETS: "file", SLUICE_HEAP_TRACE: trace },
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      let output = "";
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`server did not start in ${WAIT_LIMIT_MS / 1000} s:\n${output}`)), WAIT_LIMIT_MS);
        child.stdout!.on("data", (chunk) => {
          output += chunk;
          const match = /listening on (http:\/\/\S+)/.exec(output);
          if (match) {
            clearTimeout(timer);
            resolve(match[1]);
          }
        });
        child.stderr!.on("data", (chunk) => (output += chunk));
      });
      // Some work for the main thread, so its nursery would grow if it could (V8's default: to 32 MB).
      for (let i = 0; i < 300; i++) assert.equal((await fetch(`${url}/api/openapi.json`)).status, 200);
      // Two samples (one each 100 ms) taken after the work, however late a busy machine takes them.
      const workDone = Date.now();
      const traced = () =>
        fs
          .readFileSync(trace, "utf8")
          .split("\n")
          .filter((l) => l.endsWith("}"))
          .map((l) => JSON.parse(l) as TraceLine)
          .filter((l) => l.thread === "main");
      const main = await waitFor(() => {
        const lines = traced();
        return lines.filter((l) => l.t >= workDone).length >= 2 && lines;
      }, "two heap trace lines of the main thread after the work");
      assert.ok(main.length >= 2, "the main thread traced its heap");
      assert.ok(main.every((l) => typeof l.rss === "number" && l.rss > 0), "with the process's RSS");
      const largest = Math.max(...main.map((l) => l.newSpace));
      assert.ok(largest > 0 && largest <= 2 * MAIN_THREAD_SEMI_SPACE_MB * 1024 * 1024, `new space ${largest} bytes`);
    } finally {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
    }
  });
});
