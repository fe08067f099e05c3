import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { SAMBA_TIMEOUT_MS, startSamba, type SambaServer } from "../fixtures/samba";
import { startSluice, tempDir, type SluiceServer } from "../fixtures/sluice-server";
import { addSmbSource, client, createGroup, signUp, waitForJobEnd, type Request } from "../fixtures/http-client";
import { waitFor } from "../fixtures/wait-for";

// Schedules run on a clock the test controls (SLUICE_TEST_CLOCK_FILE): moving the file's time
// makes runs due at once, with the scheduler looking every TICK_MS.
const TICK_MS = 100;
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}$/;
const T0 = Date.parse("2030-06-03T08:00:00.000Z");
const MINUTE = 60_000;

let samba: SambaServer;
let changing: string;
let bulkSamba: SambaServer;
let server: SluiceServer;
let dataDir: string;
let clockFile: string;
let request: Request;
let owner: { email: string; token: string };
let group: string;

function setClock(ms: number): void {
  fs.writeFileSync(clockFile, new Date(ms).toISOString());
}

function startServer(): Promise<SluiceServer> {
  return startSluice({ dataDir, env: { SMB_TIMEOUT_MS: String(SAMBA_TIMEOUT_MS), SLUICE_TEST_CLOCK_FILE: clockFile, SLUICE_SCHEDULER_TICK_MS: String(TICK_MS) } });
}

/** Several scheduler ticks: long enough for a due run to have started (or a second one, wrongly). */
const ticks = (n = 8) => new Promise((r) => setTimeout(r, n * TICK_MS));

