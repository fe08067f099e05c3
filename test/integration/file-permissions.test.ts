import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, describe, it } from "node:test";
import { startFakeOllama, type FakeOllama } from "../fixtures/fake-ollama";
import { createGroup, signUp, waitForJobEnd } from "../fixtures/http-client";
import { SAMBA_TIMEOUT_MS, startSamba, writeUnixGroups, type SambaServer } from "../fixtures/samba";
import { sambaAcls, type SambaAcls } from "../fixtures/samba-acls";
import { tempDir } from "../fixtures/sluice-server";
import { postSse } from "../fixtures/sse-client";
import { useSluice } from "../fixtures/use-sluice";

/**
 * Issue 33 end to end: a real Samba with NT ACLs, the real server over HTTP, no fake connector.
 * For every (account, file) pair, Samba's own answer (`smbclient get` as the account) is the truth;
 * what each Sluice user finds (keyword search, the documents list, `document_count`, the passages an
 * ask sends the model) must equal it exactly, next to a plain folder source in the same collection
 * whose documents every member sees. A person with no link is compared with Samba's guest (Everyone,
 * not Authenticated Users). Phases: the first run; an ACL change (no content read); a group change
 * on the server; an unlink. The 404/409/429 rules of the link endpoints, and no password in any
 * answer or log, are in smb-accounts.test.ts and not repeated here.
 *
 * The source logs in as the test Samba's administrator (root): it may read every file and its
 * descriptor, and Samba 4.17 tells share permissions reliably only to it (decisions 0301, 0303).
 */

const READ = "0x001200a9";
const WRITE_ONLY = "0x00120116";
const WORD = "harbour";
const ACCOUNTS = {
  alice: { name: "alice", password: "Al1ce-Passw0rd!" },
  bob: { name: "bob", password: "B0b-Passw0rd!" },
  carol: { name: "carol", password: "Car0l-Passw0rd!" },
  dave: { name: "dave", password: "D4ve-Passw0rd!" },
};
type Person = keyof typeof ACCOUNTS;
const PEOPLE = Object.keys(ACCOUNTS) as Person[];
const GROUPS = { hr: ["alice", "carol"], board: ["bob", "dave"], users: [] };

/** Each file's text names it, so a passage sent to the model tells which file it came from. */
const FILES: Record<string, string> = {
  "docs/hr/salaries.txt": "salaries",
  "docs/board/minutes.txt": "minutes",
  "docs/deny-first.txt": "denyfirst",
  "docs/explicit-allow.txt": "explicitallow",
  "docs/write-only.txt": "writeonly",
  "docs/canteen.txt": "canteen",
  "docs/changing.txt": "changing",
  "docs/inherit-only.txt": "inheritonly",
  "docs/generic-read.txt": "genericread",
  "docs/nobody.txt": "nobodyfile",
  "docs/authenticated.txt": "authenticatedfile",
  "docs/builtin-users.txt": "builtinusers",
  "docs/no-dacl.txt": "nodacl",
  "docs/deny-write.txt": "denywrite",
  "docs/read-data-only.txt": "readdataonly",
  "docs/split-grant.txt": "splitgrant",
  "docs/owner-reads.txt": "ownerreads",
  "docs/deny-sync.txt": "denysync",
  "team/plan.txt": "teamplan",
};
const PLAIN_FILES = { "plain-notes.txt": "plainnotes" };
const textOf = (marker: string) => `The ${WORD} file ${marker}: what the ${marker} file holds.\n`;
const markerOf = (p: string) => FILES[p] ?? PLAIN_FILES[p as keyof typeof PLAIN_FILES];

