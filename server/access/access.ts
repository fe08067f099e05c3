import type { EntityManager } from "typeorm";
import { BadRequestError, ForbiddenError, NotFoundError } from "../errors";
import { Collection } from "../data/entities/collection.entity";
import { GroupMember } from "../data/entities/group-member.entity";
import { Group } from "../data/entities/group.entity";
import type { Actor } from "./actor";

/**
 * The one place that decides who may touch which id (spec: Access rules).
 * Membership is direct only. Every "may not" for an existing id throws the same
 * NotFoundError as a missing id, through the same code path, so the two cannot
 * answer differently. The single 403 is assertCanCreateCollectionIn.
 */

export async function isMember(db: EntityManager, actor: Actor, groupId: string): Promise<boolean> {
  return db.exists(GroupMember, { where: { groupId, userId: actor.userId } });
}

/** Ids of every group the actor belongs to. */
export async function memberGroupIds(db: EntityManager, actor: Actor): Promise<string[]> {
  const rows = await db.find(GroupMember, { where: { userId: actor.userId }, select: { groupId: true } });
  return rows.map((row) => row.groupId);
}

/** A group the actor manages (members, parent, delete): only its members may; others get 404. */
export async function requireGroupMembership(db: EntityManager, actor: Actor, groupId: string): Promise<Group> {
  const group = await db.findOne(Group, { where: { id: groupId } });
  if (!group || !(await isMember(db, actor, groupId))) throw new NotFoundError("Group not found");
  return group;
}

/** Creating a collection: 400 for a group that does not exist, 403 for one the actor is not in (spec rule 4). */
export async function assertCanCreateCollectionIn(db: EntityManager, actor: Actor, groupId: string): Promise<Group> {
  const group = await db.findOne(Group, { where: { id: groupId } });
  if (!group) throw new BadRequestError("Owner group does not exist");
  if (!(await isMember(db, actor, groupId))) {
    throw new ForbiddenError("Membership of the owner group is required to create a collection in it");
  }
  return group;
}

/** A collection and everything that touches it: members of its owner group only (spec rule 1). */
export async function requireCollectionAccess(db: EntityManager, actor: Actor, collectionId: string): Promise<Collection> {
  const collection = await db.findOne(Collection, { where: { id: collectionId } });
  if (!collection || !(await isMember(db, actor, collection.ownerGroupId))) throw new NotFoundError("Collection not found");
  return collection;
}
