import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { after, describe, it } from "node:test";
import { ParseError, type ParseResult } from "../../server/ingest/parse/parse-types";
import { ParserPool, SPARE_MAX_FILE_BYTES, steadyOnlyFirst } from "../../server/ingest/parse/parser-pool";
import { makeDocx, makePdf, makePptx, makeXlsx } from "../fixtures/documents";

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

describe("ParserPool", () => {
  const pool = new ParserPool({ size: 2 });
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
    assert.deepEqual(await pool.parse("picture.png", new Uint8Array([1, 2, 3])), { kind: "skipped", reason: "unsupported file type" });
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
    assert.equal((await pool.parse("picture.png", new Uint8Array([1]))).timing, undefined);
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
  it("fails only the crashing, out-of-memory and hanging files; the pool recovers", async () => {
    process.env.SLUICE_PARSER_TEST_HOOKS = "1"; // read once, when the pool is built
    // A generous limit: on two busy cores filling 64 MB can take over a second, and must not read as a hang.
    const pool = new ParserPool({ size: 2, timeoutMs: 5000, maxHeapMb: 64 });
    delete process.env.SLUICE_PARSER_TEST_HOOKS;
    try {
      const names = [
        "__sluice_test_crash__.txt", "ok-1.txt", "__sluice_test_oom__.txt", "ok-2.txt",
        "__sluice_test_hang__.txt", "ok-3.txt", "ok-4.txt",
      ];
      const started = performance.now();
      const settled = await Promise.allSettled(names.map((name) => pool.parse(name, utf8(`contents of ${name}`))));
      const byName = Object.fromEntries(names.map((name, i) => [name, settled[i]]));
      for (const name of names.filter((n) => n.startsWith("ok-"))) {
        const outcome = byName[name];
        assert.equal(outcome.status, "fulfilled", name);
        if (outcome.status === "fulfilled") assert.equal(outcome.value.kind, "indexed");
      }
      const reasonOf = (name: string): unknown => {
        const outcome = byName[name];
        assert.equal(outcome.status, "rejected", name);
        return outcome.status === "rejected" ? outcome.reason : undefined;
      };
      isParseError(/crashed/)(reasonOf("__sluice_test_crash__.txt"));
      isParseError(/ran out of memory/)(reasonOf("__sluice_test_oom__.txt"));
      isParseError(/timed out after 5 s/)(reasonOf("__sluice_test_hang__.txt"));
      console.log(`crash + OOM + hang + 4 good files settled in ${Math.round(performance.now() - started)} ms`);

      const again = await Promise.all([pool.parse("after-1.txt", utf8("one")), pool.parse("after-2.docx", await makeDocx(["two"]))]);
      assert.deepEqual(again.map((r) => r.kind), ["indexed", "indexed"]);
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
    const pool = new ParserPool({ size: 1, spares: 1, spareAfterMs: 100, spareIdleMs: 300, timeoutMs: 4000 });
    delete process.env.SLUICE_PARSER_TEST_HOOKS;
    try {
      const hung = pool.parse("__sluice_test_hang__.txt", utf8("holds the only steady worker"));
      hung.catch(() => undefined);
      const started = performance.now();
      const behind = await pool.parse("behind.txt", utf8("waits for a spare"));
      const waited = performance.now() - started;
      assert.equal(behind.kind, "indexed");
      assert.ok(waited >= 100, `a spare starts only after spareAfterMs (${Math.round(waited)} ms)`);
      assert.ok(waited < 3000, `the file did not wait for the slow one (${Math.round(waited)} ms)`);
      assert.equal(pool.workers, 2);
      await new Promise((resolve) => setTimeout(resolve, 800));
      assert.equal(pool.workers, 1, "the idle spare stopped; the busy worker stays");
      await assert.rejects(hung, isParseError(/timed out/));
    } finally {
      await pool.close();
    }
  });

  it("keeps files over spareMaxFileBytes for a steady worker, and parses again on one a file that ran out of a spare's heap", async () => {
    process.env.SLUICE_PARSER_TEST_HOOKS = "1";
    // The hang lasts the timeout: long enough that, on a loaded machine, the spare starts, parses the small file and runs out of heap before it ends.
    const pool = new ParserPool({ size: 1, spares: 1, spareAfterMs: 50, spareMaxFileBytes: 1000, spareHeapMb: 32, maxHeapMb: 64, timeoutMs: 6000 });
    delete process.env.SLUICE_PARSER_TEST_HOOKS;
    try {
      const started = performance.now();
      const at = <T>(promise: Promise<T>) =>
        promise.then(
          (value) => ({ ok: true as const, value, ms: performance.now() - started }),
          (error: unknown) => ({ ok: false as const, error, ms: performance.now() - started }),
        );
      const hang = at(pool.parse("__sluice_test_hang__.txt", utf8("holds the steady worker until its timeout")));
      const big = at(pool.parse("big.txt", utf8("word ".repeat(400))));
      const oom = at(pool.parse("__sluice_test_oom__.txt", utf8("runs out of any heap")));
      const small = at(pool.parse("small.txt", utf8("fits a spare")));
      const [hung, bigDone, oomDone, smallDone] = await Promise.all([hang, big, oom, small]);
      assert.equal(hung.ok, false);
      assert.ok(smallDone.ok && smallDone.ms < hung.ms, "the small file was parsed on the spare while the steady worker hung");
      assert.ok(bigDone.ok && bigDone.ms > hung.ms, "the big file waited for the steady worker");
      assert.equal(oomDone.ok, false);
      if (!oomDone.ok) isParseError(/ran out of memory \(limit 64 MB\)/)(oomDone.error);
      assert.ok(oomDone.ms > hung.ms, "the file that ran out of the spare's heap failed only once a steady worker had tried it");
    } finally {
      await pool.close();
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
