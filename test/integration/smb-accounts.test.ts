import assert from "node:assert/strict";
import { describe, it } from "node:test";
import crypto from "node:crypto";
import { LINKS_PER_REQUEST, refreshLinksOfServer, sidsOfUser } from "../../server/accounts/smb-account-links";
import { KIND_ENTITIES } from "../../server/connectors/registry";
import { threadGroupResolver } from "../../server/connectors/smb/smb-check-thread";
import { openDatabase } from "../../server/data/data-source";
import { SmbAccountLink } from "../../server/data/entities/smb-account-link.entity";
import { User } from "../../server/data/entities/user.entity";
import { createGroup, signUp, type ApiResponse, type Request } from "../fixtures/http-client";
import { SAMBA_TIMEOUT_MS, startSamba, writeUnixGroups, type SambaServer } from "../fixtures/samba";
import { sambaAcls, type SambaAcls } from "../fixtures/samba-acls";
import { countRows } from "../fixtures/sluice-server";
import { useSluice } from "../fixtures/use-sluice";

/**
 * Linking Windows accounts (issue 33 item 4) against a real Samba: the login, the SID and groups
 * (rpcclient's answers are the truth), the 201/400/404/409/429 rules, no password in any answer or
 * log, and a group change on the server showing after refreshLinksOfServer (through the check threads' resolver, in batches).
 */

const ALICE = { name: "alice", password: "Al1ce-Passw0rd!" };
const BOB = { name: "bob", password: "B0b-Passw0rd!" };
const CAROL = { name: "carol", password: "Car0l-Passw0rd!" };
/** Only the 429 test signs in as erin, so its failures count against nobody else. */
const ERIN = { name: "erin", password: "Er1n-Passw0rd!" };
const USERS = [ALICE, BOB, CAROL, ERIN];
const GROUPS = { hr: [ALICE.name], staff: [ALICE.name, BOB.name] };

