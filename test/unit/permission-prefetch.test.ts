import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { RemoteEntry } from "../../server/connectors/connector";
import { PermissionPrefetch } from "../../server/ingest/permission-prefetch";
import type { DocumentPermissions } from "../../server/search/search-index";

const file = (path: string): RemoteEntry => ({ path, name: path, isDirectory: false, size: 1, modifiedAt: new Date(0) });
const permissions = (path: string): DocumentPermissions => ({ server: path, acl: { file: null, share: null }, changedAt: null });

/** A reader whose reads stay open until the test settles them, counting how many are in flight at once. */
function heldReader() {
  const open = new Map<string, { resolve(p: DocumentPermissions): void; reject(e: Error): void }>();
  const started: string[] = [];
  let most = 0;
  const read = (f: RemoteEntry) =>
    new Promise<DocumentPermissions>((resolve, reject) => {
      started.push(f.path);
      open.set(f.path, { resolve, reject });
      most = Math.max(most, open.size);
    });
  const settle = (path: string, error?: Error) => {
    const held = open.get(path)!;
    open.delete(path);
    if (error) held.reject(error);
    else held.resolve(permissions(path));
  };
  return { read, started, open, settle, most: () => most };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe("PermissionPrefetch: unchanged files' permissions read while the listing goes on", () => {
  it("starts reads as files are offered, never more than its limit at once, and each file is read once", async () => {
    const reader = heldReader();
    const prefetch = new PermissionPrefetch(reader.read, 2);
    for (const p of ["a", "b", "c", "d"]) prefetch.offer(file(p));
    assert.deepEqual(reader.started, ["a", "b"]);
    const a = prefetch.reader(file("a"));
    reader.settle("a");
    assert.equal((await a).server, "a");
    await turn();
    assert.deepEqual(reader.started, ["a", "b", "c"], "a free place starts the next");
    // Taking a file not started yet starts it now, out of turn, and the queue never reads it again.
    const d = prefetch.reader(file("d"));
    assert.deepEqual(reader.started, ["a", "b", "c", "d"]);
    for (const p of ["b", "c", "d"]) reader.settle(p);
    assert.equal((await d).server, "d");
    await turn();
    assert.deepEqual(reader.started, ["a", "b", "c", "d"]);
    assert.ok(reader.most() <= 3, "the limit, plus the one taken out of turn");
  });

  it("holds a failed read until its file is reached, then fails it there", async () => {
    const reader = heldReader();
    const prefetch = new PermissionPrefetch(reader.read, 4);
    prefetch.offer(file("x"));
    reader.settle("x", new Error("Access denied reading the descriptor"));
    await turn();
    await assert.rejects(prefetch.reader(file("x")), /Access denied/);
  });

  it("after stop, nothing more starts and a file is read when reached", async () => {
    const reader = heldReader();
    const prefetch = new PermissionPrefetch(reader.read, 1);
    prefetch.offer(file("a"));
    prefetch.offer(file("b"));
    prefetch.stop();
    reader.settle("a");
    await turn();
    assert.deepEqual(reader.started, ["a"]);
    prefetch.offer(file("c"));
    assert.deepEqual(reader.started, ["a"]);
    const b = prefetch.reader(file("b"));
    assert.deepEqual(reader.started, ["a", "b"]);
    reader.settle("b");
    assert.equal((await b).server, "b");
  });
});
