import assert from "node:assert/strict";
import crypto from "node:crypto";
import { after, describe, it } from "node:test";
import { In, type DataSource } from "typeorm";
import { openDatabase } from "../../server/data/data-source";
import { Collection } from "../../server/data/entities/collection.entity";
import { GROUP_PERMISSIONS, Group } from "../../server/data/entities/group.entity";
import { GroupMember } from "../../server/data/entities/group-member.entity";
import { User } from "../../server/data/entities/user.entity";
import { findById, findMemberOwnedById, findWhereIn, rowExists } from "../../server/data/plain-queries";
import { onPostgres, sharedPostgres } from "../fixtures/postgres";
import { tempDir } from "../fixtures/sluice-server";

// The per-request lookups in plain SQL answer exactly what TypeORM's findOne / exists answer, on both back ends.

async function backends(): Promise<Array<[string, DataSource]>> {
  const sqlite = await openDatabase(tempDir("sluice-plain-queries-"));
  if (!onPostgres()) return [["sqlite", sqlite]];
  const postgres = await openDatabase({ dataDir: tempDir("sluice-plain-queries-"), databaseUrl: await (await sharedPostgres()).createDatabase() });
  return [["sqlite", sqlite], ["postgres", postgres]];
}

describe("plain per-request queries", () => {
  const opened: DataSource[] = [];
  after(async () => {
    for (const db of opened) await db.destroy();
  });

  it("findById hydrates like findOne (dates, nulls, the entity class); rowExists answers like exists", async () => {
    for (const [name, db] of await backends()) {
      opened.push(db);
      const m = db.manager;
      const groupId = crypto.randomUUID();
      const userId = crypto.randomUUID();
      await m.insert(User, m.create(User, { id: userId, email: `${userId}@example.com`, passwordHash: "x", createdAt: new Date(), updatedAt: new Date() } as Partial<User>));
      await m.insert(Group, m.create(Group, { id: groupId, groupName: `g-${groupId}`, groupPermission: GROUP_PERMISSIONS[0], createdAt: new Date() } as Partial<Group>));
      await m.insert(GroupMember, m.create(GroupMember, { groupId, userId, createdAt: new Date() } as Partial<GroupMember>));
      const plain = crypto.randomUUID();
      const embedded = crypto.randomUUID();
      await m.insert(Collection, { id: plain, name: `c-${plain}`, ownerGroupId: groupId, embeddingModel: null, createdAt: new Date("2026-01-02T03:04:05.678Z") });
      await m.insert(Collection, { id: embedded, name: `c-${embedded}`, ownerGroupId: groupId, embeddingModel: "nomic-embed-text", createdAt: new Date() });
      for (const id of [plain, embedded]) {
        const fast = await findById(m, Collection, id);
        assert.ok(fast instanceof Collection, name);
        assert.deepEqual(fast, await m.findOne(Collection, { where: { id } }), name);
      }
      assert.equal((await findById(m, Collection, plain))!.createdAt.toISOString(), "2026-01-02T03:04:05.678Z", name);
      assert.equal(await findById(m, Collection, crypto.randomUUID()), null, name);
      assert.equal(await findById(m, Collection, "not a uuid ' OR 1=1 --"), null, name);
      assert.equal(await rowExists(m, User, { id: userId }), true, name);
      assert.equal(await rowExists(m, User, { id: crypto.randomUUID() }), false, name);
      assert.equal(await rowExists(m, GroupMember, { groupId, userId }), true, name);
      assert.equal(await rowExists(m, GroupMember, { groupId, userId: crypto.randomUUID() }), false, name);
      // The row and the membership in one statement: a member gets the row findOne gives; a
      // non-member, a missing id and a hostile id all get null.
      const outsider = crypto.randomUUID();
      const otherGroup = crypto.randomUUID();
      await m.insert(User, m.create(User, { id: outsider, email: `${outsider}@example.com`, passwordHash: "x", createdAt: new Date(), updatedAt: new Date() } as Partial<User>));
      await m.insert(Group, m.create(Group, { id: otherGroup, groupName: `g-${otherGroup}`, groupPermission: GROUP_PERMISSIONS[0], createdAt: new Date() } as Partial<Group>));
      await m.insert(GroupMember, m.create(GroupMember, { groupId: otherGroup, userId: outsider, createdAt: new Date() } as Partial<GroupMember>));
      const owned = await findMemberOwnedById(m, Collection, embedded, userId);
      assert.ok(owned instanceof Collection, name);
      assert.deepEqual(owned, await m.findOne(Collection, { where: { id: embedded } }), name);
      assert.equal(await findMemberOwnedById(m, Collection, embedded, outsider), null, name);
      assert.equal(await findMemberOwnedById(m, Collection, crypto.randomUUID(), userId), null, name);
      assert.equal(await findMemberOwnedById(m, Collection, "not a uuid ' OR 1=1 --", userId), null, name);
      // findWhereIn answers find(In(...)): one, two (a second statement, by count), a missing id
      // among them, none at all, and a hostile value.
      const byId = (rows: Collection[]) => [...rows].sort((a, b) => a.id.localeCompare(b.id));
      for (const ids of [[plain], [plain, embedded], [embedded, crypto.randomUUID(), plain], [crypto.randomUUID()], ["' OR 1=1 --"]]) {
        const fast = await findWhereIn(m, Collection, "id", ids);
        assert.ok(fast.every((row) => row instanceof Collection), name);
        assert.deepEqual(byId(fast), byId(await m.find(Collection, { where: { id: In(ids) } })), `${name}: ${ids.length}`);
      }
      assert.deepEqual(await findWhereIn(m, Collection, "id", []), [], name);
      assert.deepEqual((await findWhereIn(m, Collection, "ownerGroupId", [groupId])).length, 2, name);
    }
  });
});