describe("Windows account links", () => {
  let samba: SambaServer;
  let acls: SambaAcls;
  let hrSid: string;
  let staffSid: string;
  const owner = { token: "", userId: "", sourceId: "", plainSourceId: "" };
  const responses: ApiResponse[] = [];
  const sluice = useSluice({
    env: async () => {
      samba = await startSamba({ ntAcls: true, users: USERS, unixGroups: GROUPS });
      acls = await sambaAcls(samba);
      hrSid = acls.mapGroup("hr");
      staffSid = acls.mapGroup("staff");
      return { SMB_TIMEOUT_MS: String(SAMBA_TIMEOUT_MS) };
    },
    setUp: async (s) => {
      const { token } = await signUp(s.request, "links");
      owner.token = token;
      owner.userId = (await s.request("GET", "/users/me", { token })).body.id;
      const groupId = await createGroup(s.request, token);
      owner.sourceId = (await addSource(s.request, token, groupId, true)).body.data_source.id;
      owner.plainSourceId = (await addSource(s.request, token, groupId, false)).body.data_source.id;
    },
  });
  const request: Request = async (method, path, opts) => {
    const res = await sluice.request(method, path, opts);
    responses.push(res);
    return res;
  };
  const addSource = (r: Request, token: string, groupId: string, sourcePermissions: boolean) =>
    r("POST", `/data_sources/smb/${groupId}`, {
      token,
      body: {
        data_source: { data_source_name: `share ${sourcePermissions ? "with" : "without"} permissions ${Math.random()}` },
        smb_source: {
          remote_system_username: samba.username,
          remote_smb_password: samba.password,
          remote_system_name: "localhost",
          default_ip: "127.0.0.1",
          port: samba.port,
          ...(sourcePermissions ? { source_permissions: true } : {}),
        },
      },
    }).then((res) => {
      if (res.status !== 201) throw new Error(`source creation: ${res.status} ${res.text}`);
      return res;
    });
  const link = (token: string, username: string, password: string, dataSourceId = owner.sourceId) =>
    request("POST", "/users/me/smb_accounts", { token, body: { data_source_id: dataSourceId, username, password } });
  /** A new Sluice user with a permission source of their own on the same server. */
  const userWithSource = async (prefix: string) => {
    const { token } = await signUp(request, prefix);
    const groupId = await createGroup(request, token);
    return { token, sourceId: (await addSource(request, token, groupId, true)).body.data_source.id as string };
  };
  const rpcSidOf = (name: string) => /(S-1-[0-9-]+)/.exec(acls.rpcclient(samba.username, samba.password, `lookupnames ${name}`))![1];

  it("an SMB source says source_permissions in its creation answer and in GET /data_sources (default false)", async () => {
    const listed = await request("GET", "/data_sources", { token: owner.token });
    const byId = new Map(listed.body.map((s: { id: string; smb_source: { source_permissions: boolean } }) => [s.id, s.smb_source]));
    assert.equal((byId.get(owner.sourceId) as { source_permissions: boolean }).source_permissions, true);
    assert.equal((byId.get(owner.plainSourceId) as { source_permissions: boolean }).source_permissions, false);
    const bad = await request("POST", `/data_sources/smb/${"0".repeat(8)}-0000-0000-0000-000000000000`, {
      token: owner.token,
      body: { data_source: { data_source_name: "x" }, smb_source: { remote_system_username: "u", remote_smb_password: "p", remote_system_name: "h", source_permissions: "yes" } },
    });
    assert.equal(bad.status, 422);
    assert.ok(bad.body.errors.some((e: { field: string }) => /source_permissions/.test(e.field)), bad.text);
  });

  it("links an account: 201 with its SID, its groups (as rpcclient answers) and their names", async () => {
    const res = await link(owner.token, ALICE.name, ALICE.password);
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(Object.keys(res.body).sort(), ["account", "checked_at", "data_source_id", "group_sids", "groups", "id", "server", "sid"]);
    assert.equal(res.body.sid, rpcSidOf(ALICE.name));
    assert.equal(res.body.account, `SLUICETEST\\${ALICE.name}`);
    assert.equal(res.body.data_source_id, owner.sourceId);
    assert.equal(res.body.server, "localhost");
    const rid = res.body.sid.split("-").pop();
    const domainSid = res.body.sid.slice(0, res.body.sid.lastIndexOf("-"));
    const rpcGroups = [...acls.rpcclient(samba.username, samba.password, `queryusergroups ${rid}`).matchAll(/group rid:\[0x([0-9a-f]+)\]/g)].map(
      (m) => `${domainSid}-${Number.parseInt(m[1], 16)}`,
    );
    for (const sid of rpcGroups) assert.ok(res.body.group_sids.includes(sid), `${sid} in ${res.body.group_sids}`);
    assert.ok(res.body.group_sids.includes(hrSid) && res.body.group_sids.includes(staffSid));
    assert.deepEqual(
      res.body.groups.map((g: { sid: string }) => g.sid),
      res.body.group_sids,
    );
    assert.equal(res.body.groups.find((g: { sid: string }) => g.sid === hrSid).name, "SLUICETEST\\hr");
    const listed = await request("GET", "/users/me/smb_accounts", { token: owner.token });
    assert.equal(listed.status, 200);
    assert.deepEqual(listed.body, [res.body]);
  });

  it("DOMAIN\\user is accepted, and linking again on the same server replaces the link", async () => {
    const { token, sourceId } = await userWithSource("domain-user");
    const first = await link(token, `SLUICETEST\\${BOB.name}`, BOB.password, sourceId);
    assert.equal(first.status, 201, first.text);
    assert.equal(first.body.account, `SLUICETEST\\${BOB.name}`);
    const again = await link(token, BOB.name, BOB.password, sourceId);
    assert.equal(again.status, 201, again.text);
    const listed = await request("GET", "/users/me/smb_accounts", { token });
    assert.deepEqual(listed.body.map((l: { id: string }) => l.id), [again.body.id]);
    await request("DELETE", `/users/me/smb_accounts/${again.body.id}`, { token });
  });

  it("a wrong password: 400 with the SMB detail, nothing stored", async () => {
    const before = await countRows(sluice.server, "smb_account_links");
    const res = await link(owner.token, CAROL.name, "not-her-password");
    assert.equal(res.status, 400, res.text);
    assert.match(res.body.detail, /refused this Windows account.*STATUS_LOGON_FAILURE/);
    assert.equal(await countRows(sluice.server, "smb_account_links"), before);
  });

  it("a source the caller cannot see answers 404 exactly like a random id", async () => {
    const { token } = await signUp(request, "outsider");
    const hidden = await link(token, CAROL.name, CAROL.password);
    const random = await link(token, CAROL.name, CAROL.password, "6f1c7a8e-0d9b-4c55-9f43-1b2a3c4d5e6f");
    assert.equal(hidden.status, 404);
    assert.deepEqual(hidden.body, random.body);
    assert.equal(random.status, 404);
  });

  it("an account another Sluice user linked answers 409", async () => {
    const { token, sourceId } = await userWithSource("second");
    const res = await link(token, ALICE.name, ALICE.password, sourceId);
    assert.equal(res.status, 409, res.text);
    assert.match(res.body.detail, /already linked by another Sluice user/);
    assert.deepEqual((await request("GET", "/users/me/smb_accounts", { token })).body, []);
  });

  it("five failed sign-ins as one Windows account in 15 minutes, then 429 with Retry-After, however the name is typed", async () => {
    for (let i = 0; i < 5; i++) assert.equal((await link(owner.token, i % 2 ? `SLUICETEST\\${ERIN.name}` : ERIN.name, `wrong-${i}`)).status, 400);
    const refused = await link(owner.token, ERIN.name.toUpperCase(), ERIN.password);
    assert.equal(refused.status, 429, refused.text);
    assert.ok(Number(refused.headers.get("retry-after")) > 0);
    // Another account is not held back by erin's count.
    const carol = await userWithSource("carol");
    assert.equal((await link(carol.token, CAROL.name, CAROL.password, carol.sourceId)).status, 201);
  });

  it("DELETE: another user's link is 404; one's own is removed", async () => {
    const { token } = await signUp(request, "stranger");
    const mine = (await request("GET", "/users/me/smb_accounts", { token: owner.token })).body[0];
    assert.equal((await request("DELETE", `/users/me/smb_accounts/${mine.id}`, { token })).status, 404);
    assert.equal((await request("DELETE", "/users/me/smb_accounts/not-an-id", { token })).status, 404);
    assert.equal((await request("GET", "/users/me/smb_accounts", { token: owner.token })).body.length, 1);
  });

  it("sidsOfUser: the link's SIDs, Everyone and Authenticated Users; a person with no link has only Everyone", async () => {
    const { server } = sluice;
    const db = await openDatabase({ dataDir: server.dataDir, databaseUrl: server.databaseUrl, entities: KIND_ENTITIES });
    try {
      const mine = (await request("GET", "/users/me/smb_accounts", { token: owner.token })).body[0];
      const sids = await sidsOfUser(db, owner.userId, "LOCALHOST");
      assert.deepEqual(new Set(sids), new Set([mine.sid, ...mine.group_sids, "S-1-1-0", "S-1-5-11"]));
      assert.deepEqual(await sidsOfUser(db, owner.userId, "another-server"), ["S-1-1-0"]);
    } finally {
      await db.destroy();
    }
  });

  it("a group change on the server shows in group_sids after refreshLinksOfServer (the source's account, on check threads, 16 accounts a request)", async () => {
    // Accounts the server does not have (made-up RIDs in its domain) go beside alice's and carol's: they resolve to no groups.
    const mine = (await request("GET", "/users/me/smb_accounts", { token: owner.token })).body[0];
    const domainSid = mine.sid.slice(0, mine.sid.lastIndexOf("-"));
    const ghosts = Array.from({ length: LINKS_PER_REQUEST + 2 }, (_, i) => ({ userId: crypto.randomUUID(), sid: `${domainSid}-${70_000 + i}` }));
    writeUnixGroups(samba.rootDir, { ...GROUPS, hr: [] });
    const { server } = sluice;
    await server.stop();
    const db = await openDatabase({ dataDir: server.dataDir, databaseUrl: server.databaseUrl, entities: KIND_ENTITIES });
    const resolver = threadGroupResolver({ host: "127.0.0.1", port: samba.port, serverName: "localhost", username: samba.username, password: samba.password });
    const batches: number[] = [];
    const counting = {
      resolveGroups: (sids: string[]) => {
        batches.push(sids.length);
        return resolver.resolveGroups(sids);
      },
    };
    try {
      const links = await db.manager.count(SmbAccountLink, { where: { server: "localhost" } });
      for (const ghost of ghosts) {
        const now = new Date();
        await db.manager.insert(User, { id: ghost.userId, email: `${ghost.userId}@example.com`, createdAt: now, updatedAt: now });
        await db.manager.insert(SmbAccountLink, {
          id: crypto.randomUUID(),
          userId: ghost.userId,
          dataSourceId: null,
          server: "localhost",
          account: `SLUICETEST\\gone-${ghost.sid}`,
          sid: ghost.sid,
          groupSidsJson: JSON.stringify([staffSid]),
          groupNamesJson: JSON.stringify([{ sid: staffSid, name: "SLUICETEST\\staff" }]),
          checkedAt: now,
        });
      }
      assert.equal(await refreshLinksOfServer(db, counting, "localhost"), 1 + ghosts.length, "alice's link and every ghost's changed; carol's did not");
      const total = links + ghosts.length;
      assert.deepEqual(batches, [LINKS_PER_REQUEST, total - LINKS_PER_REQUEST], "16 accounts a request");
      for (const ghost of ghosts) assert.equal((await db.manager.findOneByOrFail(SmbAccountLink, { sid: ghost.sid })).groupSidsJson, "[]");
    } finally {
      for (const ghost of ghosts) {
        await db.manager.delete(SmbAccountLink, { userId: ghost.userId });
        await db.manager.delete(User, { id: ghost.userId });
      }
      await db.destroy();
    }
    await sluice.restart();
    const links = (await request("GET", "/users/me/smb_accounts", { token: owner.token })).body;
    assert.equal(links.length, 1);
    assert.equal(links[0].group_sids.includes(hrSid), false);
    assert.equal(links[0].group_sids.includes(staffSid), true);
    assert.equal(links[0].groups.find((g: { sid: string }) => g.sid === staffSid).name, "SLUICETEST\\staff");
  });

  it("no password in any answer or in the server's log", () => {
    const output = sluice.server.output();
    for (const { password } of USERS) {
      for (const r of responses) assert.ok(!r.text.includes(password), "a password in an answer");
      assert.ok(!output.includes(password), "a password in the log");
    }
    assert.ok(!output.includes("not-her-password") && !output.includes("wrong-1"));
  });

  it("stops the test servers", async () => {
    await acls.close();
    await samba.stop();
  });
});