describe("file-server permissions end to end, against Samba's own access check", () => {
  let samba: SambaServer;
  let acls: SambaAcls;
  let fake: FakeOllama;
  const sids: Record<string, string> = {};
  const teamDir = tempDir("sluice-perm-team-");
  const plainDir = fs.realpathSync(tempDir("sluice-perm-plain-"));
  const owner = { token: "", groupId: "", collectionId: "", permPipeline: "", plainPipeline: "", sourceId: "" };
  const tokens = {} as Record<Person, string>;
  const linkIds = {} as Record<Person, string>;
  /** Who is linked: a person without a link has Everyone only, so Samba's truth for them is its guest (an unknown account name). */
  const linked = new Set<Person>();

  const sluice = useSluice({
    env: async () => {
      fs.chmodSync(teamDir, 0o755); // smbd opens files as the connecting user's uid
      fs.writeFileSync(path.join(teamDir, "plan.txt"), textOf(FILES["team/plan.txt"]));
      for (const [name, marker] of Object.entries(PLAIN_FILES)) fs.writeFileSync(path.join(plainDir, name), textOf(marker));
      samba = await startSamba({
        ntAcls: true,
        users: Object.values(ACCOUNTS),
        unixGroups: GROUPS,
        extraShares: { team: teamDir },
        // Samba's guest is the truth for a person with no link: Everyone, without Authenticated Users.
        globalOptions: { "map to guest": "Bad User" },
        shareOptions: { docs: { "guest ok": "yes" }, team: { "guest ok": "yes" } },
        populate: (docs) => {
          // Only this test's files: the standard tree would carry Samba's default ACLs, which say nothing here.
          for (const entry of fs.readdirSync(docs)) fs.rmSync(path.join(docs, entry), { recursive: true, force: true });
          for (const [p, marker] of Object.entries(FILES)) {
            if (!p.startsWith("docs/")) continue;
            const full = path.join(docs, p.slice("docs/".length));
            fs.mkdirSync(path.dirname(full), { recursive: true, mode: 0o755 });
            fs.writeFileSync(full, textOf(marker));
          }
        },
      });
      acls = await sambaAcls(samba);
      sids.hr = acls.mapGroup("hr");
      sids.board = acls.mapGroup("board");
      for (const name of PEOPLE) sids[name] = /(S-1-[0-9-]+)/.exec(acls.rpcclient(samba.username, samba.password, `lookupnames ${name}`))![1];
      // A standalone Samba's BUILTIN\Users holds no one unless told (Windows puts Authenticated Users in it): here, dave.
      acls.addAliasMember("S-1-5-32-545", "users", sids.dave);
      const sd = (...aces: string[]) => ["REVISION:1,OWNER:S-1-22-1-0,GROUP:S-1-22-2-0", ...aces.map((a) => `ACL:${a}`)].join(",");
      await acls.setAcl("docs", "hr/salaries.txt", sd(`${sids.hr}:ALLOWED/0x0/${READ}`));
      await acls.setAcl("docs", "board/minutes.txt", sd(`${sids.board}:ALLOWED/0x0/${READ}`));
      // Deny before allow: bob is on the board, his own deny comes first.
      await acls.setAcl("docs", "deny-first.txt", sd(`${sids.bob}:DENIED/0x0/${READ}`, `${sids.board}:ALLOWED/0x0/${READ}`));
      // An explicit allow before an inherited deny: carol is in hr and reads it; alice does not.
      await acls.setAcl("docs", "explicit-allow.txt", sd(`${sids.carol}:ALLOWED/0x0/${READ}`, `${sids.hr}:DENIED/0x10/${READ}`));
      // Write-only grants hr nothing; the board reads.
      await acls.setAcl("docs", "write-only.txt", sd(`${sids.hr}:ALLOWED/0x0/${WRITE_ONLY}`, `${sids.board}:ALLOWED/0x0/${READ}`));
      await acls.setAcl("docs", "canteen.txt", sd(`S-1-1-0:ALLOWED/0x0/${READ}`));
      await acls.setAcl("docs", "changing.txt", sd(`S-1-1-0:ALLOWED/0x0/${READ}`));
      // An inherit-only entry does not apply to the file itself: only hr reads it.
      await acls.setAcl("docs", "inherit-only.txt", sd(`S-1-1-0:ALLOWED/0x8/${READ}`, `${sids.hr}:ALLOWED/0x0/${READ}`));
      // GENERIC_READ in the mask, as Windows stores some entries.
      await acls.setAcl("docs", "generic-read.txt", sd(`${sids.board}:ALLOWED/0x0/0x80000000`));
      await acls.setAcl("docs", "authenticated.txt", sd(`S-1-5-11:ALLOWED/0x0/${READ}`));
      await acls.setAcl("docs", "builtin-users.txt", sd(`S-1-5-32-545:ALLOWED/0x0/${READ}`));
      // smbcacls -S with no entries stores no DACL at all (a NULL DACL): everyone reads.
      await acls.setAcl("docs", "no-dacl.txt", sd());
      // A deny that does not mention reading decides nothing about it.
      await acls.setAcl("docs", "deny-write.txt", sd(`${sids.hr}:DENIED/0x0/0x00000116`, `${sids.hr}:ALLOWED/0x0/${READ}`));
      // FILE_READ_DATA alone: a read asks for more (FILE_READ_EA, READ_CONTROL, SYNCHRONIZE), so Samba refuses it (decision 0480).
      await acls.setAcl("docs", "read-data-only.txt", sd(`${sids.board}:ALLOWED/0x0/0x00000001`));
      // What a read needs adds up across entries: FILE_READ_DATA for the board, the rest for Everyone.
      await acls.setAcl("docs", "split-grant.txt", sd(`${sids.board}:ALLOWED/0x0/0x00000001`, "S-1-1-0:ALLOWED/0x0/0x00120088"));
      // No READ_CONTROL in alice's entry, but she owns the file, and an owner has it without one.
      await acls.setAcl("docs", "owner-reads.txt", `REVISION:1,OWNER:${sids.alice},GROUP:S-1-22-2-0,ACL:${sids.alice}:ALLOWED/0x0/0x00100009,ACL:${sids.carol}:ALLOWED/0x0/0x00100009`);
      // A deny of SYNCHRONIZE alone refuses a read (an open asks for it).
      await acls.setAcl("docs", "deny-sync.txt", sd(`${sids.bob}:DENIED/0x0/0x00100000`, `${sids.board}:ALLOWED/0x0/${READ}`));
      // A DACL naming only another account: no entry for the readers, so no one (but the source) reads it.
      await acls.setAcl("docs", "nobody.txt", sd(`S-1-5-32-544:ALLOWED/0x0/${READ}`));
      // The file lets Everyone read; the share denies bob.
      await acls.setAcl("team", "plan.txt", sd(`S-1-1-0:ALLOWED/0x0/${READ}`));
      acls.setShareAcl("team", `S-1-1-0:ALLOWED/0x0/READ,${sids.bob}:DENIED/0x0/FULL`);
      fake = await startFakeOllama();
      return { SMB_TIMEOUT_MS: String(SAMBA_TIMEOUT_MS), FOLDER_SOURCE_ROOTS: plainDir, OLLAMA_HOST: fake.url };
    },
    setUp: async (s) => {
      owner.token = (await signUp(s.request, "perm-owner")).token;
      owner.groupId = await createGroup(s.request, owner.token);
      const created = await s.request("POST", `/data_sources/smb/${owner.groupId}`, {
        token: owner.token,
        body: {
          data_source: { data_source_name: "Departments" },
          smb_source: {
            remote_system_username: samba.adminUsername,
            remote_smb_password: samba.adminPassword,
            remote_system_name: "localhost",
            default_ip: "127.0.0.1",
            port: samba.port,
            source_permissions: true,
          },
        },
      });
      assert.equal(created.status, 201, created.text);
      assert.equal(created.body.smb_source.source_permissions, true);
      owner.sourceId = created.body.data_source.id;
      owner.collectionId = created.body.pipeline.collection_id;
      owner.permPipeline = created.body.pipeline.id;
      // The plain source's own collection is left empty; its second pipeline feeds the permission source's collection.
      const plain = await s.request("POST", `/data_sources/folder/${owner.groupId}`, {
        token: owner.token,
        body: { data_source: { data_source_name: "Plain notes" }, folder_source: { path: plainDir } },
      });
      assert.equal(plain.status, 201, plain.text);
      const pipeline = await s.request("POST", "/data_pipelines", {
        token: owner.token,
        body: { name: "plain into departments", description: "", data_source_id: plain.body.data_source.id, collection_id: owner.collectionId },
      });
      assert.equal(pipeline.status, 201, pipeline.text);
      owner.plainPipeline = pipeline.body.id;
      for (const person of PEOPLE) {
        const { email, token } = await signUp(s.request, `perm-${person}`);
        tokens[person] = token;
        const added = await s.request("PUT", `/user_groups/${owner.groupId}/members/${email}`, { token: owner.token });
        assert.ok(added.status < 300, added.text);
      }
      const pulled = await postSse(`${s.server.api}/models`, owner.token, { model_name: "tinyllama" });
      assert.equal(pulled.events.at(-1)?.status, "completed", JSON.stringify(pulled.events.slice(-2)));
    },
  });
  after(async () => {
    await acls?.close();
    await samba?.stop();
    await fake?.close();
    fs.rmSync(teamDir, { recursive: true, force: true });
    fs.rmSync(plainDir, { recursive: true, force: true });
  });

  const request = sluice.request;
  const ingest = async (pipelineId: string) => {
    const res = await request("POST", `/data_pipelines/${pipelineId}/ingest`, { token: owner.token });
    assert.equal(res.status, 202, res.text);
    const done = await waitForJobEnd(request, owner.token, pipelineId);
    assert.equal(done.status, "completed", JSON.stringify(done));
    return done;
  };

  /** Samba's answer: the files each person's Windows account may fetch (Samba's guest for a person with no link). */
  const truth = (person: Person | "owner", paths = Object.keys(FILES)) => {
    const account = person !== "owner" && linked.has(person) ? ACCOUNTS[person] : { name: "no-such-account", password: "guest" };
    const readable = paths.filter((p) => {
      const [share, ...rest] = p.split("/");
      return acls.canRead(account.name, account.password, share, rest.join("/"));
    });
    return [...readable, ...Object.keys(PLAIN_FILES)].sort();
  };
  const tokenOf = (person: Person | "owner") => (person === "owner" ? owner.token : tokens[person]);

  /** The product's answer, four ways: search hits, the documents list (and its total), document_count, an ask's passages. */
  const productView = async (person: Person | "owner") => {
    const token = tokenOf(person);
    const search = await request("GET", `/collections/${owner.collectionId}/search?q=${WORD}&mode=keyword&top_k=100`, { token });
    assert.equal(search.status, 200, search.text);
    const list = await request("GET", `/collections/${owner.collectionId}/documents`, { token });
    assert.equal(list.status, 200, list.text);
    const collections = await request("GET", "/collections", { token });
    const count = (collections.body as Array<{ id: string; document_count: number }>).find((c) => c.id === owner.collectionId)?.document_count;
    const before = fake.chats.length;
    const asked = await postSse(`${sluice.server.api}/collections/${owner.collectionId}/ask`, token, { question: `What does each ${WORD} file hold?`, model: "tinyllama", top_k: 20 });
    assert.equal(asked.status, 200, asked.raw);
    const sent = fake.chats
      .slice(before)
      .flatMap((chat) => chat.messages.map((m) => m.content))
      .join("\n");
    const allPaths = [...Object.keys(FILES), ...Object.keys(PLAIN_FILES)];
    return {
      search: [...new Set((search.body.results as Array<{ path: string }>).map((r) => r.path))].sort(),
      documents: (list.body.documents as Array<{ path: string }>).map((d) => d.path).sort(),
      total: list.body.total as number,
      count,
      sources: [...new Set((asked.events[0].sources as Array<{ path: string }>).map((s) => s.path))].sort(),
      passages: allPaths.filter((p) => sent.includes(`${markerOf(p)} file holds`)).sort(),
    };
  };
  const assertMatchesSamba = async (person: Person | "owner") => {
    const expected = truth(person);
    const view = await productView(person);
    const n = expected.length;
    assert.deepEqual(view, { search: expected, documents: expected, total: n, count: n, sources: expected, passages: expected }, `${person}: the product and Samba disagree`);
    return expected;
  };

  it("a first run of both sources: each file indexed once with its permissions, the plain one without", async () => {
    const perm = await ingest(owner.permPipeline);
    assert.equal(perm.files_added, Object.keys(FILES).length, JSON.stringify(perm.errors));
    assert.equal(perm.entities_failed, 0, JSON.stringify(perm.errors));
    const plain = await ingest(owner.plainPipeline);
    assert.equal(plain.files_added, 1);
  });

  it("each person links their Windows account through the API", async () => {
    for (const person of PEOPLE) {
      const res = await request("POST", "/users/me/smb_accounts", { token: tokens[person], body: { data_source_id: owner.sourceId, username: person, password: ACCOUNTS[person].password } });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.sid, sids[person]);
      assert.ok(res.body.group_sids.includes(sids[person === "alice" || person === "carol" ? "hr" : "board"]), res.text);
      linkIds[person] = res.body.id;
      linked.add(person);
    }
  });

  it("groups, deny before allow, explicit allow before inherited deny, write-only, Everyone, a share that denies a member: each person sees what Samba lets them read", async () => {
    const seen = {} as Record<Person, string[]>;
    for (const person of PEOPLE) seen[person] = await assertMatchesSamba(person);
    // The cases the ACLs were written for, so a fixture that stops setting them shows here.
    assert.ok(seen.alice.includes("docs/hr/salaries.txt") && !seen.bob.includes("docs/hr/salaries.txt"), "groups");
    assert.ok(!seen.bob.includes("docs/deny-first.txt") && seen.dave.includes("docs/deny-first.txt"), "deny before allow");
    assert.ok(seen.carol.includes("docs/explicit-allow.txt") && !seen.alice.includes("docs/explicit-allow.txt"), "explicit allow before inherited deny");
    assert.ok(!seen.alice.includes("docs/write-only.txt") && seen.bob.includes("docs/write-only.txt"), "write-only grants nothing");
    for (const person of PEOPLE) assert.ok(seen[person].includes("docs/canteen.txt") && seen[person].includes("plain-notes.txt"), "Everyone, and the plain source");
    assert.ok(!seen.bob.includes("team/plan.txt") && seen.dave.includes("team/plan.txt"), "the share denies bob");
    assert.ok(seen.alice.includes("docs/inherit-only.txt") && !seen.bob.includes("docs/inherit-only.txt"), "an inherit-only entry does not apply to the file");
    assert.ok(seen.bob.includes("docs/generic-read.txt") && !seen.alice.includes("docs/generic-read.txt"), "GENERIC_READ reads");
    for (const person of PEOPLE) assert.ok(!seen[person].includes("docs/nobody.txt"), "no entry for the person: no read");
    for (const person of PEOPLE) assert.ok(seen[person].includes("docs/authenticated.txt"), "a linked account is an authenticated user");
    for (const person of PEOPLE) assert.ok(seen[person].includes("docs/no-dacl.txt"), "a NULL DACL grants everyone");
    assert.ok(seen.alice.includes("docs/deny-write.txt") && !seen.bob.includes("docs/deny-write.txt"), "a deny of writing decides nothing about reading");
    // BUILTIN\Users as the server says (a product that gave every linked person Users showed alice this file).
    assert.ok(seen.dave.includes("docs/builtin-users.txt") && !seen.alice.includes("docs/builtin-users.txt"), "BUILTIN\\Users only where the server puts the account");
    // Decision 0480: the whole access a read asks for, granted across entries, as Samba decides.
    for (const person of PEOPLE) assert.ok(!seen[person].includes("docs/read-data-only.txt"), "FILE_READ_DATA alone does not read");
    assert.ok(seen.bob.includes("docs/split-grant.txt") && !seen.alice.includes("docs/split-grant.txt"), "a read's bits add up across entries");
    assert.ok(seen.alice.includes("docs/owner-reads.txt") && !seen.carol.includes("docs/owner-reads.txt"), "the owner has READ_CONTROL without an entry");
    assert.ok(seen.dave.includes("docs/deny-sync.txt") && !seen.bob.includes("docs/deny-sync.txt"), "a deny of SYNCHRONIZE refuses a read");
  });

  it("a person with no link sees only what Everyone may read", async () => {
    const seen = await assertMatchesSamba("owner");
    assert.deepEqual(seen, ["docs/canteen.txt", "docs/changing.txt", "docs/no-dacl.txt", "plain-notes.txt", "team/plan.txt"], "not docs/authenticated.txt");
  });

  it("an ACL change: the next run updates who may read the file without reading its content, counted", async () => {
    const sd = `REVISION:1,OWNER:S-1-22-1-0,GROUP:S-1-22-2-0,ACL:${sids.alice}:ALLOWED/0x0/${READ}`;
    await acls.setAcl("docs", "changing.txt", sd);
    const run = await ingest(owner.permPipeline);
    assert.deepEqual(
      [run.files_permissions_changed, run.files_unchanged, run.files_changed, run.files_added, run.entities_failed],
      [1, Object.keys(FILES).length, 0, 0, 0],
      JSON.stringify(run),
    );
    for (const person of [...PEOPLE, "owner" as const]) {
      const seen = await assertMatchesSamba(person);
      assert.equal(seen.includes("docs/changing.txt"), person === "alice", person);
    }
  });

  it("a group change on the server: dave taken out of the board loses the board's files at the next run", async () => {
    const daveBefore = truth("dave");
    writeUnixGroups(samba.rootDir, { ...GROUPS, board: ["bob"] });
    const run = await ingest(owner.permPipeline);
    assert.equal(run.files_permissions_changed, 0, "no file's ACL moved");
    const daveAfter = await assertMatchesSamba("dave");
    assert.ok(daveBefore.includes("docs/board/minutes.txt") && !daveAfter.includes("docs/board/minutes.txt"), "dave lost the board's minutes");
    const links = await request("GET", "/users/me/smb_accounts", { token: tokens.dave });
    assert.equal(links.body[0].group_sids.includes(sids.board), false, "the link shows the new groups");
    await assertMatchesSamba("bob");
  });

  it("unlinking: carol's Windows account no longer applies, she sees what Everyone may read", async () => {
    const res = await request("DELETE", `/users/me/smb_accounts/${linkIds.carol}`, { token: tokens.carol });
    assert.ok(res.status === 204 || res.status === 200, res.text);
    linked.delete("carol");
    const seen = await assertMatchesSamba("carol");
    assert.deepEqual(seen, ["docs/canteen.txt", "docs/no-dacl.txt", "plain-notes.txt", "team/plan.txt"]);
  });
});
