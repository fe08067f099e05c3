import type { EntityManager, EntityTarget, ObjectLiteral } from "typeorm";
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError } from "../errors";
import { Collection } from "../data/entities/collection.entity";
import { DataSourceRecord } from "../data/entities/data-source.entity";
import { Pipeline } from "../data/entities/pipeline.entity";
import { GroupMember } from "../data/entities/group-member.entity";
import { Group } from "../data/entities/group.entity";
import { User } from "../data/entities/user.entity";
import { UserModelRecord } from "../data/entities/user-model.entity";
import { Conversation } from "../data/entities/conversation.entity";
import type { Actor } from "./actor";
import { findMemberOwnedById, rowExists } from "../data/plain-queries";

/**
 * The one place that decides who may touch which id (docs/decisions/0001-access-rules.md).
 * Membership is direct only. Every "may not" for an existing id throws the same
 * NotFoundError as a missing id, through the same code path, so the two cannot
 * answer differently. The single 403 is assertCanCreateCollectionIn.
 */

export async function isMember(db: EntityManager, actor: Actor, groupId: string): Promise<boolean> {
  return rowExists(db, GroupMember, { groupId, userId: actor.userId });
}

/** Ids of every group the actor belongs to. */
export async function memberGroupIds(db: EntityManager, actor: Actor): Promise<string[]> {
  const rows = await db.find(GroupMember, { where: { userId: actor.userId }, select: { groupId: true } });
  return rows.map((row) => row.groupId);
}

/**
 * The list filter of every group-owned resource: the rows of `entity` (which has an
 * owner_group_id column) owned by one of the actor's groups, ordered by `orderBy`.
 */
export async function listGroupOwned<T extends ObjectLiteral>(db: EntityManager, actor: Actor, entity: EntityTarget<T>, orderBy: string): Promise<T[]> {
  // The memberships and the rows in one statement: a listing is a round trip fewer, which a
  // team server's database, busy with an ingestion's writes, answers sooner.
  return db
    .createQueryBuilder(entity, "r")
    .where((q) => `r.owner_group_id IN ${q.subQuery().select("m.group_id").from(GroupMember, "m").where("m.user_id = :userId").getQuery()}`)
    .setParameter("userId", actor.userId)
    .orderBy(`r.${orderBy}`, "ASC")
    .getMany();
}

/** A group the actor manages (members, parent, delete): only its members may; others get 404. */
export async function requireGroupMembership(db: EntityManager, actor: Actor, groupId: string): Promise<Group> {
  const group = await db.findOne(Group, { where: { id: groupId } });
  if (!group || !(await isMember(db, actor, groupId))) throw new NotFoundError("Group not found");
  return group;
}

/** Creating a collection: 400 for a group that does not exist, 403 for one the actor is not in (docs/decisions/0001-access-rules.md). */
export async function assertCanCreateCollectionIn(db: EntityManager, actor: Actor, groupId: string): Promise<Group> {
  const group = await db.findOne(Group, { where: { id: groupId } });
  if (!group) throw new BadRequestError("Owner group does not exist");
  if (!(await isMember(db, actor, groupId))) {
    throw new ForbiddenError("Membership of the owner group is required to create a collection in it");
  }
  return group;
}

/** A collection and everything that touches it: members of its owner group only (docs/decisions/0001-access-rules.md). */
export async function requireCollectionAccess(db: EntityManager, actor: Actor, collectionId: string): Promise<Collection> {
  // The row and the membership in one statement: a search pays this on every request.
  const collection = await findMemberOwnedById(db, Collection, collectionId, actor.userId);
  if (!collection) throw new NotFoundError("Collection not found");
  return collection;
}

/** A data source: members of its owner group only (docs/decisions/0001-access-rules.md). */
export async function requireDataSourceAccess(db: EntityManager, actor: Actor, dataSourceId: string): Promise<DataSourceRecord> {
  const source = await db.findOne(DataSourceRecord, { where: { id: dataSourceId } });
  if (!source || !(await isMember(db, actor, source.ownerGroupId))) throw new NotFoundError("Data source not found");
  return source;
}

/** A pipeline touches a source and a collection: it is reachable only with access to both. */
export async function requirePipelineAccess(db: EntityManager, actor: Actor, pipelineId: string): Promise<Pipeline> {
  const pipeline = await db.findOne(Pipeline, { where: { id: pipelineId } });
  if (!pipeline || !(await canReachBoth(db, actor, pipeline.dataSourceId, pipeline.collectionId))) {
    throw new NotFoundError("Pipeline not found");
  }
  return pipeline;
}

/** Wiring a source to a collection needs access to both; either missing or denied is the same 404. */
export async function assertCanConnect(db: EntityManager, actor: Actor, dataSourceId: string, collectionId: string): Promise<void> {
  if (!(await canReachBoth(db, actor, dataSourceId, collectionId))) {
    throw new NotFoundError("Data source or collection not found");
  }
}

/** Pipelines whose source and collection the actor can both reach. */
export async function accessiblePipelines(db: EntityManager, actor: Actor): Promise<Pipeline[]> {
  const groups = await memberGroupIds(db, actor);
  if (groups.length === 0) return [];
  return db
    .createQueryBuilder(Pipeline, "p")
    .innerJoin(DataSourceRecord, "s", "s.id = p.data_source_id")
    .innerJoin(Collection, "c", "c.id = p.collection_id")
    .where("s.owner_group_id IN (:...groups) AND c.owner_group_id IN (:...groups)", { groups })
    .orderBy("p.created_at", "ASC")
    .getMany();
}

