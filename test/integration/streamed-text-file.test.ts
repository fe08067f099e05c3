import assert from "node:assert/strict";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { after, describe, it } from "node:test";
import Database from "better-sqlite3";
import { chunkText } from "../../server/ingest/parse/chunker";
import { decodeText } from "../../server/ingest/parse/text-decoder";
import { isStreamed, STREAM_TEXT_ABOVE_BYTES, streamTextFile } from "../../server/ingest/streamed-text-file";
import { SqliteFtsIndex } from "../../server/search/sqlite";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sluice-stream-"));
const index = new SqliteFtsIndex({ dir });
after(async () => {
  await index.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const SOURCE = "8f0c2a4e-5d1b-4c3a-9e7f-0a1b2c3d4e5f";
const header = (p: string) => ({ sourceId: SOURCE, path: p, title: "big", size: 0, modifiedAt: new Date(0), version: null });

/** Text of about `bytes` characters: numbered sentences, so every chunk differs. */
function sentences(bytes: number, from = 0): string {
  const out: string[] = [];
  let length = 0;
  for (let i = from; length < bytes; i++) {
    const s = `Line ${i} of the export lists order ${i * 7} for the harbour office.\n`;
    out.push(s);
    length += s.length;
  }
  return out.join("");
}

/** A stream of `bytes` in pieces of `size`, as a connector delivers a file. */
function pieces(bytes: Buffer, size: number, failAfter?: number): () => Promise<Readable> {
  return async () =>
    Readable.from(
      (function* () {
        for (let at = 0; at < bytes.length; at += size) {
          if (failAfter !== undefined && at >= failAfter) throw new Error("connection reset mid-file");
          yield bytes.subarray(at, at + size);
        }
      })(),
    );
}

function chunkRows(collection: string): number {
  const db = new Database(index.filePath(collection), { readonly: true });
  try {
    return db.prepare("SELECT count(*) FROM chunks").pluck().get() as number;
  } finally {
    db.close();
  }
}

describe("streamTextFile", () => {
  it("streams text files over the threshold only", () => {
    const at = (name: string, size: number) => isStreamed({ path: name, name, isDirectory: false, size, modifiedAt: new Date(0) });
    assert.equal(at("a.log", STREAM_TEXT_ABOVE_BYTES + 1), true);
    assert.equal(at("a.csv", STREAM_TEXT_ABOVE_BYTES + 1), true);
    assert.equal(at("a.txt", STREAM_TEXT_ABOVE_BYTES), false, "small text keeps the batched worker path");
    assert.equal(at("a.json", STREAM_TEXT_ABOVE_BYTES * 10), false, "JSON is parsed whole");
    assert.equal(at("a.pdf", STREAM_TEXT_ABOVE_BYTES * 10), false);
  });

  it("writes the chunks of the whole text in batches, reporting bytes as they are written", async () => {
    const collection = crypto.randomUUID();
    const bytes = Buffer.from(`Ünïcödé start marker.\n${sentences(3_000_000)}Final walrus line.`, "utf8");
    const written: number[] = [];
    const { staged, chunks } = await streamTextFile({
      read: pieces(bytes, 65_537), // an odd size, so characters are cut between pieces
      stage: () => index.stageDocument(collection, header("big.txt")),
      onWritten: (n) => written.push(n),
      checkAbort: () => undefined,
    });
    const expected = chunkText(decodeText(bytes));
    assert.equal(chunks, expected.length);
    await staged.commit();
    assert.ok(written.length >= 3, `${written.length} writes`);
    assert.deepEqual([...written].sort((a, b) => a - b), written, "bytes only grow");
    assert.equal(written.at(-1), bytes.length);
    assert.deepEqual(await index.stats(collection), { documentCount: 1, chunkCount: expected.length, indexStatus: "ok" });
    assert.equal((await index.search(collection, "walrus", 5))[0]?.chunkIndex, expected.length - 1);
    assert.equal((await index.search(collection, "Ünïcödé", 5))[0]?.chunkIndex, 0);
  });

  it("reads a file again as latin1 when it turns out not to be UTF-8, leaving nothing of the first attempt", async () => {
    const collection = crypto.randomUUID();
    // Past the first batches, a latin1 "è": not UTF-8.
    const bytes = Buffer.from(`${sentences(2_500_000)}La crème brûlée du port.\n${sentences(10_000, 999_999)}`, "latin1");
    let reads = 0;
    const read = pieces(bytes, 1 << 20);
    const written: number[] = [];
    const { staged, chunks } = await streamTextFile({
      read: () => {
        reads++;
        return read();
      },
      stage: () => index.stageDocument(collection, header("latin1.csv")),
      onWritten: (n) => written.push(n),
      checkAbort: () => undefined,
    });
    assert.equal(reads, 2);
    assert.ok(written.length > 0 && written[0] < bytes.length, "the first attempt had written batches before the bad byte");
    const expected = chunkText(decodeText(bytes));
    assert.equal(chunks, expected.length);
    await staged.commit();
    assert.equal(chunkRows(collection), expected.length, "the first attempt's chunks are gone");
    assert.equal((await index.search(collection, "crème brûlée", 5))[0]?.path, "latin1.csv");
  });

  it("a read that fails mid-file discards what was written; the old version stays", async () => {
    const collection = crypto.randomUUID();
    await index.upsertDocument(collection, { ...header("big.txt"), chunks: [{ chunkIndex: 0, text: "old heron text" }] });
    const bytes = Buffer.from(sentences(3_000_000), "utf8");
    await assert.rejects(
      streamTextFile({
        read: pieces(bytes, 1 << 20, 2 << 20),
        stage: () => index.stageDocument(collection, header("big.txt")),
        onWritten: () => undefined,
        checkAbort: () => undefined,
      }),
      /connection reset mid-file/,
    );
    assert.equal(chunkRows(collection), 1);
    assert.equal((await index.search(collection, "heron", 5)).length, 1);
  });

  it("stops when the job is interrupted, discarding what was written", async () => {
    const collection = crypto.randomUUID();
    const bytes = Buffer.from(sentences(3_000_000), "utf8");
    let pieceCount = 0;
    await assert.rejects(
      streamTextFile({
        read: pieces(bytes, 1 << 20),
        stage: () => index.stageDocument(collection, header("big.txt")),
        onWritten: () => undefined,
        checkAbort: () => {
          if (++pieceCount > 2) throw new Error("interrupted");
        },
      }),
      /interrupted/,
    );
    assert.equal(chunkRows(collection), 0);
  });
});
