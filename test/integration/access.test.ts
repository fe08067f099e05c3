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
import {
  accessiblePipelines,
  assertCanConnect,
  listGroupOwned,
  ownConversationsIn,
  personalModelsOf,
  requireDataSourceAccess,
  requireConversationIn,
  requireConversationOwner,
  requirePersonalModel,
  requirePipelineAccess,
  triggerablePipelinesInto,
  visibleGroupsOf,
  visibleMemberEmails,
} from "../../server/access/access";
import { DataSourceRecord } from "../../server/data/entities/data-source.entity";
import { ModelRecord } from "../../server/data/entities/model.entity";
import { Pipeline } from "../../server/data/entities/pipeline.entity";
import { UserModelRecord } from "../../server/data/entities/user-model.entity";
import { Conversation } from "../../server/data/entities/conversation.entity";
import { openDatabase } from "../../server/data/data-source";
import { Collection } from "../../server/data/entities/collection.entity";
import { GroupMember } from "../../server/data/entities/group-member.entity";
import { Group } from "../../server/data/entities/group.entity";
import { User } from "../../server/data/entities/user.entity";
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError } from "../../server/errors";
import { tempDir } from "../fixtures/sluice-server";
import { InstanceRoles } from "../../server/access/instance-roles";

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

/**
 * Every function of access.ts: allowed, denied (the same NotFoundError as a missing id) and
 * missing. Its own people and rows, so it leans on nothing above: Ann is in "alpha" and
 * "shared", Ben in "beta" (a child of "alpha") and "shared", Cid in no group.
 */