async function jobs(pipelineId: string): Promise<Record<string, any>[]> {
  const res = await request("GET", `/data_pipelines/${pipelineId}/jobs`, { token: owner.token });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

async function pipeline(pipelineId: string): Promise<Record<string, any>> {
  const res = await request("GET", `/data_pipelines/${pipelineId}`, { token: owner.token });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

function putSchedule(pipelineId: string, body: unknown, token = owner.token) {
  return request("PUT", `/data_pipelines/${pipelineId}/schedule`, { token, body });
}

before(async () => {
  changing = tempDir("sluice-changing-");
  fs.chmodSync(changing, 0o755);
  for (const name of ["alpha.txt", "beta.txt", "gamma.txt", "delta.md"]) fs.writeFileSync(path.join(changing, name), `The ${name} file talks about nothing new.`);
  samba = await startSamba({ extraShares: { changing } });
  const bulkDir = tempDir("sluice-sched-bulk-");
  for (let i = 0; i < 1500; i++) {
    const folder = path.join(bulkDir, `batch-${Math.floor(i / 200)}`);
    fs.mkdirSync(folder, { recursive: true });
    fs.writeFileSync(path.join(folder, `note-${i}.txt`), `Scheduled note number ${i}. `.repeat(40));
  }
  fs.chmodSync(bulkDir, 0o755);
  bulkSamba = await startSamba({ extraShares: { bulk: bulkDir } });
  dataDir = tempDir();
  clockFile = path.join(tempDir("sluice-clock-"), "now");
  setClock(T0);
  server = await startServer();
  request = client(server.api);
  owner = await signUp(request, "sched");
  group = await createGroup(request, owner.token);
});
after(async () => {
  if (server && server.child.exitCode === null) await server.stop();
  await samba?.stop();
  await bulkSamba?.stop();
});

describe("setting a schedule", () => {
  it("a pipeline starts without a schedule or a last run; PUT sets one without starting a run", async () => {
    const { pipeline: created } = await addSmbSource(request, owner.token, group, samba, "Set schedule");
    const fresh = await pipeline(created.id);
    assert.equal(fresh.schedule, null);
    assert.equal(fresh.last_run, null);
    assert.equal(fresh.status, "inactive");

    const set = await putSchedule(created.id, { every_minutes: 30 });
    assert.equal(set.status, 200, set.text);
    assert.match(set.body.schedule.next_run_at, TIMESTAMP);
    assert.deepEqual(set.body.schedule, {
      every_minutes: 30,
      timezone: set.body.schedule.timezone,
      paused: false,
      next_run_at: new Date(T0 + 30 * MINUTE).toISOString().replace(/Z$/, ""),
      skipped_runs: 0,
    });
    assert.ok(set.body.schedule.timezone.length > 0, "the server's time zone by default");
    assert.equal(set.body.status, "inactive", "the status keeps its meaning: no job yet");
    await ticks();
    assert.equal((await jobs(created.id)).length, 0, "setting a schedule starts no run");

    const cron = await putSchedule(created.id, { cron: "0 2 * * 1-5", timezone: "Europe/Berlin" });
    assert.equal(cron.status, 200, cron.text);
    // Monday 3 June 2030 10:00 in Berlin: the next weekday 02:00 is Tuesday's, 00:00 UTC in summer time.
    assert.deepEqual(cron.body.schedule, { cron: "0 2 * * 1-5", timezone: "Europe/Berlin", paused: false, next_run_at: "2030-06-04T00:00:00.000", skipped_runs: 0 });
    const listed = (await request("GET", "/data_pipelines", { token: owner.token })).body.find((p: { id: string }) => p.id === created.id);
    assert.deepEqual(listed.schedule, cron.body.schedule, "the list shows the schedule too");
  });

  it("refuses bad schedules with what is wrong, and changes nothing", async () => {
    const { pipeline: created } = await addSmbSource(request, owner.token, group, samba, "Bad schedules");
    await putSchedule(created.id, { every_minutes: 60 });
    const before = (await pipeline(created.id)).schedule;
    const cases: Array<[unknown, number, RegExp]> = [
      [{ every_minutes: 4 }, 422, /every_minutes must be at least 5/],
      [{ every_minutes: 7.5 }, 422, /every_minutes must be a whole number of minutes/],
      [{ cron: "0 25 * * *" }, 400, /^cron field 2 out of range: hour 25$/],
      [{ cron: "0 2 * *" }, 400, /cron pattern must have five fields/],
      [{ cron: "0 2 * * *", timezone: "Mars/Olympus" }, 400, /^unknown time zone Mars\/Olympus$/],
      [{ every_minutes: 10, cron: "0 2 * * *" }, 422, /cron cannot be given together with every_minutes/],
      [{}, 422, /must give every_minutes, cron \(with an optional timezone\) or paused/],
      [{ paused: "yes" }, 422, /paused must be true or false/],
      [{ every_minutes: 10, hourly: true }, 422, /hourly/],
    ];
    for (const [body, status, detail] of cases) {
      const res = await putSchedule(created.id, body);
      assert.equal(res.status, status, `${JSON.stringify(body)}: ${res.text}`);
      assert.match(res.body.detail, detail, JSON.stringify(body));
    }
    assert.deepEqual((await pipeline(created.id)).schedule, before);
  });

  it("pauses, resumes and removes; a pause without a schedule is 409", async () => {
    const { pipeline: created } = await addSmbSource(request, owner.token, group, samba, "Pause schedule");
    const noSchedule = await putSchedule(created.id, { paused: true });
    assert.equal(noSchedule.status, 409, noSchedule.text);
    assert.match(noSchedule.body.detail, /no schedule/);

    await putSchedule(created.id, { every_minutes: 15 });
    const paused = await putSchedule(created.id, { paused: true });
    assert.equal(paused.status, 200, paused.text);
    assert.deepEqual(paused.body.schedule, { every_minutes: 15, timezone: paused.body.schedule.timezone, paused: true, next_run_at: null, skipped_runs: 0 });

    setClock(T0 + 5 * MINUTE);
    const resumed = await putSchedule(created.id, { paused: false });
    assert.equal(resumed.status, 200, resumed.text);
    assert.equal(resumed.body.schedule.paused, false);
    assert.equal(resumed.body.schedule.next_run_at, new Date(T0 + 20 * MINUTE).toISOString().replace(/Z$/, ""), "an interval counts again from the resume");

    const removed = await request("DELETE", `/data_pipelines/${created.id}/schedule`, { token: owner.token });
    assert.equal(removed.status, 200, removed.text);
    assert.equal(removed.body.schedule, null);
    assert.equal((await pipeline(created.id)).schedule, null);
    assert.equal((await putSchedule(created.id, { paused: false })).status, 409);
    setClock(T0);
  });

  it("any member of the owner group may set a schedule; anyone else gets 404", async () => {
    const { pipeline: created } = await addSmbSource(request, owner.token, group, samba, "Access schedule");
    const member = await signUp(request, "member");
    const added = await request("PUT", `/user_groups/${group}/members/${encodeURIComponent(member.email)}`, { token: owner.token });
    assert.ok(added.status < 300, added.text);
    const byMember = await putSchedule(created.id, { every_minutes: 45 }, member.token);
    assert.equal(byMember.status, 200, byMember.text);

    const stranger = await signUp(request, "stranger");
    for (const res of [
      await putSchedule(created.id, { every_minutes: 5 }, stranger.token),
      await putSchedule(created.id, { paused: true }, stranger.token),
      await request("DELETE", `/data_pipelines/${created.id}/schedule`, { token: stranger.token }),
      await putSchedule("no-such-pipeline", { every_minutes: 5 }),
    ]) {
      assert.equal(res.status, 404, res.text);
      assert.equal(res.body.detail, "Pipeline not found");
    }
    assert.equal((await pipeline(created.id)).schedule.every_minutes, 45, "unchanged by the refused calls");
    assert.equal((await request("PUT", `/data_pipelines/${created.id}/schedule`, { body: { every_minutes: 5 } })).status, 401);
  });
});

describe("due runs", () => {
  it("a due run starts once, through the queue, with trigger `schedule`; the next counts from its start", async () => {
    setClock(T0);
    const { pipeline: created } = await addSmbSource(request, owner.token, group, samba, "Due runs");
    await putSchedule(created.id, { every_minutes: 10 });
    setClock(T0 + 9 * MINUTE);
    await ticks();
    assert.equal((await jobs(created.id)).length, 0, "not due yet");

    const start = T0 + 10 * MINUTE + 2_000;
    setClock(start);
    await waitFor(async () => (await jobs(created.id)).length > 0, "the due run");
    const ended = await waitForJobEnd(request, owner.token, created.id);
    assert.equal(ended.status, "completed", JSON.stringify(ended));
    assert.equal(ended.trigger, "schedule");
    await ticks();
    assert.equal((await jobs(created.id)).length, 1, "started once");

    const after = await pipeline(created.id);
    assert.equal(after.schedule.next_run_at, new Date(start + 10 * MINUTE).toISOString().replace(/Z$/, ""));
    assert.deepEqual(after.last_run, { job_id: ended.job_id, status: "completed", completed_at: ended.completed_at, trigger: "schedule" });
    assert.equal(after.status, "active");

    // A manual trigger is `manual`, and the last run is the latest job whatever started it.
    const manual = await request("POST", `/data_pipelines/${created.id}/ingest`, { token: owner.token });
    assert.equal(manual.status, 202, manual.text);
    assert.equal(manual.body.trigger, "manual");
    await waitForJobEnd(request, owner.token, created.id);
    assert.equal((await pipeline(created.id)).last_run.trigger, "manual");
    await request("DELETE", `/data_pipelines/${created.id}/schedule`, { token: owner.token });
  });

  it("a paused schedule starts nothing, and pausing all of a source's schedules pauses them", async () => {
    setClock(T0);
    const source = await addSmbSource(request, owner.token, group, samba, "Paused source");
    await putSchedule(source.pipeline.id, { every_minutes: 10 });
    const pause = await request("POST", `/data_sources/${source.data_source.id}/schedules/pause`, { token: owner.token });
    assert.equal(pause.status, 200, pause.text);
    assert.deepEqual(pause.body, { data_source_id: source.data_source.id, schedules_changed: 1 });
    assert.equal((await pipeline(source.pipeline.id)).schedule.paused, true);
    setClock(T0 + 60 * MINUTE);
    await ticks();
    assert.equal((await jobs(source.pipeline.id)).length, 0, "paused: no run");

    const stranger = await signUp(request, "outsider");
    assert.equal((await request("POST", `/data_sources/${source.data_source.id}/schedules/resume`, { token: stranger.token })).status, 404);
    const resume = await request("POST", `/data_sources/${source.data_source.id}/schedules/resume`, { token: owner.token });
    assert.deepEqual(resume.body, { data_source_id: source.data_source.id, schedules_changed: 1 });
    const resumed = await pipeline(source.pipeline.id);
    assert.equal(resumed.schedule.next_run_at, new Date(T0 + 70 * MINUTE).toISOString().replace(/Z$/, ""), "no backlog from the pause");
    await ticks();
    assert.equal((await jobs(source.pipeline.id)).length, 0);
    await request("DELETE", `/data_pipelines/${source.pipeline.id}/schedule`, { token: owner.token });
    setClock(T0);
  });

  it("a due run while the pipeline's job is queued or running is skipped and counted, not queued twice", async () => {
    setClock(T0);
    const bulk = await addSmbSource(request, owner.token, group, bulkSamba, "Skip bulk");
    const small = await addSmbSource(request, owner.token, group, samba, "Skip small");
    await putSchedule(bulk.pipeline.id, { every_minutes: 5 });
    await putSchedule(small.pipeline.id, { every_minutes: 5 });
    assert.equal((await request("POST", `/data_pipelines/${bulk.pipeline.id}/ingest`, { token: owner.token })).status, 202);
    // The small pipeline's manual job waits behind the bulk one: queued.
    assert.equal((await request("POST", `/data_pipelines/${small.pipeline.id}/ingest`, { token: owner.token })).status, 202);
    setClock(T0 + 5 * MINUTE);
    await waitFor(async () => (await pipeline(small.pipeline.id)).schedule.skipped_runs === 1, "the small pipeline's due run to be skipped");
    await waitFor(async () => (await pipeline(bulk.pipeline.id)).schedule.skipped_runs === 1, "the bulk pipeline's due run to be skipped");
    setClock(T0 + 10 * MINUTE);
    await waitFor(async () => (await pipeline(bulk.pipeline.id)).schedule.skipped_runs === 2, "a second skip");
    assert.equal((await jobs(bulk.pipeline.id)).length, 1, "never queued twice");
    assert.equal((await jobs(small.pipeline.id)).length, 1);
    assert.equal((await waitForJobEnd(request, owner.token, bulk.pipeline.id, 240_000)).status, "completed");
    assert.equal((await waitForJobEnd(request, owner.token, small.pipeline.id)).status, "completed");
    await request("DELETE", `/data_pipelines/${bulk.pipeline.id}/schedule`, { token: owner.token });
    await request("DELETE", `/data_pipelines/${small.pipeline.id}/schedule`, { token: owner.token });
  });

  it("runs missed while the app was closed become one catch-up run at start, and the schedule survives the restart", async () => {
    setClock(T0);
    const every = await addSmbSource(request, owner.token, group, samba, "Catch-up interval");
    const hourly = await addSmbSource(request, owner.token, group, samba, "Catch-up cron");
    await putSchedule(every.pipeline.id, { every_minutes: 10 });
    await putSchedule(hourly.pipeline.id, { cron: "0 * * * *", timezone: "UTC" });
    assert.equal(await server.stop(), 0);

    // Closed for almost five hours: 28 interval slots and 5 hourly ones missed.
    const restart = T0 + 4 * 60 * MINUTE + 47 * MINUTE;
    setClock(restart);
    server = await startServer();
    request = client(server.api);
    for (const p of [every, hourly]) {
      await waitFor(async () => (await jobs(p.pipeline.id)).length > 0, "the catch-up run");
      assert.equal((await waitForJobEnd(request, owner.token, p.pipeline.id)).status, "completed");
    }
    await ticks();
    assert.equal((await jobs(every.pipeline.id)).length, 1, "one catch-up run, not one per missed slot");
    assert.equal((await jobs(hourly.pipeline.id)).length, 1);
    assert.equal((await pipeline(every.pipeline.id)).schedule.next_run_at, new Date(restart + 10 * MINUTE).toISOString().replace(/Z$/, ""));
    assert.equal((await pipeline(hourly.pipeline.id)).schedule.next_run_at, "2030-06-03T13:00:00.000");
    await request("DELETE", `/data_pipelines/${every.pipeline.id}/schedule`, { token: owner.token });
    await request("DELETE", `/data_pipelines/${hourly.pipeline.id}/schedule`, { token: owner.token });
  });
});

describe("what changed, per run", () => {
  it("counts files added, changed, removed and unchanged, as changed on the Samba share between scheduled runs", async () => {
    setClock(T0);
    const source = await addSmbSource(request, owner.token, group, samba, "Change counts");
    await putSchedule(source.pipeline.id, { every_minutes: 60 });

    setClock(T0 + 60 * MINUTE);
    await waitFor(async () => (await jobs(source.pipeline.id)).length === 1, "the first scheduled run");
    const first = await waitForJobEnd(request, owner.token, source.pipeline.id);
    assert.equal(first.status, "completed", JSON.stringify(first));
    assert.equal(first.trigger, "schedule");
    // A first run: every indexed file is added; failed and skipped files keep their own counts.
    const indexed = first.entities_processed - first.entities_failed - first.entities_skipped;
    assert.ok(indexed >= 4, JSON.stringify(first));
    assert.deepEqual([first.files_added, first.files_changed, first.files_removed, first.files_unchanged], [indexed, 0, 0, 0]);

    fs.writeFileSync(path.join(changing, "epsilon.txt"), "A new file arrived overnight.");
    fs.writeFileSync(path.join(changing, "beta.txt"), "The beta file was rewritten overnight, and it is longer now.");
    fs.rmSync(path.join(changing, "gamma.txt"));
    setClock(T0 + 120 * MINUTE);
    await waitFor(async () => (await jobs(source.pipeline.id)).length === 2, "the second scheduled run");
    const second = await waitForJobEnd(request, owner.token, source.pipeline.id);
    assert.equal(second.status, "completed", JSON.stringify(second));
    assert.deepEqual(
      [second.files_added, second.files_changed, second.files_removed, second.files_unchanged],
      [1, 1, 1, indexed - 2],
      JSON.stringify(second),
    );
    assert.equal(second.entities_failed, first.entities_failed);
    assert.equal(second.entities_skipped, first.entities_skipped);

    const history = await jobs(source.pipeline.id);
    assert.deepEqual(history.map((j) => [j.trigger, j.files_added, j.files_removed]), [["schedule", 1, 1], ["schedule", indexed, 0]]);
  });
});
