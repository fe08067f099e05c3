import type { Group } from "../data/entities/group.entity";
import type { GroupListing, GroupTreeNode } from "../groups/group-listing";
import { isoNoZone } from "../time";

export function presentGroup(group: Group) {
  return {
    id: group.id,
    group_name: group.groupName,
    group_permission: group.groupPermission,
    parent_group_id: group.parentGroupId,
    created_at: isoNoZone(group.createdAt),
  };
}

export function presentCreatedGroup(group: Group) {
  return { created_group_id: group.id };
}

export function presentGroupListing({ group, isMember, memberEmails }: GroupListing) {
  return { ...presentGroup(group), is_member: isMember, member_emails: memberEmails };
}

export interface TreeJson {
  id: string;
  group_name: string;
  group_permission: Group["groupPermission"];
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
