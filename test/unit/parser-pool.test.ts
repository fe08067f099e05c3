import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { ParseError, type ParseResult } from "../../server/ingest/parse/parse-types";
import { ParserPool, SPARE_MAX_FILE_BYTES, steadyOnlyFirst } from "../../server/ingest/parse/parser-pool";
import { makeDocx, makePdf, makePptx, makeXlsx } from "../fixtures/documents";
import { waitFor } from "../fixtures/wait-for";

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const fromSource = __filename.endsWith(".ts");
const poolModule = path.resolve(__dirname, "../../server/ingest/parse/parser-pool");

function isParseError(pattern: RegExp) {
  return (err: unknown): boolean => {
    assert.ok(err instanceof ParseError, `expected ParseError, got ${String(err)}`);
    assert.match(err.message, pattern);
    assert.doesNotMatch(err.message, /\n\s+at /, "no stack trace in the message");
    return true;
  };
}

/** A time limit no parse in these tests comes near, however loaded the machine: their outcome must not depend on one. */
const NO_TIME_LIMIT_MS = 10 * 60_000;

/** Each file's outcome, by name, parsed all at once. */
async function settledByName(pool: ParserPool, names: string[]): Promise<Record<string, PromiseSettledResult<ParseResult>>> {
  const settled = await Promise.allSettled(names.map((name) => pool.parse(name, utf8(`contents of ${name}`))));
  const byName = Object.fromEntries(names.map((name, i) => [name, settled[i]]));
  for (const name of names.filter((n) => n.startsWith("ok-"))) {
    const outcome = byName[name];
    assert.equal(outcome.status, "fulfilled", name);
    if (outcome.status === "fulfilled") assert.equal(outcome.value.kind, "indexed");
  }
  return byName;
}

function reasonOf(byName: Record<string, PromiseSettledResult<ParseResult>>, name: string): unknown {
  const outcome = byName[name];
  assert.equal(outcome.status, "rejected", name);
  return outcome.status === "rejected" ? outcome.reason : undefined;
}

async function assertRecovered(pool: ParserPool): Promise<void> {
  const again = await Promise.all([pool.parse("after-1.txt", utf8("one")), pool.parse("after-2.docx", await makeDocx(["two"]))]);
  assert.deepEqual(again.map((r) => r.kind), ["indexed", "indexed"]);
}

/** A parse whose settling the test can look at without waiting for it. */
function tracked(promise: Promise<ParseResult>): { promise: Promise<ParseResult>; settled: boolean } {
  const track = { promise, settled: false };
  promise.then(
    () => (track.settled = true),
    () => (track.settled = true),
  );
  return track;
}

/** Where a test creates the file that lets a __sluice_test_wait__ parse end. */
function releaseFile(): string {
  return path.join(os.tmpdir(), `sluice-parser-release-${randomUUID()}`);
}

