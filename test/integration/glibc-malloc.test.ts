// npm test: once
// Why: malloc tuning is the process's own, whatever its back end; the one server start only reads its debug line.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { MALLOC_ARENA_MAX, MALLOC_MMAP_THRESHOLD } from "../../server/memory/glibc-malloc";
import { startSluice } from "../fixtures/sluice-server";

const ROOT = path.resolve(__dirname, __filename.endsWith(".ts") ? "../.." : "../../..");
const MODULE = path.join(ROOT, "dist", "server", "memory", "glibc-malloc.js");

/** Node on Linux with glibc, told by Node's own report (not by the module under test). */
const glibc = process.platform === "linux" && Boolean((process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header.glibcVersionRuntime);
const onGlibc = glibc ? {} : { skip: "needs Node on Linux with glibc" };

/** Runs `script` in a fresh Node (the module at `m`); answers its stdout and stderr. */
function child(script: string, flags: string[] = []): { stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, [...flags, "-e", `const m = require(${JSON.stringify(MODULE)});\n${script}`], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
  assert.equal(run.status, 0, run.stderr);
  return { stdout: run.stdout, stderr: run.stderr };
}

/**
 * glibc's own count of its arenas: malloc_stats() prints "Arena N:" for each on stderr, taken
 * here between markers. Six worker threads allocate at once while the count is taken after them.
 */
function arenasBeforeAndAfterThreads(tune: boolean): { before: number; after: number; tuning: { applied: boolean } | null } {
  const { stdout, stderr } = child(`
    const { Worker } = require("node:worker_threads");
    const stats = require("koffi").load(null).func("void malloc_stats(void)");
    const tuning = ${tune} ? m.tuneMalloc() : null;
    process.stderr.write("@@before\\n"); stats(); process.stderr.write("@@end\\n");
    const gate = new Int32Array(new SharedArrayBuffer(4));
    const workers = Array.from({ length: 6 }, () => new Worker(\`
      const { workerData: gate, parentPort } = require("node:worker_threads");
      const held = []; for (let i = 0; i < 2000; i++) held.push(Buffer.allocUnsafeSlow(2048));
      parentPort.postMessage("ready"); Atomics.wait(gate, 0, 0);\`, { eval: true, workerData: gate }));
    let ready = 0;
    for (const w of workers) w.once("message", () => {
      if (++ready < workers.length) return;
      process.stderr.write("@@after\\n"); stats(); process.stderr.write("@@end\\n");
      Atomics.store(gate, 0, 1); Atomics.notify(gate, 0);
      console.log(JSON.stringify(tuning));
    });
  `);
  const count = (mark: string) => (new RegExp(`@@${mark}\\n([\\s\\S]*?)@@end`).exec(stderr)?.[1].match(/^Arena \d+:$/gm) ?? []).length;
  return { before: count("before"), after: count("after"), tuning: JSON.parse(stdout) };
}

describe("glibc's malloc, tuned from inside the process", () => {
  it("limits the arenas: threads started after tuneMalloc share the arenas there are (at most MALLOC_ARENA_MAX new)", onGlibc, () => {
    const tuned = arenasBeforeAndAfterThreads(true);
    assert.equal(tuned.tuning?.applied, true);
    assert.ok(tuned.before >= 1, "malloc_stats was read");
    assert.ok(tuned.after <= Math.max(tuned.before, MALLOC_ARENA_MAX), `${tuned.before} arenas before six threads, ${tuned.after} after`);
    // The control: without the call, each of the six threads gets an arena of its own.
    const untuned = arenasBeforeAndAfterThreads(false);
    assert.ok(untuned.after >= Math.min(untuned.before + 6, 8 * os.availableParallelism()), `untuned: ${untuned.before} arenas before six threads, ${untuned.after} after`);
  });

  it("keeps the mmap threshold fixed: after a 5 MB block is freed, a 1 MB one still gets pages of its own (glibc would raise the threshold)", onGlibc, () => {
    const probe = (tune: boolean) => {
      const { stdout } = child(`
        ${tune ? "m.tuneMalloc();" : ""}
        let big = Buffer.allocUnsafeSlow(5 * 1024 * 1024); big.fill(1); big = null; global.gc(); global.gc();
        setTimeout(() => {
          const before = m.mallocInfo().hblkhd;
          const block = Buffer.allocUnsafeSlow(1024 * 1024);
          console.log(JSON.stringify({ mmapped: m.mallocInfo().hblkhd - before, size: block.length }));
        }, 100);
      `, ["--expose-gc"]);
      return (JSON.parse(stdout) as { mmapped: number }).mmapped;
    };
    assert.ok(probe(true) >= 1024 * 1024, "tuned: the 1 MB block is mmapped");
    assert.equal(probe(false), 0, "untuned: glibc raised its threshold past 1 MB, so the block came from an arena");
  });

  it("gives freed memory held in the arenas back to the OS with trimMalloc, and mallocInfo sees it held", onGlibc, () => {
    const { stdout } = child(
      `
      const MB = 1024 * 1024;
      // 120 MB of 1 KB buffers (malloc'd backing stores), then every one but each 20th dropped: holes no top-trim can return.
      let held = []; for (let i = 0; i < 120 * 1024; i++) held.push(Buffer.allocUnsafeSlow(1024).fill(1));
      held = held.filter((_, i) => i % 20 === 0);
      for (let i = 0; i < 4; i++) global.gc();
      setTimeout(() => {
        const info = m.mallocInfo();
        const rss = process.memoryUsage.rss();
        const trimmed = m.trimMalloc();
        console.log(JSON.stringify({ freeHeld: info.fordblks / MB, trimmed, releasedMb: (rss - process.memoryUsage.rss()) / MB, kept: held.length }));
      }, 300);
    `,
      ["--expose-gc"],
    );
    const result = JSON.parse(stdout) as { freeHeld: number; trimmed: boolean; releasedMb: number };
    assert.ok(result.freeHeld > 60, `free but held: ${result.freeHeld} MB`);
    assert.equal(result.trimmed, true);
    assert.ok(result.releasedMb > 40, `RSS fell by ${result.releasedMb} MB`);
  });

  it("does nothing in Electron (Chromium's allocator, not glibc's), and says so", () => {
    const { stdout } = child(`
      Object.defineProperty(process.versions, "electron", { value: "41.0.0" });
      console.log(JSON.stringify({ tuning: m.tuneMalloc(), trimmed: m.trimMalloc(), info: m.mallocInfo() }));
    `);
    const result = JSON.parse(stdout) as { tuning: { applied: boolean; detail: string }; trimmed: boolean; info: unknown };
    assert.deepEqual(result, { tuning: { applied: false, detail: "malloc left as is (not Node on Linux with glibc)" }, trimmed: false, info: null });
  });

  it("is applied by the server as it starts, which says so at debug level", onGlibc, async () => {
    const server = await startSluice({ env: { LOG_LEVEL: "debug" } });
    try {
      assert.match(server.output(), new RegExp(`"msg":"malloc: at most ${MALLOC_ARENA_MAX} arenas, blocks from ${MALLOC_MMAP_THRESHOLD / 1024} KB mmapped \\(glibc \\d+\\.\\d+\\)"`));
    } finally {
      await server.stop();
    }
  });
});
