import assert from "node:assert/strict";
import { chmodSync, statSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { ConnectorEntryError } from "../../server/connectors/connector";
import { SmbConnector, type SmbConnectorOptions } from "../../server/connectors/smb/smb.connector";
import type { Ace } from "../../server/search/stored-acl";
import { Smb2Client } from "../../server/connectors/smb/smb2-client";
import { SRVSVC, listSharesOn } from "../../server/connectors/smb/srvsvc";
import { LSARPC, lookupNames, openPolicy } from "../../server/connectors/smb/lsa";
import { SAMBA_TIMEOUT_MS, startSamba, type SambaServer } from "../fixtures/samba";
import { sambaAcls, type SambaAcls } from "../fixtures/samba-acls";

/**
 * The SMB connector's reading of permissions against a real Samba with NT ACLs: file descriptors
 * equal what smbcacls shows, share permissions equal what sharesec set, and an account's SID and
 * groups equal rpcclient's answers (Samba's own tools are the truth).
 */

const ALICE = { name: "alice", password: "Al1ce-Passw0rd!" };
const BOB = { name: "bob", password: "B0b-Passw0rd!" };
const READ = "0x001200a9";

/** The names smbcacls and sharesec print for the standard masks. */
const MASK_NAMES: Record<string, number> = { FULL: 0x001f01ff, READ: 0x001200a9, CHANGE: 0x001301bf };

/** smbcacls --numeric ACL lines as the contract's ACEs (inherit-only ones do not apply to the object itself). */
function acesOf(lines: string[]): Ace[] {
  return lines
    .filter((l) => l.startsWith("ACL:"))
    .map((l) => {
      const m = /^ACL:(S-[0-9-]+):([A-Z_]+|\d+)\/(0x[0-9a-f]+)\/(0x[0-9a-f]+|FULL|READ|CHANGE)$/i.exec(l);
      if (!m) throw new Error(`Unparsed smbcacls line: ${l}`);
      return { sid: m[1], type: m[2], flags: Number(m[3]), mask: MASK_NAMES[m[4]] ?? Number(m[4]) };
    })
    .filter((a) => !(a.flags & 0x08))
    .map((a) => ({
      // --numeric prints the ACE type as a number: 0 ACCESS_ALLOWED, 1 ACCESS_DENIED.
      kind: ["ALLOWED", "0"].includes(a.type) ? ("allow" as const) : ["DENIED", "1"].includes(a.type) ? ("deny" as const) : ("other" as const),
      inherited: (a.flags & 0x10) !== 0,
      mask: a.mask,
      sid: a.sid,
    }));
}

describe("SMB permissions on a Samba with NT ACLs", () => {
  let samba: SambaServer;
  let teamDir: string;
  let acls: SambaAcls;
  let hrSid: string;
  let staffSid: string;
  const connectors: SmbConnector[] = [];
  const make = (over: Partial<SmbConnectorOptions> = {}) => {
    const c = new SmbConnector({
      host: samba.host,
      port: samba.port,
      serverName: "SLUICETEST",
      username: samba.username,
      password: samba.password,
      timeoutMs: SAMBA_TIMEOUT_MS,
      ...over,
    });
    connectors.push(c);
    return c;
  };
  const sidOf = (name: string) => {
    const out = acls.rpcclient(samba.username, samba.password, `lookupnames ${name}`);
    return /(S-1-[0-9-]+)/.exec(out)![1];
  };

  before(async () => {
    teamDir = mkdtempSync(join(tmpdir(), "sluice-team-"));
    chmodSync(teamDir, 0o755); // smbd opens files as the connecting user's uid
    writeFileSync(join(teamDir, "plan.txt"), "the team's plan\n");
    samba = await startSamba({
      ntAcls: true,
      extraShares: { team: teamDir },
      users: [ALICE, BOB],
      unixGroups: { hr: [ALICE.name], staff: [ALICE.name, BOB.name] },
      populate: (docs) => {
        mkdirSync(join(docs, "hr"), { recursive: true });
        writeFileSync(join(docs, "hr", "salaries.txt"), "salaries\n");
        writeFileSync(join(docs, "deny-first.txt"), "deny before allow\n");
        writeFileSync(join(docs, "write-only.txt"), "write only\n");
        writeFileSync(join(docs, "alice-only.txt"), "for alice\n");
        writeFileSync(join(docs, "changing.txt"), "same bytes, new permissions\n");
      },
    });
    acls = await sambaAcls(samba);
    hrSid = acls.mapGroup("hr");
    staffSid = acls.mapGroup("staff");
    // The source's account may read everything (what an admin sets up); the rest is what each case tests.
    const owner = `REVISION:1,OWNER:S-1-22-1-0,GROUP:S-1-22-2-0,ACL:${sidOf(samba.username)}:ALLOWED/0x0/${READ}`;
    await acls.setAcl("docs", "hr/salaries.txt", `${owner},ACL:${hrSid}:ALLOWED/0x0/${READ},ACL:S-1-1-0:DENIED/0x10/${READ}`);
    await acls.setAcl("docs", "deny-first.txt", `${owner},ACL:${sidOf(BOB.name)}:DENIED/0x0/${READ},ACL:${staffSid}:ALLOWED/0x0/${READ},ACL:S-1-1-0:ALLOWED/0x8/${READ}`);
    await acls.setAcl("docs", "alice-only.txt", `REVISION:1,OWNER:S-1-22-1-0,GROUP:S-1-22-2-0,ACL:${sidOf(ALICE.name)}:ALLOWED/0x0/${READ}`);
    await acls.setAcl("docs", "changing.txt", `${owner},ACL:S-1-1-0:ALLOWED/0x0/${READ}`);
    await acls.setAcl("team", "plan.txt", `${owner},ACL:S-1-1-0:ALLOWED/0x0/${READ}`);
    await acls.setAcl("docs", "write-only.txt", `${owner},ACL:S-1-1-0:ALLOWED/0x0/0x00120116`);
  });

  after(async () => {
    for (const c of connectors) await c.close();
    await acls?.close();
    await samba?.stop();
    rmSync(teamDir, { recursive: true, force: true });
  });

  test("a file's DACL equals what smbcacls shows, in order, inherit-only entries left out", async () => {
    const c = make();
    for (const path of ["hr/salaries.txt", "deny-first.txt", "write-only.txt", "readme.txt"]) {
      const { file } = await c.readPermissions(`docs/${path}`);
      assert.deepEqual(file, acesOf(await acls.showAcl("docs", path)), path);
    }
  });

  test("a share's permissions equal what sharesec set (NetrShareGetInfo level 502), deny entries first", async () => {
    acls.setShareAcl("team", `S-1-1-0:ALLOWED/0x0/READ,${sidOf(BOB.name)}:DENIED/0x0/FULL`);
    const shown = acesOf(acls.showShareAcl("team"));
    assert.equal(shown[0].kind, "deny", "sharesec stores deny entries first");
    // Samba 4.17 does not always tell share permissions to a plain account (Windows: to administrators only), so the source logs in as its admin here.
    const admin = make({ username: samba.adminUsername, password: samba.adminPassword });
    assert.deepEqual((await admin.readPermissions("team/plan.txt")).share, shown);
    assert.equal(acls.canRead(BOB.name, BOB.password, "team", "plan.txt"), false, "Samba refuses bob at the share");
    assert.equal(acls.canRead(ALICE.name, ALICE.password, "team", "plan.txt"), true);
    // A share without permissions of its own has Samba's default, Everyone.
    assert.deepEqual((await admin.readPermissions("docs/readme.txt")).share?.map((a) => a.sid), ["S-1-1-0"]);
  });

  test("Samba enforces those ACLs as the fixture says (the truth other tests compare with)", () => {
    assert.equal(acls.canRead(ALICE.name, ALICE.password, "docs", "hr/salaries.txt"), true);
    assert.equal(acls.canRead(BOB.name, BOB.password, "docs", "hr/salaries.txt"), false);
    assert.equal(acls.canRead(BOB.name, BOB.password, "docs", "deny-first.txt"), false);
    assert.equal(acls.canRead(ALICE.name, ALICE.password, "docs", "deny-first.txt"), true);
    assert.equal(acls.canRead(ALICE.name, ALICE.password, "docs", "write-only.txt"), false);
  });

  test("a file whose descriptor the source's account may not read is a ConnectorEntryError (a failed file)", async () => {
    await assert.rejects(make().readPermissions("docs/alice-only.txt"), (e: unknown) => e instanceof ConnectorEntryError && /Access denied: docs\/alice-only.txt/.test(e.message));
  });

  test("Samba 4.17's listing ChangeTime is the modification time: an ACL change does not move it (only reading the descriptor shows it)", async () => {
    const entry = async () => (await make().list("docs")).find((e) => e.name === "changing.txt")!;
    const before = await entry();
    const owner = `REVISION:1,OWNER:S-1-22-1-0,GROUP:S-1-22-2-0,ACL:${sidOf(samba.username)}:ALLOWED/0x0/${READ}`;
    await acls.setAcl("docs", "changing.txt", `${owner},ACL:${sidOf(BOB.name)}:DENIED/0x0/${READ},ACL:S-1-1-0:ALLOWED/0x0/${READ}`);
    const after = await entry();
    const onDisk = statSync(join(samba.shareDir("docs"), "changing.txt"));
    assert.ok(onDisk.ctimeMs > onDisk.mtimeMs, "the file's own ctime moved");
    // Measured: Samba answers ChangeTime from the file's mtime (Windows moves it with the descriptor).
    assert.equal(after.changedAt!.getTime(), before.changedAt!.getTime());
    assert.equal(after.modifiedAt.getTime(), before.modifiedAt.getTime());
    const file = (await make().readPermissions("docs/changing.txt")).file;
    assert.ok(file?.some((a) => a.kind === "deny" && a.sid === sidOf(BOB.name)), "the descriptor itself shows the change");
    assert.deepEqual(file, acesOf(await acls.showAcl("docs", "changing.txt")));
  });

  test("every listed entry carries its ChangeTime", async () => {
    const entries = await make().list("docs");
    assert.ok(entries.length > 0);
    for (const e of entries) assert.ok(e.changedAt instanceof Date && e.changedAt.getTime() > 0, e.path);
  });

  test("LookupNames and the groups equal rpcclient's answers", async () => {
    const identity = await make({ username: ALICE.name, password: ALICE.password }).identity();
    const look = acls.rpcclient(ALICE.name, ALICE.password, `lookupnames ${ALICE.name}`);
    assert.equal(identity.sid, /(S-1-[0-9-]+)/.exec(look)![1]);
    assert.equal(identity.account, `SLUICETEST\\${ALICE.name}`);
    const rid = identity.sid.split("-").pop();
    const domainSid = identity.sid.slice(0, identity.sid.lastIndexOf("-"));
    const groupRids = [...acls.rpcclient(ALICE.name, ALICE.password, `queryusergroups ${rid}`).matchAll(/group rid:\[0x([0-9a-f]+)\]/g)].map((m) => `${domainSid}-${Number.parseInt(m[1], 16)}`);
    const aliasRids = (domain: string, prefix: string) =>
      [...acls.rpcclient(ALICE.name, ALICE.password, `queryuseraliases ${domain} ${identity.sid}`).matchAll(/rid:\[0x([0-9a-f]+)\]/g)].map((m) => `${prefix}-${Number.parseInt(m[1], 16)}`);
    const expected = [...new Set([...groupRids, ...aliasRids("domain", domainSid), ...aliasRids("builtin", "S-1-5-32")])].sort();
    assert.deepEqual(identity.groupSids, expected);
    assert.ok(identity.groupSids.includes(hrSid) && identity.groupSids.includes(staffSid), "alice's mapped groups are among them");
    const names = new Map(identity.groups.map((g) => [g.sid, g.name]));
    assert.equal(names.get(hrSid), "SLUICETEST\\hr");
    // The source's own account resolves the same groups for alice (what each run does).
    assert.deepEqual(await make().resolveGroupSids(identity.sid), identity.groupSids);
  });

  test("a real reply over the DCE/RPC cap fails fast with a clear error, and the session goes on", async () => {
    const client = new Smb2Client({ host: samba.host, port: samba.port, serverName: "SLUICETEST", username: samba.username, password: samba.password, timeoutMs: SAMBA_TIMEOUT_MS });
    try {
      await assert.rejects(
        client.withPipe("srvsvc", SRVSVC, (pipe) => listSharesOn(pipe, "SLUICETEST"), { maxReplyBytes: 64 }),
        (e: unknown) => e instanceof Error && e.name === "DceRpcError" && /srvsvc: the reply is over 64 bytes; abandoned/.test(e.message),
      );
      const names = (await client.listShares()).map((s) => s.name);
      assert.ok(names.includes("docs"), names.join());
      // LookupNames of a name the server does not know: no SID, no error.
      assert.deepEqual(await client.withPipe("lsarpc", LSARPC, async (pipe) => lookupNames(pipe, await openPolicy(pipe), ["no-such-account"])), []);
    } finally {
      await client.close();
    }
  });
});
