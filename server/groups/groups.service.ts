import crypto from "node:crypto";
import type { DataSource } from "typeorm";
import { BadRequestError, ConflictError, NotFoundError } from "../errors";
import { Group, type GroupPermission } from "../data/entities/group.entity";
import { GroupMember } from "../data/entities/group-member.entity";
import { User } from "../data/entities/user.entity";
import { requireGroupMembership, visibleMemberEmails } from "../access/access";
import type { Actor } from "../access/actor";
import type { GroupListing, GroupTreeNode } from "./group-listing";
import { groupOwnedResources } from "./group-owned-resources";

export class GroupsService {
  constructor(private readonly db: DataSource) {}

  /** The creator becomes the first member. */
  async create(actor: Actor, groupName: string, groupPermission: GroupPermission): Promise<Group> {
    return this.db.transaction(async (tx) => {
      if (await tx.exists(Group, { where: { groupName } })) throw new ConflictError(`A group named "${groupName}" already exists`);
      const now = new Date();
      const group = tx.create(Group, { id: crypto.randomUUID(), groupName, groupPermission, parentGroupId: null, createdAt: now });
      await tx.insert(Group, group);
      await tx.insert(GroupMember, { groupId: group.id, userId: actor.userId, createdAt: now });
      return group;
    });
  }

  /** Every group; member emails only of the actor's own (access: visibleMemberEmails). */
  async list(actor: Actor): Promise<GroupListing[]> {
    const groups = await this.db.manager.find(Group, { order: { groupName: "ASC" } });
    const emails = await visibleMemberEmails(this.db.manager, actor);
    return groups.map((group) => ({ group, isMember: emails.has(group.id), memberEmails: emails.get(group.id) ?? null }));
  }

  async tree(): Promise<GroupTreeNode[]> {
    const groups = await this.db.manager.find(Group, { order: { groupName: "ASC" } });
    const nodes = new Map(groups.map((group) => [group.id, { group, children: [] as GroupTreeNode[] }]));
    const roots: GroupTreeNode[] = [];
    for (const node of nodes.values()) {
      const parent = node.group.parentGroupId ? nodes.get(node.group.parentGroupId) : undefined;
      (parent ? parent.children : roots).push(node);
    }
    return roots;
  }

  /**
   * "no-account": nobody has that address (the route invites it instead: accounts/invitations.service.ts).
   * Otherwise the member's address as stored, and whether this call made them a member.
   */
  async addMember(actor: Actor, groupId: string, email: string): Promise<"no-account" | { email: string; added: boolean }> {
    return this.db.transaction(async (tx) => {
      await requireGroupMembership(tx, actor, groupId);
      const user = await tx.findOne(User, { where: { email: email.trim().toLowerCase() } });
      if (!user) return "no-account";
      if (await tx.exists(GroupMember, { where: { groupId, userId: user.id } })) return { email: user.email, added: false };
      await tx.insert(GroupMember, { groupId, userId: user.id, createdAt: new Date() });
      return { email: user.email, added: true };
    });
  }

  /** Answers the removed member's address as stored. */
  async removeMember(actor: Actor, groupId: string, email: string): Promise<string> {
    return this.db.transaction(async (tx) => {
      await requireGroupMembership(tx, actor, groupId);
      const user = await tx.findOne(User, { where: { email: email.trim().toLowerCase() } });
      if (!user || !(await tx.exists(GroupMember, { where: { groupId, userId: user.id } }))) {
        throw new NotFoundError("User is not a member of this group");
      }
      if ((await tx.count(GroupMember, { where: { groupId } })) === 1) {
        throw new ConflictError("Cannot remove the last member of a group; delete the group instead");
      }
      await tx.delete(GroupMember, { groupId, userId: user.id });
      return user.email;
    });
  }

  /** null clears the parent. A parent that would close a cycle (itself or a descendant) is a 400. */
  async setParent(actor: Actor, groupId: string, parentGroupId: string | null): Promise<Group> {
    return this.db.transaction(async (tx) => {
      const group = await requireGroupMembership(tx, actor, groupId);
      if (parentGroupId !== null) {
        const all = await tx.find(Group, { select: { id: true, parentGroupId: true } });
        const parentOf = new Map(all.map((g) => [g.id, g.parentGroupId]));
        if (!parentOf.has(parentGroupId)) throw new BadRequestError("Parent group does not exist");
        // Walk up from the new parent: meeting this group means the new edge closes a cycle.
        for (let at: string | null | undefined = parentGroupId; at; at = parentOf.get(at)) {
          if (at === groupId) throw new BadRequestError("Setting this parent would create a cycle in the group hierarchy");
        }
      }
      group.parentGroupId = parentGroupId;
      await tx.update(Group, { id: groupId }, { parentGroupId });
      return group;
    });
  }

  /** 409 while the group owns data sources or collections, naming each. */
  async delete(actor: Actor, groupId: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      await requireGroupMembership(tx, actor, groupId);
      const owned = await groupOwnedResources(tx, groupId);
      if (owned.dataSources.length) {
        throw new ConflictError(`Group still owns data sources: ${owned.dataSources.join(", ")}. Delete them first.`);
      }
      if (owned.collections.length) {
        throw new ConflictError(`Group still owns collections: ${owned.collections.join(", ")}. Delete them first.`);
      }
      await tx.update(Group, { parentGroupId: groupId }, { parentGroupId: null });
      await tx.delete(GroupMember, { groupId });
      await tx.delete(Group, { id: groupId });
    });
  }
}