describe("ParserPool", () => {
  // At nice 10 beside two busy loops, a 1 MB PDF took most of the default minute: what these tests check is not the limit.
  const pool = new ParserPool({ size: 2, timeoutMs: NO_TIME_LIMIT_MS });
  after(() => pool.close());

  it("parses files of every format in parallel, queueing beyond the pool size", async () => {
    const files: Array<[string, Uint8Array]> = [
      ["a.txt", utf8("alpha text about a capybara")],
      ["b.md", utf8("# B\n\nbravo markdown")],
      ["c.pdf", await makePdf(["charlie pdf about a kinkajou"], { title: "Charlie" })],
      ["d.docx", await makeDocx(["delta docx about a pangolin"])],
      ["e.pptx", makePptx([["echo slide about an okapi"]])],
      ["f.xlsx", makeXlsx({ Foxtrot: [["foxtrot cell", 7]] })],
      ["g.html", utf8("<title>Golf</title><p>golf html about a quoll</p>")],
      ["h.json", utf8('{"hotel": "json about a numbat"}')],
    ];
    const results = await Promise.all(files.map(([name, bytes]) => pool.parse(name, bytes)));
    const expected = ["capybara", "bravo", "kinkajou", "pangolin", "okapi", "foxtrot cell 7", "quoll", "numbat"];
    results.forEach((result, i) => {
      assert.equal(result.kind, "indexed", files[i][0]);
      if (result.kind !== "indexed") return;
      assert.ok(result.chunks.some((c) => c.text.includes(expected[i])), `${files[i][0]}: ${JSON.stringify(result.chunks)}`);
      assert.equal(result.chunks[0].chunkIndex, 0);
    });
    assert.deepEqual(
      results.map((r) => (r.kind === "indexed" ? r.title : "")),
      ["a", "B", "Charlie", "d", "e", "f", "Golf", "h"],
    );
  });

  it("chunks long text in the worker", async () => {
    const long = Array.from({ length: 400 }, (_, i) => `Sentence number ${i} about river otters.`).join(" ");
    const result = await pool.parse("long.txt", utf8(long));
    assert.equal(result.kind, "indexed");
    if (result.kind === "indexed") {
      assert.ok(result.chunks.length > 10);
      assert.deepEqual(result.chunks.map((c) => c.chunkIndex), result.chunks.map((_, i) => i));
    }
  });

  it("skips unsupported types and files without text", async () => {
    assert.deepEqual(await pool.parse("picture.heic", new Uint8Array([1, 2, 3])), { kind: "skipped", reason: "unsupported file type" });
    const withoutTiming = ({ timing, ...rest }: ParseResult) => rest;
    assert.deepEqual(withoutTiming(await pool.parse("empty.txt", new Uint8Array(0))), { kind: "skipped", reason: "no text found" });
    assert.deepEqual(withoutTiming(await pool.parse("blank.docx", await makeDocx(["  "]))), { kind: "skipped", reason: "no text found" });
  });

  it("reports the seconds the worker spent extracting and chunking each file", async () => {
    const long = Array.from({ length: 4000 }, (_, i) => `Sentence number ${i} about river otters.`).join(" ");
    const { timing } = await pool.parse("timed.txt", utf8(long));
    assert.ok(timing, "a parsed file carries its timing");
    assert.ok(timing.parseSeconds > 0 && timing.parseSeconds < 10, String(timing.parseSeconds));
    assert.ok(timing.chunkSeconds > 0 && timing.chunkSeconds < 10, String(timing.chunkSeconds));
    // A type never sent to a worker costs no parser time.
    assert.equal((await pool.parse("picture.heic", new Uint8Array([1]))).timing, undefined);
  });

  it("rejects a corrupt file with the parser's message, and carries on", async () => {
    await assert.rejects(pool.parse("broken.pdf", utf8("%PDF-1.7 nonsense")), isParseError(/^corrupt file \(not a valid PDF\)$/));
    await assert.rejects(pool.parse("broken.xlsx", utf8("nope")), isParseError(/^corrupt file \(not a valid XLSX file\)$/));
    assert.equal((await pool.parse("fine.txt", utf8("still fine"))).kind, "indexed");
  });

  it("transfers a whole ArrayBuffer to the worker and copies a view into a shared one", async () => {
    const owned = utf8("transferred bytes");
    const transferred = pool.parse("t.txt", owned);
    assert.equal(owned.byteLength, 0, "the caller's view is detached: the bytes moved, not copied");
    assert.equal((await transferred).kind, "indexed");
    const pooled = Buffer.from("a small Buffer lives in Node's shared pool"); // not transferable
    const result = await pool.parse("p.txt", pooled);
    assert.equal(result.kind === "indexed" && result.chunks[0].text, "a small Buffer lives in Node's shared pool");
    assert.equal(pooled.toString(), "a small Buffer lives in Node's shared pool");
  });

  it("passes a page's OCR note on, and gives that page three times the time limit, with its own message", async () => {
    process.env.SLUICE_PARSER_TEST_HOOKS = "1";
    const pool = new ParserPool({ size: 1, timeoutMs: 1000 });
    delete process.env.SLUICE_PARSER_TEST_HOOKS;
    try {
      const notes: string[] = [];
      await assert.rejects(pool.parse("scans/__sluice_test_ocr_hang__.pdf", utf8("x"), (text) => notes.push(text)), isParseError(/^OCR of a page timed out after 3 s$/));
      assert.deepEqual(notes, ["OCR: page 1 of 1 of __sluice_test_ocr_hang__.pdf"]);
    } finally {
      await pool.close();
    }
  });

  it("sends a view into a bigger buffer as an exact copy, alone or in a batch, leaving the sender's buffer whole", async () => {
    process.env.SLUICE_PARSER_TEST_HOOKS = "1";
    const pool = new ParserPool({ size: 1, timeoutMs: 5000 });
    delete process.env.SLUICE_PARSER_TEST_HOOKS;
    try {
      // As a network read holds several replies: each file is a view into one 1 MB buffer.
      const shared = new Uint8Array(1024 * 1024).fill(120);
      const views = [0, 1, 2, 3].map((i) => shared.subarray(1000 * i + 10, 1000 * i + 10 + 100 + i));
      const sizes = await Promise.allSettled(views.map((view, i) => pool.parse(`__sluice_test_buffer__${i}.txt`, view)));
      // The first went alone to the idle worker, the other three together as a batch: each arrived in a buffer of its own size.
      assert.equal(pool.messagesSent, 2);
      sizes.forEach((outcome, i) => {
        assert.equal(outcome.status, "rejected");
        if (outcome.status === "rejected") assert.match(outcome.reason.message, new RegExp(`: ${100 + i} bytes in a buffer of ${100 + i}$`));
      });
      assert.equal(shared.byteLength, 1024 * 1024, "the sender's buffer is not detached");
      assert.ok(shared.every((b) => b === 120));
      // And the text of such a view is its own, decoded right.
      const text = utf8("before|the file's own text|after");
      const result = await pool.parse("view.txt", text.subarray(7, 26));
      assert.equal(result.kind === "indexed" && result.chunks[0].text, "the file's own text");
      assert.equal(text.byteLength, 32);
    } finally {
      await pool.close();
    }
  });

  it("parses ~1 MB PDF and DOCX files in reasonable time", async () => {
    const pdf = await makePdf(["The benchmark PDF starts here."], { targetBytes: 1_000_000 });
    const docx = await makeDocx(["The benchmark DOCX starts here."], { targetBytes: 1_000_000 });
    for (const [name, bytes] of [["bench.pdf", pdf], ["bench.docx", docx]] as const) {
      const size = bytes.byteLength;
      const started = performance.now();
      const result = await pool.parse(name, bytes);
      const ms = Math.round(performance.now() - started);
      assert.equal(result.kind, "indexed");
      if (result.kind !== "indexed") return;
      const chars = result.chunks.reduce((sum, c) => sum + c.text.length, 0);
      console.log(`${name}: ${(size / 1e6).toFixed(2)} MB -> ${result.chunks.length} chunks (${chars} chars) in ${ms} ms`);
      assert.match(result.chunks[0].text, /^The benchmark (PDF|DOCX) starts here\./);
    }
  });
});

