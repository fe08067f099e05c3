import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { BadRequestError } from "../../server/errors";
import { fileClock } from "../../server/schedules/clock";
import { assertCronPattern, assertTimeZone, nextRunAfter, serverTimeZone } from "../../server/schedules/schedule-timing";

const at = (iso: string) => new Date(iso);

function refusal(fn: () => void): string {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof BadRequestError, `a 400, got ${String(error)}`);
    return error.detail;
  }
  assert.fail("was accepted");
}

describe("next run of a schedule", () => {
  it("counts an interval from the moment given (the schedule set, or a due run's start)", () => {
    assert.equal(nextRunAfter({ everyMinutes: 5 }, at("2026-11-23T10:00:07.250Z"))!.toISOString(), "2026-11-23T10:05:07.250Z");
    // A due run started late (a tick after its slot) moves the next one with it.
    assert.equal(nextRunAfter({ everyMinutes: 90 }, at("2026-11-23T23:59:00Z"))!.toISOString(), "2026-11-24T01:29:00.000Z");
  });

  it("reads a cron pattern's hours in its time zone", () => {
    const rule = { cron: "0 2 * * 1-5", timezone: "Europe/Berlin" };
    // Friday 20 Nov 2026 03:00 in Berlin (CET, UTC+1): the next weekday 02:00 is Monday's.
    assert.equal(nextRunAfter(rule, at("2026-11-20T02:00:00Z"))!.toISOString(), "2026-11-23T01:00:00.000Z");
    assert.equal(nextRunAfter({ cron: "0 2 * * 1-5", timezone: "America/New_York" }, at("2026-11-20T02:00:00Z"))!.toISOString(), "2026-11-20T07:00:00.000Z");
    // Strictly after: a run at its slot does not find the same slot again.
    assert.equal(nextRunAfter(rule, at("2026-11-23T01:00:00Z"))!.toISOString(), "2026-11-24T01:00:00.000Z");
  });

  it("gives a catch-up slot, not a backlog: the next slot after now, whatever was missed", () => {
    const hourly = { cron: "0 * * * *", timezone: "UTC" };
    assert.equal(nextRunAfter(hourly, at("2026-11-23T17:30:00Z"))!.toISOString(), "2026-11-23T18:00:00.000Z");
  });

  it("keeps to local time across daylight saving changes, running once on each day", () => {
    const nightly = { cron: "30 2 * * *", timezone: "Europe/Berlin" };
    // 29 Mar 2026: 02:00 jumps to 03:00, so 02:30 does not exist; the run happens once, at 03:00 CEST.
    const spring = [at("2026-03-28T00:00:00Z")];
    for (let i = 0; i < 3; i++) spring.push(nextRunAfter(nightly, spring[spring.length - 1])!);
    assert.deepEqual(spring.slice(1).map((d) => d.toISOString()), ["2026-03-28T01:30:00.000Z", "2026-03-29T01:00:00.000Z", "2026-03-30T00:30:00.000Z"]);
    // 25 Oct 2026: 03:00 goes back to 02:00, so 02:30 happens twice; the run happens once.
    const autumn = [at("2026-10-24T00:00:00Z")];
    for (let i = 0; i < 3; i++) autumn.push(nextRunAfter(nightly, autumn[autumn.length - 1])!);
    assert.deepEqual(autumn.slice(1).map((d) => d.toISOString()), ["2026-10-24T00:30:00.000Z", "2026-10-25T00:30:00.000Z", "2026-10-26T01:30:00.000Z"]);
    // An interval is plain elapsed time: 60 minutes across the jump are 60 minutes.
    assert.equal(nextRunAfter({ everyMinutes: 60 }, at("2026-03-29T00:30:00Z"))!.toISOString(), "2026-03-29T01:30:00.000Z");
  });
});

describe("schedule validation", () => {
  it("names the cron field that is out of range or malformed", () => {
    assert.equal(refusal(() => assertCronPattern("0 25 * * *", "UTC")), "cron field 2 out of range: hour 25");
    assert.equal(refusal(() => assertCronPattern("61 * * * *", "UTC")), "cron field 1 out of range: minute 61");
    assert.equal(refusal(() => assertCronPattern("0 2 * * 8", "UTC")), "cron field 5 out of range: day of week 8");
    assert.match(refusal(() => assertCronPattern("0 2 * 1-x *", "UTC")), /^cron field 4 \(month\) is not valid: /);
    assert.equal(refusal(() => assertCronPattern("0 2 * *", "UTC")), "cron pattern must have five fields (minute hour day-of-month month day-of-week), got 4");
    // Croner takes seconds and years too; a schedule's pattern is the standard five fields.
    assert.match(refusal(() => assertCronPattern("0 0 2 * * *", "UTC")), /five fields/);
    assert.equal(refusal(() => assertCronPattern("0 0 30 2 *", "UTC")), "cron pattern 0 0 30 2 * never matches a date");
    assert.doesNotThrow(() => assertCronPattern("0 2 * * MON-FRI", "Europe/Berlin"));
    assert.doesNotThrow(() => assertCronPattern("*/15 8-18 * * 1-5", "UTC"));
  });

  it("refuses a time zone the time zone database does not know", () => {
    assert.equal(refusal(() => assertTimeZone("Mars/Olympus")), "unknown time zone Mars/Olympus");
    assert.doesNotThrow(() => assertTimeZone("Europe/Berlin"));
    assert.doesNotThrow(() => assertTimeZone(serverTimeZone()));
  });
});

describe("the test clock (SLUICE_TEST_CLOCK_FILE)", () => {
  it("reads the time from the file on every call, and the system clock when the file is missing or empty", () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "sluice-clock-")), "now");
    const clock = fileClock(file);
    const before = Date.now();
    assert.ok(clock().getTime() >= before);
    fs.writeFileSync(file, "2031-01-02T03:04:05.000Z\n");
    assert.equal(clock().toISOString(), "2031-01-02T03:04:05.000Z");
    fs.writeFileSync(file, "2031-01-02T04:00:00.000Z");
    assert.equal(clock().toISOString(), "2031-01-02T04:00:00.000Z");
    fs.writeFileSync(file, "");
    assert.ok(clock().getTime() >= before && clock().getFullYear() < 2031);
  });
});
