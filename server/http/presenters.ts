import type { User } from "../data/entities/user.entity";
import type { Group } from "../data/entities/group.entity";
import type { Collection } from "../data/entities/collection.entity";
import type { GroupListing, GroupTreeNode } from "../groups/groups.service";
import type { CollectionStats } from "../collections/collections.service";
import { isoNoZone } from "../time";

/** Entity -> JSON. Fields are picked one by one so a secret column can never leak by accident. */

export function presentUser(user: User) {
  return {
    id: user.id,
    email: user.email,
    display_name: user.displayName,
    avatar_url: user.avatarUrl,
    created_at: isoNoZone(user.createdAt),
    updated_at: isoNoZone(user.updatedAt),
    last_sign_in_at: isoNoZone(user.lastSignInAt),
  };
}

export function presentGroup(group: Group) {
  return {
    id: group.id,
    group_name: group.groupName,
    group_permission: group.groupPermission,
    parent_group_id: group.parentGroupId,
    created_at: isoNoZone(group.createdAt),
  };
}

export function presentGroupListing({ group, isMember, memberEmails }: GroupListing) {
  return { ...presentGroup(group), is_member: isMember, member_emails: memberEmails };
}

export interface TreeJson {
  id: string;
  group_name: string;
  group_permission: string;
  children: TreeJson[];
}

export function presentTree(node: GroupTreeNode): TreeJson {
  return {
    id: node.group.id,
    group_name: node.group.groupName,
    group_permission: node.group.groupPermission,
    children: node.children.map(presentTree),
  };
}

export function presentCollection(collection: Collection, stats: CollectionStats = { documentCount: 0, chunkCount: 0 }) {
  return {
    id: collection.id,
    name: collection.name,
    owner_group_id: collection.ownerGroupId,
    document_count: stats.documentCount,
    chunk_count: stats.chunkCount,
    created_at: isoNoZone(collection.createdAt),
  };
}

export function presentToken(token: string) {
  return { access_token: token, token_type: "bearer" as const };
}
