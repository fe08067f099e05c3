import type { DataSource } from "typeorm";
import { In } from "typeorm";
import { GroupMember } from "../data/entities/group-member.entity";
import { Group } from "../data/entities/group.entity";
import { User } from "../data/entities/user.entity";
import { ConflictError } from "../errors";
import { groupOwnedResources } from "../groups/group-owned-resources";

/**
 * Deletes an account in one transaction (docs/decisions/0384-account-deletion.md): its groups
 * stay with their other members; a group it alone belongs to goes too when it owns nothing, and
 * stops the deletion (409, named) when it owns sources or collections, which would be left to no
 * one. Its memberships, conversations, personal models, Drive grant and API keys go with the row
 * (ON DELETE CASCADE). Drive sources it reads with its own grant stop it too (409).
 */
export async function deleteAccount(db: DataSource, userId: string): Promise<void> {
  await db.transaction(async (tx) => {
    const memberships = await tx.find(GroupMember, { where: { userId } });
    const groupIds = memberships.map((m) => m.groupId);
    const others = groupIds.length ? await tx.find(GroupMember, { where: { groupId: In(groupIds) } }) : [];
    const alone = groupIds.filter((id) => !others.some((m) => m.groupId === id && m.userId !== userId));
    const blocking: string[] = [];
    const emptyAlone: string[] = [];
    for (const groupId of alone) {
      const owned = await groupOwnedResources(tx, groupId);
      if (owned.dataSources.length || owned.collections.length) {
        const group = await tx.findOneOrFail(Group, { where: { id: groupId } });
        blocking.push(group.groupName);
      } else emptyAlone.push(groupId);
    }
    if (blocking.length) {
      throw new ConflictError(
        `This account is the only member of groups that own sources or collections: ${blocking.join(", ")}. Add another member to them, or delete what they own, first.`,
      );
    }
    const [{ count }] = (await tx.query(`SELECT COUNT(*) AS count FROM drive_sources WHERE owner_user_id = ${tx.connection.driver.createParameter("userId", 0)}`, [userId])) as Array<{ count: number | string }>;
    if (Number(count) > 0) {
      throw new ConflictError(`This account's Google Drive grant reads ${count} Drive source(s). Delete them first.`);
    }
    if (emptyAlone.length) {
      await tx.update(Group, { parentGroupId: In(emptyAlone) }, { parentGroupId: null });
      await tx.delete(GroupMember, { groupId: In(emptyAlone) });
      await tx.delete(Group, { id: In(emptyAlone) });
    }
    await tx.delete(User, { id: userId });
  });
}
