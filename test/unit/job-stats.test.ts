import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { STAGES } from "../../server/data/entities/ingest-job.entity";
import { JobStatsRecorder } from "../../server/ingest/job-stats";

/** A recorder on a clock the test moves by hand. */
function recorder() {
  const clock = { ms: 1000 };
  return { clock, stats: new JobStatsRecorder(() => clock.ms) };
}

describe("JobStatsRecorder", () => {
  it("counts a stage's busy time once however many of its operations overlap", () => {
    const { clock, stats } = recorder();
    const a = stats.begin("read");
    clock.ms += 500;
    const b = stats.begin("read");
    clock.ms += 500;
    a();
    clock.ms += 1000;
    b();
    clock.ms += 4000; // idle: not counted
    const c = stats.begin("read");
    clock.ms += 250;
    c();
    c(); // a second end is ignored
    assert.equal(stats.snapshot().timings.read_s, 2.25);
  });

  it("shows a stage under way up to now, and every stage from zero", () => {
    const { clock, stats } = recorder();
    stats.begin("listing");
    clock.ms += 1500;
    const { timings } = stats.snapshot();
    assert.deepEqual(Object.keys(timings), STAGES.map((s) => `${s}_s`));
    assert.equal(timings.listing_s, 1.5);
    assert.equal(timings.index_s, 0);
  });

  it("adds seconds measured elsewhere (the parser threads), ignoring negative ones", () => {
    const { stats } = recorder();
    stats.add("parse", 0.25);
    stats.add("parse", 0.5);
    stats.add("chunk", -1);
    const { timings } = stats.snapshot();
    assert.equal(timings.parse_s, 0.75);
    assert.equal(timings.chunk_s, 0);
  });

  it("times a promise, also when it rejects", async () => {
    const { clock, stats } = recorder();
    await assert.rejects(
      stats.time("index", async () => {
        clock.ms += 300;
        throw new Error("batch failed");
      }),
    );
    assert.equal(stats.snapshot().timings.index_s, 0.3);
  });

  it("counts files, bytes, failures and parse seconds by lower-case extension", () => {
    const { stats } = recorder();
    stats.file("docs/a.PDF", { bytes: 100, parseSeconds: 0.5 });
    stats.file("docs/b.pdf", { bytes: 50, failed: true, parseSeconds: 0.25 });
    stats.file("docs/README", { bytes: 7 });
    stats.file("docs/.profile", { bytes: 3 });
    assert.deepEqual(stats.snapshot().by_type, {
      none: { files: 2, bytes: 10, failed: 0, parse_s: 0 },
      pdf: { files: 2, bytes: 150, failed: 1, parse_s: 0.75 },
    });
  });

  it("keeps at most 40 types; later new types are counted under other", () => {
    const { stats } = recorder();
    for (let i = 0; i < 45; i++) stats.file(`f.x${i}`, { bytes: 1 });
    stats.file("g.x0", { bytes: 1 });
    const byType = stats.snapshot().by_type;
    assert.equal(Object.keys(byType).length, 41);
    assert.equal(byType.other.files, 5);
    assert.equal(byType.x0.files, 2, "a type already kept is still counted as itself");
  });

  it("types Sluice reads keep their own entry however many unsupported types came first", () => {
    const { stats } = recorder();
    for (let i = 0; i < 60; i++) stats.file(`f.x${i}`, { bytes: 1 });
    stats.file("manual.pdf", { bytes: 10, parseSeconds: 2 });
    stats.file("page.html", { bytes: 5, parseSeconds: 0.5 });
    const byType = stats.snapshot().by_type;
    assert.deepEqual(byType.pdf, { files: 1, bytes: 10, failed: 0, parse_s: 2 });
    assert.equal(byType.html.parse_s, 0.5);
    assert.equal(byType.other.files, 20);
  });
});
