import type { Group } from "../data/entities/group.entity";

/** A group as GET /user_groups lists it. Types only, so presenters (and the UI's type check) need no service code. */
export interface GroupListing {
  group: Group;
  isMember: boolean;
  /** Only for groups the caller belongs to. */
  memberEmails: string[] | null;
}

export interface GroupTreeNode {
  group: Group;
  children: GroupTreeNode[];
}