describe("ParserPool with a misbehaving parser", () => {
  it("fails only the crashing and out-of-memory files; the pool recovers", async () => {
    process.env.SLUICE_PARSER_TEST_HOOKS = "1"; // read once, when the pool is built
    // No time limit a loaded machine reaches: filling a 64 MB heap at nice 10 beside two busy loops took 19 s, and must end as out of memory, not as a hang.
    const pool = new ParserPool({ size: 2, timeoutMs: NO_TIME_LIMIT_MS, maxHeapMb: 64 });
    delete process.env.SLUICE_PARSER_TEST_HOOKS;
    try {
      const names = ["__sluice_test_crash__.txt", "ok-1.txt", "__sluice_test_oom__.txt", "ok-2.txt", "ok-3.txt", "ok-4.txt"];
      const started = performance.now();
      const byName = await settledByName(pool, names);
      isParseError(/crashed/)(reasonOf(byName, "__sluice_test_crash__.txt"));
      isParseError(/ran out of memory \(limit 64 MB\)/)(reasonOf(byName, "__sluice_test_oom__.txt"));
      console.log(`crash + OOM + 4 good files settled in ${Math.round(performance.now() - started)} ms`);
      await assertRecovered(pool);
    } finally {
      await pool.close();
    }
  });

  it("fails a hanging file once its time limit has passed, and only it; the pool recovers", async () => {
    process.env.SLUICE_PARSER_TEST_HOOKS = "1";
    // The limit runs from when a thread has loaded its parsers, so a slow start on a busy machine does not count against the good files.
    const pool = new ParserPool({ size: 2, timeoutMs: 5000 });
    delete process.env.SLUICE_PARSER_TEST_HOOKS;
    try {
      const names = ["ok-1.txt", "__sluice_test_hang__.txt", "ok-2.txt", "ok-3.txt"];
      const byName = await settledByName(pool, names);
      isParseError(/timed out after 5 s/)(reasonOf(byName, "__sluice_test_hang__.txt"));
      await assertRecovered(pool);
    } finally {
      await pool.close();
    }
  });

  it("sends files queued behind a busy worker as one batch; a crash in a batch fails only that file", async () => {
    process.env.SLUICE_PARSER_TEST_HOOKS = "1";
    const pool = new ParserPool({ size: 1, timeoutMs: 5000 });
    delete process.env.SLUICE_PARSER_TEST_HOOKS;
    try {
      const good = Array.from({ length: 9 }, (_, i) => `batch-${i}.txt`);
      const first = await Promise.all(good.map((name) => pool.parse(name, utf8(`contents of ${name}`))));
      assert.ok(first.every((r) => r.kind === "indexed" && r.chunks[0].text.startsWith("contents of batch-")));
      // The first file went alone to the idle worker; the eight queued behind it went together.
      assert.equal(pool.messagesSent, 2);

      const names = ["lead.txt", "ok-1.txt", "__sluice_test_crash__.txt", "ok-2.txt", "ok-3.txt"];
      const settled = await Promise.allSettled(names.map((name) => pool.parse(name, utf8(`contents of ${name}`))));
      settled.forEach((outcome, i) => {
        if (names[i].startsWith("__sluice")) {
          assert.equal(outcome.status, "rejected");
          if (outcome.status === "rejected") isParseError(/crashed/)(outcome.reason);
        } else {
          assert.equal(outcome.status, "fulfilled", names[i]);
          if (outcome.status === "fulfilled") {
            assert.equal(outcome.value.kind === "indexed" && outcome.value.chunks[0].text, `contents of ${names[i]}`, "each file keeps its own result");
          }
        }
      });
    } finally {
      await pool.close();
    }
  });

  it("starts a spare worker for a file stuck behind a slow one, and stops it once idle", async () => {
    process.env.SLUICE_PARSER_TEST_HOOKS = "1";
    const pool = new ParserPool({ size: 1, spares: 1, spareAfterMs: 100, spareIdleMs: 300, timeoutMs: NO_TIME_LIMIT_MS });
    delete process.env.SLUICE_PARSER_TEST_HOOKS;
    const release = releaseFile();
    try {
      const slow = tracked(pool.parse("__sluice_test_wait__.txt", utf8(release)));
      const started = performance.now();
      const behind = await pool.parse("behind.txt", utf8("waits for a spare"));
      const waited = performance.now() - started;
      assert.equal(behind.kind, "indexed");
      assert.ok(waited >= 100, `a spare starts only after spareAfterMs (${Math.round(waited)} ms)`);
      assert.equal(slow.settled, false, "the file did not wait for the slow one");
      assert.equal(pool.workers, 2);
      await waitFor(() => pool.workers === 1, () => `the idle spare to stop, the busy worker staying (${pool.workers} workers)`);
      fs.writeFileSync(release, "");
      await assert.rejects(slow.promise, isParseError(/released/));
    } finally {
      await pool.close();
      fs.rmSync(release, { force: true });
    }
  });

  it("with steadyIdleMs, stops an idle steady worker and starts one again for the next file; without, keeps it", async () => {
    const stopping = new ParserPool({ size: 1, steadyIdleMs: 300, timeoutMs: NO_TIME_LIMIT_MS });
    const keeping = new ParserPool({ size: 1, timeoutMs: NO_TIME_LIMIT_MS });
    try {
      const first = await Promise.all([stopping, keeping].map((pool) => pool.parse("first.txt", utf8("otters float"))));
      assert.deepEqual(first.map((result) => result.kind), ["indexed", "indexed"]);
      // (Whether the first pool's worker is still there now depends on the machine's speed: only its stop is awaited.)
      await waitFor(() => stopping.workers === 0, () => `the idle steady worker to stop (${stopping.workers} workers)`);
      // Time for a wrong stop of the other pool's worker to show (three times the first pool's idle time).
      await new Promise((r) => setTimeout(r, 900));
      assert.equal(keeping.workers, 1, "no steadyIdleMs: the steady worker stays");
      const again = await stopping.parse("second.md", utf8("# Herons\n\nHerons wade."));
      assert.equal(again.kind, "indexed");
      assert.match(again.kind === "indexed" ? again.chunks.map((c) => c.text).join(" ") : "", /Herons wade/);
      // Read as the answer arrives (no timer can run before): the worker that parsed it is there.
      assert.equal(stopping.workers, 1, "the next file started a worker again");
    } finally {
      await stopping.close();
      await keeping.close();
    }
  });

  it("keeps files over spareMaxFileBytes for a steady worker, and parses again on one a file that ran out of a spare's heap", async () => {
    process.env.SLUICE_PARSER_TEST_HOOKS = "1";
    const pool = new ParserPool({ size: 1, spares: 1, spareAfterMs: 50, spareMaxFileBytes: 1000, spareHeapMb: 32, maxHeapMb: 64, timeoutMs: NO_TIME_LIMIT_MS });
    delete process.env.SLUICE_PARSER_TEST_HOOKS;
    const release = releaseFile();
    try {
      // The steady worker is busy until the test lets it go: what the spare does meanwhile does not race a time limit.
      const slow = tracked(pool.parse("__sluice_test_wait__.txt", utf8(release)));
      const big = tracked(pool.parse("big.txt", utf8("word ".repeat(400))));
      const oom = tracked(pool.parse("__sluice_test_oom__.txt", utf8("runs out of any heap")));
      const small = await pool.parse("small.txt", utf8("fits a spare"));
      assert.equal(small.kind, "indexed", "the small file was parsed on the spare while the steady worker was busy");
      assert.equal(big.settled, false, "the big file waits for the steady worker");
      assert.equal(oom.settled, false, "the file that ran out of the spare's heap is not failed for it");
      fs.writeFileSync(release, "");
      await assert.rejects(slow.promise, isParseError(/released/));
      assert.equal((await big.promise).kind, "indexed");
      // Failed only now, on the steady worker's larger heap.
      await assert.rejects(oom.promise, isParseError(/ran out of memory \(limit 64 MB\)/));
    } finally {
      await pool.close();
      fs.rmSync(release, { force: true });
    }
  });

  it("starts no spare while queued files wait less than spareAfterMs", async () => {
    const pool = new ParserPool({ size: 1, spares: 1, spareAfterMs: 60_000 });
    try {
      const names = Array.from({ length: 6 }, (_, i) => `quick-${i}.txt`);
      const results = await Promise.all(names.map((name) => pool.parse(name, utf8(`contents of ${name}`))));
      assert.ok(results.every((r) => r.kind === "indexed"));
      assert.equal(pool.workers, 1);
      assert.equal(pool.messagesSent, 2, "the files queued behind the first still went as one batch");
    } finally {
      await pool.close();
    }
  });

  it("ignores the hook file names unless SLUICE_PARSER_TEST_HOOKS=1 was set", async () => {
    const pool = new ParserPool({ size: 1, timeoutMs: 5000 });
    try {
      const result = await pool.parse("__sluice_test_hang__.txt", utf8("an ordinary file"));
      assert.equal(result.kind, "indexed");
    } finally {
      await pool.close();
    }
  });
});