describe("every access rule: allowed, denied, missing", () => {
  const id = () => crypto.randomUUID();
  const ann = { userId: id(), email: "ann@example.com" };
  const ben = { userId: id(), email: "ben@example.com" };
  const cid = { userId: id(), email: "cid@example.com" };
  const [alpha, beta, shared] = [id(), id(), id()];
  const [colA, colA2, colB] = [id(), id(), id()];
  const [srcA, srcB] = [id(), id()];
  const [pipeAA, pipeBA] = [id(), id()];
  const [model, annRecord, benRecord] = [id(), id(), id()];

  before(async () => {
    const m = db.manager;
    const at = (minute: number) => new Date(Date.UTC(2025, 0, 1, 0, minute));
    for (const actor of [ann, ben, cid]) await m.insert(User, { id: actor.userId, email: actor.email, createdAt: at(0), updatedAt: at(0) });
    await m.insert(Group, { id: alpha, groupName: "alpha", groupPermission: "write", parentGroupId: null, createdAt: at(0) });
    await m.insert(Group, { id: beta, groupName: "beta", groupPermission: "write", parentGroupId: alpha, createdAt: at(0) });
    await m.insert(Group, { id: shared, groupName: "shared", groupPermission: "read", parentGroupId: null, createdAt: at(0) });
    for (const [groupId, actor] of [[alpha, ann], [shared, ann], [beta, ben], [shared, ben]] as const) {
      await m.insert(GroupMember, { groupId, userId: actor.userId, createdAt: at(0) });
    }
    await m.insert(Collection, { id: colA, name: "zeta_docs", ownerGroupId: alpha, createdAt: at(1) });
    await m.insert(Collection, { id: colA2, name: "alpha_docs", ownerGroupId: alpha, createdAt: at(2) });
    await m.insert(Collection, { id: colB, name: "beta_docs", ownerGroupId: beta, createdAt: at(3) });
    await m.insert(DataSourceRecord, { id: srcA, name: "share a", kind: "smb", ownerGroupId: alpha, autoCollectionId: null, createdAt: at(4) });
    await m.insert(DataSourceRecord, { id: srcB, name: "share b", kind: "smb", ownerGroupId: beta, autoCollectionId: null, createdAt: at(5) });
    const pipeline = { description: "", status: "inactive" as const };
    await m.insert(Pipeline, { id: pipeAA, name: "a to a", dataSourceId: srcA, collectionId: colA, createdAt: at(6), ...pipeline });
    // Ben owns the source, Ann the collection: neither may reach this pipeline.
    await m.insert(Pipeline, { id: pipeBA, name: "b to a", dataSourceId: srcB, collectionId: colA, createdAt: at(7), ...pipeline });
    await m.insert(ModelRecord, {
      id: model,
      modelName: "llama3.2:latest",
      totalTokensProcessed: 0,
      tokensPerSecond: 0,
      timeToFirstTokenMs: null,
      sizeBytes: 0,
      digest: "",
      family: null,
      parameterSize: null,
      quantization: null,
      pulledAt: at(0),
      benchmarkedAt: null,
    });
    for (const [recordId, actor] of [[annRecord, ann], [benRecord, ben]] as const) {
      await m.insert(UserModelRecord, { id: recordId, userId: actor.userId, modelId: model, hardwareNotes: "", createdAt: at(8), updatedAt: at(8) });
    }
  });

  it("requireConversationOwner: its author passes; another member, a non-member and a missing id get the same NotFound; so does the author who left the group", async () => {
    const m = db.manager;
    const now = new Date();
    const [annConv, leftConv] = [id(), id()];
    await m.insert(Conversation, { id: annConv, collectionId: colA, userId: ann.userId, title: "q", createdAt: now, updatedAt: now });
    // Ben wrote this one in alpha's collection, and is no longer in alpha.
    await m.insert(Conversation, { id: leftConv, collectionId: colA, userId: ben.userId, title: "q", createdAt: now, updatedAt: now });
    assert.equal((await requireConversationOwner(m, ann, annConv)).id, annConv);
    await sameNotFound(requireConversationOwner(m, ben, annConv), requireConversationOwner(m, ben, MISSING));
    await sameNotFound(requireConversationOwner(m, cid, annConv), requireConversationOwner(m, cid, MISSING));
    await sameNotFound(requireConversationOwner(m, ben, leftConv), requireConversationOwner(m, ann, leftConv));
  });

  it("requireConversationIn: the author's conversation in its own collection; in another collection, or another's, the same NotFound as a missing id", async () => {
    const m = db.manager;
    const now = new Date();
    const conv = id();
    await m.insert(Conversation, { id: conv, collectionId: colA, userId: ann.userId, title: "q", createdAt: now, updatedAt: now });
    assert.equal((await requireConversationIn(m, ann, conv, colA)).id, conv);
    await sameNotFound(requireConversationIn(m, ann, conv, colA2), requireConversationIn(m, ann, MISSING, colA));
    await sameNotFound(requireConversationIn(m, ben, conv, colA), requireConversationIn(m, ben, MISSING, colA));
  });

  it("ownConversationsIn: the actor's own conversations with the collection, newest first; another member sees none of them; a collection out of reach is NotFound", async () => {
    const m = db.manager;
    const at = (minute: number) => new Date(Date.UTC(2025, 0, 2, 0, minute));
    const [older, newer, elsewhere] = [id(), id(), id()];
    await m.insert(Conversation, { id: older, collectionId: colA2, userId: ann.userId, title: "older", createdAt: at(1), updatedAt: at(1) });
    await m.insert(Conversation, { id: newer, collectionId: colA2, userId: ann.userId, title: "newer", createdAt: at(2), updatedAt: at(3) });
    await m.insert(Conversation, { id: elsewhere, collectionId: colA2, userId: ben.userId, title: "ben's", createdAt: at(4), updatedAt: at(4) });
    await m.insert(GroupMember, { groupId: alpha, userId: cid.userId, createdAt: at(0) });
    try {
      assert.deepEqual((await ownConversationsIn(m, ann, colA2)).map((c) => c.id), [newer, older]);
      assert.deepEqual(await ownConversationsIn(m, cid, colA2), [], "a member of the group lists none of Ann's");
    } finally {
      await m.delete(GroupMember, { groupId: alpha, userId: cid.userId });
    }
    await sameNotFound(ownConversationsIn(m, ben, colA2), ownConversationsIn(m, ben, MISSING));
  });

  /** Denied and missing must be indistinguishable: both NotFoundError with one message. */
  async function sameNotFound(denied: Promise<unknown>, missing: Promise<unknown>): Promise<string> {
    const [a, b] = [await rejection(denied), await rejection(missing)];
    assert.ok(a instanceof NotFoundError, `denied: ${a}`);
    assert.ok(b instanceof NotFoundError, `missing: ${b}`);
    assert.equal(a.message, b.message);
    return a.message;
  }

  it("isMember: direct members only; a parent group's member and a missing group are not", async () => {
    assert.equal(await isMember(db.manager, ann, alpha), true);
    assert.equal(await isMember(db.manager, ann, beta), false, "beta is a child of Ann's group: nothing is inherited");
    assert.equal(await isMember(db.manager, ann, MISSING), false);
  });

  it("memberGroupIds: the actor's groups; none for a user in no group", async () => {
    assert.deepEqual((await memberGroupIds(db.manager, ann)).sort(), [alpha, shared].sort());
    assert.deepEqual(await memberGroupIds(db.manager, cid), []);
  });

  it("listGroupOwned: rows of the actor's groups only, in the given order", async () => {
    assert.deepEqual((await listGroupOwned(db.manager, ann, Collection, "name")).map((c) => c.id), [colA2, colA]);
    assert.deepEqual((await listGroupOwned(db.manager, ben, Collection, "name")).map((c) => c.id), [colB]);
    assert.deepEqual((await listGroupOwned(db.manager, ann, DataSourceRecord, "created_at")).map((s) => s.id), [srcA]);
    assert.deepEqual(await listGroupOwned(db.manager, cid, Collection, "name"), []);
  });

  it("listGroupOwned: one statement, the memberships and the rows together (a listing is one round trip to the database)", async () => {
    const seen: string[] = [];
    const logQuery = db.logger.logQuery.bind(db.logger);
    db.logger.logQuery = (query, parameters, runner) => {
      seen.push(query);
      logQuery(query, parameters, runner);
    };
    try {
      assert.deepEqual((await listGroupOwned(db.manager, ann, Collection, "name")).map((c) => c.id), [colA2, colA]);
    } finally {
      db.logger.logQuery = logQuery;
    }
    assert.equal(seen.length, 1, seen.join("\n"));
  });

  it("requireGroupMembership: a member passes; a non-member and a missing group get the same NotFound", async () => {
    assert.equal((await requireGroupMembership(db.manager, ann, alpha)).id, alpha);
    await sameNotFound(requireGroupMembership(db.manager, ann, beta), requireGroupMembership(db.manager, ann, MISSING));
  });

  it("assertCanCreateCollectionIn: a member passes; a non-member 403, a missing group 400 (the contract's one 403)", async () => {
    assert.equal((await assertCanCreateCollectionIn(db.manager, ben, beta)).id, beta);
    assert.ok((await rejection(assertCanCreateCollectionIn(db.manager, ann, beta))) instanceof ForbiddenError);
    assert.ok((await rejection(assertCanCreateCollectionIn(db.manager, ann, MISSING))) instanceof BadRequestError);
  });

  it("requireCollectionAccess: the owner group's member passes; others and missing ids get the same NotFound", async () => {
    assert.equal((await requireCollectionAccess(db.manager, ann, colA)).id, colA);
    await sameNotFound(requireCollectionAccess(db.manager, ann, colB), requireCollectionAccess(db.manager, ann, MISSING));
  });

  it("requireDataSourceAccess: the owner group's member passes; others and missing ids get the same NotFound", async () => {
    assert.equal((await requireDataSourceAccess(db.manager, ann, srcA)).id, srcA);
    const message = await sameNotFound(requireDataSourceAccess(db.manager, ann, srcB), requireDataSourceAccess(db.manager, ann, MISSING));
    assert.equal(message, "Data source not found");
  });

  it("requirePipelineAccess: needs both ends; either end denied is the same NotFound as a missing pipeline", async () => {
    assert.equal((await requirePipelineAccess(db.manager, ann, pipeAA)).id, pipeAA);
    await sameNotFound(requirePipelineAccess(db.manager, ann, pipeBA), requirePipelineAccess(db.manager, ann, MISSING));
    await sameNotFound(requirePipelineAccess(db.manager, ben, pipeBA), requirePipelineAccess(db.manager, ben, MISSING));
  });

  it("assertCanConnect: both ends reachable passes; one denied end is the same NotFound as a missing one", async () => {
    await assertCanConnect(db.manager, ann, srcA, colA);
    await sameNotFound(assertCanConnect(db.manager, ann, srcB, colA), assertCanConnect(db.manager, ann, MISSING, colA));
    await sameNotFound(assertCanConnect(db.manager, ann, srcA, colB), assertCanConnect(db.manager, ann, srcA, MISSING));
  });

  it("accessiblePipelines: only pipelines whose source and collection are both reachable", async () => {
    assert.deepEqual((await accessiblePipelines(db.manager, ann)).map((p) => p.id), [pipeAA]);
    assert.deepEqual(await accessiblePipelines(db.manager, ben), [], "Ben owns pipeBA's source but not its collection");
    assert.deepEqual(await accessiblePipelines(db.manager, cid), []);
  });

  it("triggerablePipelinesInto: of the pipelines into a collection, only those whose source the actor reaches too", async () => {
    assert.deepEqual((await triggerablePipelinesInto(db.manager, ann, colA)).map((p) => p.id), [pipeAA], "pipeBA's source is Ben's");
    assert.deepEqual((await triggerablePipelinesInto(db.manager, ben, colA)).map((p) => p.id), [pipeBA]);
    assert.deepEqual(await triggerablePipelinesInto(db.manager, cid, colA), []);
    assert.deepEqual(await triggerablePipelinesInto(db.manager, ann, MISSING), []);
  });

  it("visibleGroupsOf: all of one's own groups; of another user only the shared ones; a missing user is NotFound", async () => {
    assert.deepEqual((await visibleGroupsOf(db.manager, ann, ann.userId)).map((g) => g.id), [alpha, shared]);
    assert.deepEqual((await visibleGroupsOf(db.manager, ann, ben.userId)).map((g) => g.id), [shared], "beta stays hidden from Ann");
    assert.deepEqual(await visibleGroupsOf(db.manager, cid, ben.userId), []);
    const missing = await rejection(visibleGroupsOf(db.manager, ann, MISSING));
    assert.ok(missing instanceof NotFoundError);
    assert.equal(missing.message, "User not found");
  });

  it("visibleMemberEmails: member lists of the actor's own groups only", async () => {
    const emails = await visibleMemberEmails(db.manager, ann);
    assert.deepEqual(Object.fromEntries(emails), { [alpha]: [ann.email], [shared]: [ann.email, ben.email] });
    assert.equal(emails.has(beta), false, "beta's members stay hidden from a non-member");
    assert.equal((await visibleMemberEmails(db.manager, cid)).size, 0);
  });

  it("personalModelsOf: the actor's own records only", async () => {
    assert.deepEqual((await personalModelsOf(db.manager, ann)).map((r) => r.id), [annRecord]);
    assert.deepEqual((await personalModelsOf(db.manager, ben, model)).map((r) => r.id), [benRecord]);
    assert.deepEqual(await personalModelsOf(db.manager, ann, MISSING), []);
    assert.deepEqual(await personalModelsOf(db.manager, cid), []);
  });

  it("requirePersonalModel: the owner passes; another user's record is the same NotFound as a missing one", async () => {
    assert.equal((await requirePersonalModel(db.manager, ann, annRecord)).id, annRecord);
    await sameNotFound(requirePersonalModel(db.manager, ann, benRecord), requirePersonalModel(db.manager, ann, MISSING));
  });
});

