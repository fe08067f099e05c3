import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { EVERYONE_SID, FILE_READ_DATA, GENERIC_ALL, GENERIC_READ, OWNER_RIGHTS_SID, READ_CONTROL, mayRead, ownerWhereItDecides } from "../../server/access/windows-acl";
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
    assert.equal(mayRead({ file: [allow(ALICE, 0x120116)], share: open }, alice), false, "FILE_GENERIC_WRITE");
    assert.equal(mayRead({ file: [allow(ALICE, FILE_WRITE_DATA), allow(HR)], share: open }, alice), true);
    // A write-only deny does not stop reading either.
    assert.equal(mayRead({ file: [deny(ALICE, FILE_WRITE_DATA), allow(HR)], share: open }, alice), true);
    assert.equal(mayRead({ file: [deny(ALICE, 0x116), allow(HR)], share: open }, alice), true);
  });

  it("GENERIC_READ and GENERIC_ALL grant (mapped as for a file); FILE_READ_DATA alone, or MAXIMUM_ALLOWED, does not", () => {
    for (const mask of [GENERIC_READ, GENERIC_ALL, READ, 0x120009]) assert.equal(mayRead({ file: [allow(ALICE, mask)], share: open }, alice), true, `mask ${mask}`);
    // Measured on Samba 4.17: smbclient's get needs FILE_READ_DATA, FILE_READ_EA, READ_CONTROL and SYNCHRONIZE from the file's DACL.
    for (const mask of [FILE_READ_DATA, 0x9, 0x100009, 0x20009, 0x120001, MAXIMUM_ALLOWED]) assert.equal(mayRead({ file: [allow(ALICE, mask)], share: open }, alice), false, `mask ${mask}`);
  });

  it("the bits a read needs add up across entries, and a deny of any bit not yet granted refuses", () => {
    assert.equal(mayRead({ file: [allow(ALICE, FILE_READ_DATA), allow(EVERYONE_SID, READ & ~FILE_READ_DATA)], share: open }, alice), true);
    assert.equal(mayRead({ file: [allow(EVERYONE_SID, FILE_READ_DATA), allow(HR, READ & ~FILE_READ_DATA)], share: open }, alice), true);
    assert.equal(mayRead({ file: [deny(ALICE, 0x100000), allow(ALICE)], share: open }, alice), false, "a deny of SYNCHRONIZE alone");
    assert.equal(mayRead({ file: [allow(ALICE, FILE_READ_DATA), deny(ALICE, FILE_READ_DATA), allow(HR)], share: open }, alice), true, "a deny of a bit already granted");
  });

  it("the owner has READ_CONTROL without an entry, unless an OWNER RIGHTS entry says what the owner has", () => {
    const noReadControl = allow(ALICE, 0x100009);
    assert.equal(mayRead({ file: [noReadControl], share: open, owner: ALICE }, alice), true);
    assert.equal(mayRead({ file: [noReadControl], share: open, owner: HR.replace("2001", "9999") }, alice), false);
    assert.equal(mayRead({ file: [noReadControl, allow(OWNER_RIGHTS_SID, 0x2)], share: open, owner: ALICE }, alice), false);
    assert.equal(mayRead({ file: [noReadControl, allow(OWNER_RIGHTS_SID, READ_CONTROL)], share: open, owner: ALICE }, alice), true);
    assert.equal(mayRead({ file: [deny(ALICE, READ_CONTROL), allow(ALICE)], share: open, owner: ALICE }, alice), true, "granted before the deny is met");
    assert.equal(mayRead({ file: [deny(ALICE, READ_CONTROL), allow(ALICE)], share: open }, alice), false);
  });

  it("the share must grant the whole open, FILE_READ_ATTRIBUTES included", () => {
    assert.equal(mayRead({ file: open, share: [allow(ALICE, 0x120089)] }, alice), true);
    assert.equal(mayRead({ file: open, share: [allow(ALICE, 0x120009)] }, alice), false);
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

describe("ownerWhereItDecides: the owner is kept only where it can change an answer", () => {
  it("kept where an allow grants FILE_READ_DATA without READ_CONTROL, or a deny mentions READ_CONTROL", () => {
    assert.equal(ownerWhereItDecides([allow(HR, 0x100009)], ALICE.toLowerCase()), ALICE);
    assert.equal(ownerWhereItDecides([deny(HR, READ_CONTROL), allow(HR)], ALICE), ALICE);
  });

  it("dropped where every entry granting FILE_READ_DATA grants READ_CONTROL, with OWNER RIGHTS, or a NULL DACL", () => {
    assert.equal(ownerWhereItDecides([allow(HR), allow(ALICE, GENERIC_READ), deny(HR, FILE_WRITE_DATA)], ALICE), null);
    assert.equal(ownerWhereItDecides([allow(HR, 0x100009), allow(OWNER_RIGHTS_SID, 0x2)], ALICE), null);
    assert.equal(ownerWhereItDecides(null, ALICE), null);
    assert.equal(ownerWhereItDecides([allow(HR, 0x100009)], null), null);
  });
});

describe("the normal form of an ACL", () => {
  it("an ACL without an owner keeps the text it had before owners were kept; one with an owner differs and reads back", () => {
    const acl = { file: [allow(HR)], share: null };
    assert.equal(normaliseAcl(acl), JSON.stringify({ file: [["allow", false, READ, HR]], share: null }));
    assert.equal(normaliseAcl({ ...acl, owner: null }), normaliseAcl(acl));
    const owned = { ...acl, owner: ALICE.toLowerCase() };
    assert.notEqual(normaliseAcl(owned), normaliseAcl(acl));
    assert.deepEqual(parseAcl(normaliseAcl(owned)), { ...acl, owner: ALICE });
  });


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
