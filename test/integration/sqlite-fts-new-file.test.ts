import assert from "node:assert/strict";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Worker } from "node:worker_threads";
import { after, describe, it } from "node:test";
import Database from "better-sqlite3";
import { SqliteFtsIndex } from "../../server/search/sqlite";
import type { DocumentInput } from "../../server/search/search-index";

// A collection's index file is created by the first write, while other connections (reader
// threads, the main thread's listing, another process's writer) may open it at the same moment.
const root = fs.mkdtempSync(path.join(os.tmpdir(), "sluice-fts-new-"));
after(() => fs.rmSync(root, { recursive: true, force: true }));

const doc = (name: string): DocumentInput => ({
  sourceId: "s1",
  path: `share/${name}.txt`,
  title: name,
  size: 10,
  modifiedAt: new Date(1_700_000_000_000),
  version: null,
  chunks: [{ chunkIndex: 0, text: `osprey ${name}` }],
});

/**
 * One thread with its own connections: a writer upserts one document per collection, a reader
 * reads each collection's counts, search and first page. Every thread waits at a barrier before
 * each collection, so all of them open its new file at the same moment.
 */
const THREAD = `
  const { parentPort, workerData } = require("node:worker_threads");
  const { SqliteFtsIndex } = require(workerData.module);
  const { dir, role, name, ids, barrier, threads } = workerData;
  const index = new SqliteFtsIndex(role === "writer" ? { dir } : { dir, readOnly: true, checkOnOpen: true });
  const arrived = new Int32Array(barrier);
  (async () => {
    const errors = [];
    for (let i = 0; i < ids.length; i++) {
      Atomics.add(arrived, 0, 1);
      Atomics.notify(arrived, 0);
      for (let seen; (seen = Atomics.load(arrived, 0)) < threads * (i + 1); ) Atomics.wait(arrived, 0, seen, 50);
      try {
        if (role === "writer") {
          await index.upsertDocuments(ids[i], [{ sourceId: "s1", path: "share/" + name + ".txt", title: name, size: 10, modifiedAt: new Date(1700000000000), version: null, chunks: [{ chunkIndex: 0, text: "osprey " + name }] }]);
        } else {
          await index.stats(ids[i]);
          await index.search(ids[i], "osprey", 5);
          await index.listDocuments(ids[i], 0, 5);
        }
      } catch (error) {
        errors.push(role + " " + name + ": " + error.message);
      }
    }
    await index.close();
    parentPort.postMessage(errors);
  })();
`;

describe("opening a new collection file from several connections at once", () => {
  it("two writers and two read-only readers on the same new files: no error, both writes kept", async () => {
    const dir = path.join(root, "race");
    const ids = Array.from({ length: 40 }, () => crypto.randomUUID());
    const roles = [
      { role: "writer", name: "one" },
      { role: "writer", name: "two" },
      { role: "reader", name: "r1" },
      { role: "reader", name: "r2" },
    ];
    const barrier = new SharedArrayBuffer(4);
    const module = path.resolve(__dirname, "../../server/search/sqlite/sqlite-fts-index.js");
    const results = await Promise.all(
      roles.map(
        ({ role, name }) =>
          new Promise<string[]>((resolve, reject) => {
            const worker = new Worker(THREAD, { eval: true, workerData: { module, dir, role, name, ids, barrier, threads: roles.length } });
            worker.once("message", resolve);
            worker.once("error", reject);
          }),
      ),
    );
    assert.deepEqual(results.flat(), []);
    const index = new SqliteFtsIndex({ dir, readOnly: true });
    try {
      for (const id of ids) assert.deepEqual(await index.stats(id), { documentCount: 2, chunkCount: 2, indexStatus: "ok" });
    } finally {
      await index.close();
    }
  });

  it("a read-only instance creates no file, reads a file without its schema as empty, and sees the schema once the writer commits it", async () => {
    const dir = path.join(root, "read-only");
    fs.mkdirSync(dir);
    const reader = new SqliteFtsIndex({ dir, readOnly: true, checkOnOpen: true });
    const writer = new SqliteFtsIndex({ dir });
    const id = crypto.randomUUID();
    const file = path.join(dir, `${id}.db`);
    try {
      assert.deepEqual(await reader.stats(id), { documentCount: 0, chunkCount: 0, indexStatus: "ok" });
      assert.equal(fs.existsSync(file), false, "reading creates nothing");
      // A file the writer has opened but not yet given its tables (as at the moment of the race).
      new Database(file).close();
      assert.deepEqual(await reader.stats(id), { documentCount: 0, chunkCount: 0, indexStatus: "ok" });
      assert.deepEqual(await reader.search(id, "osprey", 5), []);
      assert.deepEqual(await reader.listDocuments(id, 0, 5), { total: 0, items: [] });
      assert.deepEqual(await reader.indexedState(id, "s1"), new Map());
      const probe = new Database(file, { readonly: true });
      assert.equal(probe.prepare("SELECT count(*) FROM sqlite_master").pluck().get(), 0, "the reader created no table");
      probe.close();
      await writer.upsertDocuments(id, [doc("first")]);
      assert.deepEqual(await reader.stats(id), { documentCount: 1, chunkCount: 1, indexStatus: "ok" });
      assert.equal((await reader.search(id, "osprey", 5))[0].path, "share/first.txt");
    } finally {
      await reader.close();
      await writer.close();
    }
  });
});