/** The pipelines into a collection the actor reaches that the actor may also trigger: their source is in one of the actor's groups too. */
export async function triggerablePipelinesInto(db: EntityManager, actor: Actor, collectionId: string): Promise<Pipeline[]> {
  const groups = await memberGroupIds(db, actor);
  if (groups.length === 0) return [];
  return db
    .createQueryBuilder(Pipeline, "p")
    .innerJoin(DataSourceRecord, "s", "s.id = p.data_source_id")
    .where("p.collection_id = :collectionId AND s.owner_group_id IN (:...groups)", { collectionId, groups })
    .orderBy("p.id", "ASC")
    .getMany();
}

/**
 * Someone's groups as the actor may see them: all of one's own; of another user only the
 * groups both belong to, since member lists are visible to members only (docs/decisions/0001-access-rules.md).
 * An unknown user is a 404.
 */
export async function visibleGroupsOf(db: EntityManager, actor: Actor, userId: string): Promise<Group[]> {
  if (!(await db.exists(User, { where: { id: userId } }))) throw new NotFoundError("User not found");
  const theirs = await db.find(GroupMember, { where: { userId }, select: { groupId: true } });
  let ids = theirs.map((m) => m.groupId);
  if (userId !== actor.userId) {
    const mine = new Set(await memberGroupIds(db, actor));
    ids = ids.filter((id) => mine.has(id));
  }
  if (ids.length === 0) return [];
  return db.createQueryBuilder(Group, "g").where("g.id IN (:...ids)", { ids }).orderBy("g.group_name", "ASC").getMany();
}

/**
 * Member emails (sorted) of every group the actor belongs to, keyed by group id. A group
 * missing from the map is not the actor's: its members stay hidden (docs/decisions/0001-access-rules.md).
 */
export async function visibleMemberEmails(db: EntityManager, actor: Actor): Promise<Map<string, string[]>> {
  const mine = await memberGroupIds(db, actor);
  const emails = new Map(mine.map((id) => [id, [] as string[]]));
  if (mine.length === 0) return emails;
  const rows = await db
    .createQueryBuilder(GroupMember, "m")
    .innerJoin(User, "u", "u.id = m.user_id")
    .select(["m.group_id AS group_id", "u.email AS email"])
    .where("m.group_id IN (:...ids)", { ids: mine })
    .orderBy("u.email", "ASC")
    .getRawMany<{ group_id: string; email: string }>();
  for (const row of rows) emails.get(row.group_id)?.push(row.email);
  return emails;
}

/** The actor's own personal-model records (of one catalog model, if given), oldest first: nobody reads another's list. */
export async function personalModelsOf(db: EntityManager, actor: Actor, modelId?: string): Promise<UserModelRecord[]> {
  const where = modelId === undefined ? { userId: actor.userId } : { userId: actor.userId, modelId };
  return db.find(UserModelRecord, { where, order: { createdAt: "ASC" } });
}

/** One record of the actor's personal list; another user's record answers the same 404 as a missing one. */
export async function requirePersonalModel(db: EntityManager, actor: Actor, recordId: string): Promise<UserModelRecord> {
  const record = await db.findOne(UserModelRecord, { where: { id: recordId } });
  if (!record || record.userId !== actor.userId) throw new NotFoundError("Personal model record not found");
  return record;
}

/**
 * A conversation: its author only, and only while the author can still reach its collection.
 * Anyone else, a missing id, or a collection the author has left all answer the same 404.
 */
export async function requireConversationOwner(db: EntityManager, actor: Actor, conversationId: string): Promise<Conversation> {
  const conversation = await db.findOne(Conversation, { where: { id: conversationId } });
  if (!conversation || conversation.userId !== actor.userId) throw new NotFoundError("Conversation not found");
  const collection = await db.findOne(Collection, { where: { id: conversation.collectionId } });
  if (!collection || !(await isMember(db, actor, collection.ownerGroupId))) throw new NotFoundError("Conversation not found");
  return conversation;
}

/** A conversation to go on in a collection: the author's own, in that collection; one of another collection answers the same 404. */
export async function requireConversationIn(db: EntityManager, actor: Actor, conversationId: string, collectionId: string): Promise<Conversation> {
  const conversation = await requireConversationOwner(db, actor, conversationId);
  if (conversation.collectionId !== collectionId) throw new NotFoundError("Conversation not found");
  return conversation;
}

/** The actor's own conversations with a collection they reach, newest first: nobody lists another's. */
export async function ownConversationsIn(db: EntityManager, actor: Actor, collectionId: string): Promise<Conversation[]> {
  await requireCollectionAccess(db, actor, collectionId);
  return db.find(Conversation, { where: { collectionId, userId: actor.userId }, order: { updatedAt: "DESC", createdAt: "DESC" } });
}

async function canReachBoth(db: EntityManager, actor: Actor, dataSourceId: string, collectionId: string): Promise<boolean> {
  const source = await db.findOne(DataSourceRecord, { where: { id: dataSourceId } });
  const collection = await db.findOne(Collection, { where: { id: collectionId } });
  return (
    !!source && !!collection && (await isMember(db, actor, source.ownerGroupId)) && (await isMember(db, actor, collection.ownerGroupId))
  );
}

/**
 * Adding files to a Google Drive source: only the user whose Drive it reads (whose grant
 * ingestion uses) may; another member of the owner group gets 409, as the source is theirs to see.
 */
export function assertOwnsDriveSource(actor: Actor, driveOwnerUserId: string): void {
  if (driveOwnerUserId !== actor.userId) throw new ConflictError("Only the user whose Google Drive this source reads can add files to it");
}
