import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { RemoteEntry } from "../../server/connectors/connector";
import { ChangeTimeTrust, keepsChangeTime, shareOf } from "../../server/ingest/change-time-trust";
import type { IndexedState, StoredAcl } from "../../server/search/search-index";
import { aclIdOf, type Dacl, type FileAcl } from "../../server/search/stored-acl";

// Which unchanged files a run reads the descriptor of (decision 0485): entries in, reads out.

const SERVER = "fs.example";
const EVERYONE: Dacl = [{ kind: "allow", inherited: false, mask: 0x120089, sid: "S-1-1-0" }];
const STAFF: Dacl = [{ kind: "allow", inherited: false, mask: 0x120089, sid: "S-1-5-21-1-2-3-513" }];
const ACL: FileAcl = { file: STAFF, share: EVERYONE };
const ACL_ID = aclIdOf(SERVER, ACL);
const T = (minutes: number) => new Date(Date.UTC(2026, 0, 1, 0, minutes));

interface Listed {
  path: string;
  modified: number;
  changed: number;
  /** The change time stored with its permissions (absent: the listed one). */
  stored?: number;
  aclId?: string | null;
}

function world(files: Listed[], opts: { share?: Record<string, Dacl | Error>; acls?: StoredAcl[]; sharePermissions?: boolean; notListed?: Record<string, IndexedState> } = {}) {
  const entries: RemoteEntry[] = files.map((f) => ({ path: f.path, name: f.path, isDirectory: false, size: 1, modifiedAt: T(f.modified), changedAt: T(f.changed) }));
  const indexed = new Map<string, IndexedState>(
    files.map((f) => [f.path, { size: 1, modifiedAt: T(f.modified), version: null, changedAt: T(f.stored ?? f.changed), aclId: f.aclId === undefined ? ACL_ID : f.aclId }]),
  );
  for (const [path, state] of Object.entries(opts.notListed ?? {})) indexed.set(path, state);
  const shareReads: string[] = [];
  const connector =
    opts.sharePermissions === false
      ? {}
      : {
          readSharePermissions: async (path: string) => {
            shareReads.push(path);
            const dacl = opts.share?.[shareOf(path)] ?? EVERYONE;
            if (dacl instanceof Error) throw dacl;
            return dacl;
          },
        };
  const acls = opts.acls ?? [{ id: ACL_ID, server: SERVER, acl: ACL }];
  const index = { acls: async () => ({ version: "1", acls }) };
  const trust = ChangeTimeTrust.of({ connector, index, collectionId: "c", server: SERVER, indexed });
  /** The files whose descriptors the run reads, the listing first whole. */
  const reads = async () => {
    assert.ok(trust);
    for (const entry of entries) trust.noteListed(entry);
    trust.listingComplete();
    const read: string[] = [];
    for (const entry of entries) if (!(await trust.kept(entry, indexed.get(entry.path)!))) read.push(entry.path);
    return read;
  };
  return { trust, entries, indexed, reads, shareReads };
}

describe("ChangeTimeTrust: which unchanged files' descriptors a run reads", () => {
  it("a change time later than the write time is one the server keeps; equal or earlier is not", () => {
    assert.equal(keepsChangeTime(T(2), T(1)), true);
    assert.equal(keepsChangeTime(T(1), T(1)), false, "Samba lists the write time");
    assert.equal(keepsChangeTime(T(0), T(1)), false, "a creation time, or a write time set ahead");
    assert.equal(keepsChangeTime(undefined, T(1)), false);
    assert.equal(shareOf("docs/a/b.txt"), "docs");
    assert.equal(shareOf("top.txt"), "");
  });

  it("as on Samba (every change time is the write time): every descriptor is read", async () => {
    const { reads } = world([
      { path: "docs/a.txt", modified: 1, changed: 1 },
      { path: "docs/b.txt", modified: 2, changed: 2 },
    ]);
    assert.deepEqual(await reads(), ["docs/a.txt", "docs/b.txt"]);
  });

  it("as on Windows: a share showing one kept change time reads only the files whose change time moved or who have no stored ACL", async () => {
    const { reads, shareReads } = world([
      { path: "docs/a.txt", modified: 1, changed: 5 },
      { path: "docs/b.txt", modified: 2, changed: 2 },
      { path: "docs/moved.txt", modified: 1, changed: 9, stored: 5 },
      { path: "docs/plain.txt", modified: 1, changed: 5, aclId: null },
    ]);
    assert.deepEqual(await reads(), ["docs/moved.txt", "docs/plain.txt"]);
    assert.deepEqual(shareReads, ["docs/a.txt"], "the share's DACL asked once for its ACL");
  });

  it("judges each share by its own files", async () => {
    const { reads } = world([
      { path: "ntfs/a.txt", modified: 1, changed: 5 },
      { path: "ntfs/b.txt", modified: 1, changed: 1 },
      { path: "fat/c.txt", modified: 1, changed: 1 },
    ]);
    assert.deepEqual(await reads(), ["fat/c.txt"]);
  });

  it("a share's stored documents only guess (what is read ahead); the verdict is this run's listing", async () => {
    // Stored as on Windows, listed now as on Samba (the source points at another server).
    const { trust, entries, indexed, reads } = world(
      [
        { path: "docs/a.txt", modified: 1, changed: 1 },
        { path: "docs/b.txt", modified: 1, changed: 1 },
      ],
      { notListed: { "docs/old.txt": { size: 1, modifiedAt: T(1), version: null, changedAt: T(4), aclId: ACL_ID } } },
    );
    assert.ok(trust);
    assert.equal(trust.likelyKept(entries[0], indexed.get("docs/a.txt")!), true, "not read ahead");
    assert.deepEqual(await reads(), ["docs/a.txt", "docs/b.txt"], "but read");
  });

  it("a share's DACL that moved (it moves no file's change time), or that cannot be read, reads the share's files", async () => {
    const changed = world([{ path: "docs/a.txt", modified: 1, changed: 5 }], { share: { docs: STAFF } });
    assert.deepEqual(await changed.reads(), ["docs/a.txt"]);
    const failing = world([{ path: "docs/a.txt", modified: 1, changed: 5 }], { share: { docs: new Error("access denied") } });
    assert.deepEqual(await failing.reads(), ["docs/a.txt"]);
  });

  it("a stored ACL not found, or of another server, reads the file", async () => {
    const missing = world([{ path: "docs/a.txt", modified: 1, changed: 5 }], { acls: [] });
    assert.deepEqual(await missing.reads(), ["docs/a.txt"]);
    const other = world([{ path: "docs/a.txt", modified: 1, changed: 5 }], { acls: [{ id: ACL_ID, server: "other.example", acl: ACL }] });
    assert.deepEqual(await other.reads(), ["docs/a.txt"]);
  });

  it("leaves nothing unread before the listing is whole, nor where the connector cannot say a share's DACL", async () => {
    const { trust, entries, indexed } = world([{ path: "docs/a.txt", modified: 1, changed: 5 }]);
    assert.ok(trust);
    trust.noteListed(entries[0]);
    assert.equal(await trust.kept(entries[0], indexed.get("docs/a.txt")!), false);
    assert.equal(world([{ path: "docs/a.txt", modified: 1, changed: 5 }], { sharePermissions: false }).trust, null);
  });
});