describe("steadyOnlyFirst", () => {
  it("puts the files only a steady worker takes first, each group in its own order", () => {
    const big = SPARE_MAX_FILE_BYTES + 1;
    const files = [
      { name: "a", size: 10 },
      { name: "huge-1", size: big * 2 },
      { name: "b", size: SPARE_MAX_FILE_BYTES },
      { name: "huge-2", size: big },
      { name: "c", size: 0 },
    ];
    assert.deepEqual(steadyOnlyFirst(files).map((f) => f.name), ["huge-1", "huge-2", "a", "b", "c"]);
    assert.deepEqual(files.map((f) => f.name), ["a", "huge-1", "b", "huge-2", "c"], "the caller's list is left as it was");
  });
});

describe("ParserPool.close", () => {
  it("rejects running and queued parses, refuses new ones, and is idempotent", async () => {
    const pool = new ParserPool({ size: 1 });
    const pending = [pool.parse("a.txt", utf8("a")), pool.parse("b.txt", utf8("b")), pool.parse("c.txt", utf8("c"))];
    const settling = Promise.allSettled(pending);
    await pool.close();
    const settled = await settling;
    assert.ok(settled.every((s) => s.status === "rejected" && s.reason instanceof ParseError));
    await assert.rejects(pool.parse("d.txt", utf8("d")), isParseError(/closed/));
    await pool.close();
  });

  it("lets the process exit once the pool is closed", () => {
    const script = `
      const { ParserPool } = require(${JSON.stringify(poolModule)});
      const pool = new ParserPool({ size: 2 });
      Promise.all([pool.parse("a.txt", new TextEncoder().encode("hello")), pool.parse("b.txt", new TextEncoder().encode("there"))])
        .then((results) => { console.log(results.map((r) => r.kind).join(",")); return pool.close(); });
    `;
    const args = [...(fromSource ? ["--import", "tsx"] : []), "-e", script];
    const child = spawnSync(process.execPath, args, { cwd: path.resolve(__dirname, "../.."), timeout: 30_000, encoding: "utf8" });
    assert.equal(child.error, undefined, "the child exited by itself before the timeout");
    assert.equal(child.status, 0, child.stderr);
    assert.equal(child.stdout.trim(), "indexed,indexed");
  });
});
