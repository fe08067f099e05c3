import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { EVERYONE_SID, FILE_READ_DATA, GENERIC_ALL, GENERIC_READ, mayRead } from "../../server/access/windows-acl";
import { aclHash, normaliseAcl, parseAcl, type Ace, type Dacl } from "../../server/search/stored-acl";

const ALICE = "S-1-5-21-1-2-3-1001";
const HR = "S-1-5-21-1-2-3-2001";
const AUTHENTICATED = "S-1-5-11";
const FILE_WRITE_DATA = 0x2;
const MAXIMUM_ALLOWED = 0x02000000;
/** What Windows' "Read" permission sets on a file. */
const READ = 0x120089;

const allow = (sid: string, mask = READ, inherited = false): Ace => ({ kind: "allow", inherited, mask, sid });
const deny = (sid: string, mask = READ, inherited = false): Ace => ({ kind: "deny", inherited, mask, sid });
const open: Dacl = [allow(EVERYONE_SID)];
const alice = new Set([ALICE, HR, EVERYONE_SID, AUTHENTICATED]);
const nobody = new Set([EVERYONE_SID]);

describe("mayRead: decided as Windows decides", () => {
  it("a deny before an allow wins, even when a group allows", () => {
    assert.equal(mayRead({ file: [deny(ALICE), allow(HR)], share: open }, alice), false);
  });

  it("an explicit allow before an inherited deny wins", () => {
    assert.equal(mayRead({ file: [allow(ALICE), deny(HR, READ, true)], share: open }, alice), true);
  });

  it("an entry that allows only writing grants nothing, and a later read entry decides", () => {
    assert.equal(mayRead({ file: [allow(ALICE, FILE_WRITE_DATA)], share: open }, alice), false);
    assert.equal(mayRead({ file: [allow(ALICE, FILE_WRITE_DATA), allow(HR)], share: open }, alice), true);
    // A write-only deny does not stop reading either.
    assert.equal(mayRead({ file: [deny(ALICE, FILE_WRITE_DATA), allow(HR)], share: open }, alice), true);
  });

  it("FILE_READ_DATA, GENERIC_READ and GENERIC_ALL grant; MAXIMUM_ALLOWED does not", () => {
    for (const mask of [FILE_READ_DATA, GENERIC_READ, GENERIC_ALL]) assert.equal(mayRead({ file: [allow(ALICE, mask)], share: open }, alice), true, `mask ${mask}`);
    assert.equal(mayRead({ file: [allow(ALICE, MAXIMUM_ALLOWED)], share: open }, alice), false);
  });

  it("a NULL DACL lets everyone read, an empty one no one", () => {
    assert.equal(mayRead({ file: null, share: null }, nobody), true);
    assert.equal(mayRead({ file: [], share: open }, alice), false);
    assert.equal(mayRead({ file: open, share: [] }, alice), false);
  });

  it("no entry naming the person: no", () => {
    assert.equal(mayRead({ file: [allow(HR)], share: open }, nobody), false);
  });

  it("Everyone's entry reaches a person with no linked account", () => {
    assert.equal(mayRead({ file: [allow(EVERYONE_SID)], share: open }, nobody), true);
    assert.equal(mayRead({ file: [deny(EVERYONE_SID), allow(ALICE)], share: open }, alice), false);
  });

  it("a share that denies a member stops them whatever the file says", () => {
    assert.equal(mayRead({ file: [allow(ALICE)], share: [deny(ALICE), allow(EVERYONE_SID)] }, alice), false);
    assert.equal(mayRead({ file: [allow(ALICE)], share: [allow(HR)] }, alice), true);
  });

  it("object and callback entries (kind other) neither grant nor deny", () => {
    assert.equal(mayRead({ file: [{ kind: "other", inherited: false, mask: READ, sid: ALICE }], share: open }, alice), false);
    assert.equal(mayRead({ file: [{ kind: "other", inherited: false, mask: READ, sid: ALICE }, allow(ALICE)], share: open }, alice), true);
  });
});

describe("the normal form of an ACL", () => {
  it("keeps the entries' order, reads back the same, and hashes per server", () => {
    const acl = { file: [deny(ALICE), allow(HR, GENERIC_READ, true)], share: null };
    const text = normaliseAcl(acl);
    assert.deepEqual(parseAcl(text), { file: [deny(ALICE), allow(HR, GENERIC_READ >>> 0, true)], share: null });
    assert.notEqual(text, normaliseAcl({ file: [allow(HR, GENERIC_READ, true), deny(ALICE)], share: null }));
    // The same entries with a signed mask (bit 31 as JavaScript's & leaves it) are the same ACL.
    assert.equal(text, normaliseAcl({ file: [deny(ALICE), allow(HR, GENERIC_READ | 0, true)], share: null }));
    assert.notEqual(aclHash("fs1", text), aclHash("fs2", text));
  });
});