describe("who administers the instance (access/instance-roles.ts)", () => {
  let rolesDb: DataSource;
  const first = { userId: crypto.randomUUID(), email: "first@corp.example" };
  const second = { userId: crypto.randomUUID(), email: "Boss@corp.example" };
  before(async () => {
    rolesDb = await openDatabase(tempDir());
    await rolesDb.manager.insert(User, { id: first.userId, email: first.email, createdAt: new Date(Date.UTC(2025, 0, 1)), updatedAt: new Date() });
    await rolesDb.manager.insert(User, { id: second.userId, email: "boss@corp.example", createdAt: new Date(Date.UTC(2025, 0, 2)), updatedAt: new Date() });
  });
  after(async () => {
    await rolesDb.destroy();
  });

  it("without ADMIN_EMAILS the oldest account administers; unguarded, instance-wide actions are everyone's", async () => {
    const roles = new InstanceRoles(rolesDb, [], false);
    assert.equal(await roles.isAdministrator(first), true);
    assert.equal(await roles.isAdministrator(second), false);
    await roles.requireInstanceAction(second, "pull models");
    const forbidden = await rejection(roles.requireAdministrator(second, "invite people"));
    assert.ok(forbidden instanceof ForbiddenError);
    assert.equal(forbidden.message, "Only an administrator of this instance can invite people");
  });

  it("with ADMIN_EMAILS only the stored address counts (whatever the token says); guarded, others get 403", async () => {
    const roles = new InstanceRoles(rolesDb, ["boss@corp.example"], true);
    assert.equal(await roles.isAdministrator(first), false, "the oldest account is no administrator once they are named");
    assert.equal(await roles.isAdministrator(second), true);
    assert.equal(await roles.isAdministrator({ userId: first.userId }), false);
    assert.equal(roles.isAdminEmail(" BOSS@corp.example "), true);
    const forbidden = await rejection(roles.requireInstanceAction(first, "pull models"));
    assert.ok(forbidden instanceof ForbiddenError);
    assert.equal(forbidden.message, "Only an administrator of this instance can pull models");
    await roles.requireInstanceAction(second, "pull models");
    assert.equal(await roles.isAdministrator({ userId: MISSING }), false);
  });
});
