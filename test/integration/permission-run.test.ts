import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Readable } from "node:stream";
import { after, describe, it } from "node:test";
import { EVERYONE_SID } from "../../server/access/windows-acl";
import { aclIdOf, type FileAcl } from "../../server/search/stored-acl";
import { ConnectorEntryError, type Connector, type RemoteEntry } from "../../server/connectors/connector";
import { FolderConnector } from "../../server/connectors/folder/folder.connector";
import { JobCounters } from "../../server/ingest/job-counters";
import { ParserPool } from "../../server/ingest/parse/parser-pool";
import { syncSource } from "../../server/ingest/sync-source";
import { SqliteFtsIndex } from "../../server/search/sqlite";

// A run of a source with the file server's permissions (issue 33 items 2 and 6), over real files,
// real parser threads and a real SQLite index. The descriptors and change times come from a table
// standing in for the SMB connector's readPermissions and ChangeTime (perm-smb's, against Samba;
// the end-to-end Samba tests come when both join): what is checked here is the run's use of them.

class Counters extends JobCounters {
  constructor() {
    super(0);
  }
  protected async persist(): Promise<void> {}
}

const SERVER = "fs.example";
const READ = 0x120089;
const aclFor = (sid: string): FileAcl => ({ file: [{ kind: "allow", inherited: false, mask: READ, sid }], share: [{ kind: "allow", inherited: false, mask: READ, sid: EVERYONE_SID }] });
const HR = "S-1-5-21-1-2-3-2001";

/**
 * A folder connector with permissions: each file's ACL from the test's table, its change time the
 * write time as Samba lists it (decision 0304) unless the table says one (as Windows keeps it), its
 * share's DACL Everyone's unless set; counts what the run reads.
 */
class PermissionFolder implements Connector {
  readonly acls = new Map<string, FileAcl | Error>();
  readonly changed = new Map<string, Date>();
  shareDacl: FileAcl["share"] = [{ kind: "allow", inherited: false, mask: READ, sid: EVERYONE_SID }];
  contentReads = 0;
  permissionReads: string[] = [];

  constructor(private readonly folder: FolderConnector) {}
  test(): Promise<void> {
    return this.folder.test();
  }
  async list(p: string): Promise<RemoteEntry[]> {
    return (await this.folder.list(p)).map((entry) => ({ ...entry, changedAt: this.changed.get(entry.path) ?? entry.modifiedAt }));
  }
  stat(p: string): Promise<RemoteEntry> {
    return this.folder.stat(p);
  }
  read(p: string): Promise<Readable> {
    this.contentReads += 1;
    return this.folder.read(p);
  }
  async readPermissions(p: string): Promise<FileAcl> {
    this.permissionReads.push(p);
    const acl = this.acls.get(p);
    if (acl instanceof Error) throw acl;
    if (!acl) throw new Error(`no ACL for ${p} in the test's table`);
    return { ...acl, share: this.shareDacl };
  }
  async readSharePermissions(): Promise<FileAcl["share"]> {
    return this.shareDacl;
  }
  close(): Promise<void> {
    return this.folder.close();
  }
}

/**
 * A folder of `names`, each speaking of `word`, behind a PermissionFolder, indexed into a fresh
 * SQLite collection: `run` syncs it once (counters back), `aclIds` reads each path's stored ACL id.
 * Registers its own clean-up with the describe it is called in.
 */
