import assert from "node:assert/strict";
import crypto from "node:crypto";
import { after, before, describe, it } from "node:test";
import type { DataSource } from "typeorm";
import {
  assertCanCreateCollectionIn,
  assertOwnsDriveSource,
  isMember,
  memberGroupIds,
  requireCollectionAccess,
  requireGroupMembership,
} from "../../server/access/access";
import { openDatabase } from "../../server/data/data-source";
import { Collection } from "../../server/data/entities/collection.entity";
import { GroupMember } from "../../server/data/entities/group-member.entity";
import { Group } from "../../server/data/entities/group.entity";
import { User } from "../../server/data/entities/user.entity";
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError } from "../../server/errors";
import { tempDir } from "../fixtures/sluice-server";

// Each access rule against a real SQLite file: Alice is in "team", Bob in "other", "team" owns a collection.
let db: DataSource;
const alice = { userId: crypto.randomUUID(), email: "alice@example.com" };
const bob = { userId: crypto.randomUUID(), email: "bob@example.com" };
const team = crypto.randomUUID();
const other = crypto.randomUUID();
const collectionId = crypto.randomUUID();
const MISSING = crypto.randomUUID();

before(async () => {
  db = await openDatabase(tempDir());
  const now = new Date();
  for (const actor of [alice, bob]) {
    await db.manager.insert(User, { id: actor.userId, email: actor.email, createdAt: now, updatedAt: now });
  }
  await db.manager.insert(Group, { id: team, groupName: "team", groupPermission: "write", createdAt: now });
  await db.manager.insert(Group, { id: other, groupName: "other", groupPermission: "read", parentGroupId: null, createdAt: now });
  // "team" is a child of "other": Bob's membership of the parent must grant nothing.
  await db.manager.update(Group, { id: team }, { parentGroupId: other });
  await db.manager.insert(GroupMember, { groupId: team, userId: alice.userId, createdAt: now });
  await db.manager.insert(GroupMember, { groupId: other, userId: bob.userId, createdAt: now });
  await db.manager.insert(Collection, { id: collectionId, name: "docs", ownerGroupId: team, createdAt: now });
});
after(async () => {
  await db.destroy();
});

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  assert.fail("expected a rejection");
}

describe("access rules", () => {
  it("membership is direct only", async () => {
    assert.equal(await isMember(db.manager, alice, team), true);
    assert.equal(await isMember(db.manager, bob, team), false, "membership of the parent group does not inherit");
    assert.deepEqual(await memberGroupIds(db.manager, bob), [other]);
  });

  it("managing a group: members pass; non-members and missing groups get the same NotFound", async () => {
    assert.equal((await requireGroupMembership(db.manager, alice, team)).id, team);
    const denied = await rejection(requireGroupMembership(db.manager, bob, team));
    const missing = await rejection(requireGroupMembership(db.manager, bob, MISSING));
    assert.ok(denied instanceof NotFoundError);
    assert.ok(missing instanceof NotFoundError);
    assert.equal(denied.message, missing.message);
  });

  it("creating a collection: 400 for a missing group, 403 for a non-member, allowed for a member", async () => {
    assert.ok((await rejection(assertCanCreateCollectionIn(db.manager, alice, MISSING))) instanceof BadRequestError);
    const forbidden = await rejection(assertCanCreateCollectionIn(db.manager, bob, team));
    assert.ok(forbidden instanceof ForbiddenError);
    assert.match(forbidden.message, /Membership of the owner group is required/);
    assert.equal((await assertCanCreateCollectionIn(db.manager, alice, team)).id, team);
  });

  it("a collection: owner-group members pass; others and missing ids get the same NotFound", async () => {
    assert.equal((await requireCollectionAccess(db.manager, alice, collectionId)).name, "docs");
    const denied = await rejection(requireCollectionAccess(db.manager, bob, collectionId));
    const missing = await rejection(requireCollectionAccess(db.manager, bob, MISSING));
    assert.ok(denied instanceof NotFoundError);
    assert.ok(missing instanceof NotFoundError);
    assert.equal(denied.message, missing.message);
  });
});

describe("access rules of source kinds", () => {
  it("adding files to a drive source: only the user whose Drive it reads; another member gets 409", () => {
    assert.doesNotThrow(() => assertOwnsDriveSource(alice, alice.userId));
    assert.throws(
      () => assertOwnsDriveSource(bob, alice.userId),
      (error: unknown) => error instanceof ConflictError && /Only the user whose Google Drive this source reads/.test((error as Error).message),
    );
  });
});
