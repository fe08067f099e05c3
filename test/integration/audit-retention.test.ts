import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AuditLog } from "../../server/audit/audit";
import { openDatabase } from "../../server/data/data-source";
import { AuditEvent } from "../../server/data/entities/audit-event.entity";
import { tempDir } from "../fixtures/sluice-server";
import { waitFor } from "../fixtures/wait-for";

const DAY = 86_400_000;

describe("the audit trail's retention (AUDIT_DAYS)", () => {
  it("never shows an event older than the kept days, and deletes it on the first write an hour after the last prune", async () => {
    const db = await openDatabase(tempDir("sluice-audit-keep-"));
    try {
      let now = Date.parse("2026-03-01T12:00:00Z");
      const audit = new AuditLog(db, 90, () => now);
      const event = (detail: string) => audit.record({ action: "sign_up", actorId: null, actorEmail: null, address: null, detail });
      await event("old");
      now += 60 * DAY;
      await event("middle");
      now += 31 * DAY;
      const page = await audit.page(50, null);
      assert.deepEqual(page.events.map((e) => e.detail), ["middle"], "91 days on, the first event is past 90 days");
      assert.equal(await db.manager.count(AuditEvent), 2, "shown no more, deleted at the next prune");
      await event("new");
      await waitForCount(db, 2);
      assert.deepEqual((await db.manager.find(AuditEvent, { order: { at: "ASC" } })).map((e) => e.detail), ["middle", "new"]);
    } finally {
      await db.destroy();
    }
  });
});

/** The prune runs beside the write that triggered it. */
async function waitForCount(db: Awaited<ReturnType<typeof openDatabase>>, count: number): Promise<void> {
  await waitFor(async () => (await db.manager.count(AuditEvent)) === count, `${count} audit events left`);
}