function permissionSource(prefix: string, source: string, names: string[], word: string) {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  const share = path.join(dir, "share");
  fs.mkdirSync(share, { recursive: true });
  for (const name of names) fs.writeFileSync(path.join(share, name), `The ${name} file speaks of ${word}.`);
  const index = new SqliteFtsIndex({ dir: path.join(dir, "indexes") });
  const pool = new ParserPool({ size: 1 });
  const collection = randomUUID();
  const connector = new PermissionFolder(new FolderConnector(share, { roots: [dir], dataDir: path.join(dir, "data"), dotfiles: "skip" }));
  const run = async (server: string | null = SERVER) => {
    const progress = new Counters();
    connector.contentReads = 0;
    connector.permissionReads = [];
    await syncSource({ index, parsers: pool, disk: null }, connector, source, collection, progress, new AbortController().signal, server);
    return progress;
  };
  const aclIds = async () => new Map([...(await index.indexedState(collection, source))].map(([p, state]) => [p, state.aclId]));
  after(async () => {
    await pool.close();
    await index.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return { dir, share, index, collection, source, connector, run, aclIds };
}

describe("a run of a source with the file server's permissions", () => {
  const names = ["a.txt", "b.txt", "c.txt", "d.txt"];
  const { share, index, collection, connector, run, aclIds } = permissionSource("sluice-perm-run-", "source-with-permissions", names, "otters");
  for (const name of names) connector.acls.set(name, aclFor(EVERYONE_SID));

  it("reads each indexed file's permissions with it and keeps them with its document", async () => {
    const first = await run();
    assert.equal(first.filesAdded, 4);
    assert.deepEqual(connector.permissionReads.sort(), names);
    const ids = await aclIds();
    for (const name of names) assert.equal(ids.get(name), aclIdOf(SERVER, aclFor(EVERYONE_SID)));
    assert.equal((await index.acls(collection)).acls.length, 1, "one distinct ACL, kept once");
  });

  it("a re-run with nothing changed reads no content, and each file's permissions again (Samba's listing does not show an ACL change), changing nothing", async () => {
    const before = await aclIds();
    const again = await run();
    assert.deepEqual([again.filesUnchanged, again.filesPermissionsChanged, again.filesAdded, again.filesChanged], [4, 0, 0, 0]);
    assert.equal(connector.contentReads, 0);
    assert.deepEqual(connector.permissionReads.sort(), names);
    assert.deepEqual(await aclIds(), before);
  });

  it("a file whose ACL changed, with or without its change time moving, gets its new permissions without its content read, counted", async () => {
    // a's ACL changes as on Samba (the change time stays); c's as on Windows (it moves).
    connector.acls.set("a.txt", aclFor(HR));
    connector.acls.set("c.txt", aclFor(HR));
    connector.changed.set("c.txt", new Date("2025-02-01T00:00:00Z"));
    // b's change time moves for something else (its attributes): stored, not counted.
    connector.changed.set("b.txt", new Date("2025-02-02T00:00:00Z"));
    const moved = await run();
    assert.equal(connector.contentReads, 0);
    assert.deepEqual([moved.filesUnchanged, moved.filesPermissionsChanged], [4, 2]);
    const ids = await aclIds();
    assert.equal(ids.get("a.txt"), aclIdOf(SERVER, aclFor(HR)));
    assert.equal(ids.get("c.txt"), aclIdOf(SERVER, aclFor(HR)));
    assert.equal(ids.get("b.txt"), aclIdOf(SERVER, aclFor(EVERYONE_SID)));
    const settled = await run();
    assert.equal(settled.filesPermissionsChanged, 0, "nothing moved since");
  });

  it("a file whose descriptor cannot be read is a failed file, and an unchanged one leaves the collection", async () => {
    fs.writeFileSync(path.join(share, "e.txt"), "A new file no descriptor can be read of.");
    connector.acls.set("e.txt", new ConnectorEntryError("e.txt", "Access denied reading the security descriptor"));
    connector.acls.set("c.txt", new ConnectorEntryError("c.txt", "Access denied reading the security descriptor"));
    connector.changed.set("c.txt", new Date("2025-03-01T00:00:00Z"));
    const failing = await run();
    assert.equal(failing.entitiesFailed, 2);
    assert.deepEqual(failing.errors.map((e) => e.entity).sort(), ["c.txt", "e.txt"]);
    assert.equal(connector.contentReads, 0, "neither file's content was read");
    const ids = await aclIds();
    assert.ok(!ids.has("c.txt") && !ids.has("e.txt"));
  });

  it("a run of the same source without permissions drops them, counted", async () => {
    const plain = await run(null);
    // c.txt and e.txt come back as new files; the other three lose their ACLs.
    assert.deepEqual([plain.filesAdded, plain.filesPermissionsChanged], [2, 3]);
    assert.ok([...(await aclIds()).values()].every((id) => id === null));
  });
});

describe("a run of a source with permissions whose server keeps change times (as Windows does, decision 0485)", () => {
  const names = ["a.txt", "b.txt", "c.txt"];
  const { share, connector, run, aclIds } = permissionSource("sluice-perm-ctime-", "source-keeping-change-times", names, "herons");
  // Each file's change time an hour after its last write, as a copied file's is on NTFS.
  const changeTime = (name: string, hours: number) => connector.changed.set(name, new Date(fs.statSync(path.join(share, name)).mtime.getTime() + hours * 3_600_000));
  for (const name of names) {
    connector.acls.set(name, aclFor(EVERYONE_SID));
    changeTime(name, 1);
  }

  it("a re-run with nothing changed reads no descriptor", async () => {
    assert.equal((await run()).filesAdded, 3);
    const again = await run();
    assert.deepEqual([again.filesUnchanged, again.filesPermissionsChanged], [3, 0]);
    assert.equal(connector.contentReads, 0);
    assert.deepEqual(connector.permissionReads, []);
  });

  it("reads the file whose change time moved, and counts its new ACL; one whose change time stayed is taken as kept", async () => {
    connector.acls.set("a.txt", aclFor(HR));
    changeTime("a.txt", 2);
    // On Windows an ACL cannot change without the change time: this only shows which the run trusts.
    connector.acls.set("b.txt", aclFor(HR));
    const moved = await run();
    assert.deepEqual(connector.permissionReads, ["a.txt"]);
    assert.deepEqual([moved.filesUnchanged, moved.filesPermissionsChanged], [3, 1]);
    const ids = await aclIds();
    assert.equal(ids.get("a.txt"), aclIdOf(SERVER, aclFor(HR)));
    assert.equal(ids.get("b.txt"), aclIdOf(SERVER, aclFor(EVERYONE_SID)));
  });

  it("a share DACL that moved (no file's change time does) reads every file again", async () => {
    connector.shareDacl = [{ kind: "allow", inherited: false, mask: READ, sid: HR }];
    const moved = await run();
    assert.deepEqual(connector.permissionReads.sort(), names);
    assert.deepEqual([moved.filesUnchanged, moved.filesPermissionsChanged], [3, 3]);
    const settled = await run();
    assert.deepEqual(connector.permissionReads, []);
    assert.equal(settled.filesPermissionsChanged, 0);
  });

  it("a listing whose every change time is the write time (Samba's) reads every descriptor, whatever was stored", async () => {
    connector.changed.clear();
    await run(); // each change time stored moves to the write time
    const samba = await run();
    assert.deepEqual(connector.permissionReads.sort(), names);
    assert.equal(samba.filesPermissionsChanged, 0);
  });
});
